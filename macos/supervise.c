/* The supervisor's side of a macOS run: forward signals, job control when the command
 * has the terminal, the wall-clock kill, and how the run ended as halo-run's exit
 * code. The command runs in its own process group (there is no pid namespace): the
 * kill on the wall-clock limit and the sweep of leftovers at the end reach every
 * process that stayed in it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macos/macos_int.h"

void macos_tty_give(pid_t pgrp)
{
	sigset_t ttou, old;

	/* A background process calling tcsetpgrp gets SIGTTOU unless it is blocked. */
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	tcsetpgrp(STDIN_FILENO, pgrp);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

int macos_reap(struct macos_sandbox *sb)
{
	sigset_t chld, old;
	int ws = 0;

	if (sb->child <= 0)
		return 0;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	if (!macos_signals_reaped(&ws)) {
		pid_t r;
		while ((r = waitpid(sb->child, &ws, 0)) < 0 && errno == EINTR)
			;
		if (r < 0 && !macos_signals_reaped(&ws))
			ws = 0;
	}
	macos_signals_set_child(0);
	sigprocmask(SIG_SETMASK, &old, NULL);
	sb->child = -sb->child; /* reaped: the group id stays known, the pid is gone */
	return ws;
}

int macos_sandbox_exit_fd(const struct macos_sandbox *sb)
{
	(void)sb;
	return macos_signals_exit_fd();
}

int macos_sandbox_signal_fd(const struct macos_sandbox *sb)
{
	(void)sb;
	return macos_signals_fwd_fd();
}

/* The command stopped: ^Z at the terminal it has, or it read the terminal from the
 * background (halo-run started with &). Stop halo-run too, so the shell sees the job
 * stopped and takes the terminal back; once continued in the foreground (`fg`), give
 * the terminal to the command and continue it. Without a terminal, a stop is left to
 * whoever sent it (halo-run must not freeze its proxy for nobody to continue). */
static void job_stopped(struct macos_sandbox *sb)
{
	if (sb->child <= 0 || (!sb->tty_handed && !isatty(STDIN_FILENO)))
		return;
	if (sb->tty_handed)
		macos_tty_give(getpgrp());
	kill(getpid(), SIGTSTP); /* discarded in an orphaned process group */
	if (tcgetpgrp(STDIN_FILENO) != getpgrp())
		return; /* still in the background: the command stays stopped */
	macos_tty_give(sb->child);
	sb->tty_handed = true;
	killpg(sb->child, SIGCONT);
}

void macos_sandbox_forward_signals(struct macos_sandbox *sb)
{
	unsigned char buf[64];
	ssize_t n;

	while ((n = read(macos_signals_fwd_fd(), buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++) {
			int sig = buf[i] & 0x7f;
			if (sb->child <= 0)
				continue;
			if (sig == 0)
				job_stopped(sb);
			else if (buf[i] & 0x80)
				killpg(sb->child, sig); /* from the terminal: to the whole job */
			else
				kill(sb->child, sig);
		}
}

void macos_sandbox_kill(struct macos_sandbox *sb)
{
	pid_t pg = sb->child > 0 ? sb->child : -sb->child;

	sb->timed_out = true;
	if (pg > 0) {
		killpg(pg, SIGKILL);
		if (sb->child > 0)
			kill(sb->child, SIGKILL);
	}
}

/* After the command ended: the wall clock, an exec failure, or its own status. */
static int outcome(struct macos_sandbox *sb, int ws, struct halo_outcome *out, struct halo_err *e)
{
	struct macos_report r;
	ssize_t n;

	if (sb->l->facts) /* --events: no cgroups, no broker here; the wall clock is known */
		sb->l->facts->timed_out = sb->timed_out;
	if (sb->timed_out) {
		*out = halo_outcome_of(HALO_OUTCOME_TIMEOUT, 0);
		halo_err_set(e, "wall-clock limit of %lld s reached; the command was killed",
			     sb->l->limits.wall_seconds);
		return 1;
	}
	/* Never block here: every writer is gone, but a read must not depend on it. */
	fcntl(sb->report_r, F_SETFL, O_NONBLOCK);
	do
		n = read(sb->report_r, &r, sizeof(r));
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(r) && r.kind == MACOS_REPORT_EXEC) {
		*out = halo_outcome_exec(r.err);
		halo_err_set(e, "%s: %s", r.msg,
			     r.err == ENOENT ? "command not found" : strerror(r.err));
		return 1; /* the sandbox worked; the command could not start */
	}
	*out = halo_outcome_wait(ws);
	return 0;
}

void macos_sandbox_free(struct macos_sandbox *sb)
{
	int *fds[] = {&sb->report_r, &sb->report_w, &sb->capture_r, &sb->capture_w, &sb->listen_fd};

	if (sb->child > 0) {
		killpg(sb->child, SIGKILL);
		kill(sb->child, SIGKILL);
		macos_reap(sb);
	}
	if (sb->tty_handed)
		macos_tty_give(getpgrp());
	if (sb->signals)
		macos_signals_restore();
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
	macos_tmpdir_remove(sb->tmpdir);
	for (size_t i = 0; sb->envp && sb->envp[i]; i++)
		free(sb->envp[i]);
	free(sb->envp);
	for (size_t i = 0; i < sb->n_dargs; i++)
		free(sb->dargs[i]);
	free(sb->dargs);
	free(sb->argv);
	macos_profile_free(&sb->prof);
	free(sb);
}

int macos_finish(struct macos_sandbox *sb, struct halo_outcome *out, struct halo_err *e)
{
	int ws = macos_reap(sb), rc;

	if (sb->tty_handed) {
		macos_tty_give(getpgrp());
		sb->tty_handed = false;
	}
	/* Whatever the command left running in its group ends with it. */
	if (sb->child < 0)
		killpg(-sb->child, SIGKILL);
	rc = outcome(sb, ws, out, e);
	macos_sandbox_free(sb);
	return rc;
}
