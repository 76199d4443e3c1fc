/* Open-addressing (linear probing) table for Decide(); see hashset.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "policy/hashset.h"

#define MIN_CAP 16
#define mix	policy_hset_mix

uint64_t policy_hset_hash(const char *key, size_t len)
{
	uint64_t h = POLICY_HSET_FNV_BASIS;

	while (len > 0)
		h = policy_hset_step(h, (unsigned char)key[--len]);
	return h;
}

static const char *slot_key(const struct policy_hset *h, const struct policy_hset_slot *s)
{
	return s->len <= POLICY_HSET_INLINE ? s->key.text : h->arena + s->key.off;
}

/* The slot holding key, or the empty slot where it belongs. A NULL key finds the
 * first empty slot (rehashing, where keys are known to be unique). */
static struct policy_hset_slot *probe(struct policy_hset_slot *slots, size_t mask,
				      const struct policy_hset *h, uint64_t hash, const char *key,
				      size_t len)
{
	uint64_t m = mix(hash);
	uint32_t tag = (uint32_t)(m >> 32);

	for (size_t i = (size_t)m & mask;; i = (i + 1) & mask) {
		struct policy_hset_slot *s = &slots[i];
		if (s->len == 0)
			return s;
		if (key && s->tag == tag && s->len == len && memcmp(slot_key(h, s), key, len) == 0)
			return s;
	}
}

int policy_hset_reserve(struct policy_hset *h, size_t n)
{
	struct policy_hset_slot *slots;
	size_t cap = MIN_CAP;

	while (cap / 2 < n) {
		if (cap > SIZE_MAX / 4 / sizeof(*slots))
			return -ENOMEM;
		cap *= 2;
	}
	if (h->slots && cap <= h->mask + 1)
		return 0;
	slots = aligned_alloc(sizeof(*slots), cap * sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	memset(slots, 0, cap * sizeof(*slots));
	for (size_t i = 0; h->slots && i <= h->mask; i++) {
		const struct policy_hset_slot *old = &h->slots[i];
		if (old->len == 0)
			continue;
		*probe(slots, cap - 1, h, policy_hset_hash(slot_key(h, old), old->len), NULL, 0) =
		    *old;
	}
	free(h->slots);
	h->slots = slots;
	h->mask = cap - 1;
	return 0;
}

static int arena_add(struct policy_hset *h, const char *key, size_t len, size_t *off)
{
	size_t need = h->arena_len + len;

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
	*off = h->arena_len;
	memcpy(h->arena + h->arena_len, key, len);
	h->arena_len += len;
	return 0;
}

struct policy_hset_slot *policy_hset_upsert(struct policy_hset *h, uint64_t hash, const char *key,
					    size_t len)
{
	static const struct policy_hset_rule none = {NULL, POLICY_HSET_NONE, 0};
	struct policy_hset_slot *s;

	if (len == 0 || len > UINT16_MAX)
		return NULL;
	free(h->filter); /* it would miss the new key */
	h->filter = NULL;
	if ((h->n + 1) * 2 > (h->slots ? h->mask + 1 : 0) && policy_hset_reserve(h, h->n + 1))
		return NULL;
	s = probe(h->slots, h->mask, h, hash, key, len);
	if (s->len)
		return s;
	if (len > POLICY_HSET_INLINE) {
		if (arena_add(h, key, len, &s->key.off))
			return NULL;
	} else {
		memcpy(s->key.text, key, len);
	}
	s->tag = (uint32_t)(mix(hash) >> 32);
	s->len = (uint16_t)len;
	s->deny = none;
	s->allow = none;
	h->n++;
	return s;
}

int policy_hset_seal(struct policy_hset *h)
{
	size_t bits = 512;

	free(h->filter);
	h->filter = NULL;
	while (bits < h->n * 8)
		bits *= 2;
	h->filter = calloc(bits / 64, sizeof(*h->filter));
	if (!h->filter)
		return -ENOMEM;
	h->fmask = bits - 1;
	for (size_t i = 0; h->slots && i <= h->mask; i++) {
		const struct policy_hset_slot *s = &h->slots[i];
		size_t bit;
		if (s->len == 0)
			continue;
		bit = (size_t)(mix(policy_hset_hash(slot_key(h, s), s->len)) >> 24) & h->fmask;
		h->filter[bit / 64] |= 1ULL << (bit % 64);
	}
	return 0;
}

const struct policy_hset_slot *policy_hset_find(const struct policy_hset *h, uint64_t hash,
						const char *key, size_t len)
{
	const struct policy_hset_slot *s;

	if (!h->slots || h->n == 0 || len == 0 || !policy_hset_maybe(h, mix(hash)))
		return NULL;
	s = probe(h->slots, h->mask, h, hash, key, len);
	return s->len ? s : NULL;
}

void policy_hset_free(struct policy_hset *h)
{
	free(h->slots);
	free(h->arena);
	free(h->filter);
	memset(h, 0, sizeof(*h));
}
