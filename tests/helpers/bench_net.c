/* bench_net: the network ends of tests/bench/proxy. Loopback only: every socket it opens
 * is bound or connected to 127.0.0.1 (or to the host named in ORIGIN, which the bench
 * script only ever sets to a loopback name, or inside the sandbox to a name that
 * halo-run's DNS stub answers with a captured fake address).
 *
 *   bench_net sink PORT                 origin: prints "ready PORT" (0 = any free port)
 *   bench_net freeport                  prints a port that was free a moment ago
 *   bench_net bulk  PXHOST PXPORT ORIGIN BYTES
 *   bench_net rate  PXHOST PXPORT ORIGIN N CONCURRENCY
 *   bench_net idle  PXHOST PXPORT ORIGIN N [PID]
 *
 * ORIGIN is PORT (target 127.0.0.1) or HOST:PORT. PXPORT 0 means no proxy: connect
 * straight to the origin (a name must resolve into 127.0.0.0/8 or, inside halo-run's
 * sandbox, into its captured fake range 198.18.0.0/15). Otherwise every connection starts with
 * "CONNECT ORIGIN HTTP/1.1" and must get a 200 before its first byte of payload.
 *
 * The origin's protocol is one mode byte, then:
 *   'B' bulk: "B<count>\n", then count bytes, discarded; once they are all in,
 *       the origin answers "OK <count>\n". No half-close is needed (tinyproxy does
 *       not pass one on: it closes both ways on the client's EOF).
 *   'E' echo: every byte (the mode byte included) is sent back.
 *
 * bulk: BYTES of payload, timed from the first byte sent to the
 *   origin's count received, so the figure is end to end (nothing left in a buffer).
 * rate: N connections, CONCURRENCY at a time (one epoll loop), after a warmup of
 *   N/10 (at most 200). Each: connect, CONNECT, one 64-byte echo (setup = socket()
 *   to that echo back), a second 64-byte echo on the established tunnel (rtt), close.
 * idle: opens N tunnels (each with one echo), then with PID prints that process's
 *   VmRSS before and after and exits; without PID prints "ready N" and holds them
 *   until stdin reaches EOF.
 * Results are one line of key=value pairs on stdout; errors go to stderr with exit 1. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define IO_TIMEOUT_S 30
#define MSG_LEN	     64
#define BULK_CHUNK   (256 * 1024)
#define SINK_BUF     (1024 * 1024)
#define MAX_EVENTS   64

__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("bench_net: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* ----------------------------------------------------------------- addresses */

struct target {
	char host[256]; /* as written in CONNECT */
	unsigned port;
};

struct ends {
	struct sockaddr_in dial; /* the proxy, or the origin when direct */
	bool via_proxy;
	struct target origin;
};

static unsigned parse_port(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end || v < 0 || v > 65535)
		die("bad port '%s'", s);
	return (unsigned)v;
}

static struct sockaddr_in loop_addr(const char *ip, unsigned port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};

	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1 || (ntohl(a.sin_addr.s_addr) >> 24) != 127)
		die("'%s' is not a 127.0.0.0/8 address", ip);
	return a;
}

/* Direct: a loopback IP literal, or a name. A name is resolved (inside the sandbox:
 * by halo-run's DNS stub) and must give a loopback address or one of halo-run's fake
 * addresses (198.18.0.0/15), which exist only in the sandbox's own network namespace,
 * where they are captured into the supervisor: the proxy-unaware path. */
static struct sockaddr_in direct_addr(const char *host, unsigned port)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
	struct sockaddr_in a;
	uint32_t ip;
	int rc;

	if (inet_pton(AF_INET, host, &a.sin_addr) == 1)
		return loop_addr(host, port);
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc != 0)
		die("resolve %s: %s", host, gai_strerror(rc));
	a = *(struct sockaddr_in *)res->ai_addr;
	freeaddrinfo(res);
	a.sin_port = htons((uint16_t)port);
	ip = ntohl(a.sin_addr.s_addr);
	if ((ip >> 24) != 127 && (ip >> 17) != (0xc6120000u >> 17))
		die("%s resolved outside 127.0.0.0/8 and 198.18.0.0/15", host);
	return a;
}

