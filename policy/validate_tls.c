/* Validation of egress.credentials, egress.requestRules and egress.trustedCAs. Runs
 * after the Decide index is built: a credential or a rule is only for a host the
 * policy allows. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "policy/policy_int.h"

/* Header fields the proxy owns (framing, hop-by-hop, the target): a credential may
 * not set them. */
static const char *const reserved_headers[] = {
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "te",
    "trailer",
    "upgrade",
    "proxy-authorization",
    "proxy-connection",
    "expect",
    "x-halo-deny",
    "x-halo-error",
    NULL,
};

static bool tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* A host entry: a name or "*.name", no port, allowed by Decide() (for a wildcard, a
 * name under it must be). */
static bool host_ok(const struct halo_policy *p, const struct policy_vctx *v, const char *field,
		    const char *host)
{
	char why[256], q[POLICY_QUOTE_MAX], probe[POLICY_HOST_MAX + 8];
	struct policy_decision d;
	size_t hl;
	unsigned port;

	if (!host || policy_pattern_check(host, why, sizeof(why)) != 0) {
		policy_verr(v, field, "%s: %s", policy_quote(host ? host : "", q, sizeof(q)),
			    host ? why : "missing");
		return false;
	}
	if (policy_pattern_split(host, &hl, &port, why, sizeof(why)) != 0 || port ||
	    strchr(host, '[') || strchr(host, ':')) {
		policy_verr(v, field, "%s: a host name without a port",
			    policy_quote(host, q, sizeof(q)));
		return false;
	}
	snprintf(probe, sizeof(probe), "%s%s", strncmp(host, "*.", 2) == 0 ? "halo-probe" : "",
		 strncmp(host, "*.", 2) == 0 ? host + 1 : host);
	if (policy_decide(p, probe, strlen(probe), &d) != 0 || !d.allow) {
		policy_verr(v, field,
			    "%s is not allowed by egress (the proxy would never reach it)",
			    policy_quote(host, q, sizeof(q)));
		return false;
	}
	if (d.host.kind != POLICY_HOST_NAME) {
		policy_verr(v, field,
			    "%s: a host name, not an IP address (certificates are minted per name)",
			    policy_quote(host, q, sizeof(q)));
		return false;
	}
	return true;
}

static void check_header(const struct policy_vctx *v, const char *field, const char *h)
{
	char q[POLICY_QUOTE_MAX];
	size_t n = h ? strlen(h) : 0;

	for (size_t i = 0; i < n; i++)
		if (!tchar((unsigned char)h[i])) {
			policy_verr(v, field, "%s is not a header field name (RFC 9110 token)",
				    policy_quote(h, q, sizeof(q)));
			return;
		}
	if (n == 0 || n > 64) {
		policy_verr(v, field, "a header field name of 1 to 64 characters");
		return;
	}
	for (size_t i = 0; reserved_headers[i]; i++)
		if (strcasecmp(h, reserved_headers[i]) == 0)
			policy_verr(
			    v, field,
			    "%s is a field the proxy owns (framing, hop-by-hop or the target)",
			    policy_quote(h, q, sizeof(q)));
	if (policy_request_override_field(h, n))
		policy_verr(v, field,
			    "%s makes some origins run another method or path than the request "
			    "line's (what requestRules check)",
			    policy_quote(h, q, sizeof(q)));
}

static const char *probe_lookup(void *arg, const char *name)
{
	(void)arg;
	(void)name;
	return "x";
}

/* The template only: its variables are read at launch (runner/), never here. */
static void check_value(const struct halo_policy *p, const struct policy_vctx *v, const char *field,
			const char *val)
{
	char out[4096], why[200], name[128];
	size_t pos = 0;
	bool vars = false;

	if (!val || policy_credential_expand(val, probe_lookup, NULL, out, sizeof(out), why,
					     sizeof(why)) != 0) {
		policy_verr(v, field, "%s", val ? why : "missing");
		return;
	}
	while (policy_credential_next_var(val, &pos, name, sizeof(name))) {
		vars = true;
		if (policy_list_contains(&p->env_pass, name))
			policy_verr(
			    v, field,
			    "${%s} is also in env.pass: the credential would enter the sandbox; "
			    "drop it from env.pass",
			    name);
	}
	if (!vars)
		policy_vwarn(
		    v, field,
		    "a literal value in the policy file; write ${NAME} and keep the secret in "
		    "the caller's environment");
}

