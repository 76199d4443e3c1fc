/* The harness table, the output builder and the warnings every harness shares. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/render_int.h"

extern const struct render_adapter render_claude_code, render_codex, render_copilot, render_gemini,
    render_opencode, render_cursor;

static const struct render_adapter *const adapters[] = {
    &render_claude_code, &render_codex,	   &render_copilot,
    &render_gemini,	 &render_opencode, &render_cursor,
};

size_t render_n_adapters(void)
{
	return RN(adapters);
}

/* By a name or alias of policy/'s harness table (every adapter's name is a row that
 * supports POLICY_HARNESS_RENDER; test_harness.c checks both ways). */
const struct render_adapter *render_adapter_find(const char *name)
{
	const struct policy_harness *h = policy_harness_find(name, POLICY_HARNESS_RENDER);

	for (size_t i = 0; h && i < RN(adapters); i++)
		if (strcmp(adapters[i]->name, h->name) == 0)
			return adapters[i];
	return NULL;
}

const struct render_adapter *render_adapter_at(size_t i)
{
	return i < RN(adapters) ? adapters[i] : NULL;
}

static const char *const os_names[] = {
    [RENDER_OS_LINUX] = "linux", [RENDER_OS_MACOS] = "macos", [RENDER_OS_WINDOWS] = "windows"};

int render_os_parse(const char *s, enum render_os *os)
{
	for (size_t i = 0; i < RN(os_names); i++)
		if (strcmp(s, os_names[i]) == 0) {
			*os = (enum render_os)i;
			return 0;
		}
	return -EINVAL;
}

const char *render_os_name(enum render_os os)
{
	return (size_t)os < RN(os_names) ? os_names[os] : "?";
}

/* ---------------------------------------------------------------- output */

void render_mark(struct render_out *out, enum render_field f)
{
	if (f < RENDER_N_FIELDS)
		out->handled[f] |= RF_RENDERED;
}

void render_warn(struct render_out *out, enum render_field f, const char *fmt, ...)
{
	char reason[1024], *text = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (f < RENDER_N_FIELDS)
		out->handled[f] |= RF_WARNED;
	if (out->n_w == out->cap_w) {
		size_t cap = out->cap_w ? out->cap_w * 2 : 16;
		struct render_warning *w = realloc(out->w, cap * sizeof(*w));
		if (!w) {
			out->oom = true;
			return;
		}
		out->w = w;
		out->cap_w = cap;
	}
	if (asprintf(&text, "%s: %s", render_field_name(f), reason) < 0) {
		out->oom = true;
		return;
	}
	out->w[out->n_w].field = f;
	out->w[out->n_w++].text = text;
}

void render_add_file(struct render_out *out, const char *name, const char *install, char *text)
{
	if (!text || out->n_files == RENDER_MAX_FILES) {
		free(text);
		out->oom = true;
		return;
	}
	out->files[out->n_files].name = name;
	out->files[out->n_files].install = install;
	out->files[out->n_files++].text = text;
}

void render_out_free(struct render_out *out)
{
	for (size_t i = 0; i < out->n_files; i++)
		free(out->files[i].text);
	for (size_t i = 0; i < out->n_w; i++)
		free(out->w[i].text);
	free(out->w);
	memset(out, 0, sizeof(*out));
}

/* ---------------------------------------------------------------- shared warnings */

struct halo_only {
	enum render_field f;
	const char *reason;
};

/* What no harness's managed settings can hold: each is enforced only when the
 * command runs under halo-run itself. */
