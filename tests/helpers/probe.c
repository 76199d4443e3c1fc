/* probe: try one forbidden (or allowed) thing and say what happened.
 *
 *   probe NAME...      run the named probes          probe all     every probe
 *   probe status       NoNewPrivs, Seccomp, Cap* lines of /proc/self/status
 *   probe list         the probe names
 *   probe --filter ... load halo-run's seccomp filter first (to test it without the
 *                      launcher)
 *
 * Each probe runs in its own forked child and prints "NAME ok", "NAME errno=EPERM" or,
 * when the child was killed, "NAME killed=SIGSYS". Exit status 0, unless a probe could
 * not even be set up (2) or a name is unknown (2).
 *
 * Every attempt is built so that, even run as root with no filter at all, it cannot
 * change the host: bad magic numbers, invalid flags, invalid clock ids, nonexistent
 * paths, or an effect confined to the probe's own throwaway child. Wherever the kernel
 * allows, the arguments also make the unfiltered call fail with another errno than the
 * filter's, so the output tells "filtered" from "refused by the kernel". The comment on
 * each row says what an unfiltered call returns ("priv" = with the capability the
 * kernel checks, "unpriv" = without it). */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/quota.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/linux_int.h"

#define SETUP_FAILED (-1)
#define NOPATH	     ((uintptr_t) "/nonexistent-halo-probe")
#define EMPTY	     ((uintptr_t) "")
#define BAD_FLAGS    0x80000000UL
#define BAD_CLOCK    0x7fffffff
#define NR_FCHMODAT2 452 /* Linux 6.6; not in Debian 12's headers */

/* Arguments the kernel reads from memory: zeros, or deliberately invalid values. */
static char zeros[256];
static struct timeval bad_tv = {0, 2000000}; /* tv_usec out of range */
static char vbuf[8];
static struct iovec viov = {vbuf, sizeof(vbuf)};
static int pair[2];

/* 0 when the call succeeded, else its errno. */
static int res(long rc)
{
	return rc < 0 ? errno : 0;
}

/* ---------------------------------------------------------------- probes with code */

/* allowed: plain fork */
static int p_fork(void)
{
	int ws = 0;
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return errno;
	waitpid(pid, &ws, 0);
	return 0;
}

static void *thread_fn(void *arg)
{
	return arg;
}

/* allowed: glibc tries clone3 first and falls back to clone on ENOSYS */
static int p_thread(void)
{
	pthread_t t;
	int rc = pthread_create(&t, NULL, thread_fn, NULL);

	if (rc == 0)
		pthread_join(t, NULL);
	return rc;
}

/* unfiltered: ok (attaching to one's own child); the tracee is killed afterwards */
static int p_ptrace_attach(void)
{
	int ws, err;
	pid_t pid = fork();

	if (pid < 0)
		return SETUP_FAILED;
	if (pid == 0) {
		pause();
		_exit(0);
	}
	err = res(ptrace(PTRACE_ATTACH, pid, NULL, NULL));
	kill(pid, SIGKILL);
	waitpid(pid, &ws, 0);
	return err;
}

/* A fresh pty made this process's controlling terminal, so that TIOCSTI would work on
 * it: injected bytes land in a terminal nobody reads. Without a pty: -1 (EBADF). */
static int own_pty(void)
{
	int m;

	setsid();
	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || !ptsname(m))
		return -1;
	return open(ptsname(m), O_RDWR | O_CLOEXEC);
}

/* unfiltered: ok (legacy TIOCSTI on), EIO (dev.tty.legacy_tiocsti=0), EBADF (no pty) */
static int p_tiocsti(void)
{
	char c = ' ';

	return res(ioctl(own_pty(), TIOCSTI, &c));
}

/* the same request with garbage in the upper 32 bits, which the kernel ignores */
static int p_tiocsti_hibits(void)
{
	char c = ' ';

	return res(syscall(SYS_ioctl, own_pty(), 0xdead00000000UL | TIOCSTI, &c));
}