static void parse_ends(char **argv, struct ends *e)
{
	const char *colon = strrchr(argv[2], ':');
	unsigned pxport = parse_port(argv[1]);

	if (colon) {
		snprintf(e->origin.host, sizeof(e->origin.host), "%.*s", (int)(colon - argv[2]),
			 argv[2]);
		e->origin.port = parse_port(colon + 1);
	} else {
		snprintf(e->origin.host, sizeof(e->origin.host), "127.0.0.1");
		e->origin.port = parse_port(argv[2]);
	}
	e->via_proxy = pxport != 0;
	e->dial =
	    e->via_proxy ? loop_addr(argv[0], pxport) : direct_addr(e->origin.host, e->origin.port);
}

static int sock_new(bool nonblock)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
	int one = 1;

	if (fd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* ------------------------------------------------------------ blocking client */

static int dial_blocking(const struct ends *e)
{
	struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
	char ip[INET_ADDRSTRLEN] = "?";
	int fd = sock_new(false);

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&e->dial, sizeof(e->dial)) != 0) {
		inet_ntop(AF_INET, &e->dial.sin_addr, ip, sizeof(ip));
		die("connect %s:%u: %s", ip, ntohs(e->dial.sin_port), strerror(errno));
	}
	return fd;
}

static void send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die("send: %s", w < 0 ? strerror(errno) : "nothing written");
		p += w;
		len -= (size_t)w;
	}
}

static void recv_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t r = recv(fd, p, len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("recv: %s", r < 0 ? strerror(errno) : "early EOF");
		p += r;
		len -= (size_t)r;
	}
}

static int connect_request(const struct target *t, char *buf, size_t len)
{
	return snprintf(buf, len, "CONNECT %s:%u HTTP/1.1\r\nHost: %s:%u\r\n\r\n", t->host, t->port,
			t->host, t->port);
}

/* Status of a complete response head in buf[0..len), 0 when the head is not complete
 * yet; *head_len gets its length. */
static int head_status(const char *buf, size_t len, size_t *head_len)
{
	const char *end = memmem(buf, len, "\r\n\r\n", 4);
	int status = 0;

	if (!end)
		return 0;
	*head_len = (size_t)(end - buf) + 4;
	if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
		return -1;
	return status;
}

/* Byte by byte: nothing of the tunnel may be read past the head. Heads are short. */
static void tunnel_blocking(int fd, const struct target *t)
{
	char buf[4096];
	size_t len = 0, head_len = 0;
	int n = connect_request(t, buf, sizeof(buf)), status = 0;

	send_all(fd, buf, (size_t)n);
	while (status == 0) {
		if (len + 1 >= sizeof(buf))
			die("CONNECT answer head too long");
		recv_all(fd, buf + len++, 1);
		status = head_status(buf, len, &head_len);
	}
	if (status != 200) {
		buf[len] = '\0';
		die("CONNECT %s:%u answered: %.*s", t->host, t->port, (int)strcspn(buf, "\r\n"),
		    buf);
	}
}

static int open_stream(const struct ends *e)
{
	int fd = dial_blocking(e);

	if (e->via_proxy)
		tunnel_blocking(fd, &e->origin);
	return fd;
}

static void echo_once(int fd, char mode)
{
	char out[MSG_LEN], in[MSG_LEN];

	memset(out, 'x', sizeof(out));
	out[0] = mode;
	send_all(fd, out, sizeof(out));
	recv_all(fd, in, sizeof(in));
	if (memcmp(in, out, sizeof(in)) != 0)
		die("echo came back changed");
}

/* --------------------------------------------------------------------- bulk */

