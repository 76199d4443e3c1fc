/* struct halo_policy: creation, lists, freeing, and the small shared tables (modes,
 * limits) that the model, validation, layering and rendering all agree on. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy_int.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Bounds are far above any real job and low enough that a value is never a typo
 * for "unlimited" (a 1e15 memory cap means the writer meant no cap). */
const struct policy_limit_field policy_limit_fields[] = {
    {"cpuSeconds", offsetof(struct policy_limits, cpu_seconds), 31LL * 24 * 3600},
    {"memoryMB", offsetof(struct policy_limits, memory_mb), 16LL * 1024 * 1024},
    {"fileSizeMB", offsetof(struct policy_limits, file_size_mb), 16LL * 1024 * 1024},
    {"openFiles", offsetof(struct policy_limits, open_files), 1024LL * 1024},
    {"processes", offsetof(struct policy_limits, processes), 4LL * 1024 * 1024},
    {"wallSeconds", offsetof(struct policy_limits, wall_seconds), 31LL * 24 * 3600},
    {"sessionIdleSeconds", offsetof(struct policy_limits, session_idle_seconds), 31LL * 24 * 3600},
    {"connections", offsetof(struct policy_limits, connections), 65536},
    {"wildcardNames", offsetof(struct policy_limits, wildcard_names), 1000000},
    {"wildcardNamesPerMinute", offsetof(struct policy_limits, wildcard_names_per_minute), 1000000},
};
const size_t policy_n_limit_fields = N(policy_limit_fields);

int policy_limit_check(const struct policy_limit_field *f, double v, char *why, size_t n)
{
	/* Huge doubles are all integral; the cast is only defined within range. */
	bool integral = !(v > -1e18 && v < 1e18) || v == (double)(long long)v;

	if (!isfinite(v) || !integral) {
		snprintf(why, n, "expected a positive integer, got %g", v);
		return -EINVAL;
	}
	if (v < 1 || v > (double)f->max) {
		snprintf(why, n, "must be a positive integer up to %lld, got %.0f", f->max, v);
		return -EINVAL;
	}
	return 0;
}

static const char *const mode_names[] = {
    [POLICY_MODE_OFF] = "off",
    [POLICY_MODE_WORKSPACE_WRITE] = "workspace-write",
    [POLICY_MODE_READ_ONLY] = "read-only",
};

static const char *const caches_names[] = {
    [POLICY_CACHES_ISOLATED] = "isolated",
    [POLICY_CACHES_HOST] = "host",
    [POLICY_CACHES_OFF] = "off",
};

const char *policy_caches_name(enum policy_caches c)
{
	if (c == POLICY_CACHES_UNSET)
		c = POLICY_CACHES_ISOLATED;
	return (size_t)c < N(caches_names) ? caches_names[c] : "unset";
}

const char *policy_mode_name(enum policy_mode m)
{
	if (m == POLICY_MODE_UNSET || (size_t)m >= N(mode_names))
		return "unset";
	return mode_names[m];
}