static const struct halo_only halo_only[] = {
    {RF_ALLOW_READ, "carve-outs from protected paths have no equivalent; the carved paths stay "
		    "denied here (tighter than halo-run)"},
    {RF_GUARD_PERSISTENCE,
     "no equivalent: .git/hooks, shell rc files and the like stay "
     "writable to the harness's commands; only halo-run keeps them read-only"},
    {RF_CACHES, "no equivalent: the harness's commands use its own cache handling"},
    {RF_UNIX_SOCKETS, "no managed equivalent; host unix sockets are as the harness leaves them"},
    {RF_MACOS_ALLOW_TRUSTD, "no managed equivalent: whether the harness's own macOS sandbox "
			    "lets commands reach trustd is the harness's choice"},
    {RF_ALLOW_PRIVATE, "no equivalent: private-address refusal after resolution is halo-run's "
		       "proxy; the harness applies its own rule for private addresses"},
    {RF_HOST_PORTS, "no equivalent: host loopback ports are as the harness leaves them"},
    {RF_UPSTREAM_PROXY, "no managed equivalent: the harness's commands reach hosts through the "
			"proxy settings of its own environment"},
    {RF_TRUSTED_CAS, "no equivalent: only halo-run's proxy speaks TLS to origins"},
    {RF_CREDENTIALS, "no equivalent: the harness cannot add a header its commands never see; "
		     "give the token to the harness's commands another way, or run them under "
		     "halo-run"},
    {RF_REQUEST_RULES, "no equivalent: the harness's egress rules are per host, so every "
		       "method and path of an allowed host is open"},
    {RF_LIMIT_CPU, "resource limits are halo-run's; no harness holds them"},
    {RF_LIMIT_MEMORY, "resource limits are halo-run's; no harness holds them"},
    {RF_LIMIT_FSIZE, "resource limits are halo-run's; no harness holds them"},
    {RF_LIMIT_NOFILE, "resource limits are halo-run's; no harness holds them"},
    {RF_LIMIT_NPROC, "resource limits are halo-run's; no harness holds them"},
    {RF_LIMIT_WALL, "the wall-clock limit is halo-run's; no harness holds it"},
    {RF_LIMIT_SESSION_IDLE, "sessions are halo-run's (--session); no harness holds their idle "
			    "timeout"},
    {RF_LIMIT_CONNECTIONS, "the proxy's connection limit is halo-run's; no harness holds it"},
    {RF_LIMIT_WILDCARD_NAMES, "the budget of names resolved under wildcards is halo-run's "
			      "proxy's; no harness holds it"},
    {RF_LIMIT_WILDCARD_NAMES_PER_MINUTE, "the budget of names resolved under wildcards is "
					 "halo-run's proxy's; no harness holds it"},
    {RF_ENV_PASS, "environment stripping is halo-run's; the harness passes its own environment"},
    {RF_ENV_SET, "environment rules are halo-run's; no harness managed setting sets them"},
};

void render_warn_halo_only(const struct halo_policy *p, struct render_out *out)
{
	for (size_t i = 0; i < RN(halo_only); i++)
		if (render_field_in_force(p, halo_only[i].f))
			render_warn(out, halo_only[i].f, "%s", halo_only[i].reason);
}

void render_warn_off(const struct halo_policy *p, struct render_out *out)
{
	render_warn(out, RF_MODE,
		    "off: halo-run enforces nothing, so nothing is rendered; the harness keeps "
		    "its own defaults (no bypass is ever rendered)");
	render_warn_halo_only(p, out);
	if (p->legacy_permissions_sandbox)
		render_warn(out, RF_LEGACY_PERMISSIONS, "off, as sandbox.mode: nothing rendered");
}

void render_gateway(const struct halo_policy *p, const struct render_view *v,
		    struct render_out *out, const char *where)
{
	if (!p->gateway)
		return;
	if (render_list_match(&v->allow, p->gateway, RM_HALO) &&
	    !render_list_match(&v->deny, p->gateway, RM_HALO))
		render_mark(out, RF_GATEWAY);
	else
		render_warn(out, RF_GATEWAY, "%s: not held by %s", p->gateway, where);
}

