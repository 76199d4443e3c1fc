/* The command's configuration directory under sandbox.caches: isolated, for the one
 * tool whose cache location no warning-free variable can name: pnpm. pnpm reads its
 * store-dir from npm_config_store_dir (npm 11 warns "Unknown env config" at every call),
 * from npm's own rc files (npm warns about those too) or from its own rc file,
 * $XDG_CONFIG_HOME/pnpm/rc (pnpm 8.15, 9 and 10), which no other tool reads. So the
 * command's XDG_CONFIG_HOME is a directory of the cache root that mirrors the home's
 * ~/.config (the directory the command used before, XDG_CONFIG_HOME being stripped):
 * one symlink per entry, to the same entry, read-only inside as before, and a pnpm/rc
 * of its own: the host's pnpm rc, sanitized as ~/.npmrc is, then store-dir.
 *
 * The directory is writable inside (it is in the cache root), so it is rebuilt at
 * every launch, by descriptor, never following a link: whatever a run planted there
 * (a git/config the host does not have, a symlink aimed elsewhere) is gone before the
 * next run starts, and an entry that is already right is left alone, so that a launch
 * beside a running command does not pull its configuration away.
 *
 * A home whose ~/.config is inside the workspace (the home as a workspace) keeps it:
 * there the real ~/.config is writable, and a tool's new configuration belongs there. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner/caches.h"

#define PNPM_RC_MAX (256 * 1024)

/* "a/b" into out; false when it does not fit. */
static bool join(char *out, size_t n, const char *a, const char *b)
{
	int w = snprintf(out, n, "%s/%s", a, b);

	return w > 0 && (size_t)w < n;
}

/* Remove at/name and everything below it, by descriptor, no link followed. */
static int rm_tree(int at, const char *name, int depth)
{
	struct stat st;
	struct dirent *de;
	DIR *d;
	int fd, rc = 0;

	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(at, name, 0) < 0 && errno != ENOENT ? -errno : 0;
	if (depth > 64)
		return -ELOOP;
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (st.st_uid == getuid() && (st.st_mode & 0700) != 0700)
		(void)fchmod(fd, 0700);
	if (!(d = fdopendir(fd))) {
		close(fd);
		return -errno;
	}
	while (rc == 0 && (de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rc = rm_tree(dirfd(d), de->d_name, depth + 1);
	closedir(d);
	return rc == 0 && unlinkat(at, name, AT_REMOVEDIR) < 0 ? -errno : rc;
}

/* Is farm/name the symlink to want? */
static bool link_is(int farm, const char *name, const char *want)
{
	char got[PATH_MAX];
	ssize_t n = readlinkat(farm, name, got, sizeof(got) - 1);

	if (n < 0)
		return false;
	got[n] = '\0';
	return strcmp(got, want) == 0;
}

/* Remove every entry of the farm that is not a host entry's right symlink or pnpm. */
static int prune(int farm, int host, const char *host_dir)
{
	DIR *d;
	struct dirent *de;
	int fd = dup(farm), rc = 0;

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	rewinddir(d);
	while (rc == 0 && (de = readdir(d)) != NULL) {
		char want[PATH_MAX];
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, "pnpm"))
			continue;
		if (join(want, sizeof(want), host_dir, de->d_name) && host >= 0 &&
		    fstatat(host, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    link_is(farm, de->d_name, want))
			continue;
		rc = rm_tree(farm, de->d_name, 0);
	}
	closedir(d);
	return rc;
}

/* One symlink per entry of the host's ~/.config but pnpm. */
static int mirror(int farm, int host, const char *host_dir)
{
	DIR *d;
	struct dirent *de;
	int fd = host < 0 ? -1 : dup(host), rc = 0;

	if (host < 0)
		return 0;
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		char want[PATH_MAX];

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, "pnpm"))
			continue;
		if (!join(want, sizeof(want), host_dir, de->d_name))
			continue; /* a name that long is out of every tool's reach too */
		if (symlinkat(want, farm, de->d_name) < 0 && errno != EEXIST)
			rc = -errno;
	}
	closedir(d);
	return rc;
}

