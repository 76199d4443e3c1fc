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
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "netns/netns.h"
#include "netns/nl_int.h"

#define FAKE_NET  0xc6120000u /* 198.18.0.0/15: proxy/dns.h PROXY_FAKE_NET */
#define FAKE_MASK 0xfffe0000u
#define FAKE_LEN  15

static size_t nft_msg(struct netns_nlbuf *m, uint16_t type, uint16_t flags, uint32_t seq,
		      uint8_t family, uint16_t res_id)
{
	struct nfgenmsg g = {
	    .nfgen_family = family, .version = NFNETLINK_V0, .res_id = htons(res_id)};

	return netns_nl_msg(m, type, flags, seq, &g, sizeof(g));
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
	struct netns_nlbuf m = {.len = 0};
	uint32_t dst = htonl(FAKE_NET), oif = netns_nl_lo_index();
	size_t at;

	if (!oif)
		return -ENODEV;
	at = netns_nl_msg(&m, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, 1, &rt,
			  sizeof(rt));
	netns_nl_attr(&m, RTA_DST, &dst, 4);
	netns_nl_attr(&m, RTA_OIF, &oif, 4);
	netns_nl_msg_end(&m, at);
	return netns_nl_request(NETLINK_ROUTE, &m, 1);
}

static size_t expr(struct netns_nlbuf *m, const char *name, size_t *data)
{
	size_t elem = netns_nl_nest(m, NFTA_LIST_ELEM);

	netns_nl_attr_str(m, NFTA_EXPR_NAME, name);
	*data = netns_nl_nest(m, NFTA_EXPR_DATA);
	return elem;
}

static void expr_end(struct netns_nlbuf *m, size_t elem, size_t data)
{
	netns_nl_nest_end(m, data);
	netns_nl_nest_end(m, elem);
}

static void data_value(struct netns_nlbuf *m, uint16_t type, const void *v, size_t n)
{
	size_t d = netns_nl_nest(m, type);

	netns_nl_attr(m, NFTA_DATA_VALUE, v, n);
	netns_nl_nest_end(m, d);
}

static void cmp_eq(struct netns_nlbuf *m, const void *v, size_t n)
{
	size_t d, e = expr(m, "cmp", &d);

	netns_nl_attr_be32(m, NFTA_CMP_SREG, NFT_REG_1);
	netns_nl_attr_be32(m, NFTA_CMP_OP, NFT_CMP_EQ);
	data_value(m, NFTA_CMP_DATA, v, n);
	expr_end(m, e, d);
}

/* redirect to :port (network order; 0: a port where no socket can listen) */
static void redir_to(struct netns_nlbuf *m, const uint16_t *port)
{
	size_t d, e = expr(m, "immediate", &d);

	netns_nl_attr_be32(m, NFTA_IMMEDIATE_DREG, NFT_REG_1);
	data_value(m, NFTA_IMMEDIATE_DATA, port, 2);
	expr_end(m, e, d);
	e = expr(m, "redir", &d);
	netns_nl_attr_be32(m, NFTA_REDIR_REG_PROTO_MIN, NFT_REG_1);
	netns_nl_attr_be32(m, NFTA_REDIR_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED);
	expr_end(m, e, d);
}

/* ip daddr & 255.254.0.0 == 198.18.0.0 meta l4proto tcp redirect to :port */
static void rule_exprs(struct netns_nlbuf *m, uint16_t port)
{
	uint32_t mask = htonl(FAKE_MASK), net = htonl(FAKE_NET), zero = 0;
	uint8_t tcp = IPPROTO_TCP;
	uint16_t p = htons(port);
	size_t d, e, list = netns_nl_nest(m, NFTA_RULE_EXPRESSIONS);

	e = expr(m, "payload", &d);
	netns_nl_attr_be32(m, NFTA_PAYLOAD_DREG, NFT_REG_1);
	netns_nl_attr_be32(m, NFTA_PAYLOAD_BASE, NFT_PAYLOAD_NETWORK_HEADER);
	netns_nl_attr_be32(m, NFTA_PAYLOAD_OFFSET, 16); /* the IPv4 destination */
	netns_nl_attr_be32(m, NFTA_PAYLOAD_LEN, 4);
	expr_end(m, e, d);
	e = expr(m, "bitwise", &d);
	netns_nl_attr_be32(m, NFTA_BITWISE_SREG, NFT_REG_1);
	netns_nl_attr_be32(m, NFTA_BITWISE_DREG, NFT_REG_1);
	netns_nl_attr_be32(m, NFTA_BITWISE_LEN, 4);
	data_value(m, NFTA_BITWISE_MASK, &mask, 4);
	data_value(m, NFTA_BITWISE_XOR, &zero, 4);
	expr_end(m, e, d);
	cmp_eq(m, &net, 4);
	e = expr(m, "meta", &d);
	netns_nl_attr_be32(m, NFTA_META_DREG, NFT_REG_1);
	netns_nl_attr_be32(m, NFTA_META_KEY, NFT_META_L4PROTO);
	expr_end(m, e, d);
	cmp_eq(m, &tcp, 1);
	redir_to(m, &p);
	netns_nl_nest_end(m, list);
}

