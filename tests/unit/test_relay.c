/* The relay's bulk path, in-process on real loopback sockets (proxy_fixture.h): bytes
 * exact through a tunnel in each direction and both at once (a position-dependent
 * pseudo-random pattern, every byte compared, the audit's counters exact), on both
 * poller backends; half-close after a bulk upload (EOF reaches the origin only after
 * the last byte, the reply still comes back); a slow reader with a pipe full (the
 * origin no longer read, one pipe-full queued at most); closing with bytes in a pipe
 * (pipe closed, fds back to the baseline); more bulk tunnels than pipes (the others
 * copy, every byte exact); no fd for a pipe (EMFILE) and a refused pipe size (EPERM)
 * both fall back. On Linux the pipe path is asserted to have been taken; the pool's
 * accounting and the SIGPIPE rule are in test_relay_pool.c. */
#include <dirent.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <sys/capability.h>
#include <sys/resource.h>

#include "tests/unit/proxy_fixture.h"
#include "tests/unit/relay_pattern.h"

#define MiB (1024ull * 1024)

/* ---------------------------------------------------------------- helpers */

static void fx_resume(struct fx_proxy *f)
{
	f->stop = false;
	ck_assert_int_eq(pthread_create(&f->th, NULL, fx_loop, f), 0);
}

static int audit_lines(struct fx_proxy *f)
{
	char *all = fx_slurp(f->audit);
	int n = 0;

	for (char *p = all; *p; p++)
		n += *p == '\n';
	free(all);
	return n;
}

/* Records are written when a connection closes: wait (bounded) for n of them. */
static void wait_audit(struct fx_proxy *f, int n)
{
	for (int t = 0; t < 1000 && audit_lines(f) < n; t++)
		usleep(10 * 1000);
	ck_assert_int_eq(audit_lines(f), n);
}

static int fd_count(void)
{
	struct dirent *d;
	int n = 0;
	DIR *dir = opendir("/proc/self/fd");

	ck_assert_ptr_nonnull(dir);
	while ((d = readdir(dir)))
		n += d->d_name[0] != '.';
	closedir(dir);
	return n - 1; /* the directory's own fd */
}

/* A tunnel to the pattern origin; the request is sent separately. */
static int tun_connect(struct fx_proxy *f, struct pat_origin *o)
{
	char head[512], target[64];
	int fd;

	snprintf(target, sizeof(target), "origin.test:%d", o->port);
	fd = cli_connect_via(f, target, head, sizeof(head));
	ck_assert_int_eq(status_of(head), 200);
	return fd;
}

static int tun_open(struct fx_proxy *f, struct pat_origin *o, char mode, uint32_t seed,
		    uint64_t len)
{
	int fd = tun_connect(f, o);

	pat_request(fd, mode, seed, len);
	return fd;
}

static void expect_download(int fd, uint32_t seed, uint64_t *off, uint64_t len)
{
	struct pat_read r = pat_read(fd, seed, *off, UINT64_MAX);

	ck_assert_msg(r.bad == UINT64_MAX, "byte %llu differs", (unsigned long long)r.bad);
	ck_assert_msg(r.eof, "no EOF after %llu bytes", (unsigned long long)(*off + r.n));
	*off += r.n;
	ck_assert_uint_eq(*off, len);
}

/* The one connection the proxy has, stopped, with bytes waiting toward the client. */
static struct conn *stalled_conn(struct fx_proxy *f)
{
	struct conn *c = f->px->conns;

	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_null(c->next);
	ck_assert_int_eq(c->st, CS_TUNNEL);
	ck_assert(side_pending(&c->c));
	ck_assert_uint_eq(c->u.ev & PROXY_EV_IN, 0); /* the origin is no longer read */
	return c;
}

static void expect_pipes_gone(struct fx_proxy *f)
{
	ck_assert_ptr_null(f->px->conns);
	ck_assert_uint_eq(f->px->pipes.n_held, 0);
	ck_assert_uint_eq(f->px->pipes.n_idle, 0);
	ck_assert_uint_eq(f->px->pipes.bytes, 0);
}

/* ---------------------------------------------------------- exact bytes */

/* Every connection the proxy accepts is tuned (Nagle off, the not-sent low-water mark,
 * the window clamp), the first by its own calls or the listener's, the rest by what
 * the listener's options give them (Linux copies them on accept, read back once). */
