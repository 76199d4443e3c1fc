/* Shared body of the JSON and YAML loader fuzz targets: parse, finalize against a
 * fixed world, and when the policy is valid, check that its rendering loads back
 * as the same policy. Everything is freed (LeakSanitizer watches). */
#ifndef HALO_FUZZ_POLICY_H
#define HALO_FUZZ_POLICY_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "tests/fuzz/fuzz_check.h"

static const struct policy_ctx fuzz_ctx = {"/home/u", "/home/env", "/home/u/ws", NULL, NULL};

/* The rendering says where the default came from, which legitimately changes once
 * the default is written out explicitly; everything else must match. The
 * "effective" block comes last, so its line is the key's last occurrence (an
 * env.set name may spell the same key earlier). */
static void drop_line(char *text, const char *key)
{
	char *at = NULL, *end;

	for (char *s = strstr(text, key); s; s = strstr(s + 1, key))
		at = s;

	if (!at)
		return;
	while (at > text && at[-1] != '\n')
		at--;
	end = strchr(at, '\n');
	memmove(at, end ? end + 1 : at + strlen(at), strlen(end ? end + 1 : at + strlen(at)) + 1);
}

static void round_trip(const struct halo_policy *p)
{
	struct policy_diags d = {0};
	struct halo_policy *again = NULL;
	char *t1 = policy_to_json(p), *t2;

	CHECK(t1);
	CHECK(policy_parse_buffer(p->source, t1, strlen(t1), 'j', &again, &d) == 0);
	CHECK(policy_finalize(again, &fuzz_ctx, &d) == 0);
	CHECK(again->mode == p->mode);
	CHECK(again->egress_default_allow == p->egress_default_allow);
	t2 = policy_to_json(again);
	CHECK(t2);
	drop_line(t1, "\"egressDefaultFrom\"");
	drop_line(t2, "\"egressDefaultFrom\"");
	if (strcmp(t1, t2) != 0) {
		fprintf(stderr, "round trip differs:\n%s\n----\n%s\n", t1, t2);
		abort();
	}
	free(t1);
	free(t2);
	policy_free(again);
	policy_diags_free(&d);
}

static int fuzz_policy(const uint8_t *data, size_t size, char format)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	int rc = policy_parse_buffer(format == 'j' ? "fuzz.json" : "fuzz.yaml", (const char *)data,
				     size, format, &p, &d);

	CHECK((rc == 0) == (p != NULL));
	CHECK(rc == 0 || d.n_errors > 0);
	if (p) {
		size_t before = d.n_errors;

		rc = policy_finalize(p, &fuzz_ctx, &d);
		CHECK((rc == 0) == (d.n_errors == before));
		if (rc == 0)
			round_trip(p);
		policy_free(p);
	}
	policy_diags_free(&d);
	return 0;
}

#endif
