/* HTTP/1.x request-head parser for the proxy (CONNECT and absolute-form forwarding).
 *
 * Strict and fail closed: whatever a lenient front end and a lenient origin could read
 * differently is refused, so the proxy never forwards a head the origin might split
 * into two requests. Decisions taken here (each refusal carries its own why):
 * - Lines end with CRLF only. A bare LF is refused (400) like a bare CR: tolerating it
 *   is exactly how a proxy and an origin come to disagree on where a head ends.
 * - Limits are checked while the head is still arriving: a request line beyond 8192
 *   bytes is 414 as soon as byte 8193 shows up; a head that cannot end within 16384
 *   bytes is 431; the 101st field line is 431.
 * - Ports are decimal 1..65535 without sign or leading zeros ("0443" reads as octal to
 *   some tools); Content-Length likewise has no leading zeros and is at most 2^53.
 * - Transfer-Encoding is accepted only as one field whose value is exactly "chunked",
 *   in an HTTP/1.1 request to forward (the body is then decoded and re-encoded by
 *   http_chunked.c). Everything else is refused with 400: with Content-Length (the
 *   classic smuggling shape), in a CONNECT (meaningless), in HTTP/1.0 (RFC 9112 6.1:
 *   faulty framing), duplicated, a list, another coding. A field name that reads as
 *   Content-Length or Transfer-Encoding once '_' becomes '-' is refused.
 *   A CONNECT's Content-Length is checked like any other (a duplicate is still a
 *   smuggling shape) and then ignored: what follows a CONNECT head is tunnel data.
 * - Host in an absolute-form request is replaced, never compared (RFC 9112 3.2.2: a
 *   proxy MUST ignore the received Host and use the target URI's authority):
 *   http_rewrite.c writes the URL's authority as the one Host field, so the origin
 *   always sees the name Decide() judged. libgit2 (cargo's git fetch) sends
 *   "Host: name" without the URL's port; refusing that broke it. What stays a 400:
 *   more than one Host field and a Host value that is not a valid authority (RFC 9112
 *   3.2: both are invalid requests, and which one an origin would read is ambiguous).
 * - In a CONNECT, Host must name the target: names compared case-insensitively with
 *   one trailing dot ignored (as Decide() compares them), IPv6 literals by address; a
 *   Host without a port only has to agree on the name (clients omit :443), since the
 *   tunnel goes to the target's port. Inside a terminated tunnel (origin-form, sent
 *   to the origin as written, with the credential) a Host ending in a dot is refused,
 *   as its SNI would be.
 * - A Connection header may not name Host, Content-Length or Transfer-Encoding: dropping them as
 *   hop-by-hop would desynchronise the body framing with the origin.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "proxy/proxy_parse.h"

static enum proxy_http_result fail(struct proxy_http_req *req, int status, const char *why)
{
	req->status = status;
	snprintf(req->why, sizeof(req->why), "%s", why);
	return PROXY_HTTP_ERROR;
}

static bool is_visible(unsigned char c)
{
	return c > 0x20 && c < 0x7f;
}

/* ------------------------------------------------------------- the head's extent */

/* Find the end of the head, refusing bad bytes and exceeded limits as early as they
 * are visible. Returns OK with req->head_len set, NEED_MORE or ERROR. */
