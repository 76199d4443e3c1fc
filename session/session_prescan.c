/* A call's walk for protected files (linux/session_scan.c), on a thread of its own.
 * It needs only what the launch says of the trees (the policy, the workspace, the
 * homes, the cache binds), so runner/run.c starts it as soon as those are known, and
 * it runs while the call builds the command's environment and its identity, and
 * connects: on a machine with a core to spare, most of a call's walk costs no time.
 * Only there: where every core is busy, the thread waits for one while the call waits
 * for the thread (measured on 2 cores at a load of 3 to 4: calls 0.4 to 2 ms slower
 * than walking in line), so it is started only while the load average leaves a core
 * idle.
 *
 * The list is as fresh as the one the call walked for after connecting: the walk
 * starts after the call did, so a protected file made before the call is found; one
 * made during the call's own setup is a race either way. A call that starts the
 * session instead (or finds it started by another call meanwhile) drops it and walks
 * again at the point session_call.c always did: the session's own list must never be
 * older than its socket and its audit file, nor than the session itself. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>

#include "session/session_int.h"

static struct {
	pthread_t t;
	bool started;
	const runner_launch *l;
	char **prot;
	size_t n;
	int rc;
	struct halo_err e;
	/* The walk says it is done itself: the call takes the list then, not once the
	 * thread has exited too (its exit, and the join's wake-up, cost a tenth of a
	 * millisecond more; the thread is joined at the call's end). */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done, taken;
	cpu_set_t all; /* the process's CPUs, given back to the thread once it runs */
	bool moved;
} pre = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static bool core_to_spare(void)
{
	double load;

	return sched_getaffinity(0, sizeof(pre.all), &pre.all) == 0 && getloadavg(&load, 1) == 1 &&
	       load + 1 < CPU_COUNT(&pre.all);
}

static void *walk(void *arg)
{
	(void)arg;
	/* Started on another core than the call's (see runner_session_prescan), then
	 * free to go wherever the scheduler likes. */
	if (pre.moved)
		sched_setaffinity(0, sizeof(pre.all), &pre.all);
	pre.rc = linux_session_protected(pre.l, &pre.prot, &pre.n, &pre.e);
	pthread_mutex_lock(&pre.mu);
	pre.done = true;
	pthread_cond_signal(&pre.cv);
	pthread_mutex_unlock(&pre.mu);
	return NULL;
}

/* The walk's thread starts on a core the call is not on: a new thread is put on its
 * creator's core first, and on a machine whose idle cores sleep (a VM's vCPUs) it ran
 * there while the call waited to be moved (measured on 2 vCPUs: the call stalled 0.7
 * ms in about half the runs). */
static void start_elsewhere(pthread_attr_t *at)
{
	cpu_set_t other = pre.all;
	int me = sched_getcpu();

	pre.moved = false;
	if (me < 0 || me >= CPU_SETSIZE || !CPU_ISSET(me, &other))
		return;
	CPU_CLR(me, &other);
	pre.moved =
	    CPU_COUNT(&other) > 0 && pthread_attr_setaffinity_np(at, sizeof(other), &other) == 0;
}

void runner_session_prescan(const struct runner_opts *o, const runner_launch *l)
{
	sigset_t all, old;
	pthread_attr_t at;

	if (pre.started || runner_session_refusal(o, l, false) != 0 || !core_to_spare())
		return;
	runner_session_own_files(o); /* first: the walk leaves them out as halo-run's */
	pre.l = l;
	pre.done = pre.taken = false;
	/* Signals stay the main thread's: it forwards them to the command. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (pthread_attr_init(&at) == 0) {
		start_elsewhere(&at);
		pre.started = pthread_create(&pre.t, &at, walk, NULL) == 0;
		pthread_attr_destroy(&at);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void join(void)
{
	if (pre.started)
		pthread_join(pre.t, NULL);
	pre.started = pre.taken = false;
}

int runner_session_prescan_take(struct runner_session_id *id)
{
	if (!pre.started || pre.taken) /* a list is taken once: a second take walks */
		return 0;
	pthread_mutex_lock(&pre.mu);
	while (!pre.done)
		pthread_cond_wait(&pre.cv, &pre.mu);
	pthread_mutex_unlock(&pre.mu);
	pre.taken = true;
	if (pre.rc < 0) {
		runner_say("session %s: %s", id->name, pre.e.msg);
		return -1;
	}
	linux_session_protected_free(id->prot, id->n_prot);
	id->prot = pre.prot;
	id->n_prot = pre.n;
	pre.prot = NULL;
	pre.n = 0;
	return 1;
}

void runner_session_prescan_drop(void)
{
	join();
	linux_session_protected_free(pre.prot, pre.n);
	pre.prot = NULL;
	pre.n = 0;
}
