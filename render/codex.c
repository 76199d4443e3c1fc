/* Codex: requirements.toml (admin-enforced) and managed_config.toml (defaults
 * reapplied at every start). Sources: https://developers.openai.com/codex/enterprise/
 * managed-configuration and the configuration reference
 * (https://developers.openai.com/codex/config-reference#requirementstoml); checked
 * against DESIGN.md's table (2026-10-27). [experimental_network] is documented as
 * experimental. */
#include <stdio.h>
#include <string.h>

#include "render/render_int.h"

#define REQ "requirements.toml"
#define CFG "managed_config.toml"
#define MC  "https://developers.openai.com/codex/enterprise/managed-configuration"
#define REF "https://developers.openai.com/codex/config-reference"

static const struct render_key keys[] = {
    /* the sandbox modes a user may pick: never danger-full-access (Invariant 1) */
    {REQ, "allowed_sandbox_modes", MC "#admin-enforced-requirements-requirementstoml"},
    /* the managed network proxy, its allowlist-only switch and per-domain rules
     * (deny wins; "*.x" subdomains only) */
    {REQ, "experimental_network.enabled", REF "#requirementstoml"},
    {REQ, "experimental_network.managed_allowed_domains_only", REF "#requirementstoml"},
    {REQ, "experimental_network.domains.*", REF "#requirementstoml"},
    /* paths commands may not read: absolute, ~, and any-depth (slash-star-star-slash) globs */
    {REQ, "permissions.filesystem.deny_read", REF "#requirementstoml"},
    /* managed defaults */
    {CFG, "sandbox_mode", MC "#managed-defaults-managed_configtoml"},
    {CFG, "sandbox_workspace_write.writable_roots", REF "#configtoml"},
    {CFG, "sandbox_workspace_write.network_access", REF "#configtoml"},
};

static const char *install(enum render_os os, bool req)
{
	/* /etc/codex on Unix, macOS included (managed-configuration page); no
	 * system path is documented for Windows. */
	if (os == RENDER_OS_WINDOWS)
		return NULL;
	return req ? "/etc/codex/requirements.toml" : "/etc/codex/managed_config.toml";
}

static void network(const struct halo_policy *p, const struct render_view *v, struct rbuf *b,
		    struct render_out *out)
{
	rbuf_printf(b, "\n[experimental_network]\nenabled = true\n");
	rbuf_printf(b, "managed_allowed_domains_only = %s\n", v->default_allow ? "false" : "true");
	rbuf_printf(b, "\n[experimental_network.domains]\n");
	for (size_t i = 0; i < v->allow.n; i++) {
		if (rlist_has(&v->deny, v->allow.v[i]))
			continue; /* deny wins; one key per host */
		render_toml_str(b, v->allow.v[i]);
		rbuf_printf(b, " = \"allow\"\n");
	}
	for (size_t i = 0; i < v->deny.n; i++) {
		render_toml_str(b, v->deny.v[i]);
		rbuf_printf(b, " = \"deny\"\n");
	}
	render_warn(out, RF_EGRESS_DEFAULT,
		    "Codex documents [experimental_network] as experimental; a client without "
		    "it falls back to network_access alone");
	render_domain_ports(p, v, out, "domains", " (tighter than halo-run)", "domains");
}

static void deny_read(const struct halo_policy *p, const struct render_view *v, struct rbuf *b,
		      struct render_out *out)
{
	struct rlist l = {0};
	char g[4200];

	for (size_t i = 0; i < v->prot_home.n; i++)
		if (rlist_push(&l, v->prot_home.v[i]) < 0)
			out->oom = true;
	for (size_t i = 0; i < v->prot_glob.n; i++) {
		snprintf(g, sizeof(g), "/**/%s", v->prot_glob.v[i]);
		if (rlist_push(&l, g) < 0)
			out->oom = true;
	}
	rbuf_printf(b, "\n[permissions.filesystem]\n");
	render_toml_list(b, "deny_read", &l);
	rlist_free(&l);
	render_mark(out, RF_FLOOR);
	render_warn(out, RF_FLOOR,
		    "deny_read only: Codex has no deny-write list, so a protected path inside "
		    "the workspace (such as .env*) stays writable to Codex's commands");
	if (p->protected_paths.n) {
		render_mark(out, RF_PROTECTED_PATHS);
		render_warn(out, RF_PROTECTED_PATHS,
			    "deny_read only: Codex has no deny-write list; writable roots are "
			    "kept clear of protected paths instead");
	}
}

static bool overlaps(const struct render_view *v, const char *root)
{
	for (size_t i = 0; i < v->prot_home.n; i++)
		if (policy_path_within(root, v->prot_home.v[i]) ||
		    policy_path_within(v->prot_home.v[i], root))
			return true;
	return false;
}

static void config(const struct halo_policy *p, const struct render_view *v, struct rbuf *b,
		   struct render_out *out)
{
	struct rlist roots = {0};

