/* The $ZDOTDIR a zshenv file sets (review 16): many users set it in ~/.zshenv
 * (ZDOTDIR=$HOME/.zsh) or the system's /etc/zsh/zshenv, not in the environment a
 * harness starts halo-run with, and zsh then reads .zprofile, .zshrc, .zlogin and
 * .zlogout there: the home persistence set must hold them there too
 * (policy/homeset.c, struct policy_xdg's zdotdir).
 *
 * A reader of the common spellings, not a shell: each `ZDOTDIR=WORD` that starts a
 * command (at a line's start or after `export`, `typeset -x`, `declare -x`, `;`, `&&`,
 * `||`, `{`, `(`, `)`, `then`, `else`...), outside quotes and comments. Every one is
 * taken, not the last alone: which branch of an if or a case runs is not told here,
 * and guarding a directory too many costs nothing (review 17: the else branch's was
 * the only one guarded). WORD may be quoted in parts ('…' literal, "…" and bare
 * expanded) and use `~`, $HOME, $XDG_CONFIG_HOME and $ZDOTDIR (the value before this
 * file), each also as ${NAME} and ${NAME:-DEFAULT} with DEFAULT of the same kinds, 8
 * deep at most. Anything else (another variable, a command substitution, a glob, a
 * relative result, a ':') is a value that cannot be told: said, so that the caller
 * can say the guard is short. Pure: the caller reads the file. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy_int.h"

struct out {
	char *s;
	size_t n, len;
	bool bad;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->bad || o->len + n >= o->n) {
		o->bad = true;
		return;
	}
	memcpy(o->s + o->len, s, n);
	o->len += n;
	o->s[o->len] = '\0';
}

static void put_str(struct out *o, const char *s)
{
	if (!s || s[0] != '/') /* unset, or not absolute: the result cannot be told */
		o->bad = true;
	else
		put(o, s, strlen(s));
}

static bool name_is(const char *p, size_t n, const char *name)
{
	return strlen(name) == n && memcmp(p, name, n) == 0;
}

/* A name's value: HOME or XDG_CONFIG_HOME, as the caller passes them. */
static bool value_of(const char *p, size_t n, const struct policy_zshenv_env *env, const char **v)
{
	if (name_is(p, n, "HOME"))
		*v = env->home;
	else if (name_is(p, n, "XDG_CONFIG_HOME"))
		*v = env->xdg_config;
	else if (name_is(p, n, "ZDOTDIR"))
		*v = env->zdotdir;
	else
		return false;
	return true;
}

#define NEST_MAX 8 /* ${A:-${B:-...}} this deep at most: deeper cannot be told */

static size_t word(const char *p, size_t n, const struct policy_zshenv_env *env, struct out *o,
		   unsigned depth);