static int cmd_bulk(char **argv)
{
	struct ends e;
	unsigned long long bytes = strtoull(argv[3], NULL, 10), left = bytes, got = 0;
	char *buf = malloc(BULK_CHUNK), reply[64];
	size_t rl = 0;
	double t0, t1;
	int fd, hl;

	if (!buf || bytes == 0)
		die("bulk: bad size or no memory");
	parse_ends(argv, &e);
	fd = open_stream(&e);
	memset(buf, 'b', BULK_CHUNK);
	hl = snprintf(reply, sizeof(reply), "B%llu\n", bytes);
	t0 = now_us();
	send_all(fd, reply, (size_t)hl);
	while (left) {
		size_t n = left < BULK_CHUNK ? (size_t)left : BULK_CHUNK;
		send_all(fd, buf, n);
		left -= n;
	}
	while (rl < sizeof(reply) - 1 && !memchr(reply, '\n', rl)) {
		ssize_t r = recv(fd, reply + rl, sizeof(reply) - 1 - rl, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("bulk: waiting for the origin's count: %s", strerror(errno));
		if (r == 0)
			break;
		rl += (size_t)r;
	}
	t1 = now_us();
	reply[rl] = '\0';
	if (sscanf(reply, "OK %llu", &got) != 1 || got != bytes)
		die("bulk: origin counted '%s', sent %llu", reply, bytes);
	printf("bulk bytes=%llu secs=%.4f mibps=%.1f\n", bytes, (t1 - t0) / 1e6,
	       (double)bytes / (1024.0 * 1024.0) / ((t1 - t0) / 1e6));
	close(fd);
	free(buf);
	return 0;
}

/* --------------------------------------------------------------------- rate */

enum rstate { R_CONNECTING, R_HEAD, R_ECHO1, R_ECHO2 };

struct rconn {
	int fd;
	enum rstate st;
	double t0, t1;
	size_t got;
	char buf[1024];
};

struct rate {
	const struct ends *e;
	int ep;
	unsigned total, started, done, conc;
	double *setup, *rtt; /* µs per finished connection */
	char req[600];
	int req_len;
	char msg[MSG_LEN];
};

static void rate_send(struct rconn *c, const void *buf, size_t len)
{
	/* Tiny and into an empty socket buffer: all of it goes or something is wrong. */
	ssize_t w = send(c->fd, buf, len, MSG_NOSIGNAL);

	if (w != (ssize_t)len)
		die("rate: send: %s", w < 0 ? strerror(errno) : "short write");
}

static void rate_watch(struct rate *r, struct rconn *c, int op, unsigned ev)
{
	struct epoll_event e = {.events = ev, .data.ptr = c};

	if (epoll_ctl(r->ep, op, c->fd, &e) != 0)
		die("epoll_ctl: %s", strerror(errno));
}

static void rate_start(struct rate *r, struct rconn *c)
{
	c->fd = sock_new(true);
	c->st = R_CONNECTING;
	c->got = 0;
	c->t0 = now_us();
	r->started++;
	if (connect(c->fd, (struct sockaddr *)&r->e->dial, sizeof(r->e->dial)) != 0 &&
	    errno != EINPROGRESS)
		die("rate: connect: %s", strerror(errno));
	rate_watch(r, c, EPOLL_CTL_ADD, EPOLLOUT);
}

static void rate_echo(struct rate *r, struct rconn *c, enum rstate next)
{
	r->msg[0] = 'E';
	rate_send(c, r->msg, MSG_LEN);
	c->st = next;
	c->got = 0;
}

/* One event on connection c; returns true when it finished. */
static bool rate_step(struct rate *r, struct rconn *c)
{
	ssize_t n;
	size_t head_len = 0;
	int err = 0, status;
	socklen_t sl = sizeof(err);

	if (c->st == R_CONNECTING) {
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &sl) != 0 || err)
			die("rate: connect: %s", strerror(err ? err : errno));
		rate_watch(r, c, EPOLL_CTL_MOD, EPOLLIN);
		if (r->e->via_proxy) {
			rate_send(c, r->req, (size_t)r->req_len);
			c->st = R_HEAD;
		} else {
			rate_echo(r, c, R_ECHO1);
		}
		return false;
	}
	n = recv(c->fd, c->buf + c->got, sizeof(c->buf) - 1 - c->got, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return false;
	if (n <= 0)
		die("rate: recv: %s", n < 0 ? strerror(errno) : "early EOF");
	c->got += (size_t)n;
	if (c->st == R_HEAD) {
		status = head_status(c->buf, c->got, &head_len);
		if (status == 0 && c->got < sizeof(c->buf) - 1)
			return false;
		if (status != 200 || head_len != c->got)
			die("rate: CONNECT answered: %.*s", (int)strcspn(c->buf, "\r\n"), c->buf);
		rate_echo(r, c, R_ECHO1);
		return false;
	}
	if (c->got < MSG_LEN)
		return false;
	if (c->got > MSG_LEN || memcmp(c->buf + 1, r->msg + 1, MSG_LEN - 1) != 0)
		die("rate: echo came back changed");
	if (c->st == R_ECHO1) {
		c->t1 = now_us();
		rate_echo(r, c, R_ECHO2);
		return false;
	}
	r->setup[r->done] = c->t1 - c->t0;
	r->rtt[r->done] = now_us() - c->t1;
	r->done++;
	close(c->fd); /* also leaves the epoll set */
	return true;
}