static enum proxy_http_result scan_head(const char *buf, size_t len, struct proxy_http_req *req,
					size_t *line_len)
{
	size_t line_start = 0, lines = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (i >= PROXY_HTTP_MAX_HEAD)
			return fail(req, 431, "request head longer than 16384 bytes");
		if (c == '\0')
			return fail(req, 400, "NUL byte in the request head");
		if (c == '\n')
			return fail(req, 400,
				    "bare LF line ending in the request head (CRLF required)");
		if (c != '\r') {
			if (lines == 0 && i >= PROXY_HTTP_MAX_LINE)
				return fail(req, 414, "request line longer than 8192 bytes");
			if (lines > 0 && i == line_start && (c == ' ' || c == '\t'))
				return fail(req, 400,
					    "obs-fold (header line starting with "
					    "whitespace) is not accepted");
			continue;
		}
		if (i + 2 > PROXY_HTTP_MAX_HEAD)
			return fail(req, 431, "request head longer than 16384 bytes");
		if (i + 1 == len)
			return PROXY_HTTP_NEED_MORE;
		if (buf[i + 1] != '\n')
			return fail(req, 400, "bare CR in the request head");
		if (lines == 0) {
			if (i == 0)
				return fail(req, 400, "empty request line");
			*line_len = i;
		} else if (i == line_start) {
			req->head_len = i + 2;
			return PROXY_HTTP_OK;
		} else if (lines > PROXY_HTTP_MAX_FIELDS) {
			return fail(req, 431, "more than 100 header fields");
		}
		lines++;
		i++;
		line_start = i + 1;
	}
	return PROXY_HTTP_NEED_MORE;
}

/* ---------------------------------------------------------------- request line */

static enum proxy_http_result parse_version(const char *v, size_t n, struct proxy_http_req *req)
{
	if (n == 8 && memcmp(v, "HTTP/1.", 7) == 0 && (v[7] == '0' || v[7] == '1')) {
		req->version_minor = v[7] - '0';
		return PROXY_HTTP_OK;
	}
	if (n == 8 && memcmp(v, "HTTP/", 5) == 0 && v[5] >= '0' && v[5] <= '9' && v[6] == '.' &&
	    v[7] >= '0' && v[7] <= '9')
		return fail(req, 505, "HTTP version not supported (only HTTP/1.0 and HTTP/1.1)");
	return fail(req, 400, "malformed HTTP version");
}

/* METHOD SP target SP version, exactly one SP each. */
static enum proxy_http_result parse_request_line(const char *p, size_t n,
						 struct proxy_http_req *req, const char **target,
						 size_t *target_len)
{
	const char *end = p + n;
	const char *sp1 = memchr(p, ' ', n);
	const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1)) : NULL;

	if (!sp2 || sp1 == p || sp2 == sp1 + 1 || sp2 + 1 == end ||
	    memchr(sp2 + 1, ' ', (size_t)(end - sp2 - 1)))
		return fail(req, 400, "malformed request line (want METHOD SP target SP version)");
	if (!proxy_http_token(p, (size_t)(sp1 - p)))
		return fail(req, 400, "method is not a token");
	if ((size_t)(sp1 - p) >= sizeof(req->method))
		return fail(req, 400, "method longer than 31 bytes");
	if (parse_version(sp2 + 1, (size_t)(end - sp2 - 1), req) != PROXY_HTTP_OK)
		return PROXY_HTTP_ERROR;
	memcpy(req->method, p, (size_t)(sp1 - p));
	*target = sp1 + 1;
	*target_len = (size_t)(sp2 - sp1 - 1);
	return PROXY_HTTP_OK;
}

/* ------------------------------------------------------------------- authority */

struct authority {
	char host[256];
	bool v6;
	uint8_t addr[16];
	unsigned port; /* 0 = absent */
};

static const char *parse_port(const char *p, size_t n, unsigned *port)
{
	unsigned v = 0;

	if (n == 0)
		return "empty port";
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return "port is not a decimal number";
		if (v <= 65535)
			v = v * 10 + (unsigned)(p[i] - '0');
	}
	if (n > 1 && p[0] == '0')
		return "port has leading zeros";
	if (v == 0 || v > 65535)
		return "port out of range 1-65535";
	*port = v;
	return NULL;
}

static const char *authority_bytes(const char *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)a[i];

		if (!is_visible(c))
			return "host contains a byte outside visible ASCII";
		if (c == '%')
			return "'%' in the host (percent-escapes and zone ids are not accepted)";
		if (c == '@')
			return "userinfo ('@') in the target is not accepted";
		if (c == '\\')
			return "backslash in the host";
		if (c == '/' || c == '?' || c == '#')
			return "authority must be host:port only (no path, query or fragment)";
	}
	return NULL;
}