START_TEST(accepted_connections_tuned)
{
	struct fx_proxy f;
	struct pat_origin o;
	int fds[3], n = 0;

	pat_origin_start(&o);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	for (int i = 0; i < 3; i++)
		fds[i] = tun_connect(&f, &o);
	fx_halt(&f);
	for (struct conn *c = f.px->conns; c; c = c->next, n++) {
		int v[3] = {-1, -1, -1},
		    opt[3] = {TCP_NODELAY, TCP_NOTSENT_LOWAT, TCP_WINDOW_CLAMP};
		for (int k = 0; k < 3; k++) {
			socklen_t len = sizeof(v[k]);
			ck_assert_int_eq(getsockopt(c->c.fd, IPPROTO_TCP, opt[k], &v[k], &len), 0);
		}
		ck_assert_int_eq(v[0], 1);
		ck_assert_int_eq(v[1], PROXY_NOTSENT_LOWAT);
		ck_assert_int_eq(v[2], PROXY_SANDBOX_WINDOW);
	}
	ck_assert_int_eq(n, 3);
#if defined(__linux__) && !defined(HALO_PORTABLE)
	ck_assert_int_eq(f.px->lsn[0].tune, LISTEN_TUNE_INHERITED);
#endif
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	fx_destroy(&f);
	pat_origin_stop(&o);
}
END_TEST

static int tcp_opt(int fd, int opt)
{
	int v = -1;
	socklen_t len = sizeof(v);

	ck_assert_int_eq(getsockopt(fd, IPPROTO_TCP, opt, &v, &len), 0);
	return v;
}

/* A launch whose command never connects pays no call for the tuning: the listeners
 * are untouched until their first connection. Then a burst queued before that first
 * accept (cloned from the listener before it was tuned) is tuned in full, every one. */
START_TEST(listener_tuned_at_first_connection)
{
	struct fx_proxy f;
	int fds[5], n = 0;

	fx_create(&f, _i, POLICY_LOOPBACK_OK, NULL);
	ck_assert_int_eq(f.px->lsn[0].tune, LISTEN_TUNE_LAZY);
	ck_assert_int_eq(tcp_opt(f.px->lsn[0].fd, TCP_NODELAY), 0);
	ck_assert_int_eq(f.px->lsn[1].tune, LISTEN_TUNE_LAZY);
	for (int i = 0; i < 5; i++) /* queued: the loop does not run yet */
		fds[i] = cli_connect(f.http_port);
	ck_assert_int_eq(pthread_create(&f.th, NULL, fx_loop, &f), 0);
	for (int t = 0; t < 500; t++) { /* bounded: 5 s */
		fx_halt(&f);
		if (f.px->st.conns_open == 5)
			break;
		fx_resume(&f);
		usleep(10 * 1000);
	}
	ck_assert_uint_eq(f.px->st.conns_open, 5);
	for (struct conn *c = f.px->conns; c; c = c->next, n++) {
		ck_assert_int_eq(tcp_opt(c->c.fd, TCP_NODELAY), 1);
		ck_assert_int_eq(tcp_opt(c->c.fd, TCP_NOTSENT_LOWAT), PROXY_NOTSENT_LOWAT);
		ck_assert_int_eq(tcp_opt(c->c.fd, TCP_WINDOW_CLAMP), PROXY_SANDBOX_WINDOW);
	}
	ck_assert_int_eq(n, 5);
	ck_assert_int_eq(tcp_opt(f.px->lsn[0].fd, TCP_NODELAY), 1);
	ck_assert_int_eq(tcp_opt(f.px->lsn[0].fd, TCP_NOTSENT_LOWAT), PROXY_NOTSENT_LOWAT);
	ck_assert_int_eq(f.px->lsn[0].tune, LISTEN_TUNE_CHECK); /* the queue was drained */
	ck_assert_int_eq(f.px->lsn[1].tune, LISTEN_TUNE_LAZY);	/* SOCKS5: never used */
	for (int i = 0; i < 5; i++)
		close(fds[i]);
	fx_destroy(&f);
}
END_TEST

/* The one connection, the loop stopped, once it is resolving with the client's
 * interest quieted or not (quiet), or (past_ok) has gone past resolving (bounded wait). */
