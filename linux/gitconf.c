/* The config of a git directory the command writes (broker_git.c): git runs programs
 * named there (core.hooksPath, core.fsmonitor, filter drivers, aliases, credential
 * helpers...) in the host's next `git` in that repository. A config written inside is
 * accepted only when every key is on a list of keys that name no program and include
 * no other file: what `git init`, `git clone`, `git remote`, `git branch` and
 * `git config user.*` write. The reader follows git's own grammar (config.c:
 * git_parse_source), and anything it cannot read as git would is refused: a key git
 * would see must never be hidden from this check by a parsing difference.
 * Pure: no system call. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "linux/gitconf.h"

/* Where keys may live. `sub`: 0 only without a subsection, 1 only with one, 2 either.
 * `keys`: "*" for any key, else "|a|b|" (lower case). Denials are checked first. */
struct gitconf_rule {
	const char *section;
	int sub;
	const char *keys;
};

/* Keys that run a program, name another file to read as config, or sign with the
 * user's key, in sections that are otherwise allowed. */
static const struct gitconf_rule deny[] = {
    {"core", 2,
     "|hookspath|fsmonitor|sshcommand|pager|editor|askpass|gitproxy|alternaterefscommand|"
     /* files made group- or world-writable on the host; a work tree elsewhere */
     "sharedrepository|worktree|"},
    {"diff", 2, "|external|"},
    {"commit", 2, "|gpgsign|template|"}, /* a template names a host file to show */
    {"tag", 2, "|gpgsign|forcesignannotated|"},
    {"push", 2, "|gpgsign|"},
    {"log", 2, "|showsignature|"},
    {"pull", 2, "|twohead|octopus|"}, /* pick a git-merge-* program */
    {"init", 2, "|templatedir|"},
};

/* Keys allowed only for some values, checked by the caller's value_ok: core.worktree,
 * which `git submodule` sets in every submodule's git directory. */
static const struct gitconf_rule value_rules[] = {
    {"core", 0, "|worktree|"},
};

static const struct gitconf_rule allow[] = {
    {"core", 0, "*"},
    {"extensions", 0, "*"},
    {"user", 0, "*"},
    {"author", 0, "*"},
    {"committer", 0, "*"},
    {"init", 0, "*"},
    {"color", 2, "*"},
    {"advice", 0, "*"},
    {"column", 0, "*"},
    {"status", 0, "*"},
    {"log", 0, "*"},
    {"fetch", 0, "*"},
    {"push", 0, "*"},
    {"pull", 0, "*"},
    {"merge", 0, "*"}, /* merge.<driver>.driver (a program) needs a subsection */
    {"diff", 0, "*"},  /* diff.<driver>.textconv/command likewise */
    {"rebase", 0, "*"},
    /* Not recentObjectsHook (git 2.42: a command gc runs) nor repackFilterTo (writes
     * elsewhere). */
    {"gc", 2,
     "|aggressivedepth|aggressivewindow|auto|autopacklimit|autodetach|bigpackthreshold|"
     "writecommitgraph|logexpiry|packrefs|cruftpacks|maxcruftsize|pruneexpire|"
     "worktreepruneexpire|reflogexpire|reflogexpireunreachable|repackfilter|rerereresolved|"
     "rerereunresolved|"},
    {"pack", 0, "*"},
    {"index", 0, "*"},
    {"repack", 0, "*"},
    {"receive", 0, "*"},
    {"transfer", 0, "*"},
    {"feature", 0, "*"},
    {"checkout", 0, "*"},
    {"clone", 0, "*"},
    {"worktree", 0, "*"},
    {"rerere", 0, "*"},
    {"commit", 0, "*"},
    {"tag", 0, "*"},
    /* Not proxy, sslVerify, sslCAInfo, extraHeader, cookieFile, saveCookies. */
    {"http", 2, "|version|postbuffer|lowspeedlimit|lowspeedtime|maxrequests|followredirects|"},
    /* git-lfs's own; customtransfer, standalonetransferagent and extension run programs */
    {"lfs", 2,
     "|url|pushurl|locksverify|repositoryformatversion|fetchinclude|fetchexclude|access|"
     "contenttype|"},
    {"maintenance", 2, "*"},
    {"protocol", 0, "|version|"}, /* protocol.allow would let ext:: urls run commands */
    {"remote", 1,
     "|url|pushurl|fetch|push|tagopt|prune|prunetags|mirror|skipdefaultupdate|skipfetchall|"
     "promisor|partialclonefilter|followremotehead|"},
    {"remote", 0, "|pushdefault|"},
    {"branch", 1, "|remote|pushremote|merge|rebase|description|"},
    {"branch", 0, "*"},
    {"submodule", 1, "|url|active|branch|shallow|fetchrecursesubmodules|ignore|"},
    {"submodule", 0, "*"},
};

