/* A strict TOML reader for the Codex files `policy import` reads, into a cJSON tree:
 * tables, arrays of tables, dotted and quoted keys, basic and literal strings (one
 * line), integers, floats, booleans, arrays and inline tables. What it does not
 * understand (multi-line strings, dates) is an error naming the line: a file read
 * only in part could drop a restriction. Duplicate keys and redefined tables are
 * errors, as TOML says. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/render_int.h"

#define TOML_DEPTH   32
#define TOML_KEY_MAX 1024

struct tr {
	const char *p, *end;
	unsigned line;
	struct halo_err *e;
};

static int fail(struct tr *t, const char *what)
{
	halo_err_set(t->e, "line %u: %s", t->line, what);
	return -EINVAL;
}

static int peek(const struct tr *t, size_t k)
{
	return t->p + k < t->end ? (unsigned char)t->p[k] : -1;
}

static void blanks(struct tr *t)
{
	while (peek(t, 0) == ' ' || peek(t, 0) == '\t')
		t->p++;
}

static bool newline(struct tr *t)
{
	if (peek(t, 0) == '\n') {
		t->p++;
	} else if (peek(t, 0) == '\r' && peek(t, 1) == '\n') {
		t->p += 2;
	} else {
		return false;
	}
	t->line++;
	return true;
}

static int comment(struct tr *t)
{
	if (peek(t, 0) != '#')
		return 0;
	while (peek(t, 0) >= 0 && peek(t, 0) != '\n' && peek(t, 0) != '\r') {
		int c = peek(t, 0);
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return fail(t, "control character in a comment");
		t->p++;
	}
	return 0;
}

static int end_of_line(struct tr *t)
{
	blanks(t);
	if (comment(t) < 0)
		return -EINVAL;
	if (peek(t, 0) < 0 || newline(t))
		return 0;
	return fail(t, "unexpected text after a value");
}

/* Blanks, comments and newlines (inside arrays). */
static int space(struct tr *t)
{
	for (;;) {
		blanks(t);
		if (comment(t) < 0)
			return -EINVAL;
		if (!newline(t))
			return 0;
	}
}

/* ---------------------------------------------------------------- strings */

static int put(struct rbuf *b, struct tr *t, unsigned long cp)
{
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0)
		return fail(t, "escape names no usable Unicode scalar value");
	if (cp < 0x80)
		rbuf_printf(b, "%c", (int)cp);
	else if (cp < 0x800)
		rbuf_printf(b, "%c%c", (int)(0xc0 | (cp >> 6)), (int)(0x80 | (cp & 0x3f)));
	else if (cp < 0x10000)
		rbuf_printf(b, "%c%c%c", (int)(0xe0 | (cp >> 12)), (int)(0x80 | ((cp >> 6) & 0x3f)),
			    (int)(0x80 | (cp & 0x3f)));
	else
		rbuf_printf(b, "%c%c%c%c", (int)(0xf0 | (cp >> 18)),
			    (int)(0x80 | ((cp >> 12) & 0x3f)), (int)(0x80 | ((cp >> 6) & 0x3f)),
			    (int)(0x80 | (cp & 0x3f)));
	return 0;
}

static int escape(struct tr *t, struct rbuf *b)
{
	static const char from[] = "btnfr\"\\", to[] = "\b\t\n\f\r\"\\";
	int c = peek(t, 0);
	const char *k = c > 0 ? strchr(from, c) : NULL;
	size_t digits = c == 'u' ? 4 : c == 'U' ? 8 : 0;
	unsigned long cp = 0;

	t->p++;
	if (k && *k) {
		rbuf_printf(b, "%c", to[k - from]);
		return 0;
	}
	if (!digits)
		return fail(t, "bad escape in a string");
	for (size_t i = 0; i < digits; i++) {
		int h = peek(t, 0);
		int d = h >= '0' && h <= '9'   ? h - '0'
			: h >= 'a' && h <= 'f' ? h - 'a' + 10
			: h >= 'A' && h <= 'F' ? h - 'A' + 10
					       : -1;
		if (d < 0)
			return fail(t, "bad escape in a string");
		cp = cp * 16 + (unsigned long)d;
		t->p++;
	}
	return put(b, t, cp);
}

/* A one-line basic or literal string; the result is malloc'd into *out. */
static int string(struct tr *t, char **out)
{
	char q = (char)peek(t, 0);
	struct rbuf b = {0};

	if (peek(t, 1) == q && peek(t, 2) == q)
		return fail(t, "multi-line strings are not supported here; write one line");
	t->p++;
	rbuf_printf(&b, "%s", "");
	for (;;) {
		int c = peek(t, 0);
		if (c < 0 || c == '\n' || c == '\r') {
			rbuf_free(&b);
			return fail(t, "unterminated string");
		}
		if (c == q) {
			t->p++;
			break;
		}
		if (q == '"' && c == '\\') {
			t->p++;
			if (escape(t, &b) < 0) {
				rbuf_free(&b);
				return -EINVAL;
			}
			continue;
		}
		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			rbuf_free(&b);
			return fail(t, "control character in a string");
		}
		rbuf_printf(&b, "%c", c);
		t->p++;
	}
	if (b.oom) {
		rbuf_free(&b);
		return fail(t, "out of memory");
	}
	*out = b.s;
	return 0;
}

