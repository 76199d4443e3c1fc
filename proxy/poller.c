/* The poller core: fd table, timers and the run loop; the backends only translate
 * interest to the kernel and collect readiness.
 *
 * Dispatch is two-phase: the backend first copies every ready (fd, generation,
 * events) triple, then callbacks run. A callback may delete or re-add any fd, so each
 * triple is re-checked against the live slot before its callback runs: a report for a
 * deleted fd, or for an fd number that was closed and reused within the same round,
 * is dropped instead of reaching the wrong owner.
 *
 * Timers live in a binary min-heap ordered by deadline then creation order, so two
 * timers with the same deadline fire in the order they were added. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proxy/poller_int.h"

struct proxy_timer {
	uint64_t deadline;
	uint64_t seq;
	size_t idx; /* position in the heap; SIZE_MAX once popped */
	proxy_timer_cb cb;
	void *arg;
};

#define NOT_IN_HEAP SIZE_MAX

uint64_t proxy_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

enum proxy_poller_backend proxy_poller_default_backend(void)
{
#ifdef POLLER_HAVE_EPOLL
	return PROXY_POLLER_EPOLL;
#else
	return PROXY_POLLER_POLL;
#endif
}

int proxy_poller_new(enum proxy_poller_backend b, struct proxy_poller **out)
{
	struct proxy_poller *pl;
	const struct poller_ops *ops;
	int rc;

	*out = NULL;
	switch (b) {
#ifdef POLLER_HAVE_EPOLL
	case PROXY_POLLER_EPOLL:
		ops = &poller_epoll_ops;
		break;
#endif
	case PROXY_POLLER_POLL:
		ops = &poller_poll_ops;
		break;
	default:
		return -ENOTSUP;
	}
	pl = calloc(1, sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	pl->backend = b;
	pl->ops = ops;
	rc = ops->init(pl);
	if (rc) {
		free(pl);
		return rc;
	}
	*out = pl;
	return 0;
}

void proxy_poller_free(struct proxy_poller *pl)
{
	if (!pl)
		return;
	pl->ops->fini(pl);
	for (size_t i = 0; i < pl->n_heap; i++)
		free(pl->heap[i]);
	free(pl->heap);
	free(pl->slots);
	free(pl->ready);
	free(pl);
}

static int slots_reserve(struct proxy_poller *pl, int fd)
{
	size_t n = pl->n_slots ? pl->n_slots : 64;
	struct poller_slot *s;

	if ((size_t)fd < pl->n_slots)
		return 0;
	while (n <= (size_t)fd)
		n *= 2;
	s = realloc(pl->slots, n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memset(s + pl->n_slots, 0, (n - pl->n_slots) * sizeof(*s));
	pl->slots = s;
	pl->n_slots = n;
	return 0;
}

int poller_ready_reserve(struct proxy_poller *pl, size_t n)
{
	struct poller_ready *r;
	size_t cap = pl->cap_ready ? pl->cap_ready : 64;

	if (n <= pl->cap_ready)
		return 0;
	while (cap < n)
		cap *= 2;
	r = realloc(pl->ready, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	pl->ready = r;
	pl->cap_ready = cap;
	return 0;
}

static bool registered(const struct proxy_poller *pl, int fd)
{
	return fd >= 0 && (size_t)fd < pl->n_slots && pl->slots[fd].used;
}

int proxy_poller_add(struct proxy_poller *pl, int fd, unsigned events, proxy_poller_cb cb,
		     void *arg)
{
	struct poller_slot *s;
	int rc;

	if (fd < 0 || !cb)
		return -EINVAL;
	if (registered(pl, fd))
		return -EEXIST;
	rc = slots_reserve(pl, fd);
	if (!rc)
		rc = poller_ready_reserve(pl, pl->n_used + 1);
	if (rc)
		return rc;
	s = &pl->slots[fd];
	s->cb = cb;
	s->arg = arg;
	s->events = events & (PROXY_EV_IN | PROXY_EV_OUT);
	s->gen++;
	s->used = true;
	s->in_kernel = false;
	rc = pl->ops->add(pl, fd);
	if (rc) {
		s->used = false;
		return rc;
	}
	pl->n_used++;
	return 0;
}

int proxy_poller_mod(struct proxy_poller *pl, int fd, unsigned events)
{
	struct poller_slot *s;
	unsigned old;
	int rc;

	if (!registered(pl, fd))
		return -ENOENT;
	s = &pl->slots[fd];
	events &= PROXY_EV_IN | PROXY_EV_OUT;
	if (s->events == events)
		return 0;
	old = s->events;
	s->events = events;
	rc = pl->ops->mod(pl, fd);
	if (rc)
		s->events = old;
	return rc;
}

void proxy_poller_spin_stats(const struct proxy_poller *pl, uint64_t *spun, uint64_t *caught)
{
	*spun = *caught = 0;
	(void)pl;
#ifdef POLLER_HAVE_EPOLL
	if (pl->backend == PROXY_POLLER_EPOLL)
		poller_epoll_spin_stats(pl, spun, caught);
#endif
}

void proxy_poller_set_ending(struct proxy_poller *pl)
{
	if (pl)
		pl->ending = true;
}

bool proxy_poller_ending(const struct proxy_poller *pl)
{
	return pl && pl->ending;
}

int proxy_poller_del(struct proxy_poller *pl, int fd)
{
	if (!registered(pl, fd))
		return -ENOENT;
	if (!pl->ending) /* else the exit (or the fd's close) takes it out */
		pl->ops->del(pl, fd);
	pl->slots[fd].used = false;
	pl->slots[fd].cb = NULL;
	pl->slots[fd].arg = NULL;
	pl->n_used--;
	return 0;
}

/* ------------------------------------------------------------------ timers */

static bool timer_before(const struct proxy_timer *a, const struct proxy_timer *b)
{
	return a->deadline < b->deadline || (a->deadline == b->deadline && a->seq < b->seq);
}

static void heap_set(struct proxy_poller *pl, size_t i, struct proxy_timer *t)
{
	pl->heap[i] = t;
	t->idx = i;
}

static void heap_up(struct proxy_poller *pl, size_t i)
{
	struct proxy_timer *t = pl->heap[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!timer_before(t, pl->heap[parent]))
			break;
		heap_set(pl, i, pl->heap[parent]);
		i = parent;
	}
	heap_set(pl, i, t);
}

static void heap_down(struct proxy_poller *pl, size_t i)
{
	struct proxy_timer *t = pl->heap[i];

	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct proxy_timer *best = t;

		if (l < pl->n_heap && timer_before(pl->heap[l], best)) {
			m = l;
			best = pl->heap[l];
		}
		if (r < pl->n_heap && timer_before(pl->heap[r], best))
			m = r;
		if (m == i)
			break;
		heap_set(pl, i, pl->heap[m]);
		i = m;
	}
	heap_set(pl, i, t);
}

static void heap_remove(struct proxy_poller *pl, struct proxy_timer *t)
{
	size_t i = t->idx;
	struct proxy_timer *last;

	t->idx = NOT_IN_HEAP;
	last = pl->heap[--pl->n_heap];
	if (i == pl->n_heap)
		return;
	heap_set(pl, i, last);
	if (i > 0 && timer_before(last, pl->heap[(i - 1) / 2]))
		heap_up(pl, i);
	else
		heap_down(pl, i);
}

struct proxy_timer *proxy_timer_add(struct proxy_poller *pl, uint64_t ms, proxy_timer_cb cb,
				    void *arg)
{
	struct proxy_timer *t;

	if (pl->n_heap == pl->cap_heap) {
		size_t cap = pl->cap_heap ? pl->cap_heap * 2 : 64;
		struct proxy_timer **h = realloc(pl->heap, cap * sizeof(*h));
		if (!h)
			return NULL;
		pl->heap = h;
		pl->cap_heap = cap;
	}
	t = malloc(sizeof(*t));
	if (!t)
		return NULL;
	t->deadline = proxy_now_ms() + ms;
	t->seq = pl->timer_seq++;
	t->cb = cb;
	t->arg = arg;
	pl->heap[pl->n_heap] = t;
	t->idx = pl->n_heap++;
	heap_up(pl, t->idx);
	return t;
}

/* Cancelling the timer whose callback is running is a no-op: it is freed once the
 * callback returns. */
void proxy_timer_cancel(struct proxy_poller *pl, struct proxy_timer *t)
{
	if (!t || t->idx == NOT_IN_HEAP)
		return;
	heap_remove(pl, t);
	free(t);
}

static int next_timeout(const struct proxy_poller *pl)
{
	uint64_t now, d;

	if (pl->n_heap == 0)
		return -1;
	d = pl->heap[0]->deadline;
	now = proxy_now_ms();
	if (d <= now)
		return 0;
	return d - now > INT_MAX ? INT_MAX : (int)(d - now);
}

/* Fire what is due now. A timer added by a callback with ms == 0 waits for the next
 * round, so a callback that re-arms itself cannot starve the fds. */
static void fire_timers(struct proxy_poller *pl, volatile bool *stop)
{
	uint64_t now = proxy_now_ms(), limit = pl->timer_seq;

	while (pl->n_heap && !*stop) {
		struct proxy_timer *t = pl->heap[0];

		if (t->deadline > now || t->seq >= limit)
			break;
		heap_remove(pl, t);
		t->cb(t->arg);
		free(t);
	}
}

static void dispatch(struct proxy_poller *pl, volatile bool *stop)
{
	for (size_t i = 0; i < pl->n_ready && !*stop; i++) {
		struct poller_ready r = pl->ready[i];
		struct poller_slot *s;

		if (!registered(pl, r.fd))
			continue;
		s = &pl->slots[r.fd];
		if (s->gen != r.gen)
			continue;
		/* Report only what is wanted now, plus errors, which always count. */
		r.events &= s->events | PROXY_EV_ERR;
		if (r.events)
			s->cb(s->arg, r.fd, r.events);
	}
	pl->n_ready = 0;
}

int proxy_poller_peek(struct proxy_poller *pl, const int *fds, size_t n, bool *ready)
{
	int rc;

	memset(ready, 0, n * sizeof(*ready));
	if (pl->backend == PROXY_POLLER_EPOLL && pl->n_used > POLLER_EPOLL_ROUND_MAX)
		return -E2BIG; /* one round might not report them all */
	pl->n_ready = 0;
	rc = pl->ops->wait(pl, 0);
	for (size_t i = 0; rc >= 0 && i < pl->n_ready; i++) {
		const struct poller_ready *r = &pl->ready[i];

		if (!(r->events & (PROXY_EV_IN | PROXY_EV_ERR)))
			continue;
		for (size_t k = 0; k < n; k++)
			ready[k] |= fds[k] == r->fd;
	}
	pl->n_ready = 0;
	return rc < 0 ? rc : 0;
}

int proxy_poller_run_once(struct proxy_poller *pl, int timeout_ms)
{
	bool stop = false;
	int t = next_timeout(pl), rc;

	pl->n_ready = 0;
	rc = pl->ops->wait(pl, t >= 0 && t < timeout_ms ? t : timeout_ms);
	if (rc < 0 && rc != -EINTR)
		return rc;
	dispatch(pl, &stop);
	fire_timers(pl, &stop);
	return 0;
}

int proxy_poller_run(struct proxy_poller *pl, volatile bool *stop)
{
	while (!*stop) {
		int rc;

		pl->n_ready = 0;
		rc = pl->ops->wait(pl, next_timeout(pl));
		if (rc < 0 && rc != -EINTR)
			return rc;
		dispatch(pl, stop);
		fire_timers(pl, stop);
	}
	return 0;
}