static bool rule_has(const struct gitconf_rule *r, const char *section, bool has_sub,
		     const char *key)
{
	char k[72];

	if (strcmp(r->section, section) != 0 || (r->sub == 0 && has_sub) ||
	    (r->sub == 1 && !has_sub))
		return false;
	if (strcmp(r->keys, "*") == 0)
		return true;
	snprintf(k, sizeof(k), "|%s|", key);
	return strstr(r->keys, k) != NULL;
}

bool linux_gitconf_key_valued(const char *section, bool has_sub, const char *key)
{
	for (size_t i = 0; i < sizeof(value_rules) / sizeof(value_rules[0]); i++)
		if (rule_has(&value_rules[i], section, has_sub, key))
			return true;
	return false;
}

bool linux_gitconf_key_allowed(const char *section, bool has_sub, const char *key)
{
	for (size_t i = 0; i < sizeof(deny) / sizeof(deny[0]); i++)
		if (rule_has(&deny[i], section, has_sub, key))
			return false;
	for (size_t i = 0; i < sizeof(allow) / sizeof(allow[0]); i++)
		if (rule_has(&allow[i], section, has_sub, key))
			return true;
	return false;
}

/* The reader: git's grammar, one character at a time ("\r\n" read as "\n"). */
struct rd {
	const char *p, *end;
	char section[64]; /* lower case */
	bool has_sub;
	char sub[256]; /* the subsection as written (escapes decoded) */
	size_t sub_len;
	bool sub_long;
	struct gitconf_held *held; /* not NULL: refused keys recorded here, not refused */
	char *why;
	size_t whylen;
	linux_gitconf_value_fn value_ok;
	void *ctx;
	char val[4096]; /* the value of a key value_ok must see, decoded */
	size_t val_len;
	bool keep; /* decode into val */
	bool too_long;
};

static int next(struct rd *r)
{
	int c;

	if (r->p >= r->end)
		return EOF;
	c = (unsigned char)*r->p++;
	if (c == '\r' && r->p < r->end && *r->p == '\n')
		c = (unsigned char)*r->p++;
	return c;
}

static int bad(struct rd *r, const char *what)
{
	snprintf(r->why, r->whylen, "%s", what);
	return -EINVAL;
}

static bool keychar(int c)
{
	return c != EOF && (isalnum(c) || c == '-');
}

/* Record one subsection character (an over-long one is noted: never compared short). */
static void sub_add(struct rd *r, int c)
{
	if (r->sub_len + 1 >= sizeof(r->sub))
		r->sub_long = true;
	else
		r->sub[r->sub_len++] = (char)c;
}

/* After "[": "name]", "name.sub]" (old style, lower-cased) or `name "sub"]`. */
static int section(struct rd *r)
{
	size_t n = 0;
	int c;

	r->has_sub = false;
	r->sub_len = 0;
	r->sub_long = false;
	for (;;) {
		c = next(r);
		if (c == ']')
			break;
		if (c == ' ' || c == '\t') {
			while ((c = next(r)) == ' ' || c == '\t')
				;
			if (c != '"')
				return bad(
				    r, "a section header with a space but no quoted subsection");
			while ((c = next(r)) != '"') {
				if (c == EOF || c == '\n')
					return bad(r, "an unterminated subsection name");
				if (c == '\\' && ((c = next(r)) == EOF || c == '\n'))
					return bad(r, "a subsection name broken by a newline");
				sub_add(r, c);
			}
			r->has_sub = true;
			if (next(r) != ']')
				return bad(r, "text after a subsection name");
			break;
		}
		if (c == '.' && n > 0) {
			r->has_sub = true; /* [section.sub]: the rest is the subsection */
			while ((c = next(r)) != ']') {
				if (!keychar(c) && c != '.')
					return bad(r, "a bad character in a section name");
				sub_add(r, tolower(c));
			}
			break;
		}
		if (!keychar(c) || n + 1 >= sizeof(r->section))
			return bad(r, "a bad character in a section name");
		r->section[n++] = (char)tolower(c);
	}
	r->section[n] = '\0';
	return n ? 0 : bad(r, "an empty section name");
}

/* A value after "=": quotes, escapes, comments, and "\\\n" continuing the value. */
static void keep(struct rd *r, int c, bool quoted, size_t *trim)
{
	if (!r->keep)
		return;
	if (r->val_len + 1 >= sizeof(r->val)) {
		r->too_long = true;
		return;
	}
	if (r->val_len == 0 && !quoted && (c == ' ' || c == '\t'))
		return; /* git skips leading blanks */
	r->val[r->val_len++] = (char)c;
	if (quoted || (c != ' ' && c != '\t'))
		*trim = r->val_len; /* and trailing blanks outside quotes */
}

