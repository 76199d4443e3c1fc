/* Internal to the mount layout (mounts.c, mounts_fd.c, mounts_dev.c, mounts_proc.c).
 * Every helper works on file descriptors opened without following symlinks and dies
 * through linux_die() with the step and the path it was working on. */
#ifndef HALO_LINUX_MOUNTS_INT_H
#define HALO_LINUX_MOUNTS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "linux/linux_int.h"

#define MNT_STEP "mount layout"

/* The staging root (a private tmpfs) holds these while the layout is built. */
#define MNT_OLDROOT   "/oldroot" /* the host root, every host path still reachable */
#define MNT_NEWROOT   "/newroot" /* the sandbox's root being built */
#define MNT_MASKS     "/masks"	 /* the empty things masks are made of (read-only superblock) */
#define MNT_MASK_DIR  "/masks/dir"
#define MNT_MASK_FILE "/masks/file"
#define MNT_CARVE     "/carve" /* mount point of the carve-out tmpfs (mounts_carve.c) */
#define MNT_NAMES     "/names" /* halo-run's own name files (mounts_names.c) */
#define MNT_NAME_MAX  512      /* a name file's path or its symlink's target */

/* LINUX_TOOL_CONFIG_DIR under the sandbox's /run (open at `run`), after halo/ exists. */
void mnt_tool_config_or_die(int rfd, int run, const struct linux_tool_config *c);

enum mnt_create { MNT_NO_CREATE = 0, MNT_CREATE_DIR, MNT_CREATE_FILE };

/* Open `prefix``path` (path absolute, without "." or ".." components) O_PATH, never
 * following a symlink in any component. With MNT_CREATE_*, missing components are
 * created (only possible inside our own tmpfs mounts: elsewhere the root is
 * read-only). Returns the fd or -errno. */
int mnt_open(const char *prefix, const char *path, enum mnt_create create);
int mnt_open_or_die(int rfd, const char *prefix, const char *path, enum mnt_create create);
/* The same for what the final component is itself, a symlink included (O_PATH |
 * O_NOFOLLOW); no symlink is followed on the way. Returns the fd or -errno. */
int mnt_open_last(const char *prefix, const char *path);

/* Is fd a directory? (-errno on failure) */
int mnt_is_dir(int fd);

/* Create name in dir (O_EXCL, no symlink followed) with mode and write len bytes of
 * data to it; dies naming what ("sanitized copy of X", "X: halo-run's copy"). The
 * _keep form returns the file's (write) fd: a clone of it is the file, no need to
 * resolve its name again. */
int mnt_write_new_keep_or_die(int rfd, int dir, const char *name, mode_t mode, const void *data,
			      size_t len, const char *what);
void mnt_write_new_or_die(int rfd, int dir, const char *name, mode_t mode, const void *data,
			  size_t len, const char *what);

/* A fresh file system on the target fd: `opts` are "key=value" or "flag" strings
 * (NULL-terminated), attrs are MOUNT_ATTR_* for the new mount; its context goes to
 * *fs_ctx (NULL: closed) for a later seal. Returns the mount's fd (its root,
 * attached), or dies. */
int mnt_fresh_keep_or_die(int rfd, const char *fstype, const char *const *opts, unsigned attrs,
			  int target, const char *where, int *fs_ctx);
/* A file system made with mnt_fresh_keep_or_die, all written: its superblock made
 * read-only (no mount of it can change a byte), and its context closed. */
void mnt_seal_or_die(int rfd, int fs_ctx, const char *where);

/* By path (mounts_fd.c says where that is safe, and refuses any other path): 0 when
 * path is a directory and not a symlink, else -errno (-ELOOP: a symlink); the _or_die
 * form names the directory as the sandbox shows it (shown). */
int mnt_plain_dir(const char *path);
void mnt_plain_dir_or_die(int rfd, const char *path, const char *shown);
/* A fresh file system mounted on path with mount(2) (data: its options, flags: MS_*);
 * the _open form returns its root, O_PATH. */
