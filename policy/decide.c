/* Decide(): the one answer to "may this sandbox reach this host, and which rule says so".
 *
 * Every rule gets an id in priority order (deniedDomains, then allowedDomains, then each
 * preset's entries in the order the policy lists the presets), so "the first rule in
 * list order" is simply the lowest id.  Exact entries live in one hash table keyed by
 * canonical text; "*.example.com" lives in another keyed by its suffix "example.com".
 * A lookup probes the exact table once and the suffix table once per parent domain of
 * the host (at most 126 for a 253-character name), so its cost depends on the host's
 * length, never on the number of rules. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/hashset.h"
#include "policy/policy.h"

/* Below this the tables stay in cache and prefetching is pure overhead. */
#define PREFETCH_MIN_RULES 4096

struct policy_index {
	struct policy_hset exact;
	struct policy_hset wild; /* key: the suffix after "*." */
	uint32_t first_allowed;	 /* ids below are deniedDomains */
	uint32_t first_preset;	 /* ids from here on are preset entries */
	uint32_t next_id;
	const char **preset_names; /* by position in the policy's presets list */
	bool ports;		   /* some entry names a port: keyed "host#PORT" */
};

/* An IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d) literal dials the same
 * IPv4 host, so it is keyed by that IPv4's text: a deny on 192.0.2.66 cannot be sidestepped
 * by writing [::ffff:192.0.2.66], and an entry in either spelling matches both. */
static const char *ip_key(const struct policy_host *h, char *buf, size_t n)
{
	static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};
	static const uint8_t nat64[12] = {0x00, 0x64, 0xff, 0x9b};
	const uint8_t *a = h->addr;

	if (h->kind != POLICY_HOST_IPV6 || (memcmp(a, mapped, 12) && memcmp(a, nat64, 12)))
		return h->text;
	snprintf(buf, n, "%u.%u.%u.%u", a[12], a[13], a[14], a[15]);
	return buf;
}

static int add_rule(struct policy_index *ix, const char *pattern, bool deny, size_t index)
{
	struct policy_host h;
	struct policy_hset_slot *s;
	struct policy_hset_rule *r;
	char buf[16], kb[POLICY_HOST_MAX + 8];
	const char *key;
	size_t hl;
	unsigned port;
	bool wild;
	uint32_t id = ix->next_id++;

	if (!pattern || policy_pattern_check(pattern, NULL, 0) != 0 ||
	    policy_pattern_split(pattern, &hl, &port, NULL, 0) != 0)
		return -EINVAL;
	wild = policy_pattern_wild(pattern) != NULL;
	if (policy_host_parse(pattern + (wild ? 2 : 0), hl - (wild ? 2 : 0), !wild, &h, NULL, 0) !=
	    0)
		return -EINVAL;
	key = ip_key(&h, buf, sizeof(buf));
	if (port) {
		/* '#' is in no host text, v6 included: "host#443" is never a host's key. */
		snprintf(kb, sizeof(kb), "%s#%u", key, port);
		key = kb;
		ix->ports = true;
	}
	s = policy_hset_upsert(wild ? &ix->wild : &ix->exact, policy_hset_hash(key, strlen(key)),
			       key, strlen(key));
	if (!s)
		return -ENOMEM;
	r = deny ? &s->deny : &s->allow;
	if (r->id == POLICY_HSET_NONE || id < r->id)
		*r = (struct policy_hset_rule){pattern, id, (uint32_t)index};
	return 0;
}

/* Keep going after a bad entry (to leave no doubt the whole list was seen) but remember
 * it; stop only when out of memory. */
static int add_list(struct policy_index *ix, const struct policy_list *l, bool deny)
{
	int rc, bad = 0;

	for (size_t i = 0; i < l->n; i++) {
		rc = add_rule(ix, l->items[i], deny, i);
		if (rc == -ENOMEM)
			return rc;
		if (rc)
			bad = rc;
	}
	return bad;
}

static int add_presets(struct policy_index *ix, const struct policy_list *names)
{
	int rc, bad = 0;

	for (size_t i = 0; i < names->n; i++) {
		const struct policy_preset *pr = policy_preset_find(names->items[i]);
		if (!pr) {
			bad = -EINVAL;
			continue;
		}
		ix->preset_names[i] = pr->name;
		for (size_t k = 0; k < pr->n; k++) {
			rc = add_rule(ix, pr->entries[k].pattern, false, i);
			if (rc == -ENOMEM)
				return rc;
			if (rc)
				bad = rc;
		}
	}
	return bad;
}

