/* egress.upstreamProxy: an allowed target reached through the company's HTTP proxy.
 *
 * The order never changes: Decide() on the name, our own resolution and the address
 * check on every answer (the upstream resolves the name again, and a split DNS view
 * may answer it differently: the check is what we can do, not a guarantee), then a
 * CONNECT name:port to the upstream (the name, so that the upstream's own rules see
 * it), then the protocol carries on as after a direct dial. Plain-HTTP forwarding
 * goes through the same tunnel, so the upstream sees only CONNECTs. A denied name
 * never reaches the upstream; a name in the caller's NO_PROXY is dialled directly.
 *
 * The upstream's answer head is read with MSG_PEEK and only its own bytes are
 * consumed: an origin that speaks first (SSH) may have its first bytes in the same
 * segment, and they must reach the client after our answer, untouched. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proxy/proxy_int.h"

#define UP_HEAD_MAX    8192
#define N_UP_ADDRS(px) (sizeof((px)->up_addrs) / sizeof((px)->up_addrs[0]))

static void b64(const unsigned char *in, size_t n, char *out)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);

		out[o++] = t[v >> 18 & 63];
		out[o++] = t[v >> 12 & 63];
		out[o++] = i + 1 < n ? t[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? t[v & 63] : '=';
	}
	out[o] = '\0';
}

static struct policy_ipaddr ipa(int family, const uint8_t *addr)
{
	struct policy_ipaddr r = {.family = family};

	memcpy(r.addr, addr, sizeof(r.addr));
	return r;
}

/* The launch's addresses stay; each lookup's are added once. Past the array, the
 * oldest looked-up one gives way (a round-robin upstream), never one from the launch. */
static void up_addrs_add(struct proxy *px, int family, const uint8_t *addr)
{
	struct policy_ipaddr a = ipa(family, addr);

	for (size_t i = 0; i < px->n_up_addrs; i++)
		if (policy_ipaddr_same(&a, &px->up_addrs[i]))
			return;
	if (px->n_up_addrs < N_UP_ADDRS(px)) {
		px->up_addrs[px->n_up_addrs++] = a;
		return;
	}
	if (px->n_up_launch >= N_UP_ADDRS(px))
		return;
	memmove(&px->up_addrs[px->n_up_launch], &px->up_addrs[px->n_up_launch + 1],
		(N_UP_ADDRS(px) - px->n_up_launch - 1) * sizeof(a));
	px->up_addrs[N_UP_ADDRS(px) - 1] = a;
}

void upstream_init(struct proxy *px, const struct policy_upstream *up)
{
	char enc[sizeof(px->up.auth) * 4 / 3 + 8];
	bool v6;

	memset(&px->up, 0, sizeof(px->up));
	px->up_text[0] = px->up_auth[0] = '\0';
	if (!up || !up->on)
		return;
	px->up = *up;
	px->n_up_addrs = 0;
	for (size_t i = 0; i < px->o.n_upstream_addrs; i++)
		up_addrs_add(px, px->o.upstream_addrs[i].family, px->o.upstream_addrs[i].addr);
	if (up->host.kind != POLICY_HOST_NAME)
		up_addrs_add(px, up->host.kind == POLICY_HOST_IPV4 ? AF_INET : AF_INET6,
			     up->host.addr);
	px->n_up_launch = px->n_up_addrs;
	v6 = up->host.kind == POLICY_HOST_IPV6;
	snprintf(px->up_text, sizeof(px->up_text), "%s%s%s:%u", v6 ? "[" : "", up->host.text,
		 v6 ? "]" : "", up->port);
	if (up->auth[0]) {
		b64((const unsigned char *)up->auth, strlen(up->auth), enc);
		snprintf(px->up_auth, sizeof(px->up_auth), "Proxy-Authorization: Basic %s\r\n",
			 enc);
	}
	/* The credentials live on only as the header. */
	memset(px->up.auth, 0, sizeof(px->up.auth));
	memset(enc, 0, sizeof(enc));
}

