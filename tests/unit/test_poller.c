/* The poller on both backends: readiness, interest changes, deletes inside callbacks
 * (including a closed-and-reused fd number within one round), hang-up reporting,
 * quiet fds, timers (order, cancel, re-arm from a callback) and the stop flag. Every
 * test runs once per backend (loop index = enum proxy_poller_backend). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy/poller.h"
#include "tests/unit/unit.h"

static struct proxy_poller *mk(int backend)
{
	struct proxy_poller *pl = NULL;

	ck_assert_int_eq(proxy_poller_new((enum proxy_poller_backend)backend, &pl), 0);
	ck_assert_ptr_nonnull(pl);
	return pl;
}

struct rec {
	int calls;
	int fd;
	unsigned events;
	volatile bool *stop;
	int stop_after;
};

static void on_fd(void *arg, int fd, unsigned events)
{
	struct rec *r = arg;

	r->calls++;
	r->fd = fd;
	r->events |= events;
	if (r->stop && r->calls >= r->stop_after)
		*r->stop = true;
}

static void stop_cb(void *arg)
{
	*(volatile bool *)arg = true;
}

/* Run until the callbacks stop the loop, with a 2 s safety timer. */
static void run(struct proxy_poller *pl, volatile bool *stop)
{
	struct proxy_timer *guard = proxy_timer_add(pl, 2000, stop_cb, (void *)stop);

	ck_assert_ptr_nonnull(guard);
	ck_assert_int_eq(proxy_poller_run(pl, stop), 0);
	proxy_timer_cancel(pl, guard);
}

START_TEST(default_backend)
{
#if defined(__linux__) && !defined(HALO_PORTABLE)
	ck_assert_int_eq(proxy_poller_default_backend(), PROXY_POLLER_EPOLL);
#else
	ck_assert_int_eq(proxy_poller_default_backend(), PROXY_POLLER_POLL);
#endif
}
END_TEST

START_TEST(readable_and_writable)
{
	struct proxy_poller *pl = mk(_i);
	volatile bool stop = false;
	struct rec r = {.stop = &stop, .stop_after = 1};
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	ck_assert_int_eq(proxy_poller_add(pl, sv[0], PROXY_EV_IN, on_fd, &r), 0);
	ck_assert_int_eq(proxy_poller_add(pl, sv[0], PROXY_EV_IN, on_fd, &r), -EEXIST);
	ck_assert_int_eq(write(sv[1], "x", 1), 1);
	run(pl, &stop);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.fd, sv[0]);
	ck_assert_uint_eq(r.events, PROXY_EV_IN);

	/* Switch to OUT only: a socket with room is writable at once. */
	memset(&r, 0, sizeof(r));
	r.stop = &stop;
	r.stop_after = 1;
	stop = false;
	ck_assert_int_eq(proxy_poller_mod(pl, sv[0], PROXY_EV_OUT), 0);
	run(pl, &stop);
	ck_assert_uint_eq(r.events, PROXY_EV_OUT);
	ck_assert_int_eq(proxy_poller_del(pl, sv[0]), 0);
	ck_assert_int_eq(proxy_poller_del(pl, sv[0]), -ENOENT);
	ck_assert_int_eq(proxy_poller_mod(pl, sv[0], PROXY_EV_IN), -ENOENT);
	close(sv[0]);
	close(sv[1]);
	proxy_poller_free(pl);
}
END_TEST

START_TEST(quiet_fd_not_reported)
{
	struct proxy_poller *pl = mk(_i);
	volatile bool stop = false;
	struct rec r = {0};
	int sv[2];
	uint64_t t0;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	ck_assert_int_eq(proxy_poller_add(pl, sv[0], 0, on_fd, &r), 0);
	/* Data and a hang-up: neither may wake a quiet fd. */
	ck_assert_int_eq(write(sv[1], "x", 1), 1);
	close(sv[1]);
	ck_assert_ptr_nonnull(proxy_timer_add(pl, 100, stop_cb, (void *)&stop));
	t0 = proxy_now_ms();
	ck_assert_int_eq(proxy_poller_run(pl, &stop), 0);
	ck_assert_int_eq(r.calls, 0);
	ck_assert_uint_ge(proxy_now_ms() - t0, 100);
	/* Interest back: the data and the hang-up show. */
	r.stop = &stop;
	r.stop_after = 1;
	stop = false;
	ck_assert_int_eq(proxy_poller_mod(pl, sv[0], PROXY_EV_IN), 0);
	run(pl, &stop);
	ck_assert_int_eq(r.calls, 1);
	ck_assert(r.events & PROXY_EV_IN);
	close(sv[0]);
	proxy_poller_free(pl);
}
END_TEST

