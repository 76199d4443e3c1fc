/* Internals of the proxy engine. Not a public interface.
 *
 * The connection core knows no protocol by name: conn.c (lifetime, interest, event
 * dispatch), answer.c (exchanges, failures), dial.c (Decide, resolve, check, dial),
 * conn_hello.c (a tunnel's first flight), relay.c and relay_splice.c (the byte relay).
 * Each protocol is a table of callbacks (struct proto_ops) the core calls through
 * c->proto: conn_http.c + conn_fwd.c (CONNECT and absolute-form forwarding, sharing
 * proxy/http_int.h), conn_socks.c (SOCKS5), conn_hostport.c (egress.hostPorts).
 * Protocols call the core, never the other way round. proxy.c (listeners, accept,
 * lifetime) gives each listener kind its protocol; resp.c frames origin responses;
 * audit.c and summary.c record, refusal.c records the clients refused before any
 * decision; namebudget.c budgets the names resolved under wildcard rules. */
#ifndef HALO_PROXY_INT_H
#define HALO_PROXY_INT_H

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "policy/policy.h"
#include "proxy/dns.h"
#include "proxy/proxy.h"
#include "proxy/proxy_parse.h"
#include "proxy/resolve.h"

/* One read buffer shared by every connection (the loop is single-threaded): a relay
 * reads into it and writes straight on; only what the peer cannot take right now is
 * copied into a per-direction queue. An idle tunnel holds no buffer at all. */
#define PROXY_SCRATCH_SIZE	(64 * 1024)
#define PROXY_LINGER_MS		2000 /* drain a refused client before closing (no RST) */
#define PROXY_LINGER_BYTES	(256 * 1024)
#define PROXY_ACCEPT_PAUSE_MS	100
#define PROXY_IFADDR_REFRESH_MS 5000

/* Kernel memory a run can make the host hold (issue 33). Without bounds, a command
 * writing to many tunnels whose origin never reads parks ~9 MiB per tunnel in socket
 * buffers that autotuning grows, none of it charged to the sandbox's memory limit.
 * The bounds leave autotuning on (fixed SO_RCVBUF/SO_SNDBUF sizes turn it off, and
 * measured 40-70% more proxy CPU per GiB on bulk, tests/bench/proxy):
 * - every socket the proxy owns: TCP_NOTSENT_LOWAT, so that at most this much waits
 *   unsent in it (what is in flight is bounded by the peer's window: an origin that
 *   stops reading closes it); a send buffer still grows to an upload's
 *   bandwidth-delay product;
 * - the sandbox's side (accepted): TCP_WINDOW_CLAMP, the most the command can have
 *   written that the proxy has not read; its receive buffer autotunes under it;
 * - the origin's side receives as autotuning says: a clamped window would slow every
 *   download from a distant origin, and the relay stops reading it while the
 *   sandbox's side has bytes waiting;
 * - the sandbox's own sockets: netns/ lowers its namespace's tcp_wmem maximum;
 * - pipes: at most PROXY_PIPE_BUDGET of them per run (relay_splice.c).
 * With a non-reading origin that is ~0.5 MiB per tunnel (README, Limits). */
#define PROXY_SANDBOX_WINDOW (512 * 1024)
#define PROXY_NOTSENT_LOWAT  (128 * 1024)
#define PROXY_PIPE_BUDGET    (16 * 1024 * 1024)

struct pend {
	char *buf;
	size_t off, len, cap; /* bytes [off, off+len) still to write */
};

/* Linux: a tunnel direction that moves bulk borrows a pipe from the proxy's pool and
 * splices through it (relay_splice.c). The portable build only copies: there the pipe
 * fields stay zero and the relay_pipe_* calls are no-ops. */
#if defined(__linux__) && !defined(HALO_PORTABLE)
#define PROXY_SPLICE 1
#define PROXY_TLS    1 /* TLS termination (OpenSSL): the Linux build only, for now */
#endif
#define RELAY_PIPE_SIZE	    (1024 * 1024) /* asked for with F_SETPIPE_SZ */
#define RELAY_PIPES_HELD    64		  /* directions splicing at once; the others copy */
#define RELAY_PIPES_IDLE    8		  /* empty pipes kept for the next burst */
#define RELAY_PIPE_RETRY_MS 1000	  /* no new pipe for this long after one failed */

