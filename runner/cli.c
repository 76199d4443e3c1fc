/* Command line (placeholder until the runner lands). */
#include <stdio.h>

#include "runner/runner.h"

int runner_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "halo-run: not built yet\n");
	return HALO_EXIT_SETUP;
}
