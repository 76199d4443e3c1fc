/* What `halo-run hook` asks of the file system, the one place that touches it for the
 * file tools' judgment (hook/ and policy/ stay pure): whether a name exists, a small
 * file as git reads it, and a name as the kernel walks it. The agreement test
 * (tests/unit/test_agree.c) calls these same functions. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/policy.h"
#include "runner/runner_int.h"

/* Does the name exist (itself, not what a symlink leads to)? */
bool runner_hook_exists(const char *abs)
{
	struct stat st;

	return lstat(abs, &st) == 0;
}

/* A small file as git reads it (a config, a .git file, commondir). */
int runner_hook_read_file(const char *abs, char *buf, size_t n)
{
	int fd = open(abs, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	size_t got = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	return (int)got;
}

/* A name as the kernel walks it: a symlink's target, or whether it exists. */
int runner_hook_link_of(void *ctx, const char *abs, char *buf, size_t n)
{
	struct stat st;
	ssize_t k;

	(void)ctx;
	if (lstat(abs, &st) < 0)
		return -errno;
	if (!S_ISLNK(st.st_mode))
		return 0;
	if ((k = readlink(abs, buf, n)) < 0)
		return -errno;
	if ((size_t)k >= n)
		return -ENAMETOOLONG;
	buf[k] = 0;
	return 1;
}

/* The sandbox's view of a name: the kernel's walk (".." after a symlink, a dangling
 * last link followed to the file a write would create), missing names as written;
 * then the existing part's names as the file system spells them (realpath: where
 * names fold, ~/.SSH and ~/.ssh are one directory, NFD and NFC one name). */
int runner_hook_resolve(const char *abs, char *out, size_t n)
{
	char walked[PATH_MAX], probe[PATH_MAX], *real = NULL;
	size_t cut;
	int rc = policy_path_resolve(abs, runner_hook_link_of, NULL, walked, sizeof(walked));

	if (rc < 0)
		return rc;
	memcpy(probe, walked, strlen(walked) + 1);
	for (cut = strlen(probe); cut > 0 && !(real = realpath(probe, NULL));) {
		cut = (size_t)(strrchr(probe, '/') - probe);
		probe[cut > 0 ? cut : 1] = '\0';
		if (cut == 0)
			real = realpath("/", NULL);
	}
	if (!real)
		return snprintf(out, n, "%s", walked) < (int)n ? 0 : -ENAMETOOLONG;
	int w = snprintf(out, n, "%s%s",
			 strcmp(real, "/") ? real
			 : walked[cut]	   ? ""
					   : "/",
			 walked + cut);
	free(real);
	return w < 0 || (size_t)w >= n ? -ENAMETOOLONG : 0;
}

/* A user's home from the password database (git's "~user/" in a config path). */
int runner_hook_user_home(const char *user, char *out, size_t n)
{
	struct passwd pw, *got = NULL;
	char buf[4096];
	int w;

	if (getpwnam_r(user, &pw, buf, sizeof(buf), &got) != 0 || !got || !got->pw_dir)
		return -ENOENT;
	w = snprintf(out, n, "%s", got->pw_dir);
	return w > 0 && (size_t)w < n ? 0 : -ENAMETOOLONG;
}
