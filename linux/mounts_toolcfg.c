/* The command's configuration directory on the sandbox's /run (LINUX_TOOL_CONFIG_DIR,
 * runner/caches_config.c says why): pnpm/rc, and one symlink per entry of the home's
 * ~/.config to that entry, which the sandbox shows as before (read-only, masked where
 * protected). Written on the fresh /run before it is sealed: read-only inside, and
 * gone with the sandbox. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/mounts_int.h"

void mnt_tool_config_or_die(int rfd, int run, const struct linux_tool_config *c)
{
	const char *dir = LINUX_TOOL_CONFIG_DIR + strlen("/run/");
	char path[PATH_MAX], target[PATH_MAX];
	int pn;

	snprintf(path, sizeof(path), "%s/pnpm", dir);
	if (mkdirat(run, dir, 0755) < 0 || mkdirat(run, path, 0755) < 0)
		linux_die(rfd, MNT_STEP, errno, "make %s/pnpm", LINUX_TOOL_CONFIG_DIR);
	pn = openat(run, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pn < 0)
		linux_die(rfd, MNT_STEP, errno, "open %s/pnpm", LINUX_TOOL_CONFIG_DIR);
	mnt_write_new_or_die(rfd, pn, "rc", 0644, c->rc, c->rc_len,
			     LINUX_TOOL_CONFIG_DIR "/pnpm/rc");
	close(pn);
	for (size_t o = 0; c->names && o < c->names_len; o += strlen(c->names + o) + 1) {
		const char *name = c->names + o;
		int w = snprintf(target, sizeof(target), "%s/%s", c->mirror, name);

		if (w < 0 || (size_t)w >= sizeof(target) ||
		    snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
			continue; /* a name that long is beyond every tool's reach as well */
		if (symlinkat(target, run, path) < 0)
			linux_die(rfd, MNT_STEP, errno, "%s/%s: link", LINUX_TOOL_CONFIG_DIR, name);
	}
}
