/* The home set's entries while the host changes them (review 28). The pins keep a
 * missing entry from being made, the read-only mounts keep the existing ones, and
 * broker.c refuses a replaced one; what the host makes, replaces or writes beside them
 * during the run must not become the command's either:
 *  - beneath a pinned entry: the host made ~/.local/bin (pipx, cargo install) or
 *    ~/.config/systemd/user (systemctl --user enable), and the command wrote a git or
 *    a unit in it;
 *  - a second name for a kept file: a hard link to a replaced entry, or to the host's
 *    temp file made before the host renamed it over the entry (sed -i's sedXXXXXX,
 *    compinit's .zcompdump-HOST.PID): the write-open is refused by inode, the link by
 *    path;
 *  - a file the host made beside a kept one during the run (that temp file, git's
 *    .gitconfig.lock): neither written nor linked, so that no descriptor of the
 *    command's is on it when the host renames it over the entry (a descriptor held
 *    from before is out of any broker's sight: an open is where it is stopped).
 * Files that were there at the launch, and the command's own, stay writable. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "linux/broker_int.h"
#include "policy/policy.h"

#define OWN_MAX (1u << 20) /* inodes the command made beside kept files */

static pthread_mutex_t own_lock = PTHREAD_MUTEX_INITIALIZER;
static bool home_active; /* set by init before the command's fork: inherited */
static _Atomic int spawner_pid;

void linux_broker_set_spawner(pid_t spawner)
{
	spawner_pid = spawner;
}

int linux_broker_fd_path(int fd, char *buf, size_t n)
{
	char self[64];
	ssize_t k;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	if ((k = readlink(self, buf, n - 1)) <= 0 || buf[0] != '/' || (size_t)k >= n - 1)
		return -1; /* a pipe, a socket, an anonymous file; or cut short */
	buf[k] = '\0';
	return 0;
}

/* path's directory into out (n bytes): false when it has none. */
static bool dir_of(const char *path, char *out, size_t n)
{
	const char *sl = strrchr(path, '/');
	size_t k;

	if (!sl)
		return false;
	k = sl == path ? 1 : (size_t)(sl - path);
	if (k >= n)
		return false;
	memcpy(out, path, k);
	out[k] = '\0';
	return true;
}

static void add_dir_of(struct linux_broker *b, const char *path)
{
	char d[PATH_MAX];

	if (!dir_of(path, d, sizeof(d)))
		return;
	for (size_t i = 0; i < b->home_dirs.n; i++)
		if (strcmp(b->home_dirs.v[i], d) == 0)
			return;
	linux_paths_add(&b->home_dirs, d);
}

void linux_broker_home_setup(struct linux_broker *b)
{
	struct timespec bt;

	/* The clock file times are taken from (coarse: a file made in the same tick is
	 * not older than the start). */
	clock_gettime(CLOCK_REALTIME_COARSE, &b->home_start);
	clock_gettime(CLOCK_BOOTTIME, &bt);
	b->boot_rt.tv_sec = b->home_start.tv_sec - bt.tv_sec;
	b->boot_rt.tv_nsec = b->home_start.tv_nsec - bt.tv_nsec;
	if (b->boot_rt.tv_nsec < 0) {
		b->boot_rt.tv_nsec += 1000000000L;
		b->boot_rt.tv_sec--;
	}
	b->own = calloc(1, sizeof(*b->own)); /* none: every fresh file there refused */
}

