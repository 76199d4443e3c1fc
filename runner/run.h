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
/* runner/hook_fs.c: policy_link_fn by lstat and readlink (ctx unused): 1 and the
 * target for a symlink, 0 for anything else, -errno when lstat fails. */
int runner_hook_link_of(void *ctx, const char *abs, char *buf, size_t n);
int runner_open_audit(const char *path, struct stat *st, struct halo_err *e);
/* What a run adds to its proxy beyond the listeners: the --events fd (-1: none),
 * the events' session name, the --decider (NULL: none). */
struct runner_decider;
struct runner_learn;
struct runner_proxy_extra {
	int events_fd;
	size_t *events_lost; /* NULL: not counted */
	const char *session;
	struct runner_decider *dc;
	struct runner_learn *lr; /* halo-run learn (learn_run.c), NULL: not learning */
	int *explain_fd;	 /* out: the refusals' log (netns/explain.c), -1 for none; NULL:
				    closed */
};
int runner_start_proxy(const struct runner_opts *o, const runner_launch *l, runner_sandbox *sb,
		       struct proxy_poller *pl, int audit_fd, int log_fd,
		       const struct runner_proxy_extra *x, struct proxy **px);
void runner_supervisor_settings(void);
/* run.c: the caller's ssh-agent socket when sandbox.unixSockets lists it, else NULL (the
 * sandbox's ssh_config names it; a session's first call builds that in its daemon). */
struct halo_policy;
const char *runner_ssh_agent_opted_in(const struct halo_policy *p);

/* learn_run.c: `halo-run learn` (checks its options, then runs as runner_cmd_run with
 * o->learn), the record the proxy feeds, and the output written at the end (0, or
 * -errno after saying why: the run then exits 125). */
int runner_cmd_learn(const struct runner_opts *o);
struct proxy_options;
/* The record, and --out opened (before the launch: it is masked inside). 0, or
 * -errno with e set. */
int runner_learn_new(const struct runner_opts *o, struct runner_learn **out, struct halo_err *e);
void runner_learn_options(struct runner_learn *lr, struct proxy_options *po);
void runner_learn_command(struct runner_learn *lr, char *const *argv);
int runner_learn_finish(struct runner_learn *lr, const struct runner_opts *o,
			const runner_launch *l);
void runner_learn_free(struct runner_learn *lr);

/* runner/explain.c: refused connections inside the sandbox, explained once per port
 * or address (a line on log_fd unless quiet, and a "refusal" event). Fill fd, log_fd,
 * ev, quiet and host_ports; start adds fd to the loop (nothing when fd is -1);
 * finish reads what is left and closes it. */
#define RUNNER_EXPLAIN_MAX     64
#define RUNNER_EXPLAIN_WAIT_MS 2000 /* a refused localhost port is judged this much later */
struct runner_explain {
	int fd;
	int log_fd;
	int pidfd; /* the sandbox's (runner_launcher.exit_fd): its own sockets */
	struct runner_events *ev;
	bool quiet;
	const struct policy_ports *host_ports;
	struct proxy_poller *pl;
	struct proxy_timer *timer;
	int sandbox_pid; /* read from pidfd at the first refused localhost port */
	bool pid_read;
	size_t n_seen, n_said, n_pending;
	struct netns_refusal seen[RUNNER_EXPLAIN_MAX];
	uint16_t pending[RUNNER_EXPLAIN_MAX];
};
int runner_explain_start(struct runner_explain *x, struct proxy_poller *pl);
/* Read what the log holds now and judge what waits (a session's call ending). */
void runner_explain_poll(struct runner_explain *x);
void runner_explain_finish(struct runner_explain *x);

#endif
