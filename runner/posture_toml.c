/* A strict reader for the part of TOML that doctor needs from Codex's config.toml:
 * where sandbox_mode is "danger-full-access", at the top level or in a [profiles.NAME]
 * table, however the key is spelled (table headers, dotted keys, quoted keys, inline
 * tables, escapes). It walks the whole document — tables, dotted keys, the four string
 * kinds, arrays, inline tables and scalars — because a value can only be skipped
 * safely once it is understood: `x = """ sandbox_mode = ... """` is a string, not a
 * setting. Whatever it does not understand is an error naming the line: a file that
 * cannot be read completely is a file whose setting cannot be vouched for. No message
 * quotes the file. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runner/doctor.h"

#define KEY_MAX	  256 /* a longer key segment is refused */
#define SEGS_MAX  8   /* deeper paths are parsed but cannot be one we look for */
#define DEPTH_MAX 32  /* nested arrays and inline tables */
#define VAL_MAX	  64  /* decoded string values are compared up to this length */

struct keypath {
	char seg[SEGS_MAX][KEY_MAX];
	size_t n;
	bool overflow;
};

struct tp {
	const char *p, *end;
	unsigned line;
	char *why;
	size_t whylen;
	posture_toml_hit_fn hit;
	void *arg;
	struct keypath table; /* the current [table] */
};

struct strval {
	char text[VAL_MAX];
	size_t len;
	bool truncated;
	bool is_string;
};

static int fail(struct tp *t, const char *what)
{
	snprintf(t->why, t->whylen, "line %u: %s", t->line, what);
	return -EINVAL;
}

static bool eof(const struct tp *t)
{
	return t->p >= t->end;
}

static int peek(const struct tp *t, size_t k)
{
	return t->p + k < t->end ? (unsigned char)t->p[k] : -1;
}

static void skip_blank(struct tp *t)
{
	while (!eof(t) && (*t->p == ' ' || *t->p == '\t'))
		t->p++;
}

/* A control character TOML allows nowhere outside a newline (tab is fine). */
static bool bad_control(int c)
{
	return (c >= 0 && c < 0x20 && c != '\t') || c == 0x7f;
}

/* A newline at p: "\n" or "\r\n". Consumes it and counts it. */
static bool take_newline(struct tp *t)
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

static int skip_comment(struct tp *t)
{
	if (peek(t, 0) != '#')
		return 0;
	while (!eof(t) && *t->p != '\n' && !(*t->p == '\r' && peek(t, 1) == '\n')) {
		if (bad_control((unsigned char)*t->p))
			return fail(t, "control character in a comment");
		t->p++;
	}
	return 0;
}

/* Blanks, an optional comment, then a newline or the end of the file. */
static int end_of_line(struct tp *t)
{
	skip_blank(t);
	if (skip_comment(t) < 0)
		return -EINVAL;
	if (eof(t) || take_newline(t))
		return 0;
	return fail(t, "unexpected text after a value");
}

/* Inside arrays and inline tables: blanks, newlines and comments. */
static int skip_space(struct tp *t)
{
	for (;;) {
		skip_blank(t);
		if (skip_comment(t) < 0)
			return -EINVAL;
		if (!take_newline(t))
			return 0;
	}
}

/* ---------------------------------------------------------------- strings */

static void put(struct strval *v, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (v->len + 1 >= sizeof(v->text)) {
			v->truncated = true;
			return;
		}
		v->text[v->len++] = s[i];
	}
	v->text[v->len] = '\0';
}

static void put_utf8(struct strval *v, unsigned long cp)
{
	char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | (cp >> 18));
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	put(v, b, n);
}

static int hex_escape(struct tp *t, size_t digits, struct strval *v)
{
	unsigned long cp = 0;

	for (size_t i = 0; i < digits; i++) {
		int c = peek(t, i);
		int d = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;
		if (d < 0)
			return fail(t, "bad escape in a string");
		cp = cp * 16 + (unsigned long)d;
	}
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return fail(t, "escape names no Unicode scalar value");
	t->p += digits;
	put_utf8(v, cp);
	return 0;
}

/* After a backslash in a basic string. */
static int escape(struct tp *t, struct strval *v)
{
	static const char from[] = "btnfr\"\\e", to[] = "\b\t\n\f\r\"\\\x1b";
	int c = peek(t, 0);
	const char *k = c > 0 ? strchr(from, c) : NULL;

	if (k && *k) {
		t->p++;
		put(v, &to[k - from], 1);
		return 0;
	}
	t->p++;
	if (c == 'u')
		return hex_escape(t, 4, v);
	if (c == 'U')
		return hex_escape(t, 8, v);
	if (c == 'x')
		return hex_escape(t, 2, v);
	return fail(t, "bad escape in a string");
}

