/* The creation broker's bind(): a unix socket's name is made in a directory like any
 * other file (and git counts a socket named objects or refs), so init performs it, in
 * the directory it checked, on the caller's own socket (pidfd_getfd). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "linux/broker_emul_int.h"

/* The caller's bytes at addr, n of them (a socket address). */
static int read_mem(struct call *c, uint64_t addr, void *buf, size_t n)
{
	char p[64];
	int fd;
	ssize_t k;

	snprintf(p, sizeof(p), "/proc/%d/mem", (int)c->tid);
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		return errno == ENOENT ? -ESRCH : -EPERM;
	k = pread(fd, buf, n, (off_t)addr);
	close(fd);
	return k == (ssize_t)n ? 0 : -EFAULT;
}

/* The caller's descriptor fd, duplicated into init (the same open socket). */
static int caller_fd(struct call *c, int fd)
{
	pid_t tgid = broker_caller_tgid(c);
	int pfd, got;

	if (tgid < 0)
		return tgid;
	if ((pfd = (int)syscall(SYS_pidfd_open, tgid, 0)) < 0)
		return -errno;
	got = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
	close(pfd);
	return got < 0 ? (errno == EBADF ? -EBADF : -errno) : got;
}

static pthread_mutex_t cwd_lock = PTHREAD_MUTEX_INITIALIZER;

static int bind_in(int pfd, int sock, const struct sockaddr_un *u)
{
	AUTO_FD cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int rc;

	if (cwd < 0 || fchdir(pfd) < 0)
		return -errno;
	rc = bind(sock, (const struct sockaddr *)u,
		  (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(u->sun_path) + 1));
	rc = rc < 0 ? -errno : 0;
	if (fchdir(cwd) < 0)
		return -EIO;
	return rc;
}

/* bind() makes a name too (a unix socket's), and git takes a socket for objects/ or
 * refs/: performed here, in the directory checked, like every other creation. */
long broker_do_bind(struct call *c, int fd, uint64_t addr, socklen_t len)
{
	struct sockaddr_storage ss;
	struct sockaddr_un *un = (struct sockaddr_un *)&ss, u = {.sun_family = AF_UNIX};
	char path[sizeof(un->sun_path) + 1];
	size_t plen = len > offsetof(struct sockaddr_un, sun_path)
			  ? len - offsetof(struct sockaddr_un, sun_path)
			  : 0;
	struct newname nn = {.pfd = -1};
	int rc;

	if (len < sizeof(sa_family_t) || len > sizeof(ss))
		return -EINVAL;
	if ((rc = read_mem(c, addr, &ss, len)) < 0)
		return rc;
	AUTO_FD sock = caller_fd(c, fd);
	if (sock < 0)
		return sock;
	if (ss.ss_family != AF_UNIX || plen == 0 || un->sun_path[0] == '\0')
		return broker_R(
		    bind(sock, (struct sockaddr *)&ss, len)); /* no name in a directory */
	memcpy(path, un->sun_path, plen);
	path[plen] = '\0';
	c->op = BROKER_OP_MKNOD; /* a socket is a node */
	AUTO_FD base = broker_open_base(c, AT_FDCWD, path);
	if (base < 0)
		return base;
	rc = broker_open_parent(c, base, path, &nn);
	AUTO_FD pfd = nn.pfd;
	if (rc < 0)
		return rc;
	if (!broker_still_valid(c))
		return -ENOENT;
	if (strlen(nn.last) >= sizeof(u.sun_path))
		return -ENAMETOOLONG;
	memcpy(u.sun_path, nn.last, strlen(nn.last) + 1);
	broker_take_umask(c);
	/* The socket's file gets the socket inode's mode less the umask (a default ACL
	 * or not), and init's umask is 0 (broker_pool.c): the caller's goes on the inode. */
	if (fchmod(sock, 0777 & ~c->umask) < 0)
		return -errno;
	/* Bound by its last name from inside the checked directory: nothing between the
	 * check and the bind resolves the path again. The working directory is shared by
	 * the worker threads: one bind at a time changes it. */
	pthread_mutex_lock(&cwd_lock);
	rc = bind_in(pfd, sock, &u);
	pthread_mutex_unlock(&cwd_lock);
	return rc;
}
