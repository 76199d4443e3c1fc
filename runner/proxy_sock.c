/* `halo-run proxy`'s sockets: TCP listeners, the unix socket (0600 whatever the
 * umask; never replacing a file that is not a socket, nor a socket someone answers
 * on), and what an inherited (systemd) socket is. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "runner/proxy_cmd.h"

#define LISTEN_BACKLOG 1024

static int open_tcp(const struct runner_listen_addr *a, struct halo_err *e)
{
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	int one = 1, fd, rc;
	char t[160];

	runner_listen_text(a, t, sizeof(t));
	if (a->family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)&ss;
		s->sin_family = AF_INET;
		s->sin_port = htons((uint16_t)a->port);
		memcpy(&s->sin_addr, a->addr, 4);
		sl = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;
		s->sin6_family = AF_INET6;
		s->sin6_port = htons((uint16_t)a->port);
		memcpy(&s->sin6_addr, a->addr, 16);
		sl = sizeof(*s);
	}
	fd = socket(a->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return rc = -errno, halo_err_set(e, "%s: socket: %s", t, strerror(errno)), rc;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (a->family == AF_INET6) /* [::]:P is v6 only: give 0.0.0.0:P for v4 too */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
		rc = -errno;
		halo_err_set(e, "%s: %s", t, strerror(errno));
		close(fd);
		return rc;
	}
	return fd;
}

/* Something at the path already: a socket nobody answers on is a previous run's
 * (removed); anything else stays and the start is refused. */
static int clear_stale(const char *path, struct halo_err *e)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) < 0)
		return errno == ENOENT
			   ? 0
			   : (halo_err_set(e, "unix:%s: %s", path, strerror(errno)), -errno);
	if (!S_ISSOCK(st.st_mode))
		return halo_err_set(e, "unix:%s: exists and is not a socket; not replaced", path),
		       -EEXIST;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return rc = -errno, halo_err_set(e, "unix:%s: %s", path, strerror(errno)), rc;
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ? 0 : -errno;
	close(fd);
	if (rc == 0 || rc != -ECONNREFUSED)
		return halo_err_set(e, "unix:%s: %s; not replaced", path,
				    rc == 0 ? "another process listens on it" : strerror(-rc)),
		       -EADDRINUSE;
	if (unlink(path) < 0 && errno != ENOENT)
		return rc = -errno, halo_err_set(e, "unix:%s: %s", path, strerror(errno)), rc;
	return 0;
}

static int open_unix(const struct runner_listen_addr *a, struct halo_err *e)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	mode_t old;
	int fd, rc;

	if ((rc = clear_stale(a->path, e)) < 0)
		return rc;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", a->path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return rc = -errno, halo_err_set(e, "unix:%s: %s", a->path, strerror(errno)), rc;
	/* bind creates the node with the umask applied: 0177 leaves 0600 at creation, so
	 * there is no moment at which another user could connect. (The process is single
	 * threaded here: the resolver threads start later.) */
	old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
	umask(old);
	if (rc == 0 && listen(fd, LISTEN_BACKLOG) < 0)
		rc = -errno;
	if (rc < 0) {
		halo_err_set(e, "unix:%s: %s", a->path, strerror(-rc));
		close(fd);
		return rc;
	}
	return fd;
}

int runner_listen_open(const struct runner_listen_addr *a, struct halo_err *e)
{
	return a->is_unix ? open_unix(a, e) : open_tcp(a, e);
}

int runner_listen_describe(int fd, char *out, size_t n, bool *local, struct halo_err *e)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int type = 0, acc = 0;
	socklen_t tl = sizeof(type), al = sizeof(acc);
	struct runner_listen_addr a = {0};

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		return halo_err_set(e, "fd %d: not a socket", fd), -ENOTSOCK;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_STREAM ||
	    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &al) < 0 || !acc)
		return halo_err_set(e, "fd %d: not a listening stream socket", fd), -EINVAL;
	if (ss.ss_family == AF_UNIX) {
		const struct sockaddr_un *u = (const void *)&ss;
		a.is_unix = true;
		if (sl > offsetof(struct sockaddr_un, sun_path) && u->sun_path[0])
			snprintf(a.path, sizeof(a.path), "%.*s",
				 (int)(sl - offsetof(struct sockaddr_un, sun_path)), u->sun_path);
		else
			snprintf(a.path, sizeof(a.path), "(unnamed)");
	} else if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)&ss;
		a.family = AF_INET;
		memcpy(a.addr, &s->sin_addr, 4);
		a.port = ntohs(s->sin_port);
	} else if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)&ss;
		a.family = AF_INET6;
		memcpy(a.addr, &s->sin6_addr, 16);
		a.port = ntohs(s->sin6_port);
	} else {
		return halo_err_set(e, "fd %d: address family %d", fd, (int)ss.ss_family), -EINVAL;
	}
	runner_listen_text(&a, out, n);
	*local = a.is_unix || runner_addr_loopback(a.family, a.addr);
	return 0;
}
