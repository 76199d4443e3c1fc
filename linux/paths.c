/* A growable list of heap strings: the paths found by the launch scan, sorted and
 * compared as paths. */
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

bool linux_path_beneath(const char *path, const char *dir)
{
	return policy_path_beneath(path, dir);
}

/* The sandbox gets these fresh (mounts.c): a host path beneath them is out of reach
 * unless a tree is bound back in, so there is nothing to mask there. */
bool linux_path_in_fresh_dir(const char *path)
{
	return policy_path_in_fresh(path);
}

bool linux_paths_beneath_any(const char *path, const struct linux_paths *dirs)
{
	for (size_t i = 0; i < dirs->n; i++)
		if (linux_path_beneath(path, dirs->v[i]))
			return true;
	return false;
}

/* Path order with '/' lowest, so that a directory is directly followed by what is
 * beneath it ("/a", "/a/b", "/a-b"): one pass then drops the redundant entries. */
static int path_key(unsigned char ch)
{
	return ch == '\0' ? 0 : ch == '/' ? 1 : ch + 1;
}

int linux_path_cmp(const void *a, const void *b)
{
	const unsigned char *x = *(const unsigned char *const *)a;
	const unsigned char *y = *(const unsigned char *const *)b;

	for (; *x && *x == *y; x++, y++)
		;
	return path_key(*x) - path_key(*y);
}

void linux_paths_sort_unique(struct linux_paths *p)
{
	size_t k = 0;

	if (p->n > 1)
		qsort(p->v, p->n, sizeof(*p->v), linux_path_cmp);
	for (size_t i = 0; i < p->n; i++) {
		if (k > 0 && strcmp(p->v[i], p->v[k - 1]) == 0) {
			free(p->v[i]);
			continue;
		}
		p->v[k++] = p->v[i];
	}
	p->n = k;
}
