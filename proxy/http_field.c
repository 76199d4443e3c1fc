/* Field-line grammar shared by the request-head parser (http.c), the chunked body
 * decoder's trailers (http_chunked.c) and the origin's response heads (resp.c):
 * names compared without case, Content-Length, tokens, comma lists, one field line. The rules
 * are the strict ones of http.c's header comment: no whitespace before the colon, no
 * control byte in a value, no name that reads as a framing field once '_' is '-'. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "policy/policy.h"
#include "proxy/proxy_parse.h"

bool proxy_http_ieq(const char *a, size_t an, const char *b)
{
	return an == strlen(b) && strncasecmp(a, b, an) == 0;
}

/* The checks in this order, so that the why names the first thing wrong. */
const char *proxy_http_content_length(const char *v, size_t n, unsigned long long *out)
{
	unsigned long long x = 0;

	if (n == 0)
		return "Content-Length is not a decimal number";
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return "Content-Length is not a decimal number";
		if (x <= PROXY_HTTP_SIZE_MAX) /* stops before it could wrap */
			x = x * 10 + (unsigned)(v[i] - '0');
	}
	if (n > 1 && v[0] == '0')
		return "Content-Length has leading zeros";
	if (x > PROXY_HTTP_SIZE_MAX)
		return "Content-Length larger than 2^53";
	*out = x;
	return NULL;
}

/* RFC 9110 tchar. */
bool proxy_http_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

bool proxy_http_token(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!proxy_http_tchar((unsigned char)s[i]))
			return false;
	return true;
}

bool proxy_http_list_next(const char *v, size_t n, size_t *pos, const char **elem, size_t *elem_len)
{
	size_t i = *pos;

	for (;;) {
		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		if (i >= n) {
			*pos = n;
			return false;
		}
		size_t start = i;
		while (i < n && v[i] != ',')
			i++;
		size_t end = i;
		while (end > start && (v[end - 1] == ' ' || v[end - 1] == '\t'))
			end--;
		*elem = v + start;
		*elem_len = end - start;
		*pos = i;
		return true;
	}
}

/* A name that only an '_'-to-'-' folding origin would read as a framing field. */
static bool framing_lookalike(const char *name, size_t n)
{
	static const char *const framing[] = {"content-length", "transfer-encoding"};

	if (!memchr(name, '_', n))
		return false;
	for (size_t k = 0; k < sizeof(framing) / sizeof(framing[0]); k++) {
		if (n != strlen(framing[k]))
			continue;
		size_t i = 0;
		while (i < n && (name[i] == '_' ? '-' : (name[i] | 0x20)) == framing[k][i])
			i++;
		if (i == n)
			return true;
	}
	return false;
}

const char *proxy_http_split_field(const char *p, size_t n, struct proxy_http_field *f)
{
	const char *colon = memchr(p, ':', n);

	if (!colon)
		return "header line without a colon";
	size_t nn = (size_t)(colon - p);
	if (nn == 0)
		return "empty header field name";
	if (p[nn - 1] == ' ' || p[nn - 1] == '\t')
		return "whitespace before the colon in a header field";
	if (!proxy_http_token(p, nn))
		return "header field name is not a token";
	if (framing_lookalike(p, nn))
		return "header field name reads as Content-Length or Transfer-Encoding";
	const char *v = colon + 1, *end = p + n;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	for (const char *q = v; q < end; q++)
		if (((unsigned char)*q < 0x20 && *q != '\t') || *q == 0x7f)
			return "control character in a header field value";
	*f = (struct proxy_http_field){p, nn, v, (size_t)(end - v)};
	return NULL;
}

void proxy_http_rules_override(const struct proxy_http_req *req, const char *host,
			       struct policy_request_decision *d)
{
	for (size_t i = 0; d->applies && d->allow && i < req->n_fields; i++) {
		const struct proxy_http_field *f = &req->fields[i];

		if (!policy_request_override_field(f->name, f->name_len))
			continue;
		d->allow = false;
		snprintf(d->rule, sizeof(d->rule),
			 "requestRules for %.100s: the %.*s field would let the origin run another "
			 "method or path than the one checked",
			 host, (int)f->name_len, f->name);
	}
}
