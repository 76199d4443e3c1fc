/* The home persistence set: what in a home runs code later, outside the sandbox, when
 * the host's next shell, login, git, editor, desktop session or tool starts. When the
 * home is the workspace (or a writable tree holds it), these stay read-only and cannot
 * be created; the rest of the home is the command's to change. The one list: the
 * launch scan (linux/scan_home.c), --dry-run's reasons (plan/), `halo-run hook`'s file
 * tools (hook/files.c) and `halo-run verify` all take it from here. The guard's own
 * names (policy/guard.c: agent and IDE directories) belong to it too; the table
 * itself is policy/homeset_table.c. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "policy/policy_int.h"

/* `dir` lexically beneath `home` (not the home itself): its part below the home
 * (path_rel drops the slashes and "." components it may start with). */
static const char *below_home(const char *dir, size_t len, const char *home)
{
	size_t hl = strlen(home);

	while (hl > 1 && home[hl - 1] == '/')
		hl--;
	if (len <= hl + 1 || strncmp(dir, home, hl) != 0 || dir[hl] != '/')
		return NULL;
	return dir + hl + 1;
}

/* A PATH entry as a relative name: empty and "." components dropped (the same
 * directory to the kernel, whatever links there are: review, $HOME//tools/bin and
 * $HOME/./tools/bin left ~/tools/bin writable), none ".." (which a link on the way
 * would make another place), something left, and not longer than out. */
static bool path_rel(const char *rel, size_t len, char *out, size_t n)
{
	size_t k = 0, o = 0;

	for (size_t i = 0; i < len; i = k + 1) {
		k = i;
		while (k < len && rel[k] != '/')
			k++;
		if (k == i || (k - i == 1 && rel[i] == '.'))
			continue;
		if (k - i == 2 && rel[i] == '.' && rel[i + 1] == '.')
			return false;
		if (o + (o > 0) + (k - i) >= n)
			return false;
		if (o > 0)
			out[o++] = '/';
		memcpy(out + o, rel + i, k - i);
		o += k - i;
	}
	out[o] = '\0';
	return o > 0;
}

/* An entry under ~/.config also where $XDG_CONFIG_HOME puts it, and one under
 * ~/.local/share where $XDG_DATA_HOME does (git, fish, systemd, neovim, D-Bus and the
 * rest read there when it is set): xrel[k] is that directory relative to the home. */
static const char *const xdg_base[2] = {".config", ".local/share"};
enum { XDG_ZDOTDIR = 2 }; /* each_xdg_dir's kind for $ZDOTDIR */

static int xdg_one(char xrel[2][POLICY_PATH_MAX], const struct policy_home_entry *h,
		   int (*fn)(const char *rel, const char *why, void *arg), void *arg)
{
	char rel[POLICY_PATH_MAX];

	for (int k = 0; k < 2; k++) {
		size_t bl = strlen(xdg_base[k]);
		int rc;

		if (!xrel[k][0] || strncmp(h->rel, xdg_base[k], bl) != 0 || h->rel[bl] != '/' ||
		    strcmp(xrel[k], xdg_base[k]) == 0)
			continue;
		/* past PATH_MAX: an entry that cannot be judged fails the walk (review 11:
		 * one left out was writable) */
		if (snprintf(rel, sizeof(rel), "%s/%s", xrel[k], h->rel + bl + 1) >=
		    (int)sizeof(rel))
			return -ENAMETOOLONG;
		if ((rc = fn(rel, h->why, arg)) != 0)
			return rc;
	}
	return 0;
}

int policy_home_set_each(const char *home, const char *path_env,
			 int (*fn)(const char *rel, const char *why, void *arg), void *arg)
{
	return policy_home_set_each_xdg(home, path_env, NULL, fn, arg);
}

/* Each XDG directory xdg names, with its kind k (0: config, 1: data, XDG_ZDOTDIR):
 * $XDG_CONFIG_HOME, $XDG_DATA_HOME, $ZDOTDIR, then each absolute entry of
 * $XDG_CONFIG_DIRS and $XDG_DATA_DIRS (systemd's user units, D-Bus services, desktop
 * entries and autostart are read from those lists too). */
