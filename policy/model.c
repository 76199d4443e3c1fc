/* The generic tree to a raw policy layer: every field's type, the known keys of
 * every block, the enum values. Rules that need the whole (merged) policy or the
 * world (home directories) are checked later by policy_finalize(). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy_int.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

enum ftype {
	F_BLOCK,
	F_MODE,
	F_DEFAULT,
	F_CACHES,
	F_LIST,
	F_BOOL,
	F_STRING,
	F_LIMITS,
	F_ENVSET,
	F_LEGACY,
	F_PORTS,
	F_CREDS, /* egress.credentials (model_tls.c) */
	F_RULES, /* egress.requestRules (model_tls.c) */
};

struct block;

struct field {
	const char *key;
	enum ftype type;
	size_t off; /* into struct halo_policy */
	const struct block *block;
};

struct block {
	const struct field *fields;
	size_t n;
};

#define OFF(m) offsetof(struct halo_policy, m)

static const struct field sandbox_macos_fields[] = {
    {"allowTrustd", F_BOOL, OFF(macos_allow_trustd), NULL},
};
static const struct block sandbox_macos_block = {sandbox_macos_fields, N(sandbox_macos_fields)};

static const struct field sandbox_fields[] = {
    {"mode", F_MODE, OFF(mode), NULL},
    {"writableRoots", F_LIST, OFF(writable_roots), NULL},
    {"protectedPaths", F_LIST, OFF(protected_paths), NULL},
    {"allowRead", F_LIST, OFF(allow_read), NULL},
    {"failIfUnavailable", F_BOOL, OFF(fail_if_unavailable), NULL},
    {"guardPersistence", F_BOOL, OFF(guard_persistence), NULL},
    {"caches", F_CACHES, OFF(caches), NULL},
    {"unixSockets", F_LIST, OFF(unix_sockets), NULL},
    {"macos", F_BLOCK, 0, &sandbox_macos_block},
};
static const struct field egress_fields[] = {
    {"default", F_DEFAULT, OFF(egress_default), NULL},
    {"allowedDomains", F_LIST, OFF(allowed_domains), NULL},
    {"presets", F_LIST, OFF(presets), NULL},
    {"deniedDomains", F_LIST, OFF(denied_domains), NULL},
    {"allowPrivate", F_LIST, OFF(allow_private), NULL},
    {"hostPorts", F_PORTS, OFF(host_ports), NULL},
    {"upstreamProxy", F_STRING, OFF(upstream_proxy), NULL},
    {"trustedCAs", F_LIST, OFF(trusted_cas), NULL},
    {"credentials", F_CREDS, 0, NULL},
    {"requestRules", F_RULES, 0, NULL},
};
static const struct field env_fields[] = {
    {"pass", F_LIST, OFF(env_pass), NULL},
    {"set", F_ENVSET, 0, NULL},
};
static const struct field permissions_fields[] = {
    {"sandbox", F_LEGACY, OFF(legacy_permissions_sandbox), NULL},
};
static const struct block sandbox_block = {sandbox_fields, N(sandbox_fields)};
static const struct block egress_block = {egress_fields, N(egress_fields)};
static const struct block env_block = {env_fields, N(env_fields)};
static const struct block permissions_block = {permissions_fields, N(permissions_fields)};

static const struct field top_fields[] = {
    {"sandbox", F_BLOCK, 0, &sandbox_block},   {"egress", F_BLOCK, 0, &egress_block},
    {"gateway", F_STRING, OFF(gateway), NULL}, {"limits", F_LIMITS, 0, NULL},
    {"env", F_BLOCK, 0, &env_block},	       {"permissions", F_BLOCK, 0, &permissions_block},
};

struct mctx {
	const char *name;
	struct policy_diags *d;
	struct halo_policy *p;
	unsigned legacy_line;
	size_t errors;
};

