/* Origin response heads and chunked framing, for absolute-form forwarding.
 *
 * The forwarder needs to know where a response ends only to keep the client's
 * connection for its next request; it never changes the body. So the parser is
 * strict where a mistake would let one response bleed into the next on a kept
 * connection (NUL, bare CR or LF, obs-fold, Content-Length disagreeing with itself or
 * with Transfer-Encoding: such responses are relayed but the client connection is
 * closed after them), and the rewrite only replaces the connection-management fields.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "proxy/proxy_int.h"

/* Content-Length: one value, or a list of identical ones ("5, 5": RFC 9110 8.6 lets a
 * recipient take it), each read by the grammar requests are read with. */
static bool parse_cl(const char *v, size_t n, unsigned long long *out)
{
	size_t pos = 0, el;
	const char *e;
	bool any = false;

	while (proxy_http_list_next(v, n, &pos, &e, &el)) {
		unsigned long long x = 0;

		if (proxy_http_content_length(e, el, &x) || (any && x != *out))
			return false;
		*out = x;
		any = true;
	}
	return any;
}

static bool last_is_chunked(const char *v, size_t n)
{
	size_t pos = 0, el;
	const char *e;
	bool chunked = false;

	while (proxy_http_list_next(v, n, &pos, &e, &el))
		chunked = proxy_http_ieq(e, el, "chunked");
	return chunked;
}

/* Is chunked anywhere but once at the very end of the list? Then the client would
 * take off framing the proxy passed on as body text. */
static bool chunked_misplaced(const char *v, size_t n)
{
	size_t pos = 0, el, count = 0;
	const char *e;

	while (proxy_http_list_next(v, n, &pos, &e, &el))
		count += proxy_http_ieq(e, el, "chunked");
	return count > 1 || (count == 1 && !last_is_chunked(v, n));
}

/* Does the list name a coding other than `ok`? */
static bool any_but(const char *v, size_t n, const char *ok)
{
	size_t pos = 0, el;
	const char *e;

	while (proxy_http_list_next(v, n, &pos, &e, &el))
		if (!proxy_http_ieq(e, el, ok))
			return true;
	return false;
}

static enum resp_result status_line(const char *p, size_t n, struct resp_head *h)
{
	if (n < 12 || memcmp(p, "HTTP/1.", 7) != 0 || (p[7] != '0' && p[7] != '1') || p[8] != ' ')
		return RESP_BAD;
	for (int i = 9; i < 12; i++)
		if (p[i] < '0' || p[i] > '9')
			return RESP_BAD;
	if (n > 12 && p[12] != ' ')
		return RESP_BAD;
	h->minor = p[7] - '0';
	h->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	return h->status >= 100 ? RESP_OK : RESP_BAD;
}

static enum resp_result field(const char *p, size_t n, struct resp_head *h)
{
	const char *colon = memchr(p, ':', n);
	size_t nl, vl;
	const char *v;

	if (!colon || colon == p)
		return RESP_BAD;
	nl = (size_t)(colon - p);
	for (size_t i = 0; i < nl; i++)
		if (!proxy_http_tchar((unsigned char)p[i]))
			return RESP_BAD;
	v = colon + 1;
	vl = n - nl - 1;
	while (vl && (*v == ' ' || *v == '\t'))
		v++, vl--;
	while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
		vl--;
	if (proxy_http_ieq(p, nl, "content-length")) {
		unsigned long long x = 0;
		if (!parse_cl(v, vl, &x) || (h->has_cl && x != h->cl))
			h->conflicting = true;
		h->has_cl = true;
		h->cl = x;
	} else if (proxy_http_ieq(p, nl, "transfer-encoding")) {
		/* a field after one that ended in chunked: chunked is not last, or twice */
		h->encoded |= h->chunked || chunked_misplaced(v, vl);
		h->has_te = true;
		h->chunked = last_is_chunked(v, vl);
		h->encoded |= any_but(v, vl, "chunked");
	} else if (proxy_http_ieq(p, nl, "content-encoding")) {
		h->encoded |= any_but(v, vl, "identity");
	}
	return RESP_OK;
}

