/* env/caches: the cache root's location, the variables each tool gets, the plan's
 * fall-backs (no home, a root owned by someone else or reached through a link, a root
 * under a protected path), host mode binding only real directories. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env/caches.h"
#include "tests/unit/unit.h"

static char home[PATH_MAX];

static void sh(const char *fmt, const char *arg)
{
	char cmd[2 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), fmt, arg, arg, arg, arg);
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

static void setup(void)
{
	char t[] = "/var/tmp/halo-caches.XXXXXX";

	ck_assert_ptr_nonnull(mkdtemp(t));
	ck_assert_ptr_nonnull(realpath(t, home));
}

static void teardown(void)
{
	sh("rm -rf '%s'", home);
}

static const char *var(const struct runner_caches *c, const char *name)
{
	for (size_t i = 0; i < c->n_vars; i++)
		if (strcmp(c->vars[i].key, name) == 0)
			return c->vars[i].value;
	return NULL;
}

START_TEST(root_location)
{
	char out[64];

	ck_assert_int_eq(runner_cache_root("/home/a", NULL, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/home/a/.cache/halo-run/caches");
	ck_assert_int_eq(runner_cache_root("/home/a", "/x/cache", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/x/cache/halo-run/caches");
	/* a relative XDG_CACHE_HOME is ignored, as the spec says */
	ck_assert_int_eq(runner_cache_root("/home/a", "rel", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/home/a/.cache/halo-run/caches");
	ck_assert_int_eq(runner_cache_root("/", NULL, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/.cache/halo-run/caches");
	ck_assert_int_eq(runner_cache_root(NULL, NULL, out, sizeof(out)), -ENOENT);
	ck_assert_int_eq(runner_cache_root("relative", NULL, out, sizeof(out)), -ENOENT);
	ck_assert_int_eq(runner_cache_root("/a/very/long/home/directory/name/here", NULL, out, 20),
			 -ENAMETOOLONG);
}
END_TEST

START_TEST(vars_per_tool)
{
	struct runner_caches c;

	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(runner_caches_vars(&c, "/r"), 0);
	ck_assert_uint_eq(c.n_vars, runner_n_cache_tools - 1); /* pnpm: its rc, no variable */
	ck_assert_str_eq(var(&c, "npm_config_cache"), "/r/npm");
	/* npm 11 warns "Unknown env config" at every call about any npm_config_ name it
	 * does not know: pnpm's store-dir is never one of the variables. */
	ck_assert_ptr_null(var(&c, "npm_config_store_dir"));
	ck_assert_str_eq(var(&c, "GOCACHE"), "/r/go-build");
	ck_assert_str_eq(var(&c, "GOPATH"), "/r/go");
	ck_assert_str_eq(var(&c, "CARGO_HOME"), "/r/cargo");
	ck_assert_str_eq(var(&c, "PIP_CACHE_DIR"), "/r/pip");
	ck_assert_str_eq(var(&c, "MAVEN_OPTS"), "-Dmaven.repo.local=/r/maven");
	for (size_t i = 0; i < runner_n_cache_tools; i++) /* one component each (clear) */
		ck_assert_ptr_null(strchr(runner_cache_tools[i].sub, '/'));
	ck_assert_str_eq(var(&c, "XDG_CACHE_HOME"), "/r/xdg");
	runner_caches_release(&c);
	ck_assert_int_eq(runner_caches_vars(&c, NULL), 0);
	ck_assert_str_eq(var(&c, "UV_CACHE_DIR"), RUNNER_CACHE_PER_RUN_ROOT "/uv");
	runner_caches_release(&c);
	ck_assert(runner_cache_tool_known("go") && runner_cache_tool_known("all"));
	ck_assert(!runner_cache_tool_known("Go") && !runner_cache_tool_known(""));
}
END_TEST

#define WS "/w/proj"

static int plan(const struct halo_policy *p, const char *h, struct runner_caches *c)
{
	struct runner_caches_in in = {.policy = p, .home = h, .workspace = WS};

	return runner_caches_plan(&in, c);
}

static struct halo_policy *policy(enum policy_caches mode, const char *protected_abs)
{
	static struct halo_policy p;
	static char *prot[1];

	memset(&p, 0, sizeof(p));
	p.mode = POLICY_MODE_WORKSPACE_WRITE;
	p.caches = mode;
	if (protected_abs) {
		prot[0] = (char *)protected_abs;
		p.protected_abs = (struct policy_list){prot, 1, true};
	}
	return &p;
}

START_TEST(isolated_creates_a_private_root)
{
	struct runner_caches c;
	char want[PATH_MAX + 128];
	struct stat st;

	ck_assert_int_eq(plan(policy(POLICY_CACHES_UNSET, NULL), home, &c), 0);
	char key[64];
	ck_assert_int_eq(runner_cache_key(WS, key, sizeof(key)), 0);
	snprintf(want, sizeof(want), "%s/.cache/halo-run/caches/%s", home, key);
	ck_assert(!c.per_run);
	ck_assert_str_eq(c.root, want);
	ck_assert_uint_eq(c.n_binds, 1);
	ck_assert_str_eq(c.binds[0], want);
	ck_assert_int_eq(stat(want, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	ck_assert_str_eq(c.note, "");
	/* the directory of every workspace's caches: hidden inside but for this one */
	snprintf(want, sizeof(want), "%s/.cache/halo-run/caches", home);
	ck_assert_str_eq(c.hide, want);
	runner_caches_release(&c);
	/* again: the existing root is reused */
	ck_assert_int_eq(plan(policy(POLICY_CACHES_ISOLATED, NULL), home, &c), 0);
	ck_assert(!c.per_run);
	runner_caches_release(&c);
}
END_TEST

/* ~/.cache may be a link (the part above halo-run/ is the user's own): the root bound
 * is the real directory, as the kernel names the one opened, and the protected-path
 * check sees that name. */
START_TEST(root_named_as_resolved)
{
	struct runner_caches c;
	char want[PATH_MAX + 128], key[64];

	sh("mkdir -p '%s/elsewhere/cache' && ln -s '%s/elsewhere/cache' '%s/.cache'", home);
	ck_assert_int_eq(runner_cache_key(WS, key, sizeof(key)), 0);
	ck_assert_int_eq(plan(policy(POLICY_CACHES_UNSET, NULL), home, &c), 0);
	snprintf(want, sizeof(want), "%s/elsewhere/cache/halo-run/caches/%s", home, key);
	ck_assert(!c.per_run);
	ck_assert_str_eq(c.root, want);
	ck_assert_str_eq(c.binds[0], want);
	runner_caches_release(&c);
	/* the resolved name is what a protected path is checked against */
	snprintf(want, sizeof(want), "%s/elsewhere", home);
	ck_assert_int_eq(plan(policy(POLICY_CACHES_UNSET, want), home, &c), 0);
	ck_assert(c.per_run);
	ck_assert_ptr_nonnull(strstr(c.note, "overlaps the protected path"));
	runner_caches_release(&c);
}
END_TEST

START_TEST(isolated_falls_back_to_per_run)
{
	struct runner_caches c;
	char missing[PATH_MAX + 16], prot[PATH_MAX + 16];

	snprintf(missing, sizeof(missing), "%s/nonexistent", home);
	ck_assert_int_eq(plan(policy(POLICY_CACHES_ISOLATED, NULL), missing, &c), 0);
	ck_assert(c.per_run);
	ck_assert_uint_eq(c.n_binds, 0);
	ck_assert_str_eq(var(&c, "GOCACHE"), RUNNER_CACHE_PER_RUN_ROOT "/go-build");
	ck_assert_msg(strstr(c.note, "per-run") && strstr(c.note, "nonexistent"), "%s", c.note);
	runner_caches_release(&c);
	ck_assert_int_eq(plan(policy(POLICY_CACHES_ISOLATED, NULL), NULL, &c), 0);
	ck_assert(c.per_run);
	runner_caches_release(&c);

	/* halo-run's part of the path may not be a link (it could point anywhere). */
	sh("mkdir -p '%s/.cache' '%s/elsewhere' && ln -s '%s/elsewhere' '%s/.cache/halo-run'",
	   home);
	ck_assert_int_eq(plan(policy(POLICY_CACHES_ISOLATED, NULL), home, &c), 0);
	ck_assert_msg(c.per_run, "a symlinked halo-run directory must not be used");
	runner_caches_release(&c);
	sh("rm -f '%s/.cache/halo-run'", home);

	/* a root under a protected path */
	snprintf(prot, sizeof(prot), "%s/.cache", home);
	ck_assert_int_eq(plan(policy(POLICY_CACHES_ISOLATED, prot), home, &c), 0);
	ck_assert(c.per_run);
	ck_assert_msg(strstr(c.note, "protected path") != NULL, "%s", c.note);
	runner_caches_release(&c);
}
END_TEST

START_TEST(isolated_other_owner_refused)
{
	struct runner_caches c;

	if (geteuid() != 0)
		UNIT_SKIP("cache root owned by another user", "needs chown: not root");
	sh("mkdir -p '%s/.cache/halo-run/caches' && chown 65534 '%s/.cache/halo-run'", home);
	ck_assert_int_eq(plan(policy(POLICY_CACHES_ISOLATED, NULL), home, &c), 0);
	ck_assert(c.per_run);
	ck_assert_msg(strstr(c.note, "not a private directory") != NULL, "%s", c.note);
	runner_caches_release(&c);
}
END_TEST

START_TEST(key_per_workspace)
{
	char a[64], b[64], c2[64];

	ck_assert_int_eq(runner_cache_key("/home/u/proj", a, sizeof(a)), 0);
	ck_assert_int_eq(runner_cache_key("/srv/proj", b, sizeof(b)), 0);
	ck_assert_int_eq(runner_cache_key("/", c2, sizeof(c2)), 0);
	ck_assert(strncmp(a, "proj-", 5) == 0 && strncmp(b, "proj-", 5) == 0);
	ck_assert_str_ne(a, b); /* same name, other workspace: another directory */
	ck_assert(strncmp(c2, "root-", 5) == 0);
	ck_assert_int_eq(runner_cache_key("/x/..", a, sizeof(a)), 0);
	ck_assert(a[0] == '_' && !strchr(a, '/'));
	ck_assert_int_eq(runner_cache_key("/x/a b\n\x01", a, sizeof(a)), 0);
	ck_assert(strncmp(a, "a_b__-", 6) == 0);
	ck_assert_int_eq(runner_cache_key("/x/y", a, 10), -ENAMETOOLONG);
}
END_TEST

START_TEST(read_only_is_per_run)
{
	struct runner_caches c;
	struct halo_policy *p = policy(POLICY_CACHES_ISOLATED, NULL);

	p->mode = POLICY_MODE_READ_ONLY;
	ck_assert_int_eq(plan(p, home, &c), 0);
	ck_assert(c.per_run && c.n_binds == 0);
	ck_assert_msg(strstr(c.note, "read-only") != NULL, "%s", c.note);
	runner_caches_release(&c);
}
END_TEST

START_TEST(dry_run_creates_nothing)
{
	struct runner_caches c;
	struct runner_caches_in in = {.policy = policy(POLICY_CACHES_ISOLATED, NULL),
				      .home = home,
				      .workspace = WS,
				      .dry_run = true};
	char p[PATH_MAX + 32];

	ck_assert_int_eq(runner_caches_plan(&in, &c), 0);
	ck_assert(!c.per_run && c.n_binds == 0 && c.n_vars > 0);
	ck_assert_str_eq(c.hide, ""); /* nothing bound, nothing to hide it in */
	ck_assert_msg(strstr(c.note, "created at the first launch") != NULL, "%s", c.note);
	snprintf(p, sizeof(p), "%s/.cache", home);
	ck_assert_msg(access(p, F_OK) < 0, "dry run created %s", p);
	runner_caches_release(&c);
}
END_TEST

START_TEST(host_binds_real_dirs_only)
{
	struct runner_caches c;

	sh("mkdir -p '%s/.npm' '%s/.cargo/registry' && ln -s /etc '%s/go'", home);
	ck_assert_int_eq(plan(policy(POLICY_CACHES_HOST, NULL), home, &c), 0);
	ck_assert_uint_eq(c.n_vars, 0);
	ck_assert_uint_eq(c.n_binds, 2);
	ck_assert(strstr(c.binds[0], "/.npm") && strstr(c.binds[1], "/.cargo/registry"));
	ck_assert_str_eq(c.hide, ""); /* the host's own caches: nothing hidden */
	runner_caches_release(&c);
	ck_assert_int_eq(plan(policy(POLICY_CACHES_OFF, NULL), home, &c), 0);
	ck_assert_uint_eq(c.n_vars + c.n_binds, 0);
	runner_caches_release(&c);
}
END_TEST

/* The user's cargo config is linked into the sandbox's CARGO_HOME, but a `cargo` link
 * planted in the caches directory is never followed. */
START_TEST(cargo_config_linked_never_through_a_link)
{
	struct runner_caches c;
	char path[PATH_MAX + 64], target[PATH_MAX];
	ssize_t n;

	sh("mkdir -p '%s/.cargo' && echo '[net]' > '%s/.cargo/config.toml'", home);
	ck_assert_int_eq(plan(policy(POLICY_CACHES_ISOLATED, NULL), home, &c), 0);
	snprintf(path, sizeof(path), "%s/cargo/config.toml", c.root);
	ck_assert(strstr(c.root, "/caches/proj-") != NULL);
	n = readlink(path, target, sizeof(target) - 1);
	ck_assert_int_gt(n, 0);
	target[n] = '\0';
	ck_assert(strstr(target, "/.cargo/config.toml") != NULL);
	runner_caches_release(&c);
	/* planted: caches/cargo -> elsewhere */
	sh("d=$(echo '%s/.cache/halo-run/caches/'*) && rm -rf \"$d/cargo\" && "
	   "mkdir -p '%s/elsewhere' && ln -s '%s/elsewhere' \"$d/cargo\"",
	   home);
	ck_assert_int_eq(plan(policy(POLICY_CACHES_ISOLATED, NULL), home, &c), 0);
	snprintf(path, sizeof(path), "%s/elsewhere/config.toml", home);
	ck_assert_msg(access(path, F_OK) < 0, "a link was created through the planted symlink");
	runner_caches_release(&c);
}
END_TEST

/* The command's XDG_CONFIG_HOME: pnpm/rc naming the store, the host's pnpm rc
 * sanitized before it; the names of ~/.config to mirror, pnpm's own left out; the home
 * as a workspace keeps its own; no home: the rc alone. */
START_TEST(config_mirror_with_pnpm_rc)
{
	struct runner_tool_config c;
	char want[PATH_MAX + 64], rc[4096], rcpath[PATH_MAX + 32];
	char *san[1] = {rcpath};
	struct halo_policy *p = policy(POLICY_CACHES_ISOLATED, NULL);
	size_t n = 0;
	bool git = false, fish = false;

	snprintf(rcpath, sizeof(rcpath), "%s/.config/pnpm/rc", home);
	p->sanitize_abs = (struct policy_list){san, 1, true}; /* the floor's copy */

	sh("mkdir -p '%s/.config/git' '%s/.config/fish' '%s/.config/pnpm' && "
	   "printf 'registry=http://r.test/\n//r.test/:_authToken=SECRET\nstore-dir=/x' > "
	   "'%s/.config/pnpm/rc'",
	   home);
	ck_assert_int_eq(runner_caches_config(p, home, WS, "/c/pnpm-store", &c), 0);
	snprintf(want, sizeof(want), "%s/.config", home);
	ck_assert_str_eq(c.mirror, want);
	ck_assert_uint_lt(c.rc_len, sizeof(rc));
	memcpy(rc, c.rc, c.rc_len);
	rc[c.rc_len] = '\0';
	ck_assert_msg(strstr(rc, "registry=http://r.test/\n") != NULL, "%s", rc);
	ck_assert_msg(strstr(rc, "SECRET") == NULL, "%s", rc);
	/* ours last: ini's last assignment wins */
	ck_assert_msg(strstr(rc, "\nstore-dir=/c/pnpm-store\n") != NULL &&
			  strstr(strstr(rc, "store-dir=/c/pnpm-store"), "store-dir=/x") == NULL,
		      "%s", rc);
	for (size_t o = 0; o < c.names_len; o += strlen(c.names + o) + 1, n++) {
		git |= strcmp(c.names + o, "git") == 0;
		fish |= strcmp(c.names + o, "fish") == 0;
		ck_assert_str_ne(c.names + o, "pnpm");
	}
	ck_assert(git && fish && n == 2);
	runner_tool_config_release(&c);
	/* the home as the workspace: its own ~/.config stays the command's */
	ck_assert_int_eq(runner_caches_config(p, home, home, "/c/pnpm-store", &c), -EEXIST);
	/* no home (per-run caches): the rc alone */
	ck_assert_int_eq(runner_caches_config(p, NULL, WS, "/tmp/halo-cache/pnpm-store", &c), 0);
	ck_assert_uint_eq(c.names_len, 0);
	ck_assert_str_eq(c.mirror, "");
	ck_assert_int_eq(strncmp(c.rc, "# halo-run", 10), 0);
	runner_tool_config_release(&c);
}
END_TEST

static bool rc_has(const struct runner_tool_config *c, const char *s)
{
	return memmem(c->rc, c->rc_len, s, strlen(s)) != NULL;
}

/* The mirror shows no more than the policy does at the original paths: a pnpm rc the
 * policy protects (not in the floor's sanitized list), one that is a symlink (it could
 * lead into a protected path) or under a symlinked ~/.config/pnpm gives no settings;
 * a protected ~/.config is not listed. */
START_TEST(config_mirror_follows_the_policy)
{
	struct runner_tool_config c;
	char rcpath[PATH_MAX + 32], cfg[PATH_MAX + 32];
	char *san[1] = {rcpath}, *prot[1] = {cfg};
	struct halo_policy *p = policy(POLICY_CACHES_ISOLATED, NULL);

	snprintf(rcpath, sizeof(rcpath), "%s/.config/pnpm/rc", home);
	snprintf(cfg, sizeof(cfg), "%s/.config", home);
	sh("mkdir -p '%s/.config/pnpm' '%s/.config/git' '%s/aws' && "
	   "printf 'registry=http://r.test/\nkeepme=PNPMSETTING\n' > '%s/.config/pnpm/rc'",
	   home);
	sh("printf '[default]\nregion=AWSREGION\n' > '%s/aws/config'", home);
	/* protected by the policy: not in sanitize_abs */
	ck_assert_int_eq(runner_caches_config(p, home, WS, "/c/s", &c), 0);
	ck_assert_msg(!rc_has(&c, "PNPMSETTING"), "%.*s", (int)c.rc_len, c.rc);
	ck_assert(rc_has(&c, "store-dir=/c/s\n"));
	runner_tool_config_release(&c);
	p->sanitize_abs = (struct policy_list){san, 1, true};
	ck_assert_int_eq(runner_caches_config(p, home, WS, "/c/s", &c), 0);
	ck_assert(rc_has(&c, "PNPMSETTING"));
	ck_assert_uint_gt(c.names_len, 0);
	runner_tool_config_release(&c);
	/* rc a symlink into a protected file */
	sh("rm '%s/.config/pnpm/rc' && ln -s '%s/aws/config' '%s/.config/pnpm/rc'", home);
	ck_assert_int_eq(runner_caches_config(p, home, WS, "/c/s", &c), 0);
	ck_assert_msg(!rc_has(&c, "AWSREGION"), "%.*s", (int)c.rc_len, c.rc);
	runner_tool_config_release(&c);
	/* ~/.config/pnpm a symlink to a directory holding an rc */
	sh("rm -rf '%s/.config/pnpm' && mkdir -p '%s/elsewhere' && cp '%s/aws/config' "
	   "'%s/elsewhere/rc'",
	   home);
	sh("ln -s '%s/elsewhere' '%s/.config/pnpm'", home);
	ck_assert_int_eq(runner_caches_config(p, home, WS, "/c/s", &c), 0);
	ck_assert_msg(!rc_has(&c, "AWSREGION"), "%.*s", (int)c.rc_len, c.rc);
	runner_tool_config_release(&c);
	/* a protected ~/.config: no names */
	p->protected_abs = (struct policy_list){prot, 1, true};
	ck_assert_int_eq(runner_caches_config(p, home, WS, "/c/s", &c), 0);
	ck_assert_uint_eq(c.names_len, 0);
	runner_tool_config_release(&c);
}
END_TEST

/* More entries than a mirror holds: no mirror at all (-E2BIG; the command reads
 * ~/.config itself) rather than one that silently lacks some of them. */
START_TEST(config_mirror_too_many_names)
{
	struct runner_tool_config c;
	struct halo_policy *p = policy(POLICY_CACHES_ISOLATED, NULL);

	sh("mkdir -p '%s/.config/pnpm' && cd '%s/.config' && seq 1 4096 | xargs mkdir", home);
	ck_assert_int_eq(runner_caches_config(p, home, WS, "/c/s", &c), 0);
	runner_tool_config_release(&c);
	sh("mkdir '%s/.config/one-more'", home);
	ck_assert_int_eq(runner_caches_config(p, home, WS, "/c/s", &c), -E2BIG);
	ck_assert_ptr_null(c.names);
	ck_assert_ptr_null(c.rc);
}
END_TEST

static Suite *caches_suite(void)
{
	Suite *s = suite_create("caches");
	TCase *tc = tcase_create("caches");

	tcase_set_timeout(tc, 60); /* thousands of names under ASan on a shared machine */
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, root_location);
	tcase_add_test(tc, vars_per_tool);
	tcase_add_test(tc, isolated_creates_a_private_root);
	tcase_add_test(tc, root_named_as_resolved);
	tcase_add_test(tc, isolated_falls_back_to_per_run);
	tcase_add_test(tc, isolated_other_owner_refused);
	tcase_add_test(tc, host_binds_real_dirs_only);
	tcase_add_test(tc, key_per_workspace);
	tcase_add_test(tc, read_only_is_per_run);
	tcase_add_test(tc, dry_run_creates_nothing);
	tcase_add_test(tc, cargo_config_linked_never_through_a_link);
	tcase_add_test(tc, config_mirror_with_pnpm_rc);
	tcase_add_test(tc, config_mirror_follows_the_policy);
	tcase_add_test(tc, config_mirror_too_many_names);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(caches_suite)
