/* Git directories, told by what they hold and by the names in them that run code
 * later: the one rule the hook's file tools, the Linux scan, the creation broker and
 * the SBPL rendering share (case per policy/pathfacts.c: exact on Linux).
 *
 * A directory is a git directory, as git's is_git_directory() sees it, when it holds
 * HEAD and commondir (a linked work tree's, or a submodule's that shares one) or
 * objects and refs (a repository, bare or not, or a common directory). HEAD is not
 * required for the second form: a directory holding objects/ and refs/ is one HEAD
 * away from being a repository, so it is treated as one (the guarded side). A
 * directory named .git is one whatever it holds: git init fills an empty one and keeps
 * the hooks it finds. In one, hooks/ (all of it), config, config.worktree (read when
 * the config enables it) and commondir (it moves config and hooks elsewhere) run code
 * or say where code comes from; so do the same names in the git directories of
 * submodules (modules/NAME, NAME may hold slashes) and linked work trees
 * (worktrees/NAME). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy_int.h"

static const struct {
	const char *name;
	unsigned flag;
} git_entries[] = {
    {"HEAD", POLICY_GIT_HEAD},
    {"objects", POLICY_GIT_OBJECTS},
    {"refs", POLICY_GIT_REFS},
    {"commondir", POLICY_GIT_COMMONDIR},
};

/* hooks is a directory: everything beneath it is guarded. */
static const struct policy_git_guard git_guards[] = {
    {"hooks", true},
    {"config", false},
    {"config.worktree", false},
    {"commondir", false},
};

unsigned policy_git_entry(const char *name)
{
	for (size_t i = 0; i < sizeof(git_entries) / sizeof(git_entries[0]); i++)
		if (policy_name_eq(name, git_entries[i].name))
			return git_entries[i].flag;
	return 0;
}

bool policy_git_entries_make_gitdir(unsigned held)
{
	return ((held & POLICY_GIT_HEAD) && (held & POLICY_GIT_COMMONDIR)) ||
	       ((held & POLICY_GIT_OBJECTS) && (held & POLICY_GIT_REFS));
}

unsigned policy_git_entries_held(bool (*holds)(void *ctx, const char *name), void *ctx)
{
	unsigned held = 0;

	for (size_t i = 0; i < sizeof(git_entries) / sizeof(git_entries[0]); i++)
		if (holds(ctx, git_entries[i].name))
			held |= git_entries[i].flag;
	return held;
}

bool policy_gitdir_holds(bool (*holds)(void *ctx, const char *name), void *ctx)
{
	return policy_git_entries_make_gitdir(policy_git_entries_held(holds, ctx));
}

bool policy_git_dot_name(const char *name, size_t len)
{
	return len == 4 && policy_name_eqn(name, ".git", 4);
}

const struct policy_git_guard *policy_git_guards(size_t *n)
{
	*n = sizeof(git_guards) / sizeof(git_guards[0]);
	return git_guards;
}

const struct policy_git_guard *policy_git_guard_of(const char *name)
{
	for (size_t i = 0; i < sizeof(git_guards) / sizeof(git_guards[0]); i++)
		if (policy_name_eq(name, git_guards[i].name))
			return &git_guards[i];
	return NULL;
}

/* `rel` starts with a guard name as a whole component (hooks/... for hooks). */
static bool guard_head(const char *rel)
{
	size_t k = strcspn(rel, "/");

	for (size_t i = 0; i < sizeof(git_guards) / sizeof(git_guards[0]); i++)
		if (strlen(git_guards[i].name) == k &&
		    policy_name_eqn(rel, git_guards[i].name, k) &&
		    (git_guards[i].subtree || rel[k] == '\0'))
			return true;
	return false;
}

bool policy_git_guard_rel(const char *rel)
{
	static const char *const nested[] = {"modules/", "worktrees/"};

	while (*rel == '/')
		rel++;
	if (guard_head(rel))
		return true;
	for (size_t i = 0; i < 2; i++) {
		size_t k = strlen(nested[i]);
		if (!policy_name_eqn(rel, nested[i], k))
			continue;
		/* modules/NAME/...: NAME may hold slashes, so every later component may
		 * start the guarded part. */
		for (const char *q = rel + k; (q = strchr(q, '/')); q++)
			if (guard_head(q + 1))
				return true;
	}
	return false;
}

