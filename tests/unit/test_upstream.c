/* egress.upstreamProxy: the URL grammar (hostile table), `env` resolution, NO_PROXY,
 * the CONNECT request and the judging of the upstream's answer, and the exchange
 * through a scripted fake upstream on loopback (credentials sent, bytes that follow
 * the upstream's head delivered after halo-run's own answer, 407 and a closed
 * upstream answered 502 naming the upstream, denied names never sent). */
#include <arpa/inet.h>

#include "tests/unit/proxy_fixture.h"

struct url_row {
	const char *in;
	bool env;
	bool ok;
	const char *want; /* ok: "host port auth", else a piece of why */
};

static const struct url_row url_rows[] = {
    {"http://proxy.corp.example:8080", false, true, "proxy.corp.example 8080 "},
    {"HTTP://Proxy.Corp.Example:8080/", false, true, "proxy.corp.example 8080 "},
    {"http://10.1.2.3:3128", false, true, "10.1.2.3 3128 "},
    {"http://[::1]:3128", false, true, "::1 3128 "},
    {"http://[2001:db8::1]:1", false, true, "2001:db8::1 1 "},
    {"proxy:3128", true, true, "proxy 3128 "},
    {"http://u:p@proxy:3128", true, true, "proxy 3128 u:p"},
    {"http://u%40corp:p%3Ass@proxy:3128", true, true, "proxy 3128 u@corp:p:ss"},
    {"http://u:@proxy:3128", true, true, "proxy 3128 u:"},
    {"", false, false, "empty"},
    {"proxy:3128", false, false, "expected http://"},
    {"https://proxy:3128", false, false, "TLS"},
    {"HTTPS://proxy:3128", true, false, "TLS"},
    {"socks5://proxy:1080", true, false, "SOCKS"},
    {"socks5h://proxy:1080", false, false, "SOCKS"},
    {"ftp://proxy:21", false, false, "unknown scheme"},
    {"://proxy:1", false, false, "scheme"},
    {"http://proxy", false, false, "port is missing"},
    {"http://proxy:", false, false, "port is missing"},
    {"http://proxy:0", false, false, "1 to 65535"},
    {"http://proxy:65536", false, false, "1 to 65535"},
    {"http://proxy:080", false, false, "1 to 65535"},
    {"http://proxy:+80", false, false, "1 to 65535"},
    {"http://proxy:8080x", false, false, "1 to 65535"},
    {"http://proxy:99999999999", false, false, "1 to 65535"},
    {"http://proxy:8080/path", false, false, "path"},
    {"http://proxy:8080?x", false, false, "query"},
    {"http://proxy:8080#f", false, false, "fragment"},
    {"http://proxy:80 80", false, false, "blank"},
    {"http://pro\txy:80", false, false, "blank"},
    {"http://u:p@proxy:3128", false, false, "credentials do not belong"},
    {"http://u@proxy:3128", true, false, "without a password"},
    {"http://a@b@proxy:3128", true, false, "more than one"},
    {"http://u:p%0a@proxy:3128", true, false, "userinfo"},
    {"http://u:p%zz@proxy:3128", true, false, "userinfo"},
    {"http://u:p%4@proxy:3128", true, false, "userinfo"},
    {"http://:3128", false, false, "host is missing"},
    {"http://[::1:3128", false, false, "closing"},
    {"http://[::1]", false, false, "port is missing"},
    {"http://::1:3128", false, false, "host"},
    {"http://pro..xy:1", false, false, "host"},
    {"http://0x7f.1:3128", false, false, "host"},
    {"http://proxy%2ecorp:1", false, false, "host"},
    {"http://-proxy:1", false, false, "host"},
    {"env", false, false, "expected http://"}, /* the word is the caller's, not a URL */
};