/* The pipe lent to one direction: bytes read for this side wait in it. */
struct side_pipe {
	int rd, wr;
	size_t cap;    /* the pipe's capacity */
	size_t queued; /* bytes in it: counted when read, not yet written to the side */
	bool held;
};

struct side {
	int fd; /* -1 when absent */
	unsigned ev;
	bool rd_eof;
	bool wr_shut;
	bool bulk;	       /* a read toward this side filled the scratch buffer */
	struct pend out;       /* bytes waiting to be written to this side */
	struct side_pipe pipe; /* Linux: held only while bytes flow toward this side */
};

/* Bytes queued toward this side, in the userspace queue or in its pipe. */
static inline bool side_pending(const struct side *s)
{
	return s->out.len || s->pipe.queued;
}

/* The proxy's pipes: lent per direction, returned as soon as they are empty, so an
 * idle tunnel never holds one. Idle pipes are closed when the last connection goes. */
struct relay_pipes {
	struct {
		int rd, wr;
		size_t cap;
	} idle[RELAY_PIPES_IDLE];
	size_t n_idle, n_held;
	size_t bytes;	   /* capacity of every pipe we own, idle or lent */
	size_t budget;	   /* most pipe capacity we allow ourselves; 0 until computed */
	uint64_t retry_at; /* a pipe could not be made: no new one before this */
	size_t max_held;   /* 0: RELAY_PIPES_HELD (tests lower it) */
	size_t want_size;  /* 0: RELAY_PIPE_SIZE (tests change it) */
	bool off;	   /* splice(2) refused here (seccomp, an emulated kernel): copy only */
	unsigned long long lent, refused, made; /* for tests and notes */
};

enum conn_state {
	CS_REQUEST, /* the protocol reads its request (proto->on_request; its own steps in
		     * c->req_step) */
	CS_RESOLVING,
	CS_CONNECTING,
	CS_UPSTREAM, /* egress.upstreamProxy: our CONNECT to it is out, its answer awaited */
	CS_HELLO,    /* CONNECT/SOCKS5 tunnel: the client's first flight is judged (conn_hello.c) */
	CS_TUNNEL,
	CS_FORWARD, /* the protocol frames the exchange itself (proto->fwd_*) */
	CS_CLOSING,
	CS_DEAD, /* fds closed; freed after the current round */
};

/* What the audit record calls the exchange (audit.c names them). */
enum conn_proto {
	PROTO_CONNECT,
	PROTO_HTTP,
	PROTO_SOCKS5,
	PROTO_HOSTPORT,
	PROTO_CAPTURED, /* a connection to a fake address, decided by its name */
	PROTO_DNS,	/* one query to the in-sandbox DNS stub */
	PROTO_HTTPS,	/* one request inside a tunnel whose TLS the proxy terminates */
};

/* Why a connection could not be served; one row of the answer table in conn.c. */
enum conn_fail {
	FAIL_DENY,	 /* Decide() said no */
	FAIL_ADDR,	 /* an answer is a refused address */
	FAIL_DNS_NONAME, /* no such name */
	FAIL_DNS,	 /* resolver failure */
	FAIL_DNS_TIMEOUT,
	FAIL_REFUSED, /* every address refused the connection */
	FAIL_HOST_UNREACH,
	FAIL_NET_UNREACH,
	FAIL_CONNECT_TIMEOUT,
	FAIL_HEAD_TIMEOUT,
	FAIL_INTERNAL,
	FAIL_OVERLOAD,
	FAIL_BAD_GATEWAY, /* the origin's response could not be framed */
	FAIL_BAD_BODY,	  /* the client's chunked request body broke the grammar */
	FAIL_UPSTREAM,	  /* the upstream proxy could not be reached or refused (detail) */
	FAIL_N,		  /* the count: every table of answers has this many rows */
};

