/* libFuzzer target for what origin servers send back through absolute-form forwarding
 * and terminated tunnels (proxy/resp.c): resp_parse, resp_rewrite, chunk_scan and
 * chunk_scan_data, the production functions. Invariants: a head is found only where it
 * ends (CRLFCRLF, inside the input) and every shorter prefix of it needs more; the
 * rewrite keeps the status line and writes one head ending in CRLFCRLF, without the
 * fields it drops; a chunked body ends at the same byte fed whole, byte by byte or
 * cut in two; chunk_scan_data yields only bytes of the input, no more than chunk_scan
 * took; and a body the client-side decoder (http_chunked.c, the stricter one: it also
 * checks the trailers) accepts ends at the same byte for the response scanner, since
 * both read the size line with one grammar. Input: one byte picking a cut, the rest
 * as the bytes of a response. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proxy/proxy_int.h"
#include "tests/fuzz/fuzz_check.h"

#define MAX_IN 65536

static char out[MAX_IN + 64];

static void head(const char *b, size_t n)
{
	struct resp_head h, again;
	enum resp_result r = resp_parse(b, n, &h);
	int w;

	if (r != RESP_OK)
		return;
	CHECK(h.head_len >= 4 && h.head_len <= n);
	CHECK(memcmp(b + h.head_len - 4, "\r\n\r\n", 4) == 0);
	CHECK(h.status >= 100 && h.status <= 999 && (h.minor == 0 || h.minor == 1));
	/* One byte less is never a head. */
	CHECK(resp_parse(b, h.head_len - 1, &again) == RESP_NEED_MORE);
	for (int keep = 0; keep < 2; keep++) {
		w = resp_rewrite(b, &h, keep, keep, out, sizeof(out));
		if (w < 0) {
			CHECK(w == -ENOSPC);
			continue;
		}
		CHECK((size_t)w < sizeof(out) && out[w] == '\0');
		CHECK(w >= 4 && memcmp(out + w - 4, "\r\n\r\n", 4) == 0);
		const char *sl = memchr(b, '\n', h.head_len);
		CHECK(memcmp(out, b, (size_t)(sl - b + 1)) == 0); /* the status line, as sent */
		CHECK(resp_parse(out, (size_t)w, &again) == RESP_OK);
		CHECK(again.status == h.status && again.head_len == (size_t)w);
	}
}

/* Bytes taken and whether the body ended, fed in pieces of step (0: whole), the first
 * cut at first (0: none). taken -1: refused. */
static long scan(const char *b, size_t n, size_t step, size_t first, bool *done)
{
	struct chunk_scan cs = {0};
	size_t at = 0;

	*done = false;
	while (at < n && !*done) {
		size_t piece = n - at;
		long r;

		if (first && at < first && piece > first - at)
			piece = first - at;
		else if (step && piece > step)
			piece = step;
		r = chunk_scan(&cs, b + at, piece, done);
		if (r < 0)
			return -1;
		CHECK((size_t)r <= piece);
		CHECK(*done || (size_t)r == piece);
		at += (size_t)r;
	}
	return (long)at;
}

static long scan_data(const char *b, size_t n, bool *done)
{
	struct chunk_scan cs = {0};
	size_t at = 0, data = 0;

	*done = false;
	while (at < n && !*done) {
		const char *d;
		size_t dl;
		long r = chunk_scan_data(&cs, b + at, n - at, done, &d, &dl);

		if (r < 0)
			return -1;
		CHECK((size_t)r <= n - at && (r > 0 || *done));
		CHECK(!d || (d >= b + at && d + dl <= b + at + r));
		data += dl;
		at += (size_t)r;
	}
	CHECK(data <= at);
	return (long)at;
}

static void body(const char *b, size_t n, size_t cut)
{
	bool d1, d2, d3, d4;
	long whole = scan(b, n, 0, 0, &d1), bytes = scan(b, n, 1, 0, &d2);
	long two = scan(b, n, 0, cut, &d3), data = scan_data(b, n, &d4);
	static struct proxy_chunked ck;
	static char dec[MAX_IN + PROXY_CHUNK_SLACK];
	size_t used, olen;

	CHECK(whole == bytes && whole == two && whole == data);
	CHECK(whole < 0 || (d1 == d2 && d1 == d3 && d1 == d4));
	memset(&ck, 0, sizeof(ck));
	if (proxy_chunked_feed(&ck, b, n, &used, dec, &olen) == PROXY_CHUNK_DONE)
		CHECK(d1 && whole == (long)used);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *b = (const char *)data + 1;
	size_t n;

	if (size < 1 || size > MAX_IN)
		return 0;
	n = size - 1;
	head(b, n);
	body(b, n, n ? data[0] % n : 0);
	return 0;
}