/* A value after "=": quotes, escapes, comments, and "\\\n" continuing the value;
 * decoded into r->val when r->keep. */
static int value(struct rd *r)
{
	bool quoted = false;
	size_t trim = 0;
	int c;

	r->val_len = 0;
	r->too_long = false;
	for (;;) {
		c = next(r);
		if (c == EOF || c == '\n') {
			if (quoted)
				return bad(r, "an unterminated quoted value");
			break;
		}
		if (c == '\0')
			return bad(r, "a NUL byte");
		if (!quoted && (c == ';' || c == '#')) {
			while ((c = next(r)) != EOF && c != '\n')
				;
			break;
		}
		if (c == '"') {
			quoted = !quoted;
			continue;
		}
		if (c == '\\') {
			c = next(r);
			if (c == '\n')
				continue;
			if (c == EOF || !strchr("tbn\\\"", c))
				return bad(r, "an unknown escape in a value");
			c = c == 't' ? '\t' : c == 'b' ? '\b' : c == 'n' ? '\n' : c;
			keep(r, c, true, &trim);
			continue;
		}
		keep(r, c, quoted, &trim);
	}
	r->val_len = trim;
	r->val[trim] = '\0';
	return 0;
}

/* Held mode: a refused key is recorded (section, subsection, key, value, each
 * length-prefixed so no two entries read alike) for the caller to compare. */
static int held_put(struct gitconf_held *h, const char *s, size_t n)
{
	char len[24];
	int w = snprintf(len, sizeof(len), "%zu:", n);

	if (h->len + (size_t)w + n > h->cap) {
		size_t cap = (h->cap + (size_t)w + n) * 2;
		char *nb = realloc(h->buf, cap);
		if (!nb)
			return -ENOMEM;
		h->buf = nb;
		h->cap = cap;
	}
	memcpy(h->buf + h->len, len, (size_t)w);
	memcpy(h->buf + h->len + (size_t)w, s, n);
	h->len += (size_t)w + n;
	return 0;
}

static int hold(struct rd *r, const char *k, bool has_value)
{
	int rc;

	if (r->too_long || r->sub_long)
		return bad(r, "an over-long value or subsection in a key that runs a program");
	if ((rc = held_put(r->held, r->section, strlen(r->section))) < 0 ||
	    (rc = held_put(r->held, r->has_sub ? r->sub : "", r->has_sub ? r->sub_len : 0)) < 0 ||
	    (rc = held_put(r->held, k, strlen(k))) < 0 ||
	    (rc = held_put(r->held, has_value ? "=" : "", has_value)) < 0 ||
	    (rc = held_put(r->held, r->val, has_value ? r->val_len : 0)) < 0)
		return rc;
	if (!r->why[0])
		snprintf(r->why, r->whylen, "%s.%s%s is not allowed", r->section,
			 r->has_sub ? "<subsection>." : "", k);
	return 0;
}

/* A key allowed for some values: its value, decoded, is the caller's to judge. */
static int judge_value(struct rd *r, const char *k, bool has_value)
{
	if (!r->value_ok || !has_value || r->too_long || strlen(r->val) != r->val_len ||
	    !r->value_ok(r->ctx, r->section, k, r->val)) {
		if (r->held && !r->too_long && strlen(r->val) == r->val_len)
			return hold(r, k, has_value);
		snprintf(r->why, r->whylen, "%s.%s is not allowed with this value", r->section, k);
		return -EACCES;
	}
	return 0;
}

static int key(struct rd *r, int c)
{
	char k[64];
	size_t n = 0;
	bool valued, refused;
	int rc;

	while (keychar(c)) {
		if (n + 1 >= sizeof(k))
			return bad(r, "an over-long key");
		k[n++] = (char)tolower(c);
		c = next(r);
	}
	k[n] = '\0';
	if (!r->section[0])
		return bad(r, "a key before any section");
	valued = linux_gitconf_key_valued(r->section, r->has_sub, k);
	refused = !valued && !linux_gitconf_key_allowed(r->section, r->has_sub, k);
	if (refused && !r->held) {
		snprintf(r->why, r->whylen, "%s.%s%s is not allowed", r->section,
			 r->has_sub ? "<subsection>." : "", k);
		return -EACCES;
	}
	while (c == ' ' || c == '\t')
		c = next(r);
	if (c == '\n' || c == EOF)
		return refused ? hold(r, k, false) : valued ? judge_value(r, k, false) : 0;
	if (c != '=')
		return bad(r, "a key followed by neither '=' nor the end of the line");
	r->keep = valued || refused;
	rc = value(r);
	r->keep = false;
	if (rc < 0)
		return rc;
	return refused ? hold(r, k, true) : valued ? judge_value(r, k, true) : 0;
}

