/* The check of a git config written inside the sandbox (linux/gitconf.c): what git
 * init, clone, remote and branch write passes; every key that runs a program or
 * includes a file is refused, however it is spelled; anything git would read
 * differently is refused. Each case is also read by the real git when it is
 * installed: every key git sees in a config the check accepted must be an allowed
 * one (the check never misses a key git reads). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/unit.h"
#include "linux/gitconf.h"
#include "policy/policy_path.h"

struct gcase {
	const char *name;
	const char *in;
	int rc;
	size_t len; /* 0: strlen(in) */
};

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static const struct gcase cases[] = {
    {"git init",
     "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
     "\tlogallrefupdates = true\n",
     0},
    {"git clone and branch",
     "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://git.example/r.git\n"
     "\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n"
     "\tmerge = refs/heads/main\n",
     0},
    {"submodule", "[submodule \"sm\"]\n\turl = ../sm.git\n\tactive = true\n", 0},
    {"worktree without a value check", "[core]\n\tworktree = ../../sm\n", -EACCES},
    {"sharedRepository", "[core]\n\tsharedRepository = 0777\n", -EACCES},
    {"lfs custom transfer", "[lfs \"customtransfer.x\"]\n\tpath = sh\n", -EACCES},
    {"lfs standalone agent", "[lfs]\n\tstandalonetransferagent = x\n", -EACCES},
    {"lfs url", "[lfs]\n\turl = https://lfs.example/\n", 0},
    {"http cookie file", "[http]\n\tcookieFile = /root/x\n\tsaveCookies = true\n", -EACCES},
    {"http proxy", "[http \"https://x/\"]\n\tproxy = http://evil:1\n", -EACCES},
    {"http version", "[http]\n\tversion = HTTP/1.1\n", 0},
    {"pull twohead", "[pull]\n\ttwohead = evil\n", -EACCES},
    {"commit template", "[commit]\n\ttemplate = ~/.ssh/id_rsa\n", -EACCES},
    {"init templateDir", "[init]\n\ttemplateDir = /tmp/t\n", -EACCES},
    {"user and comments", "# c\n; c\n[user]\n\tname = A # trailing\n\temail = \"a@x\" ; c\n", 0},
    {"empty", "", 0},
    {"BOM then a section", "\xef\xbb\xbf[core]\n\tbare = true\n", 0},
    {"CRLF", "[core]\r\n\tbare = true\r\n", 0},
    {"boolean without value", "[core]\n\tbare\n", 0},
    {"quoted hash in value", "[user]\n\tname = \"a # b\"\n", 0},
    {"hooksPath", "[core]\n\thooksPath = /tmp/h\n", -EACCES},
    {"hooksPath mixed case", "[CoRe]\n\tHOOKSPATH = /tmp/h\n", -EACCES},
    {"fsmonitor", "[core]\n\tfsmonitor = sh -c evil\n", -EACCES},
    /* (review) git 2.42's gc hook runs a command; gc's other keys stay allowed */
    {"gc.recentObjectsHook", "[gc]\n\trecentObjectsHook = touch x\n", -EACCES},
    {"gc.repackFilterTo", "[gc]\n\trepackFilterTo = /tmp/elsewhere\n", -EACCES},
    {"gc.auto", "[gc]\n\tauto = 1\n\tautoDetach = false\n", 0},
    {"sshCommand", "[core]\nsshcommand=x\n", -EACCES},
    {"pager editor askpass", "[core]\n\tpager = x\n", -EACCES},
    {"key on the header line", "[core] hooksPath = /tmp/h\n", -EACCES},
    {"key right after the bracket", "[core]fsmonitor=x\n", -EACCES},
    {"alias", "[alias]\n\tst = !sh -c evil\n", -EACCES},
    {"include", "[include]\n\tpath = /tmp/other\n", -EACCES},
    {"includeIf", "[includeIf \"gitdir:/\"]\n\tpath = /tmp/other\n", -EACCES},
    {"filter driver", "[filter \"x\"]\n\tclean = sh\n", -EACCES},
    {"filter old style", "[filter.lfs]\n\tprocess = sh\n", -EACCES},
    {"diff textconv", "[diff \"x\"]\n\ttextconv = sh\n", -EACCES},
    {"diff external", "[diff]\n\texternal = sh\n", -EACCES},
    {"merge driver", "[merge \"x\"]\n\tdriver = sh\n", -EACCES},
    {"credential helper", "[credential]\n\thelper = !sh\n", -EACCES},
    {"uploadpack", "[remote \"o\"]\n\turl = /x\n\tuploadpack = sh\n", -EACCES},
    {"protocol allow", "[protocol \"ext\"]\n\tallow = always\n", -EACCES},
    {"protocol.allow", "[protocol]\n\tallow = always\n", -EACCES},
    {"submodule update command", "[submodule \"x\"]\n\tupdate = !sh\n", -EACCES},
    {"gpg program", "[gpg]\n\tprogram = sh\n", -EACCES},
    {"commit signing", "[commit]\n\tgpgsign = true\n", -EACCES},
    {"sequence editor", "[sequence]\n\teditor = sh\n", -EACCES},
    {"core with a subsection", "[core \"x\"]\n\tbare = true\n", -EACCES},
    {"unknown section", "[zzz]\n\ta = b\n", -EACCES},
    {"continuation hides nothing",
     "[user]\n\tname = a \\\n[core]\n\tbare = true\n[core]\n\thooksPath = /x\n", -EACCES},
    {"continuation then a key", "[core]\n\tbare = a\\\n\tb\n\thooksPath = x\n", -EACCES},
    {"quoted subsection with escapes", "[remote \"a\\\"b\"]\n\turl = x\n[alias]\n\tx = y\n",
     -EACCES},
    {"comment after a value hides no key", "[user]\n\tname = a ; x\n[alias]\nx=y\n", -EACCES},
    {"key before any section", "hooksPath = x\n", -EINVAL},
    {"space before a section name", "[ core ]\n\tbare = true\n", -EINVAL},
    {"unterminated section", "[core\n\tbare = true\n", -EINVAL},
    {"unterminated subsection", "[remote \"o\n]\n", -EINVAL},
    {"unterminated quote", "[user]\n\tname = \"a\n[alias]\n\tx = y\n", -EINVAL},
    {"bad escape", "[user]\n\tname = \\q\n", -EINVAL},
    {"NUL in a value", "[user]\n\tname = a\0b\n", -EINVAL, 17},
    {"NUL at top level", "[user]\n\0name = a\n", -EINVAL, 16},
    {"garbage", "\x01\x02\x03", -EINVAL},
    {"key without =", "[user]\n\tname x\n", -EINVAL},
    {"over-long key",
     "[user]\n\taaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa = 1\n",
     -EINVAL},
    {"trailing backslash at the end", "[user]\n\tname = a\\", -EINVAL},
};

