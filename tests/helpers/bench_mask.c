/* The credential masker's own cost (tests/bench/proxy_tls.inc prints it beside the
 * end-to-end figure): BYTES through proxy_mask_feed in 16 KiB pieces, as the proxy
 * feeds a response body, with a 41-byte "Bearer ..." value and its 34-byte token,
 * against the same bytes copied once (what the proxy does without masking).
 *   bench_mask BYTES zeros|text
 * zeros: a body of NUL bytes; text: printable ASCII dense with near misses ("Bearer "
 * and the token's first bytes every 64 bytes). Prints "kind=K mib=N mask_s=S copy_s=C". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proxy/proxy_parse.h"

#define PIECE 16384

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const char *const pats[] = {"Bearer tok0123456789abcdef0123456789abcdef",
					   "tok0123456789abcdef0123456789abcdef"};
	static struct proxy_mask m;
	static char in[PIECE], out[PIECE + PROXY_MASK_MAX_LEN];
	unsigned long long bytes, done;
	unsigned long long sink = 0;
	double t0, tm, tc;

	if (argc != 3 || (strcmp(argv[2], "zeros") && strcmp(argv[2], "text"))) {
		fprintf(stderr, "usage: bench_mask BYTES zeros|text\n");
		return 2;
	}
	bytes = strtoull(argv[1], NULL, 10);
	if (strcmp(argv[2], "text") == 0)
		for (size_t i = 0; i < PIECE; i++)
			in[i] = i % 64 < 17 ? "Bearer tok0123457"[i % 64] : (char)('a' + i % 26);
	if (proxy_mask_init(&m, pats, 2) != 0)
		return 1;
	t0 = now();
	for (done = 0; done < bytes; done += PIECE)
		sink += proxy_mask_feed(&m, in, PIECE, out) + (unsigned char)out[0];
	sink += proxy_mask_flush(&m, out);
	tm = now() - t0;
	t0 = now();
	for (done = 0; done < bytes; done += PIECE) {
		memcpy(out, in, PIECE);
		sink += (unsigned char)out[PIECE / 2];
		__asm__ volatile("" : : "r"(out) : "memory");
	}
	tc = now() - t0;
	printf("kind=%s mib=%llu mask_s=%.3f copy_s=%.3f hits=%llu sink=%llu\n", argv[2],
	       bytes >> 20, tm, tc, m.hits, sink & 1);
	return 0;
}
