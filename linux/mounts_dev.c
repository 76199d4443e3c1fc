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
 * nosuid and noexec. */
static void bind_node_or_die(int rfd, int dev, const char *name, bool required)
{
	char host[64];
	struct stat st;

	snprintf(host, sizeof(host), "/dev/%s", name);
	AUTO_FD src = mnt_open(MNT_OLDROOT, host, MNT_NO_CREATE);
	if (src < 0 && !required)
		return;
	if (src < 0 || fstat(src, &st) < 0 || !S_ISCHR(st.st_mode))
		linux_die(rfd, MNT_STEP, src < 0 ? -src : ENODEV, "the host's %s", host);
	/* The mount point, created (O_EXCL) in our own fresh tmpfs: the fd that made it
	 * names it, no need to resolve it again. */
	AUTO_FD dst = openat(dev, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
	if (dst < 0)
		linux_die(rfd, MNT_STEP, errno, "create %s", host);
	close(mnt_bind_typed_or_die(rfd, src, 0, dst, 0, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC,
				    host));
}

static int subdir_or_die(int rfd, int dev, const char *name)
{
	char p[64];

	if (mkdirat(dev, name, 0755) < 0)
		linux_die(rfd, MNT_STEP, errno, "mkdir /dev/%s", name);
	snprintf(p, sizeof(p), "/dev/%s", name);
	return mnt_open_or_die(rfd, MNT_NEWROOT, p, MNT_NO_CREATE);
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
	for (size_t i = 0; i < sizeof(dev_nodes) / sizeof(dev_nodes[0]); i++)
		bind_node_or_die(rfd, dev, dev_nodes[i].name, dev_nodes[i].required);
	for (size_t i = 0; i < sizeof(dev_links) / sizeof(dev_links[0]); i++)
		if (symlinkat(dev_links[i].target, dev, dev_links[i].name) < 0)
			linux_die(rfd, MNT_STEP, errno, "symlink /dev/%s", dev_links[i].name);
	AUTO_FD pts = subdir_or_die(rfd, dev, "pts");
	close(mnt_fresh_or_die(rfd, "devpts", pts_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, pts,
			       "/dev/pts"));
	AUTO_FD shm = subdir_or_die(rfd, dev, "shm");
	close(mnt_fresh_or_die(rfd, "tmpfs", shm_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, shm,
			       "/dev/shm"));
	/* Populated: no new node names, files or links in /dev itself. */
	mnt_setattr_or_die(rfd, dev, MOUNT_ATTR_RDONLY, false, "/dev");
}
