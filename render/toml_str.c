/* The lexical layer of render/'s TOML reader: blanks, newlines, comments and the
 * string kinds with their escapes. Messages name the line, never the content. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/toml_int.h"

int toml_fail(struct tr *t, const char *what)
{
	halo_err_set(t->e, "line %u: %s", t->line, what);
	return -EINVAL;
}

int toml_peek(const struct tr *t, size_t k)
{
	return t->p + k < t->end ? (unsigned char)t->p[k] : -1;
}

void toml_blanks(struct tr *t)
{
	while (toml_peek(t, 0) == ' ' || toml_peek(t, 0) == '\t')
		t->p++;
}

bool toml_newline(struct tr *t)
{
	if (toml_peek(t, 0) == '\n') {
		t->p++;
	} else if (toml_peek(t, 0) == '\r' && toml_peek(t, 1) == '\n') {
		t->p += 2;
	} else {
		return false;
	}
	t->line++;
	return true;
}

/* A control character TOML allows nowhere outside a newline (tab is fine). */
static bool bad_control(int c)
{
	return (c >= 0 && c < 0x20 && c != '\t') || c == 0x7f;
}

/* A comment ends at a newline; the scan takes a lone CR inside it as the control
 * character it is, import leaves it to end_of_line. */
static bool comment_end(const struct tr *t)
{
	int c = toml_peek(t, 0);

	return c < 0 || c == '\n' || (c == '\r' && (!t->scan || toml_peek(t, 1) == '\n'));
}

static int comment(struct tr *t)
{
	if (toml_peek(t, 0) != '#')
		return 0;
	while (!comment_end(t)) {
		if (bad_control(toml_peek(t, 0)))
			return toml_fail(t, "control character in a comment");
		t->p++;
	}
	return 0;
}

int toml_end_of_line(struct tr *t)
{
	toml_blanks(t);
	if (comment(t) < 0)
		return -EINVAL;
	if (toml_peek(t, 0) < 0 || toml_newline(t))
		return 0;
	return toml_fail(t, "unexpected text after a value");
}

int toml_space(struct tr *t)
{
	for (;;) {
		toml_blanks(t);
		if (comment(t) < 0)
			return -EINVAL;
		if (!toml_newline(t))
			return 0;
	}
}

/* ---------------------------------------------------------------- escapes */

static int put(struct rbuf *b, struct tr *t, unsigned long cp)
{
	/* import keeps strings as C strings: no NUL */
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return toml_fail(t, t->scan ? "escape names no Unicode scalar value"
					    : "escape names no usable Unicode scalar value");
	if (cp == 0 && !t->scan)
		return toml_fail(t, "escape names no usable Unicode scalar value");
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

static int hex_digit(int h)
{
	return h >= '0' && h <= '9'   ? h - '0'
	       : h >= 'a' && h <= 'f' ? h - 'a' + 10
	       : h >= 'A' && h <= 'F' ? h - 'A' + 10
				      : -1;
}

/* After a backslash in a basic string. \e and \x (TOML 1.1) only in the scan. */
static int escape(struct tr *t, struct rbuf *b)
{
	static const char from[] = "btnfr\"\\e", to[] = "\b\t\n\f\r\"\\\x1b";
	int c = toml_peek(t, 0);
	const char *k = c > 0 ? strchr(from, c) : NULL;
	size_t digits = c == 'u' ? 4 : c == 'U' ? 8 : c == 'x' && t->scan ? 2 : 0;
	unsigned long cp = 0;

	t->p++;
	if (k && *k && (t->scan || *k != 'e')) {
		rbuf_printf(b, "%c", to[k - from]);
		return 0;
	}
	if (!digits)
		return toml_fail(t, "bad escape in a string");
	for (size_t i = 0; i < digits; i++) {
		int d = hex_digit(toml_peek(t, 0));
		if (d < 0)
			return toml_fail(t, "bad escape in a string");
		cp = cp * 16 + (unsigned long)d;
		t->p++;
	}
	return put(b, t, cp);
}

/* ---------------------------------------------------------------- strings */

/* One character of a string's content at p (not its end). */
static int content(struct tr *t, char q, struct rbuf *b)
{
	int c = toml_peek(t, 0);

	t->p++;
	if (q == '"' && c == '\\')
		return escape(t, b);
	if (bad_control(c))
		return toml_fail(t, "control character in a string");
	rbuf_printf(b, "%c", c);
	return 0;
}

/* "..." or '...' (the opening quote taken): escapes only in "...". */
static int one_line(struct tr *t, char q, struct rbuf *b)
{
	for (;;) {
		int c = toml_peek(t, 0);
		if (c < 0 || c == '\n' || c == '\r')
			return toml_fail(t, "unterminated string");
		if (c == q) {
			t->p++;
			return 0;
		}
		if (content(t, q, b) < 0)
			return -EINVAL;
	}
}

/* A line-ending backslash in a multi-line basic string eats the newline and every
 * blank and newline after it. */
static bool line_ending_backslash(struct tr *t)
{
	const char *save = t->p;
	unsigned line = t->line;

	toml_blanks(t);
	if (!toml_newline(t)) {
		t->p = save;
		t->line = line;
		return false;
	}
	for (;;) {
		toml_blanks(t);
		if (!toml_newline(t))
			return true;
	}
}

/* """...""" or '''...''' (the three opening quotes taken). Up to two more quotes may
 * end the content right before the closing three. */
static int multi_line(struct tr *t, char q, struct rbuf *b)
{
	toml_newline(t); /* a newline right after the opening quotes is trimmed */
	for (;;) {
		int c = toml_peek(t, 0);
		if (c < 0)
			return toml_fail(t, "unterminated multi-line string");
		if (c == q && toml_peek(t, 1) == q && toml_peek(t, 2) == q) {
			int extra = 0;
			while (extra < 2 && toml_peek(t, 3 + (size_t)extra) == q)
				extra++;
			rbuf_printf(b, "%.*s", extra, t->p);
			t->p += 3 + extra;
			return 0;
		}
		if (toml_newline(t)) {
			rbuf_printf(b, "\n");
			continue;
		}
		if (q == '"' && c == '\\') {
			t->p++;
			if (line_ending_backslash(t))
				continue;
			t->p--;
		}
		if (content(t, q, b) < 0)
			return -EINVAL;
	}
}

int toml_string(struct tr *t, bool value, char **out)
{
	char q = (char)toml_peek(t, 0);
	bool multi = toml_peek(t, 1) == q && toml_peek(t, 2) == q;
	struct rbuf b = {0};
	int rc;

	if (multi && !t->scan)
		return toml_fail(t, "multi-line strings are not supported here; write one line");
	rbuf_printf(&b, "%s", "");
	if (multi && value) {
		t->p += 3;
		rc = multi_line(t, q, &b);
	} else {
		t->p++;
		rc = one_line(t, q, &b);
	}
	if (rc == 0 && b.oom)
		rc = toml_fail(t, "out of memory");
	if (rc < 0) {
		rbuf_free(&b);
		return rc;
	}
	*out = b.s;
	return 0;
}
