/* The proxy's lifetime: listeners, accepting (with the out-of-fds answer), the
 * host's own addresses, counters. Connections live in conn.c and friends.
 *
 * Out of file descriptors: accept() keeps failing with EMFILE while the pending
 * connection stays queued, which would spin a level-triggered loop. One fd is kept in
 * reserve (/dev/null): on EMFILE it is released, the pending client accepted and
 * answered 503 (HTTP) or closed (SOCKS5, which has no reply before its request), the
 * reserve re-taken, and the listener paused for PROXY_ACCEPT_PAUSE_MS. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy/proxy_int.h"

/* ------------------------------------------------------------------ accept */

static int accept_nb(int lfd)
{
#if defined(__linux__) && !defined(HALO_PORTABLE)
	return accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
#else
	int fd = accept(lfd, NULL, NULL);

	if (fd >= 0) {
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	}
	return fd;
#endif
}

static void on_accept(void *arg, int fd, unsigned events);

static void resume_listener(void *arg)
{
	struct listener *l = arg;

	l->resume = NULL;
	l->paused = false;
	proxy_poller_mod(l->px->pl, l->fd, PROXY_EV_IN);
}

static void pause_listener(struct listener *l)
{
	if (l->paused)
		return;
	l->resume = proxy_timer_add(l->px->pl, PROXY_ACCEPT_PAUSE_MS, resume_listener, l);
	if (!l->resume)
		return; /* cannot schedule the resume: keep accepting rather than go deaf */
	l->paused = true;
	proxy_poller_mod(l->px->pl, l->fd, 0);
}

/* Answer one pending client without keeping it: read what it sent (so the close is
 * not a reset that could destroy the answer), answer, close. `rule` names what
 * refused it, for its audit record (refusal.c). */
