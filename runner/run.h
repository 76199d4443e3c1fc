/* The run's pieces that a session's supervisor drives too (runner/loop.c): the one
 * upward arrow left in HACKING.md's table (session/ → runner/run.h), until the
 * session's supervisor takes them through launch/. */
#ifndef HALO_RUNNER_RUN_H
#define HALO_RUNNER_RUN_H

#include "launch/launch.h"
#include "opts/opts.h"

/* loop.c, shared with the session's supervisor: the --audit file (opened before the
 * launch, so that the sandbox masks it), the proxy on the sandbox's listeners, and
 * the supervisor's process settings (SIGPIPE ignored, the fd limit raised). */
struct stat;
struct proxy_poller;
int runner_open_audit(const char *path, struct stat *st, struct halo_err *e);
/* What a run adds to its proxy beyond the listeners: the --events fd (-1: none),
 * the events' session name, the --decider (NULL: none). */
struct runner_decider;
struct runner_proxy_extra {
	int events_fd;
	size_t *events_lost; /* NULL: not counted */
	const char *session;
	struct runner_decider *dc;
};
int runner_start_proxy(const struct runner_opts *o, const runner_launch *l, runner_sandbox *sb,
		       struct proxy_poller *pl, int audit_fd, int log_fd,
		       const struct runner_proxy_extra *x, struct proxy **px);
void runner_supervisor_settings(void);

#endif
