/* The TLS-level rules: which hosts the proxy terminates, the request decision for
 * hosts with egress.requestRules, and the credential for a host. Pure: the proxy and
 * `halo-run check URL -X METHOD` call the same functions, so one request gets one
 * answer and one reason. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy/policy_int.h"

bool policy_tls_terminated(const struct halo_policy *p, const char *host)
{
	for (size_t i = 0; i < p->n_creds; i++)
		if (policy_host_match(p->creds[i].host, host))
			return true;
	for (size_t i = 0; i < p->n_req_rules; i++)
		if (policy_host_match(p->req_rules[i].host, host))
			return true;
	return false;
}

bool policy_tls_wanted(const struct halo_policy *p)
{
	return p->n_creds > 0 || p->n_req_rules > 0;
}

const struct policy_credential *policy_credential_for(const struct halo_policy *p, const char *host,
						      size_t *index)
{
	for (size_t i = 0; i < p->n_creds; i++)
		if (policy_host_match(p->creds[i].host, host)) {
			if (index)
				*index = i;
			return &p->creds[i];
		}
	return NULL;
}

/* ------------------------------------------------------------------ paths */

/* '*' matches any run of bytes ('/' included); everything else itself. Iterative
 * with one backtrack point: linear in practice, never exponential. */
static bool glob_match(const char *pat, const char *s, size_t n)
{
	const char *star = NULL;
	size_t i = 0, mark = 0;

	while (i < n) {
		if (*pat == '*') {
			star = pat++;
			mark = i;
		} else if (*pat && *pat == s[i]) {
			pat++;
			i++;
		} else if (star) {
			pat = star + 1;
			i = ++mark;
		} else {
			return false;
		}
	}
	while (*pat == '*')
		pat++;
	return *pat == '\0';
}

static bool hex2(const char *s, int *v)
{
	int hi = policy_hexval(s[0]), lo = hi < 0 ? -1 : policy_hexval(s[1]);

	*v = hi * 16 + lo;
	return hi >= 0 && lo >= 0;
}

/* Bytes that change a path's meaning once an origin (or a framework behind it)
 * decodes it: an escape of one of them must never get past the rules. A byte
 * 0x80-0xFF is one too: decoded as (lenient) UTF-8 or by a best-fit code page, an
 * overlong form (%c0%ae, %c0%af, %e0%80%ae) or a fullwidth one (%ef%bc%8e U+FF0E,
 * %ef%bc%8f U+FF0F) becomes '.' or '/'. Listing those forms would leave the next
 * normalisation out (NFKC, best-fit), so every escape of a non-ASCII byte is refused. */
static bool path_special(int v)
{
	return v == '.' || v == '/' || v == '\\' || v == ';' || v == '%' || v <= 0x20 || v >= 0x7f;
}

/* A segment of dots and spaces, with both: Windows' path normalisation (IIS, .NET)
 * trims trailing dots and spaces, so "..%20" is ".." there (review 23). */
static bool dot_space_segment(const char *d, size_t n)
{
	bool dot = false, space = false;

	for (size_t i = 0; i < n; i++) {
		if (d[i] != '.' && d[i] != ' ')
			return false;
		dot |= d[i] == '.';
		space |= d[i] == ' ';
	}
	return dot && space;
}

#define WHY_ESCAPED_8BIT                                                                           \
	"a percent-encoded non-ASCII byte (%80-%FF) in the path (an overlong or fullwidth "        \
	"'.' or '/' to some origins)"

/* After one decoding of path[0..n) (whose escapes are all valid): why it is refused,
 * or NULL. A second layer of escapes (%252e, %25%32%65) would be decoded again by
 * some origins into the '.', '/', '\\' or ';' the first layer may not carry; a ';'
 * starts a path parameter that Tomcat, Jetty and Spring strip ("..;", "/admin;x"),
 * so the origin would serve another path than the rules matched. */
static const char *decoded_why(const char *path, size_t n)
{
	char *d = malloc(n + 3);
	const char *why = NULL;
	size_t dl = 0;
	int v;

	if (!d)
		return "cannot check the path (out of memory)";
	for (size_t i = 0; i < n; i++) {
		if (path[i] == '%' && hex2(path + i + 1, &v)) {
			d[dl++] = (char)v;
			i += 2;
		} else {
			d[dl++] = path[i];
		}
	}
	d[dl] = d[dl + 1] = '\0';
	for (size_t i = 0, seg = 0; i <= dl && !why; i++)
		if (i == dl || d[i] == '/') {
			if (dot_space_segment(d + seg, i - seg))
				why = "a path segment of dots and encoded spaces (a '.' or '..' "
				      "segment to servers that trim them)";
			seg = i + 1;
		}
	for (size_t i = 0; i < dl && !why; i++) {
		if (d[i] == ';')
			why = "a ';' parameter in the path (literal or encoded)";
		else if (d[i] == '%' && hex2(d + i + 1, &v) && path_special(v))
			why = v >= 0x80
				  ? "a double-encoded non-ASCII byte (%2580-%25FF) in the path"
				  : "a double-encoded '.', '/', '\\', ';', '%', space or control "
				    "byte in the path";
	}
	free(d);
	return why;
}

