/* HTTP/1.1 inside a terminated tunnel: one request at a time toward the origin. A
 * request head is parsed by the proxy's strict parser (origin form, Host naming the
 * tunnel's host), judged by policy_decide_request(), audited with its method and
 * path, and sent on with the hop-by-hop fields dropped and the host's credential set;
 * its body follows (Content-Length counted, chunked re-encoded canonically). The
 * response is framed by resp.c's parser so that the connection can be kept for the
 * next request, which is read only once the response has ended; a pipelined request
 * waits in the buffers meanwhile (backpressure, not loss). A request with a body is the
 * connection's last: an origin that ignores the body would read it as the start of a
 * request that our next head, judged and with the credential, completes.
 *
 * A denied request gets 403 with X-Halo-Deny naming the rule set, and the connection
 * is closed after it (its body, if any, is never read). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "proxy/proxy_int.h"

#ifdef PROXY_TLS

#include "proxy/tls_int.h"

#define PIECE	   16384 /* one TLS record of plaintext per read */
#define AUDIT_PATH 512

/* ------------------------------------------------------------------ requests */

static void audit_request(struct conn *c, const struct proxy_http_req *req,
			  const struct policy_request_decision *rd)
{
	struct exchange r = c->ex;
	char path[AUDIT_PATH];

	snprintf(path, sizeof(path), "%.*s", AUDIT_PATH - 1, req->path);
	r.proto = PROTO_HTTPS;
	r.allow = rd->allow;
	if (rd->applies)
		snprintf(r.rule, sizeof(r.rule), "%.180s", rd->rule);
	r.method = req->method;
	r.path = path;
	r.up = r.down = 0;
	r.error = NULL;
	r.cls = NULL;
	r.t0_ms = proxy_now_ms();
	clock_gettime(CLOCK_REALTIME, &r.t0_wall);
	audit_write(c->px, &r);
	if (!rd->allow) {
		c->px->st.denied++;
		audit_deny_line(c->px, &r);
	}
}

static void deny(struct conn *c, const struct policy_request_decision *rd, int status)
{
	char host[260], rule[POLICY_REQ_RULE_MAX], hdr[600], body[700];

	audit_printable(c->ex.host, host, sizeof(host));
	audit_printable(rd->rule, rule, sizeof(rule));
	snprintf(hdr, sizeof(hdr), "%s (%s)", host, rule);
	snprintf(body, sizeof(body), "blocked by egress policy: %s", hdr);
	term_answer(c, status, body, hdr, NULL);
}

static void refuse(struct conn *c, int status, const char *why)
{
	char body[300], code[8];

	snprintf(body, sizeof(body), "halo-run proxy: %s", why);
	snprintf(code, sizeof(code), "%d", status);
	audit_error_line(c->px, c->ex.host, c->ex.port, why, code);
	term_answer(c, status, body, NULL, why);
}

/* The head goes to the origin with the credential in it: the buffer is wiped after. */
static int send_head(struct conn *c, const struct proxy_http_req *req)
{
	struct term *t = term_of(c);
	const char *hdr = NULL, *val = NULL;
	size_t cap = TERM_HEAD_MAX + 4608;
	char *head = malloc(cap);
	int n, rc;

	if (!head)
		return -ENOMEM;
	if (!tls_credential(c->px->o.tls, c->ex.host, &hdr, &val))
		hdr = val = NULL;
	n = proxy_http_origin_head(c->in, req, hdr, val, head, cap);
	rc = n < 0 ? n : term_send(t->us, head, (size_t)n);
	explicit_bzero(head, cap);
	free(head);
	return rc;
}

