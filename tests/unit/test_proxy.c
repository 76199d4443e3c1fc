/* The proxy in-process on real loopback sockets, every test on both poller backends:
 * CONNECT (allow, deny with the 403 body and X-Halo-Deny, pipelined bytes, IP
 * literals), address refusal before any connect (loopback without allowPrivate, a
 * mixed answer, a metadata answer), DNS failure and timeout (the late answer dropped),
 * connection refused, absolute-form forwarding (rewrite, keep-alive with every request
 * decided again, chunked/close-delimited/1xx/204 responses, request bodies, Host
 * mismatch), SOCKS5 (each ATYP, deny, BIND/UDP → 07), head timeout, half-close, the
 * denial line (once per host) and the summary. */
#include "tests/unit/proxy_fixture.h"

static void short_timeouts(struct proxy_options *o)
{
	o->head_timeout_ms = 300;
	o->dns_timeout_ms = 300;
}

/* ---------------------------------------------------------------- CONNECT */

START_TEST(connect_allowed_tunnel)
{
	struct fx_proxy f;
	struct origin o;
	char head[512], target[64], buf[64], req[256];
	cJSON *recs[8];
	int fd, n;

	origin_start(&o, ORIGIN_ECHO);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	snprintf(target, sizeof(target), "origin.test:%d", o.port);
	/* Pipelined: the first tunnel bytes travel with the CONNECT head. */
	fd = cli_connect(f.http_port);
	snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\nearly", target, target);
	cli_sends(fd, req);
	cli_recv_until(fd, head, sizeof(head), "\r\n\r\n");
	ck_assert_str_eq(head, "HTTP/1.1 200 Connection established\r\n\r\n");
	ck_assert_uint_eq(cli_recv_n(fd, buf, 5), 5);
	ck_assert(memcmp(buf, "early", 5) == 0);
	cli_sends(fd, "ping!");
	ck_assert_uint_eq(cli_recv_n(fd, buf, 5), 5);
	ck_assert(memcmp(buf, "ping!", 5) == 0);
	close(fd);
	usleep(100 * 1000);
	fx_stop(&f);
	origin_stop(&o);
	n = fx_audit(&f, recs, 8);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(js(recs[0], "proto"), "connect");
	ck_assert_str_eq(js(recs[0], "host"), "origin.test");
	ck_assert_int_eq((int)jnum(recs[0], "port"), o.port);
	ck_assert_str_eq(js(recs[0], "decision"), "allow");
	ck_assert_str_eq(js(recs[0], "rule"), "allowedDomains[0] origin.test");
	ck_assert_str_eq(js(recs[0], "address"), "127.0.0.1");
	ck_assert_ptr_null(js(recs[0], "class"));
	ck_assert_int_eq((int)jnum(recs[0], "bytes_up"), 10);
	ck_assert_int_eq((int)jnum(recs[0], "bytes_down"), 10);
	ck_assert(jnum(recs[0], "duration_ms") >= 0);
	ck_assert_int_eq(strlen(js(recs[0], "time")), 24); /* 2024-01-02T03:04:05.678Z */
	ck_assert_int_eq(js(recs[0], "time")[23], 'Z');
	fx_free_recs(recs, n);
	ck_assert_uint_eq(f.st.allowed, 1);
	ck_assert_uint_eq(f.st.conns_open, 0);
}
END_TEST

START_TEST(connect_denied_403)
{
	struct fx_proxy f;
	char head[1024], body[256];
	char *log;
	cJSON *recs[8];
	int fd, n;

	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	for (int round = 0; round < 2; round++) {
		fd = cli_connect_via(&f, "pastebin.com:443", head, sizeof(head));
		ck_assert_int_eq(status_of(head), 403);
		ck_assert_ptr_nonnull(strstr(
		    head, "\r\nX-Halo-Deny: pastebin.com (deniedDomains[0] pastebin.com)\r\n"));
		ck_assert_ptr_nonnull(strstr(head, "\r\nConnection: close\r\n"));
		cli_recv_all(fd, body, sizeof(body));
		ck_assert_str_eq(body, "blocked by egress policy: pastebin.com (deniedDomains[0] "
				       "pastebin.com)\n");
		close(fd);
	}
	fd = cli_connect_via(&f, "other.example:443", head, sizeof(head));
	ck_assert_int_eq(status_of(head), 403);
	ck_assert_ptr_nonnull(strstr(head, "X-Halo-Deny: other.example (default deny)\r\n"));
	close(fd);
	fx_stop(&f);
	log = fx_slurp(f.log);
	ck_assert_str_eq(log, "halo-run: egress denied: pastebin.com:443 (deniedDomains[0] "
			      "pastebin.com)\n"
			      "halo-run: egress denied: other.example:443 (default deny)\n");
	free(log);
	n = fx_audit(&f, recs, 8);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(js(recs[0], "decision"), "deny");
	ck_assert_str_eq(js(recs[0], "rule"), "deniedDomains[0] pastebin.com");
	ck_assert_ptr_null(js(recs[0], "address"));
	ck_assert_str_eq(js(recs[2], "rule"), "default deny");
	fx_free_recs(recs, n);
	ck_assert_uint_eq(f.st.denied, 3);
}
END_TEST

