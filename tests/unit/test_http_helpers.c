/* The proxy's shared HTTP helpers (proxy/http_field.c, proxy/http_chunk_line.c,
 * policy_hexval) and the agreement they buy: one table of hostile Content-Length
 * values and one of chunk-size lines, each row run through the helper and through
 * both directions that use it (a client's request, http.c and http_chunked.c; an
 * origin's response, resp.c), which must all give the same answer. Before the
 * helpers were shared the response side took "05", 16-digit sizes were refused there
 * and sizes past 2^53 or "5;" taken. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "proxy/proxy_int.h"
#include "proxy/proxy_parse.h"
#include "tests/unit/unit.h"

#define ROWS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ------------------------------------------------------------ Content-Length */

static const struct {
	const char *v;
	unsigned long long want; /* when why is NULL */
	const char *why;	 /* a piece of the refusal, or NULL for accepted */
} cl_rows[] = {
    {"0", 0, NULL},
    {"5", 5, NULL},
    {"9007199254740992", 9007199254740992ULL, NULL}, /* 2^53: the cap itself */
    {"9007199254740993", 0, "larger than 2^53"},
    {"18446744073709551616", 0, "larger than 2^53"}, /* 2^64: would wrap */
    {"99999999999999999999999999", 0, "larger than 2^53"},
    {"10000000000000000", 0, "larger than 2^53"}, /* 17 digits */
    {"05", 0, "leading zeros"},
    {"00", 0, "leading zeros"},
    {"+5", 0, "not a decimal number"},
    {"-5", 0, "not a decimal number"},
    {"-0", 0, "not a decimal number"},
    {"0x5", 0, "not a decimal number"},
    {"5 5", 0, "not a decimal number"},
    {"5\t", 0, "not a decimal number"},
    {" 5", 0, "not a decimal number"},
    {"5.0", 0, "not a decimal number"},
    {"1e3", 0, "not a decimal number"},
    {"", 0, "not a decimal number"},
    {"\xd9\xa5", 0, "not a decimal number"}, /* an Arabic-Indic five */
};

START_TEST(content_length_helper)
{
	unsigned long long v = 77;
	const char *why = proxy_http_content_length(cl_rows[_i].v, strlen(cl_rows[_i].v), &v);

	if (!cl_rows[_i].why) {
		ck_assert_msg(why == NULL, "%s: %s", cl_rows[_i].v, why);
		ck_assert_uint_eq(v, cl_rows[_i].want);
	} else {
		ck_assert_msg(why && strstr(why, cl_rows[_i].why), "%s: %s", cl_rows[_i].v,
			      why ? why : "(accepted)");
		ck_assert_uint_eq(v, 77); /* untouched on refusal */
	}
}
END_TEST

/* The same value in a request to forward and in an origin's response: a request
 * refused (400) is a response whose length the proxy does not trust (the client
 * connection closes after it), an accepted one the same length both ways. Values with
 * a blank at an end are left out: the field parsers trim those before the helper. */
START_TEST(content_length_both_directions)
{
	const char *v = cl_rows[_i].v;
	char buf[256];
	static struct proxy_http_req req;
	struct resp_head h;
	enum proxy_http_result rq;

	if (!*v || v[0] == ' ' || v[strlen(v) - 1] == '\t')
		return;
	snprintf(buf, sizeof(buf), "POST http://a.example/ HTTP/1.1\r\nContent-Length: %s\r\n\r\n",
		 v);
	rq = proxy_http_parse(buf, strlen(buf), &req);
	snprintf(buf, sizeof(buf), "HTTP/1.1 200 OK\r\nContent-Length: %s\r\n\r\n", v);
	ck_assert_int_eq(resp_parse(buf, strlen(buf), &h), RESP_OK);
	if (!cl_rows[_i].why) {
		ck_assert_int_eq(rq, PROXY_HTTP_OK);
		ck_assert_uint_eq(req.content_length, cl_rows[_i].want);
		ck_assert_msg(h.has_cl && !h.conflicting, "%s: response distrusted", v);
		ck_assert_uint_eq(h.cl, cl_rows[_i].want);
	} else {
		ck_assert_int_eq(rq, PROXY_HTTP_ERROR);
		ck_assert_msg(strstr(req.why, cl_rows[_i].why), "%s: %s", v, req.why);
		ck_assert_msg(h.conflicting, "%s: response length trusted", v);
	}
}
END_TEST

/* A response may repeat one value as a list (RFC 9110 8.6); each element is read by
 * the same helper. */
START_TEST(content_length_response_lists)
{
	static const struct {
		const char *v;
		bool trusted;
	} rows[] = {
	    {"5, 5", true}, {"5,5", true}, {"5, 6", false}, {"05, 05", false}, {"5, +5", false},
	};
	char buf[128];
	struct resp_head h;

	for (int i = 0; i < ROWS(rows); i++) {
		snprintf(buf, sizeof(buf), "HTTP/1.1 200 OK\r\nContent-Length: %s\r\n\r\n",
			 rows[i].v);
		ck_assert_int_eq(resp_parse(buf, strlen(buf), &h), RESP_OK);
		ck_assert_msg(h.conflicting == !rows[i].trusted, "%s", rows[i].v);
	}
}
END_TEST