START_TEST(url_table)
{
	const struct url_row *r = &url_rows[_i];
	struct policy_upstream u;
	char why[256] = "", got[1024];
	int rc = policy_upstream_parse(r->in, r->env, &u, why, sizeof(why));

	if (!r->ok) {
		ck_assert_msg(rc == -EINVAL, "%s: accepted", r->in);
		ck_assert_msg(strstr(why, r->want), "%s: why [%s] lacks [%s]", r->in, why, r->want);
		ck_assert_msg(!u.on && !u.auth[0], "%s: left state behind", r->in);
		return;
	}
	ck_assert_msg(rc == 0, "%s: refused: %s", r->in, why);
	snprintf(got, sizeof(got), "%s %u %s", u.host.text, u.port, u.auth);
	ck_assert_str_eq(got, r->want);
	ck_assert(u.on);
}
END_TEST

static struct halo_policy *pol_with(const char *up)
{
	static char yaml[512];

	snprintf(yaml, sizeof(yaml),
		 "egress:\n  default: deny\n  allowedDomains: [origin.test]\n"
		 "  upstreamProxy: '%s'\n",
		 up);
	return fx_policy(yaml);
}

START_TEST(env_resolution)
{
	struct halo_policy *pe = pol_with("env"), *pu = pol_with("http://corp:8080");
	struct policy_upstream u;
	char why[256];
	struct policy_upstream_env none = {0};
	struct policy_upstream_env lower = {.https_proxy = "http://a:b@low:1",
					    .HTTPS_PROXY = "http://up:2",
					    .http_proxy = "http://h:3",
					    .NO_PROXY = "x.example"};
	struct policy_upstream_env http_only = {.HTTP_PROXY = "http://h:3", .auth = "me:pw"};
	struct policy_upstream_env bad = {.HTTPS_PROXY = "https://up:2"};
	struct policy_upstream_env all_only = {.ALL_PROXY = "http://all:4"};
	struct policy_upstream_env all_last = {.ALL_PROXY = "http://all:4",
					       .http_proxy = "http://h:3"};
	struct policy_upstream_env all_socks = {.all_proxy = "socks5://s:1080"};

	ck_assert_int_eq(policy_upstream_resolve(pe, &none, &u, why, sizeof(why)), 0);
	ck_assert(!u.on); /* env without a variable: direct */
	ck_assert_int_eq(policy_upstream_resolve(pe, &lower, &u, why, sizeof(why)), 0);
	ck_assert_str_eq(u.host.text, "low");
	ck_assert_str_eq(u.from, "https_proxy");
	ck_assert_str_eq(u.auth, "a:b");
	ck_assert_str_eq(u.auth_from, "https_proxy");
	ck_assert_str_eq(u.no_proxy, "x.example");
	ck_assert_int_eq(policy_upstream_resolve(pe, &http_only, &u, why, sizeof(why)), 0);
	ck_assert_str_eq(u.host.text, "h");
	ck_assert_str_eq(u.auth, "me:pw");
	ck_assert_str_eq(u.auth_from, POLICY_UPSTREAM_AUTH_ENV);
	ck_assert_int_eq(policy_upstream_resolve(pe, &bad, &u, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "HTTPS_PROXY: ") && strstr(why, "TLS"), "%s", why);
	/* ALL_PROXY, as curl reads it: the last resort, never over a protocol's own. */
	ck_assert_int_eq(policy_upstream_resolve(pe, &all_only, &u, why, sizeof(why)), 0);
	ck_assert(u.on);
	ck_assert_str_eq(u.host.text, "all");
	ck_assert_str_eq(u.from, "ALL_PROXY");
	ck_assert_int_eq(policy_upstream_resolve(pe, &all_last, &u, why, sizeof(why)), 0);
	ck_assert_str_eq(u.from, "http_proxy");
	ck_assert_int_eq(policy_upstream_resolve(pe, &all_socks, &u, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "all_proxy: "), "%s", why);
	/* A policy URL: the caller's variables are not the route, NO_PROXY unused. */
	ck_assert_int_eq(policy_upstream_resolve(pu, &lower, &u, why, sizeof(why)), 0);
	ck_assert_str_eq(u.host.text, "corp");
	ck_assert_str_eq(u.from, "egress.upstreamProxy");
	ck_assert_str_eq(u.no_proxy, "");
	ck_assert(u.auth_from == NULL && !u.auth[0]);
	ck_assert_int_eq(policy_upstream_resolve(pu, &http_only, &u, why, sizeof(why)), 0);
	ck_assert_str_eq(u.auth, "me:pw");
	struct policy_upstream_env badauth = {.auth = "nocolon"};
	ck_assert_int_eq(policy_upstream_resolve(pu, &badauth, &u, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, POLICY_UPSTREAM_AUTH_ENV), "%s", why);
	policy_free(pe);
	policy_free(pu);
}
END_TEST

