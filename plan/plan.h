/* plan/ — the sandbox plan: what one launch will enforce, as data. Built once from
 * the validated policy, the command line, the launcher's probes and the workspace
 * scan's findings; then linux/ executes its filesystem steps, macos/ renders it to
 * SBPL, runner/ prints it (--dry-run, --dry-run --json) and says its warnings.
 *
 * Pure: building a plan makes no system call (it reads only what it is given), so it
 * is unit tested without namespaces. Steps borrow their path strings from the inputs
 * (the scan's lists, the policy): a plan lives no longer than what it was built from.
 * Everything else (layers, limits, egress, gaps, warnings) is copied in. */
#ifndef HALO_PLAN_H
#define HALO_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"

/* ---------------------------------------------------------------- filesystem steps */

/* The reason of a guard or refused-creation step of a home's persistence set starts so,
 * followed by the entry's own reason (policy/homeset.c). */
#define PLAN_HOME_SET_REASON "home persistence set: "

/* The in-sandbox DNS stub's address (netns/netns.h NETNS_DNS_ADDR). */
#define PLAN_DNS_STUB "127.0.0.53"
/* OpenSSH's system-wide client configuration (PLAN_SSH_CONFIG). */
#define PLAN_SSH_CONFIG_PATH "/etc/ssh/ssh_config"

/* In execution order on Linux; plan_op_name() gives the JSON name. */
enum plan_op {
	PLAN_BIND_RO,	    /* a host tree read-only: the root, a read-only workspace */
	PLAN_BIND_RW,	    /* a writable tree: the workspace, a writable root */
	PLAN_CACHE_BIND,    /* tool caches: read-write like a writable root, never walked */
	PLAN_TMPFS,	    /* a fresh, private tmpfs (/tmp, /run) */
	PLAN_DEV,	    /* a minimal /dev */
	PLAN_NAMES,	    /* halo-run's own /etc/hosts, resolv.conf, nsswitch.conf (data) */
	PLAN_PROC,	    /* a fresh /proc, its sensitive entries masked */
	PLAN_PIN,	    /* bound onto itself: cannot be renamed, removed or replaced */
	PLAN_GUARD,	    /* persistence guard: read-only onto itself */
	PLAN_READONLY,	    /* halo-run's own binary and policy files: read-only */
	PLAN_CARVE,	    /* sandbox.allowRead: read-only view beneath a mask (src -> path) */
	PLAN_SANITIZE,	    /* a floor file shown as a copy with its secrets removed */
	PLAN_SSH_CONFIG,    /* halo-run's /etc/ssh/ssh_config: ProxyCommand (data) */
	PLAN_MASK,	    /* protected path: an empty, mode-000, read-only mask over it */
	PLAN_SOCKET,	    /* sandbox.unixSockets: a host socket left reachable */
	PLAN_SEAL,	    /* made read-only once populated */
	PLAN_REFUSE_CREATE, /* a guard target missing at launch: its creation refused */
	PLAN_REFUSE_PREFIX, /* a home-set prefix row: names it starts refused (path: dir/prefix) */
	PLAN_N_OPS
};

/* The step has no mount of its own: the host root (read-only) or a parent tree shows
 * it already. It is listed so the plan names every tree the policy names. */
#define PLAN_F_SHOWN 1u
/* The path is a name pattern (sandbox.protectedPaths "*.pem"), not an absolute path:
 * a renderer with pattern rules (SBPL regexes) applies it; a scan-based launcher
 * masks its matches instead. */
#define PLAN_F_PATTERN 2u
/* The rule covers the whole tree beneath the path (a subpath), not the path alone. */
#define PLAN_F_TREE 4u
/* A mask over a directory the workspace scan could not list (no read or search
 * permission): masked whole because what it holds is unknown. */
#define PLAN_F_UNLISTED 8u
/* PLAN_CACHE_BIND: the directory holding it (every workspace's isolated caches) is
 * covered first by an empty read-only tmpfs holding only this tree's mount point, so
 * that no other workspace's cache is visible inside. */
#define PLAN_F_ALONE 16u
/* halo-run's own state (its index and session directories and sockets, and the
 * directories holding them): enforced like any step, counted but not listed by the
 * text printer, which lists the user's paths. */
#define PLAN_F_OWN 32u

