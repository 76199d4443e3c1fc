/* What a session must not miss: the files a fresh launch would mask or show as a
 * sanitized copy now, and those it would make read-only (the home persistence set:
 * ~/.bashrc, ~/.gitconfig... where the command could write: an editor's save on the
 * host replaces the file, the kernel drops the session's read-only mount with the old
 * one, and the command could write the new one, read by the user's next shell; the
 * guards in git directories are held by the broker whatever the mounts), and so are
 * halo-run's binary and policy files in a writable tree (a policy file saved again
 * on the host was the command's to loosen for the next launch). A session's mounts are
 * made once, at its start; a protected file that appears later (a .env written on the host, a
 * ~/.npmrc created, a masked file replaced: the kernel drops a mount whose file is unlinked) is
 * masked by the next fresh launch but not in the running session. Each call walks the workspace as
 * a launch would (the index makes that cheap) and its list, each file with its identity, is
 * compared with the session's: a file the session does not hold is refused (session/session_sup.c).
 * The identity is the device and the file handle (name_to_handle_at: the inode and its generation,
 * so that a file deleted and made again under a reused inode number differs), else the inode and
 * its birth time.
 *
 * Host sockets count too (a gpg-agent or a container engine started after the
 * session is reachable in it otherwise), except halo-run's own: an index watcher's
 * (one starts for every tree halo-run walks, anywhere, under whichever HOME the
 * launch had, and answers only "what changed"; told by its name and its listener,
 * this very binary: linux_scan_own_socket) and a session's control socket (another session may
 * start at any time in a control directory that lies in the workspace; it serves only callers
 * outside every sandbox). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "linux/linux_int.h"
#include "linux/scan_int.h"
#include "netns/netns.h"

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Hex of the file handle, or of the inode and birth time; "-" when neither. */
static void identity(const char *path, const struct statx *sx, char *out, size_t n)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + 64];
	} u;
	int mnt;
	size_t o = 0;

	u.fh.handle_bytes = 64;
	if (name_to_handle_at(AT_FDCWD, path, &u.fh, &mnt, 0) == 0 && u.fh.handle_bytes <= 64 &&
	    2 * u.fh.handle_bytes + 1 <= n) {
		for (unsigned i = 0; i < u.fh.handle_bytes; i++)
			o += (size_t)snprintf(out + o, n - o, "%02x",
					      (unsigned char)u.fh.f_handle[i]);
		return;
	}
	if (sx->stx_mask & STATX_BTIME)
		snprintf(out, n, "%llx%llx%x", (unsigned long long)sx->stx_ino,
			 (unsigned long long)sx->stx_btime.tv_sec, sx->stx_btime.tv_nsec);
	else
		snprintf(out, n, "%llx", (unsigned long long)sx->stx_ino);
}

/* A socket of halo-run's own, right in dir: an index watcher's, or a session's control
 * socket (another session may start at any time; each is masked inside or its peers
 * checked, see linux/scan.c add_session_dir). */
static bool own_socket(const struct statx *sx, const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return S_ISSOCK(sx->stx_mode) && n && strncmp(path, dir, n) == 0 && path[n] == '/' &&
	       !strchr(path + n + 1, '/');
}

struct own_dirs {
	char index[4200], session[4200];
};

/* path's entry, "DEV:ID:PATH" ("-:-:PATH" when it is not there), in *out (malloc'd);
 * 0, 1 for one of halo-run's own sockets (no entry), or -ENOMEM. */
static int entry(const char *path, const struct own_dirs *own, const char *mark, struct statx *sx,
		 char **out)
{
	char id[160];
	int w;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_INO | STATX_BTIME | STATX_TYPE, sx) ==
	    0) {
		if (own && (own_socket(sx, path, own->index) || own_socket(sx, path, own->session)))
			return 1;
		identity(path, sx, id, sizeof(id));
		if (mark) /* said as such when it changes (session/sup_calls.c) */
			strcat(id, mark);
		else if (S_ISSOCK(sx->stx_mode)) /* one gone ends nothing (ibid.) */
			strcat(id, LINUX_SESSION_SOCKET);
		w = asprintf(out, "%llu:%s:%s",
			     (unsigned long long)makedev(sx->stx_dev_major, sx->stx_dev_minor), id,
			     path);
	} else {
		sx->stx_mode = 0;
		w = asprintf(out, "-:-:%s", path);
	}
	return w < 0 ? -ENOMEM : 0;
}

