/* Absolute-form forwarding: one origin connection per request.
 *
 * The head sent to the origin ends with "Connection: close" (http_rewrite.c), so the
 * origin's EOF always ends the exchange on that side. The client's connection is kept
 * for its next request (which is parsed and decided again) only when all of these
 * hold: the client asked for keep-alive, its request body was fully relayed, and the
 * response is framed (no body by status or method, Content-Length, or chunked, parsed
 * here without changing a byte). Otherwise the response carries "Connection: close"
 * and the client connection is closed after it.
 *
 * A chunked request body is decoded as it arrives (proxy_chunked_feed) and its
 * canonical re-encoding queued for the origin: the client is read only while nothing
 * waits for the origin, so a connection holds at most one read of it (half the scratch
 * buffer) however long the body is. Bytes after the last chunk are the next request
 * and go back to the connection's input. A framing error before any response byte is
 * answered 400 with its why; the origin connection is dropped mid-body, so the origin
 * never sees bytes the proxy did not accept. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proxy/http_int.h"

#define RH_MAX PROXY_HTTP_MAX_HEAD /* an origin's response head, same limit */

enum resp_stage { RS_HEAD, RS_BODY, RS_DONE };
enum framing { FR_NONE, FR_CL, FR_CHUNKED, FR_CLOSE };

struct fwd {
	char *head; /* the rewritten request head until sent */
	size_t head_len;
	bool is_head;	  /* a HEAD request: the response has no body */
	bool client_keep; /* the client asked to keep the connection */
	int client_minor;
	unsigned long long body_left; /* Content-Length body still to relay */
	struct proxy_chunked *ck;     /* a chunked body's decoder (NULL: not chunked) */
	enum resp_stage rs;
	enum framing frame;
	bool framed;
	bool keep_announced;
	bool started; /* response bytes went to the client */
	char *rh;     /* response head so far */
	size_t rh_len;
	unsigned long long resp_left;
	struct chunk_scan cs;
};

struct fwd *fwd_new(const struct proxy_http_req *req)
{
	struct fwd *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->is_head = strcmp(req->method, "HEAD") == 0;
	f->client_keep = req->keep_alive;
	f->client_minor = req->version_minor;
	f->body_left = req->has_body ? req->content_length : 0;
	if (req->chunked && !(f->ck = calloc(1, sizeof(*f->ck)))) {
		free(f);
		return NULL;
	}
	return f;
}

static bool body_pending(const struct fwd *f)
{
	return f->ck ? !f->ck->done : f->body_left > 0;
}

void fwd_set_head(struct fwd *f, char *head, size_t len)
{
	f->head = head;
	f->head_len = len;
}

void fwd_free(struct fwd *f)
{
	if (!f)
		return;
	free(f->head);
	free(f->rh);
	free(f->ck);
	free(f);
}

bool fwd_response_started(const struct fwd *f)
{
	return f->started;
}

bool fwd_wants_client_in(const struct conn *c)
{
	return fwd_of(c) && body_pending(fwd_of(c)) && !c->c.rd_eof && c->u.fd >= 0 &&
	       c->u.out.len == 0;
}

/* Decode in[0..n) of a chunked body into out (cap bytes) and queue the re-encoding
 * for the origin. Returns the bytes taken (n unless the body ended within them), or
 * -1 when the connection has been failed. */
static long chunked_bytes(struct conn *c, const char *in, size_t n, char *out, size_t cap)
{
	struct proxy_chunked *ck = fwd_of(c)->ck;
	size_t taken = 0;

	while (taken < n && !ck->done) {
		size_t piece = n - taken, used, olen;

		if (piece > cap - PROXY_CHUNK_SLACK)
			piece = cap - PROXY_CHUNK_SLACK;
		if (proxy_chunked_feed(ck, in + taken, piece, &used, out, &olen) ==
		    PROXY_CHUNK_ERROR) {
			conn_fail(c, FAIL_BAD_BODY, ck->why);
			return -1;
		}
		taken += used;
		if (olen && side_send(c, &c->u, out, olen, NULL) != 0) {
			conn_fail(c, FAIL_BAD_GATEWAY, NULL);
			return -1;
		}
	}
	return (long)taken;
}

/* One read of a chunked body: into the scratch buffer's first half, re-encoded into
 * its second half. */
static void chunked_in(struct conn *c)
{
	size_t half = PROXY_SCRATCH_SIZE / 2;
	char *buf = c->px->scratch;
	ssize_t n;
	long k;

	do
		n = recv(c->c.fd, buf, half - PROXY_CHUNK_SLACK, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n <= 0) {
		if (!c->ex.error)
			c->ex.error = "client closed during the request body";
		conn_close(c);
		return;
	}
	conn_touch(c);
	k = chunked_bytes(c, buf, (size_t)n, buf + half, half);
	if (k < 0)
		return;
	c->ex.up += (unsigned long long)k;
	if (k < n) { /* pipelined: the next request's first bytes */
		if (conn_in_reserve(c, (size_t)(n - k)) != 0) {
			conn_close(c);
			return;
		}
		memcpy(c->in + c->in_len, buf + k, (size_t)(n - k));
		c->in_len += (size_t)(n - k);
	}
}

