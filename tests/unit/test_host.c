/* Host grammar: hostile-input tables for policy_host_parse, policy_target_parse and
 * policy_pattern_check. Every refusal asserts a piece of its reason. */
#include <errno.h>
#include <string.h>

#include "policy/policy.h"
#include "tests/unit/unit.h"

#define L10  "abcdefghij"
#define L48  L10 L10 L10 L10 "abcdefgh"
#define L61  L10 L10 L10 L10 L10 L10 "a"
#define L63  L10 L10 L10 L10 L10 L10 "abc"
#define L64  L63 "d"
#define N253 L63 "." L63 "." L63 "." L61
#define N254 L63 "." L63 "." L63 "." L61 "b"

enum { NAME = POLICY_HOST_NAME, V4 = POLICY_HOST_IPV4, V6 = POLICY_HOST_IPV6 };

struct host_row {
	const char *in;
	size_t len;
	bool bare; /* allow_bare_v6 */
	bool ok;
	int kind;
	const char *out; /* canonical text when ok, else a substring of why */
};

#define OK(s, k, t)                                                                                \
	{                                                                                          \
		s, sizeof(s) - 1, false, true, k, t                                                \
	}
#define OKB(s, k, t)                                                                               \
	{                                                                                          \
		s, sizeof(s) - 1, true, true, k, t                                                 \
	}
#define BAD(s, w)                                                                                  \
	{                                                                                          \
		s, sizeof(s) - 1, false, false, 0, w                                               \
	}
#define BADB(s, w)                                                                                 \
	{                                                                                          \
		s, sizeof(s) - 1, true, false, 0, w                                                \
	}

