/* Copilot CLI: managed-settings.json, key `sandbox`. Sources: GitHub's enterprise
 * managed settings reference (https://docs.github.com/en/copilot/reference/
 * enterprise-administrators/enterprise-managed-settings) and local sandbox settings
 * (https://docs.github.com/en/copilot/how-tos/cloud-and-local-sandboxes/
 * configuring-local-sandbox-settings); checked against DESIGN.md's table
 * (2026-10-27). Managed sandbox values are minimums: they combine with the user's
 * in the most restrictive direction. CLI >= 1.0.93 only: older clients are locked
 * out while the key is set. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/render_int.h"

#define F "managed-settings.json"
#define EMS                                                                                        \
	"https://docs.github.com/en/copilot/reference/enterprise-administrators/"                  \
	"enterprise-managed-settings"

static const struct render_key keys[] = {
    /* local sandbox on, refuse without it, no model-requested bypass (Invariant 1) */
    {F, "sandbox.enabled", EMS},
    {F, "sandbox.failIfUnavailable", EMS},
    {F, "sandbox.allowBypass", EMS},
    /* extra read-write paths; denied paths ("should be absolute") */
    {F, "sandbox.userPolicy.filesystem.readwritePaths", EMS},
    {F, "sandbox.userPolicy.filesystem.deniedPaths", EMS},
    /* allowedHosts: non-empty blocks the rest, "*.x" subdomains only;
     * blockedHosts win and block subdomains too; allowOutbound false: nothing out */
    {F, "sandbox.userPolicy.network.allowedHosts", EMS},
    {F, "sandbox.userPolicy.network.blockedHosts", EMS},
    {F, "sandbox.userPolicy.network.allowOutbound", EMS},
};

static const char *install(enum render_os os)
{
	/* File-based delivery (github.com/microsoft/vscode pull 321870, the paths the
	 * Copilot clients share). */
	static const char *const where[] = {
	    [RENDER_OS_LINUX] = "/etc/github-copilot/managed-settings.json",
	    [RENDER_OS_MACOS] = "/Library/Application Support/GitHubCopilot/managed-settings.json",
	    [RENDER_OS_WINDOWS] = "%ProgramFiles%\\GitHubCopilot\\managed-settings.json",
	};
	return where[os];
}

/* "1.0.93" -> comparable; -1 when it is not MAJOR.MINOR.PATCH digits. */
static long long version_key(const char *s)
{
	unsigned long long part[3] = {0, 0, 0};
	const char *c = s;

	if (*c == 'v')
		c++;
	for (int i = 0; i < 3; i++) {
		char *end;
		if (*c < '0' || *c > '9')
			return -1;
		errno = 0;
		part[i] = strtoull(c, &end, 10);
		if (errno || part[i] > 99999)
			return -1;
		c = end;
		if (i < 2 && *c++ != '.')
			return -1;
	}
	if (*c && *c != '-' && *c != '+')
		return -1;
	return (long long)(part[0] * 10000000000ULL + part[1] * 100000ULL + part[2]);
}

static int check_pin(const struct render_opts *o, struct render_out *out, struct halo_err *e)
{
	long long want = version_key("1.0.93"), have;

	if (!o->version) {
		render_warn(out, RF_MODE,
			    "rendered for Copilot CLI 1.0.93 or later (no --version pin): older "
			    "clients are locked out while the sandbox key is set");
		return 0;
	}
	have = version_key(o->version);
	if (have < 0) {
		halo_err_set(e, "copilot: --version: not a version (MAJOR.MINOR.PATCH)");
		return -EINVAL;
	}
	if (have < want) {
		halo_err_set(e,
			     "copilot: --version %s: Copilot CLI holds managed sandbox settings "
			     "from 1.0.93 on, and older clients are locked out while the key is "
			     "set; nothing rendered (upgrade the pin)",
			     o->version);
		return -EINVAL;
	}
	return 0;
}

static void paths(const struct halo_policy *p, const struct render_view *v, cJSON *fs,
		  struct render_out *out)
{
	if (v->writable.n) {
		rj_list(out, fs, "readwritePaths", &v->writable);
		render_mark(out, RF_WRITABLE_ROOTS);
	}
	rj_list(out, fs, "deniedPaths", &v->prot_home);
	render_mark(out, RF_FLOOR);
	render_warn(out, RF_FLOOR,
		    "deniedPaths \"should be absolute\": the ~/ forms are rendered as written; "
		    "check that your Copilot CLI expands them");
	for (size_t i = 0; i < v->prot_glob.n; i++)
		render_warn(out, RF_FLOOR, "%s: deniedPaths hold no name pattern; not protected",
			    v->prot_glob.v[i]);
	if (p->protected_paths.n) {
		render_mark(out, RF_PROTECTED_PATHS);
		render_warn(out, RF_PROTECTED_PATHS,
			    "deniedPaths hold paths, not name patterns; relative patterns are "
			    "not protected");
	}
}

