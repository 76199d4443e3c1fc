/* One name per tunnel, in-process on loopback, both poller backends: after CONNECT
 * (and SOCKS5) a ClientHello naming another host gets a TLS alert and never reaches the
 * origin (which sees a TCP connection and zero bytes), in one write or fragmented
 * across records and writes; so are a hello without a name (the target is a name) and
 * a TLS record before the hello (a warning alert that stacks skip), and a name with
 * a trailing dot (an origin that keeps it serves its default site); a matching name
 * (any case) and a non-TLS first flight go through unchanged; a server
 * that speaks first is heard while the client's side waits; the refusal is audited
 * and told once per host. */
#include "tests/unit/proxy_fixture.h"

/* A minimal ClientHello for `sni` (NULL: no server_name), as records of `frag` bytes. */
static size_t hello(const char *sni, size_t frag, uint8_t *out)
{
	uint8_t m[600];
	size_t n = 0, o = 0, sl = sni ? strlen(sni) : 0, ext = sni ? 9 + sl : 0;

	m[n++] = 1;
	n += 3; /* length, below */
	m[n++] = 3, m[n++] = 3;
	memset(m + n, 0xab, 32), n += 32;
	m[n++] = 0;		/* session id */
	m[n++] = 0, m[n++] = 2; /* cipher suites */
	m[n++] = 0x13, m[n++] = 1;
	m[n++] = 1, m[n++] = 0; /* compression */
	m[n++] = 0, m[n++] = (uint8_t)ext;
	if (sni) {
		m[n++] = 0, m[n++] = 0; /* server_name */
		m[n++] = 0, m[n++] = (uint8_t)(sl + 5);
		m[n++] = 0, m[n++] = (uint8_t)(sl + 3);
		m[n++] = 0, m[n++] = 0, m[n++] = (uint8_t)sl;
		memcpy(m + n, sni, sl), n += sl;
	}
	m[1] = 0, m[2] = (uint8_t)((n - 4) >> 8), m[3] = (uint8_t)(n - 4);
	for (size_t off = 0; off < n; off += frag) {
		size_t k = n - off < frag ? n - off : frag;
		out[o++] = 0x16, out[o++] = 3, out[o++] = 1;
		out[o++] = (uint8_t)(k >> 8), out[o++] = (uint8_t)k;
		memcpy(out + o, m + off, k), o += k;
	}
	return o;
}

/* The origin: our own listener, so what it received can be read exactly. */
static int origin_accept(int lfd)
{
	struct pollfd p = {lfd, POLLIN, 0};

	ck_assert_int_eq(poll(&p, 1, 2000), 1);
	return accept(lfd, NULL, NULL);
}

/* Bytes the origin got before the proxy closed (waits for the close). */
static size_t origin_drain(int fd)
{
	char b[4096];
	size_t total = 0;
	struct pollfd p = {fd, POLLIN, 0};

	while (poll(&p, 1, 2000) == 1) {
		ssize_t r = recv(fd, b, sizeof(b), 0);
		if (r <= 0)
			break;
		total += (size_t)r;
	}
	return total;
}

static const uint8_t alert_denied[7] = {0x15, 3, 3, 0, 2, 2, 49};

static void expect_alert(int fd)
{
	char buf[64];

	ck_assert_uint_eq(cli_recv_all(fd, buf, sizeof(buf)), 7);
	ck_assert(memcmp(buf, alert_denied, 7) == 0);
}

static void expect_alert_desc(int fd, uint8_t desc)
{
	char buf[64];

	ck_assert_uint_eq(cli_recv_all(fd, buf, sizeof(buf)), 7);
	ck_assert(memcmp(buf, alert_denied, 6) == 0);
	ck_assert_int_eq((uint8_t)buf[6], desc);
}

