/* `halo-run hook`'s view of where names lead, once per event (hook_cmd.c): protected
 * paths, the homes' persistence-set entries, the XDG directories and the PATH entries
 * that resolve elsewhere, judged as the sandbox judges them (linux/scan_home.c). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hook/hook.h"
#include "runner/runner_int.h"

/* The protected paths that resolve elsewhere (a symlink on the way), once per event. */
static int resolve_protected(const struct halo_policy *p, struct hook_ctx *c)
{
	char **real = calloc(p->protected_abs.n + 1, sizeof(*real));
	const char **of = calloc(p->protected_abs.n + 1, sizeof(*of));
	char buf[PATH_MAX];
	size_t n = 0;

	if (!real || !of) {
		free(real);
		free(of);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->protected_abs.n; i++) {
		const char *e = p->protected_abs.items[i];
		if (runner_hook_resolve(e, buf, sizeof(buf)) < 0 || strcmp(buf, e) == 0)
			continue;
		if (!(real[n] = strdup(buf)))
			break;
		of[n++] = e;
	}
	c->protected_real = (const char *const *)real;
	c->protected_of = of;
	c->n_protected_real = n;
	return 0;
}

/* The symlinks met on the ways judged below: the sandbox pins them (a link on the way
 * to a guarded name cannot be removed or replaced inside), so the hook refuses a write
 * or a delete of one too (review 11: the Codex hook let `*** Delete File` remove a link
 * on an XDG directory's way). */
struct link_rec {
	char **v;
	size_t n, cap;
	int err;
};

static int recording_link(void *ctx, const char *abs, char *buf, size_t n)
{
	struct link_rec *r = ctx;
	int rc = runner_hook_link_of(NULL, abs, buf, n);

	if (rc != 1 || r->err)
		return rc;
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->v[i], abs))
			return rc;
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 8;
		char **g = realloc(r->v, cap * sizeof(*g));
		if (!g)
			return r->err = -ENOMEM;
		r->v = g;
		r->cap = cap;
	}
	if (!(r->v[r->n] = strdup(abs)))
		return r->err = -ENOMEM;
	r->n++;
	return rc;
}

/* Where e leads (policy_path_leads, lstat and readlink a name), recording the links
 * met. */
static bool leads(struct link_rec *r, const char *e, char *out, size_t n)
{
	return policy_path_leads(e, recording_link, r, out, n, NULL) == 0;
}

struct home_links {
	struct link_rec *rec;
	const char *home;
	char **real, **of;
	size_t n, cap;
	int err;
	size_t seen; /* entries inner_links looked at, this event (LINKS_TOTAL) */
};

static int add_link(struct home_links *h, const char *buf, const char *abs);

/* The links inside an entry that is a directory, as the sandbox follows them
 * (linux/scan_links.c, the same bounds): what each leads to is judged by the link's
 * name in the entry (review 20: ~/.local/bin/black -> ../share/pipx/.../black was
 * read-only inside and writable to the harness's Write). */
#define LINKS_EACH  POLICY_LINKS_EACH /* linux/scan_links.c's bounds */
#define LINKS_TOTAL POLICY_LINKS_TOTAL

static void inner_links(struct home_links *h, const char *dir, const char *named, int depth,
			int max, size_t *budget)
{
	char path[PATH_MAX], name[PATH_MAX], to[PATH_MAX];
	struct dirent *de;
	DIR *d;

	if (depth >= max || *budget == 0 || h->seen >= LINKS_TOTAL || !(d = opendir(dir)))
		return;
	while (!h->err && (de = readdir(d)) != NULL && *budget > 0 && h->seen < LINKS_TOTAL) {
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, ".git"))
			continue;
		(*budget)--;
		h->seen++;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >=
			sizeof(path) ||
		    (size_t)snprintf(name, sizeof(name), "%s/%s", named, de->d_name) >=
			sizeof(name) ||
		    lstat(path, &st) < 0)
			continue;
		/* judged by its name through the entry (named), as the sandbox guards it */
		if (S_ISLNK(st.st_mode) && leads(h->rec, path, to, sizeof(to)) &&
		    strcmp(to, path)) {
			add_link(h, to, name);
			if (depth + 1 < max && stat(to, &st) == 0 && S_ISDIR(st.st_mode))
				inner_links(h, to, name, depth + 1, max, budget);
		} else if (S_ISDIR(st.st_mode)) {
			inner_links(h, path, name, depth + 1, max, budget);
		}
	}
	closedir(d);
}

