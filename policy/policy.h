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
 * tools at these ports (runner/env.c), hostPorts may not take them (validate.c), and
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
 * --host-port PORT), each repeatable: a last layer over every file that adds to the
 * lists below it, reported as a loosening and validated like a file (oneoff.c). */
struct policy_oneoff {
	const char *const *allow;
	size_t n_allow;
	const char *const *writable; /* absolute or ~/ (the command line resolves ./) */
	size_t n_writable;
	const char *const *env; /* NAME: env.pass; NAME=VALUE: env.set */
	size_t n_env;
	const char *const *host_ports;
	size_t n_host_ports;
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

/* The home persistence set (policy/homeset.c, its one home): what in a home runs code
 * later on the host (shell start-up and logout files, git's two global configs, PATH
 * directories, user services and autostart, editor start-up files, tool configs that
 * name programs, and the guard names above). When a writable tree is the home or holds
 * it, these stay read-only and cannot be created. Each entry says why. */
struct policy_home_entry {
	const char *rel; /* relative to the home, no leading "/" */
	const char *why;
};
const struct policy_home_entry *policy_home_set(size_t *n); /* the fixed table */
/* Every entry for `home`: the table, the guard names, then each directory of path_env
 * (the caller's PATH, may be NULL) that lies beneath the home; fn gets it relative to
 * the home. Stops at fn's first non-zero return and returns it; else 0. */
int policy_home_set_each(const char *home, const char *path_env,
			 int (*fn)(const char *rel, const char *why, void *arg), void *arg);
/* The reason `abs` (absolute, lexically clean) is at or beneath an entry of home's
 * set, or NULL; *entry (may be NULL) gets abs relative to the home. */
const char *policy_home_set_hit(const char *home, const char *path_env, const char *abs,
				const char **entry);
/* The caller's $XDG_CONFIG_HOME and $XDG_DATA_HOME (each may be NULL). */
struct policy_xdg {
	const char *config, *data;
};
/* The same, with the caller's XDG directories (xdg may be NULL): where one lies beneath
 * the home, each ~/.config (~/.local/share) entry is also an entry there. */
int policy_home_set_each_xdg(const char *home, const char *path_env, const struct policy_xdg *xdg,
			     int (*fn)(const char *rel, const char *why, void *arg), void *arg);
const char *policy_home_set_hit_xdg(const char *home, const char *path_env,
				    const struct policy_xdg *xdg, const char *abs,
				    const char **entry);
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

/* ---------------------------------------------------------------- hosts */

enum policy_host_kind {
	POLICY_HOST_NAME,
	POLICY_HOST_IPV4,
	POLICY_HOST_IPV6,
};

struct policy_host {
	enum policy_host_kind kind;
	char text[POLICY_HOST_MAX + 1]; /* canonical: lower case, no trailing dot, v6 without [] */
	uint8_t addr[16];		/* for IP literals: 4 or 16 bytes, network order */
};

/* Strict host grammar of DESIGN.md. `in` is exactly `len` bytes (may contain NUL,
 * which is refused). IPv6 must come bracketed ("[::1]") unless allow_bare_v6.
 * Returns 0 or -EINVAL with the reason in why. */
int policy_host_parse(const char *in, size_t len, bool allow_bare_v6, struct policy_host *out,
		      char *why, size_t whylen);

/* A target for `halo-run check`: host, host:port, [v6]:port, or a URL whose authority is
 * parsed strictly (userinfo is dropped: https://a.com@b.com/ targets b.com). port is 0
 * when none was given. */
int policy_target_parse(const char *target, struct policy_host *host, unsigned *port, char *why,
			size_t whylen);

/* Is `pattern` a valid domain-list entry (lower case, no URL or bare star, optional
 * leading "*.", optional ":PORT": host:port, *.x:port, [v6]:port)? 0 or -EINVAL with why. */
int policy_pattern_check(const char *pattern, char *why, size_t whylen);

/* The port of a domain-list entry: *host_len is the length of what precedes ":PORT"
 * (the whole entry when there is none), *port 0 when there is none. A bare IPv6 literal
 * ("::1:80") has no port: a port after an IPv6 address needs brackets. 0 or -EINVAL. */
int policy_pattern_split(const char *pattern, size_t *host_len, unsigned *port, char *why,
			 size_t whylen);

/* The one "*.x" rule (pattern.c), for every reader of a host entry: Decide()'s index,
 * credentials and request rules, the renderings, the names with fixed addresses. An
 * entry without "*." matches the identical host; "*.x" matches the names strictly
 * below x (a.x, a.b.x), never x itself. Both sides canonical (lower case, no trailing
 * dot), without a port; NULL matches nothing. An IP literal never matches a wildcard:
 * a wildcard's suffix is a name (policy_pattern_check), whose last label is never all
 * digits, while an IPv4 literal's (and a v4-in-v6 form's) is. */
bool policy_host_match(const char *pattern, const char *host);
/* The suffix of a wildcard entry ("*.x" -> "x"), or NULL for any other entry. */
const char *policy_pattern_wild(const char *pattern);
/* Is host (hl bytes) a name strictly below name (nl bytes): a label, a dot, then name? */
bool policy_name_under(const char *host, size_t hl, const char *name, size_t nl);

/* The one loopback-name rule (addr_names.c): the canonical names that mean this
 * machine's loopback wherever they are resolved: localhost and every name below it
 * (RFC 6761 6.3), localhost.localdomain, ip6-localhost, ip6-loopback ("localhost." is
 * "localhost" once canonical). No IP literal: those are classified by address. */
bool policy_loopback_name(const char *name);

/* A hex digit's value, or -1: the one copy for every parser of %XX escapes, \xHH
 * escapes and chunk sizes. */
static inline int policy_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* ---------------------------------------------------------------- addresses */

enum policy_addr_class {
	POLICY_ADDR_PUBLIC = 0,
	POLICY_ADDR_UNSPECIFIED,
	POLICY_ADDR_LOOPBACK,
	POLICY_ADDR_PRIVATE,
	POLICY_ADDR_LINK_LOCAL,
	POLICY_ADDR_CGNAT,
	POLICY_ADDR_MULTICAST,
	POLICY_ADDR_BROADCAST,
	POLICY_ADDR_METADATA,
	POLICY_ADDR_DOCUMENTATION,
	POLICY_ADDR_BENCHMARK,
	POLICY_ADDR_RESERVED,
	POLICY_ADDR_UNIQUE_LOCAL,
	POLICY_ADDR_SITE_LOCAL,
	POLICY_ADDR_TRANSLATION, /* a v6 wrapper whose inner IPv4 cannot be trusted */
};

/* Classify an address, unwrapping IPv4-mapped, -compatible, NAT64, 6to4 and Teredo
 * forms to the IPv4 they carry. `addr` is 4 bytes (AF_INET) or 16 (AF_INET6). */
enum policy_addr_class policy_addr_classify(int family, const uint8_t *addr);
const char *policy_addr_class_name(enum policy_addr_class c);

int policy_cidr_parse(const char *text, struct policy_cidr *out, char *why, size_t whylen);
bool policy_cidr_match(const struct policy_cidr *c, int family, const uint8_t *addr);

/* The proxy's question after resolution: may we connect to this address? True for a
 * public address, or a special one covered by allowPrivate. */
bool policy_addr_permitted(const struct halo_policy *p, int family, const uint8_t *addr,
			   enum policy_addr_class *cls);

/* Would the address rule refuse every connection to this domain-list entry ("host",
 * "host:port", "*.x", an IP literal)? True for an IP literal policy_addr_permitted()
 * refuses, and for a name whose addresses are fixed (localhost and every name under
 * it, localhost.localdomain, ip6-localhost, the cloud metadata names) when none of
 * them is permitted; *cls (may be NULL) then says why. False for any other name: its
 * addresses are known only after resolution. */
bool policy_entry_address_refused(const struct halo_policy *p, const char *entry,
				  enum policy_addr_class *cls);
/* The names with fixed addresses that the wildcard entry "*.x" (or "*.x:port") covers
 * and the address rule refuses (*.google.internal covers metadata.google.internal),
 * one per call: *iter starts at 0; NULL when none is left. A rendering keeps the
 * wildcard and denies each of them, so that no harness allows what halo-run refuses. */
const char *policy_wildcard_refused_name(const struct halo_policy *p, const char *entry,
					 size_t *iter);

/* ---------------------------------------------------------------- Decide */

enum policy_rule {
	POLICY_RULE_DEFAULT,
	POLICY_RULE_DENIED,  /* deniedDomains[index] */
	POLICY_RULE_ALLOWED, /* allowedDomains[index] */
	POLICY_RULE_PRESET,  /* presets[index], entry pattern */
	POLICY_RULE_INVALID_HOST,
	POLICY_RULE_MODE_OFF, /* sandbox.mode off: no egress control */
	/* Never set by Decide(): the proxy's mark for an answer of the harness's decider
	 * (--decider), asked only when policy_decision_unmatched(). */
	POLICY_RULE_DECIDER,
	/* Never set by Decide(): `halo-run learn`'s mark for a host the default denied,
	 * allowed and recorded instead (policy_decision_learn). */
	POLICY_RULE_LEARNED,
};

struct policy_decision {
	bool allow;
	enum policy_rule rule;
	size_t index;
	const char *pattern;	 /* matching entry (points into the policy) */
	const char *preset;	 /* preset name for POLICY_RULE_PRESET */
	struct policy_host host; /* the parsed host (valid unless RULE_INVALID_HOST) */
	char why[128];		 /* for RULE_INVALID_HOST */
};

/* The one decision function: a deny rule wins, then the allowlist (allowedDomains,
 * presets), then the default. The gateway is not allowed implicitly: validation
 * insists that a restricted policy allows it. Cost independent of the number of rules. */
int policy_decide(const struct halo_policy *p, const char *host, size_t len,
		  struct policy_decision *d);

/* The same for host:port. An entry without a port matches every port; one with a port
 * only that port. port 0 (not known) matches only entries without a port. */
int policy_decide_port(const struct halo_policy *p, const char *host, size_t len, unsigned port,
		       struct policy_decision *d);

/* The distinct ports named by allow entries (allowedDomains, then the presets), at
 * most max of them (POLICY_MAX_NAMED_PORTS is plenty: ports are few). */
#define POLICY_MAX_NAMED_PORTS 256
size_t policy_allowed_ports(const struct halo_policy *p, unsigned *out, size_t max);

/* Could Decide() allow host on some port? The decision without a port when it
 * allows (or the host is invalid), else the first allowing one on a port an allow
 * entry names, else the portless denial. Same return as policy_decide_port. */
int policy_decide_some_port(const struct halo_policy *p, const char *host, size_t len,
			    struct policy_decision *d);

/* Is `path` `dir` or beneath it, compared case-insensitively, as validation compares
 * writable roots with protected paths (a case-insensitive volume has one file there).
 * Only for that overlap rule: a concrete path is judged with policy_path_beneath. */
bool policy_path_within(const char *path, const char *dir);

/* ---------------------------------------------------------------- path facts */

/* policy/pathfacts.c, policy/gitdir.c: the one home of what every consumer (plan, scan,
 * broker, hook, SBPL rendering, verify) knows about a concrete path. The case rule:
 * names compare exactly where the file system is case-sensitive (Linux, always), and
 * ASCII-folded on macOS builds. */
#ifdef __APPLE__
#define POLICY_PATH_FOLD 1
#else
#define POLICY_PATH_FOLD 0
#endif
bool policy_name_eq(const char *a, const char *b);
bool policy_name_eqn(const char *a, const char *b, size_t n);
/* Does a name hold a character that Unicode case folding makes ASCII (U+017F long s
 * folds to s, U+212A Kelvin to k)? Where names fold (APFS), ~/.\u017Fsh is ~/.ssh to
 * the file system but not to a byte compare: the hook refuses such names there. */
bool policy_name_folds_to_ascii(const char *s);
/* Is `path` `dir` or beneath it (both absolute and lexically clean)? */
bool policy_path_beneath(const char *path, const char *dir);
/* Remove . and .. lexically from an absolute path (resolve_dotdot false: a .. is an
 * error). 0, or -EINVAL / -ENAMETOOLONG with *why. */
int policy_path_normalise(const char *in, bool resolve_dotdot, char *out, size_t n,
			  const char **why);
/* `in` made absolute (relative to cwd, ~ and ~/ to home) and lexically clean. 0,
 * -EINVAL (empty, or no cwd/home to join) or -ENAMETOOLONG. */
int policy_path_absolute(const char *in, const char *cwd, const char *home, char *out, size_t n);
/* The same joined but NOT cleaned: ".." stays for policy_path_resolve, since after a
 * symlink it means the target's parent, not the link's directory. */
int policy_path_join(const char *in, const char *cwd, const char *home, char *out, size_t n);
/* What a name is, asked of the caller (lstat, readlink): 1 a symlink with its target
 * in buf, 0 anything else that exists, -ENOENT/-ENOTDIR missing, other -errno. */
typedef int (*policy_link_fn)(void *ctx, const char *abs, char *buf, size_t n);
/* The kernel's walk of an absolute path: "." dropped, ".." the parent of what has been
 * resolved so far, every symlink followed (the last one too, dangling or not: a
 * write through a dangling link creates its target), missing names kept as written
 * (a tool makes them). 0, -ELOOP (over 40 links), -ENAMETOOLONG, or link()'s error. */
int policy_path_resolve(const char *in, policy_link_fn link, void *ctx, char *out, size_t n);
/* Beneath a directory the sandbox gets fresh (/tmp, /run, /var/run, /dev)? */
bool policy_path_in_fresh(const char *path);
/* Where a host path is out of the sandbox's sight for reading too, the fresh
 * directory that hides it ("/proc" for a host process's entries: its own pid
 * namespace), or NULL: the scratch directories and the devices every sandbox has
 * (/dev/null, /dev/urandom ...) are not. */
const char *policy_path_host_only(const char *path);
/* The scratch directories every mode may write (/tmp, /dev/shm), and the one `path`
 * lies beneath, or NULL. */
const char *const *policy_scratch_dirs(size_t *n);
const char *policy_path_scratch(const char *path);
/* Protected globs (".env*", "secrets/x.pem", "keys/" as written; a leading "./" or
 * "**" + "/" dropped, a trailing "/" dropped: the length, or 0 when nothing is left
 * or it does not fit), a name glob (no '/') against a name, a path glob against
 * every tail; matched case-insensitively (matching more is the safe side). */
size_t policy_glob_normalise(const char *g, char *out, size_t n);
bool policy_glob_is_path(const char *g);
bool policy_glob_fnmatch(const char *g, const char *text);
/* A normalised glob against every component (name glob) or tail (path glob). */
bool policy_glob_match_path(const char *g, const char *path);
/* The policy's protected glob that `abs` matches, as written, or NULL. */
const char *policy_protected_glob_hit(const struct halo_policy *p, const char *abs);
/* The floor entry whose expansion under one of homes is entry_abs, or NULL. */
const struct policy_floor_entry *policy_floor_entry_of(const char *entry_abs,
						       const char *const *homes, size_t n_homes);

/* Git directories (policy/gitdir.c): told by what they hold. */
enum {
	POLICY_GIT_HEAD = 1,
	POLICY_GIT_OBJECTS = 2,
	POLICY_GIT_REFS = 4,
	POLICY_GIT_COMMONDIR = 8,
};
unsigned policy_git_entry(const char *name);	    /* the flag of a name, or 0 */
bool policy_git_entries_make_gitdir(unsigned held); /* HEAD+commondir or objects+refs */
/* The entries a directory holds, asked name by name through holds(ctx, name). */
unsigned policy_git_entries_held(bool (*holds)(void *ctx, const char *name), void *ctx);
bool policy_gitdir_holds(bool (*holds)(void *ctx, const char *name), void *ctx);
/* Is name[0..len) ".git" (a directory so named is a git directory whatever it holds)? */
bool policy_git_dot_name(const char *name, size_t len);
/* The names in a git directory that run code later; hooks guards its whole subtree. */
struct policy_git_guard {
	const char *name;
	bool subtree;
};
const struct policy_git_guard *policy_git_guards(size_t *n);
const struct policy_git_guard *policy_git_guard_of(const char *name);
/* Is `rel` (relative to a git directory) guarded: a guard name, or one in a
 * submodule's or linked work tree's git directory (modules/NAME/..., worktrees/NAME/)? */
bool policy_git_guard_rel(const char *rel);
/* The first ".git/<guarded>" in an absolute path (by name), or NULL. */
const char *policy_git_guard_in_dotgit(const char *path);
/* What a git config names that runs code or is read as config, as git's grammar
 * reads it (a key on the section's line, quotes, escapes, comments, "\\" + newline
 * continuing a value), matching more where it is loose: a section is told by its
 * name alone ([core "x"] counts as core). cb(ctx, kind, value) for core.hooksPath
 * (POLICY_GITREF_HOOKS, relative to the work tree), core.worktree and include.path /
 * includeIf.*.path (relative to the config's directory). */
enum { POLICY_GITREF_HOOKS = 1, POLICY_GITREF_WORKTREE, POLICY_GITREF_INCLUDE };
typedef void (*policy_gitref_fn)(void *ctx, int kind, const char *value);
void policy_git_config_refs(const char *buf, size_t n, policy_gitref_fn cb, void *ctx);
/* Hook managers (policy/hookmgr.c): a hook whose text holds a manager's marker runs
 * what the manager's files in the work tree say; they are guarded like hooks. */
struct policy_hook_manager {
	const char *name, *marker;
	const char *const *files; /* relative to the work tree; a directory: all of it */
};
const char *const *policy_git_hook_names(void); /* NULL-terminated, githooks(5) */
const struct policy_hook_manager *policy_hook_manager_of(const char *text, size_t len);
/* pre-commit's --config=FILE in a shim, as written (relative to the work tree, or
 * absolute): its length. */
size_t policy_hook_manager_config(const char *text, size_t len, char *out, size_t n);
/* Is `rel` (relative to a work tree) any manager's file, or beneath one? */
bool policy_hook_manager_file(const char *rel);
/* A hooksPath ending in "/_" (husky 9): its hooks run the scripts in its parent. */
bool policy_hooks_dir_sources_parent(const char *dir);

/* Is host:port (a parsed host) one of the sandbox's own loopback names with a port
 * listed in egress.hostPorts? Then the connection is relayed to the host's loopback
 * without Decide() or the address check: listing the port is the permission. Returns
 * the index in hostPorts, or -1. */
int policy_host_port_index(const struct halo_policy *p, const struct policy_host *h, unsigned port);

/* Did no rule of the policy match (the default decided)? Then, and only then, a
 * harness's decider may be asked (DESIGN.md's decision order: deny rule, allowlist,
 * decider, default). False for invalid hosts and mode off. */
bool policy_decision_unmatched(const struct policy_decision *d);

/* `halo-run learn`: a decision the default denied (no rule named the host, a valid
 * host, a policy that restricts egress) becomes an allow marked POLICY_RULE_LEARNED,
 * and true is returned; every other decision (a deny rule, an allow, an invalid host,
 * a decider's answer) is left as it is and false returned. The one place that says
 * what learning may widen: explicit denies stay denies. */
bool policy_decision_learn(struct policy_decision *d);

/* "deniedDomains[0] pastebin.com", "presets[1] vcs: *.github.com", "default deny",
 * "invalid host: <why>". */
void policy_decision_rule(const struct policy_decision *d, char *buf, size_t n);

/* ---------------------------------------------------------------- upstream proxy */

/* egress.upstreamProxy: after Decide() allows host:port, the proxy reaches it through
 * this HTTP proxy with CONNECT host:port (policy/upstream.c; proxy/upstream.c). */
#define POLICY_UPSTREAM_AUTH_MAX 512
#define POLICY_NO_PROXY_MAX	 2048
#define POLICY_UPSTREAM_AUTH_ENV "HALO_UPSTREAM_PROXY_AUTH" /* "user:password", never passed */

struct policy_upstream {
	bool on;		 /* false: every allowed host is dialled directly */
	struct policy_host host; /* the upstream proxy itself */
	unsigned port;
	char auth[POLICY_UPSTREAM_AUTH_MAX]; /* "user:password" for Basic; "" = none */
	char no_proxy[POLICY_NO_PROXY_MAX];  /* `env`: the caller's NO_PROXY, as given */
	const char *from;		     /* where the URL came from: "egress.upstreamProxy",
					      * "https_proxy", ... (static text) */
	const char *auth_from;		     /* where auth came from, or NULL */
};

/* http://HOST:PORT with an optional trailing "/": no other scheme, no path, query or
 * fragment, an explicit port (proxies agree on no default). `from_env`: the form the
 * caller's HTTPS_PROXY may take: the scheme may be left out, and userinfo is taken
 * (percent-decoded) into auth; in a policy file userinfo is refused. 0 or -EINVAL. */
int policy_upstream_parse(const char *url, bool from_env, struct policy_upstream *out, char *why,
			  size_t whylen);

/* The caller's environment at launch (any member may be NULL). */
struct policy_upstream_env {
	const char *https_proxy, *HTTPS_PROXY, *http_proxy, *HTTP_PROXY, *all_proxy, *ALL_PROXY;
	const char *no_proxy, *NO_PROXY;
	const char *auth; /* $HALO_UPSTREAM_PROXY_AUTH */
};

/* The upstream a run uses: off when the policy names none, or names `env` and the
 * caller has no proxy variable; else the policy's URL, or the caller's https_proxy,
 * HTTPS_PROXY, http_proxy, HTTP_PROXY, all_proxy, ALL_PROXY (first set, in that order;
 * ALL_PROXY last, as curl reads it) with NO_PROXY. A socks:// ALL_PROXY is refused.
 * Credentials: $HALO_UPSTREAM_PROXY_AUTH, else the userinfo of the caller's URL.
 * 0 or -EINVAL with why (naming the variable). */
int policy_upstream_resolve(const struct halo_policy *p, const struct policy_upstream_env *env,
			    struct policy_upstream *out, char *why, size_t whylen);

/* Is host:port to be dialled directly (the upstream's NO_PROXY names it)? Entries are
 * separated by commas or blanks: "*" (everything), a name (itself and its subdomains;
 * a leading "." or "*." means the same), an IP literal, each with an optional ":PORT". */
bool policy_upstream_bypass(const struct policy_upstream *u, const struct policy_host *h,
			    unsigned port);

/* An address as the runner's resolver or getifaddrs() gave it. */
struct policy_ipaddr {
	int family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];
};

