/* Internals shared by the poller core (poller.c) and its backends (poller_epoll.c,
 * poller_poll.c). Not part of the public interface. */
#ifndef HALO_PROXY_POLLER_INT_H
#define HALO_PROXY_POLLER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proxy/poller.h"

/* One registered fd, indexed by the fd number. `gen` changes at every add so that a
 * readiness report gathered before a del (or a del + reuse of the same number by a
 * new add) in the same round is recognised as stale and dropped. */
struct poller_slot {
	proxy_poller_cb cb;
	void *arg;
	unsigned events;
	uint32_t gen;
	bool used;
	bool in_kernel; /* epoll: currently in the epoll set (quiet fds are taken out) */
	int pidx;	/* poll: index into the pollfd array */
};

struct poller_ready {
	int fd;
	uint32_t gen;
	unsigned events;
};

struct proxy_poller;

struct poller_ops {
	int (*init)(struct proxy_poller *pl);
	void (*fini)(struct proxy_poller *pl);
	/* Called after the slot is filled (add) or its events changed (mod/del). */
	int (*add)(struct proxy_poller *pl, int fd);
	int (*mod)(struct proxy_poller *pl, int fd);
	void (*del)(struct proxy_poller *pl, int fd);
	/* Wait up to timeout_ms (-1 = forever) and append readiness to pl->ready. */
	int (*wait)(struct proxy_poller *pl, int timeout_ms);
};

struct proxy_poller {
	enum proxy_poller_backend backend;
	const struct poller_ops *ops;
	struct poller_slot *slots;
	size_t n_slots;
	size_t n_used;
	struct poller_ready *ready;
	size_t n_ready, cap_ready;
	struct proxy_timer **heap; /* min-heap by (deadline, seq) */
	size_t n_heap, cap_heap;
	uint64_t timer_seq;
	bool ending; /* proxy_poller_set_ending */
	void *be;    /* backend state */
};

/* The most readiness reports one epoll round takes (its buffer grows to the number of
 * fds registered, up to this): past it a round may leave some ready fds unreported. */
#define POLLER_EPOLL_ROUND_MAX 4096

/* Grow pl->ready to hold at least n entries. 0 or -ENOMEM. */
int poller_ready_reserve(struct proxy_poller *pl, size_t n);

#if defined(__linux__) && !defined(HALO_PORTABLE)
#define POLLER_HAVE_EPOLL 1
extern const struct poller_ops poller_epoll_ops;
void poller_epoll_spin_stats(const struct proxy_poller *pl, uint64_t *spun, uint64_t *caught);
#endif
extern const struct poller_ops poller_poll_ops;

#endif
