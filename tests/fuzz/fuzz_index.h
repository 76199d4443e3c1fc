/* The index targets' driver (fuzz_scan_index, fuzz_scan_index_sorted): each input as
 * it is, then again with the header's version and checksum made right, so that
 * mutations (and seeds written by an older version) reach the records instead of
 * stopping at the header. */
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
	uint32_t version = LINUX_INDEX_VERSION;

	one(data, size);
	if (size < 64 || !(fixed = malloc(size)))
		return;
	memcpy(fixed, data, size);
	memcpy(fixed + 8, &version, 4); /* after the 8-byte magic */
	sum = linux_index_checksum(fixed, size);
	memcpy(fixed + 56, &sum, 8);
	one(fixed, size);
	free(fixed);
}

#endif
