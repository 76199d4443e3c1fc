/* Wrappers: the judging half. The table of what each wrapper takes is in
 * wrap_table.c; here its options and operands are walked to the command it runs. */
#include <stdlib.h>
#include <string.h>

#include "hook/hook_int.h"
#include "hook/wrap_int.h"

static bool in(const char *const *l, const char *s, size_t n)
{
	for (; *l; l++)
		if (strlen(*l) == n && strncmp(*l, s, n) == 0)
			return true;
	return false;
}

/* A command line given as one option value (env -S, su -c): judged as shell text. */
static void value_text(struct hook_judge *j, const char *what, const struct hook_word *w,
		       size_t off)
{
	struct hook_word v = {w->text + off, w->lit > off ? w->lit - off : 0};
	hook_judge_text(j, what, &v);
}

struct wstate {
	bool replace; /* xargs -I: one argument per command, not appended */
	bool text;    /* the command was given as text (-c, -S) */
	bool user;    /* runuser -u */
	bool shell;   /* sudo -s / -i: the command is joined into one shell command */
};

static bool is_text_opt(const struct wrapper *r, const char *a, size_t n)
{
	return ((r->flags & W_SPLIT_S) && n == 14 && strncmp(a, "--split-string", 14) == 0) ||
	       ((r->flags & W_DASH_C) && ((n == 9 && strncmp(a, "--command", 9) == 0) ||
					  (n == 17 && strncmp(a, "--session-command", 17) == 0)));
}

/* One long option; returns how many extra words it used. */
static size_t long_opt(struct hook_judge *j, const struct wrapper *r, const struct hook_word *argv,
		       size_t i, size_t argc, struct wstate *st)
{
	const char *a = argv[i].text, *eq = strchr(a, '=');
	size_t n = eq ? (size_t)(eq - a) : strlen(a);

	if (strncmp(a, "--replace", 9) == 0)
		st->replace = true;
	if (n == 6 && strncmp(a, "--user", 6) == 0)
		st->user = true;
	if ((r->flags & W_SHELL_OPT) &&
	    ((n == 7 && !strncmp(a, "--shell", 7)) || (n == 7 && !strncmp(a, "--login", 7))))
		st->shell = true;
	if (is_text_opt(r, a, n)) {
		st->text = true;
		if (eq)
			value_text(j, r->name, &argv[i], n + 1);
		else if (i + 1 < argc)
			value_text(j, r->name, &argv[i + 1], 0);
		return eq ? 0 : 1;
	}
	const char *const *two = hook_wrapper_two_vals(r->name);

	if (!eq && two && in(two, a, n))
		return 2;
	return !eq && in(r->long_vals, a, n) ? 1 : 0;
}

/* A bundle of short options (-sSLo FILE); returns how many extra words it used. */
static size_t short_opts(struct hook_judge *j, const struct wrapper *r,
			 const struct hook_word *argv, size_t i, size_t argc, struct wstate *st)
{
	const char *a = argv[i].text;

	if ((r->flags & W_DIGITS) && a[1] >= '0' && a[1] <= '9')
		return 0;
	for (size_t k = 1; a[k]; k++) {
		char ch = a[k];
		if (r->flags & W_XARGS && (ch == 'I' || ch == 'i'))
			st->replace = true;
		if (ch == 'u' && (r->flags & W_U_ARGV))
			st->user = true;
		if ((ch == 's' || ch == 'i') && (r->flags & W_SHELL_OPT))
			st->shell = true;
		if (!strchr(r->vals, ch) && !((r->flags & W_DASH_C) && ch == 'c'))
			continue;
		bool attached = a[k + 1] != 0;
		if ((r->flags & W_SPLIT_S && ch == 'S') || (r->flags & W_DASH_C && ch == 'c')) {
			st->text = true;
			if (attached)
				value_text(j, r->name, &argv[i], k + 1);
			else if (i + 1 < argc)
				value_text(j, r->name, &argv[i + 1], 0);
		}
		return attached ? 0 : 1;
	}
	return 0;
}

