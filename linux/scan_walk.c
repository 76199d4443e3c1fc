/* The bounded walk of one directory tree: finds protected-glob matches, unix sockets
 * and persistence-guard targets. It never follows a symlink (every directory is opened
 * relative to its parent with O_NOFOLLOW), never enters a kernel pseudo file system,
 * and stops at a bound on entries and depth, reporting the scan as truncated.
 *
 * Most of a large scan is the kernel listing directories, so the loop is kept lean:
 * getdents64 straight into one buffer per directory (no DIR stream), the bound counted
 * once per batch of entries, cheap first-byte tests before the name tables and
 * fnmatch. Subdirectories may be handed to another worker (scan_pool.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "linux/scan_int.h"

size_t linux_scan_max_entries = LINUX_SCAN_MAX_ENTRIES;
unsigned linux_scan_budget_ms = LINUX_SCAN_BUDGET_MS;
unsigned linux_scan_max_depth = LINUX_SCAN_MAX_DEPTH;
unsigned linux_scan_workers = LINUX_SCAN_WORKERS;

#define DIR_BUF_SIZE 32768 /* what glibc's readdir reads at once */

/* The guard names are policy's (policy/guard.c, shared with macos/profile.c).
 * Only what exists at launch can be a mount point: creating an empty .bashrc to mount
 * over would change the user's tree, and Landlock cannot refuse creating one name
 * while allowing others (a limit --dry-run and doctor state). */

/* Mounted inside a tree, these hold nothing a glob is about, and /proc-like trees
 * are huge or self-referential. */
static const unsigned long pseudo_fs[] = {
    PROC_SUPER_MAGIC,	 SYSFS_MAGIC,	 DEVPTS_SUPER_MAGIC, CGROUP_SUPER_MAGIC,
    CGROUP2_SUPER_MAGIC, DEBUGFS_MAGIC,	 TRACEFS_MAGIC,	     SECURITYFS_MAGIC,
    BPF_FS_MAGIC,	 PSTOREFS_MAGIC, EFIVARFS_MAGIC,
};

/* A git directory no .git names (a bare repository, a worktree's or submodule's)
 * shows itself by what it holds: policy_git_entries_make_gitdir. */

const char *const *linux_scan_guard_names(size_t *n)
{
	return policy_guard_names(n);
}

bool linux_scan_guard_name(const char *name)
{
	return policy_guard_name(name);
}

/* Case-insensitive: a secret called .ENV is still a secret (and on a case-folding
 * file system it is the same file). Path globs are tried at every depth and '*'
 * crosses '/': matching more is the safe direction. */
static char ascii_lower(char ch)
{
	return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
}

/* Could `name` start with `prefix` (ASCII, compared case-insensitively as FNM_CASEFOLD
 * does in the C locale)? Only then is fnmatch worth calling. */
static bool prefix_may_match(const char *prefix, const char *name)
{
	for (; *prefix; prefix++, name++)
		if (ascii_lower(*prefix) != ascii_lower(*name))
			return false;
	return true;
}

bool linux_scan_glob_match(const struct linux_scan_ctx *c, const char *name, const char *rel)
{
	for (size_t i = 0; i < c->n_name_globs; i++)
		if (prefix_may_match(c->name_prefix[i], name) &&
		    policy_glob_fnmatch(c->name_globs[i], name))
			return true;
	for (size_t i = 0; i < c->n_path_globs; i++)
		for (const char *r = rel; r; r = strchr(r, '/') ? strchr(r, '/') + 1 : NULL)
			if (policy_glob_fnmatch(c->path_globs[i], r))
				return true;
	return false;
}

static bool is_pseudo_fs(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) < 0)
		return true; /* cannot tell: do not walk into it */
	for (size_t i = 0; i < sizeof(pseudo_fs) / sizeof(pseudo_fs[0]); i++)
		if ((unsigned long)sf.f_type == pseudo_fs[i])
			return true;
	return false;
}

