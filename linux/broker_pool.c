/* The creation broker's workers. Init's own loop reaps, forwards signals and ends the
 * run; if it also answered the trapped calls, one call that waits (an open that breaks
 * a lease, a FIFO without its other end, a slow file system) would hold every other
 * creation in the sandbox, the signals and the exit with it. So a few threads of init
 * answer the calls, and an open that may wait is handed to a child of init of its own
 * (at most BROKER_MAX_WAITERS at once): no call holds another, and init's main thread
 * never waits on one.
 *
 * The threads share init's file-system context: its umask stays 0 and each creation
 * is given the caller's mode already masked (broker_emul.c), and the one call that
 * needs a working directory (bind, broker_bind.c) holds a lock around it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "linux/broker_int.h"

/* Enough that a few calls on a slow file system leave others answered; each is a
 * thread of init, so a handful costs almost nothing. */
#define BROKER_THREADS LINUX_BROKER_THREADS

static pthread_mutex_t waiters_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t waiters[BROKER_MAX_WAITERS];

/* Workers start one at a time: a command that makes no trapped call (most short ones)
 * costs init one thread, not BROKER_THREADS. Whenever the last idle worker takes a
 * call, it starts the next (up to BROKER_THREADS) before answering, so a call that
 * waits never leaves the next one without a worker. */
static atomic_int workers_idle, workers_started;
static pthread_attr_t worker_attr;

/* Workers answering a call: init waits for none to be left before it sends the
 * command's status (linux_broker_wait_done). An idle worker makes nothing: a call
 * whose process is gone is no longer there to take. */
static pthread_mutex_t busy_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t busy_cond = PTHREAD_COND_INITIALIZER;
static int workers_busy;

static void busy_add(int d)
{
	pthread_mutex_lock(&busy_lock);
	workers_busy += d;
	if (workers_busy == 0)
		pthread_cond_broadcast(&busy_cond);
	pthread_mutex_unlock(&busy_lock);
}

static void *worker(void *arg);

/* One more worker, a copy of `from` with buffers of its own; false when none could
 * start (the caller goes on answering alone). */
static bool spawn_worker(const struct linux_broker *from)
{
	struct linux_broker *w;
	pthread_t t;

	if (atomic_fetch_add(&workers_started, 1) >= BROKER_THREADS) {
		atomic_fetch_sub(&workers_started, 1);
		return false;
	}
	if (!(w = malloc(sizeof(*w))) || (*w = *from, !(w->req = calloc(1, from->req_size))) ||
	    !(w->resp = calloc(1, from->resp_size))) {
		if (w)
			free(w->req);
		free(w);
		atomic_fetch_sub(&workers_started, 1);
		return false;
	}
	atomic_fetch_add(&workers_idle, 1);
	if (pthread_create(&t, &worker_attr, worker, w) != 0) {
		atomic_fetch_sub(&workers_idle, 1);
		atomic_fetch_sub(&workers_started, 1);
		free(w->req);
		free(w->resp);
		free(w);
		return false;
	}
	return true;
}

static void worker_gone(struct linux_broker *b)
{
	atomic_fetch_sub(&workers_idle, 1);
	atomic_fetch_sub(&workers_started, 1);
	free(b->req);
	free(b->resp);
	free(b);
}

static void *worker(void *arg)
{
	struct linux_broker *b = arg;
	struct pollfd pf;

	if (b->receive_from >= 0) { /* the first worker, started with the command */
		int sock = b->receive_from;

		b->receive_from = -1;
		if (linux_broker_ack(sock) < 0) {
			close(sock); /* the command reads EOF and stops, naming why */
			worker_gone(b);
			return NULL;
		}
		if (!linux_broker_receive(b, sock)) {
			worker_gone(b); /* the command ended first; it says why */
			return NULL;
		}
		umask(0); /* the command is forked by now: its own umask is its caller's */
	}
	pf = (struct pollfd){b->listener, POLLIN, 0};
	for (;;) {
		if (poll(&pf, 1, -1) < 0)
			continue;
		if ((pf.revents & (POLLHUP | POLLERR | POLLNVAL)) && !(pf.revents & POLLIN))
			return NULL; /* every filtered process is gone (or the listener is) */
		busy_add(1);
		if (atomic_fetch_sub(&workers_idle, 1) == 1)
			spawn_worker(b);
		/* Several threads wake for one call: the others wait in RECV for the next. */
		linux_broker_serve(b);
		atomic_fetch_add(&workers_idle, 1);
		busy_add(-1);
	}
}

