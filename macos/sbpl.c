/* The SBPL text builder and the regex translation. Paths never enter the text raw:
 * they become -D parameters, or, where a rule must be a regex, a raw string #"..."
 * whose every regex metacharacter is escaped and whose letters are [Xx] classes —
 * and a path that could end a raw string (a double quote) or a line is refused. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macos/macos_int.h"

/* ---------------------------------------------------------------- text */

static int grow(struct sbpl *b, size_t need)
{
	size_t cap = b->cap ? b->cap : 4096;
	char *s;

	while (cap < b->len + need + 1)
		cap *= 2;
	if (cap == b->cap)
		return 0;
	s = realloc(b->s, cap);
	if (!s)
		return -ENOMEM;
	b->s = s;
	b->cap = cap;
	return 0;
}

void sbpl_fail(struct sbpl *b, int err, const char *fmt, ...)
{
	va_list ap;

	if (b->err)
		return;
	b->err = err;
	va_start(ap, fmt);
	vsnprintf(b->why, sizeof(b->why), fmt, ap);
	va_end(ap);
}

void sbpl_add(struct sbpl *b, const char *s)
{
	size_t n = strlen(s);

	if (b->err)
		return;
	if (grow(b, n) < 0) {
		sbpl_fail(b, -ENOMEM, "out of memory");
		return;
	}
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
}

void sbpl_addf(struct sbpl *b, const char *fmt, ...)
{
	char buf[PATH_MAX * 2];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		sbpl_fail(b, -ENAMETOOLONG, "a profile line is too long");
		return;
	}
	sbpl_add(b, buf);
}

/* ---------------------------------------------------------------- parameters */

int macos_path_check(const char *path, char *why, size_t whylen)
{
	if (!path || path[0] != '/') {
		snprintf(why, whylen, "is not an absolute path");
		return -EINVAL;
	}
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (*p == '"') {
			snprintf(why, whylen,
				 "contains a double quote, which an SBPL profile "
				 "cannot carry safely");
			return -EINVAL;
		}
		if (*p < 0x20 || *p == 0x7f) {
			snprintf(why, whylen, "contains a control character (byte 0x%02x%s)", *p,
				 *p == '\n' ? ", a newline" : "");
			return -EINVAL;
		}
	}
	return 0;
}

const char *sbpl_param(struct sbpl *b, const char *prefix, const char *value, const char *what)
{
	size_t plen = strlen(prefix), same_prefix = 0;
	char why[160], key[64];
	struct macos_param *p;

	if (b->err)
		return NULL;
	if (macos_path_check(value, why, sizeof(why)) < 0) {
		sbpl_fail(b, -EINVAL, "%s '%s' %s", what, value, why);
		return NULL;
	}
	for (size_t i = 0; i < b->n_params; i++) {
		p = &b->params[i];
		if (strncmp(p->key, prefix, plen) != 0 || p->key[plen] != '_')
			continue;
		if (strcmp(p->value, value) == 0)
			return p->key;
		same_prefix++;
	}
	if (b->n_params == b->cap_params) {
		size_t cap = b->cap_params ? b->cap_params * 2 : 16;
		p = realloc(b->params, cap * sizeof(*p));
		if (!p) {
			sbpl_fail(b, -ENOMEM, "out of memory");
			return NULL;
		}
		b->params = p;
		b->cap_params = cap;
	}
	snprintf(key, sizeof(key), "%s_%zu", prefix, same_prefix);
	p = &b->params[b->n_params];
	p->key = strdup(key);
	p->value = strdup(value);
	if (!p->key || !p->value) {
		free(p->key);
		free(p->value);
		sbpl_fail(b, -ENOMEM, "out of memory");
		return NULL;
	}
	b->n_params++;
	return p->key;
}

void sbpl_param_filter(struct sbpl *b, const char *filter, const char *key)
{
	if (key)
		sbpl_addf(b, "(%s (param \"%s\"))", filter, key);
}

/* ---------------------------------------------------------------- regexes */

struct rbuf {
	char *s;
	size_t n, len;
	int err;
};

static void rput(struct rbuf *r, const char *s)
{
	size_t k = strlen(s);

	if (r->err)
		return;
	if (r->len + k + 1 > r->n) {
		r->err = -ENAMETOOLONG;
		return;
	}
	memcpy(r->s + r->len, s, k + 1);
	r->len += k;
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static char upper(char c)
{
	return c >= 'a' && c <= 'z' ? (char)(c - 32) : c;
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
}

/* One literal byte of a path or pattern: a letter as [Xx], a metacharacter escaped. */
static void rput_literal(struct rbuf *r, char c)
{
	char t[6];

	if (is_alpha(c)) {
		snprintf(t, sizeof(t), "[%c%c]", upper(c), lower(c));
	} else if (strchr(".^$|()[]{}*+?\\", c)) {
		t[0] = '\\';
		t[1] = c;
		t[2] = 0;
	} else {
		t[0] = c;
		t[1] = 0;
	}
	rput(r, t);
}

/* The bytes a regex source may not hold: they could end the raw string or the line. */
static int check_source(const char *s)
{
	if (!*s)
		return -EINVAL;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p == '"' || *p < 0x20 || *p == 0x7f)
			return -EINVAL;
	return 0;
}

int macos_path_regex(const char *path, char *out, size_t n)
{
	struct rbuf r = {out, n, 0, 0};

	if (path[0] != '/' || check_source(path) < 0)
		return -EINVAL;
	rput(&r, "^");
	for (const char *p = path; *p; p++)
		rput_literal(&r, *p);
	rput(&r, "(/.*)?$");
	return r.err;
}