static void start_request(struct conn *c, const struct proxy_http_req *req)
{
	struct term *t = term_of(c);
	struct policy_request_decision rd;
	const char *body, *why;
	int rc;

	conn_timer_clear(c, &c->t_head);
	policy_decide_request(c->px->o.policy, c->ex.host, req->method, req->path, &rd);
	proxy_http_rules_override(req, c->ex.host, &rd);
	body = rd.applies && rd.allow ? proxy_http_body_refused(req) : NULL;
	why = rd.allow && !body ? proxy_http_upgrade_refused(req) : NULL;
	if (body || why) { /* refused like a denial, in the audit too */
		rd.allow = false;
		rd.applies = true;
		snprintf(rd.rule, sizeof(rd.rule), "%s%s: %s", body ? "requestRules for " : "",
			 c->ex.host, body ? body : why);
	}
	audit_request(c, req, &rd);
	if (why) {
		refuse(c, 501, why);
		return;
	}
	if (!rd.allow) {
		deny(c, &rd, body ? 400 : 403);
		return;
	}
	if (t->u_failed || c->u.fd < 0 || t->u_eof) {
		refuse(c, 502, t->u_failed ? t->u_why : "the origin closed the connection");
		return;
	}
	rc = send_head(c, req);
	if (rc < 0) {
		refuse(c, rc == -ENOSPC ? 431 : 502, "cannot forward this head");
		return;
	}
	t->keep = req->keep_alive && !req->chunked && !req->content_length; /* see http_origin.c */
	t->minor = req->version_minor;
	t->head_req = strcmp(req->method, "HEAD") == 0;
	t->rq_chunked = req->chunked;
	t->rq_left = req->content_length;
	memset(&t->ck, 0, sizeof(t->ck));
	t->rq = req->chunked || req->content_length ? RQ_BODY : RQ_WAIT;
	t->rs = RS_HEAD;
	t->rb_len = 0;
	t->requests++;
	conn_in_consume(c, req->head_len);
}

static void read_head(struct conn *c, bool *progress)
{
	struct term *t = term_of(c);
	struct proxy_http_req *req = &c->px->req;

	for (int i = 0; i < 8; i++) {
		size_t room = TERM_HEAD_MAX - c->in_len;
		long n;

		if (c->in_len) {
			enum proxy_http_result r =
			    proxy_http_parse_origin(c->in, c->in_len, c->ex.host, c->ex.port, req);
			if (r == PROXY_HTTP_OK) {
				*progress = true;
				start_request(c, req);
				return;
			}
			if (r == PROXY_HTTP_ERROR) {
				refuse(c, req->status, req->why);
				return;
			}
			if (c->in_len >= TERM_HEAD_MAX) {
				refuse(c, 431, "request head too large");
				return;
			}
			conn_head_timer_start(c);
		}
		if (room > 4096)
			room = 4096;
		if (conn_in_reserve(c, room) != 0) {
			conn_close(c);
			return;
		}
		n = term_recv(t->cs, c->in + c->in_len, room, &t->c_eof);
		if (n == -EAGAIN)
			return;
		if (n < 0 || (n == 0 && c->in_len)) { /* broken, or cut short in a head */
			conn_close(c);
			return;
		}
		if (n == 0)
			return; /* the command is done: pump() closes */
		c->in_len += (size_t)n;
		*progress = true;
	}
}

static int feed_body(struct conn *c, const char *src, size_t avail, size_t *used)
{
	struct term *t = term_of(c);
	size_t out_len = 0;
	enum proxy_chunk_result r;

	if (!t->rq_chunked) {
		size_t take = avail < t->rq_left ? avail : (size_t)t->rq_left;

		*used = take;
		t->rq_left -= take;
		if (!t->rq_left)
			t->rq = RQ_WAIT;
		return term_send(t->us, src, take);
	}
	if (!t->ckbuf && !(t->ckbuf = malloc(PIECE + PROXY_CHUNK_SLACK)))
		return -ENOMEM;
	r = proxy_chunked_feed(&t->ck, src, avail, used, t->ckbuf, &out_len);
	if (r == PROXY_CHUNK_ERROR)
		return -EBADMSG;
	if (r == PROXY_CHUNK_DONE)
		t->rq = RQ_WAIT;
	return out_len ? term_send(t->us, t->ckbuf, out_len) : 0;
}

