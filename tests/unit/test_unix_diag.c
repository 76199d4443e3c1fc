/* netns/unix_diag.c: which socket files a network namespace's sockets are bound to.
 * A session lets by a socket in its workspace only when this says its own namespace
 * bound it (linux/session_scan.c): a socket bound and listening, or bound and never
 * listening, is; the same file once its socket is closed, a regular file, a socket
 * bound in another namespace, and an inode the kernel cannot give in full are not. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "netns/netns.h"
#include "tests/unit/unit.h"

static char dir[64];

static void setup(void)
{
	strcpy(dir, "/tmp/halo-diag.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static int bind_at(const char *name, char *path, bool listening)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(path, 108, "%s/%s", dir, name);
	strcpy(a.sun_path, path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	if (listening)
		ck_assert_int_eq(listen(fd, 1), 0);
	return fd;
}

static int bound(int diag, const char *path)
{
	struct stat st;

	struct netns_unix_files f;
	int rc;

	ck_assert_int_eq(lstat(path, &st), 0);
	if ((rc = netns_unix_files(diag, &f, 2000)) < 0)
		return rc;
	rc = netns_unix_files_has(&f, major(st.st_dev), minor(st.st_dev), st.st_ino);
	netns_unix_files_free(&f);
	return rc;
}

START_TEST(own_namespace)
{
	char a[108], b[108], f[108];
	int diag = netns_diag_open(), s1, s2;
	FILE *fp;

	ck_assert_int_ge(diag, 0);
	s1 = bind_at("a.sock", a, true);
	s2 = bind_at("b.sock", b, false);
	if (bound(diag, a) == -ENOENT)
		UNIT_SKIP("the socket table", "this kernel has no unix_diag");
	ck_assert_int_eq(bound(diag, a), 1);
	ck_assert_int_eq(bound(diag, b), 1); /* bound, not listening: still its own */
	snprintf(f, sizeof(f), "%s/plain", dir);
	ck_assert_ptr_nonnull(fp = fopen(f, "w"));
	fclose(fp);
	ck_assert_int_eq(bound(diag, f), 0);
	close(s1);
	ck_assert_int_eq(bound(diag, a), 0); /* the file stays, nothing holds it */
	ck_assert_int_eq(bound(diag, b), 1);
	/* what the kernel cannot say in full is never claimed */
	{
		struct netns_unix_files tbl;
		ck_assert_int_eq(netns_unix_files(diag, &tbl, 2000), 0);
		ck_assert(!netns_unix_files_has(&tbl, 8, 1, (uint64_t)1 << 33));
		ck_assert(!netns_unix_files_has(&tbl, 5000, 1, 12));
		netns_unix_files_free(&tbl);
	}
	/* many questions on one socket: each answer is its own */
	for (int i = 0; i < 200; i++)
		ck_assert_int_eq(bound(diag, b), 1);
	close(s2);
	close(diag);
}
END_TEST

/* A socket another namespace bound: not this one's; that one's own table says so. */
START_TEST(other_namespace)
{
	char path[108];
	int p[2], diag = netns_diag_open(), st;
	char c;
	pid_t pid;

	ck_assert_int_ge(diag, 0);
	ck_assert_int_eq(pipe(p), 0);
	snprintf(path, sizeof(path), "%s/other.sock", dir);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int s, d;
		if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0 && unshare(CLONE_NEWNET) < 0)
			_exit(3);
		s = bind_at("other.sock", path, true);
		d = netns_diag_open();
		c = d >= 0 && bound(d, path) == 1 ? 'y' : 'n';
		if (write(p[1], &c, 1) != 1)
			_exit(4);
		pause();
		close(s);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1) {
		waitpid(pid, &st, 0);
		UNIT_SKIP("a socket bound in another namespace", "no user or network namespaces");
	}
	ck_assert_int_eq(c, 'y');
	ck_assert_int_eq(bound(diag, path), 0);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	close(p[0]);
	close(diag);
}
END_TEST

static Suite *unix_diag_suite(void)
{
	Suite *s = suite_create("unix_diag");
	TCase *tc = tcase_create("table");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, own_namespace);
	tcase_add_test(tc, other_namespace);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(unix_diag_suite)
