/* The relay's pipes (Linux): a tunnel direction moving bulk splices src -> pipe ->
 * dst, so its bytes never come up to userspace. Measured with tests/bench/proxy (1 GiB
 * through a CONNECT tunnel on loopback, 2 cores): the proxy's CPU per GiB went from
 * ~0.45 s with recv/send through the scratch buffer to ~0.21 s.
 *
 * When: a direction starts splicing after one of its reads filled the whole scratch
 * buffer (relay.c sets side.bulk); short exchanges keep copying, which costs them no
 * fds and no pipe set-up.
 *
 * Lending: a pipe is lent to a direction for as long as bytes wait in it and is given
 * back the moment it is empty (at the latest at the end of the wake-up that emptied
 * it), so an idle tunnel holds no pipe and no extra fds. Returning and borrowing again
 * is two array moves. At most RELAY_PIPES_HELD pipes are lent at once and
 * RELAY_PIPES_IDLE empty ones kept; the idle ones are closed when the last connection
 * closes, so the proxy's fd count goes back to its baseline.
 *
 * Fallbacks, never failures: no pipe to lend (the cap, the budget, EMFILE/ENFILE,
 * ENOMEM) means the direction copies as before; after a pipe could not be made, no new
 * one is tried for RELAY_PIPE_RETRY_MS. A system that refuses splice(2) on a socket
 * (a seccomp profile around halo-run, an emulated kernel) turns splicing off for the
 * proxy's lifetime; the read that found out moved nothing, so it is simply copied.
 *
 * Size: 1 MiB (F_SETPIPE_SZ; the default pipe-max-size) moves a socket's whole receive
 * queue in one call. The size can be refused (EPERM: above /proc/sys/fs/pipe-max-size,
 * or the user is past fs.pipe-user-pages-soft); then the pipe keeps its default size
 * if that is at least the scratch buffer's, else it is closed and the direction copies.
 *
 * Budget: every pipe page counts against the user's fs.pipe-user-pages-soft, and past
 * it the kernel shrinks the new pipes of every process of that user to two pages, the
 * sandboxed command's included (same uid). The proxy keeps its pipes' total capacity
 * under half of that limit, and under PROXY_PIPE_BUDGET: the run's bytes parked in
 * pipes are kernel memory its memory limit does not cover (issue 33). Past the budget
 * a direction copies through the scratch buffer, so it holds at most one 64 KiB read
 * queued (in the supervisor's heap) until its peer has taken it: reading from the
 * sandbox's side goes on one scratch-full at a time, never stopping every tunnel
 * because a few others stalled with full pipes.
 *
 * Backpressure: bytes in a pipe are queued toward its side exactly as the userspace
 * queue's are (side_pending); a side is read only while nothing is queued toward its
 * peer, so at most one pipe-full per direction waits in the kernel.
 *
 * SIGPIPE: splice(2) into a socket whose peer is gone raises SIGPIPE and has no
 * MSG_NOSIGNAL; the write holds SIGPIPE blocked and takes back the one it raised, so
 * the relay never raises it, as with send(MSG_NOSIGNAL). The supervisor ignores
 * SIGPIPE anyway, but the engine does not rely on its embedder for that; the price is
 * two sigprocmask calls per write, about a thousand per GiB. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proxy/proxy_int.h"

#ifdef PROXY_SPLICE

#define SPLICE_FLAGS		     (SPLICE_F_NONBLOCK | SPLICE_F_MOVE)
#define DEFAULT_PIPE_USER_PAGES_SOFT 16384UL

/* ------------------------------------------------------------------ budget */

static size_t pipe_budget(void)
{
	unsigned long soft = DEFAULT_PIPE_USER_PAGES_SOFT;
	long page = sysconf(_SC_PAGESIZE);
	int fd = open("/proc/sys/fs/pipe-user-pages-soft", O_RDONLY | O_CLOEXEC);
	char buf[32];

	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		if (n > 0) {
			buf[n] = '\0';
			soft = strtoul(buf, NULL, 10);
		}
		close(fd);
	}
	if (soft == 0) /* no soft limit */
		return PROXY_PIPE_BUDGET;
	soft = soft * (unsigned long)(page > 0 ? page : 4096) / 2;
	return soft < PROXY_PIPE_BUDGET ? (size_t)soft : PROXY_PIPE_BUDGET;
}

/* ------------------------------------------------------------------- pool */

static void pipe_close(struct relay_pipes *pp, int rd, int wr, size_t cap)
{
	close(rd);
	close(wr);
	pp->bytes -= cap;
}

/* A new pipe of at least the scratch buffer's size, within the budget. */
static bool pipe_make(struct relay_pipes *pp, int p[2], size_t *cap)
{
	size_t want = pp->want_size ? pp->want_size : RELAY_PIPE_SIZE;
	int got;

	if (pp->retry_at && proxy_now_ms() < pp->retry_at)
		return false;
	if (!pp->budget)
		pp->budget = pipe_budget();
	if (pp->bytes + want > pp->budget)
		return false;
	if (pipe2(p, O_NONBLOCK | O_CLOEXEC) != 0)
		goto fail; /* EMFILE, ENFILE, ENOMEM */
	got = fcntl(p[1], F_SETPIPE_SZ, (int)want);
	if (got < 0) /* refused (EPERM): keep the default size if it is big enough */
		got = fcntl(p[1], F_GETPIPE_SZ);
	if (got < PROXY_SCRATCH_SIZE) {
		close(p[0]);
		close(p[1]);
		goto fail;
	}
	*cap = (size_t)got;
	pp->bytes += *cap;
	pp->made++;
	pp->retry_at = 0;
	return true;
fail:
	pp->retry_at = proxy_now_ms() + RELAY_PIPE_RETRY_MS;
	return false;
}

