/* render/ — one policy into every harness's own managed settings, and a harness's
 * sandbox settings back into a policy. Pure: it builds text from a validated
 * struct halo_policy (and parses text handed to it); runner/ reads and writes the
 * files and prints. It may call policy/ only.
 *
 * Invariants (DESIGN.md, "Rendering to the harnesses"): nothing rendered carries a
 * bypass; every field a harness cannot hold is a warning naming the harness and the
 * reason, never dropped; a host gets the same decision as Decide() wherever the
 * harness can express it, and a warning where it cannot. */
#ifndef HALO_RENDER_H
#define HALO_RENDER_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"

enum render_os {
	RENDER_OS_LINUX,
	RENDER_OS_MACOS,
	RENDER_OS_WINDOWS,
};

/* Every field of the policy model, as the schema spells it (render/fields.c). The
 * no-silent-drop test walks this table against the model. */
enum render_field {
	RF_MODE,
	RF_WRITABLE_ROOTS,
	RF_PROTECTED_PATHS,
	RF_ALLOW_READ,
	RF_FAIL_IF_UNAVAILABLE,
	RF_GUARD_PERSISTENCE,
	RF_CACHES,
	RF_UNIX_SOCKETS,
	RF_MACOS_ALLOW_TRUSTD,
	RF_EGRESS_DEFAULT,
	RF_ALLOWED_DOMAINS,
	RF_PRESETS,
	RF_DENIED_DOMAINS,
	RF_ALLOW_PRIVATE,
	RF_HOST_PORTS,
	RF_UPSTREAM_PROXY,
	RF_TRUSTED_CAS,
	RF_CREDENTIALS,
	RF_REQUEST_RULES,
	RF_GATEWAY,
	RF_LIMIT_CPU,
	RF_LIMIT_MEMORY,
	RF_LIMIT_FSIZE,
	RF_LIMIT_NOFILE,
	RF_LIMIT_NPROC,
	RF_LIMIT_WALL,
	RF_LIMIT_SESSION_IDLE,
	RF_LIMIT_CONNECTIONS,
	RF_LIMIT_WILDCARD_NAMES,
	RF_LIMIT_WILDCARD_NAMES_PER_MINUTE,
	RF_ENV_PASS,
	RF_ENV_SET,
	RF_LEGACY_PERMISSIONS,
	RF_FLOOR, /* the built-in credential floor: not a key, but always in force */
	RF_PROXY, /* `policy render --proxy`: not a policy key; rendered or warned when given */
	RENDER_N_FIELDS
};
const char *render_field_name(enum render_field f); /* "sandbox.mode", ... */
/* Is the field set in p (or, for the floor and defaults, in force)? */
bool render_field_in_force(const struct halo_policy *p, enum render_field f);

/* How an adapter treats a field; the test checks the behaviour matches. */
enum render_disp {
	RD_NONE = 0, /* never valid: every adapter names every field */
	RD_KEY,	     /* rendered into a managed key */
	RD_WARN,     /* cannot be held: always a warning */
	RD_KEY_WARN, /* rendered, with a warning where the harness's meaning differs */
};

struct render_warning {
	enum render_field field;
	char *text; /* "FIELD: REASON" */
};

#define RENDER_MAX_FILES 2

struct render_file {
	const char *name;    /* "managed-settings.json" */
	const char *install; /* where the harness reads it on the target OS, or NULL */
	char *text;
};

#define RF_RENDERED 1u
#define RF_WARNED   2u

struct render_out {
	const char *harness;
	struct render_file files[RENDER_MAX_FILES];
	size_t n_files;
	struct render_warning *w;
	size_t n_w, cap_w;
	unsigned char handled[RENDER_N_FIELDS]; /* RF_RENDERED | RF_WARNED */
	bool oom;
};

struct render_opts {
	enum render_os os;
	const char *version; /* the harness version pinned (Copilot), or NULL */
	/* --proxy PORT[,SOCKSPORT]: a `halo-run proxy` on the harness's loopback that
	 * the harness's own sandbox sends its commands' traffic to; 0 when not given. */
	unsigned proxy_http, proxy_socks;
};

/* "PORT" or "PORT,SOCKSPORT", each 1-65535 in plain decimal, the two different:
 * 0, or -EINVAL with the reason in e (naming the part that is wrong). */
int render_proxy_parse(const char *s, unsigned *http, unsigned *socks, struct halo_err *e);

/* One key an adapter renders, with the vendor documentation it comes from. */
struct render_key {
	const char *file; /* which rendered file */
	const char *path; /* dotted key path; "*" stands for any one key (a map's keys) */
	const char *source;
};