/* Runs r->total connections; returns the wall time in µs. */
static double rate_run(struct rate *r, struct rconn *slots)
{
	struct epoll_event ev[MAX_EVENTS];
	double t0 = now_us();

	r->started = r->done = 0;
	for (unsigned i = 0; i < r->conc && r->started < r->total; i++)
		rate_start(r, &slots[i]);
	while (r->done < r->total) {
		int n = epoll_wait(r->ep, ev, MAX_EVENTS, IO_TIMEOUT_S * 1000);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("rate: no progress for %d s (%u of %u done)", IO_TIMEOUT_S, r->done,
			    r->total);
		for (int i = 0; i < n; i++) {
			struct rconn *c = ev[i].data.ptr;
			if (rate_step(r, c) && r->started < r->total)
				rate_start(r, c);
		}
	}
	return now_us() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, unsigned n, double p)
{
	size_t i = (size_t)(p * (n - 1) + 0.5);

	return v[i];
}

static int cmd_rate(char **argv)
{
	struct ends e;
	struct rate r = {.e = &e};
	unsigned n = (unsigned)atoi(argv[3]), warm;
	struct rconn *slots;
	double us;

	parse_ends(argv, &e);
	r.conc = (unsigned)atoi(argv[4]);
	if (n == 0 || r.conc == 0 || r.conc > 4096)
		die("rate: bad N or CONCURRENCY");
	slots = calloc(r.conc, sizeof(*slots));
	r.setup = calloc(n, sizeof(double));
	r.rtt = calloc(n, sizeof(double));
	r.ep = epoll_create1(EPOLL_CLOEXEC);
	if (!slots || !r.setup || !r.rtt || r.ep < 0)
		die("rate: out of memory");
	r.req_len = connect_request(&e.origin, r.req, sizeof(r.req));
	memset(r.msg, 'm', sizeof(r.msg));
	warm = n / 10 < 200 ? n / 10 : 200;
	if (warm) {
		r.total = warm;
		rate_run(&r, slots);
	}
	r.total = n;
	us = rate_run(&r, slots);
	qsort(r.setup, n, sizeof(double), cmp_double);
	qsort(r.rtt, n, sizeof(double), cmp_double);
	printf("rate n=%u c=%u secs=%.3f cps=%.0f setup_p50_us=%.1f setup_p99_us=%.1f "
	       "rtt_p50_us=%.1f rtt_p99_us=%.1f\n",
	       n, r.conc, us / 1e6, n / (us / 1e6), pct(r.setup, n, 0.5), pct(r.setup, n, 0.99),
	       pct(r.rtt, n, 0.5), pct(r.rtt, n, 0.99));
	close(r.ep);
	free(slots);
	free(r.setup);
	free(r.rtt);
	return 0;
}

/* --------------------------------------------------------------------- idle */

