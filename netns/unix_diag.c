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
#include <stdlib.h>
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

/* The bound file of one message of the dump, as dev << 32 | ino; false when none. */
static bool bound_file(const struct nlmsghdr *h, uint64_t *key)
{
	const struct unix_diag_msg *m = NLMSG_DATA(h);
	int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*m));

	if (len < 0)
		return false;
	for (const struct rtattr *a = (const void *)(m + 1); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		struct unix_diag_vfs v;

		if (a->rta_type != UNIX_DIAG_VFS || RTA_PAYLOAD(a) < sizeof(v))
			continue;
		memcpy(&v, RTA_DATA(a), sizeof(v));
		*key = (uint64_t)v.udiag_vfs_dev << 32 | v.udiag_vfs_ino;
		return true;
	}
	return false;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int add_key(struct netns_unix_files *f, size_t *cap, uint64_t key)
{
	if (f->n == *cap) {
		size_t c = *cap ? 2 * *cap : 256;
		uint64_t *v;
		if (c > NETNS_UNIX_FILES_MAX || !(v = realloc(f->v, c * sizeof(*v))))
			return -E2BIG;
		f->v = v;
		*cap = c;
	}
	f->v[f->n++] = key;
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int netns_unix_files(int fd, struct netns_unix_files *f, int budget_ms)
{
	static uint32_t seq;
	char buf[32768] __attribute__((aligned(4)));
	int64_t end = now_ms() + budget_ms;
	size_t cap = 0;
	int rc;

	f->v = NULL;
	f->n = 0;
	if ((rc = ask(fd, ++seq)) < 0)
		return rc;
	/* Read to the end (a dump left half-read is drained by the next ask), within the
	 * time given: a command that holds a million sockets delays nobody for long. */
	while (now_ms() < end) {
		ssize_t got = recv(fd, buf, sizeof(buf), 0);
		int left = (int)got;

		if (got <= 0) {
			rc = got == 0 ? -EPROTO : -errno;
			break;
		}
		for (struct nlmsghdr *h = (void *)buf; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
			uint64_t key;
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE) {
				if (f->n)
					qsort(f->v, f->n, sizeof(*f->v), cmp_u64);
				return 0;
			}
			if (h->nlmsg_type == NLMSG_ERROR)
				rc = -EPROTO;
			else if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY && bound_file(h, &key))
				rc = add_key(f, &cap, key);
			if (rc < 0)
				goto fail;
		}
	}
	if (rc == 0)
		rc = -ETIMEDOUT;
fail:
	netns_unix_files_free(f);
	return rc;
}

bool netns_unix_files_has(const struct netns_unix_files *f, unsigned major, unsigned minor,
			  uint64_t ino)
{
	/* The kernel's own device number (major << 20 | minor), and the inode cut to 32
	 * bits: a larger one cannot be told apart from another, and is not claimed. */
	uint64_t key = (uint64_t)(major << 20 | (minor & 0xfffff)) << 32 | (ino & 0xffffffffu);

	if (ino > UINT32_MAX || major >= 4096 || minor > 0xfffff || !f->n)
		return false;
	return bsearch(&key, f->v, f->n, sizeof(*f->v), cmp_u64) != NULL;
}

void netns_unix_files_free(struct netns_unix_files *f)
{
	free(f->v);
	f->v = NULL;
	f->n = 0;
}
