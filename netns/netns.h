/* netns/ — network namespace bring-up inside the sandbox: loopback up, and the
 * in-namespace proxy listeners passed to the supervisor over a socketpair. */
#ifndef HALO_NETNS_H
#define HALO_NETNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NETNS_HTTP_PORT	     3128
#define NETNS_SOCKS_PORT     1080
#define NETNS_MAX_HOST_PORTS 64		  /* egress.hostPorts: two listeners each (v4, v6) */
#define NETNS_CAPTURE_PORT   3129	  /* 127.0.0.1: where captured connections land */
#define NETNS_DNS_ADDR	     "127.0.0.53" /* the DNS stub (UDP and TCP port 53) */
#define NETNS_MAX_LISTENERS  (8 + 2 * NETNS_MAX_HOST_PORTS)

enum netns_listener_kind {
	NETNS_LISTEN_HTTP = 0,
	NETNS_LISTEN_SOCKS5 = 1,
	NETNS_LISTEN_HOSTPORT = 2, /* forwarded to the host's loopback at `port` */
	NETNS_LISTEN_DNS_UDP = 3,  /* the DNS stub: a UDP socket, not a listener */
	NETNS_LISTEN_DNS_TCP = 4,
	NETNS_LISTEN_CAPTURE = 5, /* connections to the fake range, redirected here */
	NETNS_LISTEN_EXPLAIN = 6, /* not a listener: the refusals' log (netns/explain.c) */
	NETNS_LISTEN_DIAG = 7,	  /* not a listener: a session's socket table (unix_diag.c) */
};

struct netns_listener {
	int fd;
	enum netns_listener_kind kind;
	uint16_t port;	/* the port listened on */
	uint16_t index; /* NETNS_LISTEN_HOSTPORT: position in egress.hostPorts */
};

/* Bring "lo" up in the current network namespace through rtnetlink, with BIG TCP,
 * and the namespace's tcp_wmem maximum lowered to NETNS_TCP_WMEM_MAX (both best
 * effort). Returns 0 or -errno. */
#define NETNS_TCP_WMEM_MAX (256 * 1024)
int netns_loopback_up(void);
/* After the bring-up (loopback, capture, explanations): the netlink sockets it kept
 * open for its requests are closed (netns/nl.c). */
void netns_setup_done(void);

/* In the sandbox's namespace: listen on 127.0.0.1:3128 and [::1]:3128 (HTTP),
 * 127.0.0.1:1080 (SOCKS5), and 127.0.0.1:P and [::1]:P for each host port P. [::1]
 * is skipped when the namespace has no IPv6. Non-blocking, CLOEXEC. `out` holds
 * NETNS_MAX_LISTENERS. Returns 0 or -errno (then nothing is left open; -E2BIG for
 * more than NETNS_MAX_HOST_PORTS host ports). */
int netns_listen_all(const uint16_t *host_ports, size_t n_host_ports, struct netns_listener *out,
		     size_t *n);

/* The DNS stub's sockets (NETNS_DNS_ADDR port 53, UDP and TCP) and, when `capture`,
 * the capture listener and (where the kernel has NFLOG) the refusals' log
 * (NETNS_LISTEN_EXPLAIN, netns_explain_open), appended to out (*n counts what is
 * there). 0 or -errno (then nothing of this call is left open). */
int netns_listen_capture(bool capture, struct netns_listener *out, size_t *n);

/* Make the fake range local on lo and redirect TCP to it onto the capture listener
 * (netns/capture.c), then the explanations' rules (netns_explain_setup, best effort:
 * not in the result). 0 or -errno: the kernel refused nf_tables or the route. Needs
 * lo up. */
int netns_capture_setup(void);

/* Refused connections, explained (issue 24): netns_capture_setup also makes the
 * sandbox's namespace log, through NFLOG group NETNS_EXPLAIN_GROUP and at most
 * NETNS_EXPLAIN_RATE a second, (1) the reset answering a connection to a loopback port
 * with no listener and (2) a TCP connection to an IP address that is neither loopback
 * nor captured (which is refused at once: ECONNREFUSED). Best effort: 0 or -errno
 * (then some or none of it is there; the capture is not touched). */
#define NETNS_EXPLAIN_GROUP   0x4861
#define NETNS_EXPLAIN_TABLE   0x4861 /* routing table and rule priority */
#define NETNS_EXPLAIN_RATE    10
#define NETNS_EXPLAIN_LITERAL "L"
#define NETNS_EXPLAIN_RESET   "R"
int netns_explain_setup(void);

/* The socket the logs arrive on, made in the sandbox's namespace (the log is per
 * namespace) and read by the supervisor: non-blocking, CLOEXEC. The fd or -errno. */
int netns_explain_open(void);

enum netns_refusal_kind {
	NETNS_REFUSED_LOCAL_PORT, /* nothing listens on loopback `port` inside */
	NETNS_REFUSED_LITERAL,	  /* a connection to the address `addr`, port `port` */
};

struct netns_refusal {
	enum netns_refusal_kind kind;
	int family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint16_t port;
};

/* What one datagram of the log socket holds, at most max refusals (the rest of a batch
 * is dropped: the kernel's rate limit already bounds it). The count (0: a datagram
 * with nothing to say), -EAGAIN when nothing is queued, -ENOBUFS when the kernel
 * dropped some (read on), or another -errno. Parsing is hostile-input safe: anything
 * malformed is skipped. */
int netns_explain_read(int fd, struct netns_refusal *out, size_t max);
/* The same, from a buffer (tests, fuzzing). */
size_t netns_explain_parse(const void *buf, size_t len, struct netns_refusal *out, size_t max);

/* Does a network namespace have a TCP listener that a connection to 127.0.0.1:port or
 * [::1]:port reaches (bound to loopback or to the wildcard)? The namespace of process
 * pid, or the caller's own for pid 0. 1, 0, or -errno (read from /proc/PID/net/tcp and
 * tcp6: no connection is made). */
int netns_listening(int pid, uint16_t port);

/* The namespace's socket table (netns/unix_diag.c): netns_diag_open, called inside
 * it, returns a NETLINK_SOCK_DIAG socket or -errno; netns_unix_files reads the files
 * its unix sockets are bound to in one dump, into a sorted set (at most
 * NETNS_UNIX_FILES_MAX, within budget_ms, else -E2BIG or -ETIMEDOUT and an empty set);
 * netns_unix_files_has asks it for one file (device major:minor, inode: an inode over
 * 32 bits is never claimed, the kernel gives only 32); netns_unix_files_free. */
int netns_diag_open(void);
#define NETNS_UNIX_FILES_MAX (1u << 20)
struct netns_unix_files {
	uint64_t *v;
	size_t n;
};
int netns_unix_files(int fd, struct netns_unix_files *f, int budget_ms);
bool netns_unix_files_has(const struct netns_unix_files *f, unsigned major, unsigned minor,
			  uint64_t ino);
void netns_unix_files_free(struct netns_unix_files *f);

/* Pass listeners over a unix socket (SCM_RIGHTS) and receive them on the other side.
 * recv waits at most timeout_ms. Both return 0 or -errno. */
int netns_send_listeners(int sock, const struct netns_listener *l, size_t n);
int netns_recv_listeners(int sock, struct netns_listener *l, size_t *n, int timeout_ms);

#endif
