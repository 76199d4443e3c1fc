/* A small readiness poller with two backends: epoll (Linux) and poll() (portable, the
 * macOS build). Callbacks run on the one thread that calls proxy_poller_run. Timers
 * are kept by the poller itself (a deadline per timer), so the portable backend needs
 * nothing but poll(). */
#ifndef HALO_PROXY_POLLER_H
#define HALO_PROXY_POLLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum proxy_poller_backend {
	PROXY_POLLER_EPOLL,
	PROXY_POLLER_POLL,
};

#define PROXY_EV_IN  1u
#define PROXY_EV_OUT 2u
#define PROXY_EV_ERR 4u /* error or hang-up; always reported */

typedef void (*proxy_poller_cb)(void *arg, int fd, unsigned events);
typedef void (*proxy_timer_cb)(void *arg);

struct proxy_poller;
struct proxy_timer;

/* The default backend for this build: epoll on Linux unless HALO_PORTABLE. */
enum proxy_poller_backend proxy_poller_default_backend(void);

int proxy_poller_new(enum proxy_poller_backend b, struct proxy_poller **out);
void proxy_poller_free(struct proxy_poller *pl);

/* Watch fd for `events` (IN/OUT); 0 keeps it registered but quiet. -errno on failure. */
int proxy_poller_add(struct proxy_poller *pl, int fd, unsigned events, proxy_poller_cb cb,
		     void *arg);
int proxy_poller_mod(struct proxy_poller *pl, int fd, unsigned events);
int proxy_poller_del(struct proxy_poller *pl, int fd);

/* One-shot timer firing after `ms`; returns a handle or NULL on ENOMEM. Cancel before
 * it fires with proxy_timer_cancel (the handle is then invalid). */
struct proxy_timer *proxy_timer_add(struct proxy_poller *pl, uint64_t ms, proxy_timer_cb cb,
				    void *arg);
void proxy_timer_cancel(struct proxy_poller *pl, struct proxy_timer *t);

/* Run until *stop becomes true (set from a callback). Returns 0 or -errno. */
int proxy_poller_run(struct proxy_poller *pl, volatile bool *stop);

/* One round: wait at most timeout_ms for events, dispatch them and due timers. */
int proxy_poller_run_once(struct proxy_poller *pl, int timeout_ms);

/* The process exits once the loop's owners have freed what they hold (a run's end):
 * from now on a delete leaves the kernel's set alone and the poller's own descriptor
 * is left to the exit, and owners may leave theirs open too (proxy_poller_ending).
 * Nothing may wait on the poller after it is set. */
void proxy_poller_set_ending(struct proxy_poller *pl);
bool proxy_poller_ending(const struct proxy_poller *pl);

/* Which of fds[0..n) are readable (or hung up) now, by one wait that dispatches
 * nothing and fires no timer: what else is ready stays so for the next round (level-
 * triggered). Not from inside a callback. 0, or -errno (then ready[] says nothing). */
int proxy_poller_peek(struct proxy_poller *pl, const int *fds, size_t n, bool *ready);

/* How many waits polled before sleeping (epoll, a hot loop; poller_epoll.c) and how
 * many of them the polling answered. Both 0 on the poll backend. */
void proxy_poller_spin_stats(const struct proxy_poller *pl, uint64_t *spun, uint64_t *caught);

/* Monotonic milliseconds. */
uint64_t proxy_now_ms(void);

#endif
