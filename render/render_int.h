/* Internal to render/: the lists every adapter starts from (presets expanded, the
 * credential floor added), the output builder, and the shared warnings. */
#ifndef HALO_RENDER_INT_H
#define HALO_RENDER_INT_H

#include <stdarg.h>

#include <cjson/cJSON.h>

#include "render/render.h"

#define RN(a) (sizeof(a) / sizeof((a)[0]))

/* A list of owned strings. */
struct rlist {
	char **v;
	size_t n, cap;
};
int rlist_push(struct rlist *l, const char *s); /* appends unless already there */
bool rlist_has(const struct rlist *l, const char *s);
void rlist_free(struct rlist *l);

/* A growing text buffer; `oom` sticks. */
struct rbuf {
	char *s;
	size_t len, cap;
	bool oom;
};
void rbuf_printf(struct rbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rbuf_free(struct rbuf *b);

/* What every adapter renders from: the policy's meaning with presets expanded. */
struct render_view {
	bool off;		 /* sandbox.mode off */
	bool read_only;		 /* sandbox.mode read-only */
	bool default_allow;	 /* the effective egress default */
	struct rlist allow;	 /* hosts allowed on every port (presets expanded) */
	struct rlist deny;	 /* hosts denied (a port, if any, dropped: denied on every port) */
	struct rlist allow_port; /* allowed only on one port: "host:port" (not renderable) */
	struct rlist deny_port;	 /* denied only on one port: "host:port" */
	struct rlist prot_home;	 /* protected paths, floor first: "~/x" or "/abs" */
	struct rlist prot_glob;	 /* relative name patterns (".env*") */
	struct rlist writable;	 /* writable roots as written ("~/x" or "/abs") */
	/* Allowed entries halo-run's address rule refuses (localhost, 10.1.2.3, the
	 * metadata address... without a matching allowPrivate): left out of `allow` and
	 * put in `deny`, so no harness allows what halo-run refuses. */
	struct rlist refused;
	/* Names with fixed addresses that an allowed wildcard covers and the address
	 * rule refuses (metadata.google.internal under *.google.internal): in `deny`. */
	struct rlist refused_under;
};
int render_view_build(const struct halo_policy *p, struct render_view *v);
void render_view_free(struct render_view *v);

/* Output: warnings ("FIELD: REASON") and which fields were dealt with. */
void render_warn(struct render_out *out, enum render_field f, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void render_mark(struct render_out *out, enum render_field f);
/* Add a file (takes text; NULL text sets oom). */
void render_add_file(struct render_out *out, const char *name, const char *install, char *text);
/* The fields only halo-run enforces (limits, env, allowPrivate, hostPorts,
 * unixSockets, caches, guardPersistence, allowRead): one warning each when in force. */
void render_warn_halo_only(const struct halo_policy *p, struct render_out *out);
/* sandbox.mode off: nothing is rendered; say so for every field in force. */
void render_warn_off(const struct halo_policy *p, struct render_out *out);

/* cJSON helpers that remember a failed allocation in out->oom. */
cJSON *rj_obj(struct render_out *out, cJSON *parent, const char *key);
void rj_bool(struct render_out *out, cJSON *parent, const char *key, bool v);
void rj_str(struct render_out *out, cJSON *parent, const char *key, const char *v);
void rj_list(struct render_out *out, cJSON *parent, const char *key, const struct rlist *l);
void rj_push(struct render_out *out, cJSON *arr, const char *v);
/* Print root (tab-indented, as cJSON prints) as a file, and free root. */
void rj_file(struct render_out *out, cJSON *root, const char *name, const char *install);

/* Host matching as Decide() means it ("*.x": subdomains only) and the vendors' variants. */
enum rmatch {
	RM_HALO,      /* "*.x" subdomains only, "x" exactly x */
	RM_SUBTREE,   /* "x" is x and every subdomain (Copilot blockedHosts) */
	RM_STAR_APEX, /* "*.x" is x too (Cursor) */
};
bool render_host_match(const char *pattern, const char *host, enum rmatch m);
/* The first entry of l matching host, or NULL. */
const char *render_list_match(const struct rlist *l, const char *host, enum rmatch m);

/* Is the view's egress anything but "allow every host"? */
bool render_view_restricts(const struct render_view *v);

/* Claude Code's path spelling in permission rules: "~/x" stays, "/abs" becomes
 * "//abs"; directories and files alike get "X" and "X" followed by the any-depth glob. */
int render_perm_rules(struct rlist *out, const char *tool, const struct render_view *v);

/* gateway: rendered when the allowlist holds it, else a warning naming `where`. */
void render_gateway(const struct halo_policy *p, const struct render_view *v,
		    struct render_out *out, const char *where);

/* The one-port entries a vendor's domain lists cannot hold (each a warning: an allowed
 * one left out, a denied one denied on every port), and the domain fields marked.
 * `allow_tail` ends the allowed entries' warning (" (tighter than halo-run)" or ""). */
void render_domain_ports(const struct halo_policy *p, const struct render_view *v,
			 struct render_out *out, const char *allow_list, const char *allow_tail,
			 const char *deny_list);

/* One warning per v->refused entry: left out of `allow_list`, denied in `deny_list`
 * (NULL: the harness has none, so it is only left out). */
void render_warn_refused(const struct halo_policy *p, const struct render_view *v,
			 struct render_out *out, const char *allow_list, const char *deny_list);

/* sandbox.mode, failIfUnavailable and the legacy spelling marked, for the harnesses
 * whose managed sandbox holds them. */
void render_mark_sandbox(const struct halo_policy *p, struct render_out *out);

/* The frame of an adapter writing one JSON file: the view, sandbox.mode off (nothing
 * but `schema`), the halo-only warnings and the file. `body` fills root. */
struct render_json_frame {
	const char *file;
	const char *(*install)(enum render_os os);
	const char *schema; /* "$schema" value, or NULL */
	void (*body)(const struct halo_policy *p, const struct render_opts *o,
		     const struct render_view *v, cJSON *root, struct render_out *out);
};
int render_json(const struct halo_policy *p, const struct render_opts *o, struct render_out *out,
		const struct render_json_frame *f);

/* `check --harness` over the view: out of memory refuses; sandbox.mode off is `title`'s
 * own default (when title is NULL, decide sees the off view too); else decide. */
typedef bool (*render_decide_fn)(const struct render_view *v, const char *host, char *buf,
				 size_t n);
bool render_explain_view(const struct halo_policy *p, const char *title, const char *host,
			 char *buf, size_t n, render_decide_fn decide);

/* --proxy given and not dealt with by the adapter (nor by sandbox.mode off): one
 * warning, the adapter's proxy_cannot. Called by render_policy after the adapter. */
void render_warn_proxy(const struct render_adapter *a, const struct halo_policy *p,
		       const struct render_opts *o, struct render_out *out);

/* A field a harness cannot hold, and why. */
struct render_cannot {
	enum render_field f;
	const char *reason;
};
/* One warning per row in force. */
void render_warn_cannot(const struct halo_policy *p, struct render_out *out,
			const struct render_cannot *rows, size_t n);

/* An adapter whose rendering decides no host: `check --harness` says `why` and lets
 * the host through. */
#define RENDER_EXPLAIN_NONE(fn, why)                                                               \
	static bool fn(const struct halo_policy *p, const struct render_opts *o, const char *host, \
		       unsigned port, char *buf, size_t n)                                         \
	{                                                                                          \
		(void)p, (void)o, (void)host, (void)port;                                          \
		snprintf(buf, n, "%s", why);                                                       \
		return true;                                                                       \
	}

/* The disposition rows every adapter shares: what only halo-run enforces. */
#define RENDER_DISP_HALO_ONLY                                                                      \
	[RF_ALLOW_READ] = RD_WARN, [RF_GUARD_PERSISTENCE] = RD_WARN, [RF_CACHES] = RD_WARN,        \
	[RF_UNIX_SOCKETS] = RD_WARN, [RF_MACOS_ALLOW_TRUSTD] = RD_WARN,                            \
	[RF_ALLOW_PRIVATE] = RD_WARN, [RF_HOST_PORTS] = RD_WARN, [RF_UPSTREAM_PROXY] = RD_WARN,    \
	[RF_LIMIT_CPU] = RD_WARN, [RF_LIMIT_MEMORY] = RD_WARN, [RF_LIMIT_FSIZE] = RD_WARN,         \
	[RF_LIMIT_NOFILE] = RD_WARN, [RF_LIMIT_NPROC] = RD_WARN, [RF_LIMIT_WALL] = RD_WARN,        \
	[RF_LIMIT_SESSION_IDLE] = RD_WARN, [RF_LIMIT_CONNECTIONS] = RD_WARN,                       \
	[RF_LIMIT_WILDCARD_NAMES] = RD_WARN, [RF_LIMIT_WILDCARD_NAMES_PER_MINUTE] = RD_WARN,       \
	[RF_ENV_PASS] = RD_WARN, [RF_ENV_SET] = RD_WARN, [RF_TRUSTED_CAS] = RD_WARN,               \
	[RF_CREDENTIALS] = RD_WARN, [RF_REQUEST_RULES] = RD_WARN

/* The rows every harness whose managed settings hold a sandbox and both domain lists
 * shares (Claude Code, Codex, Copilot); each adds its writable roots, egress default
 * and failIfUnavailable rows. */
#define RENDER_DISP_MANAGED                                                                        \
	[RF_MODE] = RD_KEY_WARN, [RF_PROTECTED_PATHS] = RD_KEY_WARN,                               \
	[RF_ALLOWED_DOMAINS] = RD_KEY_WARN, [RF_PRESETS] = RD_KEY,                                 \
	[RF_DENIED_DOMAINS] = RD_KEY_WARN, [RF_GATEWAY] = RD_KEY_WARN,                             \
	[RF_LEGACY_PERMISSIONS] = RD_KEY, [RF_FLOOR] = RD_KEY_WARN

/* The TOML basic-string spelling of s (quotes included) into b. */
void render_toml_str(struct rbuf *b, const char *s);
void render_toml_list(struct rbuf *b, const char *key, const struct rlist *l);

/* toml.c: a strict TOML subset into a cJSON tree (caller deletes). 0 or -EINVAL with
 * the line and reason in e. */
int render_toml_parse(const char *buf, size_t len, cJSON **out, struct halo_err *e);

#endif
