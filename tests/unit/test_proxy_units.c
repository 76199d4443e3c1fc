/* The proxy's pure pieces, as tables: origin response heads (parse and rewrite), the
 * chunked-body scanner, the address check (classes, the host's own addresses,
 * IPv4-mapped forms), the resolver pool (order, cancellation, late answers, signals
 * blocked, teardown during a slow lookup), the system lookup's flags on an
 * /etc/hosts name, what reporting does with hostile host text, and the protocols'
 * tables of callbacks (every listener kind has a complete one). */
#include <signal.h>

#include "tests/unit/proxy_fixture.h"

/* ------------------------------------------------------------- responses */

static const struct {
	const char *head;
	enum resp_result want;
	int status;
	bool has_cl;
	unsigned long long cl;
	bool chunked, conflicting;
} resp_rows[] = {
    {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", RESP_OK, 200, true, 5, false, false},
    {"HTTP/1.0 404 Not Found\r\n\r\n", RESP_OK, 404, false, 0, false, false},
    {"HTTP/1.1 204\r\n\r\n", RESP_OK, 204, false, 0, false, false},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", RESP_OK, 200, false, 0, true,
     false},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", RESP_OK, 200, false, 0, false,
     false},
    {"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n", RESP_OK, 200, true, 5, false, false},
    {"HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n", RESP_OK, 200, true, 0, false, true},
    {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\ncontent-length: 6\r\n\r\n", RESP_OK, 200, true, 6,
     false, true},
    {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", RESP_OK, 200,
     true, 5, true, true},
    {"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", RESP_OK, 200, true, 0, false, true},
    {"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", RESP_OK, 200, true, 0,
     false, true},
    {"HTTP/1.1 200 OK\r\nContent-", RESP_NEED_MORE, 0, false, 0, false, false},
    {"HTTP/1.1 200 OK\r\n", RESP_NEED_MORE, 0, false, 0, false, false},
    {"HTTP/1.1 200 OK\nContent-Length: 1\n\n", RESP_BAD, 0, false, 0, false, false},
    {"HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", RESP_BAD, 0, false, 0, false, false},
    {"HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", RESP_BAD, 0, false, 0, false, false},
    {"HTTP/1.1 200 OK\r\nX : a\r\n\r\n", RESP_BAD, 0, false, 0, false, false},
    {"HTTP/1.1 200 OK\r\nno colon\r\n\r\n", RESP_BAD, 0, false, 0, false, false},
    {"HTTP/2 200 OK\r\n\r\n", RESP_BAD, 0, false, 0, false, false},
    {"HTTP/1.1 20x OK\r\n\r\n", RESP_BAD, 0, false, 0, false, false},
    {"HTTP/1.1 099 Low\r\n\r\n", RESP_BAD, 0, false, 0, false, false},
    {"HTTP/1.1 200OK\r\n\r\n", RESP_BAD, 0, false, 0, false, false},
    {"SSH-2.0-OpenSSH\r\n\r\n", RESP_BAD, 0, false, 0, false, false},
};

START_TEST(resp_parse_table)
{
	struct resp_head h;
	const char *head = resp_rows[_i].head;
	enum resp_result r = resp_parse(head, strlen(head), &h);

	ck_assert_msg(r == resp_rows[_i].want, "row %d: got %d", _i, r);
	if (r != RESP_OK)
		return;
	ck_assert_int_eq(h.status, resp_rows[_i].status);
	ck_assert_int_eq(h.has_cl, resp_rows[_i].has_cl);
	if (!resp_rows[_i].conflicting)
		ck_assert_uint_eq(h.cl, resp_rows[_i].cl);
	ck_assert_int_eq(h.chunked, resp_rows[_i].chunked);
	ck_assert_int_eq(h.conflicting, resp_rows[_i].conflicting);
	ck_assert_uint_eq(h.head_len, strlen(head));
}
END_TEST

