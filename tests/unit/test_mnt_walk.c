/* mnt_open's component walk (linux/mounts_fd.c), outside any namespace: the mount
 * points a layout makes under a prefix, created level by level, never through a
 * symlink, and no descriptor left behind whichever way it ends (a chain deeper than the
 * parents it keeps, a link on the way, a name too long, a file where a directory must
 * be). The layout's own tests (test_mounts) run it inside the sandbox's namespaces. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/mounts_int.h"
#include "tests/unit/unit.h"

static char top[512];

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void setup(void)
{
	snprintf(top, sizeof(top), "%s/halo-mnt-walk.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(top));
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	ck_assert_int_eq(system(cmd), 0);
}

static bool is_dir(const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s%s", top, rel);
	return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

START_TEST(makes_a_chain_and_finds_it_again)
{
	int before = open_fds(), fd = mnt_open(top, "/a/b/c/d", MNT_CREATE_DIR);

	ck_assert_int_ge(fd, 0);
	ck_assert(is_dir("/a/b/c/d"));
	close(fd);
	ck_assert_int_eq(open_fds(), before);
	/* There now: found (and below a part that exists, the rest made). */
	fd = mnt_open(top, "/a/b/c/d", MNT_CREATE_DIR);
	ck_assert_int_ge(fd, 0);
	close(fd);
	fd = mnt_open(top, "/a/b/x/y/f", MNT_CREATE_FILE);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert(is_dir("/a/b/x/y"));
	ck_assert_int_eq(open_fds(), before);
}
END_TEST

/* Deeper than the parents the walk keeps open at once (32): all closed in the end. */
START_TEST(deep_chain_leaves_nothing_open)
{
	char path[1024] = "";
	int before = open_fds(), fd;

	for (int i = 0; i < 60; i++)
		strcat(path, i % 2 ? "/dd" : "/d");
	fd = mnt_open(top, path, MNT_CREATE_DIR);
	ck_assert_int_ge(fd, 0);
	ck_assert(is_dir(path));
	close(fd);
	ck_assert_int_eq(open_fds(), before);
}
END_TEST

/* A link on the way, in the part that exists or placed where the walk goes next:
 * refused (ELOOP), nothing made where it points, nothing left open. */
START_TEST(never_through_a_link)
{
	char p[PATH_MAX], out[1024];
	int before = open_fds();

	snprintf(out, sizeof(out), "%s/outside", top);
	ck_assert_int_eq(mkdir(out, 0755), 0);
	ck_assert_int_ge(mnt_open(top, "/in/a", MNT_CREATE_DIR), 0);
	snprintf(p, sizeof(p), "%s/in/a/link", top);
	ck_assert_int_eq(symlink(out, p), 0);
	ck_assert_int_eq(mnt_open(top, "/in/a/link/made", MNT_CREATE_DIR), -ELOOP);
	ck_assert_int_eq(mnt_open(top, "/in/a/link/made/f", MNT_CREATE_FILE), -ELOOP);
	ck_assert_int_eq(mnt_open(top, "/in/a/link", MNT_CREATE_DIR), -ELOOP);
	snprintf(p, sizeof(p), "%s/made", out);
	ck_assert_int_eq(access(p, F_OK), -1);
	ck_assert_int_eq(open_fds(), before + 1); /* (the first call's descriptor, kept) */
}
END_TEST

START_TEST(errors_leave_nothing_open)
{
	char longname[300], p[PATH_MAX];
	int before = open_fds();

	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	snprintf(p, sizeof(p), "/x/%s/y", longname);
	ck_assert_int_lt(mnt_open(top, p, MNT_CREATE_DIR), 0);
	/* A file where a directory must be. */
	int fd = mnt_open(top, "/f/file", MNT_CREATE_FILE);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(mnt_open(top, "/f/file/below", MNT_CREATE_DIR), -ENOTDIR);
	/* Nothing made without being asked to. */
	ck_assert_int_eq(mnt_open(top, "/none/here", MNT_NO_CREATE), -ENOENT);
	ck_assert(!is_dir("/none"));
	ck_assert_int_eq(open_fds(), before);
}
END_TEST

static Suite *mnt_walk_suite(void)
{
	Suite *s = suite_create("mnt_walk");
	TCase *tc = tcase_create("mnt_walk");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, makes_a_chain_and_finds_it_again);
	tcase_add_test(tc, deep_chain_leaves_nothing_open);
	tcase_add_test(tc, never_through_a_link);
	tcase_add_test(tc, errors_leave_nothing_open);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(mnt_walk_suite)
