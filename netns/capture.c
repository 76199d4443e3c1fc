/* Capture for clients that ignore the proxy variables (issue 13): inside the
 * sandbox's network namespace, the fake range (198.18.0.0/15, proxy/dns.h) is made
 * local on lo, and one nftables rule redirects every TCP connection to it onto the
 * capture listener, 127.0.0.1:NETNS_CAPTURE_PORT. The supervisor reads the address
 * the client dialled back with SO_ORIGINAL_DST and maps it to the name the DNS stub
 * handed out. Every port is captured, with no listener per name or port.
 *
 * Both are plain netlink requests made by the sandbox's init, which holds
 * CAP_NET_ADMIN over its own namespace (as root and unprivileged alike): one
 * RTM_NEWROUTE, and one nf_tables batch (table, nat chain on the output hook, rule).
 * No libnftnl: the batch is five messages, built here attribute by attribute.
 * The explanations of refused connections (issue 24) are made here too, in a table
 * of their own, after the capture (below). */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/fib_rules.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "netns/netns.h"

#define FAKE_NET  0xc6120000u /* 198.18.0.0/15: proxy/dns.h PROXY_FAKE_NET */
#define FAKE_MASK 0xfffe0000u
#define FAKE_LEN  15

struct nlbuf {
	_Alignas(4) uint8_t b[4096]; /* the explanations' batch is the longest */
	size_t len;
	int overflow;
};

static void *put(struct nlbuf *m, const void *p, size_t n)
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

static size_t attr(struct nlbuf *m, uint16_t type, const void *data, size_t n)
{
	struct nlattr a = {.nla_len = (uint16_t)(NLA_HDRLEN + n), .nla_type = type};
	size_t at = m->len;

	put(m, &a, sizeof(a));
	if (n)
		put(m, data, n);
	return at;
}

static void attr_be32(struct nlbuf *m, uint16_t type, uint32_t v)
{
	v = htonl(v);
	attr(m, type, &v, 4);
}

static void attr_str(struct nlbuf *m, uint16_t type, const char *s)
{
	attr(m, type, s, strlen(s) + 1);
}

static size_t nest(struct nlbuf *m, uint16_t type)
{
	return attr(m, type | NLA_F_NESTED, NULL, 0);
}

static void nest_end(struct nlbuf *m, size_t at)
{
	if (!m->overflow)
		((struct nlattr *)(m->b + at))->nla_len = (uint16_t)(m->len - at);
}

static size_t msg(struct nlbuf *m, uint16_t type, uint16_t flags, uint32_t seq, const void *fam,
		  size_t fam_len)
{
	struct nlmsghdr h = {
	    .nlmsg_type = type, .nlmsg_flags = NLM_F_REQUEST | flags, .nlmsg_seq = seq};
	size_t at = m->len;

	put(m, &h, sizeof(h));
	put(m, fam, fam_len);
	return at;
}

static void msg_end(struct nlbuf *m, size_t at)
{
	if (!m->overflow)
		((struct nlmsghdr *)(m->b + at))->nlmsg_len = (uint32_t)(m->len - at);
}

static size_t nft_msg(struct nlbuf *m, uint16_t type, uint16_t flags, uint32_t seq, uint8_t family,
		      uint16_t res_id)
{
	struct nfgenmsg g = {
	    .nfgen_family = family, .version = NFNETLINK_V0, .res_id = htons(res_id)};

	return msg(m, type, flags, seq, &g, sizeof(g));
}

/* Send m and wait for `acks` acknowledgements (each message asked for one): 0 or the
 * first error the kernel reports. */
static int send_and_ack(int proto, struct nlbuf *m, unsigned acks)
{
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	struct timeval tv = {.tv_sec = 2};
	_Alignas(4) uint8_t buf[4096];
	int fd, rc = 0;

	if (m->overflow)
		return -E2BIG;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (sendto(fd, m->b, m->len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) !=
	    (ssize_t)m->len)
		rc = -errno;
	while (rc == 0 && acks > 0) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (n < 0) {
			rc = -errno;
			break;
		}
		for (size_t left = (size_t)n; rc == 0 && NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_type != NLMSG_ERROR)
				continue;
			rc = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			acks--;
		}
	}
	close(fd);
	return rc;
}

