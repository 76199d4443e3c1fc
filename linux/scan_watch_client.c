/* A launch's side of the index watcher (scan_watch.c): ask it what changed, and start
 * one when none answered. Every failure means "no answer": the launch then stats every
 * directory, as without a watcher. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/scan_int.h"

bool linux_scan_watch_enabled = true;
bool linux_scan_watch_forced;

static bool recv_all(int fd, void *p, size_t n)
{
	for (char *c = p; n > 0;) {
		ssize_t k = recv(fd, c, n, MSG_WAITALL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		c += k;
		n -= (size_t)k;
	}
	return true;
}

/* The changed directories: dirty[i] for each named one the index holds (a name it
 * does not hold is a directory the walk finds anew anyway). */
static bool take_dirty(struct linux_scan_tree_index *t, char *list, size_t bytes, uint32_t n)
{
	char *p = list, *end = list + bytes;

	for (uint32_t i = 0; i < n; i++) {
		char *nul = memchr(p, '\0', (size_t)(end - p));
		const struct linux_index_dir *d;
		if (!nul)
			return false;
		if ((d = linux_index_find(&t->in, p, (size_t)(nul - p))) != NULL)
			t->dirty[d - t->in.dirs] = 1;
		p = nul + 1;
	}
	return p == end;
}

/* The same mount namespace and the same root: the tree's paths lead to the same
 * directories, mounts included. (pid is a peer blocked on our socket, alive.) */
bool linux_scan_same_view(pid_t pid)
{
	static const char *const what[] = {"ns/mnt", "root"};
	char path[64];
	struct stat a, b;

	if (pid <= 0)
		return false;
	for (size_t i = 0; i < sizeof(what) / sizeof(what[0]); i++) {
		snprintf(path, sizeof(path), "/proc/self/%s", what[i]);
		if (stat(path, &a) < 0)
			return false;
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what[i]);
		if (stat(path, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
			return false;
	}
	return true;
}

static int connect_watcher(const struct linux_scan_index *ix, const struct linux_scan_tree_index *t)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct timeval tv = {0, LINUX_WATCH_TIMEOUT_MS * 1000};
	char name[64];
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	int fd;

	linux_scan_index_name(&t->key, "sock", name, sizeof(name));
	/* Through the directory's fd: short whatever the home's length. */
	snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/%s", ix->dirfd, name);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 || cr.uid != geteuid()) {
		close(fd);
		return -1;
	}
	/* A watcher in another mount namespace (or one from before it checked this
	 * itself) vouches for another view of the tree: not asked, and none started. */
	if (!linux_scan_same_view(cr.pid)) {
		close(fd);
		return -2;
	}
	return fd;
}

void linux_scan_watch_sync(struct linux_scan_index *ix, struct linux_scan_tree_index *t)
{
	struct linux_watch_msg m = {LINUX_WATCH_MAGIC, LINUX_WATCH_SYNC, t->in.sum};
	struct linux_watch_reply r;
	char *list = NULL;
	int fd;

	if (!linux_scan_watch_enabled || !t->usable || ix->dirfd < 0)
		return;
	/* No watcher is started for a tree this small (linux_scan_watch_pays), and one
	 * left from when it was larger would save less than asking it costs: not asked
	 * (five calls fewer a launch in a small workspace). It ends when idle. */
	if (!linux_scan_watch_forced && t->in.n < LINUX_WATCH_MIN_DIRS)
		return;
	if ((fd = connect_watcher(ix, t)) < 0) {
		t->no_watcher = fd == -1;
		return;
	}
	if (t->in.n == 0 || send(fd, &m, sizeof(m), MSG_NOSIGNAL) != (ssize_t)sizeof(m) ||
	    !recv_all(fd, &r, sizeof(r)) || r.magic != LINUX_WATCH_MAGIC ||
	    r.status != LINUX_WATCH_OK || r.n > LINUX_WATCH_MAX_DIRTY || r.bytes > 64U << 20 ||
	    !(t->dirty = calloc(t->in.n, 1)) || !(list = malloc(r.bytes + 1)) ||
	    !recv_all(fd, list, r.bytes) || !take_dirty(t, list, r.bytes, r.n)) {
		free(t->dirty);
		t->dirty = NULL;
	} else
		t->synced = true;
	free(list);
	close(fd);
}

bool linux_scan_watch_pays(const struct linux_scan_index *ix, const struct linux_scan_tree_index *t)
{
	return linux_scan_watch_forced ||
	       (t->in.n >= LINUX_WATCH_MIN_DIRS &&
		ix->walk_us >= (ix->pays_us ? ix->pays_us : LINUX_WATCH_PAYS_US));
}

/* A tree a command made of a million directories would otherwise take every inotify
 * watch the user has, and the editor's and the build tools' own watchers fail
 * (ENOSPC). A larger tree gets no watcher: each launch stats it itself. */
