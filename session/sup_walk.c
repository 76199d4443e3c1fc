/* The walk for protected files that a session's call must not miss, done by the
 * supervisor (linux/session_scan.c has what is walked and why). It starts when a call
 * connects (sup_calls.c: the accept asks for a walk), on a thread of its own, and
 * runs while the call loads its policy, builds the command's environment and says
 * hello; the hello is answered once a walk that started after that connect is done.
 * So the list a call is judged by is never older than the call itself: a protected
 * file made before the call connected is found, as when each call walked itself
 * (which cost every call the whole walk in line, its first half milliseconds).
 *
 * One walk at a time; calls that connect while one runs share the next. The result
 * goes back to the loop through an eventfd (sup_calls.c answers the hellos that wait).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "session/sup_int.h"

struct sup_walk {
	/* The session's launch, but for its warnings: the start's are said once, and a
	 * walk's would pile up there for the session's life (every symlink with a
	 * protected name, every unlistable directory, at every call). */
	runner_launch l;
	pthread_t t;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool quit;
	uint64_t asked;	       /* the last generation a call asked for (one per connect) */
	uint64_t covered;      /* the newest generation the result answers */
	struct sup_walked res; /* the newest walk's lists */
	const struct linux_sandbox *sb;
	int rc;
	pid_t tid; /* the walker's (sup_walk_ask places it) */
	struct halo_err err;
	int efd; /* written when a walk is done */
};

static void walked_free(struct sup_walked *r)
{
	linux_session_protected_free(r->prot, r->n_prot);
	linux_session_protected_free(r->mounts, r->n_mounts);
}

static void *walker(void *arg)
{
	struct sup_walk *w = arg;

	pthread_mutex_lock(&w->mu);
	__atomic_store_n(&w->tid, gettid(), __ATOMIC_RELAXED);
	for (;;) {
		while (!w->quit && w->covered >= w->asked)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->quit)
			break;
		/* Everything asked until now is answered by a walk that starts now. */
		uint64_t gen = w->asked;
		pthread_mutex_unlock(&w->mu);
		struct sup_walked r = {0};
		struct halo_err e = {{0}};
		int rc = linux_session_protected(&w->l, &r.prot, &r.n_prot, &e);
		/* After the walk: a mount lost before it is seen by this look or the walk. */
		r.mounts_rc = linux_session_mounts(w->sb, &r.mounts, &r.n_mounts);
		pthread_mutex_lock(&w->mu);
		walked_free(&w->res);
		w->res = r;
		w->rc = rc;
		w->err = e;
		w->covered = gen;
		uint64_t one = 1;
		ssize_t wr = write(w->efd, &one, sizeof(one));
		(void)wr;
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int sup_walk_start(struct sup *s)
{
	struct sup_walk *w = calloc(1, sizeof(*w));
	sigset_t all, old;

	if (!w)
		return -ENOMEM;
	w->l = *s->l;
	w->l.warnings = NULL;
	w->sb = s->sb;
	w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	s->walk = w;
	if (w->efd < 0)
		return -errno;
	/* Signals stay the loop's (its signalfd). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = pthread_create(&w->t, NULL, walker, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return -rc;
	w->started = true;
	return proxy_poller_add(s->pl, w->efd, PROXY_EV_IN, sup_walk_done, s);
}

uint64_t sup_walk_ask(struct sup *s, pid_t caller)
{
	struct sup_walk *w = s->walk;
	uint64_t gen;

	/* Woken, the walker would be queued where it last ran, or where this loop runs:
	 * when that is the calling halo-run's CPU, it waited there behind the call's own
	 * work (its policy, its environment: half a millisecond) with another CPU idle,
	 * and the hello's answer waited for it. It is kept off the caller's CPU. */
	pid_t tid = __atomic_load_n(&w->tid, __ATOMIC_RELAXED);

	if (tid > 0 && caller > 0)
		linux_thread_keep_off(tid, linux_cpu_of(caller));
	pthread_mutex_lock(&w->mu);
	gen = ++w->asked;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return gen;
}

int sup_walk_result(struct sup *s, uint64_t gen, struct sup_walked *r, char *err, size_t err_n)
{
	struct sup_walk *w = s->walk;
	int rc = 0;

	pthread_mutex_lock(&w->mu);
	if (w->covered < gen)
		rc = -EAGAIN;
	else if (w->rc < 0) {
		rc = w->rc;
		snprintf(err, err_n, "%s", w->err.msg);
	} else {
		*r = w->res;
		/* The loop uses the list; the walker makes a new one and frees this only
		 * under the lock, which the loop holds until sup_walk_release. */
		return 0;
	}
	pthread_mutex_unlock(&w->mu);
	return rc;
}

void sup_walk_release(struct sup *s)
{
	pthread_mutex_unlock(&s->walk->mu);
}

void sup_walk_drain(struct sup *s)
{
	uint64_t v;

	while (read(s->walk->efd, &v, sizeof(v)) == sizeof(v))
		;
}

void sup_walk_stop(struct sup *s)
{
	struct sup_walk *w = s->walk;

	if (!w)
		return;
	if (w->started) {
		pthread_mutex_lock(&w->mu);
		w->quit = true;
		pthread_cond_signal(&w->cv);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->t, NULL);
	}
	if (w->efd >= 0) {
		if (s->pl)
			proxy_poller_del(s->pl, w->efd);
		close(w->efd);
	}
	walked_free(&w->res);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w);
	s->walk = NULL;
}
