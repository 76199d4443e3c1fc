/* The index watcher: one process per indexed tree, exec'd afresh from halo-run's own
 * binary (so it holds none of the supervisor's memory: no policy, no credentials),
 * in its own session, with nothing open but what it makes.
 *
 * It loads the tree's index file (the same checks as a launch) and, for every
 * directory there, opens it beneath the tree's top without crossing a symlink
 * (openat2 RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH), adds an inotify watch on that very
 * inode (through /proc/self/fd), and only then compares its stat with the record: a
 * change before the watch shows in the ctime, a change after it as an event. Any
 * entry created, removed or renamed marks the directory dirty. A launch asks "what
 * changed since index version T?" (T: the file's checksum); before answering, the
 * watcher reads every event already queued, so that every change completed before the
 * question is in the answer. It answers "unknown" (the launch falls back to stat'ing
 * every directory) when it lost events (queue overflow), could not watch everything
 * (fs.inotify.max_user_watches), or holds another version of the file; it re-verifies
 * its watches against the file after such an answer, whenever the file is replaced,
 * and whenever the mount table changes (a mount over a directory raises no inotify
 * event). While it does, it answers nobody: a launch waits LINUX_WATCH_TIMEOUT_MS at
 * most, then stats every directory itself.
 *
 * What it vouches for holds in its own mount namespace only: an asker in another one
 * (where a directory of the tree may be a bind mount of anything, and whose mounts
 * this watcher never hears of) is answered "unknown", and stats every directory.
 *
 * Only the caller's own uid may ask (SO_PEERCRED); the socket and a lock file (one
 * watcher per tree) lie in the index directory, mode 0700, outside the sandbox's
 * reach (the host's pathname sockets are masked inside it anyway). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "linux/scan_int.h"

#define WATCH_MASK                                                                                 \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF |        \
	 IN_MOVE_SELF | IN_ONLYDIR)
enum { DIRTY = 1, ALWAYS = 2 }; /* per directory; ALWAYS: not watched, never trusted */

struct watcher {
	int dirfd, ifd, lfd, mfd, rootfd, dirwd;
	char root[PATH_MAX], dir[PATH_MAX];
	char idx[64], sock[64], lock[64];
	struct linux_index_key key;
	struct linux_index ix;
	unsigned char *state; /* per ix.dirs */
	int *rec_of_wd;	      /* wd -> record index, -1 none, -2 several */
	size_t n_wd;
	bool unknown;
	size_t max_dirs; /* past it, no watcher (linux_scan_watch_cap) */
	bool stop;
};

static bool same_dir(const struct stat *st, const struct linux_index_dir *d)
{
	return d->dev == (uint64_t)st->st_dev && d->ino == (uint64_t)st->st_ino &&
	       d->ctime_sec == (int64_t)st->st_ctim.tv_sec &&
	       d->ctime_nsec == (uint32_t)st->st_ctim.tv_nsec &&
	       d->nlink == (uint64_t)st->st_nlink && d->size == (uint64_t)st->st_size;
}

static void map_wd(struct watcher *w, int wd, size_t i)
{
	if ((size_t)wd >= w->n_wd) {
		size_t n = w->n_wd ? w->n_wd : 1024;
		while (n <= (size_t)wd)
			n *= 2;
		int *m = realloc(w->rec_of_wd, n * sizeof(int));
		if (!m) {
			w->state[i] |= ALWAYS;
			w->unknown = true;
			return;
		}
		for (size_t k = w->n_wd; k < n; k++)
			m[k] = -1;
		w->rec_of_wd = m;
		w->n_wd = n;
	}
	if (w->rec_of_wd[wd] >= 0) { /* one inode at two paths (a bind mount) */
		w->state[w->rec_of_wd[wd]] |= ALWAYS;
		w->state[i] |= ALWAYS;
		w->rec_of_wd[wd] = -2;
	} else if (w->rec_of_wd[wd] == -1)
		w->rec_of_wd[wd] = (int)i;
}

