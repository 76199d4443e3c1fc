/* The sandbox's mount layout, built by its init (pid 1, in new user, mount and pid
 * namespaces) before anything of the command runs. What is mounted where, and in
 * which order, is the plan's (plan/plan_fs.c): this file executes its filesystem
 * steps one by one through a table of executors, each saying the threat it answers.
 * Every path that comes from the host-side scan is opened again here without
 * following symlinks (mounts_fd.c); only fixed directories of root's on the host and
 * of init's own file systems are mounted on by name (mounts_fd.c's table); a step that
 * fails stops the launch through the report pipe. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/launch_int.h"
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
static void make_mask_sources_or_die(int rfd, int staging)
{
	int fd;

	/* Made with mode 000 (a umask only ever takes bits away): no chmod after. */
	if (mkdirat(staging, "masks", 0755) < 0 || mkdirat(staging, "masks/dir", 0) < 0 ||
	    (fd = openat(staging, "masks/file", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0)) < 0)
		linux_die(rfd, MNT_STEP, errno, "populate the mask file system");
	close(fd);
}

/* A tmpfs as the staging root, entered with pivot_root: the host root moves to
 * /oldroot whole, and even the directory the tmpfs was mounted on is uncovered there.
 * Nothing is written to it after the mask sources: it turns read-only, superblock and
 * mount, before the pivot (and noexec: nothing on it is run). Mounted by path: the
 * base is one of root's directories of the host (a plain directory, checked), in a
 * mount namespace where nothing else runs yet. */
static void enter_staging_or_die(int rfd)
{
	const unsigned long flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
	const char *base = NULL;

	for (size_t i = 0; !base && i < sizeof(staging_bases) / sizeof(staging_bases[0]); i++)
		if (mnt_plain_dir(staging_bases[i]) == 0)
			base = staging_bases[i];
	if (!base)
		linux_die(rfd, MNT_STEP, ENOENT,
			  "no directory to build the new root on (tried /tmp, "
			  "/mnt, /run, /proc)");
	AUTO_FD staging = mnt_fresh_path_open_or_die(rfd, "tmpfs", "mode=0755,size=64k", flags,
						     base, "the staging root");
	if (mkdirat(staging, "oldroot", 0755) < 0 || mkdirat(staging, "newroot", 0755) < 0 ||
	    mkdirat(staging, "carve", 0755) < 0 || mkdirat(staging, "names", 0755) < 0)
		linux_die(rfd, MNT_STEP, errno, "prepare the staging root");
	make_mask_sources_or_die(rfd, staging);
	/* The mount read-only too, beside its nosuid, nodev and noexec: every mask is a
	 * clone of it and keeps all four without a call of its own. */
	mnt_seal_path_or_die(rfd, base, flags, "the staging root");
	if (fchdir(staging) < 0 || syscall(SYS_pivot_root, ".", "oldroot") < 0)
		linux_die(rfd, MNT_STEP, errno, "pivot_root into the staging root");
	if (chdir("/") < 0)
		linux_die(rfd, MNT_STEP, errno, "chdir /");
}

/* ---- the new root */

/* The host root, recursively, read-only, nosuid and nodev: the command can read the
 * system but change nothing of it, and no setuid binary or device node on a host
 * file system works inside. By path: both are the staging root's own directories, and
 * the copy is attached writable only in this mount namespace, where nothing but init
 * runs until the layout is done. */
