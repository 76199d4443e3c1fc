/* The system calls `halo-run verify` tries inside the sandbox, one per seccomp table row
 * worth proving (verify expects the errno of the row named here). Each is built so
 * that, even with no filter at all, it cannot change the host: invalid magic numbers,
 * invalid flags or clock ids, nonexistent paths, or an effect confined to the probe's
 * own throwaway child; wherever the kernel allows, the unfiltered call fails with
 * another errno than the filter's, so a missing filter shows as a FAIL. */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trust/trust.h"

#define NOPATH	  ((uintptr_t) "/nonexistent-halo-verify")
#define EMPTY	  ((uintptr_t) "")
#define BAD_FLAGS 0x80000000UL
#define BAD_CLOCK 0x7fffffff

static char zeros[256];
static struct timeval bad_tv = {0, 2000000};
static char vbuf[8];
static struct iovec viov = {vbuf, sizeof(vbuf)};

/* ptrace of our own child, which is killed afterwards. */
static long p_ptrace(void)
{
	pid_t pid = fork();
	long rc;
	int err;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		pause();
		_exit(0);
	}
	rc = syscall(SYS_ptrace, 16 /* PTRACE_ATTACH */, pid, 0, 0);
	err = errno;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	errno = err;
	return rc;
}

/* A fresh pty as our controlling terminal: injected bytes reach nobody. */
static int own_pty(void)
{
	int m;

	setsid();
	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || !ptsname(m))
		return -1;
	return open(ptsname(m), O_RDWR | O_CLOEXEC);
}

static long p_tiocsti(void)
{
	char c = ' ';

	return syscall(SYS_ioctl, own_pty(), (unsigned long)TIOCSTI, &c);
}

/* The same request with garbage in the upper 32 bits, which the kernel ignores. */
static long p_tiocsti_hi(void)
{
	char c = ' ';

	return syscall(SYS_ioctl, own_pty(), 0xdead00000000UL | TIOCSTI, &c);
}

static long p_tioclinux(void)
{
	char sub = 0;

	return syscall(SYS_ioctl, own_pty(), (unsigned long)TIOCLINUX, &sub);
}

/* A setuid file in $TMPDIR, removed at once whatever happened. */
static long setid(int how)
{
	const char *d = getenv("TMPDIR");
	char path[4096];
	int fd, err;
	long rc;

	snprintf(path, sizeof(path), "%s/halo-verify-XXXXXX", d && *d == '/' ? d : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	if (how == 0) {
		rc = chmod(path, 04600);
	} else if (how == 1) {
		rc = fchmod(fd, 02600);
	} else {
		unlink(path);
		rc = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 04600);
	}
	err = errno;
	unlink(path);
	errno = err;
	return rc < 0 ? -1 : 0;
}

static long p_chmod(void)
{
	return setid(0);
}

static long p_fchmod(void)
{
	return setid(1);
}

static long p_open_setuid(void)
{
	return setid(2);
}

struct sys_probe {
	struct probe_sys_info info;
	long nr;
	uintptr_t a[6];
	long (*fn)(void);
};

#define SYSCALL(name, row, match, nr, ...)                                                         \
	{                                                                                          \
		{name, row, match}, nr, {__VA_ARGS__}, NULL                                        \
	}
#define CODE(name, row, match, fn)                                                                 \
	{                                                                                          \
		{name, row, match}, 0, {0}, fn                                                     \
	}

