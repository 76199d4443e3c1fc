/* egress.hostPorts in the proxy: a HOSTPORT listener's connections are tunnels with no
 * request, dialed to the host's 127.0.0.1:P then [::1]:P, audited as proto "hostport"
 * with the rule egress.hostPorts[i]; a refused upstream closes the client and is said
 * once per port on the log (never with quiet). */
#include "tests/unit/proxy_fixture.h"

static int hp_target; /* the "host" port the listener forwards to */
static int hp_listen; /* where the test's client connects (stands for the sandbox's) */
static bool hp_quiet;

static void hostport_listener(struct proxy_options *o)
{
	hp_listen = 0;
	o->listeners[o->n_listeners++] = (struct proxy_listener){
	    .fd = fx_listen("127.0.0.1", &hp_listen),
	    .kind = PROXY_LISTEN_HOSTPORT,
	    .port = (unsigned)hp_target,
	    .index = 1,
	};
	o->quiet = hp_quiet;
}

static void start(struct fx_proxy *f, int backend, int target, bool quiet)
{
	char yaml[128];

	hp_target = target;
	hp_quiet = quiet;
	snprintf(yaml, sizeof(yaml), "egress:\n  default: deny\n  hostPorts: [1, %d]\n", target);
	fx_start(f, backend, yaml, hostport_listener);
}

static void check_echo(const char *origin_ip, int backend)
{
	struct fx_proxy f;
	struct origin o;
	char buf[16], rule[64];
	cJSON *recs[4];
	int fd, n;

	origin_start_at(&o, ORIGIN_ECHO, origin_ip);
	start(&f, backend, o.port, false);
	fd = cli_connect(hp_listen);
	cli_sends(fd, "ping!");
	ck_assert_uint_eq(cli_recv_n(fd, buf, 5), 5);
	ck_assert(memcmp(buf, "ping!", 5) == 0);
	close(fd);
	usleep(100 * 1000);
	fx_stop(&f);
	origin_stop(&o);
	n = fx_audit(&f, recs, 4);
	ck_assert_int_eq(n, 1);
	snprintf(rule, sizeof(rule), "egress.hostPorts[1] %d", o.port);
	ck_assert_str_eq(js(recs[0], "proto"), "hostport");
	ck_assert_str_eq(js(recs[0], "host"), "localhost");
	ck_assert_int_eq((int)jnum(recs[0], "port"), o.port);
	ck_assert_str_eq(js(recs[0], "decision"), "allow");
	ck_assert_str_eq(js(recs[0], "rule"), rule);
	ck_assert_str_eq(js(recs[0], "address"), origin_ip);
	ck_assert_ptr_null(js(recs[0], "error"));
	ck_assert_int_eq((int)jnum(recs[0], "bytes_up"), 5);
	ck_assert_int_eq((int)jnum(recs[0], "bytes_down"), 5);
	fx_free_recs(recs, n);
	ck_assert_uint_eq(f.st.allowed, 1);
	ck_assert_uint_eq(f.st.conns_open, 0);
}

START_TEST(relays_to_host_v4)
{
	check_echo("127.0.0.1", _i);
}
END_TEST

/* The origin is on [::1]:P only: 127.0.0.1:P refuses, the second address serves
 * (the audit names the address that answered). */
START_TEST(falls_back_to_host_v6)
{
	check_echo("::1", _i);
}
END_TEST

static char *log_text(struct fx_proxy *f)
{
	return fx_slurp(f->log);
}

static void refused(int backend, bool quiet)
{
	struct fx_proxy f;
	char buf[16], *log, want[160];
	cJSON *recs[4];
	int dead[2], port = fx_refusing_port(dead), n;

	start(&f, backend, port, quiet);
	for (int i = 0; i < 2; i++) {
		int fd = cli_connect(hp_listen);

		cli_sends(fd, "GET / HTTP/1.0\r\n\r\n");
		ck_assert_uint_eq(cli_recv_all(fd, buf, sizeof(buf)), 0); /* closed, no answer */
		close(fd);
	}
	fx_stop(&f);
	close(dead[0]);
	close(dead[1]);
	log = log_text(&f);
	snprintf(want, sizeof(want),
		 "halo-run: host port %d (egress.hostPorts[1] %d): connection refused on the "
		 "host's 127.0.0.1:%d and [::1]:%d (is the service running?)",
		 port, port, port, port);
	if (quiet) {
		ck_assert_str_eq(log, "");
	} else {
		ck_assert_msg(strstr(log, want) == log, "log: %s", log);
		ck_assert_ptr_null(strstr(log + 1, "halo-run:")); /* once per port */
	}
	free(log);
	n = fx_audit(&f, recs, 4);
	ck_assert_int_eq(n, 2);
	for (int i = 0; i < n; i++) {
		ck_assert_str_eq(js(recs[i], "decision"), "allow");
		ck_assert_str_eq(js(recs[i], "error"), "connection refused");
		ck_assert_str_eq(js(recs[i], "address"), "::1");
	}
	fx_free_recs(recs, n);
}

START_TEST(refused_closes_and_says_once)
{
	refused(_i, false);
}
END_TEST

START_TEST(refused_quiet)
{
	refused(_i, true);
}
END_TEST

