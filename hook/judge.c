/* The judge of shell commands: unwrap what runs another command (sudo, env, timeout,
 * xargs, sh -c, eval ...), then ask net.c about every network program it finds.
 *
 * Every host goes through policy_decide(), the one Decide(); a host that is not
 * literal in the command text (an expansion, a glob, a command substitution) is
 * refused as unverifiable, and so is a script that is decoded and executed, because
 * the hook cannot see what it would run. Programs without an explicit host pass: the
 * sandbox decides those when they connect. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "hook/hook_int.h"

bool hook_block(struct hook_judge *j, enum hook_outcome o, const char *fmt, ...)
{
	va_list ap;

	if (hook_decided(j))
		return true;
	j->v->outcome = o;
	va_start(ap, fmt);
	vsnprintf(j->v->reason, sizeof(j->v->reason), fmt, ap);
	va_end(ap);
	for (char *p = j->v->reason; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = ' '; /* one line, whatever the command held */
	return true;
}

void hook_target_word(struct hook_judge *j, const char *what, const struct hook_word *w)
{
	const char *t = w->text, *scheme = strstr(t, "://");
	size_t end;

	/* A URL's authority, or a bare host[:port] with a path after it. */
	if (scheme)
		end = (size_t)(scheme - t) + 3 + strcspn(scheme + 3, "/?#");
	else
		end = strcspn(t, "/");
	if (!scheme && end == 0)
		return; /* a path, not a host */
	hook_target(j, what, w, 0, end);
}

static void judge_script(struct hook_judge *j, const struct hook_script *s);

#define MAX_ALIASES 64

/* An alias defined in the command (alias NAME=VALUE): expanded where NAME runs. */
struct alias {
	char *name;
	struct hook_word value; /* owned */
	bool active;		/* being expanded: a name inside its own value is not */
};

/* The aliases of the command being judged by hook_check_command on this thread (the
 * judge's struct is shared with the file tools, which have none). */
static _Thread_local struct aliases {
	struct alias a[MAX_ALIASES];
	size_t n;
	size_t reread; /* bytes of nested text read again (sh -c, aliases, parallel) */
} * aliases;

/* Runners repeat text (parallel once per argument, an alias once per use): a budget
 * keeps one event's judging bounded in time, since a hook that times out lets the
 * call through in every harness. */
#define MAX_REREAD (16u * 1024 * 1024)

static bool spend(struct hook_judge *j, size_t bytes)
{
	if (!aliases || (aliases->reread += bytes) <= MAX_REREAD)
		return true;
	hook_block(j, HOOK_CANNOT, "the command repeats more than %u MiB of text to read",
		   MAX_REREAD >> 20);
	return false;
}

