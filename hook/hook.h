/* hook/ — `halo-run hook`: the policy at an agent harness's tool boundary, before
 * anything runs. A shell-grammar reader (shell_lex.c, shell.c), the judge of shell
 * commands (judge.c) with its tables of wrappers (wrap.c) and network programs (net.c,
 * net_proto.c), the file-tool rules (files.c) and the harnesses' event shapes
 * (event.c).
 *
 * Pure like policy/: no syscalls. What needs the file system (symlink resolution)
 * comes in through struct hook_ctx. Decide() stays in policy/; this only calls it.
 * Nothing here prints or exits. */
#ifndef HALO_HOOK_H
#define HALO_HOOK_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"

#define HOOK_MAX_EVENT	 (32u * 1024 * 1024) /* bytes of one event on stdin */
#define HOOK_MAX_COMMAND (1024u * 1024)	     /* bytes of one shell command */
#define HOOK_MAX_DEPTH	 16		     /* sh -c / eval / $(...) nesting */
#define HOOK_MAX_CMDS	 4096		     /* simple commands in one event */
#define HOOK_MAX_WORDS	 4096		     /* words in one simple command */
/* File names judged in one event (a patch's headers, read_many_files' paths): each
 * walks the file system, and a hook that outlasts the harness's timeout fails open. */
#define HOOK_MAX_NAMES 4096

/* ---------------------------------------------------------------- shell reader */

/* One word after quote removal. Expansions ($x, ${x}, $(...), `...`, $((...))) stay as
 * written; `lit` is how many leading bytes of text are literal (neither an expansion
 * nor an unquoted glob or brace), so a host inside [0, lit) is exactly what runs. */
struct hook_word {
	char *text;
	size_t lit;
};

static inline bool hook_word_literal(const struct hook_word *w)
{
	return w->text[w->lit] == '\0';
}

enum hook_redir_kind {
	HOOK_REDIR_IN,	       /* <  <> */
	HOOK_REDIR_OUT,	       /* > >> >| &> &>> */
	HOOK_REDIR_DUP,	       /* <& >& */
	HOOK_REDIR_HEREDOC,    /* << <<-: target.text is the body */
	HOOK_REDIR_HERESTRING, /* <<< */
};

struct hook_redir {
	enum hook_redir_kind kind;
	struct hook_word target;
};

/* A simple command: assignments before it, its words, its redirections. */
struct hook_cmd {
	struct hook_word *assigns;
	size_t n_assigns;
	struct hook_word *words;
	size_t n_words;
	struct hook_redir *redirs;
	size_t n_redirs;
	long pipe_from; /* index of the command whose output is this one's stdin, or -1 */
};

/* Every simple command of a script, flattened: lists, pipelines, subshells, groups,
 * loop and if bodies, function bodies and the commands inside substitutions. */
struct hook_script {
	struct hook_cmd *cmds;
	size_t n, cap;
	char err[160];
};

/* Read `len` bytes of shell text. `depth` counts the nesting that led here. Returns 0,
 * or -EINVAL (unreadable: unterminated quote, too deep, too many commands...) with the
 * reason in s->err, or -ENOMEM. s is always safe to hook_script_free(). */
int hook_shell_parse(const char *src, size_t len, unsigned depth, struct hook_script *s);
void hook_script_free(struct hook_script *s);

/* ---------------------------------------------------------------- judging */

