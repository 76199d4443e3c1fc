/* Pinning: what the persistence guard and the masks protect stays where it is. A
 * read-only bind stops writes to a file but not a rename of its parent: `mv .git
 * .git-old && git init` would leave the guarded hooks beside a fresh, writable
 * repository, and a renamed parent frees the protected name for a planted file.
 * Inside the sandbox a mount point cannot be renamed, removed or replaced (rename,
 * unlink and rmdir give EBUSY in the namespace that holds the mount), so every git
 * directory, every symlink on the way to a guard target or protected path, and every
 * ancestor of those below the top of its writable tree is bound onto itself, keeping
 * its access (git still writes objects, refs and the index). Nothing is created on
 * the host: only what exists at launch can be a mount point.
 *
 * Symlinks are resolved here one component at a time, so that each link met is known:
 * a link protects as much as its target, and a link that leads nowhere would let the
 * command create the target it names. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/scan_int.h"

#define RESOLVE_MAX_LINKS 40 /* as the kernel's MAXSYMLINKS */

/* Append component r[0..len) to cur (length *clen); false when it does not fit. */
static bool push_component(char *cur, size_t *clen, const char *r, size_t len)
{
	if (*clen + 1 + len >= PATH_MAX)
		return false;
	cur[*clen] = '/';
	memcpy(cur + *clen + 1, r, len);
	cur[*clen + 1 + len] = '\0';
	return true;
}

/* rest := target "/" r (r points into rest). */
static int splice_link(char *rest, size_t cap, const char *target, const char *r)
{
	char tmp[2 * PATH_MAX];
	int w = snprintf(tmp, sizeof(tmp), "%s/%s", target, r);

	if (w < 0 || (size_t)w >= cap)
		return -ENAMETOOLONG;
	memcpy(rest, tmp, (size_t)w + 1);
	return 0;
}

int linux_scan_resolve_tail(struct linux_scan *s, const char *path, char *out, size_t n, bool links,
			    char *tail, size_t tn)
{
	char rest[2 * PATH_MAX], cur[PATH_MAX];
	size_t clen = 0;
	unsigned hops = 0;
	char *r = rest;

	if (path[0] != '/' || strlen(path) >= sizeof(rest))
		return -EINVAL;
	/* (shown missing by the listings: name by name below, asking them, no call) */
	if (!linux_scan_memo_known_missing(s, path) && linux_scan_memo_plain_path(s, path) &&
	    strlen(path) < n) {
		memcpy(out, path, strlen(path) + 1);
		return 0;
	}
	memcpy(rest, path, strlen(path) + 1);
	cur[0] = '\0';
	while (*r) {
		const char *target;
		size_t len;
		int kind;

		while (*r == '/')
			r++;
		len = strcspn(r, "/");
		if (len == 0 || (len == 1 && r[0] == '.')) {
			r += len;
			continue;
		}
		if (len == 2 && r[0] == '.' && r[1] == '.') {
			char *sl = strrchr(cur, '/');
			/* What a ".." leaves: a directory the command could rename and replace
			 * by a link (review 8: ~/pa/../tools/bin, ~/pa swapped for a link to a
			 * tree of its own): pinned as a link met is. */
			if (links && clen)
				linux_paths_add(&s->pinned, cur);
			clen = sl ? (size_t)(sl - cur) : 0;
			cur[clen] = '\0';
			r += len;
			continue;
		}
		if (!push_component(cur, &clen, r, len))
			return -ENAMETOOLONG;
		r += len;
		if ((kind = linux_scan_memo_lstat(s, cur, &target)) < 0) {
			if (kind == -ENOMEM)
				return kind;
			snprintf(out, n, "%s", cur);
			if (tail)
				snprintf(tail, tn, "%s", r + strspn(r, "/"));
			return kind;
		}
		if (kind == 0) {
			clen += 1 + len;
			continue;
		}
		if (++hops > RESOLVE_MAX_LINKS)
			return -ELOOP;
		if (links)
			linux_paths_add(&s->links, cur);
		if (splice_link(rest, sizeof(rest), target, r) < 0)
			return -ENAMETOOLONG;
		r = rest;
		if (target[0] == '/')
			clen = 0;
		cur[clen] = '\0';
	}
	snprintf(out, n, "%s", clen ? cur : "/");
	return 0;
}

int linux_scan_resolve(struct linux_scan *s, const char *path, char *out, size_t n, bool links)
{
	return linux_scan_resolve_tail(s, path, out, n, links, NULL, 0);
}

