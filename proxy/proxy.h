/* proxy/ — the sandbox's only way out: HTTP CONNECT, absolute-form HTTP forwarding
 * and SOCKS5 on listeners handed over from the sandbox's network namespace; Decide()
 * for every host; resolution off the loop; private addresses refused; relay.
 *
 * One single-threaded event loop (proxy/poller.h: epoll on Linux, poll() portable)
 * which the runner also uses for its own fds (child exit, signals, wall clock). */
#ifndef HALO_PROXY_H
#define HALO_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "policy/policy.h"
#include "proxy/poller.h"

enum proxy_listener_kind {
	PROXY_LISTEN_HTTP,
	PROXY_LISTEN_SOCKS5,
	PROXY_LISTEN_HOSTPORT, /* egress.hostPorts: relayed to the host's loopback */
	PROXY_LISTEN_DNS_UDP,  /* the in-sandbox DNS stub: a UDP socket (conn_dns.c) */
	PROXY_LISTEN_DNS_TCP,
	PROXY_LISTEN_CAPTURE, /* connections to fake addresses (conn_capture.c) */
};

struct proxy_listener {
	int fd; /* listening; the proxy takes ownership and makes it non-blocking */
	/* fd is O_NONBLOCK already (its maker said so, e.g. netns/'s SOCK_NONBLOCK):
	 * the proxy spares the launch its fcntl calls. */
	bool nonblocking;
	enum proxy_listener_kind kind;
	unsigned port; /* HOSTPORT: the host loopback port every connection goes to */
	size_t index;  /* HOSTPORT: its position in egress.hostPorts (for the audit) */
	/* HTTP, SOCKS5: the credential a client must present (Proxy-Authorization Basic,
	 * SOCKS5 username/password with it as password); NULL: none, or o.auth_secret for HTTP. */
	const char *secret;
};

/* HTTP on v4 and v6, SOCKS5, DNS on UDP and TCP, capture, and two per host port. */
#define PROXY_MAX_LISTENERS (6 + 2 * POLICY_MAX_HOST_PORTS)

/* --decider: a harness's program asked about hosts no rule of the policy matched
 * (events/decider.c). ask() returns 0 and later calls done(arg, ...) from the loop,
 * never from inside ask(); or -errno, and the policy's default applies at once.
 * cancel() forgets the question of a connection that closed first. why names what
 * answered ("decider", or the default's reason: "decider timed out"...). */
enum proxy_verdict { PROXY_VERDICT_DEFAULT, PROXY_VERDICT_ALLOW, PROXY_VERDICT_DENY };
typedef void (*proxy_verdict_fn)(void *arg, enum proxy_verdict v, const char *why);
struct proxy_decider {
	int (*ask)(void *ctx, const char *host, unsigned port, const char *protocol,
		   proxy_verdict_fn done, void *arg, uint64_t *ticket);
	void (*cancel)(void *ctx, uint64_t ticket);
	void *ctx;
};

/* `halo-run learn` (learn/learn.h): hosts the default would deny are allowed (Decide's
 * decision marked by policy_decision_learn) and every such connection is told here,
 * with what followed that the policy would still refuse: an address outside
 * allowPrivate (addr and cls set; a loopback name refused so may be a host loopback
 * service, egress.hostPorts). proto: "connect", "http", "socks5", "captured"...
 * Called on the loop; must not block. */
enum proxy_learn_kind {
	PROXY_LEARN_HOST,    /* allowed by learning: a connection to host:port */
	PROXY_LEARN_PRIVATE, /* refused after resolution: addr is cls, not in allowPrivate */
	PROXY_LEARN_DENIED,  /* refused by a rule (an explicit deny, the decider) */
};
struct proxy_learner {
	void (*note)(void *ctx, enum proxy_learn_kind k, const char *host, unsigned port,
		     const char *proto, const char *addr, const char *cls, const char *rule);
	void *ctx;
};