static const char *parse_v6(const char *a, size_t n, struct authority *au, size_t *consumed)
{
	const char *close = memchr(a, ']', n);
	char text[64];
	size_t tn = close ? (size_t)(close - a - 1) : 0;

	if (!close || tn == 0 || tn >= sizeof(text))
		return "malformed IPv6 literal in the host";
	memcpy(text, a + 1, tn);
	text[tn] = '\0';
	if (inet_pton(AF_INET6, text, au->addr) != 1)
		return "malformed IPv6 literal in the host";
	memcpy(au->host, text, tn + 1);
	au->v6 = true;
	*consumed = tn + 2;
	return NULL;
}

/* host[:port] or [v6][:port]; the host kept as sent. NULL or why. */
static const char *parse_authority(const char *a, size_t n, bool port_required,
				   struct authority *au)
{
	const char *why = authority_bytes(a, n);
	size_t hn;

	memset(au, 0, sizeof(*au));
	if (why)
		return why;
	if (n > 0 && a[0] == '[') {
		if ((why = parse_v6(a, n, au, &hn)))
			return why;
	} else {
		const char *colon = memchr(a, ':', n);

		hn = colon ? (size_t)(colon - a) : n;
		if (colon && memchr(colon + 1, ':', n - hn - 1))
			return "more than one ':' in the authority (IPv6 needs [brackets])";
		if (memchr(a, '[', hn) || memchr(a, ']', hn))
			return "misplaced '[' or ']' in the host";
		if (hn == 0)
			return "empty host in the target";
		if (hn >= sizeof(au->host))
			return "host longer than 255 bytes";
		memcpy(au->host, a, hn);
	}
	if (hn == n)
		return port_required ? "missing port (want host:port)" : NULL;
	if (a[hn] != ':')
		return "unexpected bytes after the IPv6 literal";
	return parse_port(a + hn + 1, n - hn - 1, &au->port);
}

static void take_authority(struct proxy_http_req *req, const struct authority *au)
{
	memcpy(req->host, au->host, sizeof(req->host));
	req->host_is_v6_literal = au->v6;
}

/* ---------------------------------------------------------------------- target */

static enum proxy_http_result parse_connect_target(const char *t, size_t n,
						   struct proxy_http_req *req)
{
	struct authority au;
	char why[sizeof(req->why)];
	const char *w = parse_authority(t, n, true, &au);

	if (w) {
		snprintf(why, sizeof(why), "CONNECT target: %s", w);
		return fail(req, 400, why);
	}
	req->kind = PROXY_HTTP_CONNECT;
	take_authority(req, &au);
	req->port = au.port;
	return PROXY_HTTP_OK;
}

static enum proxy_http_result parse_path(const char *p, size_t n, struct proxy_http_req *req)
{
	size_t off = 0;

	if (memchr(p, '#', n))
		return fail(req, 400, "fragment in the request target");
	if (n == 0 || p[0] == '?')
		req->path[off++] = '/';
	if (off + n >= sizeof(req->path))
		return fail(req, 414, "request path too long");
	memcpy(req->path + off, p, n);
	req->path[off + n] = '\0';
	return PROXY_HTTP_OK;
}

/* Anything that is not an http:// absolute-form target, each with its own why. */
static enum proxy_http_result refuse_target_form(const char *t, size_t n,
						 struct proxy_http_req *req)
{
	const char *sep = memmem(t, n, "://", 3);

	if (t[0] == '/')
		return fail(req, 400, "not a proxy request (origin-form target)");
	if (n == 1 && t[0] == '*')
		return fail(req, 400, "not a proxy request (asterisk-form target)");
	if (sep && sep - t == 5 && strncasecmp(t, "https", 5) == 0)
		return fail(req, 400, "https:// is not forwarded: use CONNECT for TLS");
	if (sep)
		return fail(req, 400, "unsupported scheme: only http:// is forwarded, use CONNECT");
	return fail(req, 400,
		    "not a proxy request (want CONNECT host:port or an http:// absolute URL)");
}

