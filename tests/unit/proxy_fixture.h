/* Test fixture for the proxy: a policy from YAML text, the proxy running its loop on
 * a thread (listeners on 127.0.0.1 ephemeral ports), fake name resolution, local
 * origins (a poller-driven echo/sink server and a sequential HTTP server), and small
 * blocking clients. Loopback only: every name resolves to 127.0.0.x or ::1, and the
 * rows with private or metadata answers are refused before any connect (asserted
 * through the audit record and the origins' accept counters). */
#ifndef HALO_TESTS_PROXY_FIXTURE_H
#define HALO_TESTS_PROXY_FIXTURE_H

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "policy/policy.h"
#include "proxy/proxy.h"
#include "proxy/proxy_int.h"
#include "proxy/resolve.h"
#include "tests/unit/unit.h"

/* Each test file uses a different subset of these helpers. */
#pragma GCC diagnostic ignored "-Wunused-function"

#if defined(__linux__) && !defined(HALO_PORTABLE)
#define FIRST_BACKEND PROXY_POLLER_EPOLL
#else
#define FIRST_BACKEND PROXY_POLLER_POLL
#endif
#define END_BACKEND (PROXY_POLLER_POLL + 1)

/* ------------------------------------------------------------------ policy */

static struct halo_policy *fx_policy(const char *yaml)
{
	struct policy_ctx ctx = {.pw_home = "/nonexistent-home", .workspace = "/tmp"};
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	if (policy_parse_buffer("test", yaml, strlen(yaml), 'y', &p, &d) != 0 ||
	    policy_finalize(p, &ctx, &d) != 0) {
		for (size_t i = 0; i < d.n_errors; i++)
			fprintf(stderr, "policy: %s\n", d.errors[i]);
		ck_abort_msg("test policy refused");
	}
	policy_diags_free(&d);
	return p;
}

#define POLICY_LOOPBACK_OK                                                                         \
	"egress:\n"                                                                                \
	"  default: deny\n"                                                                        \
	"  allowedDomains: [origin.test, origin6.test, second.test, mixed.test, meta.test,\n"      \
	"                   slow.test, nxdomain.test, 127.0.0.1, '::1']\n"                         \
	"  deniedDomains: [pastebin.com]\n"                                                        \
	"  allowPrivate: [127.0.0.0/8, '::1/128']\n"

#define POLICY_NO_PRIVATE                                                                          \
	"egress:\n"                                                                                \
	"  default: deny\n"                                                                        \
	"  allowedDomains: [origin.test, 127.0.0.1, '::1']\n"                                      \
	"  deniedDomains: [pastebin.com]\n"

/* ------------------------------------------------------------- fake names */

static int fx_lookup(const char *name, struct proxy_addr *out, size_t max, size_t *n)
{
	static const struct {
		const char *name;
		const char *addrs[3];
		unsigned delay_ms;
	} table[] = {
	    {"origin.test", {"127.0.0.1"}, 0},	   {"origin6.test", {"::1"}, 0},
	    {"second.test", {"127.0.0.2"}, 0},	   {"mixed.test", {"127.0.0.1", "10.0.0.1"}, 0},
	    {"meta.test", {"169.254.169.254"}, 0}, {"slow.test", {"127.0.0.1"}, 1500},
	};

	*n = 0;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcmp(name, table[i].name) != 0)
			continue;
		if (table[i].delay_ms)
			usleep(table[i].delay_ms * 1000);
		for (size_t k = 0; k < 3 && table[i].addrs[k] && *n < max; k++) {
			struct proxy_addr *a = &out[(*n)++];
			memset(a, 0, sizeof(*a));
			a->family = strchr(table[i].addrs[k], ':') ? AF_INET6 : AF_INET;
			inet_pton(a->family, table[i].addrs[k], a->addr);
		}
		return 0;
	}
	return -ENOENT;
}

/* ------------------------------------------------------------ the proxy */

struct fx_proxy {
	struct halo_policy *pol;
	struct proxy_poller *pl;
	struct proxy *px;
	pthread_t th;
	int wake[2];
	volatile bool stop;
	int http_port, socks_port;
	FILE *audit, *log;
	struct proxy_stats st; /* after fx_stop */
};