static struct conn *halted_resolving(struct fx_proxy *f, bool quiet, bool past_ok)
{
	for (int t = 0; t < 100; t++) {
		struct conn *c;

		usleep(10 * 1000);
		fx_halt(f);
		c = f->px->conns;
		if (c && c->st == CS_RESOLVING && c->client_quiet == quiet)
			return c;
		if (c && past_ok && c->st != CS_REQUEST && c->st != CS_RESOLVING)
			return c;
		fx_resume(f);
	}
	ck_abort_msg("the connection never got to resolving (quiet %d)", (int)quiet);
	return NULL;
}

/* While the target is reached (a name whose lookup takes 1.5 s) a CONNECT client keeps
 * its registered read interest, unread: no poller change now nor at the answer. Bytes
 * it sends before the answer take the interest out (the loop never spins on them) and
 * reach the origin, in order, once the tunnel is up. */
START_TEST(waiting_client_keeps_interest)
{
	struct fx_proxy f;
	struct pat_origin o;
	struct conn *c;
	char req[256], head[512];
	uint64_t off = 0;
	int fd;

	pat_origin_start(&o);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	fd = cli_connect(f.http_port);
	snprintf(req, sizeof(req), "CONNECT slow.test:%d HTTP/1.1\r\n\r\n", o.port);
	cli_sends(fd, req);
	c = halted_resolving(&f, false, false);
	ck_assert_uint_eq(c->c.ev, PROXY_EV_IN);
	fx_resume(&f);
	pat_request(fd, 'D', 11, 3 * MiB); /* early: before the 200 */
	c = halted_resolving(&f, true, true);
	if (c->st == CS_RESOLVING) {
		ck_assert_uint_eq(c->c.ev, 0);
		ck_assert_uint_eq(c->in_len, 0); /* not read while waiting */
	} else { /* a machine so loaded that the 1.5 s lookup ended first */
		fprintf(stderr, "waiting_client_keeps_interest: resolved before the early "
				"bytes were seen; their quieting not checked\n");
	}
	fx_resume(&f);
	cli_recv_until(fd, head, sizeof(head), "\r\n\r\n");
	ck_assert_int_eq(status_of(head), 200);
	expect_download(fd, 11, &off, 3 * MiB);
	close(fd);
	wait_audit(&f, 1);
	fx_halt(&f);
	ck_assert_ptr_null(f.px->conns);
	fx_destroy(&f);
	pat_origin_stop(&o);
}
END_TEST

START_TEST(bulk_download_exact)
{
	struct fx_proxy f;
	struct pat_origin o;
	cJSON *recs[2];
	uint64_t off = 0;
	int fd, fds0;

	pat_origin_start(&o);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	fds0 = fd_count();
	fd = tun_open(&f, &o, 'D', 7, 64 * MiB);
	expect_download(fd, 7, &off, 64 * MiB);
	close(fd);
	wait_audit(&f, 1);
	pat_origin_join(&o);
	fx_halt(&f);
#ifdef PROXY_SPLICE
	ck_assert_uint_gt(f.px->pipes.lent, 0);
#endif
	expect_pipes_gone(&f);
	ck_assert_int_eq(fd_count(), fds0);
	fx_destroy(&f);
	pat_origin_stop(&o);
	ck_assert_int_eq(fx_audit(&f, recs, 2), 1);
	ck_assert_uint_eq((uint64_t)jnum(recs[0], "bytes_down"), 64 * MiB);
	ck_assert_uint_eq((uint64_t)jnum(recs[0], "bytes_up"), PAT_REQ_LEN);
	ck_assert_ptr_null(js(recs[0], "error"));
	fx_free_recs(recs, 1);
}
END_TEST

/* Half-close after bulk: the origin sees EOF only once every byte is in (it checks
 * them all), and its answer still comes back on the other direction. */
