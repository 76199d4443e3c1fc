/* netns/ — network namespace bring-up inside the sandbox: loopback up, and the
 * in-namespace proxy listeners passed to the supervisor over a socketpair. */
#ifndef HALO_NETNS_H
#define HALO_NETNS_H

#include <stddef.h>

#define NETNS_HTTP_PORT	    3128
#define NETNS_SOCKS_PORT    1080
#define NETNS_MAX_LISTENERS 4

enum netns_listener_kind {
	NETNS_LISTEN_HTTP = 0,
	NETNS_LISTEN_SOCKS5 = 1,
};

struct netns_listener {
	int fd;
	enum netns_listener_kind kind;
};

/* Bring "lo" up in the current network namespace through rtnetlink (libnl-route-3).
 * Returns 0 or -errno. */
int netns_loopback_up(void);

/* In the sandbox's namespace: listen on 127.0.0.1:3128 and [::1]:3128 (HTTP) and
 * 127.0.0.1:1080 (SOCKS5). [::1] is skipped when the namespace has no IPv6.
 * Non-blocking, CLOEXEC. Returns 0 or -errno (then nothing is left open). */
int netns_listen_all(struct netns_listener *out, size_t *n);

/* Pass listeners over a unix socket (SCM_RIGHTS) and receive them on the other side.
 * recv waits at most timeout_ms. Both return 0 or -errno. */
int netns_send_listeners(int sock, const struct netns_listener *l, size_t n);
int netns_recv_listeners(int sock, struct netns_listener *l, size_t *n, int timeout_ms);

#endif
