/* The request head for the origin of a tunnel whose TLS the proxy terminates. The
 * parser (proxy_http_parse_origin) has already refused every ambiguous head; this only
 * drops the hop-by-hop fields and sets the credential, so what the origin reads is what
 * the rules judged, plus the one header the policy adds. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "proxy/proxy_parse.h"

/* Hop-by-hop: between the client and us. Upgrade goes too, so that no request can
 * switch the connection to a protocol the rules cannot see. */
static const char *const hop_fields[] = {
    "connection",	  "keep-alive", "proxy-connection", "proxy-authorization",
    "proxy-authenticate", "te",		"trailer",	    "upgrade",
};

/* Named in a Connection field of this head? */
static bool connection_named(const struct proxy_http_req *req, const char *name, size_t nl)
{
	for (size_t i = 0; i < req->n_fields; i++) {
		const struct proxy_http_field *f = &req->fields[i];
		size_t pos = 0, el;
		const char *e;

		if (!proxy_http_ieq(f->name, f->name_len, "connection") &&
		    !proxy_http_ieq(f->name, f->name_len, "proxy-connection"))
			continue;
		while (proxy_http_list_next(f->value, f->value_len, &pos, &e, &el))
			if (el == nl && strncasecmp(e, name, nl) == 0)
				return true;
	}
	return false;
}

static bool dropped(const struct proxy_http_req *req, const struct proxy_http_field *f,
		    const char *cred_header)
{
	/* A credential's host answers in identity: a compressed body could not be
	 * scanned for the credential on its way back (conn_tls_http.c masks it). */
	if (cred_header && proxy_http_ieq(f->name, f->name_len, "accept-encoding"))
		return true;
	/* Nor in byte ranges: a range of an echo is a piece of the credential that no
	 * mask recognises (one byte a request would do); the whole body comes back. */
	if (cred_header && (proxy_http_ieq(f->name, f->name_len, "range") ||
			    proxy_http_ieq(f->name, f->name_len, "if-range")))
		return true;
	for (size_t k = 0; k < sizeof(hop_fields) / sizeof(hop_fields[0]); k++)
		if (proxy_http_ieq(f->name, f->name_len, hop_fields[k]))
			return true;
	/* The body is re-encoded (http_chunked.c): its coding is written as we read it,
	 * never in the command's spelling ("CHUNKED"), which a case-sensitive origin
	 * would not take for chunked. */
	if (proxy_http_ieq(f->name, f->name_len, "transfer-encoding"))
		return true;
	if (cred_header && proxy_http_ieq(f->name, f->name_len, cred_header))
		return true; /* the command's own value is replaced, never merged */
	return connection_named(req, f->name, f->name_len);
}

static int put(char *out, size_t cap, size_t *o, const char *s, size_t n)
{
	if (*o + n >= cap)
		return -ENOSPC;
	memcpy(out + *o, s, n);
	*o += n;
	out[*o] = '\0';
	return 0;
}

int proxy_http_origin_head(const char *buf, const struct proxy_http_req *req,
			   const char *cred_header, const char *cred_value, char *out,
			   size_t outlen)
{
	char line[64];
	size_t o = 0;
	int rc;

	if (req->kind != PROXY_HTTP_ORIGIN || outlen == 0)
		return -EINVAL;
	out[0] = '\0';
	rc = put(out, outlen, &o, req->method, strlen(req->method));
	rc = rc ?: put(out, outlen, &o, " ", 1);
	rc = rc ?: put(out, outlen, &o, req->path, strlen(req->path));
	snprintf(line, sizeof(line), " HTTP/1.%d\r\n", req->version_minor);
	rc = rc ?: put(out, outlen, &o, line, strlen(line));
	for (size_t i = 0; rc == 0 && i < req->n_fields; i++) {
		const struct proxy_http_field *f = &req->fields[i];

		if (f->name < buf || dropped(req, f, cred_header))
			continue;
		rc = put(out, outlen, &o, f->name, f->name_len);
		rc = rc ?: put(out, outlen, &o, ": ", 2);
		rc = rc ?: put(out, outlen, &o, f->value, f->value_len);
		rc = rc ?: put(out, outlen, &o, "\r\n", 2);
	}
	if (rc == 0 && req->chunked)
		rc = put(out, outlen, &o, "Transfer-Encoding: chunked\r\n", 28);
	/* An origin that ignores a body ("CL.0") would read it as the start of its next
	 * request, and our next head (judged, with the credential) would complete it:
	 * a request with a body is the connection's last (conn_tls_http.c closes it
	 * after the response), and an origin that honours this never reads the body as
	 * a request at all. */
	if (rc == 0 && (req->chunked || req->content_length))
		rc = put(out, outlen, &o, "Connection: close\r\n", 19);
	if (rc == 0 && cred_header && cred_value) {
		rc = put(out, outlen, &o, "Accept-Encoding: identity\r\n", 27);
		rc = rc ?: put(out, outlen, &o, cred_header, strlen(cred_header));
		rc = rc ?: put(out, outlen, &o, ": ", 2);
		rc = rc ?: put(out, outlen, &o, cred_value, strlen(cred_value));
		rc = rc ?: put(out, outlen, &o, "\r\n", 2);
	}
	rc = rc ?: put(out, outlen, &o, "\r\n", 2);
	return rc ? rc : (int)o;
}

const char *proxy_http_body_refused(const struct proxy_http_req *req)
{
	static const char *const bodyless[] = {"GET", "HEAD", "OPTIONS", "DELETE"};
	static const char *const why[] = {
	    "a GET request with a body (refused under requestRules: an origin that ignores "
	    "its length would read the body as another request)",
	    "a HEAD request with a body (refused under requestRules: an origin that ignores "
	    "its length would read the body as another request)",
	    "an OPTIONS request with a body (refused under requestRules: an origin that "
	    "ignores its length would read the body as another request)",
	    "a DELETE request with a body (refused under requestRules: an origin that ignores "
	    "its length would read the body as another request)",
	};

	if (!req->chunked && req->content_length == 0)
		return NULL;
	for (size_t i = 0; i < sizeof(bodyless) / sizeof(bodyless[0]); i++)
		if (strcasecmp(req->method, bodyless[i]) == 0)
			return why[i];
	return NULL;
}

const char *proxy_http_upgrade_refused(const struct proxy_http_req *req)
{
	for (size_t i = 0; i < req->n_fields; i++)
		if (proxy_http_ieq(req->fields[i].name, req->fields[i].name_len, "upgrade"))
			return "a protocol upgrade (WebSocket...) to a host whose TLS the proxy "
			       "terminates is not supported: its requests are judged one by one";
	return NULL;
}
