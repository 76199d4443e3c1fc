/* libFuzzer target for the YAML policy loader (see fuzz_policy.h). */
#include "tests/fuzz/fuzz_policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_policy(data, size, 'y');
}