/* The host's pnpm rc, sanitized, or "" (none, unreadable, too large). */
static char *host_pnpm_rc(const char *host_dir, size_t *len)
{
	char path[PATH_MAX], *raw, *out = NULL;
	FILE *f;
	size_t n;

	*len = 0;
	if (!join(path, sizeof(path), host_dir, "pnpm/rc") || !(f = fopen(path, "re")))
		return NULL;
	raw = malloc(PNPM_RC_MAX + 1);
	n = raw ? fread(raw, 1, PNPM_RC_MAX + 1, f) : 0;
	fclose(f);
	if (raw && n <= PNPM_RC_MAX &&
	    policy_sanitize(POLICY_SANITIZE_NPMRC, raw, n, &out, len) < 0)
		out = NULL, *len = 0;
	free(raw);
	return out;
}

/* dir/name as our own directory: anything else there (a planted link or file) goes. */
static int own_dir(int at, const char *name)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rc;

	if (fd >= 0)
		return fd;
	if ((rc = rm_tree(at, name, 0)) < 0)
		return rc;
	if (mkdirat(at, name, 0700) < 0 && errno != EEXIST)
		return -errno;
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* pnpm/rc: written beside and renamed into place, so a reader sees the old or the new. */
static int write_pnpm_rc(int farm, const char *host_dir, const char *store)
{
	size_t hlen;
	char *host = host_pnpm_rc(host_dir, &hlen);
	int dir = own_dir(farm, "pnpm"), fd = -1, rc;
	FILE *f;

	if ((rc = dir < 0 ? dir : rm_tree(dir, "rc.new", 0)) < 0)
		goto out;
	fd = openat(dir, "rc.new", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		goto out;
	}
	if (host && hlen)
		fprintf(f, "%.*s%s", (int)hlen, host, host[hlen - 1] == '\n' ? "" : "\n");
	fprintf(f,
		"# halo-run: pnpm's store in the sandbox's cache (sandbox.caches)\n"
		"store-dir=%s\n",
		store);
	rc = fclose(f) == 0 ? 0 : -errno;
	/* An rc made a directory inside would refuse the rename: it goes first. */
	if (rc == 0 && renameat(dir, "rc.new", dir, "rc") < 0 &&
	    ((rc = rm_tree(dir, "rc", 0)) < 0 || renameat(dir, "rc.new", dir, "rc") < 0))
		rc = rc < 0 ? rc : -errno;
out:
	free(host);
	if (dir >= 0)
		close(dir);
	return rc;
}

int runner_caches_config(const char *home, const char *workspace, const char *root, bool create,
			 char *out, size_t n)
{
	char host_dir[PATH_MAX], store[PATH_MAX];
	int rfd, farm, host, rc;

	if (!home || home[0] != '/' || !root)
		return -ENOENT;
	if (snprintf(host_dir, sizeof(host_dir), "%s/.config", strcmp(home, "/") ? home : "") >=
		(int)sizeof(host_dir) ||
	    snprintf(store, sizeof(store), "%s/pnpm-store", root) >= (int)sizeof(store) ||
	    snprintf(out, n, "%s/" RUNNER_CACHE_CONFIG_SUB, root) >= (int)n)
		return -ENAMETOOLONG;
	if (workspace && policy_path_within(host_dir, workspace))
		return -EEXIST; /* the home as a workspace: its own ~/.config is writable */
	if (!create)
		return 0;
	if ((rfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -errno;
	farm = own_dir(rfd, RUNNER_CACHE_CONFIG_SUB);
	close(rfd);
	if (farm < 0)
		return farm;
	host = open(host_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	rc = prune(farm, host, host_dir);
	if (rc == 0)
		rc = mirror(farm, host, host_dir);
	if (rc == 0)
		rc = write_pnpm_rc(farm, host_dir, store);
	if (host >= 0)
		close(host);
	close(farm);
	return rc;
}
