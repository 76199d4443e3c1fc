/* Address classes: what the proxy checks after resolution and before it dials.  Tables
 * follow the IANA special-purpose registries; anything outside 2000::/3 that no row
 * names is treated as reserved, so a range IANA assigns later fails closed.
 *
 * IPv6 forms that carry an IPv4 address are unwrapped and the IPv4 classified:
 *  - ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible) reach a.b.c.d on this host;
 *  - 64:ff9b::a.b.c.d (NAT64, RFC 6052) reaches a.b.c.d through the NAT64 gateway, so
 *    a public inner address is a public destination;
 *  - 6to4 (2002::/16) and Teredo (2001::/32) send traffic through a tunnel relay to an
 *    endpoint we cannot check.  A special inner address gets its own class (loopback,
 *    private...); a public one is still TRANSLATION: the tunnel, not the embedded
 *    address, decides where the bytes go, and nobody needs it to reach a registry. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy.h"

#define V4(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((c) << 8) | (d))

struct v4_range {
	uint32_t net;
	unsigned prefix;
	enum policy_addr_class cls;
};

/* Most specific rows first: the first match wins. */
static const struct v4_range v4_table[] = {
    {V4(169, 254, 169, 254), 32, POLICY_ADDR_METADATA}, /* AWS, GCP, Azure, OCI... */
    {V4(169, 254, 170, 2), 32, POLICY_ADDR_METADATA},	/* AWS ECS task metadata */
    {V4(100, 100, 100, 200), 32, POLICY_ADDR_METADATA}, /* Alibaba Cloud */
    {V4(255, 255, 255, 255), 32, POLICY_ADDR_BROADCAST},
    {V4(0, 0, 0, 0), 8, POLICY_ADDR_UNSPECIFIED}, /* "this network"; 0.0.0.0 dials localhost */
    {V4(10, 0, 0, 0), 8, POLICY_ADDR_PRIVATE},
    {V4(100, 64, 0, 0), 10, POLICY_ADDR_CGNAT},
    {V4(127, 0, 0, 0), 8, POLICY_ADDR_LOOPBACK},
    {V4(169, 254, 0, 0), 16, POLICY_ADDR_LINK_LOCAL},
    {V4(172, 16, 0, 0), 12, POLICY_ADDR_PRIVATE},
    {V4(192, 0, 0, 0), 24, POLICY_ADDR_RESERVED}, /* IETF protocol assignments */
    {V4(192, 0, 2, 0), 24, POLICY_ADDR_DOCUMENTATION},
    {V4(192, 88, 99, 0), 24, POLICY_ADDR_RESERVED}, /* deprecated 6to4 relay anycast */
    {V4(192, 168, 0, 0), 16, POLICY_ADDR_PRIVATE},
    {V4(198, 18, 0, 0), 15, POLICY_ADDR_BENCHMARK},
    {V4(198, 51, 100, 0), 24, POLICY_ADDR_DOCUMENTATION},
    {V4(203, 0, 113, 0), 24, POLICY_ADDR_DOCUMENTATION},
    {V4(224, 0, 0, 0), 4, POLICY_ADDR_MULTICAST},
    {V4(240, 0, 0, 0), 4, POLICY_ADDR_RESERVED},
};

enum v6_action {
	V6_CLASS,  /* the row's class */
	V6_UNWRAP, /* classify the IPv4 at byte `off` */
	V6_TUNNEL, /* IPv4 at `off` (Teredo: inverted); public inner -> TRANSLATION */
};

struct v6_range {
	uint8_t net[16];
	unsigned prefix;
	enum v6_action act;
	enum policy_addr_class cls;
	unsigned off;
	bool invert;
};

