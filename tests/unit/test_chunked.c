/* The chunked request-body decoder (proxy/http_chunked.c): a table of hostile bodies
 * (every smuggling shape with a piece of its why), a table of valid ones with the exact
 * canonical re-encoding the origin gets, each fed whole, byte by byte and split in two
 * at every boundary; limits at their edges; bytes after the body left for the next
 * request. Kept apart from test_http.c, which is at the size limit already. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy_parse.h"
#include "tests/unit/unit.h"

#define ROWS(a) ((int)(sizeof(a) / sizeof((a)[0])))

static struct proxy_chunked ck;
static char outbuf[1 << 20];

struct run {
	enum proxy_chunk_result r;
	size_t used, out_len;
};

/* Feed in[0..len) in pieces of step bytes (0: whole), the first cut at first (0: none),
 * as the proxy does: stop at DONE or ERROR. */
static struct run feed(const char *in, size_t len, size_t step, size_t first)
{
	struct run run = {PROXY_CHUNK_MORE, 0, 0};

	memset(&ck, 0, sizeof(ck));
	while (run.used < len) {
		size_t n = len - run.used, used, olen;

		if (first && run.used < first && n > first - run.used)
			n = first - run.used;
		else if (step && n > step)
			n = step;
		ck_assert_uint_lt(run.out_len + n + PROXY_CHUNK_SLACK, sizeof(outbuf));
		run.r =
		    proxy_chunked_feed(&ck, in + run.used, n, &used, outbuf + run.out_len, &olen);
		ck_assert_uint_le(olen, n + PROXY_CHUNK_SLACK);
		run.out_len += olen;
		run.used += used;
		if (run.r != PROXY_CHUNK_MORE)
			break;
		ck_assert_uint_eq(used, n);
	}
	outbuf[run.out_len] = '\0';
	return run;
}

/* ------------------------------------------------------------------ hostile */

struct bad_row {
	const char *in;
	size_t len;
	const char *why;
};

#define BAD(s, w)                                                                                  \
	{                                                                                          \
		s, sizeof(s) - 1, w                                                                \
	}
#define F16 "ffffffffffffffff"

