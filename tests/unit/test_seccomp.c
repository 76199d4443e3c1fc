/* linux/seccomp and linux/caps in forked children: rows of the deny table checked with
 * arguments the kernel itself would refuse with another errno (so a pass means the
 * filter answered), the calls that must keep working (fork, threads, posix_spawn,
 * plain chmod, ordinary sockets), a foreign-architecture syscall killed, and the
 * capability sets read back from /proc/self/status. */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "linux/linux_int.h"
#include "linux/seccomp_int.h"
#include "tests/unit/unit.h"

extern char **environ;

/* ---------------------------------------------------------------- child harness */

static int fail_fd = -1;
static int n_fail;

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...)
{
	char buf[300];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(fail_fd, buf, (size_t)n) < 0)
		_exit(99);
	n_fail++;
}

/* The call must fail with `want` (0: must succeed). */
#define EXPECT(call, want)                                                                         \
	do {                                                                                       \
		errno = 0;                                                                         \
		long rc_ = (long)(call);                                                           \
		int err_ = rc_ < 0 ? errno : 0;                                                    \
		if (err_ != (want))                                                                \
			report("line %d: %s: want %s, got rc %ld %s", __LINE__, #call,             \
			       (want) ? strerrorname_np(want) : "success", rc_,                    \
			       err_ ? strerrorname_np(err_) : "success");                          \
	} while (0)

/* Run `body` in a child with a pipe for failures; the test fails with every line the
 * child reported, or with the setup report if the child died in an _or_die. */
static void in_child(void (*body)(int report_fd))
{
	int fails[2], rep[2], ws = 0;
	char out[8192] = "";
	ssize_t n, total = 0;
	struct linux_report r;
	pid_t pid;

	ck_assert_int_eq(pipe(fails), 0);
	ck_assert_int_eq(pipe2(rep, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fails[0]);
		close(rep[0]);
		fail_fd = fails[1];
		body(rep[1]);
		/* _exit: no atexit handlers (LeakSanitizer would need ptrace) */
		_exit(n_fail ? 1 : 0);
	}
	close(fails[1]);
	close(rep[1]);
	while ((n = read(fails[0], out + total, sizeof(out) - 1 - (size_t)total)) > 0)
		total += n;
	out[total] = '\0';
	close(fails[0]);
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	memset(&r, 0, sizeof(r));
	if (WIFEXITED(ws) && WEXITSTATUS(ws) == LINUX_SETUP_FAILED &&
	    read(rep[0], &r, sizeof(r)) == (ssize_t)sizeof(r))
		ck_abort_msg("setup failed: %s: %s: %s", r.step, r.msg, strerror(r.err));
	close(rep[0]);
	ck_assert_msg(total == 0, "%s", out);
	ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "child status 0x%x", ws);
}

/* A field of /proc/self/status, e.g. "CapEff" -> "0000000000000000". */
static void status_field(const char *name, char *out, size_t n)
{
	char line[256];
	size_t len = strlen(name);
	FILE *f = fopen("/proc/self/status", "re");

	snprintf(out, n, "?");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, name, len) == 0 && line[len] == ':') {
			char *v = line + len + 1;
			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			snprintf(out, n, "%s", v);
			break;
		}
	fclose(f);
}

static void expect_status(const char *name, const char *want)
{
	char got[128];

	status_field(name, got, sizeof(got));
	if (strcmp(got, want) != 0)
		report("%s: want %s, got %s", name, want, got);
}

/* ---------------------------------------------------------------- seccomp rows */

