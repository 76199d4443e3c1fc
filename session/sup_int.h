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

#define SEND_MS		    5000  /* a peer that reads nothing for this long is dropped */
#define SUP_MAX_OWN_SOCKETS 4096  /* sockets it keeps (sup_socks.c) */
#define SUP_HELLO_MS	    10000 /* a connection's time to say hello: its slot back then */

enum { C_NEW, C_JOINED, C_RUNNING };

struct sup;
struct client {
	struct session_conn io;
	struct sup *s;
	int state;
	long long id;
	int err_fd;	    /* the call's stderr, while it runs: the proxy's lines */
	bool gone;	    /* the call went away; its command is being killed */
	bool left;	    /* ... by itself (not at the session's end): said in --events */
	uint64_t need;	    /* the walk its hello waits for (sup_walk.c): one after its connect */
	uint64_t accept_ms; /* a connection silent for SUP_HELLO_MS is let go (session_sup.c) */
	char *refuse;	    /* its hello's refusal, said once the walk is done (sup_calls.c) */
	bool waiting;	    /* its hello passed but for that walk: its descriptor is not polled */
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
	struct sup_walk *walk; /* the protected files' walk for the calls (sup_walk.c) */
	char **mounts;	       /* the sandbox's mounts when it was ready (linux_session_mounts) */
	size_t n_mounts;
	char **own_socks; /* sockets its commands bound, host ones it masked (sup_socks.c) */
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
/* The walk is done: answer the hellos that waited for it (eventfd callback). */
void sup_walk_done(void *arg, int fd, unsigned events);

/* sup_socks.c: the sockets a session keeps. A call's walk's socket table, read once
 * and only when an entry is new (sup_sock_own). */
struct sock_check {
	struct netns_unix_files bound;
	bool read;
};
bool sup_held(const struct runner_session_id *id, const char *entry); /* (sup_calls.c) */
bool sup_sock_known(const struct sup *s, const char *entry);
bool sup_sock_own(struct sup *s, struct sock_check *k, const char *entry);
void sup_host_sockets_mask(struct sup *s, struct sock_check *k, char *const *prot, size_t n_prot);

/* sup_walk.c: start the walker (and its eventfd on the loop), stop it (joins it). */
int sup_walk_start(struct sup *s);
void sup_walk_stop(struct sup *s);
/* A connect's generation: the first walk to start after this call answers it. The
 * walker is kept off the CPU of the caller (its pid), which goes on with its own work. */
uint64_t sup_walk_ask(struct sup *s, pid_t caller);
/* The lists for gen: 0 with *r (valid until sup_walk_release, which must follow),
 * -EAGAIN while that walk is not done, or the walk's -errno with err set. */
struct sup_walked {
	char **prot; /* linux_session_protected's list */
	size_t n_prot;
	char **mounts; /* the sandbox's mounts, read after the walk */
	size_t n_mounts;
	int mounts_rc; /* their read's: 0 or -errno */
};
int sup_walk_result(struct sup *s, uint64_t gen, struct sup_walked *r, char *err, size_t err_n);
void sup_walk_release(struct sup *s);
/* Read the eventfd empty (before looking at the results). */
void sup_walk_drain(struct sup *s);

#endif