/* The same file still, by a second look: equal entries name one inode (the handle
 * holds its generation), so nothing was swapped in between. */
static bool same_entry(const char *path, const char *want, struct statx *sx)
{
	char *now = NULL;
	bool same = entry(path, NULL, NULL, sx, &now) == 0 && strcmp(now, want) == 0;

	free(now);
	return same;
}

/* Where the socket table's 32-bit inode names a file alone: ext2, 3 and 4 have no
 * larger inode numbers, and their files' device is the superblock's. Elsewhere (XFS
 * with inode64, btrfs subvolumes, overlayfs) a socket of the sandbox could match a host
 * socket's inode cut to 32 bits, or never match at all: such a socket is refused. */
static bool inodes_fit(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 && sf.f_type == EXT4_SUPER_MAGIC;
}

bool linux_session_own_socket(const struct netns_unix_files *bound, const char *want)
{
	const char *path = strchr(want, ':');
	struct statx a, again;

	if (!bound || !bound->n || !path || !(path = strchr(path + 1, ':')) || *++path != '/')
		return false;
	/* The entry is this file now, a socket, on a file system whose inodes the table
	 * names whole; bound in the session's own namespace; and still the same file
	 * after that was looked up. */
	return same_entry(path, want, &a) && S_ISSOCK(a.stx_mode) && inodes_fit(path) &&
	       netns_unix_files_has(bound, a.stx_dev_major, a.stx_dev_minor, a.stx_ino) &&
	       same_entry(path, want, &again);
}

static int add(char ***v, size_t *n, const char *path, const struct own_dirs *own, const char *mark)
{
	struct statx sx;
	char *s, **g;
	int rc = entry(path, own, mark, &sx, &s);

	if (rc != 0)
		return rc < 0 ? rc : 0;
	if (!(g = realloc(*v, (*n + 2) * sizeof(char *)))) {
		free(s);
		return -ENOMEM;
	}
	*v = g;
	(*v)[(*n)++] = s;
	(*v)[*n] = NULL;
	return 0;
}

void linux_session_protected_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* A directory named halo-run/index that is not one of this launch's index places:
 * a fresh launch masks it whole and the walk does not enter it, so the session holds
 * it as one entry, and one made since its start is a new protected directory (review
 * 17: a command made halo-run/index in the workspace and linked tmp/sockets to it; the
 * socket a host server bound there later went into no call's list, and every later
 * call reached it). This launch's own places are written by halo-run on the host. */
static int other_index_places(const struct linux_launch *l, const struct linux_scan *s, char ***out,
			      size_t *n, const struct own_dirs *own)
{
	int rc = 0;

	/* (one in a tree the command writes: elsewhere it cannot make one; another state
	 * home's, its watcher's socket seen, comes and goes with that watcher) */
	for (size_t i = 0; i < s->own.n && rc == 0; i++)
		if (linux_index_place_named(s->own.v[i]) &&
		    linux_paths_beneath_any(s->own.v[i], &s->writable) &&
		    !linux_scan_own_index_place(l, s->own.v[i]))
			rc = add(out, n, s->own.v[i], own, LINUX_SESSION_PLACE);
	return rc;
}

int linux_session_protected(const struct linux_launch *l, char ***out, size_t *n,
			    struct halo_err *e)
{
	struct linux_scan *s = calloc(1, sizeof(*s));
	const struct linux_paths *lists[4];
	struct own_dirs own = {"", ""};
	char *index_dir = own.index;
	int rc;