struct hook_ctx {
	const struct halo_policy *policy;
	const char *cwd;      /* absolute: the event's working directory, the workspace */
	const char *cwd_real; /* the same resolved through symbolic links, or NULL */
	const char *home;     /* pw home */
	const char *env_home; /* $HOME, may be NULL */
	/* The two homes resolved through symbolic links where that differs (a $HOME that
	 * is a link: the sandbox judges the set under both names), or NULL. */
	const char *home_resolved, *env_home_resolved;
	const char *const *guard_names; /* persistence-guard names (.bashrc, .vscode, ...) */
	size_t n_guard_names;
	const char *path_env; /* the caller's PATH: the home set's PATH directories; may be NULL */
	const char *xdg_config; /* the caller's XDG_CONFIG_HOME (the home set); may be NULL */
	const char *xdg_data;	/* the caller's XDG_DATA_HOME (the home set); may be NULL */
	/* the caller's XDG_CONFIG_DIRS and XDG_DATA_DIRS (colon lists); may be NULL */
	const char *xdg_config_dirs, *xdg_data_dirs;
	const char *zdotdir; /* where ZDOTDIR may be (a colon list, runner_zdotdir); or NULL */
	/* The two homes where they lead (policy_xdg_leads), judged too; NULL when as named. */
	const char *xdg_config_real;
	const char *xdg_data_real;
	const char *zdotdir_real;
	/* the two XDG lists with each entry where it leads (policy_xdg_list_leads) */
	const char *xdg_config_dirs_real, *xdg_data_dirs_real;
	/* The sandbox's view of an absolute name as written (".." kept): the kernel's
	 * walk, policy_path_resolve, dangling links followed. Returns 0 or -errno. NULL:
	 * lexical only. */
	int (*resolve)(const char *abs, char *out, size_t n);
	/* Does the absolute name exist (lstat)? For telling a git directory by what it
	 * holds (policy_gitdir_holds). NULL: git directories by their .git name only. */
	bool (*exists)(const char *abs);
	/* Up to n bytes of a file (a repository's config, a .git file, commondir): the
	 * length, or -errno. NULL: what a config names (core.hooksPath, include.path) is
	 * not looked for. */
	int (*read_file)(const char *abs, char *buf, size_t n);
	/* The home of the user named (git's "~user/" in a config path), into out: 0, or
	 * -errno. NULL: such a path is not followed. */
	int (*user_home)(const char *user, char *out, size_t n);
	/* $GIT_CONFIG_GLOBAL, $GIT_CONFIG_SYSTEM (git's global and system configs instead
	 * of ~/.gitconfig and /etc/gitconfig), or NULL */
	const char *git_config_global, *git_config_system;
	/* A content search (Grep) reads files beneath the folder, hidden ones too
	 * (ripgrep --hidden, as Claude Code runs it): with glob "" every one, else those
	 * the glob names, anywhere (inside a directory a protected pattern names too).
	 * The first such file a protected glob matches, or such a directory, into out: 1
	 * found, 0 none, -E2BIG the folder is too large to tell (a bounded walk), -errno.
	 * NULL: not looked for (such a search is then blocked). */
	int (*find_protected)(const struct halo_policy *p, const char *folder, const char *glob,
			      char *out, size_t n);
	/* Is abs (resolved) what the sandbox's launch from the workspace masks, or inside
	 * it? Its scan knows what no name tells: the file a symlink with a protected name
	 * leads to is masked by its own name too. 1 with the mask in out, 0 no, -errno not
	 * known (the judgments by name stand). NULL: not asked. */
	int (*masked)(const struct halo_policy *p, const char *abs, char *out, size_t n);
	/* Protected paths that are symlinks (or pass through one), resolved: the sandbox
	 * masks what they lead to, so that is protected by its own name too.
	 * protected_real[i] is what policy->protected_abs entry protected_of[i] resolves
	 * to. */
	const char *const *protected_real;
	const char *const *protected_of;
	size_t n_protected_real;
	/* The same for the homes' persistence sets (policy_home_set_each_xdg): an entry
	 * that is a symlink (~/.vimrc -> dotfiles/vimrc) keeps what it leads to read-only
	 * in a home workspace. home_of[i] is the entry, absolute. */
	const char *const *home_real;
	const char *const *home_of;
	size_t n_home_real;
	/* The caller's PATH entries that lead into a home other than by their names (a
	 * link outside it, a ".."), where they lead: each stays read-only in a home
	 * workspace as the sandbox keeps it (linux/scan_home.c). path_rel[i] is path_real[i]
	 * below its home (or absolute, outside every home), for the message; path_why[i]
	 * its reason. An XDG directory whose way goes on with a ".." past a missing name
	 * adds that name (the sandbox keeps it from being made). */
	/* The symlinks on those ways (the XDG directories and lists, the set's entries,
	 * PATH entries): the sandbox pins them, so a write or a delete of one is refused. */
	const char *const *pinned_links;
	size_t n_pinned_links;
	const char *const *path_real;
	const char *const *path_rel;
	const char *const *path_why;
	size_t n_path_real;
	/* halo-run's own files and places, as a launch from cwd keeps them, each as named
	 * and resolved (runner/hook_own.c gathers them from the launch's own functions).
	 * own_readonly: the policy files the launch runs under and halo-run itself,
	 * read-only inside wherever they lie (a command must not widen its own policy),
	 * own_readonly_what[i] naming it.
	 * own_hidden: what no sandbox sees (the index key's directory in /tmp, the indexes,
	 * the session directory), own_hidden_why[i] naming it. cache_all: the directory of
	 * every workspace's isolated caches, hidden inside (an empty read-only tmpfs) but
	 * for cache_own, this workspace's, bound writable. NULL / 0: none. */
	const char *const *own_readonly;
	const char *const *own_readonly_what; /* "a policy file halo-run runs under", ... */
	size_t n_own_readonly;
	const char *const *own_hidden;
	const char *const *own_hidden_why;
	size_t n_own_hidden;
	const char *cache_all[2], *cache_own[2];
};

enum hook_outcome {
	HOOK_ALLOW,
	HOOK_BLOCK,  /* a rule refuses it */
	HOOK_CANNOT, /* the event cannot be judged: blocked too (fail closed) */
};

struct hook_verdict {
	enum hook_outcome outcome;
	char reason[600]; /* one line */
};

/* A shell command (Bash tool and equivalents). */
void hook_check_command(const struct hook_ctx *c, const char *cmd, size_t len,
			struct hook_verdict *v);
/* A fetch tool's URL: its host through Decide(). `tool` names it in the reason. */
void hook_check_url(const struct hook_ctx *c, const char *tool, const char *url,
		    struct hook_verdict *v);
