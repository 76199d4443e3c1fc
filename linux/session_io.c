/* Frames of the session protocol over a stream socket: the reader keeps what has
 * come (bytes and descriptors) until a frame is whole; the sender waits a bounded
 * time for room, so that a peer that stops reading cannot hold the supervisor. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "linux/session_proto.h"

void session_conn_init(struct session_conn *c, int fd)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	for (size_t i = 0; i < SESSION_MAX_FDS; i++)
		c->fds[i] = -1;
}

/* Descriptors that came with the bytes: kept up to SESSION_MAX_FDS, the rest closed
 * (and the peer dropped: no frame of ours carries more). */
static int take_rights(struct session_conn *c, struct msghdr *mh)
{
	int rc = (mh->msg_flags & MSG_CTRUNC) ? -EPROTO : 0;

	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int *fds = (int *)CMSG_DATA(cm);
		for (size_t i = 0; i < n; i++) {
			if (c->n_fds < SESSION_MAX_FDS)
				c->fds[c->n_fds++] = fds[i];
			else {
				close(fds[i]);
				rc = -EPROTO;
			}
		}
	}
	return rc;
}

int session_conn_read(struct session_conn *c)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * (SESSION_MAX_FDS + 1))];
		struct cmsghdr align;
	} u;
	struct iovec iov;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;
	int rc;

	if (c->cap - c->len < 65536) {
		size_t cap = c->cap ? c->cap * 2 : 65536;
		if (cap > SESSION_FRAME_MAX + 4 + 65536 * 2)
			return -EMSGSIZE; /* a frame can never be this long: frame_len says so */
		unsigned char *g = realloc(c->buf, cap);
		if (!g)
			return -ENOMEM;
		c->buf = g;
		c->cap = cap;
	}
	iov.iov_base = c->buf + c->len;
	iov.iov_len = c->cap - c->len;
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof(u.buf);
	n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
	rc = take_rights(c, &mh);
	if (rc < 0)
		return rc;
	if (n == 0)
		return -EPIPE;
	c->len += (size_t)n;
	return 1;
}

int session_conn_next(struct session_conn *c, struct session_msg *m, char *why, size_t why_n)
{
	size_t flen;
	int rc = session_frame_len(c->buf, c->len, &flen);
	char *copy;

	memset(m, 0, sizeof(*m));
	if (rc < 0) {
		snprintf(why, why_n, "frame length out of range");
		return rc;
	}
	if (rc == 0)
		return 0;
	if (!(copy = malloc(flen - 4))) {
		snprintf(why, why_n, "out of memory");
		return -ENOMEM;
	}
	memcpy(copy, c->buf + 4, flen - 4);
	memmove(c->buf, c->buf + flen, c->len - flen);
	c->len -= flen;
	rc = session_msg_parse(copy, flen - 4, m, why, why_n);
	if (rc < 0) {
		free(copy);
		return rc;
	}
	m->owned = copy;
	return 1;
}

size_t session_conn_take_fds(struct session_conn *c, int out[SESSION_MAX_FDS])
{
	size_t n = c->n_fds;

	for (size_t i = 0; i < SESSION_MAX_FDS; i++) {
		out[i] = i < n ? c->fds[i] : -1;
		c->fds[i] = -1;
	}
	c->n_fds = 0;
	return n;
}

void session_conn_release(struct session_conn *c)
{
	for (size_t i = 0; i < c->n_fds; i++)
		close(c->fds[i]);
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	session_conn_init(c, -1);
}

static int wait_room(int fd, int timeout_ms)
{
	struct pollfd p = {fd, POLLOUT, 0};
	int n;

	while ((n = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
		;
	if (n < 0)
		return -errno;
	return n == 0 ? -ETIMEDOUT : 0;
}

int session_send(int fd, const struct session_buf *b, const int *fds, size_t n_fds, int timeout_ms)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * SESSION_MAX_FDS)];
		struct cmsghdr align;
	} u;
	size_t off = 0;

	if (n_fds > SESSION_MAX_FDS)
		return -EINVAL;
	while (off < b->len) {
		struct iovec iov = {b->p + off, b->len - off};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
		ssize_t n;

		if (off == 0 && n_fds) { /* the descriptors ride on the first byte */
			memset(&u, 0, sizeof(u));
			mh.msg_control = u.buf;
			mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
			struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
			memcpy(CMSG_DATA(cm), fds, sizeof(int) * n_fds);
		}
		n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			int rc;
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return -errno;
			if ((rc = wait_room(fd, timeout_ms)) < 0)
				return rc;
			continue;
		}
		off += (size_t)n;
	}
	return 0;
}
