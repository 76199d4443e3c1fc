/* Internal to hook/: the lexer's state shared by the reader's two halves, and the
 * helpers the judge's files share. Not for other modules. */
#ifndef HALO_HOOK_INT_H
#define HALO_HOOK_INT_H

#include "hook/hook.h"

#define HOOK_MAX_NEST	  64 /* subshells, groups and substitutions inside one text */
#define HOOK_MAX_PENDING  32 /* here-documents waiting for their newline */
#define HOOK_MAX_HEREDOCS 256

static inline int hook_hexval(char c)
{
	return policy_hexval(c);
}

static inline bool hook_is_name_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* ------------------------------------------------------------ the reader */

struct hook_bodies {
	char *text[HOOK_MAX_HEREDOCS];
	size_t lit[HOOK_MAX_HEREDOCS];
	size_t n;
};

struct hook_lex {
	const char *s;
	size_t n, i;
	unsigned depth, nest;
	struct hook_script *out;
	struct hook_bodies *bodies;
	struct {
		size_t id;
		char *delim;
		bool strip, quoted;
	} pend[HOOK_MAX_PENDING];
	size_t n_pend;
	bool heredoc_mode; /* the whole text is a here-document body */
};

enum { T_EOF, T_WORD, T_NL, T_SEMI, T_AMP, T_AND, T_OR, T_PIPE, T_LP, T_RP, T_DSEMI, T_REDIR };

struct hook_token {
	int t;
	struct hook_word w; /* T_WORD, T_REDIR (a here-document's: lit is the body's id) */
	enum hook_redir_kind rk;
	bool plain; /* no quoting and nothing special: may be a reserved word */
};

int hook_next_token(struct hook_lex *L, struct hook_token *t);
int hook_parse_list(struct hook_lex *L, bool until_rparen, long pipe_outer);
int hook_lex_fail(struct hook_lex *L, const char *fmt, const char *arg);

/* ------------------------------------------------------------ the judge */

struct hook_judge {
	const struct hook_ctx *c;
	struct hook_verdict *v;
	unsigned depth;
	/* The target is reached by the harness's own tool (a fetch), on the host: its
	 * loopback is the host's, not a sandbox's own. */
	bool host_side;
};

/* Set a block (the first reason wins; later ones are dropped). Returns true when the
 * verdict is already decided, so loops can stop. */
/* What a repository config whose work tree holds `abs` names there (core.hooksPath,
 * include.path: files_git.c), as the reason, or NULL. */
