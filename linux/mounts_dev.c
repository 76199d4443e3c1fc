/* A minimal /dev. The host's /dev exposes disks, the kernel's memory, input devices
 * and the host's terminals; the sandbox gets a small tmpfs with only the devices
 * every program expects, bound from the host's nodes (a user namespace cannot create
 * device nodes; binding the existing ones is how rootless runtimes do it), its own
 * devpts instance (no host terminal reachable by name) and its own /dev/shm. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "linux/mounts_int.h"

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}
#define AUTO_FD __attribute__((cleanup(close_fd))) int

/* With the numbers Linux gives them (Documentation/admin-guide/devices.txt). */
static const struct {
	const char *name;
	bool required;
	unsigned major, minor;
} dev_nodes[] = {
    {"null", true, 1, 3},    {"zero", true, 1, 5}, {"full", false, 1, 7}, {"random", false, 1, 8},
    {"urandom", true, 1, 9}, {"tty", false, 5, 0}, /* the controlling terminal, whichever it is */
};

static const struct {
	const char *name;
	const char *target;
} dev_links[] = {
    {"ptmx", "pts/ptmx"},	   {"fd", "/proc/self/fd"},	  {"stdin", "/proc/self/fd/0"},
    {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"},
};

/* Bind the host's node onto an empty file: no nodev here (the node must work), but
 * nosuid and noexec, given to all the nodes at once before /dev is visible to anyone
 * (linux_mounts_dev_or_die). By path, three calls a node: the mount point made in our
 * own fresh tmpfs, the bind (the way to the host's node is root's, /dev on the host
 * root), and what it bound checked to be the device of that name, by its number:
 * mount(2) follows a link, so whatever the host has there, only that device is kept. */
static void bind_node_or_die(int rfd, size_t i)
{
	const char *name = dev_nodes[i].name;
	char src[64], dst[64];
	struct stat bound;
	int err = 0;

	snprintf(src, sizeof(src), MNT_OLDROOT "/dev/%s", name);
	snprintf(dst, sizeof(dst), MNT_NEWROOT "/dev/%s", name);
	if (mknodat(AT_FDCWD, dst, S_IFREG, 0) < 0)
		linux_die(rfd, MNT_STEP, errno, "create /dev/%s", name);
	if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
		err = errno;
	else if (stat(dst, &bound) < 0 || !S_ISCHR(bound.st_mode) ||
		 bound.st_rdev != makedev(dev_nodes[i].major, dev_nodes[i].minor))
		err = ENODEV;
	if (!err)
		return;
	if (dev_nodes[i].required)
		linux_die(rfd, MNT_STEP, err, "the host's /dev/%s", name);
	/* An optional node the host lacks, or has as something else: not made. */
	if ((err != ENODEV || umount2(dst, MNT_DETACH) == 0) && unlink(dst) == 0)
		return;
	linux_die(rfd, MNT_STEP, errno, "remove /dev/%s (the host's is not that device)", name);
}

/* The nodes' nosuid and noexec, in one call for all of them (and /dev itself, which
 * has them already), before pts and shm have their own. Without mount_setattr (Linux
 * before 5.12) each node is remounted by itself: a recursive remount goes by the
 * paths of mountinfo, where the host's /dev under ours has mounts of its own. */
static void nodes_attrs_or_die(int rfd, int dev)
{
	const uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC;

	if (mnt_setattr_try_or_die(rfd, dev, attrs, true, "the nodes of /dev"))
		return;
	for (size_t i = 0; i < sizeof(dev_nodes) / sizeof(dev_nodes[0]); i++) {
		AUTO_FD node = openat(dev, dev_nodes[i].name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (node < 0 && errno == ENOENT && !dev_nodes[i].required)
			continue;
		if (node < 0)
			linux_die(rfd, MNT_STEP, errno, "open /dev/%s", dev_nodes[i].name);
		mnt_setattr_or_die(rfd, node, attrs, false, dev_nodes[i].name);
	}
}

/* A fresh file system on a new directory of our /dev, by path. */
static void subdir_fs_or_die(int rfd, int dev, const char *name, const char *fstype,
			     const char *data, unsigned long flags)
{
	char where[64], path[64];

	snprintf(where, sizeof(where), "/dev/%s", name);
	snprintf(path, sizeof(path), MNT_NEWROOT "/dev/%s", name);
	if (mkdirat(dev, name, 0755) < 0)
		linux_die(rfd, MNT_STEP, errno, "mkdir %s", where);
	mnt_fresh_path_or_die(rfd, fstype, data, flags, path, where);
}

void linux_mounts_dev_or_die(int rfd)
{
	/* A private instance: ptys of the sandbox only; ptmx usable by everyone inside;
	 * new ptys not readable by others. (No gid=5: the tty group is not mapped.) */
	static const char pts_opts[] = "newinstance,ptmxmode=0666,mode=0620";

	/* By path: the host root's /dev is root's, under the read-only bind. */
	mnt_plain_dir_or_die(rfd, MNT_NEWROOT "/dev", "/dev");
	AUTO_FD dev = mnt_fresh_path_open_or_die(rfd, "tmpfs", "mode=0755,size=64k",
						 MS_NOSUID | MS_NOEXEC, MNT_NEWROOT "/dev", "/dev");
	for (size_t i = 0; i < sizeof(dev_nodes) / sizeof(dev_nodes[0]); i++)
		bind_node_or_die(rfd, i);
	nodes_attrs_or_die(rfd, dev);
	for (size_t i = 0; i < sizeof(dev_links) / sizeof(dev_links[0]); i++)
		if (symlinkat(dev_links[i].target, dev, dev_links[i].name) < 0)
			linux_die(rfd, MNT_STEP, errno, "symlink /dev/%s", dev_links[i].name);
	subdir_fs_or_die(rfd, dev, "pts", "devpts", pts_opts, MS_NOSUID | MS_NOEXEC);
	subdir_fs_or_die(rfd, dev, "shm", "tmpfs", "mode=1777", MS_NOSUID | MS_NODEV);
	/* Populated: no new node names, files or links in /dev itself. */
	mnt_setattr_or_die(rfd, dev, MOUNT_ATTR_RDONLY, false, "/dev");
}
