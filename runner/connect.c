/* `halo-run connect HOST PORT`: OpenSSH's ProxyCommand inside the sandbox (the
 * sandbox's /etc/ssh/ssh_config names it: linux/ssh_config.c). It asks the sandbox's
 * own proxy (127.0.0.1:3128) for CONNECT HOST:PORT and then splices stdin/stdout with
 * the tunnel, so ssh and git over ssh reach an allowed host:22 with the user's own
 * keys (ssh-agent via sandbox.unixSockets) and options. A refusal is printed as
 * halo-run's reason on stderr, which ssh shows to the user, and exits 255 like ssh.
 * The decision is the proxy's, as for every other client: this is only a client. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runner/runner_int.h"

#define CONNECT_HEAD_MAX 8192
#define CONNECT_FAIL	 255 /* what ssh exits with when it cannot connect */

static int dial_proxy(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = htons(POLICY_PROXY_HTTP_PORT),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd >= 0 && connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read the proxy's head byte by byte: nothing after it may be taken from the tunnel
 * (the server speaks first in SSH). Returns the head length or -1. */
static int read_head(int fd, char *buf, size_t cap)
{
	size_t n = 0;

	while (n + 1 < cap) {
		ssize_t r = read(fd, buf + n, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		n++;
		buf[n] = '\0';
		if (n >= 4 && memcmp(buf + n - 4, "\r\n\r\n", 4) == 0)
			return (int)n;
	}
	return -1;
}

/* The value of field `name` in head (up to the line's end), or NULL. */
static const char *field(const char *head, const char *name, char *out, size_t cap)
{
	size_t nl = strlen(name);

	for (const char *l = strstr(head, "\r\n"); l && l[2]; l = strstr(l + 2, "\r\n")) {
		const char *s = l + 2;
		if (strncasecmp(s, name, nl) == 0 && s[nl] == ':') {
			size_t k = 0;
			for (s += nl + 1; *s == ' '; s++)
				;
			while (s[k] && s[k] != '\r' && k + 1 < cap) {
				out[k] = s[k] >= 0x20 && s[k] < 0x7f ? s[k] : '?';
				k++;
			}
			out[k] = '\0';
			return out;
		}
	}
	return NULL;
}

/* A denial, told in ssh's own protocol on stdout: our identification line and a
 * disconnect naming the rule, which OpenSSH prints once as "Received disconnect from
 * ...: halo-run: egress denied: HOST:PORT (RULE)" instead of kex_exchange_identification
 * failing on a closed pipe. */
static bool tell_ssh(const char *why)
{
	char buf[1024];
	int n = proxy_ssh_refusal(why, buf, sizeof(buf));
	struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};

	if (n <= 0 || write_all(STDOUT_FILENO, buf, (size_t)n) < 0)
		return false;
	/* Read what ssh sends (its identification, its key exchange) until it hangs up
	 * on our disconnect, within 5 s: leaving first would fail its writes (EPIPE:
	 * "Broken pipe") before it reads the reason. */
	for (int i = 0; i < 50 && poll(&p, 1, 100) >= 0; i++)
		if ((p.revents & (POLLIN | POLLHUP | POLLERR)) &&
		    read(STDIN_FILENO, buf, sizeof(buf)) <= 0)
			break;
	return true;
}

static void say_refusal(const char *target, const char *head)
{
	char v[600], why[1000];
	int status = (int)strtol(head + 9, NULL, 10);

	/* X-Halo-Deny is "HOST (RULE)": said with the port ssh asked for. */
	if (field(head, "X-Halo-Deny", v, sizeof(v))) {
		snprintf(why, sizeof(why), "halo-run: egress denied: %s %s", target,
			 strstr(v, " (") ? strstr(v, " (") + 1 : v);
		if (!tell_ssh(why))
			fprintf(stderr, "%s\n", why);
	} else if (field(head, "X-Halo-Error", v, sizeof(v)))
		fprintf(stderr, "halo-run: egress error: %s: %s (%d)\n", target, v, status);
	else
		fprintf(stderr, "halo-run: egress proxy refused %s (%d)\n", target, status);
}

/* stdin → tunnel, tunnel → stdout, each half-closed on its EOF; ends when the tunnel
 * has nothing more to say. */
static int splice_stdio(int fd)
{
	struct pollfd p[2] = {{.fd = STDIN_FILENO, .events = POLLIN}, {.fd = fd, .events = POLLIN}};
	char buf[64 * 1024];

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return CONNECT_FAIL;
		}
		for (int i = 0; i < 2; i++) {
			ssize_t r;
			if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = read(p[i].fd, buf, sizeof(buf));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0 && i == 1)
				return 0; /* the server is done */
			if (r <= 0) {	  /* our client is done sending */
				shutdown(fd, SHUT_WR);
				p[0].fd = -1;
				continue;
			}
			if (write_all(i == 0 ? fd : STDOUT_FILENO, buf, (size_t)r) < 0)
				return i == 0 ? CONNECT_FAIL : 0;
		}
	}
}

int runner_cmd_connect(const struct runner_opts *o)
{
	char req[600], head[CONNECT_HEAD_MAX], target[300];
	const char *host, *port;
	int fd, n;

	if (o->n_rest != 2) {
		fprintf(stderr, "halo-run: connect takes HOST PORT (an ssh ProxyCommand: "
				"halo-run connect %%h %%p)\n");
		return HALO_EXIT_SETUP;
	}
	host = o->rest[0];
	port = o->rest[1];
	if (strlen(host) > 255 || strspn(port, "0123456789") != strlen(port) || !*port ||
	    strlen(port) > 5 || strpbrk(host, " \r\n\t")) {
		fprintf(stderr, "halo-run: connect: not a host and port: %.64s %.8s\n", host, port);
		return HALO_EXIT_SETUP;
	}
	snprintf(target, sizeof(target), "%s%s%s:%s", strchr(host, ':') ? "[" : "", host,
		 strchr(host, ':') ? "]" : "", port);
	fd = dial_proxy();
	if (fd < 0) {
		fprintf(stderr,
			"halo-run: connect %s: no halo-run proxy on 127.0.0.1:%d (is this inside "
			"halo-run's sandbox?)\n",
			target, POLICY_PROXY_HTTP_PORT);
		return CONNECT_FAIL;
	}
	n = snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target);
	if (write_all(fd, req, (size_t)n) < 0 || read_head(fd, head, sizeof(head)) < 12 ||
	    strncmp(head, "HTTP/1.", 7) != 0) {
		fprintf(stderr, "halo-run: connect %s: the proxy gave no answer\n", target);
		close(fd);
		return CONNECT_FAIL;
	}
	if (head[9] != '2') {
		say_refusal(target, head);
		close(fd);
		return CONNECT_FAIL;
	}
	n = splice_stdio(fd);
	close(fd);
	return n;
}
