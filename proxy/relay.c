/* Byte relay between the client and the origin.
 *
 * Memory: reads go into the proxy's one scratch buffer and are written straight to
 * the peer; only the part the peer's socket cannot take now is copied into that
 * direction's queue (struct pend), and the queue is freed as soon as it drains. An
 * idle tunnel therefore holds no buffer.
 *
 * Bulk (Linux): once a read toward a side fills the whole scratch buffer, that
 * direction splices through a pipe borrowed from the proxy's pool instead
 * (relay_splice.c), as long as one can be had; the pipe goes back as soon as it is
 * empty, so an idle tunnel holds no pipe either. Short exchanges keep the copy path.
 *
 * Counting: bytes_up is what the client handed over for the origin, bytes_down what
 * the origin sent, both counted when read (into the scratch buffer or into a pipe;
 * the queue and pipe flushes do not count again).
 *
 * Backpressure: a side is read only while nothing is queued toward its peer (neither
 * in the userspace queue nor in the peer's pipe), so at most one scratch-full or one
 * pipe-full per direction is ever queued. Only one of the two is ever non-empty: a
 * pipe is lent only while the queue is empty, and the queue fills only from a read.
 *
 * Half-close: EOF from one side becomes shutdown(SHUT_WR) toward the other once
 * everything queued toward it (queue and pipe) has drained; the tunnel ends when both
 * directions have ended. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy/proxy_int.h"

void pend_free(struct pend *p)
{
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

static int pend_append(struct pend *p, const void *d, size_t n)
{
	if (n == 0)
		return 0;
	if (p->len == 0)
		p->off = 0;
	if (p->off + p->len + n > p->cap) {
		if (p->off) {
			memmove(p->buf, p->buf + p->off, p->len);
			p->off = 0;
		}
		if (p->len + n > p->cap) {
			size_t cap = p->len + n;
			char *b = realloc(p->buf, cap);
			if (!b)
				return -ENOMEM;
			p->buf = b;
			p->cap = cap;
		}
	}
	memcpy(p->buf + p->off + p->len, d, n);
	p->len += n;
	return 0;
}

static ssize_t xsend(int fd, const void *b, size_t n)
{
#ifdef MSG_NOSIGNAL
	return send(fd, b, n, MSG_NOSIGNAL);
#else
	return send(fd, b, n, 0); /* SO_NOSIGPIPE is set on every socket */
#endif
}

int side_flush(struct conn *c, struct side *s, unsigned long long *count)
{
	struct pend *p = &s->out;

	if (s->pipe.queued) {
		int rc = relay_pipe_flush(c, s);

		if (rc || s->pipe.queued)
			return rc;
	}
	while (p->len) {
		ssize_t w = xsend(s->fd, p->buf + p->off, p->len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -errno;
		}
		p->off += (size_t)w;
		p->len -= (size_t)w;
		if (count)
			*count += (unsigned long long)w;
		conn_touch(c);
	}
	pend_free(p);
	return 0;
}

int side_send(struct conn *c, struct side *s, const void *data, size_t len,
	      unsigned long long *count)
{
	const char *d = data;

	if (s->out.len)
		return pend_append(&s->out, d, len) ? -ENOMEM : side_flush(c, s, count);
	while (len) {
		ssize_t w = xsend(s->fd, d, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return -errno;
		}
		d += w;
		len -= (size_t)w;
		if (count)
			*count += (unsigned long long)w;
		conn_touch(c);
	}
	return pend_append(&s->out, d, len);
}