/* ------------------------------------------------------------ chunk sizes */

static const struct {
	const char *line; /* without its CRLF */
	unsigned long long size;
	const char *why; /* a piece of the refusal, or NULL */
} size_rows[] = {
    {"5", 5, NULL},
    {"0", 0, NULL},
    {"A", 10, NULL},
    {"fF", 255, NULL},
    {"0000000000000005", 5, NULL},	    /* 16 digits: the most */
    {"20000000000000", 1ULL << 53, NULL},   /* 2^53: the cap itself */
    {"0020000000000000", 1ULL << 53, NULL}, /* the same in 16 digits */
    {"5;a", 5, NULL},
    {"5;a=b", 5, NULL},
    {"5 ;a=b", 5, NULL},
    {"5; a = b ;c", 5, NULL},
    {"5;a=\"q \\\" d\"", 5, NULL},
    {"00000000000000005", 0, "longer than 16 hex digits"}, /* 17 digits */
    {"20000000000001", 0, "larger than 2^53"},
    {"1000000000000000", 0, "larger than 2^53"},
    {"ffffffffffffffff", 0, "larger than 2^53"},
    {"10000000000000000", 0, "larger than 2^53"}, /* wraps to 0 in 64 bits */
    {"", 0, "empty chunk size"},
    {"+5", 0, "not hexadecimal"},
    {"-5", 0, "not hexadecimal"},
    {"0x5", 0, "not hexadecimal"},
    {"5h", 0, "not hexadecimal"},
    {"\xef\xbc\x95", 0, "not hexadecimal"},
    {" 5", 0, "whitespace before the chunk size"},
    {"\t5", 0, "whitespace before the chunk size"},
    {"5 ", 0, "whitespace at the end"},
    {"5\t", 0, "whitespace at the end"},
    {"5 5", 0, "malformed chunk extension"},
    {"5;", 0, "malformed chunk extension"},
    {"5;;a", 0, "malformed chunk extension"},
    {"5;a=", 0, "malformed chunk extension"},
    {"5;a b", 0, "malformed chunk extension"},
    {"5;a=\"b", 0, "malformed chunk extension"},
    {"5;a=\"b\x01\"", 0, "malformed chunk extension"},
    {"5;a(b)", 0, "malformed chunk extension"},
    {"5;a\x01", 0, "malformed chunk extension"},
};

/* The line (and its CRLF) byte by byte through the shared grammar. */
START_TEST(chunk_line_helper)
{
	struct proxy_chunk_line l = {0};
	const char *s = size_rows[_i].line, *why = NULL;
	enum proxy_chunk_line_result r = PROXY_CHUNK_LINE_MORE;
	size_t n = strlen(s);

	for (size_t i = 0; i <= n && r == PROXY_CHUNK_LINE_MORE; i++)
		r = proxy_chunk_line_byte(&l, i < n ? (unsigned char)s[i] : '\r', &why);
	if (!size_rows[_i].why) {
		ck_assert_msg(r == PROXY_CHUNK_LINE_CR, "%s: %s", s, why ? why : "?");
		ck_assert_uint_eq(l.size, size_rows[_i].size);
	} else {
		ck_assert_int_eq(r, PROXY_CHUNK_LINE_BAD);
		ck_assert_msg(strstr(why, size_rows[_i].why), "%s: %s", s, why);
	}
}
END_TEST

/* The same line heading a client's body (decoded, http_chunked.c) and an origin's
 * (scanned, resp.c): both accept it or both refuse it. */
START_TEST(chunk_line_both_directions)
{
	static struct proxy_chunked ck;
	static char out[512];
	struct chunk_scan cs = {0};
	char in[256];
	size_t used, olen;
	bool done = false;
	enum proxy_chunk_result rq;
	long rs;

	snprintf(in, sizeof(in), "%s\r\n", size_rows[_i].line);
	memset(&ck, 0, sizeof(ck));
	rq = proxy_chunked_feed(&ck, in, strlen(in), &used, out, &olen);
	rs = chunk_scan(&cs, in, strlen(in), &done);
	if (!size_rows[_i].why) {
		ck_assert_msg(rq != PROXY_CHUNK_ERROR, "%s: request refused: %s",
			      size_rows[_i].line, ck.why);
		ck_assert_msg(rs == (long)strlen(in), "%s: response refused", size_rows[_i].line);
		ck_assert_uint_eq(ck.left, size_rows[_i].size);
		ck_assert_uint_eq(cs.left, size_rows[_i].size);
	} else {
		ck_assert_int_eq(rq, PROXY_CHUNK_ERROR);
		ck_assert_msg(strstr(ck.why, size_rows[_i].why), "%s: %s", size_rows[_i].line,
			      ck.why);
		ck_assert_msg(rs == -1, "%s: response taken", size_rows[_i].line);
	}
}
END_TEST

