/* The launch scan, run in the host before the namespaces are made (and by --dry-run):
 * which trees are writable, which protected paths exist and must be masked, which
 * host service sockets are reachable by name, and which persistence targets must be
 * read-only. The result is plain paths; linux_mounts_setup_or_die opens every one of
 * them again without following symlinks, so a change between scan and mount makes the
 * launch fail rather than mount somewhere else. */
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "linux/scan_int.h"

bool linux_scan_add_resolved(struct linux_scan *s, struct linux_paths *list, const char *path)
{
	char real[PATH_MAX];

	if (!linux_scan_realpath(s, path, real))
		return false;
	linux_paths_add(list, real);
	return true;
}

/* Sort, then drop duplicates and entries beneath a kept one (a mask or read-only bind
 * of a directory covers its contents), and entries `drop` says to drop. */
static void normalise(struct linux_paths *p, bool (*drop)(const char *, void *), void *arg)
{
	size_t k = 0;

	if (p->n > 1)
		qsort(p->v, p->n, sizeof(*p->v), linux_path_cmp);
	for (size_t i = 0; i < p->n; i++) {
		if ((k > 0 && linux_path_beneath(p->v[i], p->v[k - 1])) ||
		    (drop && drop(p->v[i], arg))) {
			free(p->v[i]);
			continue;
		}
		p->v[k++] = p->v[i];
	}
	p->n = k;
}

struct bound_trees {
	const char *workspace;
	const struct linux_scan *s;
};

/* Not to be masked: out of the command's sight anyway, or a socket the policy names
 * (sandbox.unixSockets). */
static bool unreachable(const char *path, void *arg)
{
	const struct bound_trees *b = arg;

	for (size_t i = 0; i < b->s->sockets_open.n; i++)
		if (strcmp(path, b->s->sockets_open.v[i]) == 0)
			return true;
	if (linux_path_beneath(path, b->workspace) ||
	    linux_paths_beneath_any(path, &b->s->writable))
		return false;
	return linux_path_in_fresh_dir(path);
}

/* Guard only what the command could change (beneath a writable tree), and not what
 * is masked anyway. */
static bool not_guardable(const char *path, void *arg)
{
	const struct linux_scan *s = arg;

	return !linux_paths_beneath_any(path, &s->writable) ||
	       linux_paths_beneath_any(path, &s->masked);
}

static bool not_in_writable(const char *path, void *arg)
{
	return !linux_paths_beneath_any(path, &((const struct linux_scan *)arg)->writable);
}

static int add_writable_root(struct linux_scan *s, const char *root, struct halo_err *e)
{
	char real[PATH_MAX];
	struct stat st;

	/* A link would make its target writable, whatever the policy's validation saw
	 * (it checks too, but the link may be newer than the policy). Directories on
	 * the way may be links: the tree is the one they lead to, checked below. */
	if (lstat(root, &st) == 0 && S_ISLNK(st.st_mode)) {
		ssize_t n = readlink(root, real, sizeof(real) - 1);
		real[n < 0 ? 0 : n] = '\0';
		halo_err_set(e,
			     "writableRoots: %s is a symlink (to %s); writable roots are never "
			     "followed through a link: name the directory itself",
			     root, real);
		return -ELOOP;
	}
	if (!linux_scan_realpath(s, root, real)) {
		int err = errno;
		if (err == ENOENT)
			halo_err_set(
			    e,
			    "sandbox.writableRoots: %s does not exist; create it (mkdir -p "
			    "%s) or remove it from the policy",
			    root, root);
		else
			halo_err_set(e, "writableRoots: %s: %s", root, strerror(err));
		return -err;
	}
	/* A writable root or cache that resolves into the operating system's trees
	 * (through a symlink validation could not see) would hand the system over. */
	if (strcmp(real, "/") != 0 && !policy_os_tree_of(real)) {
		linux_paths_add(&s->writable, real);
		return 0;
	}
	halo_err_set(e,
		     "writableRoots: %s resolves to %s, a system directory; refusing to make "
		     "it writable",
		     root, real);
	return -EPERM;
}

static int fill_writable(const struct linux_launch *l, struct linux_scan *s, struct halo_err *e)
{
	const struct halo_policy *p = l->policy;
	int rc;

	if (p->mode != POLICY_MODE_READ_ONLY)
		linux_paths_add(&s->writable, l->workspace);
	for (size_t i = 0; i < p->writable_abs.n; i++)
		if ((rc = add_writable_root(s, p->writable_abs.items[i], e)) < 0)
			return rc;
	for (size_t i = 0; i < l->n_cache_binds; i++) {
		if ((rc = add_writable_root(s, l->cache_binds[i], e)) < 0)
			return rc;
		linux_paths_add(&s->unwalked, s->writable.v[s->writable.n - 1]);
	}
	normalise(&s->writable, NULL, NULL);
	return 0;
}

