/* libFuzzer target for `policy import`'s parsers (JSON settings of every harness and
 * the TOML reader): whatever the input, an error with a reason or a policy that
 * loads and validates; the first byte picks the kind and --lossy. Everything is freed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/render.h"
#include "tests/fuzz/fuzz_check.h"

static const struct policy_ctx ctx = {"/home/u", "/home/env", "/home/u/ws", NULL, NULL};
static const struct render_import_world world = {&ctx, NULL, false};
static const struct render_import_world lossy = {&ctx, NULL, true};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct render_import r;
	struct halo_err e = {{0}};
	enum render_import_kind kind;
	int rc;

	if (size == 0)
		return 0;
	kind = (enum render_import_kind)(data[0] % 6);
	/* the next bit of the first byte: --lossy (substitutions instead of refusals) */
	rc = render_import((const char *)data + 1, size - 1, kind,
			   (data[0] / 6) & 1 ? &lossy : &world, &r, &e);
	if (rc == 0) {
		struct policy_diags d = {0};
		struct halo_policy *p = NULL;
		CHECK(r.yaml);
		CHECK(policy_parse_buffer("fuzz", r.yaml, strlen(r.yaml), 'y', &p, &d) == 0);
		CHECK(policy_finalize(p, &ctx, &d) == 0);
		CHECK(strstr(r.yaml, "\n  mode: off") == NULL); /* never imports a bypass */
		policy_free(p);
		policy_diags_free(&d);
	} else {
		CHECK(e.msg[0]);
		CHECK(r.yaml == NULL);
	}
	render_import_free(&r);
	return 0;
}
