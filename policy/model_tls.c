/* egress.credentials and egress.requestRules: lists of mappings, read from the tree
 * into the raw layer with their types and known keys checked. What the values mean
 * (hosts allowed, header names, templates, paths) is validate_tls.c's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy_int.h"

struct tctx {
	const char *name;
	struct policy_diags *d;
	size_t errors;
};

static void terr(struct tctx *t, unsigned line, const char *path, const char *msg)
{
	t->errors++;
	policy_diag(t->d, true, t->name, line, path, "%s", msg);
}

/* A string value: quoted look-alikes of booleans and numbers are refused as elsewhere. */
static const char *str_of(struct tctx *t, const struct pnode *n, const char *path)
{
	char msg[200];

	if (n->kind != PN_STR || (n->flags & (PN_YAML11_BOOL | PN_NUMBERISH))) {
		snprintf(msg, sizeof(msg), "expected a string, got %s%s", pnode_kind_name(n),
			 n->kind == PN_STR
			     ? " that other YAML readers take for another type; quote it"
			     : "");
		terr(t, n->line, path, msg);
		return NULL;
	}
	return n->str;
}

static void list_of(struct tctx *t, const struct pnode *n, const char *path, struct policy_list *l)
{
	char sub[400];

	if (n->kind != PN_SEQ) {
		terr(t, n->line, path, "expected a list of strings");
		return;
	}
	l->set = true;
	for (size_t i = 0; i < n->n; i++) {
		const char *s;

		snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
		s = str_of(t, n->items[i], sub);
		if (s && policy_list_push(l, s) < 0)
			terr(t, n->line, sub, "out of memory");
	}
}

static void dup_into(struct tctx *t, const struct pnode *n, const char *path, char **out)
{
	const char *s = str_of(t, n, path);

	if (!s)
		return;
	free(*out);
	*out = strdup(s);
	if (!*out)
		terr(t, n->line, path, "out of memory");
}

/* One entry's keys: every known key once, every unknown one an error (a typo must
 * not drop a restriction), the required ones present. */
static bool keys_ok(struct tctx *t, const struct pnode *n, const char *path,
		    const char *const *known, const char *const *required)
{
	char msg[300];
	bool ok = true;

	if (n->kind != PN_MAP) {
		terr(t, n->line, path, "expected a mapping");
		return false;
	}
	for (size_t i = 0; i < n->n; i++) {
		bool found = false;

		for (size_t k = 0; known[k] && !found; k++)
			found = strcmp(known[k], n->keys[i]) == 0;
		if (!found) {
			char q[POLICY_QUOTE_MAX];

			snprintf(msg, sizeof(msg), "unknown key %s",
				 policy_quote(n->keys[i], q, sizeof(q)));
			terr(t, n->key_lines[i], path, msg);
			ok = false;
		}
	}
	for (size_t k = 0; required[k]; k++) {
		bool found = false;

		for (size_t i = 0; i < n->n && !found; i++)
			found = strcmp(required[k], n->keys[i]) == 0;
		if (!found) {
			snprintf(msg, sizeof(msg), "'%s' is required", required[k]);
			terr(t, n->line, path, msg);
			ok = false;
		}
	}
	return ok;
}

size_t policy_model_credentials(const char *name, struct policy_diags *d, struct halo_policy *p,
				const struct pnode *n, const char *path)
{
	static const char *const known[] = {"host", "header", "value", NULL};
	struct tctx t = {.name = name, .d = d};
	char sub[256], f[300];

	if (n->kind != PN_SEQ) {
		terr(&t, n->line, path, "expected a list of {host, header, value}");
		return t.errors;
	}
	policy_creds_free(p);
	p->creds_set = true;
	p->creds = calloc(n->n ? n->n : 1, sizeof(*p->creds));
	if (!p->creds) {
		terr(&t, n->line, path, "out of memory");
		return t.errors;
	}
	for (size_t i = 0; i < n->n; i++) {
		const struct pnode *e = n->items[i];
		struct policy_credential *c = &p->creds[p->n_creds];

		snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
		if (!keys_ok(&t, e, sub, known, known))
			continue;
		p->n_creds++;
		for (size_t k = 0; k < e->n; k++) {
			char **dst = strcmp(e->keys[k], "host") == 0	 ? &c->host
				     : strcmp(e->keys[k], "header") == 0 ? &c->header
									 : &c->value;
			snprintf(f, sizeof(f), "%s.%s", sub, e->keys[k]);
			dup_into(&t, e->items[k], f, dst);
		}
	}
	return t.errors;
}

