/* policy_printable, the one escaper of halo-run's own lines, and policy_quote, built on
 * it: hostile bytes (ESC, newline, NUL-adjacent control bytes, bytes past ASCII) never
 * come out raw, a backslash is doubled so an escape cannot be forged either, and a cut
 * never splits an escape. */
#include <string.h>

#include "policy/policy.h"
#include "policy/policy_int.h"
#include "tests/unit/unit.h"

static const struct {
	const char *in;
	size_t n;
	const char *want;
} rows[] = {
    {"plain.example", 64, "plain.example"},
    {"", 64, ""},
    {"a\x1b[2Jb", 64, "a\\x1b[2Jb"},
    {"x\nhalo-run: egress denied: y", 64, "x\\x0ahalo-run: egress denied: y"},
    {"cr\r", 64, "cr\\x0d"},
    {"tab\t", 64, "tab\\x09"},
    {"del\x7f", 64, "del\\x7f"},
    {"caf\xc3\xa9", 64, "caf\\xc3\\xa9"},
    {"back\\slash", 64, "back\\\\slash"},
    {"\\x1b", 64, "\\\\x1b"}, /* a literal "\x1b" stays distinguishable from ESC */
    /* cut: "..." and the NUL always fit, never half an escape */
    {"abcdefghijklmnop", 10, "abcdef..."},
    {"abc\x1b\x1b\x1b", 10, "abc..."},
    {"abcd", 7, ""}, /* too small for anything */
};

START_TEST(printable_table)
{
	char out[64];
	const char *r = policy_printable(rows[_i].in, out, rows[_i].n);

	ck_assert_ptr_eq(r, out);
	ck_assert_str_eq(out, rows[_i].want);
	ck_assert_uint_lt(strlen(out), rows[_i].n);
	for (const char *p = out; *p; p++)
		ck_assert_msg(*p >= 0x20 && *p < 0x7f, "row %d: byte %02x", _i, (unsigned char)*p);
}
END_TEST

START_TEST(quote_uses_the_same_escapes)
{
	char out[64];

	ck_assert_str_eq(policy_quote("a\x1b\n\\b", out, sizeof(out)), "'a\\x1b\\x0a\\\\b'");
	ck_assert_str_eq(policy_quote("abcdefghijklmnop", out, 12), "'abcdef...'");
}
END_TEST

static Suite *printable_suite(void)
{
	Suite *s = suite_create("printable");
	TCase *tc = tcase_create("escapes");

	tcase_add_loop_test(tc, printable_table, 0, (int)(sizeof(rows) / sizeof(rows[0])));
	tcase_add_test(tc, quote_uses_the_same_escapes);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(printable_suite)
