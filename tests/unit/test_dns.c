/* The in-sandbox DNS stub's pure parts (proxy/dns.c): a table of hostile queries
 * (compression loops and pointers out of range, over-long labels and names, counts
 * other than one question, truncations, bytes no host name has), every truncation of
 * a good query, the answers' bytes, the fake-address map, the SSH refusal's framing
 * and the "allowed on some port" question the stub asks of Decide(). */
#include <arpa/inet.h>
#include <string.h>

#include "proxy/dns.h"
#include "proxy/proxy_int.h"
#include "tests/unit/policy_test.h"
#include "tests/unit/unit.h"

#define ROWS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* A query: header (id 0x1234, RD, counts), then `name` in wire form, then qtype and
 * qclass, then `tail`. */
static size_t build(uint8_t *out, uint16_t flags, uint16_t qd, uint16_t an, uint16_t ar,
		    const uint8_t *name, size_t nlen, uint16_t qtype, uint16_t qclass,
		    const uint8_t *tail, size_t tlen)
{
	uint8_t h[12] = {0x12,
			 0x34,
			 (uint8_t)(flags >> 8),
			 (uint8_t)flags,
			 (uint8_t)(qd >> 8),
			 (uint8_t)qd,
			 (uint8_t)(an >> 8),
			 (uint8_t)an,
			 0,
			 0,
			 (uint8_t)(ar >> 8),
			 (uint8_t)ar};
	size_t n = 0;

	memcpy(out, h, 12);
	n = 12;
	memcpy(out + n, name, nlen);
	n += nlen;
	out[n++] = (uint8_t)(qtype >> 8);
	out[n++] = (uint8_t)qtype;
	out[n++] = (uint8_t)(qclass >> 8);
	out[n++] = (uint8_t)qclass;
	if (tlen)
		memcpy(out + n, tail, tlen);
	return n + tlen;
}

#define W(s) (const uint8_t *)(s), sizeof(s) - 1
static const uint8_t opt_rr[] = {0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0}; /* EDNS OPT */

