/* The reference the masker is checked against (unit test and fuzz target): every
 * occurrence of every pattern, searched at every offset of the whole input, masked
 * with '*'; with stems, also every cut occurrence: at least stems[p] bytes of the
 * pattern's start, as far as they agree. Quadratic and obvious. */
#ifndef HALO_TESTS_MASK_REF_H
#define HALO_TESTS_MASK_REF_H

#include <string.h>

static inline void mask_ref_stems(const char *const *pats, const size_t *stems, size_t np,
				  const char *in, size_t n, char *out)
{
	memcpy(out, in, n);
	for (size_t p = 0; p < np; p++) {
		size_t l = pats[p] ? strlen(pats[p]) : 0;
		size_t st = stems && stems[p] && stems[p] < l ? stems[p] : l;

		for (size_t i = 0; l && i < n; i++) {
			size_t k = 0;

			while (k < l && i + k < n && in[i + k] == pats[p][k])
				k++;
			if (k == l || k >= st)
				memset(out + i, '*', k);
		}
	}
}

static inline void mask_ref(const char *const *pats, size_t np, const char *in, size_t n, char *out)
{
	mask_ref_stems(pats, NULL, np, in, n, out);
}

#endif
