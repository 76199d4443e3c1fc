/* Refused connections, explained (issue 24): the other half of the explanation rules
 * netns/capture.c installs. The log socket is made in the sandbox's namespace (NFLOG
 * instances belong to a namespace) and read by the supervisor, which never sees a
 * packet of a connection that was not refused: the kernel logs only the reset of a
 * refused SYN and the first packet of a connection to an IP address, both
 * rate-limited. Whether the host has a listener on a port is read from
 * /proc/net/tcp{,6}, once per port: nothing connects to the host's service. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "netns/netns.h"

#define COPY_RANGE 96 /* an IPv6 header and the TCP header's ports and flags */

struct cfgmsg {
	struct nlmsghdr h;
	struct nfgenmsg g;
	_Alignas(4) uint8_t attrs[64];
};

static void cfg_attr(struct cfgmsg *m, uint16_t type, const void *data, size_t n)
{
	struct nlattr *a = (struct nlattr *)((uint8_t *)m + m->h.nlmsg_len);

	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + n);
	memcpy((uint8_t *)a + NLA_HDRLEN, data, n);
	m->h.nlmsg_len += NLA_ALIGN(a->nla_len);
}

/* One NFULNL_MSG_CONFIG, acknowledged: 0 or the kernel's -errno. */
static int configure(int fd, uint32_t seq, uint16_t type, const void *data, size_t n)
{
	struct cfgmsg m;
	_Alignas(4) uint8_t buf[512];
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	ssize_t got;

	memset(&m, 0, sizeof(m));
	m.h.nlmsg_len = NLMSG_LENGTH(sizeof(struct nfgenmsg));
	m.h.nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
	m.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	m.h.nlmsg_seq = seq;
	m.g = (struct nfgenmsg){.nfgen_family = AF_UNSPEC,
				.version = NFNETLINK_V0,
				.res_id = htons(NETNS_EXPLAIN_GROUP)};
	cfg_attr(&m, type, data, n);
	if (send(fd, &m, m.h.nlmsg_len, 0) != (ssize_t)m.h.nlmsg_len)
		return -errno;
	got = recv(fd, buf, sizeof(buf), 0);
	if (got < 0)
		return -errno;
	if (!NLMSG_OK(h, (size_t)got) || h->nlmsg_type != NLMSG_ERROR)
		return -EPROTO;
	return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
}

int netns_explain_open(void)
{
	struct sockaddr_nl me = {.nl_family = AF_NETLINK};
	struct timeval tv = {.tv_sec = 2};
	struct nfulnl_msg_config_cmd cmd = {.command = NFULNL_CFG_CMD_BIND};
	struct nfulnl_msg_config_mode mode = {.copy_range = htonl(COPY_RANGE),
					      .copy_mode = NFULNL_COPY_PACKET};
	uint32_t one = htonl(1);
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	int rc;

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	rc = bind(fd, (struct sockaddr *)&me, sizeof(me)) < 0 ? -errno : 0;
	if (rc == 0)
		rc = configure(fd, 1, NFULA_CFG_CMD, &cmd, sizeof(cmd));
	if (rc == 0)
		rc = configure(fd, 2, NFULA_CFG_MODE, &mode, sizeof(mode));
	/* One packet is a message at once, not a batch after a second. */
	if (rc == 0)
		rc = configure(fd, 3, NFULA_CFG_QTHRESH, &one, sizeof(one));
	/* Read with MSG_DONTWAIT from now on (netns_explain_read): no timeout needed. */
	tv.tv_sec = 0;
	if (rc == 0 && setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		rc = -errno;
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

static bool loopback(int family, const uint8_t *a)
{
	static const uint8_t lo6[16] = {[15] = 1};

	return family == AF_INET ? a[0] == 127 : memcmp(a, lo6, 16) == 0;
}

/* The IP and TCP headers of a logged packet, into r; false when it is not one. */
static bool packet(const uint8_t *p, size_t n, bool reset, struct netns_refusal *r)
{
	size_t l4;

	memset(r, 0, sizeof(*r));
	if (n >= 20 && p[0] >> 4 == 4 && p[9] == IPPROTO_TCP) {
		r->family = AF_INET;
		l4 = (size_t)(p[0] & 0xf) * 4;
		memcpy(r->addr, p + 16, 4);
	} else if (n >= 40 && p[0] >> 4 == 6 && p[6] == IPPROTO_TCP) {
		r->family = AF_INET6;
		l4 = 40;
		memcpy(r->addr, p + 24, 16);
	} else {
		return false;
	}
	if (l4 < 20 || n < l4 + 4)
		return false;
	if (!reset) {
		r->kind = NETNS_REFUSED_LITERAL;
		r->port = (uint16_t)(p[l4 + 2] << 8 | p[l4 + 3]);
		return !loopback(r->family, r->addr);
	}
	/* The reset goes back to the client, from the port that refused it. Port 0 is
	 * where capture.c sends connections to addresses: said as those, not here. */
	r->kind = NETNS_REFUSED_LOCAL_PORT;
	r->port = (uint16_t)(p[l4] << 8 | p[l4 + 1]);
	return r->port != 0 && loopback(r->family, r->addr);
}

/* One NFULNL_MSG_PACKET: its prefix says which rule logged it. */
static bool one_message(const struct nlmsghdr *h, struct netns_refusal *r)
{
	const uint8_t *payload = NULL;
	size_t plen = 0;
	int prefix = 0;
	size_t left;
	const struct nlattr *a;

	if (h->nlmsg_type != ((NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET) ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nfgenmsg)))
		return false;
	left = h->nlmsg_len - NLMSG_LENGTH(sizeof(struct nfgenmsg));
	a = (const struct nlattr *)((const uint8_t *)NLMSG_DATA(h) + sizeof(struct nfgenmsg));
	while (left >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= left) {
		const uint8_t *d = (const uint8_t *)a + NLA_HDRLEN;
		size_t dn = a->nla_len - NLA_HDRLEN;

		if ((a->nla_type & NLA_TYPE_MASK) == NFULA_PAYLOAD) {
			payload = d;
			plen = dn;
		} else if ((a->nla_type & NLA_TYPE_MASK) == NFULA_PREFIX && dn >= 1) {
			prefix = d[0] == NETNS_EXPLAIN_RESET[0]	    ? 'R'
				 : d[0] == NETNS_EXPLAIN_LITERAL[0] ? 'L'
								    : 0;
			if (dn < 2 || d[1] != '\0')
				prefix = 0; /* not one of ours */
		}
		if ((size_t)NLA_ALIGN(a->nla_len) >= left)
			break;
		left -= NLA_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const uint8_t *)a + NLA_ALIGN(a->nla_len));
	}
	return payload && prefix && packet(payload, plen, prefix == 'R', r);
}

