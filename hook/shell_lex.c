/* The shell-grammar reader, its lexer: POSIX sh and bash text into tokens.
 *
 * It reads what a shell would run, not what a regular expression would guess: quotes
 * and escapes are removed the way the shell removes them ($'\x63url' is curl), every
 * list, pipeline, subshell, group and compound body is walked, and the commands inside
 * $(...), `...`, <(...) and unquoted here-documents are read too, because they run.
 * What it cannot know (the value of $HOST, a glob's matches) it keeps as written and
 * marks: a word's `lit` says how much of it is literal. Unreadable text is an error,
 * never a guess: the caller blocks it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hook/hook_int.h"

struct buf {
	char *p;
	size_t n, cap, lit;
	bool special, quoted;
};

int hook_lex_fail(struct hook_lex *L, const char *fmt, const char *arg)
{
	if (!L->out->err[0])
		snprintf(L->out->err, sizeof(L->out->err), fmt, arg);
	return -EINVAL;
}

static int putc_(struct buf *b, char c, bool literal)
{
	if (b->n + 2 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 32;
		char *p = realloc(b->p, cap);
		if (!p)
			return -ENOMEM;
		b->p = p;
		b->cap = cap;
	}
	if (!literal && !b->special) {
		b->special = true;
		b->lit = b->n;
	}
	b->p[b->n++] = c;
	b->p[b->n] = 0;
	return 0;
}

static int puts_(struct buf *b, const char *s, bool literal)
{
	int rc = 0;

	for (; *s && !rc; s++)
		rc = putc_(b, *s, literal);
	return rc;
}

static struct hook_word buf_take(struct buf *b)
{
	struct hook_word w;

	if (!b->p)
		b->p = calloc(1, 1);
	w.text = b->p;
	w.lit = b->special ? b->lit : b->n;
	b->p = NULL;
	b->n = b->cap = 0;
	return w;
}

static bool is_meta(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
	       c == '>' || c == '(' || c == ')';
}

/* A nested text (backquotes, ${...}, a here-document) read by its own lexer into the
 * same script. */
static int sub_parse(struct hook_lex *L, const char *text, size_t len, bool heredoc_mode)
{
	char *copy = strndup(text, len); /* the lexer reads up to a NUL */
	struct hook_lex sub = {.s = copy,
			       .n = len,
			       .depth = L->depth + 1,
			       .out = L->out,
			       .bodies = L->bodies,
			       .heredoc_mode = heredoc_mode};
	int rc;

	if (!copy)
		return -ENOMEM;
	if (sub.depth > HOOK_MAX_DEPTH) {
		free(copy);
		return hook_lex_fail(L, "nested more than %s levels deep", "16");
	}
	rc = hook_parse_list(&sub, false, -1);
	for (size_t k = 0; k < sub.n_pend; k++)
		free(sub.pend[k].delim);
	free(copy);
	return rc;
}

static int lex_dquote(struct hook_lex *L, struct buf *b, bool heredoc);
static int lex_backtick(struct hook_lex *L, struct buf *b);

