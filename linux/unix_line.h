/* One line of /proc/net/unix, parsed (unix_line.c): pure, so that the fuzzer and the
 * unit tests drive it without the rest of linux/. */
#ifndef HALO_LINUX_UNIX_LINE_H
#define HALO_LINUX_UNIX_LINE_H

/* The Path column of `line` (after the seven fixed fields; the rest of the line,
 * spaces included, without its newline), cut in place, or NULL: unbound, abstract
 * ("@..."), or relative (a name bound relative to a directory we cannot know). */
const char *linux_unix_line_path(char *line);

#endif