static void check_credentials(const struct halo_policy *p, const struct policy_vctx *v)
{
	char field[96];

	for (size_t i = 0; i < p->n_creds; i++) {
		const struct policy_credential *c = &p->creds[i];

		snprintf(field, sizeof(field), "egress.credentials[%zu].host", i);
		if (host_ok(p, v, field, c->host)) {
			for (size_t k = 0; k < i; k++)
				if (p->creds[k].host && strcmp(p->creds[k].host, c->host) == 0)
					policy_verr(
					    v, field,
					    "%s has a credential already (credentials[%zu])",
					    c->host, k);
			if (p->egress_default_allow || policy_effective_default_allow(p, false))
				policy_vwarn(
				    v, field,
				    "egress.default allow: the same server is reachable by plain "
				    "tunnel under an IP literal or another name; the credential is "
				    "only sent to requests naming %s",
				    c->host);
		}
		snprintf(field, sizeof(field), "egress.credentials[%zu].header", i);
		check_header(v, field, c->header);
		snprintf(field, sizeof(field), "egress.credentials[%zu].value", i);
		check_value(p, v, field, c->value);
	}
}

static void check_methods(const struct policy_vctx *v, const char *field,
			  const struct policy_list *l)
{
	char q[POLICY_QUOTE_MAX];

	if (l->set && l->n == 0)
		policy_verr(v, field,
			    "empty: the rule would allow no request (drop the rule instead)");
	for (size_t i = 0; i < l->n; i++) {
		const char *m = l->items[i];
		size_t n = strlen(m), k = 0;

		while (k < n && m[k] >= 'A' && m[k] <= 'Z')
			k++;
		if (n == 0 || k != n || n > 20)
			policy_verr(v, field, "%s: a method in upper case letters (GET, POST...)",
				    policy_quote(m, q, sizeof(q)));
	}
}

static void check_paths(const struct policy_vctx *v, const char *field, const struct policy_list *l)
{
	char q[POLICY_QUOTE_MAX];

	if (l->set && l->n == 0)
		policy_verr(v, field,
			    "empty: the rule would allow no request (drop the rule instead)");
	for (size_t i = 0; i < l->n; i++) {
		const char *s = l->items[i];
		bool bad = s[0] != '/' || strlen(s) > 1024;

		for (size_t k = 0; !bad && s[k]; k++)
			bad = (unsigned char)s[k] <= 0x20 || (unsigned char)s[k] >= 0x7f ||
			      strchr("?#\\", s[k]);
		if (bad)
			policy_verr(
			    v, field,
			    "%s: a path starting with '/', printable ASCII without space, '?', "
			    "'#' or '\\' ('*' matches any run of characters)",
			    policy_quote(s, q, sizeof(q)));
	}
}

static void check_rules(const struct halo_policy *p, const struct policy_vctx *v)
{
	char field[96];

	for (size_t i = 0; i < p->n_req_rules; i++) {
		const struct policy_request_rule *r = &p->req_rules[i];

		snprintf(field, sizeof(field), "egress.requestRules[%zu].host", i);
		host_ok(p, v, field, r->host);
		snprintf(field, sizeof(field), "egress.requestRules[%zu].methods", i);
		check_methods(v, field, &r->methods);
		snprintf(field, sizeof(field), "egress.requestRules[%zu].paths", i);
		check_paths(v, field, &r->paths);
	}
}

