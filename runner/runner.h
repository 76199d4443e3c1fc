/* runner/ — main(), the command line, subcommands, environment stripping,
 * supervision glue and exit codes. The only module that prints and exits. */
#ifndef HALO_RUNNER_H
#define HALO_RUNNER_H

#include "exit/exit.h" /* HALO_EXIT_*: halo-run's own exit codes */

int runner_main(int argc, char **argv);

#endif