/* ---------------------------------------------------------------- keys */

static bool bare(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

struct keypath {
	char *seg[TOML_DEPTH];
	size_t n;
};

static void keypath_free(struct keypath *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->seg[i]);
	k->n = 0;
}

static int key(struct tr *t, struct keypath *k)
{
	for (;;) {
		char *seg = NULL;
		blanks(t);
		if (peek(t, 0) == '"' || peek(t, 0) == '\'') {
			if (string(t, &seg) < 0)
				return -EINVAL;
		} else {
			const char *s = t->p;
			while (bare(peek(t, 0)))
				t->p++;
			if (t->p == s)
				return fail(t, "a key is missing or not understood");
			seg = strndup(s, (size_t)(t->p - s));
		}
		if (!seg || strlen(seg) > TOML_KEY_MAX || k->n == TOML_DEPTH) {
			free(seg);
			return fail(t, seg ? "key too long or too deep" : "out of memory");
		}
		k->seg[k->n++] = seg;
		blanks(t);
		if (peek(t, 0) != '.')
			return 0;
		t->p++;
	}
}

/* ---------------------------------------------------------------- values */

static int value(struct tr *t, unsigned depth, cJSON **out);

static int scalar(struct tr *t, cJSON **out)
{
	const char *s = t->p;
	char text[64], *end;
	size_t n;

	while (bare(peek(t, 0)) || peek(t, 0) == '+' || peek(t, 0) == '.')
		t->p++;
	n = (size_t)(t->p - s);
	if (n == 4 && memcmp(s, "true", 4) == 0)
		*out = cJSON_CreateTrue();
	else if (n == 5 && memcmp(s, "false", 5) == 0)
		*out = cJSON_CreateFalse();
	else {
		if (n == 0 || n >= sizeof(text) || peek(t, 0) == ':' ||
		    (n > 1 && memchr(s + 1, '-', n - 1) && s[0] >= '0' && s[0] <= '9'))
			return fail(t, "a value is missing or not understood (dates are not "
				       "supported)");
		memcpy(text, s, n);
		text[n] = 0;
		for (size_t i = 0; i < n; i++)
			if (text[i] == '_')
				return fail(t, "numbers with underscores are not supported");
		errno = 0;
		double d = strtod(text, &end);
		if (*end || errno || text[0] == '.' || (text[0] == '0' && n > 1 && text[1] != '.'))
			return fail(t, "a value is missing or not understood");
		*out = cJSON_CreateNumber(d);
	}
	return *out ? 0 : fail(t, "out of memory");
}

static int array(struct tr *t, unsigned depth, cJSON **out)
{
	cJSON *a = cJSON_CreateArray();

	t->p++;
	if (!a)
		return fail(t, "out of memory");
	for (;;) {
		cJSON *v = NULL;
		if (space(t) < 0)
			goto bad;
		if (peek(t, 0) == ']') {
			t->p++;
			*out = a;
			return 0;
		}
		if (value(t, depth + 1, &v) < 0)
			goto bad;
		cJSON_AddItemToArray(a, v);
		if (space(t) < 0)
			goto bad;
		if (peek(t, 0) == ',')
			t->p++;
		else if (peek(t, 0) != ']') {
			fail(t, "expected ',' or ']' in an array");
			goto bad;
		}
	}
bad:
	cJSON_Delete(a);
	return -EINVAL;
}

static int assign(struct tr *t, cJSON *table, struct keypath *k, cJSON *v);

static int inline_table(struct tr *t, unsigned depth, cJSON **out)
{
	cJSON *o = cJSON_CreateObject();
	bool first = true;

	t->p++;
	if (!o)
		return fail(t, "out of memory");
	for (;;) {
		struct keypath k = {{0}, 0};
		cJSON *v = NULL;
		if (space(t) < 0)
			goto bad;
		if (peek(t, 0) == '}') {
			t->p++;
			*out = o;
			return 0;
		}
		(void)first;
		first = false;
		if (key(t, &k) < 0) {
			keypath_free(&k);
			goto bad;
		}
		blanks(t);
		if (peek(t, 0) != '=') {
			keypath_free(&k);
			fail(t, "expected '=' after a key");
			goto bad;
		}
		t->p++;
		blanks(t);
		if (value(t, depth + 1, &v) < 0 || assign(t, o, &k, v) < 0) {
			keypath_free(&k);
			goto bad;
		}
		keypath_free(&k);
		if (space(t) < 0)
			goto bad;
		if (peek(t, 0) == ',')
			t->p++;
		else if (peek(t, 0) != '}') {
			fail(t, "expected ',' or '}' in an inline table");
			goto bad;
		}
	}
bad:
	cJSON_Delete(o);
	return -EINVAL;
}

