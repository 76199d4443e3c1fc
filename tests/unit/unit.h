/* Shared glue for the Check unit tests: each test_*.c defines a Suite and ends with
 * UNIT_MAIN(its_suite_function). */
#ifndef HALO_TESTS_UNIT_H
#define HALO_TESTS_UNIT_H

#include <check.h>
#include <stdlib.h>

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
