/* The creation broker's emulation: each trapped call performed by init on its caller's
 * behalf. The caller's strings are copied once (process_vm_readv), its directory fds
 * and working directory reopened through /proc/<tid>, and the new name is created
 * relative to its parent directory, opened first and checked against the pins: what
 * is checked is what is acted on. Names "/proc/self" and "/proc/thread-self" in a
 * path mean the caller's, as they would for it. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "linux/broker_emul_int.h"

#define MAX_FOLLOW 40 /* as the kernel's MAXSYMLINKS */

/* A NUL-terminated string of the caller, page by page (a read that crosses into an
 * unmapped page fails as a whole). Through /proc/<tid>/mem: init runs under the deny
 * list too, which refuses process_vm_readv. */
static int read_str(struct call *c, uint64_t addr, char *buf, size_t n)
{
	char p[64];
	size_t got = 0;
	int fd, rc = -ENAMETOOLONG;

	if (addr == 0)
		return -EFAULT;
	snprintf(p, sizeof(p), "/proc/%d/mem", (int)c->tid);
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		return errno == ENOENT ? -ESRCH : -EPERM;
	while (got < n) {
		size_t want = 4096 - ((addr + got) & 4095);
		ssize_t k;

		if (want > n - got)
			want = n - got;
		k = pread(fd, buf + got, want, (off_t)(addr + got));
		if (k <= 0) {
			rc = -EFAULT;
			break;
		}
		if (memchr(buf + got, '\0', (size_t)k)) {
			rc = 0;
			break;
		}
		got += (size_t)k;
	}
	close(fd);
	return rc;
}

/* /proc/self/... and /proc/thread-self/... name the caller, not init. */
static int own_proc(struct call *c, char *path, size_t n)
{
	static const char *const selves[] = {"/proc/self", "/proc/thread-self"};
	char tmp[PATH_MAX];

	for (size_t i = 0; i < 2; i++) {
		size_t k = strlen(selves[i]);
		if (strncmp(path, selves[i], k) != 0 || (path[k] != '/' && path[k] != '\0'))
			continue;
		if (snprintf(tmp, sizeof(tmp), "/proc/%d%s", (int)c->tid, path + k) >=
		    (int)sizeof(tmp))
			return -ENAMETOOLONG;
		snprintf(path, n, "%s", tmp);
		return 0;
	}
	return 0;
}

static int read_path(struct call *c, uint64_t addr, char *buf, size_t n)
{
	int rc = read_str(c, addr, buf, n);

	return rc < 0 ? rc : own_proc(c, buf, n);
}

/* Where a path is resolved from: the root for an absolute one, else the caller's
 * working directory or directory fd, reopened. */
int broker_open_base(struct call *c, int dfd, const char *path)
{
	char p[64];
	int fd;

	if (path[0] == '/')
		return open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd == AT_FDCWD)
		snprintf(p, sizeof(p), "/proc/%d/cwd", (int)c->tid);
	else if (dfd < 0)
		return -EBADF;
	else
		snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)c->tid, dfd);
	fd = open(p, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT && dfd != AT_FDCWD ? -EBADF : -errno;
	return fd;
}

static pthread_mutex_t judge_lock = PTHREAD_MUTEX_INITIALIZER;

void broker_judge_lock(struct call *c)
{
	if (c->judged || !c->b->guard_git)
		return;
	pthread_mutex_lock(&judge_lock);
	c->judged = true;
}

