/* Internal to policy/: the open-addressing table behind Decide().  Keys are hashed right
 * to left (reverse FNV-1a) so one backward pass over a host name yields the hash of
 * every parent suffix, and a lookup costs one probe per label, whatever the number of
 * rules.  A slot is one cache line holding the key (inline up to 24 bytes) and the best
 * deny and allow rule for it, so a hit costs a single memory access on large tables. */
#ifndef HALO_POLICY_HASHSET_H
#define HALO_POLICY_HASHSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define POLICY_HSET_NONE   UINT32_MAX
#define POLICY_HSET_INLINE 24

/* A rule as Decide() reports it; id orders rules by priority (lower wins). */
struct policy_hset_rule {
	const char *pattern;
	uint32_t id; /* POLICY_HSET_NONE: no rule */
	uint32_t index;
};

struct policy_hset_slot {
	uint32_t tag; /* high half of the mixed hash, to skip most key compares */
	uint16_t len; /* key length; 0 marks an empty slot */
	uint16_t unused;
	struct policy_hset_rule deny;
	struct policy_hset_rule allow;
	union {
		char text[POLICY_HSET_INLINE]; /* len <= POLICY_HSET_INLINE */
		size_t off;		       /* otherwise: offset in the arena */
	} key;
};

_Static_assert(sizeof(struct policy_hset_slot) == 64, "one slot, one cache line");

struct policy_hset {
	struct policy_hset_slot *slots;
	size_t mask; /* capacity - 1; capacity is a power of two */
	size_t n;
	/* Optional one-bit-per-hash filter (policy_hset_seal): small enough to stay in
	 * cache, it answers most "absent" probes without touching a slot. */
	uint64_t *filter;
	size_t fmask; /* filter bits - 1 */
	char *arena;  /* keys longer than POLICY_HSET_INLINE */
	size_t arena_len, arena_cap;
};

#define POLICY_HSET_FNV_BASIS 0xcbf29ce484222325ULL
#define POLICY_HSET_FNV_PRIME 0x100000001b3ULL

/* One step of the reverse hash: feed bytes from the last to the first. */
static inline uint64_t policy_hset_step(uint64_t h, unsigned char c)
{
	return (h ^ c) * POLICY_HSET_FNV_PRIME;
}

/* FNV's low bits are weak for power-of-two tables: finish with a 64-bit mixer. */
static inline uint64_t policy_hset_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

/* False only when the key is surely absent. */
static inline bool policy_hset_maybe(const struct policy_hset *h, uint64_t m)
{
	size_t bit = (size_t)(m >> 24) & h->fmask;

	return !h->filter || (h->filter[bit / 64] >> (bit % 64)) & 1;
}

static inline void policy_hset_prefetch(const struct policy_hset *h, uint64_t hash)
{
	uint64_t m = policy_hset_mix(hash);

	if (h->slots && policy_hset_maybe(h, m))
		__builtin_prefetch(&h->slots[m & h->mask]);
}

uint64_t policy_hset_hash(const char *key, size_t len);

/* Find or add `key` (1..65535 bytes); a new slot starts with no deny and no allow rule.
 * Returns NULL when out of memory or the key is empty or too long. */
struct policy_hset_slot *policy_hset_upsert(struct policy_hset *h, uint64_t hash, const char *key,
					    size_t len);
const struct policy_hset_slot *policy_hset_find(const struct policy_hset *h, uint64_t hash,
						const char *key, size_t len);
/* Build the filter once every key is in (8 bits per key); a later upsert drops it.
 * Returns 0 or -ENOMEM (the table still works, unfiltered). */
int policy_hset_seal(struct policy_hset *h);
/* Size the table for n keys up front (optional). Returns 0 or -ENOMEM. */
int policy_hset_reserve(struct policy_hset *h, size_t n);
void policy_hset_free(struct policy_hset *h);

#endif
