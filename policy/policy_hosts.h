/* Part of policy/policy.h (include that): host names and addresses as the policy
 * writes them, and the one Decide() that judges a host. */
#ifndef HALO_POLICY_HOSTS_H
#define HALO_POLICY_HOSTS_H

#include "policy/policy.h"

/* ---------------------------------------------------------------- hosts */

enum policy_host_kind {
	POLICY_HOST_NAME,
	POLICY_HOST_IPV4,
	POLICY_HOST_IPV6,
};

struct policy_host {
	enum policy_host_kind kind;
	char text[POLICY_HOST_MAX + 1]; /* canonical: lower case, no trailing dot, v6 without [] */
	uint8_t addr[16];		/* for IP literals: 4 or 16 bytes, network order */
};

/* Strict host grammar of DESIGN.md. `in` is exactly `len` bytes (may contain NUL,
 * which is refused). IPv6 must come bracketed ("[::1]") unless allow_bare_v6.
 * Returns 0 or -EINVAL with the reason in why. */
int policy_host_parse(const char *in, size_t len, bool allow_bare_v6, struct policy_host *out,
		      char *why, size_t whylen);

/* A target for `halo-run check`: host, host:port, [v6]:port, or a URL whose authority is
 * parsed strictly (userinfo is dropped: https://a.com@b.com/ targets b.com). port is 0
 * when none was given. */
int policy_target_parse(const char *target, struct policy_host *host, unsigned *port, char *why,
			size_t whylen);

/* Is `pattern` a valid domain-list entry (lower case, no URL or bare star, optional
 * leading "*.", optional ":PORT": host:port, *.x:port, [v6]:port)? 0 or -EINVAL with why. */
int policy_pattern_check(const char *pattern, char *why, size_t whylen);

/* The port of a domain-list entry: *host_len is the length of what precedes ":PORT"
 * (the whole entry when there is none), *port 0 when there is none. A bare IPv6 literal
 * ("::1:80") has no port: a port after an IPv6 address needs brackets. 0 or -EINVAL. */
int policy_pattern_split(const char *pattern, size_t *host_len, unsigned *port, char *why,
			 size_t whylen);

/* The one "*.x" rule (pattern.c), for every reader of a host entry: Decide()'s index,
 * credentials and request rules, the renderings, the names with fixed addresses. An
 * entry without "*." matches the identical host; "*.x" matches the names strictly
 * below x (a.x, a.b.x), never x itself. Both sides canonical (lower case, no trailing
 * dot), without a port; NULL matches nothing. An IP literal never matches a wildcard:
 * a wildcard's suffix is a name (policy_pattern_check), whose last label is never all
 * digits, while an IPv4 literal's (and a v4-in-v6 form's) is. */
bool policy_host_match(const char *pattern, const char *host);
/* The suffix of a wildcard entry ("*.x" -> "x"), or NULL for any other entry. */
const char *policy_pattern_wild(const char *pattern);
/* Is host (hl bytes) a name strictly below name (nl bytes): a label, a dot, then name? */
bool policy_name_under(const char *host, size_t hl, const char *name, size_t nl);

/* The one loopback-name rule (addr_names.c): the canonical names that mean this
 * machine's loopback wherever they are resolved: localhost and every name below it
 * (RFC 6761 6.3), localhost.localdomain, ip6-localhost, ip6-loopback ("localhost." is
 * "localhost" once canonical). No IP literal: those are classified by address. */
bool policy_loopback_name(const char *name);

/* A hex digit's value, or -1: the one copy for every parser of %XX escapes, \xHH
 * escapes and chunk sizes. */
static inline int policy_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* ---------------------------------------------------------------- addresses */

enum policy_addr_class {
	POLICY_ADDR_PUBLIC = 0,
	POLICY_ADDR_UNSPECIFIED,
	POLICY_ADDR_LOOPBACK,
	POLICY_ADDR_PRIVATE,
	POLICY_ADDR_LINK_LOCAL,
	POLICY_ADDR_CGNAT,
	POLICY_ADDR_MULTICAST,
	POLICY_ADDR_BROADCAST,
	POLICY_ADDR_METADATA,
	POLICY_ADDR_DOCUMENTATION,
	POLICY_ADDR_BENCHMARK,
	POLICY_ADDR_RESERVED,
	POLICY_ADDR_UNIQUE_LOCAL,
	POLICY_ADDR_SITE_LOCAL,
	POLICY_ADDR_TRANSLATION, /* a v6 wrapper whose inner IPv4 cannot be trusted */
};

/* Classify an address, unwrapping IPv4-mapped, -compatible, NAT64, 6to4 and Teredo
 * forms to the IPv4 they carry. `addr` is 4 bytes (AF_INET) or 16 (AF_INET6). */
enum policy_addr_class policy_addr_classify(int family, const uint8_t *addr);
const char *policy_addr_class_name(enum policy_addr_class c);

