/* Every ClientHello is checked, in-process on loopback, both poller backends: after an
 * allowed first ClientHello the client's further bytes are held until the origin has
 * answered; a HelloRetryRequest from the origin reaches the client unchanged and the
 * second ClientHello must carry the same name (evil.test: an alert, the origin never
 * gets it, the audit names it); the same name, or any other answer from the origin,
 * lets the held bytes through and the tunnel carries bulk both ways. */
#include <sys/wait.h>

#include "tests/unit/proxy_fixture.h"

static const uint8_t hrr_random[32] = {
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c};
static const uint8_t ccs[6] = {0x14, 3, 3, 0, 1, 1};

/* A minimal ClientHello for `sni`, as one handshake record. */
static size_t hello(const char *sni, uint8_t *out)
{
	size_t n = 5, sl = strlen(sni);

	out[0] = 0x16, out[1] = 3, out[2] = 1;
	out[n++] = 1, n += 3;
	out[n++] = 3, out[n++] = 3;
	memset(out + n, 0xab, 32), n += 32;
	out[n++] = 0;
	out[n++] = 0, out[n++] = 2, out[n++] = 0x13, out[n++] = 1;
	out[n++] = 1, out[n++] = 0;
	out[n++] = 0, out[n++] = (uint8_t)(9 + sl);
	out[n++] = 0, out[n++] = 0, out[n++] = 0, out[n++] = (uint8_t)(sl + 5);
	out[n++] = 0, out[n++] = (uint8_t)(sl + 3), out[n++] = 0, out[n++] = 0;
	out[n++] = (uint8_t)sl;
	memcpy(out + n, sni, sl), n += sl;
	out[3] = 0, out[4] = (uint8_t)(n - 5);
	out[6] = 0, out[7] = 0, out[8] = (uint8_t)(n - 9);
	return n;
}

/* The origin's first answer: a ServerHello record, with the retry random or not. */
static size_t server_hello(bool hrr, uint8_t *out)
{
	size_t n = 0;

	out[n++] = 0x16, out[n++] = 3, out[n++] = 3, out[n++] = 0, out[n++] = 46;
	out[n++] = 2, out[n++] = 0, out[n++] = 0, out[n++] = 42;
	out[n++] = 3, out[n++] = 3;
	if (hrr)
		memcpy(out + n, hrr_random, 32);
	else
		memset(out + n, 0x5a, 32);
	n += 32;
	memset(out + n, 0, 10), n += 10;
	return n;
}

static int origin_accept(int lfd)
{
	struct pollfd p = {lfd, POLLIN, 0};

	ck_assert_int_eq(poll(&p, 1, 2000), 1);
	return accept(lfd, NULL, NULL);
}

/* Nothing arrives at fd for `ms` (the held bytes stay held). */
static void quiet(int fd, int ms)
{
	struct pollfd p = {fd, POLLIN, 0};

	ck_assert_int_eq(poll(&p, 1, ms), 0);
}

/* Bytes the origin gets until the proxy closes its side. */
static size_t drain(int fd)
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

struct flow {
	int fd, ofd;
	uint8_t ch1[600];
	size_t n1;
};

/* CONNECT, the first ClientHello (origin.test) reaches the origin alone, then `next`
 * is sent and held; the origin answers `answer`, which the client reads unchanged. */
static void open_flow(struct fx_proxy *f, int lfd, int lport, struct flow *w, const void *next,
		      size_t nn, const uint8_t *answer, size_t na)
{
	char head[256], target[64], buf[2048];

	snprintf(target, sizeof(target), "origin.test:%d", lport);
	w->fd = cli_connect_via(f, target, head, sizeof(head));
	ck_assert_str_eq(head, "HTTP/1.1 200 Connection established\r\n\r\n");
	w->ofd = origin_accept(lfd);
	w->n1 = hello("origin.test", w->ch1);
	cli_send(w->fd, w->ch1, w->n1);
	ck_assert_uint_eq(cli_recv_n(w->ofd, buf, w->n1), w->n1);
	ck_assert(memcmp(buf, w->ch1, w->n1) == 0);
	cli_send(w->fd, next, nn);
	quiet(w->ofd, 100);
	cli_send(w->ofd, answer, na);
	ck_assert_uint_eq(cli_recv_n(w->fd, buf, na), na);
	ck_assert(memcmp(buf, answer, na) == 0);
}

