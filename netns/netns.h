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
#define NETNS_MAX_LISTENERS  (6 + 2 * NETNS_MAX_HOST_PORTS)

enum netns_listener_kind {
	NETNS_LISTEN_HTTP = 0,
	NETNS_LISTEN_SOCKS5 = 1,
	NETNS_LISTEN_HOSTPORT = 2, /* forwarded to the host's loopback at `port` */
	NETNS_LISTEN_DNS_UDP = 3,  /* the DNS stub: a UDP socket, not a listener */
	NETNS_LISTEN_DNS_TCP = 4,
	NETNS_LISTEN_CAPTURE = 5, /* connections to the fake range, redirected here */
};

struct netns_listener {
	int fd;
	enum netns_listener_kind kind;
	uint16_t port;	/* the port listened on */
	uint16_t index; /* NETNS_LISTEN_HOSTPORT: position in egress.hostPorts */
};

/* Bring "lo" up in the current network namespace through rtnetlink (libnl-route-3),
 * with BIG TCP, and the namespace's tcp_wmem maximum lowered to NETNS_TCP_WMEM_MAX
 * (both best effort). Returns 0 or -errno. */
#define NETNS_TCP_WMEM_MAX (256 * 1024)
int netns_loopback_up(void);

/* In the sandbox's namespace: listen on 127.0.0.1:3128 and [::1]:3128 (HTTP),
 * 127.0.0.1:1080 (SOCKS5), and 127.0.0.1:P and [::1]:P for each host port P. [::1]
 * is skipped when the namespace has no IPv6. Non-blocking, CLOEXEC. `out` holds
 * NETNS_MAX_LISTENERS. Returns 0 or -errno (then nothing is left open; -E2BIG for
 * more than NETNS_MAX_HOST_PORTS host ports). */
int netns_listen_all(const uint16_t *host_ports, size_t n_host_ports, struct netns_listener *out,
		     size_t *n);

/* The DNS stub's sockets (NETNS_DNS_ADDR port 53, UDP and TCP) and, when `capture`,
 * the capture listener, appended to out (*n counts what is there). 0 or -errno (then
 * nothing of this call is left open). */
int netns_listen_capture(bool capture, struct netns_listener *out, size_t *n);

/* Make the fake range local on lo and redirect TCP to it onto the capture listener
 * (netns/capture.c). 0 or -errno: the kernel refused nf_tables or the route. */
int netns_capture_setup(void);

/* Pass listeners over a unix socket (SCM_RIGHTS) and receive them on the other side.
 * recv waits at most timeout_ms. Both return 0 or -errno. */
int netns_send_listeners(int sock, const struct netns_listener *l, size_t n);
int netns_recv_listeners(int sock, struct netns_listener *l, size_t *n, int timeout_ms);

#endif