static void merr(struct mctx *m, unsigned line, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void merr(struct mctx *m, unsigned line, const char *path, const char *fmt, ...)
{
	char msg[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	m->errors++;
	policy_diag(m->d, true, m->name, line, path, "%s", msg);
}

static void type_error(struct mctx *m, const struct pnode *n, const char *path, const char *want)
{
	merr(m, n->line, path, "expected %s, got %s", want, pnode_kind_name(n));
}

/* A string where the value is free text: the YAML 1.1 look-alikes are refused,
 * because another reader of the same file would see a boolean or a number. */
static int get_string(struct mctx *m, const struct pnode *n, const char *path, bool allow_ctrl,
		      const char **out)
{
	char q[POLICY_QUOTE_MAX];

	if (n->kind != PN_STR) {
		type_error(m, n, path, "a string");
		return -EINVAL;
	}
	if (n->flags & PN_YAML11_BOOL) {
		merr(m, n->line, path,
		     "%s is a boolean in YAML 1.1; quote it if you mean the string",
		     policy_quote(n->str, q, sizeof(q)));
		return -EINVAL;
	}
	if (n->flags & PN_NUMBERISH) {
		merr(m, n->line, path,
		     "%s is a number in some YAML readers; quote it if you mean "
		     "the string",
		     policy_quote(n->str, q, sizeof(q)));
		return -EINVAL;
	}
	for (const char *s = n->str; !allow_ctrl && *s; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f) {
			merr(m, n->line, path, "%s contains a control character",
			     policy_quote(n->str, q, sizeof(q)));
			return -EINVAL;
		}
	}
	*out = n->str;
	return 0;
}

/* Enum values (mode, default) are keywords: plain `off` is meant as the word. */
static int get_keyword(struct mctx *m, const struct pnode *n, const char *path, const char **out)
{
	if (n->kind == PN_BOOL) {
		merr(m, n->line, path,
		     "expected a string, got a boolean (write the mode name, "
		     "e.g. off)");
		return -EINVAL;
	}
	if (n->kind != PN_STR) {
		type_error(m, n, path, "a string");
		return -EINVAL;
	}
	*out = n->str;
	return 0;
}

static void set_mode(struct mctx *m, const struct pnode *n, const char *path, enum policy_mode *out)
{
	const char *s;
	char q[POLICY_QUOTE_MAX];

	if (get_keyword(m, n, path, &s) < 0)
		return;
	if (policy_mode_parse(s, out) < 0)
		merr(m, n->line, path,
		     "unknown mode %s (expected off, workspace-write or read-only)",
		     policy_quote(s, q, sizeof(q)));
}

static void set_default(struct mctx *m, const struct pnode *n, const char *path,
			enum policy_egress_default *out)
{
	const char *s;
	char q[POLICY_QUOTE_MAX];

	if (get_keyword(m, n, path, &s) < 0)
		return;
	if (strcmp(s, "allow") == 0)
		*out = POLICY_EGRESS_ALLOW;
	else if (strcmp(s, "deny") == 0)
		*out = POLICY_EGRESS_DENY;
	else
		merr(m, n->line, path, "unknown value %s (expected allow or deny)",
		     policy_quote(s, q, sizeof(q)));
}

static void set_caches(struct mctx *m, const struct pnode *n, const char *path,
		       enum policy_caches *out)
{
	const char *s;
	char q[POLICY_QUOTE_MAX];

	if (get_keyword(m, n, path, &s) < 0)
		return;
	for (int c = POLICY_CACHES_ISOLATED; c <= POLICY_CACHES_OFF; c++)
		if (strcmp(s, policy_caches_name((enum policy_caches)c)) == 0) {
			*out = (enum policy_caches)c;
			return;
		}
	merr(m, n->line, path, "unknown value %s (expected isolated, host or off)",
	     policy_quote(s, q, sizeof(q)));
}

static void set_bool(struct mctx *m, const struct pnode *n, const char *path, int *out)
{
	char q[POLICY_QUOTE_MAX];

	if (n->kind == PN_BOOL) {
		*out = n->b;
	} else if (n->kind == PN_STR && (n->flags & PN_YAML11_BOOL)) {
		merr(m, n->line, path, "%s is a YAML 1.1 boolean spelling; write true or false",
		     policy_quote(n->str, q, sizeof(q)));
	} else {
		type_error(m, n, path, "a boolean (true or false)");
	}
}

static void set_list(struct mctx *m, const struct pnode *n, const char *path,
		     struct policy_list *out)
{
	char sub[256];

	if (n->kind != PN_SEQ) {
		type_error(m, n, path, "a list");
		return;
	}
	policy_list_free(out);
	out->set = true;
	for (size_t i = 0; i < n->n; i++) {
		const char *s;

		snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
		if (get_string(m, n->items[i], sub, false, &s) < 0)
			continue;
		if (policy_list_push(out, s) < 0)
			merr(m, n->line, path, "out of memory");
	}
}

/* One port: a YAML/JSON integer 1..65535. A string ("4873") is refused rather than
 * read as a number: the list opens the host to the sandbox, so its spelling must be
 * the one every reader agrees on. */
static int get_port(struct mctx *m, const struct pnode *n, const char *path, uint16_t *out)
{
	char q[POLICY_QUOTE_MAX];

	if (n->kind == PN_STR && (n->flags & PN_NUMBERISH)) {
		merr(m, n->line, path, "%s is not a plain decimal integer from 1 to 65535",
		     policy_quote(n->str, q, sizeof(q)));
		return -EINVAL;
	}
	if (n->kind == PN_STR) {
		merr(m, n->line, path,
		     "expected a port number (an integer from 1 to 65535), got the string %s; "
		     "write it without quotes",
		     policy_quote(n->str, q, sizeof(q)));
		return -EINVAL;
	}
	if (n->kind != PN_NUM) {
		type_error(m, n, path, "a port number (an integer from 1 to 65535)");
		return -EINVAL;
	}
	if (!(n->num >= 1 && n->num <= 65535) || n->num != (double)(long)n->num) {
		merr(m, n->line, path, "must be an integer from 1 to 65535, got %g", n->num);
		return -EINVAL;
	}
	*out = (uint16_t)n->num;
	return 0;
}

static void set_ports(struct mctx *m, const struct pnode *n, const char *path,
		      struct policy_ports *out)
{
	char sub[256];

	if (n->kind != PN_SEQ) {
		type_error(m, n, path, "a list of port numbers");
		return;
	}
	policy_ports_free(out);
	out->set = true;
	for (size_t i = 0; i < n->n; i++) {
		uint16_t port;

		snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
		if (get_port(m, n->items[i], sub, &port) < 0)
			continue;
		if (policy_ports_push(out, port) < 0)
			merr(m, n->line, path, "out of memory");
	}
}

static void set_string(struct mctx *m, const struct pnode *n, const char *path, char **out)
{
	const char *s;

	if (get_string(m, n, path, false, &s) < 0)
		return;
	free(*out);
	*out = strdup(s);
	if (!*out)
		merr(m, n->line, path, "out of memory");
}

static void set_limits(struct mctx *m, const struct pnode *n, const char *path)
{
	char sub[256], why[160], q[POLICY_QUOTE_MAX];

	if (n->kind != PN_MAP) {
		type_error(m, n, path, "a mapping");
		return;
	}
	for (size_t i = 0; i < n->n; i++) {
		const struct policy_limit_field *f = NULL;
		const struct pnode *v = n->items[i];

		snprintf(sub, sizeof(sub), "%s.%s", path, n->keys[i]);
		for (size_t k = 0; k < policy_n_limit_fields; k++)
			if (strcmp(n->keys[i], policy_limit_fields[k].key) == 0)
				f = &policy_limit_fields[k];
		if (!f) {
			merr(m, n->key_lines[i], path,
			     "unknown key %s (known: cpuSeconds, memoryMB, fileSizeMB, openFiles, "
			     "processes, wallSeconds, sessionIdleSeconds, connections, "
			     "wildcardNames, "
			     "wildcardNamesPerMinute)",
			     policy_quote(n->keys[i], q, sizeof(q)));
		} else if (v->kind == PN_STR && (v->flags & PN_NUMBERISH)) {
			merr(m, v->line, sub, "%s is not a plain decimal integer",
			     policy_quote(v->str, q, sizeof(q)));
		} else if (v->kind != PN_NUM) {
			type_error(m, v, sub, "a positive integer");
		} else if (policy_limit_check(f, v->num, why, sizeof(why)) < 0) {
			merr(m, v->line, sub, "%s", why);
		} else {
			*policy_limit_ptr(&m->p->limits, f) = (long long)v->num;
		}
	}
}

static void set_env(struct mctx *m, const struct pnode *n, const char *path)
{
	char sub[256];

	if (n->kind != PN_MAP) {
		type_error(m, n, path, "a mapping");
		return;
	}
	policy_env_set_free(m->p);
	m->p->env_set_set = true;
	m->p->env_set = calloc(n->n ? n->n : 1, sizeof(*m->p->env_set));
	if (!m->p->env_set) {
		merr(m, n->line, path, "out of memory");
		return;
	}
	for (size_t i = 0; i < n->n; i++) {
		struct policy_kv *kv = &m->p->env_set[m->p->n_env_set];
		const char *s;

		policy_field_join(sub, sizeof(sub), path, n->keys[i], -1);
		if (n->items[i]->kind == PN_NUM || n->items[i]->kind == PN_BOOL) {
			merr(m, n->items[i]->line, sub, "expected a string, got %s (quote it)",
			     pnode_kind_name(n->items[i]));
			continue;
		}
		if (get_string(m, n->items[i], sub, true, &s) < 0)
			continue;
		kv->key = strdup(n->keys[i]);
		kv->value = strdup(s);
		m->p->n_env_set++;
		if (!kv->key || !kv->value)
			merr(m, n->line, sub, "out of memory");
	}
}

static void read_block(struct mctx *m, const struct pnode *n, const char *path,
		       const struct block *b);

static void read_field(struct mctx *m, const struct field *f, const struct pnode *v,
		       const char *path)
{
	char *base = (char *)m->p;

	switch (f->type) {
	case F_BLOCK:
		read_block(m, v, path, f->block);
		break;
	case F_MODE:
		set_mode(m, v, path, (enum policy_mode *)(base + f->off));
		break;
	case F_DEFAULT:
		set_default(m, v, path, (enum policy_egress_default *)(base + f->off));
		break;
	case F_CACHES:
		set_caches(m, v, path, (enum policy_caches *)(base + f->off));
		break;
	case F_LIST:
		set_list(m, v, path, (struct policy_list *)(base + f->off));
		break;
	case F_PORTS:
		set_ports(m, v, path, (struct policy_ports *)(base + f->off));
		break;
	case F_BOOL:
		set_bool(m, v, path, (int *)(base + f->off));
		break;
	case F_STRING:
		set_string(m, v, path, (char **)(base + f->off));
		break;
	case F_LIMITS:
		set_limits(m, v, path);
		break;
	case F_ENVSET:
		set_env(m, v, path);
		break;
	case F_CREDS:
		m->errors += policy_model_credentials(m->name, m->d, m->p, v, path);
		break;
	case F_RULES:
		m->errors += policy_model_request_rules(m->name, m->d, m->p, v, path);
		break;
	case F_LEGACY: {
		enum policy_mode mode = POLICY_MODE_UNSET;
		char **legacy = (char **)(base + f->off);

		set_mode(m, v, path, &mode);
		if (mode != POLICY_MODE_UNSET) {
			free(*legacy);
			*legacy = strdup(policy_mode_name(mode));
			if (!*legacy)
				merr(m, v->line, path, "out of memory");
		}
		m->legacy_line = v->line;
		break;
	}
	}
}

static const struct field *find_field(const struct block *b, const char *key)
{
	for (size_t i = 0; i < b->n; i++)
		if (strcmp(b->fields[i].key, key) == 0)
			return &b->fields[i];
	return NULL;
}

static void unknown_key(struct mctx *m, const struct pnode *n, size_t i, const char *path,
			const struct block *b)
{
	char known[400] = "", q[POLICY_QUOTE_MAX];
	size_t len = 0;

	for (size_t k = 0; k < b->n && len < sizeof(known); k++)
		len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s", k ? ", " : "",
					b->fields[k].key);
	merr(m, n->key_lines[i], path, "unknown key %s (known: %s)",
	     policy_quote(n->keys[i], q, sizeof(q)), known);
}