/* Is `x` this host: loopback, unspecified, or one of its interface addresses? */
static bool is_own(const struct policy_ipaddr *x, const struct proxy_addr *ifs, size_t n_if)
{
	if (policy_addr_is_local(x, NULL, 0))
		return true;
	for (size_t i = 0; i < n_if; i++) {
		struct policy_ipaddr one = ipa(ifs[i].family, ifs[i].addr);

		if (policy_ipaddr_same(x, &one))
			return true;
	}
	return false;
}

bool upstream_is_target(struct proxy *px, const struct proxy_addr *a, unsigned port)
{
	struct policy_ipaddr t = ipa(a->family, a->addr);
	const struct proxy_addr *ifs;
	size_t n_if = 0;
	bool up_local = false;

	if (!px->up.on || port != px->up.port)
		return false;
	for (size_t i = 0; i < px->n_up_addrs; i++)
		if (policy_ipaddr_same(&t, &px->up_addrs[i]))
			return true; /* one of the upstream's addresses */
	ifs = proxy_own_addrs(px, &n_if);
	for (size_t i = 0; i < px->n_up_addrs && !up_local; i++)
		up_local = is_own(&px->up_addrs[i], ifs, n_if);
	/* The upstream on this host: every address of this host is a way to it. */
	return up_local && is_own(&t, ifs, n_if);
}

bool upstream_wanted(const struct proxy *px, const struct policy_host *h, unsigned port)
{
	return px->up.on && !policy_upstream_bypass(&px->up, h, port);
}

/* ------------------------------------------------------------------ dialing */

void upstream_dial_failed(struct conn *c, enum conn_fail why)
{
	char detail[sizeof(c->px->up_text) + 64];

	snprintf(detail, sizeof(detail), "upstream proxy %s: %s", c->px->up_text,
		 conn_fail_reason(why));
	conn_fail(c, FAIL_UPSTREAM, detail);
}

static void on_up_resolved(void *arg, int err, const struct proxy_addr *a, size_t n)
{
	struct conn *c = arg;

	c->job = NULL;
	conn_timer_clear(c, &c->t_step);
	if (err || n == 0) {
		upstream_dial_failed(c, err == -ENOENT ? FAIL_DNS_NONAME : FAIL_DNS);
		return;
	}
	for (size_t i = 0; i < n; i++)
		up_addrs_add(c->px, a[i].family, a[i].addr);
	conn_dial_upstream(c, a, n, c->px->up.port);
}

static void on_up_dns_timeout(void *arg)
{
	struct conn *c = arg;

	c->t_step = NULL;
	proxy_resolver_cancel(c->px->res, c->job);
	c->job = NULL;
	upstream_dial_failed(c, FAIL_DNS_TIMEOUT);
}

void upstream_dial(struct conn *c)
{
	const struct policy_host *h = &c->px->up.host;
	int rc;

	if (h->kind != POLICY_HOST_NAME) {
		struct proxy_addr a = {.family = h->kind == POLICY_HOST_IPV4 ? AF_INET : AF_INET6};

		memcpy(a.addr, h->addr, a.family == AF_INET ? 4 : 16);
		conn_dial_upstream(c, &a, 1, c->px->up.port);
		return;
	}
	c->st = CS_RESOLVING;
	rc = proxy_resolver_submit(c->px->res, h->text, on_up_resolved, c, &c->job);
	if (rc) {
		upstream_dial_failed(c, rc == -ENOMEM ? FAIL_OVERLOAD : FAIL_DNS);
		return;
	}
	c->t_step = proxy_timer_add(c->px->pl, c->px->o.dns_timeout_ms, on_up_dns_timeout, c);
	if (!c->t_step) {
		conn_fail(c, FAIL_OVERLOAD, NULL);
		return;
	}
	conn_set_interest(c);
}