/* The run's TLS termination (proxy/tls.c), for hosts with egress.credentials or
 * egress.requestRules: a per-run CA whose key lives only in this process, a leaf key,
 * certificates minted per host on demand, the origin-side trust (system roots plus
 * egress.trustedCAs), and the credentials' expanded values. */
struct proxy_tls;

/* Make it in two steps: proxy_tls_prepare expands every credential with lookup (the
 * caller's environment; a missing variable is an error naming it) and loads the origin
 * roots; proxy_tls_make_ca makes the keys and the CA. Between the two the launcher
 * clones the sandbox, so that its init (a fork-like copy of this process) never holds
 * a key. proxy_tls_new does both at once. Each returns 0, or -errno with e set
 * (-ENOENT for a missing variable); no certificate is minted before the CA exists. */
int proxy_tls_prepare(const struct halo_policy *p,
		      const char *(*lookup)(void *arg, const char *name), void *arg,
		      struct proxy_tls **out, struct halo_err *e);
int proxy_tls_make_ca(struct proxy_tls *t, struct halo_err *e);
int proxy_tls_new(const struct halo_policy *p, const char *(*lookup)(void *arg, const char *name),
		  void *arg, struct proxy_tls **out, struct halo_err *e);
void proxy_tls_free(struct proxy_tls *t);
/* Wipe the credentials' values in place, without freeing or allocating: for a
 * fork-like copy of this process that must not keep them (the sandbox's init). */
void proxy_tls_wipe_values(struct proxy_tls *t);
/* The CA certificate alone (PEM), and the bundle the command trusts: the system roots
 * followed by the CA. Heap copies (free); 0 or -errno with e set. */
int proxy_tls_ca_pem(const struct proxy_tls *t, char **pem, size_t *len, struct halo_err *e);
int proxy_tls_bundle(const struct proxy_tls *t, char **pem, size_t *len, struct halo_err *e);
/* Tests only: SHA-256 of the CA's and the leaf's private scalars (32 bytes, little
 * endian, as a BIGNUM holds them), to look for the keys in a process's memory. */
int proxy_tls_key_digests(const struct proxy_tls *t, unsigned char ca[32], unsigned char leaf[32]);
/* The same roots as a PKCS#12 trust store the JVM reads (-Djavax.net.ssl.trustStore,
 * type PKCS12, this password: the store is public material). DER, heap (free). */
#define PROXY_TLS_JVM_STORE_PASSWORD "changeit"
int proxy_tls_jvm_store(const struct proxy_tls *t, unsigned char **der, size_t *len,
			struct halo_err *e);

struct proxy_options {
	const struct halo_policy *policy;
	struct proxy_listener listeners[PROXY_MAX_LISTENERS];
	size_t n_listeners;
	unsigned head_timeout_ms;    /* default 10000 (from the first byte) */
	unsigned dns_timeout_ms;     /* default 5000 */
	unsigned connect_timeout_ms; /* default 10000 */
	unsigned idle_timeout_ms;    /* 0 = no idle limit on tunnels */
	int audit_fd;		     /* JSON Lines, one record per decision; -1 = none */
	/* --events: the same record with "type":"egress" (events/events.h); 0-2 and -1
	 * are none (never the command's stdio; a zeroed struct has none). */
	int events_fd;
	/* Counts the events records not written whole (NULL: not counted); outlives the
	 * proxy, whose last records are written by proxy_destroy. */
	size_t *events_lost;
	const char *session;		     /* the events' "session" ("" or NULL: none) */
	const struct proxy_decider *decider; /* NULL: no decider */
	const struct proxy_learner *learner; /* NULL: not learning */
	int log_fd;		 /* human lines ("halo-run: egress denied: ..."); -1 = none */
	bool quiet;		 /* no denial lines on log_fd */
	const char *auth_secret; /* required Proxy-Authorization secret (macOS); NULL = none */
	bool audit_peers;	 /* every record names its client ("peer"): `halo-run proxy` */
	/* The head timeout runs from the accept, not from the first byte: a client that
	 * connects and says nothing holds a connection slot no longer (`halo-run proxy`,
	 * whose slots all its clients share; a sandbox's are its command's alone). */
	bool head_from_accept;
	size_t max_conns; /* 0 = the policy's limits.connections, else its default (256) */
	/* egress.upstreamProxy as resolved at launch (policy_upstream_resolve); NULL or
	 * !on: every allowed host is dialled directly. Copied. */
	const struct policy_upstream *upstream;
	/* Its addresses as looked up at launch (may be none): a target that is one of
	 * them, or this host when the upstream is, on the upstream's port, is refused. */
	const struct policy_ipaddr *upstream_addrs;
	size_t n_upstream_addrs;
	/* The embedder ignores SIGPIPE (SIG_IGN) before proxy_create and for the proxy's
	 * whole life: a splice into a closed socket then raises nothing, and the relay
	 * skips holding SIGPIPE back around every write (relay_splice.c). */
	bool sigpipe_ignored;
	struct proxy_tls *tls; /* NULL: no host is terminated (policy_tls_wanted false) */
};