/* The path part of an origin-form target, if every origin reads it the same way:
 * no control bytes, no backslash, no non-ASCII byte raw or percent-encoded, no
 * percent-encoded '.', '/', '\\' or invalid escape,
 * no "." or ".." segment (nor ".;"/"..;" ones, which some servers strip). Else why. */
static const char *path_of(const char *target, size_t *len)
{
	size_t n = strcspn(target, "?#"), seg = 0;

	if (target[0] != '/')
		return "not an origin-form path";
	for (size_t i = 0; i <= n; i++) {
		unsigned char c = (unsigned char)target[i];

		if (i < n && (c <= 0x20 || c >= 0x7f || c == '\\'))
			return "a control, space, non-ASCII or backslash byte in the path";
		if (i < n && c == '%') {
			int hi = policy_hexval(target[i + 1]),
			    lo = hi < 0 ? -1 : policy_hexval(target[i + 2]);
			int v = hi * 16 + lo;

			if (hi < 0 || lo < 0)
				return "an invalid percent-escape in the path";
			if (v == '.' || v == '/' || v == '\\' || v < 0x20 || v == 0x7f)
				return "an encoded '.', '/', '\\' or control byte in the path";
			if (v >= 0x80)
				return WHY_ESCAPED_8BIT;
		}
		if (i == n || c == '/') {
			const char *s = target + seg;
			size_t sl = i - seg;

			if ((sl == 1 && s[0] == '.') || (sl == 2 && s[0] == '.' && s[1] == '.') ||
			    (sl >= 2 && s[0] == '.' && s[1] == ';') ||
			    (sl >= 3 && s[0] == '.' && s[1] == '.' && s[2] == ';'))
				return "a '.' or '..' segment in the path";
			seg = i + 1;
		}
	}
	*len = n;
	return decoded_why(target, n);
}

static bool list_has(const struct policy_list *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->items[i], s) == 0)
			return true;
	return false;
}

static bool rule_matches(const struct policy_request_rule *r, const char *method, const char *path,
			 size_t plen)
{
	if (r->methods.set && !list_has(&r->methods, method))
		return false;
	if (!r->paths.set)
		return true;
	for (size_t i = 0; i < r->paths.n; i++)
		if (glob_match(r->paths.items[i], path, plen))
			return true;
	return false;
}

static void rule_text(const struct policy_request_rule *r, size_t i, char *out, size_t n)
{
	size_t len = (size_t)snprintf(out, n, "requestRules[%zu] %s", i, r->host);

	for (size_t k = 0; len < n && k < r->methods.n; k++)
		len += (size_t)snprintf(out + len, n - len, "%s%s", k ? "," : " ",
					r->methods.items[k]);
	for (size_t k = 0; len < n && k < r->paths.n; k++)
		len +=
		    (size_t)snprintf(out + len, n - len, "%s%s", k ? "," : " ", r->paths.items[k]);
}

/* TRACE (and IIS's TRACK) answer with the request as the origin received it, the
 * credential the proxy added included. Methods are case-sensitive, but some servers
 * read them without case: refused in any case. */
static bool echo_method(const char *m)
{
	return strcasecmp(m, "TRACE") == 0 || strcasecmp(m, "TRACK") == 0;
}

/* Fields some origins take as the method or the target instead of the request line's
 * (method overrides in Google's APIs, Rails and Express middleware; X-Original-URL and
 * X-Rewrite-URL in IIS, Symfony and Zend): under request rules a checked GET would run
 * as DELETE, or on a path no rule allows. */
static const char *const override_fields[] = {
    "x-http-method-override", "x-http-method", "x-method-override",
    "x-original-url",	      "x-rewrite-url", NULL,
};

/* Compared without case, '_' as '-': a server that maps fields to CGI variables
 * reads X_HTTP_METHOD_OVERRIDE as the same field. */
static bool field_is(const char *name, size_t len, const char *lower)
{
	size_t i = 0;

	for (; i < len && lower[i]; i++) {
		char c = name[i] >= 'A' && name[i] <= 'Z' ? (char)(name[i] - 'A' + 'a') : name[i];

		if ((c == '_' ? '-' : c) != lower[i])
			return false;
	}
	return i == len && !lower[i];
}

