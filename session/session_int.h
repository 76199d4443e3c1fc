/* Shared by the files of session/: where sessions live, who they are, and frames over
 * their sockets in the blocking style of a call. */
#ifndef HALO_RUNNER_SESSION_INT_H
#define HALO_RUNNER_SESSION_INT_H

/* The words a supervisor's refusal holds when it ends the session with it (a protected
 * file appeared: sup_calls.c); the call then says no "stop it". */
#define SESSION_ENDS_WORDS "so the session ends"
/* ... and when its walk for protected files failed (sup_calls.c): a new session's
 * would fail the same way. */
#define SESSION_WALK_FAILED_WORDS "the walk for protected files failed"

#include <stdint.h>

#include "linux/session_proto.h"
#include "events/events.h"
#include "runner/run.h"
#include "session/session.h"

/* What fixes a session's sandbox: compared at every call (refused when it differs). */
struct runner_session_id {
	char name[65];
	char policy[65]; /* SHA-256 of the effective policy (policy_to_text), hex */
	char *options;	 /* the launch options that shape the sandbox, as text */
	char workspace[4096];
	long long idle_seconds;
	/* The protected files a fresh launch would mask at the session's start
	 * (linux_session_protected): a call's walk may find none that this list does not
	 * hold (session/sup_walk.c, sup_calls.c). */
	char **prot;
	size_t n_prot;
};
/* The session's supervisor, in the daemon the first call forks: start the sandbox (l
 * with session set), tell ready_fd, serve calls on listen_fd until stopped or idle.
 * Returns the daemon's exit status. */
int runner_session_serve(const struct runner_opts *o, const runner_launch *l, int listen_fd,
			 int ready_fd, const struct runner_session_id *id, const char *sock_path);

/* The control directory ($XDG_RUNTIME_DIR/halo-run or /tmp/halo-run-UID), made 0700
 * and checked to be this user's alone. 0 or -errno with e set. */
int runner_session_place(char *out, size_t n, struct halo_err *e);
/* DIR/NAME.EXT. 0 or -ENAMETOOLONG. */
int runner_session_path(const char *dir, const char *name, const char *ext, char *out, size_t n);
/* session_call.c: why this launch cannot be a session's call (said when `say`):
 * HALO_EXIT_SETUP, or 0. */
int runner_session_refusal(const struct runner_opts *o, const runner_launch *l, bool say);
/* session_join.c: a connection to the session (started first when none runs; the
 * one runner_session_early made, *early then set), or -1 after saying why not. */
int runner_session_join(const struct runner_opts *o, const runner_launch *l,
			struct runner_session_id *id, const char *dir, bool *early);
/* Close runner_session_early's connection if no call took it. */
void runner_session_early_drop(void);
/* Create --audit and --events when missing: the walk leaves them out as halo-run's. */
void runner_session_own_files(const struct runner_opts *o);
/* The session's identity for this launch (free id->options). 0 or -ENOMEM. */
int runner_session_identity(const char *name, const struct runner_opts *o, const runner_launch *l,
			    struct runner_session_id *id);
/* session_home.c: the identity's home-set part, " home-set-from-PATH-and-XDG=DIGEST"
 * (an entry per name of the set, and each prefix row by its text). */
void session_home_set_text(FILE *f, const runner_launch *l);
/* Is the peer of a connected fd this user, in this user namespace? A sandboxed
 * process has the same uid (the sandbox maps the caller's ids) but a user namespace
 * of its own: where the control directory is visible inside (a workspace of /tmp, an
 * $XDG_RUNTIME_DIR in the home or the workspace), it must neither join a session
 * started later nor pose as one (it would be handed the call's stdio, environment and
 * exit code). 0 or -EPERM. */
int runner_session_peer_ok(int fd);
/* A connected fd, or -errno (-ECONNREFUSED, -ENOENT: nobody serves that name). */
int runner_session_connect(const char *sock_path);
/* The next frame within ms: 1, or -errno (-ETIMEDOUT, -EPIPE at end of stream). */
int runner_session_recv(struct session_conn *c, struct session_msg *m, int ms);
/* End b, send it (with fds), free it. 0 or -errno. */
int runner_session_send(int fd, struct session_buf *b, const int *fds, size_t n);

/* session_events.c: --events in the session's supervisor (see there). */
struct runner_events;
struct runner_session_call {
	long long id;	/* the call's number in the session, from 1 */
	uint64_t t0_ms; /* when it was run */
	long long wall; /* its wall-clock limit, s (0: none) */
	bool timed_out; /* it killed its command at that limit */
};
void runner_session_ev_start(struct runner_events *ev, const runner_launch *l,
			     const struct runner_session_call *c, char *const *argv);
/* m: the spawner's exit or failed, NULL when the session ends during the call;
 * call_gone: the call went away first (its command was killed). */
void runner_session_ev_exit(struct runner_events *ev, const runner_launch *l,
			    const struct runner_session_call *c, const struct session_msg *m,
			    bool call_gone);
void runner_session_ev_end(struct runner_events *ev, const char *reason, long long calls);

/* session_pty.c: a call's terminal is never handed to the session (see there). */
#include <poll.h>
#include <termios.h>
struct session_pty {
	int master;  /* -1: none of fds 0-2 is a terminal */
	int term;    /* the caller's terminal (its settings, its size) */
	int in, out; /* keys from (-1: none), output to */
	bool raw, master_gone;
	struct termios saved;
	char ib[4096]; /* keys the master has not taken yet */
	size_t ilen, ioff;
};
/* Replace every terminal among fds[0..2] by the slave of a new pty (*slave: close it
 * once sent) and put the caller's terminal in raw mode. 0 or -errno. */
int runner_pty_begin(struct session_pty *p, int fds[3], int *slave);
/* Its poll entries (at most 2), then what they said: a signal the keys asked for, or 0. */
size_t runner_pty_poll(const struct session_pty *p, struct pollfd *pf);
int runner_pty_pump(struct session_pty *p, const struct pollfd *pf, size_t n);
void runner_pty_winch(struct session_pty *p);
/* The command has exited (or the call ends): its last output, then the master closed
 * and the caller's terminal as it was. */
void runner_pty_end(struct session_pty *p);

#endif
