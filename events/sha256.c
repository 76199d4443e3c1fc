/* SHA-256 (FIPS 180-4), for the policy digest in --events' start record: a harness
 * that keeps the digest can tell that two runs (or every call of a session) ran under
 * the same effective policy. The Linux build links libcrypto (TLS termination), but
 * the portable and macOS builds link no crypto library, and this is all they need. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "events/events.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SHA_NI 1
#include <immintrin.h>
#if defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h> /* glibc 2.33: what ld.so found, no cpuid of our own */
#endif
#endif
#ifndef CPU_FEATURE_ACTIVE
#include <cpuid.h>
#endif
#endif

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

#ifdef SHA_NI
/* The SHA extensions (x86-64 since Goldmont and Zen): the same blocks some ten times
 * faster. A session's call digests its policy every time; this is most of that. */
__attribute__((target("sha,ssse3,sse4.1"))) static void blocks_ni(uint32_t h[8], const uint8_t *p,
								  size_t n)
{
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
	__m128i t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[0]), 0xB1);  /* CDAB */
	__m128i s1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[4]), 0x1B); /* EFGH */
	__m128i s0 = _mm_alignr_epi8(t, s1, 8);					       /* ABEF */

	s1 = _mm_blend_epi16(s1, t, 0xF0); /* CDGH */
	for (; n; n--, p += 64) {
		__m128i abef = s0, cdgh = s1, w[4];

		for (int g = 0; g < 4; g++)
			w[g] =
			    _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)), bswap);
		for (int g = 0; g < 16; g++) {
			__m128i m =
			    _mm_add_epi32(w[g & 3], _mm_loadu_si128((const __m128i *)&K[4 * g]));
			s1 = _mm_sha256rnds2_epu32(s1, s0, m);
			s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(m, 0x0E));
			if (g < 12) /* the words of group g + 4, in the slot group g leaves */
				w[g & 3] = _mm_sha256msg2_epu32(
				    _mm_add_epi32(
					_mm_sha256msg1_epu32(w[g & 3], w[(g + 1) & 3]),
					_mm_alignr_epi8(w[(g + 3) & 3], w[(g + 2) & 3], 4)),
				    w[(g + 3) & 3]);
		}
		s0 = _mm_add_epi32(s0, abef);
		s1 = _mm_add_epi32(s1, cdgh);
	}
	t = _mm_shuffle_epi32(s0, 0x1B);				  /* FEBA */
	s1 = _mm_shuffle_epi32(s1, 0xB1);				  /* DCHG */
	_mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(t, s1, 0xF0)); /* DCBA */
	_mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(s1, t, 8));	  /* HGFE */
}

/* Asked once; glibc's answer where it has one (a cpuid instruction costs a trip to the
 * hypervisor in a virtual machine). */
static bool have_ni(void)
{
	static int have = -1;

	if (have < 0) {
#ifdef CPU_FEATURE_ACTIVE
		have = CPU_FEATURE_ACTIVE(SHA) && CPU_FEATURE_ACTIVE(SSSE3) &&
		       CPU_FEATURE_ACTIVE(SSE4_1);
#else
		unsigned a, b, c, d; /* SHA: leaf 7 EBX bit 29; SSSE3, SSE4.1: leaf 1 ECX 9, 19 */
		have = __get_cpuid(1, &a, &b, &c, &d) && (c & (1U << 9)) && (c & (1U << 19)) &&
		       __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1U << 29));
#endif
	}
	return have == 1;
}
#endif

static void blocks(uint32_t h[8], const uint8_t *p, size_t n, bool hw)
{
#ifdef SHA_NI
	if (hw && have_ni()) {
		blocks_ni(h, p, n);
		return;
	}
#endif
	(void)hw;
	for (; n; n--, p += 64)
		block(h, p);
}

static void sha256_hex(const void *data, size_t len, char out[65], bool hw)
{
	uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
			 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	const uint8_t *p = data;
	uint8_t tail[128] = {0};
	size_t full = len / 64 * 64, rest = len - full, tl;
	uint64_t bits = (uint64_t)len * 8;

	blocks(h, p, full / 64, hw);
	memcpy(tail, p + full, rest);
	tail[rest] = 0x80;
	tl = rest < 56 ? 64 : 128;
	for (int i = 0; i < 8; i++)
		tail[tl - 1 - i] = (uint8_t)(bits >> (8 * i));
	blocks(h, tail, tl / 64, hw);
	for (int i = 0; i < 8; i++)
		snprintf(out + 8 * i, 9, "%08x", h[i]);
}

void runner_sha256_hex(const void *data, size_t len, char out[65])
{
	sha256_hex(data, len, out, true);
}

void runner_sha256_hex_portable(const void *data, size_t len, char out[65])
{
	sha256_hex(data, len, out, false);
}
