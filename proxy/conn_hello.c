/* One name per tunnel: between the CONNECT's 200 (or SOCKS5's success reply) and the
 * first client byte that reaches the origin, the client's first flight is read and,
 * when it is a TLS ClientHello, its server_name is checked against the target Decide()
 * judged (tls_hello.c). No MITM: the bytes are forwarded unchanged once judged.
 *
 * The origin is dialled before the 200, as before, so a refused or unreachable origin
 * still gets its 502/504 with the reason; a refused hello therefore costs the origin a
 * TCP handshake and a close, never a byte. While the client's side waits, the origin's
 * side already flows: a server-first protocol (SSH, SMTP banners) needs no timer and
 * sees no delay, and its client's first bytes are judged when they come (not TLS:
 * spliced). Once a handshake record has begun it has the head timeout to complete. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "proxy/proxy_int.h"
#ifdef PROXY_TLS
#include "proxy/tls_int.h"
#endif

/* The hello is judged: everything buffered goes to the origin, then bytes flow. */
static void pass(struct conn *c)
{
	conn_timer_clear(c, &c->t_head);
	if (c->in_len) {
		c->ex.up += c->in_len;
		if (side_send(c, &c->u, c->in, c->in_len, NULL) != 0) {
			conn_close(c);
			return;
		}
		conn_in_consume(c, c->in_len);
	}
	tunnel_start(c);
}

/* Refused: a fatal alert (the 200 is already out, so HTTP cannot answer), the audit
 * record turned into a denial with this rule, one stderr line per host. */
static void refuse(struct conn *c, uint8_t alert, const char *rule)
{
	uint8_t rec[7];
	int n = proxy_tls_alert(alert, rec);

	c->ex.allow = false;
	snprintf(c->ex.rule, sizeof(c->ex.rule), "%s", rule);
	audit_deny_line(c->px, &c->ex);
	conn_in_consume(c, c->in_len);
	conn_answer_close(c, rec, (size_t)n);
}

/* A host with credentials or request rules: its TLS is terminated (conn_tls.c). */
static bool terminated(const struct conn *c)
{
	return policy_tls_terminated(c->px->o.policy, c->ex.host);
}

static void refuse(struct conn *c, uint8_t alert, const char *rule);

/* Without the run's TLS material (a build without OpenSSL) such a host is refused,
 * never tunnelled past its rules. */
static void start_terminated(struct conn *c)
{
#ifdef PROXY_TLS
	if (c->px->o.tls) {
		conn_timer_clear(c, &c->t_head);
		term_start(c);
		return;
	}
#endif
	refuse(c, PROXY_TLS_ALERT_ACCESS_DENIED, "TLS termination is not available in this run");
}

static void on_hello_timeout(void *arg)
{
	struct conn *c = arg;

	c->t_head = NULL;
	refuse(c, PROXY_TLS_ALERT_ACCESS_DENIED, "malformed ClientHello: timed out");
}

static void judge(struct conn *c)
{
	struct proxy_tls_hello h;
	char rule[sizeof(c->ex.rule)];

	switch (proxy_tls_hello_parse((const uint8_t *)c->in, c->in_len, &h)) {
	case PROXY_TLS_NOT_TLS:
		if (terminated(c)) /* plain bytes would pass the credentials' and rules' host */
			refuse(c, PROXY_TLS_ALERT_ACCESS_DENIED,
			       "not TLS: this host's requests are judged inside TLS the proxy "
			       "terminates");
		else
			pass(c);
		return;
	case PROXY_TLS_NEED_MORE:
		if (c->in_len == 0 && !c->c.rd_eof) {
			conn_set_interest(c); /* nothing yet: maybe the server speaks first */
			return;
		}
		if (c->c.rd_eof) {
			if (c->in_len)
				refuse(c, 50, "malformed ClientHello: cut short");
			else
				pass(c); /* an empty first flight: the half-close goes through */
			return;
		}
		if (!c->t_head)
			c->t_head = proxy_timer_add(c->px->pl, c->px->o.head_timeout_ms,
						    on_hello_timeout, c);
		conn_set_interest(c);
		return;
	case PROXY_TLS_ERROR:
		snprintf(rule, sizeof(rule), "malformed ClientHello: %s", h.why);
		refuse(c, h.alert, rule);
		return;
	case PROXY_TLS_HELLO:
		if (!proxy_tls_sni_allowed(c->ex.host, &h, rule, sizeof(rule)))
			refuse(c, PROXY_TLS_ALERT_ACCESS_DENIED, rule);
		else if (terminated(c))
			start_terminated(c);
		else
			pass(c);
		return;
	}
}

void hello_start(struct conn *c)
{
	c->st = CS_HELLO;
	if (side_flush(c, &c->c, NULL) != 0) {
		conn_close(c);
		return;
	}
	judge(c); /* bytes pipelined behind the request */
}

void hello_on_client(struct conn *c, unsigned events)
{
	size_t room = PROXY_TLS_HELLO_MAX - c->in_len; /* a full buffer was judged already */
	ssize_t n;

	if (side_flush(c, &c->c, NULL) != 0) {
		conn_close(c);
		return;
	}
	if (!(events & (PROXY_EV_IN | PROXY_EV_ERR)) || room == 0) {
		conn_set_interest(c);
		return;
	}
	if (conn_in_reserve(c, room) != 0) {
		conn_close(c);
		return;
	}
	do
		n = recv(c->c.fd, c->in + c->in_len, room, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
		conn_close(c);
		return;
	}
	if (n == 0)
		c->c.rd_eof = true;
	if (n > 0) {
		c->in_len += (size_t)n;
		conn_touch(c);
	}
	judge(c);
}
