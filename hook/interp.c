/* Interpreters: the code python, perl, ruby, node, php, lua and awk run when it is
 * written in the command (-c/-e, a here-document, a here-string, echo piped in).
 *
 * The hook cannot run the code; it judges what it can see, by one rule:
 *  - every URL written in the code, and, in code that uses network facilities, every
 *    string that is a host name, goes through Decide();
 *  - every command the code runs (system(), exec, popen, subprocess, child_process,
 *    backticks, qx, awk's system() and pipes) must be string literals, and is judged
 *    as a shell command like any other;
 *  - code that uses network or exec facilities and builds something at run time
 *    (a decoder, eval of a string, the environment, argv, stdin, a URL whose host is
 *    not written, a command that is not a literal) cannot be judged: blocked;
 *  - anything else (print(1), json, text processing) passes: the sandbox decides.
 * Strings are read per language (quotes, triple quotes, interpolation marks the rest
 * of a string as not literal, escapes too). */
#include <stdlib.h>
#include <string.h>

#include "hook/hook_int.h"

struct lang {
	const char *prefix;	    /* python matches python3 and python3.12 */
	const char *code;	    /* short options whose value is code */
	const char *vals;	    /* short options taking a value (attached or next) */
	const char *rest;	    /* short options whose value is the rest of the word */
	const char *digits;	    /* short options whose value is the digits after them */
	const char *const longs[4]; /* long options (or words) whose value is code */
	const char *const lvals[4]; /* long options taking a value */
	unsigned flags;
};

static const struct lang langs[] = {
    {"python", "c", "WXQ", "", "", {NULL}, {NULL}, HOOK_L_PY},
    {"pypy", "c", "WXQ", "", "", {NULL}, {NULL}, HOOK_L_PY},
    {"perl", "eE", "", "MmIxiDdCFV", "0l", {NULL}, {NULL}, HOOK_L_DOLLAR | HOOK_L_TICK_CMD},
    {"ruby", "e", "rICEF", "Kx", "TW0", {NULL}, {NULL}, HOOK_L_HASH | HOOK_L_TICK_CMD},
    {"node",
     "ep",
     "rC",
     "",
     "",
     {"--eval", "--print", NULL},
     {"--require", "--import", "--loader", NULL},
     HOOK_L_TEMPLATE},
    {"nodejs",
     "ep",
     "rC",
     "",
     "",
     {"--eval", "--print", NULL},
     {"--require", "--import", NULL},
     HOOK_L_TEMPLATE},
    {"deno", "", "", "", "", {"eval", NULL}, {NULL}, HOOK_L_TEMPLATE},
    {"bun", "e", "r", "", "", {"--eval", "--print", NULL}, {NULL}, HOOK_L_TEMPLATE},
    {"php", "rBRE", "dcz", "", "", {NULL}, {NULL}, HOOK_L_DOLLAR | HOOK_L_TICK_CMD},
    {"lua", "e", "l", "", "", {NULL}, {NULL}, 0},
    {"Rscript", "e", "", "", "", {"--expr", NULL}, {"--default-packages", NULL}, 0},
    {"R", "e", "dgr", "", "", {NULL}, {"--file", "--args", NULL}, 0},
    {"julia",
     "eE",
     "pLJCOtgM",
     "",
     "",
     {"--eval", "--print", NULL},
     {"--load", "--sysimage", "--project", NULL},
     HOOK_L_DOLLAR | HOOK_L_TICK_CMD},
    {"awk",
     "e",
     "FvfilEW",
     "",
     "",
     {"--source", NULL},
     {"--file", "--include", "--load", NULL},
     HOOK_L_AWK},
    {"gawk",
     "e",
     "FvfilEW",
     "",
     "",
     {"--source", NULL},
     {"--file", "--include", "--load", NULL},
     HOOK_L_AWK},
    {"mawk", "", "FvfW", "", "", {NULL}, {NULL}, HOOK_L_AWK},
    {"nawk", "", "Fvf", "", "", {NULL}, {NULL}, HOOK_L_AWK},
};

static const struct lang *find_lang(const char *base)
{
	for (size_t k = 0; k < sizeof(langs) / sizeof(langs[0]); k++) {
		size_t pl = strlen(langs[k].prefix);
		if (!strncmp(base, langs[k].prefix, pl) &&
		    (!base[pl] || strchr("0123456789.", base[pl])))
			return &langs[k];
	}
	return NULL;
}

static bool in(const char *const *l, const char *s, size_t n)
{
	for (; *l; l++)
		if (strlen(*l) == n && !strncmp(*l, s, n))
			return true;
	return false;
}

