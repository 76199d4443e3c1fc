/* The proxy in-process on real loopback sockets, every test on both poller backends:
 * CONNECT (allow, deny with the 403 body and X-Halo-Deny, pipelined bytes, IP
 * literals), address refusal before any connect (loopback without allowPrivate, then
 * gated on that, a mixed answer and a metadata answer), DNS failure and timeout (the
 * late answer dropped), connection refused, SOCKS5 (each ATYP, deny, BIND/UDP → 07),
 * head timeout, half-close, the denial line (once per host) and the summary.
 * Absolute-form forwarding is in test_proxy_fwd.c. */
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

/* The gate for rows whose answers are not loopback: in this very process, a proxy
 * without allowPrivate must first refuse 127.0.0.1 without connecting. If refusal is
 * broken, the test stops here, before a private or metadata answer could be dialled. */
static void refusal_gate(int backend)
{
	struct fx_proxy f;
	struct origin o;
	char head[1024], target[64];

	origin_start(&o, ORIGIN_ECHO);
	fx_start(&f, backend, POLICY_NO_PRIVATE, NULL);
	snprintf(target, sizeof(target), "origin.test:%d", o.port);
	close(cli_connect_via(&f, target, head, sizeof(head)));
	fx_stop(&f);
	ck_assert_msg(status_of(head) == 403 && atomic_load(&o.accepted) == 0,
		      "refusal does not work: private and metadata rows not run");
	origin_stop(&o);
}

/* A mixed answer (127.0.0.1 + 10.0.0.1) and a metadata answer are refused as a whole,
 * before any connect; run only once the gate has shown that refusal works. */
START_TEST(private_answers_refused_before_connect)
{
	struct fx_proxy f;
	struct origin o;
	char head[1024], target[64];
	cJSON *recs[4];
	int n;

	refusal_gate(_i);
	origin_start(&o, ORIGIN_ECHO);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	snprintf(target, sizeof(target), "mixed.test:%d", o.port);
	close(cli_connect_via(&f, target, head, sizeof(head)));
	ck_assert_int_eq(status_of(head), 403);
	snprintf(target, sizeof(target), "meta.test:%d", o.port);
	close(cli_connect_via(&f, target, head, sizeof(head)));
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
	int dead[2], port;
	cJSON *recs[2];

	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	port = fx_refusing_port(dead);
	snprintf(target, sizeof(target), "origin.test:%d", port);
	close(cli_connect_via(&f, target, head, sizeof(head)));
	ck_assert_int_eq(status_of(head), 502);
	fx_stop(&f);
	close(dead[0]);
	close(dead[1]);
	ck_assert_int_eq(fx_audit(&f, recs, 2), 1);
	ck_assert_str_eq(js(recs[0], "error"), "connection refused");
	ck_assert_str_eq(js(recs[0], "address"), "127.0.0.1");
	ck_assert_str_eq(js(recs[0], "decision"), "allow");
	fx_free_recs(recs, 1);
}
END_TEST

/* A listener whose backlog is full: further SYNs are dropped, so a connect to it
 * hangs until the proxy's connect timeout. Returns the listener; *filler keeps the
 * backlog full. */
static int hanging_listener(const char *ip, int *port, int *filler)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)*port)};
	socklen_t sl = sizeof(a);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, ip, &a.sin_addr);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sl), 0);
	ck_assert_int_eq(listen(fd, 0), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &sl), 0);
	*port = ntohs(a.sin_port);
	*filler = cli_connect_to(ip, *port);
	return fd;
}

static void short_connect(struct proxy_options *o)
{
	o->connect_timeout_ms = 600;
}

START_TEST(connect_timeout_504)
{
	struct fx_proxy f;
	char head[1024], target[64];
	int port = 0, filler, lfd;
	cJSON *recs[2];
	uint64_t t0;

	lfd = hanging_listener("127.0.0.1", &port, &filler);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, short_connect);
	snprintf(target, sizeof(target), "origin.test:%d", port);
	t0 = proxy_now_ms();
	close(cli_connect_via(&f, target, head, sizeof(head)));
	ck_assert_int_eq(status_of(head), 504);
	ck_assert_uint_ge(proxy_now_ms() - t0, 550);
	ck_assert_uint_lt(proxy_now_ms() - t0, 3000);
	fx_stop(&f);
	close(filler);
	close(lfd);
	ck_assert_int_eq(fx_audit(&f, recs, 2), 1);
	ck_assert_str_eq(js(recs[0], "error"), "connect timed out");
	ck_assert_str_eq(js(recs[0], "address"), "127.0.0.1");
	fx_free_recs(recs, 1);
}
END_TEST

/* Two addresses, the first hanging: it gets half the budget, the second connects. */
START_TEST(hanging_first_address_skipped)
{
	struct fx_proxy f;
	struct origin o;
	char head[1024], target[64];
	int port, filler, lfd;
	cJSON *recs[2];

	origin_start(&o, ORIGIN_ECHO);
	port = o.port;
	lfd = hanging_listener("127.0.0.3", &port, &filler);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, short_connect);
	snprintf(target, sizeof(target), "twoaddr.test:%d", o.port);
	close(cli_connect_via(&f, target, head, sizeof(head)));
	ck_assert_int_eq(status_of(head), 200);
	usleep(100 * 1000);
	fx_stop(&f);
	close(filler);
	close(lfd);
	origin_stop(&o);
	ck_assert_int_eq(fx_audit(&f, recs, 2), 1);
	ck_assert_str_eq(js(recs[0], "address"), "127.0.0.1");
	ck_assert_ptr_null(js(recs[0], "error"));
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

