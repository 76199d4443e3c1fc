/* Part of policy/policy.h (include that): the path facts every layer shares. */
#ifndef HALO_POLICY_PATH_H
#define HALO_POLICY_PATH_H

#include "policy/policy.h"
#include "policy/policy_hosts.h"

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
/* Where absolute `in` leads as the kernel walks it (links followed, to places not made
 * yet too): the resolved path; where the walk goes on from above a missing name (a
 * ".." after it: nothing beyond can be foretold once it exists), that first missing
 * name, with *stopped (may be NULL) true. 0 or policy_path_resolve's error. */
int policy_path_leads(const char *in, policy_link_fn link, void *ctx, char *out, size_t n,
		      bool *stopped);
/* An XDG directory where it leads (review 9), as the sandbox, the hook and a session's
 * digest judge it: policy_path_leads's path; when that stopped at a missing name, that
 * name in cut (kept from being made) and the name lexically cleaned in out (where it
 * leads once that name is a plain directory). 0 or -errno. */
int policy_xdg_leads(const char *named, policy_link_fn link, void *ctx, char *out, size_t n,
		     char *cut, size_t cn);
/* The same for each absolute entry of a colon list ($XDG_CONFIG_DIRS, $XDG_DATA_DIRS):
 * *out (malloc'd, NULL when none) the list of where they lead, each cut to cut_fn
 * (may be NULL; a non-zero return stops). 0; -ENOMEM; or the first error of an entry
 * (a loop, past PATH_MAX: *out still holds the others), which the caller fails closed
 * on. Relative and empty entries are skipped. */
int policy_xdg_list_leads(const char *list, policy_link_fn link, void *ctx, char **out,
			  int (*cut_fn)(const char *cut, void *arg), void *arg);
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
/* init.templateDir (POLICY_GITREF_TEMPLATE): git init and clone copy its hooks into
 * every new repository. */
/* POLICY_GITREF_PROGRAM: the program a command-valued key runs (core.fsmonitor,
 * credential.helper, core.sshCommand, gpg.program, filter drivers...), when it is a
 * path (absolute, "~", or relative with a '/'): the value is that path alone;
 * POLICY_GITREF_PROGRAM_ARG: a later word of the command that is a path (a script an
 * interpreter runs, or just an argument: kept only where it exists). */
enum {
	POLICY_GITREF_HOOKS = 1,
	POLICY_GITREF_WORKTREE,
	POLICY_GITREF_INCLUDE,
	POLICY_GITREF_TEMPLATE,
	POLICY_GITREF_PROGRAM,
	POLICY_GITREF_PROGRAM_ARG
};
typedef void (*policy_gitref_fn)(void *ctx, int kind, const char *value);
void policy_git_config_refs(const char *buf, size_t n, policy_gitref_fn cb, void *ctx);
/* A leading "~" as git expands it in a config path (interpolate_path) and bash in a
 * PATH entry: for "~", "~/x" and "~user/x", the user's name into user ("" for $HOME's
 * own) and what follows the home into *rest ("" or "x"): true. False when v starts with
 * no "~" or the name does not fit. The caller takes "" under every home the host may
 * use ($HOME's and the password database's). */
bool policy_path_tilde(const char *v, char *user, size_t n, const char **rest);
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

#endif