static size_t count_rules(const struct halo_policy *p, size_t *wild)
{
	const struct policy_list *lists[] = {&p->denied_domains, &p->allowed_domains};
	size_t n = 0;

	*wild = 0;
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < lists[l]->n; i++, n++)
			*wild += policy_pattern_wild(lists[l]->items[i]) != NULL;
	for (size_t i = 0; i < p->presets.n; i++) {
		const struct policy_preset *pr = policy_preset_find(p->presets.items[i]);
		for (size_t k = 0; pr && k < pr->n; k++, n++)
			*wild += policy_pattern_wild(pr->entries[k].pattern) != NULL;
	}
	return n;
}

static int fill(struct policy_index *ix, const struct halo_policy *p)
{
	int rc = add_list(ix, &p->denied_domains, true), rc2;

	if (rc == -ENOMEM)
		return rc;
	ix->first_allowed = ix->next_id;
	rc2 = add_list(ix, &p->allowed_domains, false);
	if (rc2 == -ENOMEM)
		return rc2;
	rc = rc ? rc : rc2;
	ix->first_preset = ix->next_id;
	rc2 = add_presets(ix, &p->presets);
	return rc2 == -ENOMEM || !rc ? rc2 : rc;
}

/* Fail closed: an entry the grammar refuses, or an unknown preset, leaves p->index NULL
 * (-EINVAL), and Decide() then denies everything rather than run with a rule missing.
 * Validation reports those entries by name; this only guards against skipping them. */
int policy_index_build(struct halo_policy *p)
{
	struct policy_index *ix;
	size_t n, wild;
	int rc;

	if (!p)
		return -EINVAL;
	policy_index_free(p->index);
	p->index = NULL;
	n = count_rules(p, &wild);
	if (n >= POLICY_HSET_NONE)
		return -E2BIG;
	ix = calloc(1, sizeof(*ix));
	if (!ix)
		return -ENOMEM;
	ix->preset_names = calloc(p->presets.n ? p->presets.n : 1, sizeof(*ix->preset_names));
	rc = ix->preset_names ? 0 : -ENOMEM;
	if (!rc)
		rc = policy_hset_reserve(&ix->exact, n - wild);
	if (!rc)
		rc = policy_hset_reserve(&ix->wild, wild);
	if (!rc)
		rc = fill(ix, p);
	if (!rc)
		rc = policy_hset_seal(&ix->exact);
	if (!rc)
		rc = policy_hset_seal(&ix->wild);
	if (rc) {
		policy_index_free(ix);
		return rc;
	}
	p->index = ix;
	return 0;
}

void policy_index_free(struct policy_index *ix)
{
	if (!ix)
		return;
	policy_hset_free(&ix->exact);
	policy_hset_free(&ix->wild);
	free(ix->preset_names);
	free(ix);
}

struct best {
	const struct policy_hset_rule *deny, *allow;
};

static void consider(const struct policy_hset_slot *s, struct best *b)
{
	if (!s)
		return;
	if (s->deny.id != POLICY_HSET_NONE && (!b->deny || s->deny.id < b->deny->id))
		b->deny = &s->deny;
	if (s->allow.id != POLICY_HSET_NONE && (!b->allow || s->allow.id < b->allow->id))
		b->allow = &s->allow;
}

/* One backward pass: at every '.', the running reverse hash is the hash of the suffix
 * after it, which is the key a "*.<suffix>" rule was stored under. IP literals never
 * match a wildcard, so they only get the exact probe. */
/* The entries with a port: the same probes with "#PORT" after each key. */
static void lookup_port(const struct policy_index *ix, const char *t, size_t n, unsigned port,
			bool suffixes, struct best *b)
{
	char kb[POLICY_HOST_MAX + 8];
	size_t m;
	uint64_t h = POLICY_HSET_FNV_BASIS;

	memcpy(kb, t, n);
	m = n + (size_t)snprintf(kb + n, sizeof(kb) - n, "#%u", port);
	for (size_t i = m; i-- > 0;) {
		if (suffixes && i < n && kb[i] == '.')
			consider(policy_hset_find(&ix->wild, h, kb + i + 1, m - i - 1), b);
		h = policy_hset_step(h, (unsigned char)kb[i]);
	}
	consider(policy_hset_find(&ix->exact, h, kb, m), b);
}