const char *policy_git_guard_in_dotgit(const char *path)
{
	for (const char *s = path; (s = strchr(s, '/'));) {
		s++;
		size_t k = strcspn(s, "/");
		if (policy_git_dot_name(s, k) && s[k] == '/' && policy_git_guard_rel(s + k + 1))
			return s;
	}
	return NULL;
}

/* ---------------------------------------------------------------- config references */

static size_t line_end(const char *b, size_t i, size_t n)
{
	while (i < n && b[i] != '\n')
		i++;
	return i;
}

/* A value from b[i] (after '='): git's parse_value. Returns where it stopped. */
static size_t config_value(const char *b, size_t i, size_t n, char *out, size_t cap)
{
	size_t o = 0, keep = 0;
	bool q = false;

	while (i < n && (b[i] == ' ' || b[i] == '\t'))
		i++;
	for (; i < n && b[i] != '\n'; i++) {
		char ch = b[i];
		if (ch == '\\' && i + 1 < n) {
			ch = b[++i];
			if (ch == '\n')
				continue; /* a continued line */
			ch = ch == 'n' ? '\n' : ch == 't' ? '\t' : ch == 'b' ? '\b' : ch;
		} else if (ch == '"') {
			q = !q;
			keep = o;
			continue;
		} else if (!q && (ch == '#' || ch == ';')) {
			i = line_end(b, i, n);
			break;
		}
		if (o + 1 < cap)
			out[o++] = ch;
		if (q || (ch != ' ' && ch != '\t'))
			keep = o;
	}
	out[keep] = '\0';
	return i;
}

/* Keys whose value is a command git runs by itself or at an ordinary command (review
 * 24, 25: a global core.fsmonitor naming a workspace script ran at the host's next git
 * status; nbstripout's filter, pager.log, remote.origin.uploadpack, a '!' alias at
 * add, log, fetch, st): section (its name alone: [filter "lfs"] is filter) and key,
 * lower case; "*" any key of the section. */
static bool git_program_key(const char *sec, const char *key)
{
	static const char *const keys[][2] = {
	    {"core", "fsmonitor"},
	    {"core", "sshcommand"},
	    {"core", "editor"},
	    {"core", "pager"},
	    {"core", "askpass"},
	    {"core", "gitproxy"},
	    {"core", "alternaterefscommand"},
	    {"credential", "helper"},
	    {"gpg", "program"},
	    {"gpg", "defaultkeycommand"},
	    {"sequence", "editor"},
	    {"diff", "external"},
	    {"diff", "command"},
	    {"diff", "textconv"},
	    {"merge", "driver"},
	    {"filter", "clean"},
	    {"filter", "smudge"},
	    {"filter", "process"},
	    {"interactive", "difffilter"},
	    {"pager", "*"},
	    {"alias", "*"},
	    {"remote", "uploadpack"},
	    {"remote", "receivepack"},
	    {"uploadpack", "packobjectshook"},
	    {"difftool", "cmd"},
	    {"mergetool", "cmd"},
	    {"trailer", "command"},
	    {"trailer", "cmd"},
	    {"sendemail", "sendmailcmd"},
	    {"web", "browser"},
	    {"browser", "cmd"},
	    {"man", "cmd"},
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(sec, keys[i][0]) &&
		    (!strcmp(keys[i][1], "*") || !strcmp(key, keys[i][1])))
			return true;
	return false;
}

/* Each word of a command value that names a file (the shell runs it: every word
 * counts, past quotes, a leading '!', NAME=value prefixes and `sh -c '...'`): the
 * program itself as POLICY_GITREF_PROGRAM, any later word (an interpreter's script,
 * `sh -c`'s command, or a mere argument) as POLICY_GITREF_PROGRAM_ARG:
 * absolute, "~...", "$HOME/..." or "${HOME}/..." (as "~/..."), or relative with a '/'
 * in it (the caller resolves it against the work tree: git runs these there). A bare
 * name is looked up on PATH, which the home set covers. */
