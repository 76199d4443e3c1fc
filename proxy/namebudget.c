/* The run's budget of names resolved under wildcard rules (issue 33). Every name a
 * wildcard entry allows ("*.example.com") makes the supervisor ask the host's
 * resolver about it, so under a wildcard the command can send data out through the
 * host's DNS, one name per connection (~7,300 names a second measured, ~146 KB/s).
 * Exact entries name their hosts, so they cost nothing here; neither do names that
 * were already resolved once in this run (a client reconnecting).
 *
 * Two limits: distinct names per run (limits.wildcardNames) and new distinct names in
 * any 60 seconds (limits.wildcardNamesPerMinute), both with defaults no build reaches
 * (policy.h). Past either, the name is refused before any lookup: a denial whose rule
 * names the limit and the count, and one --events "limit" record per limit per run.
 *
 * Memory: the set of names is bounded by the per-run limit (each name at most 253
 * bytes), the window by the per-minute one. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy_int.h"

#define WINDOW_MS 60000

static long long limit_or(long long v, long long def)
{
	return v > 0 ? v : def;
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static char **slot_of(char **slots, size_t n_slots, const char *name)
{
	size_t k = name_hash(name) & (n_slots - 1);

	while (slots[k] && strcmp(slots[k], name) != 0)
		k = (k + 1) & (n_slots - 1);
	return &slots[k];
}

static int grow(struct name_budget *b)
{
	size_t n = b->n_slots ? b->n_slots * 2 : 64;
	char **s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < b->n_slots; i++)
		if (b->slots[i])
			*slot_of(s, n, b->slots[i]) = b->slots[i];
	free(b->slots);
	b->slots = s;
	b->n_slots = n;
	return 0;
}

/* The per-minute window: the times of the last `cap` admissions, oldest at head. */
static bool window_full(struct name_budget *b, size_t cap, uint64_t now)
{
	if (b->ring_n < cap)
		return false;
	return now - b->ring[b->ring_head] < WINDOW_MS;
}

static int window_add(struct name_budget *b, size_t cap, uint64_t now)
{
	if (!b->ring) {
		b->ring = calloc(cap, sizeof(*b->ring));
		if (!b->ring)
			return -ENOMEM;
		b->ring_cap = cap;
	}
	if (b->ring_n < b->ring_cap) {
		b->ring[(b->ring_head + b->ring_n) % b->ring_cap] = now;
		b->ring_n++;
	} else {
		b->ring[b->ring_head] = now;
		b->ring_head = (b->ring_head + 1) % b->ring_cap;
	}
	return 0;
}

static int refuse(struct proxy *px, bool per_minute, long long value, const char *name, char *rule,
		  size_t n)
{
	struct name_budget *b = &px->names;
	const char *key = per_minute ? "wildcardNamesPerMinute" : "wildcardNames";
	bool *said = per_minute ? &b->said_rate : &b->said_total;
	char ev[320];

	b->refused++;
	snprintf(rule, n, "limits.%s (%lld %snames resolved under wildcard rules; %llu refused)",
		 key, value, per_minute ? "new " : "", b->refused);
	if (!*said) {
		*said = true;
		snprintf(ev, sizeof(ev), "lookup refused: %.253s", name);
		audit_limit_event(px, key, value, ev);
	}
	return -EDQUOT;
}

int namebudget_charge(struct proxy *px, const char *name, char *rule, size_t n)
{
	struct name_budget *b = &px->names;
	const struct policy_limits *l = &px->o.policy->limits;
	long long total = limit_or(l->wildcard_names, POLICY_WILDCARD_NAMES_DEFAULT);
	long long rate =
	    limit_or(l->wildcard_names_per_minute, POLICY_WILDCARD_NAMES_PER_MINUTE_DEFAULT);
	uint64_t now = proxy_now_ms();
	char **slot;

	if (b->n_slots && *slot_of(b->slots, b->n_slots, name))
		return 0; /* resolved before in this run: nothing new leaves */
	if ((long long)b->n >= total)
		return refuse(px, false, total, name, rule, n);
	if (window_full(b, (size_t)rate, now))
		return refuse(px, true, rate, name, rule, n);
	if ((b->n + 1) * 2 > b->n_slots && grow(b) != 0)
		return -ENOMEM;
	slot = slot_of(b->slots, b->n_slots, name);
	*slot = strdup(name);
	if (!*slot || window_add(b, (size_t)rate, now) != 0) {
		free(*slot);
		*slot = NULL;
		return -ENOMEM;
	}
	b->n++;
	return 0;
}

void namebudget_free(struct name_budget *b)
{
	for (size_t i = 0; i < b->n_slots; i++)
		free(b->slots[i]);
	free(b->slots);
	free(b->ring);
	memset(b, 0, sizeof(*b));
}
