/* The DNS stub and capture inside the proxy engine: queries over UDP and TCP (several
 * on one connection, lengths out of bounds closing it), answers by policy with stable
 * fake addresses, the fail-closed answer when no capture listener was handed over, a
 * connection to the capture listener that was not redirected (refused, audited), and
 * a fake address sent as a CONNECT target or in a forwarded request's URL (decided,
 * and its request rules judged, as its name). Loopback only. */
#include "tests/unit/proxy_fixture.h"

#define POLICY_DNS                                                                                 \
	"egress:\n"                                                                                \
	"  default: deny\n"                                                                        \
	"  allowedDomains: [origin.test, 'git.test:22']\n"                                         \
	"  deniedDomains: [pastebin.com]\n"                                                        \
	"  allowPrivate: [127.0.0.0/8]\n"

/* Every lookup the supervisor makes: the stub itself never makes one. */
static atomic_int lookups;

static int counting_lookup(const char *name, struct proxy_addr *out, size_t max, size_t *n)
{
	atomic_fetch_add(&lookups, 1);
	return fx_lookup(name, out, max, n);
}

static int dns_udp_port, dns_tcp_port, cap_port;
static bool with_capture;

static void add_dns(struct proxy_options *o)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(a);
	int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(u, 0);
	ck_assert_int_eq(bind(u, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(u, (struct sockaddr *)&a, &sl), 0);
	dns_udp_port = ntohs(a.sin_port);
	o->listeners[o->n_listeners++] =
	    (struct proxy_listener){.fd = u, .kind = PROXY_LISTEN_DNS_UDP};
	dns_tcp_port = 0;
	o->listeners[o->n_listeners++] = (struct proxy_listener){
	    .fd = fx_listen("127.0.0.1", &dns_tcp_port), .kind = PROXY_LISTEN_DNS_TCP};
	if (with_capture) {
		cap_port = 0;
		o->listeners[o->n_listeners++] = (struct proxy_listener){
		    .fd = fx_listen("127.0.0.1", &cap_port), .kind = PROXY_LISTEN_CAPTURE};
	}
}

static size_t query(uint8_t *q, uint16_t id, const char *name, uint16_t type)
{
	size_t n = 12;
	const char *p = name;

	memset(q, 0, 12);
	q[0] = (uint8_t)(id >> 8);
	q[1] = (uint8_t)id;
	q[2] = 1;
	q[5] = 1;
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);

		q[n++] = (uint8_t)l;
		memcpy(q + n, p, l);
		n += l;
		p += l + (dot ? 1 : 0);
	}
	q[n++] = 0;
	q[n++] = 0;
	q[n++] = (uint8_t)type;
	q[n++] = 0;
	q[n++] = 1;
	return n;
}

/* rcode, and the A record's address into a4 when there is one; -1 for no answer. */
static int ask_udp(const uint8_t *q, size_t n, uint8_t a4[4])
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)dns_udp_port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	uint8_t r[1024];
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct pollfd p = {fd, POLLIN, 0};
	ssize_t got = -1;

	ck_assert_int_eq(sendto(fd, q, n, 0, (struct sockaddr *)&a, sizeof(a)), (ssize_t)n);
	if (poll(&p, 1, 1000) == 1)
		got = recv(fd, r, sizeof(r), 0);
	close(fd);
	if (got < 12)
		return -1;
	ck_assert(r[0] == q[0] && r[1] == q[1] && (r[2] & 0x80));
	if (r[7] == 1 && a4)
		memcpy(a4, r + got - 4, 4);
	return r[3] & 15;
}

static const struct {
	const char *name;
	uint16_t type;
	int rcode;
	bool addr;
} rows[] = {
    {"origin.test", 1, 0, true},   {"Origin.TEST", 1, 0, true},	   {"git.test", 1, 0, true},
    {"origin.test", 28, 0, false}, {"origin.test", 16, 5, false},  {"origin.test", 255, 5, false},
    {"pastebin.com", 1, 3, false}, {"pastebin.com", 16, 5, false}, {"other.test", 28, 3, false},
};

