/* Closing a set of descriptors in as few calls as the kernel allows: descriptors are
 * handed out lowest first, so those opened one after the other are mostly consecutive,
 * and close_range(2) closes a run of them in one call (where init opens one per rule or
 * per listener, a close each was most of its calls). Only the descriptors given are
 * closed: a run is never widened over a number not in the set. */
#include <errno.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/linux_int.h"

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

void linux_fds_close(int *fds, size_t n)
{
	static bool no_close_range;
	size_t i = 0;

	if (n == 0) /* (qsort's array may not be NULL, even empty) */
		return;
	qsort(fds, n, sizeof(*fds), cmp_int);
	while (i < n && fds[i] < 0) /* none there */
		i++;
	while (i < n) {
		size_t j = i;

		while (j + 1 < n && fds[j + 1] <= fds[j] + 1) /* consecutive (or repeated) */
			j++;
		if (j > i && !no_close_range) {
			if (syscall(SYS_close_range, (unsigned)fds[i], (unsigned)fds[j], 0U) == 0) {
				i = j + 1;
				continue;
			}
			no_close_range = errno == ENOSYS;
		}
		for (size_t k = i; k <= j; k++)
			if (k == i || fds[k] != fds[k - 1])
				close(fds[k]);
		i = j + 1;
	}
}

void linux_fds_close_all_but(int *keep, size_t n)
{
	unsigned from = 3;

	if (n > 0)
		qsort(keep, n, sizeof(*keep), cmp_int);
	for (size_t i = 0; i < n; i++) {
		if (keep[i] < (int)from) /* none there, or 0-2, or repeated */
			continue;
		if ((unsigned)keep[i] > from)
			syscall(SYS_close_range, from, (unsigned)keep[i] - 1, 0U);
		from = (unsigned)keep[i] + 1;
	}
	syscall(SYS_close_range, from, ~0U, 0U);
}