static void bind_host_root_or_die(int rfd)
{
	struct mount_attr a = {.attr_set = RO_ATTRS};

	if (mount(MNT_OLDROOT, MNT_NEWROOT, NULL, MS_BIND | MS_REC, NULL) < 0)
		linux_die(rfd, MNT_STEP, errno, "bind / (the host root)");
	/* The test hook that plays a kernel without mount_setattr takes the fallback. */
	if (!linux_test_hooks()->force_remount) {
		if (mount_setattr(AT_FDCWD, MNT_NEWROOT, AT_RECURSIVE, &a, sizeof(a)) == 0)
			return;
		if (errno != ENOSYS)
			linux_die(rfd, MNT_STEP, errno, "make / (the host root) read-only");
	}
	AUTO_FD fd = mnt_open_or_die(rfd, "", MNT_NEWROOT, MNT_NO_CREATE);
	mnt_setattr_or_die(rfd, fd, RO_ATTRS, true, "/ (the host root)");
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

/* A tree of the plan (the workspace, a writable root, tool caches, a read-only
 * workspace the root does not show), bound from the host's copy at /oldroot,
 * nosuid, nodev; the plan orders them parents first, so a nested tree lands on top. */
static void bind_tree_or_die(int rfd, const char *path, bool rw)
{
	AUTO_FD src = mnt_open_or_die(rfd, MNT_OLDROOT, path, MNT_NO_CREATE);
	int dir = mnt_is_dir(src);

	if (dir < 0)
		linux_die(rfd, MNT_STEP, -dir, "bind %s: stat the source", path);
	AUTO_FD dst =
	    mnt_open_or_die(rfd, MNT_NEWROOT, path, dir ? MNT_CREATE_DIR : MNT_CREATE_FILE);

	close(mnt_bind_typed_or_die(rfd, src, dir, dst, -1, rw ? RW_ATTRS : RO_ATTRS, path));
}

/* What the executors share while one plan is applied. */
/* /run's tmpfs: nothing set-id, no device, nothing run from it. */
#define RUN_FLAGS (MS_NOSUID | MS_NODEV | MS_NOEXEC)

struct exec {
	int rfd;
	const struct linux_launch *l;
	const struct linux_scan *s;
	int run_mnts[2];	 /* /run and /var/run (their roots), sealed by PLAN_SEAL */
	const char *run_path[2]; /* where they are mounted */
	size_t n_run;
	int *repl; /* per mask: a carve-out or sanitized copy to mount instead, or -1 */
	size_t n_masks;
	int mask_dir, mask_file;
	struct mnt_own_files own; /* halo-run's own files (names, ssh_config) */
	bool sockets_done;
};

/* Fresh, private scratch space. /tmp: the host's /tmp holds other users' files and
 * agent sockets (ssh-agent, X11): a new empty tmpfs, world-writable and sticky as
 * usual (TMPDIR points there). /run and /var/run: where host services listen (D-Bus,
 * docker, podman, systemd, $XDG_RUNTIME_DIR); a read-only mount does not stop
 * connect(), so they are replaced by an empty tmpfs, sealed read-only later. */
static void do_tmpfs(struct exec *x, const struct plan_step *st)
{
	static const char *const runs[] = {MNT_NEWROOT "/run", MNT_NEWROOT "/var/run"};

	if (strcmp(st->path, "/tmp") == 0) {
		/* By path: the host's /tmp is root's, under the read-only bind of its root. */
		mnt_plain_dir_or_die(x->rfd, MNT_NEWROOT "/tmp", "/tmp");
		mnt_fresh_path_or_die(x->rfd, "tmpfs", "mode=1777", MS_NOSUID | MS_NODEV,
				      MNT_NEWROOT "/tmp", "/tmp");
		return;
	}
	if (strcmp(st->path, "/run") != 0)
		linux_die(x->rfd, MNT_STEP, EINVAL, "no fresh file system for %s", st->path);
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		const char *shown = runs[i] + strlen(MNT_NEWROOT);
		int rc = mnt_plain_dir(runs[i]);
		/* /var/run is usually a symlink to /run: nothing more to cover. By path, as
		 * /tmp: both are root's, under the read-only bind of the host's root. */
		if (rc == -ELOOP || rc == -ENOENT)
			continue;
		if (rc < 0)
			linux_die(x->rfd, MNT_STEP, -rc, "open %s", shown);
		x->run_mnts[x->n_run] = mnt_fresh_path_open_or_die(
		    x->rfd, "tmpfs", "mode=0755,size=1m", RUN_FLAGS, runs[i], shown);
		x->run_path[x->n_run++] = runs[i];
		if (i == 0)
			write_node_preload_or_die(x->rfd, x->run_mnts[0]);
		if (i == 0 && x->l->tool_config) /* after halo/, which the preload made */
			mnt_tool_config_or_die(x->rfd, x->run_mnts[0], x->l->tool_config);
		if (i == 0) /* the run's CA files, when init received them (ca_files.c) */
			linux_ca_write_or_die(x->rfd, x->run_mnts[0]);
	}
}

