/* The scan's findings, from the supervisor to the sandbox's init. The supervisor
 * scans (the floor, its own state, carve-outs, host sockets) and walks the workspace
 * after the clone, while init builds its namespaces and mounts; init needs the lists
 * only for the last mount steps (pins, guards, carve-outs, masks) and reads them
 * there. One message on a stream socket (send with MSG_NOSIGNAL: a child that died
 * must not take the supervisor with it): a header, then the masked, guarded, pinned,
 * missing, read-only, carved (and their sources), sanitized, open-socket, deep and
 * prefix paths, each NUL-terminated, then each sanitized copy's bytes after its length. */
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
#define LATE_LISTS 12

struct late_header {
	uint32_t magic;
	uint32_t n[LATE_LISTS]; /* paths in each list, in late_lists' order */
	uint32_t bytes;		/* of the paths that follow */
	uint32_t data_bytes;	/* of the sanitized copies after them: length, bytes */
	uint32_t broker;	/* 1: the supervisor expects a creation broker (s->broker) */
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

/* The lists in the order they travel (carved_src pairs with carved). */
static struct linux_paths *late_list(struct linux_scan *s, size_t i)
{
	struct linux_paths *v[LATE_LISTS] = {
	    &s->masked,		&s->guarded,	  &s->pinned,	   &s->missing,
	    &s->readonly_extra, &s->carved,	  &s->carved_src,  &s->sanitized,
	    &s->sockets_open,	&s->missing_deep, &s->home_prefix, &s->home_guarded};
	return v[i];
}

static size_t data_bytes(const struct linux_scan *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->sanitized.n; i++)
		n += sizeof(uint32_t) + s->sanitized_len[i];
	return n;
}

void linux_scan_send(const struct linux_scan *s, int fd)
{
	struct linux_scan *w = (struct linux_scan *)s; /* late_list only reads through it */
	struct late_header h = {.magic = LATE_MAGIC};
	size_t bytes = 0, data = data_bytes(s);
	char *buf, *end;

	for (size_t i = 0; i < LATE_LISTS; i++) {
		h.n[i] = (uint32_t)late_list(w, i)->n;
		bytes += list_bytes(late_list(w, i));
	}
	if (bytes > LATE_MAX || data > LATE_MAX || !(buf = malloc(sizeof(h) + bytes + data)))
		return; /* the child reads EOF and stops: never a partial layout */
	h.bytes = (uint32_t)bytes;
	h.data_bytes = (uint32_t)data;
	h.broker = s->broker ? 1 : 0;
	memcpy(buf, &h, sizeof(h));
	end = buf + sizeof(h);
	for (size_t i = 0; i < LATE_LISTS; i++)
		end = put_list(end, late_list(w, i));
	for (size_t i = 0; i < s->sanitized.n; i++) {
		uint32_t len = (uint32_t)s->sanitized_len[i];
		memcpy(end, &len, sizeof(len));
		memcpy(end + sizeof(len), s->sanitized_data[i], len);
		end += sizeof(len) + len;
	}
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

/* The sanitized copies' bytes, one per sanitized path. */
static void take_data_or_die(const char *p, const char *end, struct linux_scan *late, int rfd)
{
	size_t n = late->sanitized.n;

	late->sanitized_data = calloc(n ? n : 1, sizeof(*late->sanitized_data));
	late->sanitized_len = calloc(n ? n : 1, sizeof(*late->sanitized_len));
	if (!late->sanitized_data || !late->sanitized_len)
		linux_die(rfd, STEP, ENOMEM, "receive the scan's findings");
	for (size_t i = 0; i < n; i++) {
		uint32_t len;
		if ((size_t)(end - p) < sizeof(len))
			linux_die(rfd, STEP, EPROTO, "malformed findings from the supervisor");
		memcpy(&len, p, sizeof(len));
		p += sizeof(len);
		if ((size_t)(end - p) < len || !(late->sanitized_data[i] = malloc(len ? len : 1)))
			linux_die(rfd, STEP, len > (size_t)(end - p) ? EPROTO : ENOMEM,
				  "receive the scan's sanitized copies");
		memcpy(late->sanitized_data[i], p, len);
		late->sanitized_len[i] = len;
		p += len;
	}
	if (p != end)
		linux_die(rfd, STEP, EPROTO, "malformed findings from the supervisor");
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
	if (h.magic != LATE_MAGIC || h.bytes > LATE_MAX || h.data_bytes > LATE_MAX ||
	    h.n[6] != h.n[5] || h.broker > 1)
		linux_die(rfd, STEP, EPROTO, "malformed findings from the supervisor");
	buf = malloc((size_t)h.bytes + h.data_bytes + 1);
	if (!buf)
		linux_die(rfd, STEP, ENOMEM, "receive the scan's findings");
	read_all_or_die(s->late_fd[0], buf, (size_t)h.bytes + h.data_bytes, rfd);
	close(s->late_fd[0]);
	memset(late, 0, sizeof(*late));
	p = buf;
	for (size_t i = 0; i < LATE_LISTS; i++)
		take_list_or_die(&p, buf + h.bytes, h.n[i], late_list(late, i), rfd);
	if (p != buf + h.bytes)
		linux_die(rfd, STEP, EPROTO, "malformed findings from the supervisor");
	take_data_or_die(p, p + h.data_bytes, late, rfd);
	free(buf);
	/* The writable trees, known before the clone: shared, never freed here (init
	 * execs or exits). */
	late->writable = s->writable;
	late->broker = h.broker != 0;
	return late;
}