/* The top of another walked tree is walked on its own (with its own guard setting). */
static bool is_other_root(const struct linux_scan_ctx *c)
{
	for (size_t i = 0; i < c->n_roots; i++)
		if (strcmp(c->path, c->roots[i]) == 0)
			return true;
	return false;
}

static unsigned char entry_type(int dfd, const char *name, unsigned char d_type)
{
	struct stat st;

	if (d_type != DT_UNKNOWN)
		return d_type;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return DT_UNKNOWN;
	return IFTODT(st.st_mode);
}

/* A protected match: mask it (a symlink's target; the link itself is pinned, so it
 * can be neither removed nor replaced). */
static void on_protected(struct linux_scan_ctx *c, unsigned char type)
{
	if (type == DT_LNK)
		linux_scan_add_link_mask(c->s, c->path);
	else
		linux_paths_add(&c->s->masked, c->path);
}

/* A directory of a writable tree the walk cannot list (or whose entries it cannot
 * reach): what it holds is unknown, and its owner (the command, often) can make it
 * readable again with a chmod, so it is masked whole and said (s->unlisted). The top
 * of a tree cannot be masked without hiding the tree: not covered. */
static void on_unlisted(struct linux_scan_ctx *c, size_t len)
{
	c->path[len] = '\0';
	if (len <= c->root_len) {
		linux_scan_uncovered(c, len ? c->path : "/", "it cannot be listed");
		return;
	}
	linux_paths_add(&c->s->masked, c->path);
	linux_paths_add(&c->s->unlisted, c->path);
}

/* May the walk look up names in the directory (search permission)? Listing it needs
 * only read permission; its entries then cannot be opened or stat'ed. The mode bits
 * of one's own directory answer without a system call; root searches every directory
 * (CAP_DAC_READ_SEARCH; where it lacks it, in a user namespace, the entries that
 * cannot be opened are masked one by one: descend). */
static bool searchable(int fd, const struct stat *st)
{
	uid_t me = geteuid();

	if (me == 0)
		return true;
	if (st->st_uid == me)
		return st->st_mode & S_IXUSR;
	return faccessat(fd, "", X_OK, AT_EACCESS | AT_EMPTY_PATH) == 0;
}

/* A .git that is a symlink: git follows it, so guard what it leads to, and pin the
 * link (linux_scan_add_guard records it). */
static void on_git_link(struct linux_scan_ctx *c, const char *worktree)
{
	char real[PATH_MAX];
	struct stat st;

	if (linux_scan_resolve(c->s, c->path, real, sizeof(real), true) < 0 || stat(real, &st) < 0)
		return;
	if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))
		linux_scan_git_repo(c, real, worktree, S_ISREG(st.st_mode));
}

static const struct linux_index_dir *lookup(struct linux_scan_ctx *c, size_t len);
static bool still_valid(const struct linux_index_dir *d, const struct stat *st);

/* The watcher answered for this tree and saw no change to d's entries (nor to what d
 * is: a rename, removal or replacement of d is a change to its parent, which is why
 * trust needs the whole chain above d vouched for, or d's own stat checked). */
static bool watched_clean(const struct linux_scan_tree_index *t, const struct linux_index_dir *d)
{
	return t->synced && !(d->flags & LINUX_INDEX_RACY) && !t->dirty[d - t->in.dirs];
}

/* Most directories of a large tree hold only plain files no rule is about: when the
 * index says so of c->path[0..len) and its stat agrees, it is counted without being
 * opened (one fstatat instead of open, fstat, close). */
static bool replay_leaf(struct linux_scan_ctx *c, int dfd, const char *name, size_t len, dev_t dev)
{
	const struct linux_scan_tree_index *t = &c->ix->t[c->root_id];
	const struct linux_index_dir *d;
	struct stat st;

	if (!t->usable || !(d = lookup(c, len)) || d->n_entries ||
	    (d->flags & (LINUX_INDEX_RACY | LINUX_INDEX_BARE)))
		return false;
	/* Vouched for by the watcher, beneath a chain it vouched for: not even a stat. */
	if (!(c->trust && watched_clean(t, d)) &&
	    (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
	     st.st_dev != dev || !still_valid(d, &st)))
		return false;
	if (linux_scan_take(c, d->n_total) < d->n_total)
		return true;
	linux_scan_index_reached(c->ix, c->root_id, d);
	return true;
}