/* The same address, IPv4-mapped and -compatible forms as the IPv4 they carry? */
bool policy_ipaddr_same(const struct policy_ipaddr *a, const struct policy_ipaddr *b);

/* Does a dial to `a` reach this host itself: a loopback or unspecified address (a
 * dial to 0.0.0.0 or :: lands on the host), or one of `own` (the host's interface
 * addresses, which the caller lists)? IPv4-mapped and -compatible forms compare as
 * the IPv4 they carry. Pure: the caller resolves and lists; this only compares. */
bool policy_addr_is_local(const struct policy_ipaddr *a, const struct policy_ipaddr *own,
			  size_t n_own);

/* Can a command reach the upstream through egress.hostPorts (relayed to the host's
 * loopback)? When one of the upstream's addresses is local and a hostPorts entry is
 * its port: that entry's index, and *local the address; else -1. */
int policy_upstream_host_port(const struct halo_policy *p, const struct policy_upstream *u,
			      const struct policy_ipaddr *addrs, size_t n_addrs,
			      const struct policy_ipaddr *own, size_t n_own, size_t *local);
/* ---------------------------------------------------------------- TLS-level rules
 * (policy/request.c): credentials and request rules, for the hosts whose TLS the proxy
 * terminates. Pure, like Decide(). */

