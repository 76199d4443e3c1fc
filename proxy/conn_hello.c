/* One name per tunnel: between the CONNECT's 200 (or SOCKS5's success reply) and the
 * first client byte that reaches the origin, the client's first flight is read and,
 * when it is a TLS ClientHello, its server_name is checked against the target Decide()
 * judged (tls_hello.c); a spliced one carrying ECH is refused (the origin would serve
 * its hidden inner name). No MITM: the bytes are forwarded unchanged once judged.
 *
 * The origin is dialled before the 200, as before, so a refused or unreachable origin
 * still gets its 502/504 with the reason; a refused hello therefore costs the origin a
 * TCP handshake and a close, never a byte. While the client's side waits, the origin's
 * side already flows: a server-first protocol (SSH, SMTP banners) needs no timer and
 * sees no delay, and its client's first bytes are judged when they come (not TLS:
 * spliced). Once a handshake record has begun it has the head timeout to complete.
 *
 * Every ClientHello is checked. A first record of any TLS type is TLS: a record
 * before the ClientHello is refused (tls_hello.c). Once an allowed ClientHello is
 * forwarded, the client's further bytes are held (bounded by PROXY_TLS_HELLO_MAX)
 * while the origin's first answer flows to the client through the copy path and is
 * watched (tls_retry.c): a HelloRetryRequest makes the client's next flight a second
 * ClientHello that must carry the same name; any other answer, or the origin's end,
 * lets the held bytes go and the tunnel splices from then on. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proxy/proxy_int.h"
#ifdef PROXY_TLS
#include "proxy/tls_int.h"
#endif

/* After an allowed ClientHello: the origin's answer is watched for a
 * HelloRetryRequest (W_SERVER), then the second ClientHello is judged (W_RETRY). */
enum watch_phase { W_SERVER, W_RETRY };

struct hello_watch {
	enum watch_phase phase;
	struct proxy_tls_srv_scan scan;
	bool has_sni;
	char sni[256]; /* the first ClientHello's name, as sent */
};

