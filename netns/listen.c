/* The proxy's listening sockets are made inside the sandbox's network namespace, so
 * the command sees a proxy on its own loopback and nothing else, then handed to the
 * supervisor, which accepts on them from the host namespace. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netns/netns.h"

static int listen_on(int family, const char *ip, unsigned port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1;
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

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
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 1024) < 0) {
		int err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

int netns_listen_all(struct netns_listener *out, size_t *n)
{
	static const struct {
		int family;
		const char *ip;
		unsigned port;
		enum netns_listener_kind kind;
		int optional;
	} table[] = {
	    {AF_INET, "127.0.0.1", NETNS_HTTP_PORT, NETNS_LISTEN_HTTP, 0},
	    {AF_INET6, "::1", NETNS_HTTP_PORT, NETNS_LISTEN_HTTP, 1},
	    {AF_INET, "127.0.0.1", NETNS_SOCKS_PORT, NETNS_LISTEN_SOCKS5, 0},
	};

	*n = 0;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		int fd = listen_on(table[i].family, table[i].ip, table[i].port);
		if (fd < 0 && table[i].optional)
			continue;
		if (fd < 0) {
			while (*n > 0)
				close(out[--*n].fd);
			return fd;
		}
		out[*n].fd = fd;
		out[*n].kind = table[i].kind;
		(*n)++;
	}
	return 0;
}

int netns_send_listeners(int sock, const struct netns_listener *l, size_t n)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * NETNS_MAX_LISTENERS)];
		struct cmsghdr align;
	} u;
	uint8_t kinds[NETNS_MAX_LISTENERS];
	struct iovec iov = {kinds, n};
	struct msghdr msg = {0};
	struct cmsghdr *c;

	if (n == 0 || n > NETNS_MAX_LISTENERS)
		return -EINVAL;
	memset(&u, 0, sizeof(u));
	for (size_t i = 0; i < n; i++)
		kinds[i] = (uint8_t)l[i].kind;
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
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -errno;
}

int netns_recv_listeners(int sock, struct netns_listener *l, size_t *n, int timeout_ms)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * NETNS_MAX_LISTENERS)];
		struct cmsghdr align;
	} u;
	uint8_t kinds[NETNS_MAX_LISTENERS];
	struct iovec iov = {kinds, sizeof(kinds)};
	struct msghdr msg = {0};
	struct pollfd p = {sock, POLLIN, 0};
	struct cmsghdr *c;
	ssize_t got;

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
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(sizeof(int) * (size_t)got) || (msg.msg_flags & MSG_CTRUNC))
		return -EPROTO;
	for (ssize_t i = 0; i < got; i++) {
		memcpy(&l[i].fd, CMSG_DATA(c) + (size_t)i * sizeof(int), sizeof(int));
		l[i].kind = kinds[i] ? NETNS_LISTEN_SOCKS5 : NETNS_LISTEN_HTTP;
	}
	*n = (size_t)got;
	return 0;
}
