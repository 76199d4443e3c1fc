/* netns/explain.c: the refusals' log parsed from hostile bytes (truncated and
 * overlong messages and attributes, other prefixes, other protocols, the resets and
 * addresses that must not be said), the host listener check from /proc/net, and the
 * whole path in a namespace of the test's own: the kernel's rules refuse at once and
 * log what the supervisor would say. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netns/netns.h"
#include "tests/unit/unit.h"

struct msgbuf {
	_Alignas(4) uint8_t b[1024];
	size_t len;
};

static void put_attr(struct msgbuf *m, uint16_t type, const void *d, size_t n)
{
	struct nlattr a = {.nla_len = (uint16_t)(NLA_HDRLEN + n), .nla_type = type};

	memcpy(m->b + m->len, &a, sizeof(a));
	memcpy(m->b + m->len + NLA_HDRLEN, d, n);
	m->len += NLA_ALIGN(a.nla_len);
}

/* One NFULNL_MSG_PACKET with a prefix (NULL: none) and a payload, appended. */
static void put_msg(struct msgbuf *m, const char *prefix, const void *pkt, size_t n)
{
	size_t at = m->len;
	struct nlmsghdr h = {.nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET};
	struct nfgenmsg g = {.nfgen_family = AF_INET};

	m->len += NLMSG_HDRLEN;
	memcpy(m->b + m->len, &g, sizeof(g));
	m->len += NLMSG_ALIGN(sizeof(g));
	if (prefix)
		put_attr(m, NFULA_PREFIX, prefix, strlen(prefix) + 1);
	put_attr(m, NFULA_PAYLOAD, pkt, n);
	h.nlmsg_len = (uint32_t)(m->len - at);
	memcpy(m->b + at, &h, sizeof(h));
}

/* An IPv4 TCP header pair: src, dst (dotted), ports, protocol. */
static size_t v4(uint8_t *p, const char *src, const char *dst, uint16_t sp, uint16_t dp,
		 uint8_t proto)
{
	memset(p, 0, 40);
	p[0] = 0x45;
	p[9] = proto;
	inet_pton(AF_INET, src, p + 12);
	inet_pton(AF_INET, dst, p + 16);
	p[20] = (uint8_t)(sp >> 8), p[21] = (uint8_t)sp;
	p[22] = (uint8_t)(dp >> 8), p[23] = (uint8_t)dp;
	p[33] = 0x14; /* RST|ACK */
	return 40;
}

static size_t v6(uint8_t *p, const char *src, const char *dst, uint16_t sp, uint16_t dp)
{
	memset(p, 0, 60);
	p[0] = 0x60;
	p[6] = IPPROTO_TCP;
	inet_pton(AF_INET6, src, p + 8);
	inet_pton(AF_INET6, dst, p + 24);
	p[40] = (uint8_t)(sp >> 8), p[41] = (uint8_t)sp;
	p[42] = (uint8_t)(dp >> 8), p[43] = (uint8_t)dp;
	return 60;
}

static size_t parse(struct msgbuf *m, struct netns_refusal *r, size_t max)
{
	return netns_explain_parse(m->b, m->len, r, max);
}

START_TEST(said_kinds)
{
	struct msgbuf m = {.len = 0};
	struct netns_refusal r[8];
	uint8_t p[64];
	char a[64];

	put_msg(&m, "R", p, v4(p, "127.0.0.1", "127.0.0.1", 4873, 40000, IPPROTO_TCP));
	put_msg(&m, "L", p, v4(p, "127.0.0.1", "198.51.100.7", 40001, 80, IPPROTO_TCP));
	put_msg(&m, "R", p, v6(p, "::1", "::1", 8080, 40002));
	put_msg(&m, "L", p, v6(p, "::1", "2001:db8::7", 40003, 443));
	ck_assert_uint_eq(parse(&m, r, 8), 4);
	ck_assert_int_eq(r[0].kind, NETNS_REFUSED_LOCAL_PORT);
	ck_assert_uint_eq(r[0].port, 4873);
	ck_assert_int_eq(r[1].kind, NETNS_REFUSED_LITERAL);
	ck_assert_uint_eq(r[1].port, 80);
	ck_assert_str_eq(inet_ntop(AF_INET, r[1].addr, a, sizeof(a)), "198.51.100.7");
	ck_assert_int_eq(r[2].kind, NETNS_REFUSED_LOCAL_PORT);
	ck_assert_int_eq(r[2].family, AF_INET6);
	ck_assert_uint_eq(r[2].port, 8080);
	ck_assert_str_eq(inet_ntop(AF_INET6, r[3].addr, a, sizeof(a)), "2001:db8::7");
	ck_assert_uint_eq(r[3].port, 443);
	ck_assert_uint_eq(parse(&m, r, 2), 2); /* max is kept */
}
END_TEST

