/* The scan's memo of names (struct linux_lstat_memo): what resolving the floor, the home
 * persistence set of both homes, the guard names and halo-run's own places meets is
 * asked of the kernel once per scan. The scan is one snapshot of the host's names; a
 * directory the scan makes itself forgets the memo (linux_scan_memo_free).
 *
 * A directory asked about many times (a home: every floor entry and persistence name
 * is a name in it) is listed once instead, and a name the listing does not hold is
 * missing without a question. Only where a listing tells exactly what a lookup would:
 * local file systems whose readdir shows every name (ext4, xfs, btrfs, tmpfs,
 * overlayfs), a directory the caller may search (else a lookup fails EACCES, not
 * ENOENT), ASCII names only on both sides, compared without case (a case-folding
 * directory finds ".SSH" for ".ssh"; a name that is there in any case is asked for). */
#include <dirent.h>
#include <linux/openat2.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/scan_int.h"

/* One name as the kernel answered lstat (and readlink) about it. */
struct linux_lstat_ent {
	uint64_t hash;
	char *path;
	int err;      /* 0, or the errno of lstat */
	char *target; /* a symlink's target, or NULL */
};

/* A directory's names, once it was asked about LIST_AFTER times. */
struct linux_dir_list {
	uint64_t hash;
	char *path;
	unsigned asked;
	enum { DIR_COUNTING, DIR_LISTED, DIR_UNUSABLE, DIR_ABSENT } state;
	char *names; /* NUL-separated */
	size_t len;
};

#define LIST_AFTER     2     /* a listing costs six calls; a home is asked dozens */
#define LIST_BUF       32768 /* getdents64 buffer; at most LIST_READS of them */
#define LIST_READS     2
#define LIST_NAMES_MAX (64 * 1024)

static uint64_t path_hash(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
	return h;
}

static bool ascii(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] >= 0x80)
			return false;
	return true;
}

/* File systems whose listing holds every name a lookup finds. */
static bool listing_exact(long type)
{
	static const long ok[] = {0xEF53 /* ext2/3/4 */, 0x58465342 /* xfs */,
				  0x9123683E /* btrfs */, 0x01021994 /* tmpfs */,
				  0x794c7630 /* overlayfs */};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (type == ok[i])
			return true;
	return false;
}

/* Read dir's names into d (state LISTED), or mark it UNUSABLE, or ABSENT when it does
 * not exist: a lookup of any name below fails ENOENT as well (a home that is not there,
 * /nonexistent, is asked about for every floor entry). Only with no symlink on the
 * way, in its place included: anything else is asked name by name. */
static void list_dir(struct linux_lstat_memo *m, struct linux_dir_list *d)
{
	char *buf, *names;
	size_t len = 0;
	struct statfs sf;
	/* No symlink anywhere on the way (review 7): a verdict from here is "missing, with
	 * no link on the way" (add_mask's -1), as resolve_without_links would give it. A
	 * link to a directory that does not exist yet (~/.vault -> ws/vault) would list as
	 * absent, and the names below it go unguarded where the link leads. ELOOP, or no
	 * openat2: unusable, each name asked by itself. */
	struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS};
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, d->path, &how, sizeof(how));
	bool done = false;

	d->state = fd < 0 && errno == ENOENT ? DIR_ABSENT : DIR_UNUSABLE;
	if (!m->list_buf)
		m->list_buf = malloc(LIST_BUF + LIST_NAMES_MAX);
	buf = m->list_buf;
	names = buf ? buf + LIST_BUF : NULL;
	if (fd < 0 || fstatfs(fd, &sf) < 0 || !listing_exact((long)sf.f_type) ||
	    faccessat(AT_FDCWD, d->path, X_OK, AT_EACCESS) < 0 || !buf)
		goto out;
	for (int r = 0; r < LIST_READS && !done; r++) {
		long n = syscall(SYS_getdents64, fd, buf, LIST_BUF);
		if (n < 0)
			goto out;
		done = n == 0;
		for (long o = 0; o < n;) {
			struct dirent64 *de = (struct dirent64 *)(buf + o);
			size_t nl = strlen(de->d_name);
			o += de->d_reclen;
			if (!ascii(de->d_name, nl) || len + nl + 1 > LIST_NAMES_MAX)
				goto out;
			memcpy(names + len, de->d_name, nl + 1);
			len += nl + 1;
		}
	}
	if (!done) { /* one more read must say the end */
		long n = syscall(SYS_getdents64, fd, buf, LIST_BUF);
		if (n != 0)
			goto out;
	}
	/* (kept as long as they are: a home's few hundred bytes, not the scratch's 64 KiB) */
	if ((d->names = malloc(len ? len : 1))) {
		memcpy(d->names, names, len);
		d->len = len;
		d->state = DIR_LISTED;
	} else
		d->state = DIR_UNUSABLE;
