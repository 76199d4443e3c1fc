/* The agreement test: one table of paths (case variants, "..", symlinks, bare and
 * linked git directories, a gitdir: file, globs, /dev/shm) put to every consumer of
 * the path facts (policy/pathfacts.c, policy/gitdir.c) on a real tree: `halo-run
 * hook`'s file judgment, the Linux scan's masks and read-only binds, the creation
 * broker's git rules and the SBPL rules of the macOS profile. Where a consumer judges
 * a row, its answer must be the row's: a change to one consumer alone shows here.
 *
 * Not every consumer judges every row, by design: the broker judges what is made or
 * opened for writing in a git directory (an existing file elsewhere is the scan's
 * read-only bind), and a static SBPL profile cannot tell a git directory by what it
 * holds (its gap, said in the README). The SBPL rules are macOS's, where names fold:
 * a case variant has its own answer there (`fold`). */
#include <fcntl.h>
#include <regex.h>

#include "hook/hook.h"
#include "linux/broker_int.h"
#include "macos/macos.h"
#include "macos/profile_int.h"
#include "runner/runner_int.h"
#include "tests/unit/scan_fixture.h"

enum { H = 1, S = 2, B = 4, M = 8, ALL = H | S | B | M };
enum { OK = 0, NO = 1 }; /* may the command write (or create) it? */

static const struct row {
	const char *rel; /* under root; ws/ is the workspace */
	int want, fold;	 /* Linux's answer; macOS's (names fold) for M */
	unsigned who;
} rows[] = {
    {"ws/src/main.c", OK, OK, ALL},
    {"ws/src/new.c", OK, OK, ALL},
    {"ws/.git/HEAD", OK, OK, ALL},
    {"ws/.git/hooks/pre-commit", NO, NO, ALL},
    {"ws/.git/config", NO, NO, ALL},
    {"ws/a/../.git/hooks/post-merge", NO, NO, H | S | M},
    {"ws/.git/modules/sm/hooks/post-checkout", NO, NO, ALL},
    {"ws/.GIT/hooks/x", OK, NO, ALL},
    {"ws/hooks/post-receive", OK, OK, ALL},
    /* A bare repository (no config: HEAD, objects and refs are enough). */
    {"ws/srv.git/hooks/post-receive", NO, NO, H | S | B},
    {"ws/srv.git/hooks/update.sample", NO, NO, H | S},
    {"ws/srv.git/description", OK, OK, H | S | B},
    /* The same, through a symlink to its hooks/. */
    {"ws/hk/post-update", NO, NO, H | S | B},
    /* A linked work tree's git directory, named by a gitdir: file. */
    {"ws/wtgit/config.worktree", NO, NO, H | S | B},
    {"ws/wtgit/commondir", NO, NO, H | S},
    {"ws/sub/.git", NO, NO, H | S},
    /* Guard names and protected globs (globs match case-insensitively everywhere). */
    {"ws/.bashrc", NO, NO, H | S | M},
    {"ws/p/.vscode/tasks.json", NO, NO, H | S | M},
    {"ws/.env", NO, NO, H | S | M},
    {"ws/config/.ENV.local", NO, NO, H | S | M},
    {"ws/secrets/k.pem", NO, NO, H | S | M},
    /* Outside the workspace: a case variant of it is another directory on Linux. */
    {"WS/x", NO, OK, H | S},
    {"home/.profile", NO, NO, H | S},
    /* The host's tool caches: the sandbox's own in the default (isolated) mode. */
    {"home/.cache/pip/x", NO, NO, H | S},
    /* A symlink from the workspace into a protected directory of the home. */
    {"ws/keys/authorized_keys", NO, NO, H | S},
    /* A directory holding hooks that one more name would make a git directory: the
     * name that completes it is refused (the broker's rule; pathreview). */
    {"ws/becoming/refs", NO, NO, H | B},
    {"ws/becoming/refs/heads/main", NO, NO, H},
    {"ws/becoming/HEAD", OK, OK, H | B},
    {"ws/plain/refs/x", OK, OK, H | B},
    /* A guard name that is a symlink: the sandbox keeps its target read-only
     * (pathreview). */
    {"ws/vsc/tasks.json", NO, NO, H | S},
    {"ws/p/vsc2/tasks.json", NO, NO, H | S},
    /* What the work tree's config names: core.hooksPath and include.path (pathreview). */
    {"ws/hp/pre-commit", NO, NO, H | S},
    {"ws/hp/sub/x", NO, NO, H | S},
    {"ws/inc.cfg", NO, NO, H | S},
    {"ws/hpx/pre-commit", OK, OK, H | S},
    /* A dangling symlink: writing through it creates its target (pathreview). */
    {"ws/dangle", NO, NO, H | S},
    {"ws/dangle-in", OK, OK, H | S},
    /* ".." after a symlink is the target's parent, not the link's directory. */
    {"ws/up/../x", NO, NO, H | S},
    {"ws/up/../.ssh/authorized_keys", NO, NO, H | S},
    {"/dev/shm/halo-agree", OK, OK, H | S},
};

