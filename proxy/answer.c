/* Exchanges (one decision each, one audit record each) and the answers to every way a
 * request can fail, in the client's protocol. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "proxy/proxy_int.h"

/* SOCKS5 reply codes (RFC 1928 6): 01 general failure, 02 connection not allowed by
 * ruleset, 03 network unreachable, 04 host unreachable, 05 connection refused. A
 * name that does not resolve, and a timeout, are "host unreachable" as in most
 * SOCKS servers; 06 (TTL expired) is about IP TTLs and would mislead. */
static const struct {
	int status;
	uint8_t socks;
	const char *error;
} answers[] = {
    [FAIL_DENY] = {403, 0x02, NULL},
    [FAIL_ADDR] = {403, 0x02, NULL},
    [FAIL_DNS_NONAME] = {502, 0x04, "no such host"},
    [FAIL_DNS] = {502, 0x04, "name resolution failed"},
    [FAIL_DNS_TIMEOUT] = {504, 0x04, "name resolution timed out"},
    [FAIL_REFUSED] = {502, 0x05, "connection refused"},
    [FAIL_HOST_UNREACH] = {502, 0x04, "host unreachable"},
    [FAIL_NET_UNREACH] = {502, 0x03, "network unreachable"},
    [FAIL_CONNECT_TIMEOUT] = {504, 0x04, "connect timed out"},
    [FAIL_HEAD_TIMEOUT] = {408, 0x01, "request head timed out"},
    [FAIL_INTERNAL] = {502, 0x01, "internal error"},
    [FAIL_OVERLOAD] = {503, 0x01, "proxy out of resources"},
    [FAIL_BAD_GATEWAY] = {502, 0x01, "bad response from origin"},
    [FAIL_BAD_BODY] = {400, 0x01, "malformed chunked request body"},
};

void conn_exchange_begin(struct conn *c, enum conn_proto proto, const char *host, size_t len,
			 unsigned port)
{
	struct exchange *ex = &c->ex;

	if (ex->open)
		conn_exchange_end(c);
	memset(ex, 0, sizeof(*ex));
	ex->open = true;
	ex->proto = proto;
	if (len >= sizeof(ex->host))
		len = sizeof(ex->host) - 1;
	memcpy(ex->host, host, len);
	ex->host[len] = '\0';
	ex->port = port;
	ex->t0_ms = proxy_now_ms();
	clock_gettime(CLOCK_REALTIME, &ex->t0_wall);
}

void conn_exchange_end(struct conn *c)
{
	struct exchange *ex = &c->ex;
	struct proxy *px = c->px;

	if (!ex->open)
		return;
	ex->open = false;
	if (ex->allow)
		px->st.allowed++;
	else
		px->st.denied++;
	px->st.bytes_up += ex->up;
	px->st.bytes_down += ex->down;
	audit_write(px, ex);
	hosts_record(px, ex);
}

/* open: the failure belongs to an exchange (a kept connection's previous exchange
 * still names its host, but a later head timeout is not about it). */
static void http_fail(struct conn *c, enum conn_fail why, bool denied, bool open,
		      const char *detail)
{
	const struct exchange *ex = &c->ex;
	const char *reason = detail ? detail : answers[why].error;
	char body[600], hdr[520], hp[300], host[260], rule[200];

	if (denied) {
		audit_printable(ex->host, host, sizeof(host));
		audit_printable(ex->rule, rule, sizeof(rule));
		snprintf(hdr, sizeof(hdr), "%s (%s)", host, rule);
		snprintf(body, sizeof(body), "blocked by egress policy: %s", hdr);
		http_answer(c, answers[why].status, body, hdr);
		return;
	}
	if (open && ex->host[0]) {
		audit_hostport(ex, hp, sizeof(hp));
		snprintf(body, sizeof(body), "halo-run proxy: %s: %s", hp, reason);
	} else {
		snprintf(body, sizeof(body), "halo-run proxy: %s", reason);
	}
	http_refuse(c, answers[why].status, body, reason, open ? ex->host : "", ex->port);
}

/* The record carries what failed: the detail when there is one (copied, since it may
 * live in a buffer that goes before the record is written), else the class. */
static void exchange_error(struct exchange *ex, enum conn_fail why, const char *detail)
{
	if (ex->error)
		return;
	if (!detail) {
		ex->error = answers[why].error;
		return;
	}
	snprintf(ex->error_buf, sizeof(ex->error_buf), "%s", detail);
	ex->error = ex->error_buf;
}

void conn_fail(struct conn *c, enum conn_fail why, const char *detail)
{
	struct exchange *ex = &c->ex;
	bool denied = why == FAIL_DENY || why == FAIL_ADDR, open = ex->open;

	if (c->st == CS_DEAD)
		return;
	if (ex->open) {
		if (denied) {
			ex->allow = false;
			audit_deny_line(c->px, ex);
		} else {
			exchange_error(ex, why, detail);
		}
	}
	/* The record is written now; what follows is only the answer. */
	conn_exchange_end(c);
	if (c->lkind == PROXY_LISTEN_HOSTPORT) {
		hostport_fail(c);
		return;
	}
	if (c->lkind == PROXY_LISTEN_SOCKS5) {
		/* Before a request there is no reply to give: just hang up. */
		if (c->st == CS_SOCKS_GREET || c->st == CS_SOCKS_REQ || why == FAIL_HEAD_TIMEOUT) {
			conn_close(c);
			return;
		}
		if (!denied) {
			char code[24];

			snprintf(code, sizeof(code), "SOCKS5 reply %02x", answers[why].socks);
			audit_error_line(c->px, ex->host, ex->port,
					 detail ? detail : answers[why].error, code);
		}
		socks_answer(c, answers[why].socks);
		return;
	}
	if (c->st == CS_FORWARD || c->st == CS_CLOSING) {
		/* Part of a response may already be out: an error page cannot follow. */
		if (!c->fwd || fwd_response_started(c->fwd)) {
			conn_close(c);
			return;
		}
	}
	http_fail(c, why, denied, open, detail);
}