/* The keys the real git reads in buf (`git config --list -z`), each checked against
 * the allow list; returns how many were refused, or -1 when git is absent or could
 * not read the file (then nothing is compared). */
static int git_refused_keys(const char *buf, size_t n)
{
	char path[] = "/tmp/halo-gitconf-XXXXXX", cmd[128], out[65536];
	int fd = mkstemp(path), refused = 0;
	size_t got;
	FILE *p;

	if (fd < 0 || write(fd, buf, n) != (ssize_t)n) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), "git config --file %s --list -z 2>/dev/null", path);
	if (access("/usr/bin/git", X_OK) != 0 || !(p = popen(cmd, "r"))) {
		unlink(path);
		return -1;
	}
	got = fread(out, 1, sizeof(out) - 1, p);
	out[got] = '\0';
	if (pclose(p) != 0) {
		unlink(path);
		return -1;
	}
	unlink(path);
	for (char *e = out, *end; e < out + got; e = end + 1) {
		char *first, *last, sec[64];
		end = e + strlen(e);
		e[strcspn(e, "\n")] = '\0'; /* "key\nvalue": the key */
		first = strchr(e, '.');
		last = strrchr(e, '.');
		if (!first || (size_t)(first - e) >= sizeof(sec))
			return refused + 1;
		memcpy(sec, e, (size_t)(first - e));
		sec[first - e] = '\0';
		if (!linux_gitconf_key_allowed(sec, first != last, last + 1))
			refused++;
	}
	return refused;
}

