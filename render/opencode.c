/* OpenCode: the managed opencode.json (system config directory; it wins over every
 * other config file, but the OPENCODE_PERMISSION variable overrides it). Sources:
 * https://opencode.ai/docs/config (locations) and https://opencode.ai/docs/permissions
 * (permission.webfetch, read, edit, external_directory); checked against DESIGN.md's
 * table (2026-10-27). OpenCode has no sandbox: its shell commands are not held. */
#include <stdio.h>
#include <string.h>

#include "render/render_int.h"

#define F    "opencode.json"
#define PERM "https://opencode.ai/docs/permissions"

static const struct render_key keys[] = {
    {F, "$schema", "https://opencode.ai/docs/config#format"},
    /* allow / ask / deny for every URL: no per-host patterns */
    {F, "permission.webfetch", PERM},
    /* path patterns ("*", "?", ~ expanded), last match wins */
    {F, "permission.read.*", PERM},
    {F, "permission.edit.*", PERM},
    {F, "permission.external_directory.*", PERM "#external-directories"},
};

static const char *install(enum render_os os)
{
	/* https://opencode.ai/docs/config#locations */
	static const char *const where[] = {
	    [RENDER_OS_LINUX] = "/etc/opencode/opencode.json",
	    [RENDER_OS_MACOS] = "/Library/Application Support/opencode/opencode.json",
	    [RENDER_OS_WINDOWS] = "%ProgramData%\\opencode\\opencode.json",
	};
	return where[os];
}

static void deny_paths(const struct render_view *v, cJSON *perm, const char *tool, bool home,
		       struct render_out *out)
{
	cJSON *o = rj_obj(out, perm, tool);
	char pat[4200];

	for (size_t i = 0; i < v->prot_home.n; i++) {
		rj_str(out, o, v->prot_home.v[i], "deny");
		snprintf(pat, sizeof(pat), "%s/**", v->prot_home.v[i]);
		rj_str(out, o, pat, "deny");
	}
	for (size_t i = 0; !home && i < v->prot_glob.n; i++) {
		snprintf(pat, sizeof(pat), "**/%s", v->prot_glob.v[i]);
		rj_str(out, o, pat, "deny");
	}
}

static const char *webfetch(const struct halo_policy *p, const struct render_view *v,
			    struct render_out *out)
{
	if (v->default_allow && v->deny.n == 0)
		return "allow";
	render_warn_refused(p, v, out, "permission.webfetch (denied for every URL)", NULL);
	if (p->allowed_domains.n)
		render_warn(out, RF_ALLOWED_DOMAINS,
			    "permission.webfetch has no per-host patterns: webfetch is denied for "
			    "every URL (tighter than halo-run)");
	if (p->presets.n)
		render_warn(out, RF_PRESETS,
			    "permission.webfetch has no per-host patterns: denied for every URL");
	if (p->denied_domains.n)
		render_warn(out, RF_DENIED_DOMAINS,
			    "permission.webfetch has no per-host patterns: denied for every URL "
			    "(tighter)");
	if (p->gateway)
		render_warn(out, RF_GATEWAY, "%s: webfetch is denied for every URL", p->gateway);
	return "deny";
}

static void body(const struct halo_policy *p, const struct render_opts *o,
		 const struct render_view *v, cJSON *root, struct render_out *out)
{
	cJSON *perm;

	(void)o;
	perm = rj_obj(out, root, "permission");
	rj_str(out, perm, "webfetch", webfetch(p, v, out));
	render_mark(out, RF_EGRESS_DEFAULT);
	render_warn(out, RF_EGRESS_DEFAULT,
		    "OpenCode has no sandbox: its shell commands reach every host; only the "
		    "webfetch tool is ruled");
	deny_paths(v, perm, "read", false, out);
	deny_paths(v, perm, "edit", false, out);
	deny_paths(v, perm, "external_directory", true, out);
	render_mark(out, RF_FLOOR);
	render_warn(out, RF_FLOOR,
		    "read/edit deny rules bind OpenCode's file tools, not its shell commands");
	if (p->protected_paths.n) {
		render_mark(out, RF_PROTECTED_PATHS);
		render_warn(out, RF_PROTECTED_PATHS,
			    "read/edit deny rules bind the file tools only, not shell commands");
	}
	render_warn(out, RF_MODE,
		    "OpenCode has no sandbox: commands run with the user's rights (and the "
		    "OPENCODE_PERMISSION variable overrides the managed file)");
	if (p->legacy_permissions_sandbox)
		render_warn(out, RF_LEGACY_PERMISSIONS, "as sandbox.mode: no sandbox to set");
	if (p->writable_roots.n)
		render_warn(out, RF_WRITABLE_ROOTS,
			    "OpenCode has no sandbox; writes are limited by nothing rendered");
	render_warn(out, RF_FAIL_IF_UNAVAILABLE, "OpenCode has no sandbox to require");
}

static const struct render_json_frame frame = {F, install, "https://opencode.ai/config.json", body};

static int render(const struct halo_policy *p, const struct render_opts *o, struct render_out *out,
		  struct halo_err *e)
{
	(void)e;
	return render_json(p, o, out, &frame);
}

static bool decide(const struct render_view *v, const char *host, char *buf, size_t n)
{
	bool allow = v->off || (v->default_allow && v->deny.n == 0);

	(void)host;
	snprintf(buf, n,
		 "webfetch tool: permission.webfetch \"%s\" (every URL); shell commands: not "
		 "enforced (no sandbox)",
		 allow ? "allow" : "deny");
	return allow;
}

static bool explain(const struct halo_policy *p, const struct render_opts *o, const char *host,
		    unsigned port, char *buf, size_t n)
{
	(void)o;
	(void)port;
	return render_explain_view(p, NULL, host, buf, n, decide);
}

const struct render_adapter render_opencode = {
    .name = "opencode",
    .title = "OpenCode",
    .keys = keys,
    .n_keys = RN(keys),
    .disp =
	{
	    RENDER_DISP_HALO_ONLY,
	    [RF_MODE] = RD_WARN,
	    [RF_WRITABLE_ROOTS] = RD_WARN,
	    [RF_PROTECTED_PATHS] = RD_KEY_WARN,
	    [RF_FAIL_IF_UNAVAILABLE] = RD_WARN,
	    [RF_EGRESS_DEFAULT] = RD_KEY_WARN,
	    [RF_ALLOWED_DOMAINS] = RD_WARN,
	    [RF_PRESETS] = RD_WARN,
	    [RF_DENIED_DOMAINS] = RD_WARN,
	    [RF_GATEWAY] = RD_WARN,
	    [RF_LEGACY_PERMISSIONS] = RD_WARN,
	    [RF_FLOOR] = RD_KEY_WARN,
	    [RF_PROXY] = RD_WARN,
	},
    .render = render,
    .explain = explain,
    .proxy_cannot =
	"OpenCode has no sandbox: its shell commands reach the network directly and no "
	"setting sends them to a proxy; nothing rendered (run them under halo-run instead)",
};
