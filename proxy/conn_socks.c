/* The SOCKS5 listener's protocol (proxy_proto_socks5; RFC 1928, CONNECT only; no
 * authentication, or username/password (RFC 1929) on a listener with a secret):
 * greeting, request, then the same Decide → resolve → check → dial path as HTTP, and
 * a tunnel. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "proxy/proxy_int.h"

#define SOCKS_IN_MAX 600 /* a greeting (≤ 257) and a request (≤ 262) */

/* c->req_step within CS_REQUEST */
enum { SOCKS_GREETING, SOCKS_AUTH, SOCKS_REQUEST };

static void socks_answer(struct conn *c, uint8_t rep)
{
	uint8_t out[10];
	int n = proxy_socks_reply(rep, out);

	conn_answer_close(c, out, n > 0 ? (size_t)n : 0);
}

/* A request refused for its name is a refusal like a denied one: one audit record
 * (the name escaped by the parser) and the denial line, before the reply. */
static void audit_refused_name(struct conn *c, const struct proxy_socks_req *req)
{
	conn_exchange_begin(c, PROTO_SOCKS5, req->shown, strlen(req->shown), req->port);
	c->ex.allow = false;
	snprintf(c->ex.rule, sizeof(c->ex.rule), "%.180s", req->why);
	audit_deny_line(c->px, &c->ex);
	conn_exchange_end(c);
}

/* RFC 1929: the password must be the listener's secret; a failure is answered 01 01
 * and the connection closed (the RFC's "MUST close"), recorded with its peer. */
static enum proxy_socks_result auth(struct conn *c, const uint8_t *in)
{
	static const uint8_t ok[2] = {1, 0}, bad[2] = {1, 1};
	const uint8_t *pass;
	size_t used, plen;
	enum proxy_socks_result r = proxy_socks_userpass(in, c->in_len, &used, &pass, &plen);

	if (r == PROXY_SOCKS_NEED_MORE)
		return r;
	if (r == PROXY_SOCKS_ERROR || !proxy_secret_equal((const char *)pass, plen, c->secret)) {
		conn_refuse_unauthenticated(c, PROTO_SOCKS5, "", 0);
		conn_answer_close(c, bad, sizeof(bad));
		return PROXY_SOCKS_ERROR;
	}
	conn_in_consume(c, used);
	c->req_step = SOCKS_REQUEST;
	if (side_send(c, &c->c, ok, sizeof(ok), NULL) != 0) {
		conn_close(c);
		return PROXY_SOCKS_ERROR;
	}
	return PROXY_SOCKS_OK;
}

static void parse(struct conn *c)
{
	const uint8_t *in = (const uint8_t *)c->in;
	struct proxy_socks_req req;
	size_t used = 0;

	if (c->req_step == SOCKS_GREETING) {
		/* With a secret only username/password (RFC 1929) is offered. */
		uint8_t method = c->secret ? 2 : 0;
		enum proxy_socks_result r =
		    proxy_socks_greeting_method(in, c->in_len, &used, method);
		const uint8_t chosen[2] = {5, method}, refuse[2] = {5, 0xff};

		if (r == PROXY_SOCKS_NEED_MORE)
			goto more;
		/* The macOS run's secret (o.auth_secret) is for HTTP alone: SOCKS5 there
		 * refuses every method. */
		if (r == PROXY_SOCKS_ERROR || (!c->secret && c->px->o.auth_secret)) {
			if (c->secret)
				conn_refuse_unauthenticated(c, PROTO_SOCKS5, "", 0);
			conn_answer_close(c, refuse, sizeof(refuse));
			return;
		}
		conn_in_consume(c, used);
		c->req_step = c->secret ? SOCKS_AUTH : SOCKS_REQUEST;
		if (side_send(c, &c->c, chosen, sizeof(chosen), NULL) != 0) {
			conn_close(c);
			return;
		}
		if (!c->in_len)
			goto more;
		in = (const uint8_t *)c->in;
	}
	if (c->req_step == SOCKS_AUTH) {
		switch (auth(c, in)) {
		case PROXY_SOCKS_NEED_MORE:
			goto more;
		case PROXY_SOCKS_ERROR:
			return;
		case PROXY_SOCKS_OK:
			break;
		}
		if (!c->in_len)
			goto more;
		in = (const uint8_t *)c->in;
	}
	switch (proxy_socks_request(in, c->in_len, &used, &req)) {
	case PROXY_SOCKS_NEED_MORE:
		goto more;
	case PROXY_SOCKS_ERROR:
		conn_timer_clear(c, &c->t_head);
		if (req.shown[0])
			audit_refused_name(c, &req);
		socks_answer(c, req.reply);
		return;
	case PROXY_SOCKS_OK:
		break;
	}
	conn_timer_clear(c, &c->t_head);
	conn_in_consume(c, used);
	conn_target(c, PROTO_SOCKS5, req.host, strlen(req.host), req.port);
	return;
more:
	if (c->in_len >= SOCKS_IN_MAX) {
		conn_close(c);
		return;
	}
	conn_set_interest(c);
}