static void check_namespaces_and_mounts(void)
{
	char buf[256] = {0};

	EXPECT(unshare(CLONE_NEWUSER), EPERM);
	EXPECT(unshare(0), EPERM);
	EXPECT(setns(-1, 0), EPERM); /* unfiltered: EBADF */
	/* CLONE_NEWNS|CLONE_FS is EINVAL for the kernel: EPERM can only be the filter */
	EXPECT(syscall(SYS_clone, CLONE_NEWNS | CLONE_FS | SIGCHLD, 0, 0, 0, 0), EPERM);
	EXPECT(syscall(SYS_clone, CLONE_NEWUSER | CLONE_FS | CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0),
	       EPERM);
	EXPECT(syscall(SYS_clone3, NULL, 0), ENOSYS); /* unfiltered: EINVAL */
	EXPECT(mount(NULL, "/nonexistent-halo", NULL, 0, NULL), EPERM);
	EXPECT(umount2("/nonexistent-halo", 0x80000000), EPERM);
	EXPECT(syscall(SYS_fsopen, "tmpfs", 0x80000000), ENOSYS);
	EXPECT(syscall(SYS_open_tree, -1, "", 0x80000000), ENOSYS);
	EXPECT(syscall(SYS_mount_setattr, -1, "", 0x80000000, NULL, 0), ENOSYS);
	EXPECT(syscall(SYS_pivot_root, "/nonexistent-a", "/nonexistent-b"), EPERM);
	EXPECT(chroot("/nonexistent-halo"), EPERM); /* unfiltered: ENOENT */
	EXPECT(syscall(SYS_ptrace, 0 /* TRACEME */, 0, 0, 0), EPERM);
	EXPECT(syscall(SYS_bpf, 0x7fff, NULL, 0), EPERM);
	EXPECT(syscall(SYS_keyctl, 0x7fff, 0, 0, 0, 0), EPERM);
	EXPECT(syscall(SYS_userfaultfd, 0x40000000), EPERM);
	EXPECT(syscall(SYS_io_uring_setup, 0, buf), EPERM);
	EXPECT(syscall(SYS_reboot, 0, 0, 0, NULL), EPERM);
	EXPECT(syscall(SYS_clock_settime, 0x7fffffff, buf), EPERM);
	EXPECT(syscall(SYS_init_module, NULL, 0, ""), EPERM);
	EXPECT(syscall(SYS_kexec_load, 0, 1000, NULL, 0x8000), EPERM);
	EXPECT(syscall(SYS_openat2, AT_FDCWD, "/", NULL, 0), ENOSYS);
}

static void check_sockets(void)
{
	int fd[2];

	EXPECT(socket(AF_PACKET, SOCK_RAW, 0), EAFNOSUPPORT);
	EXPECT(socket(AF_UNSPEC, SOCK_STREAM, 0), EAFNOSUPPORT);
	EXPECT(socket(3 /* AF_AX25 */, 15, 0), EAFNOSUPPORT); /* unfiltered: EINVAL */
	EXPECT(socket(AF_BLUETOOTH, SOCK_STREAM, 0), EAFNOSUPPORT);
	EXPECT(socket(AF_VSOCK, SOCK_STREAM, 0), EAFNOSUPPORT);
	EXPECT(socket(-1, SOCK_STREAM, 0), EAFNOSUPPORT);
	EXPECT(syscall(SYS_socket, 0x100000000UL | AF_INET, SOCK_STREAM, 0), EAFNOSUPPORT);
	EXPECT(socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT), EAFNOSUPPORT);
	EXPECT(socket(AF_NETLINK, SOCK_DGRAM, NETLINK_NETFILTER), EAFNOSUPPORT);
	/* protocol 1000 is EINVAL for the kernel */
	EXPECT(socket(AF_INET, SOCK_RAW, 1000), EPERM);
	EXPECT(socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 1000), EPERM);
	EXPECT(socket(AF_INET6, SOCK_RAW, 1000), EPERM);
	EXPECT(socket(AF_INET, SOCK_PACKET, 1000), EPERM);
	EXPECT(socket(AF_INET6, SOCK_PACKET, 1000), EPERM);
	EXPECT(socketpair(AF_INET, SOCK_STREAM, 0, fd), EAFNOSUPPORT);
	/* allowed */
	EXPECT(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), 0);
	EXPECT(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), 0);
	EXPECT(socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0), 0);
	EXPECT(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), 0);
	EXPECT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd), 0);
}