void fwd_start(struct conn *c)
{
	struct fwd *f = fwd_of(c);
	size_t k;

	c->st = CS_FORWARD;
	f->rs = RS_HEAD;
	c->ex.up += f->head_len;
	if (side_send(c, &c->u, f->head, f->head_len, NULL) != 0) {
		conn_fail(c, FAIL_BAD_GATEWAY, NULL);
		return;
	}
	free(f->head);
	f->head = NULL;
	/* Body bytes that came with the head; what follows them is the next request. */
	if (f->ck) {
		long taken = chunked_bytes(c, c->in, c->in_len, c->px->scratch, PROXY_SCRATCH_SIZE);

		if (taken < 0)
			return;
		c->ex.up += (unsigned long long)taken;
		conn_in_consume(c, (size_t)taken);
		conn_set_interest(c);
		return;
	}
	k = c->in_len < f->body_left ? c->in_len : (size_t)f->body_left;
	if (k) {
		c->ex.up += k;
		f->body_left -= k;
		if (side_send(c, &c->u, c->in, k, NULL) != 0) {
			conn_fail(c, FAIL_BAD_GATEWAY, NULL);
			return;
		}
		conn_in_consume(c, k);
	}
	conn_set_interest(c);
}

static void to_client(struct conn *c, const char *p, size_t n)
{
	if (n && side_send(c, &c->c, p, n, NULL) != 0)
		conn_close(c);
}

static void response_done(struct conn *c)
{
	fwd_of(c)->rs = RS_DONE;
	conn_side_drop(c->px, &c->u);
}

static void body_bytes(struct conn *c, const char *p, size_t n)
{
	struct fwd *f = fwd_of(c);
	size_t k = n;
	bool done = false;

	switch (f->frame) {
	case FR_CL:
		k = n < f->resp_left ? n : (size_t)f->resp_left;
		f->resp_left -= k;
		done = f->resp_left == 0;
		break;
	case FR_CHUNKED: {
		long r = chunk_scan(&f->cs, p, n, &done);
		if (r < 0) { /* unframeable after all: relay to EOF, then close */
			f->frame = FR_CLOSE;
			f->framed = false;
			done = false;
		} else {
			k = (size_t)r;
		}
		break;
	}
	case FR_NONE:
		k = 0;
		done = true;
		break;
	case FR_CLOSE:
		break;
	}
	to_client(c, p, k);
	if (c->st != CS_DEAD && done)
		response_done(c);
}

static enum framing framing_of(const struct fwd *f, const struct resp_head *h)
{
	if (f->is_head || h->status == 204 || h->status == 304 || h->status < 200)
		return FR_NONE;
	if (h->conflicting)
		return FR_CLOSE;
	if (h->has_te)
		return h->chunked ? FR_CHUNKED : FR_CLOSE;
	return h->has_cl ? FR_CL : FR_CLOSE;
}

/* Parse what has arrived of the response head; relay it rewritten once complete.
 * Interim responses (1xx but 101) are relayed and the next head awaited. */
static void head_bytes(struct conn *c)
{
	struct fwd *f = fwd_of(c);

	while (f->rh_len) {
		struct resp_head h;
		enum resp_result r = resp_parse(f->rh, f->rh_len, &h);
		char out[RH_MAX + 64];
		bool interim;
		int n;

		if (r == RESP_NEED_MORE && f->rh_len < RH_MAX)
			return;
		if (r != RESP_OK) {
			conn_fail(c, FAIL_BAD_GATEWAY, NULL);
			return;
		}
		interim = h.status < 200 && h.status != 101;
		f->frame = framing_of(f, &h);
		f->framed = f->frame != FR_CLOSE;
		f->keep_announced = interim || (f->framed && f->client_keep);
		n = resp_rewrite(f->rh, &h, f->keep_announced, f->client_minor, out, sizeof(out));
		if (n < 0) {
			conn_fail(c, FAIL_BAD_GATEWAY, NULL);
			return;
		}
		f->started = true;
		to_client(c, out, (size_t)n);
		if (c->st == CS_DEAD)
			return;
		f->rh_len -= h.head_len;
		memmove(f->rh, f->rh + h.head_len, f->rh_len);
		if (interim)
			continue;
		f->rs = RS_BODY;
		f->resp_left = h.cl;
		if (f->frame == FR_CL && h.cl == 0)
			f->frame = FR_NONE;
		if (f->frame == FR_NONE) {
			response_done(c);
		} else if (f->rh_len) {
			body_bytes(c, f->rh, f->rh_len);
			/* Relaying the body can end the connection (the client gone: a
			 * write refused), and with it f: nothing of it is touched again. */
			if (c->st == CS_DEAD)
				return;
		}
		break;
	}
	free(f->rh);
	f->rh = NULL;
	f->rh_len = 0;
}

