/* Reaching the target: Decide, resolve off the loop, check every answer, then dial
 * the checked addresses in order with non-blocking connects. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy/proxy_int.h"

static void dial_next(struct conn *c);
static int set_addrs(struct conn *c, const struct proxy_addr *a, size_t n);

static int sock_open(int family)
{
#if defined(SOCK_NONBLOCK) && !defined(HALO_PORTABLE)
	return socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
#else
	int fd = socket(family, SOCK_STREAM, 0);

	if (fd >= 0) {
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	}
	return fd;
#endif
}

/* ------------------------------------------------------------------ dialing */

static void addr_text(const struct proxy_addr *a, char *out, size_t n)
{
	if (!inet_ntop(a->family, a->addr, out, (socklen_t)n))
		snprintf(out, n, "?");
}

static socklen_t addr_sockaddr(const struct proxy_addr *a, unsigned port,
			       struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		memcpy(&sin->sin_addr, a->addr, 4);
		return sizeof(*sin);
	}
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons((uint16_t)port);
	memcpy(&sin6->sin6_addr, a->addr, 16);
	return sizeof(*sin6);
}

static enum conn_fail fail_for_errno(int err)
{
	switch (err) {
	case ECONNREFUSED:
		return FAIL_REFUSED;
	case ENETUNREACH:
	case ENETDOWN:
		return FAIL_NET_UNREACH;
	case ETIMEDOUT:
		return FAIL_CONNECT_TIMEOUT;
	case EMFILE:
	case ENFILE:
	case ENOBUFS:
	case ENOMEM:
		return FAIL_OVERLOAD;
	default:
		return FAIL_HOST_UNREACH;
	}
}

/* Every address failed: the upstream's failure names the upstream. */
static void dial_failed(struct conn *c, enum conn_fail why)
{
	if (c->via_up)
		upstream_dial_failed(c, why);
	else
		conn_fail(c, why, NULL);
}

static void on_connect_timeout(void *arg)
{
	struct conn *c = arg;

	c->t_step = NULL;
	conn_side_drop(c->px, &c->u);
	c->last_connect_err = ETIMEDOUT;
	c->cur++;
	if (proxy_now_ms() >= c->connect_deadline) {
		if (!c->via_up)
			addr_text(&c->addrs[c->cur - 1], c->ex.addr, sizeof(c->ex.addr));
		dial_failed(c, FAIL_CONNECT_TIMEOUT);
		return;
	}
	dial_next(c);
}

/* Each attempt gets an equal share of what is left of the connect budget, so an
 * address that swallows SYNs cannot use up the time the next one needs. */
static uint64_t attempt_budget(const struct conn *c)
{
	uint64_t now = proxy_now_ms(), left, share;
	size_t addrs_left = c->n_addrs - c->cur;

	left = c->connect_deadline > now ? c->connect_deadline - now : 0;
	share = addrs_left ? left / addrs_left : left;
	if (share < 1000 && left > 1000)
		share = 1000;
	return share;
}

static void connected(struct conn *c)
{
	conn_timer_clear(c, &c->t_step);
	if (!c->via_up) /* through the upstream, ex.addr keeps the checked address */
		addr_text(&c->addrs[c->cur], c->ex.addr, sizeof(c->ex.addr));
	free(c->addrs);
	c->addrs = NULL;
	c->n_addrs = c->cur = 0;
	if (c->via_up)
		upstream_connected(c);
	else
		c->proto->on_connected(c);
}

#if defined(__linux__) && !defined(HALO_PORTABLE)
static bool loopback(const struct proxy_addr *a)
{
	static const uint8_t v6_lo[16] = {[15] = 1};
	static const uint8_t v4_mapped[12] = {[10] = 0xff, [11] = 0xff};

	if (a->family == AF_INET)
		return a->addr[0] == 127;
	return !memcmp(a->addr, v6_lo, 16) ||
	       (!memcmp(a->addr, v4_mapped, 12) && a->addr[12] == 127);
}
#endif

/* A handshake with a loopback address is done before connect() returns (the kernel
 * runs the listener's side within the call) although a non-blocking connect still
 * says EINPROGRESS. Asked once more, connect() gives the outcome now: 0 (connected:
 * no wait for writability, no poller change from OUT to IN), the failure, or
 * EALREADY when it is still under way (the poller then waits as for any address).
 * Linux only: elsewhere a second connect() may say EISCONN, as this code does not
 * expect. 0: connected; -EINPROGRESS: not yet; else the connection's failure. */