static void read_body(struct conn *c, bool *progress)
{
	struct term *t = term_of(c);

	for (int i = 0; i < 16 && t->rq == RQ_BODY && !side_pending(&c->u); i++) {
		bool from_in = c->in_len > 0;
		const char *src = from_in ? c->in : c->px->scratch;
		size_t avail = from_in ? c->in_len : 0, used = 0;
		int rc;

		if (!from_in) {
			long n = term_recv(t->cs, c->px->scratch, PIECE, &t->c_eof);

			if (n == -EAGAIN)
				return;
			if (n <= 0) { /* the body was cut short */
				conn_close(c);
				return;
			}
			avail = (size_t)n;
		}
		if (avail > PIECE)
			avail = PIECE;
		rc = feed_body(c, src, avail, &used);
		if (rc == -EBADMSG) {
			refuse(c, 400, t->ck.why);
			return;
		}
		if (rc < 0) {
			conn_close(c);
			return;
		}
		*progress = true;
		if (from_in) {
			conn_in_consume(c, used);
		} else if (used < avail) { /* the next request, pipelined behind the body */
			if (conn_in_reserve(c, avail - used) != 0) {
				conn_close(c);
				return;
			}
			memcpy(c->in + c->in_len, src + used, avail - used);
			c->in_len += avail - used;
		}
	}
}

void term_requests(struct conn *c, bool *progress)
{
	struct term *t = term_of(c);

	if (t->rq == RQ_HEAD && !t->c_eof && !side_pending(&c->u))
		read_head(c, progress);
	if (c->st == CS_FORWARD && t->rq == RQ_BODY)
		read_body(c, progress);
}

/* ----------------------------------------------------------------- responses */

static void rb_consume(struct term *t, size_t n)
{
	memmove(t->rb, t->rb + n, t->rb_len - n);
	t->rb_len -= n;
}

/* The response ended: keep the connection for the next request only when both ends
 * agreed to and nothing is left over. */
static void response_done(struct conn *c, bool *progress)
{
	struct term *t = term_of(c);

	t->rs = RS_IDLE;
	*progress = true;
	if (!t->resp_keep || t->rq != RQ_WAIT || t->rb_len) {
		term_close_client(c);
		return;
	}
	t->rq = RQ_HEAD;
}

static void on_head(struct conn *c, const struct resp_head *h, bool *progress)
{
	struct term *t = term_of(c);
	bool nobody = t->head_req || h->status == 204 || h->status == 304;
	bool framed = nobody || h->chunked || (h->has_cl && !h->has_te);
	size_t cap = h->head_len + 64;
	char *out;
	int n;

	if (h->status == 101) {
		refuse(c, 502, "the origin switched protocols (refused: requests are judged)");
		return;
	}
	if (h->status < 200) { /* 100 Continue, 103 Early Hints: passed on as they are */
		if (t->mask)
			proxy_mask_buf(t->mask, t->rb, h->head_len);
		if (term_send(t->cs, t->rb, h->head_len) < 0) {
			conn_close(c);
			return;
		}
		rb_consume(t, h->head_len);
		*progress = true;
		return;
	}
	if (h->conflicting) {
		refuse(c, 502, "the origin's response framing conflicts with itself");
		return;
	}
	if (t->mask && h->status == 206) { /* never asked (http_origin.c drops Range) */
		refuse(c, 502,
		       "the origin sent a partial body (206) to a host with a credential: a piece "
		       "of the credential cannot be recognised");
		return;
	}
	if (t->mask && h->encoded && !nobody) {
		refuse(c, 502,
		       "the origin sent a compressed or encoded body to a host with a credential "
		       "(asked for identity): it cannot be scanned for the credential");
		return;
	}
	t->resp_keep = t->keep && framed && h->minor == 1 &&
		       !resp_connection_names(t->rb, h->head_len, "close");
	out = malloc(cap);
	n = out ? resp_rewrite(t->rb, h, t->resp_keep, t->minor, out, cap) : -ENOMEM;
	if (n > 0 && t->mask) {
		proxy_mask_buf(t->mask, out, (size_t)n);
		proxy_mask_reset(t->mask);
	}
	if (n < 0 || term_send(t->cs, out, (size_t)n) < 0) {
		free(out);
		conn_close(c);
		return;
	}
	free(out);
	rb_consume(t, h->head_len);
	*progress = true;
	t->rs_chunked = h->chunked;
	memset(&t->cks, 0, sizeof(t->cks));
	t->rs_left = h->cl;
	if (nobody || (!h->chunked && h->has_cl && !h->has_te && h->cl == 0))
		response_done(c, progress);
	else
		t->rs = framed ? RS_BODY : RS_EOF;
}