START_TEST(hangup_reported_as_err)
{
	struct proxy_poller *pl = mk(_i);
	volatile bool stop = false;
	struct rec r = {.stop = &stop, .stop_after = 1};
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	ck_assert_int_eq(proxy_poller_add(pl, sv[0], PROXY_EV_OUT, on_fd, &r), 0);
	/* Fill the buffer so OUT is not ready, then hang up the peer. */
	{
		char buf[4096] = {0};
		while (write(sv[0], buf, sizeof(buf)) > 0)
			;
	}
	close(sv[1]);
	run(pl, &stop);
	ck_assert_int_eq(r.calls, 1);
	ck_assert(r.events & PROXY_EV_ERR);
	close(sv[0]);
	proxy_poller_free(pl);
}
END_TEST

/* Two fds ready in the same round: the first callback deletes and closes the other
 * one, and a new socket takes its number and is registered. The stale report for the
 * old fd must be dropped, not delivered to the new owner. */
struct steal {
	struct proxy_poller *pl;
	int fds[2];
	int newfd[2];
	struct rec *fresh;
	int calls;
	volatile bool *stop;
};

static void on_pair(void *arg, int fd, unsigned events)
{
	struct steal *s = arg;
	int other;

	(void)events;
	if (s->calls++)
		return;
	other = fd == s->fds[0] ? s->fds[1] : s->fds[0];
	ck_assert_int_eq(proxy_poller_del(s->pl, other), 0);
	close(other);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, s->newfd), 0);
	ck_assert_int_eq(s->newfd[0], other);
	ck_assert_int_eq(write(s->newfd[1], "y", 1), 1);
	ck_assert_int_eq(proxy_poller_add(s->pl, s->newfd[0], PROXY_EV_IN, on_fd, s->fresh), 0);
	ck_assert_ptr_nonnull(proxy_timer_add(s->pl, 0, stop_cb, (void *)s->stop));
	s->fds[fd == s->fds[0] ? 1 : 0] = -1;
}

START_TEST(stale_report_dropped)
{
	struct proxy_poller *pl = mk(_i);
	volatile bool stop = false;
	struct rec fresh = {0};
	struct steal s = {.pl = pl, .fresh = &fresh, .stop = &stop};
	int a[2], b[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, a), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, b), 0);
	ck_assert_int_eq(write(a[1], "x", 1), 1);
	ck_assert_int_eq(write(b[1], "x", 1), 1);
	s.fds[0] = a[0];
	s.fds[1] = b[0];
	ck_assert_int_eq(proxy_poller_add(pl, a[0], PROXY_EV_IN, on_pair, &s), 0);
	ck_assert_int_eq(proxy_poller_add(pl, b[0], PROXY_EV_IN, on_pair, &s), 0);
	ck_assert_int_eq(proxy_poller_run(pl, &stop), 0);
	ck_assert_int_eq(s.calls, 1);
	ck_assert_int_eq(fresh.calls, 0);
	/* The new owner gets its own report in the next round. */
	stop = false;
	fresh.stop = &stop;
	fresh.stop_after = 1;
	run(pl, &stop);
	ck_assert_int_eq(fresh.calls, 1);
	ck_assert_int_eq(fresh.fd, s.newfd[0]);
	for (int i = 0; i < 2; i++)
		if (s.fds[i] >= 0)
			close(s.fds[i]);
	close(a[1]);
	close(b[1]);
	close(s.newfd[0]);
	close(s.newfd[1]);
	proxy_poller_free(pl);
}
END_TEST

struct order {
	int seen[8];
	int n;
	struct proxy_poller *pl;
	volatile bool *stop;
};

struct tag {
	struct order *o;
	int id;
};

static void on_timer(void *arg)
{
	struct tag *t = arg;

	t->o->seen[t->o->n++] = t->id;
	if (t->o->n == 3)
		*t->o->stop = true;
}

