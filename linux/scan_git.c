/* The persistence guard's view of git: a repository runs code later through its
 * hooks and through its config (core.hooksPath, core.fsmonitor, filters, aliases...),
 * so both stay read-only for every repository found in a writable tree: work trees
 * with a .git directory, linked work trees and submodules with a .git file, the git
 * directories of submodules under .git/modules, and bare repositories. Files a config
 * includes and a hooksPath it names are guarded too. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/scan_int.h"

#define GIT_MAX_NESTING 8	     /* commondir / include / modules depth */
#define GIT_CONFIG_MAX	(256 * 1024) /* read no more of a config than this */

struct git_config_refs {
	char hooks_path[PATH_MAX]; /* core.hooksPath as written, or "" */
	char worktree[PATH_MAX];   /* core.worktree as written, or "" */
	char templ[PATH_MAX];	   /* init.templateDir as written, or "" */
	const char *worktree_at;   /* where a relative program runs, or NULL (global) */
	bool global;		   /* the global configs: relative programs for each work tree */
};

static void guard_gitdir(struct linux_scan_ctx *c, const char *gitdir, const char *worktree,
			 unsigned nest);

/* Read a small regular file without following a final symlink. */
static char *read_small(const char *path, size_t max, size_t *len)
{
	struct stat st;
	char *buf;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !(buf = malloc(max + 1))) {
		close(fd);
		return NULL;
	}
	n = read(fd, buf, max);
	close(fd);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

/* "~/x" → home/x; "/x" stays; "x" → base/x. Empty out when it cannot be built. */
static void resolve_against(const struct linux_scan_ctx *c, const char *base, const char *v,
			    char *out, size_t n)
{
	int w;

	if (v[0] == '~' && v[1] == '/')
		w = c->home ? snprintf(out, n, "%s/%s", c->home, v + 2) : -1;
	else if (v[0] == '/')
		w = snprintf(out, n, "%s", v);
	else
		w = base ? snprintf(out, n, "%s/%s", base, v) : -1;
	if (w < 0 || (size_t)w >= n)
		out[0] = '\0';
}

/* dir/name into out; false when it does not fit. */
static bool join(char *out, size_t n, const char *dir, const char *name)
{
	int w = snprintf(out, n, "%s/%s", dir, name);

	return w >= 0 && (size_t)w < n;
}

static void guard_child(struct linux_scan_ctx *c, const char *dir, const char *name)
{
	char p[PATH_MAX];

	if (join(p, sizeof(p), dir, name))
		linux_scan_add_guard(c->s, p, false);
}

static void trim(char **s, char **end)
{
	while (**s && isspace((unsigned char)**s))
		(*s)++;
	while (*end > *s && isspace((unsigned char)(*end)[-1]))
		(*end)--;
	**end = '\0';
}

static void parse_config(struct linux_scan_ctx *c, const char *path, struct git_config_refs *r,
			 unsigned nest);

struct config_walk {
	struct linux_scan_ctx *c;
	const char *cfg;
	struct git_config_refs *r;
	unsigned nest;
};

typedef void (*expansion_fn)(struct linux_scan_ctx *c, const char *abs, void *arg);

/* A path in a git config as git reads it (interpolate_path): "~" and "~/x" name $HOME,
 * "~user/x" that user's home, anything else is resolve_against's. A "~" one is taken
 * with every home the host's git may expand it with, $HOME's (git's own) and the
 * password database's (a harness, a cron job or a login shell may run git with that
 * one): each is guarded (review 20: "~/.githooks" was guarded as the password
 * database's home alone, and a HOME elsewhere had its hooks planted). */
static void each_expansion(struct linux_scan_ctx *c, const char *base, const char *v,
			   expansion_fn fn, void *arg)
{
	char out[PATH_MAX], user[256], pwbuf[4096];
	const char *homes[2] = {NULL, NULL}, *rest;
	struct passwd pw, *got = NULL;

	if (!policy_path_tilde(v, user, sizeof(user), &rest)) {
		resolve_against(c, base, v, out, sizeof(out));
		if (out[0])
			fn(c, out, arg);
		return;
	}
	if (!user[0]) {
		homes[0] = getenv("HOME");
		homes[1] = c->home;
	} else if (getpwnam_r(user, &pw, pwbuf, sizeof(pwbuf), &got) == 0 && got) {
		homes[0] = got->pw_dir;
	}
	for (size_t i = 0; i < 2; i++) {
		int w;
		if (!homes[i] || homes[i][0] != '/' ||
		    (i == 1 && homes[0] && !strcmp(homes[0], homes[1])))
			continue;
		w = snprintf(out, sizeof(out), "%s%s%s", homes[i], rest[0] ? "/" : "", rest);
		if (w > 0 && (size_t)w < sizeof(out))
			fn(c, out, arg);
	}
}

