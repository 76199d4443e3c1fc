/* The child's setup sequence reports failures through a pipe and exits with a reserved
 * code; the supervisor turns the report into one clear message and a setup failure. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "linux/linux_int.h"

void linux_die(int report_fd, const char *step, int err, const char *fmt, ...)
{
	struct linux_report r;
	va_list ap;

	memset(&r, 0, sizeof(r));
	r.kind = LINUX_REPORT_SETUP;
	r.err = err;
	snprintf(r.step, sizeof(r.step), "%s", step);
	va_start(ap, fmt);
	vsnprintf(r.msg, sizeof(r.msg), fmt, ap);
	va_end(ap);
	/* One write below PIPE_BUF is atomic: the reader sees all of it or nothing. */
	if (report_fd >= 0) {
		ssize_t n = write(report_fd, &r, sizeof(r));
		(void)n;
	}
	_exit(LINUX_SETUP_FAILED);
}