static int connect_settled(const struct proxy_addr *a, int fd, const struct sockaddr *sa,
			   socklen_t sl)
{
#if defined(__linux__) && !defined(HALO_PORTABLE)
	int rc;

	if (!loopback(a))
		return -EINPROGRESS;
	do
		rc = connect(fd, sa, sl);
	while (rc < 0 && errno == EINTR);
	if (rc == 0)
		return 0;
	return errno == EALREADY || errno == EINPROGRESS ? -EINPROGRESS : -errno;
#else
	(void)a;
	(void)fd;
	(void)sa;
	(void)sl;
	return -EINPROGRESS;
#endif
}

static void dial_next(struct conn *c)
{
	for (; c->cur < c->n_addrs; c->cur++) {
		struct sockaddr_storage ss;
		socklen_t sl = addr_sockaddr(&c->addrs[c->cur], c->dial_port, &ss);
		int fd = sock_open(c->addrs[c->cur].family), rc;

		if (fd < 0) {
			c->last_connect_err = errno;
			if (errno == EMFILE || errno == ENFILE || errno == ENOMEM ||
			    errno == ENOBUFS)
				break;
			continue;
		}
		conn_sock_tune(fd, SOCK_UPSTREAM);
		do
			rc = connect(fd, (struct sockaddr *)&ss, sl);
		while (rc < 0 && errno == EINTR);
		if (rc < 0 && errno != EINPROGRESS) {
			c->last_connect_err = errno;
			close(fd);
			continue;
		}
		if (rc < 0)
			rc = connect_settled(&c->addrs[c->cur], fd, (struct sockaddr *)&ss, sl);
		if (rc < 0 && rc != -EINPROGRESS) {
			c->last_connect_err = -rc;
			close(fd);
			continue;
		}
		c->u.fd = fd;
		/* Connected already: registered quiet (no epoll call), the protocol's
		 * answer sets the interest it needs. */
		if (proxy_poller_add(c->px->pl, fd, rc == 0 ? 0 : PROXY_EV_OUT, conn_on_upstream,
				     c) != 0) {
			c->u.fd = -1;
			close(fd);
			c->last_connect_err = ENOMEM;
			break;
		}
		c->u.ev = rc == 0 ? 0 : PROXY_EV_OUT;
		c->st = CS_CONNECTING;
		if (rc == 0) {
			connected(c); /* may close c */
			return;
		}
		c->t_step = proxy_timer_add(c->px->pl, attempt_budget(c), on_connect_timeout, c);
		if (!c->t_step) {
			conn_fail(c, FAIL_INTERNAL, NULL);
			return;
		}
		conn_set_interest(c);
		return;
	}
	if (c->n_addrs && !c->via_up) /* the audit names the last address that failed */
		addr_text(&c->addrs[c->n_addrs - 1], c->ex.addr, sizeof(c->ex.addr));
	dial_failed(c, fail_for_errno(c->last_connect_err));
}

/* Linux reports a connecting TCP socket writable only once the handshake is done, and
 * with EPOLLERR/EPOLLHUP (PROXY_EV_ERR) once it has failed, whose reason stays in
 * SO_ERROR until read: writable and nothing else is a connection, without asking.
 * Elsewhere (BSD poll() may say writable with the error pending) the socket is asked
 * every time. */
static bool plainly_connected(unsigned events)
{
#if defined(__linux__) && !defined(HALO_PORTABLE)
	return (events & (PROXY_EV_OUT | PROXY_EV_ERR)) == PROXY_EV_OUT;
#else
	(void)events;
	return false;
#endif
}

