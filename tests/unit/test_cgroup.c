/* cgroup discovery (linux/cgroup_find.c): the caller's path in /proc/self/cgroup text
 * against hostile lines, and the delegated-subtree search on a fake tree (directories
 * and files made by the test, so ownership is the test's own uid). The kernel's rules
 * themselves (migration, no internal processes) cannot be exercised here. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/linux_int.h"
#include "tests/unit/unit.h"

#define ROWS(a) ((int)(sizeof(a) / sizeof((a)[0])))

struct own_row {
	const char *text;
	const char *controller;
	int rc;
	const char *want;
};

static const struct own_row own_rows[] = {
    {"0::/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope\n", NULL, 0,
     "/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope"},
    {"0::/\n", NULL, 0, "/"},
    {"12:pids:/a\n4:memory:/process_api/b7\n0::/\n", "memory", 0, "/process_api/b7"},
    {"2:cpu,cpuacct:/c\n", "cpuacct", 0, "/c"},
    {"2:cpu,cpuacct:/c\n", "cpu", 0, "/c"},
    {"2:cpu,cpuacct:/c\n", "acct", -ENOENT, NULL},
    {"9:name=systemd:/\n", "systemd", -ENOENT, NULL},
    {"4:memoryx:/m\n", "memory", -ENOENT, NULL},
    {"4:memory:/m", "memory", 0, "/m"}, /* no final newline */
    {"4:memory:\n", "memory", -ENOENT, NULL},
    {"4:memory:relative\n", "memory", -ENOENT, NULL},
    {"4:memory:/a/../../etc\n", "memory", -ENOENT, NULL},
    {"0::/..\n", NULL, -ENOENT, NULL},
    {"10::/x\n", NULL, -ENOENT, NULL}, /* only hierarchy 0 is v2 */
    {"0:memory:/x\n", NULL, -ENOENT, NULL},
    {"garbage\n:::\n", NULL, -ENOENT, NULL},
    {"", "memory", -ENOENT, NULL},
};

START_TEST(own_path)
{
	const struct own_row *row = &own_rows[_i];
	char out[LINUX_CGROUP_PATH] = "";

	ck_assert_int_eq(linux_cgroup_own_path(row->text, row->controller, out, sizeof(out)),
			 row->rc);
	if (row->rc == 0)
		ck_assert_str_eq(out, row->want);
}
END_TEST

START_TEST(own_path_too_long)
{
	char text[700], out[16];

	snprintf(text, sizeof(text), "0::/%0600d\n", 1);
	ck_assert_int_eq(linux_cgroup_own_path(text, NULL, out, sizeof(out)), -ENAMETOOLONG);
}
END_TEST

/* ---------------------------------------------------------------- delegated search */

static char root[64];

static void mk(const char *rel, mode_t mode)
{
	char p[512];

	snprintf(p, sizeof(p), "%s%s", root, rel);
	ck_assert_msg(mkdir(p, mode) == 0, "mkdir %s", p);
	snprintf(p, sizeof(p), "%s%s/cgroup.procs", root, rel);
	close(open(p, O_CREAT | O_WRONLY, 0644));
}

static void put(const char *rel, const char *file, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s%s/%s", root, rel, file);
	ck_assert((f = fopen(p, "w")) != NULL);
	fputs(text, f);
	fclose(f);
}

static void tree(void)
{
	char u[96];
	unsigned uid = (unsigned)getuid();

	snprintf(root, sizeof(root), "/tmp/halo-cgtest-XXXXXX");
	ck_assert(mkdtemp(root) != NULL);
	mk("/user.slice", 0755);
	mk("/user.slice/u.slice", 0755);
	snprintf(u, sizeof(u), "/user.slice/u.slice/user@%u.service", uid);
	mk(u, 0755);
	put(u, "cgroup.subtree_control", "cpu memory pids\n");
	strcat(u, "/app.slice");
	mk(u, 0755);
	put(u, "cgroup.subtree_control", "pids\n");
	strcat(u, "/term.scope");
	mk(u, 0755);
	put(u, "cgroup.subtree_control", "memory\n"); /* its own: never the parent */
	mk("/user.slice/u.slice/session-3.scope", 0755);
	put("/user.slice/u.slice", "cgroup.subtree_control", "memory\n");
}