static int value(struct tr *t, unsigned depth, cJSON **out)
{
	int c = peek(t, 0);
	char *s = NULL;

	if (depth > TOML_DEPTH)
		return fail(t, "arrays or inline tables nested too deeply");
	if (c == '"' || c == '\'') {
		if (string(t, &s) < 0)
			return -EINVAL;
		*out = cJSON_CreateString(s);
		free(s);
		return *out ? 0 : fail(t, "out of memory");
	}
	if (c == '[')
		return array(t, depth, out);
	if (c == '{')
		return inline_table(t, depth, out);
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
			return fail(t,
				    next ? "a key is both a value and a table" : "out of memory");
		}
		cur = next;
	}
	if (cJSON_GetObjectItemCaseSensitive(cur, k->seg[k->n - 1])) {
		cJSON_Delete(v);
		return fail(t, "duplicate key");
	}
	if (!cJSON_AddItemToObject(cur, k->seg[k->n - 1], v)) {
		cJSON_Delete(v);
		return fail(t, "out of memory");
	}
	return 0;
}

static int header(struct tr *t, cJSON *root, cJSON **cur)
{
	bool aot = peek(t, 1) == '[';
	struct keypath k = {{0}, 0};
	cJSON *at = root;
	int rc = -EINVAL;

	t->p += aot ? 2 : 1;
	if (key(t, &k) < 0)
		goto out;
	blanks(t);
	if (peek(t, 0) != ']' || (aot && peek(t, 1) != ']')) {
		fail(t, "a table header is not closed");
		goto out;
	}
	t->p += aot ? 2 : 1;
	for (size_t i = 0; i < k.n; i++) {
		cJSON *next = cJSON_GetObjectItemCaseSensitive(at, k.seg[i]);
		bool last = i + 1 == k.n;
		if (last && aot) {
			if (!next)
				next = cJSON_AddArrayToObject(at, k.seg[i]);
			cJSON *o = cJSON_CreateObject();
			if (!next || !cJSON_IsArray(next) || !o || !cJSON_AddItemToArray(next, o)) {
				cJSON_Delete(o);
				fail(t, "an array of tables clashes with a key");
				goto out;
			}
			at = o;
			continue;
		}
		if (next && cJSON_IsArray(next) && cJSON_GetArraySize(next) > 0 && !last)
			next = cJSON_GetArrayItem(next, cJSON_GetArraySize(next) - 1);
		if (last && next) {
			fail(t, "a table is defined twice");
			goto out;
		}
		if (!next)
			next = cJSON_AddObjectToObject(at, k.seg[i]);
		if (!next || !cJSON_IsObject(next)) {
			fail(t, "a table header names a value");
			goto out;
		}
		at = next;
	}
	*cur = at;
	rc = end_of_line(t);
out:
	keypath_free(&k);
	return rc;
}

static int key_value(struct tr *t, cJSON *cur)
{
	struct keypath k = {{0}, 0};
	cJSON *v = NULL;
	int rc = -EINVAL;

	if (key(t, &k) < 0)
		goto out;
	blanks(t);
	if (peek(t, 0) != '=') {
		fail(t, "expected '=' after a key");
		goto out;
	}
	t->p++;
	blanks(t);
	if (value(t, 0, &v) < 0 || assign(t, cur, &k, v) < 0)
		goto out;
	rc = end_of_line(t);
out:
	keypath_free(&k);
	return rc;
}

int render_toml_parse(const char *buf, size_t len, cJSON **out, struct halo_err *e)
{
	struct tr t = {buf, buf + len, 1, e};
	cJSON *root = cJSON_CreateObject(), *cur = root;

	if (!root)
		return fail(&t, "out of memory");
	if (memchr(buf, 0, len)) {
		cJSON_Delete(root);
		halo_err_set(e, "a NUL byte: not a text file");
		return -EINVAL;
	}
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		t.p += 3;
	while (t.p < t.end) {
		int rc = 0;
		blanks(&t);
		if (t.p >= t.end)
			break;
		if (newline(&t))
			continue;
		if (peek(&t, 0) == '#')
			rc = end_of_line(&t);
		else if (peek(&t, 0) == '[')
			rc = header(&t, root, &cur);
		else
			rc = key_value(&t, cur);
		if (rc < 0) {
			cJSON_Delete(root);
			return rc;
		}
	}
	*out = root;
	return 0;
}