static void add_protected_abs(const struct halo_policy *p, struct linux_scan *s)
{
	/* Resolved: a protected path reached through a symlink (or whose parent is one)
	 * is masked where it really is, which covers every name that leads there; the
	 * links on the way are pinned (linux_scan_pin). */
	for (size_t i = 0; i < p->protected_abs.n; i++) {
		linux_scan_protect(s, p->protected_abs.items[i]);
	}
}

/* A file that may not exist yet (--dry-run opens nothing): its directory resolved,
 * its name appended. */
static bool add_resolved_file(struct linux_scan *s, struct linux_paths *list, const char *path)
{
	char dir[PATH_MAX], real[PATH_MAX], full[PATH_MAX];
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;

	if (linux_scan_add_resolved(s, list, path))
		return true;
	if (errno != ENOENT || !*name ||
	    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + 1 : 1,
		     slash ? path : ".") >= (int)sizeof(dir) ||
	    !linux_scan_realpath(s, dir, real) ||
	    snprintf(full, sizeof(full), "%s/%s", strcmp(real, "/") ? real : "", name) >=
		(int)sizeof(full))
		return false;
	linux_paths_add(list, full);
	return true;
}

/* halo-run's own output files, opened before launch: masked like protected paths, so
 * the command can neither read nor truncate, append to, unlink or rename them, even in
 * the workspace (the mask is a mount point: EBUSY). One whose directory does not
 * resolve stops the launch. */
static int add_own_outputs(const struct linux_launch *l, struct linux_scan *s, struct halo_err *e)
{
	for (size_t i = 0; i < l->n_own_outputs; i++)
		if (!add_resolved_file(s, &s->masked, l->own_outputs[i])) {
			int err = errno ? errno : ENAMETOOLONG;
			halo_err_set(e, "%s (halo-run's own output): %s", l->own_outputs[i],
				     strerror(err));
			return -err;
		}
	return 0;
}

/* The session control directory: masked unless it holds a tree the command works in
 * (its sockets are then masked one by one, and their peers checked). */
static void add_session_dir(const struct linux_launch *l, struct linux_scan *s)
{
	char real[PATH_MAX];

	if (!l->session_dir || !linux_scan_realpath(s, l->session_dir, real) ||
	    linux_path_beneath(l->workspace, real))
		return;
	for (size_t i = 0; i < s->writable.n; i++)
		if (linux_path_beneath(s->writable.v[i], real))
			return;
	linux_scan_add_own_mask(s, real);
}

static void add_readonly_extra(const struct linux_launch *l, struct linux_scan *s)
{
	if (l->self_exe)
		linux_scan_add_resolved(s, &s->readonly_extra, l->self_exe);
	for (size_t i = 0; i < l->n_policy_files; i++)
		linux_scan_add_resolved(s, &s->readonly_extra, l->policy_files[i]);
}

/* Globs as written may start with "./" or "**\/" (anywhere is already the meaning)
 * or end with "/" (a directory is matched by its name): policy_glob_normalise. */
static char *glob_normalise(const char *g)
{
	char out[PATH_MAX];

	return policy_glob_normalise(g, out, sizeof(out)) ? strdup(out) : NULL;
}

/* The literal start of a name glob: what a name must begin with for fnmatch to have a
 * chance. Only plain ASCII, and only in the C locale, where FNM_CASEFOLD folds ASCII
 * letters and nothing else; elsewhere no prefix is used. */
static char *literal_prefix(const char *glob, bool c_locale)
{
	size_t n = 0;

	while (c_locale && glob[n] && !strchr("*?[\\", glob[n]) && (unsigned char)glob[n] < 0x80)
		n++;
	return strndup(glob, n);
}