size_t linux_scan_watch_cap(void)
{
	static size_t cap;
	unsigned long max = 8192;
	const char *lower = getenv("HALO_RUN_INDEX_WATCH_MAX");
	FILE *f;

	if (cap)
		return cap;
	if ((f = fopen("/proc/sys/fs/inotify/max_user_watches", "re"))) {
		if (fscanf(f, "%lu", &max) != 1)
			max = 8192;
		fclose(f);
	}
	cap = max / 8 < 131072 ? max / 8 : 131072;
	if (lower && strtoul(lower, NULL, 10) < cap)
		cap = strtoul(lower, NULL, 10);
	return cap ? cap : 1;
}

/* The directories the user's other watchers (of this index directory) watch already:
 * their trees' indexes. Asked only when a watcher is about to start. */
size_t linux_scan_watch_held(const char *dir, uint64_t dev, uint64_t ino)
{
	struct linux_index_info *v = NULL;
	unsigned long long d, i;
	size_t n = 0, held = 0;

	if (linux_index_list(dir, &v, &n) < 0)
		return 0;
	for (size_t k = 0; k < n; k++)
		if (v[k].running &&
		    !(sscanf(v[k].base, "%llx-%llx", &d, &i) == 2 && d == dev && i == ino))
			held += v[k].dirs;
	free(v);
	return held;
}

/* How long a watcher waits for a question before it ends: LINUX_WATCH_IDLE_SECONDS,
 * or less where HALO_RUN_INDEX_WATCH_IDLE says so (tests). */
static unsigned watch_idle_s(void)
{
	const char *lower = getenv("HALO_RUN_INDEX_WATCH_IDLE");
	unsigned long v = lower ? strtoul(lower, NULL, 10) : 0;

	return v > 0 && v < LINUX_WATCH_IDLE_SECONDS ? (unsigned)v : LINUX_WATCH_IDLE_SECONDS;
}

void linux_scan_watch_start(const struct linux_scan_index *ix,
			    const struct linux_scan_tree_index *t)
{
	/* An option the runner does not know: a binary without the watcher in it (or
	 * anything else that runs main) refuses it as a usage error, never launches. */
	char walk[32], max[40], idle[32];
	char *const argv[] = {(char *)LINUX_WATCH_ARGV0,
			      (char *)"--index-watch",
			      (char *)ix->dir,
			      (char *)t->root,
			      walk,
			      max,
			      idle,
			      NULL};
	char *const envp[] = {NULL};
	sigset_t all;
	pid_t pid;

	if (!linux_scan_watch_enabled || !t->usable || !t->no_watcher || ix->dirfd < 0)
		return;
	/* Where the walk is quick, or the tree small, the next launch walks again: no
	 * process kept for it. Only a walk that replayed an index tells what the next one
	 * costs (a first walk reads every directory, some 30 times a replay's work). */
	size_t cap = linux_scan_watch_cap(), dirs = t->listed + t->replayed, held;
	if (!linux_scan_watch_pays(ix, t) || t->in.n > cap || dirs > cap)
		return;
	/* The cap is the user's, for all their watchers together: eight workspaces each
	 * just under it would take every inotify watch the user has. */
	held = linux_scan_watch_held(ix->dir, t->key.dev, t->key.ino);
	if (held >= cap || dirs > cap - held || t->in.n > cap - held)
		return;
	snprintf(max, sizeof(max), "max-dirs=%zu", cap - held);
	snprintf(idle, sizeof(idle), "idle-s=%u", watch_idle_s());
	/* Why it runs, for `halo-run index` (its command line). */
	snprintf(walk, sizeof(walk), "walk-us=%llu", (unsigned long long)ix->walk_us);
	pid_t self = getpid();
	if ((pid = fork()) < 0)
		return;
	if (pid == 0) {
		/* Its own session, nothing inherited: it outlives this launch. Nor the CPUs
		 * of the thread that forks it, a session's walker kept off one (review 26:
		 * a watcher held to one CPU for its life): the process's own, its main
		 * thread's. */
		linux_cpus_as_thread(self);
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		setsid();
		if (fork() != 0)
			_exit(0);
		int nul = open("/dev/null", O_RDWR);
		for (int i = 0; nul >= 0 && i < 3; i++)
			dup2(nul, i);
		syscall(SYS_close_range, 3U, ~0U, 0U);
		execve("/proc/self/exe", argv, envp);
		_exit(127);
	}
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* Run as the watcher when exec'd as one (linux_scan_watch_start): before main, so that
 * no part of the runner starts. glibc passes argc, argv and envp to these. (In this
 * file, which the launch links, so that the watcher is always linked with it.) */
__attribute__((constructor)) static void watch_entry(int argc, char **argv, char **envp)
{
	size_t max = 0;
	unsigned idle = 0;

	(void)envp;
	if (argc >= 5 && argc <= 7 && argv[0] && strcmp(argv[0], LINUX_WATCH_ARGV0) == 0 &&
	    strcmp(argv[1], "--index-watch") == 0) {
		if (argc < 6 || sscanf(argv[5], "max-dirs=%zu", &max) != 1 || max == 0)
			max = linux_scan_watch_cap();
		if (argc < 7 || sscanf(argv[6], "idle-s=%u", &idle) != 1 || idle == 0 ||
		    idle > LINUX_WATCH_IDLE_SECONDS)
			idle = LINUX_WATCH_IDLE_SECONDS;
		linux_scan_watch_main(argv[2], argv[3], max, idle);
	}
}
