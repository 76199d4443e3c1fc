/* The shell-grammar reader, its parser: tokens into simple commands.
 *
 * Control structure is flattened on purpose: the hook asks "could this command run,
 * and what would it contact", so the body of an if, a loop, a case arm or a function
 * counts as if it ran. Reserved words are recognised only where the shell recognises
 * them (unquoted, in command position). Pipes are kept: each command knows which one
 * feeds its standard input, so `base64 -d | sh` can be told from `sh script`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hook/hook_int.h"

struct cmdb {
	struct hook_cmd c;
	size_t cap_w, cap_a, cap_r;
};

static void word_free(struct hook_word *w)
{
	free(w->text);
	w->text = NULL;
}

static void cmd_free(struct hook_cmd *c)
{
	for (size_t i = 0; i < c->n_words; i++)
		free(c->words[i].text);
	for (size_t i = 0; i < c->n_assigns; i++)
		free(c->assigns[i].text);
	for (size_t i = 0; i < c->n_redirs; i++)
		free(c->redirs[i].target.text);
	free(c->words);
	free(c->assigns);
	free(c->redirs);
	memset(c, 0, sizeof(*c));
}

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 4;
	void *np = realloc(*p, nc * size);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = nc;
	return 0;
}

/* Takes ownership of w whatever happens. */
static int add_word(struct hook_lex *L, struct cmdb *b, struct hook_word w, bool assign)
{
	struct hook_word **arr = assign ? &b->c.assigns : &b->c.words;
	size_t *n = assign ? &b->c.n_assigns : &b->c.n_words;

	if (*n >= HOOK_MAX_WORDS) {
		free(w.text);
		return hook_lex_fail(L, "more than %s words in one command", "4096");
	}
	if (grow((void **)arr, assign ? &b->cap_a : &b->cap_w, *n, sizeof(**arr)) < 0) {
		free(w.text);
		return -ENOMEM;
	}
	(*arr)[(*n)++] = w;
	return 0;
}

static int add_redir(struct cmdb *b, const struct hook_token *t)
{
	if (grow((void **)&b->c.redirs, &b->cap_r, b->c.n_redirs, sizeof(*b->c.redirs)) < 0) {
		free(t->w.text);
		return -ENOMEM;
	}
	b->c.redirs[b->c.n_redirs++] = (struct hook_redir){t->rk, t->w};
	return 0;
}

static int finish(struct hook_lex *L, struct cmdb *b, long pipe_from)
{
	struct hook_script *s = L->out;

	if (!b->c.n_words && !b->c.n_assigns && !b->c.n_redirs) {
		cmd_free(&b->c);
		memset(b, 0, sizeof(*b));
		return 0;
	}
	if (s->n >= HOOK_MAX_CMDS) {
		cmd_free(&b->c);
		return hook_lex_fail(L, "more than %s commands", "4096");
	}
	if (grow((void **)&s->cmds, &s->cap, s->n, sizeof(*s->cmds)) < 0) {
		cmd_free(&b->c);
		return -ENOMEM;
	}
	b->c.pipe_from = pipe_from;
	s->cmds[s->n++] = b->c;
	memset(b, 0, sizeof(*b));
	return 0;
}

/* NAME=value or NAME+=value, the name unquoted. */
static bool is_assignment(const struct hook_word *w)
{
	const char *t = w->text;
	size_t k = 0;

	if (!((t[0] >= 'A' && t[0] <= 'Z') || (t[0] >= 'a' && t[0] <= 'z') || t[0] == '_'))
		return false;
	while (hook_is_name_char(t[k]))
		k++;
	if (t[k] == '+')
		k++;
	return t[k] == '=' && k < w->lit;
}

/* Words that only shape control flow; what follows them is a command again. */
static const char *const flow_words[] = {
    "{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "coproc",
};

static bool is_flow_word(const char *w)
{
	for (size_t k = 0; k < sizeof(flow_words) / sizeof(flow_words[0]); k++)
		if (strcmp(w, flow_words[k]) == 0)
			return true;
	return false;
}

struct pstate {
	struct cmdb cur;
	long pipe_src, pipe_outer;
	unsigned case_level;
	bool in_pattern, skip_to_do, skip_name;
	unsigned coproc; /* 1 after `coproc`, 2 after its first word: NAME in
			  * `coproc NAME { ...; }` names the coprocess */
};