out:
	if (fd >= 0)
		close(fd);
}

static bool listed_any_case(const struct linux_dir_list *d, const char *name)
{
	for (size_t o = 0; o < d->len; o += strlen(d->names + o) + 1)
		if (strcasecmp(d->names + o, name) == 0)
			return true;
	return false;
}

static struct linux_dir_list *dir_find(struct linux_lstat_memo *m, const char *dir, size_t dn,
				       uint64_t h)
{
	for (size_t i = 0; i < m->n_dirs; i++)
		if (m->dirs[i].hash == h && strlen(m->dirs[i].path) == dn &&
		    memcmp(m->dirs[i].path, dir, dn) == 0)
			return &m->dirs[i];
	return NULL;
}

/* The directory record of `dir` (dn bytes), made when new; NULL without memory. */
static struct linux_dir_list *dir_of(struct linux_lstat_memo *m, const char *dir, size_t dn)
{
	uint64_t h = path_hash(dir, dn);
	struct linux_dir_list *d = dir_find(m, dir, dn, h);

	if (d)
		return d;
	if (m->n_dirs == m->cap_dirs) {
		size_t cap = m->cap_dirs ? 2 * m->cap_dirs : 16;
		struct linux_dir_list *v = realloc(m->dirs, cap * sizeof(*v));
		if (!v)
			return NULL;
		m->dirs = v;
		m->cap_dirs = cap;
	}
	d = &m->dirs[m->n_dirs];
	memset(d, 0, sizeof(*d));
	if (!(d->path = strndup(dir, dn)))
		return NULL;
	d->hash = h;
	m->n_dirs++;
	return d;
}

/* What path's directory listing says of it: 1 surely missing, 0 surely there (in some
 * case), -1 unknown. Asked (ask), the directory is counted, and listed on its
 * LIST_AFTER-th question; otherwise only a listing already made answers. */
static int listed_state(struct linux_lstat_memo *m, const char *path, bool ask)
{
	const char *sl = strrchr(path, '/'), *name = sl ? sl + 1 : path;
	size_t nl = strlen(name);
	struct linux_dir_list *d;

	/* Not "/": its few names are nearly all there, a listing would seldom save one. */
	if (!sl || sl == path || nl == 0 || nl > NAME_MAX || !ascii(name, nl))
		return -1;
	d = ask ? dir_of(m, path, (size_t)(sl - path))
		: dir_find(m, path, (size_t)(sl - path), path_hash(path, (size_t)(sl - path)));
	if (!d)
		return -1;
	if (ask && d->state == DIR_COUNTING && ++d->asked >= LIST_AFTER)
		list_dir(m, d);
	if (d->state == DIR_ABSENT)
		return 1;
	if (d->state != DIR_LISTED)
		return -1;
	return listed_any_case(d, name) ? 0 : 1;
}

int linux_scan_memo_names(struct linux_scan *s, const char *dir, const char *prefix,
			  struct linux_paths *out)
{
	struct linux_dir_list *d = dir_of(&s->memo, dir, strlen(dir));
	struct dirent *de;
	DIR *dd;

