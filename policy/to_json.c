/* The effective policy as JSON, for `halo-run policy --json` and for comparing
 * policies in tests. The schema blocks come first (so the output reads, and loads,
 * as a policy), then an "effective" block with what halo-run derived: the source,
 * the egress default and why, expanded paths, and every preset's entries. */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "policy/policy_int.h"

struct jb {
	bool oom;
};

/* Attach item to parent (object when key, else array); tolerates an earlier
 * failure so the building code stays linear, and remembers any. */
static cJSON *add(struct jb *j, cJSON *parent, const char *key, cJSON *item)
{
	bool ok;

	if (!item) {
		j->oom = true;
		return NULL;
	}
	if (!parent) {
		cJSON_Delete(item);
		j->oom = true;
		return NULL;
	}
	ok = key ? cJSON_AddItemToObject(parent, key, item) : cJSON_AddItemToArray(parent, item);
	if (!ok) {
		cJSON_Delete(item);
		j->oom = true;
		return NULL;
	}
	return item;
}

static void add_list(struct jb *j, cJSON *parent, const char *key, const struct policy_list *l)
{
	cJSON *a = add(j, parent, key, cJSON_CreateArray());

	for (size_t i = 0; i < l->n; i++)
		add(j, a, NULL, cJSON_CreateString(l->items[i]));
}

/* trustedCAs, credentials (the value as a template: "${NAME}" is never expanded
 * here) and requestRules. */
static void add_tls(struct jb *j, cJSON *e, const struct halo_policy *p)
{
	cJSON *creds, *rules;

	add_list(j, e, "trustedCAs", &p->trusted_cas);
	creds = add(j, e, "credentials", cJSON_CreateArray());
	for (size_t i = 0; i < p->n_creds; i++) {
		cJSON *c = add(j, creds, NULL, cJSON_CreateObject());

		add(j, c, "host", cJSON_CreateString(p->creds[i].host ? p->creds[i].host : ""));
		add(j, c, "header",
		    cJSON_CreateString(p->creds[i].header ? p->creds[i].header : ""));
		add(j, c, "value", cJSON_CreateString(p->creds[i].value ? p->creds[i].value : ""));
	}
	rules = add(j, e, "requestRules", cJSON_CreateArray());
	for (size_t i = 0; i < p->n_req_rules; i++) {
		const struct policy_request_rule *r = &p->req_rules[i];
		cJSON *o = add(j, rules, NULL, cJSON_CreateObject());

		add(j, o, "host", cJSON_CreateString(r->host ? r->host : ""));
		if (r->methods.set)
			add_list(j, o, "methods", &r->methods);
		if (r->paths.set)
			add_list(j, o, "paths", &r->paths);
	}
}

static const char *default_reason(const struct halo_policy *p)
{
	if (p->mode == POLICY_MODE_OFF)
		return "sandbox.mode off: no egress control";
	if (p->egress_default != POLICY_EGRESS_UNSET)
		return "egress.default, set explicitly";
	if (p->allowed_domains.n || p->presets.n)
		return "unset, with an allowlist: deny";
	if (p->denied_domains.n)
		return "unset, with only a denylist: allow";
	return "unset, nothing allowed: deny (fail closed)";
}

static void add_sandbox(struct jb *j, cJSON *root, const struct halo_policy *p)
{
	cJSON *s = add(j, root, "sandbox", cJSON_CreateObject());
	enum policy_mode m = p->mode ? p->mode : POLICY_MODE_WORKSPACE_WRITE;

	add(j, s, "mode", cJSON_CreateString(policy_mode_name(m)));
	add_list(j, s, "writableRoots", &p->writable_roots);
	add_list(j, s, "protectedPaths", &p->protected_paths);
	add_list(j, s, "allowRead", &p->allow_read);
	add(j, s, "failIfUnavailable", cJSON_CreateBool(p->fail_if_unavailable != 0));
	add(j, s, "guardPersistence", cJSON_CreateBool(p->guard_persistence != 0));
	/* With mode off there is no sandbox to hold caches, and the key would not load. */
	if (m != POLICY_MODE_OFF)
		add(j, s, "caches", cJSON_CreateString(policy_caches_name(p->caches)));
	add_list(j, s, "unixSockets", &p->unix_sockets);
	if (p->macos_allow_trustd == 1)
		add(j, add(j, s, "macos", cJSON_CreateObject()), "allowTrustd",
		    cJSON_CreateBool(true));
}