/* A config that existed before the launch: refused keys kept exactly, safe ones free. */
struct ccase {
	const char *name, *old, *new;
	int rc;
};

#define OLD_PAGER "[core]\n\tpager = less -R\n[alias]\n\tst = !git status\n"

static const struct ccase changes[] = {
    {"user.email added", "[core]\n\tbare = false\n",
     "[core]\n\tbare = false\n[user]\n\temail = a@b\n", 0},
    {"remote added beside a kept alias", OLD_PAGER,
     OLD_PAGER "[remote \"o\"]\n\turl = /x\n\tfetch = +refs/heads/*:refs/remotes/o/*\n", 0},
    {"branch upstream set", OLD_PAGER,
     "[core]\n\tpager = less -R\n[branch \"x\"]\n\tremote = o\n[alias]\n\tst = !git status\n", 0},
    {"core.pager added", "[core]\n\tbare = false\n", "[core]\n\tbare = false\n\tpager = sh\n",
     -EACCES},
    {"core.pager changed", OLD_PAGER, "[core]\n\tpager = sh\n[alias]\n\tst = !git status\n",
     -EACCES},
    {"alias added", OLD_PAGER, OLD_PAGER "\tx = !sh\n", -EACCES},
    {"alias moved to another subsection", "[filter \"a\"]\n\tclean = cat\n",
     "[filter \"b\"]\n\tclean = cat\n", -EACCES},
    {"old-style subsection renamed", "[filter.a]\n\tclean = cat\n", "[filter.b]\n\tclean = cat\n",
     -EACCES},
    {"refused keys reordered", OLD_PAGER,
     "[alias]\n\tst = !git status\n[core]\n\tpager = less -R\n", -EACCES},
    {"refused key removed", OLD_PAGER, "[core]\n\tpager = less -R\n", -EACCES},
    {"hooksPath added", "", "[core]\n\thooksPath = /tmp\n", -EACCES},
    {"value spelled with an escape is the same value", "[core]\n\tpager = a\n",
     "[core]\n\tpager = \"a\"\n", 0},
    {"a field boundary cannot be forged", "[alias]\n\tx = 1:a\n", "[alias]\n\tx1 = :a\n", -EACCES},
    {"new config unreadable", "[core]\n", "[core\n", -EINVAL},
    {"old config unreadable: refused", "[core\n", "[core]\n", -EACCES},
};

START_TEST(gitconf_change)
{
	const struct ccase *c = &changes[_i];
	char why[160];
	int rc = linux_gitconf_check_change(c->old, strlen(c->old), c->new, strlen(c->new), why,
					    sizeof(why), NULL, NULL);

	ck_assert_msg(rc == c->rc, "%s: rc %d, want %d (%s)", c->name, rc, c->rc, why);
	if (rc == -EACCES)
		ck_assert_msg(why[0], "%s: no reason", c->name);
}
END_TEST

START_TEST(gitconf_table)
{
	const struct gcase *c = &cases[_i];
	size_t n = c->len ? c->len : strlen(c->in);
	char why[160] = "x";
	int rc = linux_gitconf_check(c->in, n, why, sizeof(why));
	int git = git_refused_keys(c->in, n);

	ck_assert_msg(rc == c->rc, "[%s] rc %d, want %d (%s)", c->name, rc, c->rc, why);
	ck_assert_msg(rc == 0 ? why[0] == '\0' : why[0] != '\0', "[%s] why: '%s'", c->name, why);
	if (rc == 0)
		ck_assert_msg(git <= 0, "[%s] accepted, but git reads %d refused key(s)", c->name,
			      git);
	if (c->rc == -EACCES)
		ck_assert_msg(git != 0, "[%s] git reads no refused key: the case tests nothing",
			      c->name);
}
END_TEST