/* VmRSS of PID in KiB, or -1. */
static long vm_rss_kib(long pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static void settle(void)
{
	struct timespec ts = {.tv_nsec = 300 * 1000 * 1000};

	nanosleep(&ts, NULL);
}

static int cmd_idle(int argc, char **argv)
{
	struct ends e;
	unsigned n = (unsigned)atoi(argv[3]);
	long pid = argc > 4 ? atol(argv[4]) : 0, before = 0, after;
	int *fds = calloc(n ? n : 1, sizeof(int));
	char c;

	parse_ends(argv, &e);
	if (!fds || n == 0)
		die("idle: bad N");
	if (pid) {
		settle();
		before = vm_rss_kib(pid);
		if (before < 0)
			die("idle: no VmRSS for pid %ld", pid);
	}
	for (unsigned i = 0; i < n; i++) {
		fds[i] = open_stream(&e);
		echo_once(fds[i], 'E');
	}
	if (pid) {
		settle();
		after = vm_rss_kib(pid);
		if (after < 0)
			die("idle: pid %ld went away", pid);
		printf("idle n=%u rss_before_kib=%ld rss_after_kib=%ld bytes_per_tunnel=%.0f\n", n,
		       before, after, (double)(after - before) * 1024.0 / n);
	} else {
		printf("ready %u\n", n);
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
	}
	for (unsigned i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	return 0;
}

/* --------------------------------------------------------------------- sink */

struct sconn {
	char mode;	/* 0 until the first byte */
	char hdr[24];	/* bulk: "B<count>\n" being read */
	size_t hdr_len; /* 0 once the header is complete */
	unsigned long long want, count;
	char *pend; /* echo bytes the socket could not take yet */
	size_t pend_len;
};

struct sink {
	int ep, lfd;
	struct sconn **by_fd;
	size_t n_by_fd;
	char *buf;
};

static void sink_close(struct sink *s, int fd)
{
	struct sconn *c = s->by_fd[fd];

	free(c->pend);
	free(c);
	s->by_fd[fd] = NULL;
	close(fd);
}

static void sink_accept(struct sink *s)
{
	for (;;) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), one = 1;
		struct epoll_event e = {.events = EPOLLIN, .data.fd = fd};

		if (fd < 0)
			return; /* EAGAIN, or EMFILE: the next round retries */
		if ((size_t)fd >= s->n_by_fd) {
			size_t n = (size_t)fd * 2;
			struct sconn **t = realloc(s->by_fd, n * sizeof(*t));
			if (!t)
				die("sink: out of memory");
			memset(t + s->n_by_fd, 0, (n - s->n_by_fd) * sizeof(*t));
			s->by_fd = t;
			s->n_by_fd = n;
		}
		s->by_fd[fd] = calloc(1, sizeof(struct sconn));
		if (!s->by_fd[fd])
			die("sink: out of memory");
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &e);
	}
}

/* Echo what could not be sent yet; true when everything is out. */
static bool sink_flush(struct sink *s, int fd, struct sconn *c)
{
	struct epoll_event e = {.data.fd = fd};
	ssize_t w = c->pend_len ? send(fd, c->pend, c->pend_len, MSG_NOSIGNAL) : 0;

	if (w > 0) {
		memmove(c->pend, c->pend + w, c->pend_len - (size_t)w);
		c->pend_len -= (size_t)w;
	}
	e.events = c->pend_len ? EPOLLOUT : EPOLLIN;
	epoll_ctl(s->ep, EPOLL_CTL_MOD, fd, &e);
	return c->pend_len == 0;
}

static void sink_echo(struct sink *s, int fd, struct sconn *c, const char *p, size_t n)
{
	ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

	if (w < 0)
		w = 0;
	if ((size_t)w == n)
		return;
	c->pend = malloc(n - (size_t)w);
	if (!c->pend)
		die("sink: out of memory");
	memcpy(c->pend, p + w, n - (size_t)w);
	c->pend_len = n - (size_t)w;
	sink_flush(s, fd, c);
}

