/* halo-run made to leak, for the tests of the checks that must notice (t_verify.sh):
 * the real runner, except that masks named $HALO_TEST_LEAK_NAME are not mounted
 * (linux_test_hooks). Only this test helper sets the hook; halo-run never does. */
#include <stdlib.h>

#include "linux/linux_int.h"
#include "runner/runner.h"

int main(int argc, char **argv)
{
	const char *name = getenv("HALO_TEST_LEAK_NAME");

	if (name && *name)
		linux_test_hooks_set(&(struct linux_test_hooks){.unmasked_name = name});
	return runner_main(argc, argv);
}