/* The subdirectory c->path[0..len): walked now, or by an idle worker. */
static void descend(struct linux_scan_ctx *c, int dfd, const char *name, size_t len, unsigned depth,
		    dev_t dev)
{
	struct stat st;
	int fd;

	if (is_other_root(c))
		return;
	if (depth + 1 > c->max_depth) {
		linux_scan_uncovered(c, c->path, "it lies deeper than the scan's depth bound");
		return;
	}
	if (c->ix && replay_leaf(c, dfd, name, len, dev))
		return;
	/* O_PATH: a directory the index replays is never read, only stat'ed (and an
	 * O_PATH open costs less); linux_scan_walk_dir opens it for reading if needed. */
	fd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* Gone since it was listed (or no longer a directory): nothing to list there.
	 * Unreachable (EACCES: an ACL, or a directory that lost its search permission
	 * since the index listed it): masked whole. */
	if (fd < 0) {
		if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
			on_unlisted(c, len);
		return;
	}
	if (fstat(fd, &st) < 0 || (st.st_dev != dev && is_pseudo_fs(fd))) {
		close(fd);
		return;
	}
	if (!linux_scan_offer(c, fd, len, depth + 1, st.st_dev))
		linux_scan_walk_dir(c, fd, len, depth + 1, st.st_dev); /* closes fd */
}

/* Another launch's index (XDG_STATE_HOME per application puts a halo-run/index
 * anywhere in the home) is hidden: a command could rewrite a record there. */
static bool index_place(const struct linux_scan_ctx *c, const char *name, size_t len,
			unsigned char type)
{
	return (type == DT_DIR || type == DT_UNKNOWN) && strcmp(name, "index") == 0 && len >= 9 &&
	       memcmp(c->path + len - 9, "/halo-run", 9) == 0;
}

/* One entry of the directory at c->path[0..len): c->path holds its full path. Returns
 * whether a rule is about it (the index keeps it), with its type in *type_out. */
static bool visit(struct linux_scan_ctx *c, int dfd, const char *name, unsigned char d_type,
		  size_t len, size_t elen, unsigned depth, dev_t dev, unsigned char *type_out)
{
	const char *rel = c->path + c->root_len + 1;
	unsigned char type = entry_type(dfd, name, d_type);

	*type_out = type;
	if (linux_scan_glob_match(c, name, rel)) {
		on_protected(c, type);
		return true;
	}
	if (index_place(c, name, len, type)) { /* halo-run's own: not the user's finding */
		linux_paths_add(&c->s->masked, c->path);
		linux_paths_add(&c->s->own, c->path);
		return true;
	}
	/* A unix socket found in a tree we bind in belongs to a host service: connect()
	 * ignores a read-only mount, so mask it. */
	if (type == DT_SOCK) {
		linux_paths_add(&c->s->masked, c->path);
		return true;
	}
	if (name[0] == '.' && strcmp(name, ".git") == 0) {
		/* Its guards; then, when it is no git directory by what it holds, its names
		 * like any directory's: a .git never entered let a command link config ->
		 * vendor/.git, and a .env written through config/ went unmasked. */
		if (c->guard && (type == DT_DIR || type == DT_REG || type == DT_LNK)) {
			char worktree[PATH_MAX];

			memcpy(worktree, c->path, len);
			worktree[len] = '\0';
			if (type == DT_LNK)
				on_git_link(c, len ? worktree : "/");
			else
				linux_scan_git_repo(c, c->path, len ? worktree : "/",
						    type == DT_REG);
		}
		if (type == DT_DIR && !linux_scan_dotgit_is_gitdir(dfd))
			descend(c, dfd, name, elen, depth, dev);
		return true;
	}
	bool kept = type == DT_DIR || type == DT_UNKNOWN;
	if (c->guard && linux_scan_guard_name(name)) {
		linux_scan_add_guard(c->s, c->path, false);
		kept = true;
	}
	if (type == DT_DIR)
		descend(c, dfd, name, elen, depth, dev);
	return kept;
}

