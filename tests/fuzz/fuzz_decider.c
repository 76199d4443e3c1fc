/* libFuzzer target for the decider's answer parser (events/decider_parse.c): whatever
 * a harness's program prints, the parser returns 0 with an id in 1..2^53-1 or -EINVAL
 * with a reason and a zeroed answer; an accepted line parses the same again. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "events/decider_int.h"
#include "tests/fuzz/fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct runner_decider_answer a, b;
	char why[96] = "";
	int rc = runner_decider_parse_answer((const char *)data, size, &a, why, sizeof(why));

	CHECK(rc == 0 || rc == -EINVAL);
	if (rc) {
		CHECK(why[0] != '\0');
		CHECK(a.id == 0 && !a.allow && !a.remember_session);
		return 0;
	}
	CHECK(size <= RUNNER_DECIDER_MAX_LINE);
	CHECK(a.id >= 1 && a.id < RUNNER_DECIDER_MAX_ID);
	CHECK(runner_decider_parse_answer((const char *)data, size, &b, why, sizeof(why)) == 0);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	return 0;
}
