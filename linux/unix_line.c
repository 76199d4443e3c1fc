/* /proc/net/unix: "Num RefCount Protocol Flags Type St Inode Path". The path is what
 * the socket was bound with, written raw: it may hold spaces (kept) and even a
 * newline (which ends the line here; the rest reads as a line of its own, whose
 * "path" then fails the socket check the caller makes). */
#include <stddef.h>
#include <string.h>

#include "linux/unix_line.h"

const char *linux_unix_line_path(char *line)
{
	char *p = line;
	size_t len;

	for (int f = 0; f < 7; f++) {
		p += strspn(p, " ");
		if (!*p || *p == '\n')
			return NULL;
		p += strcspn(p, " \n");
	}
	if (*p != ' ')
		return NULL; /* no Path column: an unbound socket */
	p++;
	len = strcspn(p, "\n");
	p[len] = '\0';
	return p[0] == '/' ? p : NULL;
}