static void read_block(struct mctx *m, const struct pnode *n, const char *path,
		       const struct block *b)
{
	char sub[256];

	if (n->kind != PN_MAP) {
		type_error(m, n, path, "a mapping");
		return;
	}
	for (size_t i = 0; i < n->n; i++) {
		const struct field *f = find_field(b, n->keys[i]);

		if (!f) {
			unknown_key(m, n, i, path, b);
			continue;
		}
		snprintf(sub, sizeof(sub), "%s.%s", path, f->key);
		read_field(m, f, n->items[i], sub);
	}
}

/* Unknown top-level keys are only warnings (room for future blocks), except a
 * near miss of a known block: "egres:" must not silently drop every egress rule. */
static void unknown_top(struct mctx *m, const struct pnode *root, size_t i)
{
	const char *key = root->keys[i];
	size_t len = strlen(key);
	char q[POLICY_QUOTE_MAX];

	for (size_t k = 0; k < N(top_fields); k++) {
		size_t dist = policy_edit_distance(key, top_fields[k].key);

		if (dist <= (len <= 4 ? 1u : 2u)) {
			merr(m, root->key_lines[i], NULL,
			     "unknown top-level key %s: did you mean '%s'? (refused: a typo must "
			     "not drop a block of rules)",
			     policy_quote(key, q, sizeof(q)), top_fields[k].key);
			return;
		}
	}
	policy_diag(m->d, false, m->name, root->key_lines[i], NULL,
		    "unknown top-level key %s ignored", policy_quote(key, q, sizeof(q)));
}