/* ip route add local 198.18.0.0/15 dev lo table local */
static int add_local_route(void)
{
	struct rtmsg rt = {.rtm_family = AF_INET,
			   .rtm_dst_len = FAKE_LEN,
			   .rtm_table = RT_TABLE_LOCAL,
			   .rtm_protocol = RTPROT_BOOT,
			   .rtm_scope = RT_SCOPE_HOST,
			   .rtm_type = RTN_LOCAL};
	struct nlbuf m = {.len = 0};
	uint32_t dst = htonl(FAKE_NET), oif = if_nametoindex("lo");
	size_t at;

	if (!oif)
		return -ENODEV;
	at = msg(&m, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, 1, &rt, sizeof(rt));
	attr(&m, RTA_DST, &dst, 4);
	attr(&m, RTA_OIF, &oif, 4);
	msg_end(&m, at);
	return send_and_ack(NETLINK_ROUTE, &m, 1);
}

static size_t expr(struct nlbuf *m, const char *name, size_t *data)
{
	size_t elem = nest(m, NFTA_LIST_ELEM);

	attr_str(m, NFTA_EXPR_NAME, name);
	*data = nest(m, NFTA_EXPR_DATA);
	return elem;
}

static void expr_end(struct nlbuf *m, size_t elem, size_t data)
{
	nest_end(m, data);
	nest_end(m, elem);
}

static void data_value(struct nlbuf *m, uint16_t type, const void *v, size_t n)
{
	size_t d = nest(m, type);

	attr(m, NFTA_DATA_VALUE, v, n);
	nest_end(m, d);
}

static void cmp_eq(struct nlbuf *m, const void *v, size_t n)
{
	size_t d, e = expr(m, "cmp", &d);

	attr_be32(m, NFTA_CMP_SREG, NFT_REG_1);
	attr_be32(m, NFTA_CMP_OP, NFT_CMP_EQ);
	data_value(m, NFTA_CMP_DATA, v, n);
	expr_end(m, e, d);
}

/* redirect to :port (network order; 0: a port where no socket can listen) */
static void redir_to(struct nlbuf *m, const uint16_t *port)
{
	size_t d, e = expr(m, "immediate", &d);

	attr_be32(m, NFTA_IMMEDIATE_DREG, NFT_REG_1);
	data_value(m, NFTA_IMMEDIATE_DATA, port, 2);
	expr_end(m, e, d);
	e = expr(m, "redir", &d);
	attr_be32(m, NFTA_REDIR_REG_PROTO_MIN, NFT_REG_1);
	attr_be32(m, NFTA_REDIR_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED);
	expr_end(m, e, d);
}

/* ip daddr & 255.254.0.0 == 198.18.0.0 meta l4proto tcp redirect to :port */
static void rule_exprs(struct nlbuf *m, uint16_t port)
{
	uint32_t mask = htonl(FAKE_MASK), net = htonl(FAKE_NET), zero = 0;
	uint8_t tcp = IPPROTO_TCP;
	uint16_t p = htons(port);
	size_t d, e, list = nest(m, NFTA_RULE_EXPRESSIONS);

	e = expr(m, "payload", &d);
	attr_be32(m, NFTA_PAYLOAD_DREG, NFT_REG_1);
	attr_be32(m, NFTA_PAYLOAD_BASE, NFT_PAYLOAD_NETWORK_HEADER);
	attr_be32(m, NFTA_PAYLOAD_OFFSET, 16); /* the IPv4 destination */
	attr_be32(m, NFTA_PAYLOAD_LEN, 4);
	expr_end(m, e, d);
	e = expr(m, "bitwise", &d);
	attr_be32(m, NFTA_BITWISE_SREG, NFT_REG_1);
	attr_be32(m, NFTA_BITWISE_DREG, NFT_REG_1);
	attr_be32(m, NFTA_BITWISE_LEN, 4);
	data_value(m, NFTA_BITWISE_MASK, &mask, 4);
	data_value(m, NFTA_BITWISE_XOR, &zero, 4);
	expr_end(m, e, d);
	cmp_eq(m, &net, 4);
	e = expr(m, "meta", &d);
	attr_be32(m, NFTA_META_DREG, NFT_REG_1);
	attr_be32(m, NFTA_META_KEY, NFT_META_L4PROTO);
	expr_end(m, e, d);
	cmp_eq(m, &tcp, 1);
	redir_to(m, &p);
	nest_end(m, list);
}

