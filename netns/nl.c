/* Netlink requests of the sandbox's init (nl_int.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "netns/netns.h"
#include "netns/nl_int.h"

static void *put(struct netns_nlbuf *m, const void *p, size_t n)
{
	size_t al = NLMSG_ALIGN(n);
	void *at;

	if (m->len + al > sizeof(m->b)) {
		m->overflow = 1;
		return NULL;
	}
	at = m->b + m->len;
	memset(at, 0, al);
	if (p)
		memcpy(at, p, n);
	m->len += al;
	return at;
}

size_t netns_nl_attr(struct netns_nlbuf *m, uint16_t type, const void *data, size_t n)
{
	struct nlattr a = {.nla_len = (uint16_t)(NLA_HDRLEN + n), .nla_type = type};
	size_t at = m->len;

	put(m, &a, sizeof(a));
	if (n)
		put(m, data, n);
	return at;
}

void netns_nl_attr_be32(struct netns_nlbuf *m, uint16_t type, uint32_t v)
{
	v = htonl(v);
	netns_nl_attr(m, type, &v, 4);
}

void netns_nl_attr_str(struct netns_nlbuf *m, uint16_t type, const char *s)
{
	netns_nl_attr(m, type, s, strlen(s) + 1);
}

size_t netns_nl_nest(struct netns_nlbuf *m, uint16_t type)
{
	return netns_nl_attr(m, type | NLA_F_NESTED, NULL, 0);
}

void netns_nl_nest_end(struct netns_nlbuf *m, size_t at)
{
	if (!m->overflow)
		((struct nlattr *)(m->b + at))->nla_len = (uint16_t)(m->len - at);
}

size_t netns_nl_msg(struct netns_nlbuf *m, uint16_t type, uint16_t flags, uint32_t seq,
		    const void *fam, size_t fam_len)
{
	struct nlmsghdr h = {
	    .nlmsg_type = type, .nlmsg_flags = NLM_F_REQUEST | flags, .nlmsg_seq = seq};
	size_t at = m->len;

	put(m, &h, sizeof(h));
	put(m, fam, fam_len);
	return at;
}

void netns_nl_msg_end(struct netns_nlbuf *m, size_t at)
{
	if (!m->overflow)
		((struct nlmsghdr *)(m->b + at))->nlmsg_len = (uint32_t)(m->len - at);
}

/* One socket per protocol (NETLINK_ROUTE, NETLINK_NETFILTER), opened at first use. */
static struct {
	int proto;
	int fd;
} socks[] = {{NETLINK_ROUTE, -1}, {NETLINK_NETFILTER, -1}};

static int *sock_of(int proto)
{
	for (size_t i = 0; i < sizeof(socks) / sizeof(socks[0]); i++)
		if (socks[i].proto == proto)
			return &socks[i].fd;
	return NULL;
}

static int open_sock(int proto, int *fd)
{
	struct timeval tv = {.tv_sec = 2};

	if (*fd >= 0)
		return 0;
	*fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto);
	if (*fd < 0)
		return -errno;
	setsockopt(*fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return 0;
}

/* The kernel answers a netlink request while it is being sent: by the time sendto()
 * returns, every ack is queued, and one recvmmsg() takes them all (it waits only for
 * the first; the loop covers a kernel that answers later). */
#define NL_ACKS_AT_ONCE 8

static int read_acks(int fd, unsigned acks)
{
	_Alignas(4) uint8_t buf[NL_ACKS_AT_ONCE][4096];
	struct iovec iov[NL_ACKS_AT_ONCE];
	struct mmsghdr mm[NL_ACKS_AT_ONCE];
	int rc = 0;

	while (rc == 0 && acks > 0) {
		unsigned want = acks < NL_ACKS_AT_ONCE ? acks : NL_ACKS_AT_ONCE;
		int got;

		memset(mm, 0, sizeof(mm));
		for (unsigned i = 0; i < want; i++) {
			iov[i] = (struct iovec){.iov_base = buf[i], .iov_len = sizeof(buf[i])};
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
		}
		got = recvmmsg(fd, mm, want, MSG_WAITFORONE, NULL);
		if (got < 0)
			return -errno;
		for (int i = 0; rc == 0 && i < got; i++) {
			struct nlmsghdr *h = (struct nlmsghdr *)buf[i];

			for (size_t left = mm[i].msg_len; rc == 0 && acks > 0 && NLMSG_OK(h, left);
			     h = NLMSG_NEXT(h, left)) {
				if (h->nlmsg_type != NLMSG_ERROR)
					continue;
				rc = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
				acks--;
			}
		}
	}
	return rc;
}

int netns_nl_request(int proto, const struct netns_nlbuf *m, unsigned acks)
{
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	int *fd = sock_of(proto), rc;

	if (!fd)
		return -EPROTONOSUPPORT;
	if (m->overflow)
		return -E2BIG;
	if ((rc = open_sock(proto, fd)) < 0)
		return rc;
	if (sendto(*fd, m->b, m->len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) !=
	    (ssize_t)m->len)
		rc = -errno;
	if (rc == 0)
		rc = read_acks(*fd, acks);
	if (rc < 0) {
		close(*fd);
		*fd = -1;
	}
	return rc;
}

/* The loopback device's index is the same in every network namespace
 * (LOOPBACK_IFINDEX, since Linux 3.11): no need to ask. */
unsigned netns_nl_lo_index(void)
{
	return 1;
}

void netns_setup_done(void)
{
	for (size_t i = 0; i < sizeof(socks) / sizeof(socks[0]); i++)
		if (socks[i].fd >= 0) {
			close(socks[i].fd);
			socks[i].fd = -1;
		}
}