	*out = NULL;
	*n = 0;
	if (!s)
		return -ENOMEM;
	if ((rc = linux_scan_call(l, s, e)) < 0) {
		free(s);
		return rc;
	}
	/* A walk that stopped short cannot say what is not there: a protected file made
	 * beyond where it stopped would be missed (a fresh launch refuses it the same
	 * way, or says it runs without those masks: failIfUnavailable false; a session
	 * that cannot look cannot tell, whatever the policy accepts). */
	if (s->truncated || s->sockets_truncated) {
		char shown[4 * (PATH_MAX + 128) + 1];
		if (s->sockets_truncated)
			halo_err_set(e,
				     "it found more than %d host unix sockets to mask; a new one "
				     "could not be told apart",
				     LINUX_SCAN_MAX_SOCKETS);
		else if (s->uncovered)
			halo_err_set(e,
				     "it cannot cover %s, so a protected file made there since the "
				     "session started would be missed; move or rename it, or run "
				     "without --session",
				     policy_printable(s->uncovered, shown, sizeof(shown)));
		else
			halo_err_set(
			    e, "it stopped at %zu entries before covering every protected path",
			    s->entries_scanned);
		linux_scan_free(s);
		free(s);
		return -E2BIG;
	}
	if (l->session_dir) {
		char *real = realpath(l->session_dir, NULL);
		if (real && strlen(real) < sizeof(own.session))
			strcpy(own.session, real);
		free(real);
	}
	if (linux_index_place(l->env_home ? l->env_home : l->pw_home, index_dir,
			      sizeof(own.index)) < 0)
		index_dir[0] = '\0';
	else { /* the walk's paths are resolved: compare like with like */
		char *real = realpath(index_dir, NULL);
		if (real && strlen(real) < sizeof(own.index))
			strcpy(index_dir, real);
		free(real);
	}
	lists[0] = &s->masked;
	lists[1] = &s->sanitized;
	lists[2] = &s->guarded;
	lists[3] = &s->readonly_extra; /* halo-run and its policy files in a writable tree */
	for (size_t k = 0; k < 4 && rc == 0; k++)
		for (size_t i = 0; i < lists[k]->n && rc == 0; i++)
			if (!linux_paths_beneath_any(lists[k]->v[i], &s->own) &&
			    (k < 2 || !linux_paths_beneath_any(lists[k]->v[i], &s->gitdirs)))
				rc = add(out, n, lists[k]->v[i], &own,
					 k >= 2 ? LINUX_SESSION_GUARDED : NULL);
	if (rc == 0)
		rc = other_index_places(l, s, out, n, &own);
	linux_scan_free(s);
	free(s);
	if (rc < 0) {
		linux_session_protected_free(*out, *n);
		*out = NULL;
		*n = 0;
		halo_err_set(e, "out of memory");
		return rc;
	}
	if (*n)
		qsort(*out, *n, sizeof(char *), cmp);
	return 0;
}

static int keep_path(char ***v, size_t *n, const char *path)
{
	char *d = strdup(path), **g;

	if (!d || !(g = realloc(*v, (*n + 2) * sizeof(char *)))) {
		free(d);
		return -ENOMEM;
	}
	*v = g;
	(*v)[(*n)++] = d;
	(*v)[*n] = NULL;
	return 0;
}

static int keep_all(char ***v, size_t *n, const struct linux_paths *from)
{
	int rc = 0;

	for (size_t i = 0; i < from->n && rc == 0; i++)
		rc = keep_path(v, n, from->v[i]);
	return rc;
}

void linux_masked_free(struct linux_masked *m)
{
	linux_session_protected_free(m->v, m->n);
	linux_session_protected_free(m->roots, m->n_roots);
	memset(m, 0, sizeof(*m));
}

int linux_masked_list(const struct linux_launch *l, struct linux_masked *m, struct halo_err *e)
{
	struct linux_scan *s = calloc(1, sizeof(*s));
	int rc;

	memset(m, 0, sizeof(*m));
	if (!s)
		return -ENOMEM;
	if ((rc = linux_scan_call(l, s, e)) < 0) {
		free(s);
		return rc;
	}
	/* A walk that stopped short (failIfUnavailable: false lets a launch go on)
	 * cannot say what is not there. */
	if (s->truncated)
		rc = -E2BIG;
	if (rc == 0)
		rc = keep_path(&m->roots, &m->n_roots, l->workspace);
	for (size_t i = 0; i < s->writable.n && rc == 0; i++)
		if (!linux_paths_beneath_any(s->writable.v[i], &s->unwalked))
			rc = keep_path(&m->roots, &m->n_roots, s->writable.v[i]);
	if (rc == 0)
		rc = keep_all(&m->v, &m->n, &s->masked);
	if (rc == 0) /* the original a host reader gets is the unsanitized one */
		rc = keep_all(&m->v, &m->n, &s->sanitized);
	linux_scan_free(s);
	free(s);
	if (rc < 0) {
		linux_masked_free(m);
		if (rc == -ENOMEM)
			halo_err_set(e, "out of memory");
	}
	return rc;
}