/* --------------------------------------------------------------- the CONNECT */

static void on_up_timeout(void *arg)
{
	struct conn *c = arg;
	char detail[sizeof(c->px->up_text) + 64];

	c->t_step = NULL;
	snprintf(detail, sizeof(detail), "upstream proxy %s: no answer to CONNECT", c->px->up_text);
	conn_fail(c, FAIL_UPSTREAM, detail);
}

void upstream_connected(struct conn *c)
{
	char req[POLICY_HOST_MAX + sizeof(c->px->up_auth) + 80];
	int n = upstream_request(c->ex.host, strchr(c->ex.host, ':') != NULL, c->ex.port,
				 c->px->up_auth, req, sizeof(req));

	c->st = CS_UPSTREAM;
	if (n < 0) {
		conn_fail(c, FAIL_INTERNAL, NULL);
		return;
	}
	c->t_step = proxy_timer_add(c->px->pl, c->px->o.head_timeout_ms, on_up_timeout, c);
	if (!c->t_step) {
		conn_fail(c, FAIL_OVERLOAD, NULL);
		return;
	}
	/* Not counted as the client's bytes. */
	if (side_send(c, &c->u, req, (size_t)n, NULL) != 0) {
		upstream_dial_failed(c, FAIL_REFUSED);
		return;
	}
	memset(req, 0, sizeof(req));
	if (c->st != CS_DEAD)
		conn_set_interest(c);
}

/* Take what the upstream sent of its head, never a byte beyond it. 1: the head is
 * complete (judged), 0: more to come, -1: the connection was failed. */
static int read_head(struct conn *c)
{
	char why[sizeof(c->px->up_text) + 160];
	size_t room = UP_HEAD_MAX - c->up_len, head_len = 0, take;
	ssize_t n;
	int rc;

	if (!c->up_head && !(c->up_head = malloc(UP_HEAD_MAX))) {
		conn_fail(c, FAIL_OVERLOAD, NULL);
		return -1;
	}
	n = recv(c->u.fd, c->up_head + c->up_len, room, MSG_PEEK);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		snprintf(why, sizeof(why), "upstream proxy %s: closed before answering CONNECT",
			 c->px->up_text);
		conn_fail(c, FAIL_UPSTREAM, why);
		return -1;
	}
	rc = upstream_judge(c->up_head, c->up_len + (size_t)n, c->px->up_text, &head_len, why,
			    sizeof(why));
	if (rc == -EAGAIN && (size_t)n == room) {
		snprintf(why, sizeof(why), "upstream proxy %s: answer head over %d bytes",
			 c->px->up_text, UP_HEAD_MAX);
		rc = -EPROTO;
	}
	if (rc == -EPROTO) {
		conn_fail(c, FAIL_UPSTREAM, why);
		return -1;
	}
	take = rc == 0 ? head_len - c->up_len : (size_t)n;
	if (recv(c->u.fd, c->up_head + c->up_len, take, 0) != (ssize_t)take) {
		conn_fail(c, FAIL_INTERNAL, NULL);
		return -1;
	}
	c->up_len += take;
	return rc == 0;
}

void upstream_on_event(struct conn *c, unsigned events)
{
	int rc;

	if (side_pending(&c->u)) {
		if (side_flush(c, &c->u, NULL) != 0) {
			upstream_dial_failed(c, FAIL_REFUSED);
			return;
		}
		conn_set_interest(c);
		return;
	}
	if (!(events & (PROXY_EV_IN | PROXY_EV_ERR)))
		return;
	rc = read_head(c);
	if (rc <= 0) {
		if (rc == 0)
			conn_set_interest(c);
		return;
	}
	conn_timer_clear(c, &c->t_step);
	free(c->up_head);
	c->up_head = NULL;
	c->up_len = 0;
	c->st = CS_CONNECTING; /* as after a direct dial, for the protocol */
	c->proto->on_connected(c);
}