START_TEST(bulk_upload_half_close_exact)
{
	struct fx_proxy f;
	struct pat_origin o;
	cJSON *recs[2];
	char reply[128];
	int fd;

	pat_origin_start(&o);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	fd = tun_open(&f, &o, 'U', 11, 0);
	pat_write(fd, 11, 0, 64 * MiB);
	ck_assert_int_eq(shutdown(fd, SHUT_WR), 0);
	cli_recv_all(fd, reply, sizeof(reply));
	ck_assert_str_eq(reply, "U 67108864 ok\n");
	close(fd);
	wait_audit(&f, 1);
	fx_halt(&f);
#ifdef PROXY_SPLICE
	ck_assert_uint_gt(f.px->pipes.lent, 0);
#endif
	expect_pipes_gone(&f);
	fx_destroy(&f);
	pat_origin_stop(&o);
	ck_assert_int_eq(fx_audit(&f, recs, 2), 1);
	ck_assert_uint_eq((uint64_t)jnum(recs[0], "bytes_up"), PAT_REQ_LEN + 64 * MiB);
	ck_assert_uint_eq((uint64_t)jnum(recs[0], "bytes_down"), strlen("U 67108864 ok\n"));
	fx_free_recs(recs, 1);
}
END_TEST

struct writer {
	int fd;
	uint64_t len;
};

static void *writer_run(void *arg)
{
	struct writer *w = arg;

	pat_write(w->fd, 5, 0, w->len);
	shutdown(w->fd, SHUT_WR);
	return NULL;
}

/* Both directions bulk at once through the echo origin: two pipes lent together. */
START_TEST(bulk_echo_both_ways_exact)
{
	struct fx_proxy f;
	struct origin o;
	struct writer w = {.len = 32 * MiB};
	char head[512], target[64];
	cJSON *recs[2];
	pthread_t th;
	uint64_t off = 0;

	origin_start(&o, ORIGIN_ECHO);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	snprintf(target, sizeof(target), "origin.test:%d", o.port);
	w.fd = cli_connect_via(&f, target, head, sizeof(head));
	ck_assert_int_eq(status_of(head), 200);
	ck_assert_int_eq(pthread_create(&th, NULL, writer_run, &w), 0);
	expect_download(w.fd, 5, &off, w.len);
	pthread_join(th, NULL);
	close(w.fd);
	wait_audit(&f, 1);
	fx_halt(&f);
	expect_pipes_gone(&f);
	fx_destroy(&f);
	origin_stop(&o);
	ck_assert_int_eq(fx_audit(&f, recs, 2), 1);
	ck_assert_uint_eq((uint64_t)jnum(recs[0], "bytes_up"), w.len);
	ck_assert_uint_eq((uint64_t)jnum(recs[0], "bytes_down"), w.len);
	fx_free_recs(recs, 1);
}
END_TEST

/* ------------------------------------------------------------ slow reader */

/* The client reads a little, then nothing: the origin is no longer read and what the
 * proxy holds is one pipe-full (or one scratch-full) at most; then every byte. */
START_TEST(slow_reader_pipe_bounded)
{
	struct fx_proxy f;
	struct pat_origin o;
	struct conn *c;
	uint64_t off = 0;
	int fd;

	pat_origin_start(&o);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	fd = tun_open(&f, &o, 'D', 3, 256 * MiB);
	off = pat_read(fd, 3, 0, 2 * MiB).n;
	ck_assert_uint_eq(off, 2 * MiB);
	usleep(400 * 1000);
	fx_halt(&f);
	c = stalled_conn(&f);
	ck_assert_uint_le(c->c.out.len, PROXY_SCRATCH_SIZE);
	ck_assert_uint_le(c->c.pipe.queued, c->c.pipe.cap);
	ck_assert_uint_lt(c->ex.down, 256 * MiB); /* the origin is held back too */
#ifdef PROXY_SPLICE
	ck_assert(c->c.pipe.held);
	ck_assert_uint_gt(c->c.pipe.queued, 0);
	ck_assert_uint_eq(c->c.out.len, 0);
	ck_assert_uint_eq(c->c.pipe.cap, RELAY_PIPE_SIZE);
	ck_assert_uint_eq(f.px->pipes.n_held, 1);
#endif
	fx_resume(&f);
	expect_download(fd, 3, &off, 256 * MiB);
	close(fd);
	wait_audit(&f, 1);
	fx_stop(&f);
	pat_origin_stop(&o);
}
END_TEST

/* The client goes away while its pipe is full: the pipe is closed, not pooled, and
 * every fd the tunnel used is gone. */