/* unfiltered: ENOTTY on a pty (only virtual consoles know it), EBADF without one */
static int p_tioclinux(void)
{
	char sub = 0;

	return res(ioctl(own_pty(), TIOCLINUX, &sub));
}

/* A fresh file (or, with `create` false, a free name) in $TMPDIR. */
static int tmp_name(char *path, size_t n, bool create)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(path, n, "%s/halo-probe-XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0) {
		fprintf(stderr, "probe: mkstemp %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!create) {
		close(fd);
		unlink(path);
		return 0;
	}
	return fd;
}

/* unfiltered: ok (a read lease on a file of our own, released at once) */
static int p_setlease(void)
{
	char path[4096];
	int fd = tmp_name(path, sizeof(path), true), rc, err;

	if (fd < 0)
		return SETUP_FAILED;
	close(fd);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	rc = fd < 0 ? -1 : fcntl(fd, F_SETLEASE, F_RDLCK);
	err = errno;
	if (rc == 0)
		fcntl(fd, F_SETLEASE, F_UNLCK);
	if (fd >= 0)
		close(fd);
	unlink(path);
	errno = err;
	return res(rc);
}

/* allowed: asking which lease a file holds */
static int p_getlease(void)
{
	int fd = open("/", O_RDONLY | O_CLOEXEC);
	int rc = fcntl(fd, F_GETLEASE);

	close(fd);
	return res(rc < 0 ? -1 : 0);
}

enum setid_call { CHMOD, FCHMOD, FCHMODAT, FCHMODAT2, OPEN, OPENAT, CREAT, MKNOD, MKNODAT };

/* unfiltered: ok (a setuid/setgid file without execute bits, removed at once);
 * fchmodat2 before Linux 6.6: ENOSYS */
static int setid_attempt(enum setid_call call, mode_t mode)
{
	char path[4096];
	int fd = tmp_name(path, sizeof(path), call < OPEN), err;
	long rc = -1;

	if (fd < 0)
		return SETUP_FAILED;
	switch (call) {
	case CHMOD:
		rc = chmod(path, mode);
		break;
	case FCHMOD:
		rc = fchmod(fd, mode);
		break;
	case FCHMODAT:
		rc = fchmodat(AT_FDCWD, path, mode, 0);
		break;
	case FCHMODAT2:
		rc = syscall(NR_FCHMODAT2, AT_FDCWD, path, mode, 0);
		break;
	case OPEN:
		rc = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode);
		break;
	case OPENAT:
		rc = openat(AT_FDCWD, path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode);
		break;
	case CREAT:
		rc = creat(path, mode);
		break;
	case MKNOD:
		rc = mknod(path, S_IFREG | mode, 0);
		break;
	case MKNODAT:
		rc = mknodat(AT_FDCWD, path, S_IFREG | mode, 0);
		break;
	}
	err = res(rc);
	unlink(path);
	return err;
}

#define SETID_PROBE(fname, call, mode)                                                             \
	static int p_##fname(void)                                                                 \
	{                                                                                          \
		return setid_attempt(call, mode);                                                  \
	}
SETID_PROBE(chmod_setuid, CHMOD, 04600)
SETID_PROBE(fchmod_setgid, FCHMOD, 02600)
SETID_PROBE(fchmodat_setuid, FCHMODAT, 04600)
SETID_PROBE(fchmodat2_setuid, FCHMODAT2, 04600)
SETID_PROBE(open_setuid, OPEN, 04600)
SETID_PROBE(openat_setgid, OPENAT, 02600)
SETID_PROBE(creat_setuid, CREAT, 04600)
SETID_PROBE(mknod_setuid, MKNOD, 04600)
SETID_PROBE(mknodat_setgid, MKNODAT, 02600)
SETID_PROBE(chmod_plain, CHMOD, 0644) /* allowed */

/* ---------------------------------------------------------------- the table */

