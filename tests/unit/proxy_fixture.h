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
	"                   slow.test, nxdomain.test, twoaddr.test, 127.0.0.1, '::1']\n"           \
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
	    {"origin.test", {"127.0.0.1"}, 0},
	    {"origin6.test", {"::1"}, 0},
	    {"second.test", {"127.0.0.2"}, 0},
	    /* Answers with a refused address put a loopback one first: were the check
	     * broken, the dial would go to the local origin, never further. */
	    {"mixed.test", {"127.0.0.1", "10.0.0.1"}, 0},
	    {"meta.test", {"127.0.0.1", "169.254.169.254"}, 0},
	    {"slow.test", {"127.0.0.1"}, 1500},
	    {"twoaddr.test", {"127.0.0.3", "127.0.0.1"}, 0}, /* the first one hangs */
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

/* A port that refuses on both 127.0.0.1 and [::1] and that nobody can take while the
 * test runs: bound on both families, never listened on (a SYN to a bound socket that
 * does not listen is answered with a reset). Closing a listener instead would free the
 * number for the next bind(port 0), the proxy's own listeners included. */
static int fx_refusing_port(int fds[2])
{
	for (int tries = 0; tries < 100; tries++) {
		struct sockaddr_in6 s6 = {.sin6_family = AF_INET6,
					  .sin6_addr = IN6ADDR_LOOPBACK_INIT};
		struct sockaddr_in s4 = {.sin_family = AF_INET};
		socklen_t sl = sizeof(s6);

		fds[0] = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
		fds[1] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		ck_assert(fds[0] >= 0 && fds[1] >= 0);
		ck_assert_int_eq(bind(fds[0], (struct sockaddr *)&s6, sizeof(s6)), 0);
		ck_assert_int_eq(getsockname(fds[0], (struct sockaddr *)&s6, &sl), 0);
		s4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		s4.sin_port = s6.sin6_port;
		if (bind(fds[1], (struct sockaddr *)&s4, sizeof(s4)) == 0)
			return ntohs(s6.sin6_port);
		close(fds[0]);
		close(fds[1]);
	}
	ck_abort_msg("no port free on both 127.0.0.1 and [::1] in 100 tries");
	return -1;
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
	/* its fd now, as the tests that count their fds around a tunnel expect */
	ck_assert_int_eq(proxy_resolver_watch(f->px->res), 0);
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

#include "tests/unit/proxy_origins.h"

#endif