static const char *audit_rule(struct fx_proxy *f, const char **decision)
{
	static char rule[256];
	cJSON *recs[4];
	int n = fx_audit(f, recs, 4);

	/* More than one: say which (seen once under CI's load: two records). */
	for (int i = 0; n != 1 && i < n; i++)
		fprintf(stderr, "audit record %d: %s %s\n", i, js(recs[i], "decision"),
			js(recs[i], "rule"));
	ck_assert_int_eq(n, 1);
	snprintf(rule, sizeof(rule), "%s", js(recs[0], "rule"));
	*decision = strcmp(js(recs[0], "decision"), "deny") == 0 ? "deny" : "allow";
	fx_free_recs(recs, n);
	return rule;
}

START_TEST(retry_naming_another_host_refused)
{
	struct fx_proxy f;
	struct flow w;
	uint8_t next[700], sh[64], buf[64];
	size_t nn, ns = server_hello(true, sh);
	int lport = 0, lfd = fx_listen("127.0.0.1", &lport);
	const char *d;

	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	memcpy(next, ccs, 6);
	nn = 6 + hello("evil.test", next + 6);
	open_flow(&f, lfd, lport, &w, next, nn, sh, ns);
	ck_assert_uint_eq(cli_recv_all(w.fd, (char *)buf, sizeof(buf)), 7);
	ck_assert(memcmp(buf, "\x15\x03\x03\x00\x02\x02\x31", 7) == 0);
	ck_assert_uint_eq(drain(w.ofd), 0); /* the origin never gets the second hello */
	close(w.ofd);
	close(w.fd);
	usleep(50 * 1000);
	fx_stop(&f);
	close(lfd);
	ck_assert_str_eq(audit_rule(&f, &d), "tls: SNI changed after HelloRetryRequest: evil.test");
	ck_assert_str_eq(d, "deny");
}
END_TEST

/* hello() with an encrypted_client_hello extension (0xfe0d) appended: sni is then the
 * outer name, and an origin holding ECH keys serves the hidden inner one. */
static size_t hello_ech(const char *sni, uint8_t *out)
{
	static const uint8_t ech[8] = {0xfe, 0x0d, 0, 4, 0, 0, 1, 2};
	size_t n = hello(sni, out);

	memcpy(out + n, ech, sizeof(ech));
	out[4] += 8, out[8] += 8, out[51] += 8; /* record, handshake, extensions */
	return n + sizeof(ech);
}

/* A second hello that adds ECH under the same outer name is refused too. */
START_TEST(retry_adding_ech_refused)
{
	struct fx_proxy f;
	struct flow w;
	uint8_t next[700], sh[64], buf[64];
	size_t nn, ns = server_hello(true, sh);
	int lport = 0, lfd = fx_listen("127.0.0.1", &lport);
	const char *d;

	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	nn = hello_ech("origin.test", next);
	open_flow(&f, lfd, lport, &w, next, nn, sh, ns);
	ck_assert_uint_eq(cli_recv_all(w.fd, (char *)buf, sizeof(buf)), 7);
	ck_assert(memcmp(buf, "\x15\x03\x03\x00\x02\x02\x31", 7) == 0);
	ck_assert_uint_eq(drain(w.ofd), 0);
	close(w.ofd);
	close(w.fd);
	usleep(50 * 1000);
	fx_stop(&f);
	close(lfd);
	ck_assert_str_eq(audit_rule(&f, &d),
			 "tls: encrypted_client_hello (ECH): the origin may serve the encrypted "
			 "inner name, which cannot be checked");
	ck_assert_str_eq(d, "deny");
}
END_TEST

/* A first hello with ECH never reaches the origin. */
START_TEST(first_hello_with_ech_refused)
{
	struct fx_proxy f;
	uint8_t ch[700], buf[64];
	char head[256], target[64];
	size_t n = hello_ech("origin.test", ch);
	int lport = 0, lfd = fx_listen("127.0.0.1", &lport), fd, ofd;
	const char *d;

	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	snprintf(target, sizeof(target), "origin.test:%d", lport);
	fd = cli_connect_via(&f, target, head, sizeof(head));
	ck_assert_str_eq(head, "HTTP/1.1 200 Connection established\r\n\r\n");
	ofd = origin_accept(lfd);
	cli_send(fd, ch, n);
	ck_assert_uint_eq(cli_recv_all(fd, (char *)buf, sizeof(buf)), 7);
	ck_assert(memcmp(buf, "\x15\x03\x03\x00\x02\x02\x31", 7) == 0);
	ck_assert_uint_eq(drain(ofd), 0);
	close(ofd);
	close(fd);
	usleep(50 * 1000);
	fx_stop(&f);
	close(lfd);
	ck_assert_str_eq(audit_rule(&f, &d),
			 "tls: encrypted_client_hello (ECH): the origin may serve the encrypted "
			 "inner name, which cannot be checked");
	ck_assert_str_eq(d, "deny");
}
END_TEST