static int each_xdg_dir(const struct policy_xdg *xdg,
			int (*one)(const char *dir, size_t len, int k, void *ctx), void *ctx)
{
	const char *single[2] = {xdg->config, xdg->data},
		   *lists[2] = {xdg->config_dirs, xdg->data_dirs};
	int rc;

	for (int k = 0; k < 2; k++)
		if (single[k] && single[k][0] == '/' &&
		    (rc = one(single[k], strlen(single[k]), k, ctx)))
			return rc;
	for (const char *p = xdg->zdotdir; p && *p;) { /* every place it may be */
		size_t len = strcspn(p, ":");
		if (p[0] == '/' && (rc = one(p, len, XDG_ZDOTDIR, ctx)) != 0)
			return rc;
		p += len;
		p += *p == ':';
	}
	for (int k = 0; k < 2; k++)
		for (const char *p = lists[k]; p && *p;) {
			size_t len = strcspn(p, ":");
			if (p[0] == '/' && (rc = one(p, len, k, ctx)) != 0)
				return rc;
			p += len;
			p += *p == ':';
		}
	return 0;
}

struct xdg_walk {
	const char *home;	  /* policy_home_set_each_xdg's */
	const char *const *homes; /* policy_home_set_each_xdg_outside's */
	size_t n_homes;
	int (*fn)(const char *rel, const char *why, void *arg);
	void *arg;
};

/* zsh's start-up files, their compiled twins, compinit's dump and the plug-in
 * managers' files that go beside them (prezto, zim, antidote, powerlevel10k write
 * theirs to ${ZDOTDIR:-$HOME}): the home's entries whose name starts with ".z", and
 * .p10k.zsh, which zsh reads from $ZDOTDIR instead of the home when it is set (review
 * 16: ZDOTDIR=~/dotfiles/zsh left them writable in a home workspace). */
static bool zdotdir_entry(const char *rel)
{
	return strncmp(rel, ".z", 2) == 0 || strcmp(rel, ".p10k.zsh") == 0;
}

/* Those entries where $ZDOTDIR (xrel, relative) puts them. */
static int zdotdir_entries(const char *xrel, const struct xdg_walk *w)
{
	char rel[POLICY_PATH_MAX];
	int rc;

	size_t n;
	const struct policy_home_entry *home_set = policy_home_set(&n);

	for (size_t i = 0; i < n; i++) {
		if (!zdotdir_entry(home_set[i].rel))
			continue;
		if (snprintf(rel, sizeof(rel), "%s/%s", xrel, home_set[i].rel) >= (int)sizeof(rel))
			return -ENAMETOOLONG;
		if ((rc = w->fn(rel, home_set[i].why, w->arg)) != 0)
			return rc;
	}
	return 0;
}

/* The set's entries under the base of kind k, where xrel (relative) puts them. */
static int xdg_entries(const char *xrel, int k, const struct xdg_walk *w)
{
	char pair[2][POLICY_PATH_MAX] = {"", ""};
	size_t n;
	const struct policy_home_entry *home_set = policy_home_set(&n);
	int rc;

	if (k == XDG_ZDOTDIR)
		return zdotdir_entries(xrel, w);
	snprintf(pair[k], sizeof(pair[k]), "%s", xrel);
	for (size_t i = 0; i < n; i++)
		if ((rc = xdg_one(pair, &home_set[i], w->fn, w->arg)) != 0)
			return rc;
	return 0;
}

/* dir (len bytes) relative to home in xrel: 1; 0 when it is not beneath it (or names
 * nothing there); -ENAMETOOLONG. */
static int rel_below(const char *dir, size_t len, const char *home, char xrel[POLICY_PATH_MAX])
{
	const char *r = below_home(dir, len, home);

	if (len >= POLICY_PATH_MAX)
		return -ENAMETOOLONG;
	return r && path_rel(r, len - (size_t)(r - dir), xrel, POLICY_PATH_MAX);
}