void conn_connect_done(struct conn *c, unsigned events)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (!plainly_connected(events) &&
	    getsockopt(c->u.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
		err = errno;
	if (err == 0) {
		connected(c);
		return;
	}
	conn_timer_clear(c, &c->t_step);
	conn_side_drop(c->px, &c->u);
	c->last_connect_err = err;
	c->cur++;
	dial_next(c);
}

/* halo-run learn: tell the learner (no-op when not learning). */
static void learn_note(struct conn *c, enum proxy_learn_kind k)
{
	const struct proxy_learner *ln = c->px->o.learner;

	if (ln)
		ln->note(ln->ctx, k, c->ex.host, c->ex.port, audit_proto_name(c->ex.proto),
			 c->ex.addr, c->ex.cls, c->ex.rule);
}

/* Every answer is checked before the first dial: one refused address refuses the
 * name, so a rebinding answer mixing a public and a private address never gets
 * through on the public one either. */
static void check_and_dial(struct conn *c)
{
	for (size_t i = 0; i < c->n_addrs; i++) {
		const char *cls = NULL;

		if (!proxy_addr_ok(c->px, &c->addrs[i], &cls)) {
			addr_text(&c->addrs[i], c->ex.addr, sizeof(c->ex.addr));
			c->ex.cls = cls;
			snprintf(c->ex.rule, sizeof(c->ex.rule),
				 "address %s is %s, not in allowPrivate", c->ex.addr, cls);
			learn_note(c, PROXY_LEARN_PRIVATE);
			conn_fail(c, FAIL_ADDR, NULL);
			return;
		}
		if (upstream_is_target(c->px, &c->addrs[i], c->ex.port)) {
			addr_text(&c->addrs[i], c->ex.addr, sizeof(c->ex.addr));
			c->ex.cls = "upstream";
			snprintf(c->ex.rule, sizeof(c->ex.rule),
				 "address %s port %u is the upstream proxy (egress.upstreamProxy)",
				 c->ex.addr, c->ex.port);
			conn_fail(c, FAIL_ADDR, NULL);
			return;
		}
	}
	if (c->via_up) { /* the audit names the (first) address the name was checked at */
		addr_text(&c->addrs[0], c->ex.addr, sizeof(c->ex.addr));
		upstream_dial(c);
		return;
	}
	c->cur = 0;
	c->dial_port = c->ex.port;
	c->connect_deadline = proxy_now_ms() + c->px->o.connect_timeout_ms;
	dial_next(c);
}

/* The upstream's addresses: dialled in order on its port, never address-checked. */
void conn_dial_upstream(struct conn *c, const struct proxy_addr *a, size_t n, unsigned port)
{
	if (set_addrs(c, a, n) != 0) {
		conn_fail(c, FAIL_OVERLOAD, NULL);
		return;
	}
	c->cur = 0;
	c->dial_port = port;
	c->connect_deadline = proxy_now_ms() + c->px->o.connect_timeout_ms;
	dial_next(c);
}

static int set_addrs(struct conn *c, const struct proxy_addr *a, size_t n)
{
	free(c->addrs);
	c->addrs = calloc(n, sizeof(*a));
	if (!c->addrs)
		return -ENOMEM;
	memcpy(c->addrs, a, n * sizeof(*a));
	c->n_addrs = n;
	return 0;
}

void conn_dial(struct conn *c, const struct proxy_addr *a, size_t n)
{
	if (set_addrs(c, a, n) != 0) {
		conn_fail(c, FAIL_OVERLOAD, NULL);
		return;
	}
	c->cur = 0;
	c->dial_port = c->ex.port;
	c->connect_deadline = proxy_now_ms() + c->px->o.connect_timeout_ms;
	dial_next(c);
}

static void on_resolved(void *arg, int err, const struct proxy_addr *a, size_t n)
{
	struct conn *c = arg;

	c->job = NULL;
	conn_timer_clear(c, &c->t_step);
	if (err) {
		conn_fail(c, err == -ENOENT ? FAIL_DNS_NONAME : FAIL_DNS, NULL);
		return;
	}
	if (set_addrs(c, a, n) != 0) {
		conn_fail(c, FAIL_OVERLOAD, NULL);
		return;
	}
	check_and_dial(c);
}

static void on_dns_timeout(void *arg)
{
	struct conn *c = arg;

	c->t_step = NULL;
	proxy_resolver_cancel(c->px->res, c->job);
	c->job = NULL;
	conn_fail(c, FAIL_DNS_TIMEOUT, NULL);
}

/* After the decision (Decide's, or the decider's): refuse, or resolve, check, dial. */
static void target_proceed(struct conn *c, const struct policy_decision *d, bool parsed)
{
	int rc;

	if (parsed && !d->allow && c->px->o.learner) {
		struct policy_decision l = *d;

		/* learn: the default's denial only (policy/ says which); a rule's stays */
		if (policy_decision_learn(&l)) {
			policy_decision_rule(&l, c->ex.rule, sizeof(c->ex.rule));
			c->ex.allow = true;
			learn_note(c, PROXY_LEARN_HOST);
			target_proceed(c, &l, parsed);
			return;
		}
		learn_note(c, PROXY_LEARN_DENIED);
	} else if (parsed && d->allow && d->rule == POLICY_RULE_DECIDER) {
		learn_note(c, PROXY_LEARN_HOST); /* without the decider, the policy must say it */
	}
	c->ex.allow = d->allow && parsed;
	if (!c->ex.allow) {
		conn_fail(c, FAIL_DENY, NULL);
		return;
	}
	if (d->rule == POLICY_RULE_HOST_PORT) {
		/* As the hostPorts listener (conn_hostport.c): the host's 127.0.0.1, then
		 * [::1], on the listed port; no address check, never the upstream. */
		struct proxy_addr lo[2] = {{.family = AF_INET, .addr = {127, 0, 0, 1}},
					   {.family = AF_INET6, .addr = {[15] = 1}}};

		c->via_up = false; /* a kept connection's last exchange may have used it */
		conn_dial(c, lo, 2);
		return;
	}
	c->via_up = upstream_wanted(c->px, &d->host, c->ex.port); /* only for an allowed name */
	c->ex.via_upstream = c->via_up;
	if (d->host.kind != POLICY_HOST_NAME) {
		struct proxy_addr a = {.family =
					   d->host.kind == POLICY_HOST_IPV4 ? AF_INET : AF_INET6};

		memcpy(a.addr, d->host.addr, a.family == AF_INET ? 4 : 16);
		if (set_addrs(c, &a, 1) != 0) {
			conn_fail(c, FAIL_OVERLOAD, NULL);
			return;
		}
		check_and_dial(c);
		return;
	}
	/* A name a wildcard allowed is looked up by the host's resolver: budgeted. */
	if (d->pattern && d->pattern[0] == '*' &&
	    (rc = namebudget_charge(c->px, d->host.text, c->ex.rule, sizeof(c->ex.rule))) != 0) {
		c->ex.allow = rc != -EDQUOT;
		conn_fail(c, rc == -EDQUOT ? FAIL_DENY : FAIL_OVERLOAD, NULL);
		return;
	}
	c->st = CS_RESOLVING;
	rc = proxy_resolver_submit(c->px->res, d->host.text, on_resolved, c, &c->job);
	if (rc) {
		conn_fail(c, rc == -ENOMEM ? FAIL_OVERLOAD : FAIL_DNS, NULL);
		return;
	}
	c->t_step = proxy_timer_add(c->px->pl, c->px->o.dns_timeout_ms, on_dns_timeout, c);
	if (!c->t_step) {
		conn_fail(c, FAIL_OVERLOAD, NULL);
		return;
	}
	conn_set_interest(c);
}

/* The decider's answer (or the default, with why). The host is decided again from
 * its canonical text: the same answer as before, and the parsed host to dial. */
static void on_verdict(void *arg, enum proxy_verdict v, const char *why)
{
	struct conn *c = arg;
	struct policy_decision d;
	size_t n;

	c->ask_ticket = 0;
	if (c->st == CS_DEAD)
		return;
	if (policy_decide_target(c->px->o.policy, c->ex.host, strlen(c->ex.host), c->ex.port, &d) !=
		0 ||
	    !policy_decision_unmatched(&d)) {
		snprintf(c->ex.rule, sizeof(c->ex.rule), "policy error: %s", d.why);
		d.allow = false;
		target_proceed(c, &d, false);
		return;
	}
	if (v != PROXY_VERDICT_DEFAULT) {
		d.rule = POLICY_RULE_DECIDER;
		d.allow = v == PROXY_VERDICT_ALLOW;
	}
	policy_decision_rule(&d, c->ex.rule, sizeof(c->ex.rule));
	n = strlen(c->ex.rule);
	if (v == PROXY_VERDICT_DEFAULT && why && *why)
		snprintf(c->ex.rule + n, sizeof(c->ex.rule) - n, " (%s)", why);
	target_proceed(c, &d, true);
}

void conn_cancel_question(struct conn *c)
{
	const struct proxy_decider *dc = c->px->o.decider;

	if (c->ask_ticket && dc)
		dc->cancel(dc->ctx, c->ask_ticket);
	c->ask_ticket = 0;
}

void conn_target(struct conn *c, enum conn_proto proto, const char *host, size_t len, unsigned port)
{
	const struct proxy_decider *dc = c->px->o.decider;
	struct policy_decision d;
	int rc;
	bool parsed;

	host = capture_unfake(c->px, host, &len);
	c->client_quiet = false; /* a new wait for an answer (want_client) */
	rc = policy_decide_target(c->px->o.policy, host, len, port, &d);
	parsed = rc == 0 && d.rule != POLICY_RULE_INVALID_HOST && d.host.text[0];

	c->st = CS_RESOLVING; /* past the request: failures are answered from here on */

	if (parsed)
		conn_exchange_begin(c, proto, d.host.text, strlen(d.host.text), port);
	else
		conn_exchange_begin(c, proto, host, len, port);
	if (rc != 0) {
		snprintf(c->ex.rule, sizeof(c->ex.rule), "policy error: %s", d.why);
		d.allow = false;
	} else {
		policy_decision_rule(&d, c->ex.rule, sizeof(c->ex.rule));
	}
	/* No rule matched: the harness's decider, when there is one, answers (later, from
	 * the loop); the connection waits in CS_RESOLVING, its client's bytes unread. */
	if (parsed && dc && policy_decision_unmatched(&d) &&
	    dc->ask(dc->ctx, c->ex.host, port, audit_proto_name(proto), on_verdict, c,
		    &c->ask_ticket) == 0) {
		conn_set_interest(c);
		return;
	}
	target_proceed(c, &d, parsed);
}