/* clang-format off */
static const struct sys_probe sys_probes[] = {
	SYSCALL("unshare(CLONE_NEWUSER)", "unshare", "", SYS_unshare, CLONE_NEWUSER),
	SYSCALL("setns", "setns", "", SYS_setns, -1, 0),
	SYSCALL("clone(CLONE_NEWNS)", "clone", "", SYS_clone, CLONE_NEWNS | CLONE_FS | SIGCHLD),
	SYSCALL("clone(CLONE_NEWNET)", "clone", "", SYS_clone, CLONE_NEWNET | CLONE_THREAD | SIGCHLD),
	SYSCALL("clone3", "clone3", "", SYS_clone3, 0, 0),
	SYSCALL("mount", "mount", "", SYS_mount, EMPTY, NOPATH, (uintptr_t)"tmpfs", 0, 0),
	SYSCALL("umount2", "umount2", "", SYS_umount2, NOPATH, BAD_FLAGS),
	SYSCALL("fsopen", "fsopen", "", SYS_fsopen, (uintptr_t)"tmpfs", BAD_FLAGS),
	SYSCALL("open_tree", "open_tree", "", SYS_open_tree, -1, EMPTY, BAD_FLAGS),
	SYSCALL("pivot_root", "pivot_root", "", SYS_pivot_root, NOPATH, NOPATH),
	SYSCALL("chroot", "chroot", "", SYS_chroot, NOPATH),
	CODE("ptrace(PTRACE_ATTACH)", "ptrace", "", p_ptrace),
	SYSCALL("process_vm_readv", "process_vm_readv", "", SYS_process_vm_readv, 0,
		(uintptr_t)&viov, 1, (uintptr_t)&viov, 1, 1),
	SYSCALL("bpf", "bpf", "", SYS_bpf, 0x7fff, 0, 0),
	SYSCALL("perf_event_open", "perf_event_open", "", SYS_perf_event_open, 0, 0, -1, -1,
		BAD_FLAGS),
	SYSCALL("keyctl", "keyctl", "", SYS_keyctl, 0x7fff),
	SYSCALL("add_key", "add_key", "", SYS_add_key, EMPTY, EMPTY, 0, 0, 0),
	SYSCALL("userfaultfd", "userfaultfd", "", SYS_userfaultfd, 1 | 0x40000000),
	SYSCALL("io_uring_setup", "io_uring_setup", "", SYS_io_uring_setup, 0, (uintptr_t)zeros),
	SYSCALL("io_uring_enter", "io_uring_enter", "", SYS_io_uring_enter, -1, 0, 0, 0, 0, 0),
	SYSCALL("open_by_handle_at", "open_by_handle_at", "", SYS_open_by_handle_at, -1,
		(uintptr_t)zeros, O_RDONLY),
	SYSCALL("kexec_load", "kexec_load", "", SYS_kexec_load, 0, 1000, 0, 0x8000),
	SYSCALL("init_module", "init_module", "", SYS_init_module, 0, 0, EMPTY),
	SYSCALL("finit_module", "finit_module", "", SYS_finit_module, -1, EMPTY, BAD_FLAGS),
	SYSCALL("reboot", "reboot", "", SYS_reboot, 0, 0, 0, 0),
	SYSCALL("swapon", "swapon", "", SYS_swapon, NOPATH, BAD_FLAGS),
	SYSCALL("settimeofday", "settimeofday", "", SYS_settimeofday, (uintptr_t)&bad_tv, 0),
	SYSCALL("clock_settime", "clock_settime", "", SYS_clock_settime, BAD_CLOCK,
		(uintptr_t)zeros),
	SYSCALL("acct", "acct", "", SYS_acct, NOPATH),
	SYSCALL("personality(READ_IMPLIES_EXEC)", "personality", "", SYS_personality,
		READ_IMPLIES_EXEC),
	CODE("ioctl(TIOCSTI)", "ioctl", "TIOCSTI", p_tiocsti),
	CODE("ioctl(TIOCSTI | 1<<32)", "ioctl", "TIOCSTI", p_tiocsti_hi),
	CODE("ioctl(TIOCLINUX)", "ioctl", "TIOCLINUX", p_tioclinux),
	CODE("chmod(04600)", "chmod", "", p_chmod),
	CODE("fchmod(02600)", "fchmod", "", p_fchmod),
	CODE("open(O_CREAT, 04600)", "openat", "", p_open_setuid),
	SYSCALL("socket(AF_PACKET)", "socket", "family other", SYS_socket, AF_PACKET, 15, 0),
	SYSCALL("socket(AF_INET, SOCK_RAW)", "socket", "(AF_INET, SOCK_RAW)", SYS_socket,
		AF_INET, SOCK_RAW, 1000),
	SYSCALL("socket(AF_INET6, SOCK_RAW)", "socket", "(AF_INET6, SOCK_RAW)", SYS_socket,
		AF_INET6, SOCK_RAW, 1000),
	SYSCALL("socket(AF_NETLINK, NETLINK_AUDIT)", "socket", "AF_NETLINK other", SYS_socket,
		AF_NETLINK, SOCK_RAW, NETLINK_AUDIT),
	SYSCALL("socketpair(AF_INET)", "socketpair", "", SYS_socketpair, AF_INET, SOCK_STREAM, 0,
		(uintptr_t)zeros),
#ifdef __x86_64__
	/* an x32 getpid: ENOSYS without x32 support; the filter kills the process */
	SYSCALL("x32 system call", NULL, "", 0x40000000 | SYS_getpid, 0),
#endif
};
/* clang-format on */
#define N_SYS (sizeof(sys_probes) / sizeof(sys_probes[0]))

const struct probe_sys_info *probe_sys_list(size_t *n)
{
	static struct probe_sys_info list[N_SYS];

	for (size_t i = 0; i < N_SYS; i++)
		list[i] = sys_probes[i].info;
	*n = N_SYS;
	return list;
}

long probe_sys_try(const char *name)
{
	for (size_t i = 0; i < N_SYS; i++) {
		const struct sys_probe *p = &sys_probes[i];
		if (strcmp(p->info.name, name) != 0)
			continue;
		if (p->fn)
			return p->fn();
		return syscall(p->nr, p->a[0], p->a[1], p->a[2], p->a[3], p->a[4], p->a[5]) < 0 ? -1
												: 0;
	}
	return PROBE_SYS_UNKNOWN;
}