/* One decision and what came of it: one audit record. */
struct exchange {
	bool open;
	enum conn_proto proto;
	char host[256]; /* canonical when Decide parsed it, else as sent */
	unsigned port;
	bool allow;
	char rule[192];
	char addr[INET6_ADDRSTRLEN]; /* the address connected to, or refused */
	const char *cls;	     /* class of a refused address */
	bool via_upstream;	     /* reached through egress.upstreamProxy (addr: checked) */
	const char *error;	     /* what failed after an allow, if anything */
	bool terminated;	     /* the proxy terminated this tunnel's TLS (conn_tls.c) */
	const char *method;	     /* PROTO_HTTPS: the request's method and target */
	const char *path;
	char error_buf[200];	  /* error, when it is a detail of this exchange */
	const char *peer;	  /* the client, when the proxy records peers (conn's) */
	const char *code;	  /* a refusal record (refusal.c): its answer, "503"... */
	unsigned long long count; /* and how many identical refusals it stands for */
	uint64_t t0_ms;
	struct timespec t0_wall;
	unsigned long long up, down;
};

struct conn;
struct listener;
struct hello_watch;

/* A protocol spoken on a listener, haproxy's style: one table of callbacks per
 * protocol, called by the connection core through c->proto. A protocol drives its
 * request to conn_target() (or conn_dial()) and, once connected, hands the client to
 * hello_start() or tunnel_start(), or keeps it in CS_FORWARD. Optional members may be
 * NULL. */
struct proto_ops {
	/* Optional. Accepted: a protocol without a request starts here (hostPorts). */
	void (*on_accept)(struct conn *c, const struct listener *l);
	/* CS_REQUEST, a client event: read and parse the request. */
	void (*on_request)(struct conn *c, unsigned events);
	/* The dial succeeded (c->ex.addr names the address). */
	void (*on_connected)(struct conn *c);
	/* Optional, for a protocol that enters CS_FORWARD: its client and origin events,
	 * and whether the client's side is to be read. */
	void (*fwd_on_client)(struct conn *c, unsigned events);
	void (*fwd_on_upstream)(struct conn *c, unsigned events);
	bool (*fwd_wants_client)(const struct conn *c);
	/* Optional: whether the origin's side is to be read (default: while nothing waits
	 * for the client). */
	bool (*fwd_wants_upstream)(const struct conn *c);
	/* A failure whose audit record is written: answer it in the protocol, or close.
	 * open: it belonged to an exchange; detail, when set, replaces
	 * conn_fail_reason(why). */
	void (*on_error)(struct conn *c, enum conn_fail why, bool open, const char *detail);
	/* Optional. conn_close: free the protocol's own state (c->pstate). */
	void (*on_close)(struct conn *c);
	/* Optional. Out of connections: the answer for a client we cannot keep (its
	 * length, <= 0 for none) and its code for the error line; without it the client
	 * is closed. */
	int (*busy_answer)(char *buf, size_t cap, const char *why);
	const char *busy_code;
	/* What a refusal record calls a connection refused before its request named a
	 * target (refusal.c), and, optionally, the answer a failure gets ("408"; without
	 * it "closed"). */
	enum conn_proto audit_proto;
	const char *(*fail_code)(enum conn_fail why);
	/* The client sends nothing between its request and our answer (CONNECT, SOCKS5):
	 * while the target is reached its read interest stays registered, unread, until
	 * it fires (conn.c, want_client), instead of a poller del now and an add at the
	 * answer. */
	bool client_waits;
};

struct conn {
	struct proxy *px;
	struct conn *prev, *next;
	const struct proto_ops *proto; /* its listener's */
	enum conn_state st;
	unsigned req_step; /* CS_REQUEST: the protocol's own steps (SOCKS5: greeting) */
	struct side c, u;
	char *in; /* client bytes not consumed yet: heads, SOCKS messages, pipelining */
	size_t in_len, in_cap;
	struct proxy_timer *t_head, *t_step, *t_idle;
	uint64_t last_io;
	struct proxy_resolve_job *job;
	struct proxy_addr *addrs; /* checked addresses, tried in order */
	size_t n_addrs, cur;
	uint64_t connect_deadline;
	int last_connect_err;
	unsigned linger_bytes; /* < PROXY_LINGER_BYTES + one read; fills the hole before ex */
	struct exchange ex;
	uint64_t ask_ticket; /* a question to the decider in flight (0: none) */
	unsigned dial_port;  /* the port dial_next connects to: the target's or the upstream's */
	bool via_up;	     /* this target goes through the upstream proxy */
	char *up_head;	     /* CS_UPSTREAM: the upstream's answer head so far */
	size_t up_len;
	void *pstate;		/* the protocol's own (HTTP: the forwarded request in flight) */
	const char *secret;	/* the client must present it (its listener's); NULL: not */
	char peer[96];		/* who connected, when o.audit_peers: "addr:port", "unix:uid=..." */
	bool recorded;		/* an audit record names this connection (o.audit_peers) */
	struct hello_watch *hw; /* CS_HELLO past an allowed ClientHello (conn_hello.c) */
	bool client_quiet;	/* the client stirred while waiting for the answer: its
				 * read interest is taken out (proto->client_waits) */
};