START_TEST(mismatch_refused_before_any_byte)
{
	static const size_t frags[] = {0, 1, 7};
	struct fx_proxy f;
	uint8_t h[2048];
	char head[256], target[64];
	int lport = 0, lfd = fx_listen("127.0.0.1", &lport);
	cJSON *recs[8];
	int n;

	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	snprintf(target, sizeof(target), "origin.test:%d", lport);
	for (size_t i = 0; i < sizeof(frags) / sizeof(frags[0]); i++) {
		size_t len = hello("evil.test", frags[i] ? frags[i] : 1000, h);
		int fd = cli_connect_via(&f, target, head, sizeof(head)), ofd;

		ck_assert_str_eq(head, "HTTP/1.1 200 Connection established\r\n\r\n");
		ofd = origin_accept(lfd);
		/* in pieces: across reads as well as records */
		for (size_t off = 0; off < len; off += 50) {
			cli_send(fd, h + off, len - off < 50 ? len - off : 50);
			if (frags[i])
				usleep(2000);
		}
		expect_alert(fd);
		ck_assert_uint_eq(origin_drain(ofd), 0);
		close(ofd);
		close(fd);
	}
	usleep(50 * 1000);
	fx_stop(&f);
	close(lfd);
	n = fx_audit(&f, recs, 8);
	ck_assert_int_eq(n, 3);
	for (int i = 0; i < n; i++) {
		ck_assert_str_eq(js(recs[i], "decision"), "deny");
		ck_assert_str_eq(js(recs[i], "rule"), "sni mismatch: evil.test");
		ck_assert_str_eq(js(recs[i], "host"), "origin.test");
		ck_assert_int_eq((int)jnum(recs[i], "bytes_up"), 0);
	}
	fx_free_recs(recs, n);
	{ /* one stderr line for the host, not one per tunnel */
		char *text = fx_slurp(f.log);
		char want[128];
		snprintf(want, sizeof(want),
			 "halo-run: egress denied: origin.test:%d (sni mismatch: evil.test)\n",
			 lport);
		ck_assert_str_eq(text, want);
		free(text);
	}
}
END_TEST

/* What goes through: the bytes arrive unchanged, and the origin's answer comes back. */
static void passes(struct fx_proxy *f, int lfd, int lport, const void *first, size_t len)
{
	char head[256], target[64], buf[2048];
	int fd, ofd;

	snprintf(target, sizeof(target), "origin.test:%d", lport);
	fd = cli_connect_via(f, target, head, sizeof(head));
	ck_assert_str_eq(head, "HTTP/1.1 200 Connection established\r\n\r\n");
	ofd = origin_accept(lfd);
	cli_send(fd, first, len);
	ck_assert_uint_eq(cli_recv_n(ofd, buf, len), len);
	ck_assert(memcmp(buf, first, len) == 0);
	cli_sends(ofd, "back");
	ck_assert_uint_eq(cli_recv_n(fd, buf, 4), 4);
	close(ofd);
	close(fd);
}

START_TEST(matching_absent_and_plain_pass)
{
	struct fx_proxy f;
	uint8_t h[2048];
	int lport = 0, lfd = fx_listen("127.0.0.1", &lport);
	cJSON *recs[8];
	int n;

	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	passes(&f, lfd, lport, h, hello("origin.test", 1000, h));
	passes(&f, lfd, lport, h, hello("ORIGIN.Test", 9, h));
	passes(&f, lfd, lport, "SSH-2.0-x\r\n", 11);
	usleep(50 * 1000);
	fx_stop(&f);
	close(lfd);
	n = fx_audit(&f, recs, 8);
	ck_assert_int_eq(n, 3);
	for (int i = 0; i < n; i++)
		ck_assert_str_eq(js(recs[i], "decision"), "allow");
	fx_free_recs(recs, n);
}
END_TEST

/* Refused before any byte reaches the origin: the first flight, the audit's rule. */
static void refused(int backend, int lfd, int lport, const void *first, size_t len,
		    const char *rule)
{
	struct fx_proxy fx, *f = &fx;
	char head[256], target[64];
	int fd, ofd;
	cJSON *recs[4];
	int n;

	fx_start(f, backend, POLICY_LOOPBACK_OK, NULL);
	snprintf(target, sizeof(target), "origin.test:%d", lport);
	fd = cli_connect_via(f, target, head, sizeof(head));
	ck_assert_str_eq(head, "HTTP/1.1 200 Connection established\r\n\r\n");
	ofd = origin_accept(lfd);
	cli_send(fd, first, len);
	expect_alert_desc(fd, rule[0] == 't' && strstr(rule, "before") ? 10 : 49);
	ck_assert_uint_eq(origin_drain(ofd), 0);
	close(ofd);
	close(fd);
	usleep(50 * 1000);
	fx_stop(f);
	n = fx_audit(f, recs, 4);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(js(recs[0], "decision"), "deny");
	ck_assert_str_eq(js(recs[0], "rule"), rule);
	fx_free_recs(recs, n);
}

/* A warning alert before a hello naming evil.test: Go's, OpenSSL's and GnuTLS's
 * servers drop the alert and read the hello, so it is TLS and refused; a hello
 * without a name to a host allowed by name is refused too. */
