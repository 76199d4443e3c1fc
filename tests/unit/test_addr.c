/* Address classes (first and last address of every special range, both families, and
 * the IPv6 forms that carry an IPv4), CIDR parsing and matching, allowPrivate. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "tests/unit/unit.h"

#define ROWS(a) ((int)(sizeof(a) / sizeof((a)[0])))

struct class_row {
	const char *addr;
	enum policy_addr_class cls;
};

#define PUB   POLICY_ADDR_PUBLIC
#define UNSP  POLICY_ADDR_UNSPECIFIED
#define LOOP  POLICY_ADDR_LOOPBACK
#define PRIV  POLICY_ADDR_PRIVATE
#define LINK  POLICY_ADDR_LINK_LOCAL
#define CGN   POLICY_ADDR_CGNAT
#define MCAS  POLICY_ADDR_MULTICAST
#define BCAS  POLICY_ADDR_BROADCAST
#define META  POLICY_ADDR_METADATA
#define DOC   POLICY_ADDR_DOCUMENTATION
#define BENCH POLICY_ADDR_BENCHMARK
#define RSV   POLICY_ADDR_RESERVED
#define ULA   POLICY_ADDR_UNIQUE_LOCAL
#define SITE  POLICY_ADDR_SITE_LOCAL
#define XLAT  POLICY_ADDR_TRANSLATION

static const struct class_row v4_rows[] = {
    {"0.0.0.0", UNSP},	       {"0.255.255.255", UNSP},	  {"1.0.0.0", PUB},
    {"9.255.255.255", PUB},    {"10.0.0.0", PRIV},	  {"10.255.255.255", PRIV},
    {"11.0.0.0", PUB},	       {"8.8.8.8", PUB},	  {"100.63.255.255", PUB},
    {"100.64.0.0", CGN},       {"100.127.255.255", CGN},  {"100.128.0.0", PUB},
    {"100.100.100.200", META}, {"100.100.100.199", CGN},  {"126.255.255.255", PUB},
    {"127.0.0.0", LOOP},       {"127.0.0.1", LOOP},	  {"127.255.255.255", LOOP},
    {"128.0.0.0", PUB},	       {"169.253.255.255", PUB},  {"169.254.0.0", LINK},
    {"169.254.255.255", LINK}, {"169.254.169.254", META}, {"169.254.169.253", LINK},
    {"169.254.170.2", META},   {"169.254.170.3", LINK},	  {"169.255.0.0", PUB},
    {"172.15.255.255", PUB},   {"172.16.0.0", PRIV},	  {"172.31.255.255", PRIV},
    {"172.32.0.0", PUB},       {"191.255.255.255", PUB},  {"192.0.0.0", RSV},
    {"192.0.0.255", RSV},      {"192.0.1.0", PUB},	  {"192.0.2.0", DOC},
    {"192.0.2.255", DOC},      {"192.0.3.0", PUB},	  {"192.88.98.255", PUB},
    {"192.88.99.0", RSV},      {"192.88.99.255", RSV},	  {"192.88.100.0", PUB},
    {"192.167.255.255", PUB},  {"192.168.0.0", PRIV},	  {"192.168.255.255", PRIV},
    {"192.169.0.0", PUB},      {"198.17.255.255", PUB},	  {"198.18.0.0", BENCH},
    {"198.19.255.255", BENCH}, {"198.20.0.0", PUB},	  {"198.51.99.255", PUB},
    {"198.51.100.0", DOC},     {"198.51.100.255", DOC},	  {"198.51.101.0", PUB},
    {"203.0.112.255", PUB},    {"203.0.113.0", DOC},	  {"203.0.113.255", DOC},
    {"203.0.114.0", PUB},      {"223.255.255.255", PUB},  {"224.0.0.0", MCAS},
    {"239.255.255.255", MCAS}, {"240.0.0.0", RSV},	  {"255.255.255.254", RSV},
    {"255.255.255.255", BCAS},
};

static const struct class_row v6_rows[] = {
    {"::", UNSP},
    {"::1", LOOP},
    /* IPv4-compatible ::/96 carries the IPv4 it ends with */
    {"::2", UNSP},
    {"::127.0.0.1", LOOP},
    {"::10.1.2.3", PRIV},
    {"::8.8.8.8", PUB},
    {"::255.255.255.255", BCAS},
    /* IPv4-mapped ::ffff:0:0/96 */
    {"::ffff:0.0.0.0", UNSP},
    {"::ffff:127.0.0.1", LOOP},
    {"::ffff:10.0.0.1", PRIV},
    {"::ffff:169.254.169.254", META},
    {"::ffff:100.64.0.1", CGN},
    {"::ffff:8.8.8.8", PUB},
    {"::ffff:255.255.255.255", BCAS},
    /* SIIT ::ffff:0:0:0/96 is not mapped: nothing in ::/8 outside the rows is public */
    {"::ffff:0:808:808", RSV},
    {"::1:0:0:0", RSV},
    {"0:ffff:ffff:ffff:ffff:ffff:ffff:ffff", RSV},
    /* NAT64 well-known prefix 64:ff9b::/96 */
    {"64:ff9b::", UNSP},
    {"64:ff9b::127.0.0.1", LOOP},
    {"64:ff9b::10.0.0.1", PRIV},
    {"64:ff9b::a9fe:a9fe", META},
    {"64:ff9b::8.8.8.8", PUB},
    {"64:ff9b::ffff:ffff", BCAS},
    {"64:ff9b:0:0:0:1::", RSV},
    /* local-use NAT64 64:ff9b:1::/48 */
    {"64:ff9b:1::", XLAT},
    {"64:ff9b:1:ffff:ffff:ffff:ffff:ffff", XLAT},
    {"64:ff9b:2::", RSV},
    /* discard 100::/64 */
    {"100::", RSV},
    {"100::ffff:ffff:ffff:ffff", RSV},
    {"100:0:0:1::", RSV},
    /* Teredo 2001::/32: client is the inverted last 32 bits */
    {"2001::", BCAS},
    {"2001:0:4136:e378:8000:63bf:3fff:fdd2", DOC},
    {"2001:0:1:2:3:4:80ff:fffe", LOOP},
    {"2001:0:1:2:3:4:f5ff:fffe", PRIV},
    {"2001:0:1:2:3:4:f7f7:f7f7", XLAT},
    {"2001:0:ffff:ffff:ffff:ffff:ffff:ffff", UNSP},
    /* the rest of the IETF block 2001::/23 */
    {"2001:1::", RSV},
    {"2001:1::1", RSV},
    {"2001:2::", BENCH},
    {"2001:2:0:ffff:ffff:ffff:ffff:ffff", BENCH},
    {"2001:2:1::", RSV},
    {"2001:3::", RSV},
    {"2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", RSV},
    {"2001:200::", PUB},
    /* documentation */
    {"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", PUB},
    {"2001:db8::", DOC},
    {"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", DOC},
    {"2001:db9::", PUB},
    {"3fff::", DOC},
    {"3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", DOC},
    {"3fff:1000::", PUB},
    /* 6to4 2002::/16: IPv4 in bits 16-47 */
    {"2002::", UNSP},
    {"2002:7f00:1::", LOOP},
    {"2002:a00:1::1", PRIV},
    {"2002:a9fe:a9fe::", META},
    {"2002:808:808::", XLAT},
    {"2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", BCAS},
    {"2003::", PUB},
    {"2000::", PUB},
    {"2606:4700:4700::1111", PUB},
    {"3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", PUB},
    {"4000::", RSV},
    {"5f00::", RSV},
    {"5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", RSV},
    {"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", RSV},
    {"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", RSV},
    /* unique local, with the AWS IMDS address inside it */
    {"fc00::", ULA},
    {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ULA},
    {"fd00:ec2::254", META},
    {"fd00:ec2::253", ULA},
    {"fd00:ec2::", ULA},
    /* link-local, site-local, multicast */
    {"fe80::", LINK},
    {"fe80::1", LINK},
    {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", LINK},
    {"fec0::", SITE},
    {"feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", SITE},
    {"fe00::", RSV},
    {"ff00::", MCAS},
    {"ff02::1", MCAS},
    {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", MCAS},
};

static void pton(int family, const char *text, uint8_t *out)
{
	ck_assert_msg(inet_pton(family, text, out) == 1, "test address '%s' does not parse", text);
}

START_TEST(classify_v4)
{
	uint8_t a[4];

	pton(AF_INET, v4_rows[_i].addr, a);
	ck_assert_msg(policy_addr_classify(AF_INET, a) == v4_rows[_i].cls, "%s: %s, want %s",
		      v4_rows[_i].addr, policy_addr_class_name(policy_addr_classify(AF_INET, a)),
		      policy_addr_class_name(v4_rows[_i].cls));
}
END_TEST

START_TEST(classify_v6)
{
	uint8_t a[16];

	pton(AF_INET6, v6_rows[_i].addr, a);
	ck_assert_msg(policy_addr_classify(AF_INET6, a) == v6_rows[_i].cls, "%s: %s, want %s",
		      v6_rows[_i].addr, policy_addr_class_name(policy_addr_classify(AF_INET6, a)),
		      policy_addr_class_name(v6_rows[_i].cls));
}
END_TEST

START_TEST(class_names)
{
	static const char *const want[] = {
	    "public",	 "unspecified", "loopback",	"private",    "link-local",
	    "cgnat",	 "multicast",	"broadcast",	"metadata",   "documentation",
	    "benchmark", "reserved",	"unique-local", "site-local", "translation",
	};
	uint8_t a[16] = {0};

	for (int c = 0; c < ROWS(want); c++)
		ck_assert_str_eq(policy_addr_class_name((enum policy_addr_class)c), want[c]);
	ck_assert_str_eq(policy_addr_class_name((enum policy_addr_class)99), "unknown");
	ck_assert_int_eq(policy_addr_classify(AF_UNIX, a), POLICY_ADDR_RESERVED);
	ck_assert_int_eq(policy_addr_classify(AF_INET, NULL), POLICY_ADDR_RESERVED);
}
END_TEST

struct cidr_row {
	const char *text;
	const char *want; /* "family net/prefix" via inet_ntop, or a why substring */
	bool ok;
};

static const struct cidr_row cidr_rows[] = {
    {"10.20.0.0/16", "4 10.20.0.0/16", true},
    {"10.20.0.0", "4 10.20.0.0/32", true},
    {"10.20.0.1/32", "4 10.20.0.1/32", true},
    {"0.0.0.0/0", "4 0.0.0.0/0", true},
    {"192.168.128.0/17", "4 192.168.128.0/17", true},
    {"fd00::/8", "6 fd00::/8", true},
    {"::1", "6 ::1/128", true},
    {"[fd00::]/8", "6 fd00::/8", true},
    {"::ffff:10.0.0.0/104", "6 ::ffff:10.0.0.0/104", true},
    {"::/0", "6 ::/0", true},
    {"10.20.1.0/16", "host bits set in '10.20.1.0/16' (the network is 10.20.0.0/16)", false},
    {"192.168.1.1/17", "(the network is 192.168.0.0/17)", false},
    {"fd00::1/8", "host bits set in 'fd00::1/8' (the network is fd00::/8)", false},
    {"10.0.0.0/33", "prefix length /33 is longer than 32", false},
    {"fd00::/129", "prefix length /129 is longer than 128", false},
    {"10.0.0.0/", "empty prefix length after '/'", false},
    {"10.0.0.0/08", "prefix length '08' is not a plain decimal number", false},
    {"10.0.0.0/-1", "is not a plain decimal number", false},
    {"10.0.0.0/8/9", "prefix length '8/9' is not a plain decimal number", false},
    {"10.0.0.0/ 8", "is not a plain decimal number", false},
    {"10.0.0.0/1000", "is not a plain decimal number", false},
    {"10/8", "invalid address in CIDR '10/8': non-canonical IPv4 address: a single number", false},
    {"10.1/16", "short form with 2 parts", false},
    {"010.0.0.0/8", "leading zero", false},
    {"0x0a.0.0.0/8", "hex part", false},
    {"example.com/8", "'example.com' is not an IP address", false},
    {"", "empty CIDR", false},
    {"/8", "invalid address in CIDR '/8': empty host", false},
    {"fe80::1%eth0/64", "IPv6 zone id", false},
    {" 10.0.0.0/8", "whitespace", false},
};

START_TEST(cidr_table)
{
	const struct cidr_row *r = &cidr_rows[_i];
	struct policy_cidr c;
	char why[256] = "", net[64], got[96];
	int rc = policy_cidr_parse(r->text, &c, why, sizeof(why));

	if (!r->ok) {
		ck_assert_msg(rc == -EINVAL, "row %d '%s': accepted", _i, r->text);
		ck_assert_msg(strstr(why, r->want), "row %d: why '%s' lacks '%s'", _i, why,
			      r->want);
		return;
	}
	ck_assert_msg(rc == 0, "row %d '%s': %s", _i, r->text, why);
	inet_ntop(c.family, c.addr, net, sizeof(net));
	snprintf(got, sizeof(got), "%c %s/%u", c.family == AF_INET ? '4' : '6', net, c.prefix);
	ck_assert_str_eq(got, r->want);
}
END_TEST

struct match_row {
	const char *cidr;
	const char *addr; /* family by content */
	bool match;
};

static const struct match_row match_rows[] = {
    {"10.20.0.0/16", "10.20.0.0", true},
    {"10.20.0.0/16", "10.20.255.255", true},
    {"10.20.0.0/16", "10.21.0.0", false},
    {"10.20.0.0/16", "10.19.255.255", false},
    {"10.20.0.0/16", "::ffff:10.20.1.1", true},
    {"10.20.0.0/16", "::ffff:10.21.0.1", false},
    {"10.20.0.0/16", "64:ff9b::a14:101", false}, /* NAT64 of 10.20.1.1: not the same host */
    {"10.20.0.0/16", "::10.20.1.1", false},
    {"10.20.0.0/16", "2002:a14:101::", false},
    {"192.168.0.0/17", "192.168.127.255", true},
    {"192.168.0.0/17", "192.168.128.0", false},
    {"0.0.0.0/0", "8.8.8.8", true},
    {"0.0.0.0/0", "::ffff:1.2.3.4", true},
    {"0.0.0.0/0", "::1", false},
    {"10.0.0.1", "10.0.0.1", true},
    {"10.0.0.1", "10.0.0.2", false},
    {"fd00::/8", "fd12::1", true},
    {"fd00::/8", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true},
    {"fd00::/8", "fc00::1", false},
    {"fd00::/8", "10.0.0.1", false},
    {"fc00::/7", "fc00::1", true},
    {"fc00::/7", "fdff::1", true},
    {"fc00::/7", "fe00::1", false},
    {"fd00:ec2::/32", "fd00:ec2::254", true},
    {"::ffff:10.0.0.0/104", "10.1.2.3", true},
    {"::ffff:10.0.0.0/104", "::ffff:10.1.2.3", true},
    {"::ffff:10.0.0.0/104", "11.0.0.1", false},
    {"::/0", "::1", true},
    {"::/0", "8.8.8.8", true},
    {"::1", "::1", true},
    {"::1", "::2", false},
};

START_TEST(match_table)
{
	const struct match_row *r = &match_rows[_i];
	struct policy_cidr c;
	uint8_t a[16];
	char why[256];
	int family = strchr(r->addr, ':') ? AF_INET6 : AF_INET;

	ck_assert_int_eq(policy_cidr_parse(r->cidr, &c, why, sizeof(why)), 0);
	pton(family, r->addr, a);
	ck_assert_msg(policy_cidr_match(&c, family, a) == r->match, "%s vs %s: want %d", r->cidr,
		      r->addr, r->match);
}
END_TEST

START_TEST(match_malformed)
{
	struct policy_cidr c = {.family = AF_INET, .prefix = 33};
	uint8_t a[16] = {0};

	ck_assert(!policy_cidr_match(&c, AF_INET, a));
	c = (struct policy_cidr){.family = AF_INET6, .prefix = 129};
	ck_assert(!policy_cidr_match(&c, AF_INET6, a));
	c = (struct policy_cidr){.family = AF_UNIX, .prefix = 0};
	ck_assert(!policy_cidr_match(&c, AF_UNIX, a));
	ck_assert(!policy_cidr_match(NULL, AF_INET, a));
}
END_TEST

struct permit_row {
	const char *addr;
	bool permitted;
	enum policy_addr_class cls;
};

static const struct permit_row permit_rows[] = {
    {"8.8.8.8", true, PUB},
    {"10.20.1.1", true, PRIV},
    {"10.21.1.1", false, PRIV},
    {"::ffff:10.20.1.1", true, PRIV},
    {"::ffff:10.21.1.1", false, PRIV},
    {"127.0.0.1", false, LOOP},
    {"::1", false, LOOP},
    {"fd12::1", true, ULA},
    {"fc00::1", false, ULA},
    {"169.254.169.254", false, META},
    {"::ffff:169.254.169.254", false, META},
    {"2002:a14:101::", false, PRIV}, /* 6to4 of 10.20.1.1 goes through a relay */
    {"64:ff9b::a14:101", false, PRIV},
    {"2001:0:1:2:3:4:f7f7:f7f7", false, XLAT},
    {"2606:4700:4700::1111", true, PUB},
    {"0.0.0.0", false, UNSP},
    {"255.255.255.255", false, BCAS},
};

START_TEST(permit_table)
{
	const struct permit_row *r = &permit_rows[_i];
	struct policy_cidr cidrs[2];
	struct halo_policy p = {.cidrs = cidrs, .n_cidrs = 2};
	enum policy_addr_class cls = (enum policy_addr_class)77;
	int family = strchr(r->addr, ':') ? AF_INET6 : AF_INET;
	uint8_t a[16];
	char why[128];

	ck_assert_int_eq(policy_cidr_parse("10.20.0.0/16", &cidrs[0], why, sizeof(why)), 0);
	ck_assert_int_eq(policy_cidr_parse("fd00::/8", &cidrs[1], why, sizeof(why)), 0);
	pton(family, r->addr, a);
	ck_assert_msg(policy_addr_permitted(&p, family, a, &cls) == r->permitted, "%s", r->addr);
	ck_assert_str_eq(policy_addr_class_name(cls), policy_addr_class_name(r->cls));
}
END_TEST

START_TEST(permit_edges)
{
	enum policy_addr_class cls;
	const uint8_t pub[4] = {8, 8, 8, 8}, priv[4] = {10, 0, 0, 1};
	struct halo_policy empty = {0};

	ck_assert(policy_addr_permitted(NULL, AF_INET, pub, &cls));
	ck_assert_int_eq(cls, POLICY_ADDR_PUBLIC);
	ck_assert(!policy_addr_permitted(NULL, AF_INET, priv, &cls));
	ck_assert_int_eq(cls, POLICY_ADDR_PRIVATE);
	ck_assert(!policy_addr_permitted(&empty, AF_INET, priv, &cls));
	ck_assert(!policy_addr_permitted(&empty, AF_UNIX, pub, &cls));
	ck_assert_int_eq(cls, POLICY_ADDR_RESERVED);
	ck_assert(policy_addr_permitted(&empty, AF_INET, pub, NULL));
}
END_TEST

static Suite *addr_suite(void)
{
	Suite *s = suite_create("addr");
	TCase *tc = tcase_create("classes");

	tcase_add_loop_test(tc, classify_v4, 0, ROWS(v4_rows));
	tcase_add_loop_test(tc, classify_v6, 0, ROWS(v6_rows));
	tcase_add_test(tc, class_names);
	tcase_add_loop_test(tc, cidr_table, 0, ROWS(cidr_rows));
	tcase_add_loop_test(tc, match_table, 0, ROWS(match_rows));
	tcase_add_test(tc, match_malformed);
	tcase_add_loop_test(tc, permit_table, 0, ROWS(permit_rows));
	tcase_add_test(tc, permit_edges);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(addr_suite)
