/* A tunnel whose TLS the proxy terminates (hosts with egress.credentials or
 * egress.requestRules). After the CONNECT's 200 (or SOCKS5's success) and the
 * ClientHello's name check, the connection changes protocol: the proxy is the TLS
 * server toward the command (a certificate minted for the host by the run's CA) and a
 * verifying TLS client toward the origin, already dialled.
 *
 * Non-blocking in the one loop: each SSL runs on a pair of memory BIOs. Socket bytes
 * are read by this file into the SSL's input BIO (bounded by TERM_RBIO_MAX: past that
 * the socket is left unread, which is the backpressure), and what an SSL produces is
 * taken from its output BIO and handed to side_send(), which queues what the socket
 * cannot take. So OpenSSL never touches a socket and never blocks; WANT_READ just
 * means "more bytes needed", and a side with bytes queued toward it is not fed more
 * plaintext until they drain. Handshakes, requests and responses all advance in
 * pump(), called on every event of either socket. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proxy/proxy_int.h"

#ifdef PROXY_TLS

#include <openssl/err.h>

#include "proxy/tls_int.h"

#define PUMP_ROUNDS 16

extern const struct proto_ops proxy_proto_term;

int term_send(SSL *ssl, const void *p, size_t n)
{
	const char *d = p;

	while (n) {
		int w = SSL_write(ssl, d, n > INT_MAX ? INT_MAX : (int)n);

		if (w <= 0) {
			ERR_clear_error();
			return -EPROTO;
		}
		d += w;
		n -= (size_t)w;
	}
	return 0;
}

long term_recv(SSL *ssl, void *buf, size_t cap, bool *eof)
{
	int r = SSL_read(ssl, buf, cap > INT_MAX ? INT_MAX : (int)cap);
	int e;

	if (r > 0)
		return r;
	e = SSL_get_error(ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
		return -EAGAIN;
	ERR_clear_error();
	if (e == SSL_ERROR_ZERO_RETURN) {
		*eof = true;
		return 0;
	}
	return -EPROTO;
}

/* What the SSL produced, to its socket (queued by side_send when it cannot take it). */
static int flush_out(struct conn *c, struct side *s, SSL *ssl)
{
	BIO *w = SSL_get_wbio(ssl);
	char *data;
	long n = BIO_get_mem_data(w, &data);
	int rc = 0;

	if (n > 0 && s->fd >= 0)
		rc = side_send(c, s, data, (size_t)n, NULL);
	if (n > 0)
		(void)BIO_reset(w);
	return rc;
}