START_TEST(udp_table)
{
	struct fx_proxy f;
	uint8_t q[512], a4[4], first[4] = {0};

	with_capture = true;
	fx_start(&f, FIRST_BACKEND, POLICY_DNS, add_dns);
	proxy_resolver_set_lookup(counting_lookup);
	atomic_store(&lookups, 0);
	for (int i = 0; i < (int)(sizeof(rows) / sizeof(rows[0])); i++) {
		size_t n = query(q, (uint16_t)(0x100 + i), rows[i].name, rows[i].type);
		int rc;

		memset(a4, 0, 4);
		rc = ask_udp(q, n, a4);
		ck_assert_msg(rc == rows[i].rcode, "%s type %u: rcode %d", rows[i].name,
			      rows[i].type, rc);
		if (rows[i].addr)
			ck_assert_msg(a4[0] == 198 && (a4[1] & 0xfe) == 18, "%s: %u.%u",
				      rows[i].name, a4[0], a4[1]);
		if (i == 0)
			memcpy(first, a4, 4);
		if (i == 1) /* the same name, whatever its case: the same address */
			ck_assert(memcmp(first, a4, 4) == 0);
		if (i == 2)
			ck_assert(memcmp(first, a4, 4) != 0);
	}
	/* a response and a runt are never answered; a cut question is FORMERR */
	size_t n = query(q, 7, "origin.test", 1);
	q[2] |= 0x80;
	ck_assert_int_eq(ask_udp(q, n, NULL), -1);
	ck_assert_int_eq(ask_udp(q, 5, NULL), -1);
	q[2] &= 0x7f;
	ck_assert_int_eq(ask_udp(q, n - 3, NULL), 1);
	fx_stop(&f);
	/* no answer, allowed or denied, was looked up: nothing left through a lookup */
	ck_assert_int_eq(atomic_load(&lookups), 0);
	char *log = fx_slurp(f.log);
	ck_assert_msg(strstr(log, "egress denied: lookup of pastebin.com (deniedDomains[0] "
				  "pastebin.com)"),
		      "%s", log);
	free(log);
}
END_TEST

START_TEST(tcp_framing)
{
	struct fx_proxy f;
	uint8_t q[2 + 512], r[2048];
	size_t n, got = 0;
	int fd;

	with_capture = true;
	fx_start(&f, FIRST_BACKEND, POLICY_DNS, add_dns);
	fd = cli_connect(dns_tcp_port);
	/* two queries in one write (glibc sends A and AAAA together) */
	n = query(q + 2, 1, "origin.test", 1);
	q[0] = 0;
	q[1] = (uint8_t)n;
	cli_send(fd, q, n + 2);
	cli_send(fd, q, n + 2);
	while (got < 2 * (n + 2 + 16)) {
		struct pollfd p = {fd, POLLIN, 0};
		ssize_t k;

		ck_assert_int_eq(poll(&p, 1, 2000), 1);
		k = recv(fd, r + got, sizeof(r) - got, 0);
		ck_assert_int_gt(k, 0);
		got += (size_t)k;
	}
	ck_assert_uint_eq(got, 2 * (n + 2 + 16));
	ck_assert(r[0] == 0 && r[1] == n + 16 && (r[2 + 3] & 15) == 0 && r[2 + 7] == 1);
	/* a length beyond any query closes the connection */
	cli_send(fd, "\xff\xff", 2);
	struct pollfd p = {fd, POLLIN, 0};
	ck_assert_int_eq(poll(&p, 1, 2000), 1);
	ck_assert_int_eq(recv(fd, r, sizeof(r), 0), 0);
	close(fd);
	/* and so does one shorter than a header */
	fd = cli_connect(dns_tcp_port);
	cli_send(fd, "\x00\x05hello", 7);
	p.fd = fd;
	ck_assert_int_eq(poll(&p, 1, 2000), 1);
	ck_assert_int_eq(recv(fd, r, sizeof(r), 0), 0);
	close(fd);
	fx_stop(&f);
}
END_TEST