static void check_ioctl_and_personality(void)
{
	char c = 'x';

	/* fd -1: EBADF when unfiltered */
	EXPECT(ioctl(-1, TIOCSTI, &c), EPERM);
	EXPECT(syscall(SYS_ioctl, -1, 0xdead00000000UL | TIOCSTI, &c), EPERM);
	EXPECT(syscall(SYS_ioctl, -1, 0xffffffff00000000UL | TIOCLINUX, &c), EPERM);
	EXPECT(ioctl(-1, TIOCLINUX, &c), EPERM);
	/* leases: F_SETLEASE refused whatever the fd, the high bits or the lease type */
	EXPECT(fcntl(-1, F_SETLEASE, F_RDLCK), EPERM);
	EXPECT(fcntl(-1, F_SETLEASE, F_UNLCK), EPERM);
	EXPECT(syscall(SYS_fcntl, -1, 0xdead00000000UL | F_SETLEASE, F_WRLCK), EPERM);
	EXPECT(fcntl(-1, F_GETLEASE), EBADF);
	EXPECT(fcntl(-1, F_SETFL, 0), EBADF);
	EXPECT(ioctl(-1, TCGETS, &c), EBADF);
	EXPECT(ioctl(-1, TIOCSTI + 1, &c), EBADF);

	EXPECT(personality(0xffffffff), 0);
	EXPECT(personality(PER_LINUX), 0);
	EXPECT(personality(PER_LINUX32), 0);
	EXPECT(personality(PER_LINUX | UNAME26), 0);
	EXPECT(personality(PER_LINUX32 | UNAME26), 0);
	EXPECT(personality(PER_LINUX), 0);
	EXPECT(personality(READ_IMPLIES_EXEC), EPERM);
	EXPECT(personality(ADDR_NO_RANDOMIZE), EPERM);
	EXPECT(personality(1), EPERM);
	EXPECT(personality(7), EPERM);
	EXPECT(personality(9), EPERM);
	EXPECT(personality(0x1ffff), EPERM);
	EXPECT(personality(0x20001), EPERM);
	EXPECT(personality(0x20007), EPERM);
	EXPECT(personality(0x20009), EPERM);
	EXPECT(personality(0x80000000), EPERM);
	EXPECT(personality(0xfffffffe), EPERM);
	EXPECT(syscall(SYS_personality, 0x100000000UL), EPERM);
	EXPECT(syscall(SYS_personality, 0xffffffffffffffffUL), EPERM);
}

static void check_setid_modes(void)
{
	char dir[] = "/tmp/halo-seccomp-XXXXXX", path[64], made[64];
	int fd;

	if (!mkdtemp(dir)) {
		report("mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/f", dir);
	snprintf(made, sizeof(made), "%s/g", dir);
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	EXPECT(fd, 0);
	EXPECT(chmod(path, 04600), EPERM);
	EXPECT(chmod(path, 02600), EPERM);
	EXPECT(fchmod(fd, 02600), EPERM);
	EXPECT(fchmodat(AT_FDCWD, path, 04600, 0), EPERM);
	EXPECT(syscall(452 /* fchmodat2 */, AT_FDCWD, path, 06600, 0), EPERM);
	EXPECT(syscall(SYS_chmod, path, 0xffff00000000UL | 04600), EPERM);
	EXPECT(chmod(path, 0644), 0);
	EXPECT(chmod(path, 01644), 0); /* sticky is not a privilege */
	EXPECT(fchmod(fd, 0600), 0);
	EXPECT(open(made, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 04755), EPERM);
	EXPECT(syscall(SYS_open, made, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 02755), EPERM);
	EXPECT(creat(made, 04755), EPERM);
	EXPECT(mknod(made, S_IFIFO | 04600, 0), EPERM);
	EXPECT(mknod(made, S_IFIFO | 0600, 0), 0);
	EXPECT(unlink(made), 0);
	EXPECT(open(made, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0755), 0);
	unlink(made);
	unlink(path);
	rmdir(dir);
}

static void *thread_fn(void *arg)
{
	return arg;
}

/* What every program needs keeps working: fork, threads (glibc tries clone3 first and
 * falls back to clone on ENOSYS), posix_spawn. */
static void check_still_works(void)
{
	static int token;
	pthread_t t;
	void *ret = NULL;
	pid_t pid;
	int ws = -1;
	char *argv[] = {"true", NULL};

	pid = fork();
	if (pid == 0)
		_exit(7);
	if (pid < 0 || waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws) || WEXITSTATUS(ws) != 7)
		report("fork: pid %d status 0x%x: %s", pid, ws, strerror(errno));
	if (pthread_create(&t, NULL, thread_fn, &token) != 0 || pthread_join(t, &ret) != 0 ||
	    ret != &token)
		report("pthread_create failed under the filter");
	ws = -1;
	if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ) != 0 ||
	    waitpid(pid, &ws, 0) != pid || ws != 0)
		report("posix_spawn /bin/true: status 0x%x", ws);
}

