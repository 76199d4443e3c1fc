/* The sandbox's mount layout, built by its init (pid 1, in new user, mount and pid
 * namespaces) before anything of the command runs. linux_mounts_setup_or_die reads
 * top to bottom: each step says the threat it answers. Every path comes from the
 * host-side scan and is opened again here without following symlinks (mounts_fd.c);
 * a step that fails stops the launch through the report pipe. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/mounts_int.h"
#include "linux/scan_int.h"

#define RO_ATTRS (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
#define RW_ATTRS (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)

/* Any of these holds a directory to stand on while the staging tmpfs covers it. */
static const char *const staging_bases[] = {"/tmp", "/mnt", "/run", "/proc"};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}
#define AUTO_FD __attribute__((cleanup(close_fd))) int

/* ---- staging */

static void make_private_or_die(int rfd)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		linux_die(rfd, MNT_STEP, errno, "make every mount private");
}

/* What masks are made of: an empty directory and an empty file, mode 000, on the
 * staging tmpfs, whose superblock is made read-only right away: neither can be listed
 * with content, written, chmod'ed or filled through any mount of it. */
static void make_mask_sources_or_die(int rfd, int staging, int fs_ctx)
{
	int fd;

	if (mkdirat(staging, "masks", 0755) < 0 || mkdirat(staging, "masks/dir", 0) < 0 ||
	    (fd = openat(staging, "masks/file", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0)) < 0)
		linux_die(rfd, MNT_STEP, errno, "populate the mask file system");
	close(fd);
	if (fchmodat(staging, "masks/dir", 0, 0) < 0 || fchmodat(staging, "masks/file", 0, 0) < 0)
		linux_die(rfd, MNT_STEP, errno, "chmod the masks");
	if (fsconfig(fs_ctx, FSCONFIG_SET_FLAG, "ro", NULL, 0) < 0 ||
	    fsconfig(fs_ctx, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) < 0)
		linux_die(rfd, MNT_STEP, errno, "make the mask file system read-only");
}

/* A tmpfs as the staging root, entered with pivot_root: the host root moves to
 * /oldroot whole, and even the directory the tmpfs was mounted on is uncovered there.
 * Nothing is written to it after the mask sources: it turns read-only before the
 * pivot (and noexec: nothing on it is run). */
static void enter_staging_or_die(int rfd)
{
	static const char *const opts[] = {"mode=0755", "size=64k", NULL};
	const char *base = NULL;
	struct stat st;
	AUTO_FD fs_ctx = -1;

	for (size_t i = 0; !base && i < sizeof(staging_bases) / sizeof(staging_bases[0]); i++)
		if (lstat(staging_bases[i], &st) == 0 && S_ISDIR(st.st_mode))
			base = staging_bases[i];
	if (!base)
		linux_die(rfd, MNT_STEP, ENOENT,
			  "no directory to build the new root on (tried /tmp, "
			  "/mnt, /run, /proc)");
	AUTO_FD target = mnt_open_or_die(rfd, "", base, MNT_NO_CREATE);
	AUTO_FD staging = mnt_fresh_keep_or_die(
	    rfd, "tmpfs", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, target,
	    "the staging root", &fs_ctx);
	if (mkdirat(staging, "oldroot", 0755) < 0 || mkdirat(staging, "newroot", 0755) < 0 ||
	    mkdirat(staging, "carve", 0755) < 0)
		linux_die(rfd, MNT_STEP, errno, "prepare the staging root");
	make_mask_sources_or_die(rfd, staging, fs_ctx);
	if (fchdir(staging) < 0 || syscall(SYS_pivot_root, ".", "oldroot") < 0)
		linux_die(rfd, MNT_STEP, errno, "pivot_root into the staging root");
	if (chdir("/") < 0)
		linux_die(rfd, MNT_STEP, errno, "chdir /");
}

/* ---- the new root */

/* The host root, recursively, read-only, nosuid and nodev: the command can read the
 * system but change nothing of it, and no setuid binary or device node on a host
 * file system works inside. The attributes are set on the detached copy, so there
 * is no moment where it is attached writable. */