static int home_link(const char *rel, const char *why, void *arg)
{
	struct home_links *h = arg;
	char abs[PATH_MAX], buf[PATH_MAX];
	struct stat st;

	(void)why;
	/* Where the kernel's walk leads, or its first missing name when a ".." follows
	 * it (~/.vimrc -> gone/../x: ~/gone, as the sandbox keeps it from being made). */
	/* (one not made yet too: review 10, ~/.config -> dots/config without git/ yet) */
	if ((size_t)snprintf(abs, sizeof(abs), "%s/%s", h->home, rel) >= sizeof(abs) ||
	    !leads(h->rec, abs, buf, sizeof(buf)))
		return 0;
	size_t budget = LINKS_EACH;
	if (!policy_home_cache_entry(rel) && stat(buf, &st) == 0 && S_ISDIR(st.st_mode))
		inner_links(h, buf, abs, 0, policy_home_links_depth(rel), &budget);
	return strcmp(abs, buf) == 0 ? h->err : add_link(h, buf, abs);
}

/* A prefix row's directory where it leads (named by it), and each name there that
 * starts with the prefix as an entry (home_link), as the sandbox finds them at launch
 * (linux/scan_home.c one_prefix; at most LINKS_EACH of them). */
static int prefix_link(const char *dir, const char *prefix, const char *why, void *arg)
{
	struct home_links *h = arg;
	char abs[PATH_MAX], to[PATH_MAX], rel[PATH_MAX];
	struct dirent *de;
	size_t found = 0;
	DIR *d;

	if ((size_t)snprintf(abs, sizeof(abs), "%s%s%s", h->home, dir[0] ? "/" : "", dir) >=
		sizeof(abs) ||
	    !leads(h->rec, abs, to, sizeof(to)))
		return 0;
	if (strcmp(abs, to) != 0 && add_link(h, to, abs) < 0)
		return h->err;
	if (!(d = opendir(to)))
		return 0;
	while (!h->err && found < LINKS_EACH && (de = readdir(d)) != NULL)
		if (policy_home_prefix_name(de->d_name, prefix) && ++found &&
		    (size_t)snprintf(rel, sizeof(rel), "%s%s%s", dir, dir[0] ? "/" : "",
				     de->d_name) < sizeof(rel))
			home_link(rel, why, h);
	closedir(d);
	return h->err;
}

/* real is where `of` leads. */
static int add_link(struct home_links *h, const char *buf, const char *abs)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 16;
		char **r = realloc(h->real, cap * sizeof(*r)), **o;
		if (r)
			h->real = r;
		if (!r || !(o = realloc(h->of, cap * sizeof(*o))))
			return h->err = -ENOMEM;
		h->of = o;
		h->cap = cap;
	}
	if (!(h->real[h->n] = strdup(buf)) || !(h->of[h->n] = strdup(abs))) {
		free(h->real[h->n]);
		return h->err = -ENOMEM;
	}
	h->n++;
	return 0;
}

/* The homes' persistence-set entries that are symlinks, resolved once per event. */
static int resolve_home_links(struct hook_ctx *c, struct link_rec *rec)
{
	struct home_links h = {.rec = rec};
	const char *homes[] = {c->home, c->env_home};
	const struct policy_xdg xdg = {c->xdg_config,	   c->xdg_data,
				       c->xdg_config_dirs, c->xdg_data_dirs,
				       c->zdotdir,	   policy_caches_host(c->policy)};

	for (size_t i = 0; i < 2 && !h.err; i++)
		if (homes[i] && homes[i][0] == '/' &&
		    (i == 0 || !c->home || strcmp(homes[0], homes[1]))) {
			h.home = homes[i];
			policy_home_set_each_xdg(homes[i], c->path_env, &xdg, home_link, &h);
			if (!h.err)
				policy_home_prefix_each_xdg(homes[i], &xdg, prefix_link, &h);
		}
	/* An XDG directory named in a home that leads elsewhere (review 9): what is
	 * written where it leads is judged by its name in the home, as the sandbox
	 * guards it. */
	/* An XDG directory or $ZDOTDIR beneath no home: its entries where they lead, named
	 * and resolved, as the sandbox keeps them (review 16: $ZDOTDIR/.zlogin -> a file
	 * in the workspace was refused there and allowed here). */
	const char *all[] = {c->home, c->env_home, c->home_resolved, c->env_home_resolved};
	const struct policy_xdg real = {
	    c->xdg_config_real ? c->xdg_config_real : c->xdg_config,
	    c->xdg_data_real ? c->xdg_data_real : c->xdg_data,
	    c->xdg_config_dirs_real ? c->xdg_config_dirs_real : c->xdg_config_dirs,
	    c->xdg_data_dirs_real ? c->xdg_data_dirs_real : c->xdg_data_dirs,
	    c->zdotdir_real ? c->zdotdir_real : c->zdotdir,
	    policy_caches_host(c->policy)};
	h.home = "";
	if (!h.err)
		policy_home_set_each_xdg_outside(all, 4, &xdg, home_link, &h);
	if (!h.err)
		policy_home_prefix_each_xdg_outside(all, 4, &xdg, prefix_link, &h);
	if (!h.err)
		policy_home_set_each_xdg_outside(all, 4, &real, home_link, &h);
	if (!h.err)
		policy_home_prefix_each_xdg_outside(all, 4, &real, prefix_link, &h);
	const char *xv[] = {c->xdg_config, c->xdg_data};
	for (size_t k = 0; k < 2 && !h.err; k++) {
		char to[PATH_MAX];
		if (xv[k] && xv[k][0] == '/' && leads(h.rec, xv[k], to, sizeof(to)) &&
		    strcmp(to, xv[k]) != 0)
			add_link(&h, to, xv[k]);
	}
	c->home_real = (const char *const *)h.real;
	c->home_of = (const char *const *)h.of;
	c->n_home_real = h.n;
	return h.err;
}

