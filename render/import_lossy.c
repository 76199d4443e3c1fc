/* `policy import`, the deny entries the policy language cannot hold: without --lossy
 * each is named and refuses the import (the policy would be looser than its source);
 * with it, each becomes its nearest tighter form, and every substitution is reported.
 * A denied host pattern -> its enclosing wildcard (or every host); a denied path glob
 * -> its enclosing directory; a path relative to the settings file -> the same name
 * pattern everywhere. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/import_int.h"

/* Outside text for a message: printable ASCII, the rest as \xNN, cut at n. */
static void quote_into(char *q, size_t n, const char *s)
{
	size_t k = 0;

	for (const unsigned char *c = (const unsigned char *)s; *c && k + 5 < n; c++)
		k += (size_t)snprintf(q + k, n - k, (*c >= 0x20 && *c < 0x7f) ? "%c" : "\\x%02x",
				      *c);
	q[k] = 0;
}

void imp_lost(struct imp *m, const char *field, const char *entry, const char *why,
	      const char *tighter)
{
	char q[600], line[1400];

	quote_into(q, sizeof(q), entry);
	if (m->w->lossy && tighter)
		snprintf(line, sizeof(line), "%s: %s -> %s (%s)", field, q, tighter, why);
	else
		snprintf(line, sizeof(line), "%s: %s: %s", field, q, why);
	if (rlist_push(m->w->lossy && tighter ? &m->subst : &m->lost, line) < 0)
		m->error = true;
}

static bool pattern_ok(const char *s)
{
	char why[160];

	return s[0] && policy_pattern_check(s, why, sizeof(why)) == 0;
}

/* The nearest tighter form of a denied entry the grammar cannot hold, into a (and b,
 * or ""): a URL's host; for a wildcard, the labels after the last one holding a '*',
 * denied with every subdomain ("*.S" and "S": whatever the vendor's '*' matches, it
 * stays under S); a host with a bad port, the host on every port. False: only
 * "every host" covers it. */
static bool deny_enclosing(const char *h, char *a, char *b, size_t n)
{
	const char *star = strrchr(h, '*'), *dot;

	b[0] = 0;
	if (strstr(h, "://")) {
		const char *auth = strstr(h, "://") + 3, *at;
		size_t k = strcspn(auth, "/?#");

		snprintf(a, n, "%.*s", (int)k, auth);
		if ((at = strrchr(a, '@')))
			memmove(a, at + 1, strlen(at + 1) + 1);
		if (!pattern_ok(a) && strrchr(a, ':'))
			*strrchr(a, ':') = 0;
		return !strchr(a, '*') && pattern_ok(a);
	}
	if (star) {
		if (!(dot = strchr(star, '.')) || !dot[1])
			return false;
		snprintf(a, n, "*.%s", dot + 1);
		snprintf(b, n, "%s", dot + 1);
		return pattern_ok(a) && pattern_ok(b);
	}
	snprintf(a, n, "%s", h);
	if (strrchr(a, ':') && !strchr(a, ']'))
		*strrchr(a, ':') = 0;
	return pattern_ok(a);
}

/* A denied entry halo-run cannot hold: refused, or (--lossy) its nearest tighter
 * form. Decide() already denies a host it cannot verify, but the source meant more
 * than that one spelling, so the entry is never simply dropped. */
int imp_deny_lost(struct imp *m, const char *h, const char *label, const char *field,
		  const char *why)
{
	char a[POLICY_HOST_MAX + 16], b[POLICY_HOST_MAX + 16], t[2 * POLICY_HOST_MAX + 64];

	if (deny_enclosing(h, a, b, sizeof(a))) {
		snprintf(t, sizeof(t), "%s%s%s", a, b[0] ? " and " : "", b);
		imp_lost(m, field, label, why, t);
		if (m->w->lossy &&
		    (rlist_push(&m->denied, a) < 0 || (b[0] && rlist_push(&m->denied, b) < 0))) {
			halo_err_set(m->e, "out of memory");
			return -ENOMEM;
		}
		return 0;
	}
	imp_lost(m, field, label, why,
		 "every host denied (egress.default deny, no allowedDomains)");
	if (m->w->lossy)
		m->deny_all = true;
	return 0;
}

/* The nearest tighter protected path for one the policy cannot hold: an absolute or
 * ~/ path with a glob -> the directory above its first glob component (a denyRead of
 * "~/secrets/ ** / *.pem" -> ~/secrets); a relative path -> the same name pattern, which
 * matches it anywhere. Empty when there is none ("/", "~", "..": refused). */
void imp_path_enclosing(const char *path, char *out, size_t n)
{
	out[0] = 0;
	if (path[0] == '/' || path[0] == '~') {
		size_t cut = 0;
		for (size_t i = 0; path[i]; i++) {
			if (path[i] == '/')
				cut = i;
			if (strchr("*?[{", path[i]))
				break;
		}
		if (!path[strcspn(path, "*?[{")] || cut <= 1)
			return;
		snprintf(out, n, "%.*s", (int)cut, path);
		return;
	}
	while (!strncmp(path, "./", 2) || path[0] == '/')
		path += path[0] == '/' ? 1 : 2;
	if (path[0] && !strstr(path, ".."))
		snprintf(out, n, "%s", path);
}

/* Read(x), Read(./x), Read(/x): relative to the settings file, which a policy cannot
 * name; the same name pattern everywhere is the nearest tighter form. */
int imp_protect_relative(struct imp *m, const char *rule, const char *arg, const char *field)
{
	char sub[4200], why[300];
	int ok = 0;

	imp_path_enclosing(arg, sub, sizeof(sub));
	if (sub[0] && (ok = imp_protect_ok(m, sub, why, sizeof(why))) < 0) {
		halo_err_set(m->e, "out of memory");
		return -ENOMEM;
	}
	imp_lost(m, field, rule, "a path relative to the settings file has no equivalent",
		 sub[0] && ok ? sub : NULL);
	if (m->w->lossy && sub[0] && ok && !rlist_has(&m->protected, sub) &&
	    rlist_push(&m->protected, sub) < 0) {
		halo_err_set(m->e, "out of memory");
		return -ENOMEM;
	}
	return 0;
}