static bool is_dot_or_dotdot(const char *name)
{
	return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

/* The entries of one getdents64 batch, without "." and "..". */
static size_t batch_entries(const char *buf, size_t n)
{
	size_t k = 0;

	for (size_t off = 0; off < n;) {
		const struct dirent64 *de = (const struct dirent64 *)(const void *)(buf + off);
		k += !is_dot_or_dotdot(de->d_name);
		off += de->d_reclen;
	}
	return k;
}

/* Most entries of a large tree are plain files that no rule is about: not a socket,
 * link or directory, no name glob could match (their literal prefixes differ), no
 * path glob to try, not a dot file (every guard name and .git start with a dot).
 * visit() would do nothing with them; they are only counted. */
static bool nothing_to_do(const struct linux_scan_ctx *c, const char *name, unsigned char d_type)
{
	if (d_type != DT_REG || name[0] == '.' || c->n_path_globs > 0)
		return false;
	for (size_t i = 0; i < c->n_name_globs; i++)
		if (prefix_may_match(c->name_prefix[i], name))
			return false;
	return true;
}

/* Walk one batch of the directory listed through lfd (fd: the same, O_PATH); out,
 * when not NULL, takes what the index keeps. False when the walk must stop. */
static bool walk_batch(struct linux_scan_ctx *c, int fd, const char *buf, size_t n, size_t len,
		       unsigned depth, dev_t dev, unsigned *bare, struct linux_index_out *out)
{
	unsigned char type;

	/* One entry more than the bound: what lies beyond is not covered, so the scan
	 * says so (linux_scan_take truncates it). */
	size_t allowed = linux_scan_take(c, batch_entries(buf, n));

	for (size_t off = 0; off < n;) {
		const struct dirent64 *de = (const struct dirent64 *)(const void *)(buf + off);
		const char *name = de->d_name;
		size_t nlen;

		off += de->d_reclen;
		if (is_dot_or_dotdot(name))
			continue;
		if (allowed-- == 0 || linux_scan_stopped(c))
			return false;
		nlen = strlen(name);
		/* A path too long to name: not covered either. */
		if (len + 1 + nlen >= sizeof(c->path)) {
			linux_scan_uncovered(c, c->path,
					     "a name in it makes a path longer than PATH_MAX");
			return false;
		}
		*bare |= policy_git_entry(name);
		if (nothing_to_do(c, name, de->d_type))
			continue;
		c->path[len] = '/';
		memcpy(c->path + len + 1, name, nlen + 1);
		if (visit(c, fd, name, de->d_type, len, len + 1 + nlen, depth, dev, &type) && out &&
		    type != DT_UNKNOWN)
			linux_index_out_entry(out, type, name);
		c->path[len] = '\0';
	}
	return true;
}

/* The relative path of c->path[0..len) in its tree: "" for the top. */
static const char *rel_of(const struct linux_scan_ctx *c, size_t len, size_t *rlen)
{
	if (len <= c->root_len) {
		*rlen = 0;
		return "";
	}
	*rlen = len - c->root_len - 1;
	return c->path + c->root_len + 1;
}

/* The index's record for the directory at c->path[0..len) (open as fd, stat st) when
 * it still describes its entries: same inode, same ctime (the kernel moves it on every
 * entry added, removed or renamed), same link count and size, and it was not listed
 * within the ctime's granularity. */
static const struct linux_index_dir *lookup(struct linux_scan_ctx *c, size_t len)
{
	size_t rlen;
	const char *rel = rel_of(c, len, &rlen);

	return linux_index_find_near(&c->ix->t[c->root_id].in, rel, rlen, &c->next_rec);
}

static bool still_valid(const struct linux_index_dir *d, const struct stat *st)
{
	return d && !(d->flags & LINUX_INDEX_RACY) && d->dev == (uint64_t)st->st_dev &&
	       d->ino == (uint64_t)st->st_ino && d->ctime_sec == (int64_t)st->st_ctim.tv_sec &&
	       d->ctime_nsec == (uint32_t)st->st_ctim.tv_nsec &&
	       d->nlink == (uint64_t)st->st_nlink && d->size == (uint64_t)st->st_size;
}

/* A directory the index describes: its kept entries visited as if listed, the rest
 * (plain files no rule is about) only counted. */
static void replay(struct linux_scan_ctx *c, int fd, const struct linux_index_dir *d, size_t len,
		   unsigned depth, dev_t dev)
{
	const unsigned char *e = d->entries;
	unsigned char type;

	if (linux_scan_take(c, d->n_total) < d->n_total)
		return;
	for (uint32_t i = 0; i < d->n_entries && !linux_scan_stopped(c); i++) {
		unsigned char etype = e[0];
		const char *name = (const char *)e + 1;
		size_t nlen = strlen(name);
		e += 2 + nlen;
		if (len + 1 + nlen >= sizeof(c->path)) {
			linux_scan_uncovered(c, c->path, "its path is longer than PATH_MAX");
			return;
		}
		c->path[len] = '/';
		memcpy(c->path + len + 1, name, nlen + 1);
		visit(c, fd, name, etype, len, len + 1 + nlen, depth, dev, &type);
		c->path[len] = '\0';
	}
	if ((d->flags & LINUX_INDEX_BARE) && c->guard && !linux_scan_stopped(c))
		linux_scan_git_repo(c, len ? c->path : "/", NULL, false);
	linux_scan_index_reached(c->ix, c->root_id, d);
}

static bool same_listing(const struct stat *a, const struct stat *b)
{
	return a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec &&
	       a->st_nlink == b->st_nlink && a->st_size == b->st_size && a->st_ino == b->st_ino;
}

/* Start the index record of a directory about to be listed, in `rec` (its own: the
 * records of its subdirectories are written to the worker's buffer meanwhile). */
static struct linux_index_out *record_begin(struct linux_scan_ctx *c, size_t len,
					    const struct stat *st, struct linux_index_out *rec)
{
	struct linux_scan_tree_index *t;
	size_t rlen;
	const char *rel;
	char relbuf[PATH_MAX];

	if (!c->ix || !(t = &c->ix->t[c->root_id])->usable)
		return NULL;
	rel = rel_of(c, len, &rlen);
	memcpy(relbuf, rel, rlen);
	relbuf[rlen] = '\0';
	struct linux_index_dir d = {
	    .dev = st->st_dev,
	    .ino = st->st_ino,
	    .nlink = st->st_nlink,
	    .size = (uint64_t)st->st_size,
	    .ctime_sec = st->st_ctim.tv_sec,
	    .ctime_nsec = (uint32_t)st->st_ctim.tv_nsec,
	    .rel = relbuf,
	};
	linux_index_out_begin(rec, &d);
	__atomic_fetch_add(&t->listed, 1, __ATOMIC_RELAXED);
	return rec;
}

/* Close it: RACY when the directory changed while it was listed, was changed within
 * the ctime's granularity, or lies on another device than the tree's top (whose file
 * system was the one checked). */
static void record_end(struct linux_scan_ctx *c, struct linux_index_out *out, int lfd,
		       const struct stat *before, size_t total, unsigned bare)
{
	struct stat after;
	uint32_t flags = 0;

	if (!out)
		return;
	if (fstat(lfd, &after) < 0 || !same_listing(before, &after) ||
	    (int64_t)before->st_ctim.tv_sec >= c->ix->racy_from ||
	    (uint64_t)before->st_dev != c->ix->t[c->root_id].key.dev)
		flags |= LINUX_INDEX_RACY;
	if (policy_git_entries_make_gitdir(bare))
		flags |= LINUX_INDEX_BARE;
	linux_index_out_end(out, flags, total > UINT32_MAX ? UINT32_MAX : (uint32_t)total);
	linux_index_out_append(&c->ix->t[c->root_id].out[c->worker], out);
	linux_index_out_free(out);
}

static bool past_deadline(const struct linux_scan_ctx *c)
{
	struct timespec now;

	if (!c->deadline_ns)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec > c->deadline_ns;
}

/* List the directory (fd O_PATH or readable) and visit its entries. */
static void list_dir(struct linux_scan_ctx *c, int fd, size_t len, unsigned depth, dev_t dev,
		     const struct stat *st)
{
	char *buf = malloc(DIR_BUF_SIZE);
	unsigned bare = 0;
	size_t total = 0;
	ssize_t n = 0;
	int lfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct linux_index_out rec = {0}, *out = NULL;

	/* Gone since it was opened: nothing to list there. Unreadable (EACCES), or
	 * readable but not searchable: masked whole, never recorded in the index (the
	 * next launch tries again). */
	if (lfd < 0 || (st && !searchable(fd, st))) {
		if (lfd >= 0 || errno != ENOENT)
			on_unlisted(c, len);
		if (lfd >= 0)
			close(lfd);
		free(buf);
		return;
	}
	if (!buf) {
		/* A directory we cannot list is a tree we do not cover: fail closed. */
		linux_scan_uncovered(c, c->path, "out of memory");
		close(lfd);
		return;
	}
	if (st)
		out = record_begin(c, len, st, &rec);
	if (linux_test_hooks()->walk_before_list) {
		c->path[len] = '\0';
		linux_test_hooks()->walk_before_list(c->path);
	}
	while (!linux_scan_stopped(c) && (n = getdents64(lfd, buf, DIR_BUF_SIZE)) > 0) {
		total += batch_entries(buf, (size_t)n);
		if (!walk_batch(c, fd, buf, (size_t)n, len, depth, dev, &bare, out))
			break;
	}
	/* A listing that failed part way (EIO, ...): what follows is unknown, and the
	 * partial record is not kept. A directory removed while it was listed (a dead
	 * directory lists as ENOENT, and has no link left) holds nothing, and nothing can
	 * be made in it: as when it is gone before its open, there is nothing to mask
	 * (masking its name would fail the launch, the name being gone too). An ENOENT
	 * from a directory still linked (a FUSE or network file system's answer) is
	 * unknown content: masked whole. */
	bool failed = n < 0 && !linux_scan_stopped(c);
	if (failed) {
		struct stat ls;
		if (errno != ENOENT || fstat(lfd, &ls) < 0 || ls.st_nlink != 0)
			on_unlisted(c, len);
		linux_index_out_free(&rec);
		out = NULL;
	}
	free(buf);
	record_end(c, out, lfd, st, total, bare);
	close(lfd);
	if (!failed && policy_git_entries_make_gitdir(bare) && c->guard && !linux_scan_stopped(c))
		linux_scan_git_repo(c, len ? c->path : "/", NULL, false);
}

void linux_scan_walk_dir(struct linux_scan_ctx *c, int fd, size_t len, unsigned depth, dev_t dev)
{
	struct stat st;
	const struct linux_index_dir *d = NULL;
	const struct linux_scan_tree_index *t = c->ix ? &c->ix->t[c->root_id] : NULL;
	bool trust = c->trust, have_st = false;

	if (past_deadline(c)) {
		c->path[len] = '\0';
		linux_scan_uncovered(c, len ? c->path : "/", "the scan's time budget ran out");
		close(fd);
		return;
	}
	if (linux_scan_interrupted(c)) {
		close(fd);
		return;
	}
	if (t && t->usable && t->in.n) {
		d = lookup(c, len);
		if (d && !(trust && watched_clean(t, d)) &&
		    !((have_st = fstat(fd, &st) == 0) && still_valid(d, &st)))
			d = NULL;
	}
	if (!d && !have_st)
		have_st = fstat(fd, &st) == 0;
	/* Below a directory replayed and vouched for, trust goes on; below one that is
	 * listed, every record is checked by its stat again. */
	c->trust = d && t->synced && watched_clean(t, d);
	if (d)
		replay(c, fd, d, len, depth, dev);
	else
		list_dir(c, fd, len, depth, dev, have_st ? &st : NULL);
	c->trust = trust;
	close(fd);
}