/* path is top (n long), or lies beneath it; case folded (a pin's names are). */
static bool at_or_beneath(const char *path, const char *top, size_t n)
{
	return strncasecmp(path, top, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

bool linux_broker_home_active(void)
{
	return home_active;
}

static void add_dirs_of(struct linux_broker *b, const struct linux_paths *l)
{
	for (size_t i = 0; i < l->n; i++)
		add_dir_of(b, l->v[i]);
}

void linux_broker_home_scope(struct linux_broker *b, const struct linux_scan *s)
{
	linux_paths_free(&b->home_dirs);
	add_dirs_of(b, &s->home_guarded);
	add_dirs_of(b, &s->missing_deep);
	add_dirs_of(b, &s->home_prefix);
	for (size_t i = 0; i < s->home_guarded.n; i++)
		linux_paths_add(&b->home_names, s->home_guarded.v[i]);
	for (size_t i = 0; i < s->missing_deep.n; i++)
		linux_paths_add(&b->home_names, s->missing_deep.v[i]);
	home_active = b->home_dirs.n > 0;
}

static bool beneath_prefix(const char *path, const char *full)
{
	const char *sl = strrchr(full, '/');
	char first[NAME_MAX + 1];
	size_t n, k;

	if (!sl || sl == full)
		return false;
	n = (size_t)(sl - full);
	if (strncasecmp(path, full, n) != 0 || path[n] != '/')
		return false;
	k = strcspn(path + n + 1, "/");
	if (k == 0 || k > NAME_MAX)
		return k > NAME_MAX; /* cannot be told: kept */
	memcpy(first, path + n + 1, k);
	first[k] = '\0';
	return policy_home_prefix_name(first, sl + 1);
}

bool linux_broker_path_kept(const struct linux_broker *b, const char *path)
{
	for (size_t i = 0; i < b->n_pins; i++) {
		const struct broker_pin *pin = &b->pins[i];

		if (!pin->full)
			continue;
		if (pin->prefix ? beneath_prefix(path, pin->full)
				: at_or_beneath(path, pin->full, strlen(pin->full)))
			return true;
	}
	return false;
}

static bool same_file(const char *path, const struct stat *st)
{
	struct stat s;

	return lstat(path, &s) == 0 && s.st_ino == st->st_ino && s.st_dev == st->st_dev;
}

/* A prefix row's matches now in its directory (the host may have made one since). */
static bool prefix_match(const char *full, const struct stat *st)
{
	char d[PATH_MAX], p[PATH_MAX];
	const char *pre = strrchr(full, '/');
	struct dirent *e;
	bool hit = false;
	DIR *dp;

	if (!pre || !dir_of(full, d, sizeof(d)) || !(dp = opendir(d)))
		return false;
	while (!hit && (e = readdir(dp)))
		if (e->d_ino == st->st_ino && policy_home_prefix_name(e->d_name, pre + 1) &&
		    snprintf(p, sizeof(p), "%s/%s", d, e->d_name) < (int)sizeof(p))
			hit = same_file(p, st);
	closedir(dp);
	return hit;
}

bool linux_broker_alias_kept(const struct linux_broker *b, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return true; /* cannot tell: refuse */
	if (!S_ISREG(st.st_mode) || st.st_nlink < 2)
		return false; /* one name: judged by it */
	for (size_t i = 0; i < b->guarded.n; i++)
		if (same_file(b->guarded.v[i], &st))
			return true;
	for (size_t i = 0; i < b->n_pins; i++) {
		const struct broker_pin *pin = &b->pins[i];

		if (pin->full &&
		    (pin->prefix ? prefix_match(pin->full, &st) : same_file(pin->full, &st)))
			return true;
	}
	return false;
}

static bool same(const struct broker_inode *a, const struct broker_inode *k)
{
	return a->ino == k->ino && a->dev == k->dev && a->btime_s == k->btime_s &&
	       a->btime_ns == k->btime_ns;
}

static size_t slot(const struct broker_own *o, const struct broker_inode *k)
{
	size_t h = ((size_t)k->ino * 0x9E3779B97F4A7C15ull) ^ (size_t)k->dev ^ (size_t)k->btime_ns;

	for (h &= o->cap - 1;; h = (h + 1) & (o->cap - 1))
		if (o->v[h].ino == 0 || same(&o->v[h], k))
			return h;
}

static bool own_has(const struct broker_own *o, const struct broker_inode *k)
{
	return o && o->cap && o->v[slot(o, k)].ino != 0;
}

static void own_add(struct broker_own *o, const struct broker_inode *k)
{
	if (!o || k->ino == 0 || own_has(o, k))
		return;
	if (2 * (o->n + 1) > o->cap) { /* grow: at most half full */
		size_t cap = o->cap ? 2 * o->cap : 64;
		struct broker_own g = {calloc(cap, sizeof(*g.v)), 0, cap};

		if (cap > OWN_MAX || !g.v) {
			free(g.v);
			return; /* full: later writes of it are refused, never allowed */
		}
		for (size_t i = 0; i < o->cap; i++)
			if (o->v[i].ino)
				g.v[slot(&g, &o->v[i])] = o->v[i];
		free(o->v);
		*o = (struct broker_own){g.v, o->n, cap};
	}
	o->v[slot(o, k)] = *k;
	o->n++;
}

static struct broker_inode key_of(const struct statx *sx)
{
	return (struct broker_inode){makedev(sx->stx_dev_major, sx->stx_dev_minor), sx->stx_ino,
				     sx->stx_btime.tv_sec, sx->stx_btime.tv_nsec};
}

static bool home_dir(const struct linux_broker *b, const char *dir)
{
	for (size_t i = 0; i < b->home_dirs.n; i++)
		if (strcasecmp(b->home_dirs.v[i], dir) == 0)
			return true;
	return false;
}

#define STX_WANT (STATX_TYPE | STATX_INO | STATX_BTIME)

/* The parent and start time (clock ticks since the boot) of process p: 0, or -1. */
static int proc_stat(pid_t p, pid_t *ppid, unsigned long long *start)
{
	char buf[1024];
	const char *e = linux_proc_stat(p, buf, sizeof(buf));
	int ip;

	if (!e)
		return -1;
	if (sscanf(
		e + 1,
		" %*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
		&ip, start) != 2)
		return -1;
	*ppid = ip;
	return 0;
}

/* Since when a file born beside a kept entry is the host's, for the caller tid: the
 * broker's start; in a session, the start of the caller's call (the spawner's child its
 * process descends from: a thread's own start is not its process's, review 29; no
 * process can make itself the spawner's child, CLONE_PARENT being refused), when later.
 * A process that left its call (reparented to init) has the session's. */
static struct timespec since(const struct linux_broker *b, pid_t tid)
{
	struct timespec t = b->home_start;
	pid_t sp = spawner_pid, p = sp > 0 ? linux_broker_tgid(tid) : -1, pp;
	unsigned long long st;
	long hz = sysconf(_SC_CLK_TCK);

	for (int depth = 0; sp > 0 && hz > 0 && depth < 256 && proc_stat(p, &pp, &st) == 0;
	     depth++) {
		if (pp != sp) {
			if (pp <= 1)
				break;
			p = pp;
			continue;
		}
		st++; /* its start is counted in clock ticks, cut short: the tick it began in */
		struct timespec c = {b->boot_rt.tv_sec + (time_t)(st / (unsigned long long)hz),
				     b->boot_rt.tv_nsec +
					 (long)(st % (unsigned long long)hz) * (1000000000L / hz)};
		if (c.tv_nsec >= 1000000000L) {
			c.tv_nsec -= 1000000000L;
			c.tv_sec++;
		}
		if (c.tv_sec > t.tv_sec || (c.tv_sec == t.tv_sec && c.tv_nsec > t.tv_nsec))
			t = c;
		break;
	}
	return t;
}

static bool fresh_file(struct linux_broker *b, pid_t tid, const struct statx *sx)
{
	struct timespec t;
	bool own;

	if (!S_ISREG(sx->stx_mode) || !(sx->stx_mask & STATX_BTIME))
		return false; /* no birth time on this file system: not told (docs) */
	t = since(b, tid);
	if (sx->stx_btime.tv_sec < t.tv_sec ||
	    (sx->stx_btime.tv_sec == t.tv_sec && sx->stx_btime.tv_nsec < (uint32_t)t.tv_nsec))
		return false; /* there before the run (the call) */
	struct broker_inode k = key_of(sx);

	pthread_mutex_lock(&own_lock);
	own = own_has(b->own, &k);
	pthread_mutex_unlock(&own_lock);
	return !own;
}

/* The file sx (rc: its statx's) in the directory at path dir: the host's, made there
 * during the run beside a kept entry? */
static bool fresh(struct linux_broker *b, pid_t tid, const char *dir, int rc,
		  const struct statx *sx)
{
	if (!home_dir(b, dir))
		return false;
	if (rc < 0)
		return errno != ENOENT; /* cannot tell: refuse (gone: nothing to judge) */
	return fresh_file(b, tid, sx);
}

bool linux_broker_fresh_opened(struct linux_broker *b, pid_t tid, int fd)
{
	char p[PATH_MAX], dir[PATH_MAX];
	struct statx sx;
	int rc;

	/* Where the file is, not the directory it was named in: one reopened through
	 * /proc/self/fd is judged where it lies. */
	if (linux_broker_fd_path(fd, p, sizeof(p)) < 0 || !dir_of(p, dir, sizeof(dir)))
		return false;
	rc = statx(fd, "", AT_EMPTY_PATH, STX_WANT, &sx);
	return fresh(b, tid, dir, rc, &sx);
}

bool linux_broker_host_fresh_at(struct linux_broker *b, pid_t tid, int dfd, const char *name)
{
	char dir[PATH_MAX];
	struct statx sx;
	size_t k = strlen(name);

	if (k > 0 && name[k - 1] == '/')
		return false; /* "x/": a directory (files are judged) */
	if (linux_broker_fd_path(dfd, dir, sizeof(dir)) < 0)
		return false;
	return fresh(b, tid, dir, statx(dfd, name, AT_SYMLINK_NOFOLLOW, STX_WANT, &sx), &sx);
}

static void own_statx(struct linux_broker *b, int rc, const struct statx *sx)
{
	struct broker_inode k;

	if (rc < 0 || !S_ISREG(sx->stx_mode) || !(sx->stx_mask & STATX_BTIME))
		return; /* (no birth time: no file is judged fresh there) */
	k = key_of(sx);
	pthread_mutex_lock(&own_lock);
	own_add(b->own, &k);
	pthread_mutex_unlock(&own_lock);
}

void linux_broker_note_own_opened(struct linux_broker *b, int fd)
{
	char p[PATH_MAX], dir[PATH_MAX];
	struct statx sx;

	if (linux_broker_fd_path(fd, p, sizeof(p)) == 0 && dir_of(p, dir, sizeof(dir)) &&
	    home_dir(b, dir))
		own_statx(b, statx(fd, "", AT_EMPTY_PATH, STX_WANT, &sx), &sx);
}

void linux_broker_note_own_at(struct linux_broker *b, int dfd, const char *name)
{
	char dir[PATH_MAX];
	struct statx sx;

	if (linux_broker_fd_path(dfd, dir, sizeof(dir)) == 0 && home_dir(b, dir))
		own_statx(b, statx(dfd, name, AT_SYMLINK_NOFOLLOW, STX_WANT, &sx), &sx);
}

bool linux_broker_at_kept(const struct linux_broker *b, int fd, const char *name)
{
	char p[PATH_MAX];
	int rc = linux_broker_name_path(fd, name, p, sizeof(p));

	if (rc != 0) /* too long: cannot tell, refuse; no name (an O_TMPFILE's has one) */
		return rc < 0;
	return linux_broker_gone_path(b, p) || linux_broker_path_kept(b, p);
}

/* Is base + "." the start of name (case folded)? */
static bool named_beside(const char *name, const char *entry)
{
	const char *base = strrchr(entry, '/');
	size_t k;

	base = base ? base + 1 : entry;
	k = strlen(base);
	return k > 0 && strncasecmp(name, base, k) == 0 && name[k] == '.';
}

bool linux_broker_beside_kept(const struct linux_broker *b, const char *path)
{
	char dir[PATH_MAX], d[PATH_MAX];
	const char *name = strrchr(path, '/');

	if (!name || !dir_of(path, dir, sizeof(dir)) || !home_dir(b, dir))
		return false;
	name++;
	/* the home set's entries (and the links that name them) */
	const struct linux_paths *l = &b->home_names;
	for (size_t i = 0; i < l->n; i++)
		if (dir_of(l->v[i], d, sizeof(d)) && strcasecmp(d, dir) == 0 &&
		    named_beside(name, l->v[i]))
			return true;
	for (size_t i = 0; i < b->n_pins; i++)
		if (b->pins[i].full && !b->pins[i].prefix &&
		    dir_of(b->pins[i].full, d, sizeof(d)) && strcasecmp(d, dir) == 0 &&
		    named_beside(name, b->pins[i].full))
			return true;
	return false;
}

bool linux_broker_home_dir_fd(const struct linux_broker *b, int fd)
{
	char p[PATH_MAX];

	return linux_broker_fd_path(fd, p, sizeof(p)) == 0 && home_dir(b, p);
}