static void program_words(const char *v, policy_gitref_fn cb, void *ctx)
{
	char w[POLICY_PATH_MAX];
	bool first = true; /* the program itself: the first word that is no NAME=value */

	for (size_t i = 0; v[i];) {
		size_t o = 0;
		while (v[i] && strchr(" \t'\"!;&|()`", v[i]))
			i++;
		while (v[i] && !strchr(" \t'\";&|()`", v[i]))
			if (o + 1 < sizeof(w))
				w[o++] = v[i++];
			else
				i++;
		w[o] = '\0';
		const char *eq = strchr(w, '='), *sl = strchr(w, '/');
		const bool assign = eq && (!sl || eq < sl); /* NAME=value */
		const char *p = assign ? eq + 1 : w;
		char tilde[POLICY_PATH_MAX];
		if (!strncmp(p, "$HOME/", 6) || !strncmp(p, "${HOME}/", 8)) {
			snprintf(tilde, sizeof(tilde), "~/%s", p + (p[1] == '{' ? 8 : 6));
			p = tilde;
		}
		int kind = first && !assign ? POLICY_GITREF_PROGRAM : POLICY_GITREF_PROGRAM_ARG;
		if (p[0] && (p[0] == '/' || p[0] == '~' || strchr(p, '/')))
			cb(ctx, kind, p);
		if (w[0] && !assign)
			first = false;
	}
}

void policy_git_config_refs(const char *b, size_t n, policy_gitref_fn cb, void *ctx)
{
	char sec[32] = "", key[32], val[POLICY_PATH_MAX];

	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)b[i];
		if (isspace(c)) {
			i++;
		} else if (c == '[') {
			size_t k = 0;
			for (i++; i < n && !strchr(" \t\"].\n", b[i]); i++)
				if (k + 1 < sizeof(sec))
					sec[k++] = (char)tolower((unsigned char)b[i]);
			sec[k] = '\0';
			while (i < n && b[i] != ']' && b[i] != '\n')
				i++;
			i += i < n && b[i] == ']'; /* a key may follow on this line */
		} else if (isalpha(c)) {
			size_t k = 0;
			for (; i < n && (isalnum((unsigned char)b[i]) || b[i] == '-'); i++)
				if (k + 1 < sizeof(key))
					key[k++] = (char)tolower((unsigned char)b[i]);
			key[k] = '\0';
			while (i < n && (b[i] == ' ' || b[i] == '\t'))
				i++;
			if (i >= n || b[i] != '=')
				continue; /* a boolean key: no name in it */
			i = config_value(b, i + 1, n, val, sizeof(val));
			int kind = !strcmp(sec, "core") && !strcmp(key, "hookspath")
				       ? POLICY_GITREF_HOOKS
				   : !strcmp(sec, "core") && !strcmp(key, "worktree")
				       ? POLICY_GITREF_WORKTREE
				   : (!strcmp(sec, "include") || !strcmp(sec, "includeif")) &&
					   !strcmp(key, "path")
				       ? POLICY_GITREF_INCLUDE
				   : !strcmp(sec, "init") && !strcmp(key, "templatedir")
				       ? POLICY_GITREF_TEMPLATE
				   : git_program_key(sec, key) ? POLICY_GITREF_PROGRAM
							       : 0;
			if (kind == POLICY_GITREF_PROGRAM)
				program_words(val, cb, ctx);
			else if (kind && val[0])
				cb(ctx, kind, val);
		} else {
			i = line_end(b, i, n); /* a comment, or what git would refuse */
		}
	}
}

bool policy_path_tilde(const char *v, char *user, size_t n, const char **rest)
{
	size_t ul;

	if (v[0] != '~')
		return false;
	ul = strcspn(v + 1, "/");
	if (ul >= n)
		return false;
	memcpy(user, v + 1, ul);
	user[ul] = '\0';
	*rest = v[1 + ul] ? v + 2 + ul : "";
	return true;
}
