/* `halo-run proxy`'s listeners: the address syntax, the sockets (TCP, or a unix
 * socket made 0600), systemd's LISTEN_FDS, and the client token. The parsers read
 * outside input (flags, the environment, a file) and are table-tested in
 * tests/unit/test_proxy_cmd.c. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "runner/proxy_cmd.h"

bool runner_addr_loopback(int family, const uint8_t *a)
{
	static const uint8_t v6lo[16] = {[15] = 1};
	static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};

	if (family == AF_INET)
		return a[0] == 127;
	if (family != AF_INET6)
		return false;
	return memcmp(a, v6lo, 16) == 0 || (memcmp(a, mapped, 12) == 0 && a[12] == 127);
}

/* Decimal, 1..5 digits, no sign, no leading zero (but "0"), at most 65535. */
static int parse_port(const char *s, unsigned *port)
{
	unsigned long v = 0;
	size_t n = strlen(s);

	if (n == 0 || n > 5 || (n > 1 && s[0] == '0'))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > 65535)
		return -EINVAL;
	*port = (unsigned)v;
	return 0;
}

static int parse_unix(const char *path, struct runner_listen_addr *out, struct halo_err *e)
{
	size_t n = strlen(path);

	if (path[0] != '/')
		return halo_err_set(e, "unix:%s: the socket path must be absolute", path), -EINVAL;
	if (n >= sizeof(out->path))
		return halo_err_set(e, "unix socket path longer than %zu bytes",
				    sizeof(out->path) - 1),
		       -EINVAL;
	if (path[n - 1] == '/')
		return halo_err_set(e, "unix:%s: names a directory, not a socket", path), -EINVAL;
	out->is_unix = true;
	memcpy(out->path, path, n + 1);
	return 0;
}

/* The host part: a canonical dotted quad (inet_ntop gives back the same text: no
 * leading zeros, no short forms), a bracketed IPv6 literal, or "localhost". */
static int parse_host(const char *h, size_t hl, struct runner_listen_addr *out)
{
	char buf[INET6_ADDRSTRLEN + 2], back[INET6_ADDRSTRLEN];

	if (hl == 0 || hl >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, h, hl);
	buf[hl] = '\0';
	if (strcmp(buf, "localhost") == 0)
		snprintf(buf, sizeof(buf), "127.0.0.1");
	if (buf[0] == '[') {
		if (hl < 3 || buf[hl - 1] != ']')
			return -EINVAL;
		buf[hl - 1] = '\0';
		out->family = AF_INET6;
		return inet_pton(AF_INET6, buf + 1, out->addr) == 1 && !strchr(buf, '%') ? 0
											 : -EINVAL;
	}
	out->family = AF_INET;
	if (inet_pton(AF_INET, buf, out->addr) != 1 ||
	    !inet_ntop(AF_INET, out->addr, back, sizeof(back)) || strcmp(back, buf) != 0)
		return -EINVAL;
	return 0;
}

int runner_listen_parse(const char *spec, struct runner_listen_addr *out, struct halo_err *e)
{
	const char *colon;

	memset(out, 0, sizeof(*out));
	if (!spec || !*spec)
		return halo_err_set(e, "an empty listen address"), -EINVAL;
	if (strncmp(spec, "unix:", 5) == 0)
		return parse_unix(spec + 5, out, e);
	colon = strrchr(spec, ':');
	if (!colon) { /* a bare port: loopback */
		out->family = AF_INET;
		out->addr[0] = 127;
		out->addr[3] = 1;
		out->loopback = true;
		if (parse_port(spec, &out->port) < 0)
			return halo_err_set(e,
					    "%.80s: not a port (0..65535) nor ADDR:PORT nor "
					    "unix:PATH",
					    spec),
			       -EINVAL;
		return 0;
	}
	if (parse_port(colon + 1, &out->port) < 0)
		return halo_err_set(e, "%.80s: the port must be a number 0..65535", spec), -EINVAL;
	if (parse_host(spec, (size_t)(colon - spec), out) < 0)
		return halo_err_set(e,
				    "%.80s: the address must be an IPv4 address, [IPv6] or "
				    "localhost (names are not resolved)",
				    spec),
		       -EINVAL;
	out->loopback = runner_addr_loopback(out->family, out->addr);
	return 0;
}

