/* A client connection's life: accept → the protocol's request → Decide → resolve →
 * check every address → dial → (CONNECT, SOCKS5: the first flight's TLS name checked)
 * tunnel, or the protocol's own forwarding → close. The protocol is the listener's
 * table of callbacks (struct proto_ops); nothing here knows which one it is.
 *
 * conn_close never frees on the spot: it closes the fds, cancels timers and the
 * lookup, marks the connection CS_DEAD and queues it for a zero-delay reap timer. Any
 * code that called something which may close (a send, a dial, an answer) therefore
 * only has to check `c->st == CS_DEAD` before going on; it can never touch freed
 * memory. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy/proxy_int.h"

static void on_client(void *arg, int fd, unsigned events);

void conn_touch(struct conn *c)
{
	if (c->px->o.idle_timeout_ms)
		c->last_io = proxy_now_ms();
}

void conn_timer_clear(struct conn *c, struct proxy_timer **t)
{
	proxy_timer_cancel(c->px->pl, *t);
	*t = NULL;
}

/* ------------------------------------------------------------------ sockets */

static int clamp_window(int fd, enum sock_role role)
{
#ifdef TCP_WINDOW_CLAMP
	int clamp = PROXY_SANDBOX_WINDOW;

	if (role == SOCK_SANDBOX)
		return setsockopt(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &clamp, sizeof(clamp));
#else
	(void)fd;
	(void)role;
#endif
	return 0;
}

/* 0 when every option took (a failure keeps the kernel's sizes: a bound on memory,
 * never a reason to refuse). */
int conn_sock_tune(int fd, enum sock_role role)
{
	int one = 1, lowat = PROXY_NOTSENT_LOWAT, bad = 0;

	bad |= setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
#ifdef TCP_NOTSENT_LOWAT
	bad |= setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof(lowat));
#else
	(void)lowat;
#endif
	bad |= clamp_window(fd, role);
#ifdef SO_NOSIGPIPE
	bad |= setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one));
#endif
	return bad ? -1 : 0;
}

int conn_sock_tune_listener(int lfd)
{
	return conn_sock_tune(lfd, SOCK_UPSTREAM); /* the same options, less the clamp */
}

/* Linux clones an accepted connection from its listener, with Nagle's setting and the
 * not-sent low-water mark: set once on the listener (proxy.c), they need no calls per
 * connection (the window clamp does: the handshake recomputes it). Read back on the
 * first connection, so that a kernel that copies less has every connection tuned in
 * full as before. */
bool conn_sock_inherited(int lfd, int fd)
{
#if defined(__linux__) && !defined(HALO_PORTABLE)
	int nodelay = 0, la = 0, lb = -1;
	socklen_t n = sizeof(nodelay), na = sizeof(la), nb = sizeof(lb);

	return getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, &n) == 0 && nodelay &&
	       getsockopt(lfd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &la, &na) == 0 &&
	       getsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lb, &nb) == 0 && la == lb;
#else
	(void)lfd;
	(void)fd;
	return false;
#endif
}

void conn_sock_tune_accepted(int fd, bool inherited)
{
	if (inherited)
		clamp_window(fd, SOCK_SANDBOX);
	else
		conn_sock_tune(fd, SOCK_SANDBOX);
}

void conn_side_drop(struct proxy *px, struct side *s)
{
	if (s->fd >= 0) {
		proxy_poller_del(px->pl, s->fd);
		close(s->fd);
	}
	s->fd = -1;
	s->ev = 0;
	pend_free(&s->out);
	relay_pipe_return(px, s);
}

/* ---------------------------------------------------------------- lifetime */

static void on_idle(void *arg)
{
	struct conn *c = arg;
	uint64_t now = proxy_now_ms(), idle = c->px->o.idle_timeout_ms;

	c->t_idle = NULL;
	/* Resolving and dialing have their own timers; everything else is idle when
	 * nothing moved for the whole period. */
	bool own_timer = c->st == CS_RESOLVING || c->st == CS_CONNECTING || c->st == CS_UPSTREAM;

	if (own_timer || now - c->last_io < idle) {
		uint64_t left = own_timer ? idle : idle - (now - c->last_io);
		c->t_idle = proxy_timer_add(c->px->pl, left, on_idle, c);
		if (c->t_idle)
			return;
	}
	if (c->ex.open && !c->ex.error)
		c->ex.error = "idle timeout";
	conn_close(c);
}