/* core.worktree: judged by the caller on its decoded value. */
static bool only_sm(void *ctx, const char *section, const char *key, const char *value)
{
	(void)ctx;
	return !strcmp(section, "core") && !strcmp(key, "worktree") && !strcmp(value, "../../sm");
}

START_TEST(gitconf_values)
{
	static const struct {
		const char *in;
		int rc;
	} t[] = {
	    {"[core]\n\tworktree = ../../sm\n", 0},
	    {"[core]\n\tworktree = \"../../sm\"  ; c\n", 0},
	    {"[core]\n\tworktree = ../../s\\\nm\n", 0},	 /* continued */
	    {"[core]\n\tworktree =   ../../sm   \n", 0}, /* blanks trimmed */
	    {"[core]\n\tworktree = /home/u\n", -EACCES},
	    {"[core]\n\tworktree = \"../../sm \"\n", -EACCES}, /* quoted blank kept */
	    {"[core]\n\tworktree\n", -EACCES},		       /* no value */
	    {"[core \"x\"]\n\tworktree = ../../sm\n", -EACCES},
	};
	char why[160];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_msg(linux_gitconf_check_values(t[i].in, strlen(t[i].in), why, sizeof(why),
							 only_sm, NULL) == t[i].rc,
			      "row %zu: %s (%s)", i, t[i].in, why);
}
END_TEST

START_TEST(gitconf_keys)
{
	ck_assert(linux_gitconf_key_allowed("core", false, "bare"));
	ck_assert(!linux_gitconf_key_allowed("core", false, "hookspath"));
	ck_assert(!linux_gitconf_key_allowed("core", true, "bare"));
	ck_assert(linux_gitconf_key_allowed("remote", true, "url"));
	ck_assert(!linux_gitconf_key_allowed("remote", true, "receivepack"));
	ck_assert(linux_gitconf_key_allowed("protocol", false, "version"));
	ck_assert(!linux_gitconf_key_allowed("protocol", true, "allow"));
	ck_assert(!linux_gitconf_key_allowed("", false, "x"));
}
END_TEST

/* init.templateDir is told (review 22: git init and clone copy its hooks). */
static void last_ref(void *ctx, int kind, const char *value)
{
	char *out = ctx;
	snprintf(out, 128, "%d:%s", kind, value);
}

START_TEST(gitconf_template)
{
	static const char in[] =
	    "[user]\n\tname = a\n[INIT]\n\ttemplateDir = \"~/.git-templates\"\n";
	char got[128] = "";
	char want[128];

	policy_git_config_refs(in, sizeof(in) - 1, last_ref, got);
	snprintf(want, sizeof(want), "%d:~/.git-templates", POLICY_GITREF_TEMPLATE);
	ck_assert_str_eq(got, want);
}
END_TEST

/* The programs command-valued keys run, when they are paths (review 24). */
static void all_programs(void *ctx, int kind, const char *value)
{
	char *out = ctx;
	if (kind == POLICY_GITREF_PROGRAM || kind == POLICY_GITREF_PROGRAM_ARG) {
		strcat(out, kind == POLICY_GITREF_PROGRAM ? "" : "+");
		strcat(out, value);
		strcat(out, "|");
	}
}

