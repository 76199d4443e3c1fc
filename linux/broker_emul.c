/* The creation broker's emulation: each trapped call performed by init on its caller's
 * behalf, once the gate (broker_admit.c) has copied the caller's strings, reopened its
 * directory fds and working directory through /proc/<tid>, and opened and checked the
 * new name's parent directory: the rows' functions act on what was checked, relative
 * to that directory. The steps the gate and the functions share are here too. */
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

void broker_judge_unlock(struct call *c)
{
	if (c->judged)
		pthread_mutex_unlock(&judge_lock);
	c->judged = false;
}

/* path (changed) split into its directory, opened once, and its last name; 1 when it
 * ended with a slash (put back by the caller once judged), 0, or -errno. */
int broker_split_open(int base, char *path, struct newname *nn)
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
	return slash;
}

int broker_open_parent(struct call *c, int base, char *path, struct newname *nn)
{
	int slash = broker_split_open(base, path, nn);
	size_t k = strlen(nn->last);

	if (slash < 0)
		return slash;
	broker_judge_lock(c); /* from this check to the end of the call */
	if (linux_broker_pinned(c->b, nn->pfd, nn->last, c->op))
		return -EACCES;
	/* (a removal is no git directory's concern: rm -rf of a repository) */
	if (c->op != BROKER_OP_UNLINK && c->op != BROKER_OP_META &&
	    (nn->git = linux_broker_git_check(c->b, nn->pfd, nn->last, c->op)) < 0)
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

/* A syscall's result as the caller sees it. */
long broker_R(long rc)
{
	return rc < 0 ? -errno : rc;
}

/* The rows' functions: what the gate (broker_admit.c) opened and judged, acted on. */
long broker_do_mkdir(struct call *c, struct broker_req *r, int *fd_out)
{
	(void)fd_out;
	broker_take_umask(c);
	return broker_R(mkdirat(r->nn.pfd, r->nn.last, broker_mode(c, r->nn.pfd, r->mode)));
}

long broker_do_mknod(struct call *c, struct broker_req *r, int *fd_out)
{
	(void)fd_out;
	broker_take_umask(c);
	long rc =
	    broker_R(mknodat(r->nn.pfd, r->nn.last, broker_mode(c, r->nn.pfd, r->mode), r->dev));
	if (rc == 0) /* a regular file made so is the command's too */
		linux_broker_note_own_at(c->b, r->nn.pfd, r->nn.last);
	return rc;
}

/* The file a truncate or chmod changes in place (held O_PATH, followed as the call
 * follows it), unless it is kept: a read-only entry the host replaced, at or beneath a
 * pin, a second name of a kept file, or the host's temp file beside one (review 29:
 * truncated at a chosen length, or left writable to every local user). fd, or -errno. */
static int meta_target(struct call *c, int dfd, const char *name, bool follow)
{
	int fd = openat(dfd, name, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));

	if (fd < 0)
		return -errno;
	struct stat st;
	/* (and a directory that holds kept entries, opened to others: another local user
	 * could put a file of theirs in an entry's place) */
	if (linux_broker_at_kept(c->b, fd, NULL) || linux_broker_alias_kept(c->b, fd) ||
	    linux_broker_fresh_opened(c->b, c->tid, fd) ||
	    (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && linux_broker_home_dir_fd(c->b, fd))) {
		close(fd);
		return -EACCES;
	}
	return fd;
}

static long chmod_fd(int fd, mode_t mode)
{
	char p[64];

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	return broker_R(chmod(p, mode));
}

long broker_do_truncate(struct call *c, struct broker_req *r, int *fd_out)
{
	char p[64];
	AUTO_FD fd = meta_target(c, r->nn.pfd, r->nn.last, true);

	(void)fd_out;
	if (fd < 0)
		return fd;
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	return broker_R(truncate(p, r->size));
}

long broker_do_chmod(struct call *c, struct broker_req *r, int *fd_out)
{
	(void)fd_out;
	if (r->flags & ~AT_SYMLINK_NOFOLLOW)
		return -EINVAL; /* fchmodat2's only flag (fchmodat has none: 0) */
	AUTO_FD fd = meta_target(c, r->nn.pfd, r->nn.last, !(r->flags & AT_SYMLINK_NOFOLLOW));
	struct stat st;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) == 0 && S_ISLNK(st.st_mode))
		return -EOPNOTSUPP; /* a symlink's own mode, as the kernel answers */
	return chmod_fd(fd, r->mode & 07777);
}

long broker_do_fchmod(struct call *c, struct broker_req *r, int *fd_out)
{
	char p[64];

	(void)fd_out;
	snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)c->tid, r->fd);
	AUTO_FD fd = meta_target(c, AT_FDCWD, p, true);
	if (fd == -ENOENT)
		return -EBADF; /* no such descriptor */
	return fd < 0 ? fd : chmod_fd(fd, r->mode & 07777);
}