/* An x32 syscall number (0x40000000 | getpid) is another ABI: the process is killed. */
static void check_x32_killed(void)
{
	int ws = 0;
	pid_t pid = fork();

	if (pid == 0) {
		syscall(0x40000000 | SYS_getpid);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &ws, 0) != pid || !WIFSIGNALED(ws) || WTERMSIG(ws) != SIGSYS)
		report("x32 getpid: want death by SIGSYS, got status 0x%x", ws);
}

static void seccomp_body(int rfd)
{
	linux_seccomp_apply_or_die(rfd);
	expect_status("Seccomp", "2");
	expect_status("NoNewPrivs", "1");
	check_namespaces_and_mounts();
	check_sockets();
	check_ioctl_and_personality();
	check_setid_modes();
	check_still_works();
#ifdef __x86_64__
	check_x32_killed();
#endif
}

START_TEST(seccomp_rows)
{
	in_child(seccomp_body);
}
END_TEST

/* The same calls without the filter: they fail, but with the kernel's own errno, which
 * is what makes the checks above meaningful. */
static void unfiltered_body(int rfd)
{
	char c = 'x', buf[256] = {0};

	(void)rfd;
	EXPECT(setns(-1, 0), EBADF);
	EXPECT(syscall(SYS_clone, CLONE_NEWNS | CLONE_FS | SIGCHLD, 0, 0, 0, 0), EINVAL);
	EXPECT(syscall(SYS_clone3, NULL, 0), EINVAL);
	EXPECT(umount2("/nonexistent-halo", 0x80000000), EINVAL);
	EXPECT(ioctl(-1, TIOCSTI, &c), EBADF);
	EXPECT(socket(3, 15, 0), EINVAL);
	EXPECT(socket(AF_INET, SOCK_RAW, 1000), EINVAL);
	EXPECT(syscall(SYS_clock_settime, 0x7fffffff, buf), EINVAL);
	EXPECT(syscall(SYS_io_uring_setup, 0, buf), EINVAL);
}

START_TEST(unfiltered_errnos_differ)
{
	in_child(unfiltered_body);
}
END_TEST

/* The program compiled into the library is what libseccomp makes of the table now:
 * the generated header cannot lag behind the table or this libseccomp. */
START_TEST(compiled_program_is_current)
{
	char msg[256] = "";
	struct sock_filter fresh[BPF_MAXINSNS + 1];
	size_t n = 0;
	const struct sock_filter *compiled = linux_seccomp_program(&n);
	int fd = memfd_create("halo-seccomp", MFD_CLOEXEC);
	ssize_t got;

	ck_assert_int_ge(fd, 0);
	ck_assert_msg(linux_seccomp_export(fd, msg, sizeof(msg)) == 0, "export: %s", msg);
	got = pread(fd, fresh, sizeof(fresh), 0);
	close(fd);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(got, (ssize_t)(n * sizeof(*fresh)));
	ck_assert_mem_eq(fresh, compiled, n * sizeof(*fresh));
	/* The architecture check comes first: load the arch, compare with the native one. */
	ck_assert_uint_eq(compiled[0].code, BPF_LD | BPF_W | BPF_ABS);
	ck_assert_uint_eq(compiled[0].k, 4 /* offsetof(struct seccomp_data, arch) */);
}
END_TEST

