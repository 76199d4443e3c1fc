/* A session call's own pseudo-terminal. The threat: a session outlives its calls, and
 * so do the background processes a call's command leaves there. Handed the caller's
 * terminal itself, one of them would keep it after the call returned and read what the
 * user types next at their shell (a password); killing the holders at the call's end
 * can be dodged (a descriptor parked in a unix socket). So the session never gets a
 * terminal: every one of the call's fds 0-2 that is a terminal is replaced by the slave
 * of a pty this call opens, the call relays between its terminal and the master while
 * its command runs, and closes the master when the command has exited. What holds the
 * slave then is hung up, and never sees the caller's terminal again.
 *
 * The slave is nobody's controlling terminal (a session leader's exit would hang up
 * its foreground group, the background processes a call is meant to leave running), so
 * the caller's terminal is put in raw mode and the call turns the slave's interrupt
 * and quit characters into the signals it forwards as before, as the slave's own
 * settings say (a program in raw mode gets ^C as a key); its suspend character stops
 * the call, as on the caller's terminal before. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "session/session_int.h"

#define DRAIN_QUIET_MS 20  /* the command has exited: its last output is in the master */
#define DRAIN_TOTAL_MS 500 /* a background writer does not hold the call */

static void set_term(int fd, const struct termios *t)
{
	sigset_t ttou, old;

	/* From the background (the call was sent there with bg) too: no SIGTTOU stop. */
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	tcsetattr(fd, TCSADRAIN, t);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static void go_raw(struct session_pty *p)
{
	struct termios raw = p->saved;

	cfmakeraw(&raw);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	set_term(p->in, &raw);
}

void runner_pty_winch(struct session_pty *p)
{
	struct winsize ws;

	if (p->master >= 0 && ioctl(p->term, TIOCGWINSZ, &ws) == 0)
		ioctl(p->master, TIOCSWINSZ, &ws);
}

static int open_pair(struct session_pty *p, int *slave)
{
	char *name;
	int s;

	p->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (p->master < 0)
		return -errno;
	if (grantpt(p->master) < 0 || unlockpt(p->master) < 0 || !(name = ptsname(p->master)) ||
	    (s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
		int err = -errno;
		close(p->master);
		p->master = -1;
		return err ? err : -EIO;
	}
	fcntl(p->master, F_SETFL, fcntl(p->master, F_GETFL) | O_NONBLOCK);
	*slave = s;
	return 0;
}

int runner_pty_begin(struct session_pty *p, int fds[3], int *slave)
{
	int rc;

	*p = (struct session_pty){.master = -1, .in = -1, .out = -1, .term = -1};
	*slave = -1;
	for (int i = 2; i >= 0; i--)
		if (isatty(fds[i]))
			p->term = p->out = fds[i]; /* 1 before 2 before 0 */
	if (p->term < 0)
		return 0;
	if (isatty(fds[1]))
		p->out = fds[1];
	else if (isatty(fds[2]))
		p->out = fds[2];
	if (tcgetattr(p->term, &p->saved) < 0)
		return -errno;
	if ((rc = open_pair(p, slave)) < 0)
		return rc;
	/* Keys only from a terminal this call is the foreground of: a call sent to the
	 * background with & leaves the terminal to the shell (no SIGTTIN stop). */
	if (isatty(fds[0]) && tcgetpgrp(fds[0]) == getpgrp())
		p->in = fds[0];
	struct termios st = p->saved;
	if (p->in < 0)
		st.c_oflag &= ~OPOST; /* the caller's terminal still does the output's */
	tcsetattr(*slave, TCSANOW, &st);
	runner_pty_winch(p);
	for (int i = 0; i < 3; i++)
		if (isatty(fds[i]))
			fds[i] = *slave;
	if (p->in >= 0) {
		go_raw(p);
		p->raw = true;
	}
	return 0;
}

size_t runner_pty_poll(const struct session_pty *p, struct pollfd *pf)
{
	size_t n = 0;

	if (p->master >= 0 && !p->master_gone)
		pf[n++] = (struct pollfd){p->master, (short)(POLLIN | (p->ilen ? POLLOUT : 0)), 0};
	if (p->in >= 0 && !p->ilen)
		pf[n++] = (struct pollfd){p->in, POLLIN, 0};
	return n;
}

static void put_all(int fd, const char *b, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* the terminal is gone: its hang-up ends the call */
		b += w;
		n -= (size_t)w;
	}
}

/* The command's output (and the slave's echo) to the caller's terminal. */
static void from_master(struct session_pty *p)
{
	char b[8192];
	ssize_t n = read(p->master, b, sizeof(b));

	if (n > 0)
		put_all(p->out, b, (size_t)n);
	else if (n == 0 || (errno != EAGAIN && errno != EINTR))
		p->master_gone = true; /* EIO: nothing holds the slave any more */
}

static void suspend(struct session_pty *p)
{
	set_term(p->in, &p->saved);
	raise(SIGSTOP);
	if (tcgetpgrp(p->in) == getpgrp()) {
		go_raw(p); /* continued in the foreground (fg) */
		return;
	}
	p->raw = false; /* in the background (bg): the terminal is the shell's now */
	p->in = -1;
}

/* Keys: the slave's interrupt and quit characters are signals for the command. */
static int from_terminal(struct session_pty *p)
{
	struct termios st;
	ssize_t n = read(p->in, p->ib, sizeof(p->ib));
	int sig = 0;

	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			p->in = -1; /* hung up: the call gets SIGHUP and passes it on */
		return 0;
	}
	p->ilen = (size_t)n;
	p->ioff = 0;
	if (tcgetattr(p->master, &st) < 0 || !(st.c_lflag & ISIG)) /* the slave's */
		return 0;
	for (ssize_t i = 0; i < n; i++) {
		cc_t ch = (cc_t)p->ib[i];
		if (ch == _POSIX_VDISABLE)
			continue;
		if (ch == st.c_cc[VINTR])
			sig = SIGINT;
		else if (ch == st.c_cc[VQUIT])
			sig = SIGQUIT;
		else if (ch == st.c_cc[VSUSP])
			suspend(p);
	}
	return sig;
}

int runner_pty_pump(struct session_pty *p, const struct pollfd *pf, size_t n)
{
	int sig = 0;

	for (size_t i = 0; i < n; i++) {
		if (!pf[i].revents)
			continue;
		if (pf[i].fd == p->master && (pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
			from_master(p);
		else if (pf[i].fd == p->in)
			sig = from_terminal(p);
	}
	if (p->ilen && p->master >= 0) { /* the slave's line discipline echoes, edits */
		ssize_t w = write(p->master, p->ib + p->ioff, p->ilen);
		if (w > 0) {
			p->ioff += (size_t)w;
			p->ilen -= (size_t)w;
		} else if (w < 0 && errno != EAGAIN && errno != EINTR)
			p->ilen = 0;
	}
	return sig;
}

void runner_pty_end(struct session_pty *p)
{
	uint64_t end = proxy_now_ms() + DRAIN_TOTAL_MS;

	while (p->master >= 0 && !p->master_gone && proxy_now_ms() < end) {
		struct pollfd pf = {p->master, POLLIN, 0};
		if (poll(&pf, 1, DRAIN_QUIET_MS) <= 0)
			break;
		from_master(p);
	}
	if (p->master >= 0)
		close(p->master); /* the slave's holders are hung up */
	p->master = -1;
	if (p->raw)
		set_term(p->in >= 0 ? p->in : p->term, &p->saved);
	p->raw = false;
}
