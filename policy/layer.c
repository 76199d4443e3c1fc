/* Layering `--policy A --policy B`: deny lists and protected paths union; allow
 * lists (allowedDomains, presets, allowPrivate, hostPorts), writableRoots and env.pass are
 * replaced when the upper layer sets them; scalars and each limit are replaced when
 * set; env.set merges key by key. Every way the upper layer loosens the lower one
 * is reported: a later file must never widen the sandbox silently. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy_int.h"

struct lctx {
	const char *name;
	struct policy_diags *d;
	int err;
	/* policy_layer_managed: the managed layer as written (which fields it sets), and
	 * its name; a loosening of one of its fields is an error, others are not said
	 * (the ordinary pass reported them). */
	const struct halo_policy *managed;
	const char *managed_name;
	size_t refused;
};

static void loosens(struct lctx *l, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void loosens(struct lctx *l, const char *field, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!l->managed) {
		policy_diags_add_warning(l->d, "%s: loosens %s (%s)", l->name, field, msg);
		return;
	}
	if (!policy_managed_sets(l->managed, field))
		return;
	policy_diags_add_error(l->d,
			       "%s: loosens %s (%s), which the managed policy %s sets: a later "
			       "layer may only tighten it",
			       l->name, field, msg, l->managed_name);
	l->refused++;
}

/* Strictness order of modes: read-only < workspace-write < off. */
static int mode_rank(enum policy_mode m)
{
	switch (m) {
	case POLICY_MODE_READ_ONLY:
		return 0;
	case POLICY_MODE_OFF:
		return 2;
	default:
		return 1; /* unset means workspace-write */
	}
}

static void layer_mode(struct halo_policy *b, const struct halo_policy *u, struct lctx *l)
{
	enum policy_mode before = b->mode ? b->mode : POLICY_MODE_WORKSPACE_WRITE;

	if (u->mode == POLICY_MODE_UNSET)
		return;
	if (mode_rank(u->mode) > mode_rank(before))
		loosens(l, "sandbox.mode", "%s → %s", policy_mode_name(before),
			policy_mode_name(u->mode));
	b->mode = u->mode;
	/* The legacy spelling follows the mode it came with, or it would disagree. */
	free(b->legacy_permissions_sandbox);
	b->legacy_permissions_sandbox = NULL;
	if (u->legacy_permissions_sandbox) {
		b->legacy_permissions_sandbox = strdup(u->legacy_permissions_sandbox);
		if (!b->legacy_permissions_sandbox)
			l->err = -ENOMEM;
	}
}

/* host makes the real caches writable: the one loosening of the three. */
static void layer_caches(enum policy_caches *b, enum policy_caches u, struct lctx *l)
{
	if (u == POLICY_CACHES_UNSET)
		return;
	if (u == POLICY_CACHES_HOST && *b != POLICY_CACHES_HOST)
		loosens(l, "sandbox.caches", "%s → host (the host's own caches become writable)",
			policy_caches_name(*b));
	*b = u;
}

