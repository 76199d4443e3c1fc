/* A host unix socket that appears where a session's sandbox sees it (a service started
 * on the host after the session: a dev server's socket in the workspace, Docker
 * Desktop's ~/.docker/run/docker.sock) is masked in the running session, as a fresh
 * launch masks it, instead of refusing every call until it is removed (review 9 S4).
 *
 * Nothing inside the sandbox holds a capability any more, so a short-lived helper
 * forked by the supervisor joins the session's user and mount namespaces (held since
 * the start, launch.c; it owns the user namespace: setns needs no privilege of the
 * host), makes a one-file read-only
 * tmpfs of its own, and binds its empty mode-000 file over each socket: connect()
 * there is refused, as on a fresh launch's mask. Each socket is opened without
 * following a link on the way (the sandbox's commands can change links in the
 * workspace) and must be the very inode the supervisor's walk found, by its file
 * handle, or it is left alone and the call refused as before.
 *
 * The helper is a fork of a threaded process: it makes system calls only, on what the
 * parent prepared (no allocation, no stdio), and answers one byte per socket. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/openat2.h>

#include "linux/launch_int.h"

#define MASK_HELPER_MS 2000 /* a helper that says nothing by then is killed */
#define HANDLE_MAX     64

struct target {
	const char *path;		  /* inside the entry */
	unsigned char handle[HANDLE_MAX]; /* the walk's file handle */
	unsigned handle_len;
	dev_t dev;
};

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* "DEV:HEX+sk:PATH" (linux_session_protected's socket entry, its ID a file handle)
 * into t; false for any other form (an inode-and-birth-time ID cannot be checked
 * from inside, and is refused as before). */
static bool parse(const char *entry, struct target *t)
{
	char *end;
	unsigned long long dev = strtoull(entry, &end, 10);
	const char *id = end + 1, *mark = strstr(entry, LINUX_SESSION_SOCKET ":/");
	size_t hex;

	if (*end != ':' || !mark || mark < id)
		return false;
	hex = (size_t)(mark - id);
	if (hex == 0 || hex % 2 || hex / 2 > HANDLE_MAX)
		return false;
	for (size_t i = 0; i < hex / 2; i++) {
		int hi = hexval(id[2 * i]), lo = hexval(id[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		t->handle[i] = (unsigned char)(hi << 4 | lo);
	}
	t->handle_len = (unsigned)(hex / 2);
	t->dev = (dev_t)dev;
	t->path = mark + strlen(LINUX_SESSION_SOCKET) + 1;
	return true;
}

/* The mask: an empty file, mode 000, on a tmpfs made read-only once it is there;
 * a detached clone of it per socket. -errno when the kernel refuses. */
static int mask_source(void)
{
	int fs = fsopen("tmpfs", FSOPEN_CLOEXEC), mnt = -1, fd = -1, src = -1;

	if (fs < 0 || fsconfig(fs, FSCONFIG_SET_STRING, "size", "4k", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0111", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
	    (mnt = fsmount(fs, FSMOUNT_CLOEXEC,
			   MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)) < 0 ||
	    (fd = openat(mnt, "mask", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0)) < 0)
		goto out;
	close(fd);
	struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
	if (fsconfig(fs, FSCONFIG_SET_FLAG, "ro", NULL, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) < 0 ||
	    mount_setattr(mnt, "", AT_EMPTY_PATH, &ro, sizeof(ro)) < 0)
		goto out;
	src = mnt;
	mnt = -1;
out:;
	int err = errno;
	if (fs >= 0)
		close(fs);
	if (mnt >= 0)
		close(mnt);
	return src >= 0 ? src : -err;
}

/* /dev/null of the sandbox (halo-run's own /dev; the device itself, checked), where
 * the kernel cannot clone a mount that was never attached (before Linux 6.15): a
 * socket under it refuses connect() the same, and what is written there is lost. */
static int null_clone(void)
{
	struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, "/dev/null", &how, sizeof(how)), c;
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3)) {
		close(fd);
		return -ENODEV;
	}
	c = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	c = c < 0 ? -errno : c;
	close(fd);
	return c;
}

/* A detached clone of the mask file, or of /dev/null; -errno. */
static int mask_clone(int src)
{
	int c = src >= 0 ? open_tree(src, "mask", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC) : -1;

	return c >= 0 ? c : null_clone();
}

/* A mask, here or the launch's: an empty mode-000 file on a read-only tmpfs, which
 * nothing in the sandbox can make (review 19: the session's command renamed the
 * directory of a socket masked live, the mask went along, and every later call was
 * refused: the walk named the socket at its new path, and the helper found the mask
 * there). Whatever covers the path, the socket is out of reach by it. */
static bool is_mask(int fd, const struct stat *st)
{
	struct statfs sf;

	return S_ISREG(st->st_mode) && st->st_size == 0 && (st->st_mode & 07777) == 0 &&
	       fstatfs(fd, &sf) == 0 && sf.f_type == TMPFS_MAGIC && (sf.f_flags & ST_RDONLY);
}

/* The socket at t->path, opened in the session's view without a link on the way, is
 * the walk's inode: bind the mask over it. 0 or an errno value. */
static int mask_one(int src, const struct target *t)
{
	struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + HANDLE_MAX];
	} u;
	struct stat st;
	int mnt_id, target, clone, rc = 0;

	target = (int)syscall(SYS_openat2, AT_FDCWD, t->path, &how, sizeof(how));
	if (target < 0)
		return errno;
	u.fh.handle_bytes = HANDLE_MAX;
	if (fstat(target, &st) == 0 && is_mask(target, &st))
		rc = 0; /* covered already: a mask that moved here with its directory */
	else if (fstat(target, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_dev != t->dev ||
		 name_to_handle_at(target, "", &u.fh, &mnt_id, AT_EMPTY_PATH) < 0 ||
		 u.fh.handle_bytes != t->handle_len ||
		 memcmp(u.fh.f_handle, t->handle, t->handle_len) != 0)
		rc = ESTALE; /* another file than the walk's now */
	else if ((clone = mask_clone(src)) < 0)
		rc = -clone;
	else {
		if (move_mount(clone, "", target, "",
			       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
			rc = errno;
		close(clone);
	}
	close(target);
	return rc;
}

/* The helper: one byte per target, 0 when masked (else an errno value, capped). */
static void __attribute__((noreturn))
helper(const struct linux_sandbox *sb, int out, const struct target *t, size_t n)
{
	unsigned char res[LINUX_SESSION_MASK_MAX];

	/* Nothing inside may trace it (it holds the namespace's capabilities). */
	if (prctl(PR_SET_DUMPABLE, 0) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(1);
	memset(res, EPERM, sizeof(res));
	if (setns(sb->ns_user_fd, CLONE_NEWUSER) == 0 && setns(sb->ns_mnt_fd, CLONE_NEWNS) == 0) {
		int src = mask_source(); /* (failing: /dev/null, mask_clone) */
		for (size_t i = 0; i < n; i++) {
			int rc = mask_one(src, &t[i]);
			res[i] = (unsigned char)(rc > 255 ? EIO : rc);
		}
	}
	_exit(write(out, res, n) == (ssize_t)n ? 0 : 1);
}

int linux_session_mask_sockets(const struct linux_sandbox *sb, char *const *entries, size_t n,
			       bool *masked)
{
	struct target t[LINUX_SESSION_MASK_MAX];
	size_t idx[LINUX_SESSION_MASK_MAX], k = 0, done = 0;
	unsigned char res[LINUX_SESSION_MASK_MAX];
	int p[2], status;
	pid_t pid;

	for (size_t i = 0; i < n; i++)
		masked[i] = false;
	for (size_t i = 0; i < n && k < LINUX_SESSION_MASK_MAX; i++)
		if (parse(entries[i], &t[k]))
			idx[k++] = i;
	if (!k || !sb || !sb->via_init || sb->ns_user_fd < 0 || sb->ns_mnt_fd < 0)
		return 0;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	if ((pid = fork()) < 0) {
		int err = errno;
		close(p[0]);
		close(p[1]);
		return -err;
	}
	if (pid == 0) {
		close(p[0]);
		helper(sb, p[1], t, k);
	}
	close(p[1]);
	struct pollfd pf = {.fd = p[0], .events = POLLIN};
	ssize_t got = 0;
	if (poll(&pf, 1, MASK_HELPER_MS) == 1)
		got = read(p[0], res, k);
	close(p[0]);
	if (got != (ssize_t)k)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	for (size_t j = 0; got == (ssize_t)k && j < k; j++)
		if (res[j] == 0) {
			masked[idx[j]] = true;
			done++;
		}
	return (int)done;
}