static void untree(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(delegated_find)
{
	char own[256], out[LINUX_CGROUP_PATH], want[700], app[256];
	unsigned uid = (unsigned)getuid();

	tree();
	/* From a terminal's scope: app.slice lacks memory, user@UID.service has it. */
	snprintf(own, sizeof(own), "/user.slice/u.slice/user@%u.service/app.slice/term.scope", uid);
	ck_assert_int_eq(linux_cgroup_delegated_find(root, own, getuid(), out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/user.slice/u.slice/user@%u.service", root, uid);
	ck_assert_str_eq(out, want);
	/* app.slice handing out memory is nearer, so it wins */
	snprintf(app, sizeof(app), "/user.slice/u.slice/user@%u.service/app.slice", uid);
	put(app, "cgroup.subtree_control", "pids memory\n");
	ck_assert_int_eq(linux_cgroup_delegated_find(root, own, getuid(), out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s%s", root, app);
	ck_assert_str_eq(out, want);
	/* Never above user@UID.service, even where memory is handed out (u.slice). */
	put(app, "cgroup.subtree_control", "pids\n");
	snprintf(want, sizeof(want), "/user.slice/u.slice/user@%u.service", uid);
	put(want, "cgroup.subtree_control", "cpu pids\n");
	ck_assert_int_eq(linux_cgroup_delegated_find(root, own, getuid(), out, sizeof(out)),
			 -ENOENT);
	/* A session scope is not delegated. */
	ck_assert_int_eq(linux_cgroup_delegated_find(root, "/user.slice/u.slice/session-3.scope",
						     getuid(), out, sizeof(out)),
			 -ENOENT);
	/* Another uid's manager, or a look-alike name, is not ours. */
	snprintf(own, sizeof(own), "/user.slice/u.slice/user@%u.service/app.slice/term.scope",
		 uid + 1);
	ck_assert_int_eq(linux_cgroup_delegated_find(root, own, getuid(), out, sizeof(out)),
			 -ENOENT);
	snprintf(own, sizeof(own), "/user.slice/u.slice/user@%u.servicex/app.slice", uid);
	ck_assert_int_eq(linux_cgroup_delegated_find(root, own, getuid(), out, sizeof(out)),
			 -ENOENT);
	/* Owned by someone else: refused (the test's tree is its own, so ask for uid+1). */
	snprintf(want, sizeof(want), "/user.slice/u.slice/user@%u.service", uid);
	put(want, "cgroup.subtree_control", "memory\n");
	snprintf(own, sizeof(own), "/user.slice/u.slice/user@%u.service/app.slice/term.scope", uid);
	ck_assert_int_eq(linux_cgroup_delegated_find(root, own, uid + 1, out, sizeof(out)),
			 -ENOENT);
	untree();
}
END_TEST

START_TEST(file_has_words)
{
	char dir[512];

	tree();
	put("/user.slice", "cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma\n");
	snprintf(dir, sizeof(dir), "%s/user.slice", root);
	ck_assert(linux_cgroup_file_has(dir, "cgroup.controllers", "memory"));
	ck_assert(linux_cgroup_file_has(dir, "cgroup.controllers", "rdma"));
	ck_assert(!linux_cgroup_file_has(dir, "cgroup.controllers", "mem"));
	ck_assert(!linux_cgroup_file_has(dir, "cgroup.controllers", "misc"));
	ck_assert(!linux_cgroup_file_has(dir, "absent", "memory"));
	untree();
}
END_TEST

static Suite *cgroup_suite(void)
{
	Suite *s = suite_create("cgroup");
	TCase *tc = tcase_create("find");

	tcase_add_loop_test(tc, own_path, 0, ROWS(own_rows));
	tcase_add_test(tc, own_path_too_long);
	tcase_add_test(tc, delegated_find);
	tcase_add_test(tc, file_has_words);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(cgroup_suite)