static void layer_bool(int *b, int u, const char *field, struct lctx *l)
{
	if (u < 0)
		return;
	if (*b != 0 && u == 0) /* unset means true */
		loosens(l, field, "true → false");
	*b = u;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A sorted view of a list's strings: layering must stay n log n, a 1 MiB file can
 * hold 100k domains. NULL when out of memory (or for an empty list). */
static char **sorted_view(const struct policy_list *l)
{
	char **v;

	if (!l->n)
		return NULL;
	v = malloc(l->n * sizeof(*v));
	if (!v)
		return NULL;
	memcpy(v, l->items, l->n * sizeof(*v));
	qsort(v, l->n, sizeof(*v), str_cmp);
	return v;
}

static bool view_has(char **v, size_t n, const char *s)
{
	return v && bsearch(&s, v, n, sizeof(*v), str_cmp) != NULL;
}

/* Replace `b` by `u` when set; `report` says whether additions loosen. */
static void replace_list(struct policy_list *b, const struct policy_list *u, const char *field,
			 bool report, struct lctx *l)
{
	char q[POLICY_QUOTE_MAX];
	char **view = NULL;

	if (!u->set)
		return;
	if (report && b->n && !(view = sorted_view(b)))
		l->err = -ENOMEM;
	for (size_t i = 0; report && view && i < u->n; i++)
		if (!view_has(view, b->n, u->items[i]))
			loosens(l, field, "adds %s", policy_quote(u->items[i], q, sizeof(q)));
	for (size_t i = 0; report && !b->n && i < u->n; i++)
		loosens(l, field, "adds %s", policy_quote(u->items[i], q, sizeof(q)));
	free(view);
	if (policy_list_copy(b, u) < 0)
		l->err = -ENOMEM;
}

/* egress.hostPorts replaces like an allowlist; every added port opens a host
 * service to the sandbox whatever the egress default, so each is a loosening. */
static void replace_ports(struct policy_ports *b, const struct policy_ports *u, struct lctx *l)
{
	if (!u->set)
		return;
	for (size_t i = 0; i < u->n; i++) {
		bool had = false;

		for (size_t k = 0; k < b->n && !had; k++)
			had = b->items[k] == u->items[i];
		if (!had)
			loosens(l, "egress.hostPorts", "adds %u", (unsigned)u->items[i]);
	}
	if (policy_ports_copy(b, u) < 0)
		l->err = -ENOMEM;
}

struct ref {
	const char *s;
	size_t i;
};

static int ref_cmp(const void *a, const void *b)
{
	const struct ref *x = a, *y = b;
	int c = strcmp(x->s, y->s);

	if (c)
		return c;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Append the upper entries not seen before (in the base or earlier in the upper
 * list), keeping the order they were written in. */
static void union_list(struct policy_list *b, const struct policy_list *u, struct lctx *l)
{
	size_t n = b->n + u->n;
	struct ref *r;
	bool *dup;

	b->set |= u->set;
	if (!u->n)
		return;
	r = malloc(n * sizeof(*r));
	dup = calloc(n, sizeof(*dup));
	if (!r || !dup) {
		free(r);
		free(dup);
		l->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < n; i++)
		r[i] = (struct ref){i < b->n ? b->items[i] : u->items[i - b->n], i};
	qsort(r, n, sizeof(*r), ref_cmp);
	for (size_t i = 1, run = 0; i < n; i++) {
		if (strcmp(r[run].s, r[i].s) != 0)
			run = i;
		else
			dup[r[i].i] = true;
	}
	for (size_t i = 0, base_n = b->n; i < u->n; i++)
		if (!dup[base_n + i] && policy_list_push(b, u->items[i]) < 0)
			l->err = -ENOMEM;
	free(r);
	free(dup);
}

/* credentials, requestRules and trustedCAs replace. Dropping request rules or adding
 * a trusted root loosens; credentials change what is sent, not what is reachable. */
static void layer_tls(struct halo_policy *b, const struct halo_policy *u, struct lctx *l)
{
	if (u->req_rules_set) {
		if (b->n_req_rules)
			loosens(l, "egress.requestRules", "%zu rules replaced by %zu",
				b->n_req_rules, u->n_req_rules);
		if (policy_req_rules_copy(b, u) < 0)
			l->err = -ENOMEM;
	}
	if (u->creds_set && policy_creds_copy(b, u) < 0)
		l->err = -ENOMEM;
	if (u->trusted_cas.set) {
		for (size_t i = 0; i < u->trusted_cas.n; i++)
			if (!policy_list_contains(&b->trusted_cas, u->trusted_cas.items[i]))
				loosens(l, "egress.trustedCAs", "adds %s", u->trusted_cas.items[i]);
		policy_list_free(&b->trusted_cas);
		if (policy_list_copy(&b->trusted_cas, &u->trusted_cas) < 0)
			l->err = -ENOMEM;
	}
}

static void layer_egress(struct halo_policy *b, const struct halo_policy *u, struct lctx *l)
{
	bool allow_before = policy_effective_default_allow(b, true);

	if (u->egress_default != POLICY_EGRESS_UNSET)
		b->egress_default = u->egress_default;
	/* Additions to an allowlist only loosen a policy that denies by default. */
	replace_list(&b->allowed_domains, &u->allowed_domains, "egress.allowedDomains",
		     !allow_before, l);
	replace_list(&b->presets, &u->presets, "egress.presets", !allow_before, l);
	replace_list(&b->allow_private, &u->allow_private, "egress.allowPrivate", true, l);
	replace_ports(&b->host_ports, &u->host_ports, l);
	layer_tls(b, u, l);
	union_list(&b->denied_domains, &u->denied_domains, l);
	/* Covers both an explicit "default: allow" and an emptied allowlist that
	 * turns an unset default into a denylist policy. */
	if (!allow_before && policy_effective_default_allow(b, true))
		loosens(l, "egress.default", "deny → allow");
	if (u->gateway) {
		free(b->gateway);
		b->gateway = strdup(u->gateway);
		if (!b->gateway)
			l->err = -ENOMEM;
	}
	if (u->upstream_proxy) { /* a route, not a rule: a later file replaces it */
		free(b->upstream_proxy);
		b->upstream_proxy = strdup(u->upstream_proxy);
		if (!b->upstream_proxy)
			l->err = -ENOMEM;
	}
}

static void layer_limits(struct halo_policy *b, const struct halo_policy *u, struct lctx *l)
{
	char field[64];

	for (size_t i = 0; i < policy_n_limit_fields; i++) {
		const struct policy_limit_field *f = &policy_limit_fields[i];
		long long *bv = policy_limit_ptr(&b->limits, f);
		long long uv = *policy_limit_ptr((struct policy_limits *)&u->limits, f);

		if (uv == POLICY_LIMIT_UNSET)
			continue;
		snprintf(field, sizeof(field), "limits.%s", f->key);
		if (*bv != POLICY_LIMIT_UNSET && uv > *bv)
			loosens(l, field, "%lld → %lld", *bv, uv);
		*bv = uv;
	}
}

static void layer_env_set(struct halo_policy *b, const struct halo_policy *u, struct lctx *l)
{
	struct policy_kv *grown;

	if (!u->env_set_set)
		return;
	b->env_set_set = true;
	grown = realloc(b->env_set, (b->n_env_set + u->n_env_set + 1) * sizeof(*grown));
	if (!grown) {
		l->err = -ENOMEM;
		return;
	}
	b->env_set = grown;
	for (size_t i = 0; i < u->n_env_set; i++) {
		char *value = strdup(u->env_set[i].value);
		size_t k = 0;

		while (k < b->n_env_set && strcmp(b->env_set[k].key, u->env_set[i].key) != 0)
			k++;
		if (!value) {
			l->err = -ENOMEM;
			return;
		}
		if (k == b->n_env_set) {
			b->env_set[k].key = strdup(u->env_set[i].key);
			if (!b->env_set[k].key) {
				free(value);
				l->err = -ENOMEM;
				return;
			}
			b->env_set[k].value = NULL;
			b->n_env_set++;
		}
		free(b->env_set[k].value);
		b->env_set[k].value = value;
	}
}

static void layer_source(struct halo_policy *b, const char *name, struct lctx *l)
{
	char *s = NULL;

	if (asprintf(&s, "%s, %s", b->source ? b->source : "policy", name) < 0) {
		l->err = -ENOMEM;
		return;
	}
	free(b->source);
	b->source = s;
}

static int layer_all(struct halo_policy *base, const struct halo_policy *upper, struct lctx *l)
{
	layer_mode(base, upper, l);
	replace_list(&base->writable_roots, &upper->writable_roots, "sandbox.writableRoots", true,
		     l);
	union_list(&base->protected_paths, &upper->protected_paths, l);
	/* Carve-outs union too; finalize reports each one as a loosening. */
	union_list(&base->allow_read, &upper->allow_read, l);
	layer_bool(&base->fail_if_unavailable, upper->fail_if_unavailable,
		   "sandbox.failIfUnavailable", l);
	layer_bool(&base->guard_persistence, upper->guard_persistence, "sandbox.guardPersistence",
		   l);
	/* unset means false here: turning it on is the loosening */
	if (upper->macos_allow_trustd >= 0 && base->macos_allow_trustd <= 0 &&
	    upper->macos_allow_trustd == 1)
		loosens(l, "sandbox.macos.allowTrustd", "false → true");
	if (upper->macos_allow_trustd >= 0)
		base->macos_allow_trustd = upper->macos_allow_trustd;
	layer_caches(&base->caches, upper->caches, l);
	replace_list(&base->unix_sockets, &upper->unix_sockets, "sandbox.unixSockets", true, l);
	layer_egress(base, upper, l);
	layer_limits(base, upper, l);
	replace_list(&base->env_pass, &upper->env_pass, "env.pass", true, l);
	layer_env_set(base, upper, l);
	layer_source(base, l->name, l);
	if (l->err)
		policy_diags_add_error(l->d, "%s: out of memory while layering", l->name);
	return l->err;
}

int policy_layer(struct halo_policy *base, const struct halo_policy *upper, const char *upper_name,
		 struct policy_diags *d)
{
	struct lctx l = {.name = upper_name ? upper_name : "policy", .d = d};

	return layer_all(base, upper, &l);
}

/* allowRead is a carve-out from the protected paths, which finalize (not layering)
 * reports; against a managed file that protects paths, each new one is refused. */
static void managed_carve_outs(const struct halo_policy *m, const struct halo_policy *upper,
			       struct lctx *l)
{
	char q[POLICY_QUOTE_MAX];

	for (size_t i = 0; i < upper->allow_read.n; i++)
		if (!policy_list_contains(&m->allow_read, upper->allow_read.items[i]))
			loosens(l, "sandbox.allowRead", "adds %s",
				policy_quote(upper->allow_read.items[i], q, sizeof(q)));
}

/* The route the managed file chose: another upstream (or `env`) would take allowed
 * traffic around the company's proxy. */
static void managed_upstream(const struct halo_policy *m, const struct halo_policy *upper,
			     struct lctx *l)
{
	if (upper->upstream_proxy &&
	    (!m->upstream_proxy || strcmp(upper->upstream_proxy, m->upstream_proxy) != 0))
		loosens(l, "egress.upstreamProxy", "%s → %s",
			m->upstream_proxy ? m->upstream_proxy : "unset", upper->upstream_proxy);
}

int policy_layer_managed(struct halo_policy *base, const struct halo_policy *upper,
			 const char *upper_name, const struct halo_policy *managed,
			 const char *managed_name, struct policy_diags *d)
{
	struct lctx l = {.name = upper_name ? upper_name : "policy",
			 .d = d,
			 .managed = managed,
			 .managed_name = managed_name ? managed_name : "managed"};
	int rc;

	managed_carve_outs(managed, upper, &l);
	managed_upstream(managed, upper, &l);
	rc = layer_all(base, upper, &l);
	return rc < 0 ? rc : l.refused ? -EPERM : 0;
}
