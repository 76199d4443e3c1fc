/* epoll backend (Linux). Level-triggered: the relay reads at most one buffer per
 * wake-up, and anything left is reported again, which keeps connections fair.
 *
 * A quiet fd (events 0) is taken out of the epoll set rather than registered with no
 * events: epoll reports EPOLLHUP/EPOLLERR even for an empty mask, and a hung-up socket
 * that the relay is deliberately not reading (its peer is backpressured) would
 * otherwise wake the loop in a tight circle. */
/* Polling before sleeping. A loop asleep in epoll_wait and woken from another CPU pays
 * for an interprocessor interrupt and that CPU's way out of its idle state; on a
 * virtual machine both are exits to the hypervisor (20-25 us each on the 2-vCPU VM the
 * benchmarks run on), and a round trip through a tunnel has two such wake-ups more
 * than a direct one: tests/bench/proxy measured +35 us p50 on a quiet machine. A loop
 * whose last wait ended within POLLER_HOT_US is in the middle of an exchange: its next
 * wait first asks without sleeping for up to POLLER_SPIN_US, and an answer that comes
 * meanwhile costs no wake-up. A wait longer than POLLER_HOT_US makes the loop cold
 * again and the next one sleeps at once, so an idle supervisor (a session waiting
 * for its next call) never polls, and a poll that found nothing is paid at most once
 * per wake-up that came quickly. Never with one CPU: the poller would only hold off
 * the peer it waits for. Measured on the same VM (bench_net rate, c=1, through
 * proxy_harness): added round trip p50 +35 -> about +0 us, connections/s x1.7, the
 * proxy's CPU per connection +10%; at 32 connections at once nothing changes (the
 * loop never waits). */
#include "proxy/poller_int.h"

#ifdef POLLER_HAVE_EPOLL

#include <errno.h>
#include <stdlib.h>
#include <sched.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#define POLLER_SPIN_US 25
#define POLLER_HOT_US  100

struct epoll_be {
	int epfd;
	struct epoll_event *evs;
	size_t cap;
	bool hot;	       /* the last wait ended within POLLER_HOT_US */
	signed char cpus_ok;   /* more than one CPU to run on: 1, 0, or -1 not asked yet */
	uint64_t spun, caught; /* waits that polled first; those the polling answered */
};

static int ep_init(struct proxy_poller *pl)
{
	struct epoll_be *be = calloc(1, sizeof(*be));

	if (!be)
		return -ENOMEM;
	be->cap = 256;
	be->cpus_ok = -1;
	be->evs = calloc(be->cap, sizeof(*be->evs));
	be->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!be->evs || be->epfd < 0) {
		int rc = be->evs ? -errno : -ENOMEM;
		if (be->epfd >= 0)
			close(be->epfd);
		free(be->evs);
		free(be);
		return rc;
	}
	pl->be = be;
	return 0;
}

static void ep_fini(struct proxy_poller *pl)
{
	struct epoll_be *be = pl->be;

	if (!pl->ending)
		close(be->epfd);
	free(be->evs);
	free(be);
}

static uint32_t ep_mask(unsigned events)
{
	return (events & PROXY_EV_IN ? EPOLLIN : 0) | (events & PROXY_EV_OUT ? EPOLLOUT : 0);
}

/* Bring the kernel's view in line with the slot. */
static int ep_sync(struct proxy_poller *pl, int fd)
{
	struct epoll_be *be = pl->be;
	struct poller_slot *s = &pl->slots[fd];
	struct epoll_event ev = {.events = ep_mask(s->events)};
	int op;

	ev.data.u64 = (uint64_t)(uint32_t)fd | (uint64_t)s->gen << 32;
	if (s->events == 0) {
		if (!s->in_kernel)
			return 0;
		op = EPOLL_CTL_DEL;
	} else {
		op = s->in_kernel ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
	}
	if (epoll_ctl(be->epfd, op, fd, &ev) != 0)
		return -errno;
	s->in_kernel = s->events != 0;
	return 0;
}

static void ep_del(struct proxy_poller *pl, int fd)
{
	struct epoll_be *be = pl->be;
	struct poller_slot *s = &pl->slots[fd];

	if (s->in_kernel)
		epoll_ctl(be->epfd, EPOLL_CTL_DEL, fd, NULL);
	s->in_kernel = false;
}

static int64_t now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

/* Asked once, at the first wait that would poll (a launch pays nothing for it). */
static bool more_than_one_cpu(struct epoll_be *be)
{
	cpu_set_t set;

	if (be->cpus_ok < 0)
		be->cpus_ok = sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 1;
	return be->cpus_ok == 1;
}

/* epoll_wait, polling first while the loop is hot (see the top comment). */
static int spin_wait(struct epoll_be *be, int timeout_ms)
{
	int64_t t0 = now_us(), t;
	int n = 0;

	if (timeout_ms != 0 && be->hot && more_than_one_cpu(be)) {
		be->spun++;
		do {
			n = epoll_wait(be->epfd, be->evs, (int)be->cap, 0);
			t = now_us();
		} while (n == 0 && t - t0 < POLLER_SPIN_US);
		if (n > 0)
			be->caught++;
	}
	if (n == 0)
		n = epoll_wait(be->epfd, be->evs, (int)be->cap, timeout_ms);
	if (timeout_ms != 0)
		be->hot = n > 0 && now_us() - t0 <= POLLER_HOT_US;
	return n;
}

void poller_epoll_spin_stats(const struct proxy_poller *pl, uint64_t *spun, uint64_t *caught)
{
	const struct epoll_be *be = pl->be;

	*spun = be->spun;
	*caught = be->caught;
}

static int ep_wait(struct proxy_poller *pl, int timeout_ms)
{
	struct epoll_be *be = pl->be;
	int n;

	/* One slot per registered fd, up to POLLER_EPOLL_ROUND_MAX per round; doubled,
	 * never grown one by one while connections arrive. */
	if (be->cap < pl->n_used && be->cap < POLLER_EPOLL_ROUND_MAX) {
		size_t cap =
		    be->cap * 2 < POLLER_EPOLL_ROUND_MAX ? be->cap * 2 : POLLER_EPOLL_ROUND_MAX;
		struct epoll_event *e = realloc(be->evs, cap * sizeof(*e));
		if (e) {
			be->evs = e;
			be->cap = cap;
		}
	}
	n = spin_wait(be, timeout_ms);
	if (n < 0)
		return -errno;
	if (poller_ready_reserve(pl, (size_t)n) != 0)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		uint32_t e = be->evs[i].events;
		struct poller_ready *r = &pl->ready[pl->n_ready++];

		r->fd = (int)(uint32_t)be->evs[i].data.u64;
		r->gen = (uint32_t)(be->evs[i].data.u64 >> 32);
		r->events = (e & EPOLLIN ? PROXY_EV_IN : 0) | (e & EPOLLOUT ? PROXY_EV_OUT : 0) |
			    (e & (EPOLLERR | EPOLLHUP) ? PROXY_EV_ERR : 0);
	}
	return n;
}

const struct poller_ops poller_epoll_ops = {
    .init = ep_init,
    .fini = ep_fini,
    .add = ep_sync,
    .mod = ep_sync,
    .del = ep_del,
    .wait = ep_wait,
};

#endif
