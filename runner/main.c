/* halo-run entry point: a thin main over runner/. */
#include "runner/runner.h"

int main(int argc, char **argv)
{
	return runner_main(argc, argv);
}
