/* What a repository's config names, for the file tools: core.hooksPath (git runs the
 * hooks found there) and the files include.path reads as config. The launch scan
 * keeps both read-only in the sandbox (linux/scan_git.c); the hook reads the same
 * configs with the same reader (policy_git_config_refs) for every repository whose
 * work tree holds the name judged: a .git directory, or a .git file's gitdir, with its
 * config.worktree and its common directory's config. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hook/hook_int.h"

#define GIT_CONFIG_MAX (256 * 1024) /* as the scan reads */
#define GIT_NESTING    8
#define GIT_PATH_MAX   4096 /* POLICY_PATH_MAX */

struct refs_walk {
	const struct hook_ctx *c;
	const char *abs, *worktree, *cfg_dir;
	const char *hit;
	unsigned nest;
	char hooks[GIT_PATH_MAX + 8]; /* the first core.hooksPath, absolute, or "" */
};

static void read_config(struct refs_walk *w, const char *path);

static void judge_ref(struct refs_walk *w, int kind, const char *value)
{
	char at[GIT_PATH_MAX];
	const bool prog = kind == POLICY_GITREF_PROGRAM || kind == POLICY_GITREF_PROGRAM_ARG;
	const char *base = kind == POLICY_GITREF_HOOKS || prog ? w->worktree : w->cfg_dir;

	/* (a relative templateDir depends on where git runs: the scan takes none either) */
	if (w->hit || (kind == POLICY_GITREF_TEMPLATE && value[0] != '/') ||
	    policy_path_absolute(value, base, w->c->home, at, sizeof(at)) < 0)
		return;
	/* a later word of a command: as the sandbox, only a regular file that exists
	 * (read_file refuses anything else; a directory an alias names is no program) */
	char none;
	if (kind == POLICY_GITREF_PROGRAM_ARG && w->c->read_file(at, &none, 0) < 0)
		return;
	if (kind == POLICY_GITREF_HOOKS && !w->hooks[0])
		snprintf(w->hooks, sizeof(w->hooks), "%s", at);
	if (policy_path_beneath(w->abs, at))
		w->hit = kind == POLICY_GITREF_HOOKS ? "the hooks directory core.hooksPath names"
			 : kind == POLICY_GITREF_TEMPLATE
			     ? "the template directory init.templateDir names (git init and clone "
			       "copy its hooks into each new repository)"
			 : prog ? "a program a git config runs (core.fsmonitor, credential.helper, "
				  "core.sshCommand, gpg.program, a filter or diff driver...)"
				: "a config file include.path names";
	else if (kind == POLICY_GITREF_HOOKS && policy_hooks_dir_sources_parent(at)) {
		size_t n = strlen(at); /* husky 9: .husky/_ runs the scripts in .husky */
		while (n > 1 && at[n - 1] == '/')
			at[--n] = '\0';
		*strrchr(at, '/') = '\0';
		if (at[0] && policy_path_beneath(w->abs, at))
			w->hit = "the scripts a hooksPath ending in /_ (husky) runs";
	} else if (kind == POLICY_GITREF_INCLUDE && w->nest < GIT_NESTING)
		read_config(w, at);
}

/* git expands "~" and "~/x" with $HOME and "~user/x" with that user's home
 * (interpolate_path); the sandbox guards a "~" value under every home the host's git
 * may take, $HOME's and the password database's (linux/scan_git.c each_expansion):
 * judged the same way. */
static void on_ref(void *arg, int kind, const char *value)
{
	struct refs_walk *w = arg;
	const char *homes[2] = {NULL, NULL}, *rest;
	char user[256], uhome[GIT_PATH_MAX], exp[GIT_PATH_MAX];

	if (kind == POLICY_GITREF_WORKTREE)
		return;
	if (!policy_path_tilde(value, user, sizeof(user), &rest)) {
		judge_ref(w, kind, value); /* (a name too long for a user: relative, as the scan) */
		return;
	}
	if (!user[0]) {
		homes[0] = w->c->env_home;
		homes[1] = w->c->home;
	} else if (w->c->user_home && w->c->user_home(user, uhome, sizeof(uhome)) == 0) {
		homes[0] = uhome;
	}
	for (size_t i = 0; i < 2; i++) {
		int n;
		if (!homes[i] || homes[i][0] != '/')
			continue;
		n = snprintf(exp, sizeof(exp), "%s%s%s", homes[i], rest[0] ? "/" : "", rest);
		if (n > 0 && (size_t)n < sizeof(exp))
			judge_ref(w, kind, exp);
	}
}