/* /run stays empty: sealed once any tree under it has its mount point, the mount and
 * the superblock (what halo-run wrote there, a resolv.conf among them when the host's
 * is a link into /run, can change through no mount of it). */
static void do_seal(struct exec *x, const struct plan_step *st)
{
	for (size_t i = 0; i < x->n_run; i++) {
		char what[PATH_MAX + 16];

		snprintf(what, sizeof(what), "%s's file system", st->path);
		mnt_seal_path_or_die(x->rfd, x->run_path[i], RUN_FLAGS, what);
		close(x->run_mnts[i]);
	}
	x->n_run = 0;
}

/* Every workspace's isolated caches live side by side in one directory, and caches
 * carry code (a cargo config, a .pth file, a gradle init script): one workspace's run
 * reading another's would learn its dependencies and secrets-bearing build outputs. The
 * directory is covered with an empty tmpfs holding only this tree's mount point, made
 * read-only before the tree lands on it. */
static void alone_or_die(int rfd, const char *path)
{
	static const char *const opts[] = {"mode=0755", "size=16k", NULL};
	char parent[PATH_MAX], what[PATH_MAX + 16];
	const char *sl = strrchr(path, '/');
	int fs_ctx = -1;

	if (!sl || sl == path || (size_t)(sl - path) >= sizeof(parent))
		linux_die(rfd, MNT_STEP, EINVAL, "hide the caches beside %s", path);
	memcpy(parent, path, (size_t)(sl - path));
	parent[sl - path] = '\0';
	AUTO_FD target = mnt_open_or_die(rfd, MNT_NEWROOT, parent, MNT_CREATE_DIR);
	AUTO_FD fs = mnt_fresh_keep_or_die(rfd, "tmpfs", opts, RW_ATTRS | MOUNT_ATTR_NOEXEC, target,
					   parent, &fs_ctx);
	if (mkdirat(fs, sl + 1, 0700) < 0)
		linux_die(rfd, MNT_STEP, errno, "the mount point of %s", path);
	snprintf(what, sizeof(what), "the tmpfs over %s", parent);
	mnt_seal_or_die(rfd, fs_ctx, what);
}

/* The host root (see bind_host_root_or_die), or a tree the root does not show. */
static void do_bind(struct exec *x, const struct plan_step *st)
{
	if (st->op == PLAN_CACHE_BIND && (st->flags & PLAN_F_ALONE))
		alone_or_die(x->rfd, st->path);
	if (st->op == PLAN_BIND_RO && strcmp(st->path, "/") == 0)
		bind_host_root_or_die(x->rfd);
	else
		bind_tree_or_die(x->rfd, st->path, st->op != PLAN_BIND_RO);
}

static void do_dev(struct exec *x, const struct plan_step *st)
{
	(void)st;
	linux_mounts_dev_or_die(x->rfd);
}

static void do_names(struct exec *x, const struct plan_step *st)
{
	linux_mounts_name_or_die(x->rfd, &x->own, x->n_run ? x->run_mnts[0] : -1, st);
}

static void do_proc(struct exec *x, const struct plan_step *st)
{
	(void)st;
	linux_mounts_proc_or_die(x->rfd);
}

/* A target the scan found is missing here. Outside the bound trees that means it is
 * hidden by a fresh mount (or the host removed it): nothing to cover. Inside a bound
 * tree, which another process could be rearranging right now, fail closed. */
static int open_target_or_die(const struct exec *x, const char *path)
{
	int fd = mnt_open(MNT_NEWROOT, path, MNT_NO_CREATE);
	bool bound = linux_path_beneath(path, x->l->workspace);

	for (size_t i = 0; !bound && i < x->s->writable.n; i++)
		bound = linux_path_beneath(path, x->s->writable.v[i]);
	if (fd == -ENOENT && !bound)
		return -1;
	if (fd < 0)
		linux_die(x->rfd, MNT_STEP, -fd, "open %s without following symlinks%s", path,
			  fd == -ELOOP ? " (a symlink is in the way)" : "");
	return fd;
}

