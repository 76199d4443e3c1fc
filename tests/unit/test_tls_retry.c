/* Every ClientHello is checked (proxy/tls_retry.c): the server's answer scanned for a
 * HelloRetryRequest whatever way its bytes are cut (one read, byte by byte, split
 * across records, behind alert records), every other answer ending the watch, the
 * watch's bound; and the client's flight after a retry: the one change_cipher_spec
 * record then a ClientHello, everything else refused and named. */
#include <stdio.h>
#include <string.h>

#include "proxy/proxy_parse.h"
#include "tests/unit/unit.h"

#define ROWS(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const uint8_t hrr_random[32] = {
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c};

/* A ServerHello body start (type, length, version, random, then a few more bytes). */
static size_t server_hello(uint8_t *m, bool hrr)
{
	size_t n = 0;

	m[n++] = 2, m[n++] = 0, m[n++] = 0, m[n++] = 40;
	m[n++] = 3, m[n++] = 3;
	if (hrr)
		memcpy(m + n, hrr_random, 32);
	else
		memset(m + n, 0x5a, 32);
	n += 32;
	memset(m + n, 0, 8), n += 8;
	return n;
}

static size_t records(uint8_t *out, unsigned type, const uint8_t *m, size_t n, size_t frag)
{
	size_t o = 0;

	for (size_t off = 0; off < n; off += frag) {
		size_t k = n - off < frag ? n - off : frag;
		out[o++] = (uint8_t)type, out[o++] = 3, out[o++] = 3;
		out[o++] = (uint8_t)(k >> 8), out[o++] = (uint8_t)k;
		memcpy(out + o, m + off, k), o += k;
	}
	return o;
}

enum srv_case { S_HRR, S_SH, S_ALERT_HRR, S_NOT_TLS, S_APPDATA, S_CERT_FIRST, S_CCS_FIRST };

static const struct {
	const char *name;
	enum srv_case c;
	size_t frag;
	enum proxy_tls_srv want;
} srv[] = {
    {"HelloRetryRequest, one record", S_HRR, 1000, PROXY_TLS_SRV_HRR},
    {"HelloRetryRequest, 1-byte records", S_HRR, 1, PROXY_TLS_SRV_HRR},
    {"HelloRetryRequest, 7-byte records", S_HRR, 7, PROXY_TLS_SRV_HRR},
    {"ServerHello", S_SH, 1000, PROXY_TLS_SRV_DONE},
    {"ServerHello, 3-byte records", S_SH, 3, PROXY_TLS_SRV_DONE},
    {"a warning alert, then HelloRetryRequest", S_ALERT_HRR, 1000, PROXY_TLS_SRV_HRR},
    {"not TLS (HTTP/1.1 400)", S_NOT_TLS, 1000, PROXY_TLS_SRV_DONE},
    {"application data first", S_APPDATA, 1000, PROXY_TLS_SRV_DONE},
    {"a Certificate before any ServerHello", S_CERT_FIRST, 1000, PROXY_TLS_SRV_DONE},
    {"change_cipher_spec first", S_CCS_FIRST, 1000, PROXY_TLS_SRV_DONE},
};

static size_t srv_build(int i, uint8_t *out)
{
	uint8_t m[64];
	size_t n = server_hello(m, srv[i].c == S_HRR || srv[i].c == S_ALERT_HRR), o = 0;

	switch (srv[i].c) {
	case S_ALERT_HRR:
		o = records(out, 0x15, (const uint8_t *)"\x01\x5a", 2, 1000);
		break;
	case S_NOT_TLS:
		memcpy(out, "HTTP/1.1 400 Bad Request\r\n\r\n", 28);
		return 28;
	case S_APPDATA:
		return records(out, 0x17, m, n, 1000);
	case S_CCS_FIRST:
		return records(out, 0x14, (const uint8_t *)"\x01", 1, 1000);
	case S_CERT_FIRST:
		m[0] = 11;
		break;
	default:
		break;
	}
	return o + records(out + o, 0x16, m, n, srv[i].frag);
}

/* The same answer in one feed and byte by byte: the same result, sticky after. */
START_TEST(server_scan)
{
	uint8_t b[4096];
	size_t n = srv_build(_i, b);
	struct proxy_tls_srv_scan one = {0}, bytes = {0};
	enum proxy_tls_srv r = PROXY_TLS_SRV_MORE;

	ck_assert_msg(proxy_tls_srv_feed(&one, b, n) == srv[_i].want, "%s", srv[_i].name);
	for (size_t k = 0; k < n && r == PROXY_TLS_SRV_MORE; k++)
		r = proxy_tls_srv_feed(&bytes, b + k, 1);
	ck_assert_msg(r == srv[_i].want, "%s: byte by byte", srv[_i].name);
	ck_assert(proxy_tls_srv_feed(&bytes, (const uint8_t *)"\x16", 1) == srv[_i].want);
}
END_TEST

/* Prefixes of a retry wait; the watch ends after its bound even on alert records. */
START_TEST(server_scan_bound)
{
	static uint8_t b[PROXY_TLS_SRV_WATCH_MAX + 64];
	struct proxy_tls_srv_scan s = {0};
	size_t n = 0;
	uint8_t m[64];

	records(b, 0x16, m, server_hello(m, true), 1000);
	for (size_t k = 0; k < 5 + 38; k++) { /* the header and the random's last byte */
		struct proxy_tls_srv_scan p = {0};
		ck_assert(proxy_tls_srv_feed(&p, b, k) == PROXY_TLS_SRV_MORE);
	}
	while (n + 7 <= sizeof(b))
		n += records(b + n, 0x15, (const uint8_t *)"\x01\x5a", 2, 1000);
	ck_assert(proxy_tls_srv_feed(&s, b, n) == PROXY_TLS_SRV_DONE);
	ck_assert_uint_le(s.seen, PROXY_TLS_SRV_WATCH_MAX);
}
END_TEST