/* Watch one directory of the index, then compare it with its record. */
static void watch_one(struct watcher *w, size_t i)
{
	const struct linux_index_dir *d = &w->ix.dirs[i];
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve =
				   RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
	char proc[64];
	struct stat st;
	int fd, wd;

	if (d->flags & LINUX_INDEX_RACY) {
		w->state[i] |= ALWAYS;
		return;
	}
	fd = (int)syscall(SYS_openat2, w->rootfd, d->rel[0] ? d->rel : ".", &how, sizeof(how));
	if (fd < 0) {
		w->state[i] |= DIRTY;
		return;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	wd = inotify_add_watch(w->ifd, proc, WATCH_MASK);
	if (wd < 0) {
		/* ENOSPC: past fs.inotify.max_user_watches. */
		w->state[i] |= ALWAYS;
		w->unknown = w->unknown || errno == ENOSPC;
	} else
		map_wd(w, wd, i);
	if (fstat(fd, &st) < 0 || !same_dir(&st, d))
		w->state[i] |= DIRTY;
	close(fd);
}

/* (Re)load the index file and watch what it lists. False: nothing valid to watch, or
 * more than w->max_dirs directories (linux_scan_watch_cap). */
static bool rebuild(struct watcher *w)
{
	char why[128];
	size_t len = 0;
	void *buf = linux_scan_index_read(w->dirfd, w->idx, &len);
	int *old = w->rec_of_wd;
	size_t n_old = w->n_wd;

	linux_index_free(&w->ix);
	free(w->state);
	w->state = NULL;
	/* No map of watches to records until the new one is made: an event read after a
	 * failed rebuild (the rest of drain's buffer) once wrote through the freed state. */
	w->rec_of_wd = NULL;
	w->n_wd = 0;
	if (!buf || linux_scan_index_parse(buf, len, &w->ix, why, sizeof(why)) < 0 ||
	    w->ix.key.dev != w->key.dev || w->ix.key.ino != w->key.ino ||
	    strcmp(w->ix.key.root, w->root) != 0 || w->ix.n > w->max_dirs ||
	    !(w->state = calloc(w->ix.n + 1, 1))) {
		free(old);
		return false;
	}
	w->unknown = false;
	for (size_t i = 0; i < w->ix.n; i++)
		watch_one(w, i);
	/* Watches of directories no longer listed. */
	for (size_t k = 0; k < n_old; k++)
		if (old[k] != -1 && ((size_t)k >= w->n_wd || w->rec_of_wd[k] == -1))
			inotify_rm_watch(w->ifd, (int)k);
	free(old);
	return true;
}

static void on_event(struct watcher *w, const struct inotify_event *ev)
{
	if (w->stop) /* the rest of a buffer read before the stop */
		return;
	if (ev->mask & IN_Q_OVERFLOW) {
		w->unknown = true;
		return;
	}
	if (ev->wd == w->dirwd) {
		/* Our socket or lock removed: asked to stop. The index file replaced: a
		 * launch wrote a new version; watch that one. */
		if (ev->len && (strcmp(ev->name, w->sock) == 0 || strcmp(ev->name, w->lock) == 0))
			w->stop = true;
		else if (ev->len && strcmp(ev->name, w->idx) == 0)
			w->stop = !rebuild(w);
		return;
	}
	if (!w->state || ev->wd < 0 || (size_t)ev->wd >= w->n_wd || w->rec_of_wd[ev->wd] == -1)
		return;
	if (w->rec_of_wd[ev->wd] >= 0) {
		size_t i = (size_t)w->rec_of_wd[ev->wd];
		w->state[i] |= DIRTY;
		/* The top removed or moved: nothing left to watch. */
		if (w->ix.dirs[i].rel[0] == '\0' && (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)))
			w->stop = true; /* (the loop then finds the tree gone) */
	}
}

static void drain(struct watcher *w)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	while (!w->stop && (n = read(w->ifd, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)(void *)p;
			on_event(w, ev);
			p += sizeof(*ev) + ev->len;
		}
}

static bool send_all(int fd, const void *p, size_t n)
{
	for (const char *c = p; n > 0;) {
		ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
		if (k <= 0)
			return false;
		c += k;
		n -= (size_t)k;
	}
	return true;
}