static bool is_assign(const struct hook_word *w)
{
	const char *t = w->text;
	size_t k = 0;

	while (hook_is_name_char(t[k]))
		k++;
	return k > 0 && t[k] == '=' && !(t[0] >= '0' && t[0] <= '9') && k < w->lit;
}

/* A word whose only unquoted specials are replacement strings ({}, {.}, {1}): the
 * shell passes those as written (a brace expansion needs a comma or ..). */
static bool literal_or_braces(const struct hook_word *w)
{
	const char *rest = w->text + w->lit;

	if (strpbrk(rest, "$`*?[") || strchr(rest, ','))
		return false;
	return !strstr(rest, "..");
}

/* The words [from, to) joined by spaces, as the shell text a runner hands to sh -c.
 * Non-literal when any word is. NULL when out of memory. */
static char *join_words(const struct hook_word *argv, size_t from, size_t to, bool *lit)
{
	size_t len = 1;
	char *buf;

	*lit = true;
	for (size_t k = from; k < to; k++)
		len += strlen(argv[k].text) + 1, *lit &= literal_or_braces(&argv[k]);
	if (!(buf = calloc(1, len)))
		return NULL;
	for (size_t k = from; k < to; k++)
		strcat(strcat(buf, argv[k].text), k + 1 < to ? " " : "");
	return buf;
}

/* watch 'curl x' and watch curl x: the rest is one shell command. */
void hook_judge_joined(struct hook_judge *j, const char *what, const struct hook_word *argv,
		       size_t from, size_t argc)
{
	bool lit;
	char *buf = join_words(argv, from, argc, &lit);

	if (!buf) {
		hook_block(j, HOOK_CANNOT, "out of memory");
		return;
	}
	struct hook_word w = {buf, lit ? strlen(buf) : 0};
	hook_judge_text(j, what, &w);
	free(buf);
}

/* find ... -exec CMD ARGS... ; (or +), -execdir, -ok, -okdir: every such command. */
static void judge_find(struct hook_judge *j, const struct hook_script *s,
		       const struct hook_cmd *cmd, const struct hook_word *argv, size_t argc)
{
	static const char *const acts[] = {"-exec", "-execdir", "-ok", "-okdir", NULL};

	for (size_t i = 1; i < argc && !hook_decided(j); i++) {
		if (!in(acts, argv[i].text, strlen(argv[i].text)))
			continue;
		size_t e = i + 1;
		while (e < argc && strcmp(argv[e].text, ";") && strcmp(argv[e].text, "+"))
			e++;
		j->depth++;
		hook_judge_argv(j, s, cmd, argv + i + 1, e - i - 1, false);
		j->depth--;
		i = e;
	}
}

/* gdb [options] [--args PROG ARGS...]: PROG runs under gdb; an -ex command that is
 * `shell TEXT` or `!TEXT` runs TEXT through a shell. */
static void gdb_ex(struct hook_judge *j, const struct hook_word *w, size_t off)
{
	const char *t = w->text + off;
	size_t k = strspn(t, " \t");

	if (t[k] == '!')
		k++;
	else if (!strncmp(t + k, "shell", 5) && (t[k + 5] == ' ' || t[k + 5] == '\t'))
		k += 5;
	else
		return;
	value_text(j, "gdb", w, off + k);
}

static void judge_gdb(struct hook_judge *j, const struct hook_script *s, const struct hook_cmd *cmd,
		      const struct hook_word *argv, size_t argc)
{
	static const char *const ex[] = {
	    "-ex",  "--ex",  "-eval-command",	   "--eval-command",
	    "-iex", "--iex", "-init-eval-command", "--init-eval-command",
	    NULL};

	for (size_t i = 1; i < argc && !hook_decided(j); i++) {
		const char *a = argv[i].text, *eq = strchr(a, '=');
		size_t n = eq ? (size_t)(eq - a) : strlen(a);
		if (!strcmp(a, "--args")) {
			j->depth++;
			hook_judge_argv(j, s, cmd, argv + i + 1, argc - i - 1, false);
			j->depth--;
			return;
		}
		if (!in(ex, a, n))
			continue;
		if (eq)
			gdb_ex(j, &argv[i], n + 1);
		else if (i + 1 < argc)
			gdb_ex(j, &argv[++i], 0);
	}
}