long broker_do_setxattr(struct call *c, struct broker_req *r, int *fd_out)
{
	char p[64];
	struct stat st;
	int fd;
	long rc;

	(void)fd_out;
	if (r->row->a.fd != BROKER_NO) { /* fsetxattr: where the caller's descriptor leads */
		snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)c->tid, r->fd);
		fd = meta_target(c, AT_FDCWD, p, true);
		if (fd == -ENOENT)
			return -EBADF;
	} else {
		fd = meta_target(c, r->nn.pfd, r->nn.last, r->row->nr != __NR_lsetxattr);
	}
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
		close(fd);
		return -EPERM; /* (a symlink's own attributes: none a user may set) */
	}
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	rc = broker_R(setxattr(p, r->xname, r->value, r->vsize, r->flags));
	close(fd);
	return rc;
}

long broker_do_unlink(struct call *c, struct broker_req *r, int *fd_out)
{
	(void)fd_out;
	/* (review 29) Not the host's temp file beside a kept entry: a file of the
	 * command's in its place would be what the host renames over the entry. */
	if (linux_broker_host_fresh_at(c->b, c->tid, r->nn.pfd, r->nn.last))
		return -EACCES;
	return broker_R(unlinkat(r->nn.pfd, r->nn.last, r->flags));
}

long broker_do_symlink(struct call *c, struct broker_req *r, int *fd_out)
{
	(void)c;
	(void)fd_out;
	return broker_R(symlinkat(r->old, r->nn.pfd, r->nn.last));
}

long broker_do_link(struct call *c, struct broker_req *r, int *fd_out)
{
	char p[64];

	(void)fd_out;
	snprintf(p, sizeof(p), "/proc/self/fd/%d", r->src); /* no capability needed */
	long rc = broker_R(linkat(AT_FDCWD, p, r->nn.pfd, r->nn.last, AT_SYMLINK_FOLLOW));
	if (rc == 0)
		linux_broker_note_own_at(c->b, r->nn.pfd, r->nn.last);
	return rc;
}