START_TEST(close_with_full_pipe_no_leak)
{
	struct fx_proxy f;
	struct pat_origin o;
	struct conn *c;
	int fd, fds0;

	pat_origin_start(&o);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	fds0 = fd_count();
	fd = tun_open(&f, &o, 'D', 9, 256 * MiB);
	ck_assert_uint_eq(pat_read(fd, 9, 0, MiB).n, MiB);
	usleep(300 * 1000);
	fx_halt(&f);
	c = stalled_conn(&f);
#ifdef PROXY_SPLICE
	ck_assert_uint_gt(c->c.pipe.queued, 0);
#endif
	(void)c;
	fx_resume(&f);
	close(fd); /* unread bytes: a reset */
	wait_audit(&f, 1);
	pat_origin_join(&o);
	fx_halt(&f);
	expect_pipes_gone(&f);
	ck_assert_int_eq(fd_count(), fds0);
	fx_destroy(&f);
	pat_origin_stop(&o);
}
END_TEST

/* ------------------------------------------------------------- fallbacks */

#define N_BULK 5

/* n tunnels, every one stopped with bytes queued toward its client: `held` of them in
 * a pipe, the others in the userspace queue (at most one scratch-full). */
static void expect_stalled(struct fx_proxy *f, int n, size_t held)
{
	int with_pipe = 0, copying = 0, conns = 0;

	ck_assert_uint_eq(f->px->pipes.n_held, held);
	for (struct conn *c = f->px->conns; c; c = c->next, conns++) {
		ck_assert(side_pending(&c->c));
		ck_assert_uint_eq(c->u.ev & PROXY_EV_IN, 0);
		ck_assert_uint_le(c->c.out.len, PROXY_SCRATCH_SIZE);
		with_pipe += c->c.pipe.queued > 0;
		copying += c->c.out.len > 0;
	}
	ck_assert_int_eq(conns, n);
	ck_assert_int_eq(with_pipe, (int)held);
	ck_assert_int_eq(copying, n - (int)held);
}

/* More bulk tunnels than pipes: two get pipes, the others copy; all exact. */
START_TEST(pool_exhausted_falls_back)
{
	struct fx_proxy f;
	struct pat_origin o;
	int fds[N_BULK];
	uint64_t off[N_BULK];
	cJSON *recs[N_BULK];

	pat_origin_start(&o);
	fx_create(&f, _i, POLICY_LOOPBACK_OK, NULL);
	f.px->pipes.max_held = 2;
	fx_resume(&f);
	for (int i = 0; i < N_BULK; i++) {
		fds[i] = tun_open(&f, &o, 'D', 100 + (uint32_t)i, 128 * MiB);
		off[i] = pat_read(fds[i], 100 + (uint32_t)i, 0, MiB).n;
		ck_assert_uint_eq(off[i], MiB);
		if (i == 1 || i == N_BULK - 1) { /* the first two hold pipes; then the rest */
			usleep(300 * 1000);
			fx_halt(&f);
#ifdef PROXY_SPLICE
			expect_stalled(&f, i + 1, 2);
			if (i == N_BULK - 1)
				ck_assert_uint_gt(f.px->pipes.refused, 0);
#endif
			fx_resume(&f);
		}
	}
	for (int i = 0; i < N_BULK; i++) {
		expect_download(fds[i], 100 + (uint32_t)i, &off[i], 128 * MiB);
		close(fds[i]);
	}
	wait_audit(&f, N_BULK);
	fx_halt(&f);
	expect_pipes_gone(&f);
	fx_destroy(&f);
	pat_origin_stop(&o);
	ck_assert_int_eq(fx_audit(&f, recs, N_BULK), N_BULK);
	for (int i = 0; i < N_BULK; i++)
		ck_assert_uint_eq((uint64_t)jnum(recs[i], "bytes_down"), 128 * MiB);
	fx_free_recs(recs, N_BULK);
}
END_TEST

static void fill_fd_table(int *holes, int *n_holes, int max, struct rlimit *saved)
{
	struct rlimit rl;
	int hi = 0, fd;

	*n_holes = 0;
	while (*n_holes < max && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		holes[(*n_holes)++] = fd;
	for (int i = 0; i < *n_holes; i++)
		hi = holes[i] > hi ? holes[i] : hi;
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, saved), 0);
	rl = *saved;
	rl.rlim_cur = (rlim_t)hi + 1;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	/* Every fd number below the limit is taken now. */
	ck_assert_int_lt(open("/dev/null", O_RDONLY), 0);
	ck_assert_int_eq(errno, EMFILE);
}