/* A $ expansion at p (p[0] == '$'): its length, the value put into o. */
static size_t dollar(const char *p, size_t n, const struct policy_zshenv_env *env, struct out *o,
		     unsigned depth)
{
	size_t i = 1, s;
	const char *v;

	if (i < n && p[i] != '{') {
		for (s = i; i < n && (p[i] == '_' || (p[i] >= 'A' && p[i] <= 'Z') ||
				      (p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9'));
		     i++)
			;
		if (!value_of(p + s, i - s, env, &v))
			o->bad = true;
		else
			put_str(o, v);
		return i;
	}
	for (s = ++i; i < n && p[i] != '}' && p[i] != ':'; i++)
		;
	if (i >= n || !value_of(p + s, i - s, env, &v)) {
		o->bad = true;
		return n;
	}
	if (p[i] == '}') {
		put_str(o, v);
		return i + 1;
	}
	/* ${NAME:-DEFAULT}: the value when set and not empty, else DEFAULT */
	if (i + 1 >= n || p[i + 1] != '-') {
		o->bad = true;
		return n;
	}
	i += 2;
	if (depth >= NEST_MAX) {
		o->bad = true;
		return n;
	}
	if (v && v[0]) {
		put_str(o, v);
		struct out skip = {(char[2]){0}, 2, 0, false};
		i += word(p + i, n - i, env, &skip, depth + 1);
	} else
		i += word(p + i, n - i, env, o, depth + 1);
	if (i >= n || p[i] != '}') {
		o->bad = true;
		return n;
	}
	return i + 1;
}

/* A shell word from p: its length; its value into o (o->bad when it cannot be told).
 * In a ${...:-DEFAULT} (depth > 0) it ends at the closing brace. */
static size_t word(const char *p, size_t n, const struct policy_zshenv_env *env, struct out *o,
		   unsigned depth)
{
	bool in_default = depth > 0;

	size_t i = 0;

	if (n && p[0] == '~' && (n == 1 || p[1] == '/' || p[1] == '"' || p[1] == ' ')) {
		put_str(o, env->home);
		i = 1;
	}
	while (i < n) {
		char c = p[i];
		if (c == '\'') {
			const char *e = memchr(p + i + 1, '\'', n - i - 1);
			if (!e)
				return o->bad = true, n;
			put(o, p + i + 1, (size_t)(e - p - i - 1));
			i = (size_t)(e - p) + 1;
		} else if (c == '"') {
			for (i++; i < n && p[i] != '"';) {
				if (p[i] == '$')
					i += dollar(p + i, n - i, env, o, depth);
				else if (p[i] == '`' || p[i] == '\\')
					return o->bad = true, n;
				else
					put(o, p + i++, 1);
			}
			if (i >= n)
				return o->bad = true, n;
			i++;
		} else if (c == '$')
			i += dollar(p + i, n - i, env, o, depth);
		else if (c == '}' && in_default)
			break;
		/* ('#' and '}' within a word are its own: review 19) */
		else if (c == ' ' || c == '\t' || c == ';' || c == '&' || c == '|' || c == ')' ||
			 c == '\n')
			break;
		else if (c == '`' || c == '\\' || c == '*' || c == '?' || c == '[' || c == '(' ||
			 c == '{' || c == '<' || c == '>' || c == '\0')
			return o->bad = true, n;
		else
			put(o, p + i++, 1);
	}
	return i;
}

/* The word before p on its line, past the flags of typeset and the like (-x, -gx), and
 * from the last ';', '&' or '|' in it (`]];then`, `x&&export`): *w its start, the
 * return its end; NULL when a command starts right there (the line's start, or after
 * ';', '{', '(', ')', '&' or '|'). A loop: any number of flags (review 17). */
static const char *word_before(const char *line, const char *p, const char **w)
{
	for (const char *q = p;;) {
		while (q > line && (q[-1] == ' ' || q[-1] == '\t'))
			q--;
		if (q == line || strchr(";{()&|", q[-1]))
			return NULL;
		for (*w = q; *w > line && !strchr(" \t;&|", (*w)[-1]); (*w)--)
			;
		if ((*w)[0] != '-')
			return q;
		q = *w;
	}
}

static bool in_table(const char *w, const char *q, const char *const *table, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (name_is(w, (size_t)(q - w), table[i]))
			return true;
	return false;
}

/* Does an assignment at p start a command (what is before it on its line)? */
static bool starts_command(const char *line, const char *p)
{
	static const char *const lead[] = {"export", "typeset", "declare", "local", "readonly",
					   "then",   "else",	"do",	   "!"};
	const char *w, *q = word_before(line, p, &w);

	return !q || in_table(w, q, lead, sizeof(lead) / sizeof(lead[0]));
}

/* The told value v into the list out (once). */
static int add_dir(char *out, size_t n, const char *v)
{
	size_t len = strlen(out), vl = strlen(v);

	for (const char *p = out; *p;) {
		size_t el = strcspn(p, ":");
		if (el == vl && memcmp(p, v, vl) == 0)
			return 0;
		p += el + (p[el] == ':');
	}
	if (len + (len > 0) + vl >= n)
		return -ENAMETOOLONG;
	if (len)
		out[len++] = ':';
	memcpy(out + len, v, vl + 1);
	return 1;
}

static bool ident(char c)
{
	return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9');
}

/* A told value v into out, or *unknown. */
static int told(const char *v, bool bad, char *out, size_t n, bool *unknown)
{
	if (bad || v[0] != '/' || strchr(v, ':')) {
		*unknown = true;
		return 0;
	}
	int rc = add_dir(out, n, v);
	return rc > 0 ? 0 : rc;
}

/* A file's reading: the places found, $XDG_CONFIG_HOME's values (the caller's and
 * what the file assigns before: review 19), the quote a line leaves open. */
#define XDG_VALUES 4
struct scan {
	const struct policy_zshenv_env *env;
	char *out;
	size_t n;
	bool *unknown;
	char xdg[XDG_VALUES][POLICY_PATH_MAX];
	const char *xdgv[XDG_VALUES];
	size_t n_xdg;
	char quote;
};

/* WORD at p told once per value $XDG_CONFIG_HOME may have, each into out. */
static size_t assigned_word(struct scan *sc, const char *p, size_t n, unsigned depth,
			    bool closing_brace)
{
	size_t w = 0;

	for (size_t k = 0; k < sc->n_xdg; k++) {
		char v[POLICY_PATH_MAX];
		struct out o = {v, sizeof(v), 0, false};
		struct policy_zshenv_env e = *sc->env;

		v[0] = '\0';
		e.xdg_config = sc->xdgv[k];
		w = word(p, n, &e, &o, depth);
		if (closing_brace && (w >= n || p[w] != '}'))
			o.bad = true;
		if (told(v, o.bad, sc->out, sc->n, sc->unknown) < 0)
			return (size_t)-1;
	}
	return w;
}

/* XDG_CONFIG_HOME=WORD starting a command: one more value it may have. */
static void xdg_assigned(struct scan *sc, const char *p, size_t n)
{
	char v[POLICY_PATH_MAX];
	struct out o = {v, sizeof(v), 0, false};

	v[0] = '\0';
	word(p, n, sc->env, &o, 0);
	if (o.bad || v[0] != '/' || sc->n_xdg >= XDG_VALUES) {
		*sc->unknown = true;
		return;
	}
	for (size_t k = 0; k < sc->n_xdg; k++)
		if (sc->xdgv[k] && strcmp(sc->xdgv[k], v) == 0)
			return;
	strcpy(sc->xdg[sc->n_xdg], v);
	sc->xdgv[sc->n_xdg] = sc->xdg[sc->n_xdg];
	sc->n_xdg++;
}

/* What the ZDOTDIR at p (a whole name, line[0..ll)) is: an assignment (its value told
 * into out), a read, a name alone after export/typeset/unset, or anything else, which
 * cannot be told (eval "…", a string, a position not understood: review 18). The
 * length it spans past the name goes into *skip. */
static int occurrence(struct scan *sc, const char *line, size_t ll, size_t i, bool in_dq,
		      size_t *skip)
{
	static const char *const alone[] = {"export", "typeset",  "declare",
					    "local",  "readonly", "unset"};
	const char *p = line + i, *after = p + 7, *end = line + ll;

	*skip = 0;
	/* ${ZDOTDIR:=WORD} or ${ZDOTDIR=WORD}: assigns WORD when unset (or empty) */
	if (i >= 2 && p[-1] == '{' && p[-2] == '$') {
		size_t k = (size_t)(after - line);
		if (k < ll &&
		    (after[0] == '=' || (after[0] == ':' && k + 1 < ll && after[1] == '='))) {
			size_t at = k + (after[0] == ':' ? 2 : 1);
			size_t w = assigned_word(sc, line + at, ll - at, 1, true);
			if (w == (size_t)-1)
				return -ENAMETOOLONG;
			*skip = at + w - i - 7;
			return 0;
		}
		return 0; /* a read: ${ZDOTDIR}, ${ZDOTDIR:-…}, ${ZDOTDIR+…} */
	}
	if (i >= 1 && p[-1] == '$')
		return 0; /* a read */
	/* ZDOTDIR=WORD starting a command (not in a string) */
	if (after < end && after[0] == '=' && !in_dq && (i == 0 || strchr(" \t;{()&|", p[-1])) &&
	    starts_command(line, p)) {
		size_t w = assigned_word(sc, after + 1, (size_t)(end - after - 1), 0, false);
		if (w == (size_t)-1)
			return -ENAMETOOLONG;
		*skip = 1 + w;
		return 0;
	}
	/* export ZDOTDIR (and the like), the name alone */
	if (!in_dq && (after == end || strchr(" \t;&|)", after[0]))) {
		const char *w, *q = word_before(line, p, &w);
		if (q && in_table(w, q, alone, sizeof(alone) / sizeof(alone[0])))
			return 0;
	}
	*sc->unknown = true;
	return 0;
}

/* One line's assignments into out; quotes and comments followed, the quote a line
 * leaves open carried to the next (review 19). */
static int line_zdotdirs(struct scan *sc, const char *line, size_t ll)
{
	static const char xkey[] = "XDG_CONFIG_HOME=";
	const size_t xl = sizeof(xkey) - 1;
	char quote = sc->quote;
	int rc = 0;

	for (size_t i = 0; i < ll && rc >= 0; i++) {
		const char *p = line + i;
		if (quote == '\'' || (quote == '"' && *p == '"')) {
			quote = *p == quote ? 0 : quote;
			if (quote == '\'' && i + 7 <= ll && memcmp(p, "ZDOTDIR", 7) == 0)
				*sc->unknown = true; /* in a literal string: an eval's? */
			continue;
		}
		if (*p == '\\') {
			i++;
			continue;
		}
		if (!quote && (*p == '\'' || *p == '"')) {
			quote = *p;
			continue;
		}
		if (!quote && *p == '#' && (i == 0 || p[-1] == ' ' || p[-1] == '\t'))
			break; /* a comment to the line's end */
		if (!quote && i + xl <= ll && memcmp(p, xkey, xl) == 0 &&
		    (i == 0 || strchr(" \t;{()&|", p[-1])) && starts_command(line, p)) {
			xdg_assigned(sc, p + xl, ll - i - xl);
			continue;
		}
		if (i + 7 > ll || memcmp(p, "ZDOTDIR", 7) != 0 || (i > 0 && ident(p[-1])) ||
		    (i + 7 < ll && ident(p[7])))
			continue;
		size_t skip;
		rc = occurrence(sc, line, ll, i, quote == '"', &skip);
		i += 6 + skip;
	}
	sc->quote = quote;
	return rc;
}

int policy_zshenv_zdotdirs(const char *text, size_t len, const struct policy_zshenv_env *env,
			   char *out, size_t n, bool *unknown)
{
	struct scan *sc = calloc(1, sizeof(*sc));
	char *joined = len ? malloc(len) : NULL;
	size_t jl = 0;
	int rc = 0;

	*unknown = false;
	if (!out || n == 0 || !sc || (len && !joined)) {
		free(sc);
		free(joined);
		return !out || n == 0 ? -EINVAL : -ENOMEM;
	}
	out[0] = '\0';
	*sc = (struct scan){.env = env, .out = out, .n = n, .unknown = unknown, .n_xdg = 1};
	sc->xdgv[0] = env->xdg_config;
	/* a backslash-newline joins two lines into one, as zsh reads them (review 19) */
	for (size_t i = 0; i < len; i++)
		if (text[i] == '\\' && i + 1 < len && text[i + 1] == '\n')
			i++;
		else
			joined[jl++] = text[i];
	for (size_t at = 0; at < jl && rc == 0;) {
		const char *line = joined + at, *nl = memchr(line, '\n', jl - at);
		size_t ll = nl ? (size_t)(nl - line) : jl - at;

		at += ll + 1;
		rc = line_zdotdirs(sc, line, ll);
	}
	free(joined);
	free(sc);
	if (rc < 0) {
		out[0] = '\0';
		return rc;
	}
	size_t count = 0;
	for (const char *p = out; *p; p += strcspn(p, ":"), p += *p == ':')
		count++;
	return (int)count;
}
