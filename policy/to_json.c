/* The effective policy as JSON, for `halo-run policy --json` and for comparing
 * policies in tests. The schema blocks come first (so the output reads, and loads,
 * as a policy), then an "effective" block with what halo-run derived: the source,
 * the egress default and why, expanded paths, and every preset's entries.
 *
 * One walk of the policy, two writers: a cJSON tree (policy_to_json, printed as the
 * commands and the events show it) and compact text written directly
 * (policy_to_text, what a session call compares: the same walk, so a field the one
 * holds the other holds too, without loading libcjson at every call). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "policy/policy_int.h"

#define JB_DEPTH 8

struct jb {
	bool oom;
	int depth;
	/* the cJSON writer: the open containers */
	cJSON *stack[JB_DEPTH];
	/* the text writer */
	FILE *text;
	bool first[JB_DEPTH];
};

/* Attach item to the open container (object when key, else array); tolerates an
 * earlier failure so the walk stays linear, and remembers any. */
static cJSON *attach(struct jb *j, const char *key, cJSON *item)
{
	cJSON *parent = j->depth > 0 ? j->stack[j->depth - 1] : NULL;
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

/* A JSON string, escaped so that two texts differ whenever two values do; runs of
 * plain characters in one write (a call's identity writes the whole floor). */
static void text_str(FILE *f, const char *s)
{
	putc_unlocked('"', f);
	while (*s) {
		size_t run = 0;
		while (s[run] && s[run] != '"' && s[run] != '\\' && (unsigned char)s[run] >= 0x20)
			run++;
		fwrite(s, 1, run, f);
		s += run;
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s++);
		else if (*s)
			fprintf(f, "\\u%04x", (unsigned char)*s++);
	}
	putc_unlocked('"', f);
}

static void text_key(struct jb *j, const char *key)
{
	if (j->depth > 0 && !j->first[j->depth - 1])
		putc_unlocked(',', j->text);
	if (j->depth > 0)
		j->first[j->depth - 1] = false;
	if (key) {
		text_str(j->text, key);
		putc_unlocked(':', j->text);
	}
}

/* Open an object or array under key (NULL inside an array). */
static void open_(struct jb *j, const char *key, bool array)
{
	if (j->depth >= JB_DEPTH) {
		j->oom = true;
		return;
	}
	if (j->text) {
		text_key(j, key);
		putc_unlocked(array ? '[' : '{', j->text);
		j->first[j->depth++] = true;
		return;
	}
	cJSON *c = array ? cJSON_CreateArray() : cJSON_CreateObject();
	if (j->depth == 0) {
		if (!c)
			j->oom = true;
		j->stack[j->depth++] = c;
		return;
	}
	cJSON *attached = attach(j, key, c);
	j->stack[j->depth++] = attached;
}

static void close_(struct jb *j, bool array)
{
	if (j->depth <= 0)
		return;
	j->depth--;
	if (j->text)
		putc_unlocked(array ? ']' : '}', j->text);
}

static void put_str(struct jb *j, const char *key, const char *v)
{
	if (j->text) {
		text_key(j, key);
		text_str(j->text, v);
		return;
	}
	attach(j, key, cJSON_CreateString(v));
}

static void put_bool(struct jb *j, const char *key, bool v)
{
	if (j->text) {
		text_key(j, key);
		fputs(v ? "true" : "false", j->text);
		return;
	}
	attach(j, key, cJSON_CreateBool(v));
}

static void put_num(struct jb *j, const char *key, long long v)
{
	if (j->text) {
		text_key(j, key);
		fprintf(j->text, "%lld", v);
		return;
	}
	attach(j, key, cJSON_CreateNumber((double)v));
}

