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
#include <unistd.h>

#include "linux/mounts_int.h"

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}
#define AUTO_FD __attribute__((cleanup(close_fd))) int

static const struct {
	const char *name;
	bool required;
} dev_nodes[] = {
    {"null", true},    {"zero", true}, {"full", false}, {"random", false},
    {"urandom", true}, {"tty", false}, /* the controlling terminal, whichever it is */
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
 * (linux_mounts_dev_or_die). Five calls a node: the clone (taken by name in the host's
 * /dev, opened once without following any symlink, and the last component not followed
 * either: a link there is cloned as a link, and refused as not a device), its type,
 * the mount point, the attach, the close. */
static void bind_node_or_die(int rfd, int host_dev, int dev, const char *name, bool required)
{
	struct stat st;
	int tree =
	    open_tree(host_dev, name,
		      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW);

	int err = tree < 0		 ? errno
		  : fstat(tree, &st) < 0 ? errno
		  : !S_ISCHR(st.st_mode) ? ENODEV
					 : 0;

	/* An optional node the host lacks, or has as something else: not made. */
	if (err && !required) {
		if (tree >= 0)
			close(tree);
		return;
	}
	if (err)
		linux_die(rfd, MNT_STEP, err, "the host's /dev/%s", name);
	/* The mount point, created in our own fresh tmpfs; move_mount does not follow a
	 * symlink at the target's last component. */
	if (mknodat(dev, name, S_IFREG, 0) < 0)
		linux_die(rfd, MNT_STEP, errno, "create /dev/%s", name);
	if (move_mount(tree, "", dev, name, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		linux_die(rfd, MNT_STEP, errno, "bind /dev/%s: attach", name);
	close(tree);
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

/* A fresh file system on a new directory of /dev, attached by name. */
static void subdir_fs_or_die(int rfd, int dev, const char *name, const char *fstype,
			     const char *const *opts, unsigned attrs)
{
	char where[64];

	snprintf(where, sizeof(where), "/dev/%s", name);
	if (mkdirat(dev, name, 0755) < 0)
		linux_die(rfd, MNT_STEP, errno, "mkdir %s", where);
	mnt_fresh_at_or_die(rfd, fstype, opts, attrs, dev, name, where);
}

void linux_mounts_dev_or_die(int rfd)
{
	static const char *const dev_opts[] = {"mode=0755", "size=64k", NULL};
	/* A private instance: ptys of the sandbox only; ptmx usable by everyone inside;
	 * new ptys not readable by others. (No gid=5: the tty group is not mapped.) */
	static const char *const pts_opts[] = {"newinstance", "ptmxmode=0666", "mode=0620", NULL};
	static const char *const shm_opts[] = {"mode=1777", NULL};

	AUTO_FD target = mnt_open_or_die(rfd, MNT_NEWROOT, "/dev", MNT_NO_CREATE);
	AUTO_FD dev = mnt_fresh_or_die(rfd, "tmpfs", dev_opts,
				       MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, target, "/dev");
	AUTO_FD host_dev = mnt_open_or_die(rfd, MNT_OLDROOT, "/dev", MNT_NO_CREATE);
	for (size_t i = 0; i < sizeof(dev_nodes) / sizeof(dev_nodes[0]); i++)
		bind_node_or_die(rfd, host_dev, dev, dev_nodes[i].name, dev_nodes[i].required);
	nodes_attrs_or_die(rfd, dev);
	for (size_t i = 0; i < sizeof(dev_links) / sizeof(dev_links[0]); i++)
		if (symlinkat(dev_links[i].target, dev, dev_links[i].name) < 0)
			linux_die(rfd, MNT_STEP, errno, "symlink /dev/%s", dev_links[i].name);
	subdir_fs_or_die(rfd, dev, "pts", "devpts", pts_opts,
			 MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	subdir_fs_or_die(rfd, dev, "shm", "tmpfs", shm_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	/* Populated: no new node names, files or links in /dev itself. */
	mnt_setattr_or_die(rfd, dev, MOUNT_ATTR_RDONLY, false, "/dev");
}
