/* `halo-run cache [list]`, `halo-run cache clear [TOOL...]`, `halo-run cache path`: the
 * sandbox-only tool caches of sandbox.caches: isolated. The trees were written by
 * sandboxed commands, so they are walked by descriptor, never following a link: a
 * symlink planted inside cannot make `clear` delete (or `list` count) anything else. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env/caches.h"
#include "runner/runner_int.h"

#define MAX_DEPTH 256

/* Size of the tree at at/name (bytes allocated) or, when `rm`, remove it. */
static int tree(int at, const char *name, bool rm, int depth, unsigned long long *bytes)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	int fd, rc = 0;

	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	*bytes += (unsigned long long)st.st_blocks * 512;
	if (!S_ISDIR(st.st_mode))
		return rm && unlinkat(at, name, 0) < 0 ? -errno : 0;
	if (depth > MAX_DEPTH)
		return -ELOOP;
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Go makes its module cache read-only (0555): ours to make writable again, as
	 * `go clean -modcache` does, or nothing in it could be removed. */
	if (rm && st.st_uid == getuid() && (st.st_mode & 0700) != 0700)
		(void)fchmod(fd, 0700);
	if (!(d = fdopendir(fd))) {
		close(fd);
		return -errno;
	}
	while (rc == 0 && (de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rc = tree(dirfd(d), de->d_name, rm, depth + 1, bytes);
	closedir(d);
	if (rc == 0 && rm && unlinkat(at, name, AT_REMOVEDIR) < 0)
		rc = -errno;
	return rc;
}

static int open_root(const struct runner_env *re, char *root, size_t n)
{
	const char *home = re->env_home ? re->env_home : re->pw_home;
	int fd;

	if (runner_cache_dir(home, getenv("XDG_CACHE_HOME"), re->workspace, root, n) < 0) {
		fprintf(stderr, "halo-run: cache: no home directory, so no kept caches\n");
		return -ENOENT;
	}
	fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT)
		fprintf(stderr, "halo-run: cache: %s: %s\n", root, strerror(errno));
	return fd < 0 ? -errno : fd;
}

static void human(unsigned long long b, char *out, size_t n)
{
	const char *u = "KMGT";
	double v = (double)b / 1024;
	int i = 0;

	while (v >= 1024 && i < 3) {
		v /= 1024;
		i++;
	}
	snprintf(out, n, "%.1f%c", v, u[i]);
}

static int cache_list(int fd, const char *root)
{
	printf("%-8s %-22s %9s  %s\n", "TOOL", "VARIABLE", "SIZE", "PATH");
	for (size_t i = 0; i < runner_n_cache_tools; i++) {
		const struct runner_cache_tool *t = &runner_cache_tools[i];
		unsigned long long b = 0;
		struct stat st;
		char sz[32];
		/* "-": not there (a cache on tmpfs may be there with no blocks). */
		bool was = fd >= 0 && fstatat(fd, t->sub, &st, AT_SYMLINK_NOFOLLOW) == 0;

		if (fd >= 0 && tree(fd, t->sub, false, 0, &b) < 0)
			b = 0;
		human(b, sz, sizeof(sz));
		printf("%-8s %-22s %9s  %s/%s\n", t->tool, t->var ? t->var : "store-dir (its rc)",
		       was ? sz : "-", root, t->sub);
	}
	return 0;
}

static int cache_clear(int fd, const char *root, char **tools, int n)
{
	int bad = 0;

	for (int k = 0; k < n; k++)
		if (!runner_cache_tool_known(tools[k])) {
			fprintf(stderr,
				"halo-run: cache clear: unknown tool '%s' (one of:", tools[k]);
			for (size_t i = 0; i < runner_n_cache_tools; i++)
				if (i == 0 || strcmp(runner_cache_tools[i].tool,
						     runner_cache_tools[i - 1].tool))
					fprintf(stderr, " %s", runner_cache_tools[i].tool);
			fprintf(stderr, ", all)\n");
			return HALO_EXIT_SETUP;
		}
	for (size_t i = 0; fd >= 0 && i < runner_n_cache_tools; i++) {
		const struct runner_cache_tool *t = &runner_cache_tools[i];
		bool pick = n == 0;
		unsigned long long b = 0;
		struct stat st;
		int rc;

		for (int k = 0; k < n; k++)
			pick |= strcmp(tools[k], "all") == 0 || strcmp(tools[k], t->tool) == 0;
		if (!pick)
			continue;
		/* Said whenever there was something, not by its size: a directory on
		 * tmpfs or an overlay's tmpfs layer (a container's) and a symlink have no
		 * blocks at all. */
		bool was = fstatat(fd, t->sub, &st, AT_SYMLINK_NOFOLLOW) == 0;
		if ((rc = tree(fd, t->sub, true, 0, &b)) < 0) {
			fprintf(stderr, "halo-run: cache clear: %s/%s: %s\n", root, t->sub,
				strerror(-rc));
			bad = 1;
		} else if (was) {
			printf("cleared %s (%s/%s)\n", t->tool, root, t->sub);
		}
	}
	return bad;
}

int runner_cmd_cache(const struct runner_opts *o)
{
	struct runner_env re;
	char root[PATH_MAX];
	const char *verb = o->n_rest > 0 ? o->rest[0] : "list";
	int rc, fd;

	/* The caches are the workspace's own (caches.h): --workspace or the cwd. */
	if ((rc = runner_load_policy(o, true, &re)) != 0)
		return rc;
	fd = open_root(&re, root, sizeof(root));
	if (fd < 0 && fd != -ENOENT) {
		runner_env_release(&re);
		return HALO_EXIT_SETUP;
	}
	if (strcmp(verb, "path") == 0 && o->n_rest == 1)
		rc = printf("%s\n", root) < 0;
	else if (strcmp(verb, "list") == 0 && o->n_rest <= 1)
		rc = cache_list(fd, root);
	else if (strcmp(verb, "clear") == 0)
		rc = cache_clear(fd, root, o->rest + 1, o->n_rest - 1);
	else {
		fprintf(stderr, "halo-run: cache: usage: halo-run cache [list | path | clear "
				"[TOOL...]]\n");
		rc = HALO_EXIT_SETUP;
	}
	if (fd >= 0)
		close(fd);
	runner_env_release(&re);
	return rc;
}
