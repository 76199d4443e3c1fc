/* The proxy's listening sockets are made inside the sandbox's network namespace, so
 * the command sees a proxy on its own loopback and nothing else, then handed to the
 * supervisor, which accepts on them from the host namespace. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netns/netns.h"

static int listen_type(int family, int type, const char *ip, unsigned port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1;
	int fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		inet_pton(AF_INET, ip, &a->sin_addr);
		len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		inet_pton(AF_INET6, ip, &a->sin6_addr);
		len = sizeof(*a);
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	}
	/* No SO_REUSEADDR: the namespace is new, no earlier socket holds these ports,
	 * and nothing inside may share them (a UDP bind with SO_REUSEADDR on both sides
	 * would). */
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 1024) < 0)) {
		int err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

static int listen_on(int family, const char *ip, unsigned port)
{
	return listen_type(family, SOCK_STREAM, ip, port);
}

static int add_listener(struct netns_listener *out, size_t *n, int family, const char *ip,
			unsigned port, enum netns_listener_kind kind, size_t index, bool optional)
{
	int fd = listen_on(family, ip, port);

	if (fd < 0)
		return optional ? 0 : fd;
	out[*n] = (struct netns_listener){fd, kind, (uint16_t)port, (uint16_t)index};
	(*n)++;
	return 0;
}

int netns_listen_all(const uint16_t *host_ports, size_t n_host_ports, struct netns_listener *out,
		     size_t *n)
{
	static const struct {
		int family;
		const char *ip;
		unsigned port;
		enum netns_listener_kind kind;
		bool optional;
	} table[] = {
	    {AF_INET, "127.0.0.1", NETNS_HTTP_PORT, NETNS_LISTEN_HTTP, false},
	    {AF_INET6, "::1", NETNS_HTTP_PORT, NETNS_LISTEN_HTTP, true},
	    {AF_INET, "127.0.0.1", NETNS_SOCKS_PORT, NETNS_LISTEN_SOCKS5, false},
	};
	int rc = 0;

	*n = 0;
	if (n_host_ports > NETNS_MAX_HOST_PORTS)
		return -E2BIG;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]) && rc == 0; i++)
		rc = add_listener(out, n, table[i].family, table[i].ip, table[i].port,
				  table[i].kind, 0, table[i].optional);
	/* localhost:P must answer on both families: clients try ::1 first as often
	 * as 127.0.0.1. Without IPv6 in the namespace only the v4 one exists. */
	for (size_t i = 0; i < n_host_ports && rc == 0; i++) {
		rc = add_listener(out, n, AF_INET, "127.0.0.1", host_ports[i],
				  NETNS_LISTEN_HOSTPORT, i, false);
		if (rc == 0)
			rc = add_listener(out, n, AF_INET6, "::1", host_ports[i],
					  NETNS_LISTEN_HOSTPORT, i, true);
	}
	if (rc < 0)
		while (*n > 0)
			close(out[--*n].fd);
	return rc;
}

int netns_listen_capture(bool capture, struct netns_listener *out, size_t *n)
{
	static const struct {
		int type;
		const char *ip;
		unsigned port;
		enum netns_listener_kind kind;
	} table[] = {
	    {SOCK_DGRAM, NETNS_DNS_ADDR, 53, NETNS_LISTEN_DNS_UDP},
	    {SOCK_STREAM, NETNS_DNS_ADDR, 53, NETNS_LISTEN_DNS_TCP},
	    {SOCK_STREAM, "127.0.0.1", NETNS_CAPTURE_PORT, NETNS_LISTEN_CAPTURE},
	};
	size_t first = *n, rows = capture ? 3 : 2;

	for (size_t i = 0; i < rows; i++) {
		int fd = listen_type(AF_INET, table[i].type, table[i].ip, table[i].port);

		if (fd < 0) {
			while (*n > first)
				close(out[--*n].fd);
			return fd;
		}
		out[(*n)++] =
		    (struct netns_listener){fd, table[i].kind, (uint16_t)table[i].port, 0};
	}
	/* The refusals' log travels with the capture (the rules are made with it); a
	 * kernel without NFLOG runs without the explanations, nothing else changes. */
	if (capture) {
		int fd = netns_explain_open();

		if (fd >= 0)
			out[(*n)++] = (struct netns_listener){fd, NETNS_LISTEN_EXPLAIN, 0, 0};
	}
	return 0;
}

/* What travels with each fd: its kind, port and host-port index. */
struct wire {
	uint8_t kind;
	uint8_t pad;
	uint16_t port;
	uint16_t index;
};

int netns_send_listeners(int sock, const struct netns_listener *l, size_t n)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * NETNS_MAX_LISTENERS)];
		struct cmsghdr align;
	} u;
	struct wire w[NETNS_MAX_LISTENERS];
	struct iovec iov = {w, n * sizeof(w[0])};
	struct msghdr msg = {0};
	struct cmsghdr *c;

	if (n == 0 || n > NETNS_MAX_LISTENERS)
		return -EINVAL;
	memset(&u, 0, sizeof(u));
	memset(w, 0, sizeof(w));
	for (size_t i = 0; i < n; i++)
		w[i] = (struct wire){(uint8_t)l[i].kind, 0, l[i].port, l[i].index};
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = u.buf;
	msg.msg_controllen = CMSG_SPACE(sizeof(int) * n);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * n);
	for (size_t i = 0; i < n; i++)
		memcpy(CMSG_DATA(c) + i * sizeof(int), &l[i].fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == (ssize_t)iov.iov_len ? 0 : -errno;
}

/* A malformed message may still have carried fds: never leak them. */
static void close_passed(struct msghdr *msg)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			close(fd);
		}
	}
}

int netns_recv_listeners(int sock, struct netns_listener *l, size_t *n, int timeout_ms)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * NETNS_MAX_LISTENERS)];
		struct cmsghdr align;
	} u;
	struct wire w[NETNS_MAX_LISTENERS];
	struct iovec iov = {w, sizeof(w)};
	struct msghdr msg = {0};
	struct pollfd p = {sock, POLLIN, 0};
	struct cmsghdr *c;
	ssize_t got;
	size_t nfd;

	*n = 0;
	if (poll(&p, 1, timeout_ms) <= 0)
		return -ETIMEDOUT;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	got = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	if (got <= 0)
		return got == 0 ? -EPIPE : -errno;
	c = CMSG_FIRSTHDR(&msg);
	nfd = (size_t)got / sizeof(w[0]);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
	    (size_t)got % sizeof(w[0]) || c->cmsg_len != CMSG_LEN(sizeof(int) * nfd) ||
	    (msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC))) {
		close_passed(&msg);
		return -EPROTO;
	}
	for (size_t i = 0; i < nfd; i++) {
		memcpy(&l[i].fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
		l[i].kind = w[i].kind <= NETNS_LISTEN_DIAG ? (enum netns_listener_kind)w[i].kind
							   : NETNS_LISTEN_HTTP;
		l[i].port = w[i].port;
		l[i].index = w[i].index;
	}
	*n = nfd;
	return 0;
}
