/* A fresh /proc for the sandbox's pid namespace (the host's processes, their
 * command lines and environments are not visible), with what container runtimes
 * hide hidden too: the kernel's memory and logs, key and timer information, and
 * everything that changes the kernel read-only. A root caller keeps host uid 0
 * inside, and the kernel lets uid 0 write most of /proc/sys whatever its
 * capabilities: without a read-only /proc/sys it could change kernel settings. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
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

#define RO_ATTRS (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)

/* The names at the top of the fresh /proc, NUL-separated: one listing (four calls)
 * instead of a failed mount(2) for each entry this kernel lacks (seven on Debian 12's).
 * procfs lists every name of its root (and nothing else is mounted there yet). */
struct proc_names {
	bool ok; /* false: unread, every mount is tried (ENOENT skipped as before) */
	size_t len;
	char names[8192];
};

static void list_proc(struct proc_names *pn)
{
	char buf[16384];
	int fd = open(MNT_NEWROOT "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n;

	pn->ok = false;
	pn->len = 0;
	if (fd < 0)
		return;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (long o = 0; o < n;) {
			struct dirent64 *de = (struct dirent64 *)(buf + o);
			size_t nl = strlen(de->d_name) + 1;
			o += de->d_reclen;
			if (de->d_name[0] >= '0' && de->d_name[0] <= '9')
				continue; /* the namespace's processes */
			if (pn->len + nl > sizeof(pn->names))
				goto out; /* more than a /proc holds: not trusted */
			memcpy(pn->names + pn->len, de->d_name, nl);
			pn->len += nl;
		}
	pn->ok = n == 0;
out:
	close(fd);
}

/* False only when the listing was read and path is a /proc entry it does not hold. */
static bool may_exist(const struct proc_names *pn, const char *path)
{
	const char *name = path + strlen("/proc/");

	if (!pn->ok || strncmp(path, "/proc/", 6) != 0 || strchr(name, '/'))
		return true;
	for (size_t o = 0; o < pn->len; o += strlen(pn->names + o) + 1)
		if (strcmp(pn->names + o, name) == 0)
			return true;
	return false;
}

/* Paths inside the fresh /proc (and the host's /sys under the read-only root) are
 * laid out by the kernel, not by anyone the sandbox or the host's users control, and
 * nothing else runs in this mount namespace yet: they are named by path, one mount(2)
 * each, where a path under a bound tree needs an fd opened without following links
 * (mounts_fd.c). A bind keeps its source's attributes: /dev/null's nosuid and noexec
 * (mounts_dev.c), the staging root's read-only, nosuid, nodev and noexec (mounts.c).
 * Entries differ between kernels: a missing one has nothing to hide. */
static void bind_optional_or_die(int rfd, const char *src, const char *path)
{
	char dst[128];

	snprintf(dst, sizeof(dst), MNT_NEWROOT "%s", path);
	if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0 && errno != ENOENT)
		linux_die(rfd, MNT_STEP, errno, "bind over %s", path);
}

/* Bound onto itself, then read-only with everything beneath it (no other process is
 * in the namespace to see the moment between). Without mount_setattr (Linux < 5.12),
 * the fd-based remount of mounts_fd.c. */
static void readonly_optional_or_die(int rfd, const char *path)
{
	struct mount_attr a = {.attr_set = RO_ATTRS};
	char dst[128];

	snprintf(dst, sizeof(dst), MNT_NEWROOT "%s", path);
	if (mount(dst, dst, NULL, MS_BIND | MS_REC, NULL) < 0) {
		if (errno == ENOENT)
			return;
		linux_die(rfd, MNT_STEP, errno, "bind %s onto itself", path);
	}
	/* The test hook that plays such a kernel takes the fallback too. */
	if (!linux_test_hooks()->force_remount) {
		if (mount_setattr(AT_FDCWD, dst, AT_RECURSIVE, &a, sizeof(a)) == 0)
			return;
		if (errno != ENOSYS)
			linux_die(rfd, MNT_STEP, errno, "make %s read-only", path);
	}
	AUTO_FD fd = mnt_open_or_die(rfd, MNT_NEWROOT, path, MNT_NO_CREATE);
	mnt_setattr_or_die(rfd, fd, RO_ATTRS, true, path);
}

void linux_mounts_proc_or_die(int rfd)
{
	static struct proc_names pn; /* init's: off its stack */

	/* By path: the host root's /proc is root's, under the read-only bind. Needs the
	 * pid namespace to be owned by our user namespace; refused when the host's /proc
	 * is itself partly covered (inside some containers). */
	mnt_plain_dir_or_die(rfd, MNT_NEWROOT "/proc", "/proc");
	mnt_fresh_path_or_die(rfd, "proc", NULL, MS_NOSUID | MS_NODEV | MS_NOEXEC,
			      MNT_NEWROOT "/proc", "/proc");

	/* The kernel refuses to attach a file on a directory or the reverse: the tables
	 * hold files and directories as this fresh /proc (and /sys) lay them out. The
	 * sources must be there: mount(2)'s ENOENT would not say which side is missing. */
	if (access(MNT_NEWROOT "/dev/null", F_OK) < 0 || access(MNT_MASK_DIR, F_OK) < 0)
		linux_die(rfd, MNT_STEP, errno, "the sources of /proc's masks");
	list_proc(&pn);
	for (size_t i = 0; i < sizeof(null_files) / sizeof(null_files[0]); i++)
		if (may_exist(&pn, null_files[i]))
			bind_optional_or_die(rfd, MNT_NEWROOT "/dev/null", null_files[i]);
	for (size_t i = 0; i < sizeof(empty_dirs) / sizeof(empty_dirs[0]); i++)
		if (may_exist(&pn, empty_dirs[i]))
			bind_optional_or_die(rfd, MNT_MASK_DIR, empty_dirs[i]);
	for (size_t i = 0; i < sizeof(readonly) / sizeof(readonly[0]); i++)
		if (may_exist(&pn, readonly[i]))
			readonly_optional_or_die(rfd, readonly[i]);
}