/* Each row: one message that must yield nothing. */
static size_t hostile(int row, uint8_t *p, const char **prefix)
{
	*prefix = "R";
	switch (row) {
	case 0: /* a reset from port 0: the literal redirect's own */
		return v4(p, "127.0.0.1", "127.0.0.1", 0, 40000, IPPROTO_TCP);
	case 1: /* a reset to an address that is not loopback */
		return v4(p, "127.0.0.1", "10.0.0.1", 4873, 40000, IPPROTO_TCP);
	case 2: /* UDP */
		return v4(p, "127.0.0.1", "127.0.0.1", 4873, 40000, IPPROTO_UDP);
	case 3: /* truncated before the ports */
		v4(p, "127.0.0.1", "127.0.0.1", 4873, 40000, IPPROTO_TCP);
		return 22;
	case 4: /* ihl below 5 */
		v4(p, "127.0.0.1", "127.0.0.1", 4873, 40000, IPPROTO_TCP);
		p[0] = 0x44;
		return 40;
	case 5: /* ihl 15: the TCP header past the copy */
		v4(p, "127.0.0.1", "127.0.0.1", 4873, 40000, IPPROTO_TCP);
		p[0] = 0x4f;
		return 40;
	case 6: /* another prefix */
		*prefix = "X";
		return v4(p, "127.0.0.1", "127.0.0.1", 4873, 40000, IPPROTO_TCP);
	case 7: /* a longer prefix starting like ours */
		*prefix = "Rogue";
		return v4(p, "127.0.0.1", "127.0.0.1", 4873, 40000, IPPROTO_TCP);
	case 8: /* no prefix */
		*prefix = NULL;
		return v4(p, "127.0.0.1", "127.0.0.1", 4873, 40000, IPPROTO_TCP);
	case 9: /* a literal that is loopback */
		*prefix = "L";
		return v4(p, "127.0.0.1", "127.0.0.5", 40000, 80, IPPROTO_TCP);
	case 10: /* IP version 5 */
		v4(p, "127.0.0.1", "127.0.0.1", 4873, 40000, IPPROTO_TCP);
		p[0] = 0x55;
		return 40;
	case 11: /* IPv6 truncated */
		v6(p, "::1", "::1", 8080, 40002);
		return 43;
	default: /* IPv6 literal ::1 */
		*prefix = "L";
		return v6(p, "::1", "::1", 40003, 443);
	}
}

START_TEST(hostile_rows)
{
	struct msgbuf m = {.len = 0};
	struct netns_refusal r[4];
	const char *prefix;
	uint8_t p[64];
	size_t n = hostile(_i, p, &prefix);

	put_msg(&m, prefix, p, n);
	ck_assert_msg(parse(&m, r, 4) == 0, "row %d said something", _i);
}
END_TEST

START_TEST(hostile_framing)
{
	struct msgbuf m = {.len = 0};
	struct netns_refusal r[4];
	uint8_t p[64];
	size_t n = v4(p, "127.0.0.1", "127.0.0.1", 4873, 40000, IPPROTO_TCP);
	struct nlmsghdr *h = (struct nlmsghdr *)m.b;
	struct nlattr *a;

	put_msg(&m, "R", p, n);
	ck_assert_uint_eq(parse(&m, r, 4), 1);
	h->nlmsg_len = (uint32_t)m.len + 4; /* longer than what was read */
	ck_assert_uint_eq(parse(&m, r, 4), 0);
	h->nlmsg_len = 3; /* shorter than a header */
	ck_assert_uint_eq(parse(&m, r, 4), 0);
	h->nlmsg_len = (uint32_t)m.len;
	m.len += 1; /* a last byte, not a message: no wrap-around */
	ck_assert_uint_eq(parse(&m, r, 4), 1);
	m.len -= 1;
	h->nlmsg_type = NLMSG_ERROR;
	ck_assert_uint_eq(parse(&m, r, 4), 0);
	h->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET;
	/* the first attribute (the prefix) with length 0, then longer than the message */
	a = (struct nlattr *)(m.b + NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg)));
	a->nla_len = 0;
	ck_assert_uint_eq(parse(&m, r, 4), 0);
	a->nla_len = 0xffff;
	ck_assert_uint_eq(parse(&m, r, 4), 0);
	/* a message whose length is not a multiple of 4 and runs to the end */
	m.len = 0;
	put_msg(&m, "R", p, n - 1);
	ck_assert_uint_eq(parse(&m, r, 4), 1);
	ck_assert_uint_eq(netns_explain_parse(m.b + 1, m.len - 1, r, 4), 0); /* misaligned */
	ck_assert_uint_eq(netns_explain_parse(m.b, 0, r, 4), 0);
}
END_TEST