static void make_tree(void)
{
	file("ws/src/main.c", "int main;\n");
	/* A work tree's .git, a real one by what it holds, with a submodule. */
	file("ws/.git/HEAD", "ref: refs/heads/main\n");
	file("ws/.git/config", "[core]\n\tbare = false\n[Core] HooksPath = \"hp\" ; hooks\n"
			       "[include]\n\tpath = ../inc.cfg\n");
	file("ws/hp/pre-commit", "#!/bin/sh\n");
	file("ws/inc.cfg", "[user]\n");
	mkdirs("ws/hpx");
	mkdirs("ws/vsc");
	link_to("vsc", "ws/.vscode");
	mkdirs("ws/p/vsc2");
	link_to("../p/vsc2", "ws/p/.claude");
	mkdirs("ws/becoming/objects");
	file("ws/becoming/hooks/post-receive", "#!/bin/sh\n");
	mkdirs("ws/plain/objects");
	mkdirs("ws/.git/objects");
	mkdirs("ws/.git/refs");
	mkdirs("ws/.git/hooks");
	file("ws/.git/modules/sm/HEAD", "ref: refs/heads/main\n");
	mkdirs("ws/.git/modules/sm/objects");
	mkdirs("ws/.git/modules/sm/refs");
	mkdirs("ws/.git/modules/sm/hooks");
	mkdirs("ws/.GIT/hooks");
	mkdirs("ws/hooks");
	mkdirs("ws/a");
	file("ws/srv.git/HEAD", "ref: refs/heads/main\n");
	file("ws/srv.git/description", "x\n");
	mkdirs("ws/srv.git/objects");
	mkdirs("ws/srv.git/refs");
	file("ws/srv.git/hooks/update.sample", "#!/bin/sh\n");
	link_to("srv.git/hooks", "ws/hk");
	file("ws/wtgit/HEAD", "ref: refs/heads/main\n");
	file("ws/wtgit/commondir", "../srv.git\n");
	file("ws/wtgit/config.worktree", "[core]\n");
	file("ws/sub/.git", "gitdir: ../wtgit\n");
	file("ws/.env", "A=1\n");
	file("ws/config/.ENV.local", "A=1\n");
	file("ws/secrets/k.pem", "k\n");
	mkdirs("ws/p/.vscode");
	mkdirs("WS");
	mkdirs("home/.cache/pip");
	mkdirs("home/.ssh");
	link_to("../home/.ssh", "ws/keys");
	link_to("../home/.ssh/authorized_keys", "ws/dangle");
	link_to("src/made-later.c", "ws/dangle-in");
	link_to("../home/.cache", "ws/up");
}

static void abs_of(const char *rel, char *out)
{
	if (rel[0] == '/')
		snprintf(out, PATH_MAX, "%s", rel);
	else
		p(out, rel);
}

/* ---------------------------------------------------------------- the hook */

/* The hook's own file-system callbacks (runner/hook_fs.c), so the hook judged here is
 * the one `halo-run hook` runs. */
static int hook_says(const char *abs)
{
	size_t ng;
	char home[PATH_MAX];
	struct hook_ctx c = {.policy = &pol,
			     .cwd = ws,
			     .exists = runner_hook_exists,
			     .resolve = runner_hook_resolve,
			     .read_file = runner_hook_read_file};
	struct hook_verdict v;

	p(home, "home");
	c.home = home;
	c.guard_names = policy_guard_names(&ng);
	c.n_guard_names = ng;
	hook_check_path(&c, "Write", abs, true, &v);
	return v.outcome == HOOK_ALLOW ? OK : NO;
}

/* ---------------------------------------------------------------- the scan */