static void quiet(struct proxy_options *o)
{
	o->quiet = true;
}

START_TEST(quiet_suppresses_denial_line)
{
	struct fx_proxy f;
	char head[1024];
	char *log;

	fx_start(&f, _i, POLICY_LOOPBACK_OK, quiet);
	close(cli_connect_via(&f, "pastebin.com:443", head, sizeof(head)));
	ck_assert_int_eq(status_of(head), 403);
	fx_stop(&f);
	log = fx_slurp(f.log);
	ck_assert_str_eq(log, "");
	free(log);
}
END_TEST

START_TEST(connect_ip_literals)
{
	struct fx_proxy f;
	struct origin o4, o6;
	char head[512], target[64], buf[8];
	int fd;

	origin_start(&o4, ORIGIN_ECHO);
	origin_start_at(&o6, ORIGIN_ECHO, "::1");
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	snprintf(target, sizeof(target), "127.0.0.1:%d", o4.port);
	fd = cli_connect_via(&f, target, head, sizeof(head));
	ck_assert_int_eq(status_of(head), 200);
	cli_sends(fd, "v4");
	ck_assert_uint_eq(cli_recv_n(fd, buf, 2), 2);
	close(fd);
	snprintf(target, sizeof(target), "[::1]:%d", o6.port);
	fd = cli_connect_via(&f, target, head, sizeof(head));
	ck_assert_int_eq(status_of(head), 200);
	cli_sends(fd, "v6");
	ck_assert_uint_eq(cli_recv_n(fd, buf, 2), 2);
	ck_assert(memcmp(buf, "v6", 2) == 0);
	close(fd);
	/* A spelling Decide does not accept as a literal is denied, never dialled. */
	fd = cli_connect_via(&f, "2130706433:80", head, sizeof(head));
	ck_assert_int_eq(status_of(head), 403);
	close(fd);
	fx_stop(&f);
	origin_stop(&o4);
	origin_stop(&o6);
}
END_TEST

/* Without allowPrivate, 127.0.0.1 is refused after resolution and before any
 * connect: the origin never sees a connection. */
START_TEST(loopback_refused_without_allow_private)
{
	struct fx_proxy f;
	struct origin o;
	char head[1024], target[64];
	cJSON *recs[4];
	int n;

	origin_start(&o, ORIGIN_ECHO);
	fx_start(&f, _i, POLICY_NO_PRIVATE, NULL);
	snprintf(target, sizeof(target), "origin.test:%d", o.port);
	close(cli_connect_via(&f, target, head, sizeof(head)));
	ck_assert_int_eq(status_of(head), 403);
	ck_assert_ptr_nonnull(strstr(head, "X-Halo-Deny: origin.test (address 127.0.0.1 is "
					   "loopback, not in allowPrivate)\r\n"));
	snprintf(target, sizeof(target), "127.0.0.1:%d", o.port);
	close(cli_connect_via(&f, target, head, sizeof(head)));
	ck_assert_int_eq(status_of(head), 403);
	fx_stop(&f);
	ck_assert_int_eq(atomic_load(&o.accepted), 0);
	origin_stop(&o);
	n = fx_audit(&f, recs, 4);
	ck_assert_int_eq(n, 2);
	for (int i = 0; i < 2; i++) {
		ck_assert_str_eq(js(recs[i], "decision"), "deny");
		ck_assert_str_eq(js(recs[i], "address"), "127.0.0.1");
		ck_assert_str_eq(js(recs[i], "class"), "loopback");
	}
	fx_free_recs(recs, n);
}
END_TEST