START_TEST(layering_replaces)
{
	struct policy_ctx ctx = {.pw_home = "/nonexistent-home", .workspace = "/tmp"};
	const char *a = "egress:\n  allowedDomains: [a.com]\n  upstreamProxy: http://one:1\n";
	const char *b = "egress:\n  upstreamProxy: env\n";
	const char *c = "egress:\n  deniedDomains: [x.com]\n";
	struct policy_diags d = {0};
	struct halo_policy *base = NULL, *up = NULL, *up2 = NULL;

	ck_assert_int_eq(policy_parse_buffer("a", a, strlen(a), 'y', &base, &d), 0);
	ck_assert_int_eq(policy_parse_buffer("b", b, strlen(b), 'y', &up, &d), 0);
	ck_assert_int_eq(policy_parse_buffer("c", c, strlen(c), 'y', &up2, &d), 0);
	ck_assert_int_eq(policy_layer(base, up, "b", &d), 0);
	ck_assert_str_eq(base->upstream_proxy, "env");
	ck_assert_int_eq(policy_layer(base, up2, "c", &d), 0); /* unset: kept */
	ck_assert_str_eq(base->upstream_proxy, "env");
	ck_assert_int_eq(policy_finalize(base, &ctx, &d), 0);
	policy_diags_free(&d);
	policy_free(base);
	policy_free(up);
	policy_free(up2);
}
END_TEST

START_TEST(validation_and_json)
{
	const char *bad[] = {"http://u:p@corp:1", "https://corp:1", "corp:1", "http://corp"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char yaml[256];
		struct policy_diags d = {0};
		struct halo_policy *p = NULL;
		struct policy_ctx ctx = {.pw_home = "/nonexistent-home", .workspace = "/tmp"};

		snprintf(yaml, sizeof(yaml), "egress:\n  upstreamProxy: '%s'\n", bad[i]);
		ck_assert_int_eq(policy_parse_buffer("t", yaml, strlen(yaml), 'y', &p, &d), 0);
		ck_assert_int_ne(policy_finalize(p, &ctx, &d), 0);
		ck_assert_msg(d.n_errors == 1 && strstr(d.errors[0], "egress.upstreamProxy"), "%s",
			      d.n_errors ? d.errors[0] : "no error");
		policy_diags_free(&d);
		policy_free(p);
	}
	struct halo_policy *p = pol_with("http://corp:8080");
	char *json = policy_to_json(p);
	ck_assert_msg(strstr(json, "\"upstreamProxy\":\t\"http://corp:8080\"") ||
			  strstr(json, "\"upstreamProxy\":\"http://corp:8080\""),
		      "%s", json);
	free(json);
	policy_free(p);
}
END_TEST

