/* The proxy under pressure, on both backends: backpressure in each direction stays
 * bounded (one scratch buffer, or one pipe once bulk splices, at most, and the fast
 * side is no longer read); 2,000 concurrent tunnels carrying data, then the proxy's
 * fd count back to its baseline and its RSS back near it (the proxy runs in a forked
 * child so that its RSS and fds are its own); out of file descriptors answered 503;
 * the connection cap answered 503. */
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "tests/unit/proxy_fixture.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* -------------------------------------------------------------- helpers */

static void set_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* Write until the proxy stops taking bytes for 300 ms; returns bytes written. */
static size_t write_until_stuck(int fd)
{
	static char chunk[65536];
	size_t total = 0;

	set_nonblock(fd);
	for (;;) {
		ssize_t w = send(fd, chunk, sizeof(chunk), MSG_NOSIGNAL);
		struct pollfd p = {.fd = fd, .events = POLLOUT};

		if (w > 0) {
			total += (size_t)w;
			continue;
		}
		ck_assert_int_eq(errno, EAGAIN);
		if (poll(&p, 1, 300) == 0)
			return total;
		ck_assert_uint_lt(total, 1u << 30);
	}
}

static long proc_status_kb(pid_t pid, const char *key)
{
	char path[64], line[256];
	long v = -1;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fp = fopen(path, "r");
	ck_assert_ptr_nonnull(fp);
	while (fgets(line, sizeof(line), fp))
		if (strncmp(line, key, strlen(key)) == 0)
			v = strtol(line + strlen(key), NULL, 10);
	fclose(fp);
	return v;
}

static int proc_fd_count(pid_t pid)
{
	char path[64];
	struct dirent *d;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	ck_assert_ptr_nonnull(dir);
	while ((d = readdir(dir)))
		n += d->d_name[0] != '.';
	closedir(dir);
	return n;
}

static void raise_nofile(rlim_t want)
{
	struct rlimit rl;

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

static int highest_fd(void)
{
	struct dirent *d;
	int hi = -1;
	DIR *dir = opendir("/proc/self/fd");

	ck_assert_ptr_nonnull(dir);
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.' && atoi(d->d_name) > hi && atoi(d->d_name) != dirfd(dir))
			hi = atoi(d->d_name);
	closedir(dir);
	return hi;
}

/* Leave exactly `extra` free fd numbers: fill the holes below the highest fd, then
 * cap RLIMIT_NOFILE just above it. */
static void leave_fds(int extra)
{
	int hi = highest_fd(), fd;
	struct rlimit rl;

	while ((fd = open("/dev/null", O_RDONLY)) >= 0 && fd < hi)
		; /* holes filled (kept open on purpose) */
	if (fd >= 0)
		close(fd);
	hi = highest_fd();
	rl.rlim_cur = rl.rlim_max = (rlim_t)(hi + 1 + extra);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

/* The proxy in a child process: fork before any thread exists in the parent. `extra`
 * > 0 leaves the child exactly that many free fds once it runs. */
static pid_t proxy_child(int backend, const char *yaml, fx_tweak tweak, int extra, int *port)
{
	int p[2];
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct fx_proxy f;

		close(p[0]);
		fx_create(&f, backend, yaml, tweak);
		if (write(p[1], &f.http_port, sizeof(int)) != sizeof(int))
			_exit(3);
		close(p[1]);
		if (extra > 0)
			leave_fds(extra);
		proxy_poller_run(f.pl, &f.stop);
		_exit(0);
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], port, sizeof(int)), sizeof(int));
	close(p[0]);
	return pid;
}

static void child_stop(pid_t pid)
{
	int st;

	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

static int connect_status(int port, const char *target, int *fd_out)
{
	char req[256], head[1024];
	int fd = cli_connect(port);

	snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target);
	cli_sends(fd, req);
	cli_recv_until(fd, head, sizeof(head), "\r\n\r\n");
	*fd_out = fd;
	return status_of(head);
}

/* ----------------------------------------------------------- backpressure */

