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
#include <unistd.h>

#include "linux/scan_int.h"

size_t linux_scan_max_entries = LINUX_SCAN_MAX_ENTRIES;
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

/* A bare repository shows itself by these entries side by side. */
enum { BARE_HEAD = 1, BARE_CONFIG = 2, BARE_OBJECTS = 4, BARE_REFS = 8, BARE_ALL = 15 };

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
		    fnmatch(c->name_globs[i], name, FNM_CASEFOLD) == 0)
			return true;
	for (size_t i = 0; i < c->n_path_globs; i++)
		for (const char *r = rel; r; r = strchr(r, '/') ? strchr(r, '/') + 1 : NULL)
			if (fnmatch(c->path_globs[i], r, FNM_CASEFOLD) == 0)
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
		linux_scan_add_mask(c->s, c->path);
	else
		linux_paths_add(&c->s->masked, c->path);
}

/* A .git that is a symlink: git follows it, so guard what it leads to, and pin the
 * link (linux_scan_add_guard records it). */
static void on_git_link(struct linux_scan_ctx *c, const char *worktree)
{
	char real[PATH_MAX];
	struct stat st;

	if (linux_scan_resolve(c->path, real, sizeof(real), &c->s->links) < 0 ||
	    stat(real, &st) < 0)
		return;
	if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))
		linux_scan_git_repo(c, real, worktree, S_ISREG(st.st_mode));
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
		linux_scan_truncate(c);
		return;
	}
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* Unreadable (EACCES) or gone since it was listed: nothing we can list is there. */
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || (st.st_dev != dev && is_pseudo_fs(fd))) {
		close(fd);
		return;
	}
	if (!linux_scan_offer(c, fd, len, depth + 1, st.st_dev))
		linux_scan_walk_dir(c, fd, len, depth + 1, st.st_dev); /* closes fd */
}

static unsigned bare_flag(const char *name)
{
	static const struct {
		const char *name;
		unsigned flag;
	} t[] = {{"HEAD", BARE_HEAD},
		 {"config", BARE_CONFIG},
		 {"objects", BARE_OBJECTS},
		 {"refs", BARE_REFS}};

	if (!strchr("Hcor", name[0]))
		return 0;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(name, t[i].name) == 0)
			return t[i].flag;
	return 0;
}

/* One entry of the directory at c->path[0..len): c->path holds its full path. */
static void visit(struct linux_scan_ctx *c, int dfd, const char *name, unsigned char d_type,
		  size_t len, size_t elen, unsigned depth, dev_t dev)
{
	const char *rel = c->path + c->root_len + 1;
	unsigned char type = entry_type(dfd, name, d_type);

	if (linux_scan_glob_match(c, name, rel)) {
		on_protected(c, type);
		return;
	}
	/* A unix socket found in a tree we bind in belongs to a host service: connect()
	 * ignores a read-only mount, so mask it. */
	if (type == DT_SOCK) {
		linux_paths_add(&c->s->masked, c->path);
		return;
	}
	if (name[0] == '.' && strcmp(name, ".git") == 0) {
		/* Never descend: objects are many and hold no names a glob is about. */
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
		return;
	}
	if (c->guard && linux_scan_guard_name(name))
		linux_scan_add_guard(c->s, c->path, false);
	if (type == DT_DIR)
		descend(c, dfd, name, elen, depth, dev);
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

/* Walk one batch; false when the walk must stop. */
static bool walk_batch(struct linux_scan_ctx *c, int fd, const char *buf, size_t n, size_t len,
		       unsigned depth, dev_t dev, unsigned *bare)
{
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
			linux_scan_truncate(c);
			return false;
		}
		*bare |= bare_flag(name);
		if (nothing_to_do(c, name, de->d_type))
			continue;
		c->path[len] = '/';
		memcpy(c->path + len + 1, name, nlen + 1);
		visit(c, fd, name, de->d_type, len, len + 1 + nlen, depth, dev);
		c->path[len] = '\0';
	}
	return true;
}

void linux_scan_walk_dir(struct linux_scan_ctx *c, int fd, size_t len, unsigned depth, dev_t dev)
{
	char *buf = malloc(DIR_BUF_SIZE);
	unsigned bare = 0;
	ssize_t n;

	if (!buf) {
		/* A directory we cannot list is a tree we do not cover: fail closed. */
		linux_scan_truncate(c);
		close(fd);
		return;
	}
	while (!linux_scan_stopped(c) && (n = getdents64(fd, buf, DIR_BUF_SIZE)) > 0)
		if (!walk_batch(c, fd, buf, (size_t)n, len, depth, dev, &bare))
			break;
	free(buf);
	close(fd);
	if (bare == BARE_ALL && c->guard && !linux_scan_stopped(c))
		linux_scan_git_repo(c, len ? c->path : "/", NULL, false);
}
