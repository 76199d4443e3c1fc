/* Chunked request bodies and the proxy's own answers, end to end through the real
 * proxy engine on both poller backends, with a loopback origin that decodes what it
 * gets: a several-MB chunked upload arrives byte for byte in canonical framing (no
 * extensions, no trailers), the connection is kept for the next request (pipelined or
 * not), a body trickling in one byte per read, a framing error mid-body answered 400
 * without the bad bytes reaching the origin, and every 4xx/5xx the proxy gives itself
 * carrying X-Halo-Error and one stderr line per host. */
#include <netinet/tcp.h>
#include <strings.h>

#include "tests/unit/proxy_fixture.h"

/* ------------------------------------------------------------ the origin */

/* Sequential, blocking: one request per connection (the proxy sends Connection:
 * close). Decodes a chunked body strictly enough to tell canonical framing. */
struct up_origin {
	int lfd, port;
	pthread_t th;
	volatile bool stop;
	pthread_mutex_t mu;
	char head[8192];
	char *body;
	size_t body_len, body_cap;
	bool chunked, canonical, complete;
	int requests;
	/* the reader */
	int fd;
	char buf[65536];
	size_t off, len;
};

static uint64_t fnv64(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static int rd_byte(struct up_origin *o)
{
	if (o->off == o->len) {
		ssize_t n = recv(o->fd, o->buf, sizeof(o->buf), 0);
		if (n <= 0)
			return -1;
		o->off = 0;
		o->len = (size_t)n;
	}
	return (unsigned char)o->buf[o->off++];
}

/* A line without its CRLF; false on EOF or a line not ending in CRLF. */
static bool rd_line(struct up_origin *o, char *line, size_t cap)
{
	size_t n = 0;
	int c;

	while ((c = rd_byte(o)) >= 0 && c != '\n' && n + 1 < cap)
		line[n++] = (char)c;
	line[n] = '\0';
	if (c != '\n' || n == 0 || line[n - 1] != '\r')
		return false;
	line[n - 1] = '\0';
	return true;
}

static void body_put(struct up_origin *o, int c)
{
	if (o->body_len == o->body_cap) {
		o->body_cap = o->body_cap ? o->body_cap * 2 : 65536;
		o->body = realloc(o->body, o->body_cap);
		ck_assert_ptr_nonnull(o->body);
	}
	o->body[o->body_len++] = (char)c;
}

static void read_chunked(struct up_origin *o)
{
	char line[256];

	o->canonical = true;
	for (;;) {
		unsigned long long size;
		char *end;

		if (!rd_line(o, line, sizeof(line)))
			return;
		if (strspn(line, "0123456789abcdef") != strlen(line) ||
		    (line[0] == '0' && line[1] != '\0'))
			o->canonical = false;
		size = strtoull(line, &end, 16);
		if (size == 0) { /* the proxy drops trailers: the empty line must follow */
			o->complete = rd_line(o, line, sizeof(line)) && line[0] == '\0';
			o->canonical = o->canonical && o->complete;
			return;
		}
		for (unsigned long long i = 0; i < size; i++) {
			int c = rd_byte(o);
			if (c < 0)
				return;
			body_put(o, c);
		}
		if (rd_byte(o) != '\r' || rd_byte(o) != '\n')
			return;
	}
}

static void origin_serve(struct up_origin *o)
{
	char line[8192], resp[256], msg[128];
	size_t hn = 0;
	long cl = 0;

	o->off = o->len = 0;
	pthread_mutex_lock(&o->mu);
	o->body_len = 0;
	o->chunked = o->canonical = o->complete = false;
	o->head[0] = '\0';
	while (rd_line(o, line, sizeof(line)) && line[0]) {
		hn += (size_t)snprintf(o->head + hn, sizeof(o->head) - hn, "%s\r\n", line);
		if (strcasecmp(line, "Transfer-Encoding: chunked") == 0)
			o->chunked = true;
		if (strncasecmp(line, "Content-Length:", 15) == 0)
			cl = strtol(line + 15, NULL, 10);
	}
	if (o->chunked) {
		read_chunked(o);
	} else {
		for (long i = 0; i < cl; i++)
			body_put(o, rd_byte(o));
		o->complete = true;
	}
	o->requests++;
	if (strstr(o->head, " /after "))
		snprintf(msg, sizeof(msg), "after");
	else
		snprintf(msg, sizeof(msg), "%zu %016llx", o->body_len,
			 (unsigned long long)fnv64(o->body, o->body_len));
	pthread_mutex_unlock(&o->mu);
	snprintf(resp, sizeof(resp), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%s",
		 strlen(msg), msg);
	send(o->fd, resp, strlen(resp), MSG_NOSIGNAL);
	shutdown(o->fd, SHUT_WR);
	while (rd_byte(o) >= 0) /* until the proxy closes */
		;
}

static void *up_origin_loop(void *arg)
{
	struct up_origin *o = arg;
	struct timeval tv = {10, 0};

	for (;;) {
		o->fd = accept(o->lfd, NULL, NULL);
		if (o->stop) {
			if (o->fd >= 0)
				close(o->fd);
			return NULL;
		}
		if (o->fd < 0)
			continue;
		setsockopt(o->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		origin_serve(o);
		close(o->fd);
	}
}

static void up_origin_start(struct up_origin *o)
{
	memset(o, 0, sizeof(*o));
	pthread_mutex_init(&o->mu, NULL);
	o->lfd = fx_listen("127.0.0.1", &o->port);
	ck_assert_int_eq(pthread_create(&o->th, NULL, up_origin_loop, o), 0);
}

static void up_origin_stop(struct up_origin *o)
{
	o->stop = true;
	close(cli_connect(o->port));
	pthread_join(o->th, NULL);
	close(o->lfd);
	pthread_mutex_destroy(&o->mu);
	free(o->body);
}

/* -------------------------------------------------------------- helpers */

/* One response with a Content-Length body: the status, the body in body. */
static int read_response(int fd, char *body, size_t cap)
{
	char head[4096];
	const char *cl;
	size_t n;

	cli_recv_until(fd, head, sizeof(head), "\r\n\r\n");
	cl = strcasestr(head, "\r\nContent-Length: ");
	n = cl ? strtoul(cl + 18, NULL, 10) : 0;
	ck_assert_uint_lt(n, cap);
	ck_assert_uint_eq(cli_recv_n(fd, body, n), n);
	body[n] = '\0';
	return status_of(head);
}

/* A chunked framing of body with upper-case sizes, extensions on some chunks and a
 * trailer; *n its length. */
static char *frame(const char *body, size_t len, size_t *n)
{
	char *out = malloc(len + len / 8 + 4096);
	size_t o = 0, i = 0;
	unsigned seed = 3;

	ck_assert_ptr_nonnull(out);
	while (i < len) {
		size_t sz = ((seed = seed * 1103515245u + 12345u) >> 16) % 70000 + 1;

		if (sz > len - i)
			sz = len - i;
		o += (size_t)sprintf(out + o, (i & 1) ? "%zX;ext=\"v\"\r\n" : "%06zx\r\n", sz);
		memcpy(out + o, body + i, sz);
		o += sz;
		i += sz;
		memcpy(out + o, "\r\n", 2);
		o += 2;
	}
	o += (size_t)sprintf(out + o, "0\r\nX-Sum: %016llx\r\n\r\n",
			     (unsigned long long)fnv64(body, len));
	*n = o;
	return out;
}

static void expect_sum(const char *got, const char *body, size_t len)
{
	char want[64];

	snprintf(want, sizeof(want), "%zu %016llx", len, (unsigned long long)fnv64(body, len));
	ck_assert_str_eq(got, want);
}

/* ------------------------------------------------------------ the upload */

START_TEST(chunked_upload_intact)
{
	const size_t len = 5u << 20;
	struct fx_proxy f;
	struct up_origin o;
	char *body = malloc(len), *framed, req[512], resp[256];
	size_t flen;
	int fd;

	ck_assert_ptr_nonnull(body);
	for (size_t i = 0; i < len; i++)
		body[i] = (char)((i * 2654435761u) >> 13); /* CR, LF and NUL included */
	framed = frame(body, len, &flen);
	up_origin_start(&o);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	fd = cli_connect(f.http_port);
	snprintf(req, sizeof(req),
		 "PUT http://origin.test:%d/up HTTP/1.1\r\nHost: origin.test:%d\r\n"
		 "Transfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n",
		 o.port, o.port);
	cli_sends(fd, req);
	for (size_t off = 0; off < flen; off += 7777)
		cli_send(fd, framed + off, flen - off < 7777 ? flen - off : 7777);
	ck_assert_int_eq(read_response(fd, resp, sizeof(resp)), 200);
	expect_sum(resp, body, len);
	pthread_mutex_lock(&o.mu);
	ck_assert(o.chunked && o.complete);
	ck_assert_msg(o.canonical, "the origin got extensions, trailers or odd sizes");
	ck_assert(o.body_len == len && memcmp(o.body, body, len) == 0);
	ck_assert_ptr_nonnull(strstr(o.head, "PUT /up HTTP/1.1\r\n"));
	ck_assert_ptr_null(strcasestr(o.head, "Trailer:"));
	pthread_mutex_unlock(&o.mu);
	/* Kept: the next request on the same connection is parsed and decided again. */
	snprintf(req, sizeof(req),
		 "GET http://origin.test:%d/after HTTP/1.1\r\nHost: origin.test:%d\r\n\r\n", o.port,
		 o.port);
	cli_sends(fd, req);
	ck_assert_int_eq(read_response(fd, resp, sizeof(resp)), 200);
	ck_assert_str_eq(resp, "after");
	cli_sends(fd, "GET http://pastebin.com/ HTTP/1.1\r\nHost: pastebin.com\r\n\r\n");
	ck_assert_int_eq(read_response(fd, resp, sizeof(resp)), 403);
	close(fd);
	fx_stop(&f);
	up_origin_stop(&o);
	ck_assert_uint_eq(f.st.allowed, 2);
	ck_assert_uint_eq(f.st.denied, 1);
	ck_assert_uint_ge(f.st.bytes_up, flen);
	free(framed);
	free(body);
}
END_TEST

/* The whole chunked request and the next one in one write; then a body trickling in
 * one byte per read. */
START_TEST(chunked_pipelined_and_trickled)
{
	struct fx_proxy f;
	struct up_origin o;
	char req[1024], resp[256];
	static const char tiny[] = "7\r\nchunked\r\n1;x\r\n!\r\n0\r\n\r\n";
	int fd, one = 1;

	up_origin_start(&o);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	fd = cli_connect(f.http_port);
	snprintf(req, sizeof(req),
		 "POST http://origin.test:%d/p HTTP/1.1\r\nHost: origin.test:%d\r\n"
		 "Transfer-Encoding: chunked\r\n\r\n%s"
		 "GET http://origin.test:%d/after HTTP/1.1\r\nHost: origin.test:%d\r\n\r\n",
		 o.port, o.port, tiny, o.port, o.port);
	cli_sends(fd, req);
	ck_assert_int_eq(read_response(fd, resp, sizeof(resp)), 200);
	expect_sum(resp, "chunked!", 8);
	ck_assert_int_eq(read_response(fd, resp, sizeof(resp)), 200);
	ck_assert_str_eq(resp, "after");
	/* one byte at a time, each its own read on the proxy's side */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	snprintf(req, sizeof(req),
		 "POST http://origin.test:%d/p HTTP/1.1\r\nHost: origin.test:%d\r\n"
		 "Transfer-Encoding: chunked\r\n\r\n",
		 o.port, o.port);
	cli_sends(fd, req);
	for (size_t i = 0; i < sizeof(tiny) - 1; i++) {
		cli_send(fd, tiny + i, 1);
		usleep(2000);
	}
	ck_assert_int_eq(read_response(fd, resp, sizeof(resp)), 200);
	expect_sum(resp, "chunked!", 8);
	close(fd);
	fx_stop(&f);
	up_origin_stop(&o);
	ck_assert_uint_eq(f.st.allowed, 3);
}
END_TEST

/* A framing error after the head went out: 400 with its why, and the origin never
 * sees the bad bytes (its body stays incomplete). */
START_TEST(chunked_error_mid_body)
{
	struct fx_proxy f;
	struct up_origin o;
	char req[512], resp[2048], *log;
	cJSON *recs[2];
	int fd;

	up_origin_start(&o);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	fd = cli_connect(f.http_port);
	snprintf(req, sizeof(req),
		 "PUT http://origin.test:%d/up HTTP/1.1\r\nHost: origin.test:%d\r\n"
		 "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
		 o.port, o.port);
	cli_sends(fd, req);
	usleep(100 * 1000); /* the head and the first chunk reach the origin */
	cli_sends(fd, "3\r\nabcX\r\n0\r\n\r\n");
	cli_recv_all(fd, resp, sizeof(resp));
	ck_assert_int_eq(status_of(resp), 400);
	ck_assert_ptr_nonnull(strstr(
	    resp, "\r\nX-Halo-Error: chunked body: chunk data longer than its chunk size\r\n"));
	ck_assert_ptr_null(strstr(resp, "X-Halo-Deny"));
	close(fd);
	fx_stop(&f);
	up_origin_stop(&o);
	ck_assert_int_eq(o.requests, 1);
	ck_assert(o.chunked && !o.complete);
	/* "hello" only: what was decoded in the read that held the error is not sent */
	ck_assert_uint_eq(o.body_len, 5);
	ck_assert_int_eq(fx_audit(&f, recs, 2), 1);
	ck_assert_str_eq(js(recs[0], "decision"), "allow");
	ck_assert_str_eq(js(recs[0], "error"),
			 "chunked body: chunk data longer than its chunk size");
	fx_free_recs(recs, 1);
	log = fx_slurp(f.log);
	ck_assert_msg(
	    strstr(log, "halo-run: egress error: origin.test:") &&
		strstr(log, ": chunked body: chunk data longer than its chunk size (400)\n"),
	    "log: %s", log);
	free(log);
}
END_TEST

/* ------------------------------------------------------- our own answers */

static void short_timers(struct proxy_options *o)
{
	o->head_timeout_ms = 300;
	o->connect_timeout_ms = 600;
}

/* A listener whose backlog is full: connects to it hang (as in test_proxy.c). */
static int hanging_listener(int *port, int *filler)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t sl = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sl), 0);
	ck_assert_int_eq(listen(fd, 0), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &sl), 0);
	*port = ntohs(a.sin_port);
	*filler = cli_connect(*port);
	return fd;
}