/* Control bytes and bare line ends in a size line, both directions. */
START_TEST(chunk_line_bare_ends)
{
	static const char *const rows[] = {"5\n", "5\r5\r\n", "5;a\n", "5\0\r\n", "5;a\0\r\n"};
	static const size_t lens[] = {2, 5, 4, 4, 6};
	static struct proxy_chunked ck;
	static char out[64];
	size_t used, olen;

	for (int i = 0; i < ROWS(rows); i++) {
		struct chunk_scan cs = {0};
		bool done = false;

		memset(&ck, 0, sizeof(ck));
		ck_assert_int_eq(proxy_chunked_feed(&ck, rows[i], lens[i], &used, out, &olen),
				 PROXY_CHUNK_ERROR);
		ck_assert_int_eq(chunk_scan(&cs, rows[i], lens[i], &done), -1);
	}
}
END_TEST

/* The line's length bound, both directions. */
START_TEST(chunk_line_length_bound)
{
	static char in[PROXY_CHUNK_MAX_LINE + 8];
	static struct proxy_chunked ck;
	static char out[sizeof(in) + PROXY_CHUNK_SLACK];
	size_t used, olen;

	for (int over = 0; over < 2; over++) {
		struct chunk_scan cs = {0};
		bool done = false;
		/* "5;a..." of 4094 bytes, the longest (LF not counted: 4095 with the CR), or one
		 * more */
		size_t n = PROXY_CHUNK_MAX_LINE - 2 + (size_t)over;

		memset(in, 'a', n);
		memcpy(in, "5;", 2);
		memcpy(in + n, "\r\n", 2);
		memset(&ck, 0, sizeof(ck));
		ck_assert_int_eq(proxy_chunked_feed(&ck, in, n + 2, &used, out, &olen) ==
				     PROXY_CHUNK_ERROR,
				 over);
		ck_assert_int_eq(chunk_scan(&cs, in, n + 2, &done) == -1, over);
	}
}
END_TEST

/* ------------------------------------------------------------ Connection */

/* Does an origin's head say "Connection: close" (conn_tls_http.c keeps the client's
 * connection otherwise)? Wherever the field stands, in any case, in a list. */
START_TEST(connection_names_table)
{
	static const struct {
		const char *head;
		bool close;
	} rows[] = {
	    {"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", true},
	    {"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: CLOSE\r\n\r\n", true},
	    {"HTTP/1.1 200 OK\r\nConnection: x-a\r\nConnection: x-b, close\r\n\r\n", true},
	    {"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n\r\n", false},
	    {"HTTP/1.1 200 OK\r\nX-Connection: close\r\n\r\n", false},
	    {"HTTP/1.1 200 OK\r\nConnection: closed\r\n\r\n", false},
	    {"HTTP/1.1 200 OK\r\n\r\n", false},
	};
	struct resp_head h;

	for (int i = 0; i < ROWS(rows); i++) {
		ck_assert_int_eq(resp_parse(rows[i].head, strlen(rows[i].head), &h), RESP_OK);
		ck_assert_msg(resp_connection_names(rows[i].head, h.head_len, "close") ==
				  rows[i].close,
			      "%s", rows[i].head);
	}
}
END_TEST

/* ------------------------------------------------------------ small helpers */

START_TEST(hexval_every_byte)
{
	for (int c = -1; c < 256; c++) {
		char s[2] = {(char)c, 0};
		char *end;
		long ref = c > 0 && strchr("0123456789abcdefABCDEF", c) ? strtol(s, &end, 16) : -1;

		ck_assert_int_eq(policy_hexval(c), ref);
		ck_assert_int_eq(policy_hexval((char)c), ref); /* a signed char too */
	}
}
END_TEST

START_TEST(ieq_table)
{
	ck_assert(proxy_http_ieq("Content-Length", 14, "content-length"));
	ck_assert(proxy_http_ieq("CHUNKED", 7, "chunked"));
	ck_assert(!proxy_http_ieq("chunked", 6, "chunked"));  /* a prefix */
	ck_assert(!proxy_http_ieq("chunkedx", 8, "chunked")); /* longer */
	ck_assert(!proxy_http_ieq("chunke\0", 7, "chunked"));
	ck_assert(!proxy_http_ieq("ch\xc3\xbcnked", 8, "chunked"));
	ck_assert(proxy_http_ieq("", 0, ""));
}
END_TEST

static Suite *helpers_suite(void)
{
	Suite *s = suite_create("http-helpers");
	TCase *tc = tcase_create("helpers");

	tcase_add_loop_test(tc, content_length_helper, 0, ROWS(cl_rows));
	tcase_add_loop_test(tc, content_length_both_directions, 0, ROWS(cl_rows));
	tcase_add_test(tc, content_length_response_lists);
	tcase_add_loop_test(tc, chunk_line_helper, 0, ROWS(size_rows));
	tcase_add_loop_test(tc, chunk_line_both_directions, 0, ROWS(size_rows));
	tcase_add_test(tc, chunk_line_bare_ends);
	tcase_add_test(tc, chunk_line_length_bound);
	tcase_add_test(tc, connection_names_table);
	tcase_add_test(tc, hexval_every_byte);
	tcase_add_test(tc, ieq_table);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(helpers_suite)