static int fx_listen(const char *ip, int *port)
{
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	int one = 1, fd;

	if (strchr(ip, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		inet_pton(AF_INET6, ip, &s6->sin6_addr);
		s6->sin6_port = htons((uint16_t)*port);
		sl = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		inet_pton(AF_INET, ip, &s4->sin_addr);
		s4->sin_port = htons((uint16_t)*port);
		sl = sizeof(*s4);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ck_assert_msg(bind(fd, (struct sockaddr *)&ss, sl) == 0, "bind %s: %s", ip,
		      strerror(errno));
	ck_assert_int_eq(listen(fd, 4096), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&ss, &sl), 0);
	*port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					      : ((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

static void fx_on_wake(void *arg, int fd, unsigned events)
{
	struct fx_proxy *f = arg;
	char b[16];

	(void)events;
	while (read(fd, b, sizeof(b)) > 0)
		;
	f->stop = true;
}

static void *fx_loop(void *arg)
{
	struct fx_proxy *f = arg;

	ck_assert_int_eq(proxy_poller_run(f->pl, &f->stop), 0);
	return NULL;
}

typedef void (*fx_tweak)(struct proxy_options *o);

/* Build the proxy; run its loop on a thread unless `threaded` is false (then the
 * caller runs it, e.g. in a forked child). */
static void fx_create(struct fx_proxy *f, int backend, const char *yaml, fx_tweak tweak)
{
	struct proxy_options o = {0};
	struct halo_err e = {{0}};

	memset(f, 0, sizeof(*f));
	proxy_resolver_set_lookup(fx_lookup);
	f->pol = fx_policy(yaml);
	ck_assert_int_eq(proxy_poller_new((enum proxy_poller_backend)backend, &f->pl), 0);
	f->audit = tmpfile();
	f->log = tmpfile();
	ck_assert_ptr_nonnull(f->audit);
	ck_assert_ptr_nonnull(f->log);
	o.policy = f->pol;
	o.listeners[0].fd = fx_listen("127.0.0.1", &f->http_port);
	o.listeners[0].kind = PROXY_LISTEN_HTTP;
	o.listeners[1].fd = fx_listen("127.0.0.1", &f->socks_port);
	o.listeners[1].kind = PROXY_LISTEN_SOCKS5;
	o.n_listeners = 2;
	o.audit_fd = fileno(f->audit);
	o.log_fd = fileno(f->log);
	if (tweak)
		tweak(&o);
	ck_assert_msg(proxy_create(f->pl, &o, &f->px, &e) == 0, "proxy_create: %s", e.msg);
	ck_assert_int_eq(pipe2(f->wake, O_NONBLOCK | O_CLOEXEC), 0);
	ck_assert_int_eq(proxy_poller_add(f->pl, f->wake[0], PROXY_EV_IN, fx_on_wake, f), 0);
}

static void fx_start(struct fx_proxy *f, int backend, const char *yaml, fx_tweak tweak)
{
	fx_create(f, backend, yaml, tweak);
	ck_assert_int_eq(pthread_create(&f->th, NULL, fx_loop, f), 0);
}

/* Stop the loop; the proxy still exists (internals can be inspected). */
static void fx_halt(struct fx_proxy *f)
{
	ck_assert_int_eq(write(f->wake[1], "x", 1), 1);
	pthread_join(f->th, NULL);
}

static void fx_destroy(struct fx_proxy *f)
{
	proxy_get_stats(f->px, &f->st);
	proxy_poller_del(f->pl, f->wake[0]);
	proxy_destroy(f->px);
	proxy_poller_free(f->pl);
	policy_free(f->pol);
	close(f->wake[0]);
	close(f->wake[1]);
}

static void fx_stop(struct fx_proxy *f)
{
	fx_halt(f);
	fx_destroy(f);
}

static char *fx_slurp(FILE *fp)
{
	long n;
	char *s;

	fflush(fp);
	n = lseek(fileno(fp), 0, SEEK_END);
	s = calloc(1, (size_t)n + 1);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(pread(fileno(fp), s, (size_t)n, 0), n);
	return s;
}

/* The audit records, parsed. */
static int fx_audit(struct fx_proxy *f, cJSON **recs, int max)
{
	char *all = fx_slurp(f->audit), *save = NULL;
	int n = 0;

	for (char *line = strtok_r(all, "\n", &save); line && n < max;
	     line = strtok_r(NULL, "\n", &save)) {
		recs[n] = cJSON_Parse(line);
		ck_assert_msg(recs[n] != NULL, "audit line is not JSON: %s", line);
		n++;
	}
	free(all);
	return n;
}

static const char *js(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double jnum(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static void fx_free_recs(cJSON **recs, int n)
{
	for (int i = 0; i < n; i++)
		cJSON_Delete(recs[i]);
}

/* --------------------------------------------------------------- clients */

static int cli_connect_to(const char *ip, int port)
{
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	struct timeval tv = {5, 0};
	int fd;

	if (strchr(ip, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		inet_pton(AF_INET6, ip, &s6->sin6_addr);
		s6->sin6_port = htons((uint16_t)port);
		sl = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		inet_pton(AF_INET, ip, &s4->sin_addr);
		s4->sin_port = htons((uint16_t)port);
		sl = sizeof(*s4);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	ck_assert_msg(connect(fd, (struct sockaddr *)&ss, sl) == 0, "connect %s:%d: %s", ip, port,
		      strerror(errno));
	return fd;
}

static int cli_connect(int port)
{
	return cli_connect_to("127.0.0.1", port);
}

static void cli_send(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
		ck_assert_msg(w > 0, "send: %s", strerror(errno));
		c += w;
		n -= (size_t)w;
	}
}

static void cli_sends(int fd, const char *s)
{
	cli_send(fd, s, strlen(s));
}

/* Read until `end` appears (or EOF, or the buffer is full); NUL-terminated. */
static size_t cli_recv_until(int fd, char *buf, size_t cap, const char *end)
{
	size_t n = 0;

	buf[0] = '\0';
	while (n + 1 < cap) {
		ssize_t r = recv(fd, buf + n, 1, 0);
		if (r <= 0)
			break;
		n += (size_t)r;
		buf[n] = '\0';
		if (end && n >= strlen(end) && strcmp(buf + n - strlen(end), end) == 0)
			break;
	}
	return n;
}

static size_t cli_recv_n(int fd, char *buf, size_t want)
{
	size_t n = 0;

	while (n < want) {
		ssize_t r = recv(fd, buf + n, want - n, 0);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	return n;
}

/* Everything until EOF (5 s receive timeout). */
static size_t cli_recv_all(int fd, char *buf, size_t cap)
{
	size_t n = 0;

	while (n + 1 < cap) {
		ssize_t r = recv(fd, buf + n, cap - 1 - n, 0);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	return n;
}

static int status_of(const char *resp)
{
	int st = -1;

	if (sscanf(resp, "HTTP/1.%*d %d", &st) != 1)
		return -1;
	return st;
}

/* CONNECT target through the proxy; returns the fd, the response head in head. */
static int cli_connect_via(struct fx_proxy *f, const char *target, char *head, size_t cap)
{
	char req[512];
	int fd = cli_connect(f->http_port);

	snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target);
	cli_sends(fd, req);
	cli_recv_until(fd, head, cap, "\r\n\r\n");
	return fd;
}

/* -------------------------------------------------------------- origins */

enum origin_mode { ORIGIN_ECHO, ORIGIN_SILENT, ORIGIN_FLOOD };

struct origin_conn {
	int fd;
	char *buf;
	size_t off, len;
	bool eof;
	struct origin *o;
};

struct origin {
	enum origin_mode mode;
	int lfd, port;
	struct proxy_poller *pl;
	pthread_t th;
	int wake[2];
	volatile bool stop;
	atomic_int accepted;
	atomic_int open;
	struct origin_conn **conns;
	size_t n_conns;
};

static void origin_close(struct origin_conn *c)
{
	proxy_poller_del(c->o->pl, c->fd);
	close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
	atomic_fetch_sub(&c->o->open, 1);
}

static void origin_on_conn(void *arg, int fd, unsigned ev)
{
	struct origin_conn *c = arg;
	static char junk[65536];

	if (c->o->mode == ORIGIN_FLOOD) {
		ssize_t w = send(fd, junk, sizeof(junk), MSG_NOSIGNAL);
		if (w < 0 && errno != EAGAIN)
			origin_close(c);
		return;
	}
	if (c->len && (ev & (PROXY_EV_OUT | PROXY_EV_ERR))) {
		ssize_t w = send(fd, c->buf + c->off, c->len, MSG_NOSIGNAL);
		if (w < 0 && errno != EAGAIN) {
			origin_close(c);
			return;
		}
		if (w > 0) {
			c->off += (size_t)w;
			c->len -= (size_t)w;
		}
	}
	if (!c->len && !c->eof && (ev & (PROXY_EV_IN | PROXY_EV_ERR))) {
		ssize_t r = recv(fd, c->buf, 65536, 0);
		if (r == 0) {
			c->eof = true;
			shutdown(fd, SHUT_WR); /* echo the half-close */
		} else if (r < 0 && errno != EAGAIN) {
			origin_close(c);
			return;
		} else if (r > 0) {
			ssize_t w = send(fd, c->buf, (size_t)r, MSG_NOSIGNAL);
			c->off = w > 0 ? (size_t)w : 0;
			c->len = (size_t)r - c->off;
		}
	}
	if (c->eof && !c->len) { /* everything echoed and our side shut: done */
		origin_close(c);
		return;
	}
	proxy_poller_mod(c->o->pl, fd, c->len ? PROXY_EV_OUT : (c->eof ? 0 : PROXY_EV_IN));
}

static void origin_on_accept(void *arg, int lfd, unsigned ev)
{
	struct origin *o = arg;

	(void)ev;
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct origin_conn *c;

		if (fd < 0)
			return;
		atomic_fetch_add(&o->accepted, 1);
		atomic_fetch_add(&o->open, 1);
		c = calloc(1, sizeof(*c));
		ck_assert_ptr_nonnull(c);
		c->fd = fd;
		c->o = o;
		o->conns = realloc(o->conns, (o->n_conns + 1) * sizeof(*o->conns));
		o->conns[o->n_conns++] = c;
		if (o->mode == ORIGIN_ECHO)
			c->buf = malloc(65536);
		proxy_poller_add(o->pl, fd,
				 o->mode == ORIGIN_ECHO	   ? PROXY_EV_IN
				 : o->mode == ORIGIN_FLOOD ? PROXY_EV_OUT
							   : 0,
				 origin_on_conn, c);
	}
}

static void origin_on_wake(void *arg, int fd, unsigned ev)
{
	struct origin *o = arg;
	char b[8];

	(void)ev;
	while (read(fd, b, sizeof(b)) > 0)
		;
	o->stop = true;
}

static void *origin_loop(void *arg)
{
	struct origin *o = arg;

	proxy_poller_run(o->pl, &o->stop);
	return NULL;
}

static void origin_start_at(struct origin *o, enum origin_mode mode, const char *ip)
{
	memset(o, 0, sizeof(*o));
	o->mode = mode;
	o->lfd = fx_listen(ip, &o->port);
	fcntl(o->lfd, F_SETFL, O_NONBLOCK);
	ck_assert_int_eq(proxy_poller_new(PROXY_POLLER_POLL, &o->pl), 0);
	ck_assert_int_eq(pipe2(o->wake, O_NONBLOCK | O_CLOEXEC), 0);
	proxy_poller_add(o->pl, o->wake[0], PROXY_EV_IN, origin_on_wake, o);
	proxy_poller_add(o->pl, o->lfd, PROXY_EV_IN, origin_on_accept, o);
	ck_assert_int_eq(pthread_create(&o->th, NULL, origin_loop, o), 0);
}

static void origin_start(struct origin *o, enum origin_mode mode)
{
	origin_start_at(o, mode, "127.0.0.1");
}

static void origin_stop(struct origin *o)
{
	ck_assert_int_eq(write(o->wake[1], "x", 1), 1);
	pthread_join(o->th, NULL);
	for (size_t i = 0; i < o->n_conns; i++) {
		if (o->conns[i]->fd >= 0) {
			close(o->conns[i]->fd);
			free(o->conns[i]->buf);
		}
		free(o->conns[i]);
	}
	free(o->conns);
	proxy_poller_free(o->pl);
	close(o->lfd);
	close(o->wake[0]);
	close(o->wake[1]);
}

/* A sequential HTTP origin: one request per connection (the proxy asks for
 * Connection: close), canned responses by path, the last request kept. */
struct http_origin {
	int lfd, port;
	pthread_t th;
	atomic_int served;
	volatile bool stop;
	pthread_mutex_t mu;
	char last[8192];
};

static const struct {
	const char *path;
	const char *resp;
} http_canned[] = {
    {"/cl", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"},
    {"/chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n"
		 "\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"},
    {"/close", "HTTP/1.0 200 OK\r\nX-Kind: close-delimited\r\n\r\nbye-bye"},
    {"/continue", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"},
    {"/nocontent", "HTTP/1.1 204 No Content\r\nKeep-Alive: timeout=5\r\n\r\n"},
    {"/extra", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA-BYTES"},
    {"/conflict", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nokk"},
    {"/garbage", "NOT HTTP AT ALL\r\n\r\n"},
    {"/hop", "HTTP/1.1 200 OK\r\nConnection: close, X-Secret\r\nX-Secret: s\r\n"
	     "Proxy-Connection: keep-alive\r\nContent-Length: 1\r\n\r\nh"},
};

static void *http_origin_loop(void *arg)
{
	struct http_origin *o = arg;

	for (;;) {
		int fd = accept(o->lfd, NULL, NULL);
		char req[8192], path[256] = "";
		size_t n = 0;
		long cl = 0;
		const char *resp = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
		char dyn[9000];
		struct timeval tv = {5, 0};

		if (o->stop) {
			if (fd >= 0)
				close(fd);
			return NULL;
		}
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		n = cli_recv_until(fd, req, sizeof(req), "\r\n\r\n");
		sscanf(req, "%*s %255s", path);
		{
			const char *h = strcasestr(req, "\r\ncontent-length:");
			if (h)
				cl = strtol(h + 17, NULL, 10);
		}
		if (cl > 0 && (size_t)cl < sizeof(req) - n - 1)
			n += cli_recv_n(fd, req + n, (size_t)cl);
		req[n] = '\0';
		pthread_mutex_lock(&o->mu);
		snprintf(o->last, sizeof(o->last), "%s", req);
		pthread_mutex_unlock(&o->mu);
		for (size_t i = 0; i < sizeof(http_canned) / sizeof(http_canned[0]); i++)
			if (strcmp(path, http_canned[i].path) == 0)
				resp = http_canned[i].resp;
		if (strcmp(path, "/post") == 0) {
			const char *body = strstr(req, "\r\n\r\n") + 4;
			snprintf(dyn, sizeof(dyn),
				 "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%s", strlen(body),
				 body);
			resp = dyn;
		}
		send(fd, resp, strlen(resp), MSG_NOSIGNAL);
		shutdown(fd, SHUT_WR);
		cli_recv_all(fd, req, sizeof(req)); /* until the proxy closes */
		close(fd);
		atomic_fetch_add(&o->served, 1);
	}
}

static void http_origin_start(struct http_origin *o)
{
	memset(o, 0, sizeof(*o));
	pthread_mutex_init(&o->mu, NULL);
	o->lfd = fx_listen("127.0.0.1", &o->port);
	ck_assert_int_eq(pthread_create(&o->th, NULL, http_origin_loop, o), 0);
}

static void http_origin_last(struct http_origin *o, char *out, size_t n)
{
	pthread_mutex_lock(&o->mu);
	snprintf(out, n, "%s", o->last);
	pthread_mutex_unlock(&o->mu);
}

static void http_origin_stop(struct http_origin *o)
{
	o->stop = true;
	close(cli_connect(o->port));
	pthread_join(o->th, NULL);
	close(o->lfd);
	pthread_mutex_destroy(&o->mu);
}

#endif