bool linux_scan_realpath(struct linux_scan *s, const char *path, char *out)
{
	int rc;

	if (path[0] != '/')
		return realpath(path, out) != NULL;
	if ((rc = linux_scan_resolve(s, path, out, PATH_MAX, false)) < 0) {
		errno = -rc;
		return false;
	}
	return true;
}

bool linux_scan_add_guard(struct linux_scan *s, const char *path, bool must_exist)
{
	char real[PATH_MAX];
	size_t before = s->links.n;
	int rc = linux_scan_resolve(s, path, real, sizeof(real), true);

	if (rc == 0) {
		linux_paths_add(&s->guarded, real);
		return true;
	}
	/* A plain absence (no hooks directory) has nothing to bind. A link that leads
	 * nowhere, or a name a config points at, is a place the command could fill. */
	if ((rc == -ENOENT || rc == -ELOOP) && (must_exist || s->links.n > before)) {
		linux_paths_add(&s->dangling, path);
		linux_paths_add(&s->dangling_at, rc == -ENOENT ? real : "");
	}
	return false;
}

/* A name written as its own resolution would be: absolute, no "." or ".." component,
 * no empty one, no trailing slash. */
static bool plain_name(const char *p)
{
	size_t n = strlen(p);

	if (n < 2 || p[0] != '/' || p[n - 1] == '/' || n >= PATH_MAX)
		return false;
	for (const char *c = p; (c = strchr(c, '/')); c++)
		if (c[1] == '/' || (c[1] == '.' && (c[2] == '/' || !c[2])) ||
		    (c[1] == '.' && c[2] == '.' && (c[3] == '/' || !c[3])))
			return false;
	return true;
}

/* What the component walk below would conclude for a mask, in one openat2 when the
 * kernel meets no symlink on the way (most protected paths, existing or not): 0 the
 * name is its own resolution, -errno it does not resolve (no link met before the
 * failing component, so none to pin), 1 take the walk (a link on the way: ELOOP, a
 * name that is not plain, or a kernel or filter without openat2). */
static int resolve_without_links(const char *path)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
	int fd;

	if (!plain_name(path))
		return 1;
	fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno == ENOENT || errno == ENOTDIR || errno == EACCES || errno == ENAMETOOLONG)
		return -errno;
	return 1;
}

bool linux_scan_no_links(const char *path)
{
	return resolve_without_links(path) == 0;
}

/* The mask: 0 masked at path itself, 1 at real (a link on the way), -1 none (nothing
 * there, no link on the way), -2 none (nothing where a link on the way leads). */
static int add_mask(struct linux_scan *s, const char *path, char real[PATH_MAX])
{
	/* Most floor entries do not exist: a home's listing (scan_memo.c) says so for
	 * all of them at once. */
	int rc = linux_scan_memo_missing(s, path) ? -ENOENT : resolve_without_links(path);

	if (rc == 0) {
		linux_paths_add(&s->masked, path);
		return 0;
	}
	if (rc < 0)
		return -1;
	if (linux_scan_resolve(s, path, real, PATH_MAX, true) < 0)
		return -2;
	linux_paths_add(&s->masked, real);
	return 1;
}

bool linux_scan_add_mask(struct linux_scan *s, const char *path)
{
	return linux_scan_add_mask_how(s, path) >= 0;
}

int linux_scan_add_mask_how(struct linux_scan *s, const char *path)
{
	char real[PATH_MAX];

	return add_mask(s, path, real);
}

bool linux_scan_add_link_mask(struct linux_scan *s, const char *link)
{
	char real[PATH_MAX];
	int rc = add_mask(s, link, real);

	if (rc == 1 && strcmp(real, link) != 0) {
		linux_paths_add(&s->link_masks, link); /* pairs kept in step */
		linux_paths_add(&s->link_masks_to, real);
	}
	return rc >= 0;
}

/* The walk's symlink with a protected name that masks m, or NULL. */
const char *linux_scan_link_of(const struct linux_scan *s, const char *m)
{
	for (size_t i = 0; i < s->link_masks_to.n && i < s->link_masks.n; i++)
		if (strcmp(s->link_masks_to.v[i], m) == 0)
			return s->link_masks.v[i];
	return NULL;
}

/* A symlink with a protected name in a writable tree that leads into the system's own
 * trees, or to a directory of the trees the command works in, masks what it leads to,
 * as any protected link does (its target may be the user's secret kept there); a
 * command can make one, though (.env.ssl -> /etc/ssl, .env.x -> src), and each later
 * launch then lacks that directory. Said at each launch, naming the
 * link: the mask stays, the user can tell why and remove it. */