/* "..." or '...' (the opening quote `q` already taken): escapes only in "...". */
static int one_line_string(struct tp *t, struct strval *v, char q)
{
	for (;;) {
		int c = peek(t, 0);
		if (c < 0 || c == '\n' || c == '\r')
			return fail(t, "unterminated string");
		t->p++;
		if (c == q)
			return 0;
		if (q == '"' && c == '\\') {
			if (escape(t, v) < 0)
				return -EINVAL;
		} else if (bad_control(c)) {
			return fail(t, "control character in a string");
		} else {
			char ch = (char)c;
			put(v, &ch, 1);
		}
	}
}

/* A line-ending backslash in a multi-line basic string eats the newline and every
 * blank and newline after it. */
static bool line_ending_backslash(struct tp *t)
{
	const char *save = t->p;
	unsigned line = t->line;

	skip_blank(t);
	if (!take_newline(t)) {
		t->p = save;
		t->line = line;
		return false;
	}
	for (;;) {
		skip_blank(t);
		if (!take_newline(t))
			return true;
	}
}

/* """...""" or '''...''' (the three opening quotes already taken). Up to two more
 * quotes may end the content right before the closing three. */
static int multiline_string(struct tp *t, char q, struct strval *v)
{
	take_newline(t); /* a newline right after the opening quotes is trimmed */
	for (;;) {
		int c = peek(t, 0);
		if (c < 0)
			return fail(t, "unterminated multi-line string");
		if (c == q && peek(t, 1) == q && peek(t, 2) == q) {
			size_t extra = 0;
			while (extra < 2 && peek(t, 3 + extra) == q)
				extra++;
			put(v, t->p, extra);
			t->p += 3 + extra;
			return 0;
		}
		if (take_newline(t)) {
			put(v, "\n", 1);
			continue;
		}
		t->p++;
		if (q == '"' && c == '\\') {
			if (line_ending_backslash(t))
				continue;
			if (escape(t, v) < 0)
				return -EINVAL;
		} else if (bad_control(c)) {
			return fail(t, "control character in a string");
		} else {
			char ch = (char)c;
			put(v, &ch, 1);
		}
	}
}

static int string_value(struct tp *t, struct strval *v)
{
	char q = *t->p;

	v->is_string = true;
	if (peek(t, 1) == q && peek(t, 2) == q) {
		t->p += 3;
		return multiline_string(t, q, v);
	}
	t->p++;
	return one_line_string(t, v, q);
}

/* ---------------------------------------------------------------- keys */