static enum proxy_http_result parse_forward_target(const char *t, size_t n,
						   struct proxy_http_req *req)
{
	struct authority au;
	char why[sizeof(req->why)];

	if (n < 7 || strncasecmp(t, "http://", 7) != 0)
		return refuse_target_form(t, n, req);
	t += 7;
	n -= 7;
	size_t an = 0;
	while (an < n && t[an] != '/' && t[an] != '?' && t[an] != '#')
		an++;
	const char *w = parse_authority(t, an, false, &au);
	if (w) {
		snprintf(why, sizeof(why), "target authority: %s", w);
		return fail(req, 400, why);
	}
	req->kind = PROXY_HTTP_FORWARD;
	take_authority(req, &au);
	req->port = au.port ? au.port : 80;
	return parse_path(t + an, n - an, req);
}

static enum proxy_http_result parse_target(const char *t, size_t n, struct proxy_http_req *req)
{
	for (size_t i = 0; i < n; i++)
		if (!is_visible((unsigned char)t[i]))
			return fail(req, 400,
				    "request target contains a byte outside visible ASCII");
	if (strcmp(req->method, "CONNECT") == 0)
		return parse_connect_target(t, n, req);
	return parse_forward_target(t, n, req);
}

/* ---------------------------------------------------------------------- fields */

struct facts {
	int n_host, n_cl, n_te, n_pauth;
	bool conn_close, conn_keep_alive;
	const struct proxy_http_field *host;
};

static bool names_agree(const char *a, const char *b)
{
	size_t an = strlen(a), bn = strlen(b);

	if (an > 1 && a[an - 1] == '.')
		an--;
	if (bn > 1 && b[bn - 1] == '.')
		bn--;
	return an == bn && strncasecmp(a, b, an) == 0;
}

static enum proxy_http_result check_host(const struct proxy_http_field *f,
					 struct proxy_http_req *req)
{
	struct authority au;
	char why[sizeof(req->why)];
	const char *w = parse_authority(f->value, f->value_len, false, &au);

	if (w) {
		snprintf(why, sizeof(why), "malformed Host header: %s", w);
		return fail(req, 400, why);
	}
	if (req->kind == PROXY_HTTP_FORWARD)
		return PROXY_HTTP_OK; /* replaced by the target's authority (http_rewrite.c) */
	size_t hl = strlen(au.host);

	/* The origin of a terminated tunnel gets the Host as written: one with a trailing
	 * dot may be served by another virtual host, as the SNI's dot is refused (tls:
	 * SNI ends with a dot). */
	if (req->kind == PROXY_HTTP_ORIGIN && !au.v6 && hl && au.host[hl - 1] == '.')
		return fail(req, 400,
			    "Host header ends with a dot (write the name without it inside a "
			    "tunnel the proxy terminates)");
	bool same = au.v6 == req->host_is_v6_literal;
	if (same && au.v6) {
		uint8_t t[16];

		same = inet_pton(AF_INET6, req->host, t) == 1 && memcmp(t, au.addr, 16) == 0;
	} else if (same) {
		same = names_agree(au.host, req->host);
	}
	if (au.port && au.port != req->port)
		same = false;
	if (!same)
		return fail(req, 400, "Host header disagrees with the target");
	return PROXY_HTTP_OK;
}

static const char *on_content_length(struct facts *fx, const struct proxy_http_field *f,
				     struct proxy_http_req *req)
{
	if (++fx->n_cl > 1)
		return "duplicate Content-Length";
	return proxy_http_content_length(f->value, f->value_len, &req->content_length);
}

/* Exactly one field, exactly "chunked": a list ("gzip, chunked", "chunked, chunked"),
 * another coding, or a second field is where proxies and origins have disagreed on
 * which coding is final, so each is refused rather than interpreted. */
