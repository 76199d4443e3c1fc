/* The session's control protocol (session_proto.c): pure, so that the unit tests and
 * the fuzzer drive it without the rest of linux/.
 *
 * Two channels speak it: a call (halo-run --session NAME) to the session's supervisor
 * over the control socket (outside the sandbox, same user only), and the supervisor
 * to the spawner inside the sandbox over a socketpair. Every frame is a 4-byte
 * little-endian payload length, then the payload: NUL-terminated strings, the verb
 * first, then key and value pairs. Keys and values are checked against one table
 * (known keys, which verb takes which, numbers in range, environment entries of the
 * form NAME=VALUE): whatever reaches the code behind is well-formed. The peer of each
 * channel is treated as hostile (the spawner lives among the sandboxed processes). */
#ifndef HALO_LINUX_SESSION_PROTO_H
#define HALO_LINUX_SESSION_PROTO_H

#include <stdbool.h>
#include <stddef.h>

/* 2: the supervisor walks for protected files itself (a hello carries no list; a
 * supervisor of version 1 would take a call's missing list as "nothing new"). */
#define SESSION_PROTO_VERSION "2"
#define SESSION_FRAME_MAX     (1u << 20) /* payload bytes: argv and environment fit */
#define SESSION_LIST_MAX      8192	 /* arg or env entries in one frame */
#define SESSION_NAME_MAX      64
#define SESSION_MAX_FDS	      3 /* a run carries the call's stdin, stdout, stderr */

enum session_verb {
	SESSION_HELLO,	 /* call → supervisor: name, version, what fixes the sandbox */
	SESSION_OK,	 /* the answer to hello and stop; the spawner's "ready" */
	SESSION_REFUSED, /* why */
	SESSION_RUN,	 /* arg..., env... (+ 3 fds); with id towards the spawner */
	SESSION_SIGNAL,	 /* sig (one of the forwarded signals) */
	SESSION_KILL,	 /* the call's wall-clock limit, or the call went away */
	SESSION_EXIT,	 /* status: the command's wait status */
	SESSION_FAILED,	 /* kind exec|setup, err, msg: the command never ran */
	SESSION_STOP,	 /* end the session and everything in it */
	SESSION_INFO,	 /* request (no keys) and answer (workspace, calls, idle, pid) */
	SESSION_N_VERBS,
};

enum session_fail_kind { SESSION_FAIL_EXEC = 1, SESSION_FAIL_SETUP = 2 };

/* A parsed frame. Strings point into the payload given to session_msg_parse; arg and
 * env are NULL-terminated arrays owned by the message (session_msg_free). */
struct session_msg {
	enum session_verb verb;
	const char *version, *name, *policy, *options, *workspace, *why, *msg;
	char **arg, **env;
	size_t n_arg, n_env;
	long long id, sig, status, err, calls, idle, pid, wall;
	enum session_fail_kind kind;
	unsigned have; /* bit per key present (1u << SESSION_K_...) */
	char *owned;   /* the payload's copy when session_conn_next made it */
};

enum session_key {
	SESSION_K_V,
	SESSION_K_NAME,
	SESSION_K_POLICY,
	SESSION_K_OPTIONS,
	SESSION_K_WORKSPACE,
	SESSION_K_ARG,
	SESSION_K_ENV,
	SESSION_K_ID,
	SESSION_K_SIG,
	SESSION_K_STATUS,
	SESSION_K_KIND,
	SESSION_K_ERR,
	SESSION_K_MSG,
	SESSION_K_WHY,
	SESSION_K_CALLS,
	SESSION_K_IDLE,
	SESSION_K_PID,
	SESSION_K_WALL, /* run (call → supervisor): the call's wall-clock limit, s (events) */
	SESSION_N_KEYS,
};

static inline bool session_msg_has(const struct session_msg *m, enum session_key k)
{
	return (m->have >> k) & 1u;
}

/* A session's name: 1 to 64 of [A-Za-z0-9._-], not starting with '.' or '-' (it
 * names a file in the control directory). */
bool session_name_ok(const char *name);

/* Is a whole frame at buf[0..n)? 1 with *frame_len (header included), 0 when more
 * bytes are needed, -EMSGSIZE for an empty or over-long payload. */
int session_frame_len(const unsigned char *buf, size_t n, size_t *frame_len);

/* Parse one payload (the frame without its header). 0, or -EINVAL / -ENOMEM with the
 * reason in why; m is then empty (nothing to free). */
int session_msg_parse(const char *payload, size_t len, struct session_msg *m, char *why,
		      size_t why_n);
void session_msg_free(struct session_msg *m);

/* Building a frame: begin with the verb, add pairs, end (writes the header). Errors
 * stick (out of memory, over SESSION_FRAME_MAX) and end reports them: 0 or -errno. */
struct session_buf {
	char *p;
	size_t len, cap;
	int err;
};
void session_buf_begin(struct session_buf *b, enum session_verb v);
void session_buf_put(struct session_buf *b, enum session_key k, const char *value);
void session_buf_put_int(struct session_buf *b, enum session_key k, long long v);
int session_buf_end(struct session_buf *b);
void session_buf_free(struct session_buf *b);

const char *session_verb_name(enum session_verb v);

/* ---- session_io.c: frames over a stream socket (not pure: recvmsg and sendmsg). */

/* One peer's incoming bytes and the descriptors that came with them. */
struct session_conn {
	int fd;
	unsigned char *buf;
	size_t len, cap;
	int fds[SESSION_MAX_FDS];
	size_t n_fds;
};
void session_conn_init(struct session_conn *c, int fd);
/* Read what is there (the fd may be non-blocking). 1: something read, 0: nothing now
 * (EAGAIN), -EPIPE at end of stream, -EPROTO for descriptors beyond SESSION_MAX_FDS or
 * cut short, -errno. */
int session_conn_read(struct session_conn *c);
/* The next whole frame, parsed: 1 (m filled; free it), 0 none yet, <0 a bad frame
 * (why set; the peer is to be dropped). The descriptors received so far stay in c
 * until session_conn_take_fds. */
int session_conn_next(struct session_conn *c, struct session_msg *m, char *why, size_t why_n);
/* Move the received descriptors out (up to SESSION_MAX_FDS, -1 for missing ones). */
size_t session_conn_take_fds(struct session_conn *c, int out[SESSION_MAX_FDS]);
void session_conn_release(struct session_conn *c); /* closes fd and held fds */

/* Send a finished frame, with fds (SCM_RIGHTS) when n_fds > 0, waiting at most
 * timeout_ms for room. 0 or -errno. */
int session_send(int fd, const struct session_buf *b, const int *fds, size_t n_fds, int timeout_ms);

#endif
