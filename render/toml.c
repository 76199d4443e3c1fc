/* The one strict TOML reader: the Codex files `policy import` reads, into a cJSON
 * tree, and doctor's scan of Codex's config.toml (render_toml_scan). Import reads
 * tables, arrays of tables, dotted and quoted keys, basic and literal strings (one
 * line), integers, floats, booleans, arrays and inline tables; what it does not
 * understand (multi-line strings, dates) is an error naming the line: a file read
 * only in part could drop a restriction. Duplicate keys and redefined tables are
 * errors, as TOML says. The scan walks the whole grammar (the four string kinds,
 * dates), because a value can only be skipped safely once it is understood:
 * `x = """ sandbox_mode = ... """` is a string, not a setting. No message quotes the
 * file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/toml_int.h"

/* ---------------------------------------------------------------- keys */

static bool bare(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

static void keypath_free(struct keypath *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->seg[i]);
	k->n = 0;
	k->overflow = false;
}

/* One segment onto k. Import refuses what is too long or too deep; the scan keeps
 * reading, and a deeper path is never one it looks for. */
static int key_push(struct tr *t, struct keypath *k, char *seg)
{
	if (seg && t->scan && k->n == TOML_DEPTH) {
		free(seg);
		k->overflow = true;
		return 0;
	}
	if (!seg || (!t->scan && strlen(seg) > TOML_KEY_MAX) || k->n == TOML_DEPTH) {
		free(seg);
		return toml_fail(t, seg ? "key too long or too deep" : "out of memory");
	}
	k->seg[k->n++] = seg;
	return 0;
}

static int key(struct tr *t, struct keypath *k)
{
	for (;;) {
		char *seg = NULL;
		toml_blanks(t);
		if (toml_peek(t, 0) == '"' || toml_peek(t, 0) == '\'') {
			if (toml_string(t, false, &seg) < 0)
				return -EINVAL;
		} else {
			const char *s = t->p;
			while (bare(toml_peek(t, 0)))
				t->p++;
			if (t->p == s)
				return toml_fail(t, "a key is missing or not understood");
			seg = strndup(s, (size_t)(t->p - s));
		}
		if (key_push(t, k, seg) < 0)
			return -EINVAL;
		toml_blanks(t);
		if (toml_peek(t, 0) != '.')
			return 0;
		t->p++;
	}
}

/* The full path of a value, for the scan's kv: borrowed segments. `none`: inside an
 * array, or too deep (never a path anyone looks for). */
struct kpath {
	const char *seg[TOML_DEPTH];
	size_t n;
	bool none;
};

static void kpath_add(struct kpath *p, const struct keypath *k)
{
	p->none |= k->overflow;
	for (size_t i = 0; i < k->n && !p->none; i++) {
		if (p->n == TOML_DEPTH)
			p->none = true;
		else
			p->seg[p->n++] = k->seg[i];
	}
}

static void show(struct tr *t, const struct kpath *p, unsigned line, const cJSON *v)
{
	if (t->kv)
		t->kv(t->arg, p->none ? NULL : p->seg, p->none ? 0 : p->n, line,
		      cJSON_IsString(v) ? v->valuestring : NULL);
}

/* ---------------------------------------------------------------- values */

static int value(struct tr *t, unsigned depth, const struct kpath *path, cJSON **out);

/* The scan's scalars (numbers, booleans, dates and times): checked for shape, not
 * meaning; shown as null. */
static bool scan_char(int c)
{
	return bare(c) || c == '+' || c == '.' || c == ':';
}

static int scan_scalar(struct tr *t, cJSON **out)
{
	const char *s = t->p;
	size_t n;

	while (scan_char(toml_peek(t, 0)))
		t->p++;
	n = (size_t)(t->p - s);
	/* "1979-05-27 07:32:00": a date, one space, a time. */
	if (n == 10 && s[4] == '-' && s[7] == '-' && toml_peek(t, 0) == ' ' &&
	    toml_peek(t, 1) >= '0' && toml_peek(t, 1) <= '9') {
		t->p++;
		while (scan_char(toml_peek(t, 0)))
			t->p++;
	}
	if (n == 0 ||
	    !((s[0] >= '0' && s[0] <= '9') || s[0] == '+' || s[0] == '-' ||
	      (n == 4 && memcmp(s, "true", 4) == 0) || (n == 5 && memcmp(s, "false", 5) == 0) ||
	      (n == 3 && (memcmp(s, "inf", 3) == 0 || memcmp(s, "nan", 3) == 0))))
		return toml_fail(t, "a value is missing or not understood");
	*out = cJSON_CreateNull();
	return *out ? 0 : toml_fail(t, "out of memory");
}

