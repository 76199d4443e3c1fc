/* Would the proxy's address rule refuse every connection to a domain-list entry,
 * whatever else the policy says? For IP literals that is policy_addr_permitted() (the
 * one classification); for names whose addresses are fixed (localhost and every name
 * under it, RFC 6761; the cloud metadata names) it is the same question asked of those
 * addresses. Renderings use it so that no harness allows what halo-run refuses, and
 * `check --harness` so that it compares the harness with what halo-run would do. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "policy/policy.h"

struct fixed_name {
	const char *name;
	bool subtree; /* every name below it too */
	const char *addr[2];
};

/* Names that resolve to special addresses on every host or cloud, whatever DNS says. */
static const struct fixed_name fixed[] = {
    {"localhost", true, {"127.0.0.1", "::1"}}, /* RFC 6761: always loopback */
    {"localhost.localdomain", false, {"127.0.0.1", "::1"}},
    {"ip6-localhost", false, {"::1", NULL}},
    {"ip6-loopback", false, {"::1", NULL}},
    {"metadata.google.internal", false, {"169.254.169.254", NULL}},
    {"metadata.goog", false, {"169.254.169.254", NULL}},
    {"metadata", false, {"169.254.169.254", NULL}},
    {"instance-data", false, {"169.254.169.254", NULL}},
    {"instance-data.ec2.internal", false, {"169.254.169.254", "fd00:ec2::254"}},
};

static const struct fixed_name *fixed_find(const char *host, size_t hl, bool wildcard)
{
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		const struct fixed_name *f = &fixed[i];
		bool exact = strlen(f->name) == hl && memcmp(f->name, host, hl) == 0;

		/* "*.localhost" names only names under localhost: all of them fixed. */
		if ((!wildcard && exact) ||
		    (f->subtree &&
		     (exact ? wildcard : policy_name_under(host, hl, f->name, strlen(f->name)))))
			return f;
	}
	return NULL;
}

/* Every fixed address of the name is loopback. */
static bool all_loopback(const struct fixed_name *f)
{
	for (size_t i = 0; i < 2 && f->addr[i]; i++) {
		uint8_t a[16];
		int fam = strchr(f->addr[i], ':') ? AF_INET6 : AF_INET;

		if (inet_pton(fam, f->addr[i], a) != 1 ||
		    policy_addr_classify(fam, a) != POLICY_ADDR_LOOPBACK)
			return false;
	}
	return true;
}

/* The loopback names are the rows of the table whose addresses are all loopback, so
 * that the list lives once. */
bool policy_loopback_name(const char *name)
{
	const struct fixed_name *f = name ? fixed_find(name, strlen(name), false) : NULL;

	return f && all_loopback(f);
}

/* Refused unless one of the name's fixed addresses is permitted. */
static bool fixed_refused(const struct halo_policy *p, const struct fixed_name *f,
			  enum policy_addr_class *cls)
{
	bool first = true;

	for (size_t i = 0; i < 2 && f->addr[i]; i++) {
		uint8_t a[16];
		int fam = strchr(f->addr[i], ':') ? AF_INET6 : AF_INET;
		enum policy_addr_class c;

		if (inet_pton(fam, f->addr[i], a) != 1)
			continue;
		if (policy_addr_permitted(p, fam, a, &c))
			return false;
		if (first && cls)
			*cls = c;
		first = false;
	}
	return true;
}

bool policy_entry_address_refused(const struct halo_policy *p, const char *entry,
				  enum policy_addr_class *cls)
{
	struct policy_host h;
	const struct fixed_name *f;
	size_t hl;
	unsigned port;
	char why[160];
	bool wildcard;

	if (!entry || policy_pattern_split(entry, &hl, &port, why, sizeof(why)) < 0)
		return false;
	wildcard = hl > 2 && strncmp(entry, "*.", 2) == 0;
	if (wildcard || policy_host_parse(entry, hl, true, &h, why, sizeof(why)) < 0 ||
	    h.kind == POLICY_HOST_NAME) {
		const char *name = wildcard ? entry + 2 : entry;
		size_t nl = wildcard ? hl - 2 : hl;

		f = fixed_find(name, nl, wildcard);
		return f && fixed_refused(p, f, cls);
	}
	return !policy_addr_permitted(p, h.kind == POLICY_HOST_IPV4 ? AF_INET : AF_INET6, h.addr,
				      cls);
}

const char *policy_wildcard_refused_name(const struct halo_policy *p, const char *entry,
					 size_t *iter)
{
	size_t hl, bl;
	unsigned port;
	char why[160];
	const char *base;

	if (!entry || strncmp(entry, "*.", 2) != 0 ||
	    policy_pattern_split(entry, &hl, &port, why, sizeof(why)) < 0 || hl <= 2)
		return NULL;
	base = entry + 2;
	bl = hl - 2;
	for (size_t k = *iter; k < sizeof(fixed) / sizeof(fixed[0]); k++) {
		const struct fixed_name *f = &fixed[k];

		/* Names under the wildcard's base; "*.localhost" itself is refused whole. */
		if (policy_name_under(f->name, strlen(f->name), base, bl) &&
		    fixed_refused(p, f, NULL)) {
			*iter = k + 1;
			return f->name;
		}
	}
	*iter = sizeof(fixed) / sizeof(fixed[0]);
	return NULL;
}