START_TEST(backpressure_upload_bounded)
{
	struct fx_proxy f;
	struct origin o;
	char head[512], target[64];
	size_t written;
	struct conn *c;
	int fd;

	origin_start(&o, ORIGIN_SILENT);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	snprintf(target, sizeof(target), "origin.test:%d", o.port);
	fd = cli_connect_via(&f, target, head, sizeof(head));
	ck_assert_int_eq(status_of(head), 200);
	written = write_until_stuck(fd);
	fx_halt(&f);
	c = f.px->conns;
	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_null(c->next);
	ck_assert_int_eq(c->st, CS_TUNNEL);
	/* Queued in userspace (at most one scratch-full) or, on Linux once the upload is
	 * bulk, in the direction's pipe (at most one pipe-full). */
	ck_assert_uint_le(c->u.out.len, PROXY_SCRATCH_SIZE);
	ck_assert_uint_le(c->u.pipe.queued, RELAY_PIPE_SIZE);
	ck_assert(side_pending(&c->u));
	ck_assert_uint_eq(c->c.ev & PROXY_EV_IN, 0); /* the client is no longer read */
	ck_assert_uint_le(c->ex.up, written);
	fprintf(stderr,
		"backpressure (upload, backend %d): client wrote %zu bytes before "
		"blocking; proxy holds %zu (queue) + %zu (pipe)\n",
		_i, written, c->u.out.len, c->u.pipe.queued);
	close(fd);
	fx_destroy(&f);
	origin_stop(&o);
}
END_TEST

START_TEST(backpressure_slow_reader_bounded)
{
	struct fx_proxy f;
	struct origin o;
	char head[512], target[64];
	struct conn *c;
	int fd;

	origin_start(&o, ORIGIN_FLOOD);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	snprintf(target, sizeof(target), "origin.test:%d", o.port);
	fd = cli_connect_via(&f, target, head, sizeof(head));
	ck_assert_int_eq(status_of(head), 200);
	usleep(500 * 1000); /* the client reads nothing */
	fx_halt(&f);
	c = f.px->conns;
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_le(c->c.out.len, PROXY_SCRATCH_SIZE);
	ck_assert_uint_le(c->c.pipe.queued, RELAY_PIPE_SIZE);
	ck_assert(side_pending(&c->c));
	ck_assert_uint_eq(c->u.ev & PROXY_EV_IN, 0); /* the origin is no longer read */
	close(fd);
	fx_destroy(&f);
	origin_stop(&o);
}
END_TEST

/* ----------------------------------------------------------- 2000 tunnels */

#define N_TUNNELS 2000

START_TEST(many_tunnels_back_to_baseline)
{
	static int fds[N_TUNNELS];
	static char msg[1024], back[1024];
	struct origin o;
	char target[64];
	long rss0, rss1, rss2;
	int port, fd0, fd1, fd2;
	pid_t pid;

	raise_nofile(4 * N_TUNNELS + 512);
	pid = proxy_child(_i, POLICY_LOOPBACK_OK "limits: {connections: 4096}\n", NULL, 0, &port);
	origin_start(&o, ORIGIN_ECHO);
	snprintf(target, sizeof(target), "127.0.0.1:%d", o.port);
	/* Warm up once so that one-time allocations are in the baseline. */
	ck_assert_int_eq(connect_status(port, target, &fds[0]), 200);
	close(fds[0]);
	usleep(200 * 1000);
	rss0 = proc_status_kb(pid, "VmRSS:");
	fd0 = proc_fd_count(pid);
	for (int i = 0; i < N_TUNNELS; i++)
		ck_assert_int_eq(connect_status(port, target, &fds[i]), 200);
	for (size_t k = 0; k < sizeof(msg); k++)
		msg[k] = (char)('a' + k % 26);
	for (int i = 0; i < N_TUNNELS; i++)
		cli_send(fds[i], msg, sizeof(msg));
	for (int i = 0; i < N_TUNNELS; i++) {
		ck_assert_uint_eq(cli_recv_n(fds[i], back, sizeof(back)), sizeof(back));
		ck_assert(memcmp(back, msg, sizeof(msg)) == 0);
	}
	usleep(200 * 1000);
	rss1 = proc_status_kb(pid, "VmRSS:");
	fd1 = proc_fd_count(pid);
	ck_assert_int_eq(fd1, fd0 + 2 * N_TUNNELS);
	for (int i = 0; i < N_TUNNELS; i++)
		close(fds[i]);
	for (int t = 0; t < 100 && proc_fd_count(pid) != fd0; t++)
		usleep(100 * 1000);
	fd2 = proc_fd_count(pid);
	/* What malloc keeps after the frees varies with the order they came in: a leak
	 * keeps nearly all of it, a run that returned its tunnels keeps a fraction
	 * (seen up to 27 % of the peak on a loaded machine). Polled for a second. */
	rss2 = proc_status_kb(pid, "VmRSS:");
	for (int t = 0; t < 10 && rss2 - rss0 > (rss1 - rss0) / 3 + 256; t++) {
		usleep(100 * 1000);
		rss2 = proc_status_kb(pid, "VmRSS:");
	}
	fprintf(stderr,
		"%d tunnels (backend %d): RSS %ld kB idle, %ld kB with tunnels open "
		"(%.0f bytes per idle tunnel), %ld kB after close; fds %d / %d / %d\n",
		N_TUNNELS, _i, rss0, rss1, (double)(rss1 - rss0) * 1024 / N_TUNNELS, rss2, fd0, fd1,
		fd2);
	ck_assert_int_eq(fd2, fd0);
#ifndef UNDER_ASAN
	ck_assert_int_le((rss1 - rss0) * 1024 / N_TUNNELS, 16 * 1024);
	ck_assert_int_le(rss2 - rss0, (rss1 - rss0) / 3 + 256);
#endif
	child_stop(pid);
	origin_stop(&o);
}
END_TEST