/* First match wins, so the host routes and narrow rows precede their covering blocks. */
static const struct v6_range v6_table[] = {
    {{0}, 128, V6_CLASS, POLICY_ADDR_UNSPECIFIED, 0, false},
    {{[15] = 1}, 128, V6_CLASS, POLICY_ADDR_LOOPBACK, 0, false},
    {{[10] = 0xff, [11] = 0xff}, 96, V6_UNWRAP, 0, 12, false}, /* ::ffff:0:0/96 mapped */
    {{0}, 96, V6_UNWRAP, 0, 12, false},			       /* ::/96 compatible */
    {{0, 0x64, 0xff, 0x9b}, 96, V6_UNWRAP, 0, 12, false},      /* 64:ff9b::/96 NAT64 */
    {{0, 0x64, 0xff, 0x9b, 0, 1}, 48, V6_CLASS, POLICY_ADDR_TRANSLATION, 0, false},
    {{0x01}, 64, V6_CLASS, POLICY_ADDR_RESERVED, 0, false}, /* 100::/64 discard */
    {{0x20, 0x01}, 32, V6_TUNNEL, 0, 12, true},		    /* Teredo */
    {{0x20, 0x01, 0, 0x02}, 48, V6_CLASS, POLICY_ADDR_BENCHMARK, 0, false},
    {{0x20, 0x01}, 23, V6_CLASS, POLICY_ADDR_RESERVED, 0, false}, /* IETF protocol block */
    {{0x20, 0x01, 0x0d, 0xb8}, 32, V6_CLASS, POLICY_ADDR_DOCUMENTATION, 0, false},
    {{0x20, 0x02}, 16, V6_TUNNEL, 0, 2, false},			       /* 6to4 */
    {{0x3f, 0xff}, 20, V6_CLASS, POLICY_ADDR_DOCUMENTATION, 0, false}, /* RFC 9637 */
    {{0x5f, 0x00}, 16, V6_CLASS, POLICY_ADDR_RESERVED, 0, false},      /* SRv6 SIDs */
    {{0xfd, 0x00, 0x0e, 0xc2, [15] = 0x54, [14] = 0x02},
     128,
     V6_CLASS,
     POLICY_ADDR_METADATA,
     0,
     false}, /* fd00:ec2::254, AWS IMDS over IPv6 */
    {{0xfc}, 7, V6_CLASS, POLICY_ADDR_UNIQUE_LOCAL, 0, false},
    {{0xfe, 0x80}, 10, V6_CLASS, POLICY_ADDR_LINK_LOCAL, 0, false},
    {{0xfe, 0xc0}, 10, V6_CLASS, POLICY_ADDR_SITE_LOCAL, 0, false},
    {{0xff}, 8, V6_CLASS, POLICY_ADDR_MULTICAST, 0, false},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static bool prefix_eq(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;

	if (memcmp(a, b, whole) != 0)
		return false;
	if (rest == 0)
		return true;
	return ((a[whole] ^ b[whole]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

static enum policy_addr_class classify_v4(const uint8_t *a)
{
	uint32_t v = V4(a[0], a[1], (uint32_t)a[2], a[3]);

	for (size_t i = 0; i < N(v4_table); i++) {
		uint32_t mask = v4_table[i].prefix ? ~0u << (32 - v4_table[i].prefix) : 0;
		if ((v & mask) == v4_table[i].net)
			return v4_table[i].cls;
	}
	return POLICY_ADDR_PUBLIC;
}

static enum policy_addr_class classify_v6(const uint8_t *a)
{
	for (size_t i = 0; i < N(v6_table); i++) {
		const struct v6_range *r = &v6_table[i];
		uint8_t inner[4];
		enum policy_addr_class c;

		if (!prefix_eq(a, r->net, r->prefix))
			continue;
		if (r->act == V6_CLASS)
			return r->cls;
		for (size_t k = 0; k < 4; k++)
			inner[k] = r->invert ? (uint8_t)~a[r->off + k] : a[r->off + k];
		c = classify_v4(inner);
		if (r->act == V6_TUNNEL && c == POLICY_ADDR_PUBLIC)
			return POLICY_ADDR_TRANSLATION;
		return c;
	}
	return (a[0] & 0xe0) == 0x20 ? POLICY_ADDR_PUBLIC : POLICY_ADDR_RESERVED;
}

enum policy_addr_class policy_addr_classify(int family, const uint8_t *addr)
{
	if (!addr)
		return POLICY_ADDR_RESERVED;
	if (family == AF_INET)
		return classify_v4(addr);
	if (family == AF_INET6)
		return classify_v6(addr);
	return POLICY_ADDR_RESERVED;
}

static const char *const class_names[] = {
    [POLICY_ADDR_PUBLIC] = "public",
    [POLICY_ADDR_UNSPECIFIED] = "unspecified",
    [POLICY_ADDR_LOOPBACK] = "loopback",
    [POLICY_ADDR_PRIVATE] = "private",
    [POLICY_ADDR_LINK_LOCAL] = "link-local",
    [POLICY_ADDR_CGNAT] = "cgnat",
    [POLICY_ADDR_MULTICAST] = "multicast",
    [POLICY_ADDR_BROADCAST] = "broadcast",
    [POLICY_ADDR_METADATA] = "metadata",
    [POLICY_ADDR_DOCUMENTATION] = "documentation",
    [POLICY_ADDR_BENCHMARK] = "benchmark",
    [POLICY_ADDR_RESERVED] = "reserved",
    [POLICY_ADDR_UNIQUE_LOCAL] = "unique-local",
    [POLICY_ADDR_SITE_LOCAL] = "site-local",
    [POLICY_ADDR_TRANSLATION] = "translation",
};

const char *policy_addr_class_name(enum policy_addr_class c)
{
	if ((unsigned)c >= N(class_names) || !class_names[c])
		return "unknown";
	return class_names[c];
}

/* ---------------------------------------------------------------- CIDRs */

static int parse_prefix(const char *s, unsigned max, unsigned *out, char *why, size_t whylen)
{
	size_t n = strlen(s);
	unsigned v = 0;

	if (n == 0) {
		snprintf(why, whylen, "empty prefix length after '/'");
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || n > 3 || (n > 1 && s[0] == '0')) {
			snprintf(why, whylen, "prefix length '%s' is not a plain decimal number",
				 s);
			return -EINVAL;
		}
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v > max) {
		snprintf(why, whylen, "prefix length /%u is longer than %u", v, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static void mask_addr(uint8_t *a, size_t len, unsigned prefix)
{
	for (size_t i = 0; i < len; i++) {
		unsigned keep = prefix >= 8 * (i + 1) ? 8 : prefix > 8 * i ? prefix - 8 * i : 0;
		a[i] &= (uint8_t)(0xff00 >> keep);
	}
}

int policy_cidr_parse(const char *text, struct policy_cidr *out, char *why, size_t whylen)
{
	struct policy_host h;
	char inner[160], net[INET6_ADDRSTRLEN];
	const char *slash;
	size_t alen, blen;
	unsigned max;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!text || !*text) {
		snprintf(why, whylen, "empty CIDR");
		return -EINVAL;
	}
	slash = strchr(text, '/');
	alen = slash ? (size_t)(slash - text) : strlen(text);
	rc = policy_host_parse(text, alen, true, &h, inner, sizeof(inner));
	if (rc) {
		snprintf(why, whylen, "invalid address in CIDR '%s': %s", text, inner);
		return rc;
	}
	if (h.kind == POLICY_HOST_NAME) {
		snprintf(why, whylen, "'%.*s' is not an IP address", (int)alen, text);
		return -EINVAL;
	}
	out->family = h.kind == POLICY_HOST_IPV4 ? AF_INET : AF_INET6;
	blen = out->family == AF_INET ? 4 : 16;
	max = (unsigned)blen * 8;
	memcpy(out->addr, h.addr, blen);
	out->prefix = max; /* no prefix: a single host */
	if (slash && (rc = parse_prefix(slash + 1, max, &out->prefix, why, whylen)) != 0)
		return rc;
	mask_addr(out->addr, blen, out->prefix);
	if (memcmp(out->addr, h.addr, blen) != 0) {
		inet_ntop(out->family, out->addr, net, sizeof(net));
		snprintf(why, whylen, "host bits set in '%s' (the network is %s/%u)", text, net,
			 out->prefix);
		return -EINVAL;
	}
	return 0;
}

static bool is_mapped(const uint8_t *a)
{
	static const uint8_t pfx[12] = {[10] = 0xff, [11] = 0xff};

	return memcmp(a, pfx, 12) == 0;
}

/* An IPv4 CIDR also covers the IPv4-mapped form of its addresses (and an IPv6 CIDR over
 * ::ffff:0:0/96 covers the plain IPv4), since a dual-stack socket dials both the same. */
bool policy_cidr_match(const struct policy_cidr *c, int family, const uint8_t *addr)
{
	uint8_t mapped[16] = {[10] = 0xff, [11] = 0xff};

	if (!c || !addr)
		return false;
	if (c->family == AF_INET && c->prefix > 32)
		return false;
	if (c->family == AF_INET6 && c->prefix > 128)
		return false;
	if (c->family == family && (family == AF_INET || family == AF_INET6))
		return prefix_eq(addr, c->addr, c->prefix);
	if (c->family == AF_INET && family == AF_INET6 && is_mapped(addr))
		return prefix_eq(addr + 12, c->addr, c->prefix);
	if (c->family == AF_INET6 && family == AF_INET) {
		memcpy(mapped + 12, addr, 4);
		return prefix_eq(mapped, c->addr, c->prefix);
	}
	return false;
}

bool policy_addr_permitted(const struct halo_policy *p, int family, const uint8_t *addr,
			   enum policy_addr_class *cls)
{
	enum policy_addr_class c = policy_addr_classify(family, addr);

	if (cls)
		*cls = c;
	if (family != AF_INET && family != AF_INET6)
		return false;
	if (c == POLICY_ADDR_PUBLIC)
		return true;
	for (size_t i = 0; p && i < p->n_cidrs; i++)
		if (policy_cidr_match(&p->cidrs[i], family, addr))
			return true;
	return false;
}