/* Is this canonical host one whose TLS the proxy terminates (it has a credential or a
 * request rule)? Every other host keeps a plain (spliced) tunnel. */
bool policy_tls_terminated(const struct halo_policy *p, const char *host);
/* Does the policy terminate TLS for any host (then a per-run CA is made)? */
bool policy_tls_wanted(const struct halo_policy *p);

#define POLICY_REQ_RULE_MAX 320
struct policy_request_decision {
	bool applies; /* the host has request rules, or the request is judged anyway (a
		       * TRACE or TRACK to a host with a credential: always refused) */
	bool allow;
	size_t index;			/* requestRules[index] when allowed */
	char rule[POLICY_REQ_RULE_MAX]; /* "requestRules[0] api.github.com GET,HEAD /repos/acme/..."
					 * or "requestRules for api.github.com: no rule allows POST
					 * /gists" */
};

/* The one request decision, used by the proxy on every request of a terminated tunnel
 * (and of absolute-form forwarding) and by `halo-run check URL -X METHOD`. host is
 * canonical, method as sent, target the request-target as sent ("/path?query"). A path
 * that cannot be judged the way every origin reads it (dot segments, encoded dots,
 * slashes or backslashes, control bytes, not origin-form; after one decoding, a ';'
 * or a second layer of escapes of those) matches no rule. TRACE and TRACK to a host
 * with egress.credentials are refused, rules or not (the echo would carry the
 * credential). 0, or
 * -EINVAL (NULL arguments). */
