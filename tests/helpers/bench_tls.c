/* TLS clients and origin for tests/bench/proxy's terminated-tunnel case (loopback only).
 *
 *   bench_tls origin CERT KEY
 *       an HTTPS/1.1 origin on 127.0.0.1:<ephemeral> ("port N" on stdout), keep-alive;
 *       "GET /N" answers N bytes of body; one thread per connection.
 *   bench_tls get PROXY_PORT HOST PORT CAFILE BYTES COUNT
 *       COUNT connections in turn, each: connect (to the proxy when PROXY_PORT > 0, then
 *       CONNECT HOST:PORT), TLS verified against CAFILE with HOST's name, GET /BYTES,
 *       the whole body read, close. Prints "mibps=M conns_per_s=C seconds=S".
 * Everything goes to and from 127.0.0.1. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#define CHUNK (256 * 1024)

static void die(const char *what)
{
	fprintf(stderr, "bench_tls: %s: %s\n", what, errno ? strerror(errno) : "failed");
	ERR_print_errors_fp(stderr);
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A head up to CRLFCRLF (byte by byte is fine: heads are tiny next to the bodies). */
static int read_head(SSL *s, char *buf, size_t cap)
{
	size_t n = 0;

	while (n + 1 < cap) {
		int r = SSL_read(s, buf + n, 1);
		if (r <= 0)
			return -1;
		n++;
		if (n >= 4 && memcmp(buf + n - 4, "\r\n\r\n", 4) == 0) {
			buf[n] = '\0';
			return (int)n;
		}
	}
	return -1;
}

static void *serve(void *arg)
{
	SSL *s = arg;
	static char zeros[CHUNK];
	char head[4096], resp[128];

	if (SSL_accept(s) == 1)
		while (read_head(s, head, sizeof(head)) > 0) {
			unsigned long long n = strtoull(head + 5, NULL, 10), left = n;
			int rl = snprintf(resp, sizeof(resp),
					  "HTTP/1.1 200 OK\r\nContent-Length: %llu\r\n\r\n", n);
			if (SSL_write(s, resp, rl) != rl)
				break;
			while (left) {
				int w = SSL_write(s, zeros, left < CHUNK ? (int)left : CHUNK);
				if (w <= 0)
					break;
				left -= (unsigned long long)w;
			}
			if (left)
				break;
		}
	SSL_shutdown(s);
	close(SSL_get_fd(s));
	SSL_free(s);
	return NULL;
}

static __attribute__((noreturn)) void origin(const char *cert, const char *key)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (!ctx || SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1)
		die("origin certificate");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 512) ||
	    getsockname(lfd, (struct sockaddr *)&a, &al))
		die("listen");
	printf("port %d\n", ntohs(a.sin_port));
	fflush(stdout);
	for (;;) {
		int fd = accept(lfd, NULL, NULL);
		pthread_t th;
		SSL *s;

		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		s = SSL_new(ctx);
		SSL_set_fd(s, fd);
		if (pthread_create(&th, NULL, serve, s) == 0)
			pthread_detach(th);
	}
}

static int dial(int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
		die("connect");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void via_proxy(int fd, const char *host, int port)
{
	char req[512], b[1024];
	size_t n = 0;
	int l = snprintf(req, sizeof(req), "CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n", host,
			 port, host, port);

	if (write(fd, req, (size_t)l) != l)
		die("CONNECT");
	while (n < sizeof(b) - 1 && (n < 4 || memcmp(b + n - 4, "\r\n\r\n", 4))) {
		if (read(fd, b + n, 1) != 1)
			die("CONNECT answer");
		n++;
	}
	if (strncmp(b, "HTTP/1.1 200", 12) != 0)
		die("CONNECT refused");
}

static unsigned long long one_get(SSL_CTX *ctx, int pport, const char *host, int port,
				  unsigned long long bytes)
{
	static char buf[CHUNK];
	char req[256], head[4096];
	int fd = dial(pport > 0 ? pport : port), l;
	unsigned long long got = 0;
	SSL *s = SSL_new(ctx);

	if (pport > 0)
		via_proxy(fd, host, port);
	SSL_set_fd(s, fd);
	SSL_set_tlsext_host_name(s, host);
	SSL_set1_host(s, host);
	if (SSL_connect(s) != 1)
		die("TLS handshake");
	l = snprintf(req, sizeof(req), "GET /%llu HTTP/1.1\r\nHost: %s:%d\r\n\r\n", bytes, host,
		     port);
	if (SSL_write(s, req, l) != l || read_head(s, head, sizeof(head)) < 0)
		die("GET");
	while (got < bytes) {
		int r = SSL_read(s, buf, sizeof(buf));
		if (r <= 0)
			die("body");
		got += (unsigned long long)r;
	}
	SSL_shutdown(s);
	SSL_free(s);
	close(fd);
	return got;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc == 4 && strcmp(argv[1], "origin") == 0)
		origin(argv[2], argv[3]);
	if (argc == 8 && strcmp(argv[1], "get") == 0) {
		SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
		unsigned long long bytes = strtoull(argv[6], NULL, 10), total = 0;
		long count = atol(argv[7]);
		double t0, t;

		if (!ctx || SSL_CTX_load_verify_locations(ctx, argv[5], NULL) != 1)
			die("CA file");
		SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
		t0 = now_s();
		for (long i = 0; i < count; i++)
			total += one_get(ctx, atoi(argv[2]), argv[3], atoi(argv[4]), bytes);
		t = now_s() - t0;
		printf("mibps=%.1f conns_per_s=%.1f seconds=%.3f\n", (double)total / 1048576.0 / t,
		       (double)count / t, t);
		return 0;
	}
	fprintf(stderr, "usage: bench_tls origin CERT KEY | get PROXY_PORT HOST PORT CAFILE "
			"BYTES COUNT\n");
	return 2;
}