struct plan_step {
	enum plan_op op;
	unsigned flags;	    /* PLAN_F_* */
	const char *path;   /* where it shows inside (absolute) */
	const char *src;    /* host source when not path itself (carve-outs), else NULL */
	const char *reason; /* short, for the printer and the JSON */
	/* What asked for it: "workspace", "sandbox.writableRoots", "sandbox.protectedPaths",
	 * "sandbox.allowRead", "tmpdir", "self", "policy-file", "own-output",
	 * "config-dir", "sandbox.unixSockets"... (may be NULL). Renderers that work
	 * from rules rather than a scan (macOS) key on it. */
	const char *origin;
	/* PLAN_SANITIZE, PLAN_NAMES, PLAN_SSH_CONFIG: the file's bytes (borrowed). */
	const char *data;
	size_t len;
};

/* ---------------------------------------------------------------- layers */

#define PLAN_MAX_LAYERS 8

struct plan_text {
	char **v;
	size_t n;
};

struct plan_layer {
	const char *name;  /* "landlock", "seccomp", "capabilities", "no_new_privs"... */
	const char *label; /* its heading in the text ("seccomp deny list") */
	bool required;	   /* missing, it stops the launch (failIfUnavailable) */
	bool used;	   /* this launch applies it */
	bool available;	   /* on this machine, as probed by the launcher */
	char *summary;	   /* one line, may be NULL */
	struct plan_text details;
};

/* ---------------------------------------------------------------- the plan */

struct halo_plan {
	const char *platform; /* "linux", "macos" */
	char *title;	      /* the first line of the text */
	const char *policy_source;
	const char *mode; /* policy_mode_name() */
	const char *workspace;
	char *const *argv;
	/* Namespaces: a line of text (Linux), whether they can be made here, and whether
	 * the launch stops without them. */
	char *namespaces;
	bool namespaces_available, namespaces_required;
	bool sandboxed; /* sandbox.mode is not off */
	struct plan_step *steps;
	size_t n_steps, cap_steps;
	bool rules;   /* the steps are path rules (plan_fs_rules), not mounts */
	bool scanned; /* the workspace scan ran: entries_scanned and truncated hold */
	size_t entries_scanned;
	bool scan_truncated;
	bool guard; /* sandbox.guardPersistence */
	struct plan_layer layers[PLAN_MAX_LAYERS];
	size_t n_layers;
	struct plan_text limits;	    /* one line per cap and what holds it */
	struct plan_text env;		    /* the command's environment: names only */
	struct {			    /* how the command reaches the network */
		bool proxy;		    /* through halo-run's proxy */
		struct plan_text listeners; /* "http 127.0.0.1:3128" */
		struct plan_text env;	    /* the proxy variables the command gets (names) */
		const struct policy_ports *host_ports;
		struct plan_text notes; /* the printer's lines, as they read */
	} egress;
	const char *gaps_title;	   /* NULL: "not enforced" */
	struct plan_text gaps;	   /* what this platform or machine does not stop */
	struct plan_text warnings; /* said at launch (runner prints them), --quiet or not */
	struct plan_text extra;	   /* the platform's own rendering (macOS: the profile) */
	struct plan_text pool;	   /* strings the plan made for its steps (plan_str) */
	/* The numbers behind `limits` (-1: the host's limit kept). */
	struct {
		long long cpu_seconds, memory_bytes, file_size_bytes, open_files, processes,
		    wall_seconds;
		bool memory_cgroup; /* a memory cgroup holds memory_bytes, not RLIMIT_DATA */
	} limit_values;
	/* What the steps borrow from, released by plan_free (the launcher's scan). */
	void (*release)(void *arg);
	void *release_arg;
	bool oom; /* an add failed: the plan is not whole (plan_ok) */
};

void plan_init(struct halo_plan *p, const char *platform);
void plan_free(struct halo_plan *p);

/* Append a step; path, src and reason are borrowed. Returns the step, or NULL (out of
 * memory: the plan is then unusable, plan_ok says so). */
struct plan_step *plan_step_add(struct halo_plan *p, enum plan_op op, unsigned flags,
				const char *path, const char *src, const char *reason);
size_t plan_count(const struct halo_plan *p, enum plan_op op);
const char *plan_op_name(enum plan_op op);
/* Is this op one of the layout's trees and fresh file systems ("mounts:")? */
bool plan_op_is_layout(enum plan_op op);

/* The command's environment ("NAME=value"...) as names into p->env, and its proxy
 * variables' names into p->egress.env. Values are never copied. */
void plan_env_names(struct halo_plan *p, char *const *envp);

