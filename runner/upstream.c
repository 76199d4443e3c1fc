/* egress.upstreamProxy at launch: the caller's proxy variables read once (for `env`)
 * and the credentials from $HALO_UPSTREAM_PROXY_AUTH or the caller's URL. The
 * variables never enter the sandbox: env/env.c rewrites every proxy variable to
 * halo-run's own proxy and never passes HALO_UPSTREAM_PROXY_AUTH.
 *
 * Whether the command could reach the upstream itself (allowed as a target, through
 * hostPorts, through an address of this host allowPrivate covers) is decided here on
 * the upstream's looked-up addresses and this host's own (getifaddrs), compared by
 * policy_addr_is_local; nothing is dialled. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <stdio.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>

#include "runner/runner_int.h"

static struct policy_upstream settled;

#define UP_MAX_ADDRS 64
#define UP_MAX_OWN   1024 /* a host with many addresses: none may be missed */

static struct policy_ipaddr settled_addrs[UP_MAX_ADDRS];
static size_t n_settled_addrs;

/* The addresses the upstream is, and this host's own: what the host-port relay and an
 * allowed target are compared with. Looked up once here, at launch; policy/ compares. */
struct up_view {
	struct policy_ipaddr addrs[UP_MAX_ADDRS], own[UP_MAX_OWN];
	size_t n_addrs, n_own;
	bool overflow; /* an address did not fit: the comparison would miss it */
};

static void push(struct policy_ipaddr *v, size_t *n, size_t cap, int family, const void *addr,
		 bool *overflow)
{
	if (*n >= cap) {
		*overflow = true;
		return;
	}
	v[*n].family = family;
	memset(v[*n].addr, 0, sizeof(v[*n].addr));
	memcpy(v[*n].addr, addr, family == AF_INET ? 4 : 16);
	(*n)++;
}

static int up_resolve(const struct policy_upstream *u, struct up_view *v, char *why, size_t n)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
	int rc;

	if (u->host.kind != POLICY_HOST_NAME) {
		push(v->addrs, &v->n_addrs, UP_MAX_ADDRS,
		     u->host.kind == POLICY_HOST_IPV4 ? AF_INET : AF_INET6, u->host.addr,
		     &v->overflow);
		return 0;
	}
	rc = getaddrinfo(u->host.text, NULL, &hints, &res);
	if (rc != 0) {
		snprintf(why, n, "%s", rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	for (struct addrinfo *a = res; a; a = a->ai_next)
		if (a->ai_family == AF_INET)
			push(v->addrs, &v->n_addrs, UP_MAX_ADDRS, AF_INET,
			     &((struct sockaddr_in *)a->ai_addr)->sin_addr, &v->overflow);
		else if (a->ai_family == AF_INET6)
			push(v->addrs, &v->n_addrs, UP_MAX_ADDRS, AF_INET6,
			     &((struct sockaddr_in6 *)a->ai_addr)->sin6_addr, &v->overflow);
	freeaddrinfo(res);
	return v->n_addrs ? 0 : (snprintf(why, n, "no address"), -EHOSTUNREACH);
}

/* This host's interface addresses, compared and never dialled; the two loopbacks too,
 * so that a host without them listed still counts them as its own. */
static int up_own(struct up_view *v)
{
	static const uint8_t lo4[4] = {127, 0, 0, 1}, lo6[16] = {[15] = 1};
	struct ifaddrs *ifa = NULL;

	push(v->own, &v->n_own, UP_MAX_OWN, AF_INET, lo4, &v->overflow);
	push(v->own, &v->n_own, UP_MAX_OWN, AF_INET6, lo6, &v->overflow);
	if (getifaddrs(&ifa) != 0)
		return -errno;
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET)
			push(v->own, &v->n_own, UP_MAX_OWN, AF_INET,
			     &((struct sockaddr_in *)i->ifa_addr)->sin_addr, &v->overflow);
		else if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET6)
			push(v->own, &v->n_own, UP_MAX_OWN, AF_INET6,
			     &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, &v->overflow);
	freeifaddrs(ifa);
	return 0;
}

static const char *addr_text(const struct policy_ipaddr *a, char *buf, size_t n)
{
	if (!inet_ntop(a->family, a->addr, buf, (socklen_t)n))
		snprintf(buf, n, "?");
	return buf;
}