START_TEST(resp_parse_nul_refused)
{
	static const char head[] = "HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n";
	struct resp_head h;

	ck_assert_int_eq(resp_parse(head, sizeof(head) - 1, &h), RESP_BAD);
}
END_TEST

/* The body can arrive in the same read as the head: its bytes (git's pkt-lines carry
 * NULs) are not the head's business. */
START_TEST(resp_parse_body_nul_in_same_read)
{
	static const char buf[] = "HTTP/1.0 200 OK\r\nContent-Type: x\r\n\r\n0010HEAD\0caps\n";
	struct resp_head h;

	ck_assert_int_eq(resp_parse(buf, sizeof(buf) - 1, &h), RESP_OK);
	ck_assert_uint_eq(h.head_len, strlen("HTTP/1.0 200 OK\r\nContent-Type: x\r\n\r\n"));
}
END_TEST

static const struct {
	const char *head;
	bool keep;
	int minor;
	const char *want;
} rewrite_rows[] = {
    {"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\n", true, 1,
     "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n"},
    {"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n", false, 1,
     "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: close\r\n\r\n"},
    {"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n", true, 0,
     "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: keep-alive\r\n\r\n"},
    {"HTTP/1.1 200 OK\r\nConnection: x-a, X-B\r\nX-A: 1\r\nx-b: 2\r\nX-C: 3\r\nKeep-Alive: t=1\r\n"
     "Proxy-Connection: close\r\nUpgrade: h2c\r\nContent-Length: 0\r\n\r\n",
     true, 1, "HTTP/1.1 200 OK\r\nX-C: 3\r\nContent-Length: 0\r\n\r\n"},
    {"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", false, 1,
     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"},
    /* Connection last, and twice in a row (fuzz_resp found the last one misread) */
    {"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-A: 1\r\nConnection: x-a\r\n\r\n", true, 1,
     "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
    {"HTTP/1.1 200 OK\r\nConnection: x-a\r\nConnection: x-b\r\nX-A: 1\r\nX-B: 2\r\n"
     "Content-Length: 0\r\n\r\n",
     true, 1, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
};

START_TEST(resp_rewrite_table)
{
	struct resp_head h;
	char out[1024];
	const char *head = rewrite_rows[_i].head;
	int n;

	ck_assert_int_eq(resp_parse(head, strlen(head), &h), RESP_OK);
	n = resp_rewrite(head, &h, rewrite_rows[_i].keep, rewrite_rows[_i].minor, out, sizeof(out));
	ck_assert_int_eq(n, (int)strlen(rewrite_rows[_i].want));
	ck_assert_str_eq(out, rewrite_rows[_i].want);
	ck_assert_int_eq(resp_rewrite(head, &h, false, 1, out, 10), -ENOSPC);
}
END_TEST

/* ------------------------------------------------------------- chunked */

static const struct {
	const char *body;
	long consumed; /* -1: framing error; else bytes up to and including the end */
	bool done;
} chunk_rows[] = {
    {"5\r\nhello\r\n0\r\n\r\n", 15, true},
    {"5;a=b\r\nhello\r\n0\r\n\r\nEXTRA", 19, true},
    {"A\r\n0123456789\r\n0\r\nX-T: 1\r\nY: 2\r\n\r\n", 34, true},
    {"5\r\nhello\r\n", 10, false},
    {"0\r\n\r\n", 5, true},
    {"5\r\nhelloX\r\n", -1, false},
    {"g\r\n", -1, false},
    {"\r\n", -1, false},
    {"5\nhello\r\n", -1, false},
    {"1000000000000000\r\n", -1, false},
    {"5 ; x\r\nhello\r\n0\r\n\r\n", 19, true},
};

START_TEST(chunk_scan_table)
{
	const char *b = chunk_rows[_i].body;
	size_t len = strlen(b);
	long whole, total = 0, r = 0;
	struct chunk_scan cs = {0};
	bool done = false;

	whole = chunk_scan(&cs, b, len, &done);
	ck_assert_msg(whole == (chunk_rows[_i].consumed < 0 ? -1
				: chunk_rows[_i].done	    ? chunk_rows[_i].consumed
							    : (long)len),
		      "row %d: %ld", _i, whole);
	ck_assert_int_eq(done, chunk_rows[_i].done);
	/* Byte by byte gives the same answer. */
	memset(&cs, 0, sizeof(cs));
	done = false;
	for (size_t i = 0; i < len && !done; i++) {
		r = chunk_scan(&cs, b + i, 1, &done);
		if (r < 0)
			break;
		total += r;
	}
	if (chunk_rows[_i].consumed < 0)
		ck_assert_int_eq(r, -1);
	else
		ck_assert_int_eq(total, chunk_rows[_i].done ? chunk_rows[_i].consumed : (long)len);
}
END_TEST

/* The data of a chunked body, as the masker sees it: the same runs whole or byte by
 * byte, framing and trailers never among them. */
static const struct {
	const char *body, *data;
} chunk_data_rows[] = {
    {"5\r\nhello\r\n0\r\n\r\n", "hello"},
    {"3;x=\"a\"\r\nabc\r\n2\r\nde\r\n0\r\nX-T: secret\r\n\r\n", "abcde"},
    {"1\r\n\r\r\n1\r\n\n\r\n0\r\n\r\n", "\r\n"},
    {"0\r\n\r\n", ""},
};

static void data_of(const char *b, size_t step, char *out)
{
	struct chunk_scan cs = {0};
	size_t len = strlen(b), i = 0, o = 0;
	bool done = false;

	while (i < len && !done) {
		size_t avail = step && len - i > step ? step : len - i;
		const char *d;
		size_t dl;
		long k = chunk_scan_data(&cs, b + i, avail, &done, &d, &dl);

		ck_assert_int_ge(k, 0);
		ck_assert(k > 0 || done);
		memcpy(out + o, d ? d : "", dl);
		o += dl;
		i += (size_t)k;
	}
	ck_assert(done);
	ck_assert_uint_eq(i, len);
	out[o] = '\0';
}

START_TEST(chunk_scan_data_table)
{
	char out[128];

	data_of(chunk_data_rows[_i].body, 0, out);
	ck_assert_str_eq(out, chunk_data_rows[_i].data);
	data_of(chunk_data_rows[_i].body, 1, out);
	ck_assert_str_eq(out, chunk_data_rows[_i].data);
	data_of(chunk_data_rows[_i].body, 3, out);
	ck_assert_str_eq(out, chunk_data_rows[_i].data);
}
END_TEST

/* A body whose bytes are not its text cannot be scanned for a credential. */
START_TEST(resp_parse_encoded)
{
	static const struct {
		const char *head;
		bool encoded;
	} rows[] = {
	    {"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 1\r\n\r\n", true},
	    {"HTTP/1.1 200 OK\r\ncontent-encoding: identity, br\r\n\r\n", true},
	    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", true},
	    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: deflate\r\n\r\n", true},
	    {"HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\n\r\n", false},
	    {"HTTP/1.1 200 OK\r\nContent-Encoding:\r\n\r\n", false},
	    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", false},
	    {"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", false},
	    /* chunked twice, or not last: the client would undo framing the proxy passed
	     * as text, joining a value the mask saw cut by size lines */
	    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", true},
	    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
	     true},
	    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\ntransfer-encoding: \r\n\r\n", true},
	    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked,\r\n\r\n", false},
	};
	struct resp_head h;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		ck_assert_int_eq(resp_parse(rows[i].head, strlen(rows[i].head), &h), RESP_OK);
		ck_assert_msg(h.encoded == rows[i].encoded, "row %zu", i);
	}
}
END_TEST

/* -------------------------------------------------------------- addresses */

static struct proxy_addr addr_of(const char *text)
{
	struct proxy_addr a = {0};

	a.family = strchr(text, ':') ? AF_INET6 : AF_INET;
	ck_assert_int_eq(inet_pton(a.family, text, a.addr), 1);
	return a;
}

static struct proxy *bare_proxy(struct proxy_poller **pl, struct halo_policy *pol)
{
	struct proxy_options o = {.policy = pol, .audit_fd = -1, .log_fd = -1};
	struct halo_err e;
	struct proxy *px = NULL;

	ck_assert_int_eq(proxy_poller_new(PROXY_POLLER_POLL, pl), 0);
	ck_assert_int_eq(proxy_create(*pl, &o, &px, &e), 0);
	return px;
}

START_TEST(addr_ok_classes_and_own_addresses)
{
	static const struct {
		const char *addr;
		bool ok_plain, ok_allow;
		const char *cls;
	} rows[] = {
	    {"1.1.1.1", true, true, NULL},
	    {"100.128.0.1", false, true, "interface"}, /* public, but one of ours */
	    {"::ffff:100.128.0.1", false, true, "interface"},
	    {"127.0.0.1", false, false, "loopback"},
	    {"10.1.2.3", false, false, "private"},
	    {"169.254.169.254", false, false, "metadata"},
	    {"::1", false, false, "loopback"},
	    {"::ffff:10.0.0.1", false, false, "private"},
	    {"0.0.0.0", false, false, "unspecified"},
	    {"fd00::1", false, false, "unique-local"},
	};
	struct halo_policy *plain = fx_policy("egress: {default: deny}\n");
	struct halo_policy *allow =
	    fx_policy("egress: {default: deny, allowPrivate: [100.128.0.0/16]}\n");
	struct proxy_poller *pl1, *pl2;
	struct proxy *p1 = bare_proxy(&pl1, plain), *p2 = bare_proxy(&pl2, allow);
	struct proxy_addr own = addr_of("100.128.0.1");

	ck_assert_int_eq(proxy_set_ifaddrs(p1, &own, 1), 0);
	ck_assert_int_eq(proxy_set_ifaddrs(p2, &own, 1), 0);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct proxy_addr a = addr_of(rows[i].addr);
		const char *cls = NULL;

		ck_assert_msg(proxy_addr_ok(p1, &a, &cls) == rows[i].ok_plain, "%s", rows[i].addr);
		if (!rows[i].ok_plain)
			ck_assert_str_eq(cls, rows[i].cls);
		cls = NULL;
		ck_assert_msg(proxy_addr_ok(p2, &a, &cls) == rows[i].ok_allow, "%s allow",
			      rows[i].addr);
	}
	proxy_destroy(p1);
	proxy_destroy(p2);
	proxy_poller_free(pl1);
	proxy_poller_free(pl2);
	policy_free(plain);
	policy_free(allow);
}
END_TEST