/* The changed directories, or "unknown". */
static void answer(struct watcher *w, int fd, uint64_t token)
{
	struct linux_watch_reply r = {LINUX_WATCH_MAGIC, LINUX_WATCH_UNKNOWN, 0, 0};
	size_t bytes = 0, n = 0;
	char *list = NULL, *o;

	for (size_t i = 0; !w->unknown && i < w->ix.n; i++)
		if (w->state[i]) {
			bytes += strlen(w->ix.dirs[i].rel) + 1;
			n++;
		}
	if (!w->unknown && token == w->ix.sum && n <= LINUX_WATCH_MAX_DIRTY &&
	    (list = malloc(bytes + 1)) != NULL) {
		o = list;
		for (size_t i = 0; i < w->ix.n; i++)
			if (w->state[i]) {
				size_t k = strlen(w->ix.dirs[i].rel) + 1;
				memcpy(o, w->ix.dirs[i].rel, k);
				o += k;
			}
		r = (struct linux_watch_reply){LINUX_WATCH_MAGIC, LINUX_WATCH_OK, (uint32_t)n,
					       (uint32_t)bytes};
	}
	if (send_all(fd, &r, sizeof(r)) && r.bytes)
		send_all(fd, list, bytes);
	free(list);
	/* Unknown: verify every watch against the file again, so that the launch asking
	 * now (which stats everything itself) is the only one that pays for it. */
	if (r.status == LINUX_WATCH_UNKNOWN)
		w->stop = !rebuild(w);
}

/* The asker is the caller's uid in the caller's network namespace (a sandboxed
 * command, same uid, its own namespace, is refused even if it reached the socket),
 * and sees the tree as this watcher does: in another mount namespace a directory of
 * the tree may be a bind mount of anything, and this watcher's wake-up on a mount
 * sees only its own namespace. */
static bool same_asker(const struct ucred *cr)
{
	char mine[64], theirs[64], path[64];
	ssize_t a, b;

	if (cr->uid != geteuid() || cr->pid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)cr->pid);
	a = readlink("/proc/self/ns/net", mine, sizeof(mine));
	b = readlink(path, theirs, sizeof(theirs));
	return a > 0 && a == b && memcmp(mine, theirs, (size_t)a) == 0;
}

/* "Unknown", to an asker that may see the tree otherwise: it stats every directory
 * itself. Nothing here changed, so nothing is re-verified. */
static void answer_unknown(int fd)
{
	struct linux_watch_reply r = {LINUX_WATCH_MAGIC, LINUX_WATCH_UNKNOWN, 0, 0};

	send_all(fd, &r, sizeof(r));
}

/* A mount made since the last wake-up (the loop may not have seen it yet when the
 * question came): every watch checked against the file again before answering. */
static void mounts_settled(struct watcher *w)
{
	struct pollfd p = {w->mfd, POLLPRI, 0};

	if (w->mfd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLPRI | POLLERR)))
		w->stop = !rebuild(w);
}

/* Whether a launch of the caller's, seeing the tree as this watcher does, was
 * answered: only that keeps the watcher from its idle end (anything else reaching the
 * socket, refused, must not keep it alive for good). */
static bool serve(struct watcher *w)
{
	bool served = false;
	struct timeval tv = {0, LINUX_WATCH_TIMEOUT_MS * 1000};
	struct linux_watch_msg m;
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	int fd = accept4(w->lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return false;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) == 0 && same_asker(&cr) &&
	    recv(fd, &m, sizeof(m), MSG_WAITALL) == (ssize_t)sizeof(m) &&
	    m.magic == LINUX_WATCH_MAGIC && m.op == LINUX_WATCH_SYNC) {
		if (!linux_scan_same_view(cr.pid)) {
			answer_unknown(fd);
			close(fd);
			return false;
		}
		mounts_settled(w);
		drain(w);
		if ((served = !w->stop))
			answer(w, fd, m.token);
	}
	close(fd);
	return served;
}

