/* Interpreters' code, read: string literals per language, the calls that run
 * commands, URLs and host strings, and what is built at run time. The rule is in
 * interp.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hook/hook_int.h"
#include "hook/interp_int.h"

#define MAX_LITS 512

struct lit {
	char *text;
	size_t lit;	   /* literal prefix */
	size_t start, end; /* [start, end) in the code, quotes included */
	bool tick;	   /* a backtick command (perl, ruby, php) */
};

struct code {
	struct hook_judge *j;
	unsigned flags;
	const char *what;
	const char *t; /* the code */
	size_t n;
	struct lit lits[MAX_LITS];
	size_t n_lits;
	bool too_many, oom, net, exec, dyn;
};

static bool has_any(const char *t, const char *const *marks)
{
	for (; *marks; marks++)
		if (strstr(t, *marks))
			return true;
	return false;
}

/* One string literal starting at t[i] (a quote); returns the index after it. */
static size_t read_lit(struct code *c, size_t i)
{
	const char *t = c->t;
	char q = t[i];
	bool triple = (c->flags & HOOK_L_PY) && i + 2 < c->n && t[i + 1] == q && t[i + 2] == q;
	bool fstr = (c->flags & HOOK_L_PY) && i > 0 && strchr("fF", t[i - 1]);
	bool interp = q == '"' && (c->flags & (HOOK_L_DOLLAR | HOOK_L_HASH));
	size_t k = i + (triple ? 3 : 1), o = 0, lit = (size_t)-1, stop = k;

	/* its end first: a buffer the literal's size, not the rest of the code's */
	while (stop < c->n && !(t[stop] == q && (!triple || (stop + 2 < c->n && t[stop + 1] == q &&
							     t[stop + 2] == q))))
		stop += t[stop] == '\\' && stop + 1 < c->n ? 2 : 1;
	char *out = malloc(stop - k + 1);
	if (!out) {
		c->oom = true;
		return c->n;
	}
	for (; k < c->n; k++) {
		char ch = t[k];
		if (ch == q && (!triple || (k + 2 < c->n && t[k + 1] == q && t[k + 2] == q)))
			break;
		if (ch == '\\' && k + 1 < c->n) {
			char e = t[++k];
			if (strchr("xuUN01234567", e) && lit == (size_t)-1)
				lit = o; /* \x63 spells anything: not literal from here */
			out[o++] = e == 'n' ? '\n' : e == 't' ? '\t' : e;
			continue;
		}
		if (lit == (size_t)-1 &&
		    ((interp && (c->flags & HOOK_L_DOLLAR) && (ch == '$' || ch == '@')) ||
		     (interp && (c->flags & HOOK_L_HASH) && ch == '#' && t[k + 1] == '{') ||
		     (q == '`' && (c->flags & (HOOK_L_TEMPLATE | HOOK_L_TICK_CMD)) && ch == '$') ||
		     (fstr && ch == '{')))
			lit = o;
		out[o++] = ch;
	}
	out[o] = 0;
	size_t end = k + (k < c->n ? (triple ? 3 : 1) : 0);
	if (c->n_lits == MAX_LITS) {
		c->too_many = true;
		free(out);
		return end;
	}
	c->lits[c->n_lits++] = (struct lit){out, lit == (size_t)-1 ? o : lit, i, end,
					    q == '`' && (c->flags & HOOK_L_TICK_CMD)};
	return end;
}

static void read_lits(struct code *c)
{
	for (size_t i = 0; i < c->n;) {
		char ch = c->t[i];
		bool quote = ch == '"' || ch == '\'' ||
			     (ch == '`' && (c->flags & (HOOK_L_TEMPLATE | HOOK_L_TICK_CMD)));
		/* perl's $x{'a'} and ruby's ?a are not worth telling apart: a quote opens */
		i = quote ? read_lit(c, i) : i + 1;
	}
}

/* The literal whose [start, end) holds `at`, or NULL: literals are read in order, so
 * a binary search (code of a megabyte has many identifiers to ask about). */
static const struct lit *lit_holding(const struct code *c, size_t at)
{
	size_t lo = 0, hi = c->n_lits;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->lits[mid].end <= at)
			lo = mid + 1;
		else if (c->lits[mid].start > at)
			hi = mid;
		else
			return &c->lits[mid];
	}
	return NULL;
}

/* The literal starting at or after `from` (spaces only between), or NULL. */
static const struct lit *lit_at(const struct code *c, size_t from)
{
	while (from < c->n && strchr(" \t\n", c->t[from]))
		from++;
	const struct lit *l = lit_holding(c, from);
	return l && l->start == from ? l : NULL;
}

