/* Origin-form requests inside a terminated tunnel: the parser's hostile table (the same
 * strict rules as the proxy's own heads, plus the tunnel's host), and the exact head the
 * origin gets: hop-by-hop fields dropped, every spelling of the credential's header
 * replaced by the one value, nothing smuggled by a Connection list. */
#include <errno.h>
#include <string.h>

#include "proxy/proxy_parse.h"
#include "tests/unit/unit.h"

#define ROWS(a) ((int)(sizeof(a) / sizeof((a)[0])))

static struct proxy_http_req req;
static char out[PROXY_HTTP_MAX_HEAD + 4096];

#define H "Host: api.example\r\n"

struct bad_row {
	const char *in;
	int status;
	const char *why;
};

static const struct bad_row bad_rows[] = {
    {"GET http://api.example/x HTTP/1.1\r\n" H "\r\n", 400, "origin-form"},
    {"GET https://api.example/x HTTP/1.1\r\n" H "\r\n", 400, "origin-form"},
    {"GET * HTTP/1.1\r\n" H "\r\n", 400, "origin-form"},
    {"OPTIONS * HTTP/1.1\r\n" H "\r\n", 400, "origin-form"},
    {"CONNECT api.example:443 HTTP/1.1\r\n" H "\r\n", 405, "CONNECT inside"},
    {"GET /x HTTP/1.1\r\n\r\n", 400, "missing Host"},
    {"GET /x HTTP/1.1\r\nHost: evil.example\r\n\r\n", 400, "disagrees"},
    {"GET /x HTTP/1.1\r\nHost: api.example:444\r\n\r\n", 400, "disagrees"},
    {"GET /x HTTP/1.1\r\nHost: api.example.evil\r\n\r\n", 400, "disagrees"},
    /* a trailing dot would reach the origin as written, with the credential (review 21) */
    {"GET /x HTTP/1.1\r\nHost: api.example.\r\n\r\n", 400, "ends with a dot"},
    {"GET /x HTTP/1.1\r\nHost: API.EXAMPLE.:443\r\n\r\n", 400, "ends with a dot"},
    {"GET /x HTTP/1.0\r\nHost: api.example.\r\n\r\n", 400, "ends with a dot"},
    {"GET /x HTTP/1.1\r\nHost: api.example..\r\n\r\n", 400, "Host"},
    {"GET /x HTTP/1.1\r\nHost: user@api.example\r\n\r\n", 400, "Host"},
    {"GET /x HTTP/1.1\r\n" H H "\r\n", 400, "duplicate Host"},
    {"GET /x HTTP/1.1\r\n" H "Content-Length: 1\r\nContent-Length: 1\r\n\r\n", 400,
     "duplicate Content-Length"},
    {"POST /x HTTP/1.1\r\n" H "Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
     "together"},
    {"POST /x HTTP/1.1\r\n" H "Transfer-Encoding: gzip, chunked\r\n\r\n", 400, "more than one"},
    {"POST /x HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
     400, "duplicate Transfer-Encoding"},
    {"POST /x HTTP/1.0\r\n" H "Transfer-Encoding: chunked\r\n\r\n", 400, "HTTP/1.0"},
    {"POST /x HTTP/1.1\r\n" H "Content-Length: -1\r\n\r\n", 400, "decimal"},
    {"POST /x HTTP/1.1\r\n" H "Content_Length: 5\r\n\r\n", 400, ""},
    {"GET /x HTTP/1.1\r\n" H "X: a\rb\r\n\r\n", 400, "bare CR"},
    {"GET /x HTTP/1.1\n" H "\r\n", 400, "bare LF"},
    {"GET /x HTTP/1.1\r\n" H " folded\r\n\r\n", 400, "obs-fold"},
    {"GET /x#frag HTTP/1.1\r\n" H "\r\n", 400, "fragment"},
    {"GET /x\x01 HTTP/1.1\r\n" H "\r\n", 400, ""},
    {"GET /x HTTP/2.0\r\n" H "\r\n", 505, ""},
    {"GET /x HTTP/1.1\r\n" H "Connection: host\r\n\r\n", 400, "end-to-end"},
    {"GET /x HTTP/1.1\r\n" H "Connection: Content-Length\r\n\r\n", 400, "end-to-end"},
};