/* The socket, owned through the lock: whoever holds it may replace a stale one. */
static bool listen_on(struct watcher *w)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int lk = openat(w->dirfd, w->lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (lk < 0 || flock(lk, LOCK_EX | LOCK_NB) < 0)
		return false; /* another watcher has the tree (lk stays open: exiting) */
	/* Bound by its absolute path: that is how /proc/net/unix lists it, and so how the
	 * launch's scan finds it and masks it inside every sandbox. A directory too deep
	 * for sun_path gets no watcher. */
	if (fchdir(w->dirfd) < 0 || snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", w->dir,
					     w->sock) >= (int)sizeof(a.sun_path))
		return false;
	unlink(w->sock);
	umask(077);
	w->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (w->lfd < 0 || bind(w->lfd, (struct sockaddr *)&a, sizeof(a)) < 0)
		return false;
	if (fchmodat(w->dirfd, w->sock, 0600, 0) == 0 && listen(w->lfd, 64) == 0)
		return true;
	unlinkat(w->dirfd, w->sock, 0); /* bound, never listening: not left stale */
	return false;
}

static bool setup(struct watcher *w, const char *dir, const char *root)
{
	struct stat st;

	snprintf(w->root, sizeof(w->root), "%s", root);
	snprintf(w->dir, sizeof(w->dir), "%s", dir);
	w->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	w->rootfd = open(root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (w->dirfd < 0 || fstat(w->dirfd, &st) < 0 || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || w->rootfd < 0 || fstat(w->rootfd, &st) < 0)
		return false;
	w->key = (struct linux_index_key){st.st_dev, st.st_ino, 0, w->root};
	linux_scan_index_name(&w->key, "idx", w->idx, sizeof(w->idx));
	linux_scan_index_name(&w->key, "sock", w->sock, sizeof(w->sock));
	linux_scan_index_name(&w->key, "lock", w->lock, sizeof(w->lock));
	w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	/* The index directory first: a file replaced while the rest is set up is seen. */
	if (w->ifd < 0 || !listen_on(w) ||
	    (w->dirwd = inotify_add_watch(w->ifd, dir,
					  IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE |
					      IN_ONLYDIR)) < 0)
		return false;
	/* The mount table changed: POLLPRI on /proc/self/mountinfo. */
	w->mfd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (rebuild(w))
		return true;
	unlinkat(w->dirfd, w->sock, 0); /* nothing to answer for: no stale socket left */
	return false;
}

static int64_t now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec;
}

/* The tree is no longer there: removed (its top has no link left, and no event comes
 * while this process holds it open), or its path leads elsewhere (unmounted, moved,
 * replaced). */
static bool tree_gone(const struct watcher *w)
{
	struct stat a, b;

	if (fstat(w->rootfd, &a) < 0 || a.st_nlink == 0)
		return true;
	if (stat(w->root, &b) < 0)
		return errno == ENOENT || errno == ENOTDIR;
	return b.st_dev != (dev_t)w->key.dev || b.st_ino != (ino_t)w->key.ino;
}

void linux_scan_watch_main(const char *dir, const char *root, size_t max_dirs, unsigned idle_s)
{
	struct watcher w = {
	    .dirfd = -1, .ifd = -1, .lfd = -1, .mfd = -1, .rootfd = -1, .max_dirs = max_dirs};
	int64_t last = now_s();
	bool gone = false;

	signal(SIGPIPE, SIG_IGN);
	if (!setup(&w, dir, root))
		_exit(1);
	while (!w.stop && now_s() - last < (int64_t)idle_s) {
		struct pollfd p[3] = {{w.ifd, POLLIN, 0}, {w.lfd, POLLIN, 0}, {w.mfd, POLLPRI, 0}};
		int n = poll(p, w.mfd >= 0 ? 3 : 2, LINUX_WATCH_CHECK_MS);
		if (n < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			drain(&w);
		/* A mount anywhere: what a path leads to may have changed without an
		 * event. Every watch is checked against the file again, now, rather
		 * than answering "unknown" to the next launch. */
		if (w.mfd >= 0 && (p[2].revents & (POLLPRI | POLLERR)))
			w.stop = !rebuild(&w);
		if (p[1].revents && serve(&w))
			last = now_s();
		if ((gone = tree_gone(&w)))
			break;
	}
	if (w.stop && !gone) /* its top removed or moved, or its socket removed */
		gone = tree_gone(&w);
	/* Gone: the next launch stats every directory and starts another. With the tree
	 * gone, its index goes too: nothing is left for a directory that is no more. */
	if (fchdir(w.dirfd) == 0) {
		unlink(w.sock);
		if (gone) {
			unlink(w.idx);
			unlink(w.lock);
		}
	}
	_exit(0);
}