struct np_row {
	const char *no_proxy, *host;
	unsigned port;
	bool bypass;
};
static const struct np_row np_rows[] = {
    {"*", "a.example", 443, true},
    {"example.com", "example.com", 443, true},
    {"example.com", "git.example.com", 443, true},
    {"example.com", "badexample.com", 443, false},
    {".example.com", "example.com", 443, true},
    {"*.example.com", "a.example.com", 443, true},
    {"localhost, .corp", "git.corp", 22, true},
    {"a.com:22", "a.com", 22, true},
    {"a.com:22", "a.com", 443, false},
    {"10.1.2.3", "10.1.2.3", 80, true},
    {"10.1.2.3", "10.1.2.30", 80, false},
    {"[::1]:80", "::1", 80, true},
    {"::1", "::1", 80, true},
    {"10.0.0.0/8", "10.1.2.3", 80, false}, /* CIDRs are not understood: not a bypass */
    {"EXAMPLE.com", "example.com", 1, true},
    {"", "a.com", 1, false},
    {",,, ,", "a.com", 1, false},
    {"a.com:0", "a.com", 1, false},
    {"*.*", "a.com", 1, false},
};

START_TEST(no_proxy_table)
{
	const struct np_row *r = &np_rows[_i];
	struct policy_upstream u = {.on = true};
	struct policy_host h;

	snprintf(u.no_proxy, sizeof(u.no_proxy), "%s", r->no_proxy);
	ck_assert_int_eq(policy_host_parse(r->host, strlen(r->host), true, &h, NULL, 0), 0);
	ck_assert_msg(policy_upstream_bypass(&u, &h, r->port) == r->bypass, "[%s] %s:%u",
		      r->no_proxy, r->host, r->port);
}
END_TEST

START_TEST(request_and_judge)
{
	char buf[512], why[256];
	size_t hl = 0;
	int n = upstream_request("origin.test", false, 443, "", buf, sizeof(buf));

	ck_assert_int_gt(n, 0);
	ck_assert_str_eq(buf, "CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\n\r\n");
	upstream_request("2001:db8::1", true, 22, "Proxy-Authorization: Basic eDp5\r\n", buf,
			 sizeof(buf));
	ck_assert_str_eq(buf, "CONNECT [2001:db8::1]:22 HTTP/1.1\r\nHost: [2001:db8::1]:22\r\n"
			      "Proxy-Authorization: Basic eDp5\r\n\r\n");
	ck_assert_int_eq(upstream_request("a", false, 1, "", buf, 20), -ENOSPC);

	const struct {
		const char *head;
		int rc;
		const char *why;
	} rows[] = {
	    {"HTTP/1.1 200 Connection established\r\n\r\nSSH-2.0-x", 0, NULL},
	    {"HTTP/1.0 200 OK\r\nProxy-Agent: t\r\n\r\n", 0, NULL},
	    {"HTTP/1.1 204 x\r\n\r\n", 0, NULL},
	    {"HTTP/1.1 200 OK\r\n", -EAGAIN, NULL},
	    {"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n", -EPROTO,
	     "up:1 answered 407 (Proxy Authentication Required)"},
	    {"HTTP/1.1 403\r\n\r\n", -EPROTO, "up:1 answered 403"},
	    {"HTTP/1.1 502 \x01\xff\r\n\r\n", -EPROTO,
	     "answered 502 (?"
	     "?)"},
	    {"HTTP/1.1 302 Found\r\nLocation: x\r\n\r\n", -EPROTO, "answered 302 (Found)"},
	    {"SSH-2.0-OpenSSH\r\n\r\n", -EPROTO, "malformed"},
	    {"HTTP/2 200\r\n\r\n", -EPROTO, "malformed"},
	    {"HTTP/1.1 2000 x\r\n\r\n", -EPROTO, "malformed"},
	    {"HTTP/1.1 200 OK\nX: y\n\n", -EPROTO, "malformed"},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		why[0] = '\0';
		int rc = upstream_judge(rows[i].head, strlen(rows[i].head), "up:1", &hl, why,
					sizeof(why));
		ck_assert_msg(rc == rows[i].rc, "row %zu: rc %d (%s)", i, rc, why);
		if (rows[i].why)
			ck_assert_msg(strstr(why, rows[i].why), "row %zu: [%s]", i, why);
		if (rc == 0)
			ck_assert_uint_eq(
			    hl, (size_t)(strstr(rows[i].head, "\r\n\r\n") - rows[i].head + 4));
	}
	/* No reason phrase: the next field is not shown as one (it goes to the sandbox). */
	why[0] = '\0';
	const char *bare = "HTTP/1.1 407\r\nX-Upstream-Secret: s3cret\r\n\r\n";
	ck_assert_int_eq(upstream_judge(bare, strlen(bare), "up:1", &hl, why, sizeof(why)),
			 -EPROTO);
	ck_assert_str_eq(why, "upstream proxy up:1 answered 407");
}
END_TEST