void mnt_fresh_path_or_die(int rfd, const char *fstype, const char *data, unsigned long flags,
			   const char *path, const char *where);
int mnt_fresh_path_open_or_die(int rfd, const char *fstype, const char *data, unsigned long flags,
			       const char *path, const char *where);
/* The file system mounted at path (made by mnt_fresh_path_*), all written: its
 * superblock and its mount read-only in one remount; flags: the mount's MS_NOSUID,
 * MS_NODEV, MS_NOEXEC, repeated. */
void mnt_seal_path_or_die(int rfd, const char *path, unsigned long flags, const char *where);

/* Clone the tree at src (recursively), give it attr_set before it is visible, and
 * attach it on dst. The types must agree (directory onto directory, else non-directory
 * onto non-directory): the kernel refuses anything else, and the types are asked then
 * to say so. attr_set 0: the clone keeps the attributes of the mount it was cloned
 * from, for sources that already have the ones wanted (one call less a mount). Returns
 * the attached mount's fd, or dies. */
int mnt_bind_or_die(int rfd, int src, int dst, uint64_t attr_set, const char *where);
/* The same when the caller knows a side's type (sdir, ddir: 1 a directory, 0 not, -1
 * unknown); two known types that differ are refused before any mount. */
int mnt_bind_typed_or_die(int rfd, int src, int sdir, int dst, int ddir, uint64_t attr_set,
			  const char *where);

/* mount_setattr alone: true when set, false when the kernel has none (before 5.12; or
 * the test hook) and the caller must remount; any other failure dies. */
bool mnt_setattr_try_or_die(int rfd, int mnt, uint64_t attr_set, bool recursive, const char *where);
/* Add attributes to an attached mount (recursive: and every mount beneath it). */
void mnt_setattr_or_die(int rfd, int mnt, uint64_t attr_set, bool recursive, const char *where);

struct plan_step;
/* The tmpfs of halo-run's own files at MNT_NAMES, made on first use (its root, -1
 * until then); sealed read-only, superblock and all, once every file is in
 * (linux_mounts_own_files_seal_or_die, before the pivot). */
struct mnt_own_files {
	int mnt;
};
int linux_mounts_own_files_or_die(int rfd, struct mnt_own_files *o);
void linux_mounts_own_files_seal_or_die(int rfd, struct mnt_own_files *o);
/* PLAN_NAMES: st's bytes bound read-only over st->path, written on the tmpfs of
 * halo-run's own files (run: the sandbox's /run, or -1, for a link into it). */
void linux_mounts_name_or_die(int rfd, struct mnt_own_files *o, int run,
			      const struct plan_step *st);

/* For each masked path, what is mounted over it instead of the empty mask (an fd), or
 * -1: carve-outs and sanitized copies (mounts_carve.c). repl has s->masked.n slots. */
struct linux_scan;
void linux_mounts_carve_or_die(int rfd, const struct linux_scan *s, int *repl);
/* The sockets of sandbox.unixSockets (s->sockets_open) shown at their own path: where
 * a fresh /run or /tmp or a mask hides one, a mount point is made for it (on our
 * tmpfs, or on a search-only tmpfs laid over the mask). Before /run is sealed. */
void linux_mounts_sockets_or_die(int rfd, const struct linux_scan *s);

/* PLAN_SSH_CONFIG: st->data written on the tmpfs of halo-run's own files and bound
 * read-only over the host's /etc/ssh/ssh_config (a regular file: anything else is left
 * alone). */
void linux_mounts_ssh_config_or_die(int rfd, struct mnt_own_files *own, const struct plan_step *st);

/* /dev: a tmpfs holding the host's null zero full random urandom tty, a private
 * devpts, a tmpfs on /dev/shm, the usual symlinks; read-only once populated. */
void linux_mounts_dev_or_die(int rfd);

/* A fresh /proc for the sandbox's pid namespace with the kernel's sensitive entries
 * masked or read-only, and the sensitive parts of /sys masked. */
void linux_mounts_proc_or_die(int rfd);

#endif