static void response_bytes(struct conn *c, const char *p, size_t n)
{
	struct fwd *f = fwd_of(c);

	/* Head bytes go through the bounded head buffer; whatever follows the head
	 * in it is relayed by head_bytes before the rest of this read. */
	while (n && f->rs == RS_HEAD) {
		size_t take;

		if (!f->rh && !(f->rh = malloc(RH_MAX))) {
			conn_fail(c, FAIL_OVERLOAD, NULL);
			return;
		}
		take = n < RH_MAX - f->rh_len ? n : RH_MAX - f->rh_len;
		memcpy(f->rh + f->rh_len, p, take);
		f->rh_len += take;
		p += take;
		n -= take;
		head_bytes(c);
		if (c->st == CS_DEAD || c->st == CS_CLOSING)
			return;
	}
	if (n && f->rs == RS_BODY)
		body_bytes(c, p, n);
	/* RS_DONE: bytes past the end of a framed response are dropped */
}

static void origin_eof(struct conn *c)
{
	struct fwd *f = fwd_of(c);

	if (f->rs == RS_HEAD) {
		conn_fail(c, FAIL_BAD_GATEWAY, "the origin closed without a response");
		return;
	}
	if (f->rs == RS_BODY && f->frame != FR_CLOSE && !c->ex.error)
		c->ex.error = "response truncated";
	f->framed = f->framed && f->rs == RS_DONE;
	response_done(c);
}

/* The response is out: end the exchange, then either wait for the next request on
 * this connection (pipelined bytes may already be there) or close it. */
static void complete(struct conn *c)
{
	struct fwd *f = fwd_of(c);
	bool keep = f->keep_announced && f->framed && !body_pending(f) && !c->c.rd_eof;

	conn_side_drop(c->px, &c->u);
	conn_exchange_end(c);
	fwd_free(f);
	c->pstate = NULL;
	if (!keep) {
		conn_answer_close(c, NULL, 0);
		return;
	}
	c->st = CS_REQUEST;
	http_parse_pending(c);
}

static void settle(struct conn *c)
{
	if (c->st != CS_FORWARD)
		return; /* closed, or answering an error */
	if (fwd_of(c)->rs == RS_DONE && c->c.out.len == 0) {
		complete(c);
		return;
	}
	conn_set_interest(c);
}

void fwd_on_client(struct conn *c, unsigned events)
{
	if (side_flush(c, &c->c, NULL) != 0) {
		conn_close(c);
		return;
	}
	if ((events & (PROXY_EV_IN | PROXY_EV_ERR)) && fwd_wants_client_in(c) && fwd_of(c)->ck) {
		chunked_in(c);
		if (c->st == CS_DEAD || c->st == CS_CLOSING)
			return;
	} else if ((events & (PROXY_EV_IN | PROXY_EV_ERR)) && fwd_wants_client_in(c)) {
		long r = relay_pump(c, &c->c, &c->u, &fwd_of(c)->body_left, &c->ex.up);

		if (r == 0 || (r < 0 && r != -EAGAIN)) {
			c->ex.error = "client closed during the request body";
			conn_close(c);
			return;
		}
	}
	settle(c);
}

void fwd_on_upstream(struct conn *c, unsigned events)
{
	if ((events & (PROXY_EV_OUT | PROXY_EV_ERR)) && c->u.out.len &&
	    side_flush(c, &c->u, NULL) != 0) {
		conn_fail(c, FAIL_BAD_GATEWAY, NULL);
		return;
	}
	if ((events & (PROXY_EV_IN | PROXY_EV_ERR)) && c->c.out.len == 0 && c->u.fd >= 0) {
		ssize_t n;

		do
			n = recv(c->u.fd, c->px->scratch, PROXY_SCRATCH_SIZE, 0);
		while (n < 0 && errno == EINTR);
		if (n > 0) {
			conn_touch(c);
			c->ex.down += (unsigned long long)n;
			response_bytes(c, c->px->scratch, (size_t)n);
		} else if (n == 0) {
			c->u.rd_eof = true;
			origin_eof(c);
		} else if (errno != EAGAIN && errno != EWOULDBLOCK) {
			conn_fail(c, FAIL_BAD_GATEWAY, NULL);
			return;
		}
	}
	settle(c);
}
