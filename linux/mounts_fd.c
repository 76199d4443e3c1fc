/* fd-based mount primitives. A path is resolved once, without following any
 * symlink (openat2 RESOLVE_NO_SYMLINKS, or a component-by-component O_NOFOLLOW walk),
 * and every mount then acts on that fd (open_tree, fsmount, move_mount,
 * mount_setattr): a symlink planted in the workspace, even while we work, cannot
 * redirect where a mount lands or what it exposes — the bind-mount symlink-race
 * class of container escapes. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/mounts_int.h"

/* Absolute, no empty, "." or ".." component: the only paths we resolve. */
static bool path_is_plain(const char *p)
{
	if (p[0] != '/')
		return false;
	for (const char *c = p + 1; *c;) {
		size_t n = strcspn(c, "/");
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += n;
		if (*c == '/' && *++c == '\0')
			return false;
	}
	return true;
}

/* 1 when made here, 0 when it was there already, else -errno. */
static int create_component(int dir, const char *name, enum mnt_create create, bool last)
{
	if (last && create == MNT_CREATE_FILE) {
		int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0);
		if (fd < 0)
			return errno == EEXIST ? 0 : -errno;
		close(fd);
		return 1;
	}
	if (mkdirat(dir, name, 0755) < 0)
		return errno == EEXIST ? 0 : -errno;
	return 1;
}

/* Why a component could not be opened as a directory: a symlink in the way is ELOOP. */
static int not_dir_err(int dir, const char *name, int err)
{
	struct stat st;

	if (err == ENOTDIR && fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode))
		return ELOOP;
	return err;
}

/* The portable resolution: each component opened relative to its parent with
 * O_NOFOLLOW and checked not to be a symlink (O_DIRECTORY where a directory is what
 * must be there: a link then fails the open itself, no stat needed); also the only way
 * to create missing mount points. Below a directory made here (empty when made), the
 * next one is made without asking first whether it is there; it is opened the same way
 * after (one that appeared meanwhile is EEXIST, then checked like any). The parents'
 * descriptors are closed together at the end (linux_fds_close). */
#define WALK_KEEP 32