/* Reserved words in command position. Returns 1 when the token was one (consumed). */
static int reserved(struct hook_lex *L, struct pstate *p, struct hook_token *t)
{
	const char *w = t->w.text;
	struct hook_token sub;
	int rc;

	if (p->coproc == 2 && t->plain && p->cur.c.n_words == 1 && !p->cur.c.n_assigns &&
	    !strcmp(w, "{")) {
		p->cur.c.n_words = 0; /* coproc NAME { ...; }: NAME is no command */
		word_free(&p->cur.c.words[0]);
	}
	p->coproc = p->coproc == 1 && !p->cur.c.n_words ? 2 : 0;
	if (!t->plain || p->cur.c.n_words || p->cur.c.n_assigns)
		return 0;
	if (is_flow_word(w)) {
		p->coproc = !strcmp(w, "coproc");
		word_free(&t->w);
		return 1;
	}
	if (strcmp(w, "for") == 0 || strcmp(w, "select") == 0) {
		p->skip_to_do = true; /* the loop's words are data; $(...) in them was read */
	} else if (strcmp(w, "case") == 0) {
		/* case WORD in: patterns up to ')', then commands up to ';;' or esac. */
		for (int k = 0; k < 2; k++) {
			if ((rc = hook_next_token(L, &sub)) != 0) {
				free(sub.w.text);
				word_free(&t->w);
				return rc;
			}
			free(sub.w.text);
		}
		p->case_level++;
		p->in_pattern = true;
	} else if (strcmp(w, "esac") == 0) {
		if (p->case_level)
			p->case_level--;
	} else if (strcmp(w, "function") == 0) {
		p->skip_name = true;
	} else {
		return 0;
	}
	word_free(&t->w);
	return 1;
}

/* Tokens that are not commands: a case arm's patterns, a for loop's word list. */
static bool skipped(struct pstate *p, struct hook_token *t)
{
	if (p->skip_to_do) {
		if (t->t == T_WORD && t->plain && strcmp(t->w.text, "do") == 0)
			p->skip_to_do = false;
	} else if (p->in_pattern) {
		if (t->t == T_RP)
			p->in_pattern = false;
		else if (t->t == T_WORD && t->plain && strcmp(t->w.text, "esac") == 0)
			p->in_pattern = false, p->case_level--;
	} else if (p->skip_name && t->t == T_WORD) {
		p->skip_name = false;
	} else {
		return false;
	}
	free(t->w.text);
	t->w.text = NULL;
	return true;
}

static int on_lparen(struct hook_lex *L, struct pstate *p)
{
	struct hook_token t;
	int rc;

	if (p->cur.c.n_words == 1 && strcmp(p->cur.c.words[0].text, "time") == 0) {
		cmd_free(&p->cur.c); /* time ( list ): the reserved word times a subshell */
		memset(&p->cur, 0, sizeof(p->cur));
	}
	if (p->cur.c.n_words == 1 && !p->cur.c.n_assigns && !p->cur.c.n_redirs) {
		/* name () body: a function definition; its body is read as commands. */
		if ((rc = hook_next_token(L, &t)) != 0 || t.t != T_RP) {
			free(t.w.text);
			return rc ? rc : hook_lex_fail(L, "%s", "syntax error near '('");
		}
		cmd_free(&p->cur.c);
		memset(&p->cur, 0, sizeof(p->cur));
		return 0;
	}
	if (p->cur.c.n_words)
		return hook_lex_fail(L, "%s", "syntax error near '('");
	if ((rc = finish(L, &p->cur, p->pipe_src)) != 0)
		return rc;
	if (++L->nest > HOOK_MAX_NEST)
		return hook_lex_fail(L, "nested more than %s levels deep", "64");
	rc = hook_parse_list(L, true, p->pipe_src); /* a subshell reads the same stdin */
	L->nest--;
	return rc;
}