void linux_scan_say_link_masks(const struct linux_launch *l, const struct linux_scan *s)
{
	char a[4 * PATH_MAX + 1], b[4 * PATH_MAX + 1];
	struct stat st;

	for (size_t i = 0; l->warnings && i < s->link_masks.n && i < s->link_masks_to.n; i++) {
		const char *to = s->link_masks_to.v[i], *where = NULL;

		if (policy_system_tree_of(to))
			where = "in the system's own directories";
		else if ((linux_path_beneath(to, l->workspace) ||
			  linux_paths_beneath_any(to, &s->writable)) &&
			 stat(to, &st) == 0 && S_ISDIR(st.st_mode))
			where = "a directory of a tree the command works in"; /* ln -s src .env.x */
		if (where)
			plan_text_add(l->warnings,
				      "WARNING: %s, a symlink with a protected name, leads to %s "
				      "(%s): masked there for this run; remove the link if what "
				      "it leads to is no secret",
				      policy_printable(s->link_masks.v[i], a, sizeof(a)),
				      policy_printable(to, b, sizeof(b)), where);
	}
}

bool linux_scan_add_own_mask(struct linux_scan *s, const char *path)
{
	char real[PATH_MAX];

	if (linux_scan_resolve(s, path, real, sizeof(real), true) < 0)
		return false;
	linux_paths_add(&s->masked, real);
	linux_paths_add(&s->own, real);
	return true;
}

/* The top of the writable tree holding path, or NULL. */
static const char *tree_of(const char *path, const struct linux_paths *writable)
{
	for (size_t i = 0; i < writable->n; i++)
		if (linux_path_beneath(path, writable->v[i]))
			return writable->v[i];
	return NULL;
}

/* Every ancestor of path strictly below its tree's top (path itself included when
 * `self`), into pins. */
static void add_ancestors(struct linux_paths *pins, const char *path, const char *top, bool self)
{
	char a[PATH_MAX];
	size_t tl = strcmp(top, "/") == 0 ? 0 : strlen(top);
	char *sl;

	snprintf(a, sizeof(a), "%s", path);
	if (!self && (sl = strrchr(a, '/')))
		*sl = '\0';
	while (strlen(a) > tl) {
		linux_paths_add(pins, a);
		if (!(sl = strrchr(a, '/')))
			break;
		*sl = '\0';
	}
}

/* A chain the command could complete: refuse, naming the link and what is missing. */
static int check_dangling(const struct linux_scan *s, struct halo_err *e)
{
	/* Names the command may have made: shown printably. */
	char shown_what[4 * PATH_MAX + 1], shown_at[4 * PATH_MAX + 1];

	if (s->too_long.n > 0) {
		halo_err_set(
		    e,
		    "persistence guard: %.200s... (the home persistence set's) leads to a "
		    "path longer than PATH_MAX (%d bytes), which cannot be guarded; shorten "
		    "the links on its way, or unset what names it",
		    policy_printable(s->too_long.v[0], shown_what, sizeof(shown_what)), PATH_MAX);
		return -ENAMETOOLONG;
	}
	for (size_t i = 0; i < s->dangling.n; i++) {
		const char *at = s->dangling_at.v[i], *what = s->dangling.v[i];
		const char *pw = policy_printable(what, shown_what, sizeof(shown_what));
		const char *pa = policy_printable(at, shown_at, sizeof(shown_at));

		if (at[0] == '\0' && tree_of(what, &s->writable)) {
			halo_err_set(e,
				     "persistence guard: %s is a symlink loop inside a writable "
				     "tree; remove it (its links could be replaced from inside)",
				     pw);
			return -ELOOP;
		}
		if (at[0] && tree_of(at, &s->writable) &&
		    !linux_paths_beneath_any(at, &s->masked)) {
			halo_err_set(e,
				     "persistence guard: %s leads to %s, which does not exist and "
				     "could be created from inside the sandbox (and run on the "
				     "host later); create it, or remove what points there",
				     pw, pa);
			return -EPERM;
		}
	}
	return 0;
}

static void add_missing(struct linux_scan *s, const char *dir, const char *const *names, size_t n)
{
	char p[PATH_MAX];
	const char *target;

	for (size_t i = 0; i < n; i++)
		if (snprintf(p, sizeof(p), "%s/%s", strcmp(dir, "/") ? dir : "", names[i]) <
			(int)sizeof(p) &&
		    linux_scan_memo_lstat(s, p, &target) == -ENOENT)
			linux_paths_add(&s->missing, p);
}

