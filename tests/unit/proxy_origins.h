/* Local origins for the proxy tests (included by proxy_fixture.h): a poller-driven
 * server that echoes, stays silent, or floods; and a sequential HTTP server with canned
 * responses that keeps the last request it saw. Loopback addresses only. */
#ifndef HALO_TESTS_PROXY_ORIGINS_H
#define HALO_TESTS_PROXY_ORIGINS_H

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
	char all[32768]; /* every request, each followed by "\n--\n" */
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
		if (strlen(o->all) + n + 5 < sizeof(o->all)) {
			strcat(o->all, req);
			strcat(o->all, "\n--\n");
		}
		pthread_mutex_unlock(&o->mu);
		for (size_t i = 0; i < sizeof(http_canned) / sizeof(http_canned[0]); i++)
			if (strcmp(path, http_canned[i].path) == 0)
				resp = http_canned[i].resp;
		if (strcmp(path, "/late") == 0) { /* head and body in one write, late */
			int w = snprintf(dyn, sizeof(dyn),
					 "HTTP/1.1 200 OK\r\nContent-Length: 4000\r\n\r\n");
			memset(dyn + w, 'B', 4000);
			dyn[w + 4000] = '\0';
			usleep(300 * 1000);
			resp = dyn;
		}
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

static void http_origin_all(struct http_origin *o, char *out, size_t n)
{
	pthread_mutex_lock(&o->mu);
	snprintf(out, n, "%s", o->all);
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