struct probe {
	const char *name;
	long nr; /* a plain syscall with these arguments... */
	uintptr_t a[6];
	int (*fn)(void); /* ...or code */
};

#define SYS(name, nr, ...)                                                                         \
	{                                                                                          \
		name, nr, {__VA_ARGS__}, NULL                                                      \
	}
#define FN(name)                                                                                   \
	{                                                                                          \
#name, 0, {0 }, p_##name                                                           \
	}

/* clang-format off */
static const struct probe probes[] = {
	/* unfiltered: ok (a user namespace for this throwaway child) */
	SYS("unshare_user", SYS_unshare, CLONE_NEWUSER),
	SYS("setns", SYS_setns, -1, 0),                                    /* EBADF */
	/* unfiltered: EINVAL, for invalid flag pairs, before anything is created */
	SYS("clone_newns", SYS_clone, CLONE_NEWNS | CLONE_FS | SIGCHLD),
	SYS("clone_newuser", SYS_clone, CLONE_NEWUSER | CLONE_FS | SIGCHLD),
	SYS("clone_newnet", SYS_clone, CLONE_NEWNET | CLONE_THREAD | SIGCHLD),
	SYS("clone3", SYS_clone3, 0, 0),                                   /* EINVAL */
	FN(fork),
	FN(thread),
	SYS("mount", SYS_mount, EMPTY, NOPATH, (uintptr_t)"tmpfs", 0, 0),   /* ENOENT */
	SYS("umount2", SYS_umount2, NOPATH, BAD_FLAGS),                   /* EINVAL */
	/* new mount API: EINVAL (priv) or EPERM (unpriv); the filter says ENOSYS */
	SYS("fsopen", SYS_fsopen, (uintptr_t)"tmpfs", BAD_FLAGS),
	SYS("fsconfig", SYS_fsconfig, -1, 0, 0, 0, 0),
	SYS("fsmount", SYS_fsmount, -1, BAD_FLAGS, 0),
	SYS("fspick", SYS_fspick, -1, EMPTY, BAD_FLAGS),
	SYS("move_mount", SYS_move_mount, -1, EMPTY, -1, EMPTY, BAD_FLAGS),
	SYS("open_tree", SYS_open_tree, -1, EMPTY, BAD_FLAGS),
	SYS("mount_setattr", SYS_mount_setattr, -1, EMPTY, BAD_FLAGS, 0, 0),
	/* ENOENT (priv); EPERM (unpriv: checked first, so not told apart from the filter) */
	SYS("pivot_root", SYS_pivot_root, NOPATH, NOPATH),
	SYS("chroot", SYS_chroot, NOPATH),                                /* ENOENT */
	FN(ptrace_attach),
	/* EINVAL: flags must be 0 */
	SYS("process_vm_readv", SYS_process_vm_readv, 0, (uintptr_t)&viov, 1,
	    (uintptr_t)&viov, 1, 1),
	SYS("process_vm_writev", SYS_process_vm_writev, 0, (uintptr_t)&viov, 1,
	    (uintptr_t)&viov, 1, 1),
	SYS("bpf", SYS_bpf, 0x7fff, 0, 0),                                /* EINVAL */
	SYS("perf_event_open", SYS_perf_event_open, 0, 0, -1, -1, BAD_FLAGS), /* EINVAL */
	SYS("keyctl", SYS_keyctl, 0x7fff),                                /* EOPNOTSUPP */
	SYS("add_key", SYS_add_key, EMPTY, EMPTY, 0, 0, 0),               /* EINVAL */
	SYS("request_key", SYS_request_key, EMPTY, EMPTY, 0, 0),          /* EINVAL */
	/* EINVAL: UFFD_USER_MODE_ONLY passes the permission check, the unknown flag fails */
	SYS("userfaultfd", SYS_userfaultfd, 1 | 0x40000000),
	SYS("io_uring_setup", SYS_io_uring_setup, 0, (uintptr_t)zeros),   /* EINVAL */
	SYS("io_uring_enter", SYS_io_uring_enter, -1, 0, 0, 0, 0, 0),     /* EBADF */
	SYS("io_uring_register", SYS_io_uring_register, -1, 0, 0, 0),     /* EINVAL, EBADF */
	SYS("open_by_handle_at", SYS_open_by_handle_at, -1, (uintptr_t)zeros, O_RDONLY), /* EINVAL, EBADF */
	/* modules and kexec: ENOSYS when the kernel has none; EINVAL/ENOEXEC/ENOENT (priv),
	 * EPERM (unpriv). Never anything loaded, unloaded or replaced. */
	SYS("kexec_load", SYS_kexec_load, 0, 1000, 0, 0x8000),
	SYS("kexec_file_load", SYS_kexec_file_load, -1, -1, 0, 0, BAD_FLAGS),
	SYS("init_module", SYS_init_module, 0, 0, EMPTY),
	SYS("finit_module", SYS_finit_module, -1, EMPTY, BAD_FLAGS),
	SYS("delete_module", SYS_delete_module, (uintptr_t)"halo_probe_none", O_NONBLOCK),
	/* no magic numbers: EINVAL (priv), EPERM (unpriv); it can never reboot */
	SYS("reboot", SYS_reboot, 0, 0, 0, 0),
	SYS("swapon", SYS_swapon, NOPATH, BAD_FLAGS),                     /* EINVAL */
	SYS("swapoff", SYS_swapoff, NOPATH),                              /* ENOENT, EPERM */
	SYS("settimeofday", SYS_settimeofday, (uintptr_t)&bad_tv, 0),     /* EINVAL */
	SYS("clock_settime", SYS_clock_settime, BAD_CLOCK, (uintptr_t)zeros), /* EINVAL */
	SYS("clock_adjtime", SYS_clock_adjtime, BAD_CLOCK, (uintptr_t)zeros), /* EINVAL */
	SYS("adjtimex", SYS_adjtimex, (uintptr_t)zeros),                  /* ok: modes 0 reads */
	SYS("acct", SYS_acct, NOPATH),                                    /* ENOENT, EPERM */
	SYS("quotactl", SYS_quotactl, QCMD(Q_GETFMT, USRQUOTA), NOPATH, 0,
	    (uintptr_t)zeros),                                            /* ENOENT */
	SYS("quotactl_fd", 443, -1, QCMD(Q_GETFMT, USRQUOTA), 0, (uintptr_t)zeros), /* EBADF */
	SYS("personality", SYS_personality, READ_IMPLIES_EXEC),           /* ok (this child) */
	SYS("personality_query", SYS_personality, 0xffffffff),            /* allowed */
	/* an x32 getpid: ENOSYS without x32 support; the filter kills the process */
	SYS("x32_syscall", 0x40000000 | SYS_getpid, 0),
	FN(tiocsti),
	FN(tiocsti_hibits),
	FN(tioclinux),
	FN(setlease),
	FN(getlease),
	FN(chmod_setuid),
	FN(fchmod_setgid),
	FN(fchmodat_setuid),
	FN(fchmodat2_setuid),
	FN(open_setuid),
	FN(openat_setgid),
	FN(creat_setuid),
	FN(mknod_setuid),
	FN(mknodat_setgid),
	FN(chmod_plain),
	SYS("openat2", SYS_openat2, AT_FDCWD, (uintptr_t)"/", 0, 0),      /* EINVAL */
	/* Types >= SOCK_MAX (15), unknown type flags and protocols >= IPPROTO_MAX (1000) are
	 * EINVAL before any family module is loaded or any socket made. */
	SYS("socket_packet", SYS_socket, AF_PACKET, 15, 0),               /* EINVAL */
	SYS("socket_ax25", SYS_socket, AF_AX25, 15, 0),                   /* EINVAL */
	SYS("socket_raw", SYS_socket, AF_INET, SOCK_RAW, 1000),           /* EINVAL */
	SYS("socket_raw6", SYS_socket, AF_INET6, SOCK_RAW, 1000),         /* EINVAL */
	SYS("socket_inet_packet", SYS_socket, AF_INET, SOCK_PACKET | 0x100, 0), /* EINVAL */
	SYS("socket_netlink_audit", SYS_socket, AF_NETLINK, SOCK_RAW, NETLINK_AUDIT), /* ok */
	/* allowed */
	SYS("socket_netlink_route", SYS_socket, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE),
	SYS("socket_inet_stream", SYS_socket, AF_INET, SOCK_STREAM, 0),
	SYS("socket_inet6_dgram", SYS_socket, AF_INET6, SOCK_DGRAM, 0),
	SYS("socket_unix", SYS_socket, AF_UNIX, SOCK_STREAM, 0),
	SYS("socketpair_inet", SYS_socketpair, AF_INET, SOCK_STREAM, 0,
	    (uintptr_t)pair),                                             /* EOPNOTSUPP */
};
/* clang-format on */
#define N_PROBES (sizeof(probes) / sizeof(probes[0]))