START_TEST(host_listening)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), fd6, one = 1;
	uint16_t port;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	port = ntohs(a.sin_port);
	ck_assert_int_eq(netns_listening(0, port), 0); /* bound, not listening */
	ck_assert_int_eq(listen(fd, 1), 0);
	ck_assert_int_eq(netns_listening(0, port), 1);
	ck_assert_int_eq(netns_listening(getpid(), port), 1); /* by pid: the same namespace */
	close(fd);
	ck_assert_int_eq(netns_listening(0, port), 0);
	fd6 = socket(AF_INET6, SOCK_STREAM, 0);
	if (fd6 < 0)
		UNIT_SKIP("a listener on ::1", "no IPv6 here");
	setsockopt(fd6, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd6, (struct sockaddr *)&a6, sizeof(a6)) < 0)
		UNIT_SKIP("a listener on ::1", "no ::1 here");
	len = sizeof(a6);
	ck_assert_int_eq(getsockname(fd6, (struct sockaddr *)&a6, &len), 0);
	ck_assert_int_eq(listen(fd6, 1), 0);
	ck_assert_int_eq(netns_listening(0, ntohs(a6.sin6_port)), 1);
	close(fd6);
}
END_TEST

static int refused(int family, const char *ip, uint16_t port)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *a = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	int fd = socket(family, SOCK_STREAM, 0), rc;

	if (family == AF_INET) {
		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		inet_pton(AF_INET, ip, &a->sin_addr);
	} else {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		inet_pton(AF_INET6, ip, &a6->sin6_addr);
	}
	rc = connect(fd, (struct sockaddr *)&ss, family == AF_INET ? sizeof(*a) : sizeof(*a6));
	rc = rc == 0 ? 0 : errno;
	close(fd);
	return rc;
}

/* The whole path in a network namespace of the test's own (nothing but lo): the
 * kernel refuses at once and logs exactly the refusals to explain. */
START_TEST(kernel_path)
{
	struct netns_refusal r[16];
	int fd, n = 0, udp;
	struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons(53)};

	if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0 && unshare(CLONE_NEWNET) < 0)
		UNIT_SKIP("the explanation rules in a namespace", "no user or network namespaces");
	ck_assert_int_eq(netns_loopback_up(), 0);
	if (netns_capture_setup() < 0)
		UNIT_SKIP("the explanation rules in a namespace", "no nf_tables here");
	fd = netns_explain_open();
	if (fd < 0)
		UNIT_SKIP("the explanation rules in a namespace", "no NFLOG here");
	ck_assert_int_eq(refused(AF_INET, "127.0.0.1", 4873), ECONNREFUSED);
	ck_assert_int_eq(refused(AF_INET, "198.51.100.7", 80), ECONNREFUSED);
	ck_assert_int_eq(refused(AF_INET6, "2001:db8::7", 443), ECONNREFUSED);
	inet_pton(AF_INET, "198.51.100.7", &dst.sin_addr);
	udp = socket(AF_INET, SOCK_DGRAM, 0);
	ck_assert_int_lt(sendto(udp, "x", 1, 0, (struct sockaddr *)&dst, sizeof(dst)), 0);
	ck_assert_int_eq(errno, ENETUNREACH); /* UDP: as before */
	close(udp);
	/* one datagram a read (the log's queue threshold is 1), some with nothing to
	 * say (the reset from port 0 of a refused address); bounded */
	for (int round = 0, k = 0; round < 16 && k != -EAGAIN && n < 16; round++) {
		k = netns_explain_read(fd, r + n, (size_t)(16 - n));
		ck_assert_msg(k >= 0 || k == -EAGAIN, "read: %d", k);
		n += k > 0 ? k : 0;
	}
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(r[0].kind, NETNS_REFUSED_LOCAL_PORT);
	ck_assert_uint_eq(r[0].port, 4873);
	ck_assert_int_eq(r[1].kind, NETNS_REFUSED_LITERAL);
	ck_assert_uint_eq(r[1].port, 80);
	ck_assert_int_eq(r[2].kind, NETNS_REFUSED_LITERAL);
	ck_assert_int_eq(r[2].family, AF_INET6);
	ck_assert_int_eq(netns_explain_read(fd, r, 16), -EAGAIN); /* nothing more, no block */
	close(fd);
}
END_TEST

static Suite *explain_suite(void)
{
	Suite *s = suite_create("explain");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, said_kinds);
	tcase_add_loop_test(tc, hostile_rows, 0, 13);
	tcase_add_test(tc, hostile_framing);
	tcase_add_test(tc, host_listening);
	tcase_add_test(tc, kernel_path);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(explain_suite)