static int bound_not_listening(int *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t sl = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sl), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &sl), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

START_TEST(own_answers_say_why)
{
	static const struct {
		const char *req; /* %d: the port */
		int port;	 /* 0: a closed one, 1: a hanging one */
		int status;
		const char *error;
	} rows[] = {
	    {"GET http://origin.test:%d/ HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: "
	     "chunked\r\n\r\n",
	     0, 400, "Content-Length together with Transfer-Encoding"},
	    {"GET http://origin.test:%d/ HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 0,
	     400, "Transfer-Encoding: chunked is not the final coding"},
	    {"GET http://origin.test:%d/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	     "Transfer-Encoding: chunked\r\n\r\n",
	     0, 400, "duplicate Transfer-Encoding"},
	    {"GET http://origin.test:%d/ HTTP/1.1\r\nX: 1\r\n y\r\n\r\n", 0, 400,
	     "obs-fold (header line starting with whitespace) is not accepted"},
	    {"GET http://origin.test/ HTTP/2.0\r\n\r\n", 0, 505,
	     "HTTP version not supported (only HTTP/1.0 and HTTP/1.1)"},
	    {"GET http://origin.test:%d/ HTTP/1.1\r\n", 0, 408, "request head timed out"},
	    {"GET http://origin.test:%d/ HTTP/1.1\r\n\r\n", 0, 502, "connection refused"},
	    {"GET http://nxdomain.test/ HTTP/1.1\r\n\r\n", 0, 502, "no such host"},
	    {"GET http://origin.test:%d/ HTTP/1.1\r\n\r\n", 1, 504, "connect timed out"},
	    {"GET http://origin.test:%d/ HTTP/1.1\r\n\r\n", 0, 502, "connection refused"},
	};
	struct fx_proxy f;
	char req[512], resp[4096], want[1024], *log;
	int closed, hanging, filler, lfd, fd;

	/* Bound and never listening: refused, and its port cannot be handed to the
	 * proxy's own listener (a port closed before fx_start could be, and the proxy
	 * then forwarded row 6 to itself: "origin-form target"). */
	int refuser = bound_not_listening(&closed);
	lfd = hanging_listener(&hanging, &filler);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, short_timers);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		fd = cli_connect(f.http_port);
		snprintf(req, sizeof(req), rows[i].req, rows[i].port ? hanging : closed);
		cli_sends(fd, req);
		cli_recv_all(fd, resp, sizeof(resp));
		ck_assert_msg(status_of(resp) == rows[i].status, "row %zu: %s", i, resp);
		snprintf(want, sizeof(want), "\r\nX-Halo-Error: %s\r\n", rows[i].error);
		ck_assert_msg(strstr(resp, want), "row %zu: no [%s] in [%s]", i, want, resp);
		ck_assert_msg(strstr(resp, rows[i].error) < strstr(resp, "\r\n\r\n") &&
				  strstr(strstr(resp, "\r\n\r\n"), rows[i].error),
			      "row %zu: the body names the error too: %s", i, resp);
		ck_assert_ptr_null(strstr(resp, "X-Halo-Deny"));
		close(fd);
	}
	/* a denial keeps X-Halo-Deny and no X-Halo-Error */
	fd = cli_connect(f.http_port);
	cli_sends(fd, "GET http://pastebin.com/ HTTP/1.1\r\n\r\n");
	cli_recv_all(fd, resp, sizeof(resp));
	ck_assert_int_eq(status_of(resp), 403);
	ck_assert_ptr_nonnull(strstr(resp, "X-Halo-Deny: "));
	ck_assert_ptr_null(strstr(resp, "X-Halo-Error"));
	close(fd);
	fx_stop(&f);
	close(filler);
	close(lfd);
	close(refuser);
	/* One line per host (origin.test: its first error only; the two 502s and the
	 * 504 to it are not repeated), one per why where no host is named yet. */
	log = fx_slurp(f.log);
	snprintf(want, sizeof(want),
		 "halo-run: egress error: origin.test:%d: Content-Length together with "
		 "Transfer-Encoding (400)\n"
		 "halo-run: egress error: obs-fold (header line starting with whitespace) is not "
		 "accepted (400)\n"
		 "halo-run: egress error: HTTP version not supported (only HTTP/1.0 and HTTP/1.1) "
		 "(505)\n"
		 "halo-run: egress error: request head timed out (408)\n"
		 "halo-run: egress error: nxdomain.test:80: no such host (502)\n"
		 "halo-run: egress denied: pastebin.com:80 (deniedDomains[0] pastebin.com)\n",
		 closed);
	ck_assert_str_eq(log, want);
	free(log);
}
END_TEST