/* One beneath the home: its entries relative to the home. */
static int home_dir_one(const char *dir, size_t len, int k, void *ctx)
{
	const struct xdg_walk *w = ctx;
	char xrel[POLICY_PATH_MAX];
	int rc = rel_below(dir, len, w->home, xrel);

	return rc <= 0 ? rc : xdg_entries(xrel, k, w);
}

int policy_home_set_each_xdg(const char *home, const char *path_env, const struct policy_xdg *xdg,
			     int (*fn)(const char *rel, const char *why, void *arg), void *arg)
{
	size_t ng;
	const char *const *g = policy_guard_names(&ng);
	char rel[POLICY_PATH_MAX];
	const struct xdg_walk w = {home, NULL, 0, fn, arg};
	size_t n;
	const struct policy_home_entry *home_set = policy_home_set(&n);
	int rc;

	for (size_t i = 0; i < n; i++)
		if ((rc = fn(home_set[i].rel, home_set[i].why, arg)) != 0)
			return rc;
	size_t nc;
	const struct policy_home_entry *caches = policy_home_caches(&nc);
	for (size_t i = 0; (!xdg || !xdg->host_caches) && i < nc; i++)
		if ((rc = fn(caches[i].rel, caches[i].why, arg)) != 0)
			return rc;
	if (xdg && home && home[0] == '/' && (rc = each_xdg_dir(xdg, home_dir_one, (void *)&w)))
		return rc;
	for (size_t i = 0; i < ng; i++)
		if ((rc = fn(g[i],
			     "the persistence guard's name (agent, IDE or shell "
			     "configuration)",
			     arg)) != 0)
			return rc;
	for (const char *p = path_env; home && home[0] == '/' && p && *p;) {
		size_t len = strcspn(p, ":");
		/* bash expands a "~/" in a PATH entry with the home when it looks a command
		 * up (review 20: PATH=~/mybin:... ran a planted ~/mybin/ls); dash and zsh
		 * take it literally, which this cannot know: guarded under each home. */
		const char *r = p[0] == '/'				? below_home(p, len, home)
				: p[0] == '~' && len > 1 && p[1] == '/' ? p + 1
									: NULL;

		if (r && path_rel(r, len - (size_t)(r - p), rel, sizeof(rel)) &&
		    (rc = fn(rel, "a directory on the caller's PATH", arg)) != 0)
			return rc;
		p += len;
		p += *p == ':';
	}
	return 0;
}

/* An XDG directory outside every home (XDG_CONFIG_HOME=/data/cfg): git, systemd, the
 * desktop and the rest read there, so each ~/.config (~/.local/share) entry is an entry
 * there too (review 9: git's global config, autostart and user services there were
 * writable from a workspace that held it). fn gets each relative to "/". One beneath a
 * home is that home's (policy_home_set_each_xdg); one that is a home ($HOME itself)
 * is taken here. */
/* dir (len bytes) relative to "/" in xrel when it is beneath none of the homes: 1;
 * 0 when it is beneath one (or names nothing); -ENAMETOOLONG. */
static int rel_outside(const char *dir, size_t len, const char *const *homes, size_t n_homes,
		       char xrel[POLICY_PATH_MAX])
{
	if (len >= POLICY_PATH_MAX)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < n_homes; i++)
		if (homes[i] && homes[i][0] == '/' && below_home(dir, len, homes[i]))
			return 0;
	/* (a ".." in it: judged as it resolves, by the caller that resolves it) */
	return path_rel(dir + 1, len - 1, xrel, POLICY_PATH_MAX) && xrel[0];
}

static int outside_dir_one(const char *dir, size_t len, int k, void *ctx)
{
	const struct xdg_walk *w = ctx;
	char xrel[POLICY_PATH_MAX];
	int rc = rel_outside(dir, len, w->homes, w->n_homes, xrel);

	return rc <= 0 ? rc : xdg_entries(xrel, k, w);
}

