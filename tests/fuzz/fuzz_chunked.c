/* libFuzzer target for the chunked request-body decoder. Invariants: the same result,
 * bytes taken and output whether the input comes whole, byte by byte or cut in two at
 * a point the input picks; each call writes at most its input plus PROXY_CHUNK_SLACK;
 * a refusal has a one-line why; an accepted body's re-encoding is canonical, which
 * means it decodes again to exactly itself, and never longer than what was taken
 * (sizes lose leading zeros and extensions, trailers go). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy_parse.h"
#include "tests/fuzz/fuzz_check.h"

#define MAX_IN 65536

static struct proxy_chunked ck;
static char out[3][MAX_IN + PROXY_CHUNK_SLACK];

struct run {
	enum proxy_chunk_result r;
	size_t used, len;
};

/* Feed in pieces of step bytes (0: whole), the first piece cut at first (0: none). */
static struct run feed(const char *in, size_t n, size_t step, size_t first, char *o)
{
	struct run run = {PROXY_CHUNK_MORE, 0, 0};

	memset(&ck, 0, sizeof(ck));
	while (run.used < n) {
		size_t piece = n - run.used, used, olen;

		if (first && run.used < first && piece > first - run.used)
			piece = first - run.used;
		else if (step && piece > step)
			piece = step;
		run.r = proxy_chunked_feed(&ck, in + run.used, piece, &used, o + run.len, &olen);
		CHECK(used <= piece && olen <= piece + PROXY_CHUNK_SLACK);
		run.used += used;
		run.len += olen;
		if (run.r != PROXY_CHUNK_MORE) {
			CHECK(run.r == PROXY_CHUNK_DONE || run.r == PROXY_CHUNK_ERROR);
			break;
		}
		CHECK(used == piece);
	}
	if (run.r == PROXY_CHUNK_ERROR) {
		size_t wn = strnlen(ck.why, sizeof(ck.why));
		CHECK(wn > 14 && wn < sizeof(ck.why) && strncmp(ck.why, "chunked body: ", 14) == 0);
		CHECK(!strchr(ck.why, '\r') && !strchr(ck.why, '\n'));
	}
	return run;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data;
	struct run a, b, c;

	if (size > MAX_IN)
		return 0;
	a = feed(in, size, 0, 0, out[0]);
	b = feed(in, size, 1, 0, out[1]);
	c = feed(in, size, 0, size ? (size_t)data[0] % size : 0, out[2]);
	CHECK(a.r == b.r && a.r == c.r);
	if (a.r == PROXY_CHUNK_ERROR)
		return 0;
	CHECK(a.used == b.used && a.used == c.used && (a.r == PROXY_CHUNK_DONE || a.used == size));
	CHECK(a.len == b.len && a.len == c.len);
	CHECK(a.len <= a.used); /* no element's canonical form is longer than itself */
	CHECK(memcmp(out[0], out[1], a.len) == 0 && memcmp(out[0], out[2], a.len) == 0);
	if (a.r != PROXY_CHUNK_DONE)
		return 0;
	/* canonical: a fixed point of the decoder */
	CHECK(a.len >= 5 && memcmp(out[0] + a.len - 5, "0\r\n\r\n", 5) == 0);
	memcpy(out[2], out[0], a.len);
	b = feed(out[2], a.len, 0, 0, out[1]);
	CHECK(b.r == PROXY_CHUNK_DONE && b.used == a.len && b.len == a.len);
	CHECK(memcmp(out[1], out[0], a.len) == 0);
	return 0;
}
