/* --events FILE | fd:N: one JSON object per line for whoever drives halo-run (an agent
 * harness, CI), so that it need not parse stderr. Every record has "type", "ts" (UTC,
 * milliseconds, as the audit's "time"), "session" ("" outside a session) and "pid"
 * (the supervisor's: tells calls apart when one file follows a session). Types:
 *   start     policy_digest, layers, workspace, command
 *   egress    the audit record's fields (proxy/audit.c writes both from one builder)
 *   decider   the decider's troubles (died, garbage, timeout), one line each
 *   limit     limit (wall|memory|processes|cpu|fsize), value, and what showed it
 *   fs_denied source, count, first: refusals the broker counted
 *   refusal   what (localhost_port|ip_literal), address, port, policy_key, message:
 *             a connection refused inside the sandbox, explained once per port/address
 *   exit      outcome, status (halo-run's exit code), signal or code, duration_ms
 *   session_end  reason, calls, duration_ms: a session's supervisor ending
 *   reload    ok, policy_digest or error: `halo-run proxy` re-read its policy (SIGHUP)
 * In a session the session's supervisor writes every record (pid is its own); the
 * start, limit and exit records of a call carry "call" (its number in the session,
 * from 1), egress and decider records do not (the calls share the proxy).
 * The file is opened by the supervisor before the launch and masked inside the
 * sandbox like --audit (no read, no write, wherever it lies); an fd:N must be 3 or
 * more (0-2 are the command's own, where it could forge lines) and is never
 * inherited by the command. */
#ifndef HALO_RUNNER_EVENTS_H
#define HALO_RUNNER_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "policy/policy.h"
#include "rlimits/rlimits.h"
#include "exit/exit.h"

struct runner_events {
	int fd;		  /* -1: no --events */
	const char *path; /* the FILE, NULL for fd:N */
	struct stat st;	  /* the FILE as opened: checked again at exit */
	const char *session;
	uint64_t t0_ms;
	long long call; /* > 0: the session's call the next records are about */
	bool file;	/* a regular file (FILE, or fd:N on one): a lost record fails the run */
	size_t lost;	/* records not written whole, here and by the proxy (a full disk) */
};

/* Parse and open --events (NULL: none, ev->fd = -1). 0, or -EINVAL with e set. */
int runner_events_open(const char *spec, const char *session, struct runner_events *ev,
		       struct halo_err *e);
void runner_events_close(struct runner_events *ev);
/* After the last record: records a regular file could not take (a full disk, a size
 * limit) make the events incomplete. 0, or -EIO with e set naming the count. */
int runner_events_lost(const struct runner_events *ev, struct halo_err *e);
/* --events fd:N open on a regular file or a named FIFO: its name, absolute, into
 * path (1), to be masked inside like FILE, since the command would otherwise reach it
 * by name. 0 when there is nothing to mask (no fd:N, a pipe(2) or socket, a file no
 * name leads to); -EINVAL with e set when it cannot be masked (no name found, another
 * link). */
int runner_events_fd_file(const char *spec, char *path, size_t n, struct halo_err *e);
/* --audit and --events: a regular file with another hard link is refused (-EINVAL,
 * e set): the mask covers one name, the command could write through the other. */
int runner_output_one_link(const char *opt, const char *name, const struct stat *st,
			   struct halo_err *e);
/* --audit and --events: fd, the output, is refused (-EINVAL, e set) when it is the
 * same file, pipe or terminal as fd 0, 1 or 2, which the command writes to. */
int runner_output_not_stdio(const char *opt, const char *name, int fd, struct halo_err *e);

/* Open one of halo-run's output files (opt names it in messages: "--audit",
 * "--events", "--summary-md"): created with `mode`, appended to, a regular file with
 * one link, not the command's stdio, never through a symbolic link. The fd, or
 * -EINVAL with e set. */
int runner_open_output(const char *opt, const char *path, mode_t mode, struct stat *st,
		       struct halo_err *e);
/* Does `path` still name the file opened as `opened`? 0, or -ESTALE with e set. */
int runner_output_intact(const char *opt, const char *path, const struct stat *opened,
			 struct halo_err *e);

void runner_events_start(struct runner_events *ev, const struct halo_policy *p,
			 const char *const *layers, size_t n_layers, const char *workspace,
			 char *const *argv);
/* The limit and fs_denied records the outcome and the facts show, then exit. error:
 * halo-run's own message about the end ("" or NULL for none). */
void runner_events_finish(struct runner_events *ev, const struct rlimits_set *limits,
			  struct halo_outcome out, const struct halo_run_facts *f, int status,
			  const char *error);

/* A refused connection inside the sandbox, explained (runner/explain.c): what
 * ("localhost_port", "ip_literal"), the address and port, the policy key that would
 * change it, and the line said. */
void runner_events_refusal(struct runner_events *ev, const char *what, const char *addr,
			   unsigned port, const char *key, const char *message);

/* A session's last record: why it ended (stopped, idle, sandbox ended), the calls it
 * ran, and its life since runner_events_open. */
void runner_events_session_end(struct runner_events *ev, const char *reason, long long calls);

/* `halo-run proxy`, SIGHUP: the new policy in force (p), or refused (p NULL, why). */
void runner_events_reload(struct runner_events *ev, const struct halo_policy *p, const char *error);
/* SHA-256 of data as 64 hex digits (sha256.c). */
void runner_sha256_hex(const void *data, size_t len, char out[65]);
/* The same without the CPU's SHA extensions, whatever the CPU (for the tests). */
void runner_sha256_hex_portable(const void *data, size_t len, char out[65]);

/* The policy key ("limits.cpuSeconds") of a limit as the events name it ("cpu"), its
 * --limit item in *item; NULL for an unknown name (runner/limits_said.c). */
const char *runner_limit_key(const char *limit, const char **item);

struct runner_opts;
struct proxy_options;
/* decider.c: --decider's process and its questions on the supervisor's loop. start
 * after the sandbox (the decider runs outside it); options hands the proxy its ask;
 * stop after the proxy is destroyed. */
struct runner_decider;
struct proxy_poller;
int runner_decider_start(const struct runner_opts *o, struct proxy_poller *pl, int events_fd,
			 const char *session, struct runner_decider **out, struct halo_err *e);
void runner_decider_options(struct runner_decider *dc, struct proxy_options *po);
/* Where halo-run's lines about the decider go (default stderr; a session's supervisor
 * gives the pipe that reaches its running calls). */
void runner_decider_log_to(struct runner_decider *dc, int fd);
void runner_decider_stop(struct runner_decider *dc);
/* --decider-timeout (NULL: 5 s) in ms; 0, or -EINVAL with e set. */
int runner_decider_timeout(const char *spec, unsigned *ms, struct halo_err *e);

#endif