/* The real interface list: 127.0.0.1 is on lo; a policy that allows 127.0.0.0/8 lets
 * it through, one that does not refuses it (as loopback, before the list matters). */
START_TEST(addr_ok_real_interfaces)
{
	struct halo_policy *allow = fx_policy(POLICY_LOOPBACK_OK);
	struct proxy_poller *pl;
	struct proxy *px = bare_proxy(&pl, allow);
	struct proxy_addr lo = addr_of("127.0.0.1");
	const char *cls = NULL;
	bool found = false;

	/* The list is loaded lazily, by the first check. */
	ck_assert_uint_eq(px->n_ifaddrs, 0);
	ck_assert(proxy_addr_ok(px, &lo, &cls));
	for (size_t i = 0; i < px->n_ifaddrs; i++)
		found |= px->ifaddrs[i].family == AF_INET &&
			 memcmp(px->ifaddrs[i].addr, lo.addr, 4) == 0;
	ck_assert(found);
	proxy_destroy(px);
	proxy_poller_free(pl);
	policy_free(allow);
}
END_TEST

/* -------------------------------------------------------------- resolver */

static atomic_int hook_calls;
static atomic_bool hook_sigterm_blocked;

static int slow_hook(const char *name, struct proxy_addr *out, size_t max, size_t *n)
{
	sigset_t cur;

	atomic_fetch_add(&hook_calls, 1);
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	atomic_store(&hook_sigterm_blocked, sigismember(&cur, SIGTERM) == 1);
	if (strncmp(name, "slow", 4) == 0)
		usleep(300 * 1000);
	if (strncmp(name, "veryslow", 8) == 0)
		usleep(900 * 1000);
	if (strncmp(name, "none", 4) == 0)
		return -ENOENT;
	*n = 0;
	if (max) {
		out[0] = addr_of("127.0.0.9");
		*n = 1;
	}
	return 0;
}