static void guard_or_missing(struct linux_scan_ctx *c, const char *p);

/* A program a config key runs (core.fsmonitor, credential.helper, core.sshCommand...),
 * or a place the global configs name (hooksPath, templateDir): read-only where it
 * lands in a writable tree, kept from being made when missing (review 24: a global
 * core.fsmonitor naming a workspace script ran at the host's next git status). */
static void program_one(struct linux_scan_ctx *c, const char *prog, void *arg)
{
	(void)arg;
	guard_or_missing(c, prog);
}

/* A later word of such a command that is a path (the script `python3 tools/x.py` or
 * `sh -c '...'` runs, or a mere argument): read-only where it exists as a file; not
 * kept from being made (an argument such as origin/main is no file to keep). */
static void program_arg_one(struct linux_scan_ctx *c, const char *word, void *arg)
{
	struct stat st;

	(void)arg;
	if (stat(word, &st) == 0 && S_ISREG(st.st_mode))
		linux_scan_add_guard(c->s, word, false);
}

static void include_one(struct linux_scan_ctx *c, const char *inc, void *arg)
{
	struct config_walk *w = arg;

	/* Missing, it is a config the command could write: refused. */
	if (linux_scan_add_guard(c->s, inc, true))
		parse_config(c, inc, w->r, w->nest + 1);
}

/* One name the config points at (policy_git_config_refs, the hook's reader too). */
static void config_ref(void *arg, int kind, const char *value)
{
	struct config_walk *w = arg;
	char dir[PATH_MAX];

	if (kind == POLICY_GITREF_HOOKS)
		snprintf(w->r->hooks_path, sizeof(w->r->hooks_path), "%s", value);
	else if (kind == POLICY_GITREF_WORKTREE)
		snprintf(w->r->worktree, sizeof(w->r->worktree), "%s", value);
	else if (kind == POLICY_GITREF_TEMPLATE)
		snprintf(w->r->templ, sizeof(w->r->templ), "%s", value);
	else if ((kind == POLICY_GITREF_PROGRAM || kind == POLICY_GITREF_PROGRAM_ARG) &&
		 value[0] != '/' && value[0] != '~' && w->r->global) {
		/* a global config's relative one: in each work tree (guard_gitdir) */
		linux_paths_add(kind == POLICY_GITREF_PROGRAM ? &w->c->s->git_global_rel
							      : &w->c->s->git_global_rel_args,
				value);
	} else if (kind == POLICY_GITREF_PROGRAM) /* git runs it from the work tree's top */
		each_expansion(w->c, w->r->worktree_at, value, program_one, NULL);
	else if (kind == POLICY_GITREF_PROGRAM_ARG)
		each_expansion(w->c, w->r->worktree_at, value, program_arg_one, NULL);
	else if (kind == POLICY_GITREF_INCLUDE && w->nest < GIT_MAX_NESTING) {
		snprintf(dir, sizeof(dir), "%s", w->cfg);
		each_expansion(w->c, dirname(dir), value, include_one, w);
	}
}

static void parse_config(struct linux_scan_ctx *c, const char *path, struct git_config_refs *r,
			 unsigned nest)
{
	size_t len;
	char *buf = read_small(path, GIT_CONFIG_MAX, &len);

	if (!buf)
		return;
	policy_git_config_refs(buf, len, config_ref, &(struct config_walk){c, path, r, nest});
	free(buf);
}

/* Does the directory `ctx` hold `name` (lstat)? */
static bool dir_holds(void *ctx, const char *name)
{
	char p[PATH_MAX];
	struct stat st;

	return !join(p, sizeof(p), ctx, name) || lstat(p, &st) == 0;
}

/* Submodules keep their git directories under <gitdir>/modules/<name>, where a name
 * may contain slashes: a directory that is a git directory by what it holds
 * (policy_gitdir_holds, the one rule) is one. */
