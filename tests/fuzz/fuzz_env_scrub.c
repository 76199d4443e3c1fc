/* libFuzzer target for the registry-value scrubbers (env/env_scrub.c): no crash or
 * overrun on any value; each cut only shortens; after one pass nothing is left for a
 * second one (no userinfo, query or path token survives, GOFLAGS keeps only flags it
 * keeps again); the ambiguity check never reads past the value. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "env/env.h"
#include "tests/fuzz/fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *v = malloc(size + 1);

	if (!v)
		return 0;
	memcpy(v, data, size);
	v[size] = '\0';
	(void)runner_env_url_ambiguous(v);
	size_t before = strlen(v);
	runner_env_strip_userinfo(v);
	CHECK(strlen(v) <= before);
	CHECK(!runner_env_strip_userinfo(v));
	runner_env_strip_query(v);
	CHECK(!runner_env_strip_query(v));
	runner_env_strip_path_tokens(v);
	CHECK(strlen(v) <= before);
	runner_env_filter_goflags(v, NULL, NULL);
	CHECK(runner_env_filter_goflags(v, NULL, NULL) == 0);
	free(v);
	return 0;
}
