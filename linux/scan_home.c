/* The home persistence set in the launch scan. A workspace that is the home (or holds
 * it) makes the whole home writable, a writable root or a link can make part of it
 * writable; what in it runs code later on the host (the set is policy's:
 * policy/homeset.c) stays read-only wherever it lands in a writable tree: each entry
 * that exists is guarded like a guard name (a read-only bind onto itself), each
 * missing one is handed to the creation broker, which refuses making it and making a
 * link or a rename on the way to it (its directories may be missing too:
 * ~/.config/systemd/user in a home without ~/.config/systemd). The nearest directory
 * that exists is pinned, so it cannot be renamed away and rebuilt. */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "linux/scan_int.h"

struct home_walk {
	struct linux_scan *s;
	const char *home;
};

static bool in_writable(const struct linux_scan *s, const char *path)
{
	return linux_paths_beneath_any(path, &s->writable) &&
	       !linux_paths_beneath_any(path, &s->masked);
}

/* A missing entry: `at` is the first name that does not exist, tail what follows. */
static void add_missing(struct linux_scan *s, struct linux_paths *to, const char *at,
			const char *tail)
{
	char target[PATH_MAX], parent[PATH_MAX], joined[PATH_MAX + 1], t[PATH_MAX];
	const char *sl = strrchr(at, '/'), *why;
	int rc;

	/* The tail without empty and "." names (a PATH entry's "bin/", "x//bin", what a
	 * link's target leaves): the broker takes plain names only. After a "..", only
	 * the first missing name: nothing beyond it can be foretold once it exists (a
	 * link made there sends the rest anywhere; review 9: ~/.vimrc -> gone/../x). */
	if (!in_writable(s, at))
		return;
	if (snprintf(joined, sizeof(joined), "/%s", tail) >= (int)sizeof(joined) ||
	    (rc = policy_path_normalise(joined, false, t, sizeof(t), &why)) == -ENAMETOOLONG) {
		linux_paths_add(&s->too_long, at);
		return;
	}
	if (rc == -EINVAL)
		t[0] = t[1] = '\0';
	if (snprintf(target, sizeof(target), "%s%s", at, t[1] ? t : "") >= (int)sizeof(target)) {
		linux_paths_add(&s->too_long, at);
		return;
	}
	linux_paths_add(to, target);
	/* Its directory exists: pinned (a mount point cannot be renamed away). */
	if (sl && sl != at) {
		snprintf(parent, sizeof(parent), "%.*s", (int)(sl - at), at);
		if (in_writable(s, parent))
			linux_paths_add(&s->pinned, parent);
	}
}

/* -ENOTDIR: a name on the way is no directory (a file a command made where one would
 * go: ~/.config/gh as a file, to be swapped for a directory at the next launch). The
 * entry is missing from that name on: real becomes it, tail what follows. */
static bool missing_from_file(char *real, char *tail, size_t tn)
{
	char rest[PATH_MAX];
	struct stat st;

	for (char *sl = strchr(real + 1, '/');; sl = strchr(sl + 1, '/')) {
		if (sl)
			*sl = '\0';
		if (lstat(real, &st) == 0 && !S_ISDIR(st.st_mode)) {
			if (snprintf(rest, sizeof(rest), "%s%s%s", sl ? sl + 1 : "",
				     sl && *tail ? "/" : "", tail) >= (int)sizeof(rest))
				return false;
			snprintf(tail, tn, "%s", rest);
			return true;
		}
		if (!sl)
			return false;
		*sl = '/';
	}
}

/* A missing entry as resolving found it (-ENOENT, or -ENOTDIR: a file on the way). */
static void add_unresolved(struct linux_scan *s, struct linux_paths *to, int rc, char *real,
			   char *tail, size_t tn)
{
	if (rc == -ENOENT || (rc == -ENOTDIR && missing_from_file(real, tail, tn)))
		add_missing(s, to, real, tail);
}