/* Every http(s) URL in free text (Gemini's web_fetch takes a prompt). */
/* Gemini's web_fetch `url` (its direct mode): the URL's host, and the host gemini-cli
 * fetches a GitHub file page from. */
void hook_check_gemini_url(const struct hook_ctx *c, const char *tool, const char *url,
			   struct hook_verdict *v);
void hook_check_prompt_urls(const struct hook_ctx *c, const char *tool, const char *text,
			    struct hook_verdict *v);
/* A file tool's path: protected paths, the writable roots, the persistence guard. */
void hook_check_path(const struct hook_ctx *c, const char *tool, const char *path, bool write,
		     struct hook_verdict *v);
/* A search tool (Grep, Glob) over `folder` (NULL: the cwd) with a file-name glob:
 * blocked when the glob could reach a protected name or a protected path beneath the
 * folder (the folder itself goes through hook_check_path). */
/* What a content search's walk (find_protected) needs to know of ripgrep as Claude Code
 * runs it: does the search by glob ("" none) read a file of this name (by name, at any
 * depth; each alternative of a brace; a glob with '/' read as every file, the safe
 * side), and is a directory of this name skipped (a version control one)? Pure. */
bool hook_search_reads(const char *glob, const char *name);
bool hook_search_skips_dir(const char *name);
void hook_check_search(const struct hook_ctx *c, const char *tool, const char *folder,
		       const char *glob, struct hook_verdict *v);
/* A Codex apply_patch body: every file it adds, updates, deletes or moves to. */
void hook_check_patch(const struct hook_ctx *c, const char *tool, const char *patch,
		      struct hook_verdict *v);
/* A shell call Codex would apply as a patch itself (`apply_patch BODY`, or
 * `[cd DIR &&] apply_patch <<EOF`): its headers judged like hook_check_patch's, when the
 * verdict so far allows. */
void hook_check_shell_patch(const struct hook_ctx *c, const char *tool, const char *text,
			    struct hook_verdict *v);

/* ---------------------------------------------------------------- events */

enum hook_harness {
	HOOK_HARNESS_ANY = 0, /* every harness's tool names; either pre-tool event */
	HOOK_HARNESS_CLAUDE_CODE,
	HOOK_HARNESS_CODEX,
	HOOK_HARNESS_GEMINI,
};

/* A name (or alias) of policy/'s harness table supporting POLICY_HARNESS_HOOK: 0, or
 * -EINVAL. */
int hook_harness_parse(const char *name, enum hook_harness *out);

/* The tools the hook judges in Claude Code, as a settings matcher ("Bash|Read|..."). */
extern const char hook_claude_code_matcher[];

struct hook_event {
	void *root;		/* the parsed JSON (cJSON) */
	const char *tool;	/* tool_name; NULL for a SessionEnd event */
	const char *cwd;	/* the event's cwd, NULL when absent */
	const void *row;	/* the tool's row, NULL for a tool the hook does not judge */
	const void *input;	/* tool_input */
	const char *session_id; /* the harness's session, NULL when absent */
	bool session_end;	/* a SessionEnd event: no tool, nothing to judge */
};

/* Parse one event: valid UTF-8, no NUL, no duplicate keys where the hook reads, the
 * documented shape. A SessionEnd event parses too (ev->session_end, no tool).
 * Returns 0, or -EINVAL with the reason in why (fail closed). */
int hook_event_parse(const char *json, size_t len, enum hook_harness h, struct hook_event *ev,
		     char *why, size_t whylen);
/* Judge a parsed event; c->cwd is the event's (or the caller's fallback). */
void hook_event_judge(const struct hook_ctx *c, const struct hook_event *ev,
		      struct hook_verdict *v);
void hook_event_free(struct hook_event *ev);

/* ---------------------------------------------------------------- --wrap (rewrite.c) */

/* s as one single-quoted shell word. 0, -EINVAL (s holds a NUL), -ENOMEM. */
int hook_shell_quote(const char *s, size_t len, char **out);
/* "'prefix[0]' ... 'prefix[n-1]' 'CMD'": bash reads back exactly these n+1 words.
 * 0, -EINVAL when CMD holds a NUL (no shell argument can: refused, never cut), or
 * -ENOMEM. *out is malloc'd. */
int hook_wrap_line(const char *const *prefix, size_t n, const char *cmd, size_t len, char **out);
/* The command of a Bash call (Claude Code's shell tool), or NULL. */
const char *hook_event_command(const struct hook_event *ev);
/* Does the event run a shell (any harness's shell tool)? --wrap must then rewrite it or
 * block it: one it let through unrewritten would run outside the sandbox. */
bool hook_event_is_shell(const struct hook_event *ev);
/* The PreToolUse answer that runs `line` instead: the event's whole tool_input with its
 * command replaced, and no permissionDecision, so the harness's own permission flow
 * judges the rewritten call. 0 or -ENOMEM; *json is malloc'd. */
int hook_wrap_answer(const struct hook_event *ev, const char *line, char **json);

#endif