int conn_new(struct proxy *px, int fd, const struct listener *l)
{
	struct conn *c = calloc(1, sizeof(*c));
	int rc;

	if (!c)
		return -ENOMEM;
	c->px = px;
	c->proto = l->proto;
	c->st = CS_REQUEST;
	c->c.fd = fd;
	c->u.fd = -1;
	c->last_io = proxy_now_ms();
	c->secret = l->secret;
	if (px->o.audit_peers && (px->o.audit_fd >= 0 || audit_events_on(px)))
		proxy_peer_text(fd, c->peer, sizeof(c->peer));
	conn_sock_tune_accepted(fd, l->tune == LISTEN_TUNE_INHERITED);
	rc = proxy_poller_add(px->pl, fd, PROXY_EV_IN, on_client, c);
	if (rc) {
		free(c);
		return rc;
	}
	c->c.ev = PROXY_EV_IN;
	if (px->o.idle_timeout_ms) {
		c->t_idle = proxy_timer_add(px->pl, px->o.idle_timeout_ms, on_idle, c);
		if (!c->t_idle) {
			proxy_poller_del(px->pl, fd);
			free(c);
			return -ENOMEM;
		}
	}
	c->next = px->conns;
	if (px->conns)
		px->conns->prev = c;
	px->conns = c;
	if (px->o.head_from_accept)
		conn_head_timer_start(c);
	px->st.conns_open++;
	px->st.conns_total++;
	if (px->st.conns_open > px->peak_open)
		px->peak_open = px->st.conns_open;
	if (c->proto->on_accept)
		c->proto->on_accept(c, l); /* may close c: never touch it after */
	return 0;
}

/* After a burst, once the last connection is gone, hand the freed heap back: the
 * allocations of a burst are interleaved with long-lived ones (the poller's fd table
 * grows during it), so glibc's automatic trim of the heap top would keep most of it. */
#define TRIM_AFTER_PEAK 256

static void reap(void *arg)
{
	struct proxy *px = arg;

	px->reap_timer = NULL;
	while (px->reap) {
		struct conn *c = px->reap;
		px->reap = c->next;
		free(c);
	}
	if (px->st.conns_open == 0 && px->peak_open >= TRIM_AFTER_PEAK) {
		px->peak_open = 0;
#ifdef __GLIBC__
		malloc_trim(0);
#endif
	}
}

void conn_close(struct conn *c)
{
	struct proxy *px = c->px;

	if (c->st == CS_DEAD)
		return;
	conn_cancel_question(c);
	conn_exchange_end(c);
	/* `halo-run proxy` records every client: one that never got as far as a request
	 * (closed, or cut at shutdown) still leaves its peer in the audit. */
	if (px->o.audit_peers && c->peer[0] && !c->recorded)
		refusal_record(px, c->proto->audit_proto, "", 0, "proxy: no request",
			       "the connection ended before a request", "closed", c->peer);
	conn_timer_clear(c, &c->t_head);
	conn_timer_clear(c, &c->t_step);
	conn_timer_clear(c, &c->t_idle);
	if (c->job)
		proxy_resolver_cancel(px->res, c->job);
	c->job = NULL;
	conn_side_drop(px, &c->c);
	conn_side_drop(px, &c->u);
	free(c->in);
	c->in = NULL;
	c->in_len = c->in_cap = 0;
	free(c->addrs);
	c->addrs = NULL;
	free(c->up_head);
	c->up_head = NULL;
	free(c->hw);
	c->hw = NULL;
	if (c->proto->on_close)
		c->proto->on_close(c);
	c->pstate = NULL;
	c->st = CS_DEAD;
	if (c->prev)
		c->prev->next = c->next;
	else
		px->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	px->st.conns_open--;
	if (px->st.conns_open == 0) /* idle pipes are kept only while tunnels may want them */
		relay_pipes_close_idle(px);
	c->prev = NULL;
	c->next = px->reap;
	px->reap = c;
	if (!px->reap_timer)
		px->reap_timer = proxy_timer_add(px->pl, 0, reap, px);
	/* No timer (ENOMEM): the connection stays on the reap list until the next
	 * close or proxy_destroy frees it. */
}