/* $'...': the ANSI-C escapes decoded, so that $'\x63url' reads as curl. */
static int lex_ansi_c(struct hook_lex *L, struct buf *b)
{
	static const char from[] = "abefnrtv\\'\"?E", to[] = "\a\b\033\f\n\r\t\v\\'\"?\033";
	int rc = 0;

	size_t start = b->n;

	b->quoted = true;
	for (L->i += 2; L->i < L->n && L->s[L->i] != '\'' && !rc; L->i++) {
		const char *hit;
		unsigned v = 0, k = 0;
		char c = L->s[L->i];
		if (c != '\\' || L->i + 1 >= L->n) {
			rc = putc_(b, c, true);
			continue;
		}
		c = L->s[++L->i];
		if ((hit = strchr(from, c)) && c) {
			rc = putc_(b, to[hit - from], true);
		} else if (c >= '0' && c <= '7') {
			for (; k < 3 && L->i < L->n && L->s[L->i] >= '0' && L->s[L->i] <= '7'; k++)
				v = v * 8 + (unsigned)(L->s[L->i++] - '0');
			L->i--;
			rc = putc_(b, (char)v, true);
		} else if (c == 'x') {
			for (; k < 2 && L->i + 1 < L->n && hook_hexval(L->s[L->i + 1]) >= 0; k++)
				v = v * 16 + (unsigned)hook_hexval(L->s[++L->i]);
			rc = k ? putc_(b, (char)v, true) : puts_(b, "\\x", true);
		} else if (c == 'c' && L->i + 1 < L->n) {
			rc = putc_(b, (char)(L->s[++L->i] & 0x1f), true);
		} else {
			/* \u, \U and anything else: kept as written, and not literal, so a
			 * host spelled with them is refused rather than misread. */
			rc = putc_(b, '\\', false) ? -ENOMEM : putc_(b, c, false);
		}
	}
	if (!rc && L->i >= L->n)
		return hook_lex_fail(L, "unterminated %s", "$'...'");
	L->i++;
	/* bash ends the string at a decoded NUL ($'ev\0il' is "ev"): so does the word. */
	if (!rc && b->n > start && memchr(b->p + start, 0, b->n - start))
		b->n = start + strlen(b->p + start);
	if (b->lit > b->n)
		b->lit = b->n;
	return rc;
}

/* Skip a balanced ${...} or $((...)), quotes respected; returns the index after it. */
static size_t skip_balanced(const char *s, size_t n, size_t i, char open, char close)
{
	int level = 0;

	for (; i < n; i++) {
		char c = s[i];
		if (c == '\\') {
			i++;
		} else if (c == '\'') {
			const char *q = memchr(s + i + 1, '\'', n - i - 1);
			if (!q)
				return n + 1;
			i = (size_t)(q - s);
		} else if (c == open) {
			level++;
		} else if (c == close && --level == 0) {
			return i + 1;
		}
	}
	return n + 1;
}

static int lex_dollar(struct hook_lex *L, struct buf *b, bool in_dq)
{
	const char *s = L->s;
	char next = L->i + 1 < L->n ? s[L->i + 1] : 0;
	size_t end;
	int rc;

	if (next == '\'' && !in_dq)
		return lex_ansi_c(L, b);
	if (next == '"' && !in_dq) {
		L->i++;
		return lex_dquote(L, b, false);
	}
	if (next == '(' && L->i + 2 < L->n && s[L->i + 2] == '(') {
		end = skip_balanced(s, L->n, L->i + 1, '(', ')');
		if (end > L->n)
			return hook_lex_fail(L, "unterminated %s", "$((...))");
		L->i = end;
		return puts_(b, "$((...))", false);
	}
	if (next == '(') {
		if (++L->nest > HOOK_MAX_NEST)
			return hook_lex_fail(L, "nested more than %s levels deep", "64");
		bool hm = L->heredoc_mode; /* inside $( ) it is shell text again */
		L->i += 2;
		L->heredoc_mode = false;
		rc = hook_parse_list(L, true, -1);
		L->heredoc_mode = hm;
		L->nest--;
		return rc ? rc : puts_(b, "$(...)", false);
	}
	if (next == '{') {
		end = skip_balanced(s, L->n, L->i + 1, '{', '}');
		if (end > L->n)
			return hook_lex_fail(L, "unterminated %s", "${...}");
		/* ${x:-$(cmd)} runs cmd: read what is inside as here-document text. */
		rc = sub_parse(L, s + L->i + 2, end - L->i - 3, true);
		L->i = end;
		return rc ? rc : puts_(b, "${...}", false);
	}
	if ((next >= 'A' && next <= 'Z') || (next >= 'a' && next <= 'z') || next == '_') {
		rc = putc_(b, '$', false);
		for (L->i++; !rc && L->i < L->n && hook_is_name_char(s[L->i]); L->i++)
			rc = putc_(b, s[L->i], false);
		return rc;
	}
	if (next && strchr("0123456789@*#?$!-", next)) {
		L->i += 2;
		return putc_(b, '$', false) ? -ENOMEM : putc_(b, next, false);
	}
	L->i++;
	return putc_(b, '$', true);
}