static void walk_modules(struct linux_scan_ctx *c, const char *dir, unsigned nest)
{
	char sub[PATH_MAX];
	struct dirent *de;
	DIR *d;

	if (nest > GIT_MAX_NESTING || linux_scan_stopped(c) || !(d = opendir(dir)))
		return;
	while (!linux_scan_stopped(c) && (de = readdir(d)) != NULL) {
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if (linux_scan_take(c, 1) == 0)
			break;
		if (!join(sub, sizeof(sub), dir, de->d_name) || lstat(sub, &st) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		if (policy_gitdir_holds(dir_holds, sub))
			guard_gitdir(c, sub, NULL, nest + 1);
		else
			walk_modules(c, sub, nest + 1);
	}
	closedir(d);
}

/* <gitdir>/commondir names the main repository's git directory (linked work trees):
 * its hooks run for this work tree too. */
static void guard_commondir(struct linux_scan_ctx *c, const char *gitdir, const char *worktree,
			    unsigned nest)
{
	char p[PATH_MAX], target[PATH_MAX], *buf, *end;
	size_t len;

	if (!join(p, sizeof(p), gitdir, "commondir") || !(buf = read_small(p, PATH_MAX - 1, &len)))
		return;
	end = buf + len;
	char *v = buf;
	trim(&v, &end);
	resolve_against(c, gitdir, v, target, sizeof(target));
	free(buf);
	if (target[0] && realpath(target, p))
		guard_gitdir(c, p, worktree, nest + 1);
}

/* An existing file is bound read-only; a missing one may not be created (broker.c). */
static void guard_or_missing(struct linux_scan_ctx *c, const char *p)
{
	struct stat st;

	if (lstat(p, &st) < 0 && errno == ENOENT)
		linux_paths_add(&c->s->hook_missing, p);
	else
		linux_scan_add_guard(c->s, p, false);
}

/* A hook that is a manager's shim runs what the manager's files in the work tree say
 * (policy/hookmgr.c): those are guarded too, and a missing one may not be created.
 * Only the hooks that exist are read (a fresh repository has only *.sample). A hook
 * that is a symlink has its target guarded (without a work tree as well). */
static void guard_managers(struct linux_scan_ctx *c, const char *gitdir, const char *hooks,
			   const char *worktree)
{
	char p[PATH_MAX], cfg[PATH_MAX], real[PATH_MAX];
	const char *const *names = policy_git_hook_names();
	DIR *d = opendir(hooks);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) && !linux_scan_stopped(c)) {
		size_t len, k;
		bool hook = false;
		struct stat st;
		for (k = 0; names[k] && !hook; k++)
			hook = !strcmp(e->d_name, names[k]);
		if (!hook || !join(p, sizeof(p), hooks, e->d_name) || lstat(p, &st) < 0)
			continue;
		/* A hook that is a symlink (ln -s ../../scripts/pre-commit .git/hooks/) runs
		 * its target: guarded as the hook itself is. The shim is read there too. */
		if (S_ISLNK(st.st_mode)) {
			linux_scan_add_guard(c->s, p, false);
			if (!realpath(p, real))
				continue;
			snprintf(p, sizeof(p), "%s", real);
		}
		if (!worktree || !worktree[0])
			continue;
		char *buf = read_small(p, 16 * 1024, &len);
		const struct policy_hook_manager *m = buf ? policy_hook_manager_of(buf, len) : NULL;
		for (k = 0; m && m->files[k]; k++)
			if (join(p, sizeof(p), worktree, m->files[k]))
				guard_or_missing(c, p);
		/* pre-commit runs from the work tree's top: a relative one is there */
		/* lefthook's remotes (configs it fetched) are read from the git directory */
		if (m && !strcmp(m->name, "lefthook") &&
		    join(p, sizeof(p), gitdir, "info/lefthook-remotes"))
			guard_or_missing(c, p);
		if (m && policy_hook_manager_config(buf, len, cfg, sizeof(cfg)) &&
		    policy_path_absolute(cfg, worktree, NULL, p, sizeof(p)) == 0)
			guard_or_missing(c, p);
		free(buf);
	}
	closedir(d);
}