int policy_mode_parse(const char *s, enum policy_mode *m)
{
	for (size_t i = 1; i < N(mode_names); i++) {
		if (mode_names[i] && strcmp(s, mode_names[i]) == 0) {
			*m = (enum policy_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

bool policy_effective_default_allow(const struct halo_policy *p, bool ignore_mode)
{
	if (!ignore_mode && p->mode == POLICY_MODE_OFF)
		return true;
	if (p->egress_default == POLICY_EGRESS_ALLOW)
		return true;
	if (p->egress_default == POLICY_EGRESS_DENY)
		return false;
	/* Unset: an allowlist means "only these"; a bare denylist means "all but
	 * these"; a policy that says nothing at all fails closed. */
	if (p->allowed_domains.n || p->presets.n)
		return false;
	return p->denied_domains.n > 0;
}

struct halo_policy *policy_new(void)
{
	struct halo_policy *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->fail_if_unavailable = -1;
	p->guard_persistence = -1;
	p->macos_allow_trustd = -1;
	for (size_t i = 0; i < policy_n_limit_fields; i++)
		*policy_limit_ptr(&p->limits, &policy_limit_fields[i]) = POLICY_LIMIT_UNSET;
	return p;
}

int policy_list_push(struct policy_list *l, const char *s)
{
	char **items;
	char *copy = strdup(s);

	if (!copy)
		return -ENOMEM;
	items = realloc(l->items, (l->n + 1) * sizeof(*items));
	if (!items) {
		free(copy);
		return -ENOMEM;
	}
	l->items = items;
	l->items[l->n++] = copy;
	l->set = true;
	return 0;
}

void policy_list_free(struct policy_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->items[i]);
	free(l->items);
	memset(l, 0, sizeof(*l));
}

int policy_list_copy(struct policy_list *dst, const struct policy_list *src)
{
	struct policy_list tmp = {0};

	for (size_t i = 0; i < src->n; i++) {
		if (policy_list_push(&tmp, src->items[i]) < 0) {
			policy_list_free(&tmp);
			return -ENOMEM;
		}
	}
	tmp.set = src->set;
	policy_list_free(dst);
	*dst = tmp;
	return 0;
}

bool policy_list_contains(const struct policy_list *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->items[i], s) == 0)
			return true;
	return false;
}

int policy_ports_push(struct policy_ports *l, uint16_t port)
{
	uint16_t *items = realloc(l->items, (l->n + 1) * sizeof(*items));

	if (!items)
		return -ENOMEM;
	l->items = items;
	l->items[l->n++] = port;
	l->set = true;
	return 0;
}

void policy_ports_free(struct policy_ports *l)
{
	free(l->items);
	memset(l, 0, sizeof(*l));
}

int policy_ports_copy(struct policy_ports *dst, const struct policy_ports *src)
{
	uint16_t *items = NULL;

	if (src->n && !(items = malloc(src->n * sizeof(*items))))
		return -ENOMEM;
	if (src->n)
		memcpy(items, src->items, src->n * sizeof(*items));
	free(dst->items);
	dst->items = items;
	dst->n = src->n;
	dst->set = src->set;
	return 0;
}

void policy_env_set_free(struct halo_policy *p)
{
	for (size_t i = 0; i < p->n_env_set; i++) {
		free(p->env_set[i].key);
		free(p->env_set[i].value);
	}
	free(p->env_set);
	p->env_set = NULL;
	p->n_env_set = 0;
}

void policy_derived_free(struct halo_policy *p)
{
	policy_list_free(&p->writable_abs);
	policy_list_free(&p->protected_abs);
	policy_list_free(&p->protected_globs);
	policy_list_free(&p->allow_read_abs);
	policy_list_free(&p->sanitize_abs);
	free(p->sanitize_kind);
	p->sanitize_kind = NULL;
	policy_list_free(&p->unix_sockets_abs);
	free(p->cidrs);
	p->cidrs = NULL;
	p->n_cidrs = 0;
	if (p->index)
		policy_index_free(p->index);
	p->index = NULL;
}

void policy_free(struct halo_policy *p)
{
	if (!p)
		return;
	policy_list_free(&p->writable_roots);
	policy_list_free(&p->protected_paths);
	policy_list_free(&p->allow_read);
	policy_list_free(&p->unix_sockets);
	policy_list_free(&p->allowed_domains);
	policy_list_free(&p->presets);
	policy_list_free(&p->denied_domains);
	policy_list_free(&p->allow_private);
	policy_ports_free(&p->host_ports);
	policy_list_free(&p->trusted_cas);
	policy_creds_free(p);
	policy_req_rules_free(p);
	policy_list_free(&p->env_pass);
	policy_env_set_free(p);
	free(p->gateway);
	free(p->upstream_proxy);
	free(p->legacy_permissions_sandbox);
	policy_derived_free(p);
	free(p->source);
	free(p);
}
