/* The mounts of a session's sandbox, as its init sees them (/proc/PID/mountinfo):
 * "ID PATH" each, sorted. A mask or read-only mount a session made at its start can
 * go while the file it covers keeps its identity, so the walk for protected files
 * alone cannot tell (review: the host renamed ~/.config away, made it again and moved
 * the files over: the masks went with the old directory, every file kept its handle;
 * a file unlinked and hard-linked back the same). A mount that is gone from the list,
 * or now at another path, is a layer the session no longer has
 * (session/sup_calls.c ends the session then). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/launch_int.h"
#include "linux/scan_int.h"

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "ID PATH" of one mountinfo line (the mount ID, the mount point as the kernel
 * escapes it), or NULL. */
static char *line_entry(const char *line)
{
	unsigned long id;
	int at = 0;
	char *e;

	if (sscanf(line, "%lu %*u %*s %*s %n", &id, &at) < 1 || at <= 0)
		return NULL;
	const char *p = line + at;
	size_t len = strcspn(p, " \n");
	if (len == 0 || asprintf(&e, "%lu %.*s", id, (int)len, p) < 0)
		return NULL;
	return e;
}

int linux_session_mounts(const struct linux_sandbox *sb, char ***out, size_t *n)
{
	char path[64], *line = NULL;
	size_t cap = 0, lines = 0;
	FILE *f;
	int rc = 0;

	*out = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)sb->child);
	if (!(f = fopen(path, "re")))
		return -errno;
	/* procfs gives stdio no block size: 1 KiB reads, each of which has the kernel walk
	 * the mount list to its place again. One large buffer reads it in one or two. */
	char *buf = malloc(1 << 16);
	if (buf)
		setvbuf(f, buf, _IOFBF, 1 << 16);
	while (rc == 0 && getline(&line, &cap, f) > 0) {
		char *e = line_entry(line), **g;
		if (!e)
			continue;
		if (++lines > LINUX_SESSION_MAX_MOUNTS ||
		    !(g = realloc(*out, (*n + 1) * sizeof(char *)))) {
			free(e);
			rc = lines > LINUX_SESSION_MAX_MOUNTS ? -E2BIG : -ENOMEM;
			break;
		}
		*out = g;
		(*out)[(*n)++] = e;
	}
	free(line);
	fclose(f);
	free(buf);
	if (rc == 0 && *n == 0)
		rc = -ENOENT; /* init gone: no sandbox to judge */
	if (rc < 0) {
		linux_session_protected_free(*out, *n);
		*out = NULL;
		*n = 0;
		return rc;
	}
	qsort(*out, *n, sizeof(char *), cmp);
	return 0;
}

/* In a git directory named .git: its guards are the broker's, whatever the mounts
 * (git renames config.lock over config: a host `git config` ends nothing). */
static bool in_dotgit(const char *entry)
{
	static const char *const guards[] = {"hooks", "config", "config.worktree", "commondir"};
	const char *last = NULL, *base = strrchr(entry, '/');

	for (const char *p = strstr(entry, "/.git"); p; p = strstr(p + 1, "/.git"))
		if (p[5] == '/' || p[5] == '\0')
			last = p;
	if (!last || !base)
		return false;
	/* the git directory itself, or a guard of one (review 14: a workspace beneath a
	 * directory named .git had every lost mask excused, its .env's too) */
	if (last[5] == '\0')
		return true;
	for (size_t i = 0; i < sizeof(guards) / sizeof(guards[0]); i++)
		if (strcmp(base + 1, guards[i]) == 0)
			return true;
	/* a submodule's or a linked work tree's git directory: .git/modules/NAME... */
	const char *rest = last + 6;
	if (strncmp(rest, "modules/", 8) != 0 && strncmp(rest, "worktrees/", 10) != 0)
		return false;
	for (const char *q = rest; (q = strchr(q, '/')); q++)
		if (q[1] == '.') /* no hidden name (.env) below */
			return false;
	return true;
}

/* A host socket's mask: gone with the socket when the host removed it (a server that
 * stopped), which leaves nothing to hide; one bound there again is a new protected
 * socket, which the call's walk masks in turn (review 9: a host service restarting
 * ended every session that had masked its socket). Another launch's index place,
 * masked whole, the same: removed on the host, nothing of it is left to read, and one
 * made again in a writable tree is a new entry, which ends the session (its watcher
 * ending, or a test's state home removed, ended sessions that saw it). Not this
 * launch's own (review 18: re-made by the next launch, it was the session's to read
 * and write). */
static bool gone_with_its_file(const struct linux_launch *l, const char *entry, char *const *prot,
			       size_t n_prot)
{
	const char *esc = strchr(entry, ' ') + 1;
	char path[PATH_MAX];
	size_t o = 0;

	/* mountinfo escapes space, tab, newline and backslash as \ooo (review 13: a socket
	 * under "a b" was never matched, and a mask at "a b/.env" matched a socket named
	 * "a\040b/.env") */
	for (const char *p = esc; *p; p++) {
		if (o + 1 >= sizeof(path))
			return false;
		if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
		    p[3] >= '0' && p[3] <= '7') {
			path[o++] = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
			p += 3;
		} else
			path[o++] = *p;
	}
	path[o] = '\0';

	if (linux_index_place_named(path))
		return !linux_scan_own_index_place(l, path);
	for (size_t i = 0; i < n_prot; i++) {
		const char *p = strstr(prot[i], LINUX_SESSION_SOCKET ":/");
		if (p && strcmp(p + sizeof(LINUX_SESSION_SOCKET), path) == 0)
			return true;
	}
	return false;
}

const char *linux_session_mount_lost(const struct linux_launch *l, char *const *start,
				     size_t n_start, char *const *now, size_t n_now,
				     char *const *prot, size_t n_prot, size_t *lost)
{
	const char *first = NULL;

	*lost = 0;
	for (size_t i = 0; i < n_start; i++)
		if (!in_dotgit(start[i]) && !bsearch(&start[i], now, n_now, sizeof(char *), cmp) &&
		    !gone_with_its_file(l, start[i], prot, n_prot)) {
			(*lost)++;
			first = first ? first : start[i];
		}
	return first ? strchr(first, ' ') + 1 : NULL;
}