/* The hooksPath of the system's and the user's global configs, as the host's git reads
 * them (later ones win: /etc/gitconfig, $XDG_CONFIG_HOME/git/config or ~/.config/git/config,
 * ~/.gitconfig; both homes), into out ("" when none): it holds for every repository
 * whose own config sets none, a relative one in each work tree. */
static const char *const git_config_env[2] = {"GIT_CONFIG_SYSTEM", "GIT_CONFIG_GLOBAL"};

static void global_hooks_path(struct linux_scan_ctx *c, char *out, size_t n)
{
	struct git_config_refs r = {"", "", "", NULL, true};
	const char *homes[] = {c->home, getenv("HOME")}, *xdg = getenv("XDG_CONFIG_HOME");
	char cfg[PATH_MAX];

	parse_config(c, "/etc/gitconfig", &r, 0);
	if (xdg && xdg[0] == '/' && join(cfg, sizeof(cfg), xdg, "git/config"))
		parse_config(c, cfg, &r, 0);
	for (size_t i = 0; i < 2; i++)
		if (homes[i] && homes[i][0] == '/' &&
		    (i == 0 || !homes[0] || strcmp(homes[0], homes[i]))) {
			if (!xdg && join(cfg, sizeof(cfg), homes[i], ".config/git/config"))
				parse_config(c, cfg, &r, 0);
			if (join(cfg, sizeof(cfg), homes[i], ".gitconfig"))
				parse_config(c, cfg, &r, 0);
		}
	/* the files $GIT_CONFIG_SYSTEM and $GIT_CONFIG_GLOBAL name instead (git 2.32) */
	for (size_t i = 0; i < 2; i++) {
		const char *v = getenv(git_config_env[i]);
		if (v && v[0] == '/')
			parse_config(c, v, &r, 0);
	}
	snprintf(out, n, "%s", r.hooks_path);
	snprintf(c->s->git_global_templ, sizeof(c->s->git_global_templ), "%s", r.templ);
}

struct hooks_at {
	const char *gitdir, *worktree;
	bool global;
};

/* One place core.hooksPath names (each_expansion: one per home for a "~" one). */
static void hooks_one(struct linux_scan_ctx *c, const char *hooks, void *arg)
{
	const struct hooks_at *h = arg;

	/* The global one names a directory most repositories lack: it may not be
	 * created there (the repository's own must exist). */
	if (h->global)
		guard_or_missing(c, hooks);
	else
		linux_scan_add_guard(c->s, hooks, true);
	/* husky 9: hooksPath .husky/_ runs the scripts in .husky/ */
	if (policy_hooks_dir_sources_parent(hooks)) {
		char parent[PATH_MAX];
		size_t n = (size_t)snprintf(parent, sizeof(parent), "%s", hooks);
		while (n > 1 && parent[n - 1] == '/')
			parent[--n] = '\0';
		*strrchr(parent, '/') = '\0';
		if (parent[0])
			linux_scan_add_guard(c->s, parent, true);
	}
	guard_managers(c, h->gitdir, hooks, h->worktree);
}