static void check_cas(const struct halo_policy *p, const struct policy_vctx *v)
{
	char field[64], q[POLICY_QUOTE_MAX];

	for (size_t i = 0; i < p->trusted_cas.n; i++) {
		const char *f = p->trusted_cas.items[i];

		snprintf(field, sizeof(field), "egress.trustedCAs[%zu]", i);
		if (f[0] != '/' || policy_has_glob(f))
			policy_verr(v, field, "%s: an absolute file path (PEM certificates)",
				    policy_quote(f, q, sizeof(q)));
	}
	if (p->trusted_cas.n && !policy_tls_wanted(p))
		policy_vwarn(
		    v, "egress.trustedCAs",
		    "only used for hosts with credentials or requestRules (other tunnels are "
		    "not terminated)");
}

/* Is this allowlist entry a way to the host's servers that the proxy does not
 * terminate? An IP literal (a tunnel to the server's address with no SNI passes), or a
 * wildcard covering the host's siblings (a front that answers for several names may
 * route by the Host header inside TLS: domain fronting). Entries that are themselves
 * terminated are not. */
static const char *other_way(const struct halo_policy *p, const char *host, const char *entry)
{
	char why[64];
	struct policy_host h;
	size_t hl, el;
	unsigned port;

	if (policy_pattern_split(entry, &el, &port, why, sizeof(why)) != 0)
		return NULL;
	if (strncmp(entry, "*.", 2) != 0) {
		if (policy_host_parse(entry, el, true, &h, why, sizeof(why)) == 0 &&
		    h.kind != POLICY_HOST_NAME)
			return "an IP literal (a tunnel to that address with no SNI is not judged)";
		return NULL;
	}
	hl = strlen(host);
	if (hl <= el - 1 || strncmp(host + hl - (el - 1), entry + 1, el - 1) != 0)
		return NULL;
	for (size_t i = 0; i < p->n_creds + p->n_req_rules; i++) {
		const char *t =
		    i < p->n_creds ? p->creds[i].host : p->req_rules[i - p->n_creds].host;
		if (t && strlen(t) == el && strncmp(t, entry, el) == 0)
			return NULL;
	}
	return "a wildcard over its sibling names, which are tunnelled plain (a shared front may "
	       "route by the Host header inside TLS)";
}

static void warn_other_ways(const struct halo_policy *p, const struct policy_vctx *v,
			    const char *field, const char *host)
{
	for (size_t i = 0; host && i < p->allowed_domains.n; i++) {
		const char *why = other_way(p, host, p->allowed_domains.items[i]);
		if (why)
			policy_vwarn(
			    v, field,
			    "%s is also reachable another way: egress.allowedDomains[%zu] %s is %s",
			    host, i, p->allowed_domains.items[i], why);
	}
	for (size_t i = 0; host && i < p->presets.n; i++) {
		const struct policy_preset *pr = policy_preset_find(p->presets.items[i]);

		for (size_t k = 0; pr && k < pr->n; k++) {
			const char *why = other_way(p, host, pr->entries[k].pattern);
			if (why)
				policy_vwarn(
				    v, field,
				    "%s is also reachable another way: preset %s's %s is %s", host,
				    pr->name, pr->entries[k].pattern, why);
		}
	}
}

void policy_validate_tls(struct halo_policy *p, const struct policy_vctx *v)
{
	char field[96];

	for (size_t i = 0; i < p->n_creds; i++) {
		snprintf(field, sizeof(field), "egress.credentials[%zu].host", i);
		warn_other_ways(p, v, field, p->creds[i].host);
	}
	for (size_t i = 0; i < p->n_req_rules; i++) {
		snprintf(field, sizeof(field), "egress.requestRules[%zu].host", i);
		warn_other_ways(p, v, field, p->req_rules[i].host);
	}
	if (policy_tls_wanted(p) && p->egress_default_allow)
		policy_vwarn(
		    v, "egress.default",
		    "allow: hosts with credentials or requestRules are reachable by plain tunnel "
		    "under an IP literal or another name, where nothing is judged");
	check_credentials(p, v);
	check_rules(p, v);
	check_cas(p, v);
}
