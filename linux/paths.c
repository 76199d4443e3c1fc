/* A growable list of heap strings: the paths found by the launch scan. */
#include <stdlib.h>
#include <string.h>

#include "linux/linux_int.h"

/* linux_paths_add has no error channel (its callers run before any sandbox exists,
 * and a partial list would silently drop a mask): running out of memory here is
 * treated like any allocator failure in a small tool, by aborting. */
static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n);

	if (!q)
		abort();
	return q;
}

void linux_paths_add(struct linux_paths *p, const char *path)
{
	size_t len = strlen(path);
	char *copy = xrealloc(NULL, len + 1);

	memcpy(copy, path, len + 1);
	/* Grow by doubling from 8: amortised O(1) for the 200k-entry worst case. */
	if ((p->n & (p->n - 1)) == 0 && (p->n == 0 || p->n >= 8))
		p->v = xrealloc(p->v, (p->n == 0 ? 8 : p->n * 2) * sizeof(*p->v));
	p->v[p->n++] = copy;
}

void linux_paths_free(struct linux_paths *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
	p->v = NULL;
	p->n = 0;
}