static void guard_gitdir(struct linux_scan_ctx *c, const char *gitdir, const char *worktree,
			 unsigned nest)
{
	struct git_config_refs r = {"", "", "", worktree, false};
	char cfg[PATH_MAX], wt[PATH_MAX], hooks[PATH_MAX], mods[PATH_MAX];

	if (nest > GIT_MAX_NESTING || linux_scan_stopped(c))
		return;
	/* Immovable, so that `mv .git .git-old && git init` cannot start afresh. */
	linux_paths_add(&c->s->pinned, gitdir);
	linux_paths_add(&c->s->gitdirs, gitdir);
	/* hooks, config, config.worktree, commondir: policy_git_guards, the one list
	 * (missing ones are found later, in scan_pin.c). */
	size_t ng;
	const struct policy_git_guard *g = policy_git_guards(&ng);
	for (size_t i = 0; i < ng; i++)
		guard_child(c, gitdir, g[i].name);
	if (join(cfg, sizeof(cfg), gitdir, "config"))
		parse_config(c, cfg, &r, nest);
	/* A relative hooksPath is relative to the work tree: the one we came from, else
	 * core.worktree (relative to the git directory), as for a submodule's. */
	if (r.worktree[0]) {
		resolve_against(c, gitdir, r.worktree, wt, sizeof(wt));
		worktree = wt[0] ? wt : worktree;
	}
	hooks[0] = '\0';
	bool global = false;
	if (!r.hooks_path[0]) {
		snprintf(r.hooks_path, sizeof(r.hooks_path), "%s", linux_scan_git_global_hooks(c));
		global = r.hooks_path[0] != '\0';
	}
	if (r.hooks_path[0]) {
		struct hooks_at h = {gitdir, worktree, global};
		each_expansion(c, worktree, r.hooks_path, hooks_one, &h);
	} else if (join(hooks, sizeof(hooks), gitdir, "hooks")) {
		guard_managers(c, gitdir, hooks, worktree);
	}
	/* the global configs' relative programs run in this work tree (read before the
	 * walk: linux_scan_git_global_hooks, scan.c) */
	const struct linux_paths *rel = &c->s->git_global_rel, *ra = &c->s->git_global_rel_args;
	for (size_t i = 0; worktree && i < rel->n; i++)
		each_expansion(c, worktree, rel->v[i], program_one, NULL);
	for (size_t i = 0; worktree && i < ra->n; i++)
		each_expansion(c, worktree, ra->v[i], program_arg_one, NULL);
	guard_commondir(c, gitdir, worktree, nest);
	if (join(mods, sizeof(mods), gitdir, "modules"))
		walk_modules(c, mods, nest);
}

void linux_scan_git_repo(struct linux_scan_ctx *c, const char *dotgit, const char *worktree,
			 bool is_file)
{
	char target[PATH_MAX], real[PATH_MAX], *buf, *end, *v;
	size_t len;

	if (!is_file) {
		guard_gitdir(c, dotgit, worktree, 0);
		return;
	}
	/* A .git file ("gitdir: <path>") could be rewritten to point at a git directory
	 * with the command's own hooks: guard the file as well as where it points. */
	linux_paths_add(&c->s->guarded, dotgit);
	if (!(buf = read_small(dotgit, PATH_MAX - 1, &len)))
		return;
	end = buf + len;
	v = buf;
	trim(&v, &end);
	if (strncmp(v, "gitdir:", 7) == 0) {
		v += 7;
		trim(&v, &end);
		resolve_against(c, worktree, v, target, sizeof(target));
		if (target[0] && realpath(target, real))
			guard_gitdir(c, real, worktree, 0);
	}
	free(buf);
}

const char *linux_scan_git_global_hooks(struct linux_scan_ctx *c)
{
	if (c->global_hooks)
		return c->global_hooks;
	if (!c->s->git_global_read) {
		global_hooks_path(c, c->s->git_global_hooks, sizeof(c->s->git_global_hooks));
		c->s->git_global_read = true;
	}
	return c->global_hooks = c->s->git_global_hooks;
}

void linux_scan_git_global(struct linux_scan *s, const char *home)
{
	struct linux_scan_ctx c = {.s = s, .home = home};

	/* An absolute (or ~/) global hooksPath runs for every repository on the host, one
	 * in the workspace or not: guarded even where the walk found no repository. */
	const char *hooks = linux_scan_git_global_hooks(&c);
	if (hooks[0] == '/' || hooks[0] == '~')
		each_expansion(&c, NULL, hooks, program_one, NULL);
	/* init.templateDir: git init and clone on the host copy its hooks into each new
	 * repository and run them (review 22: a home workspace planted post-checkout in
	 * ~/.git-templates/hooks). A relative one depends on where git runs: not taken. */
	const char *t = s->git_global_templ;
	if (t[0] == '/' || t[0] == '~')
		each_expansion(&c, NULL, t, program_one, NULL);
	/* The global and system configs $GIT_CONFIG_GLOBAL / $GIT_CONFIG_SYSTEM name are
	 * what git reads instead of ~/.gitconfig and /etc/gitconfig: read-only as those. */
	for (size_t i = 0; i < 2; i++) {
		const char *v = getenv(git_config_env[i]);
		if (v && v[0] == '/')
			guard_or_missing(&c, v);
	}
}

static bool dotgit_holds(void *ctx, const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), ".git/%s", name);
	return faccessat(*(const int *)ctx, path, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

bool linux_scan_dotgit_is_gitdir(int dfd)
{
	return policy_gitdir_holds(dotgit_holds, &dfd);
}