static int add_redirect(uint16_t port)
{
	static const char table[] = "halo", chain[] = "capture";
	struct nlbuf m = {.len = 0};
	const uint16_t sub = NFNL_SUBSYS_NFTABLES << 8;
	size_t at, hook;

	msg_end(&m, nft_msg(&m, NFNL_MSG_BATCH_BEGIN, 0, 1, AF_UNSPEC, NFNL_SUBSYS_NFTABLES));
	at = nft_msg(&m, sub | NFT_MSG_NEWTABLE, NLM_F_CREATE | NLM_F_ACK, 2, NFPROTO_IPV4, 0);
	attr_str(&m, NFTA_TABLE_NAME, table);
	msg_end(&m, at);
	at = nft_msg(&m, sub | NFT_MSG_NEWCHAIN, NLM_F_CREATE | NLM_F_ACK, 3, NFPROTO_IPV4, 0);
	attr_str(&m, NFTA_CHAIN_TABLE, table);
	attr_str(&m, NFTA_CHAIN_NAME, chain);
	hook = nest(&m, NFTA_CHAIN_HOOK);
	attr_be32(&m, NFTA_HOOK_HOOKNUM, NF_INET_LOCAL_OUT);
	attr_be32(&m, NFTA_HOOK_PRIORITY, (uint32_t)-100); /* NF_IP_PRI_NAT_DST */
	nest_end(&m, hook);
	attr_str(&m, NFTA_CHAIN_TYPE, "nat");
	msg_end(&m, at);
	at = nft_msg(&m, sub | NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK, 4,
		     NFPROTO_IPV4, 0);
	attr_str(&m, NFTA_RULE_TABLE, table);
	attr_str(&m, NFTA_RULE_CHAIN, chain);
	rule_exprs(&m, port);
	msg_end(&m, at);
	msg_end(&m, nft_msg(&m, NFNL_MSG_BATCH_END, 0, 5, AF_UNSPEC, NFNL_SUBSYS_NFTABLES));
	return send_and_ack(NETLINK_NETFILTER, &m, 3);
}

/* Explanations of refused connections (issue 24): a table of its own, so that a
 * kernel without inet nat, limit or log keeps the capture. Two chains:
 * - nat, output, after the capture's chain (consulted once per connection, for the
 *   first packet only): TCP to an address that is neither loopback nor captured is
 *   logged (NFLOG, prefix "L") and redirected to port 0 of loopback, where no socket
 *   can listen: the client gets ECONNREFUSED at once and reaches nothing, not even a
 *   server of the sandbox's own on 0.0.0.0 of that port.
 * - filter, output: the reset the kernel answers a SYN to a port with no listener
 *   (RST|ACK, sequence 0) is logged (prefix "R"). One payload compare per packet,
 *   nothing more unless a connection is refused.
 * Both logs are rate-limited in the kernel: the supervisor is never on a hot path. */
static void meta_is(struct nlbuf *m, uint32_t key, const void *v, size_t n)
{
	size_t d, e = expr(m, "meta", &d);

	attr_be32(m, NFTA_META_DREG, NFT_REG_1);
	attr_be32(m, NFTA_META_KEY, key);
	expr_end(m, e, d);
	cmp_eq(m, v, n);
}

static void payload_load(struct nlbuf *m, uint32_t base, uint32_t off, uint32_t len)
{
	size_t d, e = expr(m, "payload", &d);

	attr_be32(m, NFTA_PAYLOAD_DREG, NFT_REG_1);
	attr_be32(m, NFTA_PAYLOAD_BASE, base);
	attr_be32(m, NFTA_PAYLOAD_OFFSET, off);
	attr_be32(m, NFTA_PAYLOAD_LEN, len);
	expr_end(m, e, d);
}

static void cmp_op(struct nlbuf *m, uint32_t op, const void *v, size_t n)
{
	size_t d, e = expr(m, "cmp", &d);

	attr_be32(m, NFTA_CMP_SREG, NFT_REG_1);
	attr_be32(m, NFTA_CMP_OP, op);
	data_value(m, NFTA_CMP_DATA, v, n);
	expr_end(m, e, d);
}