static int scalar(struct tr *t, cJSON **out)
{
	const char *s = t->p;
	char text[64], *end;
	size_t n;

	if (t->scan)
		return scan_scalar(t, out);
	while (bare(toml_peek(t, 0)) || toml_peek(t, 0) == '+' || toml_peek(t, 0) == '.')
		t->p++;
	n = (size_t)(t->p - s);
	if (n == 4 && memcmp(s, "true", 4) == 0)
		*out = cJSON_CreateTrue();
	else if (n == 5 && memcmp(s, "false", 5) == 0)
		*out = cJSON_CreateFalse();
	else {
		if (n == 0 || n >= sizeof(text) || toml_peek(t, 0) == ':' ||
		    (n > 1 && memchr(s + 1, '-', n - 1) && s[0] >= '0' && s[0] <= '9'))
			return toml_fail(t, "a value is missing or not understood (dates are not "
					    "supported)");
		memcpy(text, s, n);
		text[n] = 0;
		for (size_t i = 0; i < n; i++)
			if (text[i] == '_')
				return toml_fail(t, "numbers with underscores are not supported");
		errno = 0;
		double d = strtod(text, &end);
		if (*end || errno || text[0] == '.' || (text[0] == '0' && n > 1 && text[1] != '.'))
			return toml_fail(t, "a value is missing or not understood");
		*out = cJSON_CreateNumber(d);
	}
	return *out ? 0 : toml_fail(t, "out of memory");
}

static int array(struct tr *t, unsigned depth, cJSON **out)
{
	cJSON *a = cJSON_CreateArray();

	t->p++;
	if (!a)
		return toml_fail(t, "out of memory");
	for (;;) {
		cJSON *v = NULL;
		if (toml_space(t) < 0)
			goto bad;
		if (toml_peek(t, 0) == ']') {
			t->p++;
			*out = a;
			return 0;
		}
		if (value(t, depth + 1, NULL, &v) < 0)
			goto bad;
		cJSON_AddItemToArray(a, v);
		if (toml_space(t) < 0)
			goto bad;
		if (toml_peek(t, 0) == ',')
			t->p++;
		else if (toml_peek(t, 0) != ']') {
			toml_fail(t, "expected ',' or ']' in an array");
			goto bad;
		}
	}
bad:
	cJSON_Delete(a);
	return -EINVAL;
}

static int assign(struct tr *t, cJSON *table, struct keypath *k, cJSON *v);

/* `key = value` at p into table (import) or shown to kv under base (the scan):
 * base is the path of the table it stands in, NULL inside an array. */
static int entry(struct tr *t, unsigned depth, const struct kpath *base, cJSON *table)
{
	struct keypath k = {{0}, 0, false};
	struct kpath full = {{0}, 0, base == NULL};
	unsigned line = t->line;
	cJSON *v = NULL;
	int rc = -EINVAL;

	if (base)
		full = *base;
	if (key(t, &k) < 0)
		goto out;
	toml_blanks(t);
	if (toml_peek(t, 0) != '=') {
		toml_fail(t, "expected '=' after a key");
		goto out;
	}
	t->p++;
	toml_blanks(t);
	kpath_add(&full, &k);
	if (value(t, depth, &full, &v) < 0)
		goto out;
	show(t, &full, line, v);
	if (t->scan)
		cJSON_Delete(v);
	else if (assign(t, table, &k, v) < 0)
		goto out;
	rc = 0;
out:
	keypath_free(&k);
	return rc;
}

/* { key = value, ... }: newlines, comments and a trailing comma are accepted (TOML
 * 1.1). The keys inside extend the path of the table's own key. */
static int inline_table(struct tr *t, unsigned depth, const struct kpath *path, cJSON **out)
{
	cJSON *o = cJSON_CreateObject();

	t->p++;
	if (!o)
		return toml_fail(t, "out of memory");
	for (;;) {
		if (toml_space(t) < 0)
			goto bad;
		if (toml_peek(t, 0) == '}') {
			t->p++;
			*out = o;
			return 0;
		}
		if (entry(t, depth + 1, path, o) < 0 || toml_space(t) < 0)
			goto bad;
		if (toml_peek(t, 0) == ',')
			t->p++;
		else if (toml_peek(t, 0) != '}') {
			toml_fail(t, "expected ',' or '}' in an inline table");
			goto bad;
		}
	}
bad:
	cJSON_Delete(o);
	return -EINVAL;
}

static int value(struct tr *t, unsigned depth, const struct kpath *path, cJSON **out)
{
	int c = toml_peek(t, 0);
	char *s = NULL;

	if (depth > TOML_DEPTH)
		return toml_fail(t, "arrays or inline tables nested too deeply");
	if (c == '"' || c == '\'') {
		if (toml_string(t, true, &s) < 0)
			return -EINVAL;
		*out = cJSON_CreateString(s);
		free(s);
		return *out ? 0 : toml_fail(t, "out of memory");
	}
	if (c == '[')
		return array(t, depth, out);
	if (c == '{')
		return inline_table(t, depth, path, out);
	return scalar(t, out);
}

/* ---------------------------------------------------------------- the document */