struct listener {
	struct proxy *px;
	int fd;
	const struct proto_ops *proto; /* what its connections speak (from its kind) */
	unsigned port;		       /* HOSTPORT */
	size_t index;		       /* HOSTPORT */
	const char *secret;	       /* required client credential; NULL: none */
	bool paused;
	bool dgram; /* DNS over UDP: read, not accepted on */
	/* Its connections' TCP options (conn.c): the listener is tuned at its first
	 * connection (LAZY: a launch whose command never connects makes no calls), every
	 * connection accepted until its queue was once drained is tuned in full (FULL: it
	 * may have been cloned before), the next one is read back (CHECK), and from then
	 * on each gets what the kernel does not copy (INHERITED) or everything (EACH). */
	enum {
		LISTEN_TUNE_EACH,
		LISTEN_TUNE_CHECK,
		LISTEN_TUNE_INHERITED,
		LISTEN_TUNE_LAZY,
		LISTEN_TUNE_FULL
	} tune;
	struct proxy_timer *resume;
};

struct host_entry;

/* refusal.c: one kind of refusal being counted for its once-a-second record. */
#define REFUSAL_SLOTS 8
struct refusal_slot {
	struct proxy *px;
	bool used;
	enum conn_proto proto;
	char host[256];
	unsigned port;
	char rule[96];
	char why[160];
	char code[8];
	char peer[96];		  /* the client, when o.audit_peers ("": not recorded) */
	unsigned long long count; /* refused since the last record of this kind */
	struct timespec wall;	  /* when the first of them came */
	struct proxy_timer *t;
};

/* namebudget.c: the names resolved under wildcard rules in this run. */
struct name_budget {
	char **slots; /* open addressing, each a strdup'd canonical name */
	size_t n_slots, n;
	uint64_t *ring; /* when the last admissions were made, oldest at ring_head */
	size_t ring_cap, ring_n, ring_head;
	unsigned long long refused;
	bool said_total, said_rate; /* the --events "limit" record, once each */
};

/* The protocols (conn_http.c, conn_socks.c, conn_hostport.c). */
extern const struct proto_ops proxy_proto_http;
extern const struct proto_ops proxy_proto_socks5;
extern const struct proto_ops proxy_proto_hostport;
extern const struct proto_ops proxy_proto_dns_tcp;
extern const struct proto_ops proxy_proto_captured;

/* conn_dns.c: the stub's UDP socket is read here, not accepted on. */
void proxy_dns_udp_on_event(void *arg, int fd, unsigned events);

struct host_table {
	struct host_entry **buckets;
	size_t n_buckets, n;
	size_t overflow_conns; /* connections to hosts beyond the table cap */
};

struct proxy {
	struct proxy_poller *pl;
	struct proxy_options o;
	struct proxy_resolver *res;
	struct listener lsn[PROXY_MAX_LISTENERS];
	size_t n_lsn;
	int reserve_fd; /* spent to accept-and-answer 503 when out of fds */
	struct conn *conns;
	struct conn *reap; /* closed this round; freed by reap_timer */
	struct proxy_timer *reap_timer;
	struct proxy_stats st;
	size_t peak_open; /* most connections open at once since the last trim */
	struct host_table hosts;
	struct proxy_http_req req; /* the one head being parsed (single-threaded) */
	struct proxy_addr *ifaddrs;
	size_t n_ifaddrs;
	uint64_t ifaddrs_at;
	bool ifaddrs_fixed; /* tests: list injected, never refreshed */
	char *scratch;
	struct relay_pipes pipes;
	struct proxy_fakeip fake;  /* the DNS stub's names, for capture */
	bool capture;		   /* a capture listener was handed over */
	struct policy_upstream up; /* egress.upstreamProxy as resolved at launch; off: direct */
	char up_text[POLICY_HOST_MAX + 10]; /* "host:port" of the upstream, for messages */
	char up_auth[POLICY_UPSTREAM_AUTH_MAX * 4 / 3 + 40]; /* its Proxy-Authorization line */
	struct policy_ipaddr
	    up_addrs[64];		/* the upstream's addresses: launch's, then each lookup's */
	size_t n_up_addrs, n_up_launch; /* the first n_up_launch are the launch's */
	struct refusal_slot refusals[REFUSAL_SLOTS];
	struct name_budget names;
	bool said_conn_cap; /* the --events "limit" record of limits.connections */
};

