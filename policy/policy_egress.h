/* Part of policy/policy.h (include that): egress.upstreamProxy and the TLS-level rules
 * (credentials, request rules). */
#ifndef HALO_POLICY_EGRESS_H
#define HALO_POLICY_EGRESS_H

#include "policy/policy.h"
#include "policy/policy_hosts.h"

/* ---------------------------------------------------------------- upstream proxy */

/* egress.upstreamProxy: after Decide() allows host:port, the proxy reaches it through
 * this HTTP proxy with CONNECT host:port (policy/upstream.c; proxy/upstream.c). */
#define POLICY_UPSTREAM_AUTH_MAX 512
#define POLICY_NO_PROXY_MAX	 2048
#define POLICY_UPSTREAM_AUTH_ENV "HALO_UPSTREAM_PROXY_AUTH" /* "user:password", never passed */

struct policy_upstream {
	bool on;		 /* false: every allowed host is dialled directly */
	struct policy_host host; /* the upstream proxy itself */
	unsigned port;
	char auth[POLICY_UPSTREAM_AUTH_MAX]; /* "user:password" for Basic; "" = none */
	char no_proxy[POLICY_NO_PROXY_MAX];  /* `env`: the caller's NO_PROXY, as given */
	const char *from;		     /* where the URL came from: "egress.upstreamProxy",
					      * "https_proxy", ... (static text) */
	const char *auth_from;		     /* where auth came from, or NULL */
};

/* http://HOST:PORT with an optional trailing "/": no other scheme, no path, query or
 * fragment, an explicit port (proxies agree on no default). `from_env`: the form the
 * caller's HTTPS_PROXY may take: the scheme may be left out, and userinfo is taken
 * (percent-decoded) into auth; in a policy file userinfo is refused. 0 or -EINVAL. */
int policy_upstream_parse(const char *url, bool from_env, struct policy_upstream *out, char *why,
			  size_t whylen);

/* The caller's environment at launch (any member may be NULL). */
struct policy_upstream_env {
	const char *https_proxy, *HTTPS_PROXY, *http_proxy, *HTTP_PROXY, *all_proxy, *ALL_PROXY;
	const char *no_proxy, *NO_PROXY;
	const char *auth; /* $HALO_UPSTREAM_PROXY_AUTH */
};

/* The upstream a run uses: off when the policy names none, or names `env` and the
 * caller has no proxy variable; else the policy's URL, or the caller's https_proxy,
 * HTTPS_PROXY, http_proxy, HTTP_PROXY, all_proxy, ALL_PROXY (first set, in that order;
 * ALL_PROXY last, as curl reads it) with NO_PROXY. A socks:// ALL_PROXY is refused.
 * Credentials: $HALO_UPSTREAM_PROXY_AUTH, else the userinfo of the caller's URL.
 * 0 or -EINVAL with why (naming the variable). */
int policy_upstream_resolve(const struct halo_policy *p, const struct policy_upstream_env *env,
			    struct policy_upstream *out, char *why, size_t whylen);

/* Is host:port to be dialled directly (the upstream's NO_PROXY names it)? Entries are
 * separated by commas or blanks: "*" (everything), a name (itself and its subdomains;
 * a leading "." or "*." means the same), an IP literal, each with an optional ":PORT". */
bool policy_upstream_bypass(const struct policy_upstream *u, const struct policy_host *h,
			    unsigned port);

/* An address as the runner's resolver or getifaddrs() gave it. */
struct policy_ipaddr {
	int family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];
};

/* The same address, IPv4-mapped and -compatible forms as the IPv4 they carry? */
bool policy_ipaddr_same(const struct policy_ipaddr *a, const struct policy_ipaddr *b);

/* Does a dial to `a` reach this host itself: a loopback or unspecified address (a
 * dial to 0.0.0.0 or :: lands on the host), or one of `own` (the host's interface
 * addresses, which the caller lists)? IPv4-mapped and -compatible forms compare as
 * the IPv4 they carry. Pure: the caller resolves and lists; this only compares. */