/* A client that sends a listed loopback port to the proxy (it ignores NO_PROXY) gets
 * what `halo-run check` says (review 21): CONNECT, SOCKS5 and forwarding dial the
 * host's loopback on that port, audited with the hostPorts rule; an unlisted port, or
 * an address that is not the loopback's own literal, is decided as any host. */
static void echo_through(int fd)
{
	char buf[8];

	cli_sends(fd, "ping!");
	ck_assert_uint_eq(cli_recv_n(fd, buf, 5), 5);
	ck_assert(memcmp(buf, "ping!", 5) == 0);
	close(fd);
}

static int socks_to(struct fx_proxy *f, const char *name, int port, char *rep)
{
	char req[300];
	int fd = cli_connect(f->socks_port);
	size_t n = strlen(name);

	cli_send(fd, "\x05\x01\x00", 3);
	ck_assert_uint_eq(cli_recv_n(fd, rep, 2), 2);
	memcpy(req, "\x05\x01\x00\x03", 4);
	req[4] = (char)n;
	memcpy(req + 5, name, n);
	req[5 + n] = (char)(port >> 8);
	req[6 + n] = (char)port;
	cli_send(fd, req, 7 + n);
	ck_assert_uint_eq(cli_recv_n(fd, rep, 10), 10);
	return fd;
}

START_TEST(proxy_requests_to_listed_port)
{
	struct fx_proxy f;
	struct origin o;
	struct http_origin h;
	char head[1024], target[64], rule[64], got[8192];
	cJSON *recs[16];
	int fd, n;

	origin_start(&o, ORIGIN_ECHO);
	start(&f, _i, o.port, true);
	snprintf(rule, sizeof(rule), "egress.hostPorts[1] %d", o.port);
	static const char *const names[] = {"localhost", "127.0.0.1", "LOCALHOST.", "[::1]"};
	for (int i = 0; i < 4; i++) {
		snprintf(target, sizeof(target), "%s:%d", names[i], o.port);
		fd = cli_connect_via(&f, target, head, sizeof(head));
		ck_assert_msg(status_of(head) == 200, "%s: %s", target, head);
		echo_through(fd);
	}
	fd = socks_to(&f, "localhost", o.port, head);
	ck_assert_int_eq(head[1], 0);
	echo_through(fd);
	/* an unlisted port, another loopback address: decided as any host */
	fd = cli_connect_via(&f, "localhost:2", head, sizeof(head));
	ck_assert_msg(status_of(head) == 403 && strstr(head, "localhost (default deny)"), "%s",
		      head);
	close(fd);
	snprintf(target, sizeof(target), "127.0.0.2:%d", o.port);
	fd = cli_connect_via(&f, target, head, sizeof(head));
	ck_assert_msg(status_of(head) == 403, "%s", head);
	close(fd);
	fx_stop(&f);
	origin_stop(&o);
	n = fx_audit(&f, recs, 16);
	ck_assert_int_eq(n, 7);
	int allowed = 0, socks = 0, hosts = 0; /* in the order the exchanges ended */

	for (int i = 0; i < n; i++) {
		if (strcmp(js(recs[i], "decision"), "deny") == 0) {
			ck_assert_str_eq(js(recs[i], "rule"), "default deny");
			continue;
		}
		allowed++;
		ck_assert_str_eq(js(recs[i], "rule"), rule);
		ck_assert_str_eq(js(recs[i], "address"), "127.0.0.1");
		socks += strcmp(js(recs[i], "proto"), "socks5") == 0;
		hosts += strcmp(js(recs[i], "host"), "localhost") == 0 ||
			 strcmp(js(recs[i], "host"), "127.0.0.1") == 0 ||
			 strcmp(js(recs[i], "host"), "::1") == 0;
	}
	ck_assert_int_eq(allowed, 5);
	ck_assert_int_eq(socks, 1);
	ck_assert_int_eq(hosts, 5);
	fx_free_recs(recs, n);

	/* plain http:// forwarding to a listed port */
	http_origin_start(&h);
	start(&f, _i, h.port, true);
	fd = cli_connect(f.http_port);
	snprintf(got, sizeof(got),
		 "GET http://localhost:%d/cl HTTP/1.1\r\nHost: localhost:%d\r\n\r\n", h.port,
		 h.port);
	cli_sends(fd, got);
	cli_recv_until(fd, head, sizeof(head), "hello");
	ck_assert_msg(status_of(head) == 200, "%s", head);
	close(fd);
	fx_stop(&f);
	http_origin_stop(&h);
	n = fx_audit(&f, recs, 16);
	ck_assert_int_ge(n, 1);
	ck_assert_str_eq(js(recs[0], "proto"), "http");
	snprintf(rule, sizeof(rule), "egress.hostPorts[1] %d", h.port);
	ck_assert_str_eq(js(recs[0], "rule"), rule);
	fx_free_recs(recs, n);
}
END_TEST

static Suite *hostport_suite(void)
{
	Suite *s = suite_create("proxy_hostport");
	TCase *tc = tcase_create("loopback");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, relays_to_host_v4, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, falls_back_to_host_v6, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, refused_closes_and_says_once, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, refused_quiet, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, proxy_requests_to_listed_port, FIRST_BACKEND, END_BACKEND);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(hostport_suite)