/* Socket bytes into the SSL's input, while it holds less than TERM_RBIO_MAX. */
static int net_read(struct conn *c, struct side *s, SSL *ssl, bool *progress)
{
	BIO *r = SSL_get_rbio(ssl);
	ssize_t n;

	if (s->fd < 0 || s->rd_eof || BIO_ctrl_pending(r) >= TERM_RBIO_MAX)
		return 0;
	do
		n = recv(s->fd, c->px->scratch, PROXY_SCRATCH_SIZE, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	*progress = true;
	if (n == 0) {
		s->rd_eof = true;
		BIO_set_mem_eof_return(r, 0); /* drained input now reads as the end */
		return 0;
	}
	conn_touch(c);
	if (s == &c->c)
		c->ex.up += (unsigned long long)n;
	else
		c->ex.down += (unsigned long long)n;
	return BIO_write(r, c->px->scratch, (int)n) == (int)n ? 0 : -ENOMEM;
}

static void set_error(struct conn *c, const char *fmt, const char *why)
{
	if (c->ex.error)
		return;
	snprintf(c->ex.error_buf, sizeof(c->ex.error_buf), fmt, why);
	c->ex.error = c->ex.error_buf;
}

void term_close_client(struct conn *c)
{
	struct term *t = term_of(c);
	char *data;
	long n;

	if (!t->c_done) {
		conn_close(c);
		return;
	}
	SSL_shutdown(t->cs); /* close_notify into the output BIO */
	ERR_clear_error();
	n = BIO_get_mem_data(SSL_get_wbio(t->cs), &data);
	conn_answer_close(c, data, n > 0 ? (size_t)n : 0);
}

void term_answer(struct conn *c, int status, const char *body, const char *deny, const char *error)
{
	struct term *t = term_of(c);
	char buf[2048];
	int n = proxy_http_error(status, body, deny, error, buf, sizeof(buf));

	if (n < 0)
		n = proxy_http_error(status, NULL, NULL, NULL, buf, sizeof(buf));
	if (!t->c_done || (n > 0 && term_send(t->cs, buf, (size_t)n) < 0)) {
		conn_close(c);
		return;
	}
	term_close_client(c);
}

/* The origin's handshake failed: no byte reaches it again; every request is answered
 * 502 with the reason (once the command's own handshake is done). */
static void origin_failed(struct conn *c, const char *why)
{
	struct term *t = term_of(c);
	char code[] = "502";

	t->u_failed = true;
	snprintf(t->u_why, sizeof(t->u_why), "TLS to the origin failed: %s", why);
	set_error(c, "%s", t->u_why);
	audit_error_line(c->px, c->ex.host, c->ex.port, t->u_why, code);
	conn_side_drop(c->px, &c->u);
}

static int handshake(SSL *ssl, bool *done, bool *progress, char *why, size_t n, bool verify)
{
	int r = SSL_do_handshake(ssl), e;

	if (r == 1) {
		*done = *progress = true;
		return 0;
	}
	e = SSL_get_error(ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
		return 0;
	tls_error_text(verify ? ssl : NULL, why, n);
	return -EPROTO;
}

/* Handshakes, then the exchanges; false when the connection went away. */
static bool step(struct conn *c, bool *progress)
{
	struct term *t = term_of(c);
	char why[200];

	if (net_read(c, &c->c, t->cs, progress) < 0 || net_read(c, &c->u, t->us, progress) < 0) {
		conn_close(c);
		return false;
	}
	if (!t->c_done && handshake(t->cs, &t->c_done, progress, why, sizeof(why), false) < 0) {
		set_error(c, "TLS with the command failed: %.160s", why);
		flush_out(c, &c->c, t->cs); /* its alert */
		conn_close(c);
		return false;
	}
	if (!t->u_done && !t->u_failed) {
		if (handshake(t->us, &t->u_done, progress, why, sizeof(why), true) < 0)
			origin_failed(c, why);
		else if (!t->u_done && c->u.rd_eof)
			origin_failed(c, "the origin closed the connection during the handshake");
	}
	if (t->c_done && (t->u_done || t->u_failed)) {
		term_requests(c, progress);
		if (c->st == CS_FORWARD)
			term_responses(c, progress);
		if (c->st != CS_FORWARD)
			return false;
	}
	if (flush_out(c, &c->c, t->cs) < 0 || flush_out(c, &c->u, t->us) < 0) {
		conn_close(c);
		return false;
	}
	return true;
}

static void pump(struct conn *c)
{
	struct term *t = term_of(c);
	bool progress = true;

	for (int i = 0; progress && i < PUMP_ROUNDS; i++) {
		progress = false;
		if (!step(c, &progress))
			return;
	}
	if (!t->c_done && c->c.rd_eof) {
		set_error(c, "%s", "the command closed the connection during the TLS handshake");
		conn_close(c);
		return;
	}
	/* The command is done, or the origin's kept connection ended between requests:
	 * the command opens a new tunnel for its next request. */
	if (t->rq == RQ_HEAD && t->rs == RS_IDLE && c->in_len == 0 &&
	    (t->c_eof || (t->u_done && (t->u_eof || c->u.rd_eof)))) {
		term_close_client(c);
		return;
	}
	conn_set_interest(c);
}

static void on_side(struct conn *c, struct side *s, unsigned events)
{
	if ((events & (PROXY_EV_OUT | PROXY_EV_ERR)) && s->fd >= 0 && side_flush(c, s, NULL) != 0) {
		conn_close(c);
		return;
	}
	pump(c);
}

static void term_on_client(struct conn *c, unsigned events)
{
	on_side(c, &c->c, events);
}

static void term_on_upstream(struct conn *c, unsigned events)
{
	on_side(c, &c->u, events);
}

static bool room(const struct side *s, SSL *ssl)
{
	return s->fd >= 0 && !s->rd_eof && BIO_ctrl_pending(SSL_get_rbio(ssl)) < TERM_RBIO_MAX;
}

static bool term_wants_client(const struct conn *c)
{
	return room(&c->c, term_of(c)->cs);
}

static bool term_wants_upstream(const struct conn *c)
{
	return room(&c->u, term_of(c)->us);
}

static void term_on_error(struct conn *c, enum conn_fail why, bool open, const char *detail)
{
	struct term *t = term_of(c);
	const char *reason = detail ? detail : conn_fail_reason(why);

	(void)open;
	if (t && t->c_done && t->rs == RS_IDLE && why == FAIL_HEAD_TIMEOUT) {
		term_answer(c, 408, "halo-run proxy: request head timed out", NULL, reason);
		return;
	}
	conn_close(c);
}

static void term_on_close(struct conn *c)
{
	struct term *t = term_of(c);

	if (!t)
		return;
	/* A verified origin's session stays resumable (SSL_free would drop one that saw no
	 * close_notify); a failed handshake never produced one. */
	if (t->u_done)
		SSL_set_shutdown(t->us, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
	SSL_free(t->cs);
	SSL_free(t->us);
	free(t->rb);
	free(t->ckbuf);
	if (t->mask)
		OPENSSL_cleanse(t->mask->hold, sizeof(t->mask->hold));
	free(t->mask);
	free(t->mbuf);
	free(t);
	c->pstate = NULL;
}

static void term_on_request(struct conn *c, unsigned events)
{
	(void)events;
	conn_close(c); /* never in CS_REQUEST */
}

static void term_on_connected(struct conn *c)
{
	conn_close(c); /* never dials */
}

const struct proto_ops proxy_proto_term = {
    .on_request = term_on_request,
    .on_connected = term_on_connected,
    .fwd_on_client = term_on_client,
    .fwd_on_upstream = term_on_upstream,
    .fwd_wants_client = term_wants_client,
    .fwd_wants_upstream = term_wants_upstream,
    .on_error = term_on_error,
    .on_close = term_on_close,
};

/* A credential's host: its responses are scanned for the credential (TRACE and
 * friends, echo endpoints, error pages quoting the request). */
static int mask_new(struct proxy_tls *tls, const char *host, struct term *t)
{
	const char *const *pats;
	const size_t *stems;
	size_t n;

	if (!tls_secret_patterns(tls, host, &pats, &stems, &n))
		return 0;
	t->mask = malloc(sizeof(*t->mask));
	t->mbuf = malloc(TERM_MBUF);
	if (!t->mask || !t->mbuf || proxy_mask_init_stems(t->mask, pats, stems, n) < 0)
		return -ENOMEM;
	return 0;
}

void term_start(struct conn *c)
{
	struct proxy_tls *tls = c->px->o.tls;
	struct term *t = calloc(1, sizeof(*t));
	char why[200] = "out of memory";

	if (t)
		t->cs = tls_server_new(tls, c->ex.host, why, sizeof(why));
	if (t && t->cs)
		t->us = tls_client_new(tls, c->ex.host, c->ex.port, why, sizeof(why));
	if (t && t->us && mask_new(tls, c->ex.host, t) < 0) {
		SSL_free(t->us);
		t->us = NULL;
	}
	if (!t || !t->us) {
		if (t) {
			SSL_free(t->cs);
			free(t->mask);
			free(t->mbuf);
		}
		free(t);
		set_error(c, "TLS termination: %.160s", why);
		conn_close(c);
		return;
	}
	c->pstate = t;
	c->proto = &proxy_proto_term;
	c->st = CS_FORWARD;
	c->ex.terminated = true;
	c->ex.up += c->in_len;
	if (c->in_len && BIO_write(SSL_get_rbio(t->cs), c->in, (int)c->in_len) != (int)c->in_len) {
		conn_close(c);
		return;
	}
	conn_in_consume(c, c->in_len);
	if (c->c.rd_eof)
		BIO_set_mem_eof_return(SSL_get_rbio(t->cs), 0);
	conn_head_timer_start(c); /* the handshake and the first head have the head timeout */
	pump(c);
}

#endif
