/* Absolute-form forwarding through the in-process proxy, on both poller backends: the
 * request rewritten for the origin, keep-alive with every request decided again,
 * response framing (Content-Length, chunked with trailers, close-delimited, 1xx, 204,
 * bytes past the end, conflicting lengths, hop-by-hop fields), request bodies with a
 * pipelined request behind them, and refused heads (400/414) without a decision. */
#include "tests/unit/proxy_fixture.h"

START_TEST(bad_heads_answered)
{
	static const struct {
		const char *req;
		int status;
	} rows[] = {
	    {"GET / HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	    {"GET http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\nHost: other.test\r\n\r\n",
	     400},
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
	{ /* 431: more than 100 fields */
		char head[4096] = "GET http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\n";
		int fd = cli_connect(f.http_port);
		for (int i = 0; i < 101; i++)
			snprintf(head + strlen(head), sizeof(head) - strlen(head), "X-%d: v\r\n",
				 i);
		strcat(head, "\r\n");
		cli_sends(fd, head);
		cli_recv_all(fd, resp, sizeof(resp));
		ck_assert_int_eq(status_of(resp), 431);
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
	snprintf(req, sizeof(req),
		 "GET http://origin.test:%d/chunked HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
		 o.port);
	cli_sends(fd, req);
	cli_recv_until(fd, resp, sizeof(resp), "\r\n\r\n");
	ck_assert_int_eq(status_of(resp), 400); /* duplicate Host header */
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
	ck_assert_int_eq(n, 4);
	ck_assert_str_eq(js(recs[0], "proto"), "http");
	ck_assert_str_eq(js(recs[0], "decision"), "allow");
	ck_assert_int_eq((int)jnum(recs[0], "bytes_down"), (int)strlen(http_canned[0].resp));
	/* the 400 has a refusal record of its own (issue 31) */
	ck_assert_str_eq(js(recs[1], "decision"), "deny");
	ck_assert_str_eq(js(recs[1], "code"), "400");
	ck_assert_int_eq((int)jnum(recs[1], "count"), 1);
	ck_assert_str_eq(js(recs[2], "decision"), "allow");
	ck_assert_str_eq(js(recs[3], "decision"), "deny");
	ck_assert_str_eq(js(recs[3], "host"), "pastebin.com");
	ck_assert_int_eq((int)jnum(recs[3], "port"), 80);
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
	char req[1024], resp[4096], all[32768];
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
	cli_recv_until(fd, resp, sizeof(resp), "hello");
	ck_assert_ptr_nonnull(strstr(resp, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"));
	/* The origin saw two requests: the POST with exactly its body, then the GET. */
	http_origin_all(&o, all, sizeof(all));
	ck_assert_ptr_nonnull(strstr(all, "POST /post HTTP/1.1\r\n"));
	ck_assert_ptr_nonnull(strstr(all, "\r\n\r\nhello world\n--\nGET /cl HTTP/1.1\r\n"));
	close(fd);
	fx_stop(&f);
	http_origin_stop(&o);
	ck_assert_uint_eq(f.st.allowed, 2);
}
END_TEST

/* (review) A client that leaves right after its request: the origin's head and body
 * arrive together, the head's write is taken (the kernel answers it with a reset),
 * the body's is refused and ends the connection, and the relay of the head went on
 * with the freed state: a double free that took the supervisor, or `halo-run proxy`
 * and every client of it, down. The proxy stays up and serves the next client. */
START_TEST(forward_client_gone_before_response)
{
	struct fx_proxy f;
	struct http_origin o;
	char req[512], resp[2048];
	int fd;

	http_origin_start(&o);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	for (int round = 0; round < 3; round++) {
		snprintf(req, sizeof(req),
			 "GET http://127.0.0.1:%d/late HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n",
			 o.port, o.port);
		fd = cli_connect(f.http_port);
		cli_sends(fd, req);
		usleep(50 * 1000);
		close(fd);
		usleep(400 * 1000); /* the origin answers at 300 ms */
	}
	snprintf(req, sizeof(req),
		 "GET http://127.0.0.1:%d/cl HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", o.port,
		 o.port);
	fd = cli_connect(f.http_port);
	cli_sends(fd, req);
	cli_recv_all(fd, resp, sizeof(resp));
	ck_assert_int_eq(status_of(resp), 200);
	ck_assert_ptr_nonnull(strstr(resp, "hello"));
	close(fd);
	fx_stop(&f);
	http_origin_stop(&o);
}
END_TEST

static Suite *fwd_suite(void)
{
	Suite *s = suite_create("proxy-forward");
	TCase *tc = tcase_create("loopback");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, bad_heads_answered, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, forward_keepalive_decided_again, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, forward_response_framing, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, forward_request_body_and_pipelining, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, forward_client_gone_before_response, FIRST_BACKEND, END_BACKEND);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(fwd_suite)
