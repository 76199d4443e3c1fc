/* Signals without signalfd or pidfd: two self-pipes written from handlers. SIGCHLD's
 * handler reaps the command itself (waitpid is async-signal-safe) and writes one byte
 * to the exit pipe, so the exit pipe becomes readable only once the command has
 * really ended; a stop of the command writes a 0 byte to the forward pipe instead.
 * The forwarding handler writes the signal number, with the top bit set when the
 * signal did not come from a process (a terminal's ^C): those go to the command's
 * whole process group, as a terminal would have sent them. Process-wide state: one
 * sandbox at a time. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macos/macos_int.h"

const int macos_forwarded_signals[] = {HALO_FORWARDED_SIGNALS};
const size_t macos_n_forwarded_signals =
    sizeof(macos_forwarded_signals) / sizeof(macos_forwarded_signals[0]);

#define N_HANDLED (sizeof(macos_forwarded_signals) / sizeof(macos_forwarded_signals[0]) + 1)

static volatile sig_atomic_t g_child;
static volatile sig_atomic_t g_reaped;
static volatile sig_atomic_t g_ws;
static int g_exit_pipe[2] = {-1, -1};
static int g_fwd_pipe[2] = {-1, -1};
static struct sigaction g_old[N_HANDLED];
static bool g_installed;

static int handled_signal(size_t i)
{
	return i < macos_n_forwarded_signals ? macos_forwarded_signals[i] : SIGCHLD;
}

static void on_chld(int sig)
{
	int saved = errno, ws = 0;
	pid_t c = (pid_t)g_child, r;

	(void)sig;
	/* Several changes may arrive as one signal (a stop, then the exit): loop. */
	while (c > 0 && !g_reaped && (r = waitpid(c, &ws, WNOHANG | WUNTRACED)) == c) {
		if (WIFSTOPPED(ws)) {
			unsigned char b = 0;
			(void)!write(g_fwd_pipe[1], &b, 1);
			continue;
		}
		g_ws = ws;
		g_reaped = 1;
		(void)!write(g_exit_pipe[1], "x", 1);
	}
	errno = saved;
}

static bool from_process(const siginfo_t *si)
{
	if (!si)
		return true;
#ifdef SI_TKILL
	if (si->si_code == SI_TKILL)
		return true;
#endif
	return si->si_code == SI_USER || si->si_code == SI_QUEUE;
}

static void on_forward(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	unsigned char b = (unsigned char)(sig & 0x7f);

	(void)uc;
	if (!from_process(si))
		b |= 0x80;
	(void)!write(g_fwd_pipe[1], &b, 1);
	errno = saved;
}

static int make_pipe(int p[2])
{
	if (pipe(p) < 0)
		return -errno;
	for (int i = 0; i < 2; i++)
		if (fcntl(p[i], F_SETFD, FD_CLOEXEC) < 0 ||
		    fcntl(p[i], F_SETFL, fcntl(p[i], F_GETFL) | O_NONBLOCK) < 0) {
			int err = errno;
			close(p[0]);
			close(p[1]);
			p[0] = p[1] = -1;
			return -err;
		}
	return 0;
}

static void close_pipe(int p[2])
{
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0) {
			close(p[i]);
			p[i] = -1;
		}
}

int macos_signals_install(void)
{
	struct sigaction sa;
	int rc;

	if (g_installed)
		return -EBUSY;
	g_child = 0;
	g_reaped = 0;
	if ((rc = make_pipe(g_exit_pipe)) < 0)
		return rc;
	if ((rc = make_pipe(g_fwd_pipe)) < 0) {
		close_pipe(g_exit_pipe);
		return rc;
	}
	for (size_t i = 0; i < N_HANDLED; i++) {
		memset(&sa, 0, sizeof(sa));
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESTART;
		if (handled_signal(i) == SIGCHLD) {
			sa.sa_handler = on_chld;
		} else {
			sa.sa_sigaction = on_forward;
			sa.sa_flags |= SA_SIGINFO;
		}
		/* A caller that ignores SIGCHLD (inherited across exec) would otherwise
		 * have the kernel reap the command before we could read its status. */
		if (sigaction(handled_signal(i), &sa, &g_old[i]) < 0) {
			rc = -errno;
			while (i-- > 0)
				sigaction(handled_signal(i), &g_old[i], NULL);
			close_pipe(g_exit_pipe);
			close_pipe(g_fwd_pipe);
			return rc;
		}
	}
	g_installed = true;
	return 0;
}

void macos_signals_restore(void)
{
	if (!g_installed)
		return;
	for (size_t i = 0; i < N_HANDLED; i++)
		sigaction(handled_signal(i), &g_old[i], NULL);
	close_pipe(g_exit_pipe);
	close_pipe(g_fwd_pipe);
	g_child = 0;
	g_installed = false;
}

void macos_signals_set_child(pid_t child)
{
	g_child = child;
}

/* In the forked child, before anything can be delivered to it: default actions and
 * none of the supervisor's pipes. Signals are still blocked here. */
void macos_signals_child_reset(void)
{
	for (size_t i = 0; i < N_HANDLED; i++)
		signal(handled_signal(i), SIG_DFL);
	close_pipe(g_exit_pipe);
	close_pipe(g_fwd_pipe);
}

int macos_signals_exit_fd(void)
{
	return g_exit_pipe[0];
}

int macos_signals_fwd_fd(void)
{
	return g_fwd_pipe[0];
}

bool macos_signals_reaped(int *ws)
{
	if (!g_reaped)
		return false;
	*ws = (int)g_ws;
	return true;
}