static void add_list(struct jb *j, const char *key, const struct policy_list *l)
{
	open_(j, key, true);
	for (size_t i = 0; i < l->n; i++)
		put_str(j, NULL, l->items[i]);
	close_(j, true);
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* trustedCAs, credentials (the value as a template: "${NAME}" is never expanded
 * here) and requestRules. */
static void add_tls(struct jb *j, const struct halo_policy *p)
{
	add_list(j, "trustedCAs", &p->trusted_cas);
	open_(j, "credentials", true);
	for (size_t i = 0; i < p->n_creds; i++) {
		open_(j, NULL, false);
		put_str(j, "host", or_empty(p->creds[i].host));
		put_str(j, "header", or_empty(p->creds[i].header));
		put_str(j, "value", or_empty(p->creds[i].value));
		close_(j, false);
	}
	close_(j, true);
	open_(j, "requestRules", true);
	for (size_t i = 0; i < p->n_req_rules; i++) {
		const struct policy_request_rule *r = &p->req_rules[i];

		open_(j, NULL, false);
		put_str(j, "host", or_empty(r->host));
		if (r->methods.set)
			add_list(j, "methods", &r->methods);
		if (r->paths.set)
			add_list(j, "paths", &r->paths);
		close_(j, false);
	}
	close_(j, true);
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

static void add_sandbox(struct jb *j, const struct halo_policy *p)
{
	enum policy_mode m = p->mode ? p->mode : POLICY_MODE_WORKSPACE_WRITE;

	open_(j, "sandbox", false);
	put_str(j, "mode", policy_mode_name(m));
	add_list(j, "writableRoots", &p->writable_roots);
	add_list(j, "protectedPaths", &p->protected_paths);
	add_list(j, "allowRead", &p->allow_read);
	put_bool(j, "failIfUnavailable", p->fail_if_unavailable != 0);
	put_bool(j, "guardPersistence", p->guard_persistence != 0);
	/* With mode off there is no sandbox to hold caches, and the key would not load. */
	if (m != POLICY_MODE_OFF)
		put_str(j, "caches", policy_caches_name(p->caches));
	add_list(j, "unixSockets", &p->unix_sockets);
	if (p->macos_allow_trustd == 1) {
		open_(j, "macos", false);
		put_bool(j, "allowTrustd", true);
		close_(j, false);
	}
	close_(j, false);
}

static void add_egress(struct jb *j, const struct halo_policy *p)
{
	open_(j, "egress", false);
	/* With mode off there is no egress control, and a default would not load. */
	if (p->mode != POLICY_MODE_OFF)
		put_str(j, "default", policy_effective_default_allow(p, false) ? "allow" : "deny");
	add_list(j, "allowedDomains", &p->allowed_domains);
	add_list(j, "presets", &p->presets);
	add_list(j, "deniedDomains", &p->denied_domains);
	add_list(j, "allowPrivate", &p->allow_private);
	open_(j, "hostPorts", true);
	for (size_t i = 0; i < p->host_ports.n; i++)
		put_num(j, NULL, p->host_ports.items[i]);
	close_(j, true);
	if (p->upstream_proxy)
		put_str(j, "upstreamProxy", p->upstream_proxy);
	add_tls(j, p);
	close_(j, false);
	if (p->gateway)
		put_str(j, "gateway", p->gateway);
}

static void add_limits_env(struct jb *j, const struct halo_policy *p)
{
	open_(j, "limits", false);
	for (size_t i = 0; i < policy_n_limit_fields; i++) {
		long long v =
		    *policy_limit_ptr((struct policy_limits *)&p->limits, &policy_limit_fields[i]);

		if (v != POLICY_LIMIT_UNSET)
			put_num(j, policy_limit_fields[i].key, v);
	}
	close_(j, false);
	open_(j, "env", false);
	add_list(j, "pass", &p->env_pass);
	open_(j, "set", false);
	for (size_t i = 0; i < p->n_env_set; i++)
		put_str(j, p->env_set[i].key, p->env_set[i].value);
	close_(j, false);
	close_(j, false);
}

/* The credential floor, always present: marked as such, with why and how. */
static void add_floor(struct jb *j, const struct halo_policy *p)
{
	const struct policy_floor_entry *f = NULL;
	size_t n = 0;

	open_(j, "floor", true);
	if (p->mode != POLICY_MODE_OFF)
		f = policy_floor(&n);
	for (size_t i = 0; i < n; i++) {
		open_(j, NULL, false);
		put_str(j, "path", f[i].path);
		put_str(j, "kind", f[i].kind == POLICY_FLOOR_SECRET ? "secret" : "mixed");
		if (f[i].sanitizer)
			put_str(j, "sanitizer", policy_sanitizer_name(f[i].sanitizer));
		put_str(j, "reason", f[i].reason);
		close_(j, false);
	}
	close_(j, true);
	open_(j, "sanitized", true);
	for (size_t i = 0; p->mode != POLICY_MODE_OFF && i < p->sanitize_abs.n; i++)
		put_str(j, NULL, p->sanitize_abs.items[i]);
	close_(j, true);
}

/* A preset listed twice is shown once. */
static bool preset_seen(const struct halo_policy *p, size_t i, const struct policy_preset *pr)
{
	for (size_t k = 0; k < i; k++)
		if (policy_preset_find(p->presets.items[k]) == pr)
			return true;
	return false;
}

static void add_effective(struct jb *j, const struct halo_policy *p)
{
	bool allow = policy_effective_default_allow(p, false);

	open_(j, "effective", false);
	put_str(j, "source", p->source ? p->source : "policy");
	put_str(j, "egressDefault", allow ? "allow" : "deny");
	put_str(j, "egressDefaultFrom", default_reason(p));
	add_list(j, "writableRoots", &p->writable_abs);
	add_list(j, "protectedPaths", &p->protected_abs);
	add_list(j, "protectedPatterns", &p->protected_globs);
	add_list(j, "allowRead", &p->allow_read_abs);
	add_floor(j, p);
	add_list(j, "unixSockets", &p->unix_sockets_abs);
	open_(j, "presets", false);
	for (size_t i = 0; i < p->presets.n; i++) {
		const struct policy_preset *pr = policy_preset_find(p->presets.items[i]);

		if (!pr || preset_seen(p, i, pr))
			continue;
		open_(j, pr->name, true);
		for (size_t k = 0; k < pr->n; k++) {
			open_(j, NULL, false);
			put_str(j, "pattern", pr->entries[k].pattern);
			put_str(j, "source", pr->entries[k].source);
			close_(j, false);
		}
		close_(j, true);
	}
	close_(j, false);
	close_(j, false);
}

static void walk(struct jb *j, const struct halo_policy *p)
{
	open_(j, NULL, false);
	add_sandbox(j, p);
	add_egress(j, p);
	add_limits_env(j, p);
	add_effective(j, p);
}

char *policy_to_json(const struct halo_policy *p)
{
	struct jb j = {0};
	char *text = NULL;

	walk(&j, p);
	if (!j.oom)
		text = cJSON_Print(j.stack[0]);
	cJSON_Delete(j.stack[0]);
	return text;
}

char *policy_to_text(const struct halo_policy *p)
{
	struct jb j = {0};
	char *text = NULL;
	size_t n = 0;

	if (!(j.text = open_memstream(&text, &n)))
		return NULL;
	walk(&j, p);
	close_(&j, false);
	if (fclose(j.text) != 0 || j.oom) {
		free(text);
		return NULL;
	}
	return text;
}
