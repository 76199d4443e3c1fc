/* env/caches — where the tools' caches live for the command (sandbox.caches).
 *
 * isolated (the default): every workspace gets sandbox-only caches, kept across runs, in
 * ${XDG_CACHE_HOME:-$HOME/.cache}/halo-run/caches/<workspace key>, bound writable inside
 * and named to the tools through their own variables (npm_config_cache, GOCACHE,
 * CARGO_HOME...). No host tool reads that directory, so a cache poisoned inside never
 * runs outside; the host's own caches stay read-only and untouched. One directory per
 * workspace, because caches carry code (a .pth file in the pip user base, a cargo
 * config, a gradle init script, objects in GOCACHE): shared, one workspace's run could
 * plant code into every other workspace's builds; per workspace, a cache can do no more
 * than the workspace itself, which the command can write anyway. A read-only sandbox
 * writes nothing that outlives it: its caches are per-run. Without a usable home (uid 65534 with
 * HOME=/nonexistent) the same variables point into the sandbox's private /tmp: per-run
 * caches, said in one line.
 * host: the host's real cache directories that exist are bound writable (a loosening).
 * off: nothing; the tools find their default, read-only, locations. */
#ifndef HALO_RUNNER_CACHES_H
#define HALO_RUNNER_CACHES_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"

/* One tool's cache as the command sees it: variable, the subdirectory of the cache
 * root it points at, and the host's own default location (for host mode and docs). */
struct runner_cache_tool {
	const char *tool; /* name for `halo-run cache clear TOOL` */
	const char *var;  /* NULL: set in the tool's own rc (pnpm: caches_config.c) */
	const char *sub;
	const char *fmt; /* value format around the path, NULL for the path itself */
	/* sub is one path component: `cache clear` walks it by descriptor without
	 * following a link, which a multi-component path could not guarantee. */
	const char *host; /* the tool's default, relative to $HOME */
};
extern const struct runner_cache_tool runner_cache_tools[];
extern const size_t runner_n_cache_tools;

/* The host directories `caches: host` makes writable when they exist ($HOME-relative). */
extern const char *const runner_cache_host_dirs[];

#define RUNNER_CACHE_PER_RUN_ROOT "/tmp/halo-cache"
#define RUNNER_CACHE_MAX_BINDS	  16

struct runner_caches {
	enum policy_caches mode;
	bool per_run;	 /* isolated without a usable root: in the sandbox's /tmp */
	char root[4096]; /* isolated: the host directory bound writable ("" when per_run) */
	struct policy_kv vars[24];
	size_t n_vars;
	char *binds[RUNNER_CACHE_MAX_BINDS]; /* writable, never walked: root or host dirs */
	size_t n_binds;
	char note[640]; /* one line for stderr (per-run and why), or "" */
	/* isolated: the directory holding every workspace's caches (root's parent), which
	 * the sandbox hides but for root; "" otherwise. */
	char hide[4096];
};

/* The caches base for a home and $XDG_CACHE_HOME (may be NULL; ignored unless
 * absolute): pure. Returns 0 or -ENAMETOOLONG / -ENOENT (no home). */
int runner_cache_root(const char *home, const char *xdg_cache_home, char *out, size_t n);

/* The workspace's own directory name below the base: its base name (characters
 * outside [A-Za-z0-9._-] as '_', at most 40) and a 64-bit hash of its whole path, so
 * that two workspaces never share one. Pure. Returns 0 or -ENAMETOOLONG. */
int runner_cache_key(const char *workspace, char *out, size_t n);

/* base/key for a workspace, as runner_caches_plan and `halo-run cache` use it. */
int runner_cache_dir(const char *home, const char *xdg_cache_home, const char *workspace, char *out,
		     size_t n);

/* Fill c->vars for `root` (the per-run root when NULL): pure. */
int runner_caches_vars(struct runner_caches *c, const char *root);

/* The whole plan for a launch: creates the workspace's cache directory when needed
 * (0700, owned by the caller, no symlink in halo-run's own part of the path; nothing
 * is created when dry_run), falls back to per-run caches with a note when it cannot be
 * used (no home, not writable, another owner, beneath a protected path, a read-only
 * sandbox). Returns 0 or -ENOMEM. */
struct runner_caches_in {
	const struct halo_policy *policy;
	const char *home;
	const char *xdg_cache_home; /* may be NULL */
	const char *workspace;
	bool dry_run;
};
int runner_caches_plan(const struct runner_caches_in *in, struct runner_caches *c);
/* The real path of the directory open as fd, named path (out: PATH_MAX bytes): one
 * readlink of /proc/self/fd rather than realpath's one per component; realpath(path)
 * where /proc cannot say. */
bool runner_caches_realpath_fd(int fd, const char *path, char *out);
void runner_caches_release(struct runner_caches *c);

/* The command's XDG_CONFIG_HOME inside (caches_config.c says why): pnpm/rc naming
 * pnpm's store-dir, and a mirror of $HOME/.config, one symlink per entry. The runner
 * gathers it, linux/ writes it on the sandbox's /run. */
struct runner_tool_config {
	char *rc; /* pnpm/rc's bytes */
	size_t rc_len;
	char mirror[4096]; /* $HOME/.config, whose entries are linked ("" without a home) */
	char *names;	   /* its entries but pnpm, NUL-separated */
	size_t names_len;
};
/* Fill c for pnpm's store at `store` (absolute, as the command sees it); the host's
 * pnpm rc only where the policy `p` shows it at its own path. -EEXIST when
 * $HOME/.config is inside the workspace (kept as it is), -E2BIG when it has more
 * entries than a mirror holds (kept too), else 0 or -errno. */
int runner_caches_config(const struct halo_policy *p, const char *home, const char *workspace,
			 const char *store, struct runner_tool_config *c);
void runner_tool_config_release(struct runner_tool_config *c);

/* Is `tool` one of the names above (or "all")? */
bool runner_cache_tool_known(const char *tool);

#endif
