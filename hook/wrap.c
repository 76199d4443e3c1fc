/* Wrappers: programs that run another program. One row each says which of its options
 * take a value (so the value is not mistaken for the command) and what else stands
 * before the command (assignments, a duration). Tables, not guesses: an option missing
 * here is read as a flag, so the word after it is judged as the command, which errs
 * towards looking at more, never less. */
#include <string.h>

#include "hook/hook_int.h"

enum {
	W_ASSIGNS = 1,	 /* NAME=VALUE words may come before the command */
	W_XARGS = 2,	 /* more arguments come from stdin unless -I/-i/--replace */
	W_SPLIT_S = 4,	 /* env -S TEXT / --split-string=TEXT: TEXT is a command line */
	W_PROXY = 8,	 /* routes every connection through a configured proxy */
	W_JOIN = 16,	 /* the rest is joined into one shell command (watch) */
	W_DASH_C = 32,	 /* -c TEXT is a shell command (su, runuser) */
	W_DIGITS = 64,	 /* -NUMBER is a flag (nice -10) */
	W_OPTIONAL = 128 /* the short options in `opt_attached` take a value only attached */
};

struct wrapper {
	const char *name;
	const char *vals;	      /* short options taking a value */
	const char *const *long_vals; /* long options taking a value */
	unsigned positionals;	      /* words between the options and the command */
	unsigned flags;
};

static const char *const sudo_long[] = {
    "--user", "--group", "--close-from", "--chdir",	      "--host", "--prompt",
    "--role", "--type",	 "--other-user", "--command-timeout", NULL};
static const char *const env_long[] = {"--unset", "--chdir", "--split-string", NULL};
static const char *const timeout_long[] = {"--kill-after", "--signal", NULL};
static const char *const nice_long[] = {"--adjustment", NULL};
static const char *const time_long[] = {"--format", "--output", NULL};
static const char *const stdbuf_long[] = {"--input", "--output", "--error", NULL};
static const char *const xargs_long[] = {"--max-args",	"--max-procs", "--max-chars",
					 "--delimiter", "--arg-file",  "--process-slot-var",
					 NULL};
static const char *const watch_long[] = {"--interval", NULL};
static const char *const su_long[] = {"--command", "--group", "--supp-group", "--shell", NULL};
static const char *const none[] = {NULL};

static const struct wrapper wrappers[] = {
    {"sudo", "CDghpRrTtUu", sudo_long, 0, W_ASSIGNS},
    {"doas", "uC", none, 0, 0},
    {"env", "uCS", env_long, 0, W_ASSIGNS | W_SPLIT_S},
    {"timeout", "ks", timeout_long, 1, 0},
    {"nice", "n", nice_long, 0, W_DIGITS},
    {"ionice", "cnpPu", none, 0, 0},
    {"nohup", "", none, 0, 0},
    {"setsid", "", none, 0, 0},
    {"command", "", none, 0, 0},
    {"builtin", "", none, 0, 0},
    {"exec", "a", none, 0, 0},
    {"xargs", "EILnPsda", xargs_long, 0, W_XARGS},
    {"time", "fo", time_long, 0, 0},
    {"stdbuf", "ioe", stdbuf_long, 0, 0},
    {"sshpass", "pfdP", none, 0, 0},
    {"unbuffer", "", none, 0, 0},
    {"chronic", "", none, 0, 0},
    {"nocache", "", none, 0, 0},
    {"caffeinate", "tw", none, 0, 0},
    {"busybox", "", none, 0, 0},
    {"chrt", "T", none, 1, 0},
    {"proxychains", "f", none, 0, W_PROXY},
    {"proxychains4", "f", none, 0, W_PROXY},
    {"torsocks", "uPa", none, 0, W_PROXY},
    {"torify", "", none, 0, W_PROXY},
    {"tsocks", "", none, 0, W_PROXY},
    {"watch", "n", watch_long, 0, W_JOIN},
    {"su", "gGs", su_long, 0, W_DASH_C},
    {"runuser", "gGsu", su_long, 0, W_DASH_C},
};

static const struct wrapper *find(const char *name)
{
	for (size_t k = 0; k < sizeof(wrappers) / sizeof(wrappers[0]); k++)
		if (strcmp(wrappers[k].name, name) == 0)
			return &wrappers[k];
	return NULL;
}

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