/* Copied; printf-style. Return 0 or -ENOMEM; plan_add also marks the plan broken. */
int plan_text_add(struct plan_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int plan_add(struct halo_plan *p, struct plan_text *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A string the plan keeps until plan_free (for a step's reason); NULL when out of
 * memory. */
const char *plan_str(struct halo_plan *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int plan_set(char **field, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void plan_text_free(struct plan_text *t);

/* A layer (at most PLAN_MAX_LAYERS), its summary copied. NULL when full or out of
 * memory. */
struct plan_layer *plan_layer_add(struct halo_plan *p, const char *name, const char *label,
				  bool required, bool available, const char *summary);
const struct plan_layer *plan_layer_find(const struct halo_plan *p, const char *name);

/* 0 when every add so far succeeded, else -ENOMEM. */
int plan_ok(const struct halo_plan *p);

/* ---------------------------------------------------------------- the filesystem */

struct plan_paths {
	char *const *v;
	size_t n;
};

/* What the filesystem steps are built from: the policy, the command line and the
 * workspace scan's findings (linux_scan_findings fills these from struct linux_scan).
 * Every list is borrowed. */
struct plan_fs_in {
	const struct halo_policy *policy;
	const char *workspace;
	struct plan_paths caches; /* tool caches as runner named them */
	/* The directory of every workspace's isolated caches (env/caches.c), or NULL: a
	 * cache tree directly in it is shown alone (PLAN_F_ALONE). */
	const char *cache_hide;
	struct plan_paths writable; /* resolved writable trees, nested ones dropped */
	/* The walk's findings: known only once it ran (plan_fs_late). */
	struct plan_paths masked, carved, carved_src, sanitized, guarded, readonly, pinned, missing,
	    sockets;
	struct plan_paths prefixes; /* the home set's prefix rows in writable trees, dir/prefix */
	struct plan_paths unlisted; /* masks over directories the walk could not list */
	struct plan_paths own;	    /* masks of halo-run's own state (PLAN_F_OWN) */
	char *const *sanitized_data;
	const size_t *sanitized_len;
	/* The homes and the caller's PATH (any may be NULL): a guarded or refused path of
	 * a home's persistence set says that entry's reason (policy_home_set_hit). */
	const char *homes[2];
	const char *caller_path;
	const char *caller_xdg_config;
	const char *caller_xdg_data; /* the caller's XDG_DATA_HOME, or NULL */
	const char *caller_xdg_config_dirs, *caller_xdg_data_dirs; /* their lists, or NULL */
	const char *caller_zdotdir; /* the caller's ZDOTDIR, or NULL */
	/* The sandbox has its own network namespace with halo-run's DNS stub: name
	 * resolution inside is halo-run's (PLAN_NAMES). */
	bool own_names;
	/* The sandbox's /etc/ssh/ssh_config (linux_ssh_config_build), or NULL. */
	const char *ssh_config;
	size_t ssh_config_len;
};

/* The layout, in the order it is built: the host root read-only, the trees outside
 * the fresh file systems (parents first), /tmp, /run, /dev, the trees beneath them,
 * /proc, /sys. Returns 0 or -ENOMEM. */
int plan_fs_layout(struct halo_plan *p, const struct plan_fs_in *in);
/* What the walk found, in the order it is applied: pins, guards, halo-run's own
 * files, carve-outs and sanitized copies, masks, sockets, then /run sealed, and the
 * guard targets whose creation is refused. Returns 0 or -ENOMEM. */
int plan_fs_late(struct halo_plan *p, const struct plan_fs_in *in);

/* The filesystem as rules, for a launcher without a scan or mounts (macOS: rendered
 * to SBPL): what may be written, what is protected (absolute paths and patterns), the
 * carve-outs, halo-run's own files, the host sockets. Paths are borrowed and taken as
 * given (relative policy files resolved by the caller). */
struct plan_rules_in {
	const struct halo_policy *policy;
	const char *workspace;
	const char *tmpdir; /* this run's, always writable; may be NULL */
	const char *self_exe;
	const char *const *policy_files;
	size_t n_policy_files;
	const char *const *own_outputs;
	size_t n_own_outputs;
	const char *config_dir; /* halo-run's own configuration directory */
};
/* In the order a renderer defines its parameters: writable trees (workspace,
 * writableRoots, TMPDIR), protected paths, protected patterns, allowRead, halo-run's
 * binary and policy files, its output files (protected), its configuration
 * directory, sandbox.unixSockets. Returns 0 or -ENOMEM. */
int plan_fs_rules(struct halo_plan *p, const struct plan_rules_in *in);

/* Is path one of the fresh file systems' places (/tmp, /run, /var/run, /dev) or
 * beneath one? Their steps are the plan's own, so this is the one home of the list. */
bool plan_path_in_fresh(const char *path);
/* path == dir or beneath it (component-wise). */
bool plan_path_beneath(const char *path, const char *dir);

#endif
