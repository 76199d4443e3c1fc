/* libFuzzer target for egress.upstreamProxy's URL grammar and NO_PROXY: every URL is
 * refused with a reason (leaving nothing behind) or yields a host that parses back to
 * itself, a port in range, and credentials only in the caller's form; NO_PROXY never
 * crashes, whatever the list. The input is URL, a NUL, then a NO_PROXY list. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "tests/fuzz/fuzz_check.h"

static void fuzz_url(const char *s, bool from_env)
{
	struct policy_upstream u, again;
	char why[256] = "";

	if (policy_upstream_parse(s, from_env, &u, why, sizeof(why)) != 0) {
		CHECK(why[0] != 0 && !u.on && !u.auth[0]);
		return;
	}
	CHECK(u.on && u.port >= 1 && u.port <= 65535);
	CHECK(from_env || !u.auth[0]);
	CHECK(policy_host_parse(u.host.text, strlen(u.host.text), true, &again.host, why,
				sizeof(why)) == 0);
	CHECK(strcmp(again.host.text, u.host.text) == 0);
	for (const char *a = u.auth; *a; a++)
		CHECK((unsigned char)*a >= 0x20 && *a != 0x7f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy_upstream u = {.on = true};
	struct policy_host h;
	char *s;
	size_t ul;

	if (size > 4096)
		return 0;
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	fuzz_url(s, false);
	fuzz_url(s, true);
	ul = strlen(s);
	if (ul < size && size - ul - 1 < sizeof(u.no_proxy)) {
		memcpy(u.no_proxy, s + ul + 1, size - ul - 1);
		u.no_proxy[size - ul - 1] = 0;
		if (policy_host_parse(s, ul, true, &h, NULL, 0) == 0) {
			policy_upstream_bypass(&u, &h, 443);
			policy_upstream_bypass(&u, &h, 0);
		}
	}
	free(s);
	return 0;
}