void hook_judge_text(struct hook_judge *j, const char *what, const struct hook_word *w)
{
	struct hook_script s;
	int rc;

	if (hook_decided(j))
		return;
	if (!hook_word_literal(w)) {
		hook_block(j, HOOK_BLOCK,
			   "%s: the script '%.160s' is built by an expansion at run time, so "
			   "what it runs cannot be verified",
			   what, w->text);
		return;
	}
	if (!spend(j, strlen(w->text)))
		return;
	rc = hook_shell_parse(w->text, strlen(w->text), j->depth + 1, &s);
	if (rc) {
		hook_block(j, HOOK_CANNOT, "%s: cannot read the script: %s", what,
			   rc == -ENOMEM ? "out of memory" : s.err);
	} else {
		j->depth++;
		judge_script(j, &s);
		j->depth--;
	}
	hook_script_free(&s);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static bool in_list(const char *const *list, const char *name)
{
	for (; *list; list++)
		if (strcmp(*list, name) == 0)
			return true;
	return false;
}

/* Programs that turn encoded or compressed text back into a script. */
static const char *const decoders[] = {
    "base64", "base32", "basenc", "xxd",     "uudecode", "openssl", "gunzip",
    "zcat",   "gzip",	"bzcat",  "bzip2",   "bunzip2",	 "xz",	    "unxz",
    "xzcat",  "zstd",	"unzstd", "zstdcat", "lz4",	 "lz4cat",  "rev",
    "tr",     "perl",	"python", "python3", "ruby",	 "node",    NULL,
};

/* <(cmd): the lexer's word for a process substitution (nothing literal in it). */
static bool procsub(const struct hook_word *w)
{
	return w->lit == 0 && !strcmp(w->text, "/dev/fd/?");
}

/* sh <(cmd), source <(cmd), sh < <(cmd): the script is what cmd prints when it runs
 * (kubectl completion bash, or echo of anything): not in the command. */
static void procsub_block(struct hook_judge *j, const char *what)
{
	hook_block(j, HOOK_BLOCK,
		   "%s <(...): the script is what a process substitution prints at run time, so "
		   "what it runs cannot be verified",
		   what);
}

int hook_stdin_text(struct hook_judge *j, const struct hook_script *s, const struct hook_cmd *cmd,
		    const char *what, struct hook_word *w, bool *owned)
{
	*owned = false;
	for (size_t r = cmd->n_redirs; r-- > 0;) {
		const struct hook_redir *rd = &cmd->redirs[r];
		if (rd->kind == HOOK_REDIR_HEREDOC || rd->kind == HOOK_REDIR_HERESTRING) {
			*w = rd->target;
			return 1;
		}
		if (rd->kind == HOOK_REDIR_IN && procsub(&rd->target)) {
			procsub_block(j, what);
			return -1;
		}
		if (rd->kind == HOOK_REDIR_IN)
			return 0; /* sh < file: like sh file, its text is not here */
	}
	if (cmd->pipe_from < 0)
		return 0;
	const struct hook_cmd *up = &s->cmds[cmd->pipe_from];
	if (!up->n_words)
		return 0;
	const char *b = base_name(up->words[0].text);
	if (in_list(decoders, b)) {
		hook_block(j, HOOK_BLOCK,
			   "%s | %s: a decoded script is executed, and the hook cannot see what "
			   "it would run",
			   b, what);
		return -1;
	}
	if (!strcmp(b, "cat") && up->n_words == 1)
		return hook_stdin_text(j, s, up, what, w, owned); /* cat <<EOF | python3 */
	if (strcmp(b, "echo") != 0 && strcmp(b, "printf") != 0)
		return 0; /* cat FILE | sh, curl URL | sh: the text comes from elsewhere */
	/* echo 'curl evil' | sh: the script is right here. */
	size_t len = 1;
	for (size_t i = 1; i < up->n_words; i++)
		len += strlen(up->words[i].text) + 1;
	*w = (struct hook_word){calloc(1, len), 0};
	bool lit = true;
	if (!w->text) {
		hook_block(j, HOOK_CANNOT, "out of memory");
		return -1;
	}
	for (size_t i = 1; i < up->n_words; i++) {
		lit &= hook_word_literal(&up->words[i]);
		if (up->words[i].text[0] == '-' && i == 1 && b[0] == 'e')
			continue; /* echo -n / -e */
		strcat(w->text, up->words[i].text);
		strcat(w->text, i + 1 < up->n_words ? " " : "");
	}
	/* printf's \n and echo -e's escapes: read as written, one level (a \ or % in
	 * the text could spell anything, so those stay unverifiable for a shell). */
	w->lit = lit && !strchr(w->text, '\\') && !strchr(w->text, '%') ? strlen(w->text) : 0;
	*owned = true;
	return 1;
}

void hook_judge_stdin(struct hook_judge *j, const struct hook_script *s, const struct hook_cmd *cmd,
		      const char *what)
{
	struct hook_word w;
	bool owned;

	if (hook_stdin_text(j, s, cmd, what, &w, &owned) == 1)
		hook_judge_text(j, what, &w);
	if (owned)
		free(w.text);
}

/* sh [-opts] [-c TEXT | FILE | (stdin)] */
static void judge_shell(struct hook_judge *j, const struct hook_script *s,
			const struct hook_cmd *cmd, const struct hook_word *argv, size_t argc,
			bool from_xargs)
{
	const char *sh = base_name(argv[0].text);
	bool cmode = false;
	size_t i = 1;

	for (; i < argc; i++) {
		const char *a = argv[i].text;
		if (strcmp(a, "--") == 0 || strcmp(a, "-") == 0) {
			i++;
			break;
		}
		if ((a[0] != '-' && a[0] != '+') || !hook_word_literal(&argv[i]))
			break;
		if (a[1] == '-') {
			if (strcmp(a, "--rcfile") == 0 || strcmp(a, "--init-file") == 0)
				i++;
			continue;
		}
		if (strchr(a, 'c') && a[0] == '-')
			cmode = true;
		if (strchr(a, 'o') || strchr(a, 'O'))
			i++; /* -o OPTION, +O SHOPT */
	}
	if (cmode) {
		if (i < argc)
			hook_judge_text(j, sh, &argv[i]);
		else if (from_xargs) /* xargs sh -c: the script is the first word read */
			hook_block(j, HOOK_BLOCK,
				   "xargs %s -c: the script comes from standard input, which the "
				   "hook cannot see",
				   sh);
		return;
	}
	if (i >= argc)
		hook_judge_stdin(j, s, cmd, sh);
	else if (procsub(&argv[i]))
		procsub_block(j, sh);
	/* else: sh FILE. Its text is not in the command: the sandbox is the boundary. */
}

/* eval ARGS: the words joined are read again as a command. */
static void judge_eval(struct hook_judge *j, const struct hook_word *argv, size_t argc)
{
	size_t len = 1;
	bool lit = true;

	for (size_t i = 1; i < argc; i++) {
		len += strlen(argv[i].text) + 1;
		lit &= hook_word_literal(&argv[i]);
	}
	struct hook_word w = {calloc(1, len), 0};
	if (!w.text) {
		hook_block(j, HOOK_CANNOT, "out of memory");
		return;
	}
	for (size_t i = 1; i < argc; i++) {
		strcat(w.text, argv[i].text);
		strcat(w.text, i + 1 < argc ? " " : "");
	}
	w.lit = lit ? strlen(w.text) : 0;
	hook_judge_text(j, "eval", &w);
	free(w.text);
}

/* trap [-lp] [[ACTION] SIGNAL...]: ACTION runs as a command when the signal comes. */
static void judge_trap(struct hook_judge *j, const struct hook_word *argv, size_t argc)
{
	size_t i = 1;

	if (i < argc && !strcmp(argv[i].text, "--"))
		i++;
	else if (i < argc && argv[i].text[0] == '-' && argv[i].text[1])
		return; /* -l, -p: listing */
	if (i + 1 < argc && strcmp(argv[i].text, "-") != 0)
		hook_judge_text(j, "trap", &argv[i]);
}

/* source FILE / . FILE: a script from standard input is right here. */
static void judge_source(struct hook_judge *j, const struct hook_script *s,
			 const struct hook_cmd *cmd, const struct hook_word *argv, size_t argc)
{
	static const char *const stdin_names[] = {"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0",
						  NULL};

	if (argc > 1 && hook_word_literal(&argv[1]) && in_list(stdin_names, argv[1].text))
		hook_judge_stdin(j, s, cmd, argv[0].text);
	else if (argc > 1 && procsub(&argv[1]))
		procsub_block(j, argv[0].text);
}

static const char *const shells[] = {
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "rbash", "lksh", NULL,
};
static const char *const declarers[] = {
    "export", "declare", "typeset", "local", "readonly", NULL,
};

static void judge_cmd(struct hook_judge *j, const struct hook_script *s, const struct hook_cmd *c);

/* alias NAME=VALUE ...: remembered for the whole command (bash expands an alias on
 * the lines after its definition; judging it everywhere errs towards more). */
static void collect_aliases(struct hook_judge *j, const struct hook_script *s)
{
	for (size_t i = 0; aliases && i < s->n && !hook_decided(j); i++) {
		const struct hook_cmd *c = &s->cmds[i];
		if (!c->n_words || strcmp(c->words[0].text, "alias"))
			continue;
		for (size_t k = 1; k < c->n_words; k++) {
			const struct hook_word *w = &c->words[k];
			size_t n = strcspn(w->text, "=");
			if (!w->text[n] || n == 0 || n >= w->lit)
				continue;
			if (aliases->n == MAX_ALIASES) {
				hook_block(j, HOOK_CANNOT, "more than %d aliases", MAX_ALIASES);
				return;
			}
			struct alias *a = &aliases->a[aliases->n++];
			a->name = strndup(w->text, n);
			a->value.text = strdup(w->text + n + 1);
			a->value.lit = w->lit - n - 1;
			a->active = false;
			if (!a->name || !a->value.text)
				hook_block(j, HOOK_CANNOT, "out of memory");
		}
	}
}

/* NAME ARGS where NAME is an alias: its value read as a command, with ARGS appended
 * to the last simple command in it, as bash does. Returns true when it was one. */
static bool expand_alias(struct hook_judge *j, const struct hook_script *s,
			 const struct hook_cmd *cmd, const struct hook_word *argv, size_t argc)
{
	struct alias *a = NULL;
	struct hook_script sub;
	int rc;

	(void)s;
	(void)cmd;
	for (size_t k = 0; aliases && k < aliases->n && hook_word_literal(&argv[0]); k++)
		if (!aliases->a[k].active && aliases->a[k].name &&
		    !strcmp(aliases->a[k].name, argv[0].text))
			a = &aliases->a[k];
	if (!a)
		return false;
	if (!hook_word_literal(&a->value)) {
		hook_block(j, HOOK_BLOCK,
			   "alias %s: its value '%.160s' is built by an expansion, so what it "
			   "runs cannot be verified",
			   a->name, a->value.text);
		return true;
	}
	if (!spend(j, strlen(a->value.text) + 1))
		return true;
	rc = hook_shell_parse(a->value.text, strlen(a->value.text), j->depth + 1, &sub);
	if (rc) {
		hook_block(j, HOOK_CANNOT, "alias %s: cannot read its value: %s", a->name,
			   rc == -ENOMEM ? "out of memory" : sub.err);
	} else if (sub.n) {
		struct hook_cmd *last = &sub.cmds[sub.n - 1];
		size_t n = last->n_words + argc - 1;
		struct hook_word *all = calloc(n ? n : 1, sizeof(*all));
		a->active = true;
		j->depth++;
		for (size_t i = 0; i + 1 < sub.n && !hook_decided(j); i++)
			judge_cmd(j, &sub, &sub.cmds[i]);
		if (all) {
			if (last->n_words)
				memcpy(all, last->words, last->n_words * sizeof(*all));
			if (argc > 1)
				memcpy(all + last->n_words, argv + 1, (argc - 1) * sizeof(*all));
			struct hook_cmd merged = *last;
			merged.words = all;
			merged.n_words = n;
			judge_cmd(j, &sub, &merged);
		} else {
			hook_block(j, HOOK_CANNOT, "out of memory");
		}
		j->depth--;
		a->active = false;
		free(all);
	}
	hook_script_free(&sub);
	return true;
}

void hook_judge_argv(struct hook_judge *j, const struct hook_script *s, const struct hook_cmd *cmd,
		     const struct hook_word *argv, size_t argc, bool from_xargs)
{
	const char *b;
	size_t skip;
	bool xargs = false;

	if (!argc || hook_decided(j))
		return;
	if (!hook_word_literal(&argv[0]) && strcmp(argv[0].text, "[") &&
	    strcmp(argv[0].text, "[[")) {
		hook_block(j, HOOK_BLOCK,
			   "the program name '%.200s' is an expansion, so what runs cannot be "
			   "verified",
			   argv[0].text);
		return;
	}
	b = base_name(argv[0].text);
	if (j->depth > HOOK_MAX_DEPTH) {
		hook_block(j, HOOK_CANNOT, "commands nested more than %d levels deep",
			   HOOK_MAX_DEPTH);
		return;
	}
	if (expand_alias(j, s, cmd, argv, argc))
		return;
	if (hook_wrapper_skip(j, s, cmd, argv, argc, &skip, &xargs)) {
		j->depth++;
		hook_judge_argv(j, s, cmd, argv + skip, argc - skip, from_xargs || xargs);
		j->depth--;
		return;
	}
	if (in_list(shells, b)) {
		judge_shell(j, s, cmd, argv, argc, from_xargs);
	} else if (strcmp(b, "trap") == 0) {
		judge_trap(j, argv, argc);
	} else if (strcmp(argv[0].text, "source") == 0 || strcmp(argv[0].text, ".") == 0) {
		judge_source(j, s, cmd, argv, argc);
	} else if (strcmp(b, "eval") == 0) {
		judge_eval(j, argv, argc);
	} else if (in_list(declarers, b)) {
		for (size_t i = 1; i < argc; i++)
			hook_net_assign(j, &argv[i]);
	} else if (!hook_interp_check(j, s, cmd, b, argv, argc) &&
		   !hook_editor_check(j, s, cmd, b, argv, argc) &&
		   !hook_mux_check(j, b, argv, argc) &&
		   !hook_tool_check(j, s, cmd, b, argv, argc) &&
		   !hook_runs_check(j, s, cmd, b, argv, argc)) {
		hook_net_check(j, b, argv, argc, from_xargs);
	}
}

/* /dev/tcp/HOST/PORT and /dev/udp/...: bash opens a connection for the redirection. */
static void judge_redir(struct hook_judge *j, const struct hook_redir *r)
{
	const struct hook_word *w = &r->target;
	const char *t = w->text;

	if (r->kind == HOOK_REDIR_HEREDOC || r->kind == HOOK_REDIR_HERESTRING)
		return;
	if (strncmp(t, "/dev/tcp/", 9) == 0 || strncmp(t, "/dev/udp/", 9) == 0) {
		size_t end = 9 + strcspn(t + 9, "/");
		hook_target(j, t[5] == 't' ? "/dev/tcp" : "/dev/udp", w, 9, end);
	} else if (w->lit < 9 && w->lit >= 5 && strncmp(t, "/dev/", 5) == 0 &&
		   (strncmp(t + 5, "tcp/", w->lit - 5) == 0 ||
		    strncmp(t + 5, "udp/", w->lit - 5) == 0)) {
		hook_block(j, HOOK_BLOCK,
			   "the redirection to '%.200s' may open a network connection that "
			   "cannot be verified",
			   t);
	}
}

static void judge_cmd(struct hook_judge *j, const struct hook_script *s, const struct hook_cmd *c)
{
	for (size_t a = 0; a < c->n_assigns; a++)
		hook_net_assign(j, &c->assigns[a]);
	for (size_t r = 0; r < c->n_redirs; r++)
		judge_redir(j, &c->redirs[r]);
	hook_judge_argv(j, s, c, c->words, c->n_words, false);
}

static void judge_script(struct hook_judge *j, const struct hook_script *s)
{
	collect_aliases(j, s);
	for (size_t i = 0; i < s->n && !hook_decided(j); i++)
		judge_cmd(j, s, &s->cmds[i]);
}

void hook_check_command(const struct hook_ctx *c, const char *cmd, size_t len,
			struct hook_verdict *v)
{
	struct hook_judge j = {c, v, 0, false};
	struct aliases *al = calloc(1, sizeof(*al));
	struct hook_script s;
	int rc;

	v->outcome = HOOK_ALLOW;
	v->reason[0] = 0;
	if (!al) {
		hook_block(&j, HOOK_CANNOT, "out of memory");
		return;
	}
	aliases = al;
	rc = hook_shell_parse(cmd, len, 0, &s);
	if (rc)
		hook_block(&j, HOOK_CANNOT, "cannot read the command: %s",
			   rc == -ENOMEM ? "out of memory" : s.err);
	else
		judge_script(&j, &s);
	hook_script_free(&s);
	for (size_t k = 0; k < al->n; k++) {
		free(al->a[k].name);
		free(al->a[k].value.text);
	}
	free(al);
	aliases = NULL;
}