static int prepare_globs(struct linux_scan_ctx *c, const struct halo_policy *p)
{
	size_t n = p->protected_globs.n;
	const char *ctype = setlocale(LC_CTYPE, NULL);
	bool c_locale = ctype && (strcmp(ctype, "C") == 0 || strcmp(ctype, "POSIX") == 0);

	c->name_globs = calloc(n + 1, sizeof(char *));
	c->name_prefix = calloc(n + 1, sizeof(char *));
	c->path_globs = calloc(n + 1, sizeof(char *));
	if (!c->name_globs || !c->name_prefix || !c->path_globs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		char *g = glob_normalise(p->protected_globs.items[i]);
		if (!g)
			continue;
		if (policy_glob_is_path(g)) {
			c->path_globs[c->n_path_globs++] = g;
			continue;
		}
		c->name_prefix[c->n_name_globs] = literal_prefix(g, c_locale);
		c->name_globs[c->n_name_globs++] = g;
		if (!c->name_prefix[c->n_name_globs - 1])
			return -ENOMEM;
	}
	return 0;
}

static void free_globs(struct linux_scan_ctx *c)
{
	for (size_t i = 0; i < c->n_name_globs; i++) {
		free((char *)c->name_globs[i]);
		if (c->name_prefix)
			free((char *)c->name_prefix[i]);
	}
	for (size_t i = 0; i < c->n_path_globs; i++)
		free((char *)c->path_globs[i]);
	free(c->name_globs);
	free(c->name_prefix);
	free(c->path_globs);
}

size_t linux_scan_max_mounts = LINUX_SCAN_MAX_MOUNTS;

/* With failIfUnavailable: false the policy accepts a scan that does not cover
 * everything, so a walk that takes too long stops and says where; otherwise it goes on
 * to the end, however large the tree (no refusal for size). */
static int64_t walk_deadline(const struct linux_launch *l)
{
	struct timespec now;
	unsigned ms = l->scan_budget_ms ? l->scan_budget_ms : linux_scan_budget_ms;

	if ((l->policy->fail_if_unavailable != 0 && !l->scan_budget_ms) || ms == 0)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec + (int64_t)ms * 1000000;
}

/* Walk the workspace (globs always; guard when writable) and each writable root. */
static int walk_trees(const struct linux_launch *l, struct linux_scan *s, struct halo_err *e)
{
	struct linux_scan_ctx c = {.s = s, .e = e, .home = l->pw_home};
	bool guard = l->policy->guard_persistence != 0;
	const char **roots = calloc(s->writable.n + 1, sizeof(char *));
	bool *guard_of = calloc(s->writable.n + 1, sizeof(bool));
	int rc;

	if (!roots || !guard_of || (rc = prepare_globs(&c, l->policy)) < 0) {
		free(roots);
		free(guard_of);
		free_globs(&c);
		halo_err_set(e, "workspace scan: out of memory");
		return -ENOMEM;
	}
	roots[c.n_roots++] = l->workspace;
	for (size_t i = 0; i < s->writable.n; i++)
		if (strcmp(s->writable.v[i], l->workspace) != 0 &&
		    !linux_paths_beneath_any(s->writable.v[i], &s->unwalked))
			roots[c.n_roots++] = s->writable.v[i];
	for (size_t i = 0; i < c.n_roots; i++)
		guard_of[i] = guard && linux_paths_beneath_any(roots[i], &s->writable);
	c.roots = roots;
	if (guard) /* read once here, not per repository and worker */
		linux_scan_git_global_hooks(&c);
	c.max_entries = linux_scan_max_entries;
	c.max_depth = linux_scan_max_depth;
	c.deadline_ns = walk_deadline(l);
	linux_scan_index_free(s->index);
	linux_scan_index_open(l, s, &c, guard_of);
	s->index = c.ix;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	linux_scan_walk_roots(&c, guard_of, linux_scan_workers);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* One that came in the walk's last directories, or a walk too small to ask. */
	int sig = c.signal ? c.signal : linux_scan_pending_signal();
	if (sig && !c.err) {
		linux_scan_interrupt_note(sig);
		const char *ab = sigabbrev_np(sig);
		halo_err_set(e,
			     "interrupted by SIG%s during the workspace scan: the command did "
			     "not start",
			     ab ? ab : "?");
		c.err = -EINTR;
	}
	if (c.ix)
		c.ix->walk_us = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000LL +
					   (t1.tv_nsec - t0.tv_nsec) / 1000);
	linux_scan_index_count(c.ix);
	for (size_t i = 0; c.ix && i < c.ix->n; i++) {
		s->dirs_listed += c.ix->t[i].listed;
		s->dirs_replayed += c.ix->t[i].replayed;
	}
	free(roots);
	free(guard_of);
	free_globs(&c);
	return c.err;
}

/* A mask over the workspace or a writable root (a protected path that contains
 * it, or a matched symlink pointing above it) would hide the tree the command is
 * meant to work in: refuse instead of starting in an empty directory. */