static void add_egress(struct jb *j, cJSON *root, const struct halo_policy *p)
{
	cJSON *e = add(j, root, "egress", cJSON_CreateObject());
	cJSON *ports;

	/* With mode off there is no egress control, and a default would not load. */
	if (p->mode != POLICY_MODE_OFF)
		add(j, e, "default",
		    cJSON_CreateString(policy_effective_default_allow(p, false) ? "allow"
										: "deny"));
	add_list(j, e, "allowedDomains", &p->allowed_domains);
	add_list(j, e, "presets", &p->presets);
	add_list(j, e, "deniedDomains", &p->denied_domains);
	add_list(j, e, "allowPrivate", &p->allow_private);
	ports = add(j, e, "hostPorts", cJSON_CreateArray());
	for (size_t i = 0; i < p->host_ports.n; i++)
		add(j, ports, NULL, cJSON_CreateNumber(p->host_ports.items[i]));
	if (p->upstream_proxy)
		add(j, e, "upstreamProxy", cJSON_CreateString(p->upstream_proxy));
	add_tls(j, e, p);
	if (p->gateway)
		add(j, root, "gateway", cJSON_CreateString(p->gateway));
}

static void add_limits_env(struct jb *j, cJSON *root, const struct halo_policy *p)
{
	cJSON *l = add(j, root, "limits", cJSON_CreateObject());
	cJSON *env, *set;

	for (size_t i = 0; i < policy_n_limit_fields; i++) {
		long long v =
		    *policy_limit_ptr((struct policy_limits *)&p->limits, &policy_limit_fields[i]);

		if (v != POLICY_LIMIT_UNSET)
			add(j, l, policy_limit_fields[i].key, cJSON_CreateNumber((double)v));
	}
	env = add(j, root, "env", cJSON_CreateObject());
	add_list(j, env, "pass", &p->env_pass);
	set = add(j, env, "set", cJSON_CreateObject());
	for (size_t i = 0; i < p->n_env_set; i++)
		add(j, set, p->env_set[i].key, cJSON_CreateString(p->env_set[i].value));
}

/* The credential floor, always present: marked as such, with why and how. */
static void add_floor(struct jb *j, cJSON *e, const struct halo_policy *p)
{
	cJSON *fl = add(j, e, "floor", cJSON_CreateArray());
	cJSON *san = add(j, e, "sanitized", cJSON_CreateArray());
	const struct policy_floor_entry *f;
	size_t n;

	if (p->mode == POLICY_MODE_OFF)
		return;
	f = policy_floor(&n);
	for (size_t i = 0; i < n; i++) {
		cJSON *o = add(j, fl, NULL, cJSON_CreateObject());

		add(j, o, "path", cJSON_CreateString(f[i].path));
		add(j, o, "kind",
		    cJSON_CreateString(f[i].kind == POLICY_FLOOR_SECRET ? "secret" : "mixed"));
		if (f[i].sanitizer)
			add(j, o, "sanitizer",
			    cJSON_CreateString(policy_sanitizer_name(f[i].sanitizer)));
		add(j, o, "reason", cJSON_CreateString(f[i].reason));
	}
	for (size_t i = 0; i < p->sanitize_abs.n; i++)
		add(j, san, NULL, cJSON_CreateString(p->sanitize_abs.items[i]));
}

static void add_effective(struct jb *j, cJSON *root, const struct halo_policy *p)
{
	cJSON *e = add(j, root, "effective", cJSON_CreateObject());
	cJSON *presets;
	bool allow = policy_effective_default_allow(p, false);

	add(j, e, "source", cJSON_CreateString(p->source ? p->source : "policy"));
	add(j, e, "egressDefault", cJSON_CreateString(allow ? "allow" : "deny"));
	add(j, e, "egressDefaultFrom", cJSON_CreateString(default_reason(p)));
	add_list(j, e, "writableRoots", &p->writable_abs);
	add_list(j, e, "protectedPaths", &p->protected_abs);
	add_list(j, e, "protectedPatterns", &p->protected_globs);
	add_list(j, e, "allowRead", &p->allow_read_abs);
	add_floor(j, e, p);
	add_list(j, e, "unixSockets", &p->unix_sockets_abs);
	presets = add(j, e, "presets", cJSON_CreateObject());
	for (size_t i = 0; i < p->presets.n; i++) {
		const struct policy_preset *pr = policy_preset_find(p->presets.items[i]);
		cJSON *list;

		if (!pr || cJSON_GetObjectItemCaseSensitive(presets, pr->name))
			continue;
		list = add(j, presets, pr->name, cJSON_CreateArray());
		for (size_t k = 0; k < pr->n; k++) {
			cJSON *o = add(j, list, NULL, cJSON_CreateObject());

			add(j, o, "pattern", cJSON_CreateString(pr->entries[k].pattern));
			add(j, o, "source", cJSON_CreateString(pr->entries[k].source));
		}
	}
}

char *policy_to_json(const struct halo_policy *p)
{
	struct jb j = {0};
	cJSON *root = cJSON_CreateObject();
	char *text = NULL;

	if (!root)
		return NULL;
	add_sandbox(&j, root, p);
	add_egress(&j, root, p);
	add_limits_env(&j, root, p);
	add_effective(&j, root, p);
	if (!j.oom)
		text = cJSON_Print(root);
	cJSON_Delete(root);
	return text;
}