static void network(const struct halo_policy *p, const struct render_view *v, cJSON *net,
		    struct render_out *out)
{
	if (!v->default_allow) {
		if (v->allow.n)
			rj_list(out, net, "allowedHosts", &v->allow);
		else
			rj_bool(out, net, "allowOutbound", false);
	}
	render_mark(out, RF_EGRESS_DEFAULT);
	rj_list(out, net, "blockedHosts", &v->deny);
	for (size_t i = 0; i < v->deny.n; i++)
		if (strncmp(v->deny.v[i], "*.", 2) != 0)
			render_warn(out, RF_DENIED_DOMAINS,
				    "%s: blockedHosts also block every subdomain (tighter than "
				    "halo-run)",
				    v->deny.v[i]);
	render_domain_ports(p, v, out, "allowedHosts", "", "blockedHosts");
}

static void body(const struct halo_policy *p, const struct render_opts *o,
		 const struct render_view *v, cJSON *root, struct render_out *out)
{
	cJSON *sb = rj_obj(out, root, "sandbox"), *up;

	rj_bool(out, sb, "enabled", true);
	rj_bool(out, sb, "failIfUnavailable", p->fail_if_unavailable != 0);
	rj_bool(out, sb, "allowBypass", false);
	render_mark_sandbox(p, out);
	if (o->os == RENDER_OS_WINDOWS)
		/* configuring-local-sandbox-settings: "Local sandboxing on Windows requires
		 * a Windows Insiders build." */
		render_warn(out, RF_MODE,
			    "windows: Copilot CLI's local sandbox needs a Windows Insiders build; "
			    "on other builds failIfUnavailable stops commands rather than run them "
			    "unsandboxed");
	if (v->read_only)
		render_warn(out, RF_MODE,
			    "read-only: Copilot's sandbox has no read-only workspace; only "
			    "halo-run makes it read-only");
	up = rj_obj(out, sb, "userPolicy");
	paths(p, v, rj_obj(out, up, "filesystem"), out);
	network(p, v, rj_obj(out, up, "network"), out);
	render_gateway(p, v, out, "sandbox.userPolicy.network.allowedHosts");
}

static const struct render_json_frame frame = {F, install, NULL, body};

static int render(const struct halo_policy *p, const struct render_opts *o, struct render_out *out,
		  struct halo_err *e)
{
	int rc = check_pin(o, out, e);

	return rc < 0 ? rc : render_json(p, o, out, &frame);
}

static bool decide(const struct render_view *v, const char *host, char *buf, size_t n)
{
	const char *m;

	if ((m = render_list_match(&v->deny, host, RM_SUBTREE))) {
		snprintf(buf, n, "refused by sandbox.userPolicy.network.blockedHosts %s", m);
		return false;
	}
	if (v->default_allow) {
		snprintf(buf, n, "allowed: no allowedHosts (outbound open)");
		return true;
	}
	if ((m = render_list_match(&v->allow, host, RM_HALO))) {
		snprintf(buf, n, "allowed by sandbox.userPolicy.network.allowedHosts %s", m);
		return true;
	}
	snprintf(buf, n, "refused: %s",
		 v->allow.n ? "not in sandbox.userPolicy.network.allowedHosts"
			    : "sandbox.userPolicy.network.allowOutbound false");
	return false;
}

static bool explain(const struct halo_policy *p, const struct render_opts *o, const char *host,
		    unsigned port, char *buf, size_t n)
{
	(void)port;
	if (o->version && version_key(o->version) < version_key("1.0.93")) {
		snprintf(buf, n, "nothing rendered: the pin predates Copilot CLI 1.0.93");
		return true;
	}
	return render_explain_view(p, "Copilot", host, buf, n, decide);
}

const struct render_adapter render_copilot = {
    .name = "copilot",
    .title = "Copilot CLI",
    .keys = keys,
    .n_keys = RN(keys),
    .disp =
	{
	    RENDER_DISP_HALO_ONLY,
	    RENDER_DISP_MANAGED,
	    [RF_WRITABLE_ROOTS] = RD_KEY,
	    [RF_FAIL_IF_UNAVAILABLE] = RD_KEY,
	    [RF_EGRESS_DEFAULT] = RD_KEY,
	    [RF_PROXY] = RD_WARN,
	},
    .render = render,
    .explain = explain,
    .proxy_cannot =
	"Copilot CLI's sandbox documents no outside proxy (sandbox.userPolicy.network holds "
	"host lists only); nothing rendered",
};