/* A minimal ClientHello for `sni`, as handshake records of `frag` bytes. */
static size_t hello(const char *sni, size_t frag, uint8_t *out)
{
	uint8_t m[600];
	size_t n = 0, sl = strlen(sni);

	m[n++] = 1, n += 3;
	m[n++] = 3, m[n++] = 3;
	memset(m + n, 0xab, 32), n += 32;
	m[n++] = 0;
	m[n++] = 0, m[n++] = 2, m[n++] = 0x13, m[n++] = 1;
	m[n++] = 1, m[n++] = 0;
	m[n++] = 0, m[n++] = (uint8_t)(9 + sl);
	m[n++] = 0, m[n++] = 0, m[n++] = 0, m[n++] = (uint8_t)(sl + 5);
	m[n++] = 0, m[n++] = (uint8_t)(sl + 3), m[n++] = 0, m[n++] = 0, m[n++] = (uint8_t)sl;
	memcpy(m + n, sni, sl), n += sl;
	m[1] = 0, m[2] = 0, m[3] = (uint8_t)(n - 4);
	return records(out, 0x16, m, n, frag);
}

#define CCS "\x14\x03\x03\x00\x01\x01"

static const struct {
	const char *name;
	const char *prefix; /* before the hello */
	size_t prefix_len;
	size_t frag;
	enum proxy_tls_result want;
	const char *why;
} retry[] = {
    {"the second ClientHello alone", "", 0, 1000, PROXY_TLS_HELLO, NULL},
    {"change_cipher_spec, then the hello", CCS, 6, 1000, PROXY_TLS_HELLO, NULL},
    {"change_cipher_spec, then the hello in 5-byte records", CCS, 6, 5, PROXY_TLS_HELLO, NULL},
    {"two change_cipher_spec records", CCS CCS, 12, 1000, PROXY_TLS_ERROR,
     "tls: record after HelloRetryRequest other than ClientHello (change_cipher_spec)"},
    {"an alert, then the hello", "\x15\x03\x03\x00\x02\x01\x5a", 7, 1000, PROXY_TLS_ERROR,
     "tls: record after HelloRetryRequest other than ClientHello (alert)"},
    {"early data, then the hello", "\x17\x03\x03\x00\x01\x00", 6, 1000, PROXY_TLS_ERROR,
     "(application data)"},
    {"change_cipher_spec of 2 bytes", "\x14\x03\x03\x00\x02\x01\x01", 7, 1000, PROXY_TLS_ERROR,
     "(malformed change_cipher_spec)"},
    {"change_cipher_spec holding 2", "\x14\x03\x03\x00\x01\x02", 6, 1000, PROXY_TLS_ERROR,
     "(malformed change_cipher_spec)"},
    {"change_cipher_spec, record version 9", "\x14\x03\x09\x00\x01\x01", 6, 1000, PROXY_TLS_ERROR,
     "(malformed change_cipher_spec)"},
    {"plain bytes", "GET / HTTP/1.1\r\n", 16, 1000, PROXY_TLS_ERROR, "(not TLS)"},
    {"the SSLv2 form", "\x80\x2e\x01\x03\x01", 5, 1000, PROXY_TLS_ERROR, "SSLv2"},
};

START_TEST(retry_table)
{
	uint8_t b[2048];
	size_t p = retry[_i].prefix_len, n;
	struct proxy_tls_hello h;
	enum proxy_tls_result r;

	memcpy(b, retry[_i].prefix, p);
	n = p + hello("origin.test", retry[_i].frag, b + p);
	r = proxy_tls_retry_parse(b, n, &h);
	ck_assert_msg(r == retry[_i].want, "%s: %d (%s)", retry[_i].name, r, h.why);
	if (r == PROXY_TLS_HELLO) {
		ck_assert_str_eq(h.sni, "origin.test");
		ck_assert_uint_eq(h.used, n);
		for (size_t k = 0; k < n; k++) /* every prefix waits */
			ck_assert_int_eq(proxy_tls_retry_parse(b, k, &h), PROXY_TLS_NEED_MORE);
	} else {
		ck_assert_msg(strstr(h.why, retry[_i].why), "%s: '%s'", retry[_i].name, h.why);
		ck_assert(h.alert != 0 && !h.has_sni);
	}
}
END_TEST

/* A second hello that never completes within the bound is refused, not waited on. */
START_TEST(retry_bound)
{
	static uint8_t b[PROXY_TLS_HELLO_MAX];
	struct proxy_tls_hello h;

	memcpy(b, CCS, 6);
	memcpy(b + 6, "\x16\x03\x03\x40\x00\x01\x00\xff\xff", 9);
	ck_assert_int_eq(proxy_tls_retry_parse(b, sizeof(b), &h), PROXY_TLS_ERROR);
	ck_assert_ptr_nonnull(strstr(h.why, "larger than 16 KiB"));
}
END_TEST

static Suite *retry_suite(void)
{
	Suite *s = suite_create("tls_retry");
	TCase *tc = tcase_create("retry");

	tcase_add_loop_test(tc, server_scan, 0, ROWS(srv));
	tcase_add_test(tc, server_scan_bound);
	tcase_add_loop_test(tc, retry_table, 0, ROWS(retry));
	tcase_add_test(tc, retry_bound);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(retry_suite)
