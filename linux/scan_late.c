/* The walk's findings, from the supervisor to the sandbox's init. The supervisor walks
 * the workspace after the clone, while init builds its namespaces and mounts; init
 * needs the lists only for the last mount steps (guards and masks) and reads them
 * there. One message on a stream socket (send with MSG_NOSIGNAL: a child that died
 * must not take the supervisor with it): a header, then the masked, the guarded, the
 * pinned and the missing paths, each NUL-terminated. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "linux/scan_int.h"

#define STEP	   "workspace scan"
#define LATE_MAGIC 0x68616c6fU		/* "halo" */
#define LATE_MAX   (256U * 1024 * 1024) /* sanity bound on the paths' bytes */

struct late_header {
	uint32_t magic;
	uint32_t n_masked;
	uint32_t n_guarded;
	uint32_t n_pinned;
	uint32_t n_missing;
	uint32_t bytes; /* of the paths that follow */
};

static size_t list_bytes(const struct linux_paths *p)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n; i++)
		n += strlen(p->v[i]) + 1;
	return n;
}

static char *put_list(char *o, const struct linux_paths *p)
{
	for (size_t i = 0; i < p->n; i++) {
		size_t len = strlen(p->v[i]) + 1;
		memcpy(o, p->v[i], len);
		o += len;
	}
	return o;
}

void linux_scan_send(const struct linux_scan *s, int fd)
{
	size_t bytes = list_bytes(&s->masked) + list_bytes(&s->guarded) + list_bytes(&s->pinned) +
		       list_bytes(&s->missing);
	struct late_header h = {LATE_MAGIC,
				(uint32_t)s->masked.n,
				(uint32_t)s->guarded.n,
				(uint32_t)s->pinned.n,
				(uint32_t)s->missing.n,
				(uint32_t)bytes};
	char *buf, *end;

	if (bytes > LATE_MAX || !(buf = malloc(sizeof(h) + bytes)))
		return; /* the child reads EOF and stops: never a partial layout */
	memcpy(buf, &h, sizeof(h));
	end = put_list(buf + sizeof(h), &s->masked);
	end = put_list(put_list(put_list(end, &s->guarded), &s->pinned), &s->missing);
	for (char *p = buf; p < end;) {
		ssize_t n = send(fd, p, (size_t)(end - p), MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		p += n;
	}
	free(buf);
}

static void read_all_or_die(int fd, void *buf, size_t len, int rfd)
{
	for (char *p = buf; len > 0;) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		/* EOF: the supervisor refused the launch (it says why) or died. */
		if (n <= 0)
			linux_die(rfd, STEP, n < 0 ? errno : EPIPE, "receive the scan's findings");
		p += n;
		len -= (size_t)n;
	}
}

/* n NUL-terminated paths from *p (within end) into list. */
static void take_list_or_die(char **p, const char *end, uint32_t n, struct linux_paths *list,
			     int rfd)
{
	for (uint32_t i = 0; i < n; i++) {
		const char *nul = memchr(*p, '\0', (size_t)(end - *p));
		if (!nul || (*p)[0] != '/')
			linux_die(rfd, STEP, EPROTO, "malformed findings from the supervisor");
		linux_paths_add(list, *p);
		*p = (char *)nul + 1;
	}
}

const struct linux_scan *linux_scan_receive_or_die(const struct linux_scan *s,
						   struct linux_scan *late, int rfd)
{
	struct late_header h;
	char *buf, *p;

	if (!s->late)
		return s;
	close(s->late_fd[1]);
	read_all_or_die(s->late_fd[0], &h, sizeof(h), rfd);
	if (h.magic != LATE_MAGIC || h.bytes > LATE_MAX)
		linux_die(rfd, STEP, EPROTO, "malformed findings from the supervisor");
	buf = malloc(h.bytes ? h.bytes : 1);
	if (!buf)
		linux_die(rfd, STEP, ENOMEM, "receive the scan's findings");
	read_all_or_die(s->late_fd[0], buf, h.bytes, rfd);
	close(s->late_fd[0]);
	memset(late, 0, sizeof(*late));
	p = buf;
	take_list_or_die(&p, buf + h.bytes, h.n_masked, &late->masked, rfd);
	take_list_or_die(&p, buf + h.bytes, h.n_guarded, &late->guarded, rfd);
	take_list_or_die(&p, buf + h.bytes, h.n_pinned, &late->pinned, rfd);
	take_list_or_die(&p, buf + h.bytes, h.n_missing, &late->missing, rfd);
	if (p != buf + h.bytes)
		linux_die(rfd, STEP, EPROTO, "malformed findings from the supervisor");
	free(buf);
	/* Known before the clone; shared, never freed here (init execs or exits). */
	late->writable = s->writable;
	late->readonly_extra = s->readonly_extra;
	late->carved = s->carved;
	late->carved_src = s->carved_src;
	late->sanitized = s->sanitized;
	late->sanitized_data = s->sanitized_data;
	late->sanitized_len = s->sanitized_len;
	late->sockets_open = s->sockets_open;
	return late;
}