/* No fd left for a pipe: the tunnel copies, every byte arrives, nothing is lent. */
START_TEST(emfile_on_pipe_falls_back)
{
	struct fx_proxy f;
	struct pat_origin o;
	struct rlimit saved;
	static int holes[65536];
	int n_holes, fd;
	uint64_t off = 0;

	pat_origin_start(&o);
	fx_start(&f, _i, POLICY_LOOPBACK_OK, NULL);
	fd = tun_connect(&f, &o);
	fill_fd_table(holes, &n_holes, (int)(sizeof(holes) / sizeof(holes[0])), &saved);
	pat_request(fd, 'D', 21, 64 * MiB);
	expect_download(fd, 21, &off, 64 * MiB);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &saved), 0);
	for (int i = 0; i < n_holes; i++)
		close(holes[i]);
	close(fd);
	wait_audit(&f, 1);
	fx_halt(&f);
#ifdef PROXY_SPLICE
	ck_assert_uint_eq(f.px->pipes.made, 0);
	ck_assert_uint_eq(f.px->pipes.lent, 0);
	ck_assert_uint_gt(f.px->pipes.refused, 0);
	ck_assert_uint_gt(f.px->pipes.retry_at, 0);
#endif
	expect_pipes_gone(&f);
	fx_destroy(&f);
	pat_origin_stop(&o);
}
END_TEST

static long pipe_max_size(void)
{
	FILE *fp = fopen("/proc/sys/fs/pipe-max-size", "r");
	long v = 1048576;

	if (fp) {
		ck_assert_int_eq(fscanf(fp, "%ld", &v), 1);
		fclose(fp);
	}
	return v;
}

/* Only the proxy's thread matters: capabilities are per thread and inherited. */
static void drop_sys_resource(void)
{
	cap_value_t v = CAP_SYS_RESOURCE;
	cap_t caps = cap_get_proc();

	ck_assert_ptr_nonnull(caps);
	ck_assert_int_eq(cap_set_flag(caps, CAP_EFFECTIVE, 1, &v, CAP_CLEAR), 0);
	ck_assert_int_eq(cap_set_proc(caps), 0);
	cap_free(caps);
}

/* A pipe size above pipe-max-size is refused (EPERM) without CAP_SYS_RESOURCE: the
 * pipe keeps its default size and is still used. */
START_TEST(pipe_size_refused_default_used)
{
	struct fx_proxy f;
	struct pat_origin o;
	struct conn *c;
	uint64_t off;
	int p[2], fd, dflt;

	ck_assert_int_eq(pipe(p), 0);
	dflt = fcntl(p[0], F_GETPIPE_SZ);
	close(p[0]);
	close(p[1]);
	pat_origin_start(&o);
	fx_create(&f, _i, POLICY_LOOPBACK_OK, NULL);
	f.px->pipes.want_size = (size_t)pipe_max_size() * 2;
	drop_sys_resource(); /* before the proxy's thread exists */
	fx_resume(&f);
	fd = tun_open(&f, &o, 'D', 31, 256 * MiB);
	off = pat_read(fd, 31, 0, 2 * MiB).n;
	usleep(300 * 1000);
	fx_halt(&f);
	c = stalled_conn(&f);
#ifdef PROXY_SPLICE
	ck_assert(c->c.pipe.held);
	ck_assert_int_eq((int)c->c.pipe.cap, dflt);
	ck_assert_uint_le(c->c.pipe.queued, (size_t)dflt);
#endif
	(void)c;
	(void)dflt;
	fx_resume(&f);
	expect_download(fd, 31, &off, 256 * MiB);
	close(fd);
	wait_audit(&f, 1);
	fx_stop(&f);
	pat_origin_stop(&o);
}
END_TEST

static Suite *relay_suite(void)
{
	Suite *s = suite_create("relay");
	TCase *tc = tcase_create("bulk");

	tcase_set_timeout(tc, 180);
	tcase_add_loop_test(tc, accepted_connections_tuned, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, listener_tuned_at_first_connection, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, waiting_client_keeps_interest, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, bulk_download_exact, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, bulk_upload_half_close_exact, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, bulk_echo_both_ways_exact, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, slow_reader_pipe_bounded, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, close_with_full_pipe_no_leak, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, pool_exhausted_falls_back, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, emfile_on_pipe_falls_back, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, pipe_size_refused_default_used, FIRST_BACKEND, END_BACKEND);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(relay_suite)
