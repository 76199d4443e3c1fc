/* The trampoline: what sandbox-exec runs. sandbox-exec's own stderr goes to a pipe
 * the supervisor reads, so that a profile it refuses ("sandbox-exec: ... syntax
 * error") is told apart from anything the command prints: once this program runs,
 * the profile compiled and applies. It puts the caller's stderr back on fd 2, says
 * "started" on the report pipe (close-on-exec from here), and execs the command. If
 * that exec fails, the errno follows on the same pipe, so halo-run reports "not
 * executable" or "not found" with the same message as on Linux. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macos/macos_int.h"

static int parse_fd(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || end == s || v < 3 || v > 1024 || fcntl((int)v, F_GETFD) < 0)
		return -1;
	return (int)v;
}

int macos_exec_child(int n, char **args)
{
	int report, err_fd;

	/* Run by hand: the runner says what this word is. */
	if (n < 3 || (report = parse_fd(args[0])) < 0 || (err_fd = parse_fd(args[1])) < 0)
		return -EINVAL;
	if (dup2(err_fd, STDERR_FILENO) < 0) {
		macos_report(report, MACOS_REPORT_SETUP, errno, "restore stderr");
		_exit(HALO_EXIT_SETUP);
	}
	close(err_fd);
	fcntl(report, F_SETFD, FD_CLOEXEC);
	macos_report(report, MACOS_REPORT_STARTED, 0, "started");
	execvp(args[2], args + 2);
	int err = errno;
	macos_report(report, MACOS_REPORT_EXEC, err, "%s", args[2]);
	_exit(halo_exit_code(halo_outcome_exec(err)));
}