static int check_masks(const struct linux_launch *l, const struct linux_scan *s, struct halo_err *e)
{
	const char *link;

	for (size_t i = 0; i < s->masked.n; i++) {
		const char *m = s->masked.v[i];
		const char *hit = linux_path_beneath(l->workspace, m) ? l->workspace : NULL;
		for (size_t j = 0; !hit && j < s->writable.n; j++)
			if (linux_path_beneath(s->writable.v[j], m))
				hit = s->writable.v[j];
		if (hit && (link = linux_scan_link_of(s, m)))
			halo_err_set(
			    e,
			    "%s is a symlink with a protected name that leads to %s, which "
			    "holds %s (the workspace or a writable root): what it leads to "
			    "cannot be masked without hiding that tree; remove or rename "
			    "the link",
			    link, m, hit);
		else if (hit)
			halo_err_set(e,
				     "protected path %s contains %s (the workspace or a writable "
				     "root); it cannot be masked without hiding it",
				     m, hit);
		if (hit)
			return -EPERM;
	}
	return 0;
}

static bool not_masked(const char *path, void *arg)
{
	const struct linux_paths *masked = arg;

	return !bsearch(&path, masked->v, masked->n, sizeof(*masked->v), linux_path_cmp);
}

/* The directories masked whole because the walk could not list them (not those
 * beneath another mask): one warning each. */
static void say_unlisted(const struct linux_launch *l, struct linux_scan *s)
{
	char shown[4 * PATH_MAX + 1];

	normalise(&s->unlisted, not_masked, &s->masked);
	for (size_t i = 0; l->warnings && i < s->unlisted.n; i++)
		plan_text_add(l->warnings,
			      "WARNING: %s: the workspace scan cannot list this directory (no "
			      "read or search permission), so it is masked whole: nothing in it "
			      "is reachable inside the sandbox",
			      policy_printable(s->unlisted.v[i], shown, sizeof(shown)));
}

/* What the walk found, made final: masks that the sandbox shows at all, none over a
 * tree the command works in; guards only where the command could write. */
static int settle_walk(const struct linux_launch *l, struct linux_scan *s, struct halo_err *e)
{
	struct bound_trees b = {l->workspace, s};
	int rc;

	if ((rc = linux_scan_check_carves(s, e)) < 0)
		return rc;
	normalise(&s->masked, unreachable, &b);
	say_unlisted(l, s);
	linux_scan_say_link_masks(l, s);
	if ((rc = check_masks(l, s, e)) < 0)
		return rc;
	linux_scan_protected_missing(s);
	if (l->policy->guard_persistence != 0) {
		linux_scan_home_set(l, s);
		linux_scan_git_global(s, l->pw_home);
	}
	linux_scan_say_links(l, s);
	normalise(&s->guarded, not_guardable, s);
	return linux_scan_pin(l->policy->guard_persistence != 0, s, e);
}

/* Everything but the walk, the writable trees known (fill_writable). */
static int scan_rest(const struct linux_launch *l, struct linux_scan *s, struct halo_err *e)
{
	int rc;

	add_protected_abs(l->policy, s);
	if ((rc = add_own_outputs(l, s, e)) < 0)
		return rc;
	add_session_dir(l, s);
	linux_scan_index_shield(l, s);
	linux_scan_carve(l, s);
	linux_scan_host_sockets(l, s);
	add_readonly_extra(l, s);
	normalise(&s->readonly_extra, not_in_writable, s);
	if (s->sockets_truncated && l->policy->fail_if_unavailable != 0) {
		halo_err_set(e,
			     "the host has more than %d unix sockets to mask; the sandbox "
			     "cannot hide them all",
			     LINUX_SCAN_MAX_SOCKETS);
		return -E2BIG;
	}
	return 0;
}

/* Everything but the walk. */
static int scan_without_walk(const struct linux_launch *l, struct linux_scan *s, struct halo_err *e)
{
	int rc;

	memset(s, 0, sizeof(*s));
	if ((rc = fill_writable(l, s, e)) < 0)
		return rc;
	return scan_rest(l, s, e);
}

static int scan_all(const struct linux_launch *l, struct linux_scan *s, struct halo_err *e,
		    uint64_t watch_pays_us)
{
	int rc;

	if ((rc = scan_without_walk(l, s, e)) < 0 || (rc = walk_trees(l, s, e)) < 0 ||
	    (rc = settle_walk(l, s, e)) < 0 || (rc = linux_scan_check_mounts(s, e)) < 0) {
		linux_scan_free(s);
		return rc;
	}
	if (s->index)
		s->index->pays_us = watch_pays_us;
	linux_scan_index_store(s->index, s->truncated, watch_pays_us != 0);
	linux_scan_index_free(s->index);
	s->index = NULL;
	return 0;
}