/* awk -f - and -f /dev/stdin: the program is what stdin holds. */
static bool stdin_name(const char *v)
{
	return !strcmp(v, "-") || !strcmp(v, "/dev/stdin") || !strcmp(v, "/dev/fd/0");
}

bool hook_interp_check(struct hook_judge *j, const struct hook_script *s,
		       const struct hook_cmd *cmd, const char *base, const struct hook_word *argv,
		       size_t argc)
{
	const struct lang *l = find_lang(base);
	bool code = false, file = false, prog_file = false, awk_stdin = false;
	size_t i = 1;

	if (!l)
		return false;
	for (; i < argc && !hook_decided(j); i++) {
		const char *a = argv[i].text;
		size_t n = strcspn(a, "=");
		bool awk_prog = (l->flags & HOOK_L_AWK) && !code && !prog_file;
		if ((!hook_word_literal(&argv[i]) && !awk_prog) || !strcmp(a, "--")) {
			file = true; /* a script named by an expansion, or after -- */
			break;
		}
		if (!strcmp(a, "-"))
			break; /* the code is on stdin */
		if (in(l->longs, a, n)) {
			if (a[n] == '=') {
				struct hook_word v = {argv[i].text + n + 1, argv[i].lit - n - 1};
				hook_interp_code(j, l->flags, base, &v);
			} else if (i + 1 < argc) {
				hook_interp_code(j, l->flags, base, &argv[++i]);
			}
			code = true;
			continue;
		}
		if (a[0] != '-' || !a[1]) {
			file = !(l->flags & HOOK_L_AWK) || prog_file;
			if ((l->flags & HOOK_L_AWK) && !code && !prog_file) {
				hook_interp_code(j, l->flags, base, &argv[i]); /* awk 'PROGRAM' */
				code = true;
			}
			break;
		}
		if (a[1] == '-') {
			prog_file |= (l->flags & HOOK_L_AWK) && !strncmp(a, "--file", 6);
			if ((l->flags & HOOK_L_AWK) && !strncmp(a, "--file", 6))
				awk_stdin |= stdin_name(a[n]	       ? a + n + 1
							: i + 1 < argc ? argv[i + 1].text
								       : "");
			i += !a[n] && in(l->lvals, a, n);
			continue;
		}
		for (size_t k = 1; a[k]; k++) {
			char ch = a[k];
			bool att = a[k + 1] != 0;
			if (strchr(l->digits, ch)) { /* perl -l0 -0777: then more options */
				if (a[k + 1] == ':')
					break;			  /* ruby -W:no-deprecated */
				if (ch == '0' && a[k + 1] == 'x') /* -0xHHH */
					k += 1 + strspn(a + k + 2, "0123456789abcdefABCDEF");
				else
					k += strspn(a + k + 1, "01234567");
				continue;
			}
			/* node -pe CODE: -p prints what -e evaluates; the code is the next word */
			if (strchr(l->code, ch) && att &&
			    strspn(a + k + 1, l->code) == strlen(a + k + 1))
				continue;
			if (strchr(l->code, ch)) {
				struct hook_word v = {argv[i].text + k + 1, argv[i].lit - k - 1};
				if (att)
					hook_interp_code(j, l->flags, base, &v);
				else if (i + 1 < argc)
					hook_interp_code(j, l->flags, base, &argv[++i]);
				code = true;
				break;
			}
			if ((l->flags & HOOK_L_PY) && ch == 'm') {
				/* python -m pip install URL: the module's own command line */
				if (!att && i + 1 < argc)
					hook_judge_argv(j, s, cmd, argv + i + 1, argc - i - 1,
							false);
				return true;
			}
			if (strchr(l->rest, ch))
				break;
			if (strchr(l->vals, ch)) {
				prog_file |= (l->flags & HOOK_L_AWK) && (ch == 'f' || ch == 'E');
				if ((l->flags & HOOK_L_AWK) && (ch == 'f' || ch == 'E'))
					awk_stdin |= stdin_name(att	       ? a + k + 1
								: i + 1 < argc ? argv[i + 1].text
									       : "");
				i += !att;
				break;
			}
		}
	}
	if (((!code && !file && !(l->flags & HOOK_L_AWK)) || awk_stdin) && !hook_decided(j)) {
		struct hook_word w;
		bool owned;
		if (hook_stdin_text(j, s, cmd, base, &w, &owned) == 1)
			hook_interp_code(j, l->flags, base,
					 &w); /* python3 - <<EOF, echo CODE | node */
		if (owned)
			free(w.text);
	}
	return true;
}