/* ------------------------------------------------- a scripted fake upstream */

struct fake_up {
	int lfd, port;
	const char *answer; /* sent after the request head; NULL: close without answering */
	char req[2048];	    /* the head received */
	int accepted;
	pthread_t th;
};

static void *fake_up_loop(void *arg)
{
	struct fake_up *f = arg;
	int fd = accept(f->lfd, NULL, NULL);
	char buf[4096];
	ssize_t n;

	if (fd < 0)
		return NULL;
	f->accepted++;
	cli_recv_until(fd, f->req, sizeof(f->req), "\r\n\r\n");
	if (f->answer) {
		cli_sends(fd, f->answer); /* the head and the origin's first bytes at once */
		while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) /* then an echo */
			cli_send(fd, buf, (size_t)n);
	}
	close(fd);
	return NULL;
}

static struct policy_upstream fx_up;
static void up_tweak(struct proxy_options *o)
{
	o->upstream = &fx_up;
}

static void fake_up_start(struct fake_up *f, const char *answer, const char *auth)
{
	char why[128];

	memset(f, 0, sizeof(*f));
	f->answer = answer;
	f->lfd = fx_listen("127.0.0.1", &f->port);
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", f->port);
	ck_assert_int_eq(policy_upstream_parse(url, false, &fx_up, why, sizeof(why)), 0);
	snprintf(fx_up.auth, sizeof(fx_up.auth), "%s", auth);
	ck_assert_int_eq(pthread_create(&f->th, NULL, fake_up_loop, f), 0);
}

static void fake_up_stop(struct fake_up *f)
{
	shutdown(f->lfd, SHUT_RDWR);
	pthread_join(f->th, NULL);
	close(f->lfd);
}

START_TEST(exchange_through_upstream)
{
	struct fx_proxy px;
	struct fake_up up;
	char head[2048], buf[256];
	int fd;

	fake_up_start(&up, "HTTP/1.1 200 Connection established\r\n\r\nSSH-2.0-fake\r\n",
		      "alice:s3cret");
	fx_start(&px, FIRST_BACKEND, POLICY_LOOPBACK_OK, up_tweak);
	fd = cli_connect(px.http_port);
	cli_sends(fd, "CONNECT origin.test:22 HTTP/1.1\r\nHost: origin.test:22\r\n\r\n");
	cli_recv_until(fd, head, sizeof(head), "\r\n\r\n");
	ck_assert_int_eq(status_of(head), 200);
	/* The origin's first bytes, which came with the upstream's head, come after ours. */
	ck_assert_uint_eq(cli_recv_n(fd, buf, 14), 14);
	ck_assert(memcmp(buf, "SSH-2.0-fake\r\n", 14) == 0);
	cli_sends(fd, "ping");
	ck_assert_uint_eq(cli_recv_n(fd, buf, 4), 4);
	ck_assert(memcmp(buf, "ping", 4) == 0);
	close(fd);
	fake_up_stop(&up);
	ck_assert_msg(strstr(up.req, "CONNECT origin.test:22 HTTP/1.1\r\n") == up.req, "%s",
		      up.req);
	ck_assert_msg(strstr(up.req, "\r\nProxy-Authorization: Basic YWxpY2U6czNjcmV0\r\n"), "%s",
		      up.req);
	/* A denied name: answered 403, nothing dialled. */
	fd = cli_connect(px.http_port);
	cli_sends(fd, "CONNECT pastebin.com:443 HTTP/1.1\r\nHost: pastebin.com:443\r\n\r\n");
	cli_recv_until(fd, head, sizeof(head), "\r\n\r\n");
	ck_assert_int_eq(status_of(head), 403);
	close(fd);
	ck_assert_int_eq(up.accepted, 1);
	fx_stop(&px);
}
END_TEST