static const char *on_transfer_encoding(struct facts *fx, const struct proxy_http_field *f,
					struct proxy_http_req *req)
{
	size_t pos = 0, n, count = 0;
	const char *e;
	bool last_chunked = false;

	(void)req;
	if (++fx->n_te > 1)
		return "duplicate Transfer-Encoding";
	while (proxy_http_list_next(f->value, f->value_len, &pos, &e, &n)) {
		count++;
		last_chunked = proxy_http_ieq(e, n, "chunked");
	}
	if (count == 1 && last_chunked && memchr(f->value, ',', f->value_len) == NULL)
		return NULL;
	if (count > 1 && !last_chunked)
		return "Transfer-Encoding: chunked is not the final coding";
	if (count > 1)
		return "Transfer-Encoding with more than one coding (only chunked is forwarded)";
	return "Transfer-Encoding other than chunked (only chunked is forwarded)";
}

static const char *on_host(struct facts *fx, const struct proxy_http_field *f,
			   struct proxy_http_req *req)
{
	(void)req;
	if (++fx->n_host > 1)
		return "duplicate Host header";
	fx->host = f;
	return NULL;
}

static const char *on_proxy_auth(struct facts *fx, const struct proxy_http_field *f,
				 struct proxy_http_req *req)
{
	if (++fx->n_pauth > 1)
		return "duplicate Proxy-Authorization";
	if (f->value_len >= sizeof(req->proxy_auth))
		return "Proxy-Authorization longer than 255 bytes";
	memcpy(req->proxy_auth, f->value, f->value_len);
	req->proxy_auth[f->value_len] = '\0';
	return NULL;
}

static const char *on_connection(struct facts *fx, const struct proxy_http_field *f,
				 struct proxy_http_req *req)
{
	size_t pos = 0, n;
	const char *e;

	(void)req;
	while (proxy_http_list_next(f->value, f->value_len, &pos, &e, &n)) {
		if (!proxy_http_token(e, n))
			return "malformed Connection header";
		if (proxy_http_ieq(e, n, "close"))
			fx->conn_close = true;
		else if (proxy_http_ieq(e, n, "keep-alive"))
			fx->conn_keep_alive = true;
		else if (proxy_http_ieq(e, n, "host") || proxy_http_ieq(e, n, "content-length") ||
			 proxy_http_ieq(e, n, "transfer-encoding"))
			return "Connection header names an end-to-end field";
	}
	return NULL;
}

static const struct {
	const char *name;
	const char *(*fn)(struct facts *, const struct proxy_http_field *, struct proxy_http_req *);
} field_handlers[] = {
    {"host", on_host},
    {"content-length", on_content_length},
    {"transfer-encoding", on_transfer_encoding},
    {"proxy-authorization", on_proxy_auth},
    {"connection", on_connection},
    {"proxy-connection", on_connection},
};

static enum proxy_http_result parse_fields(const char *buf, size_t start,
					   struct proxy_http_req *req, struct facts *fx)
{
	size_t end = req->head_len - 2;

	for (size_t ls = start; ls < end;) {
		const char *cr = memchr(buf + ls, '\r', end - ls);
		size_t le = (size_t)(cr - buf);
		struct proxy_http_field *f = &req->fields[req->n_fields];
		const char *why = proxy_http_split_field(buf + ls, le - ls, f);

		if (why)
			return fail(req, 400, why);
		req->n_fields++;
		for (size_t k = 0; k < sizeof(field_handlers) / sizeof(field_handlers[0]); k++)
			if (proxy_http_ieq(f->name, f->name_len, field_handlers[k].name) &&
			    (why = field_handlers[k].fn(fx, f, req)))
				return fail(req, 400, why);
		ls = le + 2;
	}
	return PROXY_HTTP_OK;
}

