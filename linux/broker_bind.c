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
 * refs/: performed here, in the directory the gate checked, like every other creation.
 * An address that names no file is bound as it is. */
long broker_do_bind(struct call *c, struct broker_req *r, int *fd_out)
{
	struct sockaddr_un u = {.sun_family = AF_UNIX};
	int rc;

	(void)fd_out;
	AUTO_FD sock = caller_fd(c, r->fd);
	if (sock < 0)
		return sock;
	if (!r->has_name)
		return broker_R(bind(sock, (struct sockaddr *)&r->sa, r->len));
	if (strlen(r->nn.last) >= sizeof(u.sun_path))
		return -ENAMETOOLONG;
	memcpy(u.sun_path, r->nn.last, strlen(r->nn.last) + 1);
	broker_take_umask(c);
	/* The socket's file gets the socket inode's mode less the umask (a default ACL
	 * or not), and init's umask is 0 (broker_pool.c): the caller's goes on the inode. */
	if (fchmod(sock, 0777 & ~c->umask) < 0)
		return -errno;
	/* Bound by its last name from inside the checked directory: nothing between the
	 * check and the bind resolves the path again. The working directory is shared by
	 * the worker threads: one bind at a time changes it. */
	pthread_mutex_lock(&cwd_lock);
	rc = bind_in(r->nn.pfd, sock, &u);
	pthread_mutex_unlock(&cwd_lock);
	return rc;
}
