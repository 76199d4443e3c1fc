/* Where the workspace index lives and when a file there is believed.
 *
 * The place: ${XDG_STATE_HOME:-$HOME/.local/state}/halo-run/index, one file per walked
 * tree named by the tree's (st_dev, st_ino). It must lie outside every tree the sandbox
 * can write (the workspace, writable roots, the tool caches bound read-write): there
 * it is on the read-only host root inside the sandbox, whoever runs it (root too).
 * When it does not, no index is used at all, and the scan says why.
 *
 * A file is believed only when everything holds: the directory and the file are the
 * caller's own (euid) and writable by nobody else, the file is a regular file with
 * one link, opened without following a symlink, parsed whole (scan_index.c), and its
 * header names this tree: same device and inode, same absolute path (a moved
 * workspace is re-walked), same rules. Anything else: the tree is walked afresh and a
 * new index written, atomically (a temporary file renamed over the old one). */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "linux/scan_int.h"

/* A directory's ctime moves whenever an entry is added, removed or renamed, and
 * user space cannot set it back. Trusted where the kernel keeps it itself; network
 * and FUSE file systems report what a server says, overlayfs what a layer says. */
static const unsigned long trusted_fs[] = {
    EXT4_SUPER_MAGIC, XFS_SUPER_MAGIC, BTRFS_SUPER_MAGIC, TMPFS_MAGIC, F2FS_SUPER_MAGIC,
};

/* ctime has a granularity (a clock tick; a second on some file systems): a directory
 * changed within it of its listing could change again unseen with the same ctime. */
int linux_scan_racy_seconds = LINUX_SCAN_RACY_SECONDS;

static bool trusted(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) < 0)
		return false;
	for (size_t i = 0; i < sizeof(trusted_fs) / sizeof(trusted_fs[0]); i++)
		if ((unsigned long)sf.f_type == trusted_fs[i])
			return true;
	return false;
}

/* The index directory's path, from the environment the caller gave (one rule with
 * `halo-run index`: linux_index_place). */
static bool index_base(const struct linux_launch *l, char *out, size_t n, size_t *home_len)
{
	const char *x = getenv("XDG_STATE_HOME");
	const char *home = l->env_home ? l->env_home : l->pw_home;

	if (linux_index_place(home, out, n) < 0)
		return false;
	*home_len = x && x[0] == '/' ? strlen(x) : strlen(home);
	return true;
}

/* mkdir -p below the first `keep` bytes (the home, or XDG_STATE_HOME's parent, must
 * exist already), mode 0700 as the XDG base directories are. A directory made changes
 * what the scan's memo of names knows (scan_pin.c): it is forgotten. */
static void make_dirs(struct linux_scan *s, char *path, size_t keep)
{
	bool made = false;

	/* The whole path first: it exists at every launch but the first. Any answer but
	 * a missing parent is final (the loop below would end the same way). */
	if (mkdir(path, 0700) == 0) {
		linux_scan_memo_free(s);
		return;
	}
	if (errno != ENOENT)
		return;
	for (char *p = path + keep; (p = strchr(p + 1, '/')) != NULL;) {
		*p = '\0';
		made |= mkdir(path, 0700) == 0;
		*p = '/';
	}
	made |= mkdir(path, 0700) == 0;
	if (made)
		linux_scan_memo_free(s);
}