static int open_walk(const char *prefix, const char *path, enum mnt_create create)
{
	char comp[256];
	int fd = open(prefix[0] ? prefix : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int parents[WALK_KEEP], rc = 0;
	size_t np = 0;
	bool made = false;

	for (const char *c = path + 1; fd >= 0 && *c;) {
		size_t n = strcspn(c, "/");
		bool last = c[n] == '\0';
		int flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
		bool dir = !last || create == MNT_CREATE_DIR;
		struct stat st;
		int next = -1;

		if (n >= sizeof(comp)) {
			rc = -ENAMETOOLONG;
			break;
		}
		memcpy(comp, c, n);
		comp[n] = '\0';
		c += n + !last;
		if (dir)
			flags |= O_DIRECTORY;
		errno = ENOENT;
		if (!made || create == MNT_NO_CREATE)
			next = openat(fd, comp, flags);
		if (next < 0 && errno == ENOENT && create != MNT_NO_CREATE) {
			int r = create_component(fd, comp, create, last);
			if (r < 0) {
				rc = r;
				break;
			}
			made = r == 1;
			next = openat(fd, comp, flags);
		}
		int err = next < 0 ? not_dir_err(fd, comp, errno) : 0;
		if (np < WALK_KEEP)
			parents[np++] = fd;
		else
			close(fd);
		fd = -1;
		if (next < 0) {
			rc = -err;
			break;
		}
		if (!dir && (fstat(next, &st) < 0 || S_ISLNK(st.st_mode))) {
			close(next);
			rc = -ELOOP;
			break;
		}
		fd = next;
	}
	if (fd < 0 && rc == 0)
		rc = -errno;
	linux_fds_close(parents, np);
	if (rc < 0) {
		if (fd >= 0)
			close(fd);
		return rc;
	}
	return fd;
}

int mnt_open(const char *prefix, const char *path, enum mnt_create create)
{
	static bool no_openat2;
	char full[PATH_MAX];
	struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
	int fd, w;

	if (!path_is_plain(path))
		return -EINVAL;
	w = snprintf(full, sizeof(full), "%s%s", prefix, strcmp(path, "/") == 0 ? "" : path);
	if (w < 0 || (size_t)w >= sizeof(full))
		return -ENAMETOOLONG;
	if (!no_openat2) {
		fd = (int)syscall(SYS_openat2, AT_FDCWD, full[0] ? full : "/", &how, sizeof(how));
		if (fd >= 0)
			return fd;
		if (errno == ENOSYS)
			no_openat2 = true;
		else if (errno != ENOENT || create == MNT_NO_CREATE)
			return -errno;
	}
	return open_walk(prefix, path, create);
}

int mnt_open_last(const char *prefix, const char *path)
{
	char parent[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int dfd, fd, err;

	if (!slash || slash[1] == '\0' || (size_t)(slash - path) >= sizeof(parent))
		return -EINVAL;
	memcpy(parent, path, (size_t)(slash - path));
	parent[slash == path ? 1 : slash - path] = '\0';
	if (slash == path)
		parent[0] = '/';
	if ((dfd = mnt_open(prefix, parent, MNT_NO_CREATE)) < 0)
		return dfd;
	fd = openat(dfd, slash + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	err = errno;
	close(dfd);
	return fd < 0 ? -err : fd;
}

int mnt_open_or_die(int rfd, const char *prefix, const char *path, enum mnt_create create)
{
	int fd = mnt_open(prefix, path, create);

	if (fd < 0)
		linux_die(rfd, MNT_STEP, -fd, "open %s without following symlinks%s", path,
			  fd == -ELOOP ? " (a symlink is in the way)" : "");
	return fd;
}

int mnt_is_dir(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 1 : 0;
}

int mnt_write_new_keep_or_die(int rfd, int dir, const char *name, mode_t mode, const void *data,
			      size_t len, const char *what)
{
	const char *p = data;
	int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);

	if (fd < 0)
		linux_die(rfd, MNT_STEP, errno, "%s: create", what);
	for (size_t o = 0; o < len;) {
		ssize_t w = write(fd, p + o, len - o);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			linux_die(rfd, MNT_STEP, w < 0 ? errno : EIO, "%s: write", what);
		o += (size_t)w;
	}
	return fd;
}

void mnt_write_new_or_die(int rfd, int dir, const char *name, mode_t mode, const void *data,
			  size_t len, const char *what)
{
	close(mnt_write_new_keep_or_die(rfd, dir, name, mode, data, len, what));
}

static int fs_option(int fs, const char *opt)
{
	char key[64];
	const char *eq = strchr(opt, '=');

	if (!eq)
		return fsconfig(fs, FSCONFIG_SET_FLAG, opt, NULL, 0);
	snprintf(key, sizeof(key), "%.*s", (int)(eq - opt), opt);
	return fsconfig(fs, FSCONFIG_SET_STRING, key, eq + 1, 0);
}

/* The new file system's mount, not yet attached, its context in *fs. */
static int fresh_detached_or_die(int rfd, const char *fstype, const char *const *opts,
				 unsigned attrs, const char *where, int *fs_ctx)
{
	int fs = fsopen(fstype, FSOPEN_CLOEXEC);
	int mnt;

	if (fs < 0)
		linux_die(rfd, MNT_STEP, errno, "%s on %s: fsopen", fstype, where);
	for (size_t i = 0; opts && opts[i]; i++)
		if (fs_option(fs, opts[i]) < 0)
			linux_die(rfd, MNT_STEP, errno, "%s on %s: option %s", fstype, where,
				  opts[i]);
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		linux_die(rfd, MNT_STEP, errno, "%s on %s: create", fstype, where);
	mnt = fsmount(fs, FSMOUNT_CLOEXEC, attrs);
	if (mnt < 0)
		linux_die(rfd, MNT_STEP, errno, "%s on %s: fsmount", fstype, where);
	if (fs_ctx)
		*fs_ctx = fs;
	else
		close(fs);
	return mnt;
}

int mnt_fresh_keep_or_die(int rfd, const char *fstype, const char *const *opts, unsigned attrs,
			  int target, const char *where, int *fs_ctx)
{
	int mnt = fresh_detached_or_die(rfd, fstype, opts, attrs, where, fs_ctx);

	if (move_mount(mnt, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		linux_die(rfd, MNT_STEP, errno, "%s on %s: attach", fstype, where);
	return mnt;
}

void mnt_seal_or_die(int rfd, int fs_ctx, const char *where)
{
	if (fsconfig(fs_ctx, FSCONFIG_SET_FLAG, "ro", NULL, 0) < 0 ||
	    fsconfig(fs_ctx, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) < 0)
		linux_die(rfd, MNT_STEP, errno, "make %s read-only", where);
	close(fs_ctx);
}

/* ---- by path, where nothing else can change the way
 *
 * mount(2) by name, for directories laid out by the kernel, by init on a file system
 * of its own (the staging root), or by root on the host under the read-only bind of
 * its root (/newroot/tmp, /dev, /proc): never a path a user can write on the way to
 * (the workspace, the home, a writable root: those go by fd, above). Nothing else runs
 * in init's new mount namespace and the host's own directories are root's, so what
 * was checked (mnt_plain_dir) is what is mounted on. One call where the fd API takes
 * seven to ten (fsopen, an fsconfig per option, create, fsmount, the target's open,
 * move_mount, the closes). The rule is kept by a table, not by the callers: a path not
 * in it is refused, so that no plan path (the user's) can ever be mounted by name. */
static const char *const by_path_ok[] = {
    "/tmp",
    "/mnt",
    "/run",
    "/proc", /* the staging root's bases */
    MNT_NEWROOT "/tmp",
    MNT_NEWROOT "/run",
    MNT_NEWROOT "/var/run",
    MNT_NEWROOT "/dev",
    MNT_NEWROOT "/dev/pts",
    MNT_NEWROOT "/dev/shm",
    MNT_NEWROOT "/proc",
    MNT_NAMES,
    MNT_CARVE,
};

static void by_path_or_die(int rfd, const char *path)
{
	for (size_t i = 0; i < sizeof(by_path_ok) / sizeof(by_path_ok[0]); i++)
		if (strcmp(path, by_path_ok[i]) == 0)
			return;
	linux_die(rfd, MNT_STEP, EPERM, "%s: not a fixed directory of root's or init's", path);
}

int mnt_plain_dir(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return -errno;
	return S_ISLNK(st.st_mode) ? -ELOOP : S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

void mnt_plain_dir_or_die(int rfd, const char *path, const char *shown)
{
	int rc = mnt_plain_dir(path);

	if (rc < 0)
		linux_die(rfd, MNT_STEP, -rc, "cannot mount on %s%s", shown,
			  rc == -ELOOP ? " (the host's is a symlink)" : "");
}

void mnt_fresh_path_or_die(int rfd, const char *fstype, const char *data, unsigned long flags,
			   const char *path, const char *where)
{
	by_path_or_die(rfd, path);
	/* "none" as the source, as fsopen(2) names it: mountinfo reads as before. */
	if (mount("none", path, fstype, flags, data) < 0)
		linux_die(rfd, MNT_STEP, errno, "%s on %s", fstype, where);
}

int mnt_fresh_path_open_or_die(int rfd, const char *fstype, const char *data, unsigned long flags,
			       const char *path, const char *where)
{
	int fd;

	mnt_fresh_path_or_die(rfd, fstype, data, flags, path, where);
	/* The new mount's root, a directory of the new file system: no link to follow. */
	if ((fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		linux_die(rfd, MNT_STEP, errno, "%s on %s: open its root", fstype, where);
	return fd;
}

void mnt_seal_path_or_die(int rfd, const char *path, unsigned long flags, const char *where)
{
	by_path_or_die(rfd, path);
	/* A remount without MS_BIND reconfigures the superblock (read-only; a tmpfs keeps
	 * the options it was made with) and sets the mount's own flags: flags repeats
	 * the ones it has, which this mount, made in our namespace, does not lock. */
	if (mount(NULL, path, NULL, MS_REMOUNT | MS_RDONLY | flags, NULL) < 0)
		linux_die(rfd, MNT_STEP, errno, "make %s read-only", where);
}

/* ---- mount_setattr, and the MS_REMOUNT fallback for kernels before 5.12 */

/* Flags a remount must repeat: in a user namespace the ones inherited from the host
 * are locked, and a remount that would clear them fails. */
static unsigned long kept_flags(const char *path)
{
	static const struct {
		unsigned long st, ms;
	} t[] = {{ST_RDONLY, MS_RDONLY},    {ST_NOSUID, MS_NOSUID},
		 {ST_NODEV, MS_NODEV},	    {ST_NOEXEC, MS_NOEXEC},
		 {ST_NOATIME, MS_NOATIME},  {ST_NODIRATIME, MS_NODIRATIME},
		 {ST_RELATIME, MS_RELATIME}};
	struct statvfs sv;
	unsigned long ms = 0;

	if (statvfs(path, &sv) < 0)
		return 0;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (sv.f_flag & t[i].st)
			ms |= t[i].ms;
	return ms;
}

static unsigned long attr_to_ms(uint64_t attr)
{
	return (attr & MOUNT_ATTR_RDONLY ? MS_RDONLY : 0) |
	       (attr & MOUNT_ATTR_NOSUID ? MS_NOSUID : 0) |
	       (attr & MOUNT_ATTR_NODEV ? MS_NODEV : 0) |
	       (attr & MOUNT_ATTR_NOEXEC ? MS_NOEXEC : 0);
}

static int remount_one(const char *path, uint64_t attr)
{
	unsigned long fl = MS_BIND | MS_REMOUNT | kept_flags(path) | attr_to_ms(attr);

	return mount(NULL, path, NULL, fl, NULL) < 0 ? -errno : 0;
}

/* mountinfo escapes blanks and backslashes as \ooo. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] && s[3]) {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* Every mount at or beneath `top` (a path in our current root), top first. Path-based,
 * hence used only where mount_setattr is missing. Limit: a host mount stacked under
 * another at the same place cannot be named by a path and keeps its flags; it stays
 * covered (the command can neither unmount nor move what covers it). */
static int remount_tree(const char *top, uint64_t attr)
{
	FILE *f = fopen(MNT_OLDROOT "/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0, n = strlen(top);
	int rc = f ? 0 : -errno;

	while (f && rc == 0 && getline(&line, &cap, f) > 0) {
		char mp[PATH_MAX];
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1)
			continue;
		unescape(mp);
		if (strncmp(mp, top, n) == 0 && (mp[n] == '\0' || mp[n] == '/'))
			rc = remount_one(mp, attr);
	}
	free(line);
	if (f)
		fclose(f);
	return rc;
}

bool mnt_setattr_try_or_die(int rfd, int mnt, uint64_t attr_set, bool recursive, const char *where)
{
	struct mount_attr a = {.attr_set = attr_set};

	if (linux_test_hooks()->force_remount)
		return false;
	if (mount_setattr(mnt, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a, sizeof(a)) ==
	    0)
		return true;
	if (errno != ENOSYS)
		linux_die(rfd, MNT_STEP, errno, "set attributes on %s", where);
	return false;
}

void mnt_setattr_or_die(int rfd, int mnt, uint64_t attr_set, bool recursive, const char *where)
{
	char self[64], path[PATH_MAX];
	ssize_t n;
	int rc;

	if (mnt_setattr_try_or_die(rfd, mnt, attr_set, recursive, where))
		return;
	/* The fd names the mount: the host's procfs, still at /oldroot, turns it into
	 * a path for mount(2). */
	snprintf(self, sizeof(self), MNT_OLDROOT "/proc/self/fd/%d", mnt);
	if (!recursive) {
		rc = remount_one(self, attr_set);
	} else if ((n = readlink(self, path, sizeof(path) - 1)) < 0) {
		rc = -errno;
	} else {
		path[n] = '\0';
		rc = remount_tree(path, attr_set);
	}
	if (rc < 0)
		linux_die(rfd, MNT_STEP, -rc, "remount %s", where);
}

/* The kernel refuses to attach a directory on a non-directory or the reverse
 * (EINVAL); the types are asked only then, to say so plainly. */
static void attach_or_die(int rfd, int tree, int src, int sdir, int dst, int ddir,
			  const char *where)
{
	int err;

	if (move_mount(tree, "", dst, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) == 0)
		return;
	err = errno;
	if (err == EINVAL) {
		sdir = sdir < 0 ? mnt_is_dir(src) : sdir;
		ddir = ddir < 0 ? mnt_is_dir(dst) : ddir;
		if (sdir >= 0 && ddir >= 0 && sdir != ddir)
			linux_die(rfd, MNT_STEP, ENOTDIR, "bind %s: source and target changed type",
				  where);
	}
	linux_die(rfd, MNT_STEP, err, "bind %s: attach", where);
}

int mnt_bind_typed_or_die(int rfd, int src, int sdir, int dst, int ddir, uint64_t attr_set,
			  const char *where)
{
	bool set_early;
	int tree;

	if (sdir >= 0 && ddir >= 0 && sdir != ddir)
		linux_die(rfd, MNT_STEP, ENOTDIR, "bind %s: source and target changed type", where);
	/* A recursive clone: a non-recursive one of a tree holding the host's locked
	 * mounts is refused, and would reveal what they cover. */
	tree =
	    open_tree(src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0)
		linux_die(rfd, MNT_STEP, errno, "bind %s: clone", where);
	/* Attributes before attaching: the mount is never visible without them (0: the
	 * source's own, cloned with it). */
	set_early = attr_set == 0 || mnt_setattr_try_or_die(rfd, tree, attr_set, true, where);
	attach_or_die(rfd, tree, src, sdir, dst, ddir, where);
	if (!set_early)
		mnt_setattr_or_die(rfd, tree, attr_set, true, where);
	return tree;
}

int mnt_bind_or_die(int rfd, int src, int dst, uint64_t attr_set, const char *where)
{
	return mnt_bind_typed_or_die(rfd, src, -1, dst, -1, attr_set, where);
}