/* "...": backslash escapes only $ ` " \ and newline; expansions still happen. In a
 * here-document body the same rules hold, without the closing quote. */
static int lex_dquote(struct hook_lex *L, struct buf *b, bool heredoc)
{
	int rc = 0;

	b->quoted = true;
	if (!heredoc)
		L->i++;
	while (!rc && L->i < L->n) {
		char c = L->s[L->i];
		if (c == '"' && !heredoc) {
			L->i++;
			return 0;
		}
		if (c == '\\' && L->i + 1 < L->n &&
		    strchr(heredoc ? "$`\\\n" : "$`\"\\\n", L->s[L->i + 1])) {
			if (L->s[L->i + 1] != '\n')
				rc = putc_(b, L->s[L->i + 1], true);
			L->i += 2;
		} else if (c == '$') {
			rc = lex_dollar(L, b, true);
		} else if (c == '`') {
			rc = lex_backtick(L, b);
		} else {
			rc = putc_(b, c, true);
			L->i++;
		}
	}
	if (!rc && !heredoc)
		return hook_lex_fail(L, "unterminated %s", "double quote");
	return rc;
}

/* `...`: the old command substitution. Inside, \` \\ and \$ stand for themselves. */
static int lex_backtick(struct hook_lex *L, struct buf *b)
{
	struct buf in = {0};
	int rc = 0;

	for (L->i++; L->i < L->n && L->s[L->i] != '`' && !rc; L->i++) {
		if (L->s[L->i] == '\\' && L->i + 1 < L->n && strchr("`\\$", L->s[L->i + 1]))
			L->i++;
		rc = putc_(&in, L->s[L->i], true);
	}
	if (!rc && L->i >= L->n)
		rc = hook_lex_fail(L, "unterminated %s", "`...`");
	L->i++;
	if (!rc)
		rc = sub_parse(L, in.p ? in.p : "", in.n, false);
	free(in.p);
	return rc ? rc : puts_(b, "`...`", false);
}

static int lex_word(struct hook_lex *L, struct buf *b)
{
	int rc = 0;

	if (L->heredoc_mode) {
		rc = lex_dquote(L, b, true);
		return rc;
	}
	while (!rc && L->i < L->n && !is_meta(L->s[L->i])) {
		char c = L->s[L->i];
		if (c == '\\') {
			b->quoted = true;
			if (L->i + 1 < L->n && L->s[L->i + 1] != '\n')
				rc = putc_(b, L->s[L->i + 1], true);
			L->i += L->i + 1 < L->n ? 2 : 1;
		} else if (c == '\'') {
			const char *q = memchr(L->s + L->i + 1, '\'', L->n - L->i - 1);
			if (!q)
				return hook_lex_fail(L, "unterminated %s", "single quote");
			b->quoted = true;
			for (L->i++; !rc && L->s + L->i < q; L->i++)
				rc = putc_(b, L->s[L->i], true);
			L->i++;
		} else if (c == '"') {
			rc = lex_dquote(L, b, false);
		} else if (c == '$') {
			rc = lex_dollar(L, b, false);
		} else if (c == '`') {
			rc = lex_backtick(L, b);
		} else {
			/* Unquoted glob and brace characters: the word is not what is written. */
			rc = putc_(b, c, !strchr("*?[{", c));
			L->i++;
		}
	}
	return rc;
}