START_TEST(record_first_and_no_name_refused)
{
	uint8_t h[2048];
	size_t n;
	int lport = 0, lfd = fx_listen("127.0.0.1", &lport);

	memcpy(h, "\x15\x03\x01\x00\x02\x01\x5a", 7);
	n = 7 + hello("evil.test", 1000, h + 7);
	refused(_i, lfd, lport, h, n, "tls: record before ClientHello (alert)");
	memcpy(h, "\x14\x03\x03\x00\x01\x01", 6);
	n = 6 + hello("origin.test", 1000, h + 6);
	refused(_i, lfd, lport, h, n, "tls: record before ClientHello (change_cipher_spec)");
	refused(_i, lfd, lport, h, hello(NULL, 1000, h),
		"tls: ClientHello without SNI for a host allowed by name");
	refused(_i, lfd, lport, h, hello("Origin.Test.", 9, h),
		"tls: SNI ends with a dot: Origin.Test. (an origin that keeps the dot serves its "
		"default site)");
	close(lfd);
}
END_TEST

/* SSH, SMTP: the server speaks first; its banner reaches the client while the
 * client's side is still waiting for a first flight to judge. */
START_TEST(server_speaks_first)
{
	struct fx_proxy f;
	char head[256], target[64], buf[64];
	int lport = 0, lfd = fx_listen("127.0.0.1", &lport), fd, ofd;

	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	snprintf(target, sizeof(target), "origin.test:%d", lport);
	fd = cli_connect_via(&f, target, head, sizeof(head));
	ofd = origin_accept(lfd);
	cli_sends(ofd, "220 smtp ready\r\n");
	ck_assert_uint_eq(cli_recv_n(fd, buf, 16), 16);
	ck_assert(memcmp(buf, "220 smtp ready\r\n", 16) == 0);
	cli_sends(fd, "EHLO x\r\n");
	ck_assert_uint_eq(cli_recv_n(ofd, buf, 8), 8);
	close(ofd);
	close(fd);
	fx_stop(&f);
	close(lfd);
}
END_TEST

START_TEST(socks5_mismatch_refused)
{
	struct fx_proxy f;
	uint8_t h[2048], req[64], r[10];
	int lport = 0, lfd = fx_listen("127.0.0.1", &lport), fd, ofd;
	size_t len = hello("evil.test", 1000, h);
	char buf[8];

	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	fd = cli_connect(f.socks_port);
	cli_send(fd, "\x05\x01\x00", 3);
	ck_assert_uint_eq(cli_recv_n(fd, buf, 2), 2);
	memcpy(req, "\x05\x01\x00\x03\x0borigin.test", 16);
	req[16] = (uint8_t)(lport >> 8);
	req[17] = (uint8_t)lport;
	cli_send(fd, req, 18);
	ck_assert_uint_eq(cli_recv_n(fd, (char *)r, 10), 10);
	ck_assert_int_eq(r[1], 0);
	ofd = origin_accept(lfd);
	cli_send(fd, h, len);
	expect_alert(fd);
	ck_assert_uint_eq(origin_drain(ofd), 0);
	close(ofd);
	close(fd);
	fx_stop(&f);
	close(lfd);
}
END_TEST

/* Bound: a first flight that keeps growing past 16 KiB without completing, and one
 * that stops half-way, are refused; neither reaches the origin. */
static void short_head(struct proxy_options *o)
{
	o->head_timeout_ms = 300;
}

START_TEST(oversize_and_stalled)
{
	struct fx_proxy f;
	uint8_t rec[5] = {0x16, 3, 1, 0x40, 0}, *big = calloc(1, 20000);
	char head[256], target[64];
	int lport = 0, lfd = fx_listen("127.0.0.1", &lport), fd, ofd;

	fx_start(&f, _i, POLICY_LOOPBACK_OK, short_head);
	snprintf(target, sizeof(target), "origin.test:%d", lport);
	/* records of 2^14 whose handshake header claims 1 MiB */
	fd = cli_connect_via(&f, target, head, sizeof(head));
	ofd = origin_accept(lfd);
	memcpy(big, rec, 5);
	big[5] = 1, big[6] = 0x10;
	cli_send(fd, big, 20000);
	expect_alert(fd);
	ck_assert_uint_eq(origin_drain(ofd), 0);
	close(ofd);
	close(fd);
	/* half a record, then silence: the head timeout */
	fd = cli_connect_via(&f, target, head, sizeof(head));
	ofd = origin_accept(lfd);
	cli_send(fd, big, 100);
	expect_alert(fd);
	ck_assert_uint_eq(origin_drain(ofd), 0);
	close(ofd);
	close(fd);
	fx_stop(&f);
	close(lfd);
	free(big);
}
END_TEST

static Suite *sni_suite(void)
{
	Suite *s = suite_create("proxy-sni");
	TCase *tc = tcase_create("loopback");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, mismatch_refused_before_any_byte, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, matching_absent_and_plain_pass, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, record_first_and_no_name_refused, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, server_speaks_first, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, socks5_mismatch_refused, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, oversize_and_stalled, FIRST_BACKEND, END_BACKEND);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(sni_suite)
