/* One reader per harness for `policy import`: which key means what in halo-run's
 * policy. Sources as in the adapters (claude.c, codex.c, copilot.c, cursor.c);
 * srt is Anthropic's sandbox-runtime (github.com/anthropic-experimental/
 * sandbox-runtime, its settings file). Paths are read before writable roots, so
 * a root over a protected path is refused as validation refuses it. */
#include <stdio.h>
#include <string.h>

#include "render/import_int.h"

#define GET(o, k) cJSON_GetObjectItemCaseSensitive(o, k)

static int object(struct imp *m, const cJSON *o, const char *field)
{
	if (o && !cJSON_IsObject(o))
		return imp_type_error(m, field, "an object", o);
	return 0;
}

static int opt_bool(struct imp *m, const cJSON *o, const char *key, const char *field, int *out)
{
	const cJSON *b = GET(o, key);
	bool v;

	if (!b)
		return 0;
	if (imp_bool(m, b, field, &v) < 0)
		return -1;
	*out = v;
	return 0;
}

static int no_equivalent(struct imp *m, const cJSON *o, const char *key, const char *field,
			 const char *why)
{
	if (GET(o, key))
		imp_warn(m, field, "%s", why);
	return 0;
}

/* ---------------------------------------------------------------- shared: srt shape */

/* Does `w` name a path `r` does not? (Types are checked by the caller's walk.) */
static bool write_only(const cJSON *w, const cJSON *r)
{
	const cJSON *a, *b;

	cJSON_ArrayForEach(a, w)
	{
		bool found = false;
		cJSON_ArrayForEach(b, r)
		{
			if (cJSON_IsString(a) && cJSON_IsString(b) &&
			    strcmp(a->valuestring, b->valuestring) == 0)
				found = true;
		}
		if (!found)
			return true;
	}
	return false;
}

/* The sandbox-runtime's filesystem and network blocks: Claude Code's sandbox settings
 * have the same shape under "sandbox". */
static int fs_deny(struct imp *m, const cJSON *fs, const char *pre)
{
	char f[96];

	if (object(m, fs, pre) < 0)
		return -1;
	snprintf(f, sizeof(f), "%s.denyRead", pre);
	if (imp_strings(m, GET(fs, "denyRead"), f, imp_protect) < 0)
		return -1;
	snprintf(f, sizeof(f), "%s.denyWrite", pre);
	if (write_only(GET(fs, "denyWrite"), GET(fs, "denyRead")))
		imp_warn(m, f,
			 "halo-run protects paths from reads and writes alike; paths denied "
			 "only for writing are now unreadable too (tighter)");
	if (imp_strings(m, GET(fs, "denyWrite"), f, imp_protect) < 0)
		return -1;
	snprintf(f, sizeof(f), "%s.allowRead", pre);
	no_equivalent(m, fs, "allowRead", f,
		      "read carve-outs are not imported; the paths stay denied (tighter)");
	return 0;
}

static int fs_write(struct imp *m, const cJSON *fs, const char *pre)
{
	static const char *const known[] = {"denyRead", "denyWrite", "allowWrite", "allowRead",
					    NULL};
	char f[96];

	snprintf(f, sizeof(f), "%s.allowWrite", pre);
	if (imp_strings(m, GET(fs, "allowWrite"), f, imp_writable) < 0)
		return -1;
	if (fs)
		imp_unknown_keys(m, fs, pre, known);
	return 0;
}

static int network(struct imp *m, const cJSON *net, const char *pre, bool managed_only_known)
{
	static const char *const known[] = {"allowedDomains", "deniedDomains",
					    "allowManagedDomainsOnly", NULL};
	char f[96];
	int only = -1;

	if (object(m, net, pre) < 0)
		return -1;
	snprintf(f, sizeof(f), "%s.allowedDomains", pre);
	if (imp_strings(m, GET(net, "allowedDomains"), f, imp_allow) < 0)
		return -1;
	snprintf(f, sizeof(f), "%s.deniedDomains", pre);
	if (imp_strings(m, GET(net, "deniedDomains"), f, imp_deny) < 0)
		return -1;
	snprintf(f, sizeof(f), "%s.allowManagedDomainsOnly", pre);
	if (opt_bool(m, net, "allowManagedDomainsOnly", f, &only) < 0)
		return -1;
	if (managed_only_known && only != 1)
		imp_warn(m, f,
			 "the harness asks before unlisted hosts; halo-run has no prompt "
			 "and denies them");
	if (net)
		imp_unknown_keys(m, net, pre, known);
	m->dflt = POLICY_EGRESS_DENY; /* unlisted hosts: refused or asked, never open */
	return 0;
}