/* --------------------------------------------------------------- interest */

static unsigned want_client(const struct conn *c)
{
	unsigned out = side_pending(&c->c) ? PROXY_EV_OUT : 0;

	switch (c->st) {
	case CS_REQUEST:
		return out ? out : (c->c.rd_eof ? 0 : PROXY_EV_IN);
	case CS_TUNNEL:
		return out | (!c->c.rd_eof && !side_pending(&c->u) ? PROXY_EV_IN : 0);
	case CS_HELLO: /* reads are bounded by the hello's buffer, not by the origin */
		return out | (!c->c.rd_eof && c->in_len < PROXY_TLS_HELLO_MAX ? PROXY_EV_IN : 0);
	case CS_FORWARD:
		return out | (c->proto->fwd_wants_client(c) ? PROXY_EV_IN : 0);
	case CS_CLOSING:
		return out ? out : (c->c.wr_shut && !c->c.rd_eof ? PROXY_EV_IN : 0);
	case CS_RESOLVING:
	case CS_CONNECTING:
	case CS_UPSTREAM:
		/* Not read while the target is reached. A client that waits for our answer
		 * keeps the read interest it has (nothing fires: no poller change now nor
		 * at the answer); once it stirs anyway (bytes early, a hang-up), it is
		 * taken out as for every other protocol. */
		if (out || !c->proto->client_waits || c->client_quiet || c->c.rd_eof)
			return out;
		return c->c.ev & PROXY_EV_IN;
	default:
		return out;
	}
}

static unsigned want_upstream(const struct conn *c)
{
	unsigned out = side_pending(&c->u) ? PROXY_EV_OUT : 0;

	if (c->u.fd < 0)
		return 0;
	switch (c->st) {
	case CS_CONNECTING:
		return PROXY_EV_OUT;
	case CS_UPSTREAM: /* our CONNECT first, then its answer */
		return out ? out : PROXY_EV_IN;
	case CS_FORWARD:
		if (c->proto->fwd_wants_upstream)
			return out | (c->proto->fwd_wants_upstream(c) ? PROXY_EV_IN : 0);
		/* fall through */
	case CS_HELLO: /* the origin may speak first: its bytes flow while the client's wait */
	case CS_TUNNEL:
		return out | (!c->u.rd_eof && !side_pending(&c->c) ? PROXY_EV_IN : 0);
	default:
		return 0;
	}
}

void conn_set_interest(struct conn *c)
{
	unsigned w;

	if (c->st == CS_DEAD)
		return;
	w = want_client(c);
	if (w != c->c.ev && proxy_poller_mod(c->px->pl, c->c.fd, w) == 0)
		c->c.ev = w;
	w = want_upstream(c);
	if (c->u.fd >= 0 && w != c->u.ev && proxy_poller_mod(c->px->pl, c->u.fd, w) == 0)
		c->u.ev = w;
}

/* ------------------------------------------------------------ client input */

int conn_in_reserve(struct conn *c, size_t want)
{
	size_t cap = c->in_cap ? c->in_cap : 1024;
	char *b;

	if (c->in_cap - c->in_len >= want)
		return 0;
	while (cap - c->in_len < want)
		cap *= 2;
	b = realloc(c->in, cap);
	if (!b)
		return -ENOMEM;
	c->in = b;
	c->in_cap = cap;
	return 0;
}

void conn_in_consume(struct conn *c, size_t n)
{
	if (n >= c->in_len) {
		free(c->in);
		c->in = NULL;
		c->in_len = c->in_cap = 0;
		return;
	}
	memmove(c->in, c->in + n, c->in_len - n);
	c->in_len -= n;
}