/* ---------------------------------------------------------------- capabilities */

static void expect_no_caps(void)
{
	expect_status("CapInh", "0000000000000000");
	expect_status("CapPrm", "0000000000000000");
	expect_status("CapEff", "0000000000000000");
	expect_status("CapBnd", "0000000000000000");
	expect_status("CapAmb", "0000000000000000");
	expect_status("NoNewPrivs", "1");
}

/* As the sandbox does it: in a user namespace (full capabilities there), for any
 * caller; then the filter on top. */
static void caps_in_userns_body(int rfd)
{
	char eff[64];
	int bits;

	if (unshare(CLONE_NEWUSER) < 0) {
		report("unshare(CLONE_NEWUSER): %s", strerror(errno));
		return;
	}
	status_field("CapEff", eff, sizeof(eff));
	if (strcmp(eff, "0000000000000000") == 0)
		report("no capabilities in the new user namespace");
	linux_caps_drop_or_die(rfd, NULL);
	expect_no_caps();
	/* NOROOT, NO_SETUID_FIXUP, NO_CAP_AMBIENT_RAISE and their locks, KEEP_CAPS locked */
	bits = prctl(PR_GET_SECUREBITS);
	if (bits != 0xef)
		report("securebits: want 0xef, got 0x%x", bits);
	linux_seccomp_apply_or_die(rfd);
	expect_status("Seccomp", "2");
	expect_no_caps();
}

START_TEST(caps_dropped_in_userns)
{
	in_child(caps_in_userns_body);
}
END_TEST

static void caps_as_root_body(int rfd)
{
	linux_caps_drop_or_die(rfd, NULL);
	expect_no_caps();
	/* root without capabilities: setuid(1) needs CAP_SETUID */
	EXPECT(setuid(1), EPERM);
}

/* A process that holds no capability at all keeps its bounding set (it could not
 * shrink it): no_new_privs and empty sets suffice. */
static void caps_unprivileged_body(int rfd)
{
	char bnd[64];

	if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0) {
		report("drop to 65534: %s", strerror(errno));
		return;
	}
	expect_status("CapPrm", "0000000000000000");
	linux_caps_drop_or_die(rfd, NULL);
	expect_status("CapEff", "0000000000000000");
	expect_status("CapPrm", "0000000000000000");
	expect_status("CapAmb", "0000000000000000");
	expect_status("NoNewPrivs", "1");
	status_field("CapBnd", bnd, sizeof(bnd));
	if (strcmp(bnd, "0000000000000000") == 0)
		report("bounding set unexpectedly empty");
}

START_TEST(caps_dropped_as_root)
{
	if (geteuid() != 0)
		UNIT_SKIP("capabilities dropped as root",
			  "not root (the user-namespace test covers it)");
	in_child(caps_as_root_body);
	in_child(caps_unprivileged_body);
}
END_TEST

static Suite *seccomp_suite(void)
{
	Suite *s = suite_create("seccomp");
	TCase *tc = tcase_create("filter");
	TCase *tcap = tcase_create("caps");

	tcase_add_test(tc, seccomp_rows);
	tcase_add_test(tc, unfiltered_errnos_differ);
	tcase_add_test(tc, compiled_program_is_current);
	tcase_add_test(tcap, caps_dropped_in_userns);
	tcase_add_test(tcap, caps_dropped_as_root);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, tcap);
	return s;
}

UNIT_MAIN(seccomp_suite)