struct answers {
	char names[16][32];
	int errs[16];
	int n;
	volatile bool *stop;
	int want;
};

struct ticket {
	struct answers *a;
	char name[32];
};

static void on_answer(void *arg, int err, const struct proxy_addr *addrs, size_t n)
{
	struct ticket *t = arg;
	struct answers *a = t->a;

	snprintf(a->names[a->n], sizeof(a->names[0]), "%s", t->name);
	a->errs[a->n++] = err;
	ck_assert(err ? n == 0 : n == 1 && addrs[0].family == AF_INET);
	if (a->n == a->want)
		*a->stop = true;
}

static void stop_after(void *arg)
{
	*(volatile bool *)arg = true;
}

START_TEST(resolver_cancel_and_late_answers)
{
	struct proxy_poller *pl;
	struct proxy_resolver *r;
	struct proxy_resolve_job *jobs[6];
	struct answers a = {0};
	struct ticket t[6];
	volatile bool stop = false;
	static const char *names[6] = {"slow-a", "fast-b", "fast-c", "none-d", "slow-e", "fast-f"};

	proxy_resolver_set_lookup(slow_hook);
	ck_assert_int_eq(proxy_poller_new(PROXY_POLLER_POLL, &pl), 0);
	ck_assert_int_eq(proxy_resolver_new(pl, 1, &r), 0); /* one thread: a queue forms */
	a.stop = &stop;
	a.want = 4;
	for (int i = 0; i < 6; i++) {
		t[i].a = &a;
		snprintf(t[i].name, sizeof(t[i].name), "%s", names[i]);
		ck_assert_int_eq(proxy_resolver_submit(r, names[i], on_answer, &t[i], &jobs[i]), 0);
	}
	usleep(50 * 1000);		   /* slow-a is running now */
	proxy_resolver_cancel(r, jobs[0]); /* running: its answer will be dropped */
	proxy_resolver_cancel(r, jobs[2]); /* queued: gone at once */
	ck_assert_ptr_nonnull(proxy_timer_add(pl, 3000, stop_after, (void *)&stop));
	ck_assert_int_eq(proxy_poller_run(pl, &stop), 0);
	ck_assert_int_eq(a.n, 4);
	ck_assert_str_eq(a.names[0], "fast-b");
	ck_assert_str_eq(a.names[1], "none-d");
	ck_assert_int_eq(a.errs[1], -ENOENT);
	ck_assert_str_eq(a.names[2], "slow-e");
	ck_assert_str_eq(a.names[3], "fast-f");
	ck_assert_int_eq(atomic_load(&hook_calls), 5); /* fast-c never ran */
	ck_assert(atomic_load(&hook_sigterm_blocked));
	proxy_resolver_free(r);
	proxy_poller_free(pl);
}
END_TEST

