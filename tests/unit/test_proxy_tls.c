/* A tunnel whose TLS the proxy terminates, fed hostile TLS from the command's side
 * (in-process, loopback, the epoll backend): records OpenSSL must refuse after a
 * ClientHello our own parser accepted, oversized and fragmented records, alerts, a cut
 * connection, plain bytes. Each ends with the tunnel closed (no hang: the client sees
 * the end within the bound), an audit record naming what failed, no request byte at
 * the origin, and no connection left open. */
#include "tests/unit/proxy_fixture.h"

#ifdef PROXY_TLS

static struct proxy_tls *tls;

static const char *lookup(void *arg, const char *name)
{
	(void)arg;
	return strcmp(name, "TOK") == 0 ? "t0ken" : NULL;
}

static void with_tls(struct proxy_options *o)
{
	struct halo_err e = {{0}};

	ck_assert_msg(proxy_tls_new(o->policy, lookup, NULL, &tls, &e) == 0, "%s", e.msg);
	o->tls = tls;
}

#define POLICY_TERM                                                                                \
	"egress:\n"                                                                                \
	"  default: deny\n"                                                                        \
	"  allowedDomains: [origin.test]\n"                                                        \
	"  allowPrivate: [127.0.0.0/8]\n"                                                          \
	"  credentials: [{host: origin.test, header: Authorization, value: \"Bearer ${TOK}\"}]\n"

/* A ClientHello our parser accepts (TLS 1.3 suite only, no extensions but the name):
 * OpenSSL refuses it later. As records of `frag` bytes. */
static size_t hello(size_t frag, uint8_t *out)
{
	static const char sni[] = "origin.test";
	uint8_t m[600];
	size_t n = 0, o = 0, sl = sizeof(sni) - 1;

	m[n++] = 1;
	n += 3;
	m[n++] = 3, m[n++] = 3;
	memset(m + n, 0xab, 32), n += 32;
	m[n++] = 0;
	m[n++] = 0, m[n++] = 2;
	m[n++] = 0x13, m[n++] = 1;
	m[n++] = 1, m[n++] = 0;
	m[n++] = 0, m[n++] = (uint8_t)(9 + sl);
	m[n++] = 0, m[n++] = 0;
	m[n++] = 0, m[n++] = (uint8_t)(sl + 5);
	m[n++] = 0, m[n++] = (uint8_t)(sl + 3);
	m[n++] = 0, m[n++] = 0, m[n++] = (uint8_t)sl;
	memcpy(m + n, sni, sl), n += sl;
	m[1] = 0, m[2] = (uint8_t)((n - 4) >> 8), m[3] = (uint8_t)(n - 4);
	for (size_t off = 0; off < n; off += frag) {
		size_t k = n - off < frag ? n - off : frag;
		out[o++] = 0x16, out[o++] = 3, out[o++] = 1;
		out[o++] = (uint8_t)(k >> 8), out[o++] = (uint8_t)k;
		memcpy(out + o, m + off, k), o += k;
	}
	return o;
}

struct hostile {
	const char *name;
	size_t frag;	   /* the hello's record size */
	const char *after; /* raw bytes after the hello */
	size_t after_len;
	bool cut;	   /* close our side right after */
	const char *error; /* a piece of the audit record's error, or NULL */
	const char *rule;  /* or of its rule */
	bool plain;	   /* no hello at all: `after` is the first flight */
};

