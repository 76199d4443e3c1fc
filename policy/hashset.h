/* Internal to policy/: the open-addressing string table behind Decide().  Keys are
 * hashed right to left (reverse FNV-1a) so one backward pass over a host name yields
 * the hash of every parent suffix, and a lookup costs one probe per label, whatever
 * the number of rules. */
#ifndef HALO_POLICY_HASHSET_H
#define HALO_POLICY_HASHSET_H

#include <stddef.h>
#include <stdint.h>

#define POLICY_HSET_NONE UINT32_MAX

/* 16 bytes, so four slots share a cache line. off == 0 marks an empty slot. */
struct policy_hset_slot {
	uint32_t tag;	/* high half of the mixed hash, to skip most key compares */
	uint32_t off;	/* key offset in the arena (NUL-terminated) */
	uint32_t deny;	/* lowest deny rule id for this key, or POLICY_HSET_NONE */
	uint32_t allow; /* lowest allow rule id, or POLICY_HSET_NONE */
};

struct policy_hset {
	struct policy_hset_slot *slots;
	size_t mask; /* capacity - 1; capacity is a power of two */
	size_t n;
	char *arena;
	size_t arena_len, arena_cap;
};

#define POLICY_HSET_FNV_BASIS 0xcbf29ce484222325ULL
#define POLICY_HSET_FNV_PRIME 0x100000001b3ULL

/* One step of the reverse hash: feed bytes from the last to the first. */
static inline uint64_t policy_hset_step(uint64_t h, unsigned char c)
{
	return (h ^ c) * POLICY_HSET_FNV_PRIME;
}

uint64_t policy_hset_hash(const char *key, size_t len);

/* Find or add `key`; a new slot starts with deny = allow = POLICY_HSET_NONE.
 * Returns NULL when out of memory or the key is too long. */
struct policy_hset_slot *policy_hset_upsert(struct policy_hset *h, uint64_t hash, const char *key,
					    size_t len);
const struct policy_hset_slot *policy_hset_find(const struct policy_hset *h, uint64_t hash,
						const char *key, size_t len);
/* Size the table for n keys up front (optional). Returns 0 or -ENOMEM. */
int policy_hset_reserve(struct policy_hset *h, size_t n);
void policy_hset_free(struct policy_hset *h);

#endif
