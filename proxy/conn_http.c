/* The HTTP listener's protocol (proxy_proto_http): request heads (h6's strict
 * parser), CONNECT, the optional Proxy-Authorization secret, the start of
 * absolute-form forwarding (conn_fwd.c carries it on), and HTTP's answers to every
 * failure. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "proxy/http_int.h"

/* Room for a maximal head plus some pipelined bytes; a head that does not fit is
 * refused by the parser (431) before this is reached. */
#define IN_MAX (PROXY_HTTP_MAX_HEAD + 1024)

static void answer(struct conn *c, int status, const char *body, const char *deny,
		   const char *error)
{
	char buf[2048];
	int n = proxy_http_error(status, body, deny, error, buf, sizeof(buf));

	if (n < 0)
		n = proxy_http_error(status, NULL, NULL, NULL, buf, sizeof(buf));
	conn_answer_close(c, buf, n > 0 ? (size_t)n : 0);
}

/* A refused CONNECT to port 22: after the 403 (head and its one-line body), our SSH
 * identification line and a disconnect naming the rule (ssh_refuse.c), so that a
 * ProxyCommand passing the bytes on lets OpenSSH print the reason. */
static void answer_ssh(struct conn *c, const char *body, const char *deny)
{
	char buf[2048 + 600], hp[300], why[600];
	int n = proxy_http_error(403, body, deny, NULL, buf, 2048), m;

	if (n < 0)
		n = proxy_http_error(403, NULL, NULL, NULL, buf, 2048);
	if (n < 0)
		n = 0;
	audit_hostport(&c->ex, hp, sizeof(hp));
	snprintf(why, sizeof(why), "halo-run: egress denied: %s (%s)", hp, c->ex.rule);
	m = proxy_ssh_refusal(why, buf + n, sizeof(buf) - (size_t)n);
	conn_answer_close(c, buf, (size_t)n + (m > 0 ? (size_t)m : 0));
}

/* Any answer but a denial: X-Halo-Error: why, the one-line body, and the stderr line
 * once per host (host "" when no target is known yet). record: no audit record covers
 * it yet (a head refused before any decision): write a refusal record (refusal.c). */
static void http_refuse(struct conn *c, int status, const char *body, const char *why,
			const char *host, unsigned port, bool record)
{
	char code[8];

	snprintf(code, sizeof(code), "%d", status);
	audit_error_line(c->px, host, port, why, code);
	if (record) {
		c->recorded = true;
		refusal_record(c->px, PROTO_HTTP, host, port, "proxy: request refused", why, code,
			       c->peer);
	}
	answer(c, status, body, NULL, why);
}

/* --------------------------------------------------------- Proxy-Authorization */

/* ------------------------------------------------------------------- heads */

static void start_forward(struct conn *c, struct proxy_http_req *req)
{
	struct fwd *f = fwd_new(req);
	char *head;
	int n;

	head = f ? malloc(PROXY_HTTP_MAX_HEAD + 512) : NULL;
	if (!head) {
		fwd_free(f);
		http_refuse(c, 503, "halo-run proxy: out of memory", "out of memory", req->host,
			    req->port, true);
		return;
	}
	n = proxy_http_rewrite(c->in, req, head, PROXY_HTTP_MAX_HEAD + 512);
	if (n < 0) {
		free(head);
		fwd_free(f);
		http_refuse(c, n == -ENOSPC ? 431 : 400, "halo-run proxy: cannot forward this head",
			    "cannot forward this head", req->host, req->port, true);
		return;
	}
	fwd_set_head(f, head, (size_t)n);
	conn_in_consume(c, req->head_len);
	c->pstate = f;
	conn_target(c, PROTO_HTTP, req->host, strlen(req->host), req->port);
}

/* egress.requestRules hold for plain http:// forwarding too (credentials never: they
 * are sent only inside TLS). A denied request is a denial of its own exchange. */