int policy_home_set_each_xdg_outside(const char *const *homes, size_t n_homes,
				     const struct policy_xdg *xdg,
				     int (*fn)(const char *rel, const char *why, void *arg),
				     void *arg)
{
	const struct xdg_walk w = {NULL, homes, n_homes, fn, arg};

	return xdg ? each_xdg_dir(xdg, outside_dir_one, (void *)&w) : 0;
}

bool policy_home_prefix_name(const char *name, const char *prefix)
{
	return strncasecmp(name, prefix, strlen(prefix)) == 0;
}

struct prefix_walk {
	const char *home;
	const char *const *homes;
	size_t n_homes;
	policy_home_prefix_fn fn;
	void *arg;
};

/* The home's rows that go beside zsh's start-up files, where $ZDOTDIR (xrel) puts them. */
static int prefix_zdotdir(const char *xrel, const struct prefix_walk *w)
{
	size_t n;
	const struct policy_home_prefix *p = policy_home_prefixes(&n);
	int rc;

	for (size_t i = 0; i < n; i++)
		if (!p[i].dir[0] && zdotdir_entry(p[i].prefix) &&
		    (rc = w->fn(xrel, p[i].prefix, p[i].why, w->arg)) != 0)
			return rc;
	return 0;
}

static int prefix_home_dir(const char *dir, size_t len, int k, void *ctx)
{
	const struct prefix_walk *w = ctx;
	char xrel[POLICY_PATH_MAX];
	int rc = k == XDG_ZDOTDIR ? rel_below(dir, len, w->home, xrel) : 0;

	return rc <= 0 ? rc : prefix_zdotdir(xrel, w);
}

int policy_home_prefix_each_xdg(const char *home, const struct policy_xdg *xdg,
				policy_home_prefix_fn fn, void *arg)
{
	const struct prefix_walk w = {home, NULL, 0, fn, arg};
	size_t n;
	const struct policy_home_prefix *p = policy_home_prefixes(&n);
	int rc;

	for (size_t i = 0; i < n; i++)
		if ((rc = fn(p[i].dir, p[i].prefix, p[i].why, arg)) != 0)
			return rc;
	if (xdg && home && home[0] == '/')
		return each_xdg_dir(xdg, prefix_home_dir, (void *)&w);
	return 0;
}

/* A $ZDOTDIR beneath no home (as outside_dir_one). */
static int prefix_outside_dir(const char *dir, size_t len, int k, void *ctx)
{
	const struct prefix_walk *w = ctx;
	char xrel[POLICY_PATH_MAX];
	int rc = k == XDG_ZDOTDIR ? rel_outside(dir, len, w->homes, w->n_homes, xrel) : 0;

	return rc <= 0 ? rc : prefix_zdotdir(xrel, w);
}

int policy_home_prefix_each_xdg_outside(const char *const *homes, size_t n_homes,
					const struct policy_xdg *xdg, policy_home_prefix_fn fn,
					void *arg)
{
	const struct prefix_walk w = {NULL, homes, n_homes, fn, arg};

	return xdg ? each_xdg_dir(xdg, prefix_outside_dir, (void *)&w) : 0;
}

struct hit {
	const char *rel;
	const char *why;
	const char *cache; /* caches: host: the host cache rel lies in, or NULL */
};

/* `rel` (n long) at or beneath `dir`, by the path facts' case rule. */
static bool rel_within(const char *rel, const char *dir, size_t n)
{
	return policy_name_eqn(rel, dir, n) && (rel[n] == '\0' || rel[n] == '/');
}

static int hit_one(const char *rel, const char *why, void *arg)
{
	struct hit *h = arg;
	size_t n = strlen(rel);

	/* caches: host: an entry that holds a host cache (pnpm's home holds its store)
	 * leaves the cache to caches: host, which binds it writable (review 22). */
	if (h->cache && strlen(h->cache) > n && rel_within(h->cache, rel, n))
		return 0;
	/* At or beneath the entry, by the path facts' case rule. */
	if (policy_name_eqn(h->rel, rel, n) && (h->rel[n] == '\0' || h->rel[n] == '/')) {
		h->why = why;
		return 1;
	}
	return 0;
}

