/* The managed layer: an administrator's policy that every other layer may only
 * tighten. It is the first layer (the built-in floor is applied under every policy
 * by finalize); the caller's files (--policy, $HALO_POLICY, the discovered file) are
 * layered on top as usual, and then, together, once more on top of the managed layer
 * as written: any loosening of a field the managed file sets is an error naming the
 * file and the field, where an ordinary layer only gets a warning. Comparing the
 * files together (not one by one) lets a later file undo an earlier file's
 * tightening as long as the result is still within what the managed file allows.
 *
 * Pure: runner/ reads the file (and decides whether it can be trusted) and hands the
 * text in. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy_int.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static bool sets_mode(const struct halo_policy *m)
{
	(void)m;
	return true; /* mode off drops every rule the managed file has, whatever it sets */
}
/* A default, an allowlist or presets all decide what an unlisted host gets. */
static bool sets_default(const struct halo_policy *m)
{
	return m->egress_default != POLICY_EGRESS_UNSET || m->allowed_domains.set || m->presets.set;
}
static bool sets_roots(const struct halo_policy *m)
{
	return m->writable_roots.set;
}
static bool sets_fail(const struct halo_policy *m)
{
	return m->fail_if_unavailable >= 0;
}
static bool sets_guard(const struct halo_policy *m)
{
	return m->guard_persistence >= 0;
}
static bool sets_caches(const struct halo_policy *m)
{
	return m->caches != POLICY_CACHES_UNSET;
}
/* A managed file that restricts egress also holds the ways around Decide() it does not
 * name: a host socket (docker's runs anything, with any network), a host port (a local
 * proxy, an ssh -D) and a private range for an allowed name. Unnamed, none is added. */
static bool sets_sockets(const struct halo_policy *m)
{
	return m->unix_sockets.set || sets_default(m);
}
static bool sets_carve_outs(const struct halo_policy *m)
{
	return m->protected_paths.n || m->allow_read.set;
}
static bool sets_private(const struct halo_policy *m)
{
	return m->allow_private.set || sets_default(m);
}
static bool sets_ports(const struct halo_policy *m)
{
	return m->host_ports.set || sets_default(m);
}
static bool sets_req_rules(const struct halo_policy *m)
{
	return m->req_rules_set;
}
static bool sets_cas(const struct halo_policy *m)
{
	return m->trusted_cas.set;
}
static bool sets_upstream(const struct halo_policy *m)
{
	return m->upstream_proxy != NULL;
}
static bool sets_env_pass(const struct halo_policy *m)
{
	return m->env_pass.set;
}

/* Every field whose loosening layer.c reports, with what makes it the managed
 * file's. deniedDomains and protectedPaths are unions: no layer can drop an entry. */
static const struct {
	const char *field;
	bool (*sets)(const struct halo_policy *m);
} managed_fields[] = {
    {"sandbox.mode", sets_mode},
    {"sandbox.writableRoots", sets_roots},
    {"sandbox.failIfUnavailable", sets_fail},
    {"sandbox.guardPersistence", sets_guard},
    {"sandbox.caches", sets_caches},
    {"sandbox.unixSockets", sets_sockets},
    {"sandbox.allowRead", sets_carve_outs},
    {"egress.default", sets_default},
    {"egress.allowedDomains", sets_default},
    {"egress.presets", sets_default},
    {"egress.allowPrivate", sets_private},
    {"egress.hostPorts", sets_ports},
    {"egress.requestRules", sets_req_rules},
    {"egress.trustedCAs", sets_cas},
    {"egress.upstreamProxy", sets_upstream},
    {"env.pass", sets_env_pass},
};

bool policy_managed_sets(const struct halo_policy *m, const char *field)
{
	for (size_t i = 0; i < N(managed_fields); i++)
		if (strcmp(field, managed_fields[i].field) == 0)
			return managed_fields[i].sets(m);
	if (strncmp(field, "limits.", 7) == 0)
		for (size_t i = 0; i < policy_n_limit_fields; i++)
			if (strcmp(field + 7, policy_limit_fields[i].key) == 0)
				return *policy_limit_ptr((struct policy_limits *)&m->limits,
							 &policy_limit_fields[i]) !=
				       POLICY_LIMIT_UNSET;
	return true; /* a field this table does not know: the managed file's (fail closed) */
}