/* ------------------------------------------------------------ proxy.c */
/* Is this address one the proxy may dial? Public, or covered by allowPrivate; and
 * never one of the host's own interface addresses unless allowPrivate covers it.
 * *cls names the class ("loopback", ..., "interface") when refused. */
bool proxy_addr_ok(struct proxy *px, const struct proxy_addr *a, const char **cls);
/* This host's interface addresses (refreshed as proxy_addr_ok does). */
const struct proxy_addr *proxy_own_addrs(struct proxy *px, size_t *n);
/* Tests: replace the interface-address list (copied; never refreshed afterwards). */
int proxy_set_ifaddrs(struct proxy *px, const struct proxy_addr *a, size_t n);

/* peer.c: the client of fd in words ("127.0.0.1:5000", "unix:uid=0,gid=0,pid=7"). */
void proxy_peer_text(int fd, char *out, size_t n);

/* ----------------------------------------------- conn.c, answer.c, dial.c */
int conn_new(struct proxy *px, int fd, const struct listener *l);
void conn_close(struct conn *c);
void conn_set_interest(struct conn *c);
void conn_on_upstream(void *arg, int fd, unsigned events);
/* A client event while nothing is to be read from it: flush what waits for it. */
void conn_on_client_flush(struct conn *c, unsigned events);
/* TCP_NODELAY (and SO_NOSIGPIPE); the buffer bounds of the sandbox's side or the
 * origin's (PROXY_SANDBOX_WINDOW, PROXY_NOTSENT_LOWAT). */
enum sock_role { SOCK_SANDBOX, SOCK_UPSTREAM };
int conn_sock_tune(int fd, enum sock_role role);
/* A listener's options its connections are cloned with (not the window clamp: the
 * handshake recomputes it); 0 when every one took. */
int conn_sock_tune_listener(int lfd);
/* Whether fd, accepted on lfd, got lfd's TCP options from the kernel (Linux); an
 * accepted socket's tuning, in full or only what it did not inherit. */
bool conn_sock_inherited(int lfd, int fd);
void conn_sock_tune_accepted(int fd, bool inherited);
void conn_side_drop(struct proxy *px, struct side *s);
void conn_connect_done(struct conn *c, unsigned events); /* dial.c */
void conn_touch(struct conn *c);
/* Start an exchange for a host Decide() has been asked about. */
void conn_exchange_begin(struct conn *c, enum conn_proto proto, const char *host, size_t len,
			 unsigned port);
void conn_exchange_end(struct conn *c);
/* Dial these addresses in order, without the address check: for targets that a
 * rule other than Decide() permits (egress.hostPorts). */
void conn_dial(struct conn *c, const struct proxy_addr *a, size_t n);
/* The upstream proxy's addresses on its port, without the address check. */
void conn_dial_upstream(struct conn *c, const struct proxy_addr *a, size_t n, unsigned port);
/* Decide, then resolve, check and dial (or answer the refusal). host as sent. */
void conn_target(struct conn *c, enum conn_proto proto, const char *host, size_t len,
		 unsigned port);
/* Forget the decider's question of c, if any (conn_close). */
void conn_cancel_question(struct conn *c);
/* A client without the listener's credential: one denial record (peer included). */
void conn_refuse_unauthenticated(struct conn *c, enum conn_proto proto, const char *host,
				 unsigned port);