/* Runs only after the loopback row above has shown that refusal works: a mixed
 * answer (127.0.0.1 + 10.0.0.1) and a metadata answer are refused as a whole. */
START_TEST(private_answers_refused_before_connect)
{
	struct fx_proxy f;
	struct origin o;
	char head[1024], target[64];
	cJSON *recs[4];
	int n;

	origin_start(&o, ORIGIN_ECHO);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	snprintf(target, sizeof(target), "mixed.test:%d", o.port);
	close(cli_connect_via(&f, target, head, sizeof(head)));
	ck_assert_int_eq(status_of(head), 403);
	close(cli_connect_via(&f, "meta.test:80", head, sizeof(head)));
	ck_assert_int_eq(status_of(head), 403);
	ck_assert_ptr_nonnull(strstr(head, "address 169.254.169.254 is metadata"));
	fx_stop(&f);
	ck_assert_int_eq(atomic_load(&o.accepted), 0);
	origin_stop(&o);
	n = fx_audit(&f, recs, 4);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(js(recs[0], "address"), "10.0.0.1");
	ck_assert_str_eq(js(recs[0], "class"), "private");
	ck_assert_str_eq(js(recs[1], "class"), "metadata");
	fx_free_recs(recs, n);
}
END_TEST

START_TEST(dns_failure_and_timeout)
{
	struct fx_proxy f;
	struct origin o;
	char head[1024], target[64];
	cJSON *recs[4];
	uint64_t t0;
	int n;

	origin_start(&o, ORIGIN_ECHO);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, short_timeouts);
	close(cli_connect_via(&f, "nxdomain.test:443", head, sizeof(head)));
	ck_assert_int_eq(status_of(head), 502);
	t0 = proxy_now_ms();
	close(cli_connect_via(&f, "slow.test:443", head, sizeof(head)));
	ck_assert_int_eq(status_of(head), 504);
	ck_assert_uint_lt(proxy_now_ms() - t0, 1200);
	/* The late answer arrives while the proxy keeps serving: dropped safely. */
	usleep(1500 * 1000);
	snprintf(target, sizeof(target), "origin.test:%d", o.port);
	close(cli_connect_via(&f, target, head, sizeof(head)));
	ck_assert_int_eq(status_of(head), 200);
	fx_stop(&f);
	origin_stop(&o);
	n = fx_audit(&f, recs, 4);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(js(recs[0], "decision"), "allow");
	ck_assert_str_eq(js(recs[0], "error"), "no such host");
	ck_assert_str_eq(js(recs[1], "error"), "name resolution timed out");
	fx_free_recs(recs, n);
}
END_TEST

START_TEST(connect_refused_502)
{
	struct fx_proxy f;
	char head[1024], target[64];
	int port = 0, lfd;
	cJSON *recs[2];

	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	lfd = fx_listen("127.0.0.1", &port);
	close(lfd); /* nothing listens there now */
	snprintf(target, sizeof(target), "origin.test:%d", port);
	close(cli_connect_via(&f, target, head, sizeof(head)));
	ck_assert_int_eq(status_of(head), 502);
	fx_stop(&f);
	ck_assert_int_eq(fx_audit(&f, recs, 2), 1);
	ck_assert_str_eq(js(recs[0], "error"), "connection refused");
	ck_assert_str_eq(js(recs[0], "address"), "127.0.0.1");
	ck_assert_str_eq(js(recs[0], "decision"), "allow");
	fx_free_recs(recs, 1);
}
END_TEST

START_TEST(head_timeout_408)
{
	struct fx_proxy f;
	char resp[1024];
	uint64_t t0;
	int fd;

	fx_start(&f, _i, POLICY_LOOPBACK_OK, short_timeouts);
	fd = cli_connect(f.http_port);
	cli_sends(fd, "CONNECT origin.te");
	t0 = proxy_now_ms();
	cli_recv_all(fd, resp, sizeof(resp));
	ck_assert_int_eq(status_of(resp), 408);
	ck_assert_uint_ge(proxy_now_ms() - t0, 250);
	ck_assert_uint_lt(proxy_now_ms() - t0, 2000);
	close(fd);
	/* SOCKS5: a stalled greeting is hung up on. */
	fd = cli_connect(f.socks_port);
	cli_send(fd, "\x05\x02", 2);
	ck_assert_uint_eq(cli_recv_all(fd, resp, sizeof(resp)), 0);
	close(fd);
	fx_stop(&f);
}
END_TEST