/* (review) `halo-run proxy`'s clients share its connection slots: one that connects and
 * never says a word is timed out from the accept (256 silent connections held every
 * slot, every other client got 503, for good). In a sandbox's supervisor the timer
 * still starts at the first byte (its slots are its command's alone). */
static void silent_timeouts(struct proxy_options *o)
{
	short_timeouts(o);
	o->head_from_accept = true;
}

START_TEST(silent_client_timed_out_from_accept)
{
	struct fx_proxy f;
	char resp[1024];
	uint64_t t0;
	int fd;

	fx_start(&f, _i, POLICY_LOOPBACK_OK, silent_timeouts);
	fd = cli_connect(f.http_port);
	t0 = proxy_now_ms();
	cli_recv_all(fd, resp, sizeof(resp)); /* not a byte sent: ends at the timeout */
	ck_assert_uint_ge(proxy_now_ms() - t0, 250);
	ck_assert_uint_lt(proxy_now_ms() - t0, 3000);
	close(fd);
	fd = cli_connect(f.socks_port);
	t0 = proxy_now_ms();
	cli_recv_all(fd, resp, sizeof(resp));
	ck_assert_uint_lt(proxy_now_ms() - t0, 3000);
	close(fd);
	fx_stop(&f);
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
	/* Tunnel records are written when the tunnel ends, so the order varies. */
	for (int i = 0; i < n; i++) {
		bool deny = strcmp(js(recs[i], "host"), "pastebin.com") == 0;
		ck_assert_str_eq(js(recs[i], "proto"), "socks5");
		ck_assert_str_eq(js(recs[i], "decision"), deny ? "deny" : "allow");
	}
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

/* ---------------------------------------------------------- auth secret */

static void with_secret(struct proxy_options *o)
{
	o->auth_secret = "s3cret";
}

/* The macOS build's listener is on the host's loopback: only a client that knows the
 * run's secret (any user name, the secret as password) gets through; SOCKS5 cannot
 * carry it, so every method is refused. */
START_TEST(auth_secret_required)
{
	static const struct {
		const char *auth;
		int status;
	} rows[] = {
	    {NULL, 407},
	    {"Basic aGFsbzp3cm9uZw==", 407}, /* halo:wrong */
	    {"Bearer s3cret", 407},
	    {"Basic aGFsbzpzM2NyZXQ=", 200}, /* halo:s3cret */
	};
	struct fx_proxy f;
	struct origin o;
	char req[512], head[1024], buf[4];
	int fd;

	origin_start(&o, ORIGIN_ECHO);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, with_secret);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		fd = cli_connect(f.http_port);
		snprintf(req, sizeof(req),
			 "CONNECT origin.test:%d HTTP/1.1\r\nHost: origin.test:%d\r\n%s%s%s\r\n",
			 o.port, o.port, rows[i].auth ? "Proxy-Authorization: " : "",
			 rows[i].auth ? rows[i].auth : "", rows[i].auth ? "\r\n" : "");
		cli_sends(fd, req);
		cli_recv_until(fd, head, sizeof(head), "\r\n\r\n");
		ck_assert_msg(status_of(head) == rows[i].status, "row %zu: %s", i, head);
		if (rows[i].status == 407)
			ck_assert_ptr_nonnull(strstr(head, "\r\nProxy-Authenticate: Basic"));
		close(fd);
	}
	fd = cli_connect(f.socks_port);
	cli_send(fd, "\x05\x01\x00", 3);
	ck_assert_uint_eq(cli_recv_n(fd, buf, 2), 2);
	ck_assert(buf[0] == 5 && (uint8_t)buf[1] == 0xff);
	close(fd);
	fx_stop(&f);
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

/* A run's end (the poller set ending): proxy_destroy leaves the listeners and the
 * reserve fd to the process's exit; a proxy destroyed otherwise (a session's, a test's)
 * closes them. (The ending poller's own epoll fd is left open too: Check forks each
 * test.) */
START_TEST(destroy_at_the_end_leaves_fds)
{
	for (int ending = 0; ending < 2; ending++) {
		struct fx_proxy f;
		int lfd[2], reserve;

		fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
		fx_halt(&f);
		lfd[0] = f.px->lsn[0].fd;
		lfd[1] = f.px->lsn[1].fd;
		reserve = f.px->reserve_fd;
		ck_assert_int_ge(reserve, 0);
		if (ending)
			proxy_poller_set_ending(f.pl);
		fx_destroy(&f);
		for (int i = 0; i < 2; i++)
			ck_assert_int_eq(fcntl(lfd[i], F_GETFD) >= 0, ending);
		ck_assert_int_eq(fcntl(reserve, F_GETFD) >= 0, ending);
		if (ending) {
			close(lfd[0]);
			close(lfd[1]);
			close(reserve);
		}
	}
}
END_TEST

static Suite *proxy_suite(void)
{
	Suite *s = suite_create("proxy");
	TCase *tc = tcase_create("loopback");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, connect_allowed_tunnel, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, destroy_at_the_end_leaves_fds, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, connect_denied_403, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, quiet_suppresses_denial_line, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, connect_ip_literals, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, loopback_refused_without_allow_private, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, private_answers_refused_before_connect, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, dns_failure_and_timeout, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, connect_refused_502, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, connect_timeout_504, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, hanging_first_address_skipped, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, head_timeout_408, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, silent_client_timed_out_from_accept, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, half_close_propagated, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, socks5_each_atyp, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, socks5_refused_address_02, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, auth_secret_required, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, summary_table, FIRST_BACKEND, END_BACKEND);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(proxy_suite)