static void read_resp_head(struct conn *c, bool *progress)
{
	struct term *t = term_of(c);

	if (!t->rb && !(t->rb = malloc(TERM_RESP_HEAD_MAX))) {
		conn_close(c);
		return;
	}
	/* c->st first: on_head may have ended the connection, and t with it. */
	for (int i = 0; i < 8 && c->st == CS_FORWARD && t->rs == RS_HEAD; i++) {
		struct resp_head h;
		long n;

		if (t->rb_len) {
			enum resp_result r = resp_parse(t->rb, t->rb_len, &h);

			if (r == RESP_OK) {
				on_head(c, &h, progress);
				continue;
			}
			if (r == RESP_BAD) {
				refuse(c, 502, "malformed response head from the origin");
				return;
			}
			if (t->rb_len == TERM_RESP_HEAD_MAX) {
				refuse(c, 502, "the origin's response head is too large");
				return;
			}
		}
		if (side_pending(&c->c))
			return;
		n = term_recv(t->us, t->rb + t->rb_len, TERM_RESP_HEAD_MAX - t->rb_len, &t->u_eof);
		if (n == -EAGAIN)
			return;
		if (n <= 0) {
			refuse(c, 502, "the origin closed the connection before its response");
			return;
		}
		t->rb_len += (size_t)n;
		*progress = true;
	}
}

/* How much of src belongs to the body; 1 when the body ended, -1 on bad framing. */
static int body_take(struct term *t, const char *src, size_t avail, size_t *take)
{
	bool done = false;
	long k;

	if (t->rs == RS_EOF) {
		*take = avail;
		return 0;
	}
	if (!t->rs_chunked) {
		*take = avail < t->rs_left ? avail : (size_t)t->rs_left;
		t->rs_left -= *take;
		return t->rs_left == 0;
	}
	k = chunk_scan(&t->cks, src, avail, &done);
	if (k < 0)
		return -1;
	*take = (size_t)k;
	return done;
}

/* ------------------------------------------------- masked bodies (a credential's host) */

/* Masked bytes at o[0..k) to the command; in a chunked body as one chunk of ours
 * (mbuf has room for the size line before o and the CRLF after). */
static int emit(struct term *t, char *o, size_t k)
{
	char hx[TERM_MASK_PRE];
	int hl;

	if (!k)
		return 0;
	if (!t->rs_chunked)
		return term_send(t->cs, o, k);
	hl = snprintf(hx, sizeof(hx), "%zx\r\n", k);
	memcpy(o - hl, hx, (size_t)hl);
	memcpy(o + k, "\r\n", 2);
	return term_send(t->cs, o - hl, k + (size_t)hl + 2);
}

static int masked_send(struct term *t, const char *data, size_t n)
{
	char *o = t->mbuf + TERM_MASK_PRE;

	return emit(t, o, proxy_mask_feed(t->mask, data, n, o));
}

/* The body ended: what the masker held back, then (chunked) our last chunk. The
 * origin's trailers are not passed on. */