bool policy_addr_is_local(const struct policy_ipaddr *a, const struct policy_ipaddr *own,
			  size_t n_own);

/* Can a command reach the upstream through egress.hostPorts (relayed to the host's
 * loopback)? When one of the upstream's addresses is local and a hostPorts entry is
 * its port: that entry's index, and *local the address; else -1. */
int policy_upstream_host_port(const struct halo_policy *p, const struct policy_upstream *u,
			      const struct policy_ipaddr *addrs, size_t n_addrs,
			      const struct policy_ipaddr *own, size_t n_own, size_t *local);
/* ---------------------------------------------------------------- TLS-level rules
 * (policy/request.c): credentials and request rules, for the hosts whose TLS the proxy
 * terminates. Pure, like Decide(). */

/* Is this canonical host one whose TLS the proxy terminates (it has a credential or a
 * request rule)? Every other host keeps a plain (spliced) tunnel. */
bool policy_tls_terminated(const struct halo_policy *p, const char *host);
/* Does the policy terminate TLS for any host (then a per-run CA is made)? */
bool policy_tls_wanted(const struct halo_policy *p);

#define POLICY_REQ_RULE_MAX 320
struct policy_request_decision {
	bool applies; /* the host has request rules, or the request is judged anyway (a
		       * TRACE or TRACK to a host with a credential: always refused) */
	bool allow;
	size_t index;			/* requestRules[index] when allowed */
	char rule[POLICY_REQ_RULE_MAX]; /* "requestRules[0] api.github.com GET,HEAD /repos/acme/..."
					 * or "requestRules for api.github.com: no rule allows POST
					 * /gists" */
};

/* The one request decision, used by the proxy on every request of a terminated tunnel
 * (and of absolute-form forwarding) and by `halo-run check URL -X METHOD`. host is
 * canonical, method as sent, target the request-target as sent ("/path?query"). A path
 * that cannot be judged the way every origin reads it (dot segments, encoded dots,
 * slashes or backslashes, control bytes, not origin-form; after one decoding, a ';'
 * or a second layer of escapes of those) matches no rule. TRACE and TRACK to a host
 * with egress.credentials are refused, rules or not (the echo would carry the
 * credential). 0, or
 * -EINVAL (NULL arguments). */
int policy_decide_request(const struct halo_policy *p, const char *host, const char *method,
			  const char *target, struct policy_request_decision *d);
/* Is this request field name (not NUL-terminated) one that some origins take as the
 * method or the path instead of the request line's (X-HTTP-Method-Override,
 * X-Original-URL...)? A request carrying one to a host with request rules is denied,
 * and a credential may not set one. */
bool policy_request_override_field(const char *name, size_t len);

/* The credential for this canonical host (the first entry matching), or NULL. */
const struct policy_credential *policy_credential_for(const struct halo_policy *p, const char *host,
						      size_t *index);

/* Expand a credential template: "${NAME}" is lookup(arg, NAME) (names are
 * [A-Za-z_][A-Za-z0-9_]*; "$$" is a literal '$'). Returns 0 with the value in out,
 * -ENOENT when a variable is not set (why names it), -EINVAL for a malformed template or
 * a value holding CR, LF, NUL or another control byte, -ENOSPC. */
int policy_credential_expand(const char *tmpl, const char *(*lookup)(void *arg, const char *name),
			     void *arg, char *out, size_t n, char *why, size_t whylen);
/* The environment names a template references, one at a time: *pos starts at 0; false
 * at the end. */
bool policy_credential_next_var(const char *tmpl, size_t *pos, char *name, size_t n);

/* Build / free the hash index (called by policy_finalize). */
int policy_index_build(struct halo_policy *p);
void policy_index_free(struct policy_index *ix);

#endif
