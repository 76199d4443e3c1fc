/* The launch scan's workers. Listing a large workspace is nearly all kernel time in
 * getdents64, one directory at a time, so a second thread halves it on a machine with
 * a core to spare. The calling thread walks alone until the tree proves large
 * (LINUX_SCAN_PARALLEL_AFTER entries); then a helper starts, and whenever a worker
 * waits for work, the other hands it the next subdirectory it meets (as an open fd:
 * the O_NOFOLLOW chain from the root is never re-resolved by path) instead of walking
 * it itself. Each worker collects its own findings; they are merged when every thread
 * has been joined, before linux_scan returns (the launch clones right after).
 *
 * The result does not depend on who walked what: masks and guards are sorted and
 * de-duplicated by the caller, and the entry bound is one shared count. Only where a
 * truncated scan stopped can differ, and a truncated scan refuses the launch. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/scan_int.h"

#define OFFERED_MAX 16 /* directories waiting for a worker: open fds, so bounded */

struct walk_item {
	int fd; /* -1 for a root, opened when taken */
	char *path;
	size_t len, root_len;
	unsigned depth;
	dev_t dev;
	bool guard;
	unsigned root_id;
	bool trust;
};

struct linux_scan_pool {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct walk_item *q; /* LIFO: a worker takes the most recently offered */
	size_t n, cap;
	unsigned busy;	       /* workers walking an item (under mu) */
	atomic_uint idle;      /* workers waiting for an item */
	atomic_size_t entries; /* counted against the bound, by every worker */
	atomic_bool stop;
	atomic_bool truncated;
	atomic_int signal; /* the terminating signal that stopped the walk, or 0 */
	size_t max_entries;
	atomic_uint workers; /* allowed, the caller included */
	atomic_uint helpers; /* started (changed under mu) */
	pthread_t thread[LINUX_SCAN_WORKERS];
	struct linux_scan_ctx *helper_ctx[LINUX_SCAN_WORKERS];
	struct linux_scan found[LINUX_SCAN_WORKERS];
	char *uncovered; /* the first statement of what was not covered (under mu) */
};

bool linux_scan_stopped(const struct linux_scan_ctx *c)
{
	return atomic_load_explicit(&c->pool->stop, memory_order_relaxed);
}

void linux_scan_truncate(struct linux_scan_ctx *c)
{
	struct linux_scan_pool *p = c->pool;

	atomic_store(&p->truncated, true);
	pthread_mutex_lock(&p->mu);
	atomic_store(&p->stop, true);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

void linux_scan_uncovered(struct linux_scan_ctx *c, const char *path, const char *why)
{
	struct linux_scan_pool *p = c->pool;
	char *msg = NULL;

	if (asprintf(&msg, "%s (%s)", path, why) < 0)
		msg = NULL;
	pthread_mutex_lock(&p->mu);
	if (!p->uncovered) {
		p->uncovered = msg;
		msg = NULL;
	}
	pthread_mutex_unlock(&p->mu);
	free(msg);
	linux_scan_truncate(c);
}

/* A terminating signal the launch holds for its loop (the supervisor blocks them and
 * reads a signalfd once the sandbox runs): pending, it ends the walk and the launch,
 * which exits as the signal says and runs nothing (linux_scan_interrupted_by), rather
 * than make Ctrl-C wait for a large tree's first walk. A signal not blocked is the
 * process's to die of, as ever; one the caller set to be ignored (a script's background
 * job, nohup) is queued while blocked but stops nothing. sigpending is a system call:
 * asked every 32 directories of each worker (a few dozen microseconds apart), and once
 * more when the walk is done (linux_scan_pending_signal), so a late one is not lost.
 * The pool holds what stopped its walk: a walk's result never depends on another's. */
static atomic_int interrupted_by; /* the last walk that a signal ended: for the exit */

int linux_scan_interrupted_by(void)
{
	return atomic_load(&interrupted_by);
}

void linux_scan_interrupt_note(int sig)
{
	atomic_store(&interrupted_by, sig);
}

int linux_scan_pending_signal(void)
{
	static const int sigs[] = {HALO_TERMINATING_SIGNALS};
	struct sigaction sa;
	sigset_t p;

	if (sigpending(&p) < 0)
		return 0;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigismember(&p, sigs[i]) == 1 && sigaction(sigs[i], NULL, &sa) == 0 &&
		    sa.sa_handler != SIG_IGN)
			return sigs[i];
	return 0;
}