bool relay_pipe_lend(struct proxy *px, struct side *dst)
{
	struct relay_pipes *pp = &px->pipes;
	size_t max = pp->max_held ? pp->max_held : RELAY_PIPES_HELD;
	struct side_pipe *p = &dst->pipe;
	int fds[2];
	size_t cap;

	if (p->held)
		return true;
	if (pp->off)
		return false;
	if (pp->n_held >= max) {
		pp->refused++;
		return false;
	}
	if (pp->n_idle) {
		pp->n_idle--;
		fds[0] = pp->idle[pp->n_idle].rd;
		fds[1] = pp->idle[pp->n_idle].wr;
		cap = pp->idle[pp->n_idle].cap;
	} else if (!pipe_make(pp, fds, &cap)) {
		pp->refused++;
		return false;
	}
	*p = (struct side_pipe){.rd = fds[0], .wr = fds[1], .cap = cap, .held = true};
	pp->n_held++;
	pp->lent++;
	return true;
}

void relay_pipe_return(struct proxy *px, struct side *s)
{
	struct relay_pipes *pp = &px->pipes;
	struct side_pipe *p = &s->pipe;

	if (!p->held)
		return;
	/* A pipe with bytes left in it belongs to a tunnel being closed: never reuse it. */
	if (p->queued == 0 && pp->n_idle < RELAY_PIPES_IDLE) {
		pp->idle[pp->n_idle].rd = p->rd;
		pp->idle[pp->n_idle].wr = p->wr;
		pp->idle[pp->n_idle].cap = p->cap;
		pp->n_idle++;
	} else {
		pipe_close(pp, p->rd, p->wr, p->cap);
	}
	pp->n_held--;
	memset(p, 0, sizeof(*p));
}

void relay_pipes_close_idle(struct proxy *px)
{
	struct relay_pipes *pp = &px->pipes;

	while (pp->n_idle) {
		pp->n_idle--;
		pipe_close(pp, pp->idle[pp->n_idle].rd, pp->idle[pp->n_idle].wr,
			   pp->idle[pp->n_idle].cap);
	}
}

/* ------------------------------------------------------------------ moving */

static ssize_t splice_to_socket(const struct proxy *px, int rd, int fd, size_t n)
{
	static const struct timespec now = {0, 0};
	sigset_t sigpipe, old, pending;
	bool was_pending = false;
	ssize_t w;
	int err;

	/* The embedder ignores SIGPIPE for the proxy's whole life (the supervisor does):
	 * nothing to hold back, and two system calls fewer per write. */
	if (px->o.sigpipe_ignored)
		return splice(rd, NULL, fd, NULL, n, SPLICE_FLAGS);
	sigemptyset(&sigpipe);
	sigaddset(&sigpipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &sigpipe, &old);
	/* A SIGPIPE the caller had blocked and pending stays theirs (a standard signal is
	 * pending at most once, so ours would be merged into it). */
	if (sigismember(&old, SIGPIPE) && sigpending(&pending) == 0)
		was_pending = sigismember(&pending, SIGPIPE);
	w = splice(rd, NULL, fd, NULL, n, SPLICE_FLAGS);
	err = errno;
	if (w < 0 && err == EPIPE && !was_pending)
		sigtimedwait(&sigpipe, NULL, &now);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return w;
}

int relay_pipe_flush(struct conn *c, struct side *s)
{
	struct side_pipe *p = &s->pipe;

	while (p->queued) {
		ssize_t w = splice_to_socket(c->px, p->rd, s->fd, p->queued);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			return -errno;
		}
		if (w == 0) /* the pipe is not empty, so this cannot happen: never spin */
			return -EIO;
		p->queued -= (size_t)w;
		conn_touch(c);
	}
	return 0;
}

/* Errors that say splice(2) itself is unavailable, not that the socket failed: a
 * seccomp profile (EPERM, ENOSYS) or a kernel or emulation without socket splicing. */
static bool splice_refused(int err)
{
	return err == EINVAL || err == ENOSYS || err == EOPNOTSUPP || err == EPERM;
}

long relay_splice_pump(struct conn *c, struct side *src, struct side *dst,
		       unsigned long long *count)
{
	struct side_pipe *p = &dst->pipe;
	ssize_t n;
	int rc;

	do
		n = splice(src->fd, NULL, p->wr, NULL, p->cap - p->queued, SPLICE_FLAGS);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		int err = errno;

		if (!splice_refused(err))
			return -err;
		c->px->pipes.off = true;
		relay_pipe_return(c->px, dst);
		return -EOPNOTSUPP;
	}
	if (n == 0) {
		src->rd_eof = true;
		return 0;
	}
	conn_touch(c);
	if (count)
		*count += (unsigned long long)n;
	p->queued += (size_t)n;
	rc = relay_pipe_flush(c, dst);
	return rc ? rc : (long)n;
}

#endif