static void bind_host_root_or_die(int rfd)
{
	AUTO_FD src = mnt_open_or_die(rfd, "", MNT_OLDROOT, MNT_NO_CREATE);
	AUTO_FD dst = mnt_open_or_die(rfd, "", MNT_NEWROOT, MNT_NO_CREATE);

	close(mnt_bind_or_die(rfd, src, dst, RO_ATTRS, "/ (the host root)"));
}

/* Node's preload (see linux.h): only the warning of that one code is dropped; every
 * other warning reaches the listeners Node installed, unchanged. */
static const char node_preload[] =
    "// halo-run: drop Node 22's warning that NODE_USE_ENV_PROXY's agent is experimental.\n"
    "'use strict';\n"
    "const ls = process.listeners('warning');\n"
    "process.removeAllListeners('warning');\n"
    "for (const l of ls)\n"
    "  process.on('warning', (w) => { if (!w || w.code !== 'UNDICI-EHPA') l.call(process, w); "
    "});\n";

static void write_node_preload_or_die(int rfd, int run)
{
	AUTO_FD fd = -1;
	ssize_t len = (ssize_t)sizeof(node_preload) - 1;

	if (mkdirat(run, "halo", 0755) < 0 ||
	    (fd = openat(run, "halo/node-preload.cjs", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			 0644)) < 0 ||
	    write(fd, node_preload, len) != len)
		linux_die(rfd, MNT_STEP, errno, "write %s", LINUX_NODE_PRELOAD_PATH);
}

/* Fresh, private scratch space. /tmp: the host's /tmp holds other users' files and
 * agent sockets (ssh-agent, X11): a new empty tmpfs, world-writable and sticky as
 * usual (TMPDIR points there). /run and /var/run: where host services listen (D-Bus,
 * docker, podman, systemd, $XDG_RUNTIME_DIR); a read-only mount does not stop
 * connect(), so they are replaced by an empty tmpfs, sealed read-only later. */
static void mount_scratch_or_die(int rfd, int *run_mnts, size_t *n_run)
{
	static const char *const tmp_opts[] = {"mode=1777", NULL};
	static const char *const run_opts[] = {"mode=0755", "size=1m", NULL};
	static const char *const runs[] = {"/run", "/var/run"};
	struct stat st;

	AUTO_FD tmp = mnt_open_or_die(rfd, MNT_NEWROOT, "/tmp", MNT_NO_CREATE);
	close(mnt_fresh_or_die(rfd, "tmpfs", tmp_opts, RW_ATTRS, tmp, "/tmp"));
	*n_run = 0;
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		AUTO_FD t = mnt_open(MNT_NEWROOT, runs[i], MNT_NO_CREATE);
		/* /var/run is usually a symlink to /run: nothing more to cover. */
		if (t == -ELOOP || t == -ENOENT)
			continue;
		if (t < 0 || fstat(t, &st) < 0 || !S_ISDIR(st.st_mode))
			linux_die(rfd, MNT_STEP, t < 0 ? -t : ENOTDIR, "open %s", runs[i]);
		run_mnts[(*n_run)++] = mnt_fresh_or_die(rfd, "tmpfs", run_opts,
							RW_ATTRS | MOUNT_ATTR_NOEXEC, t, runs[i]);
		if (i == 0)
			write_node_preload_or_die(rfd, run_mnts[0]);
	}
}

struct tree {
	const char *path;
	bool rw;
};

static int path_key(unsigned char ch)
{
	return ch == '\0' ? 0 : ch == '/' ? 1 : ch + 1;
}

static int tree_cmp(const void *a, const void *b)
{
	const struct tree *x = a, *y = b;
	size_t i = 0;

	while (x->path[i] && x->path[i] == y->path[i])
		i++;
	/* '/' sorts lowest: a tree comes right before what is nested in it. The same
	 * path twice (a read-only workspace also listed as a writable root): read-only
	 * last, so it wins. */
	if (x->path[i] != y->path[i])
		return path_key((unsigned char)x->path[i]) - path_key((unsigned char)y->path[i]);
	return (int)y->rw - (int)x->rw;
}

/* The workspace (read-write in workspace-write, read-only in read-only) and each
 * writable root, read-write, nosuid, nodev. Parents first, so a nested tree lands on
 * top of its parent. Each is bound from the host's copy at /oldroot. Two passes:
 * trees elsewhere go before the fresh /tmp, /run and /dev, so that a tree holding one
 * of those (a read-only workspace of /) cannot cover it again; trees beneath them go
 * after, reappearing on the fresh tmpfs (their mount point created there). */