long broker_do_rename(struct call *c, struct broker_req *r, int *fd_out)
{
	(void)fd_out;
	const struct newname *on = &r->on; /* opened once (rename_source) */
	unsigned fl = (unsigned)r->flags;
	long rr = -EEXIST;

	if (r->nn.git == BROKER_GIT_CONFIG)
		return linux_broker_git_config_rename(c->b, on->pfd, on->last, r->nn.pfd,
						      r->nn.last, fl);
	/* (An exchange's other way, onto the old name, is checked with it: exchange_side.) */
	int rc = linux_broker_git_dotgit_rename(c->b, on->pfd, on->last, r->nn.pfd, r->nn.last);
	if (rc < 0)
		return rc;
	/* (review 28) The host's temp file beside a kept entry is not the command's to
	 * move (renamed to a name of its own, written, and moved back before the host
	 * renames it over the entry); nor, swapped, what the new name holds; nor replaced
	 * (the host would rename the command's file over the entry). A new name absent when
	 * judged is made so (RENAME_NOREPLACE): one the host makes meanwhile is judged again
	 * (review 30: the host's lock appeared between the check and the rename). */
	for (int round = 0; round < 4 && rr == -EEXIST; round++) {
		struct stat st;
		bool absent = !(fl & RENAME_EXCHANGE) &&
			      fstatat(r->nn.pfd, r->nn.last, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
			      errno == ENOENT;
		if (linux_broker_host_fresh_at(c->b, c->tid, on->pfd, on->last) ||
		    linux_broker_host_fresh_at(c->b, c->tid, r->nn.pfd, r->nn.last))
			return -EACCES;
		rr = broker_R(syscall(SYS_renameat2, on->pfd, on->last, r->nn.pfd, r->nn.last,
				      fl | (absent ? RENAME_NOREPLACE : 0)));
		if (!absent || (fl & RENAME_NOREPLACE))
			break;
	}
	if (rr == 0)
		linux_broker_note_own_at(c->b, r->nn.pfd, r->nn.last);
	return rr;
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
	return linux_broker_tgid(c->tid);
}

pid_t linux_broker_tgid(pid_t tid)
{
	char p[64], buf[2048];
	const char *t;
	ssize_t n;
	int sfd;

	snprintf(p, sizeof(p), "/proc/%d/status", (int)tid);
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
bool broker_own_procfs(struct call *c, int pfd)
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

/* The name is a symlink to follow: its target is the next path, from the root or
 * from the directory it lies in. */
static int follow(struct call *c, struct broker_req *r)
{
	ssize_t n = readlinkat(r->nn.pfd, r->nn.last, r->path, sizeof(r->path) - 1);
	int rc;

	if (n < 0)
		return -ELOOP;
	r->path[n] = '\0';
	if ((rc = broker_own_proc(c->tid, r->path, sizeof(r->path))) < 0)
		return rc;
	close(r->base);
	if (r->path[0] == '/') {
		r->base = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(r->nn.pfd);
	} else {
		r->base = r->nn.pfd;
	}
	r->nn.pfd = -1;
	return r->base < 0 ? -errno : 0;
}

/* The open of one hop, and whether it made its file (an O_TMPFILE, an O_CREAT that
 * found no name): told by O_EXCL first, then, when the name is there, an open of what
 * is there, judged as such (a name that appears in between is not taken for the
 * command's). O_TRUNC is left to truncate_opened. */
static long open_told(struct call *c, struct broker_req *r, int flags, mode_t m, bool *made,
		      int *fd_out)
{
	int fl = flags & ~O_TRUNC, pfd = r->nn.pfd;
	long rc = -EEXIST;

	*made = (flags & O_TMPFILE) == O_TMPFILE;
	if (!(flags & O_CREAT))
		return open_final(c, pfd, r->nn.last, fl, m, r->magic, fd_out);
	for (int round = 0; round < 4 && rc == -EEXIST; round++) {
		rc = open_final(c, pfd, r->nn.last, fl | O_EXCL, m, r->magic, fd_out);
		*made = rc >= 0 && *fd_out >= 0;
		if (rc != -EEXIST || (flags & O_EXCL))
			return rc;
		rc = open_final(c, pfd, r->nn.last, fl & ~O_CREAT, m, r->magic, fd_out);
		if (rc == -ENOENT) /* removed in between: made after all, or found */
			rc = -EEXIST;
	}
	return rc;
}

/* An open's O_TRUNC on a regular file, after the checks: through its path, which the
 * descriptor need not be open for writing for. 0 or -errno. */
static long truncate_opened(int fd)
{
	char p[64];
	struct stat st;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
		return 0; /* (a FIFO, a device: O_TRUNC is ignored there) */
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	return truncate(p, 0) < 0 ? -errno : 0;
}

/* open with O_CREAT (or for writing): the name checked at each hop when its last
 * component is a symlink the kernel would follow (and create the target of). */
long broker_do_open(struct call *c, struct broker_req *r, int *fd_out)
{
	int flags = r->flags;

	broker_take_umask(c);
	for (int hop = 0;; hop++) {
		long rc;

		/* Hop 0 was judged by the gate; each later one is judged the same way. */
		if (hop > 0 && (rc = broker_admit_name(c, r)) < 0)
			return rc;
		int pfd = r->nn.pfd;
		mode_t m = open_mode(c, pfd, r->nn.last, flags, r->mode);
		if (r->nn.git == BROKER_GIT_EMPTY) {
			int fd = linux_broker_git_empty(c->b, pfd, r->nn.last, m);
			if (fd < 0)
				return fd;
			*fd_out = fd;
			return (flags & O_CLOEXEC) != 0;
		}
		bool made;
		rc = open_told(c, r, flags, m, &made, fd_out);
		if (r->magic && rc >= 0 && *fd_out >= 0 &&
		    linux_broker_git_check_opened(c->b, *fd_out) < 0) {
			close(*fd_out); /* the file behind the magic link is a guarded one */
			*fd_out = -1;
			return -EACCES;
		}
		/* A read-only entry the host replaced (review 27: its bind went with it, and
		 * the name, or an O_PATH descriptor reopened through /proc/self/fd, was
		 * writable): EROFS, as the mount answered (broker.c). */
		if (rc >= 0 && *fd_out >= 0 &&
		    ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)) &&
		    linux_broker_guarded_gone(c->b, *fd_out, NULL)) {
			close(*fd_out);
			*fd_out = -1;
			return -EROFS;
		}
		/* (review 28) A second name for a kept file, or a file the host made beside
		 * one during the run (its temp file, renamed over the entry later). */
		if (rc >= 0 && *fd_out >= 0 && !made &&
		    (linux_broker_alias_kept(c->b, *fd_out) ||
		     linux_broker_fresh_opened(c->b, c->tid, *fd_out))) {
			close(*fd_out);
			*fd_out = -1;
			return -EACCES;
		}
		if (rc >= 0 && *fd_out >= 0 && made)
			linux_broker_note_own_opened(c->b, *fd_out);
		/* O_TRUNC once the file passed (an open that truncates before it is
		 * judged would empty a kept one and then refuse it). */
		if (rc >= 0 && *fd_out >= 0 && (flags & O_TRUNC) &&
		    (rc = truncate_opened(*fd_out)) < 0) {
			close(*fd_out);
			*fd_out = -1;
		}
		if (rc != -ELOOP || (flags & (O_NOFOLLOW | O_EXCL)))
			return rc;
		if (hop >= MAX_FOLLOW)
			return -ELOOP;
		if ((rc = follow(c, r)) < 0)
			return rc;
	}
}