/* A missing hook manager's file (.config/lefthook-local.yml) is refused by the name in
 * its nearest directory that exists: that directory is pinned too, or `mv .config x &&
 * mkdir .config` would give a fresh directory where the name may be made. */
static void pin_nearest_dir(struct linux_scan *s, const char *missing)
{
	char dir[PATH_MAX], real[PATH_MAX];
	struct stat st;
	char *sl;

	if (snprintf(dir, sizeof(dir), "%s", missing) >= (int)sizeof(dir))
		return;
	while ((sl = strrchr(dir, '/')) && sl != dir) {
		*sl = '\0';
		if (lstat(dir, &st) == 0) {
			/* resolved: a submodule's work tree is reached through ".." */
			if (S_ISDIR(st.st_mode) && realpath(dir, real))
				linux_paths_add(&s->pinned, real);
			return;
		}
	}
}

/* Home-set and floor entries: missing, and kept from their tree's top (missing_deep). */
static void add_deep(struct linux_scan *s, const struct linux_paths *from)
{
	for (size_t i = 0; i < from->n; i++) {
		linux_paths_add(&s->missing, from->v[i]);
		linux_paths_add(&s->missing_deep, from->v[i]);
	}
}

/* Guard targets that do not exist: at each writable tree's top and in each git
 * directory inside one (not beneath a mask: nothing can be created there). */
static void find_missing(struct linux_scan *s)
{
	size_t n, ng;
	const char *const *names = linux_scan_guard_names(&n);
	/* In a git directory: what changes what runs (policy_git_guards, the one list). */
	const struct policy_git_guard *g = policy_git_guards(&ng);
	const char *git_names[8];

	for (size_t i = 0; i < ng && i < 8; i++)
		git_names[i] = g[i].name;

	linux_paths_free(&s->missing);
	linux_paths_free(&s->missing_deep);
	for (size_t i = 0; i < s->writable.n; i++)
		if (!linux_paths_beneath_any(s->writable.v[i], &s->unwalked))
			add_missing(s, s->writable.v[i], names, n);
	for (size_t i = 0; i < s->gitdirs.n; i++)
		if (tree_of(s->gitdirs.v[i], &s->writable) &&
		    !linux_paths_beneath_any(s->gitdirs.v[i], &s->masked))
			add_missing(s, s->gitdirs.v[i], git_names, ng < 8 ? ng : 8);
	add_deep(s, &s->home_missing);
	add_deep(s, &s->floor_missing);
	for (size_t i = 0; i < s->hook_missing.n; i++)
		if (tree_of(s->hook_missing.v[i], &s->writable) &&
		    !linux_paths_beneath_any(s->hook_missing.v[i], &s->masked)) {
			linux_paths_add(&s->missing, s->hook_missing.v[i]);
			pin_nearest_dir(s, s->hook_missing.v[i]);
		}
	linux_paths_sort_unique(&s->missing);
}

/* A file with another name (a hard link made before the launch) is only as protected
 * as that name: a guarded hook written through a link in the workspace changed the
 * host's hook, and a masked secret read through one showed it. The other names cannot
 * be found without walking whole file systems, so a guarded or masked file inside a
 * writable tree that has more than one refuses the launch. Every listed entry is
 * looked at itself, first; below a guarded or masked directory the look is bounded:
 * LINKS_DEPTH levels, LINKS_BUDGET entries below each listed entry and LINKS_TOTAL in
 * all. Each listed entry has a budget of its own: a directory the command filled with
 * junk (a masked `.a/.envstore` of 8,200 files, sorting first) once used up a shared
 * budget, and the `.env` after it, linked to an innocent name, went unchecked. */
#define LINKS_BUDGET 8192
#define LINKS_TOTAL  65536
#define LINKS_DEPTH  8

static bool has_other_names(const char *path, unsigned depth, unsigned *budget, struct stat *hit_st,
			    char *hit, size_t n, const struct linux_paths *skip)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	bool found = false;

	if (*budget == 0 || linux_paths_beneath_any(path, skip) || lstat(path, &st) < 0)
		return false;
	(*budget)--;
	if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
		*hit_st = st;
		snprintf(hit, n, "%s", path);
		return true;
	}
	if (!S_ISDIR(st.st_mode) || depth >= LINKS_DEPTH || !(d = opendir(path)))
		return false;
	while (!found && (de = readdir(d))) {
		char child[PATH_MAX];

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    snprintf(child, sizeof(child), "%s/%s", path, de->d_name) >= (int)sizeof(child))
			continue;
		found = has_other_names(child, depth + 1, budget, hit_st, hit, n, skip);
	}
	closedir(d);
	return found;
}