static const struct {
	const char *what;
	uint16_t flags, qd, an, ar;
	const uint8_t *name;
	size_t nlen;
	uint16_t qtype, qclass;
	const uint8_t *tail;
	size_t tlen;
	enum proxy_dns_result r;
	int rcode;
	const char *qname;
} rows[] = {
    {"plain A", 0x0100, 1, 0, 0, W("\x06origin\x04test\x00"), 1, 1, NULL, 0, PROXY_DNS_OK, 0,
     "origin.test"},
    {"upper case folded", 0x0100, 1, 0, 0, W("\x06OriGin\x04TEST\x00"), 28, 1, NULL, 0,
     PROXY_DNS_OK, 0, "origin.test"},
    {"EDNS OPT in additional", 0x0100, 1, 0, 1,
     W("\x01"
       "a\x00"),
     1, 1, opt_rr, sizeof(opt_rr), PROXY_DNS_OK, 0, "a"},
    {"TXT parses (refused by the stub)", 0, 1, 0, 0,
     W("\x01"
       "a\x00"),
     16, 1, NULL, 0, PROXY_DNS_OK, 0, "a"},
    {"a response", 0x8100, 1, 0, 0,
     W("\x01"
       "a\x00"),
     1, 1, NULL, 0, PROXY_DNS_DROP, 0, ""},
    {"opcode IQUERY", 0x0800, 1, 0, 0,
     W("\x01"
       "a\x00"),
     1, 1, NULL, 0, PROXY_DNS_ANSWER, PROXY_DNS_NOTIMP, ""},
    {"qdcount 0", 0, 0, 0, 0,
     W("\x01"
       "a\x00"),
     1, 1, NULL, 0, PROXY_DNS_ANSWER, PROXY_DNS_FORMERR, ""},
    {"qdcount 2", 0, 2, 0, 0,
     W("\x01"
       "a\x00"),
     1, 1, NULL, 0, PROXY_DNS_ANSWER, PROXY_DNS_FORMERR, ""},
    {"qdcount 65535", 0, 65535, 0, 0,
     W("\x01"
       "a\x00"),
     1, 1, NULL, 0, PROXY_DNS_ANSWER, PROXY_DNS_FORMERR, ""},
    {"an answer in a query", 0, 1, 1, 0,
     W("\x01"
       "a\x00"),
     1, 1, NULL, 0, PROXY_DNS_ANSWER, PROXY_DNS_FORMERR, ""},
    {"two additional records", 0, 1, 0, 2,
     W("\x01"
       "a\x00"),
     1, 1, NULL, 0, PROXY_DNS_ANSWER, PROXY_DNS_FORMERR, ""},
    {"pointer to itself (loop)", 0, 1, 0, 0, W("\xc0\x0c"), 1, 1, NULL, 0, PROXY_DNS_ANSWER,
     PROXY_DNS_FORMERR, ""},
    {"pointer after a label (loop)", 0, 1, 0, 0,
     W("\x01"
       "a\xc0\x0c"),
     1, 1, NULL, 0, PROXY_DNS_ANSWER, PROXY_DNS_FORMERR, ""},
    {"pointer out of range", 0, 1, 0, 0, W("\xc3\xff"), 1, 1, NULL, 0, PROXY_DNS_ANSWER,
     PROXY_DNS_FORMERR, ""},
    {"pointer into the header", 0, 1, 0, 0, W("\xc0\x02"), 1, 1, NULL, 0, PROXY_DNS_ANSWER,
     PROXY_DNS_FORMERR, ""},
    {"label 64 (0x40)", 0, 1, 0, 0,
     W("\x40"
       "aaaa\x00"),
     1, 1, NULL, 0, PROXY_DNS_ANSWER, PROXY_DNS_FORMERR, ""},
    {"extended label 0x80", 0, 1, 0, 0, W("\x80\x00"), 1, 1, NULL, 0, PROXY_DNS_ANSWER,
     PROXY_DNS_FORMERR, ""},
    {"root name", 0, 1, 0, 0, W("\x00"), 1, 1, NULL, 0, PROXY_DNS_ANSWER, PROXY_DNS_REFUSED, ""},
    {"class CH", 0, 1, 0, 0,
     W("\x07version\x04"
       "bind\x00"),
     16, 3, NULL, 0, PROXY_DNS_ANSWER, PROXY_DNS_REFUSED, ""},
    {"a dot inside a label", 0, 1, 0, 0,
     W("\x03"
       "a.b\x00"),
     1, 1, NULL, 0, PROXY_DNS_ANSWER, PROXY_DNS_REFUSED, ""},
    {"a NUL inside a label", 0, 1, 0, 0,
     W("\x03"
       "a\x00"
       "b\x00"),
     1, 1, NULL, 0, PROXY_DNS_ANSWER, PROXY_DNS_REFUSED, ""},
    {"a space inside a label", 0, 1, 0, 0,
     W("\x03"
       "a b\x00"),
     1, 1, NULL, 0, PROXY_DNS_ANSWER, PROXY_DNS_REFUSED, ""},
    {"a high byte inside a label", 0, 1, 0, 0, W("\x02\xc3\xa9\x00"), 1, 1, NULL, 0,
     PROXY_DNS_ANSWER, PROXY_DNS_REFUSED, ""},
    {"label longer than the packet", 0, 1, 0, 0,
     W("\x3f"
       "ab"),
     1, 1, NULL, 0, PROXY_DNS_ANSWER, PROXY_DNS_FORMERR, ""},
    {"bytes after the question", 0, 1, 0, 0,
     W("\x01"
       "a\x00"),
     1, 1, W("xyz"), PROXY_DNS_ANSWER, PROXY_DNS_FORMERR, ""},
};