void render_warn_refused(const struct halo_policy *p, const struct render_view *v,
			 struct render_out *out, const char *allow_list, const char *deny_list)
{
	for (size_t i = 0; i < v->refused.n; i++) {
		enum policy_addr_class c = POLICY_ADDR_RESERVED;

		policy_entry_address_refused(p, v->refused.v[i], &c);
		render_warn(out, RF_ALLOWED_DOMAINS,
			    "%s: halo-run refuses its address (%s) without a matching "
			    "egress.allowPrivate; left out of %s%s%s",
			    v->refused.v[i], policy_addr_class_name(c), allow_list,
			    deny_list ? " and denied in " : "", deny_list ? deny_list : "");
	}
	for (size_t i = 0; deny_list && i < v->refused_under.n; i++) {
		enum policy_addr_class c = POLICY_ADDR_RESERVED;

		policy_entry_address_refused(p, v->refused_under.v[i], &c);
		render_warn(out, RF_ALLOWED_DOMAINS,
			    "%s: halo-run refuses its address (%s) without a matching "
			    "egress.allowPrivate; an allowed wildcard covers it: denied in %s",
			    v->refused_under.v[i], policy_addr_class_name(c), deny_list);
	}
}

void render_domain_ports(const struct halo_policy *p, const struct render_view *v,
			 struct render_out *out, const char *allow_list, const char *allow_tail,
			 const char *deny_list)
{
	render_warn_refused(p, v, out, allow_list, deny_list);
	for (size_t i = 0; i < v->allow_port.n; i++)
		render_warn(out, RF_ALLOWED_DOMAINS,
			    "%s: %s hold no port; left out, so the host is refused%s",
			    v->allow_port.v[i], allow_list, allow_tail);
	for (size_t i = 0; i < v->deny_port.n; i++)
		render_warn(out, RF_DENIED_DOMAINS,
			    "%s: %s hold no port; denied on every port (tighter)",
			    v->deny_port.v[i], deny_list);
	if (p->allowed_domains.n > v->allow_port.n)
		render_mark(out, RF_ALLOWED_DOMAINS);
	if (p->presets.n)
		render_mark(out, RF_PRESETS);
	if (p->denied_domains.n)
		render_mark(out, RF_DENIED_DOMAINS);
}

void render_mark_sandbox(const struct halo_policy *p, struct render_out *out)
{
	render_mark(out, RF_MODE);
	render_mark(out, RF_FAIL_IF_UNAVAILABLE);
	if (p->legacy_permissions_sandbox)
		render_mark(out, RF_LEGACY_PERMISSIONS);
}

void render_warn_cannot(const struct halo_policy *p, struct render_out *out,
			const struct render_cannot *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (render_field_in_force(p, rows[i].f))
			render_warn(out, rows[i].f, "%s", rows[i].reason);
}

int render_json(const struct halo_policy *p, const struct render_opts *o, struct render_out *out,
		const struct render_json_frame *f)
{
	struct render_view v;
	cJSON *root = cJSON_CreateObject();

	if (!root || render_view_build(p, &v) < 0) {
		cJSON_Delete(root);
		out->oom = true;
		return 0;
	}
	if (f->schema)
		rj_str(out, root, "$schema", f->schema);
	if (v.off) {
		render_warn_off(p, out);
	} else {
		f->body(p, o, &v, root, out);
		render_warn_halo_only(p, out);
	}
	render_view_free(&v);
	rj_file(out, root, f->file, f->install(o->os));
	return 0;
}

bool render_explain_view(const struct halo_policy *p, const char *title, const char *host,
			 char *buf, size_t n, render_decide_fn decide)
{
	struct render_view v;
	bool allow;

	if (render_view_build(p, &v) < 0) {
		snprintf(buf, n, "out of memory");
		return false;
	}
	if (v.off && title) {
		snprintf(buf, n, "nothing rendered (sandbox.mode off): %s's own default", title);
		allow = true;
	} else {
		allow = decide(&v, host, buf, n);
	}
	render_view_free(&v);
	return allow;
}

/* ---------------------------------------------------------------- JSON */

