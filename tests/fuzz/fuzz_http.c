/* libFuzzer target for the HTTP request-head parser, the origin-form rewrite and the
 * error answers. Invariants: an accepted head ends at its first CRLFCRLF within the
 * input and the limits, holds only what the grammar allows, is accepted again when cut
 * at head_len and waits for more one byte earlier; a refusal has a known status and a
 * one-line why; a rewrite or an answer never carries a bare CR or LF in its head. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy_parse.h"
#include "tests/fuzz/fuzz_check.h"

static struct proxy_http_req req, again;
static char out[PROXY_HTTP_MAX_HEAD * 2];

static int visible(unsigned char c)
{
	return c > 0x20 && c < 0x7f;
}

/* Every LF preceded by CR and every CR followed by LF, no NUL, in s[0..n). */
static void check_crlf_only(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		CHECK(s[i] != '\0');
		if (s[i] == '\r')
			CHECK(i + 1 < n && s[i + 1] == '\n');
		if (s[i] == '\n')
			CHECK(i > 0 && s[i - 1] == '\r');
	}
}

static void check_error(size_t size)
{
	static const int statuses[] = {400, 414, 431, 501, 505};
	size_t wn = strnlen(req.why, sizeof(req.why));
	int known = 0;

	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
		known |= req.status == statuses[i];
	CHECK(known);
	CHECK(wn > 0 && wn < sizeof(req.why));
	CHECK(!strchr(req.why, '\r') && !strchr(req.why, '\n'));
	if (req.status == 414)
		CHECK(size > PROXY_HTTP_MAX_LINE);
}

static void check_target(void)
{
	size_t hn = strnlen(req.host, sizeof(req.host));

	CHECK(hn > 0 && hn < sizeof(req.host));
	for (size_t i = 0; i < hn; i++) {
		unsigned char c = (unsigned char)req.host[i];
		CHECK(visible(c) && !strchr("%@/\\?#[]", c));
		CHECK(c != ':' || req.host_is_v6_literal);
	}
	CHECK(req.port >= 1 && req.port <= 65535);
	CHECK(req.method[0] != '\0');
	CHECK(req.version_minor == 0 || req.version_minor == 1);
	if (req.kind == PROXY_HTTP_CONNECT) {
		CHECK(req.path[0] == '\0' && !req.has_body && req.content_length == 0);
		CHECK(strcmp(req.method, "CONNECT") == 0);
		return;
	}
	CHECK(req.kind == PROXY_HTTP_FORWARD);
	CHECK(req.path[0] == '/' && !strchr(req.path, '#'));
	for (const char *p = req.path; *p; p++)
		CHECK(visible((unsigned char)*p));
	CHECK(req.has_body == (req.content_length > 0 || req.chunked));
	CHECK(!req.chunked || (req.content_length == 0 && req.version_minor == 1));
	CHECK(req.content_length <= (1ULL << 53));
}

static void check_rewrite(const char *buf)
{
	int n = proxy_http_rewrite(buf, &req, out, sizeof(out));

	if (req.kind != PROXY_HTTP_FORWARD) {
		CHECK(n == -EINVAL);
		return;
	}
	CHECK(n > 0 && (size_t)n < sizeof(out) && out[n] == '\0');
	check_crlf_only(out, (size_t)n);
	CHECK(n >= 21 && strcmp(out + n - 21, "Connection: close\r\n\r\n") == 0);
	CHECK(strncmp(out, req.method, strlen(req.method)) == 0);
	CHECK(out[strlen(req.method)] == ' ' && out[strlen(req.method) + 1] == '/');
	CHECK(!strcasestr(out, "\nProxy-Authorization:") && !strcasestr(out, "\nUpgrade:"));
	/* only ours, only for a chunked body, exactly once */
	const char *te = strcasestr(out, "\nTransfer-Encoding:");
	CHECK(req.chunked ? te && strncmp(te, "\nTransfer-Encoding: chunked\r\n", 29) == 0 &&
				!strcasestr(te + 1, "\nTransfer-Encoding:")
			  : !te);
}

static void check_ok(const char *buf, size_t size)
{
	size_t h = req.head_len;

	CHECK(h >= 4 && h <= size && h <= PROXY_HTTP_MAX_HEAD);
	CHECK(memmem(buf, h, "\r\n\r\n", 4) == buf + h - 4);
	check_crlf_only(buf, h);
	CHECK(req.status == 0 && req.n_fields <= PROXY_HTTP_MAX_FIELDS);
	for (size_t i = 0; i < req.n_fields; i++) {
		const struct proxy_http_field *f = &req.fields[i];
		CHECK(f->name >= buf && f->name + f->name_len <= buf + h && f->name_len > 0);
		CHECK(f->value >= buf && f->value + f->value_len <= buf + h);
		CHECK(!memchr(f->value, '\r', f->value_len) &&
		      !memchr(f->value, '\n', f->value_len));
		CHECK(!memchr(f->name, ':', f->name_len));
	}
	check_target();
	CHECK(strnlen(req.proxy_auth, sizeof(req.proxy_auth)) < sizeof(req.proxy_auth));
	CHECK(proxy_http_parse(buf, h - 1, &again) == PROXY_HTTP_NEED_MORE);
	CHECK(proxy_http_parse(buf, h, &again) == PROXY_HTTP_OK);
	CHECK(again.head_len == h && again.port == req.port && again.kind == req.kind);
	CHECK(strcmp(again.host, req.host) == 0 && strcmp(again.path, req.path) == 0);
	check_rewrite(buf);
}

/* The input's first bytes as body line and deny header: never a bare CR or LF in the
 * head, and Content-Length equal to the body's length. */
static void check_answer(const char *buf, size_t size)
{
	char s[300];
	size_t n = size < sizeof(s) - 1 ? size : sizeof(s) - 1;

	memcpy(s, buf, n);
	s[n] = '\0';
	int status = size ? (unsigned char)buf[0] + 300 : 403;
	int r = proxy_http_error(status, s, n > 1 && (buf[0] & 1) ? s + 1 : NULL,
				 n > 2 && !(buf[0] & 1) ? s + 2 : NULL, out, sizeof(out));
	CHECK(r > 0 && (size_t)r < sizeof(out));
	const char *end = strstr(out, "\r\n\r\n");
	CHECK(end != NULL);
	check_crlf_only(out, (size_t)(end - out) + 4);
	const char *cl = strstr(out, "Content-Length: ");
	CHECK(cl && cl < end);
	CHECK(strtoul(cl + 16, NULL, 10) == (unsigned long)(out + r - end - 4));
	CHECK(out[r - 1] == '\n' && !memchr(end + 4, '\n', (size_t)(out + r - end - 5)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	enum proxy_http_result r = proxy_http_parse(buf, size, &req);

	if (r == PROXY_HTTP_ERROR) {
		check_error(size);
	} else if (r == PROXY_HTTP_NEED_MORE) {
		CHECK(size <= PROXY_HTTP_MAX_HEAD && !memchr(buf, '\0', size));
	} else {
		CHECK(r == PROXY_HTTP_OK);
		check_ok(buf, size);
	}
	check_answer(buf, size);
	return 0;
}