static bool upstream_is_local(const struct up_view *v)
{
	for (size_t i = 0; i < v->n_addrs; i++)
		if (policy_addr_is_local(&v->addrs[i], v->own, v->n_own))
			return true;
	return false;
}

/* egress.hostPorts relays the host's loopback inside: when the upstream is this host
 * (by any name: localhost, localhost., 0.0.0.0, its own address, a caller's
 * HTTPS_PROXY) and its port is listed, the command talks to the upstream directly. */
static int upstream_host_port(const struct halo_policy *p, const struct policy_upstream *u,
			      const struct up_view *v)
{
	char at[INET6_ADDRSTRLEN];
	size_t k = 0;
	int i = policy_upstream_host_port(p, u, v->addrs, v->n_addrs, v->own, v->n_own, &k);

	if (i < 0)
		return 0;
	fprintf(stderr,
		"halo-run: egress.hostPorts[%d] %u is %s's port, and the upstream %s is this "
		"host (%s): through the host-port relay the command would reach the upstream "
		"directly, and every host it serves, unchecked; leave it out of hostPorts\n",
		i, u->port, u->from, u->host.text, addr_text(&v->addrs[k], at, sizeof(at)));
	return -EPERM;
}

/* The upstream on this host and one of the host's addresses an allowed target on its
 * port, which allowPrivate lets the proxy dial: the same way through. */
static int upstream_local_target(const struct halo_policy *p, const struct policy_upstream *u,
				 const struct up_view *v)
{
	struct policy_decision d;
	char at[INET6_ADDRSTRLEN], rule[192];

	for (size_t i = 0; upstream_is_local(v) && i < v->n_own + v->n_addrs; i++) {
		const struct policy_ipaddr *a = i < v->n_own ? &v->own[i] : &v->addrs[i - v->n_own];
		bool covered = false;

		for (size_t k = 0; k < p->n_cidrs && !covered; k++)
			covered = policy_cidr_match(&p->cidrs[k], a->family, a->addr);
		addr_text(a, at, sizeof(at));
		if (!covered || policy_decide_port(p, at, strlen(at), u->port, &d) != 0 || !d.allow)
			continue;
		policy_decision_rule(&d, rule, sizeof(rule));
		fprintf(
		    stderr,
		    "halo-run: %s %s:%u is this host, and %s:%u is an allowed target (%s) "
		    "that egress.allowPrivate lets the proxy dial: through it the command would "
		    "reach the upstream directly, unchecked; deny it or narrow the rule\n",
		    u->from, u->host.text, u->port, at, u->port, rule);
		return -EPERM;
	}
	return 0;
}

/* The upstream as a target: a tunnel to it is a proxy that reaches every host the
 * company's proxy does, none of them decided here (and its NO_PROXY often names its
 * own domain, so halo-run would dial it directly). Allowed, the launch is refused. */
static int upstream_allowed(const struct halo_policy *p, const struct policy_upstream *u)
{
	struct policy_decision d;
	char rule[192];
	int fam = u->host.kind == POLICY_HOST_IPV4 ? AF_INET : AF_INET6;

	if (policy_decide_port(p, u->host.text, strlen(u->host.text), u->port, &d) != 0 || !d.allow)
		return 0;
	/* An address the proxy refuses anyway (a cntlm on the host's loopback, a private
	 * address allowPrivate does not cover) is no way through. A name is judged
	 * without resolving it: refused. */
	if (u->host.kind != POLICY_HOST_NAME && !policy_addr_permitted(p, fam, u->host.addr, NULL))
		return 0;
	policy_decision_rule(&d, rule, sizeof(rule));
	fprintf(stderr,
		"halo-run: egress.upstreamProxy %s%s%s:%u is itself allowed (%s): through a "
		"tunnel to it the command would reach every host it serves, unchecked; deny it "
		"in deniedDomains or narrow the rule\n",
		u->host.kind == POLICY_HOST_IPV6 ? "[" : "", u->host.text,
		u->host.kind == POLICY_HOST_IPV6 ? "]" : "", u->port, rule);
	return -EPERM;
}

/* The upstream's addresses are looked up only when they matter: its port among
 * hostPorts, or an allowPrivate that could let the proxy dial this host. A name that
 * does not resolve then cannot be shown to be elsewhere: refused. */
