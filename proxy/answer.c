/* Exchanges (one decision each, one audit record each) and every way a request can
 * fail: recorded here, answered by the connection's protocol (proto->on_error). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "proxy/proxy_int.h"

/* What failed, in the words of the audit record, the error line and the answers;
 * each protocol maps the failure to its own answer (an HTTP status, a SOCKS5 reply). */
static const char *const reasons[] = {
    [FAIL_DENY] = NULL,
    [FAIL_ADDR] = NULL,
    [FAIL_DNS_NONAME] = "no such host",
    [FAIL_DNS] = "name resolution failed",
    [FAIL_DNS_TIMEOUT] = "name resolution timed out",
    [FAIL_REFUSED] = "connection refused",
    [FAIL_HOST_UNREACH] = "host unreachable",
    [FAIL_NET_UNREACH] = "network unreachable",
    [FAIL_CONNECT_TIMEOUT] = "connect timed out",
    [FAIL_HEAD_TIMEOUT] = "request head timed out",
    [FAIL_INTERNAL] = "internal error",
    [FAIL_OVERLOAD] = "proxy out of resources",
    [FAIL_BAD_GATEWAY] = "bad response from origin",
    [FAIL_BAD_BODY] = "malformed chunked request body",
    [FAIL_UPSTREAM] = "upstream proxy failed",
};
_Static_assert(sizeof(reasons) / sizeof(reasons[0]) == FAIL_N, "a failure without its words");

const char *conn_fail_reason(enum conn_fail why)
{
	return (size_t)why < sizeof(reasons) / sizeof(reasons[0]) ? reasons[why] : NULL;
}

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
	ex->peer = c->peer[0] ? c->peer : NULL;
	c->recorded = true;
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

void conn_refuse_unauthenticated(struct conn *c, enum conn_proto proto, const char *host,
				 unsigned port)
{
	conn_exchange_begin(c, proto, host, strlen(host), port);
	c->ex.allow = false;
	snprintf(c->ex.rule, sizeof(c->ex.rule), "%s",
		 "proxy: client authentication required (no valid token)");
	conn_exchange_end(c);
}

/* The record carries what failed: the detail when there is one (copied, since it may
 * live in a buffer that goes before the record is written), else the class. */
static void exchange_error(struct exchange *ex, enum conn_fail why, const char *detail)
{
	if (ex->error)
		return;
	if (!detail) {
		ex->error = conn_fail_reason(why);
		return;
	}
	snprintf(ex->error_buf, sizeof(ex->error_buf), "%s", detail);
	ex->error = ex->error_buf;
}

static void fail_refusal(struct conn *c, enum conn_fail why, const char *detail)
{
	const char *reason = detail ? detail : conn_fail_reason(why);
	const char *code = c->proto->fail_code ? c->proto->fail_code(why) : "closed";
	char rule[96];

	if (why == FAIL_HEAD_TIMEOUT)
		snprintf(rule, sizeof(rule), "proxy: head timeout (%u ms)",
			 c->px->o.head_timeout_ms);
	else
		snprintf(rule, sizeof(rule), "proxy: %s", reason ? reason : "refused");
	c->recorded = true;
	refusal_record(c->px, c->proto->audit_proto, "", 0, rule, reason ? reason : "refused", code,
		       c->peer);
}

void conn_fail(struct conn *c, enum conn_fail why, const char *detail)
{
	struct exchange *ex = &c->ex;
	bool denied = conn_fail_denied(why), open = ex->open;

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
	/* The record is written now; what follows is only the answer. A failure before
	 * any decision (a head that timed out) has no record of its own: a refusal one. */
	conn_exchange_end(c);
	if (!open)
		fail_refusal(c, why, detail);
	c->proto->on_error(c, why, open, detail);
}