static const struct host_row host_rows[] = {
    /* names: case, trailing dot, label rules */
    OK("example.com", NAME, "example.com"),
    OK("EXAMPLE.Com", NAME, "example.com"),
    OK("example.com.", NAME, "example.com"),
    OK("Example.COM.", NAME, "example.com"),
    OK("a", NAME, "a"),
    OK("localhost", NAME, "localhost"),
    OK("xn--bcher-kva.example", NAME, "xn--bcher-kva.example"),
    OK("a-b.c--d.example", NAME, "a-b.c--d.example"),
    OK("123.example.com", NAME, "123.example.com"),
    OK("example.123abc", NAME, "example.123abc"),
    OK("1.2.3.4.example", NAME, "1.2.3.4.example"),
    OK(L63 ".example", NAME, L63 ".example"),
    OK(N253, NAME, N253),
    OK(N253 ".", NAME, N253),
    BAD("", "empty host"),
    BAD(".", "empty host ('.')"),
    BAD("example.com..", "more than one trailing dot"),
    BAD("..", "more than one trailing dot"),
    BAD(".example.com", "empty label at offset 0"),
    BAD("a..b", "empty label at offset 2"),
    BAD("-a.com", "label '-a' starts or ends with '-'"),
    BAD("a-.com", "label 'a-' starts or ends with '-'"),
    BAD(L64 ".example", "label longer than 63 characters (64)"),
    BAD(N254, "name longer than 253 characters (254)"),
    BAD(N254 ".", "name longer than 253 characters (254)"),
    BAD("exa_mple.com", "underscore ('_') is not a valid host name character"),
    BAD("_dmarc.example.com", "underscore"),
    BAD("*.example.com", "'*' is a pattern, not a host"),
    BAD("ex!ample.com", "invalid character '!'"),
    BAD("ex,ample.com", "invalid character ','"),
    BAD("example.com#frag", "invalid character '#'"),
    BAD("example.com?q", "invalid character '?'"),
    BAD("exam[ple.com", "misplaced '[' or ']'"),
    /* bytes no host carries */
    BAD("exa mple.com", "whitespace (byte 0x20) at offset 3"),
    BAD(" example.com", "whitespace (byte 0x20) at offset 0"),
    BAD("example.com\t", "whitespace (byte 0x09)"),
    BAD("example.com\n", "whitespace (byte 0x0a)"),
    BAD("example.com\r", "whitespace (byte 0x0d)"),
    BAD("exa\0mple.com", "NUL byte at offset 3"),
    BAD("example.com\0", "NUL byte at offset 11"),
    BAD("\0", "NUL byte at offset 0"),
    BAD("ex\x01"
	"ample.com",
	"control byte 0x01"),
    BAD("example\x7f.com", "control byte 0x7f"),
    BAD("example\x1b.com", "control byte 0x1b"),
    BAD("b\xc3\xbc"
	"cher.example",
	"non-ASCII byte 0xc3 at offset 1"),
    BAD("\xd0\xb5xample.com", "non-ASCII byte 0xd0 at offset 0"),
    BAD("example\xe3\x80\x82"
	"com",
	"non-ASCII byte 0xe3"),
    BAD("example.com\xff", "non-ASCII byte 0xff"),
    /* URL pieces and escapes */
    BAD("ex%61mple.com", "percent-escape ('%') is not allowed"),
    BAD("example.com%00", "percent-escape"),
    BAD("user@example.com", "userinfo ('@')"),
    BAD("a.com@b.com", "userinfo ('@')"),
    BAD("user:pw@example.com", "userinfo ('@')"),
    BAD("example.com:443", "port not allowed in a host ('host:port')"),
    BAD("example.com:", "port not allowed"),
    BAD("example.com/path", "'/' found: a URL or path"),
    BAD("example.com\\evil", "backslash"),
    BAD("example.com:80:90", "':' is not valid in a host name"),
    /* IPv4: only the canonical dotted quad */
    OK("1.2.3.4", V4, "1.2.3.4"),
    OK("0.0.0.0", V4, "0.0.0.0"),
    OK("255.255.255.255", V4, "255.255.255.255"),
    OK("127.0.0.1", V4, "127.0.0.1"),
    OK("127.0.0.1.", V4, "127.0.0.1"),
    OK("10.0.0.100", V4, "10.0.0.100"),
    BAD("127.1", "non-canonical IPv4 address: short form with 2 parts"),
    BAD("127.0.1", "non-canonical IPv4 address: short form with 3 parts"),
    BAD("2130706433", "non-canonical IPv4 address: a single number"),
    BAD("0x7f000001", "non-canonical IPv4 address: hex part '0x7f000001'"),
    BAD("0x7f.0.0.1", "non-canonical IPv4 address: hex part '0x7f'"),
    BAD("0X7F.0.0.1", "non-canonical IPv4 address: hex part '0X7F'"),
    BAD("1.2.3.0x4", "non-canonical IPv4 address: hex part '0x4'"),
    BAD("0177.0.0.1", "non-canonical IPv4 address: leading zero in '0177'"),
    BAD("127.0.0.01", "non-canonical IPv4 address: leading zero in '01'"),
    BAD("00.0.0.0", "leading zero in '00'"),
    BAD("1.2.3.256", "IPv4 part 4 out of range"),
    BAD("999.1.1.1", "IPv4 part 1 out of range"),
    BAD("4294967296", "a single number"),
    BAD("1.2.3.4.5", "not an IPv4 address: 5 numeric parts"),
    BAD("example.1", "name ends in a number but 'example' is not an IPv4 part"),
    BAD("foo.0x10", "name ends in a number but 'foo'"),
    BAD("1.2.3.4..", "more than one trailing dot"),
    /* IPv6 */
    OK("[::1]", V6, "::1"),
    OK("[2001:DB8::1]", V6, "2001:db8::1"),
    OK("[0:0:0:0:0:0:0:1]", V6, "::1"),
    OK("[::ffff:127.0.0.1]", V6, "::ffff:127.0.0.1"),
    OK("[::FFFF:7F00:1]", V6, "::ffff:127.0.0.1"),
    OK("[64:ff9b::7f00:1]", V6, "64:ff9b::7f00:1"),
    OK("[fe80::1]", V6, "fe80::1"),
    OKB("::1", V6, "::1"),
    OKB("[::1]", V6, "::1"),
    OKB("2001:db8:0:0::10", V6, "2001:db8::10"),
    OKB("::ffff:10.0.0.1", V6, "::ffff:10.0.0.1"),
    BAD("::1", "an IPv6 address must be in brackets ([::1])"),
    BAD("2001:db8::1", "must be in brackets"),
    BAD("[::1", "unterminated '['"),
    BAD("[::1]:443", "port not allowed in a host ('[v6]:port')"),
    BAD("[::1]x", "characters after ']'"),
    BAD("[[::1]]", "characters after ']'"),
    BAD("[]", "empty brackets"),
    BAD("[example.com]", "brackets are only for IPv6 literals"),
    BAD("[1.2.3.4]", "brackets are only for IPv6 literals"),
    BAD("[fe80::1%eth0]", "IPv6 zone id ('%') is not allowed"),
    BAD("[fe80::1%25eth0]", "IPv6 zone id"),
    BADB("fe80::1%eth0", "IPv6 zone id"),
    BAD("[::1::2]", "invalid IPv6 address '::1::2'"),
    BAD("[:::]", "invalid IPv6 address"),
    BAD("[::g]", "invalid IPv6 address"),
    BAD("[::ffff:127.0.0.01]", "invalid IPv6 address"),
    BAD("[::ffff:127.1]", "invalid IPv6 address"),
    BAD("[1:2:3:4:5:6:7:8:9]", "invalid IPv6 address"),
    BAD("[0000:0000:0000:0000:0000:0000:0000:0000:0000:0000]", "too long for an IPv6 address"),
    BADB("a:b:c", "invalid IPv6 address 'a:b:c'"),
    BAD("a:b:c", "':' is not valid in a host name"),
    BADB("[::1]:80", "port not allowed"),
};

