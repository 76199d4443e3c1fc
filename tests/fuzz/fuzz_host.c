/* libFuzzer target for the host grammar and Decide(): every parser must refuse with a
 * reason or produce canonical text that parses back to itself, and Decide() must give
 * the canonical host the same answer as the spelling it was asked about. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "policy/policy.h"
#include "tests/fuzz/fuzz_check.h"

static char *denied[] = {"pastebin.com", "*.evil.example", "192.0.2.66", "[2001:db8::bad]"};
static char *allowed[] = {"ai.acme.example", "*.acme.example", "198.51.100.10", "::1"};
static char *presets[] = {"vcs", "package-registries"};

static struct halo_policy *policy(void)
{
	static struct halo_policy p;
	static int built;

	if (!built) {
		p.mode = POLICY_MODE_WORKSPACE_WRITE;
		p.denied_domains = (struct policy_list){denied, 4, true};
		p.allowed_domains = (struct policy_list){allowed, 4, true};
		p.presets = (struct policy_list){presets, 2, true};
		CHECK(policy_index_build(&p) == 0);
		built = 1;
	}
	return &p;
}

static void check_canonical(const struct policy_host *h)
{
	struct policy_host again;
	char why[256];
	size_t n = strlen(h->text);

	CHECK(n > 0 && n <= POLICY_HOST_MAX);
	for (size_t i = 0; i < n; i++) {
		char c = h->text[i];
		CHECK((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		      (c == ':' && h->kind == POLICY_HOST_IPV6));
	}
	CHECK(h->text[n - 1] != '.');
	CHECK(policy_host_parse(h->text, n, true, &again, why, sizeof(why)) == 0);
	CHECK(again.kind == h->kind);
	CHECK(strcmp(again.text, h->text) == 0);
	CHECK(memcmp(again.addr, h->addr, sizeof(h->addr)) == 0);
}

static void fuzz_host(const char *in, size_t size)
{
	struct policy_host h, hb;
	char why[256] = "", whyb[256] = "";
	int rc = policy_host_parse(in, size, false, &h, why, sizeof(why));
	int rcb = policy_host_parse(in, size, true, &hb, whyb, sizeof(whyb));

	if (rc == 0) {
		check_canonical(&h);
		CHECK(rcb == 0 && strcmp(h.text, hb.text) == 0);
	} else {
		CHECK(why[0] != 0);
	}
	if (rcb == 0)
		check_canonical(&hb);
	else
		CHECK(whyb[0] != 0);
}

static void fuzz_target(const char *s)
{
	struct policy_host h;
	unsigned port = 99999;
	char why[256] = "";

	if (policy_target_parse(s, &h, &port, why, sizeof(why)) == 0) {
		check_canonical(&h);
		CHECK(port <= 65535);
	} else {
		CHECK(why[0] != 0);
	}
}

static void fuzz_pattern(const char *s)
{
	struct policy_host h;
	char why[256] = "";
	size_t n = strlen(s);

	if (policy_pattern_check(s, why, sizeof(why)) != 0) {
		CHECK(why[0] != 0);
		return;
	}
	for (size_t i = 0; i < n; i++)
		CHECK(!(s[i] >= 'A' && s[i] <= 'Z'));
	unsigned port = 0;
	CHECK(policy_pattern_split(s, &n, &port, why, sizeof(why)) == 0);
	CHECK(n > 0 && n <= strlen(s) && port <= 65535);
	CHECK(port == 0 ? n == strlen(s) : s[n] == ':');
	if (strncmp(s, "*.", 2) == 0) {
		CHECK(policy_host_parse(s + 2, n - 2, false, &h, why, sizeof(why)) == 0);
		CHECK(h.kind == POLICY_HOST_NAME);
	} else {
		CHECK(policy_host_parse(s, n, true, &h, why, sizeof(why)) == 0);
	}
}

static void fuzz_decide(const char *in, size_t size)
{
	const struct halo_policy *p = policy();
	struct policy_decision d, again;
	struct policy_host h;
	char rule[512];

	CHECK(policy_decide(p, in, size, &d) == 0);
	policy_decision_rule(&d, rule, sizeof(rule));
	CHECK(rule[0] != 0);
	if (d.rule == POLICY_RULE_INVALID_HOST) {
		CHECK(!d.allow && d.why[0] != 0);
		CHECK(policy_host_parse(in, size, true, &h, NULL, 0) != 0);
		return;
	}
	CHECK(d.rule != POLICY_RULE_DENIED || !d.allow);
	CHECK(d.rule != POLICY_RULE_ALLOWED || d.allow);
	CHECK(d.rule != POLICY_RULE_DEFAULT || !d.allow); /* this policy's default is deny */
	CHECK(policy_decide(p, d.host.text, strlen(d.host.text), &again) == 0);
	CHECK(again.allow == d.allow && again.rule == d.rule && again.index == d.index);
	CHECK(again.pattern == d.pattern);
}

static void fuzz_addr(const uint8_t *data, size_t size, const char *s)
{
	struct policy_cidr c;
	enum policy_addr_class cls;
	char why[256] = "";

	if (size >= 16) {
		CHECK(policy_addr_class_name(policy_addr_classify(AF_INET6, data)) != NULL);
		policy_addr_permitted(policy(), AF_INET6, data, &cls);
	}
	if (size >= 4) {
		cls = policy_addr_classify(AF_INET, data);
		CHECK(strcmp(policy_addr_class_name(cls), "unknown") != 0);
	}
	if (policy_cidr_parse(s, &c, why, sizeof(why)) == 0) {
		CHECK(c.prefix <= (c.family == AF_INET ? 32u : 128u));
		CHECK(policy_cidr_match(&c, c.family, c.addr));
	} else {
		CHECK(why[0] != 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data;
	char *s;

	if (size > 4096)
		return 0;
	fuzz_host(in, size);
	fuzz_decide(in, size);
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	fuzz_target(s);
	fuzz_pattern(s);
	fuzz_addr(data, size, s);
	free(s);
	return 0;
}
