/* The supervisor's side of a run: forward signals into the sandbox, enforce the
 * wall-clock limit, and turn how the sandbox ended into halo-run's exit code. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/launch_int.h"

const int launch_forwarded_signals[] = {HALO_FORWARDED_SIGNALS};
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

static int command_status(struct linux_sandbox *sb, int ws, struct halo_outcome *out,
			  struct halo_err *e);

/* After the sandbox ended: a setup failure, an exec failure, or the command's status. */
/* After the status, init sends what the git directory rules refused, if anything
 * (broker_git.c): say so, after whatever else there is to say. */
/* Everything init wrote after the status (it has exited: the pipe ends), bounded. */
static size_t read_notes(int fd, char *buf, size_t cap)
{
	size_t k = 0;
	ssize_t n;

	while (k < cap && (n = read(fd, buf + k, cap - k)) > 0)
		k += (size_t)n;
	return k;
}

/* halo-run learn's records, after the git note if there is one (broker_learn.c). */
static void learn_notes(const char *buf, size_t len, struct halo_run_facts *facts)
{
	if (!facts || len > sizeof(facts->learn_notes))
		return;
	memcpy(facts->learn_notes, buf, len);
	facts->learn_notes_len = len;
}

static bool git_refusals_note(int fd, struct halo_err *e, struct halo_run_facts *facts)
{
	static char all[PATH_MAX + 256 + HALO_FACT_LEARN];
	char buf[PATH_MAX + 256], *sp;
	size_t n = read_notes(fd, all, sizeof(all)), first;
	size_t o;

	if (n == 0)
		return false;
	/* The git note, when there is one, starts with its count. */
	first = all[0] >= '0' && all[0] <= '9' ? strnlen(all, n) : 0;
	learn_notes(all + (first ? first + 1 : 0), first ? (first < n ? n - first - 1 : 0) : n,
		    facts);
	if (!first || first >= sizeof(buf))
		return false;
	memcpy(buf, all, first);
	buf[first] = '\0';
	if (!(sp = strchr(buf, ' ')))
		return false;
	*sp = '\0';
	if (facts) {
		facts->fs_refusals = strtoll(buf, NULL, 10);
		snprintf(facts->fs_first, sizeof(facts->fs_first), "%s", sp + 1);
	}
	o = strlen(e->msg);
	snprintf(e->msg + o, sizeof(e->msg) - o,
		 "%swarning: refused %s change%s to git hooks or config (first: %s); the hooks "
		 "of a repository and the config keys that run programs stay out of the "
		 "command's reach, in repositories that existed at launch and in those it "
		 "creates",
		 o ? "; " : "", buf, strcmp(buf, "1") ? "s" : "", sp + 1);
	return true;
}

int launch_outcome(struct linux_sandbox *sb, int child_ws, struct halo_outcome *out,
		   struct halo_err *e)
{
	struct launch_fds *f = &sb->f;
	struct linux_report r;
	int cmd_ws;

	if (sb->l->facts) {
		sb->l->facts->timed_out = sb->timed_out;
		sb->l->facts->pids_max_hits = linux_cgroup_pids_max_hits(&sb->cg);
	}
	if (sb->timed_out) {
		*out = halo_outcome_of(HALO_OUTCOME_TIMEOUT, 0);
		halo_err_set(e, "wall-clock limit of %lld s reached; the sandbox was killed",
			     sb->l->limits.wall_seconds);
		return 1;
	}
	if (read(f->report_r, &r, sizeof(r)) == (ssize_t)sizeof(r)) {
		if (r.kind == LINUX_REPORT_EXEC) {
			*out = halo_outcome_exec(r.err);
			halo_err_set(e, "%s: %s", r.msg,
				     r.err == ENOENT ? "command not found" : strerror(r.err));
			return 1; /* the sandbox worked; the command could not start */
		}
		*out = halo_outcome_of(HALO_OUTCOME_SETUP, 0);
		halo_err_set(e, "sandbox setup failed at %s: %s%s%s", r.step, r.msg,
			     r.err ? ": " : "", r.err ? strerror(r.err) : "");
		return -EPERM;
	}
	if (!sb->via_init)
		return command_status(sb, child_ws, out, e);
	if (read(f->status_r, &cmd_ws, sizeof(cmd_ws)) == (ssize_t)sizeof(cmd_ws)) {
		int rc = command_status(sb, cmd_ws, out, e);
		return git_refusals_note(f->status_r, e, sb->l->facts) ? 1 : rc;
	}
	/* init ended without a word: killed from outside, or died in setup. */
	*out = halo_outcome_wait(child_ws);
	if (WIFEXITED(child_ws) && WEXITSTATUS(child_ws) == LINUX_SETUP_FAILED) {
		*out = halo_outcome_of(HALO_OUTCOME_SETUP, 0);
		halo_err_set(e, "sandbox setup failed before the command started");
		return -EPERM;
	}
	return 0;
}

/* The command's own status; when the memory cgroup's OOM killer ended a process of the
 * sandbox (the command or one of its children), halo-run says so: the status alone
 * (137, or whatever the command made of a killed child) does not tell. */
static int command_status(struct linux_sandbox *sb, int ws, struct halo_outcome *out,
			  struct halo_err *e)
{
	long long kills = linux_cgroup_oom_kills(&sb->cg);

	if (sb->l->facts)
		sb->l->facts->oom_kills = kills;
	*out = halo_outcome_wait(ws);
	if (kills <= 0)
		return 0;
	halo_err_set(e,
		     "memory limit hit: the kernel's OOM killer ended %lld process%s in the "
		     "sandbox (%lld MiB, %s)",
		     kills, kills == 1 ? "" : "es", sb->l->limits.memory_bytes / (1024 * 1024),
		     sb->cg.mem_desc);
	return 1;
}

int linux_sandbox_exit_fd(const struct linux_sandbox *sb)
{
	return sb->pidfd;
}

int linux_sandbox_signal_fd(const struct linux_sandbox *sb)
{
	return sb->f.sig_fd;
}

void linux_sandbox_forward_signals(struct linux_sandbox *sb)
{
	forward_pending(sb->f.sig_fd, sb->child);
}

void linux_sandbox_kill(struct linux_sandbox *sb)
{
	/* Killing pid 1 of the sandbox kills every process in it. */
	sb->timed_out = true;
	kill(sb->child, SIGKILL);
}

int linux_sandbox_session_fd(const struct linux_sandbox *sb)
{
	return sb->f.sess_r;
}

int linux_sandbox_diag_fd(const struct linux_sandbox *sb)
{
	return sb->diag_fd;
}

size_t linux_sandbox_take_listeners(struct linux_sandbox *sb, struct netns_listener *out)
{
	size_t n = 0;

	for (size_t i = 0; i < sb->n_listeners; i++) {
		if (sb->listeners[i].kind != NETNS_LISTEN_DIAG)
			out[n++] = sb->listeners[i];
		else if (sb->diag_fd < 0)
			sb->diag_fd = sb->listeners[i].fd; /* kept: the session's supervisor asks */
		else
			close(sb->listeners[i].fd);
	}
	sb->n_listeners = 0;
	return n;
}