/* permissions.sandbox is the legacy spelling of sandbox.mode: alone it sets the
 * mode, together they must agree. */
static void legacy_mode(struct mctx *m)
{
	struct halo_policy *p = m->p;
	enum policy_mode legacy;
	char q[POLICY_QUOTE_MAX];

	if (!p->legacy_permissions_sandbox ||
	    policy_mode_parse(p->legacy_permissions_sandbox, &legacy) < 0)
		return;
	if (p->mode == POLICY_MODE_UNSET)
		p->mode = legacy;
	else if (p->mode != legacy)
		merr(m, m->legacy_line, "permissions.sandbox",
		     "%s disagrees with sandbox.mode '%s'",
		     policy_quote(p->legacy_permissions_sandbox, q, sizeof(q)),
		     policy_mode_name(p->mode));
}

int policy_model_from_tree(const char *name, const struct pnode *root, struct halo_policy **out,
			   struct policy_diags *d)
{
	struct mctx m = {.name = name, .d = d};

	*out = NULL;
	if (root->kind != PN_MAP) {
		policy_diag(d, true, name, root->line, NULL,
			    "the top level must be a mapping of blocks (sandbox, egress, ...), "
			    "got %s",
			    pnode_kind_name(root));
		return -EINVAL;
	}
	m.p = policy_new();
	if (!m.p) {
		policy_diag(d, true, name, 0, NULL, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < root->n; i++) {
		const struct field *f = NULL;

		for (size_t k = 0; k < N(top_fields) && !f; k++)
			if (strcmp(top_fields[k].key, root->keys[i]) == 0)
				f = &top_fields[k];
		if (f)
			read_field(&m, f, root->items[i], f->key);
		else
			unknown_top(&m, root, i);
	}
	legacy_mode(&m);
	if (m.errors) {
		if (d && d->keep_partial) /* for the loaders' diagnostics only */
			*out = m.p;
		else
			policy_free(m.p);
		return -EINVAL;
	}
	*out = m.p;
	return 0;
}