/* The deprecated IPv4-compatible form (::a.b.c.d; policy/addr.c: it reaches a.b.c.d on
 * a host that routes ::/96) meets the IPv4 address's deny entries: a denied
 * 93.184.215.14 stays denied as [::93.184.215.14]. Its allow entries it does not
 * (an allowed IPv4 is not widened to another spelling): the safe side both ways. */
static void compat_denied(const struct policy_index *ix, const struct policy_host *host,
			  unsigned port, struct best *b)
{
	static const uint8_t zero[12] = {0};
	const uint8_t *a = host->addr;
	struct best v4 = {0};
	char t[16];
	uint64_t h = POLICY_HSET_FNV_BASIS;
	size_t n;

	if (host->kind != POLICY_HOST_IPV6 || memcmp(a, zero, 12) || a[12] == 0)
		return; /* not it; nor ::, ::1 and the rest of ::0.0.0.0/104 */
	n = (size_t)snprintf(t, sizeof(t), "%u.%u.%u.%u", a[12], a[13], a[14], a[15]);
	for (size_t i = n; i-- > 0;)
		h = policy_hset_step(h, (unsigned char)t[i]);
	consider(policy_hset_find(&ix->exact, h, t, n), &v4);
	if (port && ix->ports)
		lookup_port(ix, t, n, port, false, &v4);
	if (v4.deny && (!b->deny || v4.deny->id < b->deny->id))
		b->deny = v4.deny;
}

static void lookup(const struct policy_index *ix, const struct policy_host *host, unsigned port,
		   struct best *b)
{
	char buf[16];
	const char *t = ip_key(host, buf, sizeof(buf));
	size_t n = strlen(t), k = 0, at[POLICY_HOST_MAX / 2 + 1];
	uint64_t h = POLICY_HSET_FNV_BASIS, sh[POLICY_HOST_MAX / 2 + 1];
	bool suffixes = host->kind == POLICY_HOST_NAME && ix->wild.n > 0;

	for (size_t i = n; i-- > 0;) {
		if (suffixes && t[i] == '.') {
			sh[k] = h;
			at[k++] = i + 1;
		}
		h = policy_hset_step(h, (unsigned char)t[i]);
	}
	/* On large tables every probe is a cache miss: start them all before the first
	 * compare so that they overlap instead of adding up. */
	if (ix->next_id >= PREFETCH_MIN_RULES) {
		policy_hset_prefetch(&ix->exact, h);
		for (size_t j = 0; j < k; j++)
			policy_hset_prefetch(&ix->wild, sh[j]);
	}
	consider(policy_hset_find(&ix->exact, h, t, n), b);
	for (size_t j = 0; j < k; j++)
		consider(policy_hset_find(&ix->wild, sh[j], t + at[j], n - at[j]), b);
	if (port && ix->ports)
		lookup_port(ix, t, n, port, suffixes, b);
	compat_denied(ix, host, port, b);
}

static void set_rule(const struct policy_index *ix, struct policy_decision *d,
		     const struct policy_hset_rule *r, bool allow)
{
	d->allow = allow;
	d->index = r->index;
	d->pattern = r->pattern;
	if (r->id < ix->first_allowed) {
		d->rule = POLICY_RULE_DENIED;
	} else if (r->id < ix->first_preset) {
		d->rule = POLICY_RULE_ALLOWED;
	} else {
		d->rule = POLICY_RULE_PRESET;
		d->preset = ix->preset_names[r->index];
	}
}

static bool has_rules(const struct halo_policy *p)
{
	return p->denied_domains.n || p->allowed_domains.n || p->presets.n;
}

int policy_decide(const struct halo_policy *p, const char *host, size_t len,
		  struct policy_decision *d)
{
	return policy_decide_port(p, host, len, 0, d);
}

int policy_decide_port(const struct halo_policy *p, const char *host, size_t len, unsigned port,
		       struct policy_decision *d)
{
	struct best b = {NULL, NULL};