enum resp_result resp_parse(const char *buf, size_t len, struct resp_head *h)
{
	const char *p = buf, *end;
	bool first = true;

	memset(h, 0, sizeof(*h));
	end = buf + len;
	for (;;) {
		const char *lf = memchr(p, '\n', (size_t)(end - p));
		size_t n;

		if (!lf)
			return RESP_NEED_MORE;
		if (lf == p || lf[-1] != '\r')
			return RESP_BAD; /* bare LF */
		n = (size_t)(lf - 1 - p);
		/* Only the head is checked: the body may follow in the same read and may
		 * hold any byte (git's pkt-lines carry NULs). */
		if (memchr(p, '\r', n) || memchr(p, '\0', n))
			return RESP_BAD; /* bare CR or NUL in the head */
		if (first) {
			if (status_line(p, n, h) != RESP_OK)
				return RESP_BAD;
			first = false;
		} else if (n == 0) {
			h->head_len = (size_t)(lf + 1 - buf);
			if (h->has_te && h->has_cl)
				h->conflicting = true;
			return RESP_OK;
		} else if (*p == ' ' || *p == '\t' || field(p, n, h) != RESP_OK) {
			return RESP_BAD; /* obs-fold, or a malformed field */
		}
		p = lf + 1;
	}
}

/* Names listed in the origin's Connection fields (hop-by-hop by declaration). */
struct tokens {
	const char *p[32];
	size_t n[32];
	size_t count;
};

/* The value of the next Connection field at or after the line p (lines end in CRLF,
 * up to end); NULL when there is none. *next: the LF that ends it. */
static const char *connection_field(const char *p, const char *end, size_t *vlen, const char **next)
{
	while (p < end) {
		const char *lf = memchr(p, '\n', (size_t)(end - p)), *colon;
		size_t ll;

		if (!lf)
			return NULL;
		ll = (size_t)(lf - p) - 1;
		colon = memchr(p, ':', ll);
		*next = lf;
		if (colon && proxy_http_ieq(p, (size_t)(colon - p), "connection")) {
			*vlen = ll - (size_t)(colon + 1 - p);
			return colon + 1;
		}
		p = lf + 1;
	}
	return NULL;
}

static void connection_tokens(const char *buf, size_t head_len, struct tokens *t)
{
	const char *p = memchr(buf, '\n', head_len), *end = buf + head_len, *v, *e;
	size_t vl, pos, el;

	t->count = 0;
	while (p && (v = connection_field(p + 1, end, &vl, &p)))
		for (pos = 0; t->count < 32 && proxy_http_list_next(v, vl, &pos, &e, &el);) {
			t->p[t->count] = e;
			t->n[t->count++] = el;
		}
}

bool resp_connection_names(const char *buf, size_t head_len, const char *token)
{
	const char *p = memchr(buf, '\n', head_len), *end = buf + head_len, *v, *e;
	size_t vl, pos, el;

	while (p && (v = connection_field(p + 1, end, &vl, &p)))
		for (pos = 0; proxy_http_list_next(v, vl, &pos, &e, &el);)
			if (proxy_http_ieq(e, el, token))
				return true;
	return false;
}

/* Fields the client must not see from the origin: connection management for the
 * hop between us and the origin. */
static bool drop_field(const struct tokens *t, const char *name, size_t nl, bool has_te)
{
	static const char *const hop[] = {"connection", "keep-alive", "proxy-connection",
					  "proxy-authenticate", "upgrade"};

	for (size_t k = 0; k < sizeof(hop) / sizeof(hop[0]); k++)
		if (proxy_http_ieq(name, nl, hop[k]))
			return true;
	if (has_te && proxy_http_ieq(name, nl, "content-length"))
		return true; /* RFC 9112 6.3: Transfer-Encoding overrides it */
	for (size_t k = 0; k < t->count; k++)
		if (t->n[k] == nl && strncasecmp(t->p[k], name, nl) == 0)
			return true;
	return false;
}

