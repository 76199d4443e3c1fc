/* libFuzzer target for the credential masker. The input is "pattern1\npattern2\n\n"
 * then a stream. Invariants: the output has exactly the stream's length; it equals the
 * reference (every occurrence at every offset masked, and with stems every cut one,
 * nothing else changed) whether
 * the stream comes whole, byte by byte, or in pieces whose sizes the input picks;
 * each feed writes at most its input plus keep. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy_parse.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/mask_ref.h"

#define MAX_IN 65536

static struct proxy_mask m;
static char want[MAX_IN], got[MAX_IN + PROXY_MASK_MAX_LEN], piece[MAX_IN + PROXY_MASK_MAX_LEN];
static char patbuf[4][256];

static void run(const char *const *pats, const size_t *stems, size_t np, const char *s, size_t n,
		size_t step, const uint8_t *sizes, size_t ns)
{
	size_t o = 0, i = 0, k = 0;

	CHECK(proxy_mask_init_stems(&m, pats, stems, np) == 0);
	while (i < n) {
		size_t take = step ? step : (ns ? 1 + sizes[k++ % ns] : n - i), w;

		if (take > n - i)
			take = n - i;
		w = proxy_mask_feed(&m, s + i, take, piece);
		CHECK(w <= take + m.keep);
		memcpy(got + o, piece, w);
		o += w;
		i += take;
	}
	o += proxy_mask_flush(&m, got + o);
	CHECK(o == n);
	CHECK(memcmp(got, want, n) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *pats[4];
	size_t np = 0, pos = 0;

	if (size > MAX_IN)
		return 0;
	while (np < 4 && pos < size && data[pos] != '\n') {
		const uint8_t *nl = memchr(data + pos, '\n', size - pos);
		size_t l = nl ? (size_t)(nl - data) - pos : 0;

		if (!nl || l >= sizeof(patbuf[0]))
			return 0;
		memcpy(patbuf[np], data + pos, l);
		patbuf[np][l] = '\0';
		if (strlen(patbuf[np]) != l)
			return 0; /* a NUL: patterns are C strings */
		pats[np] = patbuf[np];
		np++;
		pos += l + 1;
	}
	if (pos < size && data[pos] == '\n')
		pos++;
	size_t stems[4];
	const char *in = (const char *)data + pos;
	size_t n = size - pos;

	for (size_t p = 0; p < np; p++) /* cut occurrences too, from half a pattern */
		stems[p] = strlen(pats[p]) / 2 + 1;
	for (int cut = 0; cut < 2; cut++) {
		const size_t *st = cut ? stems : NULL;

		mask_ref_stems(pats, st, np, in, n, want);
		run(pats, st, np, in, n, 0, NULL, 0);
		run(pats, st, np, in, n, 1, NULL, 0);
		run(pats, st, np, in, n, 0, data, pos ? pos : 1);
		/* one buffer at once */
		memcpy(got, in, n);
		CHECK(proxy_mask_init_stems(&m, pats, st, np) == 0);
		proxy_mask_buf(&m, got, n);
		CHECK(memcmp(got, want, n) == 0);
	}
	return 0;
}