START_TEST(timers_fire_in_deadline_order)
{
	struct proxy_poller *pl = mk(_i);
	volatile bool stop = false;
	struct order o = {.pl = pl, .stop = &stop};
	struct tag t1 = {&o, 1}, t2 = {&o, 2}, t3 = {&o, 3}, t4 = {&o, 4};
	struct proxy_timer *cancel_me;
	uint64_t t0 = proxy_now_ms();

	ck_assert_ptr_nonnull(proxy_timer_add(pl, 60, on_timer, &t3));
	ck_assert_ptr_nonnull(proxy_timer_add(pl, 20, on_timer, &t1));
	cancel_me = proxy_timer_add(pl, 30, on_timer, &t4);
	ck_assert_ptr_nonnull(cancel_me);
	ck_assert_ptr_nonnull(proxy_timer_add(pl, 20, on_timer, &t2)); /* same deadline: after t1 */
	proxy_timer_cancel(pl, cancel_me);
	ck_assert_int_eq(proxy_poller_run(pl, &stop), 0);
	ck_assert_int_eq(o.n, 3);
	ck_assert_int_eq(o.seen[0], 1);
	ck_assert_int_eq(o.seen[1], 2);
	ck_assert_int_eq(o.seen[2], 3);
	ck_assert_uint_ge(proxy_now_ms() - t0, 60);
	proxy_poller_free(pl);
}
END_TEST

struct rearm {
	struct proxy_poller *pl;
	int count;
	volatile bool *stop;
};

static void on_rearm(void *arg)
{
	struct rearm *r = arg;

	if (++r->count == 5) {
		*r->stop = true;
		return;
	}
	ck_assert_ptr_nonnull(proxy_timer_add(r->pl, 0, on_rearm, r));
}

START_TEST(timer_rearmed_from_callback)
{
	struct proxy_poller *pl = mk(_i);
	volatile bool stop = false;
	struct rearm r = {.pl = pl, .stop = &stop};

	ck_assert_ptr_nonnull(proxy_timer_add(pl, 0, on_rearm, &r));
	ck_assert_int_eq(proxy_poller_run(pl, &stop), 0);
	ck_assert_int_eq(r.count, 5);
	proxy_poller_free(pl);
}
END_TEST

START_TEST(free_with_pending_timers_and_fds)
{
	struct proxy_poller *pl = mk(_i);
	struct rec r = {0};
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(proxy_poller_add(pl, sv[0], PROXY_EV_IN, on_fd, &r), 0);
	for (int i = 0; i < 100; i++)
		ck_assert_ptr_nonnull(proxy_timer_add(pl, 1000 + (uint64_t)i, stop_cb, NULL));
	proxy_poller_free(pl); /* ASan run: no leak */
	close(sv[0]);
	close(sv[1]);
}
END_TEST

#if defined(__linux__) && !defined(HALO_PORTABLE)
/* The epoll descriptor of the poller made last: the highest-numbered eventpoll. */
static int find_epfd(void)
{
	char path[64], link[64];
	int best = -1;

	for (int fd = 0; fd < 1024; fd++) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0 && (link[n] = 0, strstr(link, "eventpoll")))
			best = fd;
	}
	return best;
}

/* Whether fd is in epfd's set, as the kernel lists it (/proc/self/fdinfo). */
static bool in_epoll_set(int epfd, int fd)
{
	char path[64], line[256], want[32];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", epfd);
	snprintf(want, sizeof(want), "tfd: %8d ", fd);
	f = fopen(path, "re");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		found |= strncmp(line, want, strlen(want)) == 0;
	fclose(f);
	return found;
}

/* A run's end (proxy_poller_set_ending): a delete changes the poller's table but makes
 * no call (the exit takes the fd out), and free leaves the epoll fd to the exit. Before
 * it, both are done as always. */