int resp_rewrite(const char *buf, const struct resp_head *h, bool keep, int client_minor, char *out,
		 size_t outlen)
{
	const char *p = buf, *end = buf + h->head_len - 2; /* the final CRLF */
	size_t o = 0;
	const char *tail = !keep ? "Connection: close\r\n\r\n"
				 : (client_minor == 0 ? "Connection: keep-alive\r\n\r\n" : "\r\n");
	struct tokens t;
	bool first = true;

	connection_tokens(buf, h->head_len, &t);
	while (p < end) {
		const char *lf = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)(lf + 1 - p);
		const char *colon = memchr(p, ':', n);

		if (first || !colon || !drop_field(&t, p, (size_t)(colon - p), h->has_te)) {
			if (o + n >= outlen)
				return -ENOSPC;
			memcpy(out + o, p, n);
			o += n;
		}
		first = false;
		p = lf + 1;
	}
	if (o + strlen(tail) >= outlen)
		return -ENOSPC;
	memcpy(out + o, tail, strlen(tail) + 1);
	return (int)(o + strlen(tail));
}

/* ---------------------------------------------------------------- chunked */

/* The size line is read by the grammar client bodies are read with
 * (http_chunk_line.c); the trailers are relayed as they are, but for their CRLFs. */
enum {
	CK_LINE,
	CK_SIZE_LF,
	CK_DATA,
	CK_DATA_CR,
	CK_DATA_LF,
	CK_TRAILER_START,
	CK_TRAILER_LINE,
	CK_TRAILER_LF,
	CK_FINAL_LF,
};

static long scan(struct chunk_scan *cs, const char *p, size_t len, bool *done, const char **data,
		 size_t *dlen)
{
	size_t i = 0;

	*done = false;
	while (i < len) {
		char ch = p[i];

		switch (cs->st) {
		case CK_LINE: {
			const char *why;
			enum proxy_chunk_line_result r =
			    proxy_chunk_line_byte(&cs->line, (unsigned char)ch, &why);

			if (r == PROXY_CHUNK_LINE_BAD)
				return -1;
			if (r == PROXY_CHUNK_LINE_CR)
				cs->st = CK_SIZE_LF;
			break;
		}
		case CK_SIZE_LF:
			if (ch != '\n')
				return -1;
			cs->left = cs->line.size;
			cs->line = (struct proxy_chunk_line){0};
			cs->st = cs->left ? CK_DATA : CK_TRAILER_START;
			break;
		case CK_DATA: {
			size_t take = len - i < cs->left ? len - i : (size_t)cs->left;
			cs->left -= take;
			if (!cs->left)
				cs->st = CK_DATA_CR;
			if (data) {
				*data = p + i;
				*dlen = take;
				return (long)(i + take);
			}
			i += take;
			continue;
		}
		case CK_DATA_CR:
			if (ch != '\r')
				return -1;
			cs->st = CK_DATA_LF;
			break;
		case CK_DATA_LF:
			if (ch != '\n')
				return -1;
			cs->st = CK_LINE;
			break;
		case CK_TRAILER_START:
			cs->st = ch == '\r' ? CK_FINAL_LF : CK_TRAILER_LINE;
			break;
		case CK_TRAILER_LINE:
			if (ch == '\r')
				cs->st = CK_TRAILER_LF;
			break;
		case CK_TRAILER_LF:
			if (ch != '\n')
				return -1;
			cs->st = CK_TRAILER_START;
			break;
		case CK_FINAL_LF:
			if (ch != '\n')
				return -1;
			*done = true;
			return (long)(i + 1);
		}
		i++;
	}
	return (long)len;
}

long chunk_scan(struct chunk_scan *cs, const char *p, size_t len, bool *done)
{
	return scan(cs, p, len, done, NULL, NULL);
}

long chunk_scan_data(struct chunk_scan *cs, const char *p, size_t len, bool *done,
		     const char **data, size_t *dlen)
{
	*data = NULL;
	*dlen = 0;
	return scan(cs, p, len, done, data, dlen);
}