long relay_pump(struct conn *c, struct side *src, struct side *dst, unsigned long long *limit,
		unsigned long long *count)
{
	size_t want = PROXY_SCRATCH_SIZE;
	ssize_t n;
	int rc;

	if (limit && *limit < want)
		want = (size_t)*limit;
	if (want == 0)
		return -EAGAIN;
	do
		n = recv(src->fd, c->px->scratch, want, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (n == 0) {
		src->rd_eof = true;
		return 0;
	}
	conn_touch(c);
	if (limit)
		*limit -= (unsigned long long)n;
	if (count)
		*count += (unsigned long long)n;
	rc = side_send(c, dst, c->px->scratch, (size_t)n, NULL);
	return rc ? rc : (long)n;
}

bool tunnel_settle(struct conn *c)
{
	struct side *pairs[2][2] = {{&c->c, &c->u}, {&c->u, &c->c}};

	/* Both ends read to their EOF and nothing left to write: the caller closes both
	 * sockets now, and close() sends the FIN that a shutdown() would (their receive
	 * queues are empty, so it is never a reset). */
	if (c->c.rd_eof && c->u.rd_eof && !side_pending(&c->c) && !side_pending(&c->u))
		return true;
	for (int i = 0; i < 2; i++) {
		struct side *src = pairs[i][0], *dst = pairs[i][1];

		if (src->rd_eof && !side_pending(dst) && !dst->wr_shut && dst->fd >= 0) {
			shutdown(dst->fd, SHUT_WR);
			dst->wr_shut = true;
		}
	}
	return false;
}

static unsigned long long *count_for(struct conn *c, struct side *src)
{
	return src == &c->c ? &c->ex.up : &c->ex.down;
}

/* One read from src for dst: through dst's pipe once the direction is bulk and a pipe
 * can be had, else through the scratch buffer. *drained: the copy read got less than
 * it asked for, so src held no more (a stream read takes all that is queued, up to
 * its size): another read now would only say EAGAIN, and the level-triggered poller
 * reports whatever comes later. */
static long tunnel_pump(struct conn *c, struct side *src, struct side *dst, bool *drained)
{
	long r;

	if (dst->bulk && relay_pipe_lend(c->px, dst)) {
		r = relay_splice_pump(c, src, dst, count_for(c, src));
		if (r != -EOPNOTSUPP)
			return r;
	}
	r = relay_pump(c, src, dst, NULL, count_for(c, src));
	if (r == PROXY_SCRATCH_SIZE)
		dst->bulk = true;
	else if (r > 0)
		*drained = true;
	return r;
}

/* Empty pipes go back to the pool at the end of every wake-up. */
static void tunnel_return_pipes(struct conn *c)
{
	if (c->c.pipe.held && !c->c.pipe.queued)
		relay_pipe_return(c->px, &c->c);
	if (c->u.pipe.held && !c->u.pipe.queued)
		relay_pipe_return(c->px, &c->u);
}

/* A few reads per wake-up: enough to amortise the epoll round trip on a bulk
 * transfer, few enough that one busy tunnel cannot starve the others. A splice read
 * can move a whole pipe-full, so the bytes are bounded too. */
#define PUMP_ROUNDS 4
#define PUMP_BYTES  RELAY_PIPE_SIZE

void tunnel_on_event(struct conn *c, struct side *s, unsigned events)
{
	struct side *other = s == &c->c ? &c->u : &c->c;
	bool readable = events & (PROXY_EV_IN | PROXY_EV_ERR);
	long moved = 0;
	bool drained = false;

	if (events & (PROXY_EV_OUT | PROXY_EV_ERR)) {
		if (side_flush(c, s, NULL) != 0) {
			conn_close(c);
			return;
		}
	}
	for (int i = 0; readable && !drained && i < PUMP_ROUNDS && moved < PUMP_BYTES; i++) {
		long r;

		if (s->rd_eof || side_pending(other))
			break;
		r = tunnel_pump(c, s, other, &drained);
		if (r == -EAGAIN || r == 0)
			break;
		if (r < 0) {
			conn_close(c);
			return;
		}
		moved += r;
	}
	tunnel_return_pipes(c);
	if (tunnel_settle(c)) {
		conn_close(c);
		return;
	}
	conn_set_interest(c);
}

void tunnel_start(struct conn *c)
{
	c->st = CS_TUNNEL;
	if (side_flush(c, &c->c, NULL) != 0 || side_flush(c, &c->u, NULL) != 0) {
		conn_close(c);
		return;
	}
	if (tunnel_settle(c)) {
		conn_close(c);
		return;
	}
	conn_set_interest(c);
}