START_TEST(host_table)
{
	const struct host_row *r = &host_rows[_i];
	struct policy_host h, again;
	char why[256] = "";
	int rc = policy_host_parse(r->in, r->len, r->bare, &h, why, sizeof(why));

	if (!r->ok) {
		ck_assert_msg(rc == -EINVAL, "row %d: accepted (as '%s')", _i, h.text);
		ck_assert_msg(strstr(why, r->out), "row %d: why '%s' lacks '%s'", _i, why, r->out);
		ck_assert_str_eq(h.text, "");
		return;
	}
	ck_assert_msg(rc == 0, "row %d: refused: %s", _i, why);
	ck_assert_int_eq(h.kind, r->kind);
	ck_assert_str_eq(h.text, r->out);
	/* canonical text is a fixed point of the parser */
	ck_assert_int_eq(policy_host_parse(h.text, strlen(h.text), true, &again, why, sizeof(why)),
			 0);
	ck_assert_str_eq(again.text, h.text);
	ck_assert_int_eq(again.kind, h.kind);
	ck_assert_mem_eq(again.addr, h.addr, sizeof(h.addr));
}
END_TEST

START_TEST(host_addr_bytes)
{
	struct policy_host h;
	char why[128];
	const uint8_t v4[4] = {192, 0, 2, 1};
	const uint8_t v6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};

	ck_assert_int_eq(policy_host_parse("192.0.2.1", 9, false, &h, why, sizeof(why)), 0);
	ck_assert_mem_eq(h.addr, v4, 4);
	ck_assert_int_eq(policy_host_parse("[2001:db8::1]", 13, false, &h, why, sizeof(why)), 0);
	ck_assert_mem_eq(h.addr, v6, 16);
	/* a NULL why is allowed */
	ck_assert_int_eq(policy_host_parse("a..b", 4, false, &h, NULL, 0), -EINVAL);
	ck_assert_int_eq(policy_host_parse(NULL, 0, false, &h, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "empty host");
}
END_TEST

struct target_row {
	const char *in;
	bool ok;
	const char *out; /* host text, or why substring */
	unsigned port;
	int kind;
};

#define TOK(s, t, p, k)                                                                            \
	{                                                                                          \
		s, true, t, p, k                                                                   \
	}
#define TBAD(s, w)                                                                                 \
	{                                                                                          \
		s, false, w, 0, 0                                                                  \
	}