static int parse_managed(const struct policy_managed *m, struct halo_policy **out,
			 struct policy_diags *d)
{
	return policy_parse_buffer(m->name, m->buf, m->len, m->format, out, d);
}

/* The caller's files together, as one layer: what they add to the managed one. The
 * layers are the ones already parsed: a file read twice could be rewritten between
 * the reads, its loose first version run and its tight second version checked. */
static int combine(struct halo_policy *const *layers, const char *const *paths, size_t n,
		   struct halo_policy **out, char **names)
{
	struct policy_diags scratch = {0};
	struct halo_policy *c = NULL;
	size_t len = 0;
	int rc = policy_parse_buffer("(none)", "{}", 2, 'j', &c, &scratch);

	for (size_t i = 0; rc == 0 && i < n; i++) {
		rc = policy_layer(c, layers[i], paths[i], &scratch);
		len += strlen(paths[i]) + 2;
	}
	policy_diags_free(&scratch);
	*names = calloc(1, len + 1);
	if (rc < 0 || !*names) {
		policy_free(c);
		free(*names);
		*names = NULL;
		return rc < 0 ? rc : -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		snprintf(*names + strlen(*names), len + 1 - strlen(*names), "%s%s", i ? ", " : "",
			 paths[i]);
	*out = c;
	return 0;
}

static int check_against(const struct policy_managed *m, struct halo_policy *const *layers,
			 const char *const *paths, size_t n, struct policy_diags *d)
{
	struct halo_policy *raw = NULL, *base = NULL, *c = NULL;
	char *names = NULL;
	int rc;

	if (n == 0)
		return 0;
	rc = parse_managed(m, &raw, d);
	if (rc == 0)
		rc = parse_managed(m, &base, d);
	if (rc == 0)
		rc = combine(layers, paths, n, &c, &names);
	if (rc == 0)
		rc = policy_layer_managed(base, c, names, raw, m->name, d);
	free(names);
	policy_free(c);
	policy_free(base);
	policy_free(raw);
	return rc;
}

int policy_load_managed(const struct policy_managed *m, const char *const *paths, size_t n,
			const struct policy_ctx *ctx, struct halo_policy **out,
			struct policy_diags *d)
{
	return policy_load_with(m, paths, n, ctx, NULL, out, d);
}

int policy_load_with(const struct policy_managed *m, const char *const *paths, size_t n,
		     const struct policy_ctx *ctx, const struct policy_oneoff *oneoff,
		     struct halo_policy **out, struct policy_diags *d)
{
	struct halo_policy *base = NULL, **layers;
	bool failed = false;
	int rc;

	*out = NULL;
	if (!m)
		return policy_load_oneoff(paths, n, ctx, oneoff, out, d);
	if (parse_managed(m, &base, d) < 0)
		return -EINVAL;
	free(base->source);
	if (asprintf(&base->source, "managed %s", m->name) < 0) {
		base->source = NULL;
		policy_free(base);
		return -ENOMEM;
	}
	layers = calloc(n ? n : 1, sizeof(*layers));
	if (!layers) {
		policy_free(base);
		return -ENOMEM;
	}
	/* Every file is read (once) even after a failure, so one run reports every error. */
	for (size_t i = 0; i < n; i++) {
		if (policy_parse_file_partial(paths[i], &layers[i], d) < 0)
			failed = true;
		if (layers[i] && policy_layer(base, layers[i], paths[i], d) < 0)
			failed = true;
	}
	if (!failed && check_against(m, layers, paths, n, d) < 0)
		failed = true;
	/* Fail closed: whether a flag loosens what the managed layer sets is not worked
	 * out for one-offs; a policy file says it, and is checked. */
	if (policy_oneoff_any(oneoff)) {
		policy_diag(d, true, "command line", 0, NULL,
			    "--allow, --writable, --env, --host-port and --mode are refused under "
			    "the managed policy %s: put them in a policy file (--policy F), which "
			    "is checked against it",
			    m->name);
		failed = true;
	}
	for (size_t i = 0; i < n; i++)
		policy_free(layers[i]);
	free(layers);
	if (failed) {
		if (d)
			policy_finalize(base, ctx, d); /* its errors too, then refused anyway */
		policy_free(base);
		return -EINVAL;
	}
	rc = policy_finalize(base, ctx, d);
	if (rc < 0) {
		policy_free(base);
		return rc;
	}
	*out = base;
	return 0;
}
