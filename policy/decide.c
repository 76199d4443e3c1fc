/* PLACEHOLDER (to be replaced by the Decide work): denies everything. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy.h"

int policy_decide(const struct halo_policy *p, const char *host, size_t len,
		  struct policy_decision *d)
{
	(void)p; (void)host; (void)len;
	memset(d, 0, sizeof(*d));
	d->rule = POLICY_RULE_INVALID_HOST;
	snprintf(d->why, sizeof(d->why), "not implemented");
	return 0;
}

void policy_decision_rule(const struct policy_decision *d, char *buf, size_t n)
{
	snprintf(buf, n, "invalid host: %s", d->why);
}

int policy_index_build(struct halo_policy *p)
{
	(void)p;
	return 0;
}

void policy_index_free(struct policy_index *ix)
{
	(void)ix;
}