static void on_head_timeout(void *arg)
{
	struct conn *c = arg;

	c->t_head = NULL;
	conn_fail(c, FAIL_HEAD_TIMEOUT, NULL);
}

void conn_head_timer_start(struct conn *c)
{
	if (!c->t_head)
		c->t_head =
		    proxy_timer_add(c->px->pl, c->px->o.head_timeout_ms, on_head_timeout, c);
}

/* ---------------------------------------------------------------- closing */

static void on_linger_done(void *arg)
{
	struct conn *c = arg;

	c->t_step = NULL;
	conn_close(c);
}

/* The answer is out: stop writing, and read (and drop) what the client still sends
 * for a moment, so that closing with unread input does not reset the connection
 * before the client has read the answer. */
static void closing_progress(struct conn *c)
{
	if (c->c.out.len) {
		conn_set_interest(c);
		return;
	}
	if (!c->c.wr_shut) {
		shutdown(c->c.fd, SHUT_WR);
		c->c.wr_shut = true;
		c->t_step = proxy_timer_add(c->px->pl, PROXY_LINGER_MS, on_linger_done, c);
		if (!c->t_step) {
			conn_close(c);
			return;
		}
	}
	if (c->c.rd_eof) {
		conn_close(c);
		return;
	}
	conn_set_interest(c);
}

static void closing_on_client(struct conn *c, unsigned events)
{
	if (side_flush(c, &c->c, NULL) != 0) {
		conn_close(c);
		return;
	}
	if ((events & (PROXY_EV_IN | PROXY_EV_ERR)) && c->c.wr_shut) {
		ssize_t n = recv(c->c.fd, c->px->scratch, PROXY_SCRATCH_SIZE, 0);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			conn_close(c);
			return;
		}
		if (n > 0) {
			c->linger_bytes += (unsigned)n;
			if (c->linger_bytes > PROXY_LINGER_BYTES) {
				conn_close(c);
				return;
			}
		}
	}
	closing_progress(c);
}

void conn_answer_close(struct conn *c, const void *buf, size_t len)
{
	conn_timer_clear(c, &c->t_head);
	conn_timer_clear(c, &c->t_step);
	if (c->job)
		proxy_resolver_cancel(c->px->res, c->job);
	c->job = NULL;
	conn_side_drop(c->px, &c->u);
	c->st = CS_CLOSING;
	if (side_send(c, &c->c, buf, len, NULL) != 0) {
		conn_close(c);
		return;
	}
	closing_progress(c);
}

/* --------------------------------------------------------------- callbacks */

void conn_on_client_flush(struct conn *c, unsigned events)
{
	(void)events;
	if (side_flush(c, &c->c, NULL) != 0)
		conn_close(c);
	else
		conn_set_interest(c);
}

static void on_client(void *arg, int fd, unsigned events)
{
	struct conn *c = arg;

	(void)fd;
	switch (c->st) {
	case CS_REQUEST:
		c->proto->on_request(c, events);
		break;
	case CS_TUNNEL:
		tunnel_on_event(c, &c->c, events);
		break;
	case CS_HELLO:
		hello_on_client(c, events);
		break;
	case CS_FORWARD:
		c->proto->fwd_on_client(c, events);
		break;
	case CS_CLOSING:
		closing_on_client(c, events);
		break;
	case CS_RESOLVING:
	case CS_CONNECTING:
	case CS_UPSTREAM:
		c->client_quiet = true; /* want_client: not read until the answer */
		conn_on_client_flush(c, events);
		break;
	case CS_DEAD:
		break;
	}
}

void conn_on_upstream(void *arg, int fd, unsigned events)
{
	struct conn *c = arg;

	(void)fd;
	switch (c->st) {
	case CS_CONNECTING:
		conn_connect_done(c, events);
		break;
	case CS_UPSTREAM:
		upstream_on_event(c, events);
		break;
	case CS_HELLO:
		hello_on_upstream(c, events);
		break;
	case CS_TUNNEL:
		tunnel_on_event(c, &c->u, events);
		break;
	case CS_FORWARD:
		c->proto->fwd_on_upstream(c, events);
		break;
	default:
		break;
	}
}
