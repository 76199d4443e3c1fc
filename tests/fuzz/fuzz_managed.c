/* libFuzzer target for the managed layer (policy/managed.c, layer.c): the input, a
 * YAML policy, is layered as the caller's file over a fixed managed layer. Whenever
 * that is accepted, the result holds within the managed file (its mode, allowlist,
 * limit and host ports); the input as the managed layer itself never crashes. Every
 * allocation is freed (LeakSanitizer watches). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy_int.h"
#include "tests/fuzz/fuzz_check.h"

static const char managed_text[] = "sandbox: {mode: read-only}\n"
				   "egress: {default: deny, allowedDomains: [a.example, "
				   "'*.b.example'], hostPorts: [4873]}\n"
				   "limits: {cpuSeconds: 60}\n";

static struct halo_policy *parse(const char *name, const char *buf, size_t len)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	if (policy_parse_buffer(name, buf, len, 'y', &p, &d) < 0)
		p = NULL;
	policy_diags_free(&d);
	return p;
}

static void holds_within(const struct halo_policy *r)
{
	CHECK(r->mode == POLICY_MODE_READ_ONLY);
	CHECK(r->egress_default != POLICY_EGRESS_ALLOW);
	for (size_t i = 0; i < r->allowed_domains.n; i++)
		CHECK(strcmp(r->allowed_domains.items[i], "a.example") == 0 ||
		      strcmp(r->allowed_domains.items[i], "*.b.example") == 0);
	CHECK(!r->presets.n);
	CHECK(r->limits.cpu_seconds != POLICY_LIMIT_UNSET && r->limits.cpu_seconds <= 60);
	for (size_t i = 0; i < r->host_ports.n; i++)
		CHECK(r->host_ports.items[i] == 4873);
}

static void as_upper(const char *buf, size_t len)
{
	struct halo_policy *raw = parse("m", managed_text, sizeof(managed_text) - 1);
	struct halo_policy *base = parse("m", managed_text, sizeof(managed_text) - 1);
	struct halo_policy *up = parse("u", buf, len);
	struct policy_diags d = {0};

	CHECK(raw && base);
	if (up && policy_layer_managed(base, up, "u", raw, "m", &d) == 0)
		holds_within(base);
	policy_diags_free(&d);
	policy_free(up);
	policy_free(base);
	policy_free(raw);
}

/* The input as the managed layer, under a caller's file that loosens everything. */
static void as_managed(const char *buf, size_t len)
{
	static const char loose[] = "sandbox: {mode: off}\negress: {default: allow}\n"
				    "limits: {cpuSeconds: 99999}\n";
	struct halo_policy *raw = parse("m", buf, len), *base = parse("m", buf, len);
	struct halo_policy *up = parse("u", loose, sizeof(loose) - 1);
	struct policy_diags d = {0};

	CHECK(up);
	if (raw && base)
		CHECK(policy_layer_managed(base, up, "u", raw, "m", &d) != 0); /* mode off */
	policy_diags_free(&d);
	policy_free(up);
	policy_free(base);
	policy_free(raw);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	as_upper((const char *)data, size);
	as_managed((const char *)data, size);
	return 0;
}
