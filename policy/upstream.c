/* egress.upstreamProxy: the URL grammar, the `env` form taken from the caller's
 * proxy variables at launch, and NO_PROXY. Pure: the runner hands in the variables.
 *
 * The grammar is deliberately narrow (http://HOST:PORT[/]): the value decides where
 * every allowed connection goes, so anything a reader could take two ways (a path,
 * a query, a scheme we do not speak, a port some tool would default differently) is
 * refused with its reason rather than guessed at. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "policy/policy_int.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int fail(char *why, size_t n, const char *msg)
{
	if (why && n)
		snprintf(why, n, "%s", msg);
	return -EINVAL;
}

/* Schemes a reader may expect to work, each with why it does not. */
static const struct {
	const char *scheme;
	const char *why;
} refused_schemes[] = {
    {"https", "an upstream reached over TLS (https://) is not supported; use http://"},
    {"socks5", "a SOCKS upstream is not supported; use an HTTP proxy (http://)"},
    {"socks5h", "a SOCKS upstream is not supported; use an HTTP proxy (http://)"},
    {"socks4", "a SOCKS upstream is not supported; use an HTTP proxy (http://)"},
    {"socks4a", "a SOCKS upstream is not supported; use an HTTP proxy (http://)"},
    {"socks", "a SOCKS upstream is not supported; use an HTTP proxy (http://)"},
};

/* Percent-decode [s, s+len) into out; NUL and control bytes refused. */
static int pct_decode(const char *s, size_t len, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '%') {
			int hi = i + 2 < len ? policy_hexval(s[i + 1]) : -1;
			int lo = hi >= 0 ? policy_hexval(s[i + 2]) : -1;

			if (lo < 0)
				return -EINVAL;
			c = (unsigned char)(hi << 4 | lo);
			i += 2;
		}
		if (c < 0x20 || c == 0x7f || o + 1 >= cap)
			return -EINVAL;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

/* Strip the scheme: "http://" (any case) required unless from_env. */
static int url_scheme(const char **s, bool from_env, char *why, size_t whylen)
{
	const char *sep = strstr(*s, "://");
	char scheme[16];
	size_t n;

	if (!sep) {
		if (from_env)
			return 0;
		return fail(why, whylen, "expected http://host:port (or the word env)");
	}
	n = (size_t)(sep - *s);
	if (n == 0 || n >= sizeof(scheme))
		return fail(why, whylen, "the scheme is missing or malformed; use http://");
	memcpy(scheme, *s, n);
	scheme[n] = '\0';
	for (size_t i = 0; i < N(refused_schemes); i++)
		if (strcasecmp(scheme, refused_schemes[i].scheme) == 0)
			return fail(why, whylen, refused_schemes[i].why);
	if (strcasecmp(scheme, "http") != 0)
		return fail(why, whylen,
			    "unknown scheme; only http:// upstream proxies are supported");
	*s = sep + 3;
	return 0;
}

static int url_userinfo(const char **s, size_t *len, bool from_env, struct policy_upstream *out,
			char *why, size_t whylen)
{
	const char *at = memchr(*s, '@', *len);
	size_t ul;

	if (!at)
		return 0;
	if (memchr(at + 1, '@', *len - (size_t)(at + 1 - *s)))
		return fail(why, whylen, "more than one '@' in the authority");
	if (!from_env)
		return fail(why, whylen,
			    "credentials do not belong in the policy file; put user:password in "
			    "the caller's " POLICY_UPSTREAM_AUTH_ENV " instead");
	ul = (size_t)(at - *s);
	if (!memchr(*s, ':', ul))
		return fail(why, whylen, "userinfo without a password (expected user:password@)");
	if (pct_decode(*s, ul, out->auth, sizeof(out->auth)) < 0)
		return fail(why, whylen,
			    "malformed or over-long userinfo (bad %-escape or control byte)");
	*len -= ul + 1;
	*s = at + 1;
	return 0;
}

static int url_port(const char *p, size_t n, unsigned *port, char *why, size_t whylen)
{
	unsigned v = 0;

	if (n == 0)
		return fail(why, whylen,
			    "the port is missing (write host:port: proxies agree on no "
			    "default port)");
	if (n > 5)
		return fail(why, whylen, "the port is not a number from 1 to 65535");
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return fail(why, whylen, "the port is not a number from 1 to 65535");
		v = v * 10 + (unsigned)(p[i] - '0');
	}
	if (v == 0 || v > 65535 || p[0] == '0')
		return fail(why, whylen, "the port is not a number from 1 to 65535");
	*port = v;
	return 0;
}