cJSON *rj_obj(struct render_out *out, cJSON *parent, const char *key)
{
	cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, key);

	if (o)
		return o;
	o = parent ? cJSON_AddObjectToObject(parent, key) : NULL;
	if (!o)
		out->oom = true;
	return o;
}

void rj_bool(struct render_out *out, cJSON *parent, const char *key, bool v)
{
	if (!parent || !cJSON_AddBoolToObject(parent, key, v))
		out->oom = true;
}

void rj_str(struct render_out *out, cJSON *parent, const char *key, const char *v)
{
	if (!parent || !cJSON_AddStringToObject(parent, key, v))
		out->oom = true;
}

void rj_push(struct render_out *out, cJSON *arr, const char *v)
{
	cJSON *s = cJSON_CreateString(v);

	if (!arr || !s || !cJSON_AddItemToArray(arr, s)) {
		cJSON_Delete(s);
		out->oom = true;
	}
}

void rj_list(struct render_out *out, cJSON *parent, const char *key, const struct rlist *l)
{
	cJSON *a = parent ? cJSON_AddArrayToObject(parent, key) : NULL;

	if (!a) {
		out->oom = true;
		return;
	}
	for (size_t i = 0; i < l->n; i++)
		rj_push(out, a, l->v[i]);
}

void rj_file(struct render_out *out, cJSON *root, const char *name, const char *install)
{
	char *text = root && !out->oom ? cJSON_Print(root) : NULL;
	char *nl = NULL;

	if (text && asprintf(&nl, "%s\n", text) < 0)
		nl = NULL;
	free(text);
	cJSON_Delete(root);
	render_add_file(out, name, install, nl);
}

/* ---------------------------------------------------------------- render */

/* Bypass settings as values (quoted, so a path that merely contains the word is not
 * one) and as keys set to true, however the JSON is spaced. */
static const char *const bypass_values[] = {
    "\"danger-full-access\"",
    "\"insecure_none\"",
    "\"dangerouslyDisableSandbox\"",
};
static const char *const bypass_true_keys[] = {
    "\"allowUnsandboxedCommands\"",
    "\"allowBypass\"",
    "\"dangerouslyDisableSandbox\"",
};

static bool key_is_true(const char *text, const char *key)
{
	for (const char *s = strstr(text, key); s; s = strstr(s + 1, key)) {
		const char *c = s + strlen(key);
		while (*c == ' ' || *c == '\t')
			c++;
		if (*c != ':' && *c != '=')
			continue;
		c++;
		while (*c == ' ' || *c == '\t')
			c++;
		if (strncmp(c, "true", 4) == 0)
			return true;
	}
	return false;
}

const char *render_find_bypass(const char *text)
{
	for (size_t i = 0; i < RN(bypass_values); i++)
		if (strstr(text, bypass_values[i]))
			return bypass_values[i];
	for (size_t i = 0; i < RN(bypass_true_keys); i++)
		if (key_is_true(text, bypass_true_keys[i]))
			return bypass_true_keys[i];
	return NULL;
}

int render_policy(const struct render_adapter *a, const struct halo_policy *p,
		  const struct render_opts *o, struct render_out *out, struct halo_err *e)
{
	int rc;

	memset(out, 0, sizeof(*out));
	out->harness = a->name;
	rc = a->render(p, o, out, e);
	if (rc == 0)
		render_warn_proxy(a, p, o, out);
	if (rc == 0 && out->oom) {
		halo_err_set(e, "out of memory");
		rc = -ENOMEM;
	}
	/* Invariant 1, checked on the text itself: a rendering that would carry a
	 * bypass is refused rather than printed. */
	for (size_t i = 0; rc == 0 && i < out->n_files; i++) {
		const char *b = render_find_bypass(out->files[i].text);
		if (b) {
			halo_err_set(e, "%s: the rendering would contain %s; refused", a->name, b);
			rc = -EINVAL;
		}
	}
	return rc;
}
