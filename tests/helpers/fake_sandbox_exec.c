/* fake_sandbox_exec — stands in for /usr/bin/sandbox-exec in the portable build's
 * tests (halo-run built with HALO_SANDBOX_EXEC_OVERRIDE reads $HALO_TEST_SANDBOX_EXEC).
 *
 *   fake_sandbox_exec -p PROFILE [-D KEY=VALUE]... [--] CMD [ARGS...]
 *
 * Like the real one it takes the profile, the parameters and the command; instead of
 * applying the profile it
 *   - records, when $FAKE_SBX_LOG names a file, its argv, the profile, the
 *     parameters, its open fds, its process group and its environment into that file;
 *   - checks the profile with halo-run's SBPL lint against the -D keys it was given, and
 *     fails as a refused profile would (a "sandbox-exec:" line on stderr, exit 65);
 *   - simulates a compile failure the same way when the profile or a -D value contains
 *     HALO_FAKE_COMPILE_ERROR, or $FAKE_SBX_FAIL is "compile";
 *   - then execs the command (halo-run's trampoline), as the real one does.
 * Missing options or command: usage on stderr, exit 64. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macos/macos.h"

#define MARKER "HALO_FAKE_COMPILE_ERROR"

extern char **environ;

/* The open fds as "0 1 2 ...", taken before the log file is opened. */
static void list_fds(char *out, size_t n)
{
	DIR *d = opendir("/proc/self/fd");
	int self = d ? dirfd(d) : -1;
	size_t len = 0;

	out[0] = '\0';
	for (struct dirent *de; d && (de = readdir(d));) {
		if (de->d_name[0] == '.' || atoi(de->d_name) == self)
			continue;
		int w = snprintf(out + len, n - len, "%s%s", len ? " " : "", de->d_name);
		if (w < 0 || (size_t)w >= n - len)
			break;
		len += (size_t)w;
	}
	if (d)
		closedir(d);
}

static void record(const char *path, int argc, char **argv, const char *profile, char **keys,
		   char **values, size_t n)
{
	char fds[256];
	FILE *f;

	list_fds(fds, sizeof(fds));
	f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f, "== argv\n");
	for (int i = 0; i < argc; i++)
		fprintf(f, "%s\n", argv[i] == profile ? "<PROFILE>" : argv[i]);
	fprintf(f, "== params\n");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s=%s\n", keys[i], values[i]);
	fprintf(f, "== fds\n%s\n", fds);
	fprintf(f, "== pgrp\n%d %d\n", (int)getpgrp(), (int)getpid());
	fprintf(f, "== env\n");
	for (char **e = environ; *e; e++)
		fprintf(f, "%s\n", *e);
	fprintf(f, "== profile\n%s\n== end\n", profile);
	fclose(f);
}

static int usage(void)
{
	fprintf(stderr,
		"usage: sandbox-exec [-f profile-file] [-n profile-name] [-p profile-string] "
		"[-D key=value ...] command [arguments ...]\n");
	return 64;
}

int main(int argc, char **argv)
{
	const char *profile = NULL, *log = getenv("FAKE_SBX_LOG");
	const char *fail = getenv("FAKE_SBX_FAIL");
	char **keys = calloc((size_t)argc + 1, sizeof(char *));
	char **values = calloc((size_t)argc + 1, sizeof(char *));
	size_t n = 0;
	bool marker = false;
	char why[512];
	int i = 1;

	if (!keys || !values)
		return 71;
	while (i < argc && argv[i][0] == '-') {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strcmp(argv[i], "-p") == 0 && i + 1 < argc) {
			profile = argv[i + 1];
		} else if (strcmp(argv[i], "-D") == 0 && i + 1 < argc) {
			char *eq = strchr(argv[i + 1], '=');
			if (!eq)
				return usage();
			keys[n] = strndup(argv[i + 1], (size_t)(eq - argv[i + 1]));
			values[n++] = eq + 1;
			if (strstr(eq + 1, MARKER))
				marker = true;
		} else {
			return usage();
		}
		i += 2;
	}
	if (!profile || i >= argc)
		return usage();
	if (log)
		record(log, argc, argv, profile, keys, values, n);
	int bad = marker || strstr(profile, MARKER) || (fail && strcmp(fail, "compile") == 0);
	if (bad)
		fprintf(stderr, "sandbox-exec: syntax error in profile (simulated by the fake)\n");
	else if (macos_sbpl_lint(profile, (const char *const *)keys, n, why, sizeof(why)) < 0)
		bad = fprintf(stderr, "sandbox-exec: %s\n", why) || 1;
	for (size_t k = 0; k < n; k++)
		free(keys[k]);
	free(keys);
	free(values);
	if (bad)
		return 65;
	execvp(argv[i], argv + i);
	fprintf(stderr, "sandbox-exec: execvp() of '%s' failed: %s\n", argv[i], strerror(errno));
	return 71;
}