static void quiet_and_cap(struct proxy_options *o)
{
	o->quiet = true;
	o->max_conns = 1;
}

/* --quiet: the answers still carry X-Halo-Error, nothing goes to the log; the
 * connection cap's 503 says why too. */
START_TEST(quiet_and_overload)
{
	struct fx_proxy f;
	char resp[2048], *log;
	int a, b;

	fx_start(&f, _i, POLICY_LOOPBACK_OK, quiet_and_cap);
	a = cli_connect(f.http_port);
	cli_sends(a, "GET http://origin.test:1/ HTTP/1.1\r\n"); /* holds the one place */
	usleep(100 * 1000);
	b = cli_connect(f.http_port);
	cli_recv_all(b, resp, sizeof(resp));
	ck_assert_int_eq(status_of(resp), 503);
	ck_assert_ptr_nonnull(
	    strstr(resp, "\r\nX-Halo-Error: too many open connections, retry later\r\n"));
	close(b);
	cli_sends(a, "Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n");
	cli_recv_all(a, resp, sizeof(resp));
	ck_assert_int_eq(status_of(resp), 400);
	ck_assert_ptr_nonnull(strstr(resp, "X-Halo-Error: Content-Length together with"));
	close(a);
	fx_stop(&f);
	log = fx_slurp(f.log);
	ck_assert_str_eq(log, "");
	free(log);
}
END_TEST

static Suite *chunked_suite(void)
{
	Suite *s = suite_create("proxy-chunked");
	TCase *tc = tcase_create("loopback");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, chunked_upload_intact, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, chunked_pipelined_and_trickled, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, chunked_error_mid_body, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, own_answers_say_why, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, quiet_and_overload, FIRST_BACKEND, END_BACKEND);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(chunked_suite)
