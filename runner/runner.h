/* runner/ — main(), the command line, subcommands, environment stripping,
 * supervision glue and exit codes. The only module that prints and exits. */
#ifndef HALO_RUNNER_H
#define HALO_RUNNER_H

enum {
	HALO_EXIT_TIMEOUT = 124,
	HALO_EXIT_SETUP = 125, /* policy or usage error, sandbox could not be built */
	HALO_EXIT_NOEXEC = 126,
	HALO_EXIT_NOTFOUND = 127,
	/* --fail-on-deny: the command exited 0 but egress was denied. Below xargs's
	 * 123-127 and timeout's 124-125, above sysexits' 64-78 and apt's 100. */
	HALO_EXIT_DENIED = 122,
};

int runner_main(int argc, char **argv);

#endif