static int open_dir(const struct linux_launch *l, struct linux_scan *s, struct linux_scan_index *ix)
{
	char path[PATH_MAX], real[PATH_MAX];
	size_t keep;
	struct stat st;
	const char *in = NULL;
	int fd;

	if (!index_base(l, path, sizeof(path), &keep)) {
		snprintf(ix->why_not, sizeof(ix->why_not), "no home directory to keep it in");
		return -ENOENT;
	}
	if (!linux_scan_index_key(ix->why_not, sizeof(ix->why_not)))
		return -EPERM;
	if (!ix->keep_nothing) /* HALO_RUN_INDEX=ro: not even the directory */
		make_dirs(s, path, keep);
	if (!linux_scan_realpath(s, path, real)) {
		snprintf(ix->why_not, sizeof(ix->why_not), "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (linux_path_beneath(real, l->workspace))
		in = l->workspace;
	for (size_t i = 0; !in && i < s->writable.n; i++)
		if (linux_path_beneath(real, s->writable.v[i]))
			in = s->writable.v[i];
	if (in) {
		snprintf(ix->why_not, sizeof(ix->why_not),
			 "%s lies in %s, which the sandbox can write; set XDG_STATE_HOME "
			 "elsewhere",
			 real, in);
		return -EPERM;
	}
	fd = open(real, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(ix->why_not, sizeof(ix->why_not),
			 "%s is not a directory of uid %u writable by it alone", real,
			 (unsigned)geteuid());
		if (fd >= 0)
			close(fd);
		return -EPERM;
	}
	snprintf(ix->dir, sizeof(ix->dir), "%s", real);
	ix->dirfd = fd;
	return 0;
}

/* What decides which entries the index keeps, and whether a tree is walked at all. */
static uint64_t rules_hash(const struct linux_scan_ctx *c, const bool *guard_of, size_t t)
{
	uint64_t h = linux_index_hash(LINUX_INDEX_HASH_SEED, "rules v1", 8);
	size_t n_guard;
	const char *const *g = linux_scan_guard_names(&n_guard);

	for (size_t i = 0; i < c->n_name_globs; i++) {
		h = linux_index_hash(h, c->name_globs[i], strlen(c->name_globs[i]) + 1);
		h = linux_index_hash(h, c->name_prefix[i], strlen(c->name_prefix[i]) + 1);
	}
	h = linux_index_hash(h, "/", 1);
	for (size_t i = 0; i < c->n_path_globs; i++)
		h = linux_index_hash(h, c->path_globs[i], strlen(c->path_globs[i]) + 1);
	for (size_t i = 0; i < n_guard; i++)
		h = linux_index_hash(h, g[i], strlen(g[i]) + 1);
	for (size_t i = 0; i < c->n_roots; i++)
		h = linux_index_hash(h, c->roots[i], strlen(c->roots[i]) + 1);
	h = linux_index_hash(h, &guard_of[t], sizeof(guard_of[t]));
	return linux_index_hash(h, &c->max_depth, sizeof(c->max_depth));
}

void linux_scan_index_name(const struct linux_index_key *k, const char *ext, char *out, size_t n)
{
	snprintf(out, n, "%016llx-%016llx.%s", (unsigned long long)k->dev,
		 (unsigned long long)k->ino, ext);
}

/* The file mapped, not read: a million-entry index is megabytes, and a private
 * read-only mapping of the page cache costs neither the copy nor a fault per page of a
 * fresh buffer. Every writer replaces the file by rename (the mapping keeps the old
 * inode); only a process of the same user truncating it in place could fault us, and
 * that user can stop us by other means anyway. */
void *linux_scan_index_read(int dirfd, const char *name, size_t *len)
{
	struct stat st;
	void *map;
	char why[160];
	int fd;

	*len = 0;
	if (!linux_scan_index_key(why, sizeof(why))) /* nothing can be believed */
		return NULL;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || st.st_nlink != 1 || st.st_size > (off_t)LINUX_INDEX_MAX ||
	    st.st_size == 0) {
		close(fd);
		return NULL;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return NULL;
	*len = (size_t)st.st_size;
	return map;
}

static void unmap(void *buf, size_t len)
{
	munmap(buf, len);
}

int linux_scan_index_parse(void *buf, size_t len, struct linux_index *ix, char *why, size_t n)
{
	return linux_index_parse_with(buf, len, unmap, ix, why, n);
}

/* The tree's index when the file is this tree's, else nothing (in.n == 0). */
static void load(struct linux_scan_index *ix, struct linux_scan_tree_index *t)
{
	char name[64], why[128];
	size_t len = 0;
	void *buf;

	linux_scan_index_name(&t->key, "idx", name, sizeof(name));
	if (!(buf = linux_scan_index_read(ix->dirfd, name, &len)))
		return;
	if (linux_scan_index_parse(buf, len, &t->in, why, sizeof(why)) < 0)
		return;
	if (t->in.key.dev != t->key.dev || t->in.key.ino != t->key.ino ||
	    t->in.key.rules != t->key.rules || strcmp(t->in.key.root, t->key.root) != 0 ||
	    !(t->reached = calloc(t->in.n + 1, 1)))
		linux_index_free(&t->in);
}

void linux_scan_index_reached(struct linux_scan_index *ix, unsigned tree,
			      const struct linux_index_dir *d)
{
	struct linux_scan_tree_index *t = &ix->t[tree];

	/* A byte per record, counted once the walk is done (linux_scan_index_count):
	 * no shared counter for the workers to contend on. */
	__atomic_store_n(&t->reached[d - t->in.dirs], 1, __ATOMIC_RELAXED);
}

void linux_scan_index_count(struct linux_scan_index *ix)
{
	for (size_t i = 0; ix && i < ix->n; i++) {
		struct linux_scan_tree_index *t = &ix->t[i];

		t->replayed = 0;
		for (size_t k = 0; t->reached && k < t->in.n; k++)
			t->replayed += t->reached[k];
	}
}

static void open_tree(struct linux_scan_index *ix, struct linux_scan_tree_index *t,
		      const char *root, uint64_t rules)
{
	struct stat st;
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	snprintf(t->root, sizeof(t->root), "%s", root);
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && trusted(fd)) {
		t->usable = true;
		t->key = (struct linux_index_key){st.st_dev, st.st_ino, rules, t->root};
		load(ix, t);
		linux_scan_watch_sync(ix, t);
	}
	close(fd);
}

/* Trees with no directory below their tops are a listing each to walk: no index (its
 * key, its directory, its file, a watcher) pays for itself there. st_nlink is 2 for a
 * directory without subdirectories on ext4, xfs and tmpfs; a file system that counts
 * otherwise (btrfs says 1) keeps its index, as does a tree that cannot be looked at. */
static bool all_leaves(const struct linux_scan_ctx *c)
{
	struct stat st;

	for (size_t i = 0; i < c->n_roots; i++)
		if (stat(c->roots[i], &st) < 0 || !S_ISDIR(st.st_mode) || st.st_nlink != 2)
			return false;
	return true;
}

void linux_scan_index_open(const struct linux_launch *l, struct linux_scan *s,
			   struct linux_scan_ctx *c, const bool *guard_of)
{
	const char *mode = getenv("HALO_RUN_INDEX");
	struct linux_scan_index *ix;
	struct timespec now;

	c->ix = NULL;
	/* HALO_RUN_INDEX=0: a walk of its own, no index read or kept (halo-run verify's
	 * own view of what a workspace holds); =ro: the index and its watcher used as by
	 * any launch, nothing written and no watcher started (verify's launches). */
	if (mode && strcmp(mode, "0") == 0)
		return;
	const char *w = getenv("HALO_RUN_INDEX_WATCH");
	if (w && strcmp(w, "0") == 0)
		linux_scan_watch_enabled = false;
	if (w && strcmp(w, "1") == 0)
		linux_scan_watch_forced = true;
	if (!linux_scan_watch_forced && all_leaves(c))
		return;
	ix = calloc(1, sizeof(*ix));
	if (!ix || !(ix->t = calloc(c->n_roots, sizeof(*ix->t)))) {
		free(ix);
		return;
	}
	ix->n = c->n_roots;
	ix->dirfd = -1;
	ix->keep_nothing = mode && strcmp(mode, "ro") == 0;
	clock_gettime(CLOCK_REALTIME, &now);
	ix->racy_from = (int64_t)now.tv_sec - linux_scan_racy_seconds;
	if (open_dir(l, s, ix) == 0)
		for (size_t i = 0; i < c->n_roots; i++)
			open_tree(ix, &ix->t[i], c->roots[i], rules_hash(c, guard_of, i));
	c->ix = ix;
}

static bool write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* The file's bytes, records in walk order (linux_index_find_near): serialised once
 * as the workers left them, then parsed back (which checks them), sorted, serialised
 * (linux_index_sorted, the path fuzz_scan_index_sorted runs). */
static void *sorted(struct linux_scan_tree_index *t, size_t *len)
{
	void *buf = linux_index_serialize(&t->key, t->out, LINUX_SCAN_WORKERS_MAX, len);

	return buf ? linux_index_sorted(buf, *len, len) : NULL;
}

/* Atomically: a reader sees the old file or the new one, never a part. No fsync: a
 * crash that leaves a torn file fails the checksum, and the tree is walked again. */
static void store_tree(struct linux_scan_index *ix, struct linux_scan_tree_index *t)
{
	char name[64], tmp[96];
	size_t len;
	void *buf;
	int fd;

	/* The records replayed, as they were, in the first buffer (no worker uses it:
	 * helpers are 1.. and the calling thread's records go to out[0], so append). */
	for (size_t i = 0; i < t->in.n; i++)
		if (t->reached[i])
			linux_index_out_copy(&t->out[0], &t->in.dirs[i]);
	if (!(buf = sorted(t, &len)))
		return;
	linux_scan_index_name(&t->key, "idx", name, sizeof(name));
	snprintf(tmp, sizeof(tmp), ".%s.%d.tmp", name, (int)getpid());
	unlinkat(ix->dirfd, tmp, 0);
	fd = openat(ix->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		bool ok = write_all(fd, buf, len);
		if (close(fd) < 0 || !ok || renameat(ix->dirfd, tmp, ix->dirfd, name) < 0)
			unlinkat(ix->dirfd, tmp, 0);
	}
	free(buf);
}

void linux_scan_index_store(struct linux_scan_index *ix, bool truncated, bool start_watchers)
{
	if (!ix || ix->dirfd < 0 || truncated || ix->keep_nothing)
		return;
	for (size_t i = 0; i < ix->n; i++) {
		struct linux_scan_tree_index *t = &ix->t[i];
		/* Unchanged: every directory replayed, none gone. */
		if (t->usable && (t->listed > 0 || t->replayed != t->in.n))
			store_tree(ix, t);
		/* A watcher that answers sees the new file itself. */
		if (start_watchers)
			linux_scan_watch_start(ix, t);
	}
}

void linux_scan_index_free(struct linux_scan_index *ix)
{
	if (!ix)
		return;
	for (size_t i = 0; i < ix->n; i++) {
		linux_index_free(&ix->t[i].in);
		free(ix->t[i].reached);
		free(ix->t[i].dirty);
		for (size_t w = 0; w < LINUX_SCAN_WORKERS_MAX; w++)
			linux_index_out_free(&ix->t[i].out[w]);
	}
	if (ix->dirfd >= 0)
		close(ix->dirfd);
	free(ix->t);
	free(ix);
}

/* Beneath the workspace or a writable root: the top of that tree, or NULL. */
static const char *writable_tree(const struct linux_launch *l, const struct linux_scan *s,
				 const char *real)
{
	if (linux_path_beneath(real, l->workspace))
		return l->workspace;
	for (size_t i = 0; i < s->writable.n; i++)
		if (linux_path_beneath(real, s->writable.v[i]))
			return s->writable.v[i];
	return NULL;
}

/* Is a writable tree (or the workspace) /tmp/halo-run-* or beneath one? */
static bool tmp_tree(const struct linux_launch *l, const struct linux_scan *s)
{
	static const char pre[] = "/tmp/halo-run-";

	if (strncmp(l->workspace, pre, sizeof(pre) - 1) == 0)
		return true;
	for (size_t i = 0; i < s->writable.n; i++)
		if (strncmp(s->writable.v[i], pre, sizeof(pre) - 1) == 0)
			return true;
	return false;
}

/* The deepest existing directory on `place`'s way lies in a tree the sandbox writes:
 * the rest made (0700), so that there is a directory to mask. */
static bool place_in_writable(const struct linux_launch *l, struct linux_scan *s, const char *place)
{
	char path[PATH_MAX], real[PATH_MAX];
	size_t n = strlen(place), keep;

	snprintf(path, sizeof(path), "%s", place);
	while (!linux_scan_realpath(s, path, real)) {
		char *sl = strrchr(path, '/');
		if (errno != ENOENT || !sl || sl == path)
			return false;
		*sl = '\0';
	}
	if (!writable_tree(l, s, real))
		return false;
	if ((keep = strlen(path)) < n) {
		snprintf(path, sizeof(path), "%s", place);
		make_dirs(s, path, keep);
	}
	return true;
}

/* Where a launch keeps its index must be out of every other launch's reach too: a
 * command whose writable tree holds that place (the home as the workspace, a writable
 * root above it) could write a record there that leaves a protected file out, and the
 * next launch in that tree would replay it. Each place a launch of this user may use
 * (XDG_STATE_HOME's, the home's default, the password database home's default) that
 * lies in a writable tree is masked whole, its ancestors pinned (linux_scan_pin):
 * neither read, written, nor moved aside and made afresh. */
size_t linux_scan_index_places(const struct linux_launch *l, char out[][PATH_MAX])
{
	const char *homes[] = {l->env_home, l->pw_home};
	size_t n = 0;

	if (linux_index_place(l->env_home ? l->env_home : l->pw_home, out[n], PATH_MAX) == 0)
		n++;
	for (size_t i = 0; i < sizeof(homes) / sizeof(homes[0]); i++) {
		int w = homes[i] && homes[i][0] == '/' && strcmp(homes[i], "/") != 0
			    ? snprintf(out[n], PATH_MAX, "%s/.local/state/halo-run/index", homes[i])
			    : -1;
		if (w > 0 && w < PATH_MAX)
			n++;
	}
	return n;
}

bool linux_index_place_named(const char *path)
{
	static const char tail[] = "/halo-run/index";
	size_t len = strlen(path);

	return len >= sizeof(tail) && strcmp(path + len - (sizeof(tail) - 1), tail) == 0;
}

bool linux_scan_own_index_place(const struct linux_launch *l, const char *path)
{
	char places[LINUX_INDEX_PLACES][PATH_MAX], real[PATH_MAX];
	size_t n = linux_scan_index_places(l, places);

	for (size_t k = 0; k < n; k++)
		if (strcmp(path, places[k]) == 0 ||
		    (realpath(places[k], real) && strcmp(path, real) == 0))
			return true;
	return false;
}

/* The key, where a writable tree holds its directory (a writable root that is that
 * directory): made before the sandbox runs, then masked, a mount point, so that no
 * command reads it, replaces it or removes it to have one of its own made. Only looked
 * at where a tree is named /tmp/halo-run-*: no calls for the usual launch. */
static void mask_key(const struct linux_launch *l, struct linux_scan *s)
{
	char key[PATH_MAX + 16], why[PATH_MAX + 64];

	if (!tmp_tree(l, s))
		return;
	linux_scan_index_key_dir(key, PATH_MAX);
	if (writable_tree(l, s, key) && linux_scan_index_key(why, sizeof(why))) {
		strcat(key, "/index.key");
		linux_scan_add_own_mask(s, key);
	}
}

void linux_scan_index_shield(const struct linux_launch *l, struct linux_scan *s)
{
	char places[LINUX_INDEX_PLACES][PATH_MAX];
	size_t n = linux_scan_index_places(l, places);

	for (size_t i = 0; i < n; i++)
		if (place_in_writable(l, s, places[i]))
			linux_scan_add_own_mask(s, places[i]);
	mask_key(l, s);
	linux_scan_cache_pin(l, s);
}

/* The directory of every workspace's caches is hidden (an empty tmpfs) where it is at
 * launch; a command whose tree holds it (the home as the workspace) could move
 * ~/.cache or ~/.cache/halo-run aside, and the next launch would hide a fresh one and
 * leave the old one, every other workspace's cache in it, readable and writable. Its
 * parent and their ancestors in the tree are pinned (bound onto themselves). */
void linux_scan_cache_pin(const struct linux_launch *l, struct linux_scan *s)
{
	char parent[PATH_MAX];
	const char *sl = l->cache_hide ? strrchr(l->cache_hide, '/') : NULL;

	if (!sl || sl == l->cache_hide || (size_t)(sl - l->cache_hide) >= sizeof(parent))
		return;
	snprintf(parent, sizeof(parent), "%.*s", (int)(sl - l->cache_hide), l->cache_hide);
	/* Shown inside: the caches' directory holding only the one bound there. */
	snprintf(s->hidden_top, sizeof(s->hidden_top), "%s", l->cache_hide);
	for (size_t i = 0; i < l->n_cache_binds; i++) {
		const char *b = l->cache_binds[i], *bs = strrchr(b, '/');
		if (bs && (size_t)(bs - b) == strlen(l->cache_hide) &&
		    strncmp(b, l->cache_hide, (size_t)(bs - b)) == 0)
			snprintf(s->hidden_own, sizeof(s->hidden_own), "%s", b);
	}
	if (linux_paths_beneath_any(parent, &s->writable) &&
	    !linux_paths_beneath_any(parent, &s->masked))
		linux_paths_add(&s->pinned, parent);
}