int broker_open_parent(struct call *c, int base, char *path, struct newname *nn)
{
	size_t n = strlen(path), k;
	bool slash = false;
	char *sl;
	const char *parent = ".", *name;

	nn->pfd = -1;
	nn->git = BROKER_GIT_OK;
	if (n == 0)
		return -ENOENT;
	while (n > 1 && path[n - 1] == '/') {
		path[--n] = '\0';
		slash = true;
	}
	sl = strrchr(path, '/');
	name = sl ? sl + 1 : path;
	if (sl)
		parent = sl == path ? "/" : (*sl = '\0', path);
	if (*name == '\0')
		name = "."; /* the path was "/" */
	if ((k = strlen(name)) > NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(nn->last, name, k + 1);
	nn->pfd = openat(base, parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (nn->pfd < 0)
		return -errno;
	broker_judge_lock(c); /* from this check to the end of the call */
	if (linux_broker_pinned(c->b, nn->pfd, nn->last, c->op))
		return -EACCES;
	if ((nn->git = linux_broker_git_check(c->b, nn->pfd, nn->last, c->op)) < 0)
		return nn->git;
	if (slash)
		memcpy(nn->last + k, "/", 2);
	return 0;
}

/* The caller's umask, for calls that create with a mode (init's own stays 0: its
 * worker threads share it, broker_pool.c). */
void broker_take_umask(struct call *c)
{
	char p[64], buf[2048];
	unsigned m = 022;
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/status", (int)c->tid);
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		const char *u = strstr(buf, "\nUmask:");
		if (u)
			m = (unsigned)strtoul(u + 7, NULL, 8) & 0777;
	}
	c->umask = (mode_t)m;
}

/* The mode a creation in the directory open at pfd gets, as the kernel would give it
 * under the caller's umask: a directory with a default ACL ignores the umask. */
mode_t broker_mode(const struct call *c, int pfd, mode_t mode)
{
	char p[64];

	snprintf(p, sizeof(p), "/proc/self/fd/%d", pfd);
	if (getxattr(p, "system.posix_acl_default", NULL, 0) > 0)
		return mode;
	return mode & ~c->umask;
}

/* The caller is still waiting for this call (its tid was not reused meanwhile). */
bool broker_still_valid(struct call *c)
{
	uint64_t id = c->req->id;

	return ioctl(c->b->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* (dfd, path at addr) → base fd and the new name in nn; 0 or -errno. */
static int new_name(struct call *c, int dfd, uint64_t addr, int *base, struct newname *nn)
{
	char path[PATH_MAX];
	int rc = read_path(c, addr, path, sizeof(path));

	*base = -1;
	nn->pfd = -1;
	if (rc < 0)
		return rc;
	if ((*base = broker_open_base(c, dfd, path)) < 0)
		return *base;
	if ((rc = broker_open_parent(c, *base, path, nn)) < 0)
		return rc;
	return broker_still_valid(c) ? 0 : -ENOENT;
}

/* A syscall's result as the caller sees it. */
long broker_R(long rc)
{
	return rc < 0 ? -errno : rc;
}

static long do_mkdir(struct call *c, int dfd, uint64_t path, mode_t mode)
{
	AUTO_FD base = -1;
	struct newname nn;
	int rc = (c->op = BROKER_OP_MKDIR, new_name(c, dfd, path, &base, &nn));
	AUTO_FD pfd = nn.pfd;

	if (rc < 0)
		return rc;
	broker_take_umask(c);
	return broker_R(mkdirat(pfd, nn.last, broker_mode(c, pfd, mode)));
}

static long do_mknod(struct call *c, int dfd, uint64_t path, mode_t mode, dev_t dev)
{
	AUTO_FD base = -1;
	struct newname nn;
	int rc = (c->op = BROKER_OP_MKNOD, new_name(c, dfd, path, &base, &nn));
	AUTO_FD pfd = nn.pfd;

	if (rc < 0)
		return rc;
	broker_take_umask(c);
	return broker_R(mknodat(pfd, nn.last, broker_mode(c, pfd, mode), dev));
}

static long do_symlink(struct call *c, uint64_t target, int dfd, uint64_t path)
{
	char t[PATH_MAX];
	AUTO_FD base = -1;
	struct newname nn;
	int rc = read_str(c, target, t, sizeof(t));

	if (rc < 0)
		return rc;
	c->op = BROKER_OP_SYMLINK;
	rc = new_name(c, dfd, path, &base, &nn);
	AUTO_FD pfd = nn.pfd;
	if (rc < 0)
		return rc;
	return broker_R(symlinkat(t, pfd, nn.last));
}

/* The existing side of link and rename: its base and path (not checked: it exists). */
static int old_side(struct call *c, int dfd, uint64_t addr, char *path, size_t n)
{
	int rc = read_path(c, addr, path, n);

	return rc < 0 ? rc : broker_open_base(c, dfd, path[0] ? path : ".");
}

static long do_link(struct call *c, int odfd, uint64_t old, int ndfd, uint64_t new, int flags)
{
	char op[PATH_MAX];
	AUTO_FD obase = old_side(c, odfd, old, op, sizeof(op));
	AUTO_FD base = -1;
	struct newname nn;
	int rc;

	if (obase < 0)
		return obase;
	c->op = BROKER_OP_LINK;
	rc = new_name(c, ndfd, new, &base, &nn);
	AUTO_FD pfd = nn.pfd;
	if (rc < 0)
		return rc;
	/* AT_EMPTY_PATH links the caller's fd itself (an O_TMPFILE): through its
	 * /proc entry, which needs no capability. */
	if ((flags & AT_EMPTY_PATH) && op[0] == '\0') {
		snprintf(op, sizeof(op), "/proc/%d/fd/%d", (int)c->tid, odfd);
		flags = AT_SYMLINK_FOLLOW;
		close(obase);
		obase = AT_FDCWD;
	}
	/* A second name for a git directory's config or hook would write it in place. */
	AUTO_FD src =
	    openat(obase, op, O_PATH | O_CLOEXEC | ((flags & AT_SYMLINK_FOLLOW) ? 0 : O_NOFOLLOW));
	if (src < 0)
		return -errno;
	if ((rc = linux_broker_git_check_opened(c->b, src)) < 0)
		return rc;
	snprintf(op, sizeof(op), "/proc/self/fd/%d", src); /* no capability needed */
	return broker_R(linkat(AT_FDCWD, op, pfd, nn.last, AT_SYMLINK_FOLLOW));
}

/* RENAME_EXCHANGE makes the old name anew too: it is checked as one made. */
static int exchange_side(struct call *c, int obase, const char *op)
{
	char path[PATH_MAX];
	struct newname on;
	int rc;

	snprintf(path, sizeof(path), "%s", op);
	rc = broker_open_parent(c, obase, path, &on);
	if (on.pfd >= 0)
		close(on.pfd);
	if (rc == 0 && on.git == BROKER_GIT_CONFIG)
		return -EACCES; /* a git config is replaced by rename only, never swapped */
	return rc;
}

static long do_rename(struct call *c, int odfd, uint64_t old, int ndfd, uint64_t new,
		      unsigned flags)
{
	char op[PATH_MAX];
	AUTO_FD obase = old_side(c, odfd, old, op, sizeof(op));
	AUTO_FD base = -1;
	struct newname nn;
	int rc;

	if (obase < 0)
		return obase;
	if (op[0] == '\0')
		return -ENOENT;
	c->op = BROKER_OP_RENAME;
	rc = new_name(c, ndfd, new, &base, &nn);
	AUTO_FD pfd = nn.pfd;
	if (rc < 0)
		return rc;
	if ((flags & RENAME_EXCHANGE) && (rc = exchange_side(c, obase, op)) < 0)
		return rc;
	if (nn.git == BROKER_GIT_CONFIG)
		return linux_broker_git_config_rename(c->b, obase, op, pfd, nn.last, flags);
	return broker_R(syscall(SYS_renameat2, obase, op, pfd, nn.last, flags));
}

/* Would this open block (a FIFO without its other end)? Then the FIFO, held O_PATH,
 * is what a child of init opens (broker_pool.c), so that one waiting writer does not
 * stall every other call, and so that the name cannot be swapped between the check
 * and the open. */
static int fifo_at(int pfd, const char *last, bool follow)
{
	struct stat st;
	int fd = openat(pfd, last, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));

	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* A name in /proc/<tid>/fd (or any procfs directory) is a magic link: opened by
 * following it, it reopens what the caller holds, and creates nothing. */
static bool in_procfs(int pfd)
{
	struct statfs sf;

	return fstatfs(pfd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

/* Every open is tried without waiting: one that would wait (a FIFO; a file whose
 * lease is being broken, EWOULDBLOCK; a device that is busy) is performed by a child
 * of init, on the file already found, while the workers answer other calls. */
static long open_final(struct call *c, int pfd, const char *last, int flags, mode_t mode,
		       bool follow, int *fd_out)
{
	int fl = flags | O_CLOEXEC | O_NOCTTY;
	bool cloexec = (flags & O_CLOEXEC) != 0;
	int fd;

	if (!follow)
		fl |= O_NOFOLLOW;
	int ff = fifo_at(pfd, last, follow);
	if (ff >= 0 && (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
		close(ff);
		return -EEXIST; /* the name is there: O_EXCL fails as it would */
	}
	if (ff >= 0)
		return linux_broker_open_waiting(
		    c->b, ff, fl & ~(O_CREAT | O_EXCL | O_NOFOLLOW | O_TRUNC), cloexec);
	fd = openat(pfd, last, fl | O_NONBLOCK, mode);
	if (fd < 0 && errno == EWOULDBLOCK && !(flags & O_NONBLOCK)) {
		/* It exists (only an existing file can wait): the wait on what was found. */
		int t = openat(pfd, last, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
		if (t < 0)
			return -errno;
		/* Through a magic link (follow): what it leads to is checked here, as
		 * do_open checks a file opened at once. */
		if (follow && linux_broker_git_check_opened(c->b, t) < 0) {
			close(t);
			return -EACCES;
		}
		return linux_broker_open_waiting(c->b, t, fl & ~(O_CREAT | O_EXCL | O_NOFOLLOW),
						 cloexec);
	}
	if (fd < 0)
		return -errno;
	if (!(flags & O_NONBLOCK))
		(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	*fd_out = fd;
	return cloexec;
}

/* The caller's process (its thread group), or -ESRCH. */
pid_t broker_caller_tgid(struct call *c)
{
	char p[64], buf[2048];
	const char *t;
	ssize_t n;
	int sfd;

	snprintf(p, sizeof(p), "/proc/%d/status", (int)c->tid);
	if ((sfd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		return -ESRCH;
	n = read(sfd, buf, sizeof(buf) - 1);
	close(sfd);
	buf[n > 0 ? n : 0] = '\0';
	return (t = strstr(buf, "\nTgid:")) ? (pid_t)atoi(t + 6) : -ESRCH;
}

/* A procfs directory is opened by init as init: only the caller's own /proc/<pid>
 * (its fd/ magic links, its own files) may be reached through it, never another
 * process's (/proc/1/environ and /proc/1/mem are init's). */
static bool own_procfs(struct call *c, int pfd)
{
	char self[64], path[PATH_MAX], mine[64];
	pid_t ids[2] = {c->tid, broker_caller_tgid(c)};
	ssize_t k;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	if ((k = readlink(self, path, sizeof(path) - 1)) <= 0)
		return false;
	path[k] = '\0';
	for (size_t i = 0; i < 2; i++) {
		int n = snprintf(mine, sizeof(mine), "/proc/%d", (int)ids[i]);
		if (ids[i] > 0 && strncmp(path, mine, (size_t)n) == 0 &&
		    (path[n] == '\0' || path[n] == '/'))
			return true;
	}
	return false;
}

/* The mode an open creates with. O_TMPFILE makes its file IN the directory named, so
 * that directory's default ACL (or none) decides, not its parent's; a name that is not
 * a directory there (a symlink the next hop follows) leaves the parent's, unused. */
static mode_t open_mode(const struct call *c, int pfd, const char *last, int flags, mode_t mode)
{
	if ((flags & O_TMPFILE) != O_TMPFILE)
		return broker_mode(c, pfd, mode);
	AUTO_FD dir = openat(pfd, last, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return broker_mode(c, dir >= 0 ? dir : pfd, mode);
}

/* open with O_CREAT (or for writing): the name checked at each hop when its last component is a
 * symlink the kernel would follow (and create the target of). */
static long do_open(struct call *c, int dfd, uint64_t addr, int flags, mode_t mode, int *fd_out)
{
	char path[PATH_MAX];
	int rc = read_path(c, addr, path, sizeof(path));
	AUTO_FD base = -1;

	if (rc < 0)
		return rc;
	if ((base = broker_open_base(c, dfd, path)) < 0)
		return base;
	broker_take_umask(c);
	c->op = (flags & O_CREAT) ? BROKER_OP_OPEN_CREATE : BROKER_OP_OPEN_WRITE;
	for (int hop = 0;; hop++) {
		struct newname nn;
		long r;

		rc = broker_open_parent(c, base, path, &nn);
		AUTO_FD pfd = nn.pfd;
		if (rc < 0)
			return rc;
		if (hop == 0 && !broker_still_valid(c))
			return -ENOENT;
		bool magic = in_procfs(pfd);
		if (magic && !own_procfs(c, pfd))
			return -EACCES;
		mode_t m = open_mode(c, pfd, nn.last, flags, mode);
		if (nn.git == BROKER_GIT_EMPTY) {
			int fd = linux_broker_git_empty(c->b, pfd, nn.last, m);
			if (fd < 0)
				return fd;
			*fd_out = fd;
			return (flags & O_CLOEXEC) != 0;
		}
		r = open_final(c, pfd, nn.last, flags, m, magic, fd_out);
		if (magic && r >= 0 && *fd_out >= 0 &&
		    linux_broker_git_check_opened(c->b, *fd_out) < 0) {
			close(*fd_out); /* the file behind the magic link is a guarded one */
			*fd_out = -1;
			return -EACCES;
		}
		if (r != -ELOOP || (flags & (O_NOFOLLOW | O_EXCL)))
			return r;
		if (hop >= MAX_FOLLOW)
			return -ELOOP;
		/* The name is a symlink to follow: its target is the next path. */
		ssize_t n = readlinkat(pfd, nn.last, path, sizeof(path) - 1);
		if (n < 0)
			return -ELOOP;
		path[n] = '\0';
		if ((rc = own_proc(c, path, sizeof(path))) < 0)
			return rc;
		close(base);
		if (path[0] == '/') {
			base = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		} else {
			base = pfd;
			pfd = -1;
		}
		if (base < 0)
			return -errno;
	}
}

static long emulate(struct call *c, int *fd_out)
{
	const uint64_t *a = c->a;

	switch (c->req->data.nr) {
	case __NR_openat:
		return do_open(c, (int)a[0], a[1], (int)a[2], (mode_t)a[3], fd_out);
	case __NR_mkdirat:
		return do_mkdir(c, (int)a[0], a[1], (mode_t)a[2]);
	case __NR_mknodat:
		return do_mknod(c, (int)a[0], a[1], (mode_t)a[2], (dev_t)a[3]);
	case __NR_symlinkat:
		return do_symlink(c, a[0], (int)a[1], a[2]);
	case __NR_linkat:
		return do_link(c, (int)a[0], a[1], (int)a[2], a[3], (int)a[4]);
	case __NR_renameat2:
		return do_rename(c, (int)a[0], a[1], (int)a[2], a[3], (unsigned)a[4]);
	case __NR_bind:
		return broker_do_bind(c, (int)a[0], a[1], (socklen_t)a[2]);
#ifdef __NR_open
	case __NR_open:
		return do_open(c, AT_FDCWD, a[0], (int)a[1], (mode_t)a[2], fd_out);
	case __NR_creat:
		return do_open(c, AT_FDCWD, a[0], O_CREAT | O_WRONLY | O_TRUNC, (mode_t)a[1],
			       fd_out);
	case __NR_mkdir:
		return do_mkdir(c, AT_FDCWD, a[0], (mode_t)a[1]);
	case __NR_mknod:
		return do_mknod(c, AT_FDCWD, a[0], (mode_t)a[1], (dev_t)a[2]);
	case __NR_symlink:
		return do_symlink(c, a[0], AT_FDCWD, a[1]);
	case __NR_link:
		return do_link(c, AT_FDCWD, a[0], AT_FDCWD, a[1], 0);
	case __NR_rename:
		return do_rename(c, AT_FDCWD, a[0], AT_FDCWD, a[1], 0);
	case __NR_renameat:
		return do_rename(c, (int)a[0], a[1], (int)a[2], a[3], 0);
#endif
	default:
		return -ENOSYS; /* the filter sends nothing else */
	}
}

long linux_broker_emulate(struct linux_broker *b, const struct seccomp_notif *req, int *fd_out)
{
	struct call c = {
	    b,	 req,  (pid_t)req->pid, (const uint64_t *)req->data.args, BROKER_OP_OPEN_CREATE,
	    022, false};
	long rc;

	*fd_out = -1;
	rc = emulate(&c, fd_out);
	if (c.judged)
		pthread_mutex_unlock(&judge_lock);
	return rc;
}
