/* The per-run TMPDIR: a fresh 0700 directory under the user's temp dir, so runs
 * never share temp names, removed at the end. The removal walks with openat() and
 * O_NOFOLLOW and never follows a symlink: the tree was written by the command, and a
 * directory swapped for a link must not send an unsandboxed rm elsewhere. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macos/macos_int.h"

#define REMOVE_MAX_DEPTH 256

int macos_tmpdir_make(const char *base, char *out, size_t n, struct halo_err *e)
{
	char tmpl[PATH_MAX], *real;
	int w = snprintf(tmpl, sizeof(tmpl), "%s/halo-run.XXXXXX", base);

	if (w < 0 || (size_t)w >= sizeof(tmpl)) {
		halo_err_set(e, "TMPDIR: %s is too long", base);
		return -ENAMETOOLONG;
	}
	if (!mkdtemp(tmpl)) {
		halo_err_set(e, "TMPDIR: cannot create %s: %s", tmpl, strerror(errno));
		return -errno;
	}
	real = realpath(tmpl, NULL);
	if (!real || strlen(real) >= n) {
		int err = real ? ENAMETOOLONG : errno;
		free(real);
		rmdir(tmpl);
		halo_err_set(e, "TMPDIR: %s: %s", tmpl, strerror(err));
		return -err;
	}
	strcpy(out, real);
	free(real);
	return 0;
}

/* Empty the directory open as dfd (which this call closes). */
static void empty_dir(int dfd, int depth)
{
	DIR *d = fdopendir(dfd);

	if (!d) {
		close(dfd);
		return;
	}
	for (;;) {
		struct dirent *de;
		/* Restart the listing after each removal pass: unlinking while reading a
		 * directory stream may skip entries. */
		bool removed = false;
		rewinddir(d);
		while ((de = readdir(d))) {
			const char *name = de->d_name;
			if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
				continue;
			if (unlinkat(dirfd(d), name, 0) == 0) {
				removed = true;
				continue;
			}
			if (errno != EISDIR && errno != EPERM)
				continue;
			int sub =
			    openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0)
				continue;
			fchmod(sub, 0700);
			if (depth < REMOVE_MAX_DEPTH)
				empty_dir(sub, depth + 1);
			else
				close(sub);
			if (unlinkat(dirfd(d), name, AT_REMOVEDIR) == 0)
				removed = true;
		}
		if (!removed)
			break;
	}
	closedir(d);
}

void macos_tmpdir_remove(const char *dir)
{
	int fd;

	if (!dir || !dir[0])
		return;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	/* A directory the command made unwritable would stop the removal. */
	fchmod(fd, 0700);
	empty_dir(fd, 0);
	rmdir(dir);
}