START_TEST(ending_leaves_descriptors_to_the_exit)
{
	struct proxy_poller *pl = mk(PROXY_POLLER_EPOLL);
	struct rec r = {0};
	int sv[2], epfd = find_epfd();

	ck_assert_int_ge(epfd, 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	ck_assert_int_eq(proxy_poller_add(pl, sv[0], PROXY_EV_IN, on_fd, &r), 0);
	ck_assert(in_epoll_set(epfd, sv[0]));
	ck_assert_int_eq(proxy_poller_del(pl, sv[0]), 0);
	ck_assert(!in_epoll_set(epfd, sv[0])); /* not ending: taken out */
	ck_assert_int_eq(proxy_poller_add(pl, sv[0], PROXY_EV_IN, on_fd, &r), 0);
	ck_assert(!proxy_poller_ending(pl));
	proxy_poller_set_ending(pl);
	ck_assert(proxy_poller_ending(pl));
	ck_assert_int_eq(proxy_poller_del(pl, sv[0]), 0);
	ck_assert_int_eq(proxy_poller_del(pl, sv[0]), -ENOENT); /* gone from the table */
	ck_assert(in_epoll_set(epfd, sv[0]));			/* no call made */
	proxy_poller_free(pl);
	ck_assert_int_ge(fcntl(epfd, F_GETFD), 0); /* left open, for the exit */
	close(epfd);
	close(sv[0]);
	close(sv[1]);
	ck_assert(!proxy_poller_ending(NULL));
}
END_TEST
#endif

/* peek: which of the given fds are readable, by one wait that runs no callback and no
 * timer; what it saw is still reported to the next round (nothing consumed). */
START_TEST(peek_reports_without_dispatch)
{
	struct proxy_poller *pl = mk(_i);
	struct rec r[3] = {{0}};
	volatile bool stop = false;
	int sv[3][2], fds[4];
	bool ready[4];

	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv[i]), 0);
		ck_assert_int_eq(proxy_poller_add(pl, sv[i][0], PROXY_EV_IN, on_fd, &r[i]), 0);
		fds[i] = sv[i][0];
	}
	fds[3] = sv[2][1]; /* not registered: never said ready */
	ck_assert_ptr_nonnull(proxy_timer_add(pl, 0, stop_cb, (void *)&stop));
	ck_assert_int_eq(write(sv[1][1], "x", 1), 1);
	close(sv[2][1]); /* hung up: counts as ready */
	ck_assert_int_eq(proxy_poller_peek(pl, fds, 4, ready), 0);
	ck_assert(!ready[0] && ready[1] && ready[2] && !ready[3]);
	ck_assert_int_eq(r[1].calls + r[2].calls, 0);
	ck_assert(!stop); /* the due timer did not fire */
	ck_assert_int_eq(proxy_poller_run_once(pl, 0), 0);
	ck_assert_int_eq(r[1].calls, 1);
	ck_assert_int_eq(r[2].calls, 1);
	ck_assert_int_eq(r[0].calls, 0);
	ck_assert(stop);
	proxy_poller_free(pl);
	for (int i = 0; i < 3; i++) {
		close(sv[i][0]);
		if (i < 2)
			close(sv[i][1]);
	}
}
END_TEST

/* Many fds, many heap operations: every fd reported once, every cancelled timer
 * stays silent. */
struct many {
	int hits[512];
	int total;
	volatile bool *stop;
	int want;
};

static void on_many(void *arg, int fd, unsigned events)
{
	struct many *m = arg;
	char c;

	(void)events;
	ck_assert_int_eq(read(fd, &c, 1), 1);
	m->hits[fd]++;
	if (++m->total == m->want)
		*m->stop = true;
}

static void must_not_fire(void *arg)
{
	(void)arg;
	ck_abort_msg("cancelled timer fired");
}

START_TEST(many_fds_and_timers)
{
	struct proxy_poller *pl = mk(_i);
	volatile bool stop = false;
	struct many m = {.stop = &stop, .want = 200};
	int pairs[200][2];
	struct proxy_timer *ts[300];

	for (int i = 0; i < 200; i++) {
		ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, pairs[i]), 0);
		ck_assert_int_lt(pairs[i][0], 512);
		ck_assert_int_eq(proxy_poller_add(pl, pairs[i][0], PROXY_EV_IN, on_many, &m), 0);
	}
	for (int i = 0; i < 300; i++)
		ts[i] = proxy_timer_add(pl, 500 + (uint64_t)(i * 7919) % 300, must_not_fire, NULL);
	for (int i = 0; i < 300; i += 2)
		proxy_timer_cancel(pl, ts[i]);
	for (int i = 1; i < 300; i += 2)
		proxy_timer_cancel(pl, ts[i]);
	for (int i = 0; i < 200; i++)
		ck_assert_int_eq(write(pairs[i][1], "x", 1), 1);
	run(pl, &stop);
	ck_assert_int_eq(m.total, 200);
	for (int i = 0; i < 200; i++) {
		ck_assert_int_eq(m.hits[pairs[i][0]], 1);
		close(pairs[i][0]);
		close(pairs[i][1]);
	}
	proxy_poller_free(pl);
}
END_TEST

#if defined(__linux__) && !defined(HALO_PORTABLE)
/* Polling before sleeping (poller_epoll.c): a loop whose last wait ended quickly polls
 * first and an answer already there is taken without sleeping; a wait that timed out
 * makes it cold, and a cold loop sleeps at once (an idle supervisor never polls). */
static void on_read(void *arg, int fd, unsigned events)
{
	char c;

	(void)events;
	ck_assert_int_eq(read(fd, &c, 1), 1);
	((struct rec *)arg)->calls++;
}

/* Rounds: a byte ready before each wait (quick: hot), then one wait that times out. */
static void spin_rounds(struct proxy_poller *pl, int w, struct rec *r, int n)
{
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(write(w, "x", 1), 1);
		ck_assert_int_eq(proxy_poller_run_once(pl, 1000), 0);
	}
	ck_assert_int_eq(proxy_poller_run_once(pl, 20), 0); /* nothing: times out, cold */
	ck_assert_int_eq(r->calls, n);
}