/* A bracket class of a glob, starting at '[': kept as a class with both cases of each
 * letter and range. Returns the glob position after ']', or NULL when the class is
 * unterminated (then '[' is a literal, as fnmatch takes it). */
static const char *glob_class(struct rbuf *r, const char *g)
{
	const char *p = g + 1, *end;
	char t[16];

	if (*p == '!' || *p == '^')
		p++;
	end = p;
	if (*end == ']')
		end++;
	while (*end && *end != ']')
		end++;
	if (!*end)
		return NULL;
	rput(r, g[1] == '!' || g[1] == '^' ? "[^" : "[");
	for (; p < end; p++) {
		char lo = *p, hi = *p;
		if (p + 2 < end && p[1] == '-') {
			hi = p[2];
			p += 2;
		}
		/* Inside a class only these are special in a regex. */
		if (lo == ']' || lo == '\\' || lo == '[' || lo == '^')
			snprintf(t, sizeof(t), "\\%c", lo);
		else
			snprintf(t, sizeof(t), "%c", lo);
		rput(r, t);
		if (hi != lo) {
			snprintf(t, sizeof(t), "-%s%c", hi == ']' || hi == '\\' ? "\\" : "", hi);
			rput(r, t);
		}
		if (is_alpha(lo) && is_alpha(hi) && (lo >= 'a') == (hi >= 'a')) {
			/* The other case of the same letters. */
			char ol = lo >= 'a' ? upper(lo) : lower(lo);
			char oh = hi >= 'a' ? upper(hi) : lower(hi);
			if (ol == oh)
				snprintf(t, sizeof(t), "%c", ol);
			else
				snprintf(t, sizeof(t), "%c-%c", ol, oh);
			rput(r, t);
		}
	}
	rput(r, "]");
	return end + 1;
}

/* Leading "./" and "**" + "/" say nothing (a pattern matches at any depth anyway);
 * trailing '/' only says "a directory", which a path rule cannot tell. */
static size_t glob_trim(const char **g)
{
	size_t len;

	for (;;) {
		if (strncmp(*g, "./", 2) == 0)
			*g += 2;
		else if (strncmp(*g, "**/", 3) == 0)
			*g += 3;
		else
			break;
	}
	len = strlen(*g);
	while (len > 0 && (*g)[len - 1] == '/')
		len--;
	return len;
}

int macos_glob_regex(const char *glob, char *out, size_t n)
{
	struct rbuf r = {out, n, 0, 0};
	const char *g = glob, *end;
	bool crosses;

	if (check_source(glob) < 0)
		return -EINVAL;
	size_t len = glob_trim(&g);
	end = g + len;
	if (end == g)
		return -EINVAL;
	/* As linux/scan_walk.c matches them: a name pattern against one component, a
	 * pattern with '/' against every tail of the path, '*' crossing '/'. */
	crosses = memchr(g, '/', (size_t)(end - g)) != NULL;
	rput(&r, "/");
	while (g < end) {
		if (g[0] == '*' && g[1] == '*') {
			bool dir = g + 2 < end && g[2] == '/';
			rput(&r, dir ? "(.*/)?" : ".*");
			g += dir ? 3 : 2;
		} else if (*g == '*') {
			rput(&r, crosses ? ".*" : "[^/]*");
			g++;
		} else if (*g == '?') {
			rput(&r, crosses ? "." : "[^/]");
			g++;
		} else if (*g == '[') {
			const char *after = glob_class(&r, g);
			if (after && after <= end) {
				g = after;
			} else {
				rput_literal(&r, '[');
				g++;
			}
		} else if (*g == '\\' && g + 1 < end) {
			rput_literal(&r, g[1]);
			g += 2;
		} else {
			rput_literal(&r, *g);
			g++;
		}
	}
	rput(&r, "(/.*)?$");
	return r.err;
}

int macos_regex_fold(const char *src, char *out, size_t n)
{
	struct rbuf r = {out, n, 0, 0};
	int depth = 0;
	char t[6];

	if (check_source(src) < 0)
		return -EINVAL;
	for (const char *p = src; *p; p++) {
		if (*p == '\\' && p[1]) {
			snprintf(t, sizeof(t), "\\%c", p[1]);
			rput(&r, t);
			p++;
			continue;
		}
		if (*p == '[')
			depth = 1;
		else if (*p == ']')
			depth = 0;
		if (is_alpha(*p) && !depth)
			snprintf(t, sizeof(t), "[%c%c]", upper(*p), lower(*p));
		else
			snprintf(t, sizeof(t), "%c", *p);
		rput(&r, t);
	}
	return r.err;
}

void sbpl_regex(struct sbpl *b, int (*fn)(const char *, char *, size_t), const char *src,
		const char *what)
{
	char re[PATH_MAX * 6];
	int rc;

	if (b->err)
		return;
	rc = fn(src, re, sizeof(re));
	if (rc == -EINVAL && check_source(src) < 0 && *src) {
		sbpl_fail(b, -EINVAL,
			  "%s '%s' contains a double quote or a control character, "
			  "which an SBPL profile cannot carry safely",
			  what, src);
		return;
	}
	if (rc == -EINVAL) {
		sbpl_fail(b, -EINVAL, "%s '%s' has no name to match", what, src);
		return;
	}
	if (rc < 0) {
		sbpl_fail(b, rc, "%s '%s' is too long for a profile regex", what, src);
		return;
	}
	/* In pieces: a regex may be longer than one formatted line. */
	sbpl_add(b, "(regex #\"");
	sbpl_add(b, re);
	sbpl_add(b, "\")");
}