static const struct bad_row bad_rows[] = {
    /* chunk sizes */
    BAD("\r\n", "empty chunk size"),
    BAD("\r\nhello\r\n0\r\n\r\n", "empty chunk size"),
    BAD("5\r\nhello\r\n\r\n0\r\n\r\n", "empty chunk size"),
    BAD("g\r\n", "not hexadecimal"),
    BAD("5g\r\n", "not hexadecimal"),
    BAD("+5\r\nhello\r\n0\r\n\r\n", "not hexadecimal"),
    BAD("-5\r\n", "not hexadecimal"),
    BAD("0x5\r\nhello\r\n0\r\n\r\n", "not hexadecimal"),
    BAD("5.0\r\n", "not hexadecimal"),
    BAD("5,5\r\n", "not hexadecimal"),
    BAD(" 5\r\nhello\r\n0\r\n\r\n", "whitespace before the chunk size"),
    BAD("\t5\r\n", "whitespace before the chunk size"),
    BAD("5 \r\nhello\r\n0\r\n\r\n", "whitespace at the end of the chunk-size line"),
    BAD("5\t\r\n", "whitespace at the end of the chunk-size line"),
    BAD("5 5\r\n", "malformed chunk extension"),
    BAD("1" F16 "\r\n", "larger than 2^53"),
    BAD("00000000000000001\r\n", "longer than 16 hex digits"),
    BAD(F16 "\r\n", "larger than 2^53"),
    BAD("20000000000001\r\n", "larger than 2^53"),
    BAD("10000000000000000\r\nx", "larger than 2^53"), /* wraps to 0 in 64 bits */
    BAD("\xef\xbc\x95\r\n", "not hexadecimal"),	       /* a full-width digit */
    /* line endings */
    BAD("5\nhello\r\n0\r\n\r\n", "bare LF in a chunk-size line"),
    BAD("5\rhello\r\n0\r\n\r\n", "bare CR in a chunk-size line"),
    BAD("5;a=b\n", "bare LF in a chunk-size line"),
    BAD("5\r\nhello\n0\r\n\r\n", "bare LF after chunk data"),
    BAD("5\r\nhello\r0\r\n\r\n", "bare CR after chunk data"),
    BAD("5\r\nhelloX\r\n0\r\n\r\n", "chunk data longer than its chunk size"),
    BAD("5\r\nhello0\r\n\r\n", "chunk data longer than its chunk size"),
    BAD("3\r\nhello\r\n0\r\n\r\n", "chunk data longer than its chunk size"),
    BAD("0\n\r\n", "bare LF in a chunk-size line"),
    BAD("0\r\n\n", "bare LF in the trailer section"),
    BAD("0\r\n\r\r\n", "bare CR in the trailer section"),
    BAD("0\r\nX: 1\n\r\n", "bare LF in the trailer section"),
    BAD("0\r\nX: 1\r\r\n", "bare CR in the trailer section"),
    /* NUL anywhere in the framing */
    BAD("\0", "NUL byte"),
    BAD("5\0\r\n", "NUL byte"),
    BAD("5;a\0\r\n", "NUL byte"),
    BAD("5;a=\"\0\"\r\n", "NUL byte"),
    BAD("5\r\nhello\r\0", "NUL byte"),
    BAD("0\r\nX: a\0b\r\n\r\n", "NUL byte"),
    /* extensions */
    BAD("5;\r\nhello\r\n0\r\n\r\n", "malformed chunk extension"),
    BAD("5;;a\r\n", "malformed chunk extension"),
    BAD("5;=b\r\n", "malformed chunk extension"),
    BAD("5;a=\r\n", "malformed chunk extension"),
    BAD("5;a==b\r\n", "malformed chunk extension"),
    BAD("5;a b\r\n", "malformed chunk extension"),
    BAD("5;a \r\n", "malformed chunk extension"),
    BAD("5;a=b c\r\n", "malformed chunk extension"),
    BAD("5;a=b \r\n", "whitespace at the end of the chunk-size line"),
    BAD("5;a=\"b\r\n", "malformed chunk extension"),
    BAD("5;a=\"b\"c\r\n", "malformed chunk extension"),
    BAD("5;a=\"b\\\x01\"\r\n", "malformed chunk extension"),
    BAD("5;a=\"b\x7f\"\r\n", "malformed chunk extension"),
    BAD("5;a=b(c)\r\n", "malformed chunk extension"),
    BAD("5;a(b)\r\n", "malformed chunk extension"),
    BAD("5;\xc3\xa9\r\n", "malformed chunk extension"),
    BAD("5:a\r\n", "not hexadecimal"),
    /* trailers */
    BAD("0\r\nX: 1\r\n continued\r\n\r\n", "obs-fold"),
    BAD("0\r\nX: 1\r\n\tcontinued\r\n\r\n", "obs-fold"),
    BAD("0\r\n X: 1\r\n\r\n", "obs-fold"),
    BAD("0\r\nX : 1\r\n\r\n", "trailer: whitespace before the colon"),
    BAD("0\r\nX\r\n\r\n", "trailer: header line without a colon"),
    BAD("0\r\n: v\r\n\r\n", "trailer: empty header field name"),
    BAD("0\r\nBad Name: v\r\n\r\n", "trailer: header field name is not a token"),
    BAD("0\r\nX: a\x01"
	"b\r\n\r\n",
	"trailer: control character"),
    BAD("0\r\nX: \x1b[31m\r\n\r\n", "trailer: control character"),
    BAD("0\r\nContent_Length: 5\r\n\r\n", "trailer: header field name reads as Content-Length"),
};

START_TEST(bad_table)
{
	const struct bad_row *r = &bad_rows[_i];
	const size_t steps[] = {0, 1, 2, 3, 7};

	for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
		struct run run = feed(r->in, r->len, steps[s], 0);

		ck_assert_msg(run.r == PROXY_CHUNK_ERROR, "row %d step %zu: result %d, not ERROR",
			      _i, steps[s], run.r);
		ck_assert_msg(strstr(ck.why, r->why), "row %d step %zu: why '%s' lacks '%s'", _i,
			      steps[s], ck.why, r->why);
		ck_assert_msg(strncmp(ck.why, "chunked body: ", 14) == 0, "row %d: %s", _i, ck.why);
		ck_assert(!strchr(ck.why, '\r') && !strchr(ck.why, '\n'));
		/* refused for good: nothing more is taken */
		size_t used = 9, olen = 9;
		ck_assert_int_eq(proxy_chunked_feed(&ck, "0\r\n\r\n", 5, &used, outbuf, &olen),
				 PROXY_CHUNK_ERROR);
		ck_assert_uint_eq(used + olen, 0);
	}
}
END_TEST

/* -------------------------------------------------------------------- valid */

struct good_row {
	const char *in;
	size_t len;
	const char *want; /* the re-encoding for the origin */
	size_t want_len;
	size_t body_len; /* 0: the whole input */
};

#define GOOD(s, w)                                                                                 \
	{                                                                                          \
		s, sizeof(s) - 1, w, sizeof(w) - 1, 0                                              \
	}
#define GOOD_THEN(s, w, b)                                                                         \
	{                                                                                          \
		s, sizeof(s) - 1, w, sizeof(w) - 1, b                                              \
	}

