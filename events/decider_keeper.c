/* The --decider's process and what ends it (decider.c talks to it). The decider and
 * everything it starts end with the run or the session, and nothing it leaves behind
 * reaches init.
 *
 * Linux: the supervisor's child is a keeper, in a process group of its own, the child
 * subreaper of everything below it: the decider (`/bin/sh -c CMD`) is its child, and
 * whatever the decider's processes leave orphaned, even after leaving the group
 * (setsid, a double fork), is adopted by the keeper rather than by init. On SIGTERM,
 * sent by runner_decider_end or as its parent-death signal when halo-run itself dies,
 * the keeper kills its children, then those adopted in turn, until none is left.
 * Below the keeper, where namespaces can be had, the decider lives in a pid namespace
 * of its own under a small init (own_pid_ns): killing its keeper is then out of its
 * reach, and the namespace dies whole with that init.
 * Elsewhere (macOS): the decider is the child, in a process group of its own, and the
 * group is killed at the end; a process that leaves the group is not followed. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#include "events/decider_int.h"
#include "events/events.h"
#include "opts/opts.h"
#include "proxy/proxy.h"

/* The decider itself: the pipes on 0 and 1, stderr kept (its own messages reach the
 * caller), nothing else of the supervisor's, and it dies with its parent. */
static void __attribute__((noreturn))
exec_decider(const char *command, int in_r, int out_w, pid_t parent)
{
	sigset_t none;

	(void)parent; /* Linux only */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (setpgid(0, 0) < 0 || dup2(in_r, 0) < 0 || dup2(out_w, 1) < 0)
		_exit(127);
#ifdef __linux__
	/* A parent gone between the fork and here never sends the signal. */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
		_exit(127);
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3, ~0U, 0) != 0)
#endif
#endif
		for (int fd = 3; fd < 4096; fd++)
			close(fd);
	signal(SIGPIPE, SIG_DFL);
	execl("/bin/sh", "sh", "-c", command, (char *)NULL);
	_exit(127);
}

#ifdef __linux__
/* Every child killed and reaped, round after round: a killed process's children are
 * the keeper's next (bounded: a process forking as fast as it is killed stops at 64). */
static void kill_children(void)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	for (int round = 0; round < 64; round++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC), n = 0;
		ssize_t len = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		char *p = buf, *end;

		if (fd >= 0)
			close(fd);
		if (len <= 0)
			break;
		buf[len] = '\0';
		for (long pid; (pid = strtol(p, &end, 10)) > 0 && end != p; p = end, n++)
			kill((pid_t)pid, SIGKILL);
		while (n-- > 0 && waitpid(-1, NULL, 0) > 0)
			;
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : write(fd, text, strlen(text));

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* The keeper's children in a pid namespace of their own (with a user namespace mapping
 * only the caller's ids, where the caller is not root). The decider is the same user
 * as halo-run: as a subreaper's child it could still kill its keeper and leave orphans
 * to init. In a namespace of its own it sees neither the keeper nor halo-run (no pid of
 * theirs exists there), cannot kill the namespace's init, and everything in it dies
 * when that init does. False where namespaces are not to be had (the subreaper then
 * stays the only net). */
static bool own_pid_ns(void)
{
	char map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();

	if (uid == 0)
		return unshare(CLONE_NEWPID) == 0;
	if (unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0)
		return false;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	if (write_file("/proc/self/uid_map", map) < 0)
		return false;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	return write_file("/proc/self/setgroups", "deny") == 0 &&
	       write_file("/proc/self/gid_map", map) == 0;
}

/* Pid 1 of the decider's namespace: starts the decider and reaps whatever ends there
 * until nothing is left (a decider may hand its pipes to a child and exit). The keeper
 * kills it at the end of the run, and the kernel then the rest of the namespace. */
static void __attribute__((noreturn)) ns_init(const char *command)
{
	pid_t d = fork();

	if (d < 0)
		_exit(127);
	if (d == 0)
		exec_decider(command, 0, 1, getppid());
	close(0);
	close(1);
	for (;;)
		if (waitpid(-1, NULL, 0) < 0 && errno != EINTR)
			_exit(0);
}

static void __attribute__((noreturn))
keeper(const char *command, int in_r, int out_w, pid_t supervisor)
{
	bool ns;

	sigset_t term;
	pid_t d;
	int sig;

	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_SETMASK, &term, NULL);
	if (setpgid(0, 0) < 0 || prctl(PR_SET_CHILD_SUBREAPER, 1) < 0 ||
	    prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != supervisor)
		_exit(127);
	/* Nothing of the supervisor's stays open here (its end of the decider's stdin
	 * would keep the decider from ever seeing EOF): the pipes on 0 and 1, for the
	 * decider, and the rest closed. */
	if (dup2(in_r, 0) < 0 || dup2(out_w, 1) < 0 || syscall(SYS_close_range, 3, ~0U, 0) != 0)
		_exit(127);
	ns = own_pid_ns();
	if ((d = fork()) < 0)
		_exit(127);
	if (d == 0 && ns)
		ns_init(command);
	if (d == 0)
		exec_decider(command, 0, 1, getppid());
	close(0);
	close(1);
	while (sigwait(&term, &sig) != 0)
		;
	kill_children();
	_exit(0);
}
#endif

pid_t runner_decider_fork(const char *command, int in_r, int out_w)
{
	pid_t self = getpid(), pid = fork();

	if (pid == 0) {
#ifdef __linux__
		keeper(command, in_r, out_w, self);
#else
		exec_decider(command, in_r, out_w, self);
#endif
	}
	if (pid > 0)
		(void)setpgid(pid, pid); /* the child does too: whichever runs first */
	return pid < 0 ? -errno : pid;
}

/* Has the decider ended (or closed its stdout)? Its stdout at EOF says so. */
bool runner_decider_eof(int out_fd)
{
	char c;

	return out_fd >= 0 && read(out_fd, &c, 1) == 0;
}

void runner_decider_end(pid_t pid, int out_fd, unsigned grace_ms)
{
	struct timespec t0, now;

	if (pid <= 0)
		return;
	/* Its stdin is closed: a decider that ends by itself within grace_ms is let be. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = {out_fd, POLLIN, 0};
		long spent;

		clock_gettime(CLOCK_MONOTONIC, &now);
		spent = (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (out_fd < 0 || spent >= (long)grace_ms ||
		    poll(&p, 1, (int)((long)grace_ms - spent)) <= 0 || runner_decider_eof(out_fd))
			break;
	}
#ifdef __linux__
	kill(pid, SIGTERM); /* the keeper ends everything below it, then itself */
#else
	kill(-pid, SIGKILL); /* its group; the leader, not reaped yet, holds the number */
	kill(pid, SIGKILL);
#endif
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}