int linux_scan(const struct linux_launch *l, struct linux_scan *s, struct halo_err *e)
{
	return scan_all(l, s, e, 0);
}

int linux_scan_call(const struct linux_launch *l, struct linux_scan *s, struct halo_err *e)
{
	return scan_all(l, s, e, LINUX_WATCH_PAYS_CALL_US);
}

int linux_scan_begin(const struct linux_launch *l, struct linux_scan *s, struct halo_err *e)
{
	/* Only what the first mount steps need (the writable trees, refused at once when
	 * they are wrong): the rest runs after the clone, while init builds its
	 * namespaces (linux_scan_hand_over). */
	int rc;

	memset(s, 0, sizeof(*s));
	rc = fill_writable(l, s, e);
	if (rc == 0 && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s->late_fd) < 0) {
		rc = -errno;
		halo_err_set(e, "workspace scan: socketpair: %s", strerror(errno));
	}
	if (rc < 0) {
		linux_scan_free(s);
		return rc;
	}
	s->late = true;
	return 0;
}

int linux_scan_settle_here(const struct linux_launch *l, struct linux_scan *s, struct halo_err *e)
{
	int rc = scan_rest(l, s, e);

	return rc < 0 ? rc : settle_walk(l, s, e);
}

int linux_scan_hand_over(const struct linux_launch *l, struct linux_scan *s,
			 int (*before_send)(void *arg, struct linux_scan *s, struct halo_err *e),
			 void *arg, struct halo_err *e)
{
	int rc;

	close(s->late_fd[0]);
	s->late_fd[0] = -1;
	if ((rc = scan_rest(l, s, e)) == 0 && (rc = walk_trees(l, s, e)) == 0 &&
	    (rc = settle_walk(l, s, e)) == 0 && (rc = linux_scan_check_mounts(s, e)) == 0)
		rc = linux_scan_judge_truncated(l, s, e);
	if (rc == 0 && before_send)
		rc = before_send(arg, s, e);
	/* A child that is gone cannot take the lists: it reports why itself. */
	if (rc == 0)
		linux_scan_send(s, s->late_fd[1]);
	close(s->late_fd[1]);
	s->late_fd[1] = -1;
	/* Kept after the lists went: the sandbox's init does not wait for the file. */
	if (rc == 0)
		linux_scan_index_store(s->index, s->truncated, true);
	linux_scan_index_free(s->index);
	s->index = NULL;
	return rc;
}

void linux_scan_free(struct linux_scan *s)
{
	linux_paths_free(&s->masked);
	linux_paths_free(&s->links_unchecked);
	linux_paths_free(&s->home_hardlinks);
	linux_paths_free(&s->links_seen);
	linux_paths_free(&s->linked_stores);
	linux_paths_free(&s->git_global_rel);
	linux_paths_free(&s->git_global_rel_args);
	linux_paths_free(&s->guarded);
	linux_paths_free(&s->writable);
	linux_paths_free(&s->readonly_extra);
	linux_paths_free(&s->unwalked);
	linux_scan_carve_free(s);
	linux_paths_free(&s->pinned);
	linux_paths_free(&s->links);
	linux_paths_free(&s->gitdirs);
	linux_paths_free(&s->missing);
	linux_paths_free(&s->home_missing);
	linux_paths_free(&s->home_prefix);
	linux_paths_free(&s->home_guarded);
	linux_paths_free(&s->floor_missing);
	linux_paths_free(&s->floor_unmade);
	linux_paths_free(&s->missing_deep);
	linux_paths_free(&s->hook_missing);
	s->git_global_read = false;
	linux_paths_free(&s->dangling);
	linux_paths_free(&s->too_long);
	linux_paths_free(&s->dangling_at);
	linux_paths_free(&s->link_masks);
	linux_paths_free(&s->link_masks_to);
	linux_paths_free(&s->sockets_open);
	linux_paths_free(&s->unlisted);
	linux_paths_free(&s->own);
	linux_scan_memo_free(s);
	free(s->uncovered);
	s->uncovered = NULL;
	linux_scan_index_free(s->index);
	s->index = NULL;
	for (int i = 0; s->late && i < 2; i++)
		if (s->late_fd[i] >= 0)
			close(s->late_fd[i]);
	s->late = false;
}