bool linux_scan_interrupted(struct linux_scan_ctx *c)
{
	static __thread unsigned n;
	int none = 0, sig;

	if (++n % 32 != 0 || !(sig = linux_scan_pending_signal()))
		return false;
	atomic_compare_exchange_strong(&c->pool->signal, &none, sig);
	linux_scan_truncate(c); /* every worker stops; nothing is kept */
	return true;
}

size_t linux_scan_take(struct linux_scan_ctx *c, size_t k)
{
	struct linux_scan_pool *p = c->pool;
	size_t before;

	/* No bound to enforce (the default): count without a shared cache line, which two
	 * workers replaying an index would otherwise pass back and forth per directory. */
	if (p->max_entries == SIZE_MAX) {
		c->taken += k;
		return k;
	}
	before = atomic_fetch_add(&p->entries, k);

	if (before + k <= p->max_entries)
		return k;
	linux_scan_truncate(c);
	return before < p->max_entries ? p->max_entries - before : 0;
}

/* Under mu. false when the queue cannot grow (the caller walks the item itself). */
static bool push(struct linux_scan_pool *p, const struct walk_item *it)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 8;
		struct walk_item *q = realloc(p->q, cap * sizeof(*q));
		if (!q)
			return false;
		p->q = q;
		p->cap = cap;
	}
	p->q[p->n++] = *it;
	return true;
}

static void *helper_main(void *arg);

