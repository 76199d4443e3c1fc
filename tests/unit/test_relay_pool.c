/* The relay's pipe pool (relay_splice.c, Linux) on a bare struct proxy, no event loop:
 * the cap on lent pipes, pooled reuse, a pipe with bytes left closed rather than
 * pooled, the idle cap, closing the idle ones (fds back to the baseline), the memory
 * budget, the back-off after a pipe could not be made (EMFILE); and the SIGPIPE rule
 * of the pipe's write (none raised on a dead peer, a caller's pending one kept), its
 * partial writes (EAGAIN keeps the rest queued, in order), and a system that refuses
 * splice(2) (splicing turned off, nothing lost). */
#include <dirent.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>

#include "tests/unit/proxy_fixture.h"

#ifdef PROXY_SPLICE

static int fd_count(void)
{
	struct dirent *d;
	int n = 0;
	DIR *dir = opendir("/proc/self/fd");

	ck_assert_ptr_nonnull(dir);
	while ((d = readdir(dir)))
		n += d->d_name[0] != '.';
	closedir(dir);
	return n - 1;
}

static struct proxy *bare_proxy(void)
{
	struct proxy *px = calloc(1, sizeof(*px));

	ck_assert_ptr_nonnull(px);
	return px;
}

START_TEST(lend_cap_reuse_and_close)
{
	struct proxy *px = bare_proxy();
	struct side s[3] = {{.fd = -1}, {.fd = -1}, {.fd = -1}};
	int fds0 = fd_count();
	size_t cap;

	px->pipes.max_held = 2;
	ck_assert(relay_pipe_lend(px, &s[0]));
	ck_assert(relay_pipe_lend(px, &s[0])); /* already held: the same pipe */
	ck_assert(relay_pipe_lend(px, &s[1]));
	ck_assert(!relay_pipe_lend(px, &s[2]));
	ck_assert_uint_eq(px->pipes.n_held, 2);
	ck_assert_uint_eq(px->pipes.made, 2);
	ck_assert_uint_eq(px->pipes.lent, 2);
	ck_assert_uint_eq(px->pipes.refused, 1);
	cap = s[0].pipe.cap;
	ck_assert_uint_eq(cap, RELAY_PIPE_SIZE);
	ck_assert_uint_eq(px->pipes.bytes, 2 * cap);
	ck_assert_int_eq(fd_count(), fds0 + 4);

	relay_pipe_return(px, &s[0]); /* empty: pooled */
	ck_assert(!s[0].pipe.held);
	ck_assert_uint_eq(px->pipes.n_idle, 1);
	ck_assert(relay_pipe_lend(px, &s[2])); /* from the pool, nothing new made */
	ck_assert_uint_eq(px->pipes.made, 2);
	ck_assert_int_eq(fd_count(), fds0 + 4);

	/* Bytes left in it: closed, never pooled. */
	ck_assert_int_eq(write(s[1].pipe.wr, "stale", 5), 5);
	s[1].pipe.queued = 5;
	relay_pipe_return(px, &s[1]);
	ck_assert_uint_eq(px->pipes.n_idle, 0);
	ck_assert_uint_eq(px->pipes.bytes, cap);
	ck_assert_int_eq(fd_count(), fds0 + 2);

	relay_pipe_return(px, &s[2]);
	relay_pipes_close_idle(px);
	ck_assert_uint_eq(px->pipes.n_held, 0);
	ck_assert_uint_eq(px->pipes.n_idle, 0);
	ck_assert_uint_eq(px->pipes.bytes, 0);
	ck_assert_int_eq(fd_count(), fds0);
	free(px);
}
END_TEST

START_TEST(idle_pool_capped)
{
	struct proxy *px = bare_proxy();
	struct side s[RELAY_PIPES_IDLE + 3];
	int fds0 = fd_count();
	size_t n = sizeof(s) / sizeof(s[0]);

	memset(s, 0, sizeof(s));
	for (size_t i = 0; i < n; i++)
		ck_assert(relay_pipe_lend(px, &s[i]));
	for (size_t i = 0; i < n; i++)
		relay_pipe_return(px, &s[i]);
	ck_assert_uint_eq(px->pipes.n_idle, RELAY_PIPES_IDLE);
	ck_assert_uint_eq(px->pipes.bytes, RELAY_PIPES_IDLE * (size_t)RELAY_PIPE_SIZE);
	ck_assert_int_eq(fd_count(), fds0 + 2 * RELAY_PIPES_IDLE);
	relay_pipes_close_idle(px);
	ck_assert_int_eq(fd_count(), fds0);
	free(px);
}
END_TEST