static void limit_log(struct nlbuf *m, const char *prefix)
{
	uint64_t rate = htobe64(NETNS_EXPLAIN_RATE), unit = htobe64(1);
	uint16_t group = htons(NETNS_EXPLAIN_GROUP);
	size_t d, e = expr(m, "limit", &d);

	attr(m, NFTA_LIMIT_RATE, &rate, 8);
	attr(m, NFTA_LIMIT_UNIT, &unit, 8);
	attr_be32(m, NFTA_LIMIT_BURST, NETNS_EXPLAIN_RATE);
	attr_be32(m, NFTA_LIMIT_TYPE, NFT_LIMIT_PKTS);
	expr_end(m, e, d);
	e = expr(m, "log", &d);
	attr(m, NFTA_LOG_GROUP, &group, 2);
	attr_str(m, NFTA_LOG_PREFIX, prefix);
	expr_end(m, e, d);
}

/* meta l4proto tcp meta nfproto F <daddr> != loopback [limit log "L" | redirect :0] */
static void literal_exprs(struct nlbuf *m, uint8_t nfproto, bool redirect)
{
	static const uint8_t lo6[16] = {[15] = 1};
	static const uint8_t net127 = 127;
	uint8_t tcp = IPPROTO_TCP;
	uint16_t zero = 0;
	size_t list = nest(m, NFTA_RULE_EXPRESSIONS);

	meta_is(m, NFT_META_L4PROTO, &tcp, 1);
	meta_is(m, NFT_META_NFPROTO, &nfproto, 1);
	if (nfproto == NFPROTO_IPV4) {
		payload_load(m, NFT_PAYLOAD_NETWORK_HEADER, 16, 1); /* 127.0.0.0/8 */
		cmp_op(m, NFT_CMP_NEQ, &net127, 1);
	} else {
		payload_load(m, NFT_PAYLOAD_NETWORK_HEADER, 24, 16); /* ::1 */
		cmp_op(m, NFT_CMP_NEQ, lo6, 16);
	}
	if (!redirect) {
		limit_log(m, NETNS_EXPLAIN_LITERAL);
	} else {
		redir_to(m, &zero);
	}
	nest_end(m, list);
}

/* meta l4proto tcp tcp flags & 0x3f == rst|ack tcp sequence 0 limit log "R" */
static void reset_exprs(struct nlbuf *m)
{
	uint8_t tcp = IPPROTO_TCP, mask = 0x3f, rst_ack = 0x14, z = 0;
	uint32_t zero = 0;
	size_t d, e, list = nest(m, NFTA_RULE_EXPRESSIONS);

	meta_is(m, NFT_META_L4PROTO, &tcp, 1);
	payload_load(m, NFT_PAYLOAD_TRANSPORT_HEADER, 13, 1);
	e = expr(m, "bitwise", &d);
	attr_be32(m, NFTA_BITWISE_SREG, NFT_REG_1);
	attr_be32(m, NFTA_BITWISE_DREG, NFT_REG_1);
	attr_be32(m, NFTA_BITWISE_LEN, 1);
	data_value(m, NFTA_BITWISE_MASK, &mask, 1);
	data_value(m, NFTA_BITWISE_XOR, &z, 1);
	expr_end(m, e, d);
	cmp_eq(m, &rst_ack, 1);
	payload_load(m, NFT_PAYLOAD_TRANSPORT_HEADER, 4, 4);
	cmp_eq(m, &zero, 4);
	limit_log(m, NETNS_EXPLAIN_RESET);
	nest_end(m, list);
}

static void chain_msg(struct nlbuf *m, uint32_t seq, const char *name, const char *type,
		      int32_t prio)
{
	size_t at = nft_msg(m, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWCHAIN,
			    NLM_F_CREATE | NLM_F_ACK, seq, NFPROTO_INET, 0);
	size_t hook;

	attr_str(m, NFTA_CHAIN_TABLE, "halo_explain");
	attr_str(m, NFTA_CHAIN_NAME, name);
	hook = nest(m, NFTA_CHAIN_HOOK);
	attr_be32(m, NFTA_HOOK_HOOKNUM, NF_INET_LOCAL_OUT);
	attr_be32(m, NFTA_HOOK_PRIORITY, (uint32_t)prio);
	nest_end(m, hook);
	attr_str(m, NFTA_CHAIN_TYPE, type);
	msg_end(m, at);
}

