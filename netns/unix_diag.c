/* Which unix sockets are bound in a network namespace, by the file each is bound to.
 * A session's calls refuse a socket file that appeared in the workspace since the
 * session started (linux/session_scan.c: a host service's is reachable inside, a read-
 * only mount does not stop connect()); one bound by the session's own command (a dev
 * server's) is no way out, and refusing it ended the session's next calls. What tells
 * the two apart is the namespace a socket was bound in: the kernel's socket table
 * (sock_diag, UDIAG_SHOW_VFS) gives the device and inode of each bound file. Its
 * netlink socket is made inside the sandbox's namespace (init, before the deny table)
 * and handed to the supervisor with the listeners: it answers for that namespace
 * wherever it is used. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>

#include "netns/netns.h"

int netns_diag_open(void)
{
	struct timeval tv = {1, 0}; /* the dump is the kernel's: a stall is a bug */
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

/* A dump left half-read (a timeout) must not answer the next question: what is still
 * queued goes first, and each answer is told by its sequence number too. */
static int ask(int fd, uint32_t seq)
{
	char junk[4096];

	for (int i = 0; i < 10000 && recv(fd, junk, sizeof(junk), MSG_DONTWAIT) > 0; i++)
		;
	struct {
		struct nlmsghdr h;
		struct unix_diag_req r;
	} q;
	struct sockaddr_nl k = {.nl_family = AF_NETLINK};

	memset(&q, 0, sizeof(q));
	q.h.nlmsg_len = sizeof(q);
	q.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	q.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	q.h.nlmsg_seq = seq;
	q.r.sdiag_family = AF_UNIX;
	q.r.udiag_states = ~0u;
	q.r.udiag_show = UDIAG_SHOW_VFS;
	return sendto(fd, &q, sizeof(q), 0, (struct sockaddr *)&k, sizeof(k)) == sizeof(q) ? 0
											   : -errno;
}

/* One message of the dump: 1 when it is a socket bound to (dev, ino). */
static int matches(const struct nlmsghdr *h, uint32_t dev, uint32_t ino)
{
	const struct unix_diag_msg *m = NLMSG_DATA(h);
	int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*m));

	if (len < 0)
		return 0;
	for (const struct rtattr *a = (const void *)(m + 1); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		struct unix_diag_vfs v;

		if (a->rta_type != UNIX_DIAG_VFS || RTA_PAYLOAD(a) < sizeof(v))
			continue;
		memcpy(&v, RTA_DATA(a), sizeof(v));
		if (v.udiag_vfs_dev == dev && v.udiag_vfs_ino == ino)
			return 1;
	}
	return 0;
}

int netns_unix_bound(int fd, unsigned major, unsigned minor, uint64_t ino)
{
	/* The kernel's own device number (major << 20 | minor), and the inode cut to 32
	 * bits: a larger one cannot be told apart from another, and is not claimed. */
	uint32_t dev = (uint32_t)(major << 20 | (minor & 0xfffff));
	static uint32_t seq;
	char buf[32768] __attribute__((aligned(4)));
	int found = 0, rc;

	if (ino > UINT32_MAX || major >= 4096 || minor > 0xfffff)
		return 0;
	if ((rc = ask(fd, ++seq)) < 0)
		return rc;
	for (int round = 0; round < 100000; round++) { /* 32 KB each: millions of sockets */
		ssize_t got = recv(fd, buf, sizeof(buf), 0);
		int left = (int)got;

		if (got < 0)
			return errno == EINTR ? -EINTR : -errno;
		for (struct nlmsghdr *h = (void *)buf; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				return found;
			if (h->nlmsg_type == NLMSG_ERROR)
				return -EPROTO;
			if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY && !found)
				found = matches(h, dev, (uint32_t)ino);
		}
		if (got == 0)
			return -EPROTO;
	}
	return -E2BIG;
}
