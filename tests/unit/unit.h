/* Shared glue for the Check unit tests: each test_*.c defines a Suite and ends with
 * UNIT_MAIN(its_suite_function). */
#ifndef HALO_TESTS_UNIT_H
#define HALO_TESTS_UNIT_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

/* A check that cannot test what it claims here (not root, a kernel without the
 * feature): says so with the reason and returns. tests/run-unit.sh counts the line as
 * skipped, never as passed. Usable in a test body or in a function it calls. */
#define UNIT_SKIP(what, why)                                                                       \
	do {                                                                                       \
		printf("skip - %s: %s: %s\n", __FILE__, (what), (why));                            \
		fflush(stdout);                                                                    \
		return;                                                                            \
	} while (0)

#define UNIT_MAIN(make_suite)                                                                      \
	int main(void)                                                                             \
	{                                                                                          \
		SRunner *sr = srunner_create(make_suite());                                        \
		srunner_run_all(sr, CK_NORMAL);                                                    \
		int failed = srunner_ntests_failed(sr);                                            \
		srunner_free(sr);                                                                  \
		return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;                                  \
	}

#endif