static bool forward_rules_deny(struct conn *c, const struct proxy_http_req *req)
{
	struct policy_request_decision rd;
	struct policy_host h;
	char why[160];

	const char *body;

	if (policy_host_parse(req->host, strlen(req->host), true, &h, why, sizeof(why)) != 0 ||
	    policy_decide_request(c->px->o.policy, h.text, req->method, req->path, &rd) != 0)
		return false; /* an unparsable host is denied by conn_target's Decide() */
	proxy_http_rules_override(req, h.text, &rd);
	body = rd.applies && rd.allow ? proxy_http_body_refused(req) : NULL;
	if (rd.allow && !body)
		return false;
	conn_exchange_begin(c, PROTO_HTTP, h.text, strlen(h.text), req->port);
	c->ex.allow = false;
	snprintf(c->ex.rule, sizeof(c->ex.rule), "%.180s", body ? body : rd.rule);
	c->st = CS_RESOLVING;
	conn_fail(c, body ? FAIL_BAD_BODY : FAIL_DENY, body);
	return true;
}

/* A fake address of the DNS stub names its host from here on, before anything judges
 * the request: the rules below, conn_target's Decide() (which maps CONNECT's, SOCKS5's
 * and captured targets with the same capture_unfake), the audit, X-Halo-Deny and the
 * Host field the origin gets (http_rewrite.c writes the target's). */
static void http_unfake(struct conn *c, struct proxy_http_req *req)
{
	size_t len = strlen(req->host);
	const char *name = capture_unfake(c->px, req->host, &len);

	if (name == req->host || len >= sizeof(req->host))
		return;
	memcpy(req->host, name, len);
	req->host[len] = '\0';
	req->host_is_v6_literal = false;
}

void http_parse_pending(struct conn *c)
{
	struct proxy_http_req *req = &c->px->req;
	enum proxy_http_result r;

	if (c->st != CS_REQUEST)
		return;
	if (c->in_len == 0) {
		conn_timer_clear(c, &c->t_head);
		conn_set_interest(c);
		return;
	}
	r = proxy_http_parse(c->in, c->in_len, req);
	if (r == PROXY_HTTP_NEED_MORE) {
		if (c->in_len >= IN_MAX) {
			http_refuse(c, 431, "request head too large", "request head too large", "",
				    0, true);
			return;
		}
		conn_head_timer_start(c);
		conn_set_interest(c);
		return;
	}
	if (r == PROXY_HTTP_ERROR) {
		/* the target is named when the parser got that far */
		http_refuse(c, req->status, req->why, req->why, req->host, req->port, true);
		return;
	}
	conn_timer_clear(c, &c->t_head);
	http_unfake(c, req);
	const char *secret = c->secret ? c->secret : c->px->o.auth_secret;

	if (secret && !proxy_auth_basic_ok(req->proxy_auth, secret)) {
		conn_refuse_unauthenticated(
		    c, req->kind == PROXY_HTTP_FORWARD ? PROTO_HTTP : PROTO_CONNECT, req->host,
		    req->port);
		http_refuse(c, 407, "halo-run proxy: proxy authentication required",
			    "proxy authentication required", "", 0, false);
		return;
	}
	if (req->kind == PROXY_HTTP_FORWARD) {
		if (!forward_rules_deny(c, req))
			start_forward(c, req);
		return;
	}
	conn_in_consume(c, req->head_len);
	conn_target(c, PROTO_CONNECT, req->host, strlen(req->host), req->port);
}

static void http_on_request(struct conn *c, unsigned events)
{
	size_t room = IN_MAX - c->in_len; /* in_len < IN_MAX: a full buffer was refused */
	ssize_t n;

	if (side_flush(c, &c->c, NULL) != 0) {
		conn_close(c);
		return;
	}
	if (c->c.out.len || !(events & (PROXY_EV_IN | PROXY_EV_ERR))) {
		conn_set_interest(c);
		return;
	}
	if (room > 4096)
		room = 4096;
	if (conn_in_reserve(c, room) != 0) {
		conn_close(c); /* ENOMEM: this connection only */
		return;
	}
	do
		n = recv(c->c.fd, c->in + c->in_len, room, 0);
	while (n < 0 && errno == EINTR);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
		conn_close(c); /* gone before (or in the middle of) a request */
		return;
	}
	if (n > 0) {
		c->in_len += (size_t)n;
		conn_touch(c);
		conn_head_timer_start(c);
	}
	http_parse_pending(c);
}

