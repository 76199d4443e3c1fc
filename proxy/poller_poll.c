/* poll() backend: portable (the macOS build), and a second implementation the tests
 * run everything against. The pollfd array is dense; a delete moves the last entry
 * into the hole. A quiet fd keeps its entry with a negative fd, which poll() skips, so
 * hang-ups on a socket the relay is not reading do not spin the loop. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>

#include "proxy/poller_int.h"

struct poll_be {
	struct pollfd *pfds;
	int *fds; /* the real fd of each entry (pfds[i].fd is negative while quiet) */
	size_t n, cap;
};

static int pb_init(struct proxy_poller *pl)
{
	struct poll_be *be = calloc(1, sizeof(*be));

	if (!be)
		return -ENOMEM;
	pl->be = be;
	return 0;
}

static void pb_fini(struct proxy_poller *pl)
{
	struct poll_be *be = pl->be;

	free(be->pfds);
	free(be->fds);
	free(be);
}

static void pb_fill(struct poll_be *be, size_t i, const struct poller_slot *s)
{
	short ev = (short)((s->events & PROXY_EV_IN ? POLLIN : 0) |
			   (s->events & PROXY_EV_OUT ? POLLOUT : 0));

	be->pfds[i].fd = s->events ? be->fds[i] : -1;
	be->pfds[i].events = ev;
	be->pfds[i].revents = 0;
}

static int pb_add(struct proxy_poller *pl, int fd)
{
	struct poll_be *be = pl->be;
	struct poller_slot *s = &pl->slots[fd];

	if (be->n == be->cap) {
		size_t cap = be->cap ? be->cap * 2 : 64;
		struct pollfd *p = realloc(be->pfds, cap * sizeof(*p));
		int *f;

		if (!p)
			return -ENOMEM;
		be->pfds = p;
		f = realloc(be->fds, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		be->fds = f;
		be->cap = cap;
	}
	s->pidx = (int)be->n;
	be->fds[be->n] = fd;
	pb_fill(be, be->n, s);
	be->n++;
	return 0;
}

static int pb_mod(struct proxy_poller *pl, int fd)
{
	struct poll_be *be = pl->be;
	struct poller_slot *s = &pl->slots[fd];

	pb_fill(be, (size_t)s->pidx, s);
	return 0;
}

static void pb_del(struct proxy_poller *pl, int fd)
{
	struct poll_be *be = pl->be;
	size_t i = (size_t)pl->slots[fd].pidx, last = be->n - 1;

	if (i != last) {
		be->pfds[i] = be->pfds[last];
		be->fds[i] = be->fds[last];
		pl->slots[be->fds[i]].pidx = (int)i;
	}
	be->n--;
}

static int pb_wait(struct proxy_poller *pl, int timeout_ms)
{
	struct poll_be *be = pl->be;
	int n = poll(be->pfds, (nfds_t)be->n, timeout_ms);

	if (n < 0)
		return -errno;
	if (poller_ready_reserve(pl, (size_t)n) != 0)
		return -ENOMEM;
	for (size_t i = 0; i < be->n && pl->n_ready < (size_t)n; i++) {
		short e = be->pfds[i].revents;
		struct poller_ready *r;

		if (!e || be->pfds[i].fd < 0)
			continue;
		r = &pl->ready[pl->n_ready++];
		r->fd = be->fds[i];
		r->gen = pl->slots[r->fd].gen;
		r->events = (e & POLLIN ? PROXY_EV_IN : 0) | (e & POLLOUT ? PROXY_EV_OUT : 0) |
			    (e & (POLLERR | POLLHUP | POLLNVAL) ? PROXY_EV_ERR : 0);
	}
	return n;
}

const struct poller_ops poller_poll_ops = {
    .init = pb_init,
    .fini = pb_fini,
    .add = pb_add,
    .mod = pb_mod,
    .del = pb_del,
    .wait = pb_wait,
};
