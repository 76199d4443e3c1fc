/* policy_finalize(): validate every rule (collecting every error), then derive
 * what the launchers and the proxy use: the effective egress default, absolute
 * paths, parsed CIDRs and Decide's index. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy_int.h"

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

/* Sorted, so a list of 100k domains costs n log n, not n². */
static void warn_dups(const struct policy_list *l, const char *field, const struct policy_vctx *v)
{
	struct ref *r;
	char f[80], q[POLICY_QUOTE_MAX];

	if (l->n < 2)
		return;
	r = malloc(l->n * sizeof(*r));
	if (!r)
		return;
	for (size_t i = 0; i < l->n; i++)
		r[i] = (struct ref){l->items[i], i};
	qsort(r, l->n, sizeof(*r), ref_cmp);
	for (size_t i = 1, run = 0; i < l->n; i++) {
		if (strcmp(r[run].s, r[i].s) != 0) {
			run = i;
			continue;
		}
		snprintf(f, sizeof(f), "%s[%zu]", field, r[i].i);
		policy_diag(v->d, false, v->src, 0, f, "duplicate of %s[%zu] %s", field, r[run].i,
			    policy_quote(r[i].s, q, sizeof(q)));
	}
	free(r);
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void warn_allowed_and_denied(const struct halo_policy *p, const struct policy_vctx *v)
{
	char **denied, f[80], q[POLICY_QUOTE_MAX];
	size_t n = p->denied_domains.n;

	if (!n || !p->allowed_domains.n)
		return;
	denied = malloc(n * sizeof(*denied));
	if (!denied)
		return;
	memcpy(denied, p->denied_domains.items, n * sizeof(*denied));
	qsort(denied, n, sizeof(*denied), str_cmp);
	for (size_t i = 0; i < p->allowed_domains.n; i++) {
		if (!bsearch(&p->allowed_domains.items[i], denied, n, sizeof(*denied), str_cmp))
			continue;
		snprintf(f, sizeof(f), "egress.allowedDomains[%zu]", i);
		policy_diag(v->d, false, v->src, 0, f,
			    "%s is also in egress.deniedDomains, and deny wins",
			    policy_quote(p->allowed_domains.items[i], q, sizeof(q)));
	}
	free(denied);
}

void policy_warn_duplicates(const struct halo_policy *p, const struct policy_vctx *v)
{
	warn_dups(&p->writable_roots, "sandbox.writableRoots", v);
	warn_dups(&p->protected_paths, "sandbox.protectedPaths", v);
	warn_dups(&p->allowed_domains, "egress.allowedDomains", v);
	warn_dups(&p->presets, "egress.presets", v);
	warn_dups(&p->denied_domains, "egress.deniedDomains", v);
	warn_dups(&p->allow_private, "egress.allowPrivate", v);
	warn_dups(&p->env_pass, "env.pass", v);
	warn_allowed_and_denied(p, v);
}

/* The gateway is never allowed implicitly: a restricted policy that would refuse
 * it is a policy that cannot work, and must say so at load time. */
static void check_gateway_allowed(const struct halo_policy *p, const struct policy_vctx *v)
{
	struct policy_decision dec;
	char rule[300], q[POLICY_QUOTE_MAX];

	if (!p->gateway || p->mode == POLICY_MODE_OFF)
		return;
	policy_quote(p->gateway, q, sizeof(q));
	if (policy_decide(p, p->gateway, strlen(p->gateway), &dec) < 0) {
		policy_diag(v->d, true, v->src, 0, "gateway", "%s: cannot be decided", q);
		return;
	}
	if (dec.allow)
		return;
	policy_decision_rule(&dec, rule, sizeof(rule));
	policy_diag(v->d, true, v->src, 0, "gateway", "%s would be denied by this policy (%s); %s",
		    q, rule,
		    dec.rule == POLICY_RULE_DENIED ? "remove it from egress.deniedDomains"
						   : "add it to egress.allowedDomains");
}

/* Homes and workspace in normal form, so comparisons are plain prefix checks. */
struct fctx {
	char home[POLICY_PATH_MAX];
	char env_home[POLICY_PATH_MAX];
	char workspace[POLICY_PATH_MAX];
	struct policy_ctx ctx;
};

static int prepare(struct fctx *f, const struct policy_ctx *ctx, struct policy_vctx *v)
{
	const char *why;

	if (!ctx || !ctx->pw_home ||
	    policy_path_normalise(ctx->pw_home, true, f->home, sizeof(f->home), &why) < 0) {
		policy_diag(v->d, true, v->src, 0, NULL,
			    "no usable home directory from the password database");
		return -EINVAL;
	}
	f->ctx = *ctx;
	f->ctx.pw_home = f->home;
	v->homes[0] = f->home;
	v->n_homes = 1;
	/* An unusable $HOME (empty, relative) cannot be where ~ points for anyone. */
	if (ctx->env_home &&
	    policy_path_normalise(ctx->env_home, true, f->env_home, sizeof(f->env_home), &why) ==
		0 &&
	    strcmp(f->env_home, f->home) != 0) {
		v->homes[1] = f->env_home;
		v->n_homes = 2;
		f->ctx.env_home = f->env_home;
	}
	if (ctx->workspace) {
		if (policy_path_normalise(ctx->workspace, true, f->workspace, sizeof(f->workspace),
					  &why) < 0) {
			policy_diag(v->d, true, v->src, 0, NULL, "the workspace path %s", why);
			return -EINVAL;
		}
		f->ctx.workspace = f->workspace;
	}
	v->ctx = &f->ctx;
	return 0;
}

static void resolve_defaults(struct halo_policy *p)
{
	enum policy_mode legacy;

	if (p->mode == POLICY_MODE_UNSET && p->legacy_permissions_sandbox &&
	    policy_mode_parse(p->legacy_permissions_sandbox, &legacy) == 0)
		p->mode = legacy;
	if (p->mode == POLICY_MODE_UNSET)
		p->mode = POLICY_MODE_WORKSPACE_WRITE;
	if (p->fail_if_unavailable < 0)
		p->fail_if_unavailable = 1;
	if (p->guard_persistence < 0)
		p->guard_persistence = 1;
}

int policy_finalize(struct halo_policy *p, const struct policy_ctx *ctx, struct policy_diags *d)
{
	struct policy_diags local = {0};
	struct policy_vctx v = {.src = p->source ? p->source : "policy", .d = d ? d : &local};
	struct fctx *f = calloc(1, sizeof(*f));
	size_t before = v.d->n_errors;
	bool domains_ok = false;
	int rc;

	policy_derived_free(p);
	if (!f) {
		policy_diag(v.d, true, v.src, 0, NULL, "out of memory");
		policy_diags_free(&local);
		return -ENOMEM;
	}
	if (prepare(f, ctx, &v) < 0)
		goto out;
	resolve_defaults(p);
	/* In the order of the schema, so messages read top to bottom like the file. */
	policy_validate_paths(p, &v);
	policy_validate_egress(p, &v, &domains_ok);
	policy_validate_misc(p, &v);
	policy_warn_duplicates(p, &v);
	p->egress_default_allow = policy_effective_default_allow(p, false);
	if (domains_ok) {
		rc = policy_index_build(p);
		if (rc < 0)
			policy_diag(v.d, true, v.src, 0, NULL,
				    "cannot build the decision index: %s", strerror(-rc));
		else
			check_gateway_allowed(p, &v);
		if (rc >= 0)
			policy_validate_tls(p, &v);
	}
out:
	free(f);
	rc = v.d->n_errors > before ? -EINVAL : 0;
	if (rc < 0)
		policy_derived_free(p);
	policy_diags_free(&local);
	return rc;
}