static int upstream_exposed(const struct halo_policy *p, const struct policy_upstream *u)
{
	struct up_view *v;
	bool listed = false;
	char why[200];
	int rc;

	for (size_t i = 0; i < p->host_ports.n; i++)
		listed |= p->host_ports.items[i] == u->port;
	v = calloc(1, sizeof(*v));
	if (!v) {
		fprintf(stderr, "halo-run: out of memory\n");
		return -ENOMEM;
	}
	rc = up_resolve(u, v, why, sizeof(why));
	/* Kept for the proxy, which refuses a target at one of them on the upstream's port. */
	n_settled_addrs = v->n_addrs;
	memcpy(settled_addrs, v->addrs, v->n_addrs * sizeof(v->addrs[0]));
	if (rc < 0 && !listed && p->n_cidrs == 0)
		rc = 0; /* not needed now; the proxy looks it up when it dials */
	else if (rc < 0)
		fprintf(stderr,
			"halo-run: %s %s: cannot be looked up (%s), so halo-run cannot tell "
			"whether egress.%s reaches it; refused\n",
			u->from, u->host.text, why, listed ? "hostPorts" : "allowPrivate");
	else if ((rc = up_own(v)) < 0)
		fprintf(stderr, "halo-run: this host's addresses (getifaddrs): %s\n",
			strerror(-rc));
	else if (v->overflow) {
		/* A missed address is a way to the upstream nobody compared: refused. */
		fprintf(stderr,
			"halo-run: %s %s: more than %d addresses, or this host more than %d: "
			"halo-run cannot compare them all with egress.%s; refused\n",
			u->from, u->host.text, UP_MAX_ADDRS, UP_MAX_OWN,
			listed ? "hostPorts" : "allowPrivate");
		rc = -E2BIG;
	}
	if (rc == 0)
		rc = upstream_host_port(p, u, v);
	if (rc == 0)
		rc = upstream_local_target(p, u, v);
	free(v);
	return rc;
}

int runner_upstream_settle(const struct halo_policy *p, struct policy_upstream *out)
{
	struct policy_upstream_env env = {
	    .https_proxy = getenv("https_proxy"),
	    .HTTPS_PROXY = getenv("HTTPS_PROXY"),
	    .http_proxy = getenv("http_proxy"),
	    .HTTP_PROXY = getenv("HTTP_PROXY"),
	    .all_proxy = getenv("all_proxy"),
	    .ALL_PROXY = getenv("ALL_PROXY"),
	    .no_proxy = getenv("no_proxy"),
	    .NO_PROXY = getenv("NO_PROXY"),
	    .auth = getenv(POLICY_UPSTREAM_AUTH_ENV),
	};
	char why[400];

	if (policy_upstream_resolve(p, &env, out, why, sizeof(why)) < 0) {
		fprintf(stderr, "halo-run: %s\n", why);
		return HALO_EXIT_SETUP;
	}
	if (out->on && (upstream_allowed(p, out) < 0 || upstream_exposed(p, out) < 0))
		return HALO_EXIT_SETUP;
	settled = *out;
	return 0;
}

const struct policy_upstream *runner_upstream(void)
{
	return settled.on ? &settled : NULL;
}

const struct policy_ipaddr *runner_upstream_addrs(size_t *n)
{
	*n = settled.on ? n_settled_addrs : 0;
	return settled_addrs;
}

void runner_upstream_describe(const struct halo_policy *p, const struct policy_upstream *u,
			      char *buf, size_t n)
{
	bool v6 = u->host.kind == POLICY_HOST_IPV6;

	if (!p->upstream_proxy || p->mode == POLICY_MODE_OFF) {
		snprintf(buf, n, "direct (no egress.upstreamProxy)");
		return;
	}
	if (!u->on) {
		snprintf(
		    buf, n,
		    "direct (egress.upstreamProxy: env, and the caller sets no "
		    "https_proxy, HTTPS_PROXY, http_proxy, HTTP_PROXY, all_proxy or ALL_PROXY)");
		return;
	}
	snprintf(buf, n, "http://%s%s%s:%u (from %s; credentials: %s%s%s)", v6 ? "[" : "",
		 u->host.text, v6 ? "]" : "", u->port, u->from,
		 u->auth_from ? u->auth_from : "none", u->no_proxy[0] ? "; NO_PROXY: " : "",
		 u->no_proxy);
}