START_TEST(bad_table)
{
	const struct bad_row *r = &bad_rows[_i];
	enum proxy_http_result rc =
	    proxy_http_parse_origin(r->in, strlen(r->in), "api.example", 443, &req);

	ck_assert_msg(rc == PROXY_HTTP_ERROR && req.status == r->status && strstr(req.why, r->why),
		      "row %d: rc %d status %d why '%s'", _i, rc, req.status, req.why);
}
END_TEST

START_TEST(good_heads)
{
	static const char in[] = "POST /repos/acme/x?y=1 HTTP/1.1\r\nHost: API.example:443\r\n"
				 "Transfer-Encoding: chunked\r\n\r\nBODY";

	ck_assert_int_eq(proxy_http_parse_origin(in, sizeof(in) - 1, "api.example", 443, &req),
			 PROXY_HTTP_OK);
	ck_assert_int_eq(req.kind, PROXY_HTTP_ORIGIN);
	ck_assert_str_eq(req.path, "/repos/acme/x?y=1");
	ck_assert_str_eq(req.method, "POST");
	ck_assert(req.chunked && req.has_body && req.keep_alive);
	ck_assert_uint_eq(req.head_len, sizeof(in) - 1 - 4);
	/* HTTP/1.0 without Host: refused too (review 23: the origin picked its site
	 * without one, with the credential on the request) */
	ck_assert_int_eq(
	    proxy_http_parse_origin("GET / HTTP/1.0\r\n\r\n", 18, "api.example", 443, &req),
	    PROXY_HTTP_ERROR);
	ck_assert_int_eq(proxy_http_parse_origin("GET / HTTP/1.0\r\nHost: api.example\r\n\r\n", 37,
						 "api.example", 443, &req),
			 PROXY_HTTP_OK);
	ck_assert(!req.keep_alive);
	ck_assert_int_eq(
	    proxy_http_parse_origin("GET / HTTP/1.1\r\nHost: api.ex", 28, "api.example", 443, &req),
	    PROXY_HTTP_NEED_MORE);
}
END_TEST

static const char *head_for(const char *in, const char *hdr, const char *val)
{
	int n;

	ck_assert_int_eq(proxy_http_parse_origin(in, strlen(in), "api.example", 443, &req),
			 PROXY_HTTP_OK);
	n = proxy_http_origin_head(in, &req, hdr, val, out, sizeof(out));
	ck_assert_int_gt(n, 0);
	ck_assert_uint_eq(strlen(out), (size_t)n);
	return out;
}

START_TEST(credential_replaced)
{
	const char *o = head_for("GET /x HTTP/1.1\r\n" H "authorization: forged\r\n"
				 "X-Keep: 1\r\nAUTHORIZATION: twice\r\n\r\n",
				 "Authorization", "Bearer s3cret");

	ck_assert_str_eq(o, "GET /x HTTP/1.1\r\n" H "X-Keep: 1\r\nAccept-Encoding: identity\r\n"
			    "Authorization: Bearer s3cret\r\n\r\n");
	/* a credential's host answers in identity, so that the answer can be scanned */
	o = head_for("GET /x HTTP/1.1\r\n" H
		     "Accept-Encoding: gzip, br\r\naccept-encoding: zstd\r\n\r\n",
		     "Authorization", "Bearer s3cret");
	ck_assert_str_eq(o, "GET /x HTTP/1.1\r\n" H "Accept-Encoding: identity\r\n"
			    "Authorization: Bearer s3cret\r\n\r\n");
	o = head_for("GET /x HTTP/1.1\r\n" H "Accept-Encoding: gzip\r\n\r\n", NULL, NULL);
	ck_assert_str_eq(o, "GET /x HTTP/1.1\r\n" H "Accept-Encoding: gzip\r\n\r\n");
	o = head_for("GET /x HTTP/1.1\r\n" H "\r\n", NULL, NULL);
	ck_assert_str_eq(o, "GET /x HTTP/1.1\r\n" H "\r\n");
	o = head_for("GET /x HTTP/1.1\r\n" H "Authorization: mine\r\n\r\n", NULL, NULL);
	ck_assert_str_eq(o, "GET /x HTTP/1.1\r\n" H "Authorization: mine\r\n\r\n");
}
END_TEST

/* A byte range of an echo is a piece of the credential no mask can recognise (any
 * one byte of it, one request at a time): a credential's host is asked for whole
 * bodies. Elsewhere ranges pass. */
