/* "Could Decide() allow this name on some port?" — the in-sandbox DNS stub's question
 * (a name is answered only then), asked of the same Decide(): first without a port
 * (entries without one, and the default), then on every port an allow entry names. */
#include <string.h>

#include "policy/policy.h"

static void add_port(unsigned *out, size_t max, size_t *n, unsigned port)
{
	for (size_t i = 0; i < *n; i++)
		if (out[i] == port)
			return;
	if (*n < max)
		out[(*n)++] = port;
}

static void add_entry_port(const char *pattern, unsigned *out, size_t max, size_t *n)
{
	size_t hl;
	unsigned port;

	if (policy_pattern_split(pattern, &hl, &port, NULL, 0) == 0 && port)
		add_port(out, max, n, port);
}

size_t policy_allowed_ports(const struct halo_policy *p, unsigned *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < p->allowed_domains.n; i++)
		add_entry_port(p->allowed_domains.items[i], out, max, &n);
	for (size_t i = 0; i < p->presets.n; i++) {
		const struct policy_preset *pr = policy_preset_find(p->presets.items[i]);

		for (size_t k = 0; pr && k < pr->n; k++)
			add_entry_port(pr->entries[k].pattern, out, max, &n);
	}
	return n;
}

int policy_decide_some_port(const struct halo_policy *p, const char *host, size_t len,
			    struct policy_decision *d)
{
	unsigned ports[POLICY_MAX_NAMED_PORTS];
	struct policy_decision dp;
	size_t n;
	int rc = policy_decide_port(p, host, len, 0, d);

	if (rc != 0 || d->allow || d->rule == POLICY_RULE_INVALID_HOST || !p)
		return rc;
	n = policy_allowed_ports(p, ports, POLICY_MAX_NAMED_PORTS);
	for (size_t i = 0; i < n; i++) {
		rc = policy_decide_port(p, host, len, ports[i], &dp);
		if (rc != 0)
			return rc;
		if (dp.allow) {
			*d = dp;
			return 0;
		}
	}
	return 0;
}