	if (d && d->state == DIR_COUNTING)
		list_dir(&s->memo, d);
	if (d && d->state == DIR_LISTED) {
		for (size_t o = 0; o < d->len; o += strlen(d->names + o) + 1)
			if (policy_home_prefix_name(d->names + o, prefix))
				linux_paths_add(out, d->names + o);
		return 0;
	}
	/* (not one the memo can list: names not ASCII, a file system whose listing may
	 * lack names, one past the memo's bounds) */
	if (!(dd = opendir(dir)))
		return -errno;
	while ((de = readdir(dd)))
		if (policy_home_prefix_name(de->d_name, prefix))
			linux_paths_add(out, de->d_name);
	closedir(dd);
	return 0;
}

static bool listed_missing(struct linux_lstat_memo *m, const char *path)
{
	return listed_state(m, path, true) == 1;
}

/* Index entry i (of v) by its hash; false when the index cannot grow (out of memory:
 * keep fails as when v cannot). */
static bool index_put(struct linux_lstat_memo *m, size_t i)
{
	if (2 * (m->n + 1) > m->n_slots) {
		size_t n_slots = m->n_slots ? 2 * m->n_slots : 256;
		uint32_t *g = calloc(n_slots, sizeof(*g));
		if (!g || i >= UINT32_MAX) {
			free(g);
			return false;
		}
		free(m->slots);
		m->slots = g;
		m->n_slots = n_slots;
		for (size_t k = 0; k < i; k++) /* (i itself is placed below) */
			for (size_t j = m->v[k].hash & (n_slots - 1);; j = (j + 1) & (n_slots - 1))
				if (!g[j]) {
					g[j] = (uint32_t)k + 1;
					break;
				}
	}
	for (size_t j = m->v[i].hash & (m->n_slots - 1);; j = (j + 1) & (m->n_slots - 1))
		if (!m->slots[j]) {
			m->slots[j] = (uint32_t)i + 1;
			return true;
		}
}

/* Keep what was learnt about path; -ENOMEM when it cannot be kept. */
static int keep(struct linux_lstat_memo *m, struct linux_lstat_ent *e, const char *path)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		struct linux_lstat_ent *v = realloc(m->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		m->v = v;
		m->cap = cap;
	}
	if (!(e->path = strdup(path)))
		return -ENOMEM;
	m->v[m->n] = *e;
	if (!index_put(m, m->n)) {
		free(e->path);
		return -ENOMEM;
	}
	m->n++;
	return 0;
}

static bool memo_missing(struct linux_scan *s, const char *path, int rounds)
{
	char sub[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(sub) || path[0] != '/')
		return false;
	/* From the name up: the first listing that knows the name answers (a lookup
	 * fails ENOENT wherever a component is missing), in two rounds. First only the
	 * listings made already, for a missing name (~/Library, once ~ is listed, is not
	 * opened to learn that its names are missing too). Then the questions that count
	 * towards new listings, up to the first listed directory: a home deep under
	 * /var/tmp does not get /var and /var/tmp listed on its way. "/" itself is never
	 * listed for this. */
	for (int ask = 0; ask < rounds; ask++) {
		memcpy(sub, path, n + 1);
		for (char *sl = strrchr(sub, '/'); sl && sl != sub; sl = strrchr(sub, '/')) {
			int st = listed_state(&s->memo, sub, ask);
			if (st == 1)
				return true;
			if (st == 0 && ask)
				return false;
			if (st == 0)
				break;
			*sl = '\0';
		}
	}
	return false;
}

bool linux_scan_memo_missing(struct linux_scan *s, const char *path)
{
	return memo_missing(s, path, 2);
}

bool linux_scan_memo_known_missing(struct linux_scan *s, const char *path)
{
	return memo_missing(s, path, 1);
}

static struct linux_lstat_ent *memo_find(struct linux_lstat_memo *m, const char *path, size_t n)
{
	uint64_t h = path_hash(path, n);

