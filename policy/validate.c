/* Validation of the egress block, the gateway, modes, limits and the environment;
 * each rule has its own message naming the field and the reason. Path rules live
 * in validate_paths.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "policy/policy_int.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void vdiag(const struct policy_vctx *v, bool error, const char *field, const char *fmt,
		  va_list ap)
{
	char msg[900];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	policy_diag(v->d, error, v->src, 0, field, "%s", msg);
}

void policy_verr(const struct policy_vctx *v, const char *field, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdiag(v, true, field, fmt, ap);
	va_end(ap);
}

void policy_vwarn(const struct policy_vctx *v, const char *field, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdiag(v, false, field, fmt, ap);
	va_end(ap);
}

static bool check_domains(const struct policy_list *l, const char *name,
			  const struct policy_vctx *v)
{
	char field[64], why[256], q[POLICY_QUOTE_MAX];
	bool ok = true;

	for (size_t i = 0; i < l->n; i++) {
		if (policy_pattern_check(l->items[i], why, sizeof(why)) == 0)
			continue;
		snprintf(field, sizeof(field), "egress.%s[%zu]", name, i);
		policy_verr(v, field, "%s: %s", policy_quote(l->items[i], q, sizeof(q)), why);
		ok = false;
	}
	return ok;
}

static bool check_presets(const struct policy_list *l, const struct policy_vctx *v)
{
	char field[64], known[256] = "", q[POLICY_QUOTE_MAX];
	size_t n, len = 0;
	const struct policy_preset *all = policy_presets(&n);
	bool ok = true;

	for (size_t k = 0; k < n && len < sizeof(known); k++)
		len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s", k ? ", " : "",
					all[k].name);
	for (size_t i = 0; i < l->n; i++) {
		if (policy_preset_find(l->items[i]))
			continue;
		snprintf(field, sizeof(field), "egress.presets[%zu]", i);
		policy_verr(v, field, "unknown preset %s (known: %s)",
			    policy_quote(l->items[i], q, sizeof(q)), known);
		ok = false;
	}
	return ok;
}

static bool check_gateway(const struct halo_policy *p, const struct policy_vctx *v)
{
	char why[256], q[POLICY_QUOTE_MAX];

	if (!p->gateway)
		return true;
	policy_quote(p->gateway, q, sizeof(q));
	if (!*p->gateway) {
		policy_verr(v, "gateway", "is empty");
		return false;
	}
	if (p->gateway[0] == '*') {
		policy_verr(v, "gateway", "%s: must be one host, not a wildcard", q);
		return false;
	}
	if (policy_pattern_check(p->gateway, why, sizeof(why)) < 0) {
		policy_verr(v, "gateway", "%s: %s", q, why);
		return false;
	}
	return true;
}

/* Cloud metadata endpoints hand out credentials; a CIDR that covers one deserves
 * a second look even when it is meant. */
static void warn_metadata(const struct policy_cidr *c, size_t i, const struct policy_vctx *v)
{
	static const uint8_t v4[4] = {169, 254, 169, 254};
	static const uint8_t v6[16] = {0xfd, 0, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x54};
	char field[64];

	if (!policy_cidr_match(c, AF_INET, v4) && !policy_cidr_match(c, AF_INET6, v6))
		return;
	snprintf(field, sizeof(field), "egress.allowPrivate[%zu]", i);
	policy_diag(v->d, false, v->src, 0, field,
		    "covers a cloud metadata address (169.254.169.254 or fd00:ec2::254)");
}

static void check_cidrs(struct halo_policy *p, const struct policy_vctx *v)
{
	char field[64], why[256], q[POLICY_QUOTE_MAX];

	if (p->allow_private.n > POLICY_MAX_CIDRS) {
		policy_verr(v, "egress.allowPrivate", "too many entries (%zu; at most %d)",
			    p->allow_private.n, POLICY_MAX_CIDRS);
		return;
	}
	p->cidrs = calloc(p->allow_private.n + 1, sizeof(*p->cidrs));
	if (!p->cidrs) {
		policy_verr(v, "egress.allowPrivate", "out of memory");
		return;
	}
	for (size_t i = 0; i < p->allow_private.n; i++) {
		struct policy_cidr *c = &p->cidrs[p->n_cidrs];

		snprintf(field, sizeof(field), "egress.allowPrivate[%zu]", i);
		if (policy_cidr_parse(p->allow_private.items[i], c, why, sizeof(why)) < 0) {
			policy_verr(v, field, "%s: %s",
				    policy_quote(p->allow_private.items[i], q, sizeof(q)), why);
			continue;
		}
		p->n_cidrs++;
		warn_metadata(c, i, v);
	}
}

