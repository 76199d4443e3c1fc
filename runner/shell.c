/* halo-sh and halo-bash: halo-run as a shell. A harness whose shell cannot be
 * sandboxed points SHELL (or its shell setting, or Claude Code's
 * CLAUDE_CODE_SHELL_PREFIX) at one of them, and every command it runs goes through the
 * sandbox under the discovered policy (HALO_POLICY, /etc/halo, ~/.config/halo, else
 * the embedded default), with the current directory as the workspace.
 *
 *   halo-sh -c CMD [ARG0 ARGS...]   /bin/sh -c CMD [ARG0 ARGS...] in the sandbox
 *   halo-sh [ARGS...]               /bin/sh [ARGS...]: a script, or stdin
 *   halo-sh (on a terminal)         /bin/sh -i +m: an interactive shell
 *   halo-bash ...                   the same with /bin/bash (arrays, [[ ]], -o pipefail,
 *                                   -l, --norc: bash's own options, all passed on)
 *
 * Every argument goes to the shell unchanged, so whatever it accepts behaves as it
 * would. The shell is the name's own, not $SHELL: SHELL points at halo-sh or
 * halo-bash itself in the setup this exists for. Inside, SHELL is that real shell,
 * since nested sandboxes are refused and a program that spawns $SHELL must still find
 * a shell. The interactive shell runs without job control (+m): the terminal's
 * foreground process group belongs to the caller, outside the sandbox's pid
 * namespace, and a job-control shell that cannot hand the terminal back to it on exit
 * turns every exit status into 2 (dash) or warns at each prompt (bash). Exit codes are
 * halo-run's. Nothing is done beyond what `halo-run -- /bin/sh ...` does, so it starts
 * as fast. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/runner_int.h"

/* The names halo-run answers to as a shell, and what each runs. The Makefile's
 * HALO_LINKS makes a link for every row. */
static const struct shell_row {
	const char *name;
	const char *path;
} shells[] = {
    {"halo-sh", "/bin/sh"},
    {"halo-bash", "/bin/bash"},
};

static const char *base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static const struct shell_row *shell_of(const char *argv0)
{
	const char *b;

	if (!argv0)
		return NULL;
	b = base(argv0);
	if (b[0] == '-') /* a login shell's argv[0] */
		b++;
	for (size_t i = 0; i < sizeof(shells) / sizeof(shells[0]); i++)
		if (strcmp(b, shells[i].name) == 0)
			return &shells[i];
	return NULL;
}

bool runner_is_shell(const char *argv0)
{
	return shell_of(argv0) != NULL;
}

static void usage(const struct shell_row *s)
{
	printf("usage: %s -c CMD [ARG0 ARGS...]   run CMD with %s in the sandbox\n"
	       "       %s [OPTIONS] [SCRIPT [ARGS...]]  %s in the sandbox (on a terminal: "
	       "interactive, no job control)\n"
	       "Every argument is %s's own. The policy is discovered as for halo-run "
	       "(HALO_POLICY, /etc/halo,\n~/.config/halo, the embedded default); the current "
	       "directory is the workspace. Exit status:\nhalo-run's (see halo-run --help).\n",
	       s->name, s->path, s->name, s->path, s->path);
}

int runner_shell_main(int argc, char **argv)
{
	const struct shell_row *s = shell_of(argv[0]);
	struct runner_opts o = {0};
	const char *shell = getenv("SHELL");
	bool login = argv[0] && base(argv[0])[0] == '-';
	char **args;
	int n = 0, rc;

	if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		usage(s);
		return 0;
	}
	args = calloc((size_t)argc + 4, sizeof(char *));
	if (!args) {
		fprintf(stderr, "%s: out of memory\n", s->name);
		return HALO_EXIT_SETUP;
	}
	args[n++] = (char *)s->path;
	if (login)
		args[n++] = "-l";
	for (int i = 1; i < argc; i++)
		args[n++] = argv[i];
	if (argc == 1 && isatty(0) && isatty(2)) {
		args[n++] = "-i";
		args[n++] = "+m";
	}
	if (shell && runner_is_shell(shell))
		setenv("SHELL", s->path, 1);
	o.rest = args;
	o.n_rest = n;
	rc = runner_cmd_run(&o);
	free(args);
	return rc;
}
