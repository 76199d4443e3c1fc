/* /proc/PID/stat, read once: what follows the process's name, whose field (the second)
 * may hold spaces and parentheses, so the fields are counted after its last ')'. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "linux/linux_int.h"

const char *linux_proc_stat(pid_t pid, char *buf, size_t n)
{
	char path[64];
	ssize_t k;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	k = read(fd, buf, n - 1);
	close(fd);
	if (k <= 0)
		return NULL;
	buf[k] = '\0';
	return strrchr(buf, ')'); /* field 3 on, after it; NULL: no name */
}
