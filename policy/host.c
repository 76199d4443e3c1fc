/* PLACEHOLDER (to be replaced by the host-grammar work): compiles, refuses all. */
#include <errno.h>
#include <stdio.h>

#include "policy/policy.h"

int policy_host_parse(const char *in, size_t len, bool allow_bare_v6, struct policy_host *out,
		      char *why, size_t whylen)
{
	(void)in; (void)len; (void)allow_bare_v6; (void)out;
	snprintf(why, whylen, "not implemented");
	return -ENOSYS;
}

int policy_target_parse(const char *target, struct policy_host *host, unsigned *port, char *why,
			size_t whylen)
{
	(void)target; (void)host; (void)port;
	snprintf(why, whylen, "not implemented");
	return -ENOSYS;
}

int policy_pattern_check(const char *pattern, char *why, size_t whylen)
{
	(void)pattern;
	snprintf(why, whylen, "not implemented");
	return -ENOSYS;
}
