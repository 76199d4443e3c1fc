/* The macOS code path (a Mac, or make PLATFORM=portable on Linux) leaves out the
 * subcommands that inspect Linux layers — doctor, verify and verify's probes look at
 * namespaces, Landlock, seccomp and cgroups (see the Makefile's PLATFORM_EXCLUDE).
 * These stand in for them there: doctor prints what the macOS backend does not
 * enforce. */
#include <stdio.h>

#include "runner/runner_int.h"

#ifdef RUNNER_MACOS
int runner_cmd_doctor(const struct runner_opts *o)
{
	(void)o;
	printf("halo-run doctor: macOS backend (Seatbelt through %s)\n"
	       "not enforced on macOS:\n",
	       macos_sandbox_exec_path());
	for (const char *const *g = macos_gaps(); *g; g++)
		printf("  - %s\n", *g);
	return 0;
}

int runner_cmd_verify(const struct runner_opts *o)
{
	(void)o;
	fprintf(stderr, "halo-run: verify is not available on macOS yet\n");
	return HALO_EXIT_SETUP;
}

int runner_cmd_probe(const struct runner_opts *o)
{
	(void)o;
	fprintf(stderr, "halo-run: __probe is not available on macOS yet\n");
	return HALO_EXIT_SETUP;
}
int runner_cmd_session(const struct runner_opts *o)
{
	(void)o;
	fprintf(stderr, "halo-run: session: sessions need Linux namespaces (not on macOS yet)\n");
	return HALO_EXIT_SETUP;
}
int runner_session_stop_quiet(const char *name)
{
	(void)name;
	return 0; /* no sessions here: nothing to stop */
}

int runner_session_run(const struct runner_opts *o, const runner_launch *l)
{
	(void)l;
	return runner_cmd_session(o);
}
int runner_cmd_index(const struct runner_opts *o)
{
	(void)o;
	fprintf(stderr, "halo-run: index: the workspace index is Linux's (macOS has no scan)\n");
	return HALO_EXIT_SETUP;
}
#endif