static int open_fds(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/* A resolver costs the launch nothing until its first lookup: its notification fd is
 * made (and watched) then, once; the answer still comes through the loop. */
START_TEST(resolver_notify_at_first_lookup)
{
	struct proxy_poller *pl;
	struct proxy_resolver *r;
	struct proxy_resolve_job *job;
	struct answers a = {0};
	struct ticket t = {.a = &a, .name = "fast-b"};
	volatile bool stop = false;
	int before;

	proxy_resolver_set_lookup(slow_hook);
	ck_assert_int_eq(proxy_poller_new(PROXY_POLLER_POLL, &pl), 0);
	before = open_fds();
	ck_assert_int_eq(proxy_resolver_new(pl, 1, &r), 0);
	ck_assert_int_eq(open_fds(), before);
	a.stop = &stop;
	a.want = 1;
	ck_assert_int_eq(proxy_resolver_submit(r, "fast-b", on_answer, &t, &job), 0);
	ck_assert_int_gt(open_fds(), before);
	ck_assert_ptr_nonnull(proxy_timer_add(pl, 3000, stop_after, (void *)&stop));
	ck_assert_int_eq(proxy_poller_run(pl, &stop), 0);
	ck_assert_int_eq(a.n, 1);
	ck_assert_str_eq(a.names[0], "fast-b");
	proxy_resolver_free(r);
	proxy_poller_free(pl);
	ck_assert_int_eq(open_fds(), before);
}
END_TEST

/* Teardown while lookups are in flight: free waits a short grace period (enough for
 * the 300 ms one), then leaves the 900 ms one behind; that thread finishes later
 * against live memory and frees it (ASan and LSan watch). */
START_TEST(resolver_free_during_slow_lookup)
{
	struct proxy_poller *pl;
	struct proxy_resolver *r;
	struct proxy_resolve_job *job;
	struct answers a = {0};
	struct ticket t = {.a = &a, .name = "slow"};
	uint64_t t0;

	proxy_resolver_set_lookup(slow_hook);
	ck_assert_int_eq(proxy_poller_new(PROXY_POLLER_POLL, &pl), 0);
	ck_assert_int_eq(proxy_resolver_new(pl, 2, &r), 0);
	ck_assert_int_eq(proxy_resolver_submit(r, "slow-x", on_answer, &t, &job), 0);
	ck_assert_int_eq(proxy_resolver_submit(r, "veryslow-y", on_answer, &t, &job), 0);
	ck_assert_int_eq(proxy_resolver_submit(r, "fast-z", on_answer, &t, &job), 0);
	usleep(50 * 1000);
	t0 = proxy_now_ms();
	proxy_resolver_free(r);
	ck_assert_uint_lt(proxy_now_ms() - t0, 1000);
	proxy_poller_free(pl);
	usleep(800 * 1000); /* the last thread finishes and frees the shared state */
	ck_assert_int_eq(a.n, 0);
}
END_TEST

/* The system lookup on a name from /etc/hosts ("localhost" is there on this host):
 * found without a search domain, 127.0.0.1 among the answers, no duplicates. */
START_TEST(system_lookup_hosts_file)
{
	struct proxy_addr out[PROXY_RESOLVE_MAX_ADDRS];
	size_t n = 0;
	bool lo = false;

	ck_assert_int_eq(proxy_lookup_system("localhost", out, PROXY_RESOLVE_MAX_ADDRS, &n), 0);
	ck_assert_uint_ge(n, 1);
	for (size_t i = 0; i < n; i++) {
		lo |= out[i].family == AF_INET && out[i].addr[0] == 127 && out[i].addr[3] == 1;
		for (size_t k = 0; k < i; k++)
			ck_assert(out[k].family != out[i].family ||
				  memcmp(out[k].addr, out[i].addr, 16) != 0);
	}
	ck_assert(lo);
}
END_TEST

/* ------------------------------------------------------------- reporting */

START_TEST(hostile_host_text_reported_safely)
{
	struct halo_policy *pol = fx_policy(POLICY_LOOPBACK_OK);
	struct proxy_poller *pl;
	struct proxy *px = bare_proxy(&pl, pol);
	struct exchange ex = {0};
	FILE *audit = tmpfile(), *log = tmpfile();
	char *text;
	cJSON *rec;

	px->o.audit_fd = fileno(audit);
	px->o.log_fd = fileno(log);
	snprintf(ex.host, sizeof(ex.host),
		 "evil\"\\\x1b"
		 "[2J\xc3\xa9.test");
	snprintf(ex.rule, sizeof(ex.rule),
		 "invalid host: \x07"
		 "bell");
	ex.port = 443;
	ex.t0_ms = proxy_now_ms();
	audit_write(px, &ex);
	audit_deny_line(px, &ex);
	audit_deny_line(px, &ex); /* once per host */
	text = fx_slurp(audit);
	rec = cJSON_Parse(text);
	ck_assert_ptr_nonnull(rec);
	/* bytes past ASCII are escaped one by one (\u00XX), so the record is valid JSON
	 * whatever was sent, and shows exactly which bytes */
	ck_assert_str_eq(js(rec, "host"), "evil\"\\\x1b"
					  "[2J\xc3\x83\xc2\xa9.test");
	ck_assert_ptr_nonnull(strstr(text, "\\u001b"));
	ck_assert_ptr_nonnull(strstr(text, "\\u00c3\\u00a9"));
	ck_assert_str_eq(js(rec, "decision"), "deny");
	cJSON_Delete(rec);
	free(text);
	text = fx_slurp(log);
	/* escaped as every halo-run line escapes outside text (policy_printable) */
	ck_assert_str_eq(text, "halo-run: egress denied: evil\"\\\\\\x1b[2J\\xc3\\xa9.test:443 "
			       "(invalid host: \\x07bell)\n");
	free(text);
	fclose(audit);
	fclose(log);
	proxy_destroy(px);
	proxy_poller_free(pl);
	policy_free(pol);
}
END_TEST

START_TEST(summary_caps_hosts)
{
	struct halo_policy *pol = fx_policy(POLICY_LOOPBACK_OK);
	struct proxy_poller *pl;
	struct proxy *px = bare_proxy(&pl, pol);
	struct exchange ex = {.allow = true};
	char *text = NULL;
	size_t len = 0;
	FILE *mem;

	for (int i = 0; i < 5000; i++) {
		snprintf(ex.host, sizeof(ex.host), "h%04d.test", i);
		hosts_record(px, &ex);
	}
	ck_assert_uint_eq(px->hosts.n, 4096);
	ck_assert_uint_eq(px->hosts.overflow_conns, 5000 - 4096);
	mem = open_memstream(&text, &len);
	proxy_summary(px, mem);
	fclose(mem);
	ck_assert_ptr_nonnull(strstr(text, "(other hosts)"));
	ck_assert_ptr_nonnull(strstr(text, "h0000.test"));
	free(text);
	proxy_destroy(px);
	proxy_poller_free(pl);
	policy_free(pol);
}
END_TEST

/* ------------------------------------------------------------- protocols */

/* The connection core calls these without checking: they must be there. */
START_TEST(protocol_tables_complete)
{
	const struct proto_ops *const all[] = {&proxy_proto_http, &proxy_proto_socks5,
					       &proxy_proto_hostport};
	const struct proto_ops *p = all[_i];
	bool fwd = p->fwd_on_client != NULL;

	ck_assert_ptr_nonnull(p->on_request);
	ck_assert_ptr_nonnull(p->on_connected);
	ck_assert_ptr_nonnull(p->on_error);
	/* CS_FORWARD's three go together, and so do the busy answer and its code */
	ck_assert_int_eq(p->fwd_on_upstream != NULL, fwd);
	ck_assert_int_eq(p->fwd_wants_client != NULL, fwd);
	ck_assert_int_eq(p->busy_answer != NULL, p->busy_code != NULL);
}
END_TEST

/* A listener of no known kind has no protocol: refused, its fd left to the caller. */
START_TEST(unknown_listener_kind_refused)
{
	struct halo_policy *pol = fx_policy(POLICY_LOOPBACK_OK);
	struct proxy_poller *pl;
	struct proxy_options o = {.policy = pol, .audit_fd = -1, .log_fd = -1, .n_listeners = 1};
	struct halo_err e = {{0}};
	struct proxy *px = (struct proxy *)&o;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	o.listeners[0].fd = fd;
	o.listeners[0].kind = (enum proxy_listener_kind)99;
	ck_assert_int_eq(proxy_poller_new(PROXY_POLLER_POLL, &pl), 0);
	ck_assert_int_eq(proxy_create(pl, &o, &px, &e), -EINVAL);
	ck_assert_ptr_null(px);
	ck_assert_str_eq(e.msg, "proxy: listener 0: unknown kind 99");
	ck_assert_int_eq(fcntl(fd, F_GETFD), FD_CLOEXEC);
	close(fd);
	proxy_poller_free(pl);
	policy_free(pol);
}
END_TEST

/* The sandbox ended with a client still queued on a listener (the loop saw the exit
 * first and stopped): draining accepts it, so its CONNECT to a denied host is decided,
 * counted (what --fail-on-deny reads) and recorded in the audit. The client is gone
 * already, as a killed process's would be. */
START_TEST(drain_takes_queued_clients)
{
	static const char req[] = "CONNECT denied.example:443 HTTP/1.1\r\n"
				  "Host: denied.example:443\r\n\r\n";
	struct fx_proxy f;
	struct proxy_stats st;
	cJSON *recs[4];
	int fd, n;

	fx_create(&f, _i, "egress: {default: deny}\n", NULL);
	fd = cli_connect_to("127.0.0.1", f.http_port);
	ck_assert_int_eq(write(fd, req, sizeof(req) - 1), (ssize_t)(sizeof(req) - 1));
	close(fd);
	proxy_drain(f.px, 500);
	proxy_get_stats(f.px, &st);
	ck_assert_uint_eq(st.denied, 1);
	n = fx_audit(&f, recs, 4);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(js(recs[0], "host"), "denied.example");
	fx_free_recs(recs, n);
	fx_destroy(&f);
}
END_TEST

static Suite *units_suite(void)
{
	Suite *s = suite_create("proxy-units");
	TCase *tc = tcase_create("pure");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, resp_parse_table, 0, sizeof(resp_rows) / sizeof(resp_rows[0]));
	tcase_add_test(tc, resp_parse_nul_refused);
	tcase_add_test(tc, resp_parse_body_nul_in_same_read);
	tcase_add_loop_test(tc, resp_rewrite_table, 0,
			    sizeof(rewrite_rows) / sizeof(rewrite_rows[0]));
	tcase_add_loop_test(tc, chunk_scan_table, 0, sizeof(chunk_rows) / sizeof(chunk_rows[0]));
	tcase_add_loop_test(tc, chunk_scan_data_table, 0,
			    sizeof(chunk_data_rows) / sizeof(chunk_data_rows[0]));
	tcase_add_test(tc, resp_parse_encoded);
	tcase_add_test(tc, addr_ok_classes_and_own_addresses);
	tcase_add_test(tc, addr_ok_real_interfaces);
	tcase_add_test(tc, resolver_cancel_and_late_answers);
	tcase_add_test(tc, resolver_notify_at_first_lookup);
	tcase_add_test(tc, resolver_free_during_slow_lookup);
	tcase_add_test(tc, system_lookup_hosts_file);
	tcase_add_test(tc, hostile_host_text_reported_safely);
	tcase_add_test(tc, summary_caps_hosts);
	tcase_add_loop_test(tc, protocol_tables_complete, 0, 3);
	tcase_add_test(tc, unknown_listener_kind_refused);
	/* both backends: which listeners hold clients is asked of the poller */
	tcase_add_loop_test(tc, drain_takes_queued_clients, FIRST_BACKEND, END_BACKEND);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(units_suite)