int policy_decide_request(const struct halo_policy *p, const char *host, const char *method,
			  const char *target, struct policy_request_decision *d);
/* Is this request field name (not NUL-terminated) one that some origins take as the
 * method or the path instead of the request line's (X-HTTP-Method-Override,
 * X-Original-URL...)? A request carrying one to a host with request rules is denied,
 * and a credential may not set one. */
bool policy_request_override_field(const char *name, size_t len);

/* The credential for this canonical host (the first entry matching), or NULL. */
const struct policy_credential *policy_credential_for(const struct halo_policy *p, const char *host,
						      size_t *index);

/* Expand a credential template: "${NAME}" is lookup(arg, NAME) (names are
 * [A-Za-z_][A-Za-z0-9_]*; "$$" is a literal '$'). Returns 0 with the value in out,
 * -ENOENT when a variable is not set (why names it), -EINVAL for a malformed template or
 * a value holding CR, LF, NUL or another control byte, -ENOSPC. */
int policy_credential_expand(const char *tmpl, const char *(*lookup)(void *arg, const char *name),
			     void *arg, char *out, size_t n, char *why, size_t whylen);
/* The environment names a template references, one at a time: *pos starts at 0; false
 * at the end. */
bool policy_credential_next_var(const char *tmpl, size_t *pos, char *name, size_t n);