static bool in_lit(const struct code *c, size_t at)
{
	return lit_holding(c, at) != NULL;
}

/* A command made of literal words: one is a shell command line, several an argv. */
/* A shell or an interpreter started with nothing to run: it reads the program's
 * output as its commands (print | "sh", Popen(["bash", "-s"], stdin=PIPE)). The words
 * after the program are the rest of a command line (one literal) or the argv. */
static bool feeds_shell(const struct lit **w, size_t n)
{
	static const char *const progs[] = {"sh",   "bash", "dash",   "zsh",	 "ksh",	 "mksh",
					    "ash",  "yash", "python", "python3", "perl", "ruby",
					    "node", "php",  "lua",    NULL};
	const char *t = w[0]->text + strspn(w[0]->text, " \t");
	size_t e = strcspn(t, " \t"), b = e;
	bool prog = false;

	while (b > 0 && t[b - 1] != '/')
		b--;
	for (size_t k = 0; progs[k]; k++)
		prog |= strlen(progs[k]) == e - b && !strncmp(t + b, progs[k], e - b);
	if (!prog)
		return false;
	for (size_t k = 0; k < n; k++) {
		const char *r = k ? w[k]->text : t + e;
		for (r += strspn(r, " \t"); *r; r += strspn(r, " \t")) {
			size_t len = strcspn(r, " \t");
			if (r[0] != '-' || memchr(r, 'c', len) || memchr(r, 'e', len))
				return false; /* a script, or -c/-e code: judged as a command */
			r += len;
		}
	}
	return true;
}

static void judge_words(struct code *c, const char *call, const struct lit **w, size_t n)
{
	char what[64];
	size_t len = 1;
	bool lit = true;

	snprintf(what, sizeof(what), "%s %s()", c->what, call);
	for (size_t k = 0; k < n; k++)
		len += 4 * strlen(w[k]->text) + 3, lit &= w[k]->lit == strlen(w[k]->text);
	char *buf = calloc(1, len), *o = buf;
	if (!buf)
		return (void)hook_block(c->j, HOOK_CANNOT, "out of memory");
	for (size_t k = 0; k < n; k++) {
		if (n == 1) {
			o = stpcpy(o, w[k]->text);
			break;
		}
		*o++ = '\'';
		for (const char *p = w[k]->text; *p; p++)
			o = *p == '\'' ? stpcpy(o, "'\\''") : (*o = *p, o + 1);
		o = stpcpy(o, k + 1 < n ? "' " : "'");
	}
	struct hook_word word = {buf, lit ? strlen(buf) : 0};
	if (!lit)
		hook_block(c->j, HOOK_CANNOT,
			   "%s: the command '%.160s' is built at run time, so what it runs "
			   "cannot be judged",
			   what, buf);
	else if (feeds_shell(w, n))
		hook_block(c->j, HOOK_CANNOT,
			   "%s: '%.100s' reads its commands from the program, so what it runs "
			   "cannot be judged",
			   what, w[0]->text);
	else
		hook_judge_text(c->j, what, &word);
	if (n > 1 && strpbrk(w[0]->text, " \t") && !hook_decided(c->j))
		judge_words(c, call, w, 1); /* popen("cmd", "r"): the first is a command too */
	free(buf);
}

static bool kwarg_or_word(const struct code *c, size_t i, bool after_comma)
{
	static const char *const words[] = {"or", "and", "if", "unless", NULL};
	size_t e = i;

	while (e < c->n && hook_is_name_char(c->t[e]))
		e++;
	for (size_t k = 0; words[k]; k++)
		if (e - i == strlen(words[k]) && !strncmp(c->t + i, words[k], e - i))
			return true;
	while (e < c->n && c->t[e] == ' ')
		e++;
	return after_comma && e < c->n && c->t[e] == '=' && c->t[e + 1] != '=';
}

/* The arguments of a command call at t[i] (after its name): literals, commas and
 * brackets up to the end of the call. Anything else is a command built at run time. */
static void judge_call(struct code *c, const char *call, size_t i)
{
	const struct lit *w[64];
	size_t n = 0;
	bool comma = false;

	while (i < c->n && strchr(" \t", c->t[i]))
		i++;
	if (i < c->n && c->t[i] == '(')
		i++;
	for (;;) {
		while (i < c->n && strchr(" \t\n[]", c->t[i]))
			i++;
		const struct lit *l = lit_at(c, i);
		if (l && n && !comma)
			break; /* "cu" "rl": strings joined at run time */
		if (l && n < 64) {
			w[n++] = l;
			i = l->end;
			comma = false;
			continue;
		}
		if (i < c->n && c->t[i] == ',') {
			i++;
			comma = true;
			continue;
		}
		break;
	}
	if (n && (i >= c->n || strchr(");}{\n", c->t[i]) ||
		  (hook_is_name_char(c->t[i]) && kwarg_or_word(c, i, comma)))) {
		judge_words(c, call, w, n);
		return;
	}
	hook_block(c->j, HOOK_CANNOT,
		   "%s: the command given to %s() is built at run time, so what it runs "
		   "cannot be judged",
		   c->what, call);
}