static void bind_trees_or_die(int rfd, const struct linux_launch *l, const struct linux_scan *s,
			      bool in_fresh)
{
	struct tree *t = calloc(s->writable.n + 1, sizeof(*t));
	size_t n = 0;

	if (!t)
		linux_die(rfd, MNT_STEP, ENOMEM, "bind the workspace");
	for (size_t i = 0; i < s->writable.n; i++)
		if (linux_path_in_fresh_dir(s->writable.v[i]) == in_fresh)
			t[n++] = (struct tree){s->writable.v[i], true};
	/* Writable, the workspace is in s->writable (or beneath a writable root).
	 * Read-only, it needs a mount only where the root does not show it. */
	if (l->policy->mode == POLICY_MODE_READ_ONLY && in_fresh &&
	    linux_path_in_fresh_dir(l->workspace))
		t[n++] = (struct tree){l->workspace, false};
	qsort(t, n, sizeof(*t), tree_cmp);
	for (size_t i = 0; i < n; i++) {
		AUTO_FD src = mnt_open_or_die(rfd, MNT_OLDROOT, t[i].path, MNT_NO_CREATE);
		int dir = mnt_is_dir(src);
		AUTO_FD dst = mnt_open_or_die(rfd, MNT_NEWROOT, t[i].path,
					      dir ? MNT_CREATE_DIR : MNT_CREATE_FILE);
		close(mnt_bind_or_die(rfd, src, dst, t[i].rw ? RW_ATTRS : RO_ATTRS, t[i].path));
	}
	free(t);
}

/* A target the scan found is missing here. Outside the bound trees that means it is
 * hidden by a fresh mount (or the host removed it): nothing to cover. Inside a bound
 * tree, which another process could be rearranging right now, fail closed. */
static int open_target_or_die(int rfd, const struct linux_launch *l, const struct linux_scan *s,
			      const char *path)
{
	int fd = mnt_open(MNT_NEWROOT, path, MNT_NO_CREATE);
	bool bound = linux_path_beneath(path, l->workspace);

	for (size_t i = 0; !bound && i < s->writable.n; i++)
		bound = linux_path_beneath(path, s->writable.v[i]);
	if (fd == -ENOENT && !bound)
		return -1;
	if (fd < 0)
		linux_die(rfd, MNT_STEP, -fd, "open %s without following symlinks%s", path,
			  fd == -ELOOP ? " (a symlink is in the way)" : "");
	return fd;
}

/* The persistence guard (git hooks and config, shell start-up files, editor and agent
 * configuration) and halo-run's own binary and policy files: each bound read-only
 * onto itself, so it can be read and run but not changed; being a mount point, it
 * can neither be renamed nor deleted (EBUSY). */
static void bind_readonly_or_die(int rfd, const struct linux_launch *l, const struct linux_scan *s,
				 const struct linux_paths *list)
{
	for (size_t i = 0; i < list->n; i++) {
		AUTO_FD fd = open_target_or_die(rfd, l, s, list->v[i]);
		if (fd >= 0)
			close(mnt_bind_or_die(rfd, fd, fd, RO_ATTRS, list->v[i]));
	}
}

/* Pinned: git directories, the symlinks on the way to guards and masks, and the
 * ancestors of all of them inside the writable trees, each bound onto itself with
 * its access unchanged. A mount point cannot be renamed, removed or replaced, so a
 * guarded or masked name cannot be moved aside and planted afresh (`mv .git x && git
 * init`, `mv dir dir2 && mkdir dir && echo > dir/.env`). Parents first: each later
 * bind lands inside the one before. Symlinks are opened as themselves. */
static void pin_or_die(int rfd, const struct linux_scan *s)
{
	for (size_t i = 0; i < s->pinned.n; i++) {
		AUTO_FD fd = mnt_open_last(MNT_NEWROOT, s->pinned.v[i]);
		/* Pins lie inside bound trees: one missing means the tree is being
		 * rearranged right now. */
		if (fd < 0)
			linux_die(rfd, MNT_STEP, -fd, "pin %s (open without following symlinks)",
				  s->pinned.v[i]);
		close(mnt_bind_or_die(rfd, fd, fd, RW_ATTRS, s->pinned.v[i]));
	}
}