int policy_cidr_parse(const char *text, struct policy_cidr *out, char *why, size_t whylen);
bool policy_cidr_match(const struct policy_cidr *c, int family, const uint8_t *addr);

/* The proxy's question after resolution: may we connect to this address? True for a
 * public address, or a special one covered by allowPrivate. */
bool policy_addr_permitted(const struct halo_policy *p, int family, const uint8_t *addr,
			   enum policy_addr_class *cls);

/* Would the address rule refuse every connection to this domain-list entry ("host",
 * "host:port", "*.x", an IP literal)? True for an IP literal policy_addr_permitted()
 * refuses, and for a name whose addresses are fixed (localhost and every name under
 * it, localhost.localdomain, ip6-localhost, the cloud metadata names) when none of
 * them is permitted; *cls (may be NULL) then says why. False for any other name: its
 * addresses are known only after resolution. */
bool policy_entry_address_refused(const struct halo_policy *p, const char *entry,
				  enum policy_addr_class *cls);
/* The names with fixed addresses that the wildcard entry "*.x" (or "*.x:port") covers
 * and the address rule refuses (*.google.internal covers metadata.google.internal),
 * one per call: *iter starts at 0; NULL when none is left. A rendering keeps the
 * wildcard and denies each of them, so that no harness allows what halo-run refuses. */
const char *policy_wildcard_refused_name(const struct halo_policy *p, const char *entry,
					 size_t *iter);

/* ---------------------------------------------------------------- Decide */

enum policy_rule {
	POLICY_RULE_DEFAULT,
	POLICY_RULE_DENIED,  /* deniedDomains[index] */
	POLICY_RULE_ALLOWED, /* allowedDomains[index] */
	POLICY_RULE_PRESET,  /* presets[index], entry pattern */
	POLICY_RULE_INVALID_HOST,
	POLICY_RULE_MODE_OFF, /* sandbox.mode off: no egress control */
	/* Never set by Decide(): the proxy's mark for an answer of the harness's decider
	 * (--decider), asked only when policy_decision_unmatched(). */
	POLICY_RULE_DECIDER,
	/* Never set by Decide(): `halo-run learn`'s mark for a host the default denied,
	 * allowed and recorded instead (policy_decision_learn). */
	POLICY_RULE_LEARNED,
	/* Set only by policy_decide_target(): egress.hostPorts[index], a loopback name or
	 * address with a listed port, reached at the host's loopback. */
	POLICY_RULE_HOST_PORT,
};

struct policy_decision {
	bool allow;
	enum policy_rule rule;
	size_t index;
	const char *pattern;	 /* matching entry (points into the policy) */
	const char *preset;	 /* preset name for POLICY_RULE_PRESET */
	struct policy_host host; /* the parsed host (valid unless RULE_INVALID_HOST) */
	unsigned port;		 /* the port decided on (0: none) */
	char why[128];		 /* for RULE_INVALID_HOST */
};

/* The one decision function: a deny rule wins, then the allowlist (allowedDomains,
 * presets), then the default. The gateway is not allowed implicitly: validation
 * insists that a restricted policy allows it. Cost independent of the number of rules. */
int policy_decide(const struct halo_policy *p, const char *host, size_t len,
		  struct policy_decision *d);

/* The same for host:port. An entry without a port matches every port; one with a port
 * only that port. port 0 (not known) matches only entries without a port. */
int policy_decide_port(const struct halo_policy *p, const char *host, size_t len, unsigned port,
		       struct policy_decision *d);

/* What a connection to host:port gets, wherever it is asked (`halo-run check`, the
 * proxy's CONNECT, SOCKS5, forwarding and captured connections): a loopback name or
 * address with a port egress.hostPorts lists (policy_host_port_index) is allowed with
 * POLICY_RULE_HOST_PORT, whatever the domain lists say, as the sandbox's forwarding
 * listener relays it (the proxy dials the host's 127.0.0.1:PORT, then [::1]:PORT,
 * never anything else); every other target is policy_decide_port()'s. */
int policy_decide_target(const struct halo_policy *p, const char *host, size_t len, unsigned port,
			 struct policy_decision *d);

/* The distinct ports named by allow entries (allowedDomains, then the presets), at
 * most max of them (POLICY_MAX_NAMED_PORTS is plenty: ports are few). */
#define POLICY_MAX_NAMED_PORTS 256
size_t policy_allowed_ports(const struct halo_policy *p, unsigned *out, size_t max);

/* Could Decide() allow host on some port? The decision without a port when it
 * allows (or the host is invalid), else the first allowing one on a port an allow
 * entry names, else the portless denial. Same return as policy_decide_port. */
int policy_decide_some_port(const struct halo_policy *p, const char *host, size_t len,
			    struct policy_decision *d);

/* Is `path` `dir` or beneath it, compared case-insensitively, as validation compares
 * writable roots with protected paths (a case-insensitive volume has one file there).
 * Only for that overlap rule: a concrete path is judged with policy_path_beneath. */
bool policy_path_within(const char *path, const char *dir);

#endif