	/* Field by field rather than memset: the host is filled by the parser, and this
	 * runs on every connection. */
	d->allow = false;
	d->rule = POLICY_RULE_DEFAULT;
	d->index = 0;
	d->pattern = NULL;
	d->preset = NULL;
	d->why[0] = 0;
	d->port = port;
	d->host.kind = POLICY_HOST_NAME;
	d->host.text[0] = 0;
	memset(d->host.addr, 0, sizeof(d->host.addr));
	if (!p) {
		snprintf(d->why, sizeof(d->why), "no policy");
		return -EINVAL;
	}
	if (p->mode == POLICY_MODE_OFF) {
		/* No egress control at all: the host is reported when it parses, but
		 * nothing is refused, since nothing would be enforced. */
		if (policy_host_parse(host, len, true, &d->host, NULL, 0) != 0)
			memset(&d->host, 0, sizeof(d->host));
		d->allow = true;
		d->rule = POLICY_RULE_MODE_OFF;
		return 0;
	}
	if (policy_host_parse(host, len, true, &d->host, d->why, sizeof(d->why)) != 0) {
		d->rule = POLICY_RULE_INVALID_HOST;
		return 0;
	}
	if (!p->index) {
		if (has_rules(p)) {
			snprintf(d->why, sizeof(d->why), "policy index not built");
			return -EINVAL;
		}
		d->allow = p->egress_default_allow;
		return 0;
	}
	lookup(p->index, &d->host, port, &b);
	if (b.deny)
		set_rule(p->index, d, b.deny, false);
	else if (b.allow)
		set_rule(p->index, d, b.allow, true);
	else
		d->allow = p->egress_default_allow;
	return 0;
}

int policy_host_port_index(const struct halo_policy *p, const struct policy_host *h, unsigned port)
{
	/* The names of the loopback, and the two addresses the relays listen on. */
	bool named = h->kind == POLICY_HOST_NAME
			 ? policy_loopback_name(h->text)
			 : strcmp(h->text, "127.0.0.1") == 0 || strcmp(h->text, "::1") == 0;

	for (size_t i = 0; named && port && i < p->host_ports.n; i++)
		if (p->host_ports.items[i] == port)
			return (int)i;
	return -1;
}

int policy_decide_target(const struct halo_policy *p, const char *host, size_t len, unsigned port,
			 struct policy_decision *d)
{
	int rc = policy_decide_port(p, host, len, port, d), i;

	if (rc != 0 || d->rule == POLICY_RULE_INVALID_HOST || d->rule == POLICY_RULE_MODE_OFF ||
	    (i = policy_host_port_index(p, &d->host, port)) < 0)
		return rc;
	d->allow = true;
	d->rule = POLICY_RULE_HOST_PORT;
	d->index = (size_t)i;
	d->pattern = NULL;
	d->preset = NULL;
	return 0;
}

bool policy_decision_unmatched(const struct policy_decision *d)
{
	return d->rule == POLICY_RULE_DEFAULT;
}

bool policy_decision_learn(struct policy_decision *d)
{
	if (d->rule != POLICY_RULE_DEFAULT || d->allow || !d->host.text[0])
		return false;
	d->allow = true;
	d->rule = POLICY_RULE_LEARNED;
	return true;
}

void policy_decision_rule(const struct policy_decision *d, char *buf, size_t n)
{
	const char *pat = d->pattern ? d->pattern : "?";

	switch (d->rule) {
	case POLICY_RULE_DENIED:
		snprintf(buf, n, "deniedDomains[%zu] %s", d->index, pat);
		break;
	case POLICY_RULE_ALLOWED:
		snprintf(buf, n, "allowedDomains[%zu] %s", d->index, pat);
		break;
	case POLICY_RULE_PRESET:
		snprintf(buf, n, "presets[%zu] %s: %s", d->index, d->preset ? d->preset : "?", pat);
		break;
	case POLICY_RULE_INVALID_HOST:
		snprintf(buf, n, "invalid host: %s", d->why);
		break;
	case POLICY_RULE_MODE_OFF:
		snprintf(buf, n, "sandbox mode off");
		break;
	case POLICY_RULE_DECIDER:
		snprintf(buf, n, "decider");
		break;
	case POLICY_RULE_LEARNED:
		snprintf(buf, n, "learn: default deny, allowed and recorded");
		break;
	case POLICY_RULE_HOST_PORT:
		snprintf(buf, n, "egress.hostPorts[%zu] %u", d->index, d->port);
		break;
	case POLICY_RULE_DEFAULT:
	default:
		snprintf(buf, n, "default %s", d->allow ? "allow" : "deny");
		break;
	}
}