static void http_connected(struct conn *c)
{
	static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";

	if (fwd_of(c)) {
		fwd_start(c);
		return;
	}
	if (side_send(c, &c->c, established, sizeof(established) - 1, NULL) != 0) {
		conn_close(c);
		return;
	}
	/* Bytes the client sent after the CONNECT head (a TLS hello, pipelined) are
	 * judged with what follows before any reaches the origin. */
	hello_start(c);
}

/* ----------------------------------------------------------------- failures */

/* clang-format off */
static const int status_for[] = {
	[FAIL_DENY] = 403,
	[FAIL_ADDR] = 403,
	[FAIL_DNS_NONAME] = 502,
	[FAIL_DNS] = 502,
	[FAIL_DNS_TIMEOUT] = 504,
	[FAIL_REFUSED] = 502,
	[FAIL_HOST_UNREACH] = 502,
	[FAIL_NET_UNREACH] = 502,
	[FAIL_CONNECT_TIMEOUT] = 504,
	[FAIL_HEAD_TIMEOUT] = 408,
	[FAIL_INTERNAL] = 502,
	[FAIL_OVERLOAD] = 503,
	[FAIL_BAD_GATEWAY] = 502,
	[FAIL_BAD_BODY] = 400,
	[FAIL_UPSTREAM] = 502,
};
/* clang-format on */
_Static_assert(sizeof(status_for) / sizeof(status_for[0]) == FAIL_N,
	       "a failure without its HTTP status");

/* open: the failure belongs to an exchange (a kept connection's previous exchange
 * still names its host, but a later head timeout is not about it). */
static void http_on_error(struct conn *c, enum conn_fail why, bool open, const char *detail)
{
	const struct exchange *ex = &c->ex;
	const char *reason = detail ? detail : conn_fail_reason(why);
	char body[600], hdr[520], hp[300], host[260], rule[200];

	if (c->st == CS_FORWARD || c->st == CS_CLOSING) {
		/* Part of a response may already be out: an error page cannot follow. */
		if (!fwd_of(c) || fwd_response_started(fwd_of(c))) {
			conn_close(c);
			return;
		}
	}
	if (conn_fail_denied(why)) { /* 403 with X-Halo-Deny */
		audit_printable(ex->host, host, sizeof(host));
		audit_printable(ex->rule, rule, sizeof(rule));
		snprintf(hdr, sizeof(hdr), "%s (%s)", host, rule);
		snprintf(body, sizeof(body), "blocked by egress policy: %s", hdr);
		if (ex->proto == PROTO_CONNECT && ex->port == 22)
			answer_ssh(c, body, hdr);
		else
			answer(c, status_for[why], body, hdr, NULL);
		return;
	}
	if (open && ex->host[0]) {
		audit_hostport(ex, hp, sizeof(hp));
		snprintf(body, sizeof(body), "halo-run proxy: %s: %s", hp, reason);
	} else {
		snprintf(body, sizeof(body), "halo-run proxy: %s", reason);
	}
	/* not open: conn_fail has written the refusal record */
	http_refuse(c, status_for[why], body, reason, open ? ex->host : "", ex->port, false);
}

static const char *http_fail_code(enum conn_fail why)
{
	static char codes[FAIL_N][4];

	if ((size_t)why >= FAIL_N)
		return "closed";
	snprintf(codes[why], sizeof(codes[why]), "%d", status_for[why]);
	return codes[why];
}

static void http_on_close(struct conn *c)
{
	fwd_free(fwd_of(c));
	c->pstate = NULL;
}

static int http_busy_answer(char *buf, size_t cap, const char *why)
{
	return proxy_http_error(503, "halo-run proxy: too many open connections, retry later", NULL,
				why, buf, cap);
}

const struct proto_ops proxy_proto_http = {
    .on_request = http_on_request,
    .on_connected = http_connected,
    .fwd_on_client = fwd_on_client,
    .fwd_on_upstream = fwd_on_upstream,
    .fwd_wants_client = fwd_wants_client_in,
    .on_error = http_on_error,
    .on_close = http_on_close,
    .busy_answer = http_busy_answer,
    .busy_code = "503",
    .client_waits = true,
    .audit_proto = PROTO_HTTP,
    .fail_code = http_fail_code,
};