/* The hello is judged: everything buffered goes to the origin, then bytes flow. */
static void pass(struct conn *c)
{
	free(c->hw);
	c->hw = NULL;
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

/* An allowed ClientHello goes to the origin; what follows it waits for the origin's
 * answer. */
static void watch_start(struct conn *c, const struct proxy_tls_hello *h)
{
	struct hello_watch *w = calloc(1, sizeof(*w));

	if (!w) {
		conn_close(c);
		return;
	}
	w->has_sni = h->has_sni;
	memcpy(w->sni, h->sni, sizeof(w->sni));
	c->hw = w;
	conn_timer_clear(c, &c->t_head); /* the origin takes its time; the idle timer runs */
	c->ex.up += h->used;
	if (side_send(c, &c->u, c->in, h->used, NULL) != 0) {
		conn_close(c);
		return;
	}
	conn_in_consume(c, h->used);
	conn_set_interest(c);
}

static void hello_ok(struct conn *c, const struct proxy_tls_hello *h)
{
	char rule[sizeof(c->ex.rule)];

	if (!proxy_tls_sni_allowed(c->ex.host, h, rule, sizeof(rule)))
		refuse(c, PROXY_TLS_ALERT_ACCESS_DENIED, rule);
	else if (terminated(c)) /* the proxy's own TLS server ignores ECH: the outer name */
		start_terminated(c);
	else if (!proxy_tls_splice_allowed(c->ex.host, h, rule, sizeof(rule)))
		refuse(c, PROXY_TLS_ALERT_ACCESS_DENIED, rule);
	else
		watch_start(c, h);
}

/* The second ClientHello: the same name as the first (RFC 8446 4.1.2 wants it
 * unchanged), and the same rule. */
static void retry_ok(struct conn *c, const struct proxy_tls_hello *h)
{
	char rule[sizeof(c->ex.rule)];

	if (h->has_sni != c->hw->has_sni || strcmp(h->sni, c->hw->sni) != 0) {
		snprintf(rule, sizeof(rule), "tls: SNI changed after HelloRetryRequest: %.140s",
			 h->has_sni ? h->sni : "(none)");
		refuse(c, PROXY_TLS_ALERT_ACCESS_DENIED, rule);
	} else if (!proxy_tls_splice_allowed(c->ex.host, h, rule, sizeof(rule)))
		refuse(c, PROXY_TLS_ALERT_ACCESS_DENIED, rule); /* ECH offered only now, too */
	else
		pass(c);
}

static void wait_more(struct conn *c)
{
	if (c->in_len == 0 && !c->c.rd_eof) {
		conn_set_interest(c); /* nothing yet: maybe the server speaks first */
		return;
	}
	if (c->c.rd_eof) {
		if (c->in_len)
			refuse(c, 50, "malformed ClientHello: cut short");
		else
			pass(c); /* an empty flight: the half-close goes through */
		return;
	}
	if (!c->t_head)
		c->t_head =
		    proxy_timer_add(c->px->pl, c->px->o.head_timeout_ms, on_hello_timeout, c);
	conn_set_interest(c);
}

static void judge(struct conn *c)
{
	struct proxy_tls_hello h;
	enum proxy_tls_result r;

	if (c->hw && c->hw->phase == W_SERVER) {
		conn_set_interest(c); /* held until the origin has answered */
		return;
	}
	r = c->hw ? proxy_tls_retry_parse((const uint8_t *)c->in, c->in_len, &h)
		  : proxy_tls_hello_parse((const uint8_t *)c->in, c->in_len, &h);
	switch (r) {
	case PROXY_TLS_NOT_TLS:
		if (terminated(c)) /* plain bytes would pass the credentials' and rules' host */
			refuse(c, PROXY_TLS_ALERT_ACCESS_DENIED,
			       "not TLS: this host's requests are judged inside TLS the proxy "
			       "terminates");
		else
			pass(c);
		return;
	case PROXY_TLS_NEED_MORE:
		wait_more(c);
		return;
	case PROXY_TLS_ERROR:
		refuse(c, h.alert, h.why);
		return;
	case PROXY_TLS_HELLO:
		if (c->hw)
			retry_ok(c, &h);
		else
			hello_ok(c, &h);
		return;
	}
}

/* The origin's bytes while its answer to the first ClientHello is watched: read
 * through the scratch buffer (never spliced), forwarded unchanged, scanned. */
static void watch_on_upstream(struct conn *c, unsigned events)
{
	enum proxy_tls_srv s = PROXY_TLS_SRV_MORE;
	long r = -EAGAIN;

	if ((events & (PROXY_EV_OUT | PROXY_EV_ERR)) && side_flush(c, &c->u, NULL) != 0) {
		conn_close(c);
		return;
	}
	if ((events & (PROXY_EV_IN | PROXY_EV_ERR)) && !side_pending(&c->c) && !c->u.rd_eof)
		r = relay_pump(c, &c->u, &c->c, NULL, &c->ex.down);
	if (r > 0)
		s = proxy_tls_srv_feed(&c->hw->scan, (const uint8_t *)c->px->scratch, (size_t)r);
	if (r == 0 || s == PROXY_TLS_SRV_DONE) {
		pass(c); /* no retry (or the origin has ended): the held bytes go */
		return;
	}
	if (r < 0 && r != -EAGAIN) {
		conn_close(c);
		return;
	}
	if (s == PROXY_TLS_SRV_HRR) {
		c->hw->phase = W_RETRY;
		judge(c); /* the held bytes: a second ClientHello? */
		return;
	}
	conn_set_interest(c);
}

void hello_on_upstream(struct conn *c, unsigned events)
{
	if (c->hw && c->hw->phase == W_SERVER)
		watch_on_upstream(c, events);
	else
		tunnel_on_event(c, &c->u, events);
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