/* The PATH entries that lead into a home (resolved) by a link or a "..", not by name. */
struct path_list {
	char **real;
	const char **rel, **why;
	size_t n, cap;
};

/* One more: where it leads (copied), its name for the message (rel_off bytes into it,
 * or the whole), the reason. */
static int path_add(struct path_list *l, const char *to, size_t rel_off, const char *why)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		char **a = realloc(l->real, cap * sizeof(*a));
		const char **b, **w;
		if (a)
			l->real = a;
		if (!a || !(b = realloc(l->rel, cap * sizeof(*b))))
			return -ENOMEM;
		l->rel = b;
		if (!(w = realloc(l->why, cap * sizeof(*w))))
			return -ENOMEM;
		l->why = w;
		l->cap = cap;
	}
	if (!(l->real[l->n] = strdup(to)))
		return -ENOMEM;
	l->rel[l->n] = l->real[l->n] + rel_off;
	l->why[l->n++] = why;
	return 0;
}

/* The XDG directories where they lead (policy_xdg_leads, as the sandbox judges them),
 * into c; a missing name the way goes on from above with a "..", into l. */
static int list_cut(const char *cut, void *arg)
{
	return path_add(arg, cut, 0,
			"an XDG list's entry leads through it: it cannot be made, nothing past it "
			"foretold");
}

static int resolve_xdg(struct hook_ctx *c, struct path_list *l, struct link_rec *rec, char **real)
{
	const char *named[2] = {c->xdg_config, c->xdg_data};
	static const char *const why[2] = {
	    "$XDG_CONFIG_HOME leads through it: it cannot be made, nothing past it foretold",
	    "$XDG_DATA_HOME leads through it: it cannot be made, nothing past it foretold"};

	for (int k = 0; k < 2; k++) {
		char to[PATH_MAX], cut[PATH_MAX];
		real[k] = NULL;
		int rc = policy_xdg_leads(named[k], recording_link, rec, to, sizeof(to), cut,
					  sizeof(cut));
		/* where it leads cannot be told: nothing is judged writable (the sandbox
		 * refuses the launch) */
		if (rc == -ENAMETOOLONG && path_add(l, "/", 0, POLICY_HOME_SET_TOO_LONG) < 0)
			return -ENOMEM;
		if (rc < 0)
			continue;
		if (cut[0] && path_add(l, cut, 0, why[k]) < 0)
			return -ENOMEM;
		if (strcmp(to, named[k]) != 0 && !(real[k] = strdup(to)))
			return -ENOMEM;
	}
	c->xdg_config_real = real[0];
	c->xdg_data_real = real[1];
	/* and each entry of the XDG lists (review 12), each place $ZDOTDIR may be */
	const char *lists[3] = {c->xdg_config_dirs, c->xdg_data_dirs, c->zdotdir};
	for (int k = 0; k < 3; k++) {
		int rc =
		    policy_xdg_list_leads(lists[k], recording_link, rec, &real[2 + k], list_cut, l);
		if (rc == -ENOMEM)
			return rc;
		if (rc < 0 && path_add(l, "/", 0, POLICY_HOME_SET_TOO_LONG) < 0)
			return -ENOMEM;
	}
	c->xdg_config_dirs_real = real[2];
	c->xdg_data_dirs_real = real[3];
	c->zdotdir_real = real[4];
	return 0;
}