/* Framing, Host agreement and connection persistence, once every field is known. */
static enum proxy_http_result check_fields(struct proxy_http_req *req, const struct facts *fx)
{
	bool fwd = req->kind != PROXY_HTTP_CONNECT; /* FORWARD, or ORIGIN (a terminated tunnel) */

	if (fx->n_te && fx->n_cl)
		return fail(req, 400, "Content-Length together with Transfer-Encoding");
	if (fx->n_te && !fwd)
		return fail(req, 400, "Transfer-Encoding in a CONNECT request");
	if (fx->n_te && req->version_minor == 0)
		return fail(req, 400, "Transfer-Encoding in an HTTP/1.0 request");
	if (fx->host && check_host(fx->host, req) != PROXY_HTTP_OK)
		return PROXY_HTTP_ERROR;
	if (!fwd)
		req->content_length = 0; /* a CONNECT body is tunnel data, not framing */
	req->chunked = fx->n_te > 0;
	req->has_body = fwd && (req->content_length > 0 || req->chunked);
	if (req->version_minor == 1)
		req->keep_alive = !fx->conn_close;
	else
		req->keep_alive = fx->conn_keep_alive && !fx->conn_close;
	return PROXY_HTTP_OK;
}

enum proxy_http_result proxy_http_parse(const char *buf, size_t len, struct proxy_http_req *req)
{
	size_t line_len = 0, target_len = 0;
	const char *target = NULL;
	struct facts fx = {0};
	enum proxy_http_result r;

	memset(req, 0, sizeof(*req));
	r = scan_head(buf, len, req, &line_len);
	if (r != PROXY_HTTP_OK)
		return r;
	if (parse_request_line(buf, line_len, req, &target, &target_len) != PROXY_HTTP_OK ||
	    parse_target(target, target_len, req) != PROXY_HTTP_OK ||
	    parse_fields(buf, line_len + 2, req, &fx) != PROXY_HTTP_OK ||
	    check_fields(req, &fx) != PROXY_HTTP_OK)
		return PROXY_HTTP_ERROR;
	return PROXY_HTTP_OK;
}

/* Inside a tunnel whose TLS the proxy terminates: origin-form requests to the tunnel's
 * own host, with the same strict head rules. */
enum proxy_http_result proxy_http_parse_origin(const char *buf, size_t len, const char *host,
					       unsigned port, struct proxy_http_req *req)
{
	size_t line_len = 0, target_len = 0;
	const char *target = NULL;
	struct facts fx = {0};
	enum proxy_http_result r;

	memset(req, 0, sizeof(*req));
	r = scan_head(buf, len, req, &line_len);
	if (r != PROXY_HTTP_OK)
		return r;
	if (parse_request_line(buf, line_len, req, &target, &target_len) != PROXY_HTTP_OK)
		return PROXY_HTTP_ERROR;
	if (strcmp(req->method, "CONNECT") == 0)
		return fail(req, 405, "CONNECT inside a tunnel the proxy terminates");
	if (target_len == 0 || target[0] != '/')
		return fail(req, 400, "want an origin-form target (/path) inside the tunnel");
	for (size_t i = 0; i < target_len; i++)
		if (!is_visible((unsigned char)target[i]))
			return fail(req, 400,
				    "request target contains a byte outside visible ASCII");
	req->kind = PROXY_HTTP_ORIGIN;
	snprintf(req->host, sizeof(req->host), "%s", host);
	req->port = port;
	if (parse_path(target, target_len, req) != PROXY_HTTP_OK ||
	    parse_fields(buf, line_len + 2, req, &fx) != PROXY_HTTP_OK ||
	    check_fields(req, &fx) != PROXY_HTTP_OK)
		return PROXY_HTTP_ERROR;
	/* HTTP/1.0 too (review 23): an origin picks its site without one, and the request
	 * (with the credential) could reach another site than the tunnel's host. */
	if (!fx.host)
		return fail(req, 400, "missing Host header");
	return PROXY_HTTP_OK;
}