/* ---------------------------------------------------------------- running */

static int attempt(const struct probe *p)
{
	const uintptr_t *a = p->a;

	if (p->fn)
		return p->fn();
	/* Whatever it opened is closed when this child exits. */
	return res(syscall(p->nr, a[0], a[1], a[2], a[3], a[4], a[5]));
}

/* Run one probe in a child; 0, or 2 when it could not be set up. */
static int run(const struct probe *p)
{
	int ws = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "probe: fork: %s\n", strerror(errno));
		return 2;
	}
	if (pid == 0) {
		int err = attempt(p);
		if (err == SETUP_FAILED)
			printf("%s setup-failed\n", p->name);
		else if (err == 0)
			printf("%s ok\n", p->name);
		else
			printf("%s errno=%s\n", p->name,
			       strerrorname_np(err) ? strerrorname_np(err) : "?");
		fflush(stdout);
		_exit(err == SETUP_FAILED ? 2 : 0);
	}
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(ws)) {
		const char *sig = sigabbrev_np(WTERMSIG(ws));
		printf("%s killed=SIG%s\n", p->name, sig ? sig : "?");
		return 0;
	}
	return WIFEXITED(ws) && WEXITSTATUS(ws) == 0 ? 0 : 2;
}

static int status(void)
{
	static const char *const fields[] = {"NoNewPrivs", "Seccomp", "Seccomp_filters", "CapInh",
					     "CapPrm",	   "CapEff",  "CapBnd",		 "CapAmb"};
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f) {
		fprintf(stderr, "probe: /proc/self/status: %s\n", strerror(errno));
		return 2;
	}
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
			if (strcmp(line, fields[i]) == 0) {
				char *v = colon + 1 + strspn(colon + 1, " \t");
				v[strcspn(v, "\n")] = '\0';
				printf("%s %s\n", line, v);
			}
	}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 0, i = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (i < argc && strcmp(argv[i], "--filter") == 0) {
		linux_seccomp_apply_or_die(-1);
		i++;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: probe [--filter] all | status | list | NAME...\n");
		return 2;
	}
	for (; i < argc; i++) {
		const char *a = argv[i];
		bool found = false;

		if (strcmp(a, "status") == 0) {
			rc |= status();
			continue;
		}
		for (size_t k = 0; k < N_PROBES; k++) {
			if (strcmp(a, "list") == 0) {
				printf("%s\n", probes[k].name);
				found = true;
			} else if (strcmp(a, "all") == 0 || strcmp(a, probes[k].name) == 0) {
				rc |= run(&probes[k]);
				found = true;
			}
		}
		if (!found) {
			fprintf(stderr, "probe: unknown probe '%s' (probe list names them)\n", a);
			rc |= 2;
		}
	}
	return rc;
}