/* HOST:PORT with [v6]:PORT; the host by the policy's strict grammar. */
static int url_hostport(const char *s, size_t len, struct policy_upstream *out, char *why,
			size_t whylen)
{
	const char *colon;
	char hwhy[128];

	if (len && s[0] == '[') {
		const char *rb = memchr(s, ']', len);

		if (!rb)
			return fail(why, whylen, "an IPv6 address without its closing ']'");
		colon = rb + 1;
		if (colon == s + len || *colon != ':')
			return url_port(NULL, 0, &out->port, why, whylen);
	} else {
		colon = memchr(s, ':', len);
		if (!colon)
			return url_port(NULL, 0, &out->port, why, whylen);
	}
	if (colon == s)
		return fail(why, whylen, "the host is missing");
	if (policy_host_parse(s, (size_t)(colon - s), false, &out->host, hwhy, sizeof(hwhy)) < 0) {
		if (why && whylen)
			snprintf(why, whylen, "host: %s", hwhy);
		return -EINVAL;
	}
	return url_port(colon + 1, (size_t)(s + len - colon - 1), &out->port, why, whylen);
}

int policy_upstream_parse(const char *url, bool from_env, struct policy_upstream *out, char *why,
			  size_t whylen)
{
	const char *s = url;
	size_t len;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!url || !*url)
		return fail(why, whylen, "is empty");
	for (const char *q = url; *q; q++)
		if ((unsigned char)*q <= 0x20 || *q == 0x7f)
			return fail(why, whylen, "contains a blank or a control character");
	rc = url_scheme(&s, from_env, why, whylen);
	if (rc < 0)
		return rc;
	len = strcspn(s, "/?#");
	if (s[len] == '?' || s[len] == '#' || (s[len] == '/' && s[len + 1]))
		return fail(why, whylen, "a path, query or fragment has no meaning for a proxy");
	rc = url_userinfo(&s, &len, from_env, out, why, whylen);
	if (rc == 0)
		rc = url_hostport(s, len, out, why, whylen);
	if (rc < 0) {
		memset(out, 0, sizeof(*out)); /* no half-decoded credentials left behind */
		return rc;
	}
	out->on = true;
	return 0;
}

/* ---------------------------------------------------------------- env */

static const char *first_set(const struct policy_upstream_env *env, const char **name)
{
	const struct {
		const char *name;
		const char *value;
	} order[] = {
	    {"https_proxy", env->https_proxy}, {"HTTPS_PROXY", env->HTTPS_PROXY},
	    {"http_proxy", env->http_proxy},   {"HTTP_PROXY", env->HTTP_PROXY},
	    {"all_proxy", env->all_proxy},     {"ALL_PROXY", env->ALL_PROXY},
	};

	for (size_t i = 0; i < N(order); i++)
		if (order[i].value && *order[i].value) {
			*name = order[i].name;
			return order[i].value;
		}
	return NULL;
}

static int take_auth(const struct policy_upstream_env *env, struct policy_upstream *out, char *why,
		     size_t whylen)
{
	size_t n;

	if (!env->auth || !*env->auth) {
		out->auth_from = out->auth[0] ? out->from : NULL;
		return 0;
	}
	n = strlen(env->auth);
	if (n >= sizeof(out->auth) || !strchr(env->auth, ':'))
		return fail(why, whylen, POLICY_UPSTREAM_AUTH_ENV ": expected user:password");
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)env->auth[i] < 0x20 || env->auth[i] == 0x7f)
			return fail(why, whylen,
				    POLICY_UPSTREAM_AUTH_ENV ": contains a control character");
	memcpy(out->auth, env->auth, n + 1);
	out->auth_from = POLICY_UPSTREAM_AUTH_ENV;
	return 0;
}

int policy_upstream_resolve(const struct halo_policy *p, const struct policy_upstream_env *env,
			    struct policy_upstream *out, char *why, size_t whylen)
{
	const char *name = "egress.upstreamProxy", *url = p->upstream_proxy, *np;
	char pwhy[200];
	bool from_env;