/* Under mu: start one more worker. Signals stay with the calling thread. */
static void start_helper(struct linux_scan_pool *p, const struct linux_scan_ctx *c)
{
	unsigned i = atomic_load(&p->helpers);
	struct linux_scan_ctx *h = malloc(sizeof(*h));
	sigset_t all, old;

	if (!h)
		return;
	*h = *c;
	h->taken = 0;
	h->s = &p->found[i];
	h->worker = i + 1;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&p->thread[i], NULL, helper_main, h) == 0) {
		p->helper_ctx[i] = h;
		atomic_store(&p->helpers, i + 1);
	} else {
		free(h);
		atomic_store(&p->workers, i + 1); /* no more tries: walk with who is there */
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

bool linux_scan_offer(struct linux_scan_ctx *c, int fd, size_t len, unsigned depth, dev_t dev)
{
	struct linux_scan_pool *p = c->pool;
	struct walk_item it = {fd,  NULL,     len,	  c->root_len, depth,
			       dev, c->guard, c->root_id, c->trust};
	bool taken = false;

	unsigned helpers = atomic_load_explicit(&p->helpers, memory_order_relaxed);
	unsigned workers = atomic_load_explicit(&p->workers, memory_order_relaxed);

	/* Cheap checks first: nobody waits and no helper is due. */
	if (workers < 2 ||
	    (atomic_load_explicit(&p->idle, memory_order_relaxed) == 0 &&
	     (helpers + 1 >= workers ||
	      atomic_load_explicit(&p->entries, memory_order_relaxed) < LINUX_SCAN_PARALLEL_AFTER)))
		return false;
	pthread_mutex_lock(&p->mu);
	if (atomic_load(&p->idle) == 0 && atomic_load(&p->helpers) + 1 < atomic_load(&p->workers))
		start_helper(p, c);
	if ((atomic_load(&p->idle) > 0 || p->n == 0) && p->n < OFFERED_MAX &&
	    atomic_load(&p->helpers) > 0 && (it.path = strndup(c->path, len)) != NULL) {
		taken = push(p, &it);
		if (taken)
			pthread_cond_signal(&p->cv);
		else
			free(it.path);
	}
	pthread_mutex_unlock(&p->mu);
	return taken;
}

/* A root: opened here, "/" kept as the empty prefix so children read "/x". */
static int open_root(struct walk_item *it)
{
	struct stat st;
	int fd = open(it->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	/* A file as writable root, or unreadable: nothing to walk. */
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -1;
	}
	it->dev = st.st_dev;
	return fd;
}

static void walk_item(struct linux_scan_ctx *c, struct walk_item *it)
{
	int fd = it->fd >= 0 ? it->fd : open_root(it);

	if (fd >= 0) {
		memcpy(c->path, it->path, it->len);
		c->path[it->len] = '\0';
		c->root_len = it->root_len;
		c->guard = it->guard;
		c->root_id = it->root_id;
		c->trust = it->trust;
		linux_scan_walk_dir(c, fd, it->len, it->depth, it->dev); /* closes fd */
	}
	free(it->path);
}

/* Take items until there are none and nobody is walking one (who could offer more). */
static void work(struct linux_scan_ctx *c)
{
	struct linux_scan_pool *p = c->pool;
	struct walk_item it;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (p->n == 0 && p->busy > 0 && !atomic_load(&p->stop)) {
			atomic_fetch_add(&p->idle, 1);
			pthread_cond_wait(&p->cv, &p->mu);
			atomic_fetch_sub(&p->idle, 1);
		}
		if (p->n == 0 || atomic_load(&p->stop))
			break;
		it = p->q[--p->n];
		p->busy++;
		pthread_mutex_unlock(&p->mu);
		walk_item(c, &it);
		pthread_mutex_lock(&p->mu);
		p->busy--;
	}
	/* Done or stopped: wake whoever still waits so that it sees it too. */
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

static void *helper_main(void *arg)
{
	work(arg);
	return NULL;
}

static void add_roots(struct linux_scan_pool *p, const struct linux_scan_ctx *c,
		      const bool *guard_of)
{
	/* Pushed last first: the queue is a stack, and roots are walked in order. */
	for (size_t i = c->n_roots; i-- > 0;) {
		const char *root = c->roots[i];
		size_t len = strcmp(root, "/") == 0 ? 0 : strlen(root);
		struct walk_item it = {-1,
				       strdup(root),
				       len,
				       len,
				       0,
				       0,
				       guard_of[i],
				       (unsigned)i,
				       c->ix && c->ix->t[i].synced};

		if (!it.path || len >= sizeof(c->path) || !push(p, &it)) {
			free(it.path);
			atomic_store(&p->truncated, true);
			atomic_store(&p->stop, true);
		}
	}
}

/* Move what a helper found into the caller's lists. */
static void merge(struct linux_paths *into, struct linux_paths *from)
{
	for (size_t i = 0; i < from->n; i++)
		linux_paths_add(into, from->v[i]);
	linux_paths_free(from);
}

void linux_scan_walk_roots(struct linux_scan_ctx *c, const bool *guard_of, unsigned workers)
{
	struct linux_scan_pool p;
	size_t entries;

	memset(&p, 0, sizeof(p));
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.cv, NULL);
	p.max_entries = c->max_entries;
	atomic_init(&p.workers, workers < 1		       ? 1
				: workers > LINUX_SCAN_WORKERS ? LINUX_SCAN_WORKERS
							       : workers);
	c->pool = &p;
	add_roots(&p, c, guard_of);
	work(c);
	for (unsigned i = 0; i < atomic_load(&p.helpers); i++) {
		pthread_join(p.thread[i], NULL);
		merge(&c->s->masked, &p.found[i].masked);
		merge(&c->s->own, &p.found[i].own);
		merge(&c->s->guarded, &p.found[i].guarded);
		merge(&c->s->pinned, &p.found[i].pinned);
		merge(&c->s->links, &p.found[i].links);
		merge(&c->s->gitdirs, &p.found[i].gitdirs);
		merge(&c->s->hook_missing, &p.found[i].hook_missing);
		merge(&c->s->dangling, &p.found[i].dangling); /* pairs stay in step */
		merge(&c->s->dangling_at, &p.found[i].dangling_at);
		merge(&c->s->unlisted, &p.found[i].unlisted);
		merge(&c->s->link_masks, &p.found[i].link_masks); /* pairs stay in step */
		merge(&c->s->link_masks_to, &p.found[i].link_masks_to);
		linux_scan_memo_free(&p.found[i]);
		c->taken += p.helper_ctx[i]->taken;
		free(p.helper_ctx[i]);
	}
	/* Stopped early: what was offered and never taken. */
	while (p.n > 0) {
		struct walk_item *it = &p.q[--p.n];
		if (it->fd >= 0)
			close(it->fd);
		free(it->path);
	}
	free(p.q);
	entries = atomic_load(&p.entries) + c->taken;
	c->taken = 0;
	c->s->entries_scanned = entries < p.max_entries ? entries : p.max_entries;
	c->s->truncated = atomic_load(&p.truncated);
	c->signal = atomic_load(&p.signal);
	free(c->s->uncovered);
	c->s->uncovered = p.uncovered;
	c->pool = NULL;
	pthread_cond_destroy(&p.cv);
	pthread_mutex_destroy(&p.mu);
}