/* GNU parallel [options] [COMMAND] (::: ARGS | :::: FILES)...: the command is shell
 * text with each argument put in for {} (or appended); without a command every
 * argument is a command. Arguments that are not here (stdin, files, globs) stand as
 * an expansion, so a host among them is refused as not literal. */
static const char *const parallel_vals[] = {"-j",	   "--jobs",	  "-a",
					    "--arg-file",  "-d",	  "--delimiter",
					    "-I",	   "-n",	  "--max-args",
					    "-N",	   "-L",	  "--results",
					    "--res",	   "--joblog",	  "--tmpdir",
					    "--workdir",   "--wd",	  "--halt",
					    "--timeout",   "--delay",	  "--retries",
					    "-C",	   "--colsep",	  "--basefile",
					    "--bf",	   "--return",	  "--env",
					    "--tagstring", "-E",	  "--load",
					    "--memfree",   "--nice",	  "--block",
					    "--recstart",  "--recend",	  "--header",
					    "--sshdelay",  "--termseq",	  "--shebang-wrap",
					    "-P",	   "--max-procs", NULL};

static void parallel_one(struct hook_judge *j, const char *cmd, const char *arg)
{
	size_t n = strlen(cmd), an = strlen(arg), cap = n + 4 * an * 4 + 64;
	char *out = calloc(1, cap), *o = out;
	bool put = false;

	if (!out) {
		hook_block(j, HOOK_CANNOT, "out of memory");
		return;
	}
	for (size_t i = 0; i <= n && (size_t)(o - out) + an + 8 < cap;) {
		size_t r = i < n && cmd[i] == '{' ? strspn(cmd + i + 1, "0123456789./#%") : 0;
		if (i < n && cmd[i] == '{' && cmd[i + 1 + r] == '}' && !put) {
			o = stpcpy(o, arg);
			put = true;
			i += r + 2;
		} else if (i == n) {
			if (!put)
				o = stpcpy(stpcpy(o, " "), arg);
			break;
		} else {
			*o++ = cmd[i++];
		}
	}
	struct hook_word w = {out, strlen(out)};
	hook_judge_text(j, "parallel", &w);
	free(out);
}

static char *shell_quote(const struct hook_word *w)
{
	size_t n = strlen(w->text);
	char *q, *o;

	if (!hook_word_literal(w))
		return strdup("$PARALLEL_ARG"); /* a value the hook cannot know */
	if (!(q = o = malloc(4 * n + 3)))
		return NULL;
	*o++ = '\'';
	for (const char *c = w->text; *c; c++)
		o = *c == '\'' ? stpcpy(o, "'\\''") : (*o = *c, o + 1);
	*o++ = '\'';
	*o = 0;
	return q;
}

static void judge_parallel(struct hook_judge *j, const struct hook_word *argv, size_t argc)
{
	size_t i = 1, c0, c1, nargs = 0;
	bool lit, from_elsewhere = false;

	for (; i < argc && argv[i].text[0] == '-' && argv[i].text[1]; i++) {
		const char *a = argv[i].text;
		size_t n = strcspn(a, "=");
		if (!strncmp(a, "-S", 2) || !strncmp(a, "--sshlogin", 10) || !strcmp(a, "--slf"))
			return (void)hook_block(j, HOOK_BLOCK,
						"parallel %s: runs its commands on other hosts "
						"over ssh, which the hook does not judge",
						a);
		if (!strcmp(a, "-a") || !strncmp(a, "--arg-file", 10))
			from_elsewhere = true;
		if (!a[n] && in(parallel_vals, a, n))
			i++;
	}
	for (c0 = c1 = i; c1 < argc && strncmp(argv[c1].text, ":::", 3); c1++)
		;
	char *cmd = join_words(argv, c0, c1, &lit);
	if (!cmd)
		return (void)hook_block(j, HOOK_CANNOT, "out of memory");
	if (!lit) {
		struct hook_word w = {cmd, 0};
		hook_judge_text(j, "parallel", &w); /* blocks: built by an expansion */
	}
	for (size_t k = c1; k < argc && !hook_decided(j); k++) {
		if (!strncmp(argv[k].text, "::::", 4)) {
			from_elsewhere = true; /* arguments from files */
			k++;
			continue;
		}
		if (!strncmp(argv[k].text, ":::", 3))
			continue;
		nargs++;
		if (c1 == c0) {
			hook_judge_text(j, "parallel", &argv[k]); /* ::: 'curl x' 'ls' */
			continue;
		}
		char *q = shell_quote(&argv[k]);
		if (!q)
			break;
		parallel_one(j, cmd, q);
		free(q);
	}
	if (c1 > c0 && (from_elsewhere || c1 >= argc || !nargs))
		parallel_one(j, cmd, "$PARALLEL_ARG"); /* stdin or files: not known */
	free(cmd);
}

