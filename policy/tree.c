/* The generic document tree shared by the JSON and YAML readers, and the message
 * helpers every loading step uses. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "policy/policy_int.h"

struct pnode *pnode_new(enum pnode_kind kind, unsigned line)
{
	struct pnode *n = calloc(1, sizeof(*n));

	if (n) {
		n->kind = kind;
		n->line = line;
	}
	return n;
}

static int pnode_grow(struct pnode *n)
{
	size_t cap = n->cap ? n->cap * 2 : 4;
	struct pnode **items;

	if (n->n < n->cap)
		return 0;
	items = realloc(n->items, cap * sizeof(*items));
	if (!items)
		return -ENOMEM;
	n->items = items;
	if (n->kind == PN_MAP) {
		char **keys = realloc(n->keys, cap * sizeof(*keys));
		unsigned *lines;

		if (!keys)
			return -ENOMEM;
		n->keys = keys;
		lines = realloc(n->key_lines, cap * sizeof(*lines));
		if (!lines)
			return -ENOMEM;
		n->key_lines = lines;
	}
	n->cap = cap;
	return 0;
}

int pnode_seq_add(struct pnode *seq, struct pnode *val)
{
	if (!val || pnode_grow(seq) < 0) {
		pnode_free(val);
		return -ENOMEM;
	}
	seq->items[seq->n++] = val;
	return 0;
}

int pnode_map_add(struct pnode *map, char *key, unsigned key_line, struct pnode *val)
{
	if (!val || !key || pnode_grow(map) < 0) {
		free(key);
		pnode_free(val);
		return -ENOMEM;
	}
	map->keys[map->n] = key;
	map->key_lines[map->n] = key_line;
	map->items[map->n++] = val;
	return 0;
}

void pnode_free(struct pnode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++) {
		pnode_free(n->items[i]);
		if (n->keys)
			free(n->keys[i]);
	}
	free(n->items);
	free(n->keys);
	free(n->key_lines);
	free(n->str);
	free(n);
}

const char *pnode_kind_name(const struct pnode *n)
{
	static const char *const names[] = {
	    [PN_NULL] = "null",	   [PN_BOOL] = "a boolean", [PN_NUM] = "a number",
	    [PN_STR] = "a string", [PN_SEQ] = "a list",	    [PN_MAP] = "a mapping",
	};
	return names[n->kind];
}

/* ------------------------------------------------------------ duplicate keys */

struct keyref {
	const char *key;
	size_t i;
};

static int keyref_cmp(const void *a, const void *b)
{
	const struct keyref *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Field paths in messages use the schema spelling; keys from the file are made
 * printable so a path can never carry terminal control bytes. */
void policy_field_join(char *out, size_t n, const char *parent, const char *key, long idx)
{
	size_t len;

	if (idx >= 0) {
		snprintf(out, n, "%s[%ld]", parent, idx);
		return;
	}
	snprintf(out, n, "%s%s", parent, *parent ? "." : "");
	len = strlen(out);
	for (const char *k = key; *k && len + 1 < n; k++)
		out[len++] = (*k > 0x20 && *k < 0x7f) ? *k : '?';
	out[len] = '\0';
}

/* Sorting keeps this O(n log n): a 1 MiB file can hold a mapping with 100k keys. */
static size_t dup_keys_in(const char *name, const struct pnode *map, const char *path,
			  struct policy_diags *d)
{
	struct keyref *refs;
	size_t found = 0;
	char q[POLICY_QUOTE_MAX];

	if (map->n < 2)
		return 0;
	refs = malloc(map->n * sizeof(*refs));
	if (!refs) {
		policy_diag(d, true, name, 0, NULL, "out of memory");
		return 1;
	}
	for (size_t i = 0; i < map->n; i++)
		refs[i] = (struct keyref){map->keys[i], i};
	qsort(refs, map->n, sizeof(*refs), keyref_cmp);
	for (size_t i = 1, run = 0; i < map->n; i++) {
		size_t first = refs[run].i, dup = refs[i].i;

		if (strcmp(refs[run].key, refs[i].key) != 0) {
			run = i;
			continue;
		}
		found++;
		policy_quote(refs[i].key, q, sizeof(q));
		if (map->key_lines[first])
			policy_diag(d, true, name, map->key_lines[dup], path,
				    "duplicate key %s (first at line %u)", q,
				    map->key_lines[first]);
		else
			policy_diag(d, true, name, 0, path, "duplicate key %s", q);
	}
	free(refs);
	return found;
}

static size_t dup_keys_walk(const char *name, const struct pnode *n, const char *path,
			    struct policy_diags *d)
{
	size_t found = 0;
	char sub[256];

	if (n->kind == PN_MAP)
		found += dup_keys_in(name, n, *path ? path : NULL, d);
	if (n->kind != PN_MAP && n->kind != PN_SEQ)
		return found;
	for (size_t i = 0; i < n->n; i++) {
		policy_field_join(sub, sizeof(sub), path, n->kind == PN_MAP ? n->keys[i] : NULL,
				  n->kind == PN_MAP ? -1 : (long)i);
		found += dup_keys_walk(name, n->items[i], sub, d);
	}
	return found;
}

size_t pnode_check_dup_keys(const char *name, const struct pnode *root, struct policy_diags *d)
{
	return root ? dup_keys_walk(name, root, "", d) : 0;
}

/* ------------------------------------------------------------ messages */

void policy_diag(struct policy_diags *d, bool error, const char *name, unsigned line,
		 const char *field, const char *fmt, ...)
{
	char msg[1024], loc[32] = "";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line)
		snprintf(loc, sizeof(loc), ":%u", line);
	if (!name)
		name = "policy";
	if (field && *field) {
		if (error)
			policy_diags_add_error(d, "%s%s: %s: %s", name, loc, field, msg);
		else
			policy_diags_add_warning(d, "%s%s: %s: %s", name, loc, field, msg);
	} else if (error) {
		policy_diags_add_error(d, "%s%s: %s", name, loc, msg);
	} else {
		policy_diags_add_warning(d, "%s%s: %s", name, loc, msg);
	}
}

/* s escaped into buf from o on, then `tail`; room is kept for "...", the tail and the
 * NUL (n must hold them). */
static void escape_into(const char *s, char *buf, size_t o, size_t n, const char *tail)
{
	static const char hex[] = "0123456789abcdef";
	size_t tl = strlen(tail);

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		size_t need = (c >= 0x20 && c < 0x7f && c != '\\') ? 1 : (c == '\\' ? 2 : 4);

		if (o + need + 3 + tl + 1 > n) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (need == 1) {
			buf[o++] = (char)c;
		} else if (need == 2) {
			buf[o++] = '\\';
			buf[o++] = '\\';
		} else {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[c >> 4];
			buf[o++] = hex[c & 15];
		}
	}
	memcpy(buf + o, tail, tl + 1);
}

const char *policy_quote(const char *s, char *buf, size_t n)
{
	if (n < 8) {
		if (n)
			buf[0] = '\0';
		return buf;
	}
	buf[0] = '\'';
	escape_into(s, buf, 1, n, "'");
	return buf;
}

const char *policy_printable(const char *s, char *out, size_t n)
{
	if (n < 8) {
		if (n)
			out[0] = '\0';
		return out;
	}
	escape_into(s, out, 0, n, "");
	return out;
}

size_t policy_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[33];

	if (la > 32 || lb > 32)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best;
			size_t cost = strncasecmp(a + i - 1, b + j - 1, 1) != 0;

			best = diag + cost;
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}
