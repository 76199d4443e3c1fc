/* Internal to the launch scan (scan.c, scan_walk.c, scan_git.c). */
#ifndef HALO_LINUX_SCAN_INT_H
#define HALO_LINUX_SCAN_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "linux/linux_int.h"

/* One walk over the trees the command can reach by name and that we bind in:
 * the workspace and the writable roots. */
struct linux_scan_ctx {
	struct linux_scan *s;
	struct halo_err *e;
	const char *home; /* pw home, for "~/" in git config paths */
	/* Protected globs, normalised (no leading "./" or "**\/", no trailing "/"):
	 * without a slash they match a name, with one a relative path at any depth. */
	const char **name_globs;
	size_t n_name_globs;
	const char **path_globs;
	size_t n_path_globs;
	const char *const *roots; /* every tree walked: a walk skips the others' tops */
	size_t n_roots;
	bool guard;	 /* guard persistence targets in the tree being walked */
	size_t root_len; /* length of the current root in path (for relative paths) */
	char path[PATH_MAX];
	size_t max_entries;
	unsigned max_depth;
	bool stop; /* bound hit or a hard error: stop everything */
	int err;   /* -errno of a hard error (e set), 0 otherwise */
};

/* The bounds of the walk. Variables so that tests can lower them. */
#define LINUX_SCAN_MAX_ENTRIES 200000
#define LINUX_SCAN_MAX_DEPTH   64
extern size_t linux_scan_max_entries;
extern unsigned linux_scan_max_depth;

/* Walk `root` (absolute, symlinks resolved). Never follows a symlink; does not cross
 * into kernel pseudo file systems; counts entries in s->entries_scanned. */
void linux_scan_walk_root(struct linux_scan_ctx *c, const char *root, bool guard);

/* Does `name` (or relative path `rel`) match a protected glob? */
bool linux_scan_glob_match(const struct linux_scan_ctx *c, const char *name, const char *rel);

/* Is `name` a persistence-guard target found by its name (.bashrc, .vscode, ...)? */
bool linux_scan_guard_name(const char *name);

/* The repository at `dotgit` (a .git directory, or a .git file pointing at one) whose
 * work tree is `worktree`: guard its hooks and config, the hook directory and
 * included files its config names, and its submodules' git directories. */
void linux_scan_git_repo(struct linux_scan_ctx *c, const char *dotgit, const char *worktree,
			 bool is_file);

/* Add `path` to list, or its resolved target when it is a symlink (nothing when the
 * target does not exist). Returns true when something was added. */
bool linux_scan_add_resolved(struct linux_paths *list, const char *path);

/* Is `path` equal to or beneath `dir`? (Both absolute, no trailing slash.) */
bool linux_path_beneath(const char *path, const char *dir);

/* Is `path` beneath a directory the sandbox gets fresh (/tmp, /run, /var/run, /dev),
 * so that the host's content there is not visible inside? */
bool linux_path_in_fresh_dir(const char *path);

#endif
