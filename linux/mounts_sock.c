/* The host unix sockets a policy names in sandbox.unixSockets (ssh-agent, a Docker
 * engine): an explicit, warned opt-in, shown inside at their own path so that
 * SSH_AUTH_SOCK or DOCKER_HOST need no change. Where the sandbox hides the place
 * (the fresh /run and /tmp, or a mask such as ~/.ssh), a mount point is made in
 * sandbox-only file systems and the socket bound onto it; the host is not touched. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/mounts_int.h"
#include "linux/scan_int.h"

#define SOCK_ATTRS (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)

static bool same_inode(int a, int b)
{
	struct stat x, y;

	return fstat(a, &x) == 0 && fstat(b, &y) == 0 && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

/* The masked directory `path` lies beneath, or NULL. */
static const char *mask_above(const struct linux_scan *s, const char *path)
{
	for (size_t i = 0; i < s->masked.n; i++)
		if (strcmp(path, s->masked.v[i]) != 0 && linux_path_beneath(path, s->masked.v[i]))
			return s->masked.v[i];
	return NULL;
}

/* Over the mask at m, a tmpfs that can be searched but not listed (0111): only the
 * sockets bound into it can be reached by their exact names. Its context goes into
 * ctx[*n] to be made read-only once they are in. Once per mask. */
static void open_mask_or_die(int rfd, const char *m, const char **laid, int *ctx, size_t *n)
{
	static const char *const opts[] = {"mode=0111", "size=16k", NULL};

	for (size_t i = 0; i < *n; i++)
		if (strcmp(laid[i], m) == 0)
			return;
	int target = mnt_open_or_die(rfd, MNT_NEWROOT, m, MNT_NO_CREATE);
	close(mnt_fresh_keep_or_die(rfd, "tmpfs", opts, SOCK_ATTRS & ~MOUNT_ATTR_RDONLY, target, m,
				    &ctx[*n]));
	close(target);
	laid[(*n)++] = m;
}

void linux_mounts_sockets_or_die(int rfd, const struct linux_scan *s)
{
	const char *laid[LINUX_MAX_OPEN_SOCKETS];
	int ctx[LINUX_MAX_OPEN_SOCKETS];
	size_t n_laid = 0;

	for (size_t i = 0; i < s->sockets_open.n && i < LINUX_MAX_OPEN_SOCKETS; i++) {
		const char *path = s->sockets_open.v[i], *m;
		int src = mnt_open_or_die(rfd, MNT_OLDROOT, path, MNT_NO_CREATE);
		int dst = mnt_open(MNT_NEWROOT, path, MNT_NO_CREATE);

		if (dst >= 0 && same_inode(src, dst)) {
			close(dst);
			close(src);
			continue; /* in plain sight already (the read-only root shows it) */
		}
		if (dst < 0 && dst != -ENOENT && dst != -EACCES)
			linux_die(rfd, MNT_STEP, -dst, "unixSockets: open %s", path);
		if (dst < 0 && (m = mask_above(s, path)))
			open_mask_or_die(rfd, m, laid, ctx, &n_laid);
		if (dst < 0)
			dst = mnt_open_or_die(rfd, MNT_NEWROOT, path, MNT_CREATE_FILE);
		close(mnt_bind_or_die(rfd, src, dst, SOCK_ATTRS, path));
		close(dst);
		close(src);
	}
	for (size_t i = 0; i < n_laid; i++) {
		char what[PATH_MAX + 32];

		snprintf(what, sizeof(what), "the socket view over %s", laid[i]);
		mnt_seal_or_die(rfd, ctx[i], what);
	}
}