size_t netns_explain_parse(const void *buf, size_t len, struct netns_refusal *out, size_t max)
{
	size_t k = 0, off = 0;

	if ((uintptr_t)buf % 4)
		return 0;
	/* Not NLMSG_NEXT: its unsigned length wraps on a last message shorter than its
	 * alignment. */
	while (k < max && len - off >= sizeof(struct nlmsghdr)) {
		const struct nlmsghdr *h = (const void *)((const uint8_t *)buf + off);

		if (h->nlmsg_len < sizeof(*h) || h->nlmsg_len > len - off)
			break;
		if (one_message(h, &out[k]))
			k++;
		if (NLMSG_ALIGN(h->nlmsg_len) >= len - off)
			break;
		off += NLMSG_ALIGN(h->nlmsg_len);
	}
	return k;
}

int netns_explain_read(int fd, struct netns_refusal *out, size_t max)
{
	_Alignas(4) uint8_t buf[8192];
	ssize_t n;

	do
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return (int)netns_explain_parse(buf, (size_t)n, out, max);
}

/* A line of /proc/net/tcp or tcp6 for a listener that 127.0.0.1:port or [::1]:port
 * reaches: loopback or wildcard address, state 0A (LISTEN). Addresses are printed
 * as 32-bit words in the host's byte order. */
static bool listens(const char *line, bool v6, unsigned port)
{
	char addr[33];
	unsigned p, st;
	uint32_t w[4] = {0};

	if (sscanf(line, " %*u: %32[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x", addr, &p, &st) != 3 ||
	    p != port || st != 0x0A || strlen(addr) != (v6 ? 32u : 8u))
		return false;
	for (size_t i = 0; i < (v6 ? 4u : 1u); i++) {
		char word[9];

		memcpy(word, addr + 8 * i, 8);
		word[8] = '\0';
		w[i] = (uint32_t)strtoul(word, NULL, 16);
	}
	if (!v6)
		return w[0] == 0 || w[0] == htonl(INADDR_LOOPBACK);
	if (w[0] || w[1])
		return false;
	return (w[2] == 0 && (w[3] == 0 || w[3] == htonl(1))) ||
	       (w[2] == htonl(0xffff) && (w[3] == 0 || w[3] == htonl(INADDR_LOOPBACK)));
}

int netns_listening(int pid, uint16_t port)
{
	static const char *const files[] = {"tcp", "tcp6"};
	char line[512], path[64];
	int found = 0, err = 0;

	for (size_t i = 0; i < 2 && !found; i++) {
		FILE *f;

		if (pid > 0)
			snprintf(path, sizeof(path), "/proc/%d/net/%s", pid, files[i]);
		else
			snprintf(path, sizeof(path), "/proc/self/net/%s", files[i]);
		if (!(f = fopen(path, "re"))) {
			err = -errno;
			continue;
		}
		while (!found && fgets(line, sizeof(line), f))
			found = listens(line, i == 1, port);
		fclose(f);
	}
	return found ? 1 : err && err != -ENOENT ? err : 0;
}