static void rule_msg(struct nlbuf *m, uint32_t seq, const char *chain, int kind)
{
	size_t at = nft_msg(m, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWRULE,
			    NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK, seq, NFPROTO_INET, 0);

	attr_str(m, NFTA_RULE_TABLE, "halo_explain");
	attr_str(m, NFTA_RULE_CHAIN, chain);
	if (kind < 4)
		literal_exprs(m, kind & 2 ? NFPROTO_IPV6 : NFPROTO_IPV4, kind & 1);
	else
		reset_exprs(m);
	msg_end(m, at);
}

static int add_explain_rules(void)
{
	struct nlbuf m = {.len = 0};
	uint32_t seq = 1;
	size_t at;

	msg_end(&m, nft_msg(&m, NFNL_MSG_BATCH_BEGIN, 0, seq++, AF_UNSPEC, NFNL_SUBSYS_NFTABLES));
	at = nft_msg(&m, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWTABLE, NLM_F_CREATE | NLM_F_ACK,
		     seq++, NFPROTO_INET, 0);
	attr_str(&m, NFTA_TABLE_NAME, "halo_explain");
	msg_end(&m, at);
	chain_msg(&m, seq++, "literal", "nat", -90); /* after the capture's -100 */
	chain_msg(&m, seq++, "reset", "filter", 0);
	for (int kind = 0; kind < 4; kind++) /* v4 log, v4 redirect, v6 log, v6 redirect */
		rule_msg(&m, seq++, "literal", kind);
	rule_msg(&m, seq++, "reset", 4);
	msg_end(&m, nft_msg(&m, NFNL_MSG_BATCH_END, 0, seq, AF_UNSPEC, NFNL_SUBSYS_NFTABLES));
	return send_and_ack(NETLINK_NETFILTER, &m, seq - 2);
}

/* ip [-6] rule add ipproto tcp lookup T pref P; ip [-6] route add local default dev lo
 * table T [src 127.0.0.1]: without a route a connect() to an address fails with
 * ENETUNREACH before any packet, and nothing could tell. TCP only: UDP keeps its
 * ENETUNREACH. The source is loopback (v4: the address itself would be, and the
 * kernel refuses a source that is not in the local table). */
static int add_literal_route(int family)
{
	struct fib_rule_hdr fr = {.family = (uint8_t)family, .action = FR_ACT_TO_TBL};
	struct rtmsg rt = {.rtm_family = (uint8_t)family,
			   .rtm_table = RT_TABLE_UNSPEC,
			   .rtm_protocol = RTPROT_BOOT,
			   .rtm_scope = RT_SCOPE_HOST,
			   .rtm_type = RTN_LOCAL};
	struct nlbuf m = {.len = 0};
	uint32_t oif = if_nametoindex("lo"), lo4 = htonl(INADDR_LOOPBACK);
	uint8_t tcp = IPPROTO_TCP;
	size_t at;
	int rc;

	if (!oif)
		return -ENODEV;
	at = msg(&m, RTM_NEWRULE, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, 1, &fr, sizeof(fr));
	attr(&m, FRA_TABLE, &(uint32_t){NETNS_EXPLAIN_TABLE}, 4);
	attr(&m, FRA_PRIORITY, &(uint32_t){NETNS_EXPLAIN_TABLE}, 4);
	attr(&m, FRA_IP_PROTO, &tcp, 1);
	msg_end(&m, at);
	if ((rc = send_and_ack(NETLINK_ROUTE, &m, 1)) < 0)
		return rc;
	m.len = 0;
	at = msg(&m, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, 2, &rt, sizeof(rt));
	attr(&m, RTA_TABLE, &(uint32_t){NETNS_EXPLAIN_TABLE}, 4);
	attr(&m, RTA_OIF, &oif, 4);
	if (family == AF_INET)
		attr(&m, RTA_PREFSRC, &lo4, 4);
	msg_end(&m, at);
	return send_and_ack(NETLINK_ROUTE, &m, 1);
}

int netns_explain_setup(void)
{
	int rc = add_explain_rules();

	if (rc == 0)
		rc = add_literal_route(AF_INET);
	if (rc == 0)
		add_literal_route(AF_INET6); /* a namespace without IPv6 has nothing to route */
	return rc;
}

int netns_capture_setup(void)
{
	int rc = add_local_route();

	if (rc == 0)
		rc = add_redirect(NETNS_CAPTURE_PORT);
	/* Explanations are a courtesy, the capture is not: without them the capture stays. */
	if (rc == 0)
		netns_explain_setup();
	return rc;
}