/* At or beneath a name in the row's directory that starts with its prefix. */
static int hit_prefix(const char *dir, const char *prefix, const char *why, void *arg)
{
	struct hit *h = arg;
	size_t n = strlen(dir);
	const char *name = h->rel + (n ? n + 1 : 0);

	if (n && (!policy_name_eqn(h->rel, dir, n) || h->rel[n] != '/'))
		return 0;
	if (!policy_home_prefix_name(name, prefix))
		return 0;
	h->why = why;
	return 1;
}

/* caches: host: the host cache row rel (relative to the home) lies in, or NULL. */
static const char *host_cache_of(const struct policy_xdg *xdg, const char *rel)
{
	size_t n;
	const struct policy_home_entry *c = policy_home_caches(&n);

	for (size_t i = 0; xdg && xdg->host_caches && i < n; i++)
		if (rel_within(rel, c[i].rel, strlen(c[i].rel)))
			return c[i].rel;
	return NULL;
}

const char *policy_home_set_hit(const char *home, const char *path_env, const char *abs,
				const char **entry)
{
	return policy_home_set_hit_xdg(home, path_env, NULL, abs, entry);
}

const char *policy_home_set_hit_xdg(const char *home, const char *path_env,
				    const struct policy_xdg *xdg, const char *abs,
				    const char **entry)
{
	struct hit h = {NULL, NULL, NULL};
	size_t hl;

	if (!home || home[0] != '/' || !abs)
		return NULL;
	hl = strlen(home);
	while (hl > 1 && home[hl - 1] == '/')
		hl--;
	if (!policy_name_eqn(abs, home, hl) || abs[hl] != '/')
		return NULL;
	h.rel = abs + hl + 1;
	while (*h.rel == '/')
		h.rel++;
	if (!*h.rel)
		return NULL;
	h.cache = host_cache_of(xdg, h.rel);
	if (policy_home_set_each_xdg(home, path_env, xdg, hit_one, &h) == -ENAMETOOLONG ||
	    (!h.why && policy_home_prefix_each_xdg(home, xdg, hit_prefix, &h) == -ENAMETOOLONG))
		h.why = POLICY_HOME_SET_TOO_LONG;
	if (h.why && entry)
		*entry = h.rel;
	return h.why;
}

const char *policy_home_set_hit_xdg_outside(const char *const *homes, size_t n_homes,
					    const struct policy_xdg *xdg, const char *abs)
{
	struct hit h = {NULL, NULL, NULL};

	if (!abs || abs[0] != '/')
		return NULL;
	h.rel = abs;
	while (*h.rel == '/')
		h.rel++;
	if (!*h.rel)
		return NULL;
	if (policy_home_set_each_xdg_outside(homes, n_homes, xdg, hit_one, &h) == -ENAMETOOLONG ||
	    (!h.why && policy_home_prefix_each_xdg_outside(homes, n_homes, xdg, hit_prefix, &h) ==
			   -ENAMETOOLONG))
		return POLICY_HOME_SET_TOO_LONG;
	return h.why;
}

bool policy_home_in_tree(const char *home, const char *tree)
{
	return home && home[0] == '/' && tree && policy_path_beneath(home, tree);
}

/* How deep the links inside an entry that is a directory are followed (linux/
 * scan_links.c, the hook's runner/hook_resolve.c): a PATH directory is read one level
 * deep by every shell, and every directory's own entries are what a tool opens by
 * name; below that, dotfile managers link files deep inside the config directories
 * (~/.config/nvim/lua/... -> ~/dotfiles/...), while the large trees of the set
 * (toolchains, plug-in stores, caches) hold links among their own files. */
int policy_home_links_depth(const char *rel)
{
	return strncmp(rel, ".config/", 8) == 0 ? 3 : 1;
}

bool policy_home_cache_entry(const char *rel)
{
	size_t n;
	const struct policy_home_entry *c = policy_home_caches(&n);

	for (size_t i = 0; i < n; i++)
		if (strcmp(rel, c[i].rel) == 0)
			return true;
	return false;
}