/* Record a failure, then let the protocol answer it and close after the answer. */
void conn_fail(struct conn *c, enum conn_fail why, const char *detail);
/* What failed, in words ("connection refused"); NULL for the denials. */
const char *conn_fail_reason(enum conn_fail why);
/* A denial (by Decide() or by the address check), not an error. */
static inline bool conn_fail_denied(enum conn_fail why)
{
	return why == FAIL_DENY || why == FAIL_ADDR;
}
/* Queue our own answer bytes for the client, then linger-close. */
void conn_answer_close(struct conn *c, const void *buf, size_t len);
int conn_in_reserve(struct conn *c, size_t want);
void conn_in_consume(struct conn *c, size_t n);
void conn_timer_clear(struct conn *c, struct proxy_timer **t);
void conn_head_timer_start(struct conn *c);

/* ----------------------------------------------------- conn_capture.c */
/* A fake address the DNS stub handed out, sent as the target of a CONNECT, a SOCKS5
 * request or a forwarded URL by a client that resolved the name itself: the name it
 * stands for (and *len updated). Anything else is returned as it is. */
const char *capture_unfake(struct proxy *px, const char *host, size_t *len);
/* --------------------------------------------------------- upstream.c */
/* Set up px->up from the options (the Basic header computed once). */
void upstream_init(struct proxy *px, const struct policy_upstream *up);
/* Is a target at `a` on `port` the upstream itself (one of its addresses, or this host
 * when the upstream is on this host, on its port)? Reaching it would be a proxy
 * behind halo-run's, deciding nothing. */
bool upstream_is_target(struct proxy *px, const struct proxy_addr *a, unsigned port);
/* Should this allowed target go through the upstream? (Not when off or NO_PROXY.) */
bool upstream_wanted(const struct proxy *px, const struct policy_host *h, unsigned port);
/* The target's addresses passed the check: reach the upstream instead (its name
 * resolved, then dialled; the upstream's own address is the policy's choice and not
 * checked). */
void upstream_dial(struct conn *c);
/* The dial to the upstream failed: why, with the upstream named. */
void upstream_dial_failed(struct conn *c, enum conn_fail why);
/* Connected to the upstream: send CONNECT target and wait for its answer, then
 * proto->on_connected as for a direct dial. */
void upstream_connected(struct conn *c);
void upstream_on_event(struct conn *c, unsigned events);
/* Build "CONNECT host:port HTTP/1.1" with Host and the optional Proxy-Authorization
 * line (auth_line: "" or "Proxy-Authorization: Basic ...\r\n"). Length, or -ENOSPC. */
int upstream_request(const char *host, bool v6, unsigned port, const char *auth_line, char *out,
		     size_t cap);
/* Judge the upstream's answer head: 0 for 2xx, else -EPROTO with why (its status). */
int upstream_judge(const char *head, size_t len, const char *up_text, size_t *head_len, char *why,
		   size_t whylen);

/* ------------------------------------------------------- conn_hello.c */
/* After the 200 or SOCKS5 success: read the client's first flight, check a
 * ClientHello's name against the target, then tunnel_start (or refuse with an alert). */
void hello_start(struct conn *c);
void hello_on_client(struct conn *c, unsigned events);
/* The origin's side in CS_HELLO: its answer to an allowed ClientHello is watched for
 * a HelloRetryRequest, else (the origin speaking first) it flows as in a tunnel. */
void hello_on_upstream(struct conn *c, unsigned events);

/* ------------------------------------------------------------ relay.c */
int side_send(struct conn *c, struct side *s, const void *data, size_t len,
	      unsigned long long *count);
int side_flush(struct conn *c, struct side *s, unsigned long long *count);
void pend_free(struct pend *p);
/* Move what is readable from src to dst (at most *limit bytes when limit != NULL).
 * Returns bytes moved (0 on EOF, which sets src->rd_eof), -EAGAIN, or -errno. */
long relay_pump(struct conn *c, struct side *src, struct side *dst, unsigned long long *limit,
		unsigned long long *count);
void tunnel_on_event(struct conn *c, struct side *s, unsigned events);
void tunnel_start(struct conn *c);
/* Half-close what can be half-closed; true when the tunnel has finished. */
bool tunnel_settle(struct conn *c);

/* ----------------------------------------------------- relay_splice.c */
#ifdef PROXY_SPLICE
/* Lend dst a pipe (pooled, or new). False when none can be had: the cap is reached,
 * the budget is spent, or fds or memory ran out; the direction then copies. */