/* Once every process of the command's is reaped, no call of theirs is left to take
 * (a killed caller's is withdrawn as it dies): only a worker already answering one
 * could still make a name, after the status is out. Waited for, but not past
 * timeout_s (a file system that hangs). */
void linux_broker_wait_done(int timeout_s)
{
	struct timespec end;

	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += timeout_s;
	pthread_mutex_lock(&busy_lock);
	while (workers_busy > 0 &&
	       pthread_cond_timedwait(&busy_cond, &busy_lock, &end) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&busy_lock);
}

static int attr_ready(void)
{
	static bool ready;
	int rc;

	if (ready)
		return 0;
	if ((rc = pthread_attr_init(&worker_attr)) != 0)
		return -rc;
	pthread_attr_setdetachstate(&worker_attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&worker_attr, 256 * 1024);
	ready = true;
	return 0;
}

int linux_broker_start(struct linux_broker *b)
{
	int rc;

	umask(0); /* modes are masked per call, with each caller's umask */
	if ((rc = attr_ready()) < 0)
		return rc;
	b->receive_from = -1;
	return spawn_worker(b) ? 0 : -ENOMEM;
}

int linux_broker_start_before(struct linux_broker *b, int sock)
{
	int rc;

	if ((rc = attr_ready()) < 0)
		return rc;
	b->receive_from = sock;
	rc = spawn_worker(b) ? 0 : -ENOMEM;
	b->receive_from = -1; /* the worker's copy has it */
	return rc;
}

void linux_broker_reaped(pid_t pid)
{
	pthread_mutex_lock(&waiters_lock);
	for (size_t i = 0; i < BROKER_MAX_WAITERS; i++)
		if (waiters[i] == pid)
			waiters[i] = 0;
	pthread_mutex_unlock(&waiters_lock);
}

static void wake(int sig)
{
	(void)sig;
}

/* The child: open, interrupted once a second to see whether its caller still waits
 * (a caller killed meanwhile leaves nobody to answer: the child ends). */
static void __attribute__((noreturn))
wait_open(struct linux_broker *b, int target, int flags, bool cloexec)
{
	struct sigaction sa = {.sa_handler = wake}; /* no SA_RESTART: open returns EINTR */
	sigset_t alrm;
	char self[64];
	int fd;

	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	sigaction(SIGALRM, &sa, NULL);
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	snprintf(self, sizeof(self), "/proc/self/fd/%d", target);
	for (;;) {
		uint64_t id = b->req->id;

		alarm(1);
		fd = open(self, flags, 0);
		alarm(0);
		if (fd >= 0 || errno != EINTR)
			break;
		if (ioctl(b->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0)
			_exit(0);
	}
	linux_broker_answer(b, fd < 0 ? -errno : cloexec, fd);
	_exit(0);
}

long linux_broker_open_waiting(struct linux_broker *b, int target, int flags, bool cloexec)
{
	size_t slot = BROKER_MAX_WAITERS;
	pid_t p = -1;
	int err = EAGAIN; /* more waiting opens than slots: this one is refused */

	/* The slot is filled under the lock, so the reaper, which frees it by pid, cannot
	 * miss a child that ends at once. */
	pthread_mutex_lock(&waiters_lock);
	for (size_t i = 0; i < BROKER_MAX_WAITERS && slot == BROKER_MAX_WAITERS; i++)
		if (waiters[i] == 0)
			slot = i;
	if (slot < BROKER_MAX_WAITERS) {
		p = fork();
		if (p == 0)
			wait_open(b, target, flags, cloexec); /* never touches the lock */
		err = errno;
		waiters[slot] = p > 0 ? p : 0;
	}
	pthread_mutex_unlock(&waiters_lock);
	close(target);
	return p > 0 ? BROKER_ANSWERED : -err;
}