/* The persistence guard (git hooks and config, shell start-up files, editor and agent
 * configuration) and halo-run's own binary and policy files: each bound read-only
 * onto itself, so it can be read and run but not changed; being a mount point, it
 * can neither be renamed nor deleted (EBUSY). */
static void do_readonly(struct exec *x, const struct plan_step *st)
{
	AUTO_FD fd = open_target_or_die(x, st->path);

	if (fd >= 0)
		close(mnt_bind_or_die(x->rfd, fd, fd, RO_ATTRS, st->path));
}

/* Pinned: git directories, the symlinks on the way to guards and masks, and the
 * ancestors of all of them inside the writable trees, each bound onto itself with
 * its access unchanged. A mount point cannot be renamed, removed or replaced, so a
 * guarded or masked name cannot be moved aside and planted afresh (`mv .git x && git
 * init`, `mv dir dir2 && mkdir dir && echo > dir/.env`). Parents first: each later
 * bind lands inside the one before. Symlinks are opened as themselves. */
static void do_pin(struct exec *x, const struct plan_step *st)
{
	AUTO_FD fd = mnt_open_last(MNT_NEWROOT, st->path);

	/* Pins lie inside bound trees: one missing means the tree is being rearranged
	 * right now. */
	if (fd < 0)
		linux_die(x->rfd, MNT_STEP, -fd, "pin %s (open without following symlinks)",
			  st->path);
	close(mnt_bind_or_die(x->rfd, fd, fd, RW_ATTRS, st->path));
}

/* Carve-outs and sanitized copies replace some masks: all of them are made at the
 * first mask (mounts_carve.c), on one small tmpfs sealed before any is attached. */
static void masks_ready_or_die(struct exec *x)
{
	if (x->repl)
		return;
	x->mask_dir = mnt_open_or_die(x->rfd, "", MNT_MASK_DIR, MNT_NO_CREATE);
	x->mask_file = mnt_open_or_die(x->rfd, "", MNT_MASK_FILE, MNT_NO_CREATE);
	if (!(x->repl = calloc(x->s->masked.n + 1, sizeof(int))))
		linux_die(x->rfd, MNT_STEP, ENOMEM, "mask protected paths");
	linux_mounts_carve_or_die(x->rfd, x->s, x->repl);
}

/* Protected paths and host sockets: an empty, mode-000, read-only directory or file
 * mounted over each. Its content cannot be read, it cannot be written (read-only
 * superblock) nor replaced (a mount point cannot be renamed or unlinked), and a
 * socket under it refuses connect(). The plan lists the masks in the scan's order,
 * which is what the replacements are indexed by. */
static void do_mask(struct exec *x, const struct plan_step *st)
{
	size_t i = x->n_masks++;

	masks_ready_or_die(x);
	if (i >= x->s->masked.n || strcmp(x->s->masked.v[i], st->path) != 0)
		linux_die(x->rfd, MNT_STEP, EINVAL, "mask %s: not the scan's", st->path);
	const char *leak = linux_test_hooks()->unmasked_name, *base = strrchr(st->path, '/');
	if (leak && base && strcmp(base + 1, leak) == 0) {
		if (x->repl[i] >= 0)
			close(x->repl[i]);
		return;
	}
	AUTO_FD fd = open_target_or_die(x, st->path);
	int ddir = fd >= 0 ? mnt_is_dir(fd) : -1;
	int src = x->repl[i] >= 0 ? x->repl[i] : ddir > 0 ? x->mask_dir : x->mask_file;
	int sdir = x->repl[i] >= 0 ? -1 : ddir > 0 ? 1 : 0;

	/* A mask is a clone of the staging root's (read-only, nosuid, nodev, noexec
	 * already: no attribute call); a replacement gets the attributes. */
	if (fd >= 0)
		close(mnt_bind_typed_or_die(x->rfd, src, sdir, fd, ddir,
					    x->repl[i] >= 0 ? RO_ATTRS : 0, st->path));
	if (x->repl[i] >= 0)
		close(x->repl[i]);
}

