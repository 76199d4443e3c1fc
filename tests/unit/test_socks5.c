/* SOCKS5 parsers: greetings and requests as tables (each address type, refusals with
 * their reply code and why), every truncation of every good input, and the reply. */
#include <string.h>

#include "proxy/proxy_parse.h"
#include "tests/unit/unit.h"

#define ROWS(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define B(...)                                                                                     \
	(const uint8_t[])                                                                          \
	{                                                                                          \
		__VA_ARGS__                                                                        \
	}
#define BLEN(...) sizeof((const uint8_t[]){__VA_ARGS__})
#define IN(...)	  B(__VA_ARGS__), BLEN(__VA_ARGS__)

#define MORE PROXY_SOCKS_NEED_MORE
#define OK   PROXY_SOCKS_OK
#define ERR  PROXY_SOCKS_ERROR

/* ---------------------------------------------------------------- greeting */

static const struct {
	const uint8_t *in;
	size_t len;
	int result;
	size_t used;
} greetings[] = {
    {IN(5, 1, 0), OK, 3},
    {IN(5, 2, 2, 0), OK, 4},
    {IN(5, 3, 0, 1, 2), OK, 5},
    {IN(5, 1, 0, 5, 1, 0, 1), OK, 3}, /* the request may follow at once */
    {IN(5, 1, 2), ERR, 3},	      /* only username/password offered */
    {IN(5, 2, 1, 2), ERR, 4},
    {IN(5, 0), ERR, 0},
    {IN(4, 1, 0), ERR, 0},
    {IN(0x16, 3, 1), ERR, 0}, /* a TLS ClientHello */
    {IN('G', 'E', 'T'), ERR, 0},
    {NULL, 0, MORE, 0},
    {IN(5), MORE, 0},
    {IN(5, 2), MORE, 0},
    {IN(5, 2, 0), MORE, 0},
    {IN(5, 3, 1, 2), MORE, 0},
};

START_TEST(greeting_table)
{
	size_t used = 99;
	int rc = proxy_socks_greeting(greetings[_i].in, greetings[_i].len, &used);

	ck_assert_msg(rc == greetings[_i].result, "row %d: %d", _i, rc);
	ck_assert_uint_eq(used, greetings[_i].used);
}
END_TEST

START_TEST(greeting_255_methods)
{
	uint8_t g[2 + 255];

	g[0] = 5;
	g[1] = 255;
	for (int i = 0; i < 255; i++)
		g[2 + i] = (uint8_t)(254 - i); /* 0x00 last */
	size_t used;
	for (size_t k = 0; k < sizeof(g); k++)
		ck_assert_int_eq(proxy_socks_greeting(g, k, &used), MORE);
	ck_assert_int_eq(proxy_socks_greeting(g, sizeof(g), &used), OK);
	ck_assert_uint_eq(used, sizeof(g));
}
END_TEST

/* ----------------------------------------------------------------- request */

struct req_row {
	const uint8_t *in;
	size_t len;
	int result;
	size_t used;
	const char *host; /* OK: host text; ERR: a piece of why */
	unsigned port;
	uint8_t reply;
};

