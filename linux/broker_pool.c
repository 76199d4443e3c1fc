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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/broker_int.h"

/* Enough that a few calls on a slow file system leave others answered; each is a
 * thread of init, so a handful costs almost nothing. */
#define BROKER_THREADS LINUX_BROKER_THREADS

static pthread_mutex_t waiters_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t waiters[BROKER_MAX_WAITERS];

static void *worker(void *arg)
{
	struct linux_broker *b = arg;
	struct pollfd pf = {b->listener, POLLIN, 0};

	for (;;) {
		if (poll(&pf, 1, -1) < 0)
			continue;
		if ((pf.revents & (POLLHUP | POLLERR)) && !(pf.revents & POLLIN))
			return NULL; /* every filtered process is gone */
		/* Several threads wake for one call: the others wait in RECV for the next. */
		linux_broker_serve(b);
	}
}

int linux_broker_start(struct linux_broker *b)
{
	pthread_attr_t at;
	int started = 0, rc = 0;

	umask(0); /* modes are masked per call, with each caller's umask */
	if ((rc = pthread_attr_init(&at)) != 0)
		return -rc;
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 256 * 1024);
	for (int i = 0; i < BROKER_THREADS; i++) {
		struct linux_broker *w = malloc(sizeof(*w));
		pthread_t t;

		if (!w || (*w = *b, !(w->req = calloc(1, b->req_size))) ||
		    !(w->resp = calloc(1, b->resp_size))) {
			rc = ENOMEM;
			break;
		}
		if ((rc = pthread_create(&t, &at, worker, w)) != 0)
			break;
		started++;
	}
	pthread_attr_destroy(&at);
	return started ? 0 : -rc;
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