/* One long option; returns how many extra words it used. */
static size_t long_opt(struct hook_judge *j, const struct wrapper *r, const struct hook_word *argv,
		       size_t i, size_t argc, bool *replace)
{
	const char *a = argv[i].text, *eq = strchr(a, '=');
	size_t n = eq ? (size_t)(eq - a) : strlen(a);

	if (strncmp(a, "--replace", 9) == 0)
		*replace = true;
	if ((r->flags & W_SPLIT_S) && n == 14 && strncmp(a, "--split-string", 14) == 0) {
		if (eq)
			value_text(j, r->name, &argv[i], n + 1);
		else if (i + 1 < argc)
			value_text(j, r->name, &argv[i + 1], 0);
		return eq ? 0 : 1;
	}
	if ((r->flags & W_DASH_C) && n == 9 && strncmp(a, "--command", 9) == 0) {
		if (eq)
			value_text(j, r->name, &argv[i], n + 1);
		else if (i + 1 < argc)
			value_text(j, r->name, &argv[i + 1], 0);
		return eq ? 0 : 1;
	}
	return !eq && in(r->long_vals, a, n) ? 1 : 0;
}

/* A bundle of short options (-sSLo FILE); returns how many extra words it used. */
static size_t short_opts(struct hook_judge *j, const struct wrapper *r,
			 const struct hook_word *argv, size_t i, size_t argc, bool *replace)
{
	const char *a = argv[i].text;

	if ((r->flags & W_DIGITS) && a[1] >= '0' && a[1] <= '9')
		return 0;
	for (size_t k = 1; a[k]; k++) {
		char ch = a[k];
		if (r->flags & W_XARGS && (ch == 'I' || ch == 'i'))
			*replace = true;
		if (!strchr(r->vals, ch) && !((r->flags & W_DASH_C) && ch == 'c'))
			continue;
		bool attached = a[k + 1] != 0;
		if ((r->flags & W_SPLIT_S && ch == 'S') || (r->flags & W_DASH_C && ch == 'c')) {
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

bool hook_wrapper_skip(struct hook_judge *j, const struct hook_word *argv, size_t argc,
		       size_t *skip, bool *xargs)
{
	const char *b = strrchr(argv[0].text, '/');
	const struct wrapper *r = find(b ? b + 1 : argv[0].text);
	bool replace = false;
	size_t i = 1;

	if (!r)
		return false;
	if (r->flags & W_PROXY) {
		hook_block(j, HOOK_BLOCK,
			   "%s: every connection goes through the proxy in its configuration "
			   "file, which the hook cannot see",
			   r->name);
		*skip = argc;
		return true;
	}
	for (; i < argc && argv[i].lit >= 2; i++) { /* an option's letters must be literal */
		const char *a = argv[i].text;
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == 0)
			break;
		i += a[1] == '-' ? long_opt(j, r, argv, i, argc, &replace)
				 : short_opts(j, r, argv, i, argc, &replace);
	}
	while ((r->flags & W_ASSIGNS) && i < argc && is_assign(&argv[i]))
		hook_net_assign(j, &argv[i++]);
	i += r->positionals;
	*skip = i < argc ? i : argc;
	*xargs = (r->flags & W_XARGS) && !replace;
	if ((r->flags & W_JOIN) && *skip < argc) {
		/* watch 'curl x' and watch curl x: the rest is one shell command. */
		size_t len = 1;
		bool lit = true;
		for (size_t k = *skip; k < argc; k++)
			len += strlen(argv[k].text) + 1, lit &= hook_word_literal(&argv[k]);
		char buf[4096];
		if (len <= sizeof(buf)) {
			buf[0] = 0;
			for (size_t k = *skip; k < argc; k++)
				strcat(strcat(buf, argv[k].text), k + 1 < argc ? " " : "");
			struct hook_word w = {buf, lit ? strlen(buf) : 0};
			hook_judge_text(j, r->name, &w);
		} else {
			hook_block(j, HOOK_CANNOT, "%s: the command is too long to read", r->name);
		}
		*skip = argc;
	}
	if (r->flags & W_DASH_C)
		*skip = argc; /* su [-c TEXT] [USER]: the command, if any, was TEXT */
	return true;
}