/* ---------------------------------------------------------------- Claude Code */

static int claude_perms(struct imp *m, const cJSON *perm)
{
	static const char *const known[] = {"deny", "allow", "ask", NULL};
	const cJSON *ask = GET(perm, "ask");

	if (object(m, perm, "permissions") < 0)
		return -1;
	if (imp_strings(m, GET(perm, "deny"), "permissions.deny", imp_perm_deny) < 0 ||
	    imp_strings(m, GET(perm, "allow"), "permissions.allow", imp_perm_allow) < 0)
		return -1;
	if (ask && !cJSON_IsArray(ask))
		return imp_type_error(m, "permissions.ask", "a list of strings", ask);
	if (cJSON_GetArraySize(ask) > 0)
		imp_warn(m, "permissions.ask",
			 "halo-run has no prompt; asked-for actions are "
			 "not allowed (tighter)");
	if (perm)
		imp_unknown_keys(m, perm, "permissions", known);
	return 0;
}

int imp_claude(struct imp *m, const cJSON *root)
{
	static const char *const top[] = {"sandbox", "permissions", "$schema", NULL};
	static const char *const sbk[] = {"enabled",	       "allowUnsandboxedCommands",
					  "failIfUnavailable", "filesystem",
					  "network",	       NULL};
	const cJSON *sb = GET(root, "sandbox");
	int enabled = -1, escape = -1;

	if (object(m, sb, "sandbox") < 0 ||
	    opt_bool(m, sb, "enabled", "sandbox.enabled", &enabled) < 0 ||
	    opt_bool(m, sb, "allowUnsandboxedCommands", "sandbox.allowUnsandboxedCommands",
		     &escape) < 0 ||
	    opt_bool(m, sb, "failIfUnavailable", "sandbox.failIfUnavailable", &m->fail) < 0)
		return -1;
	if (enabled != 1)
		imp_warn(m, "sandbox.enabled",
			 "the harness's sandbox is off; the policy keeps "
			 "halo-run's defaults (workspace-write, egress denied)");
	if (escape != 0)
		imp_warn(m, "sandbox.allowUnsandboxedCommands",
			 "the escape hatch is not imported: halo-run has none");
	if (claude_perms(m, GET(root, "permissions")) < 0 ||
	    fs_deny(m, GET(sb, "filesystem"), "sandbox.filesystem") < 0 ||
	    fs_write(m, GET(sb, "filesystem"), "sandbox.filesystem") < 0 ||
	    network(m, GET(sb, "network"), "sandbox.network", true) < 0)
		return -1;
	if (sb)
		imp_unknown_keys(m, sb, "sandbox", sbk);
	imp_unknown_keys(m, root, "", top);
	return 0;
}

/* ---------------------------------------------------------------- srt */

int imp_srt(struct imp *m, const cJSON *root)
{
	static const char *const top[] = {"network", "filesystem", NULL};

	if (fs_deny(m, GET(root, "filesystem"), "filesystem") < 0 ||
	    fs_write(m, GET(root, "filesystem"), "filesystem") < 0 ||
	    network(m, GET(root, "network"), "network", false) < 0)
		return -1;
	imp_unknown_keys(m, root, "", top);
	return 0;
}

/* ---------------------------------------------------------------- Codex */

static int codex_mode(struct imp *m, const char *s, const char *field)
{
	if (strcmp(s, "read-only") == 0)
		m->mode = POLICY_MODE_READ_ONLY;
	else if (strcmp(s, "workspace-write") == 0)
		m->mode = POLICY_MODE_WORKSPACE_WRITE;
	else
		imp_warn(m, field,
			 "a mode halo-run does not import (no bypass); workspace-write "
			 "kept");
	return 0;
}

static int allowed_mode(struct imp *m, const char *s, const char *field)
{
	if (strcmp(s, "read-only") != 0)
		m->writes_allowed = true;
	if (strcmp(s, "danger-full-access") == 0)
		imp_warn(m, field, "danger-full-access is not imported (no bypass)");
	return 0;
}

