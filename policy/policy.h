/* policy/ — the policy model, loading, validation, layering, presets, host and
 * address rules, and the one Decide().  Pure: nothing here touches the OS beyond
 * reading policy files, so every rule can be tested as a table.
 *
 * Helpers return 0 or -errno; messages go into a caller-provided buffer or the
 * diagnostics list. Nothing here prints or exits. */
#ifndef HALO_POLICY_H
#define HALO_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define POLICY_MAX_FILE_BYTES (1024 * 1024)
#define POLICY_MAX_DEPTH      32
#define POLICY_LIMIT_UNSET    (-1LL)
/* limits.sessionIdleSeconds when unset: a session's supervisor ends after 30 min idle. */
#define POLICY_SESSION_IDLE_DEFAULT 1800
#define POLICY_HOST_MAX		    253 /* longest DNS name in text form, no trailing dot */

/* A single error message, for helpers that fail in one way at a time. */
struct halo_err {
	char msg[1024];
};

void halo_err_set(struct halo_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Text from outside (a host name a client sent, a file name the command chose) made
 * safe for a message line: printable ASCII kept, a backslash doubled, every other byte
 * (ESC, newline, any control byte, bytes past ASCII) written \xNN, cut with "..." when
 * out is too small. The one escaper of halo-run's own lines: the proxy's, the
 * broker's and the scan's warnings, the session's. Returns out. */
const char *policy_printable(const char *s, char *out, size_t n);

/* ---------------------------------------------------------------- model */

enum policy_mode {
	POLICY_MODE_UNSET = 0,
	POLICY_MODE_OFF,
	POLICY_MODE_WORKSPACE_WRITE,
	POLICY_MODE_READ_ONLY,
};

/* sandbox.caches: where the tools' caches live for the command. */
enum policy_caches {
	POLICY_CACHES_UNSET = 0, /* means isolated */
	POLICY_CACHES_ISOLATED,	 /* sandbox-only caches, kept across runs, never the host's */
	POLICY_CACHES_HOST,	 /* the host's real caches, writable (a loosening) */
	POLICY_CACHES_OFF,	 /* none: the tools' defaults, read-only */
};
const char *policy_caches_name(enum policy_caches c);
const char *policy_mode_name(enum policy_mode m); /* "workspace-write"...; "unset" */

enum policy_egress_default {
	POLICY_EGRESS_UNSET = 0,
	POLICY_EGRESS_ALLOW,
	POLICY_EGRESS_DENY,
};

/* A list of strings as written in the file; `set` tells "absent" from "[]". */
struct policy_list {
	char **items;
	size_t n;
	bool set;
};

/* egress.hostPorts: host loopback ports reachable inside the sandbox. */
#define POLICY_MAX_HOST_PORTS 64
/* halo-run's own proxy on the sandbox's loopback (Linux): the environment points the
 * tools at these ports (env/env.c), hostPorts may not take them (validate.c), and
 * netns/ listens on them (asserted equal in linux/init.c). */
#define POLICY_PROXY_HTTP_PORT	  3128
#define POLICY_PROXY_SOCKS_PORT	  1080
#define POLICY_PROXY_CAPTURE_PORT 3129 /* captured connections (netns/capture.c) */
struct policy_ports {
	uint16_t *items;
	size_t n;
	bool set;
};

struct policy_kv {
	char *key;
	char *value;
};

/* Every limit is POLICY_LIMIT_UNSET or a positive count in the unit its name says. */
struct policy_limits {
	long long cpu_seconds;
	long long memory_mb;
	long long file_size_mb;
	long long open_files;
	long long processes;
	long long wall_seconds;
	long long session_idle_seconds; /* --session: the supervisor ends after this idle */
	/* The egress proxy's (issue 33), unset: the defaults below. */
	long long connections;		     /* open at once, per run */
	long long wildcard_names;	     /* distinct names resolved under a wildcard rule */
	long long wildcard_names_per_minute; /* the same, in any one minute */
};

/* limits.connections when unset: far above what a build keeps open (npm and pip open
 * 16-50 sockets at a peak, cargo and go fewer), far below the proxy's old 4,096 and
 * what its socket buffers would hold at that count (README, Limits). */
#define POLICY_CONNECTIONS_DEFAULT 256
/* limits.wildcardNames / wildcardNamesPerMinute when unset: a build resolves a handful
 * of exact hosts (npm ci: registry.npmjs.org; pip: pypi.org, files.pythonhosted.org;
 * go mod download: proxy.golang.org, sum.golang.org), and under a wildcard a few CDN
 * or bucket names; hundreds of distinct names under one is data, not a build. */
#define POLICY_WILDCARD_NAMES_DEFAULT		 256
#define POLICY_WILDCARD_NAMES_PER_MINUTE_DEFAULT 64

struct policy_cidr {
	int family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	unsigned prefix;
};

struct policy_index; /* Decide()'s hash tables, built by policy_finalize() */

/* egress.credentials[i]: a header the proxy sets on every request to `host` (exact, or
 * "*.x" for subdomains only) through a TLS tunnel it terminates. `value` is the
 * template as written: "${NAME}" is the caller's environment variable NAME, read at
 * launch (policy_credential_expand); the expanded value lives only in the supervisor. */
struct policy_credential {
	char *host;
	char *header;
	char *value;
};

/* egress.requestRules[i]: for a host with rules every request must match one rule:
 * its method one of `methods` (absent: any) and its path one of `paths` (absent: any;
 * '*' stands for any run of bytes, '/' included). */
struct policy_request_rule {
	char *host;
	struct policy_list methods;
	struct policy_list paths;
};

/* The validated, immutable policy. Fields mirror the schema; the "derived" ones are
 * filled by policy_finalize() and are what the launchers and the proxy use. */
struct halo_policy {
	enum policy_mode mode;
	struct policy_list writable_roots;
	struct policy_list protected_paths; /* added to the credential floor (floor.c) */
	struct policy_list allow_read;	    /* carve-outs from protected paths (a loosening) */
	int fail_if_unavailable;	    /* -1 unset (means true), 0, 1 */
	int guard_persistence;		    /* -1 unset (means true), 0, 1 */
	enum policy_caches caches;
	struct policy_list unix_sockets; /* host unix sockets left reachable (a loosening) */
	/* sandbox.macos.allowTrustd: the Seatbelt profile lets the command ask trustd and
	 * ocspd to evaluate certificates. They run outside the sandbox and fetch the URLs
	 * a certificate names (intermediates, OCSP, CRLs) past the proxy: an egress path
	 * Decide() never sees. -1 unset (means false), 0, 1; a loosening, warned. */
	int macos_allow_trustd;

	enum policy_egress_default egress_default;
	struct policy_list allowed_domains;
	struct policy_list presets;
	struct policy_list denied_domains;
	struct policy_list allow_private; /* CIDR text */
	struct policy_ports host_ports;	  /* egress.hostPorts, 1..65535, in file order */
	struct policy_list trusted_cas;	  /* egress.trustedCAs: PEM files, extra origin roots */
	struct policy_credential *creds;  /* egress.credentials */
	size_t n_creds;
	bool creds_set;
	struct policy_request_rule *req_rules; /* egress.requestRules */
	size_t n_req_rules;
	bool req_rules_set;
	char *gateway;
	char *upstream_proxy; /* egress.upstreamProxy: "env" or http://host:port; NULL unset */

	struct policy_limits limits;
	struct policy_list env_pass;
	struct policy_kv *env_set;
	size_t n_env_set;
	bool env_set_set;

	char *legacy_permissions_sandbox; /* permissions.sandbox as written, or NULL */

	/* derived */
	bool egress_default_allow;	    /* the effective default once unset is resolved */
	struct policy_list writable_abs;    /* writable roots, ~ expanded, absolute */
	struct policy_list protected_abs;   /* absolute protected paths, in every home form */
	struct policy_list protected_globs; /* relative patterns such as ".env*" */
	struct policy_list allow_read_abs;  /* allowRead, in every home form */
	/* Floor files shown inside as a sanitized copy (not carved out, not protected by
	 * the policy itself), every home form; sanitize_kind[i] says the format. */
	struct policy_list sanitize_abs;
	unsigned char *sanitize_kind;	     /* enum policy_sanitizer, parallel to sanitize_abs */
	struct policy_list unix_sockets_abs; /* unixSockets, ~ expanded, in every home form */
	struct policy_cidr *cidrs;	     /* allow_private parsed */
	size_t n_cidrs;
	struct policy_index *index;
	char *source; /* where it came from: file list, "embedded default", ... */
};

/* What the pure layer needs to know about the world, supplied by runner/. */
/* One-off flags of a launch (--allow HOST[:PORT], --writable DIR, --env NAME[=VALUE],
 * --host-port PORT), each repeatable, and --mode MODE: a last layer over every file
 * that adds to the lists below it (and sets sandbox.mode), reported as a loosening
 * and validated like a file (oneoff.c). */
struct policy_oneoff {
	const char *const *allow;
	size_t n_allow;
	const char *const *writable; /* absolute or ~/ (the command line resolves ./) */
	size_t n_writable;
	const char *const *env; /* NAME: env.pass; NAME=VALUE: env.set */
	size_t n_env;
	const char *const *host_ports;
	size_t n_host_ports;
	const char *mode; /* sandbox.mode's name, or NULL */
};

struct policy_ctx {
	const char *pw_home;   /* home from the password database; required */
	const char *env_home;  /* $HOME, may be NULL or equal to pw_home */
	const char *workspace; /* absolute; may be NULL when irrelevant (check, validate) */
	/* Optional window onto the file system (NULL: not checked): is `path` itself a
	 * symlink? If so, its target in `target`. A writable root that is one is refused. */
	bool (*is_symlink)(const char *path, char *target, size_t n);
	/* Optional too: `path` with every symlink on the way followed (a missing tail kept
	 * as written) into `out`; 0 or -errno. A writable root that resolves elsewhere is
	 * judged there as well: /tmp/link/.config with link -> ~ is ~/.config. */
	int (*resolve)(const char *path, char *out, size_t n);
};

/* Diagnostics collected while loading and validating: every error, one a line. */
#define POLICY_DIAGS_MAX 100
struct policy_diags {
	char **errors;
	size_t n_errors;
	char **warnings;
	size_t n_warnings;
	/* Errors past POLICY_DIAGS_MAX, only counted: a hostile file's 100 000 errors
	 * make a bounded report (the first ones, and how many more). Warnings are all
	 * kept: one of them may be a loosening, which is always said. */
	size_t n_errors_more;
	/* Set by the loaders (policy_load*) for the time of a file's parse: a file whose
	 * fields have errors still yields what was read (the bad fields unset), so that
	 * it is layered and validated too and one run reports every error. */
	bool keep_partial;
};

void policy_diags_add_error(struct policy_diags *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void policy_diags_add_warning(struct policy_diags *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void policy_diags_free(struct policy_diags *d);

/* ---------------------------------------------------------------- loading */

/* Parse one file (JSON by content or .json, YAML otherwise) into a raw layer. Refuses
 * non-regular files, files over 1 MiB, and never blocks on a FIFO. Errors name the
 * file, the field path and, where known, the line. Returns 0, or -EINVAL with the
 * reasons in d. */
int policy_parse_file(const char *path, struct halo_policy **out, struct policy_diags *d);

/* Parse a buffer; `name` is used in messages. Format: 'j' JSON, 'y' YAML, 0 = guess. */
int policy_parse_buffer(const char *name, const char *buf, size_t len, char format,
			struct halo_policy **out, struct policy_diags *d);

/* The embedded default policy as a fresh raw layer. */
struct halo_policy *policy_embedded_default(void);
extern const char policy_embedded_default_yaml[];

/* Merge `upper` on top of `base` (in place) per DESIGN's layering rules; each loosening
 * is reported as a warning naming what was loosened. `upper_name` names the file. */
int policy_layer(struct halo_policy *base, const struct halo_policy *upper, const char *upper_name,
		 struct policy_diags *d);

/* Validate every rule of DESIGN.md (all errors collected), then derive the expanded
 * paths, CIDRs and Decide index. Returns 0 or -EINVAL. */
int policy_finalize(struct halo_policy *p, const struct policy_ctx *ctx, struct policy_diags *d);

/* Load, layer and finalize `n` files in order (n == 0: the embedded default). */
int policy_load(const char *const *paths, size_t n, const struct policy_ctx *ctx,
		struct halo_policy **out, struct policy_diags *d);

void policy_free(struct halo_policy *p);

/* The managed layer (policy/managed.c): an administrator's file, read by the runner
 * (which decides whether it can be trusted) and handed in as text. */
struct policy_managed {
	const char *name; /* its path, for messages and the policy's source */
	const char *buf;
	size_t len;
	char format; /* 'j', 'y', or 0 to guess */
};

/* Like policy_load, with `m` (NULL: none) as the first layer, alone when n == 0: the
 * files are layered on top and, together, may only tighten what `m` sets; a loosening
 * of one of its fields is an error naming the file and the field (-EINVAL). */
int policy_load_managed(const struct policy_managed *m, const char *const *paths, size_t n,
			const struct policy_ctx *ctx, struct halo_policy **out,
			struct policy_diags *d);
/* The same with one-off flags (NULL: none) as the last layer, over every file;
 * refused when `m` is given (policy/oneoff.c). */
int policy_load_with(const struct policy_managed *m, const char *const *paths, size_t n,
		     const struct policy_ctx *ctx, const struct policy_oneoff *oneoff,
		     struct halo_policy **out, struct policy_diags *d);

/* Render the effective policy (presets expanded) as JSON text; caller frees. */
char *policy_to_json(const struct halo_policy *p);
/* The same walk as compact JSON written without libcjson (a session call's identity
 * compares it); caller frees. */
char *policy_to_text(const struct halo_policy *p);

/* ---------------------------------------------------------------- credential floor */

enum policy_floor_kind {
	POLICY_FLOOR_SECRET, /* keys, tokens, keyrings: never carved out (but `carve`) */
	POLICY_FLOOR_MIXED,  /* settings and secrets: carve-outs allowed, as a loosening */
};

enum policy_sanitizer {
	POLICY_SANITIZE_NONE = 0, /* masked entirely */
	POLICY_SANITIZE_NPMRC,	  /* shown with every secret entry removed */
};

/* One protected path every policy has (its first layer). */
struct policy_floor_entry {
	const char *path; /* ~/..., or a relative name pattern */
	enum policy_floor_kind kind;
	enum policy_sanitizer sanitizer;
	const char *const *carve; /* SECRET: names inside that allowRead may open; NULL-ended */
	const char *reason;
};

const struct policy_floor_entry *policy_floor(size_t *n);
const char *policy_floor_kind_name(enum policy_floor_kind k);
const char *policy_sanitizer_name(enum policy_sanitizer s);
/* Is the absolute `abs` within one of f's carve names below `entry_abs` (f expanded)? */
bool policy_floor_carve_ok(const struct policy_floor_entry *f, const char *entry_abs,
			   const char *abs);

/* A sanitized copy of a mixed settings file: every entry that is or may hold a
 * secret removed, every line that cannot be understood removed (fail closed).
 * Pure. Returns 0 with a malloc'd *out (NUL-terminated, *outlen bytes), or -EINVAL
 * (binary input, too large: show nothing), -ENOMEM. */
#define POLICY_SANITIZE_MAX (1024 * 1024)
int policy_sanitize(enum policy_sanitizer kind, const char *in, size_t len, char **out,
		    size_t *outlen);

/* Does v (n bytes) look like it holds a secret: a known token prefix (ghp_, xoxb-,
 * AKIA...), a JWT, a PEM key or a high-entropy run (the rule is in secret.c)? On true,
 * *what (may be NULL) names the shape, never the value. The one table of token
 * shapes: the environment and the sanitized settings files both use it. */
bool policy_secret_like(const char *v, size_t n, const char **what);

/* ---------------------------------------------------------------- system facts */

/* The system directories (policy/sysdirs.c, their one home): trees nothing inside of
 * which is ever writable, and directories never writable as a whole (a subdirectory of
 * their own is fine). Validation, the workspace check and the Linux scan use them. */
const char *const *policy_system_trees(size_t *n);
const char *const *policy_system_dirs(size_t *n);
/* Is `path` the root, a system tree or a system directory itself (case-insensitive)? */
bool policy_is_system_dir(const char *path);
/* The system tree `path` is or lies within (case-insensitive), or NULL. */
const char *policy_system_tree_of(const char *path);
/* The same for the operating system's own trees only (/etc, /usr, /bin, /sbin, /lib*,
 * /boot, /dev, /proc, /sys): nothing that resolves inside them is bound writable,
 * whoever asks for it. The Linux scan checks resolved writable roots and tool caches
 * with it (a home, and so its caches, may lie in /var/lib: jenkins). */
const char *policy_os_tree_of(const char *path);
/* A workspace the launcher refuses to make writable: "/", "/var" or an operating
 * system tree (/etc, /usr ...) or anything inside one. The hook's file tools judge the event's cwd
 * by it too: a harness run from / gets no writable workspace from the hook either. */
bool policy_workspace_refused(const char *ws);

/* The persistence guard's names (policy/guard.c, their one home): dot files and
 * directories that run code later, kept read-only by linux/ and macos/. */
const char *const *policy_guard_names(size_t *n);
bool policy_guard_name(const char *name); /* exactly one of them (the case rule) */

/* The home persistence set (policy/homeset.c, its table in policy/homeset_table.c):
 * what in a home runs code later on the host (shell start-up and logout files, git's
 * two global configs, PATH directories, user services and autostart, editor start-up
 * files, tool configs that name programs, and the guard names above). When a writable
 * tree is the home or holds it, these stay read-only and cannot be created. Each entry
 * says why. */
struct policy_home_entry {
	const char *rel; /* relative to the home, no leading "/" */
	const char *why;
};
const struct policy_home_entry *policy_home_set(size_t *n); /* the fixed table */
/* The levels below an entry of the set that is a directory whose symlinks are
 * followed (what they lead to is the entry's): 1, or 3 under .config/. */
int policy_home_links_depth(const char *rel);
/* ... at most this many entries below each directory, and in all at one launch (or
 * hook event): the sandbox's walk and the hook's share the bounds. */
#define POLICY_LINKS_EACH  1024
#define POLICY_LINKS_TOTAL 16384
/* The host's own tool caches: entries of the set but under caches: host. */
const struct policy_home_entry *policy_home_caches(size_t *n);
/* The stores whose files are hard links by design (uv, pnpm, bun): not refused for
 * having other names (linux/scan_pin.c), said in docs instead. */
const char *const *policy_home_linked_stores(size_t *n);
/* Is rel one of them (policy_home_caches)? */
bool policy_home_cache_entry(const char *rel);
/* Every entry for `home`: the table, the guard names, then each directory of path_env
 * (the caller's PATH, may be NULL) that lies beneath the home; fn gets it relative to
 * the home. Stops at fn's first non-zero return and returns it; else 0. */
int policy_home_set_each(const char *home, const char *path_env,
			 int (*fn)(const char *rel, const char *why, void *arg), void *arg);
/* The reason `abs` (absolute, lexically clean) is at or beneath an entry of home's
 * set (a prefix row's name included), or NULL; *entry (may be NULL) gets abs relative to the home.
 */
const char *policy_home_set_hit(const char *home, const char *path_env, const char *abs,
				const char **entry);
/* The caller's $XDG_CONFIG_HOME and $XDG_DATA_HOME (each may be NULL), its
 * $XDG_CONFIG_DIRS and $XDG_DATA_DIRS (colon lists, may be NULL), and where its
 * $ZDOTDIR may be (zsh's start-up files are read there instead of in the home): the
 * environment's and what the zshenv files assign, a colon list, may be NULL. */
/* caches: host: the host's own tool caches are bound writable (env/caches.c). */
static inline bool policy_caches_host(const struct halo_policy *p)
{
	return p && p->caches == POLICY_CACHES_HOST;
}

struct policy_xdg {
	const char *config, *data;
	const char *config_dirs, *data_dirs;
	const char *zdotdir; /* a colon list: every place zsh may have it (opts/zdotdir.c) */
	bool host_caches;    /* caches: host: the host's tool caches are not in the set */
};
/* The same, with the caller's XDG directories (xdg may be NULL): where one lies beneath
 * the home, each ~/.config (~/.local/share) entry is also an entry there. */
int policy_home_set_each_xdg(const char *home, const char *path_env, const struct policy_xdg *xdg,
			     int (*fn)(const char *rel, const char *why, void *arg), void *arg);
const char *policy_home_set_hit_xdg(const char *home, const char *path_env,
				    const struct policy_xdg *xdg, const char *abs,
				    const char **entry);
/* An XDG directory beneath no home (XDG_CONFIG_HOME=/data/cfg): each ~/.config
 * (~/.local/share) entry of the set is an entry there too; fn gets each relative to
 * "/". A directory with a ".." is skipped: its caller judges it as it resolves. */
int policy_home_set_each_xdg_outside(const char *const *homes, size_t n_homes,
				     const struct policy_xdg *xdg,
				     int (*fn)(const char *rel, const char *why, void *arg),
				     void *arg);
/* The reason `abs` is at or beneath such an entry, or NULL. */
const char *policy_home_set_hit_xdg_outside(const char *const *homes, size_t n_homes,
					    const struct policy_xdg *xdg, const char *abs);
/* Names kept by their start (review: oh-my-zsh's compinit dump is
 * .zcompdump-HOST-VERSION, powerlevel10k's instant prompt ~/.cache/p10k-instant-
 * prompt-USER.zsh): in `dir` (relative to the home, "" for the home itself), every name
 * that starts with `prefix` is an entry of the set, read-only where it exists, and no
 * such name can be made there. A row of the home ("" dir) whose prefix starts with
 * ".z" is one in each $ZDOTDIR too, as the table's zsh entries are. */
struct policy_home_prefix {
	const char *dir;
	const char *prefix;
	const char *why;
};
const struct policy_home_prefix *policy_home_prefixes(size_t *n); /* the fixed table */
/* The one predicate: does the name (one component, or a path whose first component is
 * judged) start with prefix? ASCII case folded everywhere, the hook's judgment too:
 * the broker folds, and on a case-folding directory .ZCOMPDUMP-X is the same file. */
bool policy_home_prefix_name(const char *name, const char *prefix);
/* Each row for `home`: the table's, then in each $ZDOTDIR beneath the home; fn gets
 * the directory relative to the home. Stops at fn's first non-zero return. */
typedef int (*policy_home_prefix_fn)(const char *dir, const char *prefix, const char *why,
				     void *arg);
int policy_home_prefix_each_xdg(const char *home, const struct policy_xdg *xdg,
				policy_home_prefix_fn fn, void *arg);
/* ... in each $ZDOTDIR beneath no home: dir relative to "/". */
int policy_home_prefix_each_xdg_outside(const char *const *homes, size_t n_homes,
					const struct policy_xdg *xdg, policy_home_prefix_fn fn,
					void *arg);
/* Every $ZDOTDIR a zshenv file's text assigns (policy/zshenv.c), each absolute once
 * ~, $HOME, $XDG_CONFIG_HOME and $ZDOTDIR (env: the values before it; NULL when
 * unset) are expanded, into out as a colon list, each once: how many, 0 when none, or
 * -ENAMETOOLONG (out empty) when they do not fit. *unknown is set when one cannot be
 * told (another variable, a command substitution, relative). */
struct policy_zshenv_env {
	const char *home, *xdg_config, *zdotdir;
};
int policy_zshenv_zdotdirs(const char *text, size_t len, const struct policy_zshenv_env *env,
			   char *out, size_t n, bool *unknown);
/* The reason a hit function gives when an XDG directory makes an entry longer than
 * PATH_MAX: nothing beneath the home (or it) is judged writable then. The each
 * functions return -ENAMETOOLONG for it. */
#define POLICY_HOME_SET_TOO_LONG                                                                   \
	"an XDG directory makes its entries longer than PATH_MAX: they cannot be judged"
/* Is `home` the tree or beneath it (the home set then applies to that tree)? */
bool policy_home_in_tree(const char *home, const char *tree);

/* ---------------------------------------------------------------- discovery */

/* Where to look when no --policy is given: $HALO_POLICY, /etc/halo/policy.{yaml,json},
 * ~/.config/halo/policy.{yaml,json}, else the embedded default. `exists` is the only
 * window onto the file system (injected so the logic stays pure and testable). A
 * candidate inside the workspace is skipped with a warning: a repository must not
 * loosen its own sandbox. Writes the chosen path into out (empty = embedded). */
struct policy_discover_in {
	const char *env_halo_policy;
	const char *home; /* pw home */
	const char *workspace;
	bool (*exists)(const char *path);
};
int policy_discover(const struct policy_discover_in *in, char *out, size_t outlen,
		    struct policy_diags *d);

/* ---------------------------------------------------------------- presets */

struct policy_preset_entry {
	const char *pattern;
	const char *source; /* why it is there */
};

struct policy_preset {
	const char *name;
	const struct policy_preset_entry *entries;
	size_t n;
};

const struct policy_preset *policy_preset_find(const char *name);
const struct policy_preset *policy_presets(size_t *n);

/* The rest of the public header, one sub-topic each (each includes this one). */
#include "policy/policy_hosts.h"
#include "policy/policy_path.h"
#include "policy/policy_egress.h"
#include "policy/policy_harness.h"

#endif