START_TEST(query_table)
{
	uint8_t q[600];
	struct proxy_dns_query out;
	size_t n =
	    build(q, rows[_i].flags, rows[_i].qd, rows[_i].an, rows[_i].ar, rows[_i].name,
		  rows[_i].nlen, rows[_i].qtype, rows[_i].qclass, rows[_i].tail, rows[_i].tlen);
	enum proxy_dns_result r = proxy_dns_parse(q, n, &out);

	ck_assert_msg(r == rows[_i].r, "%s: result %d", rows[_i].what, r);
	if (r == PROXY_DNS_ANSWER)
		ck_assert_msg((int)out.rcode == rows[_i].rcode && out.why && out.why[0],
			      "%s: rcode %d", rows[_i].what, out.rcode);
	if (r == PROXY_DNS_OK) {
		ck_assert_str_eq(out.name, rows[_i].qname);
		ck_assert_uint_eq(out.qtype, rows[_i].qtype);
		ck_assert_uint_eq(out.id, 0x1234);
	}
}
END_TEST

/* A name of n labels of `len` bytes each. */
static size_t long_name(uint8_t *out, int labels, int len)
{
	size_t n = 0;

	for (int i = 0; i < labels; i++) {
		out[n++] = (uint8_t)len;
		memset(out + n, 'a', (size_t)len);
		n += (size_t)len;
	}
	out[n++] = 0;
	return n;
}

START_TEST(name_limits)
{
	uint8_t name[600], q[700];
	struct proxy_dns_query out;
	size_t nl, n;

	/* 63-byte labels are fine; 4 of them are 257 wire bytes: too long. */
	nl = long_name(name, 3, 63);
	n = build(q, 0, 1, 0, 0, name, nl, 1, 1, NULL, 0);
	ck_assert_int_eq(proxy_dns_parse(q, n, &out), PROXY_DNS_OK);
	ck_assert_uint_eq(strlen(out.name), 3 * 63 + 2);
	nl = long_name(name, 4, 63);
	n = build(q, 0, 1, 0, 0, name, nl, 1, 1, NULL, 0);
	ck_assert_int_eq(proxy_dns_parse(q, n, &out), PROXY_DNS_ANSWER);
	ck_assert_int_eq(out.rcode, PROXY_DNS_FORMERR);
	/* exactly 255 wire bytes (253 of text) is the longest name */
	nl = long_name(name, 3, 63);
	name[nl - 1] = 61;
	memset(name + nl, 'b', 61);
	name[nl + 61] = 0;
	nl += 62;
	ck_assert_uint_eq(nl, 255);
	n = build(q, 0, 1, 0, 0, name, nl, 1, 1, NULL, 0);
	ck_assert_int_eq(proxy_dns_parse(q, n, &out), PROXY_DNS_OK);
	ck_assert_uint_eq(strlen(out.name), 253);
	/* 127 one-byte labels and the root: 255; one more label: 257 */
	nl = long_name(name, 128, 1);
	n = build(q, 0, 1, 0, 0, name, nl, 1, 1, NULL, 0);
	ck_assert_int_eq(proxy_dns_parse(q, n, &out), PROXY_DNS_ANSWER);
}
END_TEST

START_TEST(every_truncation)
{
	uint8_t q[600];
	struct proxy_dns_query out;
	size_t n = build(q, 0x0100, 1, 0, 0, W("\x06origin\x04test\x00"), 1, 1, NULL, 0);

	ck_assert_int_eq(proxy_dns_parse(q, n, &out), PROXY_DNS_OK);
	for (size_t k = 0; k < n; k++) {
		enum proxy_dns_result r = proxy_dns_parse(q, k, &out);

		if (k < PROXY_DNS_HEADER)
			ck_assert_int_eq(r, PROXY_DNS_DROP);
		else
			ck_assert_msg(r == PROXY_DNS_ANSWER && out.rcode == PROXY_DNS_FORMERR,
				      "%zu bytes: %d", k, r);
	}
}
END_TEST