static void upstream_refuses(const char *answer, const char *want)
{
	struct fx_proxy px;
	struct fake_up up;
	char resp[4096];
	int fd;

	fake_up_start(&up, answer, "");
	fx_start(&px, FIRST_BACKEND, POLICY_LOOPBACK_OK, up_tweak);
	fd = cli_connect(px.http_port);
	cli_sends(fd, "GET http://origin.test/x HTTP/1.1\r\nHost: origin.test\r\n\r\n");
	cli_recv_all(fd, resp, sizeof(resp));
	close(fd);
	ck_assert_int_eq(status_of(resp), 502);
	ck_assert_msg(strstr(resp, want), "want [%s] in %s", want, resp);
	fake_up_stop(&up);
	ck_assert_msg(strstr(up.req, "CONNECT origin.test:80 HTTP/1.1\r\n") == up.req, "%s",
		      up.req);
	ck_assert_msg(!strstr(up.req, "Proxy-Authorization"), "%s", up.req);
	fx_stop(&px);
}

START_TEST(upstream_407_and_close)
{
	upstream_refuses("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n",
			 "X-Halo-Error: upstream proxy 127.0.0.1:");
	upstream_refuses("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n",
			 "answered 407 (Proxy Authentication Required)");
	upstream_refuses(NULL, "closed before answering CONNECT");
	upstream_refuses("garbage\r\n\r\n", "malformed answer to CONNECT");
}
END_TEST

/* A target that is the upstream itself on its port (origin.test and 127.0.0.1 both
 * answer 127.0.0.1, where the fake upstream listens): refused, the upstream never
 * asked. Another port of the same address goes through. */
START_TEST(upstream_as_target_refused)
{
	struct fx_proxy px;
	struct fake_up up;
	char head[2048], target[64];
	const char *hosts[] = {"origin.test", "127.0.0.1"};
	int fd;

	fake_up_start(&up, "HTTP/1.1 200 Connection established\r\n\r\n", "");
	fx_start(&px, FIRST_BACKEND, POLICY_LOOPBACK_OK, up_tweak);
	for (size_t i = 0; i < 2; i++) {
		snprintf(target, sizeof(target), "%s:%d", hosts[i], up.port);
		fd = cli_connect_via(&px, target, head, sizeof(head));
		ck_assert_msg(status_of(head) == 403, "%s: %s", target, head);
		close(fd);
	}
	ck_assert_int_eq(up.accepted, 0);
	fd = cli_connect_via(&px, "origin.test:22", head, sizeof(head));
	ck_assert_int_eq(status_of(head), 200);
	close(fd);
	fake_up_stop(&up);
	ck_assert_int_eq(up.accepted, 1);
	fx_stop(&px);
}
END_TEST

/* Which addresses are this host: loopback and unspecified always, mapped and
 * compatible forms as the IPv4 they carry, the listed interface addresses. */
struct local_row {
	const char *addr;
	bool local;
};
static const struct local_row local_rows[] = {
    {"127.0.0.1", true},
    {"127.9.8.7", true},
    {"0.0.0.0", true},
    {"0.1.2.3", true},
    {"::1", true},
    {"::", true},
    {"::ffff:127.0.0.1", true},
    {"::ffff:0.0.0.0", true},
    {"192.0.2.2", true},
    {"::ffff:192.0.2.2", true},
    {"fd00::2", true},
    {"192.0.2.3", false},
    {"10.0.0.7", false},
    {"fd00::3", false},
    {"8.8.8.8", false},
    {"2001:db8::1", false},
};

static struct policy_ipaddr ipa(const char *text)
{
	struct policy_ipaddr a = {.family = strchr(text, ':') ? AF_INET6 : AF_INET};

