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
    {"gc", 2, "*"},
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

/* After "[": "name]", "name.sub]" (old style, lower-cased) or `name "sub"]`. */
static int section(struct rd *r)
{
	size_t n = 0;
	int c;

	r->has_sub = false;
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
			}
			r->has_sub = true;
			if (next(r) != ']')
				return bad(r, "text after a subsection name");
			break;
		}
		if (c == '.' && n > 0) {
			r->has_sub = true; /* [section.sub]: the rest is the subsection */
			while ((c = next(r)) != ']')
				if (!keychar(c) && c != '.')
					return bad(r, "a bad character in a section name");
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

/* A key allowed for some values: its value, decoded, is the caller's to judge. */
static int judge_value(struct rd *r, const char *k, bool has_value)
{
	if (!r->value_ok || !has_value || r->too_long || strlen(r->val) != r->val_len ||
	    !r->value_ok(r->ctx, r->section, k, r->val)) {
		snprintf(r->why, r->whylen, "%s.%s is not allowed with this value", r->section, k);
		return -EACCES;
	}
	return 0;
}

static int key(struct rd *r, int c)
{
	char k[64];
	size_t n = 0;
	bool valued;
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
	if (!valued && !linux_gitconf_key_allowed(r->section, r->has_sub, k)) {
		snprintf(r->why, r->whylen, "%s.%s%s is not allowed", r->section,
			 r->has_sub ? "<subsection>." : "", k);
		return -EACCES;
	}
	while (c == ' ' || c == '\t')
		c = next(r);
	if (c == '\n' || c == EOF)
		return valued ? judge_value(r, k, false) : 0;
	if (c != '=')
		return bad(r, "a key followed by neither '=' nor the end of the line");
	r->keep = valued;
	rc = value(r);
	r->keep = false;
	if (rc < 0)
		return rc;
	return valued ? judge_value(r, k, true) : 0;
}

int linux_gitconf_check(const char *buf, size_t n, char *why, size_t whylen)
{
	return linux_gitconf_check_values(buf, n, why, whylen, NULL, NULL);
}

int linux_gitconf_check_values(const char *buf, size_t n, char *why, size_t whylen,
			       linux_gitconf_value_fn value_ok, void *ctx)
{
	static __thread struct rd r; /* 4 KiB of value: not on a small stack */

	memset(&r, 0, sizeof(r));
	r.p = buf;
	r.end = buf + n;
	r.why = why;
	r.whylen = whylen;
	r.value_ok = value_ok;
	r.ctx = ctx;
	bool comment = false;
	int c, rc;

	why[0] = '\0';
	if (n >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		r.p += 3;
	while ((c = next(&r)) != EOF) {
		if (c == '\n') {
			comment = false;
			continue;
		}
		if (comment)
			continue;
		if (c == '\0')
			return bad(&r, "a NUL byte");
		if (isspace(c))
			continue;
		if (c == '#' || c == ';') {
			comment = true;
			continue;
		}
		if (c == '[')
			rc = section(&r);
		else if (isalpha(c))
			rc = key(&r, c);
		else
			rc = bad(&r, "a line that is neither a section, a key nor a comment");
		if (rc < 0)
			return rc;
	}
	return 0;
}
