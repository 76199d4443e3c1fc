/* Gemini CLI: the system settings file (settings.json, overrides every other
 * settings file). Sources: https://geminicli.com/docs/reference/configuration and
 * the sandboxing guide (https://github.com/google-gemini/gemini-cli/blob/main/docs/
 * cli/sandbox.md); checked against DESIGN.md's table (2026-10-27). Only
 * tools.sandbox is held, on macOS only (Seatbelt through sandbox-exec); elsewhere
 * it means a container runtime. The --sandbox flag and GEMINI_SANDBOX take
 * precedence over any settings file: a default, not a lock. */
#include <stdio.h>

#include "render/render_int.h"

#define F "settings.json"

static const struct render_key keys[] = {
    /* "sandbox-exec": macOS Seatbelt */
    {F, "tools.sandbox", "https://geminicli.com/docs/reference/configuration#tools"},
};

static const char *install(enum render_os os)
{
	/* https://geminicli.com/docs/reference/configuration#settings-files */
	static const char *const where[] = {
	    [RENDER_OS_LINUX] = "/etc/gemini-cli/settings.json",
	    [RENDER_OS_MACOS] = "/Library/Application Support/GeminiCli/settings.json",
	    [RENDER_OS_WINDOWS] = "C:\\ProgramData\\gemini-cli\\settings.json",
	};
	return where[os];
}

static const struct render_cannot cannot[] = {
    {RF_WRITABLE_ROOTS, "Gemini CLI's settings hold no writable paths"},
    {RF_PROTECTED_PATHS, "Gemini CLI's settings hold no protected paths; not protected"},
    {RF_FLOOR, "Gemini CLI's settings hold no protected paths; the credential floor is not "
	       "protected"},
    {RF_FAIL_IF_UNAVAILABLE, "Gemini CLI has no setting that refuses to run without its "
			     "sandbox"},
    {RF_EGRESS_DEFAULT, "Gemini CLI holds no per-domain egress rule "
			"(tools.sandboxNetworkAccess is a boolean of undocumented scope); "
			"egress is not enforced"},
    {RF_ALLOWED_DOMAINS, "no per-domain rule in Gemini CLI; not enforced"},
    {RF_PRESETS, "no per-domain rule in Gemini CLI; not enforced"},
    {RF_DENIED_DOMAINS, "no per-domain rule in Gemini CLI; these hosts are NOT refused"},
    {RF_GATEWAY, "no per-domain rule in Gemini CLI"},
};

/* Gemini CLI's proxied sandbox (sandbox.md, "Proxied networking"; sandbox.ts): it
 * starts the command in GEMINI_SANDBOX_PROXY_COMMAND itself and waits for it on port
 * 8877, fixed; no settings key names it, and no SOCKS proxy is used. */
#define GEMINI_PROXY_PORT 8877

static void proxy(const struct render_opts *o, struct render_out *out)
{
	char port[96] = "";

	if (!o->proxy_http)
		return;
	if (o->proxy_http != GEMINI_PROXY_PORT)
		snprintf(port, sizeof(port), "port %u cannot be used (Gemini CLI waits on %u); ",
			 o->proxy_http, GEMINI_PROXY_PORT);
	render_warn(out, RF_PROXY,
		    "%sGemini CLI has no settings key for an outside proxy: its sandbox starts "
		    "the command in the environment variable GEMINI_SANDBOX_PROXY_COMMAND and "
		    "sends commands' traffic to port %u; on macOS (SEATBELT_PROFILE "
		    "permissive-proxied) set GEMINI_SANDBOX_PROXY_COMMAND='halo-run proxy "
		    "--listen 127.0.0.1:%u --policy F' in the environment that starts gemini "
		    "(never in a project's .gemini/.env); nothing rendered",
		    port, GEMINI_PROXY_PORT, GEMINI_PROXY_PORT);
	if (o->proxy_socks)
		render_warn(out, RF_PROXY,
			    "SOCKS port %u: Gemini CLI's sandbox uses no SOCKS proxy (only "
			    "HTTP(S)_PROXY); not used",
			    o->proxy_socks);
}

static void body(const struct halo_policy *p, const struct render_opts *o,
		 const struct render_view *v, cJSON *root, struct render_out *out)
{
	if (o->os == RENDER_OS_MACOS) {
		rj_str(out, rj_obj(out, root, "tools"), "sandbox", "sandbox-exec");
		render_mark(out, RF_MODE);
		render_warn(out, RF_MODE,
			    "tools.sandbox is a default: the --sandbox flag and GEMINI_SANDBOX "
			    "take precedence");
		if (p->legacy_permissions_sandbox)
			render_mark(out, RF_LEGACY_PERMISSIONS);
	} else {
		render_warn(out, RF_MODE,
			    "%s: tools.sandbox is rendered on macOS only (Seatbelt); elsewhere it "
			    "needs a container runtime; nothing rendered",
			    render_os_name(o->os));
		if (p->legacy_permissions_sandbox)
			render_warn(out, RF_LEGACY_PERMISSIONS, "as sandbox.mode: not rendered");
	}
	if (v->read_only)
		render_warn(out, RF_MODE, "read-only: Gemini CLI has no read-only setting");
	render_warn_cannot(p, out, cannot, RN(cannot));
	proxy(o, out);
}

static const struct render_json_frame frame = {F, install, NULL, body};

static int render(const struct halo_policy *p, const struct render_opts *o, struct render_out *out,
		  struct halo_err *e)
{
	(void)e;
	return render_json(p, o, out, &frame);
}

RENDER_EXPLAIN_NONE(explain, "not enforced: Gemini CLI holds no per-domain egress rule")

const struct render_adapter render_gemini = {
    .name = "gemini",
    .title = "Gemini CLI",
    .keys = keys,
    .n_keys = RN(keys),
    .disp =
	{
	    RENDER_DISP_HALO_ONLY,
	    [RF_MODE] = RD_KEY_WARN,
	    [RF_WRITABLE_ROOTS] = RD_WARN,
	    [RF_PROTECTED_PATHS] = RD_WARN,
	    [RF_FAIL_IF_UNAVAILABLE] = RD_WARN,
	    [RF_EGRESS_DEFAULT] = RD_WARN,
	    [RF_ALLOWED_DOMAINS] = RD_WARN,
	    [RF_PRESETS] = RD_WARN,
	    [RF_DENIED_DOMAINS] = RD_WARN,
	    [RF_GATEWAY] = RD_WARN,
	    [RF_LEGACY_PERMISSIONS] = RD_KEY_WARN,
	    [RF_FLOOR] = RD_WARN,
	    [RF_PROXY] = RD_WARN,
	},
    .render = render,
    .explain = explain,
};