struct proxy;

/* Create the proxy and register its listeners in `pl`. Returns 0 or -errno. */
int proxy_create(struct proxy_poller *pl, const struct proxy_options *o, struct proxy **out,
		 struct halo_err *e);

/* `halo-run proxy`: decide with this policy from now on (SIGHUP). Connections already
 * decided keep their decision; p must outlive the proxy (the caller keeps every
 * policy it has handed over). */
void proxy_set_policy(struct proxy *px, const struct halo_policy *p);
/* Stop accepting: every listener is closed (a clean shutdown then drains). */
void proxy_close_listeners(struct proxy *px);

/* Close every connection and listener, stop the resolver threads, free. */
void proxy_destroy(struct proxy *px);

/* Once the sandbox has ended its clients are gone, but their last events may not have
 * been handled yet: take what they left queued on the listeners (connections not yet
 * accepted, DNS questions), let the connections finish (at most `ms`), then close what
 * is left, so that the counters, the summary and the audit record how each ended. */
void proxy_drain(struct proxy *px, unsigned ms);

/* The --verbose summary table: one row per host (decision, rule, connections, bytes). */
void proxy_summary(const struct proxy *px, FILE *out);

/* Counters, for tests and the summary. */
struct proxy_stats {
	size_t conns_open;
	size_t conns_total;
	size_t denied;
	size_t refused; /* turned away before a decision: limits.connections, no fds left */
	size_t allowed;
	unsigned long long bytes_up;
	unsigned long long bytes_down;
	size_t audit_lost; /* audit records not written whole (a full disk, a size limit) */
};
void proxy_get_stats(const struct proxy *px, struct proxy_stats *st);

/* `halo-run check --resolve`: resolve `name` (canonical) as the proxy does and judge
 * every answer by the proxy's address rule. 0 with *n answers (at most max), or the
 * lookup's -errno (-ENOENT: no such name, -EAGAIN: temporary failure). */
struct proxy_resolved {
	int family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	char text[46];	 /* INET6_ADDRSTRLEN */
	bool ok;	 /* the proxy would connect to it */
	const char *cls; /* when !ok: loopback, private, metadata, interface... */
};
#define PROXY_RESOLVE_MAX_ANSWERS 32 /* as the proxy: answers beyond are never dialled */
int proxy_resolve_check(const struct halo_policy *p, const char *name, struct proxy_resolved *out,
			size_t max, size_t *n);

/* ssh_refuse.c: our SSH identification line and an SSH_MSG_DISCONNECT carrying
 * `why`, for a refused SSH connection (port 22 here; any port through `halo-run
 * connect`, ssh's ProxyCommand). Length, or -1 when cap is too small. */
int proxy_ssh_refusal(const char *why, char *out, size_t cap);

#endif