static bool bare_key_char(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

static int simple_key(struct tp *t, char *out)
{
	struct strval v = {{0}, 0, false, false};
	int c = peek(t, 0);

	if (c == '"' || c == '\'') {
		t->p++;
		if (one_line_string(t, &v, (char)c) < 0)
			return -EINVAL;
	} else {
		const char *s = t->p;
		while (!eof(t) && bare_key_char((unsigned char)*t->p))
			t->p++;
		if (t->p == s)
			return fail(t, "a key is missing or not understood");
		put(&v, s, (size_t)(t->p - s));
	}
	/* Longer than anything compared: kept, marked, never equal to a name we want. */
	if (v.truncated)
		snprintf(out, KEY_MAX, "\x01");
	else
		snprintf(out, KEY_MAX, "%s", v.text);
	return 0;
}

static void path_push(struct keypath *k, const char *seg)
{
	if (k->n == SEGS_MAX) {
		k->overflow = true;
		return;
	}
	snprintf(k->seg[k->n++], KEY_MAX, "%s", seg);
}

/* key = simple-key *( ws "." ws simple-key ), appended to k. */
static int dotted_key(struct tp *t, struct keypath *k)
{
	char seg[KEY_MAX];

	for (;;) {
		if (simple_key(t, seg) < 0)
			return -EINVAL;
		path_push(k, seg);
		skip_blank(t);
		if (peek(t, 0) != '.')
			return 0;
		t->p++;
		skip_blank(t);
	}
}

/* ---------------------------------------------------------------- values */

static void check_match(struct tp *t, const struct keypath *k, unsigned line,
			const struct strval *v)
{
	bool top = k->n == 1 && strcmp(k->seg[0], "sandbox_mode") == 0;
	bool profile = k->n == 3 && strcmp(k->seg[0], "profiles") == 0 &&
		       strcmp(k->seg[2], "sandbox_mode") == 0;

	if (k->overflow || !(top || profile) || !v->is_string || v->truncated)
		return;
	if (strcmp(v->text, "danger-full-access") == 0)
		t->hit(t->arg, line, profile);
}

static bool scalar_char(int c)
{
	return bare_key_char(c) || c == '+' || c == '.' || c == ':';
}

/* Numbers, booleans, dates and times: checked for shape, not meaning. */
static int scalar(struct tp *t)
{
	const char *s = t->p;
	size_t n;

	while (!eof(t) && scalar_char((unsigned char)*t->p))
		t->p++;
	n = (size_t)(t->p - s);
	/* "1979-05-27 07:32:00": a date, one space, a time. */
	if (n == 10 && s[4] == '-' && s[7] == '-' && peek(t, 0) == ' ' && peek(t, 1) >= '0' &&
	    peek(t, 1) <= '9') {
		t->p++;
		while (!eof(t) && scalar_char((unsigned char)*t->p))
			t->p++;
	}
	if (n == 0)
		return fail(t, "a value is missing or not understood");
	if ((s[0] >= '0' && s[0] <= '9') || s[0] == '+' || s[0] == '-' ||
	    (n == 4 && memcmp(s, "true", 4) == 0) || (n == 5 && memcmp(s, "false", 5) == 0) ||
	    (n == 3 && (memcmp(s, "inf", 3) == 0 || memcmp(s, "nan", 3) == 0)))
		return 0;
	return fail(t, "a value is missing or not understood");
}

static int value(struct tp *t, const struct keypath *k, unsigned depth, struct strval *v);

static int array(struct tp *t, unsigned depth)
{
	t->p++;
	for (;;) {
		struct strval ignored = {{0}, 0, false, false};
		if (skip_space(t) < 0)
			return -EINVAL;
		if (peek(t, 0) == ']') {
			t->p++;
			return 0;
		}
		if (value(t, NULL, depth + 1, &ignored) < 0 || skip_space(t) < 0)
			return -EINVAL;
		if (peek(t, 0) == ',') {
			t->p++;
		} else if (peek(t, 0) != ']') {
			return fail(t, "expected ',' or ']' in an array");
		}
	}
}

/* { key = value, ... }: newlines, comments and a trailing comma are accepted (TOML
 * 1.1). The keys inside extend the path of the table's own key. */
static int inline_table(struct tp *t, const struct keypath *k, unsigned depth)
{
	t->p++;
	for (;;) {
		struct keypath full;
		struct strval v = {{0}, 0, false, false};
		unsigned line;

		if (skip_space(t) < 0)
			return -EINVAL;
		if (peek(t, 0) == '}') {
			t->p++;
			return 0;
		}
		if (k) {
			full = *k;
		} else {
			memset(&full, 0, sizeof(full));
			full.overflow = true; /* inside an array: never a setting we look for */
		}
		line = t->line;
		if (dotted_key(t, &full) < 0)
			return -EINVAL;
		skip_blank(t);
		if (peek(t, 0) != '=')
			return fail(t, "expected '=' after a key");
		t->p++;
		skip_blank(t);
		if (value(t, &full, depth + 1, &v) < 0)
			return -EINVAL;
		check_match(t, &full, line, &v);
		if (skip_space(t) < 0)
			return -EINVAL;
		if (peek(t, 0) == ',') {
			t->p++;
		} else if (peek(t, 0) != '}') {
			return fail(t, "expected ',' or '}' in an inline table");
		}
	}
}

static int value(struct tp *t, const struct keypath *k, unsigned depth, struct strval *v)
{
	int c = peek(t, 0);

	if (depth > DEPTH_MAX)
		return fail(t, "arrays or inline tables nested too deeply");
	if (c == '"' || c == '\'')
		return string_value(t, v);
	if (c == '[')
		return array(t, depth);
	if (c == '{')
		return inline_table(t, k, depth);
	return scalar(t);
}

/* ---------------------------------------------------------------- the document */

static int table_header(struct tp *t)
{
	bool array_table = peek(t, 1) == '[';

	t->p += array_table ? 2 : 1;
	memset(&t->table, 0, sizeof(t->table));
	skip_blank(t);
	if (dotted_key(t, &t->table) < 0)
		return -EINVAL;
	skip_blank(t);
	if (peek(t, 0) != ']' || (array_table && peek(t, 1) != ']'))
		return fail(t, "a table header is not closed");
	t->p += array_table ? 2 : 1;
	return end_of_line(t);
}

static int key_value(struct tp *t)
{
	struct keypath full = t->table;
	struct strval v = {{0}, 0, false, false};
	unsigned line = t->line;

	if (dotted_key(t, &full) < 0)
		return -EINVAL;
	skip_blank(t);
	if (peek(t, 0) != '=')
		return fail(t, "expected '=' after a key");
	t->p++;
	skip_blank(t);
	if (value(t, &full, 0, &v) < 0)
		return -EINVAL;
	check_match(t, &full, line, &v);
	return end_of_line(t);
}

int posture_codex_scan(const char *buf, size_t len, posture_toml_hit_fn hit, void *arg, char *why,
		       size_t whylen)
{
	struct tp t;

	memset(&t, 0, sizeof(t));
	t.p = buf;
	t.end = buf + len;
	t.line = 1;
	t.why = why;
	t.whylen = whylen;
	t.hit = hit;
	t.arg = arg;
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		t.p += 3;
	while (!eof(&t)) {
		int rc = 0;

		skip_blank(&t);
		if (eof(&t))
			break;
		if (take_newline(&t))
			continue;
		if (*t.p == '#')
			rc = end_of_line(&t);
		else if (*t.p == '[')
			rc = table_header(&t);
		else
			rc = key_value(&t);
		if (rc < 0)
			return rc;
	}
	return 0;
}