static int step(struct hook_lex *L, struct pstate *p, struct hook_token *t, bool until_rparen,
		bool *done)
{
	int rc;

	switch (t->t) {
	case T_WORD:
		if (L->heredoc_mode) {
			/* a here-document's text is data; only its substitutions ran */
			word_free(&t->w);
			return 0;
		}
		if ((rc = reserved(L, p, t)) != 0)
			return rc < 0 ? rc : 0;
		if (p->skip_name) {
			p->skip_name = false;
			word_free(&t->w);
			return 0;
		}
		return add_word(L, &p->cur, t->w, !p->cur.c.n_words && is_assignment(&t->w));
	case T_REDIR:
		return add_redir(&p->cur, t);
	case T_LP:
		return on_lparen(L, p);
	case T_PIPE:
		if ((rc = finish(L, &p->cur, p->pipe_src)) != 0)
			return rc;
		p->pipe_src = L->out->n ? (long)L->out->n - 1 : -1;
		return 0;
	case T_DSEMI:
		p->in_pattern = p->case_level > 0;
		/* fall through */
	case T_SEMI:
	case T_AMP:
	case T_AND:
	case T_OR:
	case T_NL:
		rc = finish(L, &p->cur, p->pipe_src);
		p->pipe_src = p->pipe_outer;
		return rc;
	case T_RP:
		if (!until_rparen)
			return hook_lex_fail(L, "%s", "unexpected ')'");
		*done = true;
		return finish(L, &p->cur, p->pipe_src);
	default: /* T_EOF */
		*done = true;
		if (until_rparen)
			return hook_lex_fail(L, "%s", "unterminated '(' or '$('");
		return finish(L, &p->cur, p->pipe_src);
	}
}

int hook_parse_list(struct hook_lex *L, bool until_rparen, long pipe_outer)
{
	struct pstate p = {.pipe_src = pipe_outer, .pipe_outer = pipe_outer};
	bool done = false;
	int rc = 0;

	while (!done && !rc) {
		struct hook_token t;
		rc = hook_next_token(L, &t);
		if (rc) {
			free(t.w.text);
			break;
		}
		if (t.t != T_EOF && skipped(&p, &t))
			continue;
		rc = step(L, &p, &t, until_rparen, &done);
	}
	cmd_free(&p.cur.c);
	return rc;
}

void hook_script_free(struct hook_script *s)
{
	for (size_t i = 0; i < s->n; i++)
		cmd_free(&s->cmds[i]);
	free(s->cmds);
	s->cmds = NULL;
	s->n = s->cap = 0;
}

/* Here-document bodies were read after their commands were built: put them in. */
static void fill_bodies(struct hook_script *s, struct hook_bodies *b)
{
	for (size_t i = 0; i < s->n; i++)
		for (size_t r = 0; r < s->cmds[i].n_redirs; r++) {
			struct hook_redir *rd = &s->cmds[i].redirs[r];
			size_t id = rd->target.lit;
			if (rd->kind != HOOK_REDIR_HEREDOC || rd->target.text)
				continue;
			rd->target.text = b->text[id] ? b->text[id] : strdup("");
			rd->target.lit = b->text[id] ? b->lit[id] : 0;
			b->text[id] = NULL;
		}
}

int hook_shell_parse(const char *src, size_t len, unsigned depth, struct hook_script *s)
{
	struct hook_bodies *bodies;
	struct hook_lex L = {.s = src, .n = len, .depth = depth, .out = s};
	int rc;

	memset(s, 0, sizeof(*s));
	if (len > HOOK_MAX_COMMAND)
		return hook_lex_fail(&L, "longer than %s bytes", "1 MiB");
	if (memchr(src, 0, len))
		return hook_lex_fail(&L, "%s", "a NUL byte in the command");
	if (depth > HOOK_MAX_DEPTH)
		return hook_lex_fail(&L, "nested more than %s levels deep", "16");
	char *copy = strndup(src, len); /* the lexer reads up to a NUL */
	if (!copy || !(bodies = calloc(1, sizeof(*bodies)))) {
		free(copy);
		return -ENOMEM;
	}
	L.s = copy;
	L.bodies = bodies;
	rc = hook_parse_list(&L, false, -1);
	for (size_t k = 0; k < L.n_pend; k++)
		free(L.pend[k].delim);
	fill_bodies(s, bodies);
	for (size_t k = 0; k < bodies->n; k++)
		free(bodies->text[k]);
	free(bodies);
	free(copy);
	for (size_t i = 0; !rc && i < s->n; i++)
		for (size_t r = 0; r < s->cmds[i].n_redirs; r++)
			if (!s->cmds[i].redirs[r].target.text)
				rc = -ENOMEM;
	return rc;
}
