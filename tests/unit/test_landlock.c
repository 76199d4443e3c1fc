/* Landlock on its own (no namespaces, as in the degraded path): writes only beneath
 * the writable trees, /tmp and the harmless devices; reads untouched; on ABI >= 6,
 * no signals and no abstract unix sockets across the domain's boundary. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/linux_int.h"
#include "tests/unit/unit.h"

static char root[512];
static struct linux_scan scan;
static int result_fd = -1;

#define IN(cond, what)                                                                             \
	do {                                                                                       \
		errno = 0;                                                                         \
		if (!(cond)) {                                                                     \
			dprintf(result_fd, "line %d: %s (errno: %s)", __LINE__, what,              \
				strerror(errno));                                                  \
			_exit(1);                                                                  \
		}                                                                                  \
	} while (0)

static void sh(const char *cmd)
{
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

static void setup(void)
{
	char tmpl[] = "/var/tmp/halo-landlock.XXXXXX", cmd[700], a[600];

	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	ck_assert_ptr_nonnull(realpath(tmpl, root));
	snprintf(cmd, sizeof(cmd), "cd '%s' && mkdir -p a b && echo f > b/f && echo x > a/x", root);
	sh(cmd);
	memset(&scan, 0, sizeof(scan));
	snprintf(a, sizeof(a), "%s/a", root);
	linux_paths_add(&scan.writable, a);
}

static void teardown(void)
{
	char cmd[600];

	linux_scan_free(&scan);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	sh(cmd);
}

static int open_err(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static const char *in_root(const char *rel)
{
	static char bufs[4][600];
	static int i;
	char *b = bufs[i++ % 4];

	snprintf(b, sizeof(bufs[0]), "%s/%s", root, rel);
	return b;
}

/* Run body in a child restricted by Landlock (as inside a network namespace, or not);
 * return its failure text ("" if none). */
static void run_restricted_net(void (*body)(int abi), bool in_netns, char *fail, size_t n)
{
	int res[2], st, abi = linux_landlock_abi();
	pid_t pid;

	ck_assert_int_eq(pipe2(res, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(res[0]);
		result_fd = res[1];
		linux_landlock_apply_or_die(&scan, in_netns, NULL, res[1]);
		body(abi);
		_exit(0);
	}
	close(res[1]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ssize_t got = read(res[0], fail, n - 1);
	fail[got > 0 ? got : 0] = '\0';
	close(res[0]);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: %s", fail);
}

static void run_restricted(void (*body)(int abi), char *fail, size_t n)
{
	run_restricted_net(body, true, fail, n);
}

/* errno of a TCP connect to a listener of our own on 127.0.0.1 (0: connected). */
static int loopback_connect_err(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int err = 0;

	if (l < 0 || c < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) < 0)
		err = -1;
	else if (connect(c, (struct sockaddr *)&a, sizeof(a)) < 0)
		err = errno;
	close(l);
	close(c);
	return err;
}

/* Inside a network namespace the command owns its loopback: any port connects. */
static void check_loopback_open(int abi)
{
	(void)abi;
	IN(loopback_connect_err() == 0, "TCP connect to an own loopback port");
}

/* Without one (the degraded launch) ABI >= 4 refuses every TCP connect. */
static void check_tcp_refused(int abi)
{
	IN(loopback_connect_err() == (abi >= 4 ? EACCES : 0),
	   "TCP connect refused without a network namespace (ABI >= 4)");
}

static void check_writes(int abi)
{
	int denied = abi > 0 ? EACCES : 0;

	IN(open_err(in_root("a/new"), O_WRONLY | O_CREAT) == 0, "writable tree: create");
	IN(open_err(in_root("a/x"), O_WRONLY | O_TRUNC) == 0, "writable tree: truncate");
	IN(mkdir(in_root("a/d"), 0755) == 0, "writable tree: mkdir");
	IN(open_err(in_root("b/f"), O_RDONLY) == 0, "reads elsewhere still work");
	IN(open_err(in_root("b/new"), O_WRONLY | O_CREAT) == denied, "create elsewhere refused");
	IN(open_err(in_root("b/f"), O_WRONLY) == denied, "write elsewhere refused");
	IN((mkdir(in_root("b/d"), 0755) < 0 ? errno : 0) == denied, "mkdir elsewhere refused");
	IN((unlink(in_root("b/f")) < 0 ? errno : 0) == denied, "unlink elsewhere refused");
	if (abi >= 2) /* REFER: no moving a file from a tree we may not write into one we may */
		IN(rename(in_root("b/f"), in_root("a/f")) < 0 &&
		       (errno == EXDEV || errno == EACCES),
		   "no rename out of a read-only tree");
	IN(open_err("/dev/null", O_WRONLY) == 0, "/dev/null writable");
	IN(open_err("/tmp", O_RDONLY | O_DIRECTORY) == 0, "/tmp there");
}

static void check_scopes(int abi)
{
	(void)abi; /* signals_scoped skips below ABI 6 */
	/* The parent is outside the domain: no signal reaches it. */
	IN(kill(getppid(), 0) < 0 && errno == EPERM, "signal scope");
}

START_TEST(abi_matches_kernel)
{
	long raw = syscall(444, NULL, 0, 1U);

	ck_assert_int_eq(linux_landlock_abi(), raw < 0 ? 0 : (int)raw);
}
END_TEST

START_TEST(writes_only_beneath_writable_trees)
{
	char fail[1024];

	if (linux_landlock_abi() == 0)
		UNIT_SKIP("writes only beneath writable trees", "no Landlock in this kernel");
	run_restricted(check_writes, fail, sizeof(fail));
}
END_TEST

START_TEST(signals_scoped)
{
	char fail[1024];

	if (linux_landlock_abi() < 6)
		UNIT_SKIP("signals scoped", "Landlock ABI below 6");
	run_restricted(check_scopes, fail, sizeof(fail));
}
END_TEST

START_TEST(loopback_open_in_netns)
{
	char fail[1024];

	run_restricted_net(check_loopback_open, true, fail, sizeof(fail));
}
END_TEST

START_TEST(tcp_refused_without_netns)
{
	char fail[1024];

	run_restricted_net(check_tcp_refused, false, fail, sizeof(fail));
}
END_TEST

static Suite *landlock_suite(void)
{
	Suite *s = suite_create("landlock");
	TCase *tc = tcase_create("landlock");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, abi_matches_kernel);
	tcase_add_test(tc, writes_only_beneath_writable_trees);
	tcase_add_test(tc, signals_scoped);
	tcase_add_test(tc, loopback_open_in_netns);
	tcase_add_test(tc, tcp_refused_without_netns);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(landlock_suite)