static const struct req_row requests[] = {
    /* each address type */
    {IN(5, 1, 0, 1, 127, 0, 0, 1, 0, 80), OK, 10, "127.0.0.1", 80, 0},
    {IN(5, 1, 0, 1, 93, 184, 216, 34, 0x01, 0xbb, 0xff), OK, 10, "93.184.216.34", 443, 0},
    {IN(5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x1f, 0x90), OK, 22, "::1",
     8080, 0},
    {IN(5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1, 0, 80), OK, 22,
     "::ffff:127.0.0.1", 80, 0},
    {IN(5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff), OK, 22,
     "2001:db8::1", 65535, 0},
    {IN(5, 1, 0, 3, 11, 'e', 'x', 'a', 'm', 'p', 'l', 'e', '.', 'c', 'o', 'm', 0x01, 0xbb), OK, 18,
     "example.com", 443, 0},
    {IN(5, 1, 0, 3, 1, 'a', 0, 1, 0xaa), OK, 8, "a", 1, 0},
    {IN(5, 1, 0, 3, 4, 'E', 'x', '.', '%', 0, 80), OK, 11, "Ex.%", 80, 0}, /* Decide's job */
    /* refused from the first bytes */
    {IN(4, 1, 0, 1, 127, 0, 0, 1, 0, 80), ERR, 0, "VER is not 5", 0, 0x01},
    {IN(4), ERR, 0, "VER is not 5", 0, 0x01},
    {IN(5, 2, 0, 1, 127, 0, 0, 1, 0, 80), ERR, 0, "BIND is not supported", 0, 0x07},
    {IN(5, 3, 0, 1, 0, 0, 0, 0, 0, 0), ERR, 0, "UDP ASSOCIATE is not supported", 0, 0x07},
    {IN(5, 3), ERR, 0, "UDP ASSOCIATE", 0, 0x07},
    {IN(5, 0, 0, 1, 127, 0, 0, 1, 0, 80), ERR, 0, "unknown SOCKS5 command", 0, 0x07},
    {IN(5, 9, 0, 1, 127, 0, 0, 1, 0, 80), ERR, 0, "unknown SOCKS5 command", 0, 0x07},
    {IN(5, 1, 1, 1, 127, 0, 0, 1, 0, 80), ERR, 0, "RSV byte is not 0", 0, 0x01},
    {IN(5, 1, 0xff, 3), ERR, 0, "RSV byte is not 0", 0, 0x01},
    {IN(5, 1, 0, 2, 127, 0, 0, 1, 0, 80), ERR, 0, "unknown SOCKS5 address type", 0, 0x08},
    {IN(5, 1, 0, 0), ERR, 0, "unknown SOCKS5 address type", 0, 0x08},
    {IN(5, 1, 0, 5), ERR, 0, "unknown SOCKS5 address type", 0, 0x08},
    /* malformed addresses */
    {IN(5, 1, 0, 3, 0, 0, 80), ERR, 0, "empty SOCKS5 domain name", 0, 0x01},
    {IN(5, 1, 0, 3, 0), ERR, 0, "empty SOCKS5 domain name", 0, 0x01},
    {IN(5, 1, 0, 3, 5, 'a', 0, '.', 'c', 'o', 0, 80), ERR, 0, "NUL byte", 0, 0x01},
    {IN(5, 1, 0, 3, 2, 'a', 0, 0, 80), ERR, 0, "NUL byte", 0, 0x01},
    {IN(5, 1, 0, 3, 3, 'a', ' ', 'b', 0, 80), ERR, 0, "outside visible ASCII", 0, 0x01},
    {IN(5, 1, 0, 3, 3, 'a', '\n', 'b', 0, 80), ERR, 0, "outside visible ASCII", 0, 0x01},
    {IN(5, 1, 0, 3, 3, 'a', 0xc3, 0xa4, 0, 80), ERR, 0, "outside visible ASCII", 0, 0x01},
    {IN(5, 1, 0, 1, 127, 0, 0, 1, 0, 0), ERR, 0, "port 0", 0, 0x01},
    {IN(5, 1, 0, 3, 1, 'a', 0, 0), ERR, 0, "port 0", 0, 0x01},
    {IN(5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0), ERR, 0, "port 0", 0,
     0x01},
};

START_TEST(request_table)
{
	const struct req_row *r = &requests[_i];
	struct proxy_socks_req q;
	size_t used = 99;
	int rc = proxy_socks_request(r->in, r->len, &used, &q);

	ck_assert_msg(rc == r->result, "row %d: %d (%s)", _i, rc, q.why);
	ck_assert_uint_eq(used, r->used);
	if (rc == OK) {
		ck_assert_str_eq(q.host, r->host);
		ck_assert_uint_eq(q.port, r->port);
		ck_assert_uint_eq(q.cmd, 1);
		ck_assert_int_eq(q.atyp, r->in[3]);
		return;
	}
	ck_assert_uint_eq(q.reply, r->reply);
	ck_assert_msg(strstr(q.why, r->host), "row %d: why '%s' lacks '%s'", _i, q.why, r->host);
}
END_TEST

/* Every proper prefix of an acceptable request waits for more. */
START_TEST(request_truncated)
{
	const struct req_row *r = &requests[_i];
	struct proxy_socks_req q;
	size_t used;

	if (r->result != OK)
		return;
	for (size_t k = 0; k < r->used; k++) {
		used = 99;
		ck_assert_msg(proxy_socks_request(r->in, k, &used, &q) == MORE, "row %d prefix %zu",
			      _i, k);
		ck_assert_uint_eq(used, 0);
	}
}
END_TEST

START_TEST(request_addr_bytes)
{
	static const uint8_t v6[] = {5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0,
				     0, 0, 0, 0, 0,    0,    0,	   0,	 1, 0, 80};
	struct proxy_socks_req q;
	size_t used;

	ck_assert_int_eq(proxy_socks_request(v6, sizeof(v6), &used, &q), OK);
	ck_assert(memcmp(q.addr, v6 + 4, 16) == 0);
	ck_assert_int_eq(q.atyp, PROXY_SOCKS_IPV6);
}
END_TEST

