/* The user's index key: 16 random bytes that make each index file's checksum a MAC
 * (scan_index.c), so that a command of the same user cannot write a listing a later
 * launch believes. It lives in /tmp/halo-run-UID/index.key, by the uid alone: not
 * where the environment says (a place a command could make before the launch that
 * reads it, as with the index places), and never inside a sandbox, which gets a /tmp
 * of its own (/tmp itself is refused as a writable root; a writable root at that
 * directory gets it masked, linux_scan_index_shield). Made at the first launch that
 * uses an index, before any sandbox of that launch runs; lost at a reboot with /tmp,
 * and every index is then walked afresh once. Believed only when the directory and
 * the file are the user's own and private, the file a regular one of one link and
 * 16 bytes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/scan_int.h"

/* The uid outside this user namespace (a launch in `unshare -Ur` is uid 0 in it):
 * /tmp is the host's, and its halo-run-0 is root's, not ours. The euid itself where
 * the map is the identity or says nothing of it. */
static unsigned outer_uid(void)
{
	unsigned me = (unsigned)geteuid(), in, out, count;
	FILE *f = fopen("/proc/self/uid_map", "re");
	unsigned r = me;

	if (!f)
		return me;
	while (fscanf(f, "%u %u %u", &in, &out, &count) == 3)
		if (me >= in && me - in < count) {
			r = out + (me - in);
			break;
		}
	fclose(f);
	return r;
}

static bool is_private(const char *dir)
{
	struct stat st;

	return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	       !(st.st_mode & 077);
}

/* Named by the euid where that directory is ours (every launch but a first one, or
 * one in a user namespace); else by the uid outside the user namespace. */
void linux_scan_index_key_dir(char *out, size_t n)
{
	const char *base = linux_test_hooks()->key_base;

	snprintf(out, n, "%s/halo-run-%u", base, (unsigned)geteuid());
	if (!is_private(out))
		snprintf(out, n, "%s/halo-run-%u", base, outer_uid());
}

static bool private_dir(const char *dir)
{
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return false;
	return is_private(dir);
}

/* A new key, linked into place only if none is there yet (a launch beside this one
 * may have made one first: then that one is read). */
static void make_key(const char *dir, const char *path)
{
	unsigned char k[16];
	char tmp[PATH_MAX + 32];
	int fd;

	if (getrandom(k, sizeof(k), 0) != (ssize_t)sizeof(k) ||
	    snprintf(tmp, sizeof(tmp), "%s/.index.key.%d", dir, (int)getpid()) >= (int)sizeof(tmp))
		return;
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, k, sizeof(k)) == (ssize_t)sizeof(k) && fsync(fd) == 0)
		(void)!link(tmp, path);
	close(fd);
	unlink(tmp);
}

/* The key in dir, the directory opened without following a link and found the user's
 * own and private first: in a directory someone else made (another local user can
 * make /tmp/halo-run-UID first, or a link of that name) a file of ours could be put
 * there by a rename, a key a command of ours wrote somewhere it knows. */
static int read_key(const char *dir, unsigned char k[16])
{
	struct stat st;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), fd, rc = -EPERM;

	if (dfd < 0)
		return -errno;
	if (fstat(dfd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(dfd);
		return -EPERM;
	}
	fd = openat(dfd, "index.key", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	    !(st.st_mode & 077) && st.st_nlink == 1 && st.st_size == 16 && read(fd, k, 16) == 16)
		rc = 0;
	close(fd);
	return rc;
}

bool linux_scan_index_key(char *why, size_t n)
{
	static int state; /* 0 not tried, 1 set, -1 none */
	char dir[PATH_MAX], path[PATH_MAX + 16];
	unsigned char k[16];
	int rc;

	if (state)
		return state > 0;
	state = -1;
	/* Most launches: the directory and the key are there (seven calls). */
	snprintf(dir, sizeof(dir), "%s/halo-run-%u", linux_test_hooks()->key_base,
		 (unsigned)geteuid());
	if (read_key(dir, k) == 0)
		goto set;
	linux_scan_index_key_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/index.key", dir);
	if (!private_dir(dir)) {
		snprintf(why, n, "%s is not a private directory of uid %u: no index key", dir,
			 (unsigned)geteuid());
		return false;
	}
	if ((rc = read_key(dir, k)) == -ENOENT) {
		make_key(dir, path);
		rc = read_key(dir, k);
	}
	if (rc < 0) {
		snprintf(why, n, "%s: %s", path,
			 rc == -EPERM ? "not a private 16-byte file of this user" : strerror(-rc));
		return false;
	}
set:
	linux_index_set_key(k);
	explicit_bzero(k, sizeof(k));
	state = 1;
	return true;
}

size_t linux_own_places(const char *pw_home, const char *env_home, char out[][PATH_MAX],
			const char **why)
{
	struct linux_launch l = {.pw_home = pw_home, .env_home = env_home};
	size_t n = 0, k;

	snprintf(out[n++], PATH_MAX, "%s/halo-run-%u", linux_test_hooks()->key_base,
		 (unsigned)geteuid());
	linux_scan_index_key_dir(out[n], PATH_MAX);
	if (strcmp(out[n], out[0]) != 0)
		n++;
	for (k = 0; k < n; k++)
		why[k] = "the index key's directory";
	_Static_assert(LINUX_OWN_PLACES >= 2 + LINUX_INDEX_PLACES, "room for the index places");
	n += linux_scan_index_places(&l, out + n);
	for (; k < n; k++)
		why[k] = "the workspace indexes";
	return n;
}