static int masked_end(struct term *t)
{
	char *o = t->mbuf + TERM_MASK_PRE;
	int rc = emit(t, o, proxy_mask_flush(t->mask, o));

	return rc == 0 && t->rs_chunked ? term_send(t->cs, "0\r\n\r\n", 5) : rc;
}

/* body_take() and the send, for a masked body: a chunked one is decoded, masked as
 * one stream (a value may straddle the origin's chunks) and framed again by us. */
static int masked_take(struct term *t, const char *src, size_t avail, size_t *take)
{
	size_t used = 0;
	int end;

	if (!t->rs_chunked) {
		end = body_take(t, src, avail, take);
		if (end < 0 || (*take && masked_send(t, src, *take) < 0))
			return -1;
		return end == 1 && masked_end(t) < 0 ? -1 : end;
	}
	while (used < avail) {
		const char *d;
		size_t dl;
		bool done;
		long k = chunk_scan_data(&t->cks, src + used, avail - used, &done, &d, &dl);

		if (k < 0 || (dl && masked_send(t, d, dl) < 0))
			return -1;
		used += (size_t)k;
		if (done) {
			*take = used;
			return masked_end(t) < 0 ? -1 : 1;
		}
	}
	*take = used;
	return 0;
}

static void response_body(struct conn *c, bool *progress)
{
	struct term *t = term_of(c);

	for (int i = 0; i < 16 && (t->rs == RS_BODY || t->rs == RS_EOF) && !side_pending(&c->c);
	     i++) {
		bool from_rb = t->rb_len > 0;
		const char *src = from_rb ? t->rb : c->px->scratch;
		size_t avail = t->rb_len, take = 0;
		int end;

		if (!from_rb) {
			long n = term_recv(t->us, c->px->scratch, PIECE, &t->u_eof);

			if (n == -EAGAIN)
				return;
			if (n == 0 && t->rs == RS_EOF) { /* the end of a close-delimited body */
				if (t->mask && masked_end(t) < 0) {
					conn_close(c);
					return;
				}
				response_done(c, progress);
				return;
			}
			if (n <= 0) { /* cut short: the command sees the connection end */
				conn_close(c);
				return;
			}
			avail = (size_t)n;
		}
		if (t->mask) {
			avail = avail > PIECE ? PIECE : avail; /* mbuf's room */
			end = masked_take(t, src, avail, &take);
		} else {
			end = body_take(t, src, avail, &take);
			if (end >= 0 && take && term_send(t->cs, src, take) < 0)
				end = -1;
		}
		if (end < 0) {
			conn_close(c);
			return;
		}
		*progress = true;
		if (from_rb) {
			rb_consume(t, take);
		} else if (take < avail) { /* bytes past the response: never kept for the next */
			memcpy(t->rb, src + take,
			       avail - take > TERM_RESP_HEAD_MAX ? TERM_RESP_HEAD_MAX
								 : avail - take);
			t->rb_len = avail - take;
		}
		if (end == 1) {
			response_done(c, progress);
			return;
		}
	}
}

/* Nothing asked: the origin may only end its side (close_notify, or the socket). */
static void idle_read(struct conn *c, bool *progress)
{
	struct term *t = term_of(c);
	long n;

	if (t->u_eof || c->u.fd < 0)
		return;
	n = term_recv(t->us, c->px->scratch, PIECE, &t->u_eof);
	if (n == -EAGAIN || n == 0) {
		*progress |= n == 0;
		return;
	}
	conn_close(c); /* bytes nobody asked for, or a broken TLS stream */
}

void term_responses(struct conn *c, bool *progress)
{
	struct term *t = term_of(c);

	if (!t->u_done)
		return;
	if (t->rs == RS_IDLE) {
		idle_read(c, progress);
		return;
	}
	if (t->rs == RS_HEAD)
		read_resp_head(c, progress);
	if (c->st == CS_FORWARD && (t->rs == RS_BODY || t->rs == RS_EOF))
		response_body(c, progress);
}

#endif