START_TEST(range_dropped_for_credential)
{
	const char *o = head_for("GET /x HTTP/1.1\r\n" H "Range: bytes=13-20\r\n"
				 "X-Keep: 1\r\nIf-Range: \"e1\"\r\nrange: bytes=1-2\r\n\r\n",
				 "Authorization", "Bearer s3cret");

	ck_assert_str_eq(o, "GET /x HTTP/1.1\r\n" H "X-Keep: 1\r\nAccept-Encoding: identity\r\n"
			    "Authorization: Bearer s3cret\r\n\r\n");
	o = head_for("GET /x HTTP/1.1\r\n" H "Range: bytes=13-20\r\n\r\n", NULL, NULL);
	ck_assert_str_eq(o, "GET /x HTTP/1.1\r\n" H "Range: bytes=13-20\r\n\r\n");
}
END_TEST

START_TEST(hop_by_hop_dropped)
{
	const char *o =
	    head_for("GET /x HTTP/1.1\r\n" H "Connection: keep-alive, X-Secret, Upgrade\r\n"
		     "Keep-Alive: 5\r\nX-Secret: y\r\nUpgrade: websocket\r\n"
		     "Proxy-Authorization: Basic x\r\nProxy-Connection: close\r\n"
		     "TE: trailers\r\nTrailer: X\r\nX-Stay: 1\r\n\r\n",
		     "X-Api-Key", "k");

	ck_assert_str_eq(o, "GET /x HTTP/1.1\r\n" H
			    "X-Stay: 1\r\nAccept-Encoding: identity\r\nX-Api-Key: k\r\n\r\n");
	/* A Connection list naming the credential's header drops the command's copy only. */
	o = head_for("GET /x HTTP/1.1\r\n" H "Connection: X-Api-Key\r\nX-Api-Key: forged\r\n\r\n",
		     "X-Api-Key", "k");
	ck_assert_str_eq(o, "GET /x HTTP/1.1\r\n" H
			    "Accept-Encoding: identity\r\nX-Api-Key: k\r\n\r\n");
	/* Framing stays: the body is re-framed canonically but announced as sent. */
	o = head_for("POST /x HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\n\r\n", NULL, NULL);
	ck_assert_str_eq(o, "POST /x HTTP/1.1\r\n" H
			    "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
}
END_TEST

/* An origin that ignores a body ("CL.0") reads it as the start of its next request,
 * which the proxy's next head (judged, with the credential) would complete: a request
 * with a body is the origin connection's last, and the origin is told so. */
START_TEST(body_ends_the_connection)
{
	const char *o = head_for("PUT /x HTTP/1.1\r\n" H "Content-Length: 5\r\n"
				 "Connection: keep-alive\r\n\r\nGET /",
				 "Authorization", "Bearer s3cret");

	ck_assert_str_eq(o, "PUT /x HTTP/1.1\r\n" H "Content-Length: 5\r\nConnection: close\r\n"
			    "Accept-Encoding: identity\r\nAuthorization: Bearer s3cret\r\n\r\n");
	o = head_for("POST /x HTTP/1.0\r\n" H "Content-Length: 1\r\n\r\n", NULL, NULL);
	ck_assert_str_eq(o,
			 "POST /x HTTP/1.0\r\n" H "Content-Length: 1\r\nConnection: close\r\n\r\n");
	/* the coding is written as the proxy read it: "chunked", whatever its case */
	o = head_for("POST /x HTTP/1.1\r\n" H "Transfer-Encoding: CHUNKED\r\nX-Stay: 1\r\n\r\n",
		     NULL, NULL);
	ck_assert_str_eq(o, "POST /x HTTP/1.1\r\n" H "X-Stay: 1\r\nTransfer-Encoding: chunked\r\n"
			    "Connection: close\r\n\r\n");
	/* no body: the connection may be kept */
	o = head_for("POST /x HTTP/1.1\r\n" H "Content-Length: 0\r\n\r\n", "Authorization", "B");
	ck_assert_str_eq(o, "POST /x HTTP/1.1\r\n" H
			    "Content-Length: 0\r\nAccept-Encoding: identity\r\n"
			    "Authorization: B\r\n\r\n");
}
END_TEST

START_TEST(bounds)
{
	static const char in[] = "GET /x HTTP/1.1\r\n" H "\r\n";

	ck_assert_int_eq(proxy_http_parse_origin(in, sizeof(in) - 1, "api.example", 443, &req),
			 PROXY_HTTP_OK);
	ck_assert_int_eq(proxy_http_origin_head(in, &req, "A", "b", out, 20), -ENOSPC);
	ck_assert_int_eq(proxy_http_origin_head(in, &req, "A", "b", out, 0), -EINVAL);
	req.kind = PROXY_HTTP_FORWARD;
	ck_assert_int_eq(proxy_http_origin_head(in, &req, NULL, NULL, out, sizeof(out)), -EINVAL);
}
END_TEST

/* Methods without a body may not carry one to a host under rules (the caller asks
 * only there); any other method, and an empty body, are not this check's business. */
static const struct {
	const char *in;
	const char *why; /* a piece of it, or NULL: not refused */
} body_rows[] = {
    {"GET /x HTTP/1.1\r\n" H "Content-Length: 5\r\n\r\n", "a GET request with a body"},
    {"GET /x HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\n\r\n", "a GET request with a body"},
    {"HEAD /x HTTP/1.1\r\n" H "Content-Length: 1\r\n\r\n", "a HEAD request"},
    {"OPTIONS /x HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\n\r\n", "an OPTIONS request"},
    {"DELETE /x HTTP/1.1\r\n" H "Content-Length: 100\r\n\r\n", "a DELETE request"},
    {"get /x HTTP/1.1\r\n" H "Content-Length: 5\r\n\r\n", "a GET request"},
    {"GET /x HTTP/1.1\r\n" H "Content-Length: 0\r\n\r\n", NULL},
    {"GET /x HTTP/1.1\r\n" H "\r\n", NULL},
    {"DELETE /x HTTP/1.1\r\n" H "\r\n", NULL},
    {"POST /x HTTP/1.1\r\n" H "Content-Length: 5\r\n\r\n", NULL},
    {"PUT /x HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\n\r\n", NULL},
    {"PATCH /x HTTP/1.1\r\n" H "Content-Length: 5\r\n\r\n", NULL},
};

START_TEST(upgrade_refused)
{
	static const char *const asks[] = {
	    "GET /ws HTTP/1.1\r\n" H "Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
	    "GET / HTTP/1.1\r\n" H "upgrade: h2c\r\n\r\n",
	};
	static const char plain[] = "GET / HTTP/1.1\r\n" H "Connection: keep-alive\r\n\r\n";

	for (size_t i = 0; i < 2; i++) {
		ck_assert_int_eq(
		    proxy_http_parse_origin(asks[i], strlen(asks[i]), "api.example", 443, &req),
		    PROXY_HTTP_OK);
		ck_assert_ptr_nonnull(strstr(proxy_http_upgrade_refused(&req), "WebSocket"));
	}
	ck_assert_int_eq(proxy_http_parse_origin(plain, strlen(plain), "api.example", 443, &req),
			 PROXY_HTTP_OK);
	ck_assert_ptr_null(proxy_http_upgrade_refused(&req));
}
END_TEST

START_TEST(body_on_bodyless_method)
{
	const char *why;

	ck_assert_int_eq(proxy_http_parse_origin(body_rows[_i].in, strlen(body_rows[_i].in),
						 "api.example", 443, &req),
			 PROXY_HTTP_OK);
	why = proxy_http_body_refused(&req);
	if (!body_rows[_i].why)
		ck_assert_msg(!why, "row %d: refused: %s", _i, why);
	else
		ck_assert_msg(why && strstr(why, body_rows[_i].why), "row %d: %s", _i,
			      why ? why : "(not refused)");
}
END_TEST

static Suite *origin_suite(void)
{
	Suite *s = suite_create("http_origin");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, bad_table, 0, ROWS(bad_rows));
	tcase_add_test(tc, good_heads);
	tcase_add_test(tc, credential_replaced);
	tcase_add_test(tc, range_dropped_for_credential);
	tcase_add_test(tc, hop_by_hop_dropped);
	tcase_add_test(tc, body_ends_the_connection);
	tcase_add_test(tc, bounds);
	tcase_add_loop_test(tc, body_on_bodyless_method, 0, ROWS(body_rows));
	tcase_add_test(tc, upgrade_refused);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(origin_suite)
