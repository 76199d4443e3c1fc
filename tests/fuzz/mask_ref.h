/* The reference the masker is checked against (unit test and fuzz target): every
 * occurrence of every pattern, searched at every offset of the whole input, masked
 * with '*'. Quadratic and obvious. */
#ifndef HALO_TESTS_MASK_REF_H
#define HALO_TESTS_MASK_REF_H

#include <string.h>

static inline void mask_ref(const char *const *pats, size_t np, const char *in, size_t n, char *out)
{
	memcpy(out, in, n);
	for (size_t p = 0; p < np; p++) {
		size_t l = pats[p] ? strlen(pats[p]) : 0;

		for (size_t i = 0; l && i + l <= n; i++)
			if (memcmp(in + i, pats[p], l) == 0)
				memset(out + i, '*', l);
	}
}

#endif