/* Protected paths and host sockets: an empty, mode-000, read-only directory or file
 * mounted over each. Its content cannot be read, it cannot be written (read-only
 * superblock) nor replaced (a mount point cannot be renamed or unlinked), and a
 * socket under it refuses connect(). */
static void mask_or_die(int rfd, const struct linux_launch *l, const struct linux_scan *s)
{
	AUTO_FD dir = mnt_open_or_die(rfd, "", MNT_MASK_DIR, MNT_NO_CREATE);
	AUTO_FD file = mnt_open_or_die(rfd, "", MNT_MASK_FILE, MNT_NO_CREATE);
	int *repl = calloc(s->masked.n + 1, sizeof(int));

	if (!repl)
		linux_die(rfd, MNT_STEP, ENOMEM, "mask protected paths");
	/* Carve-outs and sanitized copies replace some masks (mounts_carve.c). */
	linux_mounts_carve_or_die(rfd, s, repl);
	for (size_t i = 0; i < s->masked.n; i++) {
		AUTO_FD fd = open_target_or_die(rfd, l, s, s->masked.v[i]);
		int src = repl[i] >= 0 ? repl[i] : mnt_is_dir(fd) > 0 ? dir : file;

		if (fd >= 0)
			close(mnt_bind_or_die(rfd, src, fd, RO_ATTRS, s->masked.v[i]));
		if (repl[i] >= 0)
			close(repl[i]);
	}
	free(repl);
}

/* Enter the new root and let go of the host's: pivot_root(".", ".") stacks the old
 * root on the new one, and a lazy unmount of it detaches the staging tmpfs and the
 * host tree under /oldroot from this namespace. Then start in the workspace, at the
 * same absolute path as on the host. */
static void pivot_or_die(int rfd, const struct linux_launch *l)
{
	if (chdir(MNT_NEWROOT) < 0 || syscall(SYS_pivot_root, ".", ".") < 0)
		linux_die(rfd, MNT_STEP, errno, "pivot_root into the new root");
	if (umount2(".", MNT_DETACH) < 0)
		linux_die(rfd, MNT_STEP, errno, "detach the host root");
	if (chdir("/") < 0 || chdir(l->workspace) < 0)
		linux_die(rfd, MNT_STEP, errno, "chdir into the workspace %s", l->workspace);
}

const struct linux_scan *linux_mounts_setup_or_die(const struct linux_launch *l,
						   const struct linux_scan *s, int report_fd)
{
	int rfd = report_fd;
	int run_mnts[2];
	size_t n_run;
	static struct linux_scan late; /* init keeps it (the broker's pins) */

	/* Nothing mounted from here on propagates back to the host, and nothing the host
	 * mounts later appears inside. */
	make_private_or_die(rfd);
	enter_staging_or_die(rfd);
	bind_host_root_or_die(rfd);
	bind_trees_or_die(rfd, l, s, false);
	mount_scratch_or_die(rfd, run_mnts, &n_run);
	linux_mounts_dev_or_die(rfd);
	bind_trees_or_die(rfd, l, s, true);
	linux_mounts_proc_or_die(rfd);
	/* Guards and masks come from the walk, which the supervisor runs while all of the
	 * above was built: its findings are read here, as late as possible. */
	s = linux_scan_receive_or_die(s, &late, rfd);
	pin_or_die(rfd, s);
	bind_readonly_or_die(rfd, l, s, &s->guarded);
	bind_readonly_or_die(rfd, l, s, &s->readonly_extra);
	/* Masks last: on top of the writable trees and guards they cover. */
	mask_or_die(rfd, l, s);
	/* sandbox.unixSockets: back on top, even beneath /run or a mask. */
	linux_mounts_sockets_or_die(rfd, s);
	/* /run stays empty: sealed once any tree under it has its mount point. */
	for (size_t i = 0; i < n_run; i++) {
		mnt_setattr_or_die(rfd, run_mnts[i], MOUNT_ATTR_RDONLY, false, "/run");
		close(run_mnts[i]);
	}
	pivot_or_die(rfd, l);
	return s;
}