int linux_gitconf_check(const char *buf, size_t n, char *why, size_t whylen)
{
	return linux_gitconf_check_values(buf, n, why, whylen, NULL, NULL);
}

/* Read buf as git does; every key judged (or, in held mode, the refused ones held). */
static int parse(struct rd *r, const char *buf, size_t n)
{
	bool comment = false;
	int c, rc;

	r->p = buf;
	r->end = buf + n;
	r->why[0] = '\0';
	if (n >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		r->p += 3;
	while ((c = next(r)) != EOF) {
		if (c == '\n') {
			comment = false;
			continue;
		}
		if (comment)
			continue;
		if (c == '\0')
			return bad(r, "a NUL byte");
		if (isspace(c))
			continue;
		if (c == '#' || c == ';') {
			comment = true;
			continue;
		}
		if (c == '[')
			rc = section(r);
		else if (isalpha(c))
			rc = key(r, c);
		else
			rc = bad(r, "a line that is neither a section, a key nor a comment");
		if (rc < 0)
			return rc;
	}
	return 0;
}

static __thread struct rd rd_one; /* 4 KiB of value: not on a small stack */

static struct rd *rd_new(char *why, size_t whylen, linux_gitconf_value_fn value_ok, void *ctx,
			 struct gitconf_held *held)
{
	memset(&rd_one, 0, sizeof(rd_one));
	rd_one.why = why;
	rd_one.whylen = whylen;
	rd_one.value_ok = value_ok;
	rd_one.ctx = ctx;
	rd_one.held = held;
	return &rd_one;
}

int linux_gitconf_check_values(const char *buf, size_t n, char *why, size_t whylen,
			       linux_gitconf_value_fn value_ok, void *ctx)
{
	return parse(rd_new(why, whylen, value_ok, ctx, NULL), buf, n);
}

/* One length-prefixed field at *p (held_put's form); its text in f, length in fl. */
static bool field(const char **p, const char *end, const char **f, size_t *fl)
{
	char *colon;
	unsigned long long v = strtoull(*p, &colon, 10);

	if (colon >= end || *colon != ':' || v > (size_t)(end - colon - 1))
		return false;
	*f = colon + 1;
	*fl = (size_t)v;
	*p = *f + *fl;
	return true;
}

/* The first entry where the two held lists differ: named in why. */
static void name_difference(const struct gitconf_held *o, const struct gitconf_held *w, char *why,
			    size_t whylen)
{
	const char *po = o->buf, *pw = w->buf, *eo = o->buf + o->len, *ew = w->buf + w->len;
	const char *f[5], *g[5];
	size_t fl[5], gl[5];

	for (;;) {
		bool ho = po < eo, hw = pw < ew, same = ho && hw;
		for (int i = 0; i < 5; i++) {
			if (ho && !field(&po, eo, &f[i], &fl[i]))
				ho = false;
			if (hw && !field(&pw, ew, &g[i], &gl[i]))
				hw = false;
			same = same && ho && hw && fl[i] == gl[i] && !memcmp(f[i], g[i], fl[i]);
		}
		if (same)
			continue;
		if (hw)
			snprintf(why, whylen, "%.*s.%s%.*s is not allowed (only kept as it was)",
				 (int)gl[0], g[0], gl[1] ? "<subsection>." : "", (int)gl[2], g[2]);
		else if (ho)
			snprintf(why, whylen, "%.*s.%s%.*s cannot be removed or moved", (int)fl[0],
				 f[0], fl[1] ? "<subsection>." : "", (int)fl[2], f[2]);
		else
			snprintf(why, whylen, "a key that runs a program was changed");
		return;
	}
}

int linux_gitconf_check_change(const char *old, size_t on, const char *buf, size_t n, char *why,
			       size_t whylen, linux_gitconf_value_fn value_ok, void *ctx)
{
	struct gitconf_held o = {0}, w = {0};
	char owhy[160];
	int rc = parse(rd_new(owhy, sizeof(owhy), value_ok, ctx, &o), old, on);

	if (rc < 0) {
		snprintf(why, whylen,
			 "the config before the change is not readable as git reads "
			 "it (%s)",
			 owhy);
		rc = rc == -ENOMEM ? rc : -EACCES;
	} else if ((rc = parse(rd_new(why, whylen, value_ok, ctx, &w), buf, n)) == 0) {
		why[0] = '\0';
		if (o.len != w.len || (o.len && memcmp(o.buf, w.buf, o.len))) {
			name_difference(&o, &w, why, whylen);
			rc = -EACCES;
		}
	}
	free(o.buf);
	free(w.buf);
	return rc;
}