static bool checked(const struct linux_scan *s, const char *p) /* (halo-run's own: no user's) */
{
	return tree_of(p, &s->writable) && !linux_paths_beneath_any(p, &s->own);
}

static int refuse_links(size_t l, const char *hit, const struct stat *st, struct halo_err *e)
{
	char shown[4 * PATH_MAX + 1];

	halo_err_set(e,
		     "%s: %s has %lu names (hard links): another of them could %s from inside "
		     "the sandbox; remove the other links (find its file system with -samefile)",
		     l == 0 ? "persistence guard" : "protected path",
		     policy_printable(hit, shown, sizeof(shown)), (unsigned long)st->st_nlink,
		     l == 0 ? "change it (and run on the host later)" : "show it");
	return -EPERM;
}

static int check_hard_links(const struct linux_scan *s, struct halo_err *e)
{
	const struct linux_paths *lists[] = {&s->guarded, &s->masked};
	unsigned total = LINKS_TOTAL;
	char hit[PATH_MAX];
	struct stat st;

	/* Each entry itself, whatever the directories below hold. */
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < lists[l]->n; i++) {
			const char *p = lists[l]->v[i];
			if (checked(s, p) && !linux_paths_beneath_any(p, &s->linked_stores) &&
			    lstat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink > 1)
				return refuse_links(l, p, &st, e);
		}
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < lists[l]->n && total > 0; i++) {
			const char *p = lists[l]->v[i];
			unsigned budget = total < LINKS_BUDGET ? total : LINKS_BUDGET,
				 left = budget;

			if (!checked(s, p))
				continue;
			bool found =
			    has_other_names(p, 0, &left, &st, hit, sizeof(hit), &s->linked_stores);
			total -= budget - left;
			if (found)
				return refuse_links(l, hit, &st, e);
		}
	return 0;
}

/* Below the caches' directory, but for this workspace's own: out of sight inside. */
static bool hidden(const struct linux_scan *s, const char *p)
{
	return s->hidden_top[0] && linux_path_beneath(p, s->hidden_top) &&
	       strcmp(p, s->hidden_top) != 0 &&
	       !(s->hidden_own[0] && linux_path_beneath(p, s->hidden_own));
}

/* What the caches' tmpfs hides is out of sight inside: nothing there to mask or make
 * read-only (review 17: a host socket in another workspace's caches failed every launch
 * at the mount layout, ENOENT, and a session said a fresh launch masks it). */
static void drop_hidden(const struct linux_scan *s, struct linux_paths *l)
{
	size_t k = 0;

	for (size_t i = 0; i < l->n; i++)
		if (hidden(s, l->v[i]))
			free(l->v[i]);
		else
			l->v[k++] = l->v[i];
	l->n = k;
}

int linux_scan_pin(bool guard, struct linux_scan *s, struct halo_err *e)
{
	struct linux_paths pins = {0};
	/* halo-run's binary and policy files in a writable tree too: read-only files whose
	 * directory could be renamed away and replaced would be the next launch's. */
	const struct linux_paths *from[] = {&s->pinned, &s->links, &s->guarded, &s->masked,
					    &s->readonly_extra};
	int rc;

	drop_hidden(s, &s->masked);
	drop_hidden(s, &s->guarded);
	rc = check_dangling(s, e);
	if (rc == 0)
		rc = check_hard_links(s, e);
	if (rc < 0)
		return rc;
	if (guard) {
		find_missing(s);
	} else { /* the floor's alone */
		linux_paths_free(&s->missing);
		linux_paths_free(&s->missing_deep);
		add_deep(s, &s->floor_missing);
		linux_paths_sort_unique(&s->missing);
	}
	for (size_t f = 0; f < sizeof(from) / sizeof(from[0]); f++)
		for (size_t i = 0; i < from[f]->n; i++) {
			const char *p = from[f]->v[i], *top = tree_of(p, &s->writable);
			/* Pinned lists hold the thing itself; guards, masks and read-only
			 * files are mount points already: only their ancestors. */
			bool self = f < 2;

			if (!top || (self && linux_paths_beneath_any(p, &s->masked)) ||
			    hidden(s, p))
				continue;
			add_ancestors(&pins, p, top, self);
		}
	linux_paths_free(&s->pinned);
	s->pinned = pins;
	linux_paths_sort_unique(&s->pinned);
	return 0;
}