/* A here-document's body, read at the newline after its operator. */
static int read_bodies(struct hook_lex *L)
{
	for (size_t k = 0; k < L->n_pend; k++) {
		struct buf body = {0};
		size_t dl = strlen(L->pend[k].delim);
		int rc = 0;
		while (!rc && L->i < L->n) {
			const char *line = L->s + L->i, *nl = memchr(line, '\n', L->n - L->i);
			size_t len = nl ? (size_t)(nl - line) : L->n - L->i;
			L->i += len + (nl ? 1 : 0);
			while (L->pend[k].strip && len && *line == '\t')
				line++, len--;
			if (len == dl && memcmp(line, L->pend[k].delim, dl) == 0)
				break;
			for (size_t j = 0; !rc && j < len; j++)
				rc = putc_(&body, line[j], true);
			if (!rc)
				rc = putc_(&body, '\n', true);
		}
		struct hook_word w = buf_take(&body);
		if (rc || !w.text) {
			free(w.text);
			return -ENOMEM;
		}
		if (!L->pend[k].quoted) {
			w.lit = strcspn(w.text, "$`");
			if (w.text[w.lit] &&
			    (rc = sub_parse(L, w.text, strlen(w.text), true)) != 0) {
				free(w.text);
				return rc;
			}
		}
		L->bodies->text[L->pend[k].id] = w.text;
		L->bodies->lit[L->pend[k].id] = w.lit;
		free(L->pend[k].delim);
		L->pend[k].delim = NULL; /* an error in a later body must not free it again */
	}
	L->n_pend = 0;
	return 0;
}

static int lex_redir(struct hook_lex *L, struct hook_token *t)
{
	static const struct {
		const char *op;
		enum hook_redir_kind kind;
	} ops[] = {
	    {"<<<", HOOK_REDIR_HERESTRING}, {"<<-", HOOK_REDIR_HEREDOC}, {"<<", HOOK_REDIR_HEREDOC},
	    {"<>", HOOK_REDIR_IN},	    {"<&", HOOK_REDIR_DUP},	 {"<", HOOK_REDIR_IN},
	    {"&>>", HOOK_REDIR_OUT},	    {"&>", HOOK_REDIR_OUT},	 {">>", HOOK_REDIR_OUT},
	    {">|", HOOK_REDIR_OUT},	    {">&", HOOK_REDIR_DUP},	 {">", HOOK_REDIR_OUT},
	};
	struct buf b = {0};
	size_t k = 0;
	int rc;

	while (strncmp(L->s + L->i, ops[k].op, strlen(ops[k].op)) != 0)
		k++;
	L->i += strlen(ops[k].op);
	t->t = T_REDIR;
	t->rk = ops[k].kind;
	while (L->i < L->n && (L->s[L->i] == ' ' || L->s[L->i] == '\t'))
		L->i++;
	if (L->i + 1 < L->n && (L->s[L->i] == '<' || L->s[L->i] == '>') && L->s[L->i + 1] == '(') {
		/* sh < <(cmd): the target is a process substitution; cmd runs */
		if (++L->nest > HOOK_MAX_NEST)
			return hook_lex_fail(L, "nested more than %s levels deep", "64");
		L->i += 2;
		if ((rc = hook_parse_list(L, true, -1)) != 0)
			return rc;
		L->nest--;
		t->w.text = strdup("/dev/fd/?");
		t->w.lit = 0;
		if (t->rk == HOOK_REDIR_HEREDOC)
			t->rk = HOOK_REDIR_IN;
		return t->w.text ? 0 : -ENOMEM;
	}
	if (L->i >= L->n || is_meta(L->s[L->i]))
		return hook_lex_fail(L, "a redirection (%s) without a target", ops[k].op);
	if ((rc = lex_word(L, &b)) != 0) {
		free(b.p);
		return rc;
	}
	t->w = buf_take(&b);
	if (!t->w.text)
		return -ENOMEM;
	if (t->rk != HOOK_REDIR_HEREDOC)
		return 0;
	if (L->n_pend == HOOK_MAX_PENDING || L->bodies->n == HOOK_MAX_HEREDOCS) {
		free(t->w.text);
		t->w.text = NULL;
		return hook_lex_fail(L, "more than %s here-documents", "256");
	}
	L->pend[L->n_pend].id = L->bodies->n;
	L->pend[L->n_pend].delim = t->w.text;
	L->pend[L->n_pend].strip = ops[k].op[2] == '-';
	L->pend[L->n_pend++].quoted = b.quoted;
	t->w.text = NULL;
	t->w.lit = L->bodies->n++; /* which body: filled in once the whole text is read */
	return 0;
}