/* Every call to a command-running function whose name appears outside strings. */
static void exec_calls_in(struct code *c)
{
	bool mods = has_any(c->t, hook_exec_mods);

	for (size_t i = 0; i < c->n && !hook_decided(c->j); i++) {
		if (!hook_is_name_char(c->t[i]) || (i && hook_is_name_char(c->t[i - 1])) ||
		    in_lit(c, i))
			continue;
		size_t e = i;
		while (e < c->n && hook_is_name_char(c->t[e]))
			e++;
		for (size_t k = 0; hook_exec_calls[k]; k++) {
			const char *x = hook_exec_calls[k];
			if (e - i != strlen(x) || strncmp(c->t + i, x, e - i))
				continue;
			if ((!strcmp(x, "run") || !strcmp(x, "call") || !strcmp(x, "execute")) &&
			    !mods)
				break;
			size_t a = e;
			while (a < c->n && c->t[a] == ' ')
				a++;
			/* a call: NAME( or, in perl and ruby, NAME "literal" */
			if (a < c->n && (c->t[a] == '(' || (a > e && lit_at(c, a)))) {
				c->exec = true;
				if ((c->flags & HOOK_L_PY) && !strcmp(x, "exec"))
					c->dyn = true; /* code run from a string */
				else
					judge_call(c, x, a);
			}
			break;
		}
		i = e - 1;
	}
}

/* perl qx{...} / qx(...) and ruby %x(...): the text is a command. */
static void quoted_commands(struct code *c)
{
	static const char *const opens = "({[/|!", *closes = ")}]/|!";

	for (size_t i = 0; i + 3 < c->n && !hook_decided(c->j); i++) {
		const char *d;
		if (in_lit(c, i) || !((c->t[i] == 'q' && c->t[i + 1] == 'x') ||
				      (c->t[i] == '%' && c->t[i + 1] == 'x')))
			continue;
		if ((i && hook_is_name_char(c->t[i - 1])) || !(d = strchr(opens, c->t[i + 2])))
			continue;
		const char *end = strchr(c->t + i + 3, closes[d - opens]);
		if (!end)
			continue;
		char *cmd = strndup(c->t + i + 3, (size_t)(end - c->t - i - 3));
		if (!cmd)
			return (void)hook_block(c->j, HOOK_CANNOT, "out of memory");
		struct lit l = {cmd, strcspn(cmd, "$@#"), 0, 0, true};
		const struct lit *p = &l;
		c->exec = true;
		judge_words(c, "qx", &p, 1);
		free(cmd);
	}
}

/* awk: "cmd" | getline, print | "cmd", print |& "cmd": the command must be a literal. */
static void awk_pipes(struct code *c)
{
	for (size_t i = 0; i < c->n && !hook_decided(c->j); i++) {
		if (c->t[i] != '|' || in_lit(c, i) || (i + 1 < c->n && c->t[i + 1] == '|') ||
		    (i && c->t[i - 1] == '|'))
			continue;
		size_t a = i + 1 + (i + 1 < c->n && c->t[i + 1] == '&');
		while (a < c->n && c->t[a] == ' ')
			a++;
		const struct lit *w = NULL;
		c->exec = true;
		if (!strncmp(c->t + a, "getline", 7)) {
			for (size_t k = 0; k < c->n_lits; k++) {
				size_t e = c->lits[k].end;
				while (e < i && c->t[e] == ' ')
					e++;
				if (e == i)
					w = &c->lits[k];
			}
		} else {
			w = lit_at(c, a);
		}
		if (w)
			judge_words(c, "pipe", &w, 1);
		else
			hook_block(c->j, HOOK_CANNOT,
				   "%s: a pipe to or from a command that is built at run time, "
				   "so what it runs cannot be judged",
				   c->what);
	}
}

