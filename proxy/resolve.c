/* Resolver pool. Ownership, so that a late answer can never touch freed memory:
 * - A job belongs to the resolver from submit to free. The connection only holds the
 *   job pointer until its callback runs or it cancels; it never frees a job.
 * - A job is QUEUED (in the queue, freed at once by cancel), RUNNING (a thread holds
 *   it; cancel only marks it), or DONE (on the done list; the loop frees it after the
 *   callback, or without calling back when it was cancelled).
 * - The state the threads share is reference-counted (one reference for the loop,
 *   one per thread), so a thread still blocked in getaddrinfo when the proxy is
 *   destroyed finishes against live memory and the last one out frees it. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proxy/resolve.h"

#if defined(__linux__) && !defined(HALO_PORTABLE)
#include <sys/eventfd.h>
#define RESOLVE_EVENTFD 1
#endif

enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

struct proxy_resolve_job {
	struct proxy_resolve_job *next;
	enum job_state state;
	bool cancelled;
	proxy_resolve_cb cb;
	void *arg;
	int err;
	size_t n;
	struct proxy_addr addrs[PROXY_RESOLVE_MAX_ADDRS];
	char name[256];
};

struct shared {
	pthread_mutex_t mu;
	pthread_cond_t work;   /* queue non-empty or shutdown */
	pthread_cond_t exited; /* a thread left */
	struct proxy_resolve_job *q_head, *q_tail;
	struct proxy_resolve_job *done; /* LIFO; the loop reverses it */
	unsigned threads, idle, max_threads;
	unsigned refs;
	bool shutdown;
	bool keep_fds; /* the process ends: its exit closes them (proxy_poller_ending) */
	int rfd, wfd;  /* notification: the same eventfd twice, or a pipe */
};

struct proxy_resolver {
	struct proxy_poller *pl;
	struct shared *sh;
};

static _Atomic(proxy_lookup_fn) lookup_hook;

void proxy_resolver_set_lookup(proxy_lookup_fn fn)
{
	lookup_hook = fn;
}

static void free_list(struct proxy_resolve_job *j)
{
	while (j) {
		struct proxy_resolve_job *n = j->next;
		free(j);
		j = n;
	}
}

static void shared_free(struct shared *sh)
{
	free_list(sh->q_head);
	free_list(sh->done);
	if (!sh->keep_fds && sh->rfd >= 0) {
		close(sh->rfd);
		if (sh->wfd != sh->rfd)
			close(sh->wfd);
	}
	pthread_cond_destroy(&sh->work);
	pthread_cond_destroy(&sh->exited);
	pthread_mutex_destroy(&sh->mu);
	free(sh);
}

/* Called with the lock held; returns true when the caller must free sh after
 * unlocking. */
static bool unref_locked(struct shared *sh)
{
	return --sh->refs == 0;
}

static void notify(struct shared *sh)
{
#ifdef RESOLVE_EVENTFD
	uint64_t one = 1;
	ssize_t w = write(sh->wfd, &one, sizeof(one));
#else
	char one = 1;
	ssize_t w = write(sh->wfd, &one, 1); /* EAGAIN: a wake-up is already pending */
#endif
	(void)w;
}

static void *worker(void *arg)
{
	struct shared *sh = arg;
	bool last;

	pthread_mutex_lock(&sh->mu);
	for (;;) {
		struct proxy_resolve_job *j;
		proxy_lookup_fn fn;

		while (!sh->shutdown && !sh->q_head)
			pthread_cond_wait(&sh->work, &sh->mu);
		if (sh->shutdown)
			break;
		j = sh->q_head;
		sh->q_head = j->next;
		if (!sh->q_head)
			sh->q_tail = NULL;
		j->next = NULL;
		j->state = JOB_RUNNING;
		sh->idle--;
		pthread_mutex_unlock(&sh->mu);

		fn = lookup_hook ? lookup_hook : proxy_lookup_system;
		j->err = fn(j->name, j->addrs, PROXY_RESOLVE_MAX_ADDRS, &j->n);
		if (!j->err && j->n == 0)
			j->err = -ENOENT;

		pthread_mutex_lock(&sh->mu);
		sh->idle++;
		j->state = JOB_DONE;
		j->next = sh->done;
		sh->done = j;
		if (!j->next && !sh->shutdown)
			notify(sh);
	}
	sh->threads--;
	sh->idle--;
	pthread_cond_broadcast(&sh->exited);
	last = unref_locked(sh);
	pthread_mutex_unlock(&sh->mu);
	if (last)
		shared_free(sh);
	return NULL;
}

/* Called with the lock held. Signals are blocked in the new thread (it inherits the
 * creator's mask) so SIGCHLD/SIGTERM/... keep going to the supervisor's thread. */
static int spawn_locked(struct shared *sh)
{
	pthread_attr_t at;
	pthread_t th;
	sigset_t all, old;
	int rc;

	if (pthread_attr_init(&at) != 0)
		return -ENOMEM;
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 256 * 1024);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&th, &at, worker, sh);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	if (rc)
		return -rc;
	sh->threads++;
	sh->idle++;
	sh->refs++;
	return 0;
}

