/* What replaces a mask when part of the masked path may be read: sandbox.allowRead
 * carve-outs and the floor's sanitized copies. An empty mask has no place to bind a
 * carve-out onto, so a masked directory holding carve-outs is replaced by a small
 * tmpfs that holds only them: their names as directories and mount points, each bound
 * read-only from the host; a masked file with a sanitized copy is replaced by that
 * copy. The tmpfs is made read-only (superblock) before anything of it is attached
 * inside, so nothing can be added next to a carve-out. A carve-out that is the masked
 * path itself is its own read-only bind. */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/mounts_int.h"
#include "linux/scan_int.h"

#define RO_ATTRS (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)

/* The carve-outs strictly beneath m, bound into the fresh directory `dir` (named
 * MNT_CARVE/<name>). Returns how many. */
static size_t bind_carves_or_die(int rfd, const struct linux_scan *s, const char *m, int carve,
				 const char *name)
{
	char prefix[64];
	size_t n = 0, ml = strlen(m);

	snprintf(prefix, sizeof(prefix), "%s/%s", MNT_CARVE, name);
	for (size_t k = 0; k < s->carved.n; k++) {
		const char *c = s->carved.v[k];

		if (strcmp(c, m) == 0 || !linux_path_beneath(c, m))
			continue;
		if (n++ == 0 && mkdirat(carve, name, 0755) < 0)
			linux_die(rfd, MNT_STEP, errno, "carve-outs of %s", m);
		int src = mnt_open_or_die(rfd, MNT_OLDROOT, s->carved_src.v[k], MNT_NO_CREATE);
		int dir = mnt_is_dir(src);
		int dst = mnt_open_or_die(rfd, prefix, c + (ml == 1 ? 0 : ml),
					  dir > 0 ? MNT_CREATE_DIR : MNT_CREATE_FILE);
		close(mnt_bind_typed_or_die(rfd, src, dir, dst, -1, RO_ATTRS, c));
		close(src);
		close(dst);
	}
	return n;
}

static bool carved_whole(const struct linux_scan *s, const char *m)
{
	for (size_t k = 0; k < s->carved.n; k++)
		if (strcmp(s->carved.v[k], m) == 0 && strcmp(s->carved_src.v[k], m) == 0)
			return true;
	return false;
}

static int replacement_or_die(int rfd, const struct linux_scan *s, size_t i, int carve)
{
	const char *m = s->masked.v[i];
	char name[32], path[64];

	snprintf(name, sizeof(name), "%zu", i);
	snprintf(path, sizeof(path), "%s/%s", MNT_CARVE, name);
	if (carved_whole(s, m))
		return mnt_open(MNT_NEWROOT, m, MNT_NO_CREATE); /* -ENOENT: nothing to do */
	for (size_t k = 0; k < s->sanitized.n; k++)
		if (strcmp(s->sanitized.v[k], m) == 0) {
			char what[PATH_MAX + 32];

			snprintf(what, sizeof(what), "sanitized copy of %s", m);
			mnt_write_new_or_die(rfd, carve, name, 0444, s->sanitized_data[k],
					     s->sanitized_len[k], what);
			return mnt_open_or_die(rfd, "", path, MNT_NO_CREATE);
		}
	if (bind_carves_or_die(rfd, s, m, carve, name) == 0)
		return -1;
	return mnt_open_or_die(rfd, "", path, MNT_NO_CREATE);
}

#define CARVE_FLAGS (MS_NOSUID | MS_NODEV | MS_NOEXEC)

void linux_mounts_carve_or_die(int rfd, const struct linux_scan *s, int *repl)
{
	char opts[96];
	size_t bytes = 256 * 1024;
	int carve;

	for (size_t i = 0; i < s->masked.n; i++)
		repl[i] = -1;
	if (!s->carved.n && !s->sanitized.n)
		return;
	for (size_t k = 0; k < s->sanitized.n; k++)
		bytes += s->sanitized_len[k] + 4096;
	snprintf(opts, sizeof(opts), "mode=0755,size=%zu,nr_inodes=4096", bytes);
	/* By path: MNT_CARVE is a directory of init's own staging root. */
	carve = mnt_fresh_path_open_or_die(rfd, "tmpfs", opts, CARVE_FLAGS, MNT_CARVE,
					   "the carve-out file system");
	for (size_t i = 0; i < s->masked.n; i++)
		repl[i] = replacement_or_die(rfd, s, i, carve);
	mnt_seal_path_or_die(rfd, MNT_CARVE, CARVE_FLAGS, "the carve-out file system");
	close(carve);
}