START_TEST(bad_heads_answered)
{
	static const struct {
		const char *req;
		int status;
	} rows[] = {
	    {"GET / HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	    {"GET http://origin.test/ HTTP/1.1\r\nHost: other.test\r\n\r\n", 400},
	    {"CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test\r\nX: a\rb\r\n\r\n", 400},
	    {"POST http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\nTransfer-Encoding: "
	     "chunked\r\nContent-Length: 3\r\n\r\n",
	     400},
	};
	struct fx_proxy f;
	char resp[2048];

	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int fd = cli_connect(f.http_port);
		cli_sends(fd, rows[i].req);
		cli_recv_all(fd, resp, sizeof(resp));
		ck_assert_msg(status_of(resp) == rows[i].status, "row %zu: %s", i, resp);
		close(fd);
	}
	{ /* 414: a request line beyond 8 KiB */
		char *big = malloc(9000);
		int fd = cli_connect(f.http_port);
		memset(big, 'a', 8999);
		memcpy(big, "GET http://origin.test/", 23);
		big[8999] = '\0';
		cli_sends(fd, big);
		cli_recv_all(fd, resp, sizeof(resp));
		ck_assert_int_eq(status_of(resp), 414);
		close(fd);
		free(big);
	}
	fx_stop(&f);
	ck_assert_uint_eq(f.st.allowed + f.st.denied, 0); /* no decision was taken */
}
END_TEST

START_TEST(half_close_propagated)
{
	struct fx_proxy f;
	struct origin o;
	char head[512], target[64], buf[64];
	int fd;

	origin_start(&o, ORIGIN_ECHO);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	snprintf(target, sizeof(target), "origin.test:%d", o.port);
	fd = cli_connect_via(&f, target, head, sizeof(head));
	ck_assert_int_eq(status_of(head), 200);
	cli_sends(fd, "last words");
	ck_assert_int_eq(shutdown(fd, SHUT_WR), 0);
	/* The origin sees EOF only through the proxy's shutdown, echoes, and closes:
	 * the client reads everything, then EOF. */
	ck_assert_uint_eq(cli_recv_all(fd, buf, sizeof(buf)), 10);
	ck_assert_str_eq(buf, "last words");
	close(fd);
	usleep(100 * 1000);
	fx_stop(&f);
	origin_stop(&o);
	ck_assert_uint_eq(f.st.conns_open, 0);
	ck_assert_uint_eq(f.st.bytes_up, 10);
	ck_assert_uint_eq(f.st.bytes_down, 10);
}
END_TEST

/* ---------------------------------------------------------------- forward */