static int codex_domains(struct imp *m, const cJSON *d)
{
	const cJSON *it;

	if (object(m, d, "experimental_network.domains") < 0)
		return -1;
	cJSON_ArrayForEach(it, d)
	{
		const char *v;
		if (imp_string(m, it, "experimental_network.domains", &v) < 0)
			return -1;
		if (strcmp(v, "allow") == 0
			? imp_allow(m, it->string, "experimental_network.domains")
		    : strcmp(v, "deny") == 0
			? imp_deny(m, it->string, "experimental_network.domains")
			: -2) {
			if (!m->e->msg[0])
				halo_err_set(m->e,
					     "experimental_network.domains: expected \"allow\" "
					     "or \"deny\"");
			return -1;
		}
	}
	return 0;
}

static int codex_network(struct imp *m, const cJSON *root)
{
	static const char *const known[] = {"enabled", "managed_allowed_domains_only", "domains",
					    NULL};
	const cJSON *xn = GET(root, "experimental_network");
	const cJSON *ww = GET(root, "sandbox_workspace_write");
	int enabled = -1, only = -1, net = 0;

	if (object(m, xn, "experimental_network") < 0 ||
	    opt_bool(m, xn, "enabled", "experimental_network.enabled", &enabled) < 0 ||
	    opt_bool(m, xn, "managed_allowed_domains_only",
		     "experimental_network.managed_allowed_domains_only", &only) < 0 ||
	    opt_bool(m, ww, "network_access", "sandbox_workspace_write.network_access", &net) < 0)
		return -1;
	if (enabled == 1 && codex_domains(m, GET(xn, "domains")) < 0)
		return -1;
	if (xn && enabled != 1)
		imp_warn(m, "experimental_network.enabled",
			 "not enabled: its domains are not "
			 "imported");
	if (xn)
		imp_unknown_keys(m, xn, "experimental_network", known);
	m->dflt = (net == 1 && only != 1) ? POLICY_EGRESS_ALLOW : POLICY_EGRESS_DENY;
	return 0;
}

int imp_codex(struct imp *m, const cJSON *root)
{
	static const char *const top[] = {
	    "sandbox_mode",	    "allowed_sandbox_modes", "sandbox_workspace_write",
	    "experimental_network", "permissions",	     NULL};
	static const char *const wwk[] = {"writable_roots", "network_access", NULL};
	const cJSON *perm = GET(root, "permissions"), *fs = GET(perm, "filesystem");
	const cJSON *ww = GET(root, "sandbox_workspace_write"), *mode = GET(root, "sandbox_mode");
	const char *s;

	if (object(m, perm, "permissions") < 0 || object(m, fs, "permissions.filesystem") < 0 ||
	    object(m, ww, "sandbox_workspace_write") < 0)
		return -1;
	if (mode &&
	    (imp_string(m, mode, "sandbox_mode", &s) < 0 || codex_mode(m, s, "sandbox_mode") < 0))
		return -1;
	if (GET(root, "allowed_sandbox_modes")) {
		if (imp_strings(m, GET(root, "allowed_sandbox_modes"), "allowed_sandbox_modes",
				allowed_mode) < 0)
			return -1;
		if (!m->writes_allowed)
			m->mode = POLICY_MODE_READ_ONLY;
	}
	if (imp_strings(m, GET(fs, "deny_read"), "permissions.filesystem.deny_read", imp_protect) <
		0 ||
	    imp_strings(m, GET(ww, "writable_roots"), "sandbox_workspace_write.writable_roots",
			imp_writable) < 0 ||
	    codex_network(m, root) < 0)
		return -1;
	if (ww)
		imp_unknown_keys(m, ww, "sandbox_workspace_write", wwk);
	imp_unknown_keys(m, root, "", top);
	return 0;
}

/* ---------------------------------------------------------------- Cursor */

