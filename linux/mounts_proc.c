/* A fresh /proc for the sandbox's pid namespace (the host's processes, their
 * command lines and environments are not visible), with what container runtimes
 * hide hidden too: the kernel's memory and logs, key and timer information, and
 * everything that changes the kernel read-only. A root caller keeps host uid 0
 * inside, and the kernel lets uid 0 write most of /proc/sys whatever its
 * capabilities: without a read-only /proc/sys it could change kernel settings. */
#include <errno.h>
#include <stdio.h>
#include <sys/mount.h>
#include <unistd.h>

#include "linux/mounts_int.h"

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}
#define AUTO_FD __attribute__((cleanup(close_fd))) int

/* Read as empty, written into nothing: /dev/null over each (as runc does, so tools
 * that read them still work). */
static const char *const null_files[] = {
    "/proc/kcore",	"/proc/kmsg",	     "/proc/keys",	    "/proc/key-users",
    "/proc/timer_list", "/proc/timer_stats", "/proc/latency_stats", "/proc/sched_debug",
    "/proc/kpagecount", "/proc/kpageflags",  "/proc/kpagecgroup",
};

/* Hardware and firmware details, and the power meters of the RAPL side channel. */
static const char *const empty_dirs[] = {
    "/proc/acpi", "/proc/asound", "/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap",
};

/* Kernel settings and triggers: read-only binds onto themselves. */
static const char *const readonly[] = {
    "/proc/sys", "/proc/sysrq-trigger", "/proc/bus", "/proc/fs", "/proc/irq",
};

#define PROC_ATTRS (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)
#define RO_ATTRS   (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)

/* Entries differ between kernels: a missing one has nothing to hide. */
static int open_optional_or_die(int rfd, const char *path)
{
	int fd = mnt_open(MNT_NEWROOT, path, MNT_NO_CREATE);

	if (fd < 0 && fd != -ENOENT)
		linux_die(rfd, MNT_STEP, -fd, "open %s", path);
	return fd;
}

void linux_mounts_proc_or_die(int rfd)
{
	AUTO_FD target = mnt_open_or_die(rfd, MNT_NEWROOT, "/proc", MNT_NO_CREATE);
	/* Needs the pid namespace to be owned by our user namespace; refused when the
	 * host's /proc is itself partly covered (inside some containers). */
	close(mnt_fresh_or_die(rfd, "proc", NULL, PROC_ATTRS, target, "/proc"));

	/* Types as this fresh /proc (and /sys) lay them out, not asked of the kernel: the
	 * files are files, the directories directories, /dev/null a device; and the kernel
	 * refuses to attach a file on a directory or the reverse, whatever we said. */
	/* The sandbox's own /dev/null, already nosuid and noexec (mounts_dev.c): its
	 * clones keep that, no attribute call each. */
	AUTO_FD null = mnt_open_or_die(rfd, MNT_NEWROOT, "/dev/null", MNT_NO_CREATE);
	for (size_t i = 0; i < sizeof(null_files) / sizeof(null_files[0]); i++) {
		AUTO_FD fd = open_optional_or_die(rfd, null_files[i]);
		if (fd >= 0)
			close(mnt_bind_typed_or_die(rfd, null, 0, fd, 0, 0, null_files[i]));
	}
	/* The staging root's empty directory: its mount is read-only, nosuid, nodev and
	 * noexec already (mounts.c), and so are its clones. */
	AUTO_FD dir = mnt_open_or_die(rfd, "", MNT_MASK_DIR, MNT_NO_CREATE);
	for (size_t i = 0; i < sizeof(empty_dirs) / sizeof(empty_dirs[0]); i++) {
		AUTO_FD fd = open_optional_or_die(rfd, empty_dirs[i]);
		if (fd >= 0)
			close(mnt_bind_typed_or_die(rfd, dir, 1, fd, 1, 0, empty_dirs[i]));
	}
	for (size_t i = 0; i < sizeof(readonly) / sizeof(readonly[0]); i++) {
		AUTO_FD fd = open_optional_or_die(rfd, readonly[i]);
		if (fd >= 0)
			close(mnt_bind_or_die(rfd, fd, fd, RO_ATTRS, readonly[i]));
	}
}