/* The budget counts every pipe owned, idle ones included. */
START_TEST(budget_limits_pipes)
{
	struct proxy *px = bare_proxy();
	struct side a = {0}, b = {0};

	px->pipes.budget = RELAY_PIPE_SIZE + RELAY_PIPE_SIZE / 2;
	ck_assert(relay_pipe_lend(px, &a));
	ck_assert(!relay_pipe_lend(px, &b));
	ck_assert_uint_eq(px->pipes.made, 1);
	ck_assert_uint_eq(px->pipes.retry_at, 0); /* not a failure: no back-off */
	relay_pipe_return(px, &a);
	ck_assert(relay_pipe_lend(px, &b)); /* the pooled one */
	relay_pipe_return(px, &b);
	relay_pipes_close_idle(px);
	free(px);
}
END_TEST

/* Issue 33: with no budget set, a run owns at most PROXY_PIPE_BUDGET of pipes however
 * many directions want one (the old default was half the user's pipe pages: 32 MiB
 * on a stock kernel, each pipe kernel memory outside the sandbox's limit). */
START_TEST(default_budget_is_the_run_budget)
{
	struct proxy *px = bare_proxy();
	enum { WANT = PROXY_PIPE_BUDGET / RELAY_PIPE_SIZE + 4 };
	struct side s[WANT];
	size_t got = 0;

	memset(s, 0, sizeof(s));
	px->pipes.max_held = WANT;
	for (size_t i = 0; i < WANT; i++)
		got += relay_pipe_lend(px, &s[i]);
	ck_assert_uint_le(px->pipes.bytes, PROXY_PIPE_BUDGET);
	ck_assert_uint_le(got, PROXY_PIPE_BUDGET / RELAY_PIPE_SIZE);
	ck_assert_uint_ge(got, 1);
	for (size_t i = 0; i < WANT; i++)
		relay_pipe_return(px, &s[i]);
	relay_pipes_close_idle(px);
	free(px);
}
END_TEST

/* EMFILE: refused, then no new attempt until the back-off has passed. */
START_TEST(emfile_backs_off)
{
	struct proxy *px = bare_proxy();
	struct side a = {0};
	struct rlimit saved, rl;
	int holes[64], n = 0, fd;

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &saved), 0);
	rl = saved;
	rl.rlim_cur = (rlim_t)fd_count() + 8;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	while (n < 64 && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		holes[n++] = fd;
	ck_assert(!relay_pipe_lend(px, &a));
	ck_assert_uint_eq(px->pipes.refused, 1);
	ck_assert_uint_gt(px->pipes.retry_at, proxy_now_ms());
	ck_assert_uint_eq(px->pipes.bytes, 0);
	for (int i = 0; i < n; i++)
		close(holes[i]);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &saved), 0);
	ck_assert(!relay_pipe_lend(px, &a)); /* fds are back, but not yet tried */
	ck_assert_uint_eq(px->pipes.made, 0);
	px->pipes.retry_at = proxy_now_ms() - 1;
	ck_assert(relay_pipe_lend(px, &a));
	ck_assert_uint_eq(px->pipes.retry_at, 0);
	relay_pipe_return(px, &a);
	relay_pipes_close_idle(px);
	free(px);
}
END_TEST

/* ------------------------------------------------------------- flushing */

static volatile sig_atomic_t sigpipes;

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipes++;
}

static bool sigpipe_pending(void)
{
	sigset_t p;

	ck_assert_int_eq(sigpending(&p), 0);
	return sigismember(&p, SIGPIPE);
}

/* A side whose peer is gone, with bytes in its pipe. */
static void dead_peer_side(struct proxy *px, struct side *s)
{
	int sp[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	close(sp[1]);
	memset(s, 0, sizeof(*s));
	s->fd = sp[0];
	ck_assert(relay_pipe_lend(px, s));
	ck_assert_int_eq(write(s->pipe.wr, "bytes", 5), 5);
	s->pipe.queued = 5;
}

START_TEST(flush_to_dead_peer_raises_no_sigpipe)
{
	struct proxy *px = bare_proxy();
	struct conn c = {.px = px};
	struct sigaction sa = {.sa_handler = on_sigpipe};
	sigset_t one, old;
	struct side s;

	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGPIPE, &sa, NULL), 0);
	sigpipes = 0;

	dead_peer_side(px, &s);
	ck_assert_int_eq(relay_pipe_flush(&c, &s), -EPIPE);
	ck_assert_int_eq(sigpipes, 0);
	ck_assert(!sigpipe_pending());
	ck_assert_uint_eq(s.pipe.queued, 5);
	relay_pipe_return(px, &s);
	close(s.fd);

	/* The caller's own SIGPIPE, blocked and pending, is still there afterwards. */
	sigemptyset(&one);
	sigaddset(&one, SIGPIPE);
	ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &one, &old), 0);
	ck_assert_int_eq(pthread_kill(pthread_self(), SIGPIPE), 0);
	dead_peer_side(px, &s);
	ck_assert_int_eq(relay_pipe_flush(&c, &s), -EPIPE);
	ck_assert(sigpipe_pending());
	ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
	ck_assert_int_eq(sigpipes, 1);
	relay_pipe_return(px, &s);
	close(s.fd);
	relay_pipes_close_idle(px);
	free(px);
}
END_TEST

