/* The fuzz targets' one assertion: an invariant that fails aborts, naming itself, so
 * that libFuzzer keeps the input as a crash. */
#ifndef HALO_FUZZ_CHECK_H
#define HALO_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "invariant failed: %s (line %d)\n", #c, __LINE__);         \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#endif
