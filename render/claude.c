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
    /* --proxy: "bring your own proxy": the sandbox's traffic goes to these localhost
     * ports instead of Claude Code's own proxies, which then do not start (the
     * outside proxy does the filtering) */
    {F, "sandbox.network.httpProxyPort", SETTINGS},
    {F, "sandbox.network.socksProxyPort", SETTINGS},
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
	render_domain_ports(p, v, out, "allowedDomains", " (tighter than halo-run)",
			    "deniedDomains");
}

/* --proxy: the ports of the `halo-run proxy` on the host's loopback that Claude
 * Code's sandbox is bridged to (bubblewrap) or allowed to reach (Seatbelt). */
static void proxy_ports(const struct render_opts *o, cJSON *net, struct render_out *out)
{
	char where[80], socks[48] = "";

	if (!o->proxy_http)
		return;
	if (!net || !cJSON_AddNumberToObject(net, "httpProxyPort", o->proxy_http) ||
	    (o->proxy_socks && !cJSON_AddNumberToObject(net, "socksProxyPort", o->proxy_socks)))
		out->oom = true;
	snprintf(where, sizeof(where), "localhost:%u (HTTP)", o->proxy_http);
	if (o->proxy_socks) {
		snprintf(where + strlen(where), sizeof(where) - strlen(where),
			 " and localhost:%u (SOCKS5)", o->proxy_socks);
		snprintf(socks, sizeof(socks), " --socks 127.0.0.1:%u", o->proxy_socks);
	}
	render_mark(out, RF_PROXY);
	render_warn(out, RF_PROXY,
		    "Claude Code's sandbox sends its commands' traffic to %s instead of its own "
		    "proxy, and leaves the filtering to it: run `halo-run proxy --listen "
		    "127.0.0.1:%u%s` with this policy before starting Claude Code; Claude "
		    "Code's own traffic and its WebFetch tool do not go through it",
		    where, o->proxy_http, socks);
	if (!o->proxy_socks)
		render_warn(out, RF_PROXY,
			    "no SOCKS port: Claude Code still starts its own SOCKS proxy for "
			    "other TCP traffic (ssh, git://), which judges hosts by the rendered "
			    "allowedDomains, not by halo-run (no rule named, no audit); give "
			    "--proxy PORT,SOCKSPORT");
}

static void body(const struct halo_policy *p, const struct render_opts *o,
		 const struct render_view *v, cJSON *root, struct render_out *out)
{
	cJSON *sb = rj_obj(out, root, "sandbox"), *perm, *deny;

	rj_bool(out, sb, "enabled", true);
	rj_bool(out, sb, "allowUnsandboxedCommands", false);
	rj_bool(out, sb, "failIfUnavailable", p->fail_if_unavailable != 0);
	render_mark_sandbox(p, out);
	if (o->os == RENDER_OS_WINDOWS)
		render_warn(out, RF_MODE,
			    "windows: Claude Code's sandbox is documented for macOS (Seatbelt) and "
			    "Linux/WSL (bubblewrap); on native Windows sandbox.* is not enforced, "
			    "only the permission rules are");
	if (v->read_only)
		render_warn(out, RF_MODE,
			    "read-only: Claude Code's sandbox always lets commands write the "
			    "working directory; only halo-run makes it read-only");
	perm = rj_obj(out, root, "permissions");
	deny = perm ? cJSON_AddArrayToObject(perm, "deny") : NULL;
	paths(p, v, sb, deny, out);
	network(p, v, sb, deny, out);
	proxy_ports(o, rj_obj(out, sb, "network"), out);
	render_gateway(p, v, out, "sandbox.network.allowedDomains");
}

static const struct render_json_frame frame = {F, install, NULL, body};

static int render(const struct halo_policy *p, const struct render_opts *o, struct render_out *out,
		  struct halo_err *e)
{
	(void)e;
	return render_json(p, o, out, &frame);
}

static bool decide(const struct render_view *v, const char *host, char *buf, size_t n)
{
	const char *m;

	if ((m = render_list_match(&v->deny, host, RM_HALO))) {
		snprintf(buf, n,
			 "refused by sandbox.network.deniedDomains %s (commands) and "
			 "permissions.deny WebFetch(domain:%s) (WebFetch)",
			 m, m);
		return false;
	}
	if (!render_view_restricts(v)) {
		snprintf(buf, n, "allowed after a prompt: no allow-every-host key");
		return true;
	}
	if ((m = render_list_match(&v->allow, host, RM_HALO))) {
		snprintf(buf, n, "allowed by sandbox.network.allowedDomains %s", m);
		return true;
	}
	snprintf(buf, n,
		 "refused: not in sandbox.network.allowedDomains (allowManagedDomainsOnly)");
	return false;
}

static bool explain(const struct halo_policy *p, const struct render_opts *o, const char *host,
		    unsigned port, char *buf, size_t n)
{
	(void)o;
	(void)port;
	return render_explain_view(p, "Claude Code", host, buf, n, decide);
}

const struct render_adapter render_claude_code = {
    .name = "claude-code",
    .title = "Claude Code",
    .keys = keys,
    .n_keys = RN(keys),
    .disp =
	{
	    RENDER_DISP_HALO_ONLY,
	    RENDER_DISP_MANAGED,
	    [RF_WRITABLE_ROOTS] = RD_KEY,
	    [RF_FAIL_IF_UNAVAILABLE] = RD_KEY,
	    [RF_EGRESS_DEFAULT] = RD_KEY_WARN,
	    [RF_PROXY] = RD_KEY_WARN,
	},
    .render = render,
    .explain = explain,
};