static void socks_on_request(struct conn *c, unsigned events)
{
	ssize_t n;

	if (side_flush(c, &c->c, NULL) != 0) {
		conn_close(c);
		return;
	}
	if (!(events & (PROXY_EV_IN | PROXY_EV_ERR))) {
		conn_set_interest(c);
		return;
	}
	if (conn_in_reserve(c, SOCKS_IN_MAX - c->in_len) != 0) {
		conn_close(c);
		return;
	}
	do
		n = recv(c->c.fd, c->in + c->in_len, SOCKS_IN_MAX - c->in_len, 0);
	while (n < 0 && errno == EINTR);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
		conn_close(c);
		return;
	}
	if (n > 0) {
		c->in_len += (size_t)n;
		conn_touch(c);
		conn_head_timer_start(c);
	}
	parse(c);
}

static void socks_connected(struct conn *c)
{
	uint8_t ok[10];
	int n = proxy_socks_reply(0x00, ok);

	if (side_send(c, &c->c, ok, (size_t)n, NULL) != 0) {
		conn_close(c);
		return;
	}
	hello_start(c); /* the first flight's TLS name is checked as after CONNECT */
}

/* SOCKS5 reply codes (RFC 1928 6): 01 general failure, 02 connection not allowed by
 * ruleset, 03 network unreachable, 04 host unreachable, 05 connection refused. A
 * name that does not resolve, and a timeout, are "host unreachable" as in most
 * SOCKS servers; 06 (TTL expired) is about IP TTLs and would mislead. */
/* clang-format off */
static const uint8_t reply_for[] = {
	[FAIL_DENY] = 0x02,
	[FAIL_ADDR] = 0x02,
	[FAIL_DNS_NONAME] = 0x04,
	[FAIL_DNS] = 0x04,
	[FAIL_DNS_TIMEOUT] = 0x04,
	[FAIL_REFUSED] = 0x05,
	[FAIL_HOST_UNREACH] = 0x04,
	[FAIL_NET_UNREACH] = 0x03,
	[FAIL_CONNECT_TIMEOUT] = 0x04,
	[FAIL_HEAD_TIMEOUT] = 0x01,
	[FAIL_INTERNAL] = 0x01,
	[FAIL_OVERLOAD] = 0x01,
	[FAIL_BAD_GATEWAY] = 0x01,
	[FAIL_BAD_BODY] = 0x01,
	[FAIL_UPSTREAM] = 0x01,
};
/* clang-format on */
_Static_assert(sizeof(reply_for) / sizeof(reply_for[0]) == FAIL_N,
	       "a failure without its SOCKS5 reply");

static void socks_on_error(struct conn *c, enum conn_fail why, bool open, const char *detail)
{
	char code[24];

	(void)open;
	/* Before a request there is no reply to give: just hang up. */
	if (c->st == CS_REQUEST || why == FAIL_HEAD_TIMEOUT) {
		conn_close(c);
		return;
	}
	if (!conn_fail_denied(why)) {
		snprintf(code, sizeof(code), "SOCKS5 reply %02x", reply_for[why]);
		audit_error_line(c->px, c->ex.host, c->ex.port,
				 detail ? detail : conn_fail_reason(why), code);
	}
	socks_answer(c, reply_for[why]);
}

const struct proto_ops proxy_proto_socks5 = {
    .on_request = socks_on_request,
    .on_connected = socks_connected,
    .on_error = socks_on_error,
    .audit_proto = PROTO_SOCKS5,
    .client_waits = true,
};
