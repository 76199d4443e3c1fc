/* Editors that run shell commands from their own command language: vim's
 * `-c CMD`, `--cmd CMD`, `+CMD` and an ex script on stdin. `!TEXT` (alone or after
 * read/write) runs TEXT through a shell and is judged like the command itself;
 * system() and jobs take values the hook cannot read, so code using them in the
 * command line cannot be judged. */
#include <stdlib.h>
#include <string.h>

#include "hook/hook_int.h"

static const char *const vims[] = {"vim",  "vi",   "nvim",    "view", "ex",
				   "gvim", "evim", "vimdiff", "nvi",  NULL};

static bool skip_word(const char *t, size_t *k, const char *w)
{
	size_t n = strlen(w);

	if (strncmp(t + *k, w, n) || (t[*k + n] && !strchr(" \t!", t[*k + n])))
		return false;
	*k += n;
	return true;
}

/* One ex command, [off, bar): [:][silent[!]] [r|read|w|write] !TEXT, where TEXT runs
 * to the end of the line (a | is the shell's there). Returns true when it was one. */
static bool ex_cmd(struct hook_judge *j, const struct hook_word *w, size_t off, size_t bar,
		   size_t end)
{
	const char *t = w->text;
	size_t k = off + strspn(t + off, ": \t");
	char *one;

	if (skip_word(t, &k, "silent") && t[k] == '!')
		k++;
	k += strspn(t + k, " \t");
	if (skip_word(t, &k, "read") || skip_word(t, &k, "write") || skip_word(t, &k, "r") ||
	    skip_word(t, &k, "w"))
		k += strspn(t + k, " \t");
	if (k >= bar || t[k] != '!')
		return false;
	if (!(one = strndup(t + k + 1, end - k - 1)))
		return hook_block(j, HOOK_CANNOT, "out of memory");
	struct hook_word v = {one, w->lit > k + 1 ? (w->lit < end ? w->lit : end) - k - 1 : 0};
	hook_judge_text(j, "vim", &v);
	free(one);
	return true;
}

/* Each line of an ex script (ex -s <<EOF), each command of a line (a | b). */
static void ex_lines(struct hook_judge *j, const struct hook_word *w)
{
	static const char *const calls[] = {"system(",	  "systemlist(", "job_start", "jobstart",
					    "term_start", "termopen",	 "chansend",  NULL};

	for (size_t k = 0; calls[k]; k++)
		if (strstr(w->text, calls[k]))
			return (void)hook_block(j, HOOK_CANNOT,
						"vim: '%.120s' runs a command through %s, which "
						"cannot be judged",
						w->text, calls[k]);
	for (size_t k = 0; w->text[k] && !hook_decided(j);) {
		size_t le = k + strcspn(w->text + k, "\n");
		for (size_t p = k; p < le && !hook_decided(j);) {
			size_t bar = p + strcspn(w->text + p, "|\n");
			if (ex_cmd(j, w, p, bar, le))
				break;
			p = bar + 1;
		}
		k = w->text[le] ? le + 1 : le;
	}
}

/* Database shells whose own commands run a shell command: the rest of the line. */
static const struct {
	const char *name;
	const char *const pre[3];
} dbsh[] = {
    {"sqlite3", {".shell ", ".system ", NULL}},
    {"psql", {"\\! ", "\\!", NULL}},
    {"mysql", {"system ", "\\! ", NULL}},
    {"mariadb", {"system ", "\\! ", NULL}},
};

/* Each line of TEXT that starts with one of PRE: its rest judged as shell. */
static void db_lines(struct hook_judge *j, const char *const *pre, const struct hook_word *w)
{
	for (size_t k = 0; w->text[k] && !hook_decided(j);) {
		size_t le = k + strcspn(w->text + k, "\n"), b = k + strspn(w->text + k, " \t");
		for (size_t p = 0; pre[p]; p++) {
			size_t n = strlen(pre[p]);
			if (b + n > le || strncmp(w->text + b, pre[p], n))
				continue;
			char *one = strndup(w->text + b + n, le - b - n);
			if (!one)
				return (void)hook_block(j, HOOK_CANNOT, "out of memory");
			struct hook_word v = {one, w->lit >= le	    ? le - b - n
						   : w->lit > b + n ? w->lit - b - n
								    : 0};
			hook_judge_text(j, "database shell", &v);
			free(one);
			break;
		}
		k = w->text[le] ? le + 1 : le;
	}
}

static bool db_check(struct hook_judge *j, const struct hook_script *s, const struct hook_cmd *cmd,
		     const char *base, const struct hook_word *argv, size_t argc)
{
	for (size_t d = 0; d < sizeof(dbsh) / sizeof(dbsh[0]); d++) {
		if (strcmp(dbsh[d].name, base))
			continue;
		for (size_t i = 1; i < argc && !hook_decided(j); i++)
			db_lines(j, dbsh[d].pre, &argv[i]);
		struct hook_word w;
		bool owned = false;
		if (!hook_decided(j) && hook_stdin_text(j, s, cmd, base, &w, &owned) == 1)
			db_lines(j, dbsh[d].pre, &w);
		if (owned)
			free(w.text);
		return true;
	}
	return false;
}

bool hook_editor_check(struct hook_judge *j, const struct hook_script *s,
		       const struct hook_cmd *cmd, const char *base, const struct hook_word *argv,
		       size_t argc)
{
	bool ex_mode = !strcmp(base, "ex");

	for (size_t k = 0; vims[k]; k++)
		if (!strcmp(vims[k], base))
			goto found;
	return db_check(j, s, cmd, base, argv, argc);
found:
	for (size_t i = 1; i < argc && !hook_decided(j); i++) {
		const char *a = argv[i].text;
		if (!strcmp(a, "--"))
			break;
		if ((!strcmp(a, "-c") || !strcmp(a, "--cmd") || !strcmp(a, "-S")) && i + 1 < argc) {
			if (a[1] != 'S')
				ex_lines(j, &argv[i + 1]);
			i++;
		} else if (a[0] == '+' && a[1]) {
			struct hook_word v = {argv[i].text + 1, argv[i].lit ? argv[i].lit - 1 : 0};
			ex_lines(j, &v);
		} else if (a[0] == '-' && a[1] != '-' && strchr(a, 'e')) {
			ex_mode = true; /* vim -e, -es: commands from stdin */
		}
	}
	if (ex_mode && !hook_decided(j)) {
		struct hook_word w;
		bool owned;
		if (hook_stdin_text(j, s, cmd, base, &w, &owned) == 1)
			ex_lines(j, &w); /* a !TEXT not literal is refused by the judge */
		if (owned)
			free(w.text);
	}
	return true;
}
