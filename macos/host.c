/* What the launcher takes from the host: the sandbox-exec binary, halo-run's own
 * path, the temp directory, a loopback listener, a secret, and fd hygiene. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macos/macos_int.h"

#ifdef __APPLE__
/* From <mach-o/dyld.h>; declared here so that macos/ needs no Apple header. */
extern int _NSGetExecutablePath(char *buf, uint32_t *bufsize);
#endif

const char *macos_sandbox_exec_path(void)
{
#ifdef HALO_SANDBOX_EXEC_OVERRIDE
	/* The portable test build only (see macos_int.h): a fake sandbox-exec. */
	const char *t = getenv("HALO_TEST_SANDBOX_EXEC");
	if (t && t[0] == '/')
		return t;
#endif
	return MACOS_SANDBOX_EXEC;
}

int macos_self_exe(char *out, size_t n)
{
	char raw[PATH_MAX], *real;

#ifdef __APPLE__
	uint32_t size = sizeof(raw);
	if (_NSGetExecutablePath(raw, &size) != 0)
		return -ENAMETOOLONG;
#else
	ssize_t k = readlink("/proc/self/exe", raw, sizeof(raw) - 1);
	if (k <= 0)
		return -errno;
	raw[k] = '\0';
#endif
	real = realpath(raw, NULL);
	if (!real)
		return -errno;
	if (strlen(real) >= n) {
		free(real);
		return -ENAMETOOLONG;
	}
	strcpy(out, real);
	free(real);
	return 0;
}

int macos_tmp_base(char *out, size_t n)
{
	const char *t = getenv("TMPDIR");
	struct stat st;
	char *real;

	if (!t || t[0] != '/' || stat(t, &st) < 0 || !S_ISDIR(st.st_mode))
		t = "/tmp";
	real = realpath(t, NULL);
	if (!real)
		return -errno;
	if (strlen(real) >= n) {
		free(real);
		return -ENAMETOOLONG;
	}
	strcpy(out, real);
	free(real);
	return 0;
}

int macos_listen_loopback(int *fd, unsigned *port, struct halo_err *e)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM, 0);

	*fd = -1;
	if (s < 0) {
		halo_err_set(e, "proxy listener: socket: %s", strerror(errno));
		return -errno;
	}
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = 0; /* ephemeral: no fixed port another session could take over */
	if (fcntl(s, F_SETFD, FD_CLOEXEC) < 0 ||
	    fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK) < 0 ||
	    bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 128) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &len) < 0) {
		int err = errno;
		close(s);
		halo_err_set(e, "proxy listener on 127.0.0.1: %s", strerror(err));
		return -err;
	}
	*fd = s;
	*port = ntohs(a.sin_port);
	return 0;
}

int macos_secret_new(char *out, size_t n, struct halo_err *e)
{
	unsigned char raw[MACOS_SECRET_HEX / 2];
	size_t got = 0;
	int fd;

	if (n < MACOS_SECRET_HEX + 1)
		return -ENOSPC;
	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		halo_err_set(e, "proxy secret: /dev/urandom: %s", strerror(errno));
		return -errno;
	}
	while (got < sizeof(raw)) {
		ssize_t r = read(fd, raw + got, sizeof(raw) - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			close(fd);
			halo_err_set(e, "proxy secret: short read from /dev/urandom");
			return -EIO;
		}
		got += (size_t)r;
	}
	close(fd);
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

static bool kept(int fd, const int *keep, size_t n)
{
	if (fd <= 2)
		return true;
	for (size_t i = 0; i < n; i++)
		if (keep[i] == fd)
			return true;
	return false;
}

/* Seatbelt checks at open(): an inherited fd would bypass the profile. /dev/fd lists
 * the open fds on both Linux and macOS; the list is taken first, then closed, since
 * closing while reading the directory would close the directory's own fd. */
void macos_close_fds_except(const int *keep, size_t n)
{
	int fds[1024];
	size_t k = 0;
	bool more = false;
	DIR *d = opendir("/dev/fd");

	if (!d) {
		long max = sysconf(_SC_OPEN_MAX);
		if (max < 0 || max > 65536)
			max = 65536;
		for (int fd = 3; fd < max; fd++)
			if (!kept(fd, keep, n))
				close(fd);
		return;
	}
	for (struct dirent *de; (de = readdir(d));) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		if (*end || end == de->d_name || fd == dirfd(d) || kept((int)fd, keep, n))
			continue;
		if (k < sizeof(fds) / sizeof(fds[0]))
			fds[k++] = (int)fd;
		else
			more = true;
	}
	closedir(d);
	for (size_t i = 0; i < k; i++)
		close(fds[i]);
	if (more)
		macos_close_fds_except(keep, n);
}

void macos_report(int fd, int kind, int err, const char *fmt, ...)
{
	struct macos_report r;
	va_list ap;

	memset(&r, 0, sizeof(r));
	r.kind = kind;
	r.err = err;
	va_start(ap, fmt);
	vsnprintf(r.msg, sizeof(r.msg), fmt, ap);
	va_end(ap);
	(void)!write(fd, &r, sizeof(r));
}