START_TEST(answer_bytes)
{
	uint8_t q[600], a[PROXY_DNS_MAX_ANSWER];
	static const uint8_t ip[4] = {198, 18, 0, 1};
	struct proxy_dns_query out;
	size_t n = build(q, 0x0100, 1, 0, 0,
			 W("\x01"
			   "a\x04test\x00"),
			 1, 1, NULL, 0);
	int m;

	ck_assert_int_eq(proxy_dns_parse(q, n, &out), PROXY_DNS_OK);
	m = proxy_dns_answer(&out, q, PROXY_DNS_NOERROR, ip, a, sizeof(a));
	ck_assert_int_eq(m, (int)n + 16);
	ck_assert(a[0] == 0x12 && a[1] == 0x34);
	ck_assert_uint_eq(a[2] & 0x80, 0x80); /* QR */
	ck_assert_uint_eq(a[2] & 0x01, 0x01); /* RD echoed */
	ck_assert_uint_eq(a[3] & 0x0f, 0);    /* NOERROR */
	ck_assert(a[5] == 1 && a[7] == 1 && a[9] == 0 && a[11] == 0);
	ck_assert(memcmp(a + 12, q + 12, n - 12) == 0); /* the question, echoed */
	ck_assert(a[n] == 0xc0 && a[n + 1] == 12);	/* its name, by pointer */
	ck_assert(a[n + 3] == 1 && a[n + 5] == 1 && a[n + 9] == PROXY_DNS_TTL && a[n + 11] == 4);
	ck_assert(memcmp(a + n + 12, ip, 4) == 0);
	m = proxy_dns_answer(&out, q, PROXY_DNS_NXDOMAIN, NULL, a, sizeof(a));
	ck_assert_int_eq(m, (int)n);
	ck_assert(a[7] == 0 && (a[3] & 0x0f) == 3);
	ck_assert_int_eq(proxy_dns_answer(&out, q, PROXY_DNS_NOERROR, ip, a, n), -1);
	/* FORMERR before the question: the header alone */
	n = build(q, 0, 2, 0, 0,
		  W("\x01"
		    "a\x00"),
		  1, 1, NULL, 0);
	ck_assert_int_eq(proxy_dns_parse(q, n, &out), PROXY_DNS_ANSWER);
	m = proxy_dns_answer(&out, q, out.rcode, NULL, a, sizeof(a));
	ck_assert_int_eq(m, 12);
	ck_assert(a[5] == 0 && (a[3] & 0x0f) == 1);
}
END_TEST

START_TEST(fakeip_map)
{
	struct proxy_fakeip m = {0};
	uint8_t a[4], b[4], c[4];
	char name[32];

	ck_assert_int_eq(proxy_fakeip_get(&m, "origin.test", a), 0);
	ck_assert_int_eq(proxy_fakeip_get(&m, "two.test", b), 0);
	ck_assert_int_eq(proxy_fakeip_get(&m, "origin.test", c), 0);
	ck_assert(memcmp(a, c, 4) == 0 && memcmp(a, b, 4) != 0); /* stable, distinct */
	ck_assert(a[0] == 198 && a[1] == 18 && a[2] == 0 && a[3] == 1);
	ck_assert(proxy_fakeip_in_range(a) && proxy_fakeip_in_range(b));
	ck_assert_str_eq(proxy_fakeip_name(&m, a), "origin.test");
	ck_assert_str_eq(proxy_fakeip_name(&m, b), "two.test");
	ck_assert_ptr_null(proxy_fakeip_name(&m, (const uint8_t[]){198, 18, 0, 3}));
	ck_assert_ptr_null(proxy_fakeip_name(&m, (const uint8_t[]){198, 18, 0, 0}));
	ck_assert_ptr_null(proxy_fakeip_name(&m, (const uint8_t[]){127, 0, 0, 1}));
	ck_assert(proxy_fakeip_in_range((const uint8_t[]){198, 19, 255, 255}));
	ck_assert(!proxy_fakeip_in_range((const uint8_t[]){198, 20, 0, 1}));
	/* many names, each found again; the cap holds */
	for (int i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "n%d.test", i);
		ck_assert_int_eq(proxy_fakeip_get(&m, name, a), 0);
		ck_assert_str_eq(proxy_fakeip_name(&m, a), name);
	}
	ck_assert_int_eq(proxy_fakeip_get(&m, "n17.test", b), 0);
	ck_assert_str_eq(proxy_fakeip_name(&m, b), "n17.test");
	for (int i = 3000; i < PROXY_FAKE_MAX; i++) {
		snprintf(name, sizeof(name), "n%d.test", i);
		proxy_fakeip_get(&m, name, a);
	}
	ck_assert_int_eq(proxy_fakeip_get(&m, "one-too-many.test", a), -ENOSPC);
	ck_assert_int_eq(proxy_fakeip_get(&m, "origin.test", a), 0); /* old ones still map */
	proxy_fakeip_free(&m);
}
END_TEST