/* sandbox.unixSockets: back on top, even beneath /run or a mask (mounts_sock.c). */
static void do_sockets(struct exec *x, const struct plan_step *st)
{
	(void)st;
	if (!x->sockets_done)
		linux_mounts_sockets_or_die(x->rfd, x->s);
	x->sockets_done = true;
}

/* Carve-outs and sanitized copies are mounted with their masks; a missing guard
 * target's creation is refused by the sandbox's init (broker.c), not by a mount. */
static void do_elsewhere(struct exec *x, const struct plan_step *st)
{
	(void)x;
	(void)st;
}

/* halo-run's ssh client configuration (ssh_config.c). */
static void do_ssh_config(struct exec *x, const struct plan_step *st)
{
	linux_mounts_ssh_config_or_die(x->rfd, &x->own, st);
}

/* clang-format off */
static void (*const executors[PLAN_N_OPS])(struct exec *, const struct plan_step *) = {
    [PLAN_BIND_RO] = do_bind,
    [PLAN_BIND_RW] = do_bind,
    [PLAN_CACHE_BIND] = do_bind,
    [PLAN_TMPFS] = do_tmpfs,
    [PLAN_DEV] = do_dev,
    [PLAN_NAMES] = do_names,
    [PLAN_PROC] = do_proc,
    [PLAN_PIN] = do_pin,
    [PLAN_GUARD] = do_readonly,
    [PLAN_READONLY] = do_readonly,
    [PLAN_CARVE] = do_elsewhere,
    [PLAN_SANITIZE] = do_elsewhere,
    [PLAN_SSH_CONFIG] = do_ssh_config,
    [PLAN_MASK] = do_mask,
    [PLAN_SOCKET] = do_sockets,
    [PLAN_SEAL] = do_seal,
    [PLAN_REFUSE_CREATE] = do_elsewhere,
    [PLAN_REFUSE_PREFIX] = do_elsewhere,
};
/* clang-format on */

static void run_steps_or_die(struct exec *x, const struct halo_plan *p, size_t from)
{
	if (plan_ok(p) < 0)
		linux_die(x->rfd, MNT_STEP, ENOMEM, "plan the mount layout");
	for (size_t i = from; i < p->n_steps; i++)
		if (!(p->steps[i].flags & PLAN_F_SHOWN))
			executors[p->steps[i].op](x, &p->steps[i]);
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
	static struct linux_scan late; /* init keeps it (the broker's pins) */
	struct exec x = {
	    .rfd = report_fd, .l = l, .s = s, .mask_dir = -1, .mask_file = -1, .own = {-1}};
	struct halo_plan plan;
	struct plan_fs_in in;
	size_t n_layout;

	plan_init(&plan, "linux");
	linux_scan_findings(l, s, &in);
	plan_fs_layout(&plan, &in);
	/* Nothing mounted from here on propagates back to the host, and nothing the host
	 * mounts later appears inside. */
	make_private_or_die(x.rfd);
	enter_staging_or_die(x.rfd);
	run_steps_or_die(&x, &plan, 0);
	/* Guards and masks come from the walk, which the supervisor runs while all of the
	 * above was built: its findings are read here, as late as possible, and planned
	 * by the same builder --dry-run prints. */
	x.s = s = linux_scan_receive_or_die(s, &late, x.rfd);
	n_layout = plan.n_steps;
	linux_scan_findings(l, s, &in);
	plan_fs_late(&plan, &in);
	run_steps_or_die(&x, &plan, n_layout);
	if (x.mask_dir >= 0)
		close(x.mask_dir);
	if (x.mask_file >= 0)
		close(x.mask_file);
	linux_mounts_own_files_seal_or_die(x.rfd, &x.own);
	free(x.repl);
	plan_free(&plan);
	pivot_or_die(x.rfd, l);
	return s;
}