struct render_adapter {
	const char *name; /* "claude-code" */
	const char *title;
	const struct render_key *keys;
	size_t n_keys;
	enum render_disp disp[RENDER_N_FIELDS];
	int (*render)(const struct halo_policy *p, const struct render_opts *o,
		      struct render_out *out, struct halo_err *e);
	/* For `check --harness`: the mechanism that decides `host` after rendering
	 * (NUL-terminated into buf), and whether the rendering allows it. */
	bool (*explain)(const struct halo_policy *p, const struct render_opts *o, const char *host,
			unsigned port, char *buf, size_t n);
	/* Why --proxy cannot be rendered for this harness (the warning's text), for an
	 * adapter that does not deal with RF_PROXY itself; NULL when it always does. */
	const char *proxy_cannot;
};

size_t render_n_adapters(void);
const struct render_adapter *render_adapter_at(size_t i); /* NULL past the end */
/* By a harness name or alias (policy_harness_find); NULL when it has no adapter. */
const struct render_adapter *render_adapter_find(const char *name);
int render_os_parse(const char *s, enum render_os *os);
const char *render_os_name(enum render_os os);

/* Render p for one harness. 0, or -EINVAL (a pin the harness cannot hold) /
 * -ENOMEM with the reason in e. out is always freed with render_out_free. */
int render_policy(const struct render_adapter *a, const struct halo_policy *p,
		  const struct render_opts *o, struct render_out *out, struct halo_err *e);
void render_out_free(struct render_out *out);

/* The bypass settings no rendering may contain (Invariant 1); NULL when clean, else
 * the first one found. */
const char *render_find_bypass(const char *text);

/* ---------------------------------------------------------------- TOML */

/* The one strict TOML reader (render/toml.c) as doctor reads Codex's config.toml:
 * the whole document is read (TOML 1.0, with 1.1's \\e, \\x and newlines in inline
 * tables) and every `key = value` is shown to kv with its full dotted path (path NULL,
 * n 0 inside an array or past 32 segments), the line of its key, and its text when
 * it is a string (else NULL; a string holding a NUL reads as cut there). Duplicate
 * keys are not refused: nothing is kept. 0, or -EINVAL with "line N: <what>" in e,
 * never the file's text. */
typedef void (*render_toml_kv_fn)(void *arg, const char *const *path, size_t n, unsigned line,
				  const char *str);
int render_toml_scan(const char *buf, size_t len, render_toml_kv_fn kv, void *arg,
		     struct halo_err *e);

/* ---------------------------------------------------------------- import */

enum render_import_kind {
	RI_GUESS = 0,
	RI_CLAUDE_CODE,
	RI_SRT, /* Anthropic's sandbox-runtime settings (srt-settings.json) */
	RI_CODEX,
	RI_CURSOR,
	RI_COPILOT,
};
/* A harness name or alias that supports POLICY_HARNESS_IMPORT: 0, or -EINVAL. */
int render_import_kind_parse(const char *s, enum render_import_kind *k);
const char *render_import_kind_name(enum render_import_kind k);

#define RENDER_IMPORT_MAX (1024 * 1024)

struct render_import {
	enum render_import_kind kind; /* what it was read as */
	char *yaml;		      /* the policy, YAML */
	char **warnings;	      /* "FIELD: REASON", what has no equivalent */
	size_t n_warnings;
	/* Deny entries the policy language cannot hold ("FIELD: ENTRY: REASON"): without
	 * --lossy each refuses the import; with it, those that have no tighter form. Set
	 * on failure too, for the caller to print. */
	char **lost;
	size_t n_lost;
	/* --lossy: "FIELD: ENTRY -> TIGHTER (why)", every substitution made. */
	char **subst;
	size_t n_subst;
};

/* The world the imported policy must validate in: each path is checked by policy/'s
 * own validation against ctx, and a writable root must exist (`exists`, optional),
 * as `halo-run validate` insists. */
struct render_import_world {
	const struct policy_ctx *ctx;
	bool (*exists)(const char *abs);
	/* An entry the language cannot hold: false refuses the import (never looser than
	 * the source); true puts its nearest tighter form in its place, and says so. */
	bool lossy;
};

/* A harness's settings text (JSON or TOML, `len` bytes, any content) to a halo-run
 * policy that passes validation. 0, or -EINVAL with the reason (naming the line or
 * key) in e. What has no equivalent is a warning; an allow entry validation refuses is
 * left out with a warning (tighter); a deny entry the policy cannot hold refuses the
 * import (out->lost), or with w->lossy becomes its nearest tighter form (out->subst):
 * never looser than the source. */
int render_import(const char *buf, size_t len, enum render_import_kind kind,
		  const struct render_import_world *w, struct render_import *out,
		  struct halo_err *e);
void render_import_free(struct render_import *r);

#endif