/* ------------------------------------------------------------------ limits */

/* Two rows: with 4 free fds the third client cannot even be accepted (the reserve
 * fd answers it); with 5 it is accepted but its upstream socket cannot be opened. */
START_TEST(out_of_fds_answered_503)
{
	struct origin o;
	char target[64];
	int port, fds[6], st[6], fd;
	pid_t pid;

	pid = proxy_child(_i / 2, POLICY_LOOPBACK_OK, NULL, 4 + _i % 2, &port);
	origin_start(&o, ORIGIN_ECHO);
	snprintf(target, sizeof(target), "127.0.0.1:%d", o.port);
	for (int i = 0; i < 6; i++)
		st[i] = connect_status(port, target, &fds[i]);
	ck_assert_int_eq(st[0], 200);
	ck_assert_int_eq(st[1], 200);
	for (int i = 2; i < 6; i++)
		ck_assert_msg(st[i] == 503, "client %d got %d", i, st[i]);
	for (int i = 0; i < 6; i++)
		close(fds[i]);
	usleep(300 * 1000); /* the listener's pause is 100 ms */
	ck_assert_int_eq(connect_status(port, target, &fd), 200);
	close(fd);
	child_stop(pid);
	origin_stop(&o);
}
END_TEST

static void cap_two(struct proxy_options *o)
{
	o->max_conns = 2;
}

START_TEST(connection_cap_answered_503)
{
	struct fx_proxy f;
	struct origin o;
	char target[64];
	int a, b, c;

	origin_start(&o, ORIGIN_ECHO);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, cap_two);
	snprintf(target, sizeof(target), "127.0.0.1:%d", o.port);
	ck_assert_int_eq(connect_status(f.http_port, target, &a), 200);
	ck_assert_int_eq(connect_status(f.http_port, target, &b), 200);
	ck_assert_int_eq(connect_status(f.http_port, target, &c), 503);
	close(a);
	close(b);
	close(c);
	fx_stop(&f);
	origin_stop(&o);
}
END_TEST

/* The refusal records (refusal.c) with this code: how many records, and the sum of
 * their counts (every refusal, however they were grouped). */
static int refusals(cJSON **recs, int n, const char *code, const char *rule, int *sum)
{
	int k = 0;

	*sum = 0;
	for (int i = 0; i < n; i++) {
		if (!js(recs[i], "code") || strcmp(js(recs[i], "code"), code) != 0)
			continue;
		ck_assert_str_eq(js(recs[i], "decision"), "deny");
		ck_assert_str_eq(js(recs[i], "proto"), "http");
		ck_assert_str_eq(js(recs[i], "host"), "");
		if (rule)
			ck_assert_str_eq(js(recs[i], "rule"), rule);
		ck_assert_int_ge((int)jnum(recs[i], "count"), 1);
		*sum += (int)jnum(recs[i], "count");
		k++;
	}
	return k;
}

/* Issue 33 and 31: limits.connections caps the run's open connections (default 256),
 * and every client it turns away is on record: one audit record for the first, then
 * the flood in records of a second each whose counts add up to every 503 sent. */
START_TEST(policy_connection_cap_audited)
{
	enum { EXTRA = 30 };
	struct fx_proxy f;
	struct origin o;
	char target[64];
	int a, b, c[EXTRA], sum, nrec;
	cJSON *recs[64];

	origin_start(&o, ORIGIN_ECHO);
	fx_start(&f, _i, POLICY_LOOPBACK_OK "limits: {connections: 2}\n", NULL);
	ck_assert_uint_eq(f.px->o.max_conns, 2);
	snprintf(target, sizeof(target), "127.0.0.1:%d", o.port);
	ck_assert_int_eq(connect_status(f.http_port, target, &a), 200);
	ck_assert_int_eq(connect_status(f.http_port, target, &b), 200);
	for (int i = 0; i < EXTRA; i++) {
		ck_assert_int_eq(connect_status(f.http_port, target, &c[i]), 503);
		close(c[i]);
	}
	close(a);
	close(b);
	fx_stop(&f);
	origin_stop(&o);
	nrec = fx_audit(&f, recs, 64);
	ck_assert_int_ge(refusals(recs, nrec, "503", "limits.connections (2 open)", &sum), 1);
	ck_assert_int_eq(sum, EXTRA);
	/* grouped: fewer records than refusals (they came within a second or two) */
	ck_assert_int_lt(refusals(recs, nrec, "503", NULL, &sum), EXTRA);
	fx_free_recs(recs, nrec);
}
END_TEST