static void drain_notify(int fd)
{
	char buf[64];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

/* Deliver finished jobs in completion order. A callback may submit or cancel other
 * jobs (the lock is not held); a job cancelled meanwhile is freed silently. */
static void on_notify(void *arg, int fd, unsigned events)
{
	struct proxy_resolver *r = arg;
	struct proxy_resolve_job *list, *rev = NULL;

	(void)events;
	drain_notify(fd);
	pthread_mutex_lock(&r->sh->mu);
	list = r->sh->done;
	r->sh->done = NULL;
	pthread_mutex_unlock(&r->sh->mu);
	while (list) {
		struct proxy_resolve_job *n = list->next;
		list->next = rev;
		rev = list;
		list = n;
	}
	while (rev) {
		struct proxy_resolve_job *j = rev;
		rev = j->next;
		if (!j->cancelled)
			j->cb(j->arg, j->err, j->addrs, j->err ? 0 : j->n);
		free(j);
	}
}

static int open_notify(struct shared *sh)
{
#ifdef RESOLVE_EVENTFD
	sh->rfd = sh->wfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return sh->rfd < 0 ? -errno : 0;
#else
	int p[2];

	if (pipe(p) != 0)
		return -errno;
	for (int i = 0; i < 2; i++) {
		fcntl(p[i], F_SETFD, FD_CLOEXEC);
		fcntl(p[i], F_SETFL, fcntl(p[i], F_GETFL) | O_NONBLOCK);
	}
	sh->rfd = p[0];
	sh->wfd = p[1];
	return 0;
#endif
}

int proxy_resolver_new(struct proxy_poller *pl, unsigned threads, struct proxy_resolver **out)
{
	struct proxy_resolver *r;
	struct shared *sh;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	sh = calloc(1, sizeof(*sh));
	if (!r || !sh) {
		free(r);
		free(sh);
		return -ENOMEM;
	}
	/* The notification fd comes with the first lookup (proxy_resolver_watch): most runs
	 * never make one, and the launch should not pay for it. */
	sh->rfd = sh->wfd = -1;
	pthread_mutex_init(&sh->mu, NULL);
	pthread_cond_init(&sh->work, NULL);
	pthread_cond_init(&sh->exited, NULL);
	sh->max_threads = threads ? threads : PROXY_RESOLVE_THREADS;
	sh->refs = 1;
	r->pl = pl;
	r->sh = sh;
	*out = r;
	return 0;
}

/* Before the first lookup, on the loop's thread (no resolver thread exists yet). */
int proxy_resolver_watch(struct proxy_resolver *r)
{
	struct shared *sh = r->sh;
	int rc;

	if (sh->rfd >= 0)
		return 0;
	if ((rc = open_notify(sh)) < 0)
		return rc;
	if ((rc = proxy_poller_add(r->pl, sh->rfd, PROXY_EV_IN, on_notify, r)) < 0) {
		close(sh->rfd);
		if (sh->wfd != sh->rfd)
			close(sh->wfd);
		sh->rfd = sh->wfd = -1;
	}
	return rc;
}

static void wait_threads(struct shared *sh, unsigned ms)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (sh->threads > 0)
		if (pthread_cond_timedwait(&sh->exited, &sh->mu, &until) == ETIMEDOUT)
			break;
}

void proxy_resolver_free(struct proxy_resolver *r)
{
	struct shared *sh;
	bool last;

	if (!r)
		return;
	sh = r->sh;
	if (sh->rfd >= 0)
		proxy_poller_del(r->pl, sh->rfd);
	pthread_mutex_lock(&sh->mu);
	sh->shutdown = true;
	sh->keep_fds = proxy_poller_ending(r->pl);
	free_list(sh->q_head);
	sh->q_head = sh->q_tail = NULL;
	free_list(sh->done);
	sh->done = NULL;
	pthread_cond_broadcast(&sh->work);
	/* Idle threads leave at once; a thread inside a lookup gets a short grace
	 * period, then keeps the shared state alive on its own. Its job is put on the
	 * done list, which the last reference frees. */
	wait_threads(sh, 500);
	last = unref_locked(sh);
	pthread_mutex_unlock(&sh->mu);
	if (last)
		shared_free(sh);
	free(r);
}

int proxy_resolver_submit(struct proxy_resolver *r, const char *name, proxy_resolve_cb cb,
			  void *arg, struct proxy_resolve_job **job)
{
	struct shared *sh = r->sh;
	struct proxy_resolve_job *j;
	size_t len = strlen(name);
	int rc;

	*job = NULL;
	if (len == 0 || len >= sizeof(j->name))
		return -EINVAL;
	if ((rc = proxy_resolver_watch(r)) < 0)
		return rc;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	memcpy(j->name, name, len + 1);
	j->cb = cb;
	j->arg = arg;
	pthread_mutex_lock(&sh->mu);
	if (sh->idle == 0 && sh->threads < sh->max_threads) {
		rc = spawn_locked(sh);
		if (rc && sh->threads == 0) {
			pthread_mutex_unlock(&sh->mu);
			free(j);
			return rc;
		}
	}
	j->state = JOB_QUEUED;
	if (sh->q_tail)
		sh->q_tail->next = j;
	else
		sh->q_head = j;
	sh->q_tail = j;
	pthread_cond_signal(&sh->work);
	pthread_mutex_unlock(&sh->mu);
	*job = j;
	return 0;
}

void proxy_resolver_cancel(struct proxy_resolver *r, struct proxy_resolve_job *job)
{
	struct shared *sh = r->sh;

	if (!job)
		return;
	pthread_mutex_lock(&sh->mu);
	if (job->state == JOB_QUEUED) {
		struct proxy_resolve_job **pp = &sh->q_head, *prev = NULL;
		while (*pp && *pp != job) {
			prev = *pp;
			pp = &(*pp)->next;
		}
		if (*pp) {
			*pp = job->next;
			if (sh->q_tail == job)
				sh->q_tail = prev;
			pthread_mutex_unlock(&sh->mu);
			free(job);
			return;
		}
	}
	job->cancelled = true;
	pthread_mutex_unlock(&sh->mu);
}