/* The capture's table, chain and rule: three messages, each acknowledged. */
static unsigned redirect_msgs(struct netns_nlbuf *m, uint32_t *seq, uint16_t port)
{
	static const char table[] = "halo", chain[] = "capture";
	const uint16_t sub = NFNL_SUBSYS_NFTABLES << 8;
	size_t at, hook;

	at =
	    nft_msg(m, sub | NFT_MSG_NEWTABLE, NLM_F_CREATE | NLM_F_ACK, (*seq)++, NFPROTO_IPV4, 0);
	netns_nl_attr_str(m, NFTA_TABLE_NAME, table);
	netns_nl_msg_end(m, at);
	at =
	    nft_msg(m, sub | NFT_MSG_NEWCHAIN, NLM_F_CREATE | NLM_F_ACK, (*seq)++, NFPROTO_IPV4, 0);
	netns_nl_attr_str(m, NFTA_CHAIN_TABLE, table);
	netns_nl_attr_str(m, NFTA_CHAIN_NAME, chain);
	hook = netns_nl_nest(m, NFTA_CHAIN_HOOK);
	netns_nl_attr_be32(m, NFTA_HOOK_HOOKNUM, NF_INET_LOCAL_OUT);
	netns_nl_attr_be32(m, NFTA_HOOK_PRIORITY, (uint32_t)-100); /* NF_IP_PRI_NAT_DST */
	netns_nl_nest_end(m, hook);
	netns_nl_attr_str(m, NFTA_CHAIN_TYPE, "nat");
	netns_nl_msg_end(m, at);
	at = nft_msg(m, sub | NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK, (*seq)++,
		     NFPROTO_IPV4, 0);
	netns_nl_attr_str(m, NFTA_RULE_TABLE, table);
	netns_nl_attr_str(m, NFTA_RULE_CHAIN, chain);
	rule_exprs(m, port);
	netns_nl_msg_end(m, at);
	return 3;
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
static void meta_is(struct netns_nlbuf *m, uint32_t key, const void *v, size_t n)
{
	size_t d, e = expr(m, "meta", &d);

	netns_nl_attr_be32(m, NFTA_META_DREG, NFT_REG_1);
	netns_nl_attr_be32(m, NFTA_META_KEY, key);
	expr_end(m, e, d);
	cmp_eq(m, v, n);
}

static void payload_load(struct netns_nlbuf *m, uint32_t base, uint32_t off, uint32_t len)
{
	size_t d, e = expr(m, "payload", &d);

	netns_nl_attr_be32(m, NFTA_PAYLOAD_DREG, NFT_REG_1);
	netns_nl_attr_be32(m, NFTA_PAYLOAD_BASE, base);
	netns_nl_attr_be32(m, NFTA_PAYLOAD_OFFSET, off);
	netns_nl_attr_be32(m, NFTA_PAYLOAD_LEN, len);
	expr_end(m, e, d);
}

static void cmp_op(struct netns_nlbuf *m, uint32_t op, const void *v, size_t n)
{
	size_t d, e = expr(m, "cmp", &d);

	netns_nl_attr_be32(m, NFTA_CMP_SREG, NFT_REG_1);
	netns_nl_attr_be32(m, NFTA_CMP_OP, op);
	data_value(m, NFTA_CMP_DATA, v, n);
	expr_end(m, e, d);
}

static void limit_log(struct netns_nlbuf *m, const char *prefix)
{
	uint64_t rate = htobe64(NETNS_EXPLAIN_RATE), unit = htobe64(1);
	uint16_t group = htons(NETNS_EXPLAIN_GROUP);
	size_t d, e = expr(m, "limit", &d);

	netns_nl_attr(m, NFTA_LIMIT_RATE, &rate, 8);
	netns_nl_attr(m, NFTA_LIMIT_UNIT, &unit, 8);
	netns_nl_attr_be32(m, NFTA_LIMIT_BURST, NETNS_EXPLAIN_RATE);
	netns_nl_attr_be32(m, NFTA_LIMIT_TYPE, NFT_LIMIT_PKTS);
	expr_end(m, e, d);
	e = expr(m, "log", &d);
	netns_nl_attr(m, NFTA_LOG_GROUP, &group, 2);
	netns_nl_attr_str(m, NFTA_LOG_PREFIX, prefix);
	expr_end(m, e, d);
}

/* meta l4proto tcp meta nfproto F <daddr> != loopback [limit log "L" | redirect :0] */
static void literal_exprs(struct netns_nlbuf *m, uint8_t nfproto, bool redirect)
{
	static const uint8_t lo6[16] = {[15] = 1};
	static const uint8_t net127 = 127;
	uint8_t tcp = IPPROTO_TCP;
	uint16_t zero = 0;
	size_t list = netns_nl_nest(m, NFTA_RULE_EXPRESSIONS);

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
	netns_nl_nest_end(m, list);
}

/* meta l4proto tcp tcp flags & 0x3f == rst|ack tcp sequence 0 limit log "R" */
static void reset_exprs(struct netns_nlbuf *m)
{
	uint8_t tcp = IPPROTO_TCP, mask = 0x3f, rst_ack = 0x14, z = 0;
	uint32_t zero = 0;
	size_t d, e, list = netns_nl_nest(m, NFTA_RULE_EXPRESSIONS);

	meta_is(m, NFT_META_L4PROTO, &tcp, 1);
	payload_load(m, NFT_PAYLOAD_TRANSPORT_HEADER, 13, 1);
	e = expr(m, "bitwise", &d);
	netns_nl_attr_be32(m, NFTA_BITWISE_SREG, NFT_REG_1);
	netns_nl_attr_be32(m, NFTA_BITWISE_DREG, NFT_REG_1);
	netns_nl_attr_be32(m, NFTA_BITWISE_LEN, 1);
	data_value(m, NFTA_BITWISE_MASK, &mask, 1);
	data_value(m, NFTA_BITWISE_XOR, &z, 1);
	expr_end(m, e, d);
	cmp_eq(m, &rst_ack, 1);
	payload_load(m, NFT_PAYLOAD_TRANSPORT_HEADER, 4, 4);
	cmp_eq(m, &zero, 4);
	limit_log(m, NETNS_EXPLAIN_RESET);
	netns_nl_nest_end(m, list);
}

static void chain_msg(struct netns_nlbuf *m, uint32_t seq, const char *name, const char *type,
		      int32_t prio)
{
	size_t at = nft_msg(m, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWCHAIN,
			    NLM_F_CREATE | NLM_F_ACK, seq, NFPROTO_INET, 0);
	size_t hook;

	netns_nl_attr_str(m, NFTA_CHAIN_TABLE, "halo_explain");
	netns_nl_attr_str(m, NFTA_CHAIN_NAME, name);
	hook = netns_nl_nest(m, NFTA_CHAIN_HOOK);
	netns_nl_attr_be32(m, NFTA_HOOK_HOOKNUM, NF_INET_LOCAL_OUT);
	netns_nl_attr_be32(m, NFTA_HOOK_PRIORITY, (uint32_t)prio);
	netns_nl_nest_end(m, hook);
	netns_nl_attr_str(m, NFTA_CHAIN_TYPE, type);
	netns_nl_msg_end(m, at);
}

static void rule_msg(struct netns_nlbuf *m, uint32_t seq, const char *chain, int kind)
{
	size_t at = nft_msg(m, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWRULE,
			    NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK, seq, NFPROTO_INET, 0);

	netns_nl_attr_str(m, NFTA_RULE_TABLE, "halo_explain");
	netns_nl_attr_str(m, NFTA_RULE_CHAIN, chain);
	if (kind < 4)
		literal_exprs(m, kind & 2 ? NFPROTO_IPV6 : NFPROTO_IPV4, kind & 1);
	else
		reset_exprs(m);
	netns_nl_msg_end(m, at);
}

/* The explanations' table, its two chains and five rules: eight messages. */
static unsigned explain_msgs(struct netns_nlbuf *m, uint32_t *seq)
{
	size_t at = nft_msg(m, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWTABLE,
			    NLM_F_CREATE | NLM_F_ACK, (*seq)++, NFPROTO_INET, 0);

	netns_nl_attr_str(m, NFTA_TABLE_NAME, "halo_explain");
	netns_nl_msg_end(m, at);
	chain_msg(m, (*seq)++, "literal", "nat", -90); /* after the capture's -100 */
	chain_msg(m, (*seq)++, "reset", "filter", 0);
	for (int kind = 0; kind < 4; kind++) /* v4 log, v4 redirect, v6 log, v6 redirect */
		rule_msg(m, (*seq)++, "literal", kind);
	rule_msg(m, (*seq)++, "reset", 4);
	return 8;
}

/* One nf_tables batch (all of it or nothing, the kernel's transaction): the capture's
 * messages, the explanations', or both. */
static int nft_batch(bool redirect, bool explain, uint16_t port)
{
	struct netns_nlbuf m = {.len = 0};
	uint32_t seq = 1;
	unsigned acks = 0;

	netns_nl_msg_end(
	    &m, nft_msg(&m, NFNL_MSG_BATCH_BEGIN, 0, seq++, AF_UNSPEC, NFNL_SUBSYS_NFTABLES));
	if (redirect)
		acks += redirect_msgs(&m, &seq, port);
	if (explain)
		acks += explain_msgs(&m, &seq);
	netns_nl_msg_end(&m,
			 nft_msg(&m, NFNL_MSG_BATCH_END, 0, seq, AF_UNSPEC, NFNL_SUBSYS_NFTABLES));
	return netns_nl_request(NETLINK_NETFILTER, &m, acks);
}

/* ip [-6] rule add ipproto tcp lookup T pref P; ip [-6] route add local default dev lo
 * table T [src 127.0.0.1]: without a route a connect() to an address fails with
 * ENETUNREACH before any packet, and nothing could tell. TCP only: UDP keeps its
 * ENETUNREACH. The source is loopback (v4: the address itself would be, and the
 * kernel refuses a source that is not in the local table). */
static unsigned literal_route_msgs(struct netns_nlbuf *m, int family, uint32_t *seq)
{
	struct fib_rule_hdr fr = {.family = (uint8_t)family, .action = FR_ACT_TO_TBL};
	struct rtmsg rt = {.rtm_family = (uint8_t)family,
			   .rtm_table = RT_TABLE_UNSPEC,
			   .rtm_protocol = RTPROT_BOOT,
			   .rtm_scope = RT_SCOPE_HOST,
			   .rtm_type = RTN_LOCAL};
	uint32_t oif = netns_nl_lo_index(), lo4 = htonl(INADDR_LOOPBACK);
	uint8_t tcp = IPPROTO_TCP;
	size_t at;

	at = netns_nl_msg(m, RTM_NEWRULE, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, (*seq)++, &fr,
			  sizeof(fr));
	netns_nl_attr(m, FRA_TABLE, &(uint32_t){NETNS_EXPLAIN_TABLE}, 4);
	netns_nl_attr(m, FRA_PRIORITY, &(uint32_t){NETNS_EXPLAIN_TABLE}, 4);
	netns_nl_attr(m, FRA_IP_PROTO, &tcp, 1);
	netns_nl_msg_end(m, at);
	at = netns_nl_msg(m, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, (*seq)++, &rt,
			  sizeof(rt));
	netns_nl_attr(m, RTA_TABLE, &(uint32_t){NETNS_EXPLAIN_TABLE}, 4);
	netns_nl_attr(m, RTA_OIF, &oif, 4);
	if (family == AF_INET)
		netns_nl_attr(m, RTA_PREFSRC, &lo4, 4);
	netns_nl_msg_end(m, at);
	return 2;
}

/* Both families' rules and routes in one send (rtnetlink takes each message on its
 * own: a namespace without IPv6 still gets the IPv4 pair, and reports the IPv6
 * pair's error). */
static int add_literal_routes(void)
{
	struct netns_nlbuf m = {.len = 0};
	uint32_t seq = 1;
	unsigned acks;

	if (!netns_nl_lo_index())
		return -ENODEV;
	acks = literal_route_msgs(&m, AF_INET, &seq);
	acks += literal_route_msgs(&m, AF_INET6, &seq);
	return netns_nl_request(NETLINK_ROUTE, &m, acks);
}

int netns_explain_setup(void)
{
	int rc = nft_batch(false, true, 0);

	if (rc == 0)
		rc = add_literal_routes();
	return rc;
}

/* The capture and the explanations in one nf_tables batch, a transaction: a kernel
 * that refuses the explanations (no inet nat, limit or log) refuses it whole, and gets
 * the capture alone. Explanations are a courtesy, the capture is not: without them the
 * capture stays. */
int netns_capture_setup(void)
{
	int rc = add_local_route();

	if (rc < 0)
		return rc;
	if (nft_batch(true, true, NETNS_CAPTURE_PORT) == 0) {
		add_literal_routes();
		return 0;
	}
	if ((rc = nft_batch(true, false, NETNS_CAPTURE_PORT)) == 0)
		netns_explain_setup();
	return rc;
}
