/* The in-sandbox DNS stub (NETNS_DNS_ADDR:53, UDP and TCP): a name Decide() could
 * allow on some port is answered with an address from the fake range (proxy/dns.h),
 * which the capture listener maps back to the name; every other query is answered
 * NXDOMAIN, REFUSED or FORMERR right here. No query is ever forwarded or resolved:
 * nothing can leave the sandbox by way of a lookup, and a denied name is not even
 * looked up by the supervisor. Each query is one audit record (proto "dns"). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proxy/dns.h"
#include "proxy/proxy_int.h"

#define DNS_TCP_MAX_QUERIES 64 /* per connection, then it is closed */

/* "halo-run: egress denied: lookup of NAME (rule)", once per name: the command's
 * resolver only says "no such host". */
static void dns_deny_line(struct proxy *px, const struct exchange *ex)
{
	char line[600], host[260], rule[200];
	int n;

	if (px->o.log_fd < 0 || px->o.quiet || !hosts_first_denial(px, ex->host))
		return;
	audit_printable(ex->host, host, sizeof(host));
	audit_printable(ex->rule, rule, sizeof(rule));
	n = snprintf(line, sizeof(line), "halo-run: egress denied: lookup of %s (%s)\n", host,
		     rule);
	if (n > 0) {
		ssize_t w = write(px->o.log_fd, line,
				  (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
		(void)w;
	}
}

static void dns_audit(struct proxy *px, const struct proxy_dns_query *q, bool allow,
		      const char *rule, const uint8_t *a4, bool say)
{
	struct exchange ex;

	memset(&ex, 0, sizeof(ex));
	ex.proto = PROTO_DNS;
	snprintf(ex.host, sizeof(ex.host), "%s", q->name);
	ex.allow = allow;
	snprintf(ex.rule, sizeof(ex.rule), "%s", rule);
	if (a4)
		snprintf(ex.addr, sizeof(ex.addr), "%u.%u.%u.%u", a4[0], a4[1], a4[2], a4[3]);
	ex.t0_ms = proxy_now_ms();
	clock_gettime(CLOCK_REALTIME, &ex.t0_wall);
	audit_write(px, &ex);
	if (say && q->name[0])
		dns_deny_line(px, &ex);
}

/* A well-formed question: A and AAAA are decided, every other type refused. */
static enum proxy_dns_rcode decide(struct proxy *px, const struct proxy_dns_query *q, uint8_t a4[4],
				   bool *with_a)
{
	struct policy_decision d;
	char rule[192];
	int rc;

	if (q->qtype != PROXY_DNS_TYPE_A && q->qtype != PROXY_DNS_TYPE_AAAA) {
		snprintf(rule, sizeof(rule), "dns: query type %u is not answered", q->qtype);
		dns_audit(px, q, false, rule, NULL, false);
		return PROXY_DNS_REFUSED;
	}
	rc = policy_decide_some_port(px->o.policy, q->name, strlen(q->name), &d);
	/* learn: a name the default denies is answered (its connection, captured, is
	 * decided and recorded by name); a rule's denial stays NXDOMAIN */
	if (rc == 0 && px->o.learner)
		policy_decision_learn(&d);
	if (rc != 0)
		snprintf(rule, sizeof(rule), "policy error: %s", d.why);
	else
		policy_decision_rule(&d, rule, sizeof(rule));
	if (rc != 0 || !d.allow) {
		dns_audit(px, q, false, rule, NULL, true);
		return PROXY_DNS_NXDOMAIN;
	}
	if (!px->capture) {
		audit_error_line(px, "", 0,
				 "name lookups inside the sandbox are refused: connection capture "
				 "could not be set up (nf_tables)",
				 "dns REFUSED");
		dns_audit(px, q, false, "dns: capture unavailable", NULL, false);
		return PROXY_DNS_REFUSED;
	}
	/* AAAA: no IPv6 capture, so an empty answer sends the client to the A record. */
	if (q->qtype == PROXY_DNS_TYPE_A) {
		rc = proxy_fakeip_get(&px->fake, q->name, a4);
		if (rc != 0) {
			audit_error_line(px, q->name, 0, "the fake address range is exhausted",
					 "dns SERVFAIL");
			dns_audit(px, q, false, "dns: fake address range exhausted", NULL, false);
			return PROXY_DNS_SERVFAIL;
		}
		*with_a = true;
	}
	dns_audit(px, q, true, rule, *with_a ? a4 : NULL, false);
	return PROXY_DNS_NOERROR;
}

/* The answer to one query in msg, or -1 for none (not even a header). */
static int respond(struct proxy *px, const uint8_t *msg, size_t len, uint8_t *out, size_t cap)
{
	struct proxy_dns_query q;
	enum proxy_dns_result r = proxy_dns_parse(msg, len, &q);
	uint8_t a4[4];
	bool with_a = false;
	enum proxy_dns_rcode rc;

	if (r == PROXY_DNS_DROP)
		return -1;
	if (r == PROXY_DNS_ANSWER) {
		char rule[192];

		snprintf(rule, sizeof(rule), "dns: malformed query: %s", q.why);
		dns_audit(px, &q, false, rule, NULL, false);
		rc = q.rcode;
	} else {
		rc = decide(px, &q, a4, &with_a);
	}
	return proxy_dns_answer(&q, msg, rc, with_a ? a4 : NULL, out, cap);
}

/* ------------------------------------------------------------------ UDP */

void proxy_dns_udp_on_event(void *arg, int fd, unsigned events)
{
	struct proxy *px = arg;
	uint8_t out[PROXY_DNS_MAX_ANSWER];

	(void)events;
	for (int i = 0; i < 64; i++) {
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(fd, px->scratch, PROXY_DNS_MAX_QUERY + 1,
				     MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *)&from, &fl);
		int m;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (n > PROXY_DNS_MAX_QUERY)
			continue; /* larger than any query: dropped */
		m = respond(px, (const uint8_t *)px->scratch, (size_t)n, out, sizeof(out));
		if (m > 0)
			(void)sendto(fd, out, (size_t)m, MSG_DONTWAIT, (struct sockaddr *)&from,
				     fl);
	}
}

/* ------------------------------------------------------------------ TCP */

/* Each query is framed by its two-byte length (RFC 1035 4.2.2); several may come on
 * one connection (glibc sends A and AAAA together). A length outside a header and
 * PROXY_DNS_MAX_QUERY closes the connection. */
static void dns_tcp_parse(struct conn *c)
{
	uintptr_t served = (uintptr_t)c->pstate;

	while (c->in_len >= 2) {
		const uint8_t *in = (const uint8_t *)c->in;
		size_t len = (size_t)in[0] << 8 | in[1];
		uint8_t out[2 + PROXY_DNS_MAX_ANSWER];
		int m;

		if (len < PROXY_DNS_HEADER || len > PROXY_DNS_MAX_QUERY ||
		    served >= DNS_TCP_MAX_QUERIES) {
			conn_answer_close(c, NULL, 0);
			return;
		}
		if (c->in_len < 2 + len)
			break;
		m = respond(c->px, in + 2, len, out + 2, sizeof(out) - 2);
		conn_in_consume(c, 2 + len);
		c->pstate = (void *)++served;
		conn_timer_clear(c, &c->t_head);
		if (m <= 0)
			continue;
		out[0] = (uint8_t)(m >> 8);
		out[1] = (uint8_t)m;
		if (side_send(c, &c->c, out, (size_t)m + 2, NULL) != 0) {
			conn_close(c);
			return;
		}
	}
	conn_set_interest(c);
}

static void dns_tcp_on_request(struct conn *c, unsigned events)
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
	if (conn_in_reserve(c, 2 + PROXY_DNS_MAX_QUERY) != 0) {
		conn_close(c);
		return;
	}
	do
		n = recv(c->c.fd, c->in + c->in_len, 2 + PROXY_DNS_MAX_QUERY - c->in_len, 0);
	while (n < 0 && errno == EINTR);
	if (n == 0) {
		conn_answer_close(c, NULL, 0); /* what is queued still goes out */
		return;
	}
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			conn_close(c);
		else
			conn_set_interest(c);
		return;
	}
	c->in_len += (size_t)n;
	conn_touch(c);
	conn_head_timer_start(c);
	dns_tcp_parse(c);
}

static void dns_tcp_on_error(struct conn *c, enum conn_fail why, bool open, const char *detail)
{
	(void)why;
	(void)open;
	(void)detail;
	conn_close(c);
}

static void dns_tcp_never_dials(struct conn *c)
{
	conn_close(c);
}

static void dns_tcp_on_close(struct conn *c)
{
	c->pstate = NULL; /* a count, not memory */
}

const struct proto_ops proxy_proto_dns_tcp = {
    .on_request = dns_tcp_on_request,
    .on_connected = dns_tcp_never_dials,
    .on_error = dns_tcp_on_error,
    .on_close = dns_tcp_on_close,
    .audit_proto = PROTO_DNS,
};