/* Build / free the hash index (called by policy_finalize). */
int policy_index_build(struct halo_policy *p);
void policy_index_free(struct policy_index *ix);

/* ---------------------------------------------------------------- harnesses (harness.c) */

/* The agent harnesses: names, aliases and what halo-run supports for each. The one
 * table every command that takes a harness name reads. */
enum policy_harness_id {
	POLICY_HARNESS_CLAUDE_CODE,
	POLICY_HARNESS_CODEX,
	POLICY_HARNESS_COPILOT,
	POLICY_HARNESS_GEMINI,
	POLICY_HARNESS_OPENCODE,
	POLICY_HARNESS_CURSOR,
	POLICY_HARNESS_SRT,
};
#define POLICY_HARNESS_RENDER 1u /* policy render, check --harness */
#define POLICY_HARNESS_HOOK   2u /* halo-run hook reads its pre-tool events */
#define POLICY_HARNESS_WRAP                                                                        \
	4u			      /* hook --wrap, render --hook: it takes a rewritten input    \
				       * without a decision that would widen its permissions */
#define POLICY_HARNESS_IMPORT	   8u /* policy import --from */
#define POLICY_HARNESS_MAX_ALIASES 2

struct policy_harness {
	enum policy_harness_id id;
	const char *name; /* the canonical name, "claude-code" */
	const char *aliases[POLICY_HARNESS_MAX_ALIASES];
	const char *title; /* "Claude Code" */
	unsigned supports; /* POLICY_HARNESS_* */
};

size_t policy_harness_count(void);
const struct policy_harness *policy_harness_at(size_t i); /* NULL past the end */
/* The harness called `name` (its name or an alias, exactly) when it supports every
 * POLICY_HARNESS_* bit of `need`; else NULL. */
const struct policy_harness *policy_harness_find(const char *name, unsigned need);
/* "claude-code, codex or gemini": the names of the harnesses supporting `need`, for
 * messages (truncated to n). Returns the length it wanted. */
size_t policy_harness_names(unsigned need, char *buf, size_t n);

#endif
