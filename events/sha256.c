/* SHA-256 (FIPS 180-4), for the policy digest in --events' start record: a harness
 * that keeps the digest can tell that two runs (or every call of a session) ran under
 * the same effective policy. The Linux build links libcrypto (TLS termination), but
 * the portable and macOS builds link no crypto library, and this is all they need. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "events/events.h"

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

/* The eight working variables stay in registers: each round renames them instead of
 * shifting an array (a session's call digests its policy, some 7 kB, every time). */
#define ROUND(A, B, C, D, E, F, G, H, i)                                                           \
	do {                                                                                       \
		uint32_t t1 = H + (ROR(E, 6) ^ ROR(E, 11) ^ ROR(E, 25)) + ((E & F) ^ (~E & G)) +   \
			      K[i] + w[i];                                                         \
		uint32_t t2 =                                                                      \
		    (ROR(A, 2) ^ ROR(A, 13) ^ ROR(A, 22)) + ((A & B) ^ (A & C) ^ (B & C));         \
		D += t1;                                                                           \
		H = t1 + t2;                                                                       \
	} while (0)

static void block(uint32_t h[8], const uint8_t *p)
{
	uint32_t w[64];
	uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++)
		w[i] = w[i - 16] + (ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3)) +
		       w[i - 7] + (ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10));
	for (int i = 0; i < 64; i += 8) {
		ROUND(a, b, c, d, e, f, g, k, i);
		ROUND(k, a, b, c, d, e, f, g, i + 1);
		ROUND(g, k, a, b, c, d, e, f, i + 2);
		ROUND(f, g, k, a, b, c, d, e, i + 3);
		ROUND(e, f, g, k, a, b, c, d, i + 4);
		ROUND(d, e, f, g, k, a, b, c, i + 5);
		ROUND(c, d, e, f, g, k, a, b, i + 6);
		ROUND(b, c, d, e, f, g, k, a, i + 7);
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
	h[5] += f;
	h[6] += g;
	h[7] += k;
}

void runner_sha256_hex(const void *data, size_t len, char out[65])
{
	uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
			 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	const uint8_t *p = data;
	uint8_t tail[128] = {0};
	size_t full = len / 64 * 64, rest = len - full, tl;
	uint64_t bits = (uint64_t)len * 8;

	for (size_t o = 0; o < full; o += 64)
		block(h, p + o);
	memcpy(tail, p + full, rest);
	tail[rest] = 0x80;
	tl = rest < 56 ? 64 : 128;
	for (int i = 0; i < 8; i++)
		tail[tl - 1 - i] = (uint8_t)(bits >> (8 * i));
	block(h, tail);
	if (tl == 128)
		block(h, tail + 64);
	for (int i = 0; i < 8; i++)
		snprintf(out + 8 * i, 9, "%08x", h[i]);
}