START_TEST(forward_keepalive_decided_again)
{
	struct fx_proxy f;
	struct http_origin o;
	char req[512], resp[2048], last[8192];
	cJSON *recs[8];
	int fd, n;

	http_origin_start(&o);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	fd = cli_connect(f.http_port);
	snprintf(req, sizeof(req),
		 "GET http://origin.test:%d/cl HTTP/1.1\r\nHost: origin.test:%d\r\n"
		 "Proxy-Connection: keep-alive\r\nX-Mine: 1\r\n\r\n",
		 o.port, o.port);
	cli_sends(fd, req);
	cli_recv_until(fd, resp, sizeof(resp), "\r\n\r\n");
	ck_assert_str_eq(resp, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
	ck_assert_uint_eq(cli_recv_n(fd, resp, 5), 5);
	ck_assert(memcmp(resp, "hello", 5) == 0);
	http_origin_last(&o, last, sizeof(last));
	snprintf(
	    req, sizeof(req),
	    "GET /cl HTTP/1.1\r\nHost: origin.test:%d\r\nX-Mine: 1\r\nConnection: close\r\n\r\n",
	    o.port);
	ck_assert_str_eq(last, req);
	/* Same connection: a chunked response, then a denied host. */
	snprintf(req, sizeof(req), "GET http://origin.test:%d/chunked HTTP/1.1\r\nHost: x\r\n\r\n",
		 o.port);
	cli_sends(fd, req);
	cli_recv_until(fd, resp, sizeof(resp), "\r\n\r\n");
	ck_assert_int_eq(status_of(resp), 400); /* Host disagrees with the target */
	close(fd);

	fd = cli_connect(f.http_port);
	snprintf(req, sizeof(req),
		 "GET http://origin.test:%d/chunked HTTP/1.1\r\nHost: origin.test:%d\r\n\r\n",
		 o.port, o.port);
	cli_sends(fd, req);
	cli_recv_until(fd, resp, sizeof(resp), "X-Trailer: t\r\n\r\n");
	ck_assert_ptr_nonnull(strstr(resp, "\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\n"));
	ck_assert_ptr_null(strstr(resp, "Connection:"));
	cli_sends(fd, "GET http://pastebin.com/ HTTP/1.1\r\nHost: pastebin.com\r\n\r\n");
	cli_recv_until(fd, resp, sizeof(resp), "\r\n\r\n");
	ck_assert_int_eq(status_of(resp), 403);
	ck_assert_ptr_nonnull(strstr(resp, "X-Halo-Deny: pastebin.com (deniedDomains[0]"));
	close(fd);
	fx_stop(&f);
	http_origin_stop(&o);
	n = fx_audit(&f, recs, 8);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(js(recs[0], "proto"), "http");
	ck_assert_str_eq(js(recs[0], "decision"), "allow");
	ck_assert_int_eq((int)jnum(recs[0], "bytes_down"), (int)strlen(http_canned[0].resp));
	ck_assert_str_eq(js(recs[1], "decision"), "allow");
	ck_assert_str_eq(js(recs[2], "decision"), "deny");
	ck_assert_str_eq(js(recs[2], "host"), "pastebin.com");
	ck_assert_int_eq((int)jnum(recs[2], "port"), 80);
	fx_free_recs(recs, n);
}
END_TEST

/* Each row: path, what the client must receive in full, and whether the proxy keeps
 * the client connection (then a second request on it must work). */
START_TEST(forward_response_framing)
{
	static const struct {
		const char *path;
		const char *want;
		bool keep;
	} rows[] = {
	    {"/close",
	     "HTTP/1.0 200 OK\r\nX-Kind: close-delimited\r\nConnection: close\r\n\r\nbye-bye",
	     false},
	    {"/continue",
	     "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true},
	    {"/nocontent", "HTTP/1.1 204 No Content\r\n\r\n", true},
	    {"/extra", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true},
	    {"/conflict",
	     "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\nConnection: "
	     "close\r\n\r\nokk",
	     false},
	    {"/hop", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nh", true},
	};
	struct fx_proxy f;
	struct http_origin o;
	char req[512], resp[4096];

	http_origin_start(&o);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int fd = cli_connect(f.http_port);
		size_t want = strlen(rows[i].want);

		snprintf(req, sizeof(req),
			 "GET http://origin.test:%d%s HTTP/1.1\r\nHost: origin.test:%d\r\n\r\n",
			 o.port, rows[i].path, o.port);
		cli_sends(fd, req);
		if (rows[i].keep) {
			ck_assert_uint_eq(cli_recv_n(fd, resp, want), want);
			resp[want] = '\0';
			ck_assert_msg(strcmp(resp, rows[i].want) == 0, "%s: got [%s]", rows[i].path,
				      resp);
			snprintf(
			    req, sizeof(req),
			    "GET http://origin.test:%d/cl HTTP/1.1\r\nHost: origin.test:%d\r\n\r\n",
			    o.port, o.port);
			cli_sends(fd, req);
			cli_recv_until(fd, resp, sizeof(resp), "hello");
			ck_assert_msg(strstr(resp, "hello") != NULL, "%s: second request: %s",
				      rows[i].path, resp);
		} else {
			cli_recv_all(fd, resp, sizeof(resp));
			ck_assert_msg(strcmp(resp, rows[i].want) == 0, "%s: got [%s]", rows[i].path,
				      resp);
		}
		close(fd);
	}
	{ /* An origin that does not speak HTTP: 502. */
		int fd = cli_connect(f.http_port);
		snprintf(
		    req, sizeof(req),
		    "GET http://origin.test:%d/garbage HTTP/1.1\r\nHost: origin.test:%d\r\n\r\n",
		    o.port, o.port);
		cli_sends(fd, req);
		cli_recv_all(fd, resp, sizeof(resp));
		ck_assert_int_eq(status_of(resp), 502);
		close(fd);
	}
	fx_stop(&f);
	http_origin_stop(&o);
}
END_TEST

START_TEST(forward_request_body_and_pipelining)
{
	struct fx_proxy f;
	struct http_origin o;
	char req[1024], resp[4096], last[8192];
	int fd;

	http_origin_start(&o);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	fd = cli_connect(f.http_port);
	/* Two requests in one write: a POST with its body, then a GET. */
	snprintf(req, sizeof(req),
		 "POST http://origin.test:%d/post HTTP/1.1\r\nHost: origin.test:%d\r\n"
		 "Content-Length: 11\r\n\r\nhello world"
		 "GET http://origin.test:%d/cl HTTP/1.1\r\nHost: origin.test:%d\r\n\r\n",
		 o.port, o.port, o.port, o.port);
	cli_sends(fd, req);
	cli_recv_until(fd, resp, sizeof(resp), "hello world");
	ck_assert_ptr_nonnull(strstr(resp, "Content-Length: 11\r\n\r\nhello world"));
	http_origin_last(&o, last, sizeof(last));
	ck_assert_ptr_nonnull(strstr(last, "POST /post HTTP/1.1\r\n"));
	ck_assert_ptr_nonnull(strstr(last, "\r\n\r\nhello world"));
	ck_assert_ptr_null(strstr(last, "GET")); /* the next request is not body */
	cli_recv_until(fd, resp, sizeof(resp), "hello");
	ck_assert_ptr_nonnull(strstr(resp, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"));
	close(fd);
	fx_stop(&f);
	http_origin_stop(&o);
	ck_assert_uint_eq(f.st.allowed, 2);
}
END_TEST

/* ----------------------------------------------------------------- SOCKS5 */

static int socks_open(struct fx_proxy *f)
{
	char r[2];
	int fd = cli_connect(f->socks_port);

	cli_send(fd, "\x05\x01\x00", 3);
	ck_assert_uint_eq(cli_recv_n(fd, r, 2), 2);
	ck_assert(r[0] == 5 && r[1] == 0);
	return fd;
}

static uint8_t socks_request(int fd, const uint8_t *req, size_t n)
{
	uint8_t r[10];

	cli_send(fd, req, n);
	ck_assert_uint_eq(cli_recv_n(fd, (char *)r, 10), 10);
	ck_assert_int_eq(r[0], 5);
	ck_assert_int_eq(r[3], 1); /* bound address 0.0.0.0:0 */
	for (int i = 4; i < 10; i++)
		ck_assert_int_eq(r[i], 0);
	return r[1];
}

START_TEST(socks5_each_atyp)
{
	struct fx_proxy f;
	struct origin o4, o6;
	uint8_t req[300];
	char buf[8];
	int fd;
	cJSON *recs[8];
	int n;

	origin_start(&o4, ORIGIN_ECHO);
	origin_start_at(&o6, ORIGIN_ECHO, "::1");
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	/* Domain */
	fd = socks_open(&f);
	memcpy(req,
	       "\x05\x01\x00\x03\x0b"
	       "origin.test",
	       16);
	req[16] = (uint8_t)(o4.port >> 8);
	req[17] = (uint8_t)o4.port;
	ck_assert_int_eq(socks_request(fd, req, 18), 0);
	cli_sends(fd, "dom");
	ck_assert_uint_eq(cli_recv_n(fd, buf, 3), 3);
	close(fd);
	/* IPv4 */
	fd = socks_open(&f);
	memcpy(req, "\x05\x01\x00\x01\x7f\x00\x00\x01", 8);
	req[8] = (uint8_t)(o4.port >> 8);
	req[9] = (uint8_t)o4.port;
	ck_assert_int_eq(socks_request(fd, req, 10), 0);
	cli_sends(fd, "ip4");
	ck_assert_uint_eq(cli_recv_n(fd, buf, 3), 3);
	close(fd);
	/* IPv6 ::1 */
	fd = socks_open(&f);
	memset(req, 0, sizeof(req));
	memcpy(req, "\x05\x01\x00\x04", 4);
	req[19] = 1;
	req[20] = (uint8_t)(o6.port >> 8);
	req[21] = (uint8_t)o6.port;
	ck_assert_int_eq(socks_request(fd, req, 22), 0);
	cli_sends(fd, "ip6");
	ck_assert_uint_eq(cli_recv_n(fd, buf, 3), 3);
	ck_assert(memcmp(buf, "ip6", 3) == 0);
	close(fd);
	/* Denied domain: 02 */
	fd = socks_open(&f);
	memcpy(req,
	       "\x05\x01\x00\x03\x0c"
	       "pastebin.com\x01\xbb",
	       19);
	ck_assert_int_eq(socks_request(fd, req, 19), 2);
	close(fd);
	/* BIND and UDP ASSOCIATE: 07 */
	for (uint8_t cmd = 2; cmd <= 3; cmd++) {
		fd = socks_open(&f);
		memcpy(req, "\x05\x00\x00\x01\x7f\x00\x00\x01\x00\x50", 10);
		req[1] = cmd;
		ck_assert_int_eq(socks_request(fd, req, 10), 7);
		close(fd);
	}
	/* No acceptable method: 05 FF */
	fd = cli_connect(f.socks_port);
	cli_send(fd, "\x05\x01\x02", 3);
	ck_assert_uint_eq(cli_recv_n(fd, buf, 2), 2);
	ck_assert(buf[0] == 5 && (uint8_t)buf[1] == 0xff);
	close(fd);
	usleep(100 * 1000);
	fx_stop(&f);
	origin_stop(&o4);
	origin_stop(&o6);
	n = fx_audit(&f, recs, 8);
	ck_assert_int_eq(n, 4);
	ck_assert_str_eq(js(recs[0], "proto"), "socks5");
	ck_assert_str_eq(js(recs[3], "decision"), "deny");
	ck_assert_str_eq(js(recs[3], "host"), "pastebin.com");
	fx_free_recs(recs, n);
}
END_TEST

START_TEST(socks5_refused_address_02)
{
	struct fx_proxy f;
	struct origin o;
	uint8_t req[32];
	int fd;

	origin_start(&o, ORIGIN_ECHO);
	fx_start(&f, _i, POLICY_NO_PRIVATE, NULL);
	fd = socks_open(&f);
	memcpy(req,
	       "\x05\x01\x00\x03\x0b"
	       "origin.test",
	       16);
	req[16] = (uint8_t)(o.port >> 8);
	req[17] = (uint8_t)o.port;
	ck_assert_int_eq(socks_request(fd, req, 18), 2);
	close(fd);
	fx_stop(&f);
	ck_assert_int_eq(atomic_load(&o.accepted), 0);
	origin_stop(&o);
}
END_TEST

/* ---------------------------------------------------------------- summary */

START_TEST(summary_table)
{
	struct fx_proxy f;
	struct origin o;
	char head[512], target[64], *text = NULL;
	size_t len = 0;
	FILE *mem;

	origin_start(&o, ORIGIN_ECHO);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	snprintf(target, sizeof(target), "origin.test:%d", o.port);
	close(cli_connect_via(&f, target, head, sizeof(head)));
	close(cli_connect_via(&f, "pastebin.com:443", head, sizeof(head)));
	usleep(100 * 1000);
	fx_halt(&f);
	mem = open_memstream(&text, &len);
	proxy_summary(f.px, mem);
	fclose(mem);
	fx_destroy(&f);
	origin_stop(&o);
	ck_assert_ptr_nonnull(strstr(text, "egress summary: 2 connections, 1 allowed, 1 denied\n"));
	ck_assert_ptr_nonnull(strstr(text, "origin.test"));
	ck_assert_ptr_nonnull(strstr(text, "pastebin.com"));
	ck_assert_ptr_nonnull(strstr(text, "deniedDomains[0] pastebin.com"));
	ck_assert(strstr(text, "origin.test") < strstr(text, "pastebin.com")); /* sorted */
	free(text);
}
END_TEST

static Suite *proxy_suite(void)
{
	Suite *s = suite_create("proxy");
	TCase *tc = tcase_create("loopback");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, connect_allowed_tunnel, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, connect_denied_403, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, quiet_suppresses_denial_line, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, connect_ip_literals, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, loopback_refused_without_allow_private, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, private_answers_refused_before_connect, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, dns_failure_and_timeout, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, connect_refused_502, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, head_timeout_408, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, bad_heads_answered, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, half_close_propagated, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, forward_keepalive_decided_again, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, forward_response_framing, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, forward_request_body_and_pipelining, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, socks5_each_atyp, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, socks5_refused_address_02, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, summary_table, FIRST_BACKEND, END_BACKEND);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(proxy_suite)