	for (size_t j = m->n_slots ? h & (m->n_slots - 1) : 0; m->n_slots && m->slots[j];
	     j = (j + 1) & (m->n_slots - 1)) {
		struct linux_lstat_ent *e = &m->v[m->slots[j] - 1];
		if (e->hash == h && strncmp(e->path, path, n) == 0 && e->path[n] == '\0')
			return e;
	}
	return NULL;
}

bool linux_scan_memo_plain_path(struct linux_scan *s, const char *path)
{
	struct linux_lstat_memo *m = &s->memo;
	size_t n = strlen(path), unknown = 0;

	if (n >= PATH_MAX || path[0] != '/')
		return false;
	for (size_t k = 1; k <= n; k++)
		if ((k == n || path[k] == '/') && !memo_find(m, path, k))
			unknown++;
	/* One lookup of the whole path, and its close, against one lstat per name. */
	if (unknown < 3)
		return false;
	if (!linux_scan_no_links(path))
		return false; /* a link, a missing name, no openat2: asked one name at a time */
	/* Every name on the way is there and none is a link: what lstat would say. */
	for (size_t k = 1; k <= n; k++) {
		struct linux_lstat_ent e = {.hash = path_hash(path, k)};
		char sub[PATH_MAX];
		if ((k < n && path[k] != '/') || memo_find(m, path, k))
			continue;
		memcpy(sub, path, k);
		sub[k] = '\0';
		if (keep(m, &e, sub) < 0)
			return false;
	}
	return true;
}

static int memo_lstat(struct linux_lstat_memo *m, const char *path, const char **target)
{
	uint64_t h = path_hash(path, strlen(path));
	struct linux_lstat_ent e = {.hash = h};
	char buf[PATH_MAX];
	struct stat st;

	const struct linux_lstat_ent *known = memo_find(m, path, strlen(path));

	if (known) {
		*target = known->target;
		return known->err ? -known->err : known->target ? 1 : 0;
	}
	if (listed_missing(m, path)) {
		e.err = ENOENT;
	} else if (lstat(path, &st) < 0) {
		e.err = errno;
	} else if (S_ISLNK(st.st_mode)) {
		ssize_t tl = readlink(path, buf, sizeof(buf) - 1);
		if (tl < 0)
			e.err = errno;
		else
			buf[tl] = '\0';
		if (tl >= 0 && !(e.target = strdup(buf)))
			return -ENOMEM;
	}
	if (keep(m, &e, path) < 0) {
		free(e.target);
		return -ENOMEM;
	}
	*target = e.target;
	return e.err ? -e.err : e.target ? 1 : 0;
}

int linux_scan_memo_lstat(struct linux_scan *s, const char *path, const char **target)
{
	return memo_lstat(&s->memo, path, target);
}

static void memo_release(struct linux_lstat_memo *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].path);
		free(m->v[i].target);
	}
	for (size_t i = 0; i < m->n_dirs; i++) {
		free(m->dirs[i].path);
		free(m->dirs[i].names);
	}
	free(m->v);
	free(m->dirs);
	free(m->slots);
	free(m->list_buf);
	memset(m, 0, sizeof(*m));
}

void linux_scan_memo_free(struct linux_scan *s)
{
	memo_release(&s->memo);
}

struct linux_lstat_memo *linux_lstat_memo_new(void)
{
	return calloc(1, sizeof(struct linux_lstat_memo));
}

void linux_lstat_memo_free(struct linux_lstat_memo *m)
{
	if (m)
		memo_release(m);
	free(m);
}

int linux_lstat_memo_link(struct linux_lstat_memo *m, const char *path, char *buf, size_t n)
{
	const char *target = NULL;
	int rc = memo_lstat(m, path, &target);

	if (rc == 1 && snprintf(buf, n, "%s", target) >= (int)n)
		return -ENAMETOOLONG;
	return rc;
}
