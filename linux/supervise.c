/* The supervisor's side of a run: forward signals into the sandbox, enforce the
 * wall-clock limit, and turn how the sandbox ended into halo-run's exit code. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/launch_int.h"

const int launch_forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};
const size_t launch_n_forwarded_signals =
	sizeof(launch_forwarded_signals) / sizeof(launch_forwarded_signals[0]);

int launch_signalfd_open(void)
{
	sigset_t set;

	/* A caller that ignores SIGCHLD (inherited across exec) would have our children
	 * reaped by the kernel, and waitpid() could not report the command's status. */
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&set);
	for (size_t i = 0; i < launch_n_forwarded_signals; i++)
		sigaddset(&set, launch_forwarded_signals[i]);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

static int timer_open(long long seconds)
{
	struct itimerspec its;
	int fd;

	if (seconds <= 0)
		return -1;
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (fd < 0)
		return -errno;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)seconds;
	if (timerfd_settime(fd, 0, &its, NULL) < 0) {
		int err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

static void forward_pending(int sfd, pid_t child)
{
	struct signalfd_siginfo si;

	while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
		/* Terminal-generated signals (SI_KERNEL) already reached the command
		 * through the shared foreground process group. */
		if (si.ssi_code != SI_KERNEL || si.ssi_signo == SIGHUP)
			kill(child, (int)si.ssi_signo);
	}
}

static int status_to_code(int ws)
{
	if (WIFEXITED(ws))
		return WEXITSTATUS(ws);
	if (WIFSIGNALED(ws))
		return 128 + WTERMSIG(ws);
	return 125;
}

/* After the sandbox ended: a setup failure, an exec failure, or the command's status. */
static int outcome(const struct linux_launch *l, struct launch_fds *f, bool via_init, int init_ws,
		   int *status, struct halo_err *e)
{
	struct linux_report r;
	int cmd_ws;

	if (read(f->report_r, &r, sizeof(r)) == (ssize_t)sizeof(r)) {
		if (r.kind == LINUX_REPORT_EXEC) {
			*status = r.err == ENOENT ? 127 : 126;
			halo_err_set(e, "%s: %s", r.msg,
				     r.err == ENOENT ? "command not found" : strerror(r.err));
			return 1; /* the sandbox worked; the command could not start */
		}
		*status = 125;
		halo_err_set(e, "sandbox setup failed at %s: %s%s%s", r.step, r.msg,
			     r.err ? ": " : "", r.err ? strerror(r.err) : "");
		return -EPERM;
	}
	if (via_init) {
		if (read(f->status_r, &cmd_ws, sizeof(cmd_ws)) == (ssize_t)sizeof(cmd_ws)) {
			*status = status_to_code(cmd_ws);
			return 0;
		}
		/* init ended without a word: killed from outside, or died in setup. */
		*status = status_to_code(init_ws);
		if (WIFEXITED(init_ws) && WEXITSTATUS(init_ws) == LINUX_SETUP_FAILED) {
			halo_err_set(e, "sandbox setup failed before the command started");
			return -EPERM;
		}
		return 0;
	}
	(void)l;
	*status = status_to_code(init_ws);
	return 0;
}

int linux_supervise(const struct linux_launch *l, pid_t child, struct launch_fds *f,
		    bool via_init, int *status, struct halo_err *e)
{
	int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	int tfd = timer_open(l->limits.wall_seconds);
	bool timed_out = false;
	int ws = 0;

	if (pidfd < 0) {
		halo_err_set(e, "pidfd_open: %s", strerror(errno));
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return -errno;
	}
	for (;;) {
		struct pollfd p[3] = {{pidfd, POLLIN, 0}, {f->sig_fd, POLLIN, 0}, {tfd, POLLIN, 0}};
		if (poll(p, tfd >= 0 ? 3 : 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents & POLLIN)
			forward_pending(f->sig_fd, child);
		if (tfd >= 0 && (p[2].revents & POLLIN)) {
			/* Killing pid 1 of the sandbox kills every process in it. */
			timed_out = true;
			kill(child, SIGKILL);
		}
		if (p[0].revents & POLLIN)
			break;
	}
	while (waitpid(child, &ws, 0) < 0 && errno == EINTR)
		;
	close(pidfd);
	if (tfd >= 0)
		close(tfd);
	if (timed_out) {
		*status = 124;
		halo_err_set(e, "wall-clock limit of %lld s reached; the sandbox was killed",
			     l->limits.wall_seconds);
		return 1;
	}
	return outcome(l, f, via_init, ws, status, e);
}