const char *hook_git_config_hit(const struct hook_ctx *c, const char *abs);
bool hook_block(struct hook_judge *j, enum hook_outcome o, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline bool hook_decided(const struct hook_judge *j)
{
	return j->v->outcome != HOOK_ALLOW;
}

/* Put one target (URL, host, host:port, [v6]:port) through Decide(). `what` names it
 * ("curl", "ssh -J"). `w` is the word it came from and [start, end) the bytes of the
 * target inside w->text: anything non-literal up to `end` makes it unverifiable. */
void hook_target(struct hook_judge *j, const char *what, const struct hook_word *w, size_t start,
		 size_t end);
/* A whole word as a target (the common case). */
void hook_target_word(struct hook_judge *j, const char *what, const struct hook_word *w);
/* A literal string as a target (from a decoded value). */
void hook_target_text(struct hook_judge *j, const char *what, const char *text);

/* Judge shell text (sh -c, eval, ssh -o ProxyCommand=...) one level deeper. */
void hook_judge_text(struct hook_judge *j, const char *what, const struct hook_word *w);
/* Judge an argv (after wrappers were removed). `cmd` gives redirections and the pipe. */
void hook_judge_argv(struct hook_judge *j, const struct hook_script *s, const struct hook_cmd *cmd,
		     const struct hook_word *argv, size_t argc, bool from_xargs);

/* wrap.c: is argv[0] a program runner (sudo, env, timeout, nice, find -exec, xargs,
 * flock, script -c, strace, unshare, parallel ...)? Then *skip is where the command it
 * runs starts, *xargs says that more arguments will come from standard input; returns
 * true. Commands given as text (-c TEXT), inside (find -exec) or many (parallel) are
 * judged here; *skip == argc then, as for a runner with no command (sudo -v). */
bool hook_wrapper_skip(struct hook_judge *j, const struct hook_script *s,
		       const struct hook_cmd *cmd, const struct hook_word *argv, size_t argc,
		       size_t *skip, bool *xargs);
/* judge.c: the script a shell (or su, chroot, an interpreter) reads on its standard
 * input when given none: a here-document, a here-string, echo/printf piped in. */
void hook_judge_stdin(struct hook_judge *j, const struct hook_script *s, const struct hook_cmd *cmd,
		      const char *what);
/* The text on a command's standard input when it is written in the command: 1 and *w
 * (free w->text when *owned), 0 when it comes from elsewhere (a file, a program), -1
 * when it was blocked (a decoded script). */
int hook_stdin_text(struct hook_judge *j, const struct hook_script *s, const struct hook_cmd *cmd,
		    const char *what, struct hook_word *w, bool *owned);

/* net.c: is argv[0]'s base name a network program? Then check every host it would
 * contact and return true. */
bool hook_net_check(struct hook_judge *j, const char *base, const struct hook_word *argv,
		    size_t argc, bool from_xargs);
/* interp.c: python, perl, node, ruby, php, lua, awk: the code they run when it is
 * written in the command (-c/-e, a here-document, a here-string, echo piped in), read
 * for hosts and for commands it runs. Returns true for an interpreter (judged). */
bool hook_interp_check(struct hook_judge *j, const struct hook_script *s,
		       const struct hook_cmd *cmd, const char *base, const struct hook_word *argv,
		       size_t argc);
/* How an interpreter's strings and commands are written (interp.c's rows). */
enum {
	HOOK_L_PY = 1,	      /* python: exec() runs code, f-strings, triple quotes */
	HOOK_L_DOLLAR = 2,    /* "…$x…" interpolates (perl, php) */
	HOOK_L_HASH = 4,      /* "…#{x}…" interpolates (ruby) */
	HOOK_L_TICK_CMD = 8,  /* `…` runs a command (perl, ruby, php) */
	HOOK_L_TEMPLATE = 16, /* `…${x}…` is a template string (node) */
	HOOK_L_AWK = 32,      /* the program is the first operand; | getline, print | */
};

/* interp_code.c: does a string look like a host name or host:port (not a file name)? */
bool hook_host_like(const char *t);
/* interp_code.c: judge one piece of interpreter code by interp.c's rule. */
void hook_interp_code(struct hook_judge *j, unsigned flags, const char *what,
		      const struct hook_word *w);

/* net_tool.c: go get/install/run, docker/podman pull/push/run/login, gh: the hosts
 * their operands name. Returns true when the program was fully judged here. */
/* The words [from, argc) joined by spaces, judged as one shell command (watch). */
void hook_judge_joined(struct hook_judge *j, const char *what, const struct hook_word *argv,
		       size_t from, size_t argc);
/* tmux: the shell commands its subcommands run, and the keys send-keys types. */
bool hook_mux_check(struct hook_judge *j, const char *base, const struct hook_word *argv,
		    size_t argc);
/* vim and friends: -c/--cmd/+ and ex scripts on stdin that run `!TEXT`. */
bool hook_editor_check(struct hook_judge *j, const struct hook_script *s,
		       const struct hook_cmd *cmd, const char *base, const struct hook_word *argv,
		       size_t argc);
bool hook_tool_check(struct hook_judge *j, const struct hook_script *s, const struct hook_cmd *cmd,
		     const char *base, const struct hook_word *argv, size_t argc);
/* runs.c: sed (e, s///e), tar (--checkpoint-action=exec, --to-command, -I), make (a
 * makefile from stdin, --eval), crontab/at/batch (jobs from stdin), screen (commands,
 * stuff), expect (spawn, exec): the commands they run. True when judged here. */
bool hook_runs_check(struct hook_judge *j, const struct hook_script *s, const struct hook_cmd *cmd,
		     const char *base, const struct hook_word *argv, size_t argc);
/* Environment assignments (NAME=VALUE) that point a client at a host or run a command. */
void hook_net_assign(struct hook_judge *j, const struct hook_word *w);
/* files_home.c: the reason a write at abs (in writable root `root`) is refused by a
 * home's persistence set, *entry the entry's name below its home; NULL when none. */
/* files_own.c: halo-run's own files and places (hook_ctx's own_*, cache_*). A write
 * or a read there that the sandbox refuses: blocked with the reason (true). And is abs
 * in this workspace's own caches, bound writable inside: that root, or NULL. */
bool hook_own_hit(const struct hook_ctx *c, struct hook_judge *j, const char *tool,
		  const char *path, const char *abs, bool write);
const char *hook_own_cache(const struct hook_ctx *c, const char *abs);
const char *hook_home_hit(const struct hook_ctx *c, const char *abs, const char *root,
			  const char **entry);

#endif