/* to, where a PATH entry leads, beneath a home: listed. 0, or -ENOMEM. */
static int path_home(struct path_list *l, const char *to, const char *const *homes, size_t n_homes)
{
	for (size_t i = 0; i < n_homes; i++) {
		size_t hl = homes[i] ? strlen(homes[i]) : 0;
		if (!hl || strncmp(to, homes[i], hl) != 0 || to[hl] != '/')
			continue;
		return path_add(l, to, hl + 1, "a directory on the caller's PATH leads there");
	}
	return 0;
}

/* A PATH entry "~/x" or "~user/x" (bash expands it), as the sandbox takes it
 * (linux/scan_home.c path_entry): "~/x" under each home, "~user/x" under that user's.
 * 0, or -ENOMEM. */
static int path_tilde(const struct hook_ctx *c, struct path_list *l, struct link_rec *rec,
		      const char *named, const char *const *homes, size_t n_homes)
{
	char user[256], uh[PATH_MAX], e[PATH_MAX], to[PATH_MAX];
	const char *rest;
	int rc;

	if (!policy_path_tilde(named, user, sizeof(user), &rest) || !rest[0])
		return 0;
	for (size_t i = 0; !user[0] && i < n_homes; i++)
		if (homes[i] && snprintf(e, sizeof(e), "%s/%s", homes[i], rest) < (int)sizeof(e) &&
		    leads(rec, e, to, sizeof(to)) && (rc = path_home(l, to, homes, n_homes)) < 0)
			return rc;
	if (user[0] && c->user_home && c->user_home(user, uh, sizeof(uh)) == 0 &&
	    snprintf(e, sizeof(e), "%s/%s", uh, rest) < (int)sizeof(e) &&
	    leads(rec, e, to, sizeof(to)))
		return path_home(l, to, homes, n_homes);
	return 0;
}

static int resolve_path_entries(struct hook_ctx *c, struct path_list *l, struct link_rec *rec,
				const char *const *homes, size_t n_homes)
{
	int rc;

	for (const char *p = c->path_env; p && *p;) {
		size_t len = strcspn(p, ":");
		char e[PATH_MAX], to[PATH_MAX];

		if (len < sizeof(e)) {
			memcpy(e, p, len);
			e[len] = '\0';
			if (e[0] == '/' && leads(rec, e, to, sizeof(to)) &&
			    (rc = path_home(l, to, homes, n_homes)) < 0)
				return rc;
			if ((rc = path_tilde(c, l, rec, e, homes, n_homes)) < 0)
				return rc;
		}
		p += len;
		p += *p == ':';
	}
	return 0;
}

void runner_hook_resolve_free(struct hook_ctx *c)
{
	for (size_t i = 0; i < c->n_pinned_links; i++)
		free((char *)c->pinned_links[i]);
	free((void *)c->pinned_links);
	for (size_t i = 0; i < c->n_home_real; i++) {
		free((char *)c->home_real[i]);
		free((char *)c->home_of[i]);
	}
	free((void *)c->home_real);
	free((void *)c->home_of);
	for (size_t i = 0; i < c->n_path_real; i++)
		free((char *)c->path_real[i]);
	free((void *)c->path_real);
	free((void *)c->path_rel);
	free((void *)c->path_why);
	for (size_t i = 0; i < c->n_protected_real; i++)
		free((char *)c->protected_real[i]);
	free((void *)c->protected_real);
	free((void *)c->protected_of);
}

int runner_hook_resolve_ctx(struct hook_ctx *c, const struct halo_policy *p,
			    const char *const *homes_real, char **xdg_real)
{
	struct path_list pl = {0};
	struct link_rec rec = {0};
	int rc = resolve_xdg(c, &pl, &rec, xdg_real);

	if (rc == 0)
		rc = resolve_path_entries(c, &pl, &rec, homes_real, 2);
	c->path_real = (const char *const *)pl.real;
	c->path_rel = pl.rel;
	c->path_why = pl.why;
	c->n_path_real = pl.n;
	if (rc == 0 && (resolve_protected(p, c) < 0 || resolve_home_links(c, &rec) < 0))
		rc = -ENOMEM;
	c->pinned_links = (const char *const *)rec.v;
	c->n_pinned_links = rec.n;
	if (rc < 0 || rec.err)
		return -ENOMEM;
	return 0;
}