/* After a retry, an alert instead of the second hello is refused and named. */
START_TEST(retry_other_record_refused)
{
	struct fx_proxy f;
	struct flow w;
	uint8_t sh[64], buf[64];
	size_t ns = server_hello(true, sh);
	int lport = 0, lfd = fx_listen("127.0.0.1", &lport);
	const char *d;

	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	open_flow(&f, lfd, lport, &w, "\x15\x03\x03\x00\x02\x01\x5a", 7, sh, ns);
	ck_assert_uint_eq(cli_recv_all(w.fd, (char *)buf, sizeof(buf)), 7);
	ck_assert_uint_eq(drain(w.ofd), 0);
	close(w.ofd);
	close(w.fd);
	usleep(50 * 1000);
	fx_stop(&f);
	close(lfd);
	ck_assert_str_eq(audit_rule(&f, &d),
			 "tls: record after HelloRetryRequest other than ClientHello (alert)");
}
END_TEST

/* Bulk both ways once the hellos are judged: the tunnel is a plain tunnel again. */
static void bulk(int a, int b)
{
	static char big[1 << 20], got[1 << 20];

	memset(big, 'z', sizeof(big));
	for (int dir = 0; dir < 2; dir++) {
		int from = dir ? b : a, to = dir ? a : b;
		pid_t p = fork();

		ck_assert_int_ge(p, 0);
		if (p == 0) {
			cli_send(from, big, sizeof(big));
			_exit(0);
		}
		ck_assert_uint_eq(cli_recv_n(to, got, sizeof(got)), sizeof(got));
		ck_assert_int_eq(waitpid(p, NULL, 0), p);
	}
}

/* The same name after the retry, or a plain ServerHello: the held bytes go through
 * unchanged and in order, then bulk both ways, spliced (Linux): the watch is over. */
START_TEST(retry_same_name_and_no_retry_pass)
{
	uint8_t next[700], sh[64], buf[700];
	int lport = 0, lfd = fx_listen("127.0.0.1", &lport);

	for (int hrr = 1; hrr >= 0; hrr--) {
		struct fx_proxy f;
		struct flow w;
		size_t ns = server_hello(hrr, sh), nn;
		cJSON *recs[4];
		int n;

		fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
		memcpy(next, ccs, 6);
		nn = 6 + hello("origin.test", next + 6);
		if (!hrr) /* early data behind the first hello: held, then let through */
			memcpy(next + 6, "\x17\x03\x03\x00\x02hi", 7), nn = 13;
		open_flow(&f, lfd, lport, &w, next, nn, sh, ns);
		ck_assert_uint_eq(cli_recv_n(w.ofd, (char *)buf, nn), nn);
		ck_assert(memcmp(buf, next, nn) == 0);
		bulk(w.fd, w.ofd);
		close(w.ofd);
		close(w.fd);
		usleep(50 * 1000);
		fx_halt(&f);
#ifdef PROXY_SPLICE
		ck_assert_uint_gt(f.px->pipes.lent, 0);
#endif
		fx_destroy(&f);
		n = fx_audit(&f, recs, 4);
		ck_assert_int_eq(n, 1);
		ck_assert_str_eq(js(recs[0], "decision"), "allow");
		fx_free_recs(recs, n);
	}
	close(lfd);
}
END_TEST

static Suite *hrr_suite(void)
{
	Suite *s = suite_create("proxy-hrr");
	TCase *tc = tcase_create("loopback");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, retry_naming_another_host_refused, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, retry_other_record_refused, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, retry_adding_ech_refused, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, first_hello_with_ech_refused, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, retry_same_name_and_no_retry_pass, FIRST_BACKEND, END_BACKEND);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(hrr_suite)
