/* What the proxy writes for HTTP: the origin-form head of a forwarded request and the
 * complete answer to a refused one.
 *
 * Forwarding design: one origin connection per request. The head sent to the origin
 * keeps the client's HTTP version (a 1.0 client must not receive a chunked response,
 * and the proxy relays the response bytes unchanged) and ends with "Connection: close",
 * so the origin closes after its response and no origin connection is ever shared
 * between two decisions. Host is always the target URI's authority, written as the
 * first field; the client's Host field is dropped (RFC 9112 3.2.2), so what the origin
 * reads as the host is what Decide() judged.
 * A chunked request keeps "Transfer-Encoding: chunked" (added back after the
 * hop-by-hop fields are dropped): its body is re-encoded by proxy_chunked_feed. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "proxy/proxy_parse.h"

struct out {
	char *p;
	size_t cap, len;
	bool overflow;
};

static void put_n(struct out *o, const char *s, size_t n)
{
	if (o->overflow || n >= o->cap - o->len) {
		o->overflow = true;
		return;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
	o->p[o->len] = '\0';
}

static void put(struct out *o, const char *s)
{
	put_n(o, s, strlen(s));
}

/* Copy s with every control byte replaced by a space: nothing the caller passes can
 * end a header line or start a new one. */
static void put_clean(struct out *o, const char *s)
{
	for (; *s; s++) {
		char c = ((unsigned char)*s < 0x20 || *s == 0x7f) ? ' ' : *s;

		put_n(o, &c, 1);
	}
}

static int finish(struct out *o)
{
	if (o->overflow)
		return -ENOSPC;
	return (int)o->len;
}

/* ---------------------------------------------------------------- forwarding */

static const char *const hop_by_hop[] = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
};

static bool name_is(const struct proxy_http_field *f, const char *name, size_t n)
{
	return f->name_len == n && strncasecmp(f->name, name, n) == 0;
}

/* Hop-by-hop: a fixed name, or one listed in any Connection field of the request. */
static bool is_hop_by_hop(const struct proxy_http_req *req, const struct proxy_http_field *f)
{
	for (size_t k = 0; k < sizeof(hop_by_hop) / sizeof(hop_by_hop[0]); k++)
		if (name_is(f, hop_by_hop[k], strlen(hop_by_hop[k])))
			return true;
	for (size_t i = 0; i < req->n_fields; i++) {
		const struct proxy_http_field *c = &req->fields[i];
		size_t pos = 0, n;
		const char *e;

		if (!name_is(c, "connection", 10))
			continue;
		while (proxy_http_list_next(c->value, c->value_len, &pos, &e, &n))
			if (name_is(f, e, n))
				return true;
	}
	return false;
}

static bool within(const char *buf, const struct proxy_http_req *req, const char *p, size_t n)
{
	return p >= buf && p <= buf + req->head_len && n <= (size_t)(buf + req->head_len - p);
}

static void put_host_field(struct out *o, const struct proxy_http_req *req)
{
	char port[16] = "";

	if (req->port != 80)
		snprintf(port, sizeof(port), ":%u", req->port);
	char name[sizeof(req->host)];
	size_t n = strlen(req->host);

	/* The name as the rules judged it (review 23): lower case, no trailing dot; an
	 * origin routing on Host would otherwise see another spelling than was decided. */
	while (n > 0 && req->host[n - 1] == '.')
		n--;
	for (size_t i = 0; i < n; i++)
		name[i] = (char)tolower((unsigned char)req->host[i]);
	name[n] = '\0';
	put(o, "Host: ");
	put(o, req->host_is_v6_literal ? "[" : "");
	put(o, name);
	put(o, req->host_is_v6_literal ? "]" : "");
	put(o, port);
	put(o, "\r\n");
}

int proxy_http_rewrite(const char *buf, const struct proxy_http_req *req, char *out, size_t outlen)
{
	struct out o = {out, outlen, 0, outlen == 0};

	if (req->kind != PROXY_HTTP_FORWARD)
		return -EINVAL;
	for (size_t i = 0; i < req->n_fields; i++) {
		const struct proxy_http_field *f = &req->fields[i];

		if (!within(buf, req, f->name, f->name_len) ||
		    !within(buf, req, f->value, f->value_len))
			return -EINVAL;
	}
	put(&o, req->method);
	put(&o, " ");
	put(&o, req->path);
	put(&o, req->version_minor == 0 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n");
	put_host_field(&o, req);
	for (size_t i = 0; i < req->n_fields; i++) {
		const struct proxy_http_field *f = &req->fields[i];

		if (is_hop_by_hop(req, f) || name_is(f, "host", 4))
			continue;
		put_n(&o, f->name, f->name_len);
		put(&o, ": ");
		put_n(&o, f->value, f->value_len);
		put(&o, "\r\n");
	}
	if (req->chunked) /* the body follows re-encoded by proxy_chunked_feed */
		put(&o, "Transfer-Encoding: chunked\r\n");
	put(&o, "Connection: close\r\n\r\n");
	return finish(&o);
}

/* -------------------------------------------------------------------- refusals */

static const struct {
	int code;
	const char *reason;
} reasons[] = {
    {400, "Bad Request"},
    {403, "Forbidden"},
    {405, "Method Not Allowed"},
    {407, "Proxy Authentication Required"},
    {408, "Request Timeout"},
    {411, "Length Required"},
    {413, "Content Too Large"},
    {414, "URI Too Long"},
    {431, "Request Header Fields Too Large"},
    {500, "Internal Server Error"},
    {501, "Not Implemented"},
    {502, "Bad Gateway"},
    {503, "Service Unavailable"},
    {504, "Gateway Timeout"},
    {505, "HTTP Version Not Supported"},
};

/* Unknown codes become 500: the proxy never emits a status it cannot name. */
static int known_status(int status, const char **reason)
{
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (reasons[i].code == status) {
			*reason = reasons[i].reason;
			return status;
		}
	*reason = "Internal Server Error";
	return 500;
}

int proxy_http_error(int status, const char *body_line, const char *deny_header,
		     const char *error_header, char *out, size_t outlen)
{
	struct out o = {out, outlen, 0, outlen == 0};
	const char *reason;
	char num[64];

	status = known_status(status, &reason);
	if (!body_line)
		body_line = reason;
	snprintf(num, sizeof(num), "HTTP/1.1 %d ", status);
	put(&o, num);
	put(&o, reason);
	put(&o, "\r\n");
	if (status == 407)
		put(&o, "Proxy-Authenticate: Basic realm=\"halo-run\"\r\n");
	put(&o, "Content-Type: text/plain; charset=utf-8\r\n");
	snprintf(num, sizeof(num), "Content-Length: %zu\r\n", strlen(body_line) + 1);
	put(&o, num);
	put(&o, "Connection: close\r\n");
	if (deny_header) {
		put(&o, "X-Halo-Deny: ");
		put_clean(&o, deny_header);
		put(&o, "\r\n");
	} else if (error_header) {
		put(&o, "X-Halo-Error: ");
		put_clean(&o, error_header);
		put(&o, "\r\n");
	}
	put(&o, "\r\n");
	put_clean(&o, body_line);
	put(&o, "\n");
	return finish(&o);
}
