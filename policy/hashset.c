/* Open-addressing (linear probing) string table for Decide(); see hashset.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "policy/hashset.h"

#define MIN_CAP 16

/* FNV's low bits are weak for power-of-two tables: finish with a 64-bit mixer. */
static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

uint64_t policy_hset_hash(const char *key, size_t len)
{
	uint64_t h = POLICY_HSET_FNV_BASIS;

	while (len > 0)
		h = policy_hset_step(h, (unsigned char)key[--len]);
	return h;
}

static bool key_eq(const struct policy_hset *h, uint32_t off, const char *key, size_t len)
{
	const char *k = h->arena + off;

	return memcmp(k, key, len) == 0 && k[len] == 0;
}

/* The slot holding key, or the empty slot where it belongs. */
static struct policy_hset_slot *probe(struct policy_hset_slot *slots, size_t mask,
				      const struct policy_hset *h, uint64_t hash, const char *key,
				      size_t len)
{
	uint64_t m = mix(hash);
	uint32_t tag = (uint32_t)(m >> 32);

	for (size_t i = (size_t)m & mask;; i = (i + 1) & mask) {
		struct policy_hset_slot *s = &slots[i];
		if (s->off == 0)
			return s;
		if (s->tag == tag && key && key_eq(h, s->off, key, len))
			return s;
	}
}

int policy_hset_reserve(struct policy_hset *h, size_t n)
{
	struct policy_hset_slot *slots;
	size_t cap = MIN_CAP;

	while (cap / 2 < n) {
		if (cap > SIZE_MAX / 2 / sizeof(*slots))
			return -ENOMEM;
		cap *= 2;
	}
	if (h->slots && cap <= h->mask + 1)
		return 0;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; h->slots && i <= h->mask; i++) {
		const struct policy_hset_slot *old = &h->slots[i];
		const char *k = h->arena + old->off;
		size_t len;
		if (old->off == 0)
			continue;
		len = strlen(k);
		/* Keys are unique, so the rehash only needs the empty slot: no compare. */
		*probe(slots, cap - 1, h, policy_hset_hash(k, len), NULL, 0) = *old;
	}
	free(h->slots);
	h->slots = slots;
	h->mask = cap - 1;
	return 0;
}

static int arena_add(struct policy_hset *h, const char *key, size_t len, uint32_t *off)
{
	size_t need = h->arena_len + len + 1;

	if (h->arena_len == 0)
		need++; /* offset 0 is the empty-slot marker */
	if (need > UINT32_MAX)
		return -ENOMEM;
	if (need > h->arena_cap) {
		size_t cap = h->arena_cap ? h->arena_cap : 4096;
		char *a;
		while (cap < need)
			cap *= 2;
		a = realloc(h->arena, cap);
		if (!a)
			return -ENOMEM;
		h->arena = a;
		h->arena_cap = cap;
	}
	if (h->arena_len == 0)
		h->arena[h->arena_len++] = 0;
	*off = (uint32_t)h->arena_len;
	memcpy(h->arena + h->arena_len, key, len);
	h->arena[h->arena_len + len] = 0;
	h->arena_len += len + 1;
	return 0;
}

struct policy_hset_slot *policy_hset_upsert(struct policy_hset *h, uint64_t hash, const char *key,
					    size_t len)
{
	struct policy_hset_slot *s;
	uint32_t off;

	if ((h->n + 1) * 2 > (h->slots ? h->mask + 1 : 0) && policy_hset_reserve(h, h->n + 1))
		return NULL;
	s = probe(h->slots, h->mask, h, hash, key, len);
	if (s->off)
		return s;
	if (arena_add(h, key, len, &off))
		return NULL;
	s->tag = (uint32_t)(mix(hash) >> 32);
	s->off = off;
	s->deny = POLICY_HSET_NONE;
	s->allow = POLICY_HSET_NONE;
	h->n++;
	return s;
}

const struct policy_hset_slot *policy_hset_find(const struct policy_hset *h, uint64_t hash,
						const char *key, size_t len)
{
	const struct policy_hset_slot *s;

	if (!h->slots || h->n == 0)
		return NULL;
	s = probe(h->slots, h->mask, h, hash, key, len);
	return s->off ? s : NULL;
}

void policy_hset_free(struct policy_hset *h)
{
	free(h->slots);
	free(h->arena);
	memset(h, 0, sizeof(*h));
}