bool hook_host_like(const char *t)
{
	static const char *const exts[] = {
	    "py",  "js",   "json", "txt", "md",	 "c",	"h",   "ts",  "yaml", "yml",  "toml",
	    "csv", "log",  "html", "sh",  "so",	 "o",	"gz",  "tar", "zip",  "lock", "cfg",
	    "ini", "conf", "xml",  "pem", "rb",	 "pl",	"php", "lua", "png",  "jpg",  "env",
	    "db",  "tgz",  "whl",  "mjs", "cjs", "map", "css", "bin", NULL};
	size_t n = strcspn(t, ":");

	if (n == 0 || n > 253 ||
	    strspn(t, "abcdefghijklmnopqrstuvwxyz"
		      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") != n)
		return false;
	if (t[n] && strspn(t + n + 1, "0123456789") != strlen(t + n + 1))
		return false;
	const char *dot = memrchr(t, '.', n);
	if (!dot || dot == t || dot[1] == ':' || !dot[1])
		return false;
	size_t tl = n - (size_t)(dot + 1 - t);
	bool alpha = tl >= 2;
	for (size_t k = 0; k < tl; k++)
		alpha &= (dot[1 + k] | 32) >= 'a' && (dot[1 + k] | 32) <= 'z';
	if (!alpha) /* an IPv4 address: four numbers */
		return strspn(t, "0123456789.") == n && memchr(t, '.', n) != dot;
	for (size_t k = 0; exts[k]; k++)
		if (strlen(exts[k]) == tl && !strncasecmp(dot + 1, exts[k], tl))
			return false;
	return true;
}

/* URLs anywhere in the code; gawk's /inet/tcp/LPORT/HOST/RPORT; host strings. */
static void hosts_in(struct code *c)
{
	const char *t = c->t;

	for (size_t i = 0; t[i] && !hook_decided(c->j); i++) {
		size_t s = !strncasecmp(t + i, "http://", 7)	? 7
			   : !strncasecmp(t + i, "https://", 8) ? 8
			   : !strncasecmp(t + i, "ws://", 5)	? 5
			   : !strncasecmp(t + i, "wss://", 6)	? 6
								: 0;
		if (!s)
			continue;
		size_t e = i + s + strcspn(t + i + s, "/?#\"' \t\n)`;,");
		if (e == i + s) {
			if (c->net || c->exec)
				hook_block(c->j, HOOK_CANNOT,
					   "%s: a URL whose host is built at run time, so what it "
					   "contacts cannot be judged",
					   c->what);
			continue;
		}
		char *h = strndup(t + i, e - i);
		if (!h)
			return (void)hook_block(c->j, HOOK_CANNOT, "out of memory");
		hook_target_text(c->j, c->what, h);
		free(h);
		i = e - 1;
	}
	for (size_t k = 0; k < c->n_lits && !hook_decided(c->j); k++) {
		const char *l = c->lits[k].text, *in = strstr(l, "/inet");
		if (in) {
			const char *p = in;
			for (int f = 0; f < 3 && p; f++)
				p = strchr(p + 1, '/');
			if (p) {
				char *h = strndup(p + 1, strcspn(p + 1, "/"));
				if (h)
					hook_target_text(c->j, "awk /inet", h);
				free(h);
			}
		}
		if (c->net && c->lits[k].lit == strlen(l) && hook_host_like(l))
			hook_target_text(c->j, c->what, l);
	}
}

/* php's $f("...") and perl's $f->(...): a function held in a variable. */
static bool variable_call(const struct code *c)
{
	for (size_t i = 0; i + 1 < c->n; i++) {
		if (c->t[i] != '$' || in_lit(c, i))
			continue;
		size_t e = i + 1;
		while (e < c->n && hook_is_name_char(c->t[e]))
			e++;
		while (e < c->n && (c->t[e] == ' ' || c->t[e] == '-' || c->t[e] == '>'))
			e++;
		if (e > i + 1 && e < c->n && c->t[e] == '(')
			return true;
	}
	return false;
}

/* perl's open(F, "cmd |"), open(F, "-|", "cmd"), ruby's open("|cmd"): a command. */
static void pipe_opens(struct code *c)
{
	for (size_t k = 0; k < c->n_lits && !hook_decided(c->j); k++) {
		const char *t = c->lits[k].text;
		size_t n = strlen(t);
		while (n && t[n - 1] == ' ')
			n--;
		if (!strcmp(t, "-|") || !strcmp(t, "|-")) {
			size_t e = c->lits[k].end;
			while (e < c->n && strchr(" \t,", c->t[e]))
				e++;
			const struct lit *next =
			    k + 1 < c->n_lits && c->lits[k + 1].start == e ? &c->lits[k + 1] : NULL;
			c->exec = true;
			if (next)
				judge_words(c, "open", &next, 1);
			else
				hook_block(c->j, HOOK_CANNOT,
					   "%s: a pipe opened to a command built at run time, so "
					   "what it runs cannot be judged",
					   c->what);
		} else if (n > 1 && (t[0] == '|' || t[n - 1] == '|')) {
			char *cmd = strndup(t + (t[0] == '|'), n - 1);
			if (!cmd)
				return (void)hook_block(c->j, HOOK_CANNOT, "out of memory");
			struct lit l = {cmd, c->lits[k].lit == strlen(t) ? strlen(cmd) : 0, 0, 0,
					false};
			const struct lit *p = &l;
			c->exec = true;
			judge_words(c, "open", &p, 1);
			free(cmd);
		}
	}
}

/* A piece of a host or URL joined to something at run time: "evil" + ".test",
 * "%s.test" % h, ".".join(...), "a" . "b", "a" .. "b", adjacent "a" "b". Only a
 * literal that looks like a part of an address (a dot, a slash or an @)
 * counts, so that print("n = " + x) next to a literal URL stays judged. */
static bool builds_address(const struct code *c)
{
	for (size_t k = 0; k < c->n_lits; k++) {
		const struct lit *l = &c->lits[k];
		size_t a = l->end, b = l->start;
		if (!strpbrk(l->text, "./@"))
			continue;
		while (a < c->n && (c->t[a] == ' ' || c->t[a] == '\t'))
			a++;
		while (b > 0 && (c->t[b - 1] == ' ' || c->t[b - 1] == '\t'))
			b--;
		const char *n = a < c->n ? c->t + a : "";
		/* '.' joins in perl and php, ".." in lua; elsewhere it calls a method, and
		 * only join and format make an address of their parts */
		bool dot =
		    n[0] == '.' && ((c->flags & HOOK_L_DOLLAR) || n[1] == '.' ||
				    !strncmp(n + 1, "join", 4) || !strncmp(n + 1, "format", 6));
		if ((n[0] && strchr("+%\"'", n[0])) || dot ||
		    (b > 0 && strchr("+\"'", c->t[b - 1])) ||
		    (b > 1 && c->t[b - 1] == '.' &&
		     ((c->flags & HOOK_L_DOLLAR) || c->t[b - 2] == '.')))
			return true;
	}
	return false;
}

static void judge_code(struct code *c)
{
	read_lits(c);
	c->net = has_any(c->t, hook_net_marks);
	c->dyn = has_any(c->t, hook_dyn_marks);
	if (c->oom)
		return (void)hook_block(c->j, HOOK_CANNOT, "out of memory");
	if (c->net && builds_address(c))
		c->dyn = true;
	if (c->too_many)
		return (void)hook_block(c->j, HOOK_CANNOT, "%s: more than %d strings in the code",
					c->what, MAX_LITS);
	if (has_any(c->t, hook_refl_marks) || ((c->flags & HOOK_L_DOLLAR) && variable_call(c)))
		c->exec = c->dyn = true;
	exec_calls_in(c);
	if (c->flags & (HOOK_L_DOLLAR | HOOK_L_HASH)) {
		quoted_commands(c);
		pipe_opens(c);
	}
	for (size_t k = 0; k < c->n_lits && !hook_decided(c->j); k++)
		if (c->lits[k].tick) {
			const struct lit *p = &c->lits[k];
			c->exec = true;
			judge_words(c, "backticks", &p, 1);
		}
	hosts_in(c);
	if (c->flags & HOOK_L_AWK)
		awk_pipes(c);
	if (!hook_decided(c->j) && (c->net || c->exec) && c->dyn)
		hook_block(c->j, HOOK_CANNOT,
			   "%s: the code uses %s and builds values at run time (decoding, eval, "
			   "the environment, arguments or input), so what it would do cannot be "
			   "judged",
			   c->what, c->net ? "the network" : "commands");
}

void hook_interp_code(struct hook_judge *j, unsigned flags, const char *what,
		      const struct hook_word *w)
{
	struct code *c = calloc(1, sizeof(*c));

	if (!c)
		return (void)hook_block(j, HOOK_CANNOT, "out of memory");
	*c =
	    (struct code){.j = j, .flags = flags, .what = what, .t = w->text, .n = strlen(w->text)};
	judge_code(c);
	/* code the shell builds (-c "$CODE", $x in an unquoted here-document) may be
	 * anything, as sh -c "$X" may */
	if (!hook_decided(j) && !hook_word_literal(w))
		hook_block(j, HOOK_CANNOT,
			   "%s: the code '%.120s' is built by the shell at run time, so what it "
			   "does cannot be judged",
			   what, w->text);
	for (size_t k = 0; k < c->n_lits; k++)
		free(c->lits[k].text);
	free(c);
}
