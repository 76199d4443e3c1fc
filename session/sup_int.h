/* A session's supervisor, private to session/: session_sup.c (the daemon's life: the
 * sandbox, the proxy, the spawner's channel, the end) and sup_calls.c (the calls on the
 * control socket: hello, run, forwarded signals and sizes). */
#ifndef HALO_SESSION_SUP_INT_H
#define HALO_SESSION_SUP_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "linux/session_proto.h"
#include "proxy/proxy.h"
#include "events/events.h"
#include "runner/run.h"
#include "session/session_int.h"

#define SEND_MS		    5000 /* a peer that reads nothing for this long is dropped */
#define SUP_MAX_OWN_SOCKETS 4096 /* sockets its own commands bound, kept (sup_calls.c) */

enum { C_NEW, C_JOINED, C_RUNNING };

struct sup;
struct client {
	struct session_conn io;
	struct sup *s;
	int state;
	long long id;
	int err_fd; /* the call's stderr, while it runs: the proxy's lines */
	bool gone;  /* the call went away; its command is being killed */
	bool left;  /* ... by itself (not at the session's end): said in --events */
	struct runner_session_call ev; /* what --events says of it */
};

struct sup {
	const struct runner_opts *o;
	const runner_launch *l;
	const struct runner_session_id *id;
	const char *sock_path;
	struct stat sock_st;
	runner_sandbox *sb;
	struct proxy_poller *pl;
	struct session_conn chan;
	struct runner_events ev;   /* --events: the session's, for every call */
	struct runner_decider *dc; /* --decider: the session's (NULL: none) */
	struct runner_learn *lr;   /* halo-run learn --session: every call's (NULL: none) */
	struct runner_explain xp;  /* refused connections inside, explained */
	const char *why_end;	   /* for --events: stopped, idle... */
	int listen_fd, ready_fd, log_r;
	struct client **c;
	size_t n, cap;
	char **own_socks; /* entries of sockets the session's commands bound (sup_calls.c) */
	size_t n_own_socks;
	long long next_id;
	size_t running;
	uint64_t last_ms;
	volatile bool stop;
};

/* sup_calls.c */
void sup_ready_say(struct sup *s, char kind, const char *text);
void sup_client_drop(struct sup *s, struct client *c);
int sup_reply(struct client *c, struct session_buf *b);
void sup_on_accept(void *arg, int fd, unsigned events);
struct client *sup_client_by_id(struct sup *s, long long id);

#endif