/* Takes what belongs to the "B<count>\n" header from p; returns how many bytes. */
static size_t sink_bulk_header(struct sconn *c, const char *p, size_t n)
{
	size_t i = 0;

	if (c->count || c->want)
		return 0;
	while (i < n && p[i] != '\n' && c->hdr_len < sizeof(c->hdr) - 1)
		c->hdr[c->hdr_len++] = p[i++];
	if (i == n)
		return i;
	c->hdr[c->hdr_len] = '\0';
	c->want = strtoull(c->hdr + 1, NULL, 10);
	c->hdr_len = 0;
	return i + 1;
}

static void sink_event(struct sink *s, int fd, unsigned events)
{
	struct sconn *c = s->by_fd[fd];
	char reply[64];
	ssize_t n;
	size_t skip;

	if (c->pend_len) {
		if (!sink_flush(s, fd, c) || !(events & EPOLLIN))
			return;
	}
	n = recv(fd, s->buf, SINK_BUF, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		sink_close(s, fd);
		return;
	}
	if (!c->mode)
		c->mode = s->buf[0];
	if (c->mode == 'E') {
		sink_echo(s, fd, c, s->buf, (size_t)n);
		return;
	}
	skip = sink_bulk_header(c, s->buf, (size_t)n);
	c->count += (unsigned long long)n - skip;
	if (c->hdr_len == 0 && c->count == c->want) {
		int len = snprintf(reply, sizeof(reply), "OK %llu\n", c->count);
		send(fd, reply, (size_t)len, MSG_NOSIGNAL);
	}
}

__attribute__((noreturn)) static void cmd_sink(char **argv)
{
	struct sockaddr_in a = loop_addr("127.0.0.1", parse_port(argv[0]));
	socklen_t sl = sizeof(a);
	struct epoll_event ev[MAX_EVENTS], le = {.events = EPOLLIN};
	struct sink s = {.buf = malloc(SINK_BUF)};
	int one = 1;

	s.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	s.ep = epoll_create1(EPOLL_CLOEXEC);
	setsockopt(s.lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (!s.buf || s.lfd < 0 || s.ep < 0 || bind(s.lfd, (struct sockaddr *)&a, sl) != 0 ||
	    listen(s.lfd, 4096) != 0 || getsockname(s.lfd, (struct sockaddr *)&a, &sl) != 0)
		die("sink: cannot listen: %s", strerror(errno));
	le.data.fd = s.lfd;
	epoll_ctl(s.ep, EPOLL_CTL_ADD, s.lfd, &le);
	printf("ready %u\n", ntohs(a.sin_port));
	fflush(stdout);
	for (;;) {
		int n = epoll_wait(s.ep, ev, MAX_EVENTS, -1);

		for (int i = 0; i < n; i++) {
			if (ev[i].data.fd == s.lfd)
				sink_accept(&s);
			else
				sink_event(&s, ev[i].data.fd, ev[i].events);
		}
	}
}

static int cmd_freeport(void)
{
	struct sockaddr_in a = loop_addr("127.0.0.1", 0);
	socklen_t sl = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sl) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &sl) != 0)
		die("freeport: %s", strerror(errno));
	printf("%u\n", ntohs(a.sin_port));
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(m, "sink") && argc == 3)
		cmd_sink(argv + 2);
	if (!strcmp(m, "freeport") && argc == 2)
		return cmd_freeport();
	if (!strcmp(m, "bulk") && argc == 6)
		return cmd_bulk(argv + 2);
	if (!strcmp(m, "rate") && argc == 7)
		return cmd_rate(argv + 2);
	if (!strcmp(m, "idle") && (argc == 6 || argc == 7))
		return cmd_idle(argc - 2, argv + 2);
	fprintf(stderr, "usage: bench_net sink PORT | freeport | bulk PXHOST PXPORT ORIGIN BYTES |"
			" rate PXHOST PXPORT ORIGIN N CONCURRENCY | idle PXHOST PXPORT ORIGIN N "
			"[PID]\n");
	return 2;
}