/* The sandbox's own proxy ports inside its namespace: a host port there would have no
 * listener to take it. */
static const struct {
	uint16_t port;
	const char *what;
} reserved_ports[] = {
    {POLICY_PROXY_HTTP_PORT, "halo-run's own HTTP proxy port inside the sandbox"},
    {POLICY_PROXY_SOCKS_PORT, "halo-run's own SOCKS5 proxy port inside the sandbox"},
    {POLICY_PROXY_CAPTURE_PORT, "halo-run's own capture port inside the sandbox"},
};

static void check_host_ports(const struct halo_policy *p, const struct policy_vctx *v)
{
	const struct policy_ports *l = &p->host_ports;
	char field[64];

	if (l->n > POLICY_MAX_HOST_PORTS) {
		policy_verr(v, "egress.hostPorts", "too many entries (%zu; at most %d)", l->n,
			    POLICY_MAX_HOST_PORTS);
		return;
	}
	for (size_t i = 0; i < l->n; i++) {
		snprintf(field, sizeof(field), "egress.hostPorts[%zu]", i);
		for (size_t k = 0; k < N(reserved_ports); k++)
			if (l->items[i] == reserved_ports[k].port)
				policy_verr(v, field,
					    "%u is %s and cannot be forwarded to the host",
					    (unsigned)l->items[i], reserved_ports[k].what);
		for (size_t k = 0; k < i; k++)
			if (l->items[k] == l->items[i]) {
				policy_verr(v, field,
					    "%u is listed twice (also egress.hostPorts[%zu])",
					    (unsigned)l->items[i], k);
				break;
			}
	}
}

/* The URL form only: `env` is resolved at launch (policy_upstream_resolve). */
static void check_upstream(const struct halo_policy *p, const struct policy_vctx *v)
{
	struct policy_upstream u;
	char why[256], q[POLICY_QUOTE_MAX];

	if (!p->upstream_proxy || strcmp(p->upstream_proxy, "env") == 0)
		return;
	if (policy_upstream_parse(p->upstream_proxy, false, &u, why, sizeof(why)) < 0)
		policy_verr(v, "egress.upstreamProxy", "%s: %s",
			    policy_quote(p->upstream_proxy, q, sizeof(q)), why);
}

void policy_validate_egress(struct halo_policy *p, const struct policy_vctx *v, bool *domains_ok)
{
	bool ok = true;

	ok &= check_domains(&p->allowed_domains, "allowedDomains", v);
	ok &= check_domains(&p->denied_domains, "deniedDomains", v);
	ok &= check_presets(&p->presets, v);
	ok &= check_gateway(p, v);
	*domains_ok = ok;
	check_cidrs(p, v);
	check_host_ports(p, v);
	check_upstream(p, v);
	if (p->egress_default == POLICY_EGRESS_ALLOW && (p->allowed_domains.n || p->presets.n))
		policy_verr(
		    v, "egress.default",
		    "'allow' together with an allowlist (egress.allowedDomains or "
		    "egress.presets) makes the allowlist meaningless; use deny, or drop the "
		    "allowlist and list what to block in egress.deniedDomains");
}

/* ------------------------------------------------------------ misc */

static void check_mode_off(const struct halo_policy *p, const struct policy_vctx *v)
{
	const struct {
		const char *field;
		bool present;
	} rules[] = {
	    {"egress.default", p->egress_default != POLICY_EGRESS_UNSET},
	    {"egress.allowedDomains", p->allowed_domains.n > 0},
	    {"egress.presets", p->presets.n > 0},
	    {"egress.deniedDomains", p->denied_domains.n > 0},
	    {"egress.allowPrivate", p->allow_private.n > 0},
	    {"egress.hostPorts", p->host_ports.n > 0},
	    {"egress.upstreamProxy", p->upstream_proxy != NULL},
	    {"egress.credentials", p->n_creds > 0},
	    {"egress.requestRules", p->n_req_rules > 0},
	    {"sandbox.writableRoots", p->writable_roots.n > 0},
	    {"sandbox.protectedPaths", p->protected_paths.n > 0},
	    {"sandbox.allowRead", p->allow_read.n > 0},
	    {"sandbox.caches", p->caches != POLICY_CACHES_UNSET},
	    {"sandbox.unixSockets", p->unix_sockets.n > 0},
	    {"sandbox.macos.allowTrustd", p->macos_allow_trustd == 1},
	};

	if (p->mode != POLICY_MODE_OFF)
		return;
	for (size_t i = 0; i < N(rules); i++)
		if (rules[i].present)
			policy_verr(v, rules[i].field,
				    "not allowed with sandbox.mode off (nothing would enforce it)");
}