/* Walk (creating tables) to the parent of the last segment; v is consumed. */
static int assign(struct tr *t, cJSON *table, struct keypath *k, cJSON *v)
{
	cJSON *cur = table;

	for (size_t i = 0; i + 1 < k->n; i++) {
		cJSON *next = cJSON_GetObjectItemCaseSensitive(cur, k->seg[i]);
		if (!next)
			next = cJSON_AddObjectToObject(cur, k->seg[i]);
		if (!next || !cJSON_IsObject(next)) {
			cJSON_Delete(v);
			return toml_fail(t, next ? "a key is both a value and a table"
						 : "out of memory");
		}
		cur = next;
	}
	if (cJSON_GetObjectItemCaseSensitive(cur, k->seg[k->n - 1])) {
		cJSON_Delete(v);
		return toml_fail(t, "duplicate key");
	}
	if (!cJSON_AddItemToObject(cur, k->seg[k->n - 1], v)) {
		cJSON_Delete(v);
		return toml_fail(t, "out of memory");
	}
	return 0;
}

/* The table a header names, created (import only). */
static int open_table(struct tr *t, bool aot, cJSON *root, cJSON **cur)
{
	const struct keypath *k = &t->table;
	cJSON *at = root;

	for (size_t i = 0; i < k->n; i++) {
		cJSON *next = cJSON_GetObjectItemCaseSensitive(at, k->seg[i]);
		bool last = i + 1 == k->n;
		if (last && aot) {
			if (!next)
				next = cJSON_AddArrayToObject(at, k->seg[i]);
			cJSON *o = cJSON_CreateObject();
			if (!next || !cJSON_IsArray(next) || !o || !cJSON_AddItemToArray(next, o)) {
				cJSON_Delete(o);
				return toml_fail(t, "an array of tables clashes with a key");
			}
			at = o;
			continue;
		}
		if (next && cJSON_IsArray(next) && cJSON_GetArraySize(next) > 0 && !last)
			next = cJSON_GetArrayItem(next, cJSON_GetArraySize(next) - 1);
		if (last && next)
			return toml_fail(t, "a table is defined twice");
		if (!next)
			next = cJSON_AddObjectToObject(at, k->seg[i]);
		if (!next || !cJSON_IsObject(next))
			return toml_fail(t, "a table header names a value");
		at = next;
	}
	*cur = at;
	return 0;
}

static int header(struct tr *t, cJSON *root, cJSON **cur)
{
	bool aot = toml_peek(t, 1) == '[';

	t->p += aot ? 2 : 1;
	keypath_free(&t->table);
	if (key(t, &t->table) < 0)
		return -EINVAL;
	toml_blanks(t);
	if (toml_peek(t, 0) != ']' || (aot && toml_peek(t, 1) != ']'))
		return toml_fail(t, "a table header is not closed");
	t->p += aot ? 2 : 1;
	if (!t->scan && open_table(t, aot, root, cur) < 0)
		return -EINVAL;
	return toml_end_of_line(t);
}

static int key_value(struct tr *t, cJSON *cur)
{
	struct kpath base = {{0}, 0, false};

	kpath_add(&base, &t->table);
	if (entry(t, 0, &base, cur) < 0)
		return -EINVAL;
	return toml_end_of_line(t);
}

static int document(struct tr *t, cJSON *root)
{
	cJSON *cur = root;
	int rc = 0;

	if (t->end - t->p >= 3 && memcmp(t->p, "\xef\xbb\xbf", 3) == 0)
		t->p += 3;
	while (rc == 0 && t->p < t->end) {
		toml_blanks(t);
		if (t->p >= t->end)
			break;
		if (toml_newline(t))
			continue;
		if (toml_peek(t, 0) == '#')
			rc = toml_end_of_line(t);
		else if (toml_peek(t, 0) == '[')
			rc = header(t, root, &cur);
		else
			rc = key_value(t, cur);
	}
	keypath_free(&t->table);
	return rc;
}

int render_toml_parse(const char *buf, size_t len, cJSON **out, struct halo_err *e)
{
	struct tr t = {.p = buf, .end = buf + len, .line = 1, .e = e};
	cJSON *root = cJSON_CreateObject();

	if (!root)
		return toml_fail(&t, "out of memory");
	if (memchr(buf, 0, len)) {
		cJSON_Delete(root);
		halo_err_set(e, "a NUL byte: not a text file");
		return -EINVAL;
	}
	if (document(&t, root) < 0) {
		cJSON_Delete(root);
		return -EINVAL;
	}
	*out = root;
	return 0;
}

int render_toml_scan(const char *buf, size_t len, render_toml_kv_fn kv, void *arg,
		     struct halo_err *e)
{
	struct tr t = {
	    .p = buf, .end = buf + len, .line = 1, .e = e, .scan = true, .kv = kv, .arg = arg};

	return document(&t, NULL);
}
