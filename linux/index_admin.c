/* The workspace index from outside a launch (`halo-run index`): where it lives, what
 * is there (one file per walked tree, and a watcher where its socket is), and the two
 * ways to end it: stop a watcher (its socket removed: it exits by itself, see
 * scan_watch.c) or clear a tree's files (the next launch walks the tree afresh). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "linux/scan_int.h"

int linux_index_place(const char *home, char *out, size_t n)
{
	const char *x = getenv("XDG_STATE_HOME");
	int w;

	if (x && x[0] == '/')
		w = snprintf(out, n, "%s/halo-run/index", x);
	else if (home && home[0] == '/' && strcmp(home, "/") != 0)
		w = snprintf(out, n, "%s/.local/state/halo-run/index", home);
	else
		return -ENOENT;
	return w > 0 && (size_t)w < n ? 0 : -ENAMETOOLONG;
}

static bool has_ext(const char *name, const char *ext, size_t *base)
{
	size_t n = strlen(name), e = strlen(ext);

	if (n <= e + 1 || name[n - e - 1] != '.' || strcmp(name + n - e, ext) != 0)
		return false;
	*base = n - e - 1;
	return true;
}

/* Why the watcher with this pid runs: the walk time its launch gave it. */
static long long walk_of(int pid)
{
	char path[64], buf[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || strcmp(buf, LINUX_WATCH_ARGV0) != 0)
		return -1;
	buf[n] = '\0';
	for (char *p = buf; p < buf + n; p += strlen(p) + 1)
		if (strncmp(p, "walk-us=", 8) == 0)
			return strtoll(p + 8, NULL, 10);
	return -1;
}

/* Does a watcher answer on this socket? (A socket left behind by one that died does
 * not.) Connected through the directory's fd: the path stays short. Its pid in *pid. */
static bool answers(int dfd, const char *sock, int *pid)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		return false;
	if (snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/%.60s", dfd, sock) >=
	    (int)sizeof(a.sun_path)) {
		close(fd);
		return false;
	}
	ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (ok && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) == 0)
		*pid = (int)cr.pid;
	close(fd);
	return ok;
}

static void describe(int dfd, const char *name, size_t base, struct linux_index_info *in)
{
	struct linux_index ix;
	char why[128], sock[NAME_MAX + 1];
	size_t len = 0;
	void *buf = linux_scan_index_read(dfd, name, &len);

	memset(in, 0, sizeof(*in));
	snprintf(in->base, sizeof(in->base), "%.*s", (int)base, name);
	in->bytes = len;
	if (buf && linux_scan_index_parse(buf, len, &ix, why, sizeof(why)) == 0) {
		snprintf(in->root, sizeof(in->root), "%s", ix.key.root);
		in->dirs = ix.n;
		in->valid = true;
		linux_index_free(&ix); /* frees buf */
	} else {		       /* the parser freed buf */
		snprintf(in->root, sizeof(in->root), "(unreadable: rebuilt at the next launch)");
	}
	snprintf(sock, sizeof(sock), "%s.sock", in->base);
	in->watcher = faccessat(dfd, sock, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
	in->running = in->watcher && answers(dfd, sock, &in->pid);
	in->walk_us = in->pid > 0 ? walk_of(in->pid) : -1;
	in->pays_us = LINUX_WATCH_PAYS_US;
	in->call_us = LINUX_WATCH_PAYS_CALL_US;
	in->min_dir = LINUX_WATCH_MIN_DIRS;
	/* The file names the top by device and inode: a tree whose path is gone or leads
	 * to another directory is not the one indexed. */
	struct stat st;
	unsigned long long dev, ino;
	in->tree_gone = in->valid && sscanf(in->base, "%llx-%llx", &dev, &ino) == 2 &&
			(stat(in->root, &st) < 0 || st.st_dev != dev || st.st_ino != ino);
}

int linux_index_list(const char *dir, struct linux_index_info **out, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct linux_index_info *v = NULL;
	size_t cap = 0, base;

	*out = NULL;
	*n = 0;
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (!has_ext(de->d_name, "idx", &base))
			continue;
		if (*n == cap) {
			struct linux_index_info *g =
			    realloc(v, (cap = cap ? 2 * cap : 8) * sizeof(*v));
			if (!g) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = g;
		}
		describe(dirfd(d), de->d_name, base, &v[(*n)++]);
	}
	closedir(d);
	*out = v;
	return 0;
}

int linux_index_end(const char *dir, const struct linux_index_info *in, bool clear)
{
	static const char *const stop_ext[] = {"sock"}, *const clear_ext[] = {"sock", "lock",
									      "idx"};
	const char *const *ext = clear ? clear_ext : stop_ext;
	size_t n = clear ? 3 : 1;
	int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC), rc = 0;

	if (dfd < 0)
		return -errno;
	for (size_t i = 0; i < n; i++) {
		char name[NAME_MAX + 1];
		snprintf(name, sizeof(name), "%s.%s", in->base, ext[i]);
		if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT && rc == 0)
			rc = -errno;
	}
	close(dfd);
	return rc;
}
