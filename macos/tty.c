/* The caller's own terminal: the one device file the command may read from, write to
 * and ioctl, named literally in the profile. Any other terminal of the user (another
 * /dev/ttysNNN) would let the command read keystrokes typed elsewhere and write into
 * another shell, so the profile never names them by a pattern. */
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "macos/macos.h"

void macos_caller_ttys(struct macos_ttys *t)
{
	char why[128];

	memset(t, 0, sizeof(*t));
	for (int fd = 0; fd <= 2; fd++) {
		char *slot = t->path[t->n];
		bool seen = false;

		if (!isatty(fd) || ttyname_r(fd, slot, sizeof(t->path[0])) != 0 ||
		    strncmp(slot, "/dev/", 5) != 0 || macos_path_check(slot, why, sizeof(why)) < 0)
			continue;
		for (size_t i = 0; i < t->n; i++)
			seen |= strcmp(t->v[i], slot) == 0;
		if (!seen) {
			t->v[t->n] = slot;
			t->n++;
		}
	}
}
