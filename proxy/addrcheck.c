/* The address rule the proxy applies after resolution, and `halo-run check --resolve`,
 * which applies the same rule to the same lookup without a proxy: a name is refused
 * when any of its addresses is private, loopback, link-local, metadata... (policy/)
 * and not covered by allowPrivate, or is one of this host's own interface addresses
 * (a public address the host itself answers on is the host, not the internet). */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proxy/proxy_int.h"

/* This host's interface addresses, in a new array. 0 or -errno. */
static int load_ifaddrs(struct proxy_addr **out, size_t *count)
{
	struct ifaddrs *ifa = NULL;
	struct proxy_addr *a = NULL;
	size_t n = 0, cap = 0;

	if (getifaddrs(&ifa) != 0)
		return -errno;
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		struct proxy_addr pa = {0};

		if (!i->ifa_addr)
			continue;
		if (i->ifa_addr->sa_family == AF_INET) {
			pa.family = AF_INET;
			memcpy(pa.addr, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			pa.family = AF_INET6;
			memcpy(pa.addr, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
		} else {
			continue;
		}
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 8;
			struct proxy_addr *g = realloc(a, nc * sizeof(*a));
			if (!g)
				break;
			a = g;
			cap = nc;
		}
		a[n++] = pa;
	}
	freeifaddrs(ifa);
	*out = a;
	*count = n;
	return 0;
}

static void ifaddrs_load(struct proxy *px)
{
	struct proxy_addr *a = NULL;
	size_t n = 0;

	px->ifaddrs_at = proxy_now_ms();
	if (load_ifaddrs(&a, &n) != 0)
		return; /* keep the previous list */
	free(px->ifaddrs);
	px->ifaddrs = a;
	px->n_ifaddrs = n;
}

int proxy_set_ifaddrs(struct proxy *px, const struct proxy_addr *a, size_t n)
{
	struct proxy_addr *copy = calloc(n ? n : 1, sizeof(*a));

	if (!copy)
		return -ENOMEM;
	memcpy(copy, a, n * sizeof(*a));
	free(px->ifaddrs);
	px->ifaddrs = copy;
	px->n_ifaddrs = n;
	px->ifaddrs_fixed = true;
	return 0;
}

/* ::ffff:a.b.c.d is a.b.c.d for this comparison: a dual-stack socket would reach it. */
static bool same_addr(const struct proxy_addr *x, const struct proxy_addr *y)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	const uint8_t *xa = x->addr, *ya = y->addr;
	int xf = x->family, yf = y->family;

	if (xf == AF_INET6 && memcmp(xa, mapped, 12) == 0) {
		xf = AF_INET;
		xa += 12;
	}
	if (yf == AF_INET6 && memcmp(ya, mapped, 12) == 0) {
		yf = AF_INET;
		ya += 12;
	}
	return xf == yf && memcmp(xa, ya, xf == AF_INET ? 4 : 16) == 0;
}

/* The rule itself, against a given list of the host's own addresses. */
static bool addr_judge(const struct halo_policy *p, const struct proxy_addr *a,
		       const struct proxy_addr *ifs, size_t n_ifs, const char **cls)
{
	enum policy_addr_class c;

	if (!policy_addr_permitted(p, a->family, a->addr, &c)) {
		*cls = policy_addr_class_name(c);
		return false;
	}
	for (size_t i = 0; i < n_ifs; i++) {
		if (!same_addr(a, &ifs[i]))
			continue;
		for (size_t k = 0; k < p->n_cidrs; k++)
			if (policy_cidr_match(&p->cidrs[k], a->family, a->addr))
				return true;
		*cls = "interface";
		return false;
	}
	return true;
}

/* The interface list is refreshed at most every PROXY_IFADDR_REFRESH_MS, when an
 * address is checked: cheap (one netlink dump), and a DHCP renewal is seen soon. */
const struct proxy_addr *proxy_own_addrs(struct proxy *px, size_t *n)
{
	if (!px->ifaddrs_fixed &&
	    (px->ifaddrs_at == 0 || proxy_now_ms() - px->ifaddrs_at >= PROXY_IFADDR_REFRESH_MS))
		ifaddrs_load(px);
	*n = px->n_ifaddrs;
	return px->ifaddrs;
}

bool proxy_addr_ok(struct proxy *px, const struct proxy_addr *a, const char **cls)
{
	size_t n;
	const struct proxy_addr *own = proxy_own_addrs(px, &n);

	return addr_judge(px->o.policy, a, own, n, cls);
}

int proxy_resolve_check(const struct halo_policy *p, const char *name, struct proxy_resolved *out,
			size_t max, size_t *n)
{
	struct proxy_addr a[PROXY_RESOLVE_MAX_ADDRS], *ifs = NULL;
	size_t got = 0, n_ifs = 0;
	int rc = proxy_lookup_system(name, a, PROXY_RESOLVE_MAX_ADDRS, &got);

	*n = 0;
	if (rc < 0)
		return rc;
	(void)load_ifaddrs(&ifs, &n_ifs); /* none known: only the class rule applies */
	for (size_t i = 0; i < got && *n < max; i++) {
		struct proxy_resolved *r = &out[(*n)++];
		r->family = a[i].family;
		memcpy(r->addr, a[i].addr, sizeof(r->addr));
		r->cls = NULL;
		r->ok = addr_judge(p, &a[i], ifs, n_ifs, &r->cls);
		inet_ntop(a[i].family, a[i].addr, r->text, sizeof(r->text));
	}
	free(ifs);
	return 0;
}