bool policy_request_override_field(const char *name, size_t len)
{
	for (size_t i = 0; name && override_fields[i]; i++)
		if (field_is(name, len, override_fields[i]))
			return true;
	return false;
}

int policy_decide_request(const struct halo_policy *p, const char *host, const char *method,
			  const char *target, struct policy_request_decision *d)
{
	const char *bad;
	size_t plen = 0;

	if (!p || !host || !method || !target || !d)
		return -EINVAL;
	memset(d, 0, sizeof(*d));
	if (echo_method(method) && policy_credential_for(p, host, NULL)) {
		d->applies = true;
		snprintf(d->rule, sizeof(d->rule),
			 "egress.credentials for %s: %s is refused (the origin would echo the "
			 "credential back)",
			 host, method);
		return 0;
	}
	for (size_t i = 0; i < p->n_req_rules && !d->applies; i++)
		d->applies = policy_host_match(p->req_rules[i].host, host);
	if (!d->applies) {
		d->allow = true;
		snprintf(d->rule, sizeof(d->rule), "no requestRules for %s", host);
		return 0;
	}
	bad = path_of(target, &plen);
	for (size_t i = 0; !bad && i < p->n_req_rules; i++) {
		const struct policy_request_rule *r = &p->req_rules[i];

		if (policy_host_match(r->host, host) && rule_matches(r, method, target, plen)) {
			d->allow = true;
			d->index = i;
			rule_text(r, i, d->rule, sizeof(d->rule));
			return 0;
		}
	}
	if (bad)
		snprintf(d->rule, sizeof(d->rule), "requestRules for %s: %s", host, bad);
	else
		snprintf(d->rule, sizeof(d->rule), "requestRules for %s: no rule allows %.32s %.*s",
			 host, method, (int)(plen > 200 ? 200 : plen), target);
	return 0;
}

/* ------------------------------------------------------------ credentials */

static bool name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9');
}

/* At tmpl[i] == '$': the length of "${NAME}" with the name's bounds, or 0. */
static size_t var_at(const char *t, size_t i, size_t *ns, size_t *nl)
{
	size_t k = i + 2;

	if (t[i + 1] != '{' || !name_start(t[k]))
		return 0;
	while (name_char(t[k]))
		k++;
	if (t[k] != '}')
		return 0;
	*ns = i + 2;
	*nl = k - (i + 2);
	return k + 1 - i;
}

bool policy_credential_next_var(const char *tmpl, size_t *pos, char *name, size_t n)
{
	for (size_t i = *pos; tmpl[i]; i++) {
		size_t ns, nl, w;

		if (tmpl[i] != '$')
			continue;
		if (tmpl[i + 1] == '$') {
			i++;
			continue;
		}
		w = var_at(tmpl, i, &ns, &nl);
		if (w && nl < n) {
			memcpy(name, tmpl + ns, nl);
			name[nl] = '\0';
			*pos = i + w;
			return true;
		}
	}
	return false;
}

static int put(char *out, size_t n, size_t *len, const char *s, size_t sl)
{
	if (*len + sl >= n)
		return -ENOSPC;
	memcpy(out + *len, s, sl);
	*len += sl;
	return 0;
}

int policy_credential_expand(const char *tmpl, const char *(*lookup)(void *arg, const char *name),
			     void *arg, char *out, size_t n, char *why, size_t whylen)
{
	size_t len = 0;
	int rc = 0;

	for (size_t i = 0; tmpl[i] && rc == 0; i++) {
		size_t ns, nl, w;
		char name[128];
		const char *v;

		if (tmpl[i] != '$') {
			rc = put(out, n, &len, tmpl + i, 1);
			continue;
		}
		if (tmpl[i + 1] == '$') {
			rc = put(out, n, &len, "$", 1);
			i++;
			continue;
		}
		w = var_at(tmpl, i, &ns, &nl);
		if (!w || nl >= sizeof(name)) {
			snprintf(why, whylen, "a '$' not followed by ${NAME} (write $$ for a '$')");
			return -EINVAL;
		}
		memcpy(name, tmpl + ns, nl);
		name[nl] = '\0';
		v = lookup(arg, name);
		if (!v) {
			snprintf(why, whylen, "the environment variable %s is not set", name);
			return -ENOENT;
		}
		rc = put(out, n, &len, v, strlen(v));
		i += w - 1;
	}
	if (rc) {
		snprintf(why, whylen, "the value is too long");
		return rc;
	}
	out[len] = '\0';
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)out[i] < 0x20 && out[i] != '\t') {
			snprintf(why, whylen, "the value holds a control byte (CR, LF...)");
			memset(out, 0, len);
			return -EINVAL;
		}
	if (len == 0) {
		snprintf(why, whylen, "the value is empty");
		return -EINVAL;
	}
	return 0;
}
