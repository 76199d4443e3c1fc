/* halo-run's own name-resolution files inside the sandbox (PLAN_NAMES: /etc/hosts,
 * /etc/resolv.conf, /etc/nsswitch.conf, their bytes from the plan): written on a
 * small tmpfs of the staging root and bound read-only over the host's files, so that
 * every resolver inside asks the DNS stub, which answers by policy. A file the host
 * does not have is not made (the read-only root has nowhere to put it; the resolver's
 * defaults apply). A symlink (systemd-resolved's resolv.conf -> /run/...) is followed
 * by hand: into the sandbox's fresh /run, the file is written there; elsewhere, its
 * target is covered. */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/mounts_int.h"

#define RO_ATTRS (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)

static int write_file_keep_or_die(int rfd, int dir, const char *name, const struct plan_step *st)
{
	char what[PATH_MAX + 32];

	snprintf(what, sizeof(what), "%s: halo-run's copy", st->path);
	return mnt_write_new_keep_or_die(rfd, dir, name, 0644, st->data, st->len, what);
}

static void write_file_or_die(int rfd, int dir, const char *name, const struct plan_step *st)
{
	close(write_file_keep_or_die(rfd, dir, name, st));
}

/* The symlink at path, resolved lexically against its directory ("." and ".."
 * folded). 0, or -EINVAL when it is not something we follow. */
static int link_target(const char *path, char *out, size_t n)
{
	char link[MNT_NAME_MAX], joined[2 * MNT_NAME_MAX];
	int fd = mnt_open_last(MNT_NEWROOT, path);
	ssize_t len = fd < 0 ? -1 : readlinkat(fd, "", link, sizeof(link) - 1);
	size_t o = 0;

	if (fd >= 0)
		close(fd);
	if (len <= 0)
		return -EINVAL;
	link[len] = '\0';
	if (link[0] == '/')
		snprintf(joined, sizeof(joined), "%s", link);
	else
		snprintf(joined, sizeof(joined), "%.*s/%s", (int)(strrchr(path, '/') - path), path,
			 link);
	for (char *save = NULL, *c = strtok_r(joined, "/", &save); c;
	     c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			while (o > 0 && out[--o] != '/')
				;
			continue;
		}
		if (o + 1 + strlen(c) + 1 > n)
			return -EINVAL;
		out[o++] = '/';
		memcpy(out + o, c, strlen(c));
		o += strlen(c);
	}
	out[o] = '\0';
	return o ? 0 : -EINVAL;
}

/* Into the sandbox's own /run (a fresh tmpfs, sealed later): the directories and the
 * file are made there. */
static void write_under_run_or_die(int rfd, int run, const char *rel, const struct plan_step *st)
{
	char dirs[MNT_NAME_MAX];
	char *slash;
	int dir;

	snprintf(dirs, sizeof(dirs), "%s", rel);
	for (char *p = dirs; (slash = strchr(p, '/')); p = slash + 1) {
		*slash = '\0';
		if (mkdirat(run, dirs, 0755) < 0 && errno != EEXIST)
			linux_die(rfd, MNT_STEP, errno, "%s: make /run/%s", st->path, dirs);
		*slash = '/';
	}
	slash = strrchr(dirs, '/');
	if (slash)
		*slash = '\0';
	dir = slash ? openat(run, dirs, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : dup(run);
	if (dir < 0)
		linux_die(rfd, MNT_STEP, errno, "%s: open /run/%s", st->path, dirs);
	write_file_or_die(rfd, dir, slash ? slash + 1 : rel, st);
	close(dir);
}

/* One small tmpfs on the staging root holds every file halo-run writes for the
 * sandbox to read (the name files, the ssh_config): only read-only binds of single
 * files reach the new root, and the tmpfs itself goes with the staging root. Its size
 * bounds the largest, an ssh_config with the host's appended (ssh_config.c), with room
 * for whole pages of the others on a kernel with 64 KiB pages. */
#define OWN_FLAGS (MS_NOSUID | MS_NODEV | MS_NOEXEC)

int linux_mounts_own_files_or_die(int rfd, struct mnt_own_files *o)
{
	/* By path: the staging root's own directory (mounts_fd.c). */
	if (o->mnt < 0)
		o->mnt = mnt_fresh_path_open_or_die(rfd, "tmpfs", "mode=0755,size=1m,nr_inodes=64",
						    OWN_FLAGS, MNT_NAMES, "halo-run's own files");
	return o->mnt;
}

/* Every file written and its write descriptor closed: the superblock read-only too,
 * so that no mount of it, whatever its own flags, could change a byte. */
void linux_mounts_own_files_seal_or_die(int rfd, struct mnt_own_files *o)
{
	if (o->mnt >= 0) {
		mnt_seal_path_or_die(rfd, MNT_NAMES, OWN_FLAGS, "halo-run's own files");
		close(o->mnt);
	}
	o->mnt = -1;
}

void linux_mounts_name_or_die(int rfd, struct mnt_own_files *o, int run, const struct plan_step *st)
{
	const char *base = strrchr(st->path, '/') + 1;
	int fs = linux_mounts_own_files_or_die(rfd, o), src, dst;
	char target[MNT_NAME_MAX];

	dst = mnt_open(MNT_NEWROOT, st->path, MNT_NO_CREATE);
	if (dst == -ELOOP && link_target(st->path, target, sizeof(target)) == 0) {
		if (strncmp(target, "/run/", 5) == 0 && run >= 0) {
			write_under_run_or_die(rfd, run, target + 5, st);
			return;
		}
		dst = mnt_open(MNT_NEWROOT, target, MNT_NO_CREATE);
	}
	if (dst == -ENOENT)
		return;
	if (dst < 0)
		linux_die(rfd, MNT_STEP, -dst, "%s: open without following symlinks", st->path);
	src = write_file_keep_or_die(rfd, fs, base, st);
	close(mnt_bind_typed_or_die(rfd, src, 0, dst, -1, RO_ATTRS, st->path));
	close(src);
	close(dst);
}