START_TEST(gitconf_programs)
{
	static const char in[] =
	    "[core]\n\tfsmonitor = /w/tools/fsmon.sh\n\tpager = less -R\n"
	    "\teditor = \"~/bin/ed.sh\" --wait\n[credential]\n\thelper = store\n"
	    "\thelper = !~/bin/cred.sh get\n[filter \"lfs\"]\n\tsmudge = git-lfs smudge %f\n"
	    "\tprocess = /opt/x/filt --p\n[gpg]\n\tprogram = ~alice/gpg.sh\n"
	    "[user]\n\tname = /not/a/program\n";
	char got[512] = "";

	policy_git_config_refs(in, sizeof(in) - 1, all_programs, got);
	ck_assert_str_eq(got,
			 "/w/tools/fsmon.sh|~/bin/ed.sh|~/bin/cred.sh|/opt/x/filt|~alice/gpg.sh|");

	/* every word the shell runs (review 25): quoted, after NAME=value, inside sh -c,
	 * $HOME, relative with a '/', and the keys run at add, log, fetch, an alias */
	static const char more[] =
	    "[filter \"nb\"]\n\tclean = \\\"/p/.venv/bin/python\\\" -m nbstripout\n"
	    "[core]\n\tsshCommand = GIT_TRACE=0 /p/bin/sshenv -o x\n"
	    "[credential]\n\thelper = \"!sh -c '/p/bin/shc get'\"\n"
	    "[sequence]\n\teditor = $HOME/bin/ed\n[pager]\n\tlog = ${HOME}/bin/pg\n"
	    "[alias]\n\tst = !bin/alias --x\n\tlg = log --oneline\n\trb = !git rebase origin/main\n"
	    "[remote \"origin\"]\n\tuploadpack = /p/bin/up\n[filter \"rel\"]\n\tclean = bin/rel\n";
	got[0] = '\0';
	policy_git_config_refs(more, sizeof(more) - 1, all_programs, got);
	/* (+: a later word, kept only where it exists; "origin/main" names no program) */
	ck_assert_str_eq(got, "/p/.venv/bin/python|/p/bin/sshenv|+/p/bin/shc|~/bin/ed|~/bin/pg|"
			      "bin/alias|+origin/main|/p/bin/up|bin/rel|");
}
END_TEST

/* A config path's "~" as git expands it (policy_path_tilde, the scan's and the hook's). */
START_TEST(gitconf_tilde)
{
	static const struct {
		const char *v;
		bool ok;
		const char *user, *rest;
	} t[] = {
	    {"~", true, "", ""},
	    {"~/", true, "", ""},
	    {"~/.githooks", true, "", ".githooks"},
	    {"~bob/hooks/x", true, "bob", "hooks/x"},
	    {"~bob", true, "bob", ""},
	    {"~~/x", true, "~", "x"},
	    {"/abs/~/x", false, NULL, NULL},
	    {"rel/~x", false, NULL, NULL},
	    {"", false, NULL, NULL},
	};
	char user[16], longv[64];
	const char *rest;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		bool ok = policy_path_tilde(t[i].v, user, sizeof(user), &rest);
		ck_assert_msg(ok == t[i].ok, "row %zu (%s)", i, t[i].v);
		if (ok) {
			ck_assert_str_eq(user, t[i].user);
			ck_assert_str_eq(rest, t[i].rest);
		}
	}
	/* a user name that does not fit: not taken as one */
	memset(longv, 'u', sizeof(longv) - 1);
	longv[0] = '~';
	longv[sizeof(longv) - 1] = '\0';
	ck_assert(!policy_path_tilde(longv, user, sizeof(user), &rest));
}
END_TEST

static Suite *gitconf_suite(void)
{
	Suite *s = suite_create("gitconf");
	TCase *t = tcase_create("check");

	tcase_add_loop_test(t, gitconf_table, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(t, gitconf_keys);
	tcase_add_loop_test(t, gitconf_change, 0, (int)(sizeof(changes) / sizeof(changes[0])));
	tcase_add_test(t, gitconf_values);
	tcase_add_test(t, gitconf_tilde);
	tcase_add_test(t, gitconf_template);
	tcase_add_test(t, gitconf_programs);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(gitconf_suite)