static void read_config(struct refs_walk *w, const char *path)
{
	char dir[GIT_PATH_MAX], *buf = malloc(GIT_CONFIG_MAX);
	const char *saved = w->cfg_dir;
	int n = buf ? w->c->read_file(path, buf, GIT_CONFIG_MAX) : -1;

	if (n <= 0) {
		if (!buf) /* cannot tell: the guarded side */
			w->hit = "a repository's config (out of memory reading it)";
		free(buf);
		return;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	w->cfg_dir = dir[0] ? dir : "/";
	w->nest++;
	policy_git_config_refs(buf, (size_t)n, on_ref, w);
	w->nest--;
	w->cfg_dir = saved;
	free(buf);
}

/* "gitdir: X" (a .git file) or "X" (commondir), X relative to `base`. */
static bool read_pointer(const struct hook_ctx *c, const char *file, const char *prefix,
			 const char *base, char *out, size_t n)
{
	char buf[GIT_PATH_MAX];
	int k = c->read_file(file, buf, sizeof(buf) - 1);
	size_t p = strlen(prefix);

	if (k <= 0)
		return false;
	buf[k] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (strncmp(buf, prefix, p) != 0)
		return false;
	return policy_path_absolute(buf + p + strspn(buf + p, " \t"), base, NULL, out, n) == 0;
}

/* Does the hook `hook`, a symbolic link (ln -s ../../scripts/pre-commit), lead to abs?
 * The sandbox keeps that target read-only (linux/scan_git.c). */
static bool link_target_is(const struct hook_ctx *c, const char *hook, const char *abs)
{
	char real[GIT_PATH_MAX + 64], abs_real[GIT_PATH_MAX + 64];

	if (!c->resolve || c->resolve(hook, real, sizeof(real)) < 0 || !strcmp(real, hook))
		return false;
	return !strcmp(real, abs) ||
	       (c->resolve(abs, abs_real, sizeof(abs_real)) == 0 && !strcmp(real, abs_real));
}

/* Is abs a file a hook in `hooks` runs: a hook's symlink target, or a file a hook
 * manager's shim there runs (policy/hookmgr.c)? Each hook that exists is read once per
 * judged path (a fresh repository has only *.sample names, which are not asked). */
static const char *manager_hit(const struct hook_ctx *c, const char *abs, const char *worktree,
			       const char *hooks)
{
	size_t wl = strlen(worktree);
	const char *rel = abs + (strlen(abs) >= wl ? wl + (wl > 1) : 0);
	const char *const *names = policy_git_hook_names();
	char path[GIT_PATH_MAX + 64], cfg[GIT_PATH_MAX], buf[16 * 1024];
	bool inside = !strncmp(abs, worktree, wl) && (wl <= 1 || abs[wl] == '/');

	for (size_t k = 0; names[k]; k++) {
		snprintf(path, sizeof(path), "%s/%s", hooks, names[k]);
		if (link_target_is(c, path, abs))
			return "the target of a hook that is a symbolic link";
		int n = c->read_file(path, buf, sizeof(buf));
		const struct policy_hook_manager *m =
		    n > 0 ? policy_hook_manager_of(buf, (size_t)n) : NULL;
		if (!m)
			continue;
		if (inside && policy_hook_manager_file(rel))
			return "a file the hook manager's shim in the hooks directory runs";
		if (policy_hook_manager_config(buf, (size_t)n, cfg, sizeof(cfg)) &&
		    policy_path_absolute(cfg, worktree, NULL, path, sizeof(path)) == 0 &&
		    policy_path_within(abs, path))
			return "the config pre-commit's hook reads (--config=)";
	}
	return NULL;
}

static const char *repo_hit(const struct hook_ctx *c, const char *abs, const char *worktree)
{
	char dotgit[GIT_PATH_MAX], gitdir[GIT_PATH_MAX], common[GIT_PATH_MAX];
	char cfg[GIT_PATH_MAX + 32];
	struct refs_walk w = {c, abs, worktree, NULL, NULL, 0, ""};
	static const char *const names[] = {"config", "config.worktree"};

	if ((size_t)snprintf(dotgit, sizeof(dotgit), "%s/.git",
			     strcmp(worktree, "/") ? worktree : "") >= sizeof(dotgit) ||
	    !c->exists(dotgit))
		return NULL;
	if (!read_pointer(c, dotgit, "gitdir:", worktree, gitdir, sizeof(gitdir)))
		snprintf(gitdir, sizeof(gitdir), "%s", dotgit);
	for (size_t i = 0; i < 2 && !w.hit; i++) {
		snprintf(cfg, sizeof(cfg), "%s/%s", gitdir, names[i]);
		read_config(&w, cfg);
	}
	snprintf(cfg, sizeof(cfg), "%s/commondir", gitdir);
	bool shared = read_pointer(c, cfg, "", gitdir, common, sizeof(common));
	if (!w.hit && shared) {
		snprintf(cfg, sizeof(cfg), "%s/config", common);
		read_config(&w, cfg);
	}
	if (!w.hit && !w.hooks[0]) /* no hooksPath: the hooks of the common directory */
		snprintf(w.hooks, sizeof(w.hooks), "%s/hooks", shared ? common : gitdir);
	return w.hit ? w.hit : manager_hit(c, abs, worktree, w.hooks);
}

/* The user's global configs and the system's, as the host's git reads them (both
 * homes; $XDG_CONFIG_HOME or ~/.config): a hooksPath there holds for every repository,
 * a relative one in each work tree (`worktree`; NULL: absolute ones only). */
static const char *global_hit(const struct hook_ctx *c, const char *abs, const char *worktree)
{
	char cfg[GIT_PATH_MAX + 32];
	const char *homes[] = {c->home, c->env_home};
	struct refs_walk w = {c, abs, worktree, NULL, NULL, 0, ""};

	for (size_t i = 0; i < 2 && !w.hit; i++) {
		if (!homes[i] || homes[i][0] != '/')
			continue;
		snprintf(cfg, sizeof(cfg), "%s/.gitconfig", homes[i]);
		read_config(&w, cfg);
		snprintf(cfg, sizeof(cfg), "%s/.config/git/config", homes[i]);
		if (!w.hit)
			read_config(&w, cfg);
	}
	if (!w.hit && c->xdg_config && c->xdg_config[0] == '/') {
		snprintf(cfg, sizeof(cfg), "%s/git/config", c->xdg_config);
		read_config(&w, cfg);
	}
	if (!w.hit)
		read_config(&w, "/etc/gitconfig");
	/* what $GIT_CONFIG_GLOBAL and $GIT_CONFIG_SYSTEM name: git's global and system
	 * configs instead (the sandbox keeps them read-only: linux/scan_git.c) */
	const char *env_cfg[2] = {c->git_config_global, c->git_config_system};
	for (size_t i = 0; i < 2 && !w.hit; i++) {
		if (!env_cfg[i] || env_cfg[i][0] != '/')
			continue;
		if (!strcmp(abs, env_cfg[i]))
			return "the git config $GIT_CONFIG_GLOBAL or $GIT_CONFIG_SYSTEM names";
		read_config(&w, env_cfg[i]);
	}
	return w.hit;
}

const char *hook_git_config_hit(const struct hook_ctx *c, const char *abs)
{
	char dir[GIT_PATH_MAX], dotgit[GIT_PATH_MAX + 8];
	const char *why;

	if (!c->exists || !c->read_file)
		return NULL;
	snprintf(dir, sizeof(dir), "%s", abs);
	for (char *sl; (sl = strrchr(dir, '/'));) {
		sl == dir ? (void)(sl[1] = '\0') : (void)(*sl = '\0');
		snprintf(dotgit, sizeof(dotgit), "%s/.git", strcmp(dir, "/") ? dir : "");
		if (c->exists(dotgit) &&
		    ((why = repo_hit(c, abs, dir)) || (why = global_hit(c, abs, dir))))
			return why;
		if (sl == dir)
			break;
	}
	return global_hit(c, abs, NULL);
}
