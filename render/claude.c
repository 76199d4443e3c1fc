/* Claude Code: managed-settings.json. Sources: the vendor's settings reference
 * (https://code.claude.com/docs/en/settings), sandboxing page
 * (https://code.claude.com/docs/en/sandboxing) and permission rules
 * (https://code.claude.com/docs/en/iam#permission-rules); checked against DESIGN.md's
 * table (2026-10-27). Managed settings win over every other settings file. */
#include <stdio.h>
#include <string.h>

#include "render/render_int.h"

#define F	 "managed-settings.json"
#define SETTINGS "https://code.claude.com/docs/en/settings#sandbox-settings"

static const struct render_key keys[] = {
    /* sandboxed bash on; managed value wins */
    {F, "sandbox.enabled", SETTINGS},
    /* false: the dangerouslyDisableSandbox escape hatch is off (Invariant 1) */
    {F, "sandbox.allowUnsandboxedCommands", SETTINGS},
    /* refuse to run commands when the sandbox cannot start */
    {F, "sandbox.failIfUnavailable", SETTINGS},
    /* extra writable paths beyond the working directory */
    {F, "sandbox.filesystem.allowWrite", SETTINGS},
    /* absolute or ~/ paths commands may not read / write */
    {F, "sandbox.filesystem.denyRead", SETTINGS},
    {F, "sandbox.filesystem.denyWrite", SETTINGS},
    /* the sandbox proxy's allowlist and denylist (denied: refused in every mode) */
    {F, "sandbox.network.allowedDomains", SETTINGS},
    {F, "sandbox.network.deniedDomains", SETTINGS},
    /* managed allowlist only: other hosts refused, no prompt */
    {F, "sandbox.network.allowManagedDomainsOnly", SETTINGS},
    /* Read(...), Edit(...) and WebFetch(domain:...) deny rules: the file and fetch
     * tools follow permission rules, not the sandbox */
    {F, "permissions.deny", "https://code.claude.com/docs/en/iam#tool-specific-permission-rules"},
};

static const char *install(enum render_os os)
{
	/* https://code.claude.com/docs/en/settings#settings-files */
	static const char *const where[] = {
	    [RENDER_OS_LINUX] = "/etc/claude-code/managed-settings.json",
	    [RENDER_OS_MACOS] = "/Library/Application Support/ClaudeCode/managed-settings.json",
	    [RENDER_OS_WINDOWS] = "C:\\Program Files\\ClaudeCode\\managed-settings.json",
	};
	return where[os];
}

static enum render_field glob_field(const struct halo_policy *p, const char *g)
{
	for (size_t i = 0; i < p->protected_paths.n; i++)
		if (strcmp(p->protected_paths.items[i], g) == 0)
			return RF_PROTECTED_PATHS;
	return RF_FLOOR;
}

static void paths(const struct halo_policy *p, const struct render_view *v, cJSON *sb, cJSON *deny,
		  struct render_out *out)
{
	cJSON *fs = rj_obj(out, sb, "filesystem");
	struct rlist rules = {0};

	if (v->writable.n) {
		rj_list(out, fs, "allowWrite", &v->writable);
		render_mark(out, RF_WRITABLE_ROOTS);
	}
	rj_list(out, fs, "denyRead", &v->prot_home);
	rj_list(out, fs, "denyWrite", &v->prot_home);
	if (render_perm_rules(&rules, "Read", v) < 0 || render_perm_rules(&rules, "Edit", v) < 0)
		out->oom = true;
	for (size_t i = 0; i < rules.n; i++)
		rj_push(out, deny, rules.v[i]);
	rlist_free(&rules);
	render_mark(out, RF_FLOOR);
	if (p->protected_paths.n)
		render_mark(out, RF_PROTECTED_PATHS);
	for (size_t i = 0; i < v->prot_glob.n; i++)
		render_warn(
		    out, glob_field(p, v->prot_glob.v[i]),
		    "%s: sandbox.filesystem takes absolute or ~/ paths only; the pattern is "
		    "held by Read/Edit deny rules (Claude Code's file tools), not for "
		    "commands",
		    v->prot_glob.v[i]);
}

