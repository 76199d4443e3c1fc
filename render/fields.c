/* The policy model's fields as the renderings see them, the lists every adapter
 * starts from, and the warnings every harness shares. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/render_int.h"

static const char *const field_names[RENDER_N_FIELDS] = {
    [RF_MODE] = "sandbox.mode",
    [RF_WRITABLE_ROOTS] = "sandbox.writableRoots",
    [RF_PROTECTED_PATHS] = "sandbox.protectedPaths",
    [RF_ALLOW_READ] = "sandbox.allowRead",
    [RF_FAIL_IF_UNAVAILABLE] = "sandbox.failIfUnavailable",
    [RF_GUARD_PERSISTENCE] = "sandbox.guardPersistence",
    [RF_CACHES] = "sandbox.caches",
    [RF_UNIX_SOCKETS] = "sandbox.unixSockets",
    [RF_MACOS_ALLOW_TRUSTD] = "sandbox.macos.allowTrustd",
    [RF_EGRESS_DEFAULT] = "egress.default",
    [RF_ALLOWED_DOMAINS] = "egress.allowedDomains",
    [RF_PRESETS] = "egress.presets",
    [RF_DENIED_DOMAINS] = "egress.deniedDomains",
    [RF_ALLOW_PRIVATE] = "egress.allowPrivate",
    [RF_HOST_PORTS] = "egress.hostPorts",
    [RF_UPSTREAM_PROXY] = "egress.upstreamProxy",
    [RF_TRUSTED_CAS] = "egress.trustedCAs",
    [RF_CREDENTIALS] = "egress.credentials",
    [RF_REQUEST_RULES] = "egress.requestRules",
    [RF_GATEWAY] = "gateway",
    [RF_LIMIT_CPU] = "limits.cpuSeconds",
    [RF_LIMIT_MEMORY] = "limits.memoryMB",
    [RF_LIMIT_FSIZE] = "limits.fileSizeMB",
    [RF_LIMIT_NOFILE] = "limits.openFiles",
    [RF_LIMIT_NPROC] = "limits.processes",
    [RF_LIMIT_WALL] = "limits.wallSeconds",
    [RF_LIMIT_SESSION_IDLE] = "limits.sessionIdleSeconds",
    [RF_LIMIT_CONNECTIONS] = "limits.connections",
    [RF_LIMIT_WILDCARD_NAMES] = "limits.wildcardNames",
    [RF_LIMIT_WILDCARD_NAMES_PER_MINUTE] = "limits.wildcardNamesPerMinute",
    [RF_ENV_PASS] = "env.pass",
    [RF_ENV_SET] = "env.set",
    [RF_LEGACY_PERMISSIONS] = "permissions.sandbox",
    [RF_FLOOR] = "credential floor",
    [RF_PROXY] = "--proxy",
};

const char *render_field_name(enum render_field f)
{
	return f < RENDER_N_FIELDS && field_names[f] ? field_names[f] : "?";
}

static long long limit_of(const struct halo_policy *p, enum render_field f)
{
	switch (f) {
	case RF_LIMIT_CPU:
		return p->limits.cpu_seconds;
	case RF_LIMIT_MEMORY:
		return p->limits.memory_mb;
	case RF_LIMIT_FSIZE:
		return p->limits.file_size_mb;
	case RF_LIMIT_NOFILE:
		return p->limits.open_files;
	case RF_LIMIT_NPROC:
		return p->limits.processes;
	case RF_LIMIT_WALL:
		return p->limits.wall_seconds;
	case RF_LIMIT_SESSION_IDLE:
		return p->limits.session_idle_seconds;
	case RF_LIMIT_CONNECTIONS:
		return p->limits.connections;
	case RF_LIMIT_WILDCARD_NAMES:
		return p->limits.wildcard_names;
	case RF_LIMIT_WILDCARD_NAMES_PER_MINUTE:
		return p->limits.wildcard_names_per_minute;
	default:
		return POLICY_LIMIT_UNSET;
	}
}

bool render_field_in_force(const struct halo_policy *p, enum render_field f)
{
	bool on = p->mode != POLICY_MODE_OFF;

	switch (f) {
	case RF_MODE:
		return true;
	case RF_WRITABLE_ROOTS:
		return p->writable_roots.n > 0;
	case RF_PROTECTED_PATHS:
		return p->protected_paths.n > 0;
	case RF_ALLOW_READ:
		return p->allow_read.n > 0;
	case RF_FAIL_IF_UNAVAILABLE:
		return on; /* unset means true */
	case RF_GUARD_PERSISTENCE:
		return on && p->guard_persistence != 0; /* unset means true */
	case RF_CACHES:
		return on && p->caches != POLICY_CACHES_UNSET;
	case RF_UNIX_SOCKETS:
		return p->unix_sockets.n > 0;
	case RF_MACOS_ALLOW_TRUSTD:
		return on && p->macos_allow_trustd == 1;
	case RF_EGRESS_DEFAULT:
		return on;
	case RF_ALLOWED_DOMAINS:
		return p->allowed_domains.n > 0;
	case RF_PRESETS:
		return p->presets.n > 0;
	case RF_DENIED_DOMAINS:
		return p->denied_domains.n > 0;
	case RF_ALLOW_PRIVATE:
		return p->allow_private.n > 0;
	case RF_HOST_PORTS:
		return p->host_ports.n > 0;
	case RF_UPSTREAM_PROXY:
		return on && p->upstream_proxy != NULL;
	case RF_TRUSTED_CAS:
		return p->trusted_cas.n > 0;
	case RF_CREDENTIALS:
		return p->n_creds > 0;
	case RF_REQUEST_RULES:
		return p->n_req_rules > 0;
	case RF_GATEWAY:
		return p->gateway != NULL;
	case RF_ENV_PASS:
		return p->env_pass.n > 0;
	case RF_ENV_SET:
		return p->n_env_set > 0;
	case RF_LEGACY_PERMISSIONS:
		return p->legacy_permissions_sandbox != NULL;
	case RF_FLOOR:
		return on;
	case RF_PROXY:
		return false; /* a render option, not in the policy: render_warn_proxy */
	default:
		return limit_of(p, f) != POLICY_LIMIT_UNSET;
	}
}