static int lex_op(struct hook_lex *L, struct hook_token *t)
{
	static const struct {
		const char *op;
		int t;
	} ops[] = {
	    {";;&", T_DSEMI}, {";;", T_DSEMI}, {";&", T_DSEMI}, {";", T_SEMI},
	    {"&&", T_AND},    {"&", T_AMP},    {"||", T_OR},	{"|&", T_PIPE},
	    {"|", T_PIPE},    {"(", T_LP},     {")", T_RP},
	};

	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (strncmp(L->s + L->i, ops[k].op, strlen(ops[k].op)) == 0) {
			L->i += strlen(ops[k].op);
			t->t = ops[k].t;
			return 0;
		}
	return hook_lex_fail(L, "unexpected %s", "character");
}

int hook_next_token(struct hook_lex *L, struct hook_token *t)
{
	const char *s = L->s;
	struct buf b = {0};
	size_t d;
	int rc;

	memset(t, 0, sizeof(*t));
	for (;;) {
		while (L->i < L->n && (s[L->i] == ' ' || s[L->i] == '\t'))
			L->i++;
		if (L->i + 1 < L->n && s[L->i] == '\\' && s[L->i + 1] == '\n' && !L->heredoc_mode)
			L->i += 2;
		else
			break;
	}
	if (L->i < L->n && s[L->i] == '#' && !L->heredoc_mode)
		while (L->i < L->n && s[L->i] != '\n')
			L->i++;
	if (L->i >= L->n) {
		t->t = T_EOF;
		return 0;
	}
	if (L->heredoc_mode) {
		t->t = T_WORD;
		rc = lex_word(L, &b);
		t->w = buf_take(&b);
		return rc ? rc : t->w.text ? 0 : -ENOMEM;
	}
	for (d = L->i; d < L->n && s[d] >= '0' && s[d] <= '9'; d++)
		;
	if (d > L->i && d < L->n && (s[d] == '<' || s[d] == '>') && d + 1 < L->n && s[d + 1] != '(')
		L->i = d; /* 2>file: the descriptor does not matter here */
	if (s[L->i] == '\n') {
		L->i++;
		t->t = T_NL;
		return read_bodies(L);
	}
	if ((s[L->i] == '<' || s[L->i] == '>') && L->i + 1 < L->n && s[L->i + 1] == '(') {
		/* <(cmd) and >(cmd): cmd runs; the word is a /dev/fd name nobody can know. */
		if (++L->nest > HOOK_MAX_NEST)
			return hook_lex_fail(L, "nested more than %s levels deep", "64");
		L->i += 2;
		if ((rc = hook_parse_list(L, true, -1)) != 0)
			return rc;
		L->nest--;
		t->t = T_WORD;
		t->w.text = strdup("/dev/fd/?");
		return t->w.text ? 0 : -ENOMEM;
	}
	if (s[L->i] == '<' || s[L->i] == '>' ||
	    (s[L->i] == '&' && L->i + 1 < L->n && s[L->i + 1] == '>'))
		return lex_redir(L, t);
	if (is_meta(s[L->i]))
		return lex_op(L, t);
	t->t = T_WORD;
	rc = lex_word(L, &b);
	t->plain = !b.quoted && (!b.special || (b.n == 1 && b.p[0] == '{'));
	t->w = buf_take(&b);
	return rc ? rc : t->w.text ? 0 : -ENOMEM;
}