size_t policy_model_request_rules(const char *name, struct policy_diags *d, struct halo_policy *p,
				  const struct pnode *n, const char *path)
{
	static const char *const known[] = {"host", "methods", "paths", NULL};
	static const char *const required[] = {"host", NULL};
	struct tctx t = {.name = name, .d = d};
	char sub[256], f[300];

	if (n->kind != PN_SEQ) {
		terr(&t, n->line, path, "expected a list of {host, methods, paths}");
		return t.errors;
	}
	policy_req_rules_free(p);
	p->req_rules_set = true;
	p->req_rules = calloc(n->n ? n->n : 1, sizeof(*p->req_rules));
	if (!p->req_rules) {
		terr(&t, n->line, path, "out of memory");
		return t.errors;
	}
	for (size_t i = 0; i < n->n; i++) {
		const struct pnode *e = n->items[i];
		struct policy_request_rule *r = &p->req_rules[p->n_req_rules];

		snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
		if (!keys_ok(&t, e, sub, known, required))
			continue;
		p->n_req_rules++;
		for (size_t k = 0; k < e->n; k++) {
			snprintf(f, sizeof(f), "%s.%s", sub, e->keys[k]);
			if (strcmp(e->keys[k], "host") == 0)
				dup_into(&t, e->items[k], f, &r->host);
			else
				list_of(&t, e->items[k], f,
					strcmp(e->keys[k], "methods") == 0 ? &r->methods
									   : &r->paths);
		}
	}
	return t.errors;
}

void policy_creds_free(struct halo_policy *p)
{
	for (size_t i = 0; i < p->n_creds; i++) {
		free(p->creds[i].host);
		free(p->creds[i].header);
		if (p->creds[i].value) /* a template, but it may hold a literal secret */
			memset(p->creds[i].value, 0, strlen(p->creds[i].value));
		free(p->creds[i].value);
	}
	free(p->creds);
	p->creds = NULL;
	p->n_creds = 0;
	p->creds_set = false;
}

void policy_req_rules_free(struct halo_policy *p)
{
	for (size_t i = 0; i < p->n_req_rules; i++) {
		free(p->req_rules[i].host);
		policy_list_free(&p->req_rules[i].methods);
		policy_list_free(&p->req_rules[i].paths);
	}
	free(p->req_rules);
	p->req_rules = NULL;
	p->n_req_rules = 0;
	p->req_rules_set = false;
}

static int sdup(char **dst, const char *src)
{
	*dst = src ? strdup(src) : NULL;
	return src && !*dst ? -ENOMEM : 0;
}

int policy_creds_copy(struct halo_policy *dst, const struct halo_policy *src)
{
	int rc = 0;

	policy_creds_free(dst);
	dst->creds_set = src->creds_set;
	dst->creds = calloc(src->n_creds ? src->n_creds : 1, sizeof(*dst->creds));
	if (!dst->creds)
		return -ENOMEM;
	for (size_t i = 0; i < src->n_creds; i++, dst->n_creds++) {
		rc |= sdup(&dst->creds[i].host, src->creds[i].host);
		rc |= sdup(&dst->creds[i].header, src->creds[i].header);
		rc |= sdup(&dst->creds[i].value, src->creds[i].value);
	}
	return rc ? -ENOMEM : 0;
}

int policy_req_rules_copy(struct halo_policy *dst, const struct halo_policy *src)
{
	int rc = 0;

	policy_req_rules_free(dst);
	dst->req_rules_set = src->req_rules_set;
	dst->req_rules = calloc(src->n_req_rules ? src->n_req_rules : 1, sizeof(*dst->req_rules));
	if (!dst->req_rules)
		return -ENOMEM;
	for (size_t i = 0; i < src->n_req_rules; i++, dst->n_req_rules++) {
		const struct policy_request_rule *s = &src->req_rules[i];
		struct policy_request_rule *r = &dst->req_rules[i];

		rc |= sdup(&r->host, s->host);
		rc |= policy_list_copy(&r->methods, &s->methods);
		rc |= policy_list_copy(&r->paths, &s->paths);
	}
	return rc ? -ENOMEM : 0;
}