/* An embedder that ignores SIGPIPE (the supervisor): no mask around the write, the
 * error is still EPIPE and the bytes stay queued. */
START_TEST(flush_to_dead_peer_sigpipe_ignored)
{
	struct proxy *px = bare_proxy();
	struct conn c = {.px = px};
	struct sigaction sa = {.sa_handler = SIG_IGN}, old;
	struct side s;

	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGPIPE, &sa, &old), 0);
	px->o.sigpipe_ignored = true;
	dead_peer_side(px, &s);
	ck_assert_int_eq(relay_pipe_flush(&c, &s), -EPIPE);
	ck_assert(!sigpipe_pending());
	ck_assert_uint_eq(s.pipe.queued, 5);
	relay_pipe_return(px, &s);
	close(s.fd);
	relay_pipes_close_idle(px);
	ck_assert_int_eq(sigaction(SIGPIPE, &old, NULL), 0);
	free(px);
}
END_TEST

/* The peer takes less than the pipe holds: the rest stays queued, then follows. */
START_TEST(flush_partial_then_rest)
{
	static char in[RELAY_PIPE_SIZE], out[RELAY_PIPE_SIZE];
	struct proxy *px = bare_proxy();
	struct conn c = {.px = px};
	struct side s = {0};
	size_t got = 0, put = 0;
	int sp[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	fcntl(sp[0], F_SETFL, O_NONBLOCK);
	s.fd = sp[0];
	ck_assert(relay_pipe_lend(px, &s));
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (char)(i * 7 + i / 4096);
	while (put < sizeof(in)) {
		ssize_t w = write(s.pipe.wr, in + put, sizeof(in) - put);
		ck_assert_int_gt(w, 0);
		put += (size_t)w;
	}
	s.pipe.queued = sizeof(in);
	ck_assert_int_eq(relay_pipe_flush(&c, &s), 0);
	ck_assert_uint_gt(s.pipe.queued, 0); /* a unix socket buffer is far below 1 MiB */
	ck_assert_uint_lt(s.pipe.queued, sizeof(in));
	for (int rounds = 0; got < sizeof(out) && rounds < 100000; rounds++) {
		ssize_t r = recv(sp[1], out + got, sizeof(out) - got, MSG_DONTWAIT);

		if (r > 0)
			got += (size_t)r;
		ck_assert_int_eq(relay_pipe_flush(&c, &s), 0);
	}
	ck_assert_uint_eq(got, sizeof(out));
	ck_assert_uint_eq(s.pipe.queued, 0);
	ck_assert(memcmp(in, out, sizeof(in)) == 0);
	relay_pipe_return(px, &s);
	relay_pipes_close_idle(px);
	close(sp[0]);
	close(sp[1]);
	free(px);
}
END_TEST

/* A source splice(2) cannot read (as on a system that refuses it): nothing moved,
 * the pipe back in the pool, splicing off for good, the caller told to copy. */
START_TEST(splice_refused_turns_splicing_off)
{
	struct proxy *px = bare_proxy();
	struct conn c = {.px = px};
	struct side src = {0}, dst = {0};
	unsigned long long count = 0;

	src.fd = epoll_create1(EPOLL_CLOEXEC); /* has no splice_read: EINVAL */
	ck_assert_int_ge(src.fd, 0);
	dst.fd = -1;
	ck_assert(relay_pipe_lend(px, &dst));
	ck_assert_int_eq(relay_splice_pump(&c, &src, &dst, &count), -EOPNOTSUPP);
	ck_assert_uint_eq(count, 0);
	ck_assert(!src.rd_eof);
	ck_assert(!dst.pipe.held);
	ck_assert(px->pipes.off);
	ck_assert_uint_eq(px->pipes.n_held, 0);
	ck_assert_uint_eq(px->pipes.n_idle, 1);
	ck_assert(!relay_pipe_lend(px, &dst));
	close(src.fd);
	relay_pipes_close_idle(px);
	free(px);
}
END_TEST

#endif

static Suite *relay_pool_suite(void)
{
	Suite *s = suite_create("relay-pool");
	TCase *tc = tcase_create("pool");

#ifdef PROXY_SPLICE
	tcase_add_test(tc, lend_cap_reuse_and_close);
	tcase_add_test(tc, idle_pool_capped);
	tcase_add_test(tc, budget_limits_pipes);
	tcase_add_test(tc, default_budget_is_the_run_budget);
	tcase_add_test(tc, emfile_backs_off);
	tcase_add_test(tc, flush_to_dead_peer_raises_no_sigpipe);
	tcase_add_test(tc, flush_to_dead_peer_sigpipe_ignored);
	tcase_add_test(tc, flush_partial_then_rest);
	tcase_add_test(tc, splice_refused_turns_splicing_off);
#endif
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(relay_pool_suite)