static const struct good_row good_rows[] = {
    GOOD("0\r\n\r\n", "0\r\n\r\n"),
    GOOD("000\r\n\r\n", "0\r\n\r\n"),
    GOOD("5\r\nhello\r\n0\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n"),
    GOOD("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"),
    GOOD("A\r\n0123456789\r\n0\r\n\r\n", "a\r\n0123456789\r\n0\r\n\r\n"),
    GOOD("a\r\n0123456789\r\n0\r\n\r\n", "a\r\n0123456789\r\n0\r\n\r\n"),
    GOOD("0000000000000005\r\nhello\r\n0\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n"),
    GOOD("1B\r\nabcdefghijklmnopqrstuvwxyz!\r\n0\r\n\r\n",
	 "1b\r\nabcdefghijklmnopqrstuvwxyz!\r\n0\r\n\r\n"),
    /* data may hold any byte, CRLF and NUL included */
    GOOD("4\r\n\r\n\0\n\r\n0\r\n\r\n", "4\r\n\r\n\0\n\r\n0\r\n\r\n"),
    /* extensions: validated, then dropped */
    GOOD("5;a\r\nhello\r\n0\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n"),
    GOOD("5;a=b\r\nhello\r\n0;last\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n"),
    GOOD("5 ; a = b ;c\r\nhello\r\n0\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n"),
    GOOD("5\t;\ta\t=\tb\r\nhello\r\n0\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n"),
    GOOD("5;a=\"b c;d\\\"e\\\\\"\r\nhello\r\n0\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n"),
    GOOD("5;a=\"\"\r\nhello\r\n0\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n"),
    GOOD("5;a=\"\xc3\xa9\";b=!#$%&'*+-.^_`|~\r\nhello\r\n0\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n"),
    GOOD("5;a=\"x\" ;b\r\nhello\r\n0\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n"),
    /* trailers: validated, then dropped */
    GOOD("5\r\nhello\r\n0\r\nX-Sum: abc\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n"),
    GOOD("0\r\nA: 1\r\nB:\r\nC:\tx y\t\r\nD: caf\xc3\xa9\r\n\r\n", "0\r\n\r\n"),
    /* what follows the body is the next request's, untouched */
    GOOD_THEN("5\r\nhello\r\n0\r\n\r\nGET http://a/ HTTP/1.1\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n",
	      15),
    GOOD_THEN("0\r\n\r\n0\r\n\r\n", "0\r\n\r\n", 5),
};

static void check_good(const struct good_row *r, struct run run, const char *how)
{
	size_t body = r->body_len ? r->body_len : r->len;
	size_t wl = r->want_len;
	ck_assert_msg(run.r == PROXY_CHUNK_DONE, "%s: result %d (%s)", how, run.r, ck.why);
	ck_assert_msg(run.used == body, "%s: used %zu, want %zu", how, run.used, body);
	ck_assert_msg(run.out_len == wl && memcmp(outbuf, r->want, wl) == 0, "%s: got [%s]", how,
		      outbuf);
}

START_TEST(good_table)
{
	const struct good_row *r = &good_rows[_i];
	char how[64];

	check_good(r, feed(r->in, r->len, 0, 0), "whole");
	check_good(r, feed(r->in, r->len, 1, 0), "byte by byte");
	/* split in two at every boundary */
	for (size_t cut = 1; cut < r->len; cut++) {
		snprintf(how, sizeof(how), "row %d cut at %zu", _i, cut);
		check_good(r, feed(r->in, r->len, 0, cut), how);
	}
	/* the end reached, nothing more is taken */
	size_t used = 9, olen = 9;
	ck_assert_int_eq(proxy_chunked_feed(&ck, "x", 1, &used, outbuf, &olen), PROXY_CHUNK_DONE);
	ck_assert_uint_eq(used + olen, 0);
}
END_TEST

START_TEST(not_yet_done)
{
	static const char *const partial[] = {"",
					      "5",
					      "5\r",
					      "5\r\nhel",
					      "5\r\nhello",
					      "5\r\nhello\r",
					      "5\r\nhello\r\n",
					      "0",
					      "0\r\n",
					      "0\r\n\r",
					      "0\r\nX: 1\r\n",
					      "5;a=\"b"};

	for (size_t i = 0; i < sizeof(partial) / sizeof(partial[0]); i++) {
		struct run run = feed(partial[i], strlen(partial[i]), 0, 0);

		ck_assert_msg(run.r == PROXY_CHUNK_MORE, "'%s': %d", partial[i], run.r);
		ck_assert_uint_eq(run.used, strlen(partial[i]));
	}
}
END_TEST

/* ------------------------------------------------------------------- limits */

static char big[3 * 4096 + 64];