static bool beneath_any(const char *path, const struct linux_paths *l)
{
	return linux_paths_beneath_any(path, l);
}

/* What the mounts make of the scan: writable beneath the workspace, a writable root
 * or a scratch directory, unless masked, bound read-only or a guard target that
 * must not be created. */
static int scan_says(const char *abs)
{
	char real[PATH_MAX];

	ck_assert_int_eq(runner_hook_resolve(abs, real, sizeof(real)), 0);
	if (!linux_path_beneath(real, ws) && !beneath_any(real, &scan.writable) &&
	    !policy_path_scratch(real))
		return NO;
	if (beneath_any(real, &scan.masked) || beneath_any(real, &scan.guarded) ||
	    beneath_any(real, &scan.missing))
		return NO;
	return OK;
}

/* ---------------------------------------------------------------- the broker */

static int broker_says(const char *abs)
{
	char real[PATH_MAX], dir[PATH_MAX];
	struct broker_notes notes = {0};
	struct linux_broker b = {.listener = -1, .guard_git = true, .notes = &notes};
	struct stat st;

	ck_assert_int_eq(runner_hook_resolve(abs, real, sizeof(real)), 0);
	snprintf(dir, sizeof(dir), "%s", real);
	char *sl = strrchr(dir, '/');
	*sl = '\0';
	int pfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return OK; /* nothing there yet to judge: the parent is made first */
	bool there = fstatat(pfd, sl + 1, &st, AT_SYMLINK_NOFOLLOW) == 0;
	int rc = linux_broker_git_check(&b, pfd, sl + 1,
					there ? BROKER_OP_OPEN_WRITE : BROKER_OP_OPEN_CREATE);
	close(pfd);
	return rc < 0 ? NO : OK;
}

/* ---------------------------------------------------------------- SBPL */

static bool ere_icase(const char *re, const char *path)
{
	regex_t r;
	int rc;

	ck_assert_msg(regcomp(&r, re, REG_EXTENDED | REG_NOSUB | REG_ICASE) == 0, "bad regex %s",
		      re);
	rc = regexec(&r, path, 0, NULL, 0);
	regfree(&r);
	return rc == 0;
}

/* The profile's write denials that are about names: git's guarded names, the guard
 * names and the protected globs (each as the profile renders it). */
static int sbpl_says(const char *abs)
{
	char re[PATH_MAX], norm[PATH_MAX];
	const char *why;
	size_t n;
	const char *const *g = policy_guard_names(&n);

	ck_assert_int_eq(policy_path_normalise(abs, true, norm, sizeof(norm), &why), 0);
	for (size_t i = 0; macos_guard_git_regex(i, re, sizeof(re)) == 0; i++)
		if (ere_icase(re, norm))
			return NO;
	for (size_t i = 0; i < n; i++)
		if (macos_glob_regex(g[i], re, sizeof(re)) == 0 && ere_icase(re, norm))
			return NO;
	for (size_t i = 0; i < pol.protected_globs.n; i++)
		if (macos_glob_regex(pol.protected_globs.items[i], re, sizeof(re)) == 0 &&
		    ere_icase(re, norm))
			return NO;
	return OK;
}

START_TEST(all_agree)
{
	static const struct {
		unsigned who;
		const char *name;
		int (*says)(const char *);
	} consumers[] = {
	    {H, "hook", hook_says},
	    {S, "scan", scan_says},
	    {B, "broker", broker_says},
	    {M, "sbpl", sbpl_says},
	};
	char abs[PATH_MAX];
	unsigned bad = 0;

	make_tree();
	run_scan_ok();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		abs_of(rows[i].rel, abs);
		for (size_t k = 0; k < 4; k++) {
			if (!(rows[i].who & consumers[k].who))
				continue;
			int want = consumers[k].who == M ? rows[i].fold : rows[i].want;
			int got = consumers[k].says(abs);
			if (got != want) {
				printf("disagree: %s says %s may%s be written (want%s)\n",
				       consumers[k].name, rows[i].rel, got == OK ? "" : " not",
				       want == OK ? " may" : " may not");
				fflush(stdout);
				bad++;
			}
		}
	}
	if (bad)
		printf("scan: guarded %s\n", rel_list(&scan.guarded));
	(void)unix_socket; /* the fixture's, for other suites */
	ck_assert_uint_eq(bad, 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("agree");
	TCase *tc = tcase_create("agree");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, all_agree);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(suite)