static const struct target_row target_rows[] = {
    TOK("example.com", "example.com", 0, NAME),
    TOK("example.com:443", "example.com", 443, NAME),
    TOK("Example.COM.:8080", "example.com", 8080, NAME),
    TOK("1.2.3.4:1", "1.2.3.4", 1, V4),
    TOK("example.com:65535", "example.com", 65535, NAME),
    TOK("[::1]:8443", "::1", 8443, V6),
    TOK("[::1]", "::1", 0, V6),
    TOK("::1", "::1", 0, V6),
    /* a bare IPv6 literal is all address: this is not port 80 */
    TOK("2001:db8::1:80", "2001:db8::1:80", 0, V6),
    TOK("https://example.com/", "example.com", 0, NAME),
    TOK("https://example.com", "example.com", 0, NAME),
    TOK("https://example.com:8443/path?q#f", "example.com", 8443, NAME),
    TOK("https://a.com@b.com/", "b.com", 0, NAME),
    TOK("https://user:pass@b.com:444/x", "b.com", 444, NAME),
    TOK("https://a@b@c.com/", "c.com", 0, NAME),
    TOK("https://@b.com/", "b.com", 0, NAME),
    TOK("http://[::1]:8080/", "::1", 8080, V6),
    TOK("http://[2001:DB8::1]/", "2001:db8::1", 0, V6),
    TOK("git+ssh://git@github.com/org/repo", "github.com", 0, NAME),
    TOK("HTTPS://EXAMPLE.COM", "example.com", 0, NAME),
    TOK("https://example.com?x@evil.com", "example.com", 0, NAME),
    TOK("https://example.com#@evil.com", "example.com", 0, NAME),
    TOK("https://example.com/x@evil.com", "example.com", 0, NAME),
    TOK("s3.v-1://bucket.example", "bucket.example", 0, NAME),
    TBAD("", "empty target"),
    TBAD("example.com:", "empty port"),
    TBAD("example.com:0", "port 0 out of range"),
    TBAD("example.com:65536", "port 65536 out of range"),
    TBAD("example.com:+80", "port '+80' is not a decimal number"),
    TBAD("example.com:-1", "is not a decimal number"),
    TBAD("example.com:80x", "port '80x' is not a decimal number"),
    TBAD("example.com:080", "port '080' has a leading zero"),
    TBAD("example.com:1234567", "out of range"),
    TBAD(":80", "empty host before ':'"),
    TBAD("[::1]:", "empty port"),
    TBAD("[::1]x", "characters after ']'"),
    TBAD("[::1]:0", "port 0 out of range"),
    TBAD("[example.com]:80", "brackets are only for IPv6"),
    TBAD("http://::1/", "an IPv6 address in a URL must be in brackets"),
    TBAD("https://", "URL without a host"),
    TBAD("https://user@/", "URL without a host"),
    TBAD("https:///path", "URL without a host"),
    TBAD("https://example.com:/", "empty port"),
    TBAD("https://example.com:99999/", "out of range"),
    TBAD("1http://x.com", "invalid URL scheme '1http'"),
    TBAD("://x.com", "invalid URL scheme ''"),
    TBAD("ht_tp://x.com", "invalid URL scheme"),
    TBAD("https://a.com\\@b.com/", "backslash in a URL authority"),
    TBAD("https://exa mple.com", "whitespace (byte 0x20) in target"),
    TBAD("https://example.com/ x", "whitespace"),
    TBAD("example.com\r\n", "whitespace (byte 0x0d)"),
    TBAD("exa\x01mple.com", "control byte 0x01"),
    TBAD("example.com/path", "'/' without a scheme"),
    TBAD("user@example.com", "userinfo ('@')"),
    TBAD("https://127.1/", "short form with 2 parts"),
    TBAD("https://0x7f.0.0.1/", "hex part '0x7f'"),
    TBAD("https://2130706433/", "a single number"),
    TBAD("https://[fe80::1%25eth0]/", "IPv6 zone id"),
    TBAD("https://ex%61mple.com/", "percent-escape"),
    TBAD("https://b\xc3\xbc"
	 "cher.example/",
	 "non-ASCII byte 0xc3"),
    TBAD("example.com:80:90", "neither host:port nor an IPv6 address"),
    TBAD("fe80::1%eth0", "IPv6 zone id"),
};

START_TEST(target_table)
{
	const struct target_row *r = &target_rows[_i];
	struct policy_host h;
	unsigned port = 12345;
	char why[256] = "";
	int rc = policy_target_parse(r->in, &h, &port, why, sizeof(why));

	if (!r->ok) {
		ck_assert_msg(rc == -EINVAL, "row %d '%s': accepted as %s port %u", _i, r->in,
			      h.text, port);
		ck_assert_msg(strstr(why, r->out), "row %d: why '%s' lacks '%s'", _i, why, r->out);
		return;
	}
	ck_assert_msg(rc == 0, "row %d '%s': refused: %s", _i, r->in, why);
	ck_assert_str_eq(h.text, r->out);
	ck_assert_uint_eq(port, r->port);
	ck_assert_int_eq(h.kind, r->kind);
}
END_TEST

struct pattern_row {
	const char *in;
	const char *why; /* NULL: accepted */
};