bool relay_pipe_lend(struct proxy *px, struct side *dst);
/* Give s's pipe back: pooled when empty and the pool has room, else closed. */
void relay_pipe_return(struct proxy *px, struct side *s);
/* src -> dst's pipe -> dst, the pipe being empty. Returns bytes read (0 on EOF, which
 * sets src->rd_eof), -EAGAIN, -EOPNOTSUPP when this system refuses splice(2) (nothing
 * was moved, the pipe is returned, splicing is off from now on: copy instead), or
 * -errno. */
long relay_splice_pump(struct conn *c, struct side *src, struct side *dst,
		       unsigned long long *count);
/* Write what waits in s's pipe; 0 (done or EAGAIN) or -errno. */
int relay_pipe_flush(struct conn *c, struct side *s);
void relay_pipes_close_idle(struct proxy *px);
#else
static inline bool relay_pipe_lend(struct proxy *px, struct side *dst)
{
	(void)px;
	(void)dst;
	return false;
}
static inline void relay_pipe_return(struct proxy *px, struct side *s)
{
	(void)px;
	(void)s;
}
static inline long relay_splice_pump(struct conn *c, struct side *src, struct side *dst,
				     unsigned long long *count)
{
	(void)c;
	(void)src;
	(void)dst;
	(void)count;
	return -ENOSYS;
}
static inline int relay_pipe_flush(struct conn *c, struct side *s)
{
	(void)c;
	(void)s;
	return 0;
}
static inline void relay_pipes_close_idle(struct proxy *px)
{
	(void)px;
}
#endif

/* resp.c: an origin's response head and chunked body (resp_int.h). */
#include "proxy/resp_int.h"

/* ------------------------------------------------------------ audit.c */
/* The exchange's record to the audit and, as "type":"egress", to --events. */
void audit_write(struct proxy *px, const struct exchange *ex);
bool audit_events_on(const struct proxy *px);
const char *audit_proto_name(enum conn_proto p); /* "connect", "http", "socks5"... */
void audit_deny_line(struct proxy *px, const struct exchange *ex);
/* --events: {"type":"limit","limit":KEY,"value":N,"evidence":WHAT} (a proxy limit
 * reached, written once per limit by the caller). */
void audit_limit_event(struct proxy *px, const char *key, long long value, const char *evidence);
/* "halo-run: egress error: HOST:PORT: WHY (CODE)" once per host per run (once per why
 * when host is ""), on log_fd unless quiet: the answers the proxy gives itself. */
void audit_error_line(struct proxy *px, const char *host, unsigned port, const char *why,
		      const char *code);
/* Host text for logs and headers: printable ASCII only, v6 in brackets with port. */
void audit_hostport(const struct exchange *ex, char *out, size_t n);
/* Printable ASCII only (anything else becomes '?'). */
void audit_printable(const char *in, char *out, size_t n);

/* ------------------------------------------------------- namebudget.c */
/* A name a wildcard rule allowed is about to be resolved: 0 (already resolved in this
 * run, or within limits.wildcardNames and wildcardNamesPerMinute: now counted),
 * -EDQUOT past a limit (rule then says which, with the count; the first refusal of
 * each limit is a --events "limit" record), or -ENOMEM. */
int namebudget_charge(struct proxy *px, const char *name, char *rule, size_t n);
void namebudget_free(struct name_budget *b);

/* ---------------------------------------------------------- refusal.c */
/* A refusal no decision record covers: one audit record (proto, host as far as it is
 * known, rule, why, code, the client when peers are recorded), identical ones (same
 * client too) within a second counted into one. peer: NULL or "" for none. */
void refusal_record(struct proxy *px, enum conn_proto proto, const char *host, unsigned port,
		    const char *rule, const char *why, const char *code, const char *peer);
/* Write what is still counted (the proxy is going away). */
void refusal_flush(struct proxy *px);

/* ---------------------------------------------------------- summary.c */
void hosts_record(struct proxy *px, const struct exchange *ex);
/* True the first time a denied host is seen in this run. */
bool hosts_first_denial(struct proxy *px, const char *host);
/* True the first time an error is reported for this host (or key) in this run. */
bool hosts_first_error(struct proxy *px, const char *key);
/* The same for an exchange: its host, host:port for egress.hostPorts. */
bool hosts_first_exchange_error(struct proxy *px, const struct exchange *ex);
void hosts_free(struct host_table *t);

#endif