START_TEST(no_capture_refused)
{
	struct fx_proxy f;
	uint8_t q[512];
	size_t n;

	with_capture = false;
	fx_start(&f, FIRST_BACKEND, POLICY_DNS, add_dns);
	n = query(q, 9, "origin.test", 1);
	ck_assert_int_eq(ask_udp(q, n, NULL), 5); /* REFUSED: no fake address to hand out */
	n = query(q, 9, "pastebin.com", 1);
	ck_assert_int_eq(ask_udp(q, n, NULL), 3);
	fx_stop(&f);
	char *log = fx_slurp(f.log);
	ck_assert_msg(strstr(log, "connection capture could not be set up"), "%s", log);
	free(log);
}
END_TEST

START_TEST(capture_not_redirected)
{
	struct fx_proxy f;
	char buf[256];
	cJSON *recs[8];
	int fd, n;

	with_capture = true;
	fx_start(&f, FIRST_BACKEND, POLICY_DNS, add_dns);
	fd = cli_connect(cap_port);
	struct pollfd p = {fd, POLLIN, 0};
	ck_assert_int_eq(poll(&p, 1, 3000), 1);
	ck_assert_int_le(recv(fd, buf, sizeof(buf), 0), 0); /* closed, nothing said */
	close(fd);
	fx_stop(&f);
	n = fx_audit(&f, recs, 8);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(js(recs[0], "proto"), "captured");
	ck_assert_str_eq(js(recs[0], "decision"), "deny");
	ck_assert_ptr_nonnull(strstr(js(recs[0], "rule"), "captured: "));
	fx_free_recs(recs, n);
}
END_TEST

START_TEST(connect_to_fake_address)
{
	struct fx_proxy f;
	uint8_t q[512], a4[4];
	char req[256], buf[1024];
	cJSON *recs[8];
	int hold[2], port = fx_refusing_port(hold), fd, n;

	with_capture = true;
	fx_start(&f, FIRST_BACKEND, POLICY_DNS, add_dns);
	ck_assert_int_eq(ask_udp(q, query(q, 3, "origin.test", 1), a4), 0);
	snprintf(req, sizeof(req), "CONNECT %u.%u.%u.%u:%d HTTP/1.1\r\n\r\n", a4[0], a4[1], a4[2],
		 a4[3], port);
	fd = cli_connect(f.http_port);
	cli_sends(fd, req);
	cli_recv_until(fd, buf, sizeof(buf), "\r\n\r\n");
	ck_assert_msg(strncmp(buf, "HTTP/1.1 502", 12) == 0, "%s", buf); /* dialled, refused */
	close(fd);
	/* a CONNECT to git.test:22 refused: the 403, then SSH's disconnect naming the rule */
	fd = cli_connect(f.http_port);
	cli_sends(fd, "CONNECT git.test:2222 HTTP/1.1\r\n\r\n");
	cli_recv_until(fd, buf, sizeof(buf), "\r\n\r\n");
	ck_assert(strncmp(buf, "HTTP/1.1 403", 12) == 0 && !strstr(buf, "SSH-2.0"));
	close(fd);
	fx_stop(&f);
	n = fx_audit(&f, recs, 8);
	ck_assert_int_ge(n, 3);
	ck_assert_str_eq(js(recs[1], "proto"), "connect");
	ck_assert_str_eq(js(recs[1], "host"), "origin.test"); /* decided as the name */
	ck_assert_str_eq(js(recs[1], "decision"), "allow");
	ck_assert_str_eq(js(recs[1], "address"), "127.0.0.1");
	fx_free_recs(recs, n);
	close(hold[0]);
	close(hold[1]);
}
END_TEST

/* Plain http:// forwarding to a fake address is judged as its name before anything
 * else (review 21): the request rules of the name hold, the denial and the audit name
 * it, and the origin's Host field is the name the rules were judged for. */
#define POLICY_DNS_RULES                                                                           \
	POLICY_DNS "  requestRules: [{host: origin.test, methods: [GET], paths: [\"/ok/*\"]}]\n"