static const struct pattern_row pattern_rows[] = {
    {"example.com", NULL},
    {"*.example.com", NULL},
    {"*.com", NULL},
    {"a.b.example.com", NULL},
    {"1.2.3.4", NULL},
    {"[::1]", NULL},
    {"::1", NULL},
    {"2001:db8::1", NULL},
    {"*.xn--bcher-kva.example", NULL},
    {"localhost", NULL},
    {"*." L63 ".example", NULL},
    {"", "empty entry"},
    {"*", "a bare '*' would match every host"},
    {"https://example.com", "a URL, not a domain"},
    {"example.com/path", "'/' found: a URL or path"},
    {"Example.com", "upper case"},
    {"*.Example.com", "upper case"},
    {"[2001:DB8::1]", "upper case"},
    /* host:port entries (issue 13): an entry with a port matches only that port */
    {"example.com:443", NULL},
    {"*.example.com:443", NULL},
    {"[::1]:443", NULL},
    {"1.2.3.4:80", NULL},
    {"git.acme.example:22", NULL},
    {"example.com:65535", NULL},
    {"::1:80", NULL}, /* a bare IPv6 address, not ::1 port 80 */
    {"example.com:0", "port 0 out of range"},
    {"example.com:65536", "port 65536 out of range"},
    {"example.com:", "empty port"},
    {"example.com:080", "leading zero"},
    {"example.com:+80", "not a decimal number"},
    {"example.com: 80", "whitespace"},
    {":443", "a port with no host"},
    {"*:443", "only allowed as the whole first label"},
    {"[::1]443", "only ':PORT' may follow [v6]"},
    {"[::1]:", "empty port"},
    {"*.[::1]:443", "a wildcard suffix must be a domain name"},
    {"example.com.:443", "trailing dot"},
    {"Example.com:443", "upper case"},
    {"example.com.", "trailing dot"},
    {"*.example.com.", "trailing dot"},
    {"*.", "trailing dot"},
    {"*example.com", "only allowed as the whole first label"},
    {"a.*.com", "only allowed as the whole first label"},
    {"*.*.com", "only allowed as the whole first label"},
    {"**.com", "only allowed as the whole first label"},
    {"ex*ample.com", "only allowed as the whole first label"},
    {"*.1.2.3.4", "a wildcard suffix must be a domain name, not an IP address"},
    {"*.[::1]", "a wildcard suffix must be a domain name"},
    {"127.1", "short form with 2 parts"},
    {"0x7f.0.0.1", "hex part"},
    {"0177.0.0.1", "leading zero"},
    {"exa_mple.com", "underscore"},
    {"*._tcp.example.com", "underscore"},
    {"ex ample.com", "whitespace"},
    {"example.com\n", "whitespace"},
    {"ex\x01"
     "ample.com",
     "control byte 0x01"},
    {"user@example.com", "userinfo"},
    {"ex%41mple.com", "percent-escape"},
    {"b\xc3\xbc"
     "cher.example",
     "non-ASCII byte 0xc3"},
    {".example.com", "empty label"},
    {"a..com", "empty label"},
    {L64 ".com", "label longer than 63"},
    {N254, "name longer than 253"},
    {"[fe80::1%eth0]", "IPv6 zone id"},
    {"-a.com", "starts or ends with '-'"},
    {"a:b", "port 'b' is not a decimal number"},
};

START_TEST(pattern_table)
{
	const struct pattern_row *r = &pattern_rows[_i];
	char why[256] = "";
	int rc = policy_pattern_check(r->in, why, sizeof(why));

	if (!r->why) {
		ck_assert_msg(rc == 0, "row %d '%s': refused: %s", _i, r->in, why);
		return;
	}
	ck_assert_msg(rc == -EINVAL, "row %d '%s': accepted", _i, r->in);
	ck_assert_msg(strstr(why, r->why), "row %d: why '%s' lacks '%s'", _i, why, r->why);
}
END_TEST

#define ROWS(a) ((int)(sizeof(a) / sizeof((a)[0])))

static Suite *host_suite(void)
{
	Suite *s = suite_create("host");
	TCase *tc = tcase_create("grammar");

	tcase_add_loop_test(tc, host_table, 0, ROWS(host_rows));
	tcase_add_test(tc, host_addr_bytes);
	tcase_add_loop_test(tc, target_table, 0, ROWS(target_rows));
	tcase_add_loop_test(tc, pattern_table, 0, ROWS(pattern_rows));
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(host_suite)