int imp_cursor(struct imp *m, const cJSON *root)
{
	static const char *const top[] = {"type", "additionalReadwritePaths", "networkPolicy",
					  "permissions", NULL};
	static const char *const npk[] = {"default", "allow", "deny", NULL};
	const cJSON *np = GET(root, "networkPolicy"), *perm = GET(root, "permissions");
	const char *s;

	if (GET(root, "type")) {
		if (imp_string(m, GET(root, "type"), "type", &s) < 0)
			return -1;
		if (strcmp(s, "workspace_readonly") == 0)
			m->mode = POLICY_MODE_READ_ONLY;
		else if (strcmp(s, "workspace_readwrite") != 0)
			imp_warn(m, "type",
				 "a type halo-run does not import (no bypass); "
				 "workspace-write kept");
	}
	if (object(m, np, "networkPolicy") < 0 || object(m, perm, "permissions") < 0)
		return -1;
	if (imp_strings(m, GET(perm, "deny"), "permissions.deny", imp_perm_deny) < 0 ||
	    imp_strings(m, GET(perm, "allow"), "permissions.allow", imp_perm_allow) < 0 ||
	    imp_strings(m, GET(root, "additionalReadwritePaths"), "additionalReadwritePaths",
			imp_writable) < 0 ||
	    imp_strings(m, GET(np, "allow"), "networkPolicy.allow", imp_allow_apex) < 0 ||
	    imp_strings(m, GET(np, "deny"), "networkPolicy.deny", imp_deny_apex) < 0)
		return -1;
	m->dflt = POLICY_EGRESS_DENY;
	if (GET(np, "default")) {
		if (imp_string(m, GET(np, "default"), "networkPolicy.default", &s) < 0)
			return -1;
		if (strcmp(s, "allow") == 0)
			m->dflt = POLICY_EGRESS_ALLOW;
	}
	if (np)
		imp_unknown_keys(m, np, "networkPolicy", npk);
	imp_unknown_keys(m, root, "", top);
	return 0;
}

/* ---------------------------------------------------------------- Copilot */

int imp_copilot(struct imp *m, const cJSON *root)
{
	static const char *const top[] = {"sandbox", "permissions", NULL};
	static const char *const sbk[] = {"enabled", "failIfUnavailable", "allowBypass",
					  "userPolicy", NULL};
	const cJSON *sb = GET(root, "sandbox"), *up = GET(sb, "userPolicy");
	const cJSON *fs = GET(up, "filesystem"), *net = GET(up, "network");
	const cJSON *perm = GET(root, "permissions");
	int enabled = -1, bypass = -1, out = -1;

	if (object(m, sb, "sandbox") < 0 || object(m, up, "sandbox.userPolicy") < 0 ||
	    object(m, fs, "sandbox.userPolicy.filesystem") < 0 ||
	    object(m, net, "sandbox.userPolicy.network") < 0 ||
	    object(m, perm, "permissions") < 0 ||
	    opt_bool(m, sb, "enabled", "sandbox.enabled", &enabled) < 0 ||
	    opt_bool(m, sb, "allowBypass", "sandbox.allowBypass", &bypass) < 0 ||
	    opt_bool(m, sb, "failIfUnavailable", "sandbox.failIfUnavailable", &m->fail) < 0 ||
	    opt_bool(m, net, "allowOutbound", "sandbox.userPolicy.network.allowOutbound", &out) < 0)
		return -1;
	if (enabled != 1)
		imp_warn(m, "sandbox.enabled",
			 "the harness's sandbox is off; the policy keeps "
			 "halo-run's defaults (workspace-write, egress denied)");
	if (bypass != 0)
		imp_warn(m, "sandbox.allowBypass", "bypass is not imported: halo-run has none");
	if (imp_strings(m, GET(perm, "deny"), "permissions.deny", imp_perm_deny) < 0 ||
	    imp_strings(m, GET(fs, "deniedPaths"), "sandbox.userPolicy.filesystem.deniedPaths",
			imp_protect) < 0 ||
	    imp_strings(m, GET(fs, "readwritePaths"),
			"sandbox.userPolicy.filesystem.readwritePaths", imp_writable) < 0 ||
	    imp_strings(m, GET(net, "allowedHosts"), "sandbox.userPolicy.network.allowedHosts",
			imp_allow) < 0 ||
	    imp_strings(m, GET(net, "blockedHosts"), "sandbox.userPolicy.network.blockedHosts",
			imp_deny_tree) < 0)
		return -1;
	m->dflt =
	    (out == 0 || m->allowed.n || enabled != 1) ? POLICY_EGRESS_DENY : POLICY_EGRESS_ALLOW;
	if (sb)
		imp_unknown_keys(m, sb, "sandbox", sbk);
	imp_unknown_keys(m, root, "", top);
	return 0;
}