bool hook_wrapper_skip(struct hook_judge *j, const struct hook_script *s,
		       const struct hook_cmd *cmd, const struct hook_word *argv, size_t argc,
		       size_t *skip, bool *xargs)
{
	const char *b = strrchr(argv[0].text, '/');
	const char *name = b ? b + 1 : argv[0].text;
	const struct wrapper *r = hook_wrapper_find(name);
	struct wstate st = {0};
	size_t i = 1;

	*skip = argc;
	*xargs = false;
	if (!strcmp(name, "gdb")) {
		judge_gdb(j, s, cmd, argv, argc);
		return true;
	}
	if (!strcmp(name, "find") || !strcmp(name, "parallel")) {
		if (name[0] == 'f')
			judge_find(j, s, cmd, argv, argc);
		else
			judge_parallel(j, argv, argc);
		return true;
	}
	if (!r)
		return false;
	if (r->flags & W_PROXY) {
		hook_block(j, HOOK_BLOCK,
			   "%s: every connection goes through the proxy in its configuration "
			   "file, which the hook cannot see",
			   r->name);
		return true;
	}
	for (; i < argc; i++) { /* an option's letters must be literal */
		const char *a = argv[i].text;
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (argv[i].lit < 2 || a[0] != '-' || a[1] == 0) {
			if (!(r->flags & W_PERMUTE) || (st.user && !st.text))
				break;
			continue; /* su USER, script FILE: options may follow */
		}
		i += a[1] == '-' ? long_opt(j, r, argv, i, argc, &st)
				 : short_opts(j, r, argv, i, argc, &st);
	}
	while ((r->flags & W_ASSIGNS) && i < argc && is_assign(&argv[i]))
		hook_net_assign(j, &argv[i++]);
	i += r->positionals;
	while ((r->flags & W_OPTS_AFTER) && i < argc && argv[i].lit > 1 && argv[i].text[0] == '-')
		i++; /* setarch's flags take no values */
	*skip = i < argc ? i : argc;
	*xargs = (r->flags & W_XARGS) && !st.replace;
	if ((r->flags & W_POS_C) && *skip + 1 < argc &&
	    (!strcmp(argv[*skip].text, "-c") || !strcmp(argv[*skip].text, "--command"))) {
		value_text(j, r->name, &argv[*skip + 1], 0); /* flock FILE -c TEXT */
		*skip = argc;
	} else if ((r->flags & W_POS_C) && *skip < argc &&
		   !strncmp(argv[*skip].text, "--command=", 10)) {
		value_text(j, r->name, &argv[*skip], 10);
		*skip = argc;
	}
	if (((r->flags & W_JOIN) || st.shell) && *skip < argc) {
		hook_judge_joined(j, r->name, argv, *skip, argc);
		*skip = argc;
	}
	if (st.text || (r->flags & W_NO_CMD) || ((r->flags & W_DASH_C) && !st.user))
		*skip = argc; /* su [-c TEXT] [USER]: the command, if any, was TEXT */
	/* sudo and doas start a shell only when asked (-s, -i): sudo -S -v reads a
	 * password on stdin, not commands */
	if (*skip >= argc && !st.text && (r->flags & W_SHELL_STDIN) &&
	    (st.shell || !(r->flags & W_SHELL_OPT)))
		hook_judge_stdin(j, s, cmd, r->name); /* su <<EOF, chroot DIR <<EOF */
	return true;
}