	ck_assert_int_eq(inet_pton(a.family, text, a.addr), 1);
	return a;
}

START_TEST(local_table)
{
	const struct local_row *r = &local_rows[_i];
	struct policy_ipaddr own[] = {ipa("192.0.2.2"), ipa("fd00::2")};
	struct policy_ipaddr a = ipa(r->addr);

	ck_assert_msg(policy_addr_is_local(&a, own, 2) == r->local, "%s", r->addr);
	struct policy_ipaddr odd = {.family = 12345};
	ck_assert(policy_addr_is_local(&odd, NULL, 0)); /* not understood: the worst */
}
END_TEST

/* The hostPorts entry that exposes the upstream, and only when its port is listed. */
START_TEST(host_port_exposure)
{
	struct halo_policy *p = fx_policy("egress:\n  default: deny\n  allowedDomains: [a.test]\n"
					  "  hostPorts: [4873, 8888]\n"
					  "  upstreamProxy: http://localhost:8888\n");
	struct policy_upstream u = {.on = true, .port = 8888};
	struct policy_ipaddr far[] = {ipa("10.0.0.7")}, mixed[] = {ipa("10.0.0.7"), ipa("::1")};
	struct policy_ipaddr own[] = {ipa("192.0.2.2")}, mine[] = {ipa("192.0.2.2")};
	size_t k = 99;
	struct policy_ipaddr lo = ipa("127.0.0.1"), lo_m = ipa("::ffff:127.0.0.1"),
			     lo2 = ipa("127.0.0.2"), lo6 = ipa("::1");

	ck_assert(policy_ipaddr_same(&lo, &lo_m) && policy_ipaddr_same(&lo_m, &lo));
	ck_assert(!policy_ipaddr_same(&lo, &lo2) && !policy_ipaddr_same(&lo, &lo6));
	ck_assert_int_eq(policy_upstream_host_port(p, &u, far, 1, own, 1, &k), -1);
	ck_assert_int_eq(policy_upstream_host_port(p, &u, mixed, 2, own, 1, &k), 1);
	ck_assert_uint_eq(k, 1); /* any one local answer is enough */
	ck_assert_int_eq(policy_upstream_host_port(p, &u, mine, 1, own, 1, &k), 1);
	u.port = 3128; /* not listed */
	ck_assert_int_eq(policy_upstream_host_port(p, &u, mixed, 2, own, 1, &k), -1);
	u.port = 4873;
	ck_assert_int_eq(policy_upstream_host_port(p, &u, mine, 1, own, 1, &k), 0);
	u.on = false;
	ck_assert_int_eq(policy_upstream_host_port(p, &u, mine, 1, own, 1, &k), -1);
	ck_assert_int_eq(
	    policy_upstream_host_port(p, &(struct policy_upstream){.on = true, .port = 4873}, NULL,
				      0, own, 1, &k),
	    -1); /* no address: nothing to compare (the runner refuses first) */
	policy_free(p);
}
END_TEST

static Suite *upstream_suite(void)
{
	Suite *s = suite_create("upstream");
	TCase *t = tcase_create("core");

	tcase_set_timeout(t, 30);
	tcase_add_loop_test(t, url_table, 0, sizeof(url_rows) / sizeof(url_rows[0]));
	tcase_add_test(t, env_resolution);
	tcase_add_test(t, validation_and_json);
	tcase_add_test(t, layering_replaces);
	tcase_add_loop_test(t, no_proxy_table, 0, sizeof(np_rows) / sizeof(np_rows[0]));
	tcase_add_test(t, request_and_judge);
	tcase_add_test(t, exchange_through_upstream);
	tcase_add_test(t, upstream_407_and_close);
	tcase_add_loop_test(t, local_table, 0, sizeof(local_rows) / sizeof(local_rows[0]));
	tcase_add_test(t, host_port_exposure);
	tcase_add_test(t, upstream_as_target_refused);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(upstream_suite)