/* ---------------------------------------------------------------- lists, text */

bool rlist_has(const struct rlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return true;
	return false;
}

int rlist_push(struct rlist *l, const char *s)
{
	if (rlist_has(l, s))
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		char **v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	if (!(l->v[l->n] = strdup(s)))
		return -ENOMEM;
	l->n++;
	return 0;
}

void rlist_free(struct rlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

void rbuf_printf(struct rbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || (b->len + (size_t)n + 1 > b->cap)) {
		size_t cap = (b->cap ? b->cap : 256);
		while (n >= 0 && b->len + (size_t)n + 1 > cap)
			cap *= 2;
		char *s = n < 0 ? NULL : realloc(b->s, cap);
		if (!s) {
			b->oom = true;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void rbuf_free(struct rbuf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

/* ---------------------------------------------------------------- the view */

/* "host:port" splits at the last colon (domain entries are never IPv6 literals
 * with a port in the schema's grammar, and "[v6]:p" keeps its colon inside []). */
static const char *port_of(const char *entry)
{
	const char *c = strrchr(entry, ':');

	if (!c || strchr(entry, ']') > c || strchr(entry, ':') != c)
		return NULL;
	return c + 1;
}

static int push_domain(struct rlist *all, struct rlist *ported, const char *entry, bool deny)
{
	const char *port = port_of(entry);
	char host[POLICY_HOST_MAX + 8];

	if (!port)
		return rlist_push(all, entry);
	snprintf(host, sizeof(host), "%.*s", (int)(port - 1 - entry), entry);
	if (rlist_push(ported, entry) < 0)
		return -ENOMEM;
	/* A deny on one port becomes a deny on every port (tighter); an allow on one
	 * port cannot widen to every port, so it is left out (tighter too). */
	return deny ? rlist_push(all, host) : 0;
}

/* An allowed entry the address rule refuses goes to `refused` and `deny` instead:
 * halo-run refuses every connection to it, so must every harness. */
static int push_allowed(const struct halo_policy *p, struct render_view *v, const char *entry)
{
	if (!policy_entry_address_refused(p, entry, NULL)) {
		if (port_of(entry))
			return push_domain(&v->allow, &v->allow_port, entry, false);
		/* A wildcard stays, the fixed names it covers that halo-run refuses
		 * (*.google.internal: metadata.google.internal) are denied. */
		const char *name;
		int rc = rlist_push(&v->allow, entry);

		for (size_t it = 0; !rc && (name = policy_wildcard_refused_name(p, entry, &it));)
			if (!(rc = rlist_push(&v->refused_under, name)))
				rc = rlist_push(&v->deny, name);
		return rc;
	}
	if (port_of(entry))
		return push_domain(&v->allow, &v->allow_port, entry, false);
	if (rlist_push(&v->refused, entry) < 0)
		return -ENOMEM;
	return rlist_push(&v->deny, entry);
}

static int view_egress(const struct halo_policy *p, struct render_view *v)
{
	int rc = 0;

	for (size_t i = 0; i < p->allowed_domains.n && !rc; i++)
		rc = push_allowed(p, v, p->allowed_domains.items[i]);
	for (size_t i = 0; i < p->presets.n && !rc; i++) {
		const struct policy_preset *pr = policy_preset_find(p->presets.items[i]);
		for (size_t k = 0; pr && k < pr->n && !rc; k++)
			rc = push_allowed(p, v, pr->entries[k].pattern);
	}
	for (size_t i = 0; i < p->denied_domains.n && !rc; i++)
		rc = push_domain(&v->deny, &v->deny_port, p->denied_domains.items[i], true);
	return rc;
}

static bool is_pattern(const char *s)
{
	return s[0] != '/' && s[0] != '~';
}

static int view_paths(const struct halo_policy *p, struct render_view *v)
{
	const struct policy_floor_entry *f;
	size_t n;
	int rc = 0;

	f = policy_floor(&n);
	for (size_t i = 0; i < n && !rc; i++)
		rc = rlist_push(is_pattern(f[i].path) ? &v->prot_glob : &v->prot_home, f[i].path);
	for (size_t i = 0; i < p->protected_paths.n && !rc; i++) {
		const char *s = p->protected_paths.items[i];
		rc = rlist_push(is_pattern(s) ? &v->prot_glob : &v->prot_home, s);
	}
	for (size_t i = 0; i < p->writable_roots.n && !rc; i++)
		rc = rlist_push(&v->writable, p->writable_roots.items[i]);
	return rc;
}

int render_view_build(const struct halo_policy *p, struct render_view *v)
{
	memset(v, 0, sizeof(*v));
	v->off = p->mode == POLICY_MODE_OFF;
	v->read_only = p->mode == POLICY_MODE_READ_ONLY;
	v->default_allow = p->egress_default_allow;
	if (v->off)
		return 0;
	if (view_egress(p, v) < 0 || view_paths(p, v) < 0) {
		render_view_free(v);
		return -ENOMEM;
	}
	return 0;
}

void render_view_free(struct render_view *v)
{
	rlist_free(&v->allow);
	rlist_free(&v->deny);
	rlist_free(&v->allow_port);
	rlist_free(&v->deny_port);
	rlist_free(&v->prot_home);
	rlist_free(&v->prot_glob);
	rlist_free(&v->writable);
	rlist_free(&v->refused);
	rlist_free(&v->refused_under);
}

bool render_view_restricts(const struct render_view *v)
{
	return !v->off && (!v->default_allow || v->deny.n > 0);
}

/* ---------------------------------------------------------------- matching */

/* halo-run's rule (policy_host_match), and where a vendor reads an entry more widely
 * than halo-run does, that reading on top of it: never a rule of its own. */
bool render_host_match(const char *pattern, const char *host, enum rmatch m)
{
	const char *apex = policy_pattern_wild(pattern);

	if (policy_host_match(pattern, host))
		return true;
	if (apex)
		return m == RM_STAR_APEX && strcmp(host, apex) == 0;
	return m == RM_SUBTREE && policy_name_under(host, strlen(host), pattern, strlen(pattern));
}

const char *render_list_match(const struct rlist *l, const char *host, enum rmatch m)
{
	for (size_t i = 0; i < l->n; i++)
		if (render_host_match(l->v[i], host, m))
			return l->v[i];
	return NULL;
}

int render_perm_rules(struct rlist *out, const char *tool, const struct render_view *v)
{
	char rule[POLICY_HOST_MAX + 4200];
	int rc = 0;

	for (size_t i = 0; i < v->prot_home.n && !rc; i++) {
		const char *s = v->prot_home.v[i];
		const char *lead = s[0] == '/' ? "/" : ""; /* "//abs": absolute in Claude Code */
		snprintf(rule, sizeof(rule), "%s(%s%s)", tool, lead, s);
		rc = rlist_push(out, rule);
		snprintf(rule, sizeof(rule), "%s(%s%s/**)", tool, lead, s);
		if (!rc)
			rc = rlist_push(out, rule);
	}
	for (size_t i = 0; i < v->prot_glob.n && !rc; i++) {
		snprintf(rule, sizeof(rule), "%s(**/%s)", tool, v->prot_glob.v[i]);
		rc = rlist_push(out, rule);
	}
	return rc;
}

/* ---------------------------------------------------------------- TOML */

void render_toml_str(struct rbuf *b, const char *s)
{
	rbuf_printf(b, "\"");
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			rbuf_printf(b, "\\%c", *c);
		else if (*c < 0x20 || *c == 0x7f)
			rbuf_printf(b, "\\u%04x", *c);
		else
			rbuf_printf(b, "%c", *c);
	}
	rbuf_printf(b, "\"");
}

void render_toml_list(struct rbuf *b, const char *key, const struct rlist *l)
{
	rbuf_printf(b, "%s = [", key);
	for (size_t i = 0; i < l->n; i++) {
		rbuf_printf(b, "\n  ");
		render_toml_str(b, l->v[i]);
		rbuf_printf(b, ",");
	}
	rbuf_printf(b, "%s]\n", l->n ? "\n" : "");
}