static void check_limits(struct halo_policy *p, const struct policy_vctx *v)
{
	char field[64], why[160];

	for (size_t i = 0; i < policy_n_limit_fields; i++) {
		const struct policy_limit_field *f = &policy_limit_fields[i];
		long long val = *policy_limit_ptr(&p->limits, f);

		if (val == POLICY_LIMIT_UNSET ||
		    policy_limit_check(f, (double)val, why, sizeof(why)) == 0)
			continue;
		snprintf(field, sizeof(field), "limits.%s", f->key);
		policy_verr(v, field, "%s", why);
	}
}

static bool env_name_ok(const char *s)
{
	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* Names the runner owns, or that load code into every sandboxed process. A policy
 * is shared and layered; it must not be able to steer these. */
static const char *env_reserved(const char *name)
{
	static const char *const proxies[] = {"http_proxy", "https_proxy", "all_proxy",
					      "ftp_proxy",  "no_proxy",	   "socks_proxy"};

	if (strncasecmp(name, "HALO_", 5) == 0)
		return "HALO_* names belong to halo-run (it sets HALO_SANDBOX itself)";
	if (strncmp(name, "LD_", 3) == 0 || strncmp(name, "DYLD_", 5) == 0)
		return "dynamic-loader variables (LD_PRELOAD, LD_LIBRARY_PATH, DYLD_*) inject "
		       "code into every sandboxed process and cannot come from a policy";
	for (size_t i = 0; i < N(proxies); i++)
		if (strcasecmp(name, proxies[i]) == 0)
			return "the proxy variables are set by halo-run to point at its egress "
			       "proxy";
	if (strcmp(name, "TMPDIR") == 0)
		return "halo-run sets TMPDIR to the sandbox's own temporary directory";
	return NULL;
}

static void check_env_name(const char *name, const char *field, const struct policy_vctx *v)
{
	char q[POLICY_QUOTE_MAX];
	const char *why;

	if (!env_name_ok(name)) {
		policy_verr(v, field, "%s is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)",
			    policy_quote(name, q, sizeof(q)));
		return;
	}
	why = env_reserved(name);
	if (why)
		policy_verr(v, field, "%s is reserved: %s", policy_quote(name, q, sizeof(q)), why);
}

static void check_env(const struct halo_policy *p, const struct policy_vctx *v)
{
	char field[300];

	if (p->env_pass.n > POLICY_MAX_ENV || p->n_env_set > POLICY_MAX_ENV) {
		policy_verr(v, p->env_pass.n > POLICY_MAX_ENV ? "env.pass" : "env.set",
			    "too many entries (at most %d)", POLICY_MAX_ENV);
		return;
	}
	for (size_t i = 0; i < p->env_pass.n; i++) {
		snprintf(field, sizeof(field), "env.pass[%zu]", i);
		check_env_name(p->env_pass.items[i], field, v);
	}
	for (size_t i = 0; i < p->n_env_set; i++) {
		policy_field_join(field, sizeof(field), "env.set", p->env_set[i].key, -1);
		check_env_name(p->env_set[i].key, field, v);
	}
}

static void check_legacy(const struct halo_policy *p, const struct policy_vctx *v)
{
	enum policy_mode m;
	char q[POLICY_QUOTE_MAX];

	if (!p->legacy_permissions_sandbox)
		return;
	policy_quote(p->legacy_permissions_sandbox, q, sizeof(q));
	if (policy_mode_parse(p->legacy_permissions_sandbox, &m) < 0)
		policy_verr(v, "permissions.sandbox",
			    "unknown mode %s (expected off, workspace-write or read-only)", q);
	else if (p->mode != POLICY_MODE_UNSET && p->mode != m)
		policy_verr(v, "permissions.sandbox", "%s disagrees with sandbox.mode '%s'", q,
			    policy_mode_name(p->mode));
}

void policy_validate_misc(struct halo_policy *p, const struct policy_vctx *v)
{
	check_legacy(p, v);
	check_mode_off(p, v);
	if (p->macos_allow_trustd == 1 && p->mode != POLICY_MODE_OFF)
		policy_diag(v->d, false, v->src, 0, "sandbox.macos.allowTrustd",
			    "on macOS the command may ask trustd and ocspd to evaluate "
			    "certificates; they fetch the URLs a certificate names (intermediates, "
			    "OCSP, CRLs) from outside the sandbox, past the proxy and the audit: "
			    "an egress path the policy does not decide");
	check_limits(p, v);
	check_env(p, v);
}