void runner_listen_text(const struct runner_listen_addr *a, char *out, size_t n)
{
	char t[INET6_ADDRSTRLEN];

	if (a->is_unix) {
		snprintf(out, n, "unix:%s", a->path);
		return;
	}
	inet_ntop(a->family, a->addr, t, sizeof(t));
	snprintf(out, n, a->family == AF_INET6 ? "[%s]:%u" : "%s:%u", t, a->port);
}

/* ------------------------------------------------------------ LISTEN_FDS */

static int parse_uint(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (!s || !*s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return errno || *end || *v > max ? -EINVAL : 0;
}

int runner_listen_fds_parse(const char *pid_s, const char *fds_s, pid_t self, int max, int *n,
			    struct halo_err *e)
{
	unsigned long pid, fds;

	*n = 0;
	if (!pid_s && !fds_s)
		return 0;
	if (parse_uint(pid_s, 0x7fffffffUL, &pid) < 0 || pid == 0)
		return halo_err_set(e, "LISTEN_PID: not a process id"), -EINVAL;
	if ((pid_t)pid != self)
		return 0; /* meant for another process (sd_listen_fds does the same) */
	if (parse_uint(fds_s, 0x7fffffffUL, &fds) < 0 || fds == 0)
		return halo_err_set(e, "LISTEN_FDS: not a count of descriptors"), -EINVAL;
	if (fds > (unsigned long)max)
		return halo_err_set(e, "LISTEN_FDS: %lu sockets, at most %d", fds, max), -EINVAL;
	*n = (int)fds;
	return 0;
}

bool runner_listen_fd_is_socks(const char *names, int i)
{
	const char *p = names;

	for (; p && i > 0; i--) {
		p = strchr(p, ':');
		if (p)
			p++;
	}
	if (!p)
		return false;
	size_t len = strcspn(p, ":");
	return (len == 5 && strncmp(p, "socks", 5) == 0) ||
	       (len == 6 && strncmp(p, "socks5", 6) == 0);
}

/* ------------------------------------------------------------ the token */

int runner_token_check(const char *raw, size_t len, char *out, size_t n, struct halo_err *e)
{
	if (len && raw[len - 1] == '\n')
		len--;
	if (len && raw[len - 1] == '\r')
		len--;
	if (len == 0)
		return halo_err_set(e, "the token is empty"), -EINVAL;
	if (len > RUNNER_PROXY_TOKEN_MAX || len >= n)
		return halo_err_set(e, "the token is longer than %d bytes", RUNNER_PROXY_TOKEN_MAX),
		       -EINVAL;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)raw[i] <= 0x20 || (unsigned char)raw[i] >= 0x7f)
			return halo_err_set(e,
					    "the token holds a byte that is not visible ASCII "
					    "(at offset %zu); spaces, tabs and inner newlines "
					    "are refused",
					    i),
			       -EINVAL;
	memcpy(out, raw, len);
	out[len] = '\0';
	return 0;
}

int runner_token_read(const char *file, const char *env_name, char *out, size_t n,
		      struct halo_err *e)
{
	char buf[RUNNER_PROXY_TOKEN_MAX + 8];
	struct halo_err why = {{0}};
	struct stat st;
	ssize_t got;
	int fd, rc;

	if (env_name) {
		const char *v = getenv(env_name);
		if (!v)
			return halo_err_set(e, "--token-env %s: not set", env_name), -ENOENT;
		if ((rc = runner_token_check(v, strlen(v), out, n, &why)) < 0)
			halo_err_set(e, "--token-env %s: %s", env_name, why.msg);
		return rc;
	}
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return rc = -errno, halo_err_set(e, "--token-file %s: %s", file, strerror(errno)),
		       rc;
	if (fstat(fd, &st) == 0 && (st.st_mode & 0044))
		fprintf(stderr,
			"halo-run proxy: warning: --token-file %s is readable by other users "
			"(chmod 600 it)\n",
			file);
	got = read(fd, buf, sizeof(buf));
	close(fd);
	if (got < 0)
		return halo_err_set(e, "--token-file %s: %s", file, strerror(errno)), -EIO;
	if ((rc = runner_token_check(buf, (size_t)got, out, n, &why)) < 0)
		halo_err_set(e, "--token-file %s: %s", file, why.msg);
	explicit_bzero(buf, sizeof(buf));
	return rc;
}