	rbuf_printf(b, "sandbox_mode = \"%s\"\n", v->read_only ? "read-only" : "workspace-write");
	if (v->read_only)
		return;
	/* The overlap rule of validation, on the rendered spelling: Codex cannot deny
	 * writes below a writable root, so a root over or under a protected path is
	 * left out. */
	for (size_t i = 0; i < v->writable.n; i++) {
		if (overlaps(v, v->writable.v[i]))
			render_warn(out, RF_WRITABLE_ROOTS,
				    "%s: over or under a protected path, and Codex has no "
				    "deny-write list; left out",
				    v->writable.v[i]);
		else if (rlist_push(&roots, v->writable.v[i]) < 0)
			out->oom = true;
	}
	if (p->writable_roots.n)
		render_mark(out, RF_WRITABLE_ROOTS);
	rbuf_printf(b, "\n[sandbox_workspace_write]\n");
	render_toml_list(b, "writable_roots", &roots);
	rlist_free(&roots);
	rbuf_printf(b, "network_access = %s\n", v->default_allow ? "true" : "false");
	if (v->default_allow)
		render_warn(out, RF_EGRESS_DEFAULT,
			    "allow: network_access = true; deniedDomains then hold only through "
			    "[experimental_network]");
}

static char *take(struct rbuf *b)
{
	char *s = b->oom ? NULL : b->s;

	if (!s)
		rbuf_free(b);
	return s;
}

static int render(const struct halo_policy *p, const struct render_opts *o, struct render_out *out,
		  struct halo_err *e)
{
	struct render_view v;
	struct rbuf req = {0}, cfg = {0};

	(void)e;
	if (render_view_build(p, &v) < 0) {
		out->oom = true;
		return 0;
	}
	if (o->os == RENDER_OS_WINDOWS)
		render_warn(out, RF_MODE,
			    "windows: Codex documents no system location for requirements.toml "
			    "or managed_config.toml; install them where your MDM places them");
	if (v.off) {
		render_warn_off(p, out);
		rbuf_printf(&req, "# sandbox.mode off: nothing to require\n");
		rbuf_printf(&cfg, "# sandbox.mode off: no managed defaults\n");
	} else {
		rbuf_printf(&req, "allowed_sandbox_modes = [%s\"read-only\"]\n",
			    v.read_only ? "" : "\"workspace-write\", ");
		network(p, &v, &req, out);
		deny_read(p, &v, &req, out);
		config(p, &v, &cfg, out);
		render_mark(out, RF_MODE);
		render_mark(out, RF_EGRESS_DEFAULT);
		if (p->legacy_permissions_sandbox)
			render_mark(out, RF_LEGACY_PERMISSIONS);
		render_warn(out, RF_FAIL_IF_UNAVAILABLE,
			    "Codex has no managed key that refuses to run without its sandbox");
		render_gateway(p, &v, out, "[experimental_network] domains");
		render_warn_halo_only(p, out);
	}
	render_view_free(&v);
	render_add_file(out, REQ, install(o->os, true), take(&req));
	render_add_file(out, CFG, install(o->os, false), take(&cfg));
	return 0;
}

static bool decide(const struct render_view *v, const char *host, char *buf, size_t n)
{
	const char *m;

	if ((m = render_list_match(&v->deny, host, RM_HALO))) {
		snprintf(buf, n,
			 "refused by requirements.toml [experimental_network] domains %s = "
			 "\"deny\" (experimental)",
			 m);
		return false;
	}
	if ((m = render_list_match(&v->allow, host, RM_HALO))) {
		snprintf(buf, n,
			 "allowed by requirements.toml [experimental_network] domains %s = "
			 "\"allow\" (experimental)",
			 m);
		return true;
	}
	if (v->default_allow) {
		snprintf(buf, n, "allowed: managed_config.toml network_access = true");
		return true;
	}
	snprintf(buf, n, "refused: managed_allowed_domains_only, and network_access = false");
	return false;
}

static bool explain(const struct halo_policy *p, const struct render_opts *o, const char *host,
		    unsigned port, char *buf, size_t n)
{
	(void)o;
	(void)port;
	return render_explain_view(p, "Codex", host, buf, n, decide);
}

const struct render_adapter render_codex = {
    .name = "codex",
    .title = "Codex",
    .keys = keys,
    .n_keys = RN(keys),
    .disp =
	{
	    RENDER_DISP_HALO_ONLY,
	    RENDER_DISP_MANAGED,
	    [RF_WRITABLE_ROOTS] = RD_KEY_WARN,
	    [RF_FAIL_IF_UNAVAILABLE] = RD_WARN,
	    [RF_EGRESS_DEFAULT] = RD_KEY_WARN,
	    [RF_PROXY] = RD_WARN,
	},
    .render = render,
    .explain = explain,
    .proxy_cannot =
	"Codex documents no managed key for an outside proxy: its commands' network is off, "
	"open (network_access) or held by its own managed proxy ([experimental_network]); "
	"chaining that proxy to another (allow_upstream_proxy, with HTTPS_PROXY in Codex's "
	"environment) is described by the codex-network-proxy README only, not by the "
	"configuration reference; nothing rendered",
};
