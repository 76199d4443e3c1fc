/* netns/ — network namespace bring-up inside the sandbox: loopback up, and the
 * in-namespace proxy listeners passed to the supervisor over a socketpair. */
#ifndef HALO_NETNS_H
#define HALO_NETNS_H

#include <stddef.h>
#include <stdint.h>

#define NETNS_HTTP_PORT	     3128
#define NETNS_SOCKS_PORT     1080
#define NETNS_MAX_HOST_PORTS 64 /* egress.hostPorts: two listeners each (v4, v6) */
#define NETNS_MAX_LISTENERS  (3 + 2 * NETNS_MAX_HOST_PORTS)

enum netns_listener_kind {
	NETNS_LISTEN_HTTP = 0,
	NETNS_LISTEN_SOCKS5 = 1,
	NETNS_LISTEN_HOSTPORT = 2, /* forwarded to the host's loopback at `port` */
};

struct netns_listener {
	int fd;
	enum netns_listener_kind kind;
	uint16_t port;	/* the port listened on */
	uint16_t index; /* NETNS_LISTEN_HOSTPORT: position in egress.hostPorts */
};

/* Bring "lo" up in the current network namespace through rtnetlink (libnl-route-3).
 * Returns 0 or -errno. */
int netns_loopback_up(void);

/* In the sandbox's namespace: listen on 127.0.0.1:3128 and [::1]:3128 (HTTP),
 * 127.0.0.1:1080 (SOCKS5), and 127.0.0.1:P and [::1]:P for each host port P. [::1]
 * is skipped when the namespace has no IPv6. Non-blocking, CLOEXEC. `out` holds
 * NETNS_MAX_LISTENERS. Returns 0 or -errno (then nothing is left open; -E2BIG for
 * more than NETNS_MAX_HOST_PORTS host ports). */
int netns_listen_all(const uint16_t *host_ports, size_t n_host_ports, struct netns_listener *out,
		     size_t *n);

/* Pass listeners over a unix socket (SCM_RIGHTS) and receive them on the other side.
 * recv waits at most timeout_ms. Both return 0 or -errno. */
int netns_send_listeners(int sock, const struct netns_listener *l, size_t n);
int netns_recv_listeners(int sock, struct netns_listener *l, size_t *n, int timeout_ms);

#endif