START_TEST(limits)
{
	struct run run;
	size_t n;

	/* the size line: 4096 bytes with its CRLF is the most */
	n = (size_t)snprintf(big, sizeof(big), "1;a=");
	memset(big + n, 'b', 4094 - n);
	memcpy(big + 4094, "\r\nx\r\n0\r\n\r\n", 10);
	run = feed(big, 4104, 0, 0);
	ck_assert_msg(run.r == PROXY_CHUNK_DONE, "%s", ck.why);
	big[4093] = 'b';
	memmove(big + 4095, big + 4094, 10);
	big[4094] = 'b';
	run = feed(big, 4105, 0, 0);
	ck_assert_int_eq(run.r, PROXY_CHUNK_ERROR);
	ck_assert_ptr_nonnull(strstr(ck.why, "chunk-size line longer than 4096 bytes"));
	/* 2^53 is the largest chunk size */
	run = feed("20000000000000\r\nabc", 19, 0, 0);
	ck_assert_int_eq(run.r, PROXY_CHUNK_MORE);
	ck_assert_uint_eq(ck.left, (1ULL << 53) - 3);
	/* trailers: 32 fields, 4096 bytes */
	n = (size_t)snprintf(big, sizeof(big), "0\r\n");
	for (int i = 0; i < 32; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "X-%d: v\r\n", i);
	memcpy(big + n, "\r\n", 2);
	ck_assert_int_eq(feed(big, n + 2, 0, 0).r, PROXY_CHUNK_DONE);
	n += (size_t)snprintf(big + n, sizeof(big) - n, "X-32: v\r\n\r\n");
	run = feed(big, n, 0, 0);
	ck_assert_int_eq(run.r, PROXY_CHUNK_ERROR);
	ck_assert_ptr_nonnull(strstr(ck.why, "more than 32 trailer fields"));
	/* the trailer section with its last CRLF: 4096 bytes is the most */
	n = (size_t)snprintf(big, sizeof(big), "0\r\nX: ");
	memset(big + n, 'v', 4089);
	n += 4089;
	memcpy(big + n, "\r\n\r\n", 4);
	ck_assert_msg(feed(big, n + 4, 0, 0).r == PROXY_CHUNK_DONE, "%s", ck.why);
	big[n] = 'v';
	memcpy(big + n + 1, "\r\n\r\n", 4);
	ck_assert_int_eq(feed(big, n + 5, 0, 0).r, PROXY_CHUNK_ERROR);
	ck_assert_ptr_nonnull(strstr(ck.why, "trailer section longer than 4096 bytes"));
}
END_TEST

/* Several MB in chunks of every size class, fed in odd pieces: the data comes out
 * byte for byte, the framing canonical. */
START_TEST(large_body)
{
	size_t cap = 4u << 20, n = 0, plain = 0;
	char *in = malloc(cap), *want = malloc(cap);
	unsigned seed = 7;

	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(want);
	while (n < cap - 70000) {
		size_t sz = (seed = seed * 1103515245u + 12345u) >> 16 & 0xffff;
		size_t w;

		if (sz == 0)
			sz = 1;
		n += (size_t)sprintf(in + n, "%zX\r\n", sz);
		w = (size_t)sprintf(want + plain, "%zx\r\n", sz);
		for (size_t i = 0; i < sz; i++)
			in[n + i] = want[plain + w + i] = (char)(i * 31 + sz);
		n += sz;
		plain += w + sz;
		memcpy(in + n, "\r\n", 2);
		memcpy(want + plain, "\r\n", 2);
		n += 2;
		plain += 2;
	}
	memcpy(in + n, "0\r\n\r\n", 5);
	memcpy(want + plain, "0\r\n\r\n", 5);
	n += 5;
	plain += 5;
	memset(&ck, 0, sizeof(ck));
	size_t used_all = 0, cmp = 0;
	enum proxy_chunk_result r = PROXY_CHUNK_MORE;
	while (used_all < n && r == PROXY_CHUNK_MORE) {
		size_t piece = n - used_all < 32749 ? n - used_all : 32749, used, olen;

		r = proxy_chunked_feed(&ck, in + used_all, piece, &used, outbuf, &olen);
		ck_assert_int_ne(r, PROXY_CHUNK_ERROR);
		ck_assert(memcmp(outbuf, want + cmp, olen) == 0);
		cmp += olen;
		used_all += used;
	}
	ck_assert_int_eq(r, PROXY_CHUNK_DONE);
	ck_assert_uint_eq(used_all, n);
	ck_assert_uint_eq(cmp, plain);
	free(in);
	free(want);
}
END_TEST

static Suite *chunked_suite(void)
{
	Suite *s = suite_create("http-chunked");
	TCase *tc = tcase_create("decoder");

	tcase_add_loop_test(tc, bad_table, 0, ROWS(bad_rows));
	tcase_add_loop_test(tc, good_table, 0, ROWS(good_rows));
	tcase_add_test(tc, not_yet_done);
	tcase_add_test(tc, limits);
	tcase_add_test(tc, large_body);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(chunked_suite)
