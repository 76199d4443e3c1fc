/* halo-sh: halo-run as a shell. A harness whose shell cannot be sandboxed points SHELL
 * (or its shell setting) at halo-sh, and every command it runs goes through the sandbox
 * under the discovered policy (HALO_POLICY, /etc/halo, ~/.config/halo, else the
 * embedded default), with the current directory as the workspace.
 *
 *   halo-sh -c CMD [ARG0 ARGS...]   /bin/sh -c CMD [ARG0 ARGS...] in the sandbox
 *   halo-sh [ARGS...]               /bin/sh [ARGS...]: a script, or stdin
 *   halo-sh (on a terminal)         /bin/sh -i +m: an interactive shell
 *
 * Every argument goes to /bin/sh unchanged, so whatever sh accepts (-e, -x, -l, a
 * script and its arguments) behaves as sh would. The shell is /bin/sh, not $SHELL:
 * SHELL points at halo-sh itself in the setup this exists for. Inside, SHELL is
 * /bin/sh too, since nested sandboxes are refused and a program that spawns $SHELL
 * must still find a shell. The interactive shell runs without job control (+m): the
 * terminal's foreground process group belongs to the caller, outside the sandbox's
 * pid namespace, and a job-control shell (dash) that cannot hand the terminal back
 * to it on exit turns every exit status into 2. Exit codes are halo-run's. Nothing is done beyond
 * what `halo-run -- /bin/sh ...` does, so it starts as fast. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/runner_int.h"

#define SHELL_PATH "/bin/sh"

static const char *base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

bool runner_is_shell(const char *argv0)
{
	const char *b;

	if (!argv0)
		return false;
	b = base(argv0);
	if (b[0] == '-') /* a login shell's argv[0] */
		b++;
	return strcmp(b, "halo-sh") == 0;
}

static void usage(void)
{
	fputs("usage: halo-sh -c CMD [ARG0 ARGS...]   run CMD with /bin/sh in the sandbox\n"
	      "       halo-sh [SCRIPT [ARGS...]]       /bin/sh in the sandbox (on a terminal: "
	      "interactive, no job control)\n"
	      "The policy is discovered as for halo-run (HALO_POLICY, /etc/halo, ~/.config/halo, "
	      "the embedded default);\nthe current directory is the workspace. Exit status: "
	      "halo-run's (see halo-run --help).\n",
	      stdout);
}

int runner_shell_main(int argc, char **argv)
{
	struct runner_opts o = {0};
	const char *shell = getenv("SHELL");
	bool login = argv[0] && base(argv[0])[0] == '-';
	char **args;
	int n = 0, rc;

	if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		usage();
		return 0;
	}
	args = calloc((size_t)argc + 4, sizeof(char *));
	if (!args) {
		fprintf(stderr, "halo-sh: out of memory\n");
		return HALO_EXIT_SETUP;
	}
	args[n++] = SHELL_PATH;
	if (login)
		args[n++] = "-l";
	for (int i = 1; i < argc; i++)
		args[n++] = argv[i];
	if (argc == 1 && isatty(0) && isatty(2)) {
		args[n++] = "-i";
		args[n++] = "+m";
	}
	if (shell && runner_is_shell(shell))
		setenv("SHELL", SHELL_PATH, 1);
	o.rest = args;
	o.n_rest = n;
	rc = runner_cmd_run(&o);
	free(args);
	return rc;
}