static void refuse_one(struct proxy *px, int fd, const struct proto_ops *proto, const char *rule)
{
	char busy[512];
	static const char why[] = "too many open connections, retry later";
	int n = proto->busy_answer ? proto->busy_answer(busy, sizeof(busy), why) : 0;
	const char *code = proto->busy_code ? proto->busy_code : "closed";
	char peer[96] = "";
	ssize_t w;

	while (recv(fd, px->scratch, PROXY_SCRATCH_SIZE, MSG_DONTWAIT) > 0)
		;
	px->st.refused++;
	audit_error_line(px, "", 0, why, code);
	if (px->o.audit_peers && (px->o.audit_fd >= 0 || audit_events_on(px)))
		proxy_peer_text(fd, peer, sizeof(peer));
	refusal_record(px, proto->audit_proto, "", 0, rule, why, code, peer);
	if (n > 0) {
#ifdef MSG_NOSIGNAL
		w = send(fd, busy, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
#else
		w = send(fd, busy, (size_t)n, MSG_DONTWAIT);
#endif
		(void)w;
		shutdown(fd, SHUT_WR);
		while (recv(fd, px->scratch, PROXY_SCRATCH_SIZE, MSG_DONTWAIT) > 0)
			;
	}
	close(fd);
}

static void out_of_fds(struct listener *l)
{
	struct proxy *px = l->px;

	if (px->reserve_fd >= 0) {
		int fd;

		close(px->reserve_fd);
		px->reserve_fd = -1;
		fd = accept_nb(l->fd);
		if (fd >= 0)
			refuse_one(px, fd, l->proto, "proxy: out of file descriptors");
		px->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	pause_listener(l);
}

/* The listener's tuning as its connections come (struct listener's tune says the
 * states); fd is the one just accepted. */
static void tune_step(struct listener *l, int fd)
{
	if (l->tune == LISTEN_TUNE_LAZY)
		l->tune = conn_sock_tune_listener(l->fd) == 0 ? LISTEN_TUNE_FULL : LISTEN_TUNE_EACH;
	else if (l->tune == LISTEN_TUNE_CHECK)
		l->tune = conn_sock_inherited(l->fd, fd) ? LISTEN_TUNE_INHERITED : LISTEN_TUNE_EACH;
}

static void on_accept(void *arg, int lfd, unsigned events)
{
	struct listener *l = arg;
	struct proxy *px = l->px;

	(void)events;
	for (int i = 0; i < 64; i++) {
		int fd = accept_nb(lfd);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
				continue;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				out_of_fds(l);
			else if (l->tune == LISTEN_TUNE_FULL && errno == EAGAIN)
				l->tune =
				    LISTEN_TUNE_CHECK; /* all queued before the tuning taken */
			return;
		}
		tune_step(l, fd);
		if (px->st.conns_open >= px->o.max_conns) {
			char rule[64];

			snprintf(rule, sizeof(rule), "limits.connections (%zu open)",
				 px->o.max_conns);
			if (!px->said_conn_cap) /* --events: once per run */
				audit_limit_event(px, "connections", (long long)px->o.max_conns,
						  "connection refused");
			px->said_conn_cap = true;
			refuse_one(px, fd, l->proto, rule);
		} else if (conn_new(px, fd, l) != 0) {
			refuse_one(px, fd, l->proto, "proxy: out of memory");
		}
	}
}

/* ---------------------------------------------------------------- lifetime */

/* What each listener speaks: the connection core reaches a protocol only through
 * its table. */
static const struct proto_ops *const protos[] = {
    [PROXY_LISTEN_HTTP] = &proxy_proto_http,
    [PROXY_LISTEN_SOCKS5] = &proxy_proto_socks5,
    [PROXY_LISTEN_HOSTPORT] = &proxy_proto_hostport,
    [PROXY_LISTEN_DNS_UDP] = &proxy_proto_dns_tcp, /* not accepted on: read as datagrams */
    [PROXY_LISTEN_DNS_TCP] = &proxy_proto_dns_tcp,
    [PROXY_LISTEN_CAPTURE] = &proxy_proto_captured,
};

static const struct proto_ops *proto_of(enum proxy_listener_kind kind)
{
	return (size_t)kind < sizeof(protos) / sizeof(protos[0]) ? protos[kind] : NULL;
}

static void set_defaults(struct proxy_options *o)
{
	if (!o->head_timeout_ms)
		o->head_timeout_ms = 10000;
	if (!o->dns_timeout_ms)
		o->dns_timeout_ms = 5000;
	if (!o->connect_timeout_ms)
		o->connect_timeout_ms = 10000;
	/* limits.connections, else its default (policy.h says why 256). */
	if (!o->max_conns)
		o->max_conns = o->policy->limits.connections > 0
				   ? (size_t)o->policy->limits.connections
				   : POLICY_CONNECTIONS_DEFAULT;
}

/* On failure the listener fds stay the caller's: unwatch, do not close. */
static void fail_unwatch(struct proxy *px)
{
	for (size_t i = 0; i < px->n_lsn; i++)
		proxy_poller_del(px->pl, px->lsn[i].fd);
	px->n_lsn = 0;
	proxy_destroy(px);
}

int proxy_create(struct proxy_poller *pl, const struct proxy_options *o, struct proxy **out,
		 struct halo_err *e)
{
	struct proxy *px;
	int rc;

	*out = NULL;
	if (!o->policy || o->n_listeners > PROXY_MAX_LISTENERS) {
		halo_err_set(e, "proxy: %s", !o->policy ? "no policy" : "too many listeners");
		return -EINVAL;
	}
	for (size_t i = 0; i < o->n_listeners; i++) {
		if (!proto_of(o->listeners[i].kind)) {
			halo_err_set(e, "proxy: listener %zu: unknown kind %d", i,
				     (int)o->listeners[i].kind);
			return -EINVAL;
		}
	}
	px = calloc(1, sizeof(*px));
	if (!px || !(px->scratch = malloc(PROXY_SCRATCH_SIZE))) {
		free(px);
		halo_err_set(e, "proxy: out of memory");
		return -ENOMEM;
	}
	px->pl = pl;
	px->o = *o;
	set_defaults(&px->o);
	upstream_init(px, o->upstream);
	px->o.upstream = NULL; /* px->up holds the copy */
	px->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	/* The interface list is loaded at the first address check, not here: most runs
	 * never check one, and the launch should not pay for a netlink dump. */
	rc = proxy_resolver_new(pl, 0, &px->res);
	if (rc) {
		halo_err_set(e, "proxy: cannot start the resolver: %s", strerror(-rc));
		fail_unwatch(px);
		return rc;
	}
	for (size_t i = 0; i < o->n_listeners; i++) {
		struct listener *l = &px->lsn[i];

		l->px = px;
		l->fd = o->listeners[i].fd;
		l->proto = proto_of(o->listeners[i].kind);
		l->port = o->listeners[i].port;
		l->index = o->listeners[i].index;
		l->secret = o->listeners[i].secret;
		px->n_lsn = i + 1;
		if (!o->listeners[i].nonblocking)
			fcntl(l->fd, F_SETFL, fcntl(l->fd, F_GETFL) | O_NONBLOCK);
		px->capture |= o->listeners[i].kind == PROXY_LISTEN_CAPTURE;
		l->dgram = o->listeners[i].kind == PROXY_LISTEN_DNS_UDP;
		l->tune = LISTEN_TUNE_LAZY; /* at its first connection (tune_step) */
		if (l->dgram)
			rc = proxy_poller_add(pl, l->fd, PROXY_EV_IN, proxy_dns_udp_on_event, px);
		else
			rc = proxy_poller_add(pl, l->fd, PROXY_EV_IN, on_accept, l);
		if (rc) {
			halo_err_set(e, "proxy: cannot watch listener %zu: %s", i, strerror(-rc));
			px->n_lsn = i;
			fail_unwatch(px);
			return rc;
		}
	}
	*out = px;
	return 0;
}

/* What the sandbox's clients left queued when it ended: connections its listeners
 * had not accepted yet (the loop stops at the exit, which may come first in its
 * round), and DNS questions. Taken now, so that what they asked is decided, counted
 * and recorded like anything else: a denial is never lost to the order of events. */
static void take_queued(struct proxy *px)
{
	int fds[PROXY_MAX_LISTENERS];
	bool ready[PROXY_MAX_LISTENERS];

	/* Which hold something: one wait, not an accept (or a read) per listener. */
	for (size_t i = 0; i < px->n_lsn; i++)
		fds[i] = px->lsn[i].fd;
	if (proxy_poller_peek(px->pl, fds, px->n_lsn, ready) < 0)
		memset(ready, 1, sizeof(ready)); /* cannot say: each one tried */
	for (size_t i = 0; i < px->n_lsn; i++) {
		struct listener *l = &px->lsn[i];

		if (!ready[i])
			continue;
		if (l->dgram)
			proxy_dns_udp_on_event(px, l->fd, PROXY_EV_IN);
		else if (!l->paused)
			on_accept(l, l->fd, PROXY_EV_IN);
	}
}

void proxy_drain(struct proxy *px, unsigned ms)
{
	uint64_t end = proxy_now_ms() + ms;

	if (!px)
		return;
	take_queued(px);
	while (px->conns) {
		uint64_t now = proxy_now_ms();
		if (now >= end || proxy_poller_run_once(px->pl, (int)(end - now)) < 0)
			break;
		take_queued(px);
	}
	/* What is still open is closed now, each one recorded (a decision still pending
	 * counts as a denial), so that --fail-on-deny and the summary that follow see it. */
	while (px->conns) {
		struct conn *c = px->conns;
		if (c->ex.open && !c->ex.error)
			c->ex.error =
			    c->ex.allow ? "proxy stopped" : "the run ended before the decision";
		conn_close(c);
	}
	/* The refusals still counted in their second are written now: --summary-md and
	 * the lost-records check that follow read the audit before proxy_destroy. */
	refusal_flush(px);
}

void proxy_set_policy(struct proxy *px, const struct halo_policy *p)
{
	if (px && p)
		px->o.policy = p;
}

void proxy_close_listeners(struct proxy *px)
{
	for (size_t i = 0; px && i < px->n_lsn; i++) {
		proxy_timer_cancel(px->pl, px->lsn[i].resume);
		proxy_poller_del(px->pl, px->lsn[i].fd);
		close(px->lsn[i].fd);
	}
	if (px)
		px->n_lsn = 0;
}

void proxy_destroy(struct proxy *px)
{
	if (!px)
		return;
	while (px->conns) {
		struct conn *c = px->conns;
		if (c->ex.open && c->ex.allow && !c->ex.error)
			c->ex.error = "proxy stopped";
		conn_close(c);
	}
	refusal_flush(px);
	proxy_timer_cancel(px->pl, px->reap_timer);
	px->reap_timer = NULL;
	while (px->reap) {
		struct conn *c = px->reap;
		px->reap = c->next;
		free(c);
	}
	/* At the process's end the listeners and the reserve are left to the exit: no
	 * client can reach them any more (drained, the sandbox gone). */
	bool keep = proxy_poller_ending(px->pl);
	for (size_t i = 0; i < px->n_lsn; i++) {
		proxy_timer_cancel(px->pl, px->lsn[i].resume);
		proxy_poller_del(px->pl, px->lsn[i].fd);
		if (!keep)
			close(px->lsn[i].fd);
	}
	proxy_resolver_free(px->res);
	if (px->reserve_fd >= 0 && !keep)
		close(px->reserve_fd);
	hosts_free(&px->hosts);
	namebudget_free(&px->names);
	proxy_fakeip_free(&px->fake);
	free(px->ifaddrs);
	free(px->scratch);
	free(px);
}

void proxy_get_stats(const struct proxy *px, struct proxy_stats *st)
{
	*st = px->st;
}
