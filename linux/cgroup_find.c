/* Where halo-run may make a cgroup for the sandbox, found read-only (the launch, --dry-run
 * and doctor ask the same questions):
 *   - the caller's own cgroup in each v1 hierarchy, from /proc/self/cgroup (root);
 *   - for an unprivileged caller on cgroup v2, a subtree systemd delegated to it: an
 *     ancestor of its own cgroup, at or below user@UID.service, that it owns and that
 *     already hands the memory controller to its children. Its own cgroup cannot be the
 *     parent: it holds processes (halo-run itself), and v2 gives controllers only to the
 *     children of a cgroup without processes of its own. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/linux_int.h"

/* Is `word` one of the space/comma separated words of text[0..n)? */
static bool has_word(const char *text, size_t n, const char *word)
{
	size_t wl = strlen(word);

	for (size_t i = 0; i + wl <= n; i++) {
		bool starts = i == 0 || text[i - 1] == ' ' || text[i - 1] == ',';
		bool ends = i + wl == n || text[i + wl] == ' ' || text[i + wl] == ',' ||
			    text[i + wl] == '\n';
		if (starts && ends && memcmp(text + i, word, wl) == 0)
			return true;
	}
	return false;
}

int linux_cgroup_own_path(const char *proc_cgroup, const char *controller, char *out, size_t n)
{
	for (const char *line = proc_cgroup; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;

		if (c2) {
			size_t names = (size_t)(c2 - c1 - 1);
			bool match = controller ? has_word(c1 + 1, names, controller)
						: names == 0 && c1 - line == 1 && line[0] == '0';
			size_t plen = len - (size_t)(c2 + 1 - line);
			/* Paths are absolute and never climb: anything else is not ours. */
			if (match && plen > 0 && c2[1] == '/' && !memmem(c2 + 1, plen, "/..", 3)) {
				if (plen >= n)
					return -ENAMETOOLONG;
				memcpy(out, c2 + 1, plen);
				out[plen] = '\0';
				return 0;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}

int linux_cgroup_read_self(char *buf, size_t n)
{
	int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
	ssize_t got = fd < 0 ? -1 : read(fd, buf, n - 1);
	int err = errno;

	if (fd >= 0)
		close(fd);
	if (got < 0)
		return -err;
	buf[got] = '\0';
	return 0;
}

bool linux_cgroup_file_has(const char *dir, const char *file, const char *word)
{
	char path[LINUX_CGROUP_PATH + 32], buf[512];
	int fd;
	ssize_t got;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	got = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (got <= 0)
		return false;
	buf[got] = '\0';
	return has_word(buf, (size_t)got, word);
}

/* May this user make children of `dir` and move its own processes between them? */
static bool owned_and_writable(const char *dir, uid_t uid)
{
	char procs[LINUX_CGROUP_PATH + 16];
	struct stat st;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == uid &&
	       access(dir, W_OK | X_OK) == 0 && stat(procs, &st) == 0 && st.st_uid == uid &&
	       access(procs, W_OK) == 0;
}

int linux_cgroup_delegated_find(const char *mount, const char *own, uid_t uid, char *out, size_t n)
{
	char boundary[48], path[LINUX_CGROUP_PATH];
	const char *mark;
	size_t keep;

	snprintf(boundary, sizeof(boundary), "/user@%u.service", (unsigned)uid);
	mark = strstr(own, boundary);
	/* Only inside the user's own systemd manager: a session scope or anything outside
	 * user@UID.service is systemd's (root's) to manage, never ours. */
	while (mark && mark[strlen(boundary)] != '/' && mark[strlen(boundary)] != '\0')
		mark = strstr(mark + 1, boundary);
	if (!mark)
		return -ENOENT;
	keep = (size_t)(mark - own) + strlen(boundary); /* the shortest candidate */
	if ((size_t)snprintf(path, sizeof(path), "%s%s", mount, own) >= sizeof(path))
		return -ENAMETOOLONG;
	for (;;) {
		char *slash = strrchr(path, '/');
		/* The parent of the current one (never the caller's own cgroup). */
		if (!slash || (size_t)(slash - path) < strlen(mount) + keep)
			return -ENOENT;
		*slash = '\0';
		if (owned_and_writable(path, uid) &&
		    linux_cgroup_file_has(path, "cgroup.subtree_control", "memory")) {
			if (strlen(path) >= n)
				return -ENAMETOOLONG;
			memcpy(out, path, strlen(path) + 1);
			return 0;
		}
	}
}