START_TEST(domain_255)
{
	uint8_t r[5 + 255 + 2];
	struct proxy_socks_req q;
	size_t used;

	memcpy(r, (uint8_t[]){5, 1, 0, 3, 255}, 5);
	memset(r + 5, 'a', 255);
	r[260] = 0x01;
	r[261] = 0xbb;
	ck_assert_int_eq(proxy_socks_request(r, sizeof(r), &used, &q), OK);
	ck_assert_uint_eq(used, sizeof(r));
	ck_assert_uint_eq(strlen(q.host), 255);
	ck_assert_uint_eq(q.port, 443);
	ck_assert_int_eq(proxy_socks_request(r, sizeof(r) - 1, &used, &q), MORE);
}
END_TEST

/* A name refused by the parser is still shown, escaped, with its port: the proxy
 * audits the refusal with it. */
static const struct {
	const uint8_t *in;
	size_t len;
	const char *shown;
	unsigned port;
} shown_rows[] = {
    {IN(5, 1, 0, 3, 3, 'a', ' ', 'b', 0, 80), "a\\x20b", 80},
    {IN(5, 1, 0, 3, 3, 'a', '\n', 'b', 1, 0xbb), "a\\x0ab", 443},
    {IN(5, 1, 0, 3, 4, 'a', '\r', '\n', 'b', 0, 80), "a\\x0d\\x0ab", 80},
    {IN(5, 1, 0, 3, 3, 'a', 0x1b, '[', 0, 80), "a\\x1b[", 80},
    {IN(5, 1, 0, 3, 5, 'a', 0, '.', 'c', 'o', 0, 80), "a\\x00.co", 80},
    {IN(5, 1, 0, 3, 3, '\\', 0xc3, 0xa4, 0, 80), "\\x5c\\xc3\\xa4", 80},
};

START_TEST(refused_name_shown)
{
	struct proxy_socks_req q;
	size_t used = 99;

	ck_assert_int_eq(proxy_socks_request(shown_rows[_i].in, shown_rows[_i].len, &used, &q),
			 ERR);
	ck_assert_str_eq(q.shown, shown_rows[_i].shown);
	ck_assert_uint_eq(q.port, shown_rows[_i].port);
}
END_TEST

START_TEST(refused_name_shown_cut)
{
	uint8_t r[5 + 255 + 2];
	struct proxy_socks_req q;
	size_t used;

	memcpy(r, (uint8_t[]){5, 1, 0, 3, 255}, 5);
	memset(r + 5, '\n', 255);
	r[260] = 0;
	r[261] = 80;
	ck_assert_int_eq(proxy_socks_request(r, sizeof(r), &used, &q), ERR);
	ck_assert_uint_eq(strlen(q.shown), 252); /* 63 escapes: whole ones only */
	ck_assert_str_eq(q.shown + 248, "\\x0a");
	/* a refusal before the name is complete shows nothing */
	ck_assert_int_eq(proxy_socks_request((const uint8_t[]){5, 2, 0, 3}, 4, &used, &q), ERR);
	ck_assert_str_eq(q.shown, "");
}
END_TEST

START_TEST(reply_bytes)
{
	static const uint8_t want[10] = {5, 0x07, 0, 1, 0, 0, 0, 0, 0, 0};
	uint8_t out[10];

	memset(out, 0xee, sizeof(out));
	ck_assert_int_eq(proxy_socks_reply(0x07, out), 10);
	ck_assert(memcmp(out, want, 10) == 0);
	ck_assert_int_eq(proxy_socks_reply(0x00, out), 10);
	ck_assert_uint_eq(out[1], 0);
}
END_TEST

static Suite *socks5_suite(void)
{
	Suite *s = suite_create("socks5");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, greeting_table, 0, ROWS(greetings));
	tcase_add_test(tc, greeting_255_methods);
	tcase_add_loop_test(tc, request_table, 0, ROWS(requests));
	tcase_add_loop_test(tc, request_truncated, 0, ROWS(requests));
	tcase_add_test(tc, request_addr_bytes);
	tcase_add_test(tc, domain_255);
	tcase_add_loop_test(tc, refused_name_shown, 0, ROWS(shown_rows));
	tcase_add_test(tc, refused_name_shown_cut);
	tcase_add_test(tc, reply_bytes);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(socks5_suite)
