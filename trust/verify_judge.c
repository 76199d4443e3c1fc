/* Judging what `halo-run verify`'s probes answered: each row by its check, with the
 * host's own evidence where the sandbox's answer alone could mislead (a file "created"
 * may exist only in the sandbox's private /tmp; a datagram "sent" may never arrive;
 * a refused connection must not have reached our listener either). What the probes
 * left on the host is removed here. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trust/verify_int.h"

static bool refused(const char *got)
{
	return strncmp(got, "errno=", 6) == 0 || strncmp(got, "killed=", 7) == 0;
}

/* Did anything reach one of our sockets? Connections are accepted and closed. */
static bool arrived(int fd)
{
	socklen_t len = sizeof(int);
	int type = 0, c;
	char b[64];

	if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0)
		return false;
	if (type == SOCK_DGRAM)
		return recv(fd, b, sizeof(b), MSG_DONTWAIT) >= 0;
	c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (c < 0)
		return false;
	close(c);
	return true;
}

static bool on_host(const char *path)
{
	struct stat st;

	if (!path || lstat(path, &st) < 0)
		return false;
	unlink(path);
	return true;
}

static enum vres judge_one(struct vrow *r)
{
	const char *val = strncmp(r->got, "value=", 6) == 0 ? r->got + 6 : NULL;

	if (val && strncmp(val, "inconclusive", 12) == 0)
		return R_SKIP;
	switch (r->check) {
	case V_REFUSED:
		return refused(r->got) && !arrived(r->host_fd) ? R_PASS : R_FAIL;
	case V_EXACT:
		return strcmp(r->got, r->want) == 0 ? R_PASS : R_FAIL;
	case V_VALUE:
		return val && strcmp(val, r->want) == 0 ? R_PASS : R_FAIL;
	case V_AT_MOST:
		return val && strcmp(val, "unlimited") != 0 && strtoll(val, NULL, 10) <= r->limit
			   ? R_PASS
			   : R_FAIL;
	case V_NOT_ON_HOST:
		if (on_host(r->host_path))
			return R_FAIL;
		return refused(r->got) || strcmp(r->got, "ok") == 0 ? R_PASS : R_FAIL;
	case V_ON_HOST:
		return strcmp(r->got, "ok") == 0 && on_host(r->host_path) ? R_PASS : R_FAIL;
	case V_NOTHING_ARRIVED:
		return r->got[0] && !arrived(r->host_fd) ? R_PASS : R_FAIL;
	case V_SKIP:
		return R_SKIP;
	}
	return R_FAIL;
}

/* The raw answer in words, for the table. */
static void wording(struct vrow *r)
{
	char raw[sizeof(r->got)];

	snprintf(raw, sizeof(raw), "%s", r->got);
	if (r->check == V_SKIP)
		snprintf(r->got, sizeof(r->got), "-");
	else if (!raw[0])
		snprintf(r->got, sizeof(r->got), "(no result)");
	else if (strncmp(raw, "errno=", 6) == 0)
		snprintf(r->got, sizeof(r->got), "%s", raw + 6);
	else if (strncmp(raw, "killed=", 7) == 0)
		snprintf(r->got, sizeof(r->got), "killed (%.32s)", raw + 7);
	else if (strncmp(raw, "value=", 6) == 0)
		snprintf(r->got, sizeof(r->got), "%s", raw + 6);
	else if (strcmp(raw, "ok") == 0)
		snprintf(r->got, sizeof(r->got), "succeeded");
	if (r->res == R_FAIL && r->check == V_NOT_ON_HOST && strcmp(raw, "ok") == 0)
		snprintf(r->got, sizeof(r->got), "created on the host");
	else if (r->res == R_PASS && r->check == V_NOT_ON_HOST && strcmp(raw, "ok") == 0)
		snprintf(r->got, sizeof(r->got), "only in the sandbox");
	else if (r->res == R_FAIL && r->check == V_NOTHING_ARRIVED && raw[0])
		snprintf(r->got, sizeof(r->got), "arrived on the host");
	else if (r->res == R_PASS && r->check == V_NOTHING_ARRIVED && strcmp(raw, "ok") == 0)
		snprintf(r->got, sizeof(r->got), "sent, never arrived");
}

void verify_judge_rows(struct verify *v, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		v->rows[i].res = judge_one(&v->rows[i]);
		wording(&v->rows[i]);
	}
}