START_TEST(hot_loop_polls_cold_loop_sleeps)
{
	struct proxy_poller *pl = mk(PROXY_POLLER_EPOLL);
	struct rec r = {0};
	uint64_t spun, caught, spun2, caught2;
	cpu_set_t set;
	int sv[2];

	ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	if (CPU_COUNT(&set) < 2) {
		proxy_poller_free(pl);
		UNIT_SKIP("a hot loop polls",
			  "one CPU here (the loop never polls: one_cpu_never_polls)");
	}
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	ck_assert_int_eq(proxy_poller_add(pl, sv[0], PROXY_EV_IN, on_read, &r), 0);
	/* Cold at first: a wait that times out never polled. */
	ck_assert_int_eq(proxy_poller_run_once(pl, 20), 0);
	proxy_poller_spin_stats(pl, &spun, &caught);
	ck_assert_int_eq(spun, 0);
	/* 40 quick rounds: the first is cold, each later one is hot unless this process was
	 * held off the CPU past 100 us between two clock reads, so some polled, and the
	 * byte was there each time: every poll in them was answered at once. The timed-out
	 * wait after them polled too (and found nothing) when the last round was hot. */
	spin_rounds(pl, sv[1], &r, 40);
	proxy_poller_spin_stats(pl, &spun, &caught);
	ck_assert_uint_ge(caught, 1);
	ck_assert(spun == caught || spun == caught + 1);
	/* Cold after the timeout: the next empty wait sleeps at once. */
	ck_assert_int_eq(proxy_poller_run_once(pl, 20), 0);
	proxy_poller_spin_stats(pl, &spun2, &caught2);
	ck_assert_uint_eq(spun2, spun);
	ck_assert_uint_eq(caught2, caught);
	proxy_poller_free(pl);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

START_TEST(one_cpu_never_polls)
{
	struct proxy_poller *pl = mk(PROXY_POLLER_EPOLL);
	struct rec r = {0};
	uint64_t spun, caught;
	cpu_set_t set;
	int sv[2];

	CPU_ZERO(&set);
	ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int c = 0; c < CPU_SETSIZE; c++) /* keep the first CPU allowed */
		if (CPU_ISSET(c, &set)) {
			CPU_ZERO(&set);
			CPU_SET(c, &set);
			break;
		}
	ck_assert_int_eq(sched_setaffinity(0, sizeof(set), &set), 0); /* this fork only */
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	ck_assert_int_eq(proxy_poller_add(pl, sv[0], PROXY_EV_IN, on_read, &r), 0);
	spin_rounds(pl, sv[1], &r, 40);
	proxy_poller_spin_stats(pl, &spun, &caught);
	ck_assert_uint_eq(spun, 0);
	ck_assert_uint_eq(caught, 0);
	proxy_poller_free(pl);
	close(sv[0]);
	close(sv[1]);
}
END_TEST
#endif

static Suite *poller_suite(void)
{
	Suite *s = suite_create("poller");
	TCase *tc = tcase_create("both backends");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, default_backend);
#if defined(__linux__) && !defined(HALO_PORTABLE)
	int first = PROXY_POLLER_EPOLL;
#else
	int first = PROXY_POLLER_POLL;
#endif
	tcase_add_loop_test(tc, readable_and_writable, first, PROXY_POLLER_POLL + 1);
	tcase_add_loop_test(tc, quiet_fd_not_reported, first, PROXY_POLLER_POLL + 1);
	tcase_add_loop_test(tc, hangup_reported_as_err, first, PROXY_POLLER_POLL + 1);
	tcase_add_loop_test(tc, stale_report_dropped, first, PROXY_POLLER_POLL + 1);
	tcase_add_loop_test(tc, timers_fire_in_deadline_order, first, PROXY_POLLER_POLL + 1);
	tcase_add_loop_test(tc, timer_rearmed_from_callback, first, PROXY_POLLER_POLL + 1);
	tcase_add_loop_test(tc, free_with_pending_timers_and_fds, first, PROXY_POLLER_POLL + 1);
	tcase_add_loop_test(tc, many_fds_and_timers, first, PROXY_POLLER_POLL + 1);
	tcase_add_loop_test(tc, peek_reports_without_dispatch, first, PROXY_POLLER_POLL + 1);
#if defined(__linux__) && !defined(HALO_PORTABLE)
	tcase_add_test(tc, ending_leaves_descriptors_to_the_exit);
	tcase_add_test(tc, hot_loop_polls_cold_loop_sleeps);
	tcase_add_test(tc, one_cpu_never_polls);
#endif
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(poller_suite)
