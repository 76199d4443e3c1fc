/* The index targets' driver (fuzz_scan_index, fuzz_scan_index_sorted): each input as
 * it is, then again with the header's checksum made right, so that mutations reach
 * the records instead of stopping at the checksum. */
#ifndef HALO_FUZZ_INDEX_H
#define HALO_FUZZ_INDEX_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "linux/scan_index.h"

static inline void fuzz_index_twice(const uint8_t *data, size_t size,
				    void (*one)(const uint8_t *, size_t))
{
	uint8_t *fixed;
	uint64_t sum;

	one(data, size);
	if (size < 64 || !(fixed = malloc(size)))
		return;
	memcpy(fixed, data, size);
	sum = linux_index_checksum(fixed + 64, size - 64);
	memcpy(fixed + 56, &sum, 8);
	one(fixed, size);
	free(fixed);
}

#endif