static void network(const struct halo_policy *p, const struct render_view *v, cJSON *sb,
		    cJSON *deny, struct render_out *out)
{
	cJSON *net = rj_obj(out, sb, "network");
	char rule[POLICY_HOST_MAX + 32];

	if (!render_view_restricts(v)) {
		render_warn(out, RF_EGRESS_DEFAULT,
			    "allow: Claude Code has no allow-every-host key; its sandbox asks "
			    "before each new host");
	} else {
		rj_list(out, net, "allowedDomains", &v->allow);
		rj_bool(out, net, "allowManagedDomainsOnly", true);
		if (v->default_allow)
			render_warn(out, RF_EGRESS_DEFAULT,
				    "allow: Claude Code has no allow-every-host key; with "
				    "allowManagedDomainsOnly, hosts outside allowedDomains are "
				    "refused (tighter than halo-run)");
		else
			render_mark(out, RF_EGRESS_DEFAULT);
		render_warn(out, RF_EGRESS_DEFAULT,
			    "the sandbox rules commands; the WebFetch tool follows "
			    "WebFetch(domain:...) rules and asks for hosts not denied");
	}
	rj_list(out, net, "deniedDomains", &v->deny);
	for (size_t i = 0; i < v->deny.n; i++) {
		snprintf(rule, sizeof(rule), "WebFetch(domain:%s)", v->deny.v[i]);
		rj_push(out, deny, rule);
	}
	for (size_t i = 0; i < v->allow_port.n; i++)
		render_warn(out, RF_ALLOWED_DOMAINS,
			    "%s: allowedDomains hold no port; left out, so the host is refused "
			    "(tighter than halo-run)",
			    v->allow_port.v[i]);
	for (size_t i = 0; i < v->deny_port.n; i++)
		render_warn(out, RF_DENIED_DOMAINS,
			    "%s: deniedDomains hold no port; denied on every port (tighter)",
			    v->deny_port.v[i]);
	if (p->allowed_domains.n > v->allow_port.n)
		render_mark(out, RF_ALLOWED_DOMAINS);
	if (p->presets.n)
		render_mark(out, RF_PRESETS);
	if (p->denied_domains.n)
		render_mark(out, RF_DENIED_DOMAINS);
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

static int render(const struct halo_policy *p, const struct render_opts *o, struct render_out *out,
		  struct halo_err *e)
{
	struct render_view v;
	cJSON *root = cJSON_CreateObject(), *sb, *perm, *deny;

	(void)e;
	if (!root || render_view_build(p, &v) < 0) {
		cJSON_Delete(root);
		out->oom = true;
		return 0;
	}
	if (v.off) {
		render_warn_off(p, out);
		rj_file(out, root, F, install(o->os));
		return 0;
	}
	sb = rj_obj(out, root, "sandbox");
	rj_bool(out, sb, "enabled", true);
	rj_bool(out, sb, "allowUnsandboxedCommands", false);
	rj_bool(out, sb, "failIfUnavailable", p->fail_if_unavailable != 0);
	render_mark(out, RF_MODE);
	render_mark(out, RF_FAIL_IF_UNAVAILABLE);
	if (p->legacy_permissions_sandbox)
		render_mark(out, RF_LEGACY_PERMISSIONS);
	if (o->os == RENDER_OS_WINDOWS)
		render_warn(out, RF_MODE,
			    "windows: Claude Code's sandbox is documented for macOS (Seatbelt) and "
			    "Linux/WSL (bubblewrap); on native Windows sandbox.* is not enforced, "
			    "only the permission rules are");
	if (v.read_only)
		render_warn(out, RF_MODE,
			    "read-only: Claude Code's sandbox always lets commands write the "
			    "working directory; only halo-run makes it read-only");
	perm = rj_obj(out, root, "permissions");
	deny = perm ? cJSON_AddArrayToObject(perm, "deny") : NULL;
	paths(p, &v, sb, deny, out);
	network(p, &v, sb, deny, out);
	render_gateway(p, &v, out, "sandbox.network.allowedDomains");
	render_warn_halo_only(p, out);
	render_view_free(&v);
	rj_file(out, root, F, install(o->os));
	return 0;
}

static bool explain(const struct halo_policy *p, const struct render_opts *o, const char *host,
		    unsigned port, char *buf, size_t n)
{
	struct render_view v;
	const char *m;
	bool allow;

	(void)o;
	(void)port;
	if (render_view_build(p, &v) < 0) {
		snprintf(buf, n, "out of memory");
		return false;
	}
	if (v.off) {
		snprintf(buf, n, "nothing rendered (sandbox.mode off): Claude Code's own default");
		allow = true;
	} else if ((m = render_list_match(&v.deny, host, RM_HALO))) {
		snprintf(buf, n,
			 "refused by sandbox.network.deniedDomains %s (commands) and "
			 "permissions.deny WebFetch(domain:%s) (WebFetch)",
			 m, m);
		allow = false;
	} else if (!render_view_restricts(&v)) {
		snprintf(buf, n, "allowed after a prompt: no allow-every-host key");
		allow = true;
	} else if ((m = render_list_match(&v.allow, host, RM_HALO))) {
		snprintf(buf, n, "allowed by sandbox.network.allowedDomains %s", m);
		allow = true;
	} else {
		snprintf(buf, n,
			 "refused: not in sandbox.network.allowedDomains "
			 "(allowManagedDomainsOnly)");
		allow = false;
	}
	render_view_free(&v);
	return allow;
}

const struct render_adapter render_claude_code = {
    .name = "claude-code",
    .title = "Claude Code",
    .keys = keys,
    .n_keys = RN(keys),
    .disp =
	{
	    [RF_MODE] = RD_KEY_WARN,
	    [RF_WRITABLE_ROOTS] = RD_KEY,
	    [RF_PROTECTED_PATHS] = RD_KEY_WARN,
	    [RF_ALLOW_READ] = RD_WARN,
	    [RF_FAIL_IF_UNAVAILABLE] = RD_KEY,
	    [RF_GUARD_PERSISTENCE] = RD_WARN,
	    [RF_CACHES] = RD_WARN,
	    [RF_UNIX_SOCKETS] = RD_WARN,
	    [RF_EGRESS_DEFAULT] = RD_KEY_WARN,
	    [RF_ALLOWED_DOMAINS] = RD_KEY_WARN,
	    [RF_PRESETS] = RD_KEY,
	    [RF_DENIED_DOMAINS] = RD_KEY_WARN,
	    [RF_ALLOW_PRIVATE] = RD_WARN,
	    [RF_HOST_PORTS] = RD_WARN,
	    [RF_GATEWAY] = RD_KEY_WARN,
	    [RF_LIMIT_CPU] = RD_WARN,
	    [RF_LIMIT_MEMORY] = RD_WARN,
	    [RF_LIMIT_FSIZE] = RD_WARN,
	    [RF_LIMIT_NOFILE] = RD_WARN,
	    [RF_LIMIT_NPROC] = RD_WARN,
	    [RF_LIMIT_WALL] = RD_WARN,
	    [RF_ENV_PASS] = RD_WARN,
	    [RF_ENV_SET] = RD_WARN,
	    [RF_LEGACY_PERMISSIONS] = RD_KEY,
	    [RF_FLOOR] = RD_KEY_WARN,
	},
    .render = render,
    .explain = explain,
};