START_TEST(ssh_refusal_frame)
{
	char out[1200];
	const char *why = "halo-run: egress denied: git.test:22 (default deny)\x1b[2J";
	int n = proxy_ssh_refusal(why, out, sizeof(out));
	size_t il = strlen("SSH-2.0-halo-run\r\n");
	const uint8_t *p = (const uint8_t *)out + il;
	uint32_t plen, dl;

	ck_assert_int_gt(n, 0);
	ck_assert(memcmp(out, "SSH-2.0-halo-run\r\n", il) == 0);
	plen = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	ck_assert_uint_eq((plen + 4) % 8, 0);
	ck_assert_uint_ge(p[4], 4); /* padding */
	ck_assert_uint_eq(p[5], 1); /* SSH_MSG_DISCONNECT */
	ck_assert_uint_eq(p[9], 1); /* HOST_NOT_ALLOWED_TO_CONNECT */
	dl = (uint32_t)p[12] << 8 | p[13];
	ck_assert_uint_eq(dl, strlen(why));
	ck_assert(memcmp(p + 14, why, 20) == 0);
	ck_assert_uint_eq(p[14 + dl - 4], '?'); /* ESC made harmless */
	ck_assert_uint_eq((size_t)n, il + 4 + plen);
	ck_assert_int_eq(proxy_ssh_refusal(why, out, 40), -1);
}
END_TEST

static struct halo_policy *load(const char *yaml)
{
	struct halo_policy *p = NULL;
	struct policy_diags d = {0};

	ck_assert_msg(pt_load(yaml, &p, &d) == 0, "%s", pt_dump(&d));
	policy_diags_free(&d);
	return p;
}

START_TEST(some_port)
{
	struct halo_policy *p =
	    load("egress:\n  default: deny\n"
		 "  allowedDomains: [a.test, \"git.test:22\", \"*.w.test:8443\","
		 " \"d.test:9000\"]\n"
		 "  deniedDomains: [\"d.test\", \"x.w.test:8443\"]\n");
	struct policy_decision d;
	unsigned ports[8];

	ck_assert_uint_eq(policy_allowed_ports(p, ports, 8), 3);
	ck_assert_int_eq(policy_decide_some_port(p, "a.test", 6, &d), 0);
	ck_assert(d.allow);
	ck_assert_int_eq(policy_decide_some_port(p, "git.test", 8, &d), 0);
	ck_assert(d.allow && d.rule == POLICY_RULE_ALLOWED && d.index == 1);
	ck_assert_int_eq(policy_decide_some_port(p, "y.w.test", 8, &d), 0);
	ck_assert(d.allow);
	ck_assert_int_eq(policy_decide_some_port(p, "x.w.test", 8, &d), 0);
	ck_assert(!d.allow); /* its only port is denied */
	ck_assert_int_eq(policy_decide_some_port(p, "d.test", 6, &d), 0);
	ck_assert(!d.allow && d.rule == POLICY_RULE_DENIED); /* a portless deny wins */
	ck_assert_int_eq(policy_decide_some_port(p, "other.test", 10, &d), 0);
	ck_assert(!d.allow && d.rule == POLICY_RULE_DEFAULT);
	ck_assert_int_eq(policy_decide_some_port(p, "bad..test", 9, &d), 0);
	ck_assert(!d.allow && d.rule == POLICY_RULE_INVALID_HOST);
	policy_free(p);
}
END_TEST

static Suite *dns_suite(void)
{
	Suite *s = suite_create("dns");
	TCase *tc = tcase_create("dns");

	tcase_add_loop_test(tc, query_table, 0, ROWS(rows));
	tcase_add_test(tc, name_limits);
	tcase_add_test(tc, every_truncation);
	tcase_add_test(tc, answer_bytes);
	tcase_add_test(tc, fakeip_map);
	tcase_add_test(tc, ssh_refusal_frame);
	tcase_add_test(tc, some_port);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(dns_suite)