#define RAW(s) s, sizeof(s) - 1
static const struct hostile rows[] = {
    {"a hello OpenSSL refuses", 1000, NULL, 0, false, "TLS with the command failed", NULL, false},
    {"the hello in 1-byte records", 1, NULL, 0, false, "TLS with the command failed", NULL, false},
    {"an oversized record after it", 1000,
     RAW("\x16\x03\x03\xff\xff"
	 "AAAA"),
     false, "TLS with the command failed", NULL, false},
    {"an alert record after it", 1000, RAW("\x15\x03\x03\x00\x02\x02\x28"), false,
     "TLS with the command failed", NULL, false},
    {"application data before any handshake", 1000, RAW("\x17\x03\x03\x00\x05hello"), false,
     "TLS with the command failed", NULL, false},
    {"a change_cipher_spec storm", 1000,
     RAW("\x14\x03\x03\x00\x01\x01\x14\x03\x03\x00\x01\x01\x14\x03\x03\x00\x01\x01"), false,
     "TLS with the command failed", NULL, false},
    {"cut right after the hello", 1000, NULL, 0, true, NULL, NULL, false},
    {"plain HTTP instead of TLS", 0, RAW("GET / HTTP/1.1\r\nHost: origin.test\r\n\r\n"), false,
     NULL, "not TLS", true},
};

START_TEST(hostile_records)
{
	const struct hostile *r = &rows[_i];
	struct fx_proxy f;
	uint8_t h[4096];
	char head[256], target[64], buf[8192];
	int lport = 0, lfd = fx_listen("127.0.0.1", &lport), fd, ofd;
	size_t len = r->plain ? 0 : hello(r->frag, h);
	cJSON *recs[8];
	int n;

	fx_start(&f, PROXY_POLLER_EPOLL, POLICY_TERM, with_tls);
	snprintf(target, sizeof(target), "origin.test:%d", lport);
	fd = cli_connect_via(&f, target, head, sizeof(head));
	ck_assert_str_eq(head, "HTTP/1.1 200 Connection established\r\n\r\n");
	{
		struct pollfd p = {lfd, POLLIN, 0};
		ck_assert_int_eq(poll(&p, 1, 2000), 1);
		ofd = accept(lfd, NULL, NULL);
	}
	if (len)
		cli_send(fd, h, len);
	if (r->after_len)
		cli_send(fd, r->after, r->after_len);
	if (r->cut)
		shutdown(fd, SHUT_WR);
	cli_recv_all(fd, buf, sizeof(buf)); /* bounded: the proxy must close */
	close(fd);
	/* The origin got at most the proxy's own ClientHello, never a request. */
	{
		struct pollfd p = {ofd, POLLIN, 0};
		size_t got = 0;
		while (poll(&p, 1, 1000) == 1) {
			ssize_t k = recv(ofd, buf + got, sizeof(buf) - got, 0);
			if (k <= 0)
				break;
			got += (size_t)k;
		}
		ck_assert(got == 0 || (uint8_t)buf[0] == 0x16);
		ck_assert(!memmem(buf, got, "t0ken", 5) && !memmem(buf, got, "GET /", 5));
	}
	close(ofd);
	usleep(50 * 1000);
	fx_stop(&f);
	proxy_tls_free(tls);
	tls = NULL;
	close(lfd);
	ck_assert_uint_eq(f.st.conns_open, 0);
	n = fx_audit(&f, recs, 8);
	ck_assert_int_ge(n, 1);
	if (r->error)
		ck_assert_msg(js(recs[0], "error") && strstr(js(recs[0], "error"), r->error),
			      "%s: error %s", r->name, js(recs[0], "error"));
	if (r->rule)
		ck_assert_msg(strstr(js(recs[0], "rule"), r->rule), "%s: rule %s", r->name,
			      js(recs[0], "rule"));
	fx_free_recs(recs, n);
}
END_TEST

/* The CA: name-constrained to the terminated hosts, and its PEM and the bundle hold it. */
START_TEST(ca_material)
{
	struct halo_policy *p = fx_policy(POLICY_TERM);
	struct halo_err e = {{0}};
	char *pem = NULL, *bundle = NULL;
	size_t pl = 0, bl = 0;

	ck_assert_int_eq(proxy_tls_new(p, lookup, NULL, &tls, &e), 0);
	ck_assert_int_eq(proxy_tls_ca_pem(tls, &pem, &pl, &e), 0);
	ck_assert_int_eq(proxy_tls_bundle(tls, &bundle, &bl, &e), 0);
	ck_assert(strstr(pem, "-----BEGIN CERTIFICATE-----") && !strstr(pem, "PRIVATE"));
	ck_assert(bl >= pl && strstr(bundle, pem) && !strstr(bundle, "PRIVATE"));
	free(pem);
	free(bundle);
	proxy_tls_free(tls);
	tls = NULL;
	policy_free(p);
}
END_TEST

