/* The diff printed on stderr: the lines of the learned policy against the input's,
 * comments aside (the header and the additions' notes are the output's own). A plain
 * longest-common-subsequence table: policies are a few hundred lines; beyond
 * LEARN_DIFF_MAX lines each side is listed whole rather than compared. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learn/learn.h"

#define LEARN_DIFF_MAX 2000

struct lines {
	char **v;
	size_t n;
	char *copy;
};

/* Where a line's trailing comment starts, past any double-quoted scalar (emit.c
 * escapes '"' and '\\' inside one, so "  # " there is the value's own), or NULL. */
static char *comment_of(char *line)
{
	char *p = line;
	bool quoted = false;

	for (; *p; p++) {
		if (quoted && *p == '\\' && p[1])
			p++;
		else if (*p == '"')
			quoted = !quoted;
		else if (!quoted && strncmp(p, "  # ", 4) == 0)
			return p;
	}
	return NULL;
}

/* The lines of s that are not comments, each with any trailing comment removed. */
static int split(const char *s, struct lines *l)
{
	size_t cap = 1;

	memset(l, 0, sizeof(*l));
	if (!(l->copy = strdup(s ? s : "")))
		return -1;
	for (const char *p = l->copy; *p; p++)
		cap += *p == '\n';
	if (!(l->v = calloc(cap, sizeof(*l->v))))
		return -1;
	for (char *line = strtok(l->copy, "\n"); line; line = strtok(NULL, "\n")) {
		char *hash = comment_of(line);
		if (line[strspn(line, " ")] == '#')
			continue;
		if (hash)
			*hash = '\0';
		l->v[l->n++] = line;
	}
	return 0;
}

static void put(char **out, size_t *len, char sign, const char *line)
{
	size_t n = strlen(line) + 4;
	char *g = realloc(*out, *len + n + 1);

	if (!g)
		return;
	*out = g;
	*len += (size_t)snprintf(g + *len, n + 1, "%c %s\n", sign, line);
}

char *learn_diff(const char *a, const char *b)
{
	struct lines x = {0}, y = {0};
	char *out = calloc(1, 1);
	size_t len = 0, n, m;
	unsigned *t = NULL;

	if (!out || split(a, &x) < 0 || split(b, &y) < 0)
		goto done;
	n = x.n;
	m = y.n;
	if (n > LEARN_DIFF_MAX || m > LEARN_DIFF_MAX ||
	    !(t = calloc((n + 1) * (m + 1), sizeof(*t)))) {
		for (size_t i = 0; i < n; i++)
			put(&out, &len, '-', x.v[i]);
		for (size_t j = 0; j < m; j++)
			put(&out, &len, '+', y.v[j]);
		goto done;
	}
#define T(i, j) t[(i) * (m + 1) + (j)]
	for (size_t i = n; i-- > 0;)
		for (size_t j = m; j-- > 0;)
			T(i, j) = strcmp(x.v[i], y.v[j]) == 0  ? T(i + 1, j + 1) + 1
				  : T(i + 1, j) >= T(i, j + 1) ? T(i + 1, j)
							       : T(i, j + 1);
	for (size_t i = 0, j = 0; i < n || j < m;) {
		if (i < n && j < m && strcmp(x.v[i], y.v[j]) == 0) {
			i++, j++;
		} else if (j < m && (i == n || T(i, j + 1) >= T(i + 1, j))) {
			put(&out, &len, '+', y.v[j++]);
		} else {
			put(&out, &len, '-', x.v[i++]);
		}
	}
#undef T
done:
	free(t);
	free(x.v);
	free(x.copy);
	free(y.v);
	free(y.copy);
	return out;
}
