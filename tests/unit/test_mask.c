/* The credential masker (proxy/http_mask.c): a table of values in heads and bodies
 * (straddling, overlapping, repeated, adjacent), each fed whole, byte by byte and cut
 * in two at every offset, against the obvious reference; lengths never change. */
#include <errno.h>
#include <string.h>

#include "proxy/proxy_parse.h"
#include "tests/fuzz/mask_ref.h"
#include "tests/unit/unit.h"

#define ROWS(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const char *const tok[] = {"Bearer tok-0123456789", "tok-0123456789"};

static const struct {
	const char *const *pats;
	size_t np;
	const char *in, *want;
} rows[] = {
    {tok, 2, "Authorization: Bearer tok-0123456789\r\n",
     "Authorization: *********************\r\n"},
    {tok, 2, "{\"token\":\"tok-0123456789\"}", "{\"token\":\"**************\"}"},
    {tok, 2, "tok-0123456789tok-0123456789", "****************************"},
    {tok, 2, "tok-012345678 tok-01234567899", "tok-012345678 **************9"},
    {tok, 2, "no secret here", "no secret here"},
    {tok, 2, "", ""},
    {tok, 1, "x tok-0123456789 Bearer tok-0123456789", "x tok-0123456789 *********************"},
    {(const char *const[]){"abab"}, 1, "ababab", "******"},
    {(const char *const[]){"aba", "bab"}, 2, "xababx", "x****x"},
    {(const char *const[]){"aaaa"}, 1, "aaaaaaaaaa", "**********"},
    {(const char *const[]){"x"}, 1, "xyx", "*y*"},
    {(const char *const[]){NULL, ""}, 2, "anything", "anything"},
    /* many false starts of the first byte (the search changes strategy after 16) */
    {(const char *const[]){"ab"}, 1, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaabaab",
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa**a**"},
    {tok, 2, "BBBBBBBBBBBBBBBBBBBBBBBBBtttttttttttttttttttttBearer tok-0123456789 t",
     "BBBBBBBBBBBBBBBBBBBBBBBBBttttttttttttttttttttt********************* t"},
};

static size_t run(const char *const *pats, size_t np, const char *in, size_t n, size_t cut,
		  size_t step, char *out)
{
	static struct proxy_mask m;
	static char piece[256 + PROXY_MASK_MAX_LEN];
	size_t i = 0, o = 0;

	ck_assert_int_eq(proxy_mask_init(&m, pats, np), 0);
	while (i < n) {
		size_t take = step ? step : (i < cut ? cut - i : n - i), w;

		if (take > n - i)
			take = n - i;
		w = proxy_mask_feed(&m, in + i, take, piece);
		ck_assert_uint_le(w, take + m.keep);
		memcpy(out + o, piece, w);
		o += w;
		i += take;
	}
	return o + proxy_mask_flush(&m, out + o);
}

START_TEST(mask_table)
{
	const char *in = rows[_i].in;
	size_t n = strlen(in);
	char want[256], out[256];

	mask_ref(rows[_i].pats, rows[_i].np, in, n, want);
	ck_assert_msg(memcmp(want, rows[_i].want, n) == 0, "row %d: reference disagrees", _i);
	for (size_t cut = 0; cut <= n; cut++) {
		memset(out, 0, sizeof(out));
		ck_assert_uint_eq(run(rows[_i].pats, rows[_i].np, in, n, cut, 0, out), n);
		ck_assert_msg(memcmp(out, want, n) == 0, "row %d cut %zu: %.*s", _i, cut, (int)n,
			      out);
	}
	for (size_t step = 1; step <= 3; step++) {
		ck_assert_uint_eq(run(rows[_i].pats, rows[_i].np, in, n, 0, step, out), n);
		ck_assert_msg(memcmp(out, want, n) == 0, "row %d step %zu", _i, step);
	}
}
END_TEST

/* Cut occurrences (an origin quoting the request cut at N bytes): from the stem on,
 * as far as they agree; shorter cuts and other text stay. */
static const size_t tok_stems[] = {15, 8};
static const struct {
	const char *in, *want;
} cut_rows[] = {
    {"echo: Bearer tok-01234567", "echo: *******************"},
    {"echo: Bearer tok-0123", "echo: ***************"},
    {"echo: Bearer tok-012", "echo: Bearer tok-012"}, /* 14 bytes: under both stems */
    {"echo: tok-0123...", "echo: ********..."},
    {"echo: tok-012 and tok-0123456789", "echo: tok-012 and **************"},
    {"tok-0123Xtok-01234", "********X*********"},
    {"Bearer tok-0123456789 whole", "********************* whole"},
    {"Bearer other-token", "Bearer other-token"},
    {"tok-01234567tok-0123456789", "**************************"},
};

START_TEST(mask_cut_table)
{
	static struct proxy_mask m;
	static char piece[256 + PROXY_MASK_MAX_LEN];
	const char *in = cut_rows[_i].in;
	size_t n = strlen(in);
	char want[256], out[256];

	mask_ref_stems(tok, tok_stems, 2, in, n, want);
	ck_assert_msg(memcmp(want, cut_rows[_i].want, n) == 0, "row %d: reference disagrees: %.*s",
		      _i, (int)n, want);
	for (size_t step = 1; step <= n; step++) {
		size_t o = 0;

		ck_assert_int_eq(proxy_mask_init_stems(&m, tok, tok_stems, 2), 0);
		for (size_t i = 0; i < n; i += step) {
			size_t w = proxy_mask_feed(&m, in + i, step < n - i ? step : n - i, piece);

			memcpy(out + o, piece, w);
			o += w;
		}
		o += proxy_mask_flush(&m, out + o);
		ck_assert_uint_eq(o, n);
		ck_assert_msg(memcmp(out, want, n) == 0, "row %d step %zu: %.*s", _i, step, (int)n,
			      out);
	}
}
END_TEST

START_TEST(mask_whole_buffer_and_limits)
{
	static struct proxy_mask m;
	static char big[PROXY_MASK_MAX_LEN + 2];
	char head[] = "HTTP/1.1 200 OK\r\nX-Echo: Bearer tok-0123456789\r\n\r\n";
	const char *nine[9] = {"a", "b", "c", "d", "e", "f", "g", "h", "i"};

	ck_assert_int_eq(proxy_mask_init(&m, tok, 2), 0);
	ck_assert_uint_eq(m.keep, strlen(tok[0]) - 1);
	proxy_mask_buf(&m, head, strlen(head));
	ck_assert_str_eq(head, "HTTP/1.1 200 OK\r\nX-Echo: *********************\r\n\r\n");
	ck_assert_uint_eq(m.hits, 2);
	ck_assert_int_eq(proxy_mask_init(&m, nine, 9), -EINVAL);
	memset(big, 'a', PROXY_MASK_MAX_LEN + 1);
	ck_assert_int_eq(proxy_mask_init(&m, (const char *const[]){big}, 1), -EINVAL);
	big[PROXY_MASK_MAX_LEN] = '\0';
	ck_assert_int_eq(proxy_mask_init(&m, (const char *const[]){big}, 1), 0);
}
END_TEST

static Suite *mask_suite(void)
{
	Suite *s = suite_create("mask");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, mask_table, 0, ROWS(rows));
	tcase_add_loop_test(tc, mask_cut_table, 0, ROWS(cut_rows));
	tcase_add_test(tc, mask_whole_buffer_and_limits);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(mask_suite)