	memset(out, 0, sizeof(*out));
	if (!url || p->mode == POLICY_MODE_OFF)
		return 0;
	from_env = strcmp(url, "env") == 0;
	if (from_env) {
		url = first_set(env, &name);
		if (!url)
			return 0; /* `env` and no proxy variable: direct, as the caller's tools */
	}
	if (policy_upstream_parse(url, from_env, out, pwhy, sizeof(pwhy)) < 0) {
		if (why && whylen)
			snprintf(why, whylen, "%s: %s", name, pwhy);
		return -EINVAL;
	}
	out->from = name;
	np = env->no_proxy && *env->no_proxy ? env->no_proxy : env->NO_PROXY;
	if (from_env && np) {
		if (strlen(np) >= sizeof(out->no_proxy)) {
			memset(out, 0, sizeof(*out));
			return fail(why, whylen, "NO_PROXY is longer than 2047 bytes");
		}
		strcpy(out->no_proxy, np);
	}
	if (take_auth(env, out, why, whylen) < 0) {
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	return 0;
}

/* ---------------------------------------------------------------- NO_PROXY */

static bool entry_match(const char *e, size_t n, const struct policy_host *h, unsigned port)
{
	struct policy_host eh;
	size_t hl = n;
	unsigned eport = 0;
	const char *colon = n && e[0] != '[' ? memchr(e, ':', n) : NULL;

	if (n && e[0] == '[') { /* [v6] or [v6]:port */
		const char *rb = memchr(e, ']', n);
		if (!rb)
			return false;
		colon = rb + 1 < e + n && rb[1] == ':' ? rb + 1 : NULL;
	} else if (colon && memchr(colon + 1, ':', n - (size_t)(colon + 1 - e))) {
		colon = NULL; /* a bare IPv6 literal: no port */
	}
	if (colon) {
		if (url_port(colon + 1, (size_t)(e + n - colon - 1), &eport, NULL, 0) < 0)
			return false;
		hl = (size_t)(colon - e);
	}
	if (eport && eport != port)
		return false;
	if (hl == 1 && e[0] == '*')
		return true;
	if (hl > 2 && e[0] == '*' && e[1] == '.')
		e++, hl--;
	if (hl > 1 && e[0] == '.')
		e++, hl--;
	if (policy_host_parse(e, hl, true, &eh, NULL, 0) < 0)
		return false; /* not understood: not a bypass (the upstream still gets it) */
	if (eh.kind != h->kind)
		return false;
	if (eh.kind != POLICY_HOST_NAME)
		return strcmp(eh.text, h->text) == 0;
	size_t el = strlen(eh.text), tl = strlen(h->text);
	return tl == el ? strcmp(eh.text, h->text) == 0
			: tl > el && h->text[tl - el - 1] == '.' &&
			      strcmp(h->text + tl - el, eh.text) == 0;
}

bool policy_upstream_bypass(const struct policy_upstream *u, const struct policy_host *h,
			    unsigned port)
{
	const char *s = u->no_proxy;

	while (*s) {
		size_t n;

		s += strspn(s, ", \t");
		n = strcspn(s, ", \t");
		if (n && entry_match(s, n, h, port))
			return true;
		s += n;
	}
	return false;
}

/* ---------------------------------------------------------------- the host itself */

/* ::ffff:a.b.c.d and ::a.b.c.d are a.b.c.d here: a dual-stack socket reaches it. */
static struct policy_ipaddr unwrap_v4(const struct policy_ipaddr *a)
{
	static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff}, compat[12] = {0};
	struct policy_ipaddr r = *a;

	if (a->family == AF_INET6 &&
	    (memcmp(a->addr, mapped, 12) == 0 || memcmp(a->addr, compat, 12) == 0)) {
		r.family = AF_INET;
		memset(r.addr, 0, sizeof(r.addr));
		memcpy(r.addr, a->addr + 12, 4);
	}
	return r;
}

bool policy_ipaddr_same(const struct policy_ipaddr *a, const struct policy_ipaddr *b)
{
	struct policy_ipaddr x = unwrap_v4(a), y = unwrap_v4(b);

	return x.family == y.family && memcmp(x.addr, y.addr, x.family == AF_INET ? 4 : 16) == 0;
}

bool policy_addr_is_local(const struct policy_ipaddr *a, const struct policy_ipaddr *own,
			  size_t n_own)
{
	enum policy_addr_class c;

	if (a->family != AF_INET && a->family != AF_INET6)
		return true; /* not understood: assume the worst */
	c = policy_addr_classify(a->family, a->addr);
	if (c == POLICY_ADDR_LOOPBACK || c == POLICY_ADDR_UNSPECIFIED)
		return true;
	for (size_t i = 0; i < n_own; i++)
		if (policy_ipaddr_same(a, &own[i]))
			return true;
	return false;
}

int policy_upstream_host_port(const struct halo_policy *p, const struct policy_upstream *u,
			      const struct policy_ipaddr *addrs, size_t n_addrs,
			      const struct policy_ipaddr *own, size_t n_own, size_t *local)
{
	size_t k = 0;

	if (!u->on)
		return -1;
	while (k < n_addrs && !policy_addr_is_local(&addrs[k], own, n_own))
		k++;
	if (k == n_addrs)
		return -1;
	for (size_t i = 0; i < p->host_ports.n; i++)
		if (p->host_ports.items[i] == u->port) {
			*local = k;
			return (int)i;
		}
	return -1;
}