/* In two steps, as a launch makes it: no key and no CA before proxy_tls_make_ca (the
 * sandbox's init is cloned in between), so no CA material either; the keys once. */
START_TEST(ca_after_prepare)
{
	struct halo_policy *p = fx_policy(POLICY_TERM);
	struct halo_err e = {{0}};
	unsigned char ca[32], leaf[32], ca2[32], leaf2[32];
	char *pem = NULL;
	size_t pl = 0;

	ck_assert_int_eq(proxy_tls_prepare(p, lookup, NULL, &tls, &e), 0);
	ck_assert_int_eq(proxy_tls_key_digests(tls, ca, leaf), -EINVAL);
	ck_assert_int_lt(proxy_tls_ca_pem(tls, &pem, &pl, &e), 0);
	ck_assert_ptr_null(pem);
	ck_assert_int_eq(proxy_tls_make_ca(tls, &e), 0);
	ck_assert_int_eq(proxy_tls_key_digests(tls, ca, leaf), 0);
	ck_assert(memcmp(ca, leaf, sizeof(ca)) != 0);
	ck_assert_int_eq(proxy_tls_make_ca(tls, &e), -EEXIST);
	ck_assert_int_eq(proxy_tls_key_digests(tls, ca2, leaf2), 0);
	ck_assert(memcmp(ca, ca2, sizeof(ca)) == 0 && memcmp(leaf, leaf2, sizeof(leaf)) == 0);
	ck_assert_int_eq(proxy_tls_ca_pem(tls, &pem, &pl, &e), 0);
	free(pem);
	proxy_tls_free(tls);
	tls = NULL;
	policy_free(p);
}
END_TEST

START_TEST(missing_variable_named)
{
	struct halo_policy *p = fx_policy(
	    "egress:\n  allowedDomains: [origin.test]\n"
	    "  credentials: [{host: origin.test, header: X-K, value: \"${NOT_SET_ANYWHERE}\"}]\n");
	struct halo_err e = {{0}};

	ck_assert_int_eq(proxy_tls_new(p, lookup, NULL, &tls, &e), -ENOENT);
	ck_assert_ptr_null(tls);
	ck_assert_msg(strstr(e.msg, "NOT_SET_ANYWHERE is not set"), "%s", e.msg);
	policy_free(p);
}
END_TEST

START_TEST(unreadable_trusted_ca_named)
{
	struct halo_policy *p = fx_policy(
	    "egress:\n  allowedDomains: [origin.test]\n  trustedCAs: [/nonexistent/ca.pem]\n"
	    "  requestRules: [{host: origin.test}]\n");
	struct halo_err e = {{0}};

	ck_assert_int_eq(proxy_tls_new(p, lookup, NULL, &tls, &e), -EINVAL);
	ck_assert_msg(strstr(e.msg, "egress.trustedCAs[0] /nonexistent/ca.pem"), "%s", e.msg);
	policy_free(p);
}
END_TEST

static Suite *proxy_tls_suite(void)
{
	Suite *s = suite_create("proxy_tls");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, hostile_records, 0, (int)(sizeof(rows) / sizeof(rows[0])));
	tcase_add_test(tc, ca_material);
	tcase_add_test(tc, ca_after_prepare);
	tcase_add_test(tc, missing_variable_named);
	tcase_add_test(tc, unreadable_trusted_ca_named);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(proxy_tls_suite)

#else

int main(void)
{
	printf("skip - %s: TLS termination: not in this build\n", __FILE__);
	return 0;
}

#endif
