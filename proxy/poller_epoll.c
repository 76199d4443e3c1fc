/* epoll backend (Linux). Level-triggered: the relay reads at most one buffer per
 * wake-up, and anything left is reported again, which keeps connections fair.
 *
 * A quiet fd (events 0) is taken out of the epoll set rather than registered with no
 * events: epoll reports EPOLLHUP/EPOLLERR even for an empty mask, and a hung-up socket
 * that the relay is deliberately not reading (its peer is backpressured) would
 * otherwise wake the loop in a tight circle. */
#include "proxy/poller_int.h"

#ifdef POLLER_HAVE_EPOLL

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

struct epoll_be {
	int epfd;
	struct epoll_event *evs;
	size_t cap;
};

static int ep_init(struct proxy_poller *pl)
{
	struct epoll_be *be = calloc(1, sizeof(*be));

	if (!be)
		return -ENOMEM;
	be->cap = 256;
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
	n = epoll_wait(be->epfd, be->evs, (int)be->cap, timeout_ms);
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