START_TEST(default_connection_cap)
{
	struct fx_proxy f;

	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	ck_assert_uint_eq(f.px->o.max_conns, POLICY_CONNECTIONS_DEFAULT);
	ck_assert_uint_eq(POLICY_CONNECTIONS_DEFAULT, 256);
	fx_stop(&f);
}
END_TEST

static void short_head(struct proxy_options *o)
{
	o->head_timeout_ms = 300;
}

/* Issue 31: a head that timed out (408) and a malformed one (400) were answered but
 * never recorded. */
START_TEST(head_refusals_audited)
{
	struct fx_proxy f;
	char buf[512];
	int fd, sum, nrec;
	cJSON *recs[8];

	fx_start(&f, _i, POLICY_LOOPBACK_OK, short_head);
	fd = cli_connect(f.http_port);
	cli_sends(fd, "CONNECT origin.test:443 HTTP/1.1\r\n");
	cli_recv_all(fd, buf, sizeof(buf));
	ck_assert_int_eq(status_of(buf), 408);
	close(fd);
	fd = cli_connect(f.http_port);
	cli_sends(fd, "BREW / HTCPCP/1.0\x01\r\n\r\n");
	cli_recv_all(fd, buf, sizeof(buf));
	ck_assert_int_eq(status_of(buf), 400);
	close(fd);
	fx_stop(&f);
	nrec = fx_audit(&f, recs, 8);
	ck_assert_int_eq(nrec, 2);
	ck_assert_int_eq(refusals(recs, nrec, "408", "proxy: head timeout (300 ms)", &sum), 1);
	ck_assert_int_eq(sum, 1);
	ck_assert_str_eq(js(recs[0], "error"), "request head timed out");
	ck_assert_int_eq(refusals(recs, nrec, "400", "proxy: request refused", &sum), 1);
	ck_assert_int_eq(sum, 1);
	fx_free_recs(recs, nrec);
}
END_TEST

static void short_idle(struct proxy_options *o)
{
	o->idle_timeout_ms = 300;
}

START_TEST(idle_tunnel_closed)
{
	struct fx_proxy f;
	struct origin o;
	char head[512], target[64], buf[8];
	cJSON *recs[2];
	uint64_t t0;
	int fd;

	origin_start(&o, ORIGIN_ECHO);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, short_idle);
	snprintf(target, sizeof(target), "origin.test:%d", o.port);
	fd = cli_connect_via(&f, target, head, sizeof(head));
	ck_assert_int_eq(status_of(head), 200);
	/* Activity keeps it open past the idle period... */
	for (int i = 0; i < 4; i++) {
		usleep(150 * 1000);
		cli_sends(fd, "k");
		ck_assert_uint_eq(cli_recv_n(fd, buf, 1), 1);
	}
	/* ...silence closes it. */
	t0 = proxy_now_ms();
	ck_assert_uint_eq(cli_recv_all(fd, buf, sizeof(buf)), 0);
	ck_assert_uint_ge(proxy_now_ms() - t0, 250);
	close(fd);
	fx_stop(&f);
	origin_stop(&o);
	ck_assert_int_eq(fx_audit(&f, recs, 2), 1);
	ck_assert_str_eq(js(recs[0], "error"), "idle timeout");
	ck_assert_int_eq((int)jnum(recs[0], "bytes_up"), 4);
	fx_free_recs(recs, 1);
}
END_TEST

static Suite *load_suite(void)
{
	Suite *s = suite_create("proxy-load");
	TCase *tc = tcase_create("limits");

	tcase_set_timeout(tc, 240);
	tcase_add_loop_test(tc, backpressure_upload_bounded, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, backpressure_slow_reader_bounded, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, many_tunnels_back_to_baseline, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, out_of_fds_answered_503, 2 * FIRST_BACKEND, 2 * END_BACKEND);
	tcase_add_loop_test(tc, connection_cap_answered_503, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, policy_connection_cap_audited, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, default_connection_cap, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, head_refusals_audited, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, idle_tunnel_closed, FIRST_BACKEND, END_BACKEND);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(load_suite)