/* A file of the set outside every writable tree that has another name (a hard link)
 * on the file system of one (review 22: ~/.config/fish/config.fish linked to
 * ~/dotfiles/fish/config.fish, the dotfiles the workspace): where that name is cannot
 * be told without walking the file system, so it is said (linux_scan_say_links);
 * inside a writable tree such a file refuses the launch (scan_pin.c). */
static bool same_fs_as_writable(const struct linux_scan *s, const char *path)
{
	struct stat st, wt;

	if (lstat(path, &st) < 0)
		return false;
	for (size_t i = 0; i < s->writable.n; i++)
		if (stat(s->writable.v[i], &wt) == 0 && wt.st_dev == st.st_dev)
			return true;
	return false;
}

static void other_names(struct linux_scan *s, const char *real)
{
	struct stat st;

	if (!linux_scan_links_seen(s, real) && lstat(real, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_nlink > 1 && same_fs_as_writable(s, real))
		linux_paths_add(&s->home_hardlinks, real);
}

/* A link inside an entry that is a directory (scan_links.c): what it leads to is the
 * entry's, guarded where it lands in a writable tree, kept from being made there when
 * missing. */
static void inner_link(struct linux_scan *s, const char *link, int rc, char *real, char *tail,
		       size_t tn, void *arg)
{
	(void)arg;
	if (rc == 1) { /* a file in the entry with another name */
		if (in_writable(s, real))
			return; /* (the entry's guard refuses it there: scan_pin.c) */
		other_names(s, real);
		return;
	}
	if (rc == -ENAMETOOLONG)
		linux_paths_add(&s->too_long, link);
	else if (rc == 0 && in_writable(s, real)) {
		linux_paths_add(&s->guarded, real);
		linux_paths_add(&s->home_guarded, real); /* (review 32: nvim/init.lua's dir) */
		if (in_writable(s, link)) /* and the link's own name (.config/nvim/init.lua) */
			linux_paths_add(&s->home_guarded, link);
	} else if (rc == 0) /* what it leads to, outside: a twin may be inside (review 24) */
		other_names(s, real);
	else if (rc == -ENOENT || rc == -ENOTDIR)
		add_unresolved(s, &s->home_missing, rc, real, tail, tn);
	else if (rc == -ELOOP && in_writable(s, link)) {
		linux_paths_add(&s->dangling, link);
		linux_paths_add(&s->dangling_at, "");
	}
}

/* The stores uv, pnpm and bun hard-link from (policy; not the other caches, review
 * 25): their files have other names by design, in the projects' environments too, so
 * the launch's hard-link refusal (scan_pin.c) leaves them out; docs/sandbox.md says
 * what that lets a project's copy change. */
static void add_linked_stores(struct linux_scan *s, const char *home)
{
	const char *const *st;
	char abs[PATH_MAX];
	size_t n;

	st = policy_home_linked_stores(&n);
	for (size_t i = 0; i < n; i++)
		if (snprintf(abs, sizeof(abs), "%s/%s", home, st[i]) < (int)sizeof(abs))
			linux_paths_add(&s->linked_stores, abs);
}

static int one_entry(const char *rel, const char *why, void *arg)
{
	struct home_walk *w = arg;
	char abs[PATH_MAX], real[PATH_MAX], tail[PATH_MAX];
	int rc;

	(void)why;
	if (snprintf(abs, sizeof(abs), "%s/%s", strcmp(w->home, "/") ? w->home : "", rel) >=
	    (int)sizeof(abs)) {
		linux_paths_add(&w->s->too_long, abs); /* (cut short: for the message) */
		return 0;
	}
	tail[0] = '\0';
	rc = linux_scan_resolve_tail(w->s, abs, real, sizeof(real), true, tail, sizeof(tail));
	/* A directory: the links in it lead where the entry's files are (not a cache's:
	 * read-only whole, its links among its own files); its files with another name
	 * matter only on a writable tree's file system. */
	if (rc == 0 && !policy_home_cache_entry(rel)) {
		/* (dotfile managers' territory: the PATH directories and tool trees hold
		 * many files, each a call; their own entries are what runs) */
		int depth = policy_home_links_depth(rel);
		w->s->links_files = depth > 1 && same_fs_as_writable(w->s, real);
		linux_scan_inner_links(w->s, real, depth, inner_link, NULL);
		w->s->links_files = false;
	}
	if (rc == -ENAMETOOLONG) /* where it leads cannot be told (review 11) */
		linux_paths_add(&w->s->too_long, abs);
	else if (rc == 0 && in_writable(w->s, real)) {
		linux_paths_add(&w->s->guarded, real);
		linux_paths_add(&w->s->home_guarded, real);
	} else if (rc == 0)
		other_names(w->s, real);
	else if (rc == -ENOENT || rc == -ENOTDIR)
		add_unresolved(w->s, &w->s->home_missing, rc, real, tail, sizeof(tail));
	else if (rc == -ELOOP) {
		/* A loop on the way: refused by linux_scan_pin when inside a writable tree. */
		linux_paths_add(&w->s->dangling, abs);
		linux_paths_add(&w->s->dangling_at, "");
	}
	/* and its own name, a link (~/.vimrc -> dotfiles/vimrc): nothing is made beside
	 * it either (review 32) */
	if (rc == 0 && strcmp(abs, real) != 0 && in_writable(w->s, abs))
		linux_paths_add(&w->s->home_guarded, abs);
	return 0;
}

/* A prefix row (policy_home_prefixes) in dir (relative to w->home): each name there
 * that starts with the prefix is an entry (guarded, its links followed, as one_entry
 * does), and where the directory lands in a writable tree, dir/prefix goes to the
 * broker, which refuses making any such name there (from the first missing directory
 * on when dir is missing too: ~/.cache not made yet). */
static int one_prefix(const char *dir, const char *prefix, const char *why, void *arg)
{
	struct home_walk *w = arg;
	struct linux_paths names = {0};
	char abs[PATH_MAX], real[PATH_MAX], tail[PATH_MAX], rel[PATH_MAX];
	size_t tl;
	int rc;

	if (snprintf(abs, sizeof(abs), "%s%s%s", strcmp(w->home, "/") ? w->home : "",
		     dir[0] ? "/" : "", dir) >= (int)sizeof(abs)) {
		linux_paths_add(&w->s->too_long, abs);
		return 0;
	}
	tail[0] = '\0';
	rc = linux_scan_resolve_tail(w->s, abs[0] ? abs : "/", real, sizeof(real), true, tail,
				     sizeof(tail));
	if (rc == 0 && linux_scan_memo_names(w->s, real, prefix, &names) == 0)
		for (size_t i = 0; i < names.n; i++)
			if (snprintf(rel, sizeof(rel), "%s%s%s", dir, dir[0] ? "/" : "",
				     names.v[i]) < (int)sizeof(rel))
				one_entry(rel, why, w);
	linux_paths_free(&names);
	if (rc == 0 && snprintf(abs, sizeof(abs), "%s/%s", strcmp(real, "/") ? real : "", prefix) <
			   (int)sizeof(abs))
		add_missing(w->s, &w->s->home_prefix, abs, "");
	else if (rc == 0 || rc == -ENAMETOOLONG)
		linux_paths_add(&w->s->too_long, abs);
	else if ((rc == -ENOENT || rc == -ENOTDIR) &&
		 (tl = strlen(tail)) + strlen(prefix) + 2 < sizeof(tail)) {
		snprintf(tail + tl, sizeof(tail) - tl, "%s%s", tl ? "/" : "", prefix);
		add_unresolved(w->s, &w->s->home_prefix, rc, real, tail, sizeof(tail));
	} else if (rc == -ELOOP) {
		linux_paths_add(&w->s->dangling, abs);
		linux_paths_add(&w->s->dangling_at, "");
	}
	return 0;
}

/* The set's entries and its prefix rows for one home. */
static int walk_home(struct home_walk *w, const char *path, const struct policy_xdg *xdg)
{
	int rc = policy_home_set_each_xdg(w->home, path, xdg, one_entry, w);

	return rc ? rc : policy_home_prefix_each_xdg(w->home, xdg, one_prefix, w);
}

/* The floor's entries and sandbox.protectedPaths that do not exist, where they would
 * land in a writable tree (the home as the workspace; a link in the home into it):
 * masked only where they exist, the command could otherwise make one, a hard link to a
 * file of its own that the user's next write to ~/.netrc fills in place, or a
 * ~/.kube/config whose exec plugin the host's kubectl runs. Kept from being made, as
 * the home set's missing entries are. */
void linux_scan_protected_missing(struct linux_scan *s)
{
	const struct linux_paths *p = &s->floor_unmade; /* the candidates (scan.c) */
	char real[PATH_MAX], tail[PATH_MAX];

	linux_paths_free(&s->floor_missing);
	for (size_t i = 0; s->writable.n > 0 && i < p->n; i++) {
		tail[0] = '\0';
		int rc = linux_scan_resolve_tail(s, p->v[i], real, sizeof(real), true, tail,
						 sizeof(tail));
		add_unresolved(s, &s->floor_missing, rc, real, tail, sizeof(tail));
	}
	linux_paths_sort_unique(&s->floor_missing);
}

/* A PATH entry that reaches into a resolved home other than by its name: through a
 * link (/opt/tools -> ~/tools, /usr/local/bin -> ~/bin) or a ".." (~/a/../tools/bin,
 * which a link planted at ~/a would send anywhere). policy's set takes the entries
 * named plainly under the home; these are judged where they lead, as the kernel
 * resolves them: one that exists is guarded where it lands in a writable tree; one
 * that does not is kept from being made from its first missing name on, the whole
 * name and what follows (after a "..", only that first name: nothing beyond it can
 * be predicted once it exists). */
static void path_entry_at(struct linux_scan *s, char *abs, const char *const *homes, size_t n_homes)
{
	char real[PATH_MAX], tail[PATH_MAX];
	int rc;

	tail[0] = '\0';
	real[0] = '\0';
	rc = linux_scan_resolve_tail(s, abs, real, sizeof(real), true, tail, sizeof(tail));
	if (rc == -ENAMETOOLONG)
		linux_paths_add(&s->too_long, abs);
	for (size_t i = 0; i < n_homes; i++) {
		if (!homes[i] || !linux_path_beneath(real, homes[i]) || !strcmp(real, homes[i]))
			continue;
		if (rc == 0 && in_writable(s, real))
			linux_paths_add(&s->guarded, real);
		else if (rc == -ENOENT || rc == -ENOTDIR)
			add_unresolved(s, &s->home_missing, rc, real, tail, sizeof(tail));
		return;
	}
}

/* (bash expands a leading "~" in a PATH entry, "~/x" with the home and "~user/x" with
 * that user's: review 22, 24; "~/x" under each home, as policy's set takes the plain
 * ones) */
static void path_entry(struct linux_scan *s, const char *entry, size_t len,
		       const char *const *homes, size_t n_homes)
{
	char abs[PATH_MAX], named[PATH_MAX], user[256], pwbuf[4096];
	struct passwd pw, *got = NULL;
	const char *rest;

	if (len >= sizeof(abs)) {
		linux_paths_add(&s->too_long, "a PATH entry");
		return;
	}
	memcpy(named, entry, len);
	named[len] = '\0';
	if (named[0] == '/') {
		path_entry_at(s, named, homes, n_homes);
		return;
	}
	if (!policy_path_tilde(named, user, sizeof(user), &rest) || !rest[0])
		return; /* (the home itself: the documented limit) */
	for (size_t i = 0; !user[0] && i < n_homes; i++)
		if (homes[i] &&
		    snprintf(abs, sizeof(abs), "%s/%s", homes[i], rest) < (int)sizeof(abs))
			path_entry_at(s, abs, homes, n_homes);
	if (user[0] && getpwnam_r(user, &pw, pwbuf, sizeof(pwbuf), &got) == 0 && got &&
	    got->pw_dir[0] == '/' &&
	    snprintf(abs, sizeof(abs), "%s/%s", got->pw_dir, rest) < (int)sizeof(abs))
		path_entry_at(s, abs, homes, n_homes);
}

static void path_entries(struct linux_scan *s, const char *path_env, const char *const *homes,
			 size_t n_homes)
{
	for (const char *p = path_env; p && *p;) {
		size_t len = strcspn(p, ":");
		path_entry(s, p, len, homes, n_homes);
		p += len;
		p += *p == ':';
	}
}

/* An XDG directory where it leads (into out; "" when it cannot be told): one that does
 * not exist yet, through a link or a ".." (review 9: ~/cfg -> ws/cfg not made yet), as
 * it would be made; one whose way goes on with a ".." past a missing name cannot be
 * foretold: that name is kept from being made (add_missing), and out is the name
 * lexically cleaned (as policy_xdg_leads, the hook's). True when out differs. */
static bool xdg_resolved(struct linux_scan *s, const char *named, char *out)
{
	char tail[PATH_MAX];
	const char *why;
	size_t len;
	int rc;

	out[0] = tail[0] = '\0';
	if (!named || named[0] != '/')
		return false;
	rc = linux_scan_resolve_tail(s, named, out, PATH_MAX, true, tail, sizeof(tail));
	if (rc == -ENAMETOOLONG)
		linux_paths_add(&s->too_long, named);
	/* a file on the way (~/f/x/../c, ~/f a file: review 14): missing from that name on */
	if (rc == -ENOTDIR && missing_from_file(out, tail, sizeof(tail)))
		rc = -ENOENT;
	if (rc == -ENOENT && (strstr(tail, "..") || strstr(out, ".."))) {
		/* and where it leads once that name is a plain directory (policy_xdg_leads) */
		add_unresolved(s, &s->home_missing, rc, out, tail, sizeof(tail));
		if (policy_path_normalise(named, true, out, PATH_MAX, &why) < 0)
			out[0] = '\0';
	} else if (rc == -ENOENT && tail[0]) {
		len = strlen(out);
		if (snprintf(out + len, PATH_MAX - len, "/%s", tail) >= (int)(PATH_MAX - len))
			out[0] = '\0';
	} else if (rc != 0 && rc != -ENOENT) {
		out[0] = '\0';
	}
	return out[0] && strcmp(out, named) != 0;
}

/* An XDG list ($XDG_CONFIG_DIRS, $XDG_DATA_DIRS) with each absolute entry where it
 * leads (xdg_resolved: links pinned, a missing name a ".." follows kept from being
 * made): malloc'd, or NULL (none, or out of memory: the named list is judged then).
 * *other is set when an entry leads elsewhere than named. */
static char *list_resolved(struct linux_scan *s, const char *list, bool *other)
{
	char e[PATH_MAX], out[PATH_MAX];
	char *r = NULL;
	size_t n = 0;
	FILE *m = list ? open_memstream(&r, &n) : NULL;

	for (const char *p = list; m && *p;) {
		size_t len = strcspn(p, ":");
		if (p[0] == '/' && len >= sizeof(e))
			linux_paths_add(&s->too_long, "an XDG list's entry");
		else if (p[0] == '/') {
			memcpy(e, p, len);
			e[len] = '\0';
			*other |= xdg_resolved(s, e, out);
			fprintf(m, "%s%s", ftell(m) ? ":" : "", out[0] ? out : e);
		}
		p += len;
		p += *p == ':';
	}
	if (m && fclose(m) != 0) {
		free(r);
		return NULL;
	}
	return r;
}

/* A walk of the set that an XDG directory made longer than PATH_MAX stopped short. */
static void walked(struct linux_scan *s, int rc)
{
	if (rc == -ENAMETOOLONG)
		linux_paths_add(&s->too_long, "an XDG directory's entry");
}

void linux_scan_home_set(const struct linux_launch *l, struct linux_scan *s)
{
	char reals[2][PATH_MAX];
	const char *resolved[2] = {NULL, NULL};
	const char *homes[] = {l->pw_home, l->env_home};
	char real[PATH_MAX], xr[2][PATH_MAX];
	const char *xv[2] = {l->caller_xdg_config, l->caller_xdg_data};

	bool other = false;

	/* The XDG directories as named and where they lead (review 8: one named through
	 * a link or a ".." into the home took its git config, autostart and user services
	 * out of the set; review 9: one named in the home that leads out of it must keep
	 * them too): the set is judged once more with them resolved, when that differs. */
	linux_paths_free(&s->home_missing);
	linux_paths_free(&s->home_prefix);
	linux_paths_free(&s->home_guarded);
	for (int k = 0; k < 2; k++)
		other |= xdg_resolved(s, xv[k], xr[k]);
	/* and each entry of the XDG lists (review 12: one with a ".." was not judged) */
	/* and each place $ZDOTDIR may be (review 16) */
	char *lists[3] = {list_resolved(s, l->caller_xdg_config_dirs, &other),
			  list_resolved(s, l->caller_xdg_data_dirs, &other),
			  list_resolved(s, l->caller_zdotdir, &other)};
	const struct policy_xdg xdg = {xv[0],
				       xv[1],
				       l->caller_xdg_config_dirs,
				       l->caller_xdg_data_dirs,
				       l->caller_zdotdir,
				       policy_caches_host(l->policy)};
	const struct policy_xdg xdg_real = {xr[0][0] ? xr[0] : xv[0],
					    xr[1][0] ? xr[1] : xv[1],
					    lists[0] ? lists[0] : l->caller_xdg_config_dirs,
					    lists[1] ? lists[1] : l->caller_xdg_data_dirs,
					    lists[2] ? lists[2] : l->caller_zdotdir,
					    policy_caches_host(l->policy)};

	for (size_t i = 0; i < 2; i++) {
		const char *h = homes[i];
		struct home_walk w = {s, h};

		if (!h || h[0] != '/' || (i == 1 && l->pw_home && strcmp(h, l->pw_home) == 0))
			continue;
		/* Every entry is judged where it leads: a writable tree that is the home or
		 * holds it, one inside it (writableRoots: [~/.cargo], a workspace in the
		 * home), or one a link in the home leads into (~/.config -> ~/dotfiles/config
		 * with the dotfiles as the workspace). Only what lands in a writable tree is
		 * guarded or kept from being made. */
		if (!linux_scan_realpath(s, h, real) || s->writable.n == 0)
			continue;
		resolved[i] = strcpy(reals[i], real);
		add_linked_stores(s, real);
		walked(s, walk_home(&w, l->caller_path, &xdg));
		if (strcmp(real, h) != 0) { /* PATH may name it either way */
			w.home = real;
			walked(s, walk_home(&w, l->caller_path, &xdg));
		}
		if (other) {
			w.home = real;
			walked(s, walk_home(&w, l->caller_path, &xdg_real));
		}
	}
	/* An XDG directory beneath no home (or the home itself): its entries there, as
	 * named and where it leads. */
	const char *all[] = {homes[0], homes[1], resolved[0], resolved[1]};
	struct home_walk top = {s, "/"};
	if (s->writable.n > 0) {
		walked(s, policy_home_set_each_xdg_outside(all, 4, &xdg, one_entry, &top));
		walked(s, policy_home_prefix_each_xdg_outside(all, 4, &xdg, one_prefix, &top));
		if (other) {
			walked(s, policy_home_set_each_xdg_outside(all, 4, &xdg_real, one_entry,
								   &top));
			walked(s, policy_home_prefix_each_xdg_outside(all, 4, &xdg_real, one_prefix,
								      &top));
		}
	}
	path_entries(s, l->caller_path, resolved, 2);
	linux_paths_sort_unique(&s->home_missing);
	linux_paths_sort_unique(&s->home_prefix);
	free(lists[0]);
	free(lists[1]);
	free(lists[2]);
}