START_TEST(forward_to_fake_address_judged_by_name)
{
	struct fx_proxy f;
	struct http_origin h;
	uint8_t q[512], a4[4];
	char ip[32], req[512], buf[2048], last[8192];
	cJSON *recs[8];
	int fd, n;

	with_capture = true;
	http_origin_start(&h);
	fx_start(&f, FIRST_BACKEND, POLICY_DNS_RULES, add_dns);
	ck_assert_int_eq(ask_udp(q, query(q, 4, "origin.test", 1), a4), 0);
	snprintf(ip, sizeof(ip), "%u.%u.%u.%u", a4[0], a4[1], a4[2], a4[3]);
	static const char *const denied[] = {"POST /admin/x", "GET /admin",
					     "GET /ok/%c0%ae%c0%ae/x"};
	for (int i = 0; i < 3; i++) {
		char method[8], path[64];

		sscanf(denied[i], "%7s %63s", method, path);
		snprintf(
		    req, sizeof(req),
		    "%s http://%s:%d%s HTTP/1.1\r\nHost: %s:%d\r\nContent-Length: %d\r\n\r\n%s",
		    method, ip, h.port, path, ip, h.port, method[0] == 'P' ? 3 : 0,
		    method[0] == 'P' ? "x=1" : "");
		fd = cli_connect(f.http_port);
		cli_sends(fd, req);
		cli_recv_until(fd, buf, sizeof(buf), "\r\n\r\n");
		ck_assert_msg(
		    status_of(buf) == 403 &&
			strstr(buf, "X-Halo-Deny: origin.test (requestRules for origin.test"),
		    "%s: %s", denied[i], buf);
		close(fd);
	}
	snprintf(req, sizeof(req), "GET http://%s:%d/ok/cl HTTP/1.1\r\nHost: %s:%d\r\n\r\n", ip,
		 h.port, ip, h.port);
	fd = cli_connect(f.http_port);
	cli_sends(fd, req);
	cli_recv_until(fd, buf, sizeof(buf), "\r\n\r\n");
	ck_assert_msg(status_of(buf) == 404 && !strstr(buf, "X-Halo"), "%s",
		      buf); /* the origin's */
	close(fd);
	fx_stop(&f);
	http_origin_stop(&h);
	ck_assert_int_eq(atomic_load(&h.served), 1); /* the denied ones never reached it */
	http_origin_last(&h, last, sizeof(last));
	snprintf(req, sizeof(req), "GET /ok/cl HTTP/1.1\r\nHost: origin.test:%d\r\n", h.port);
	ck_assert_msg(strncmp(last, req, strlen(req)) == 0, "%s", last);
	n = fx_audit(&f, recs, 8);
	ck_assert_int_ge(n, 4);
	for (int i = 0; i < n; i++) {
		if (strcmp(js(recs[i], "proto"), "http") != 0)
			continue;
		ck_assert_str_eq(js(recs[i], "host"), "origin.test");
	}
	fx_free_recs(recs, n);
}
END_TEST

START_TEST(connect_22_ssh_answer)
{
	struct fx_proxy f;
	char buf[4096];
	size_t got = 0;
	int fd;

	with_capture = true;
	fx_start(&f, FIRST_BACKEND, POLICY_DNS, add_dns);
	fd = cli_connect(f.http_port);
	cli_sends(fd, "CONNECT other.test:22 HTTP/1.1\r\n\r\n");
	for (;;) {
		struct pollfd p = {fd, POLLIN, 0};
		ssize_t k;

		ck_assert_int_eq(poll(&p, 1, 3000), 1);
		k = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	fx_stop(&f);
	ck_assert(got > 0 && strncmp(buf, "HTTP/1.1 403", 12) == 0);
	char *ssh = memmem(buf, got, "\nSSH-2.0-halo-run\r\n", 19);
	ck_assert_ptr_nonnull(ssh);
	ck_assert_ptr_nonnull(memmem(ssh, got - (size_t)(ssh - buf),
				     "halo-run: egress denied: other.test:22 (default deny)", 53));
}
END_TEST

static Suite *proxy_dns_suite(void)
{
	Suite *s = suite_create("proxy_dns");
	TCase *tc = tcase_create("dns");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, udp_table);
	tcase_add_test(tc, tcp_framing);
	tcase_add_test(tc, no_capture_refused);
	tcase_add_test(tc, capture_not_redirected);
	tcase_add_test(tc, connect_to_fake_address);
	tcase_add_test(tc, forward_to_fake_address_judged_by_name);
	tcase_add_test(tc, connect_22_ssh_answer);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(proxy_dns_suite)
