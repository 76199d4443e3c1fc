/* Programs whose options or input hold commands they run: sed's `e` command and `s///e`
 * flag, tar's --checkpoint-action=exec, make reading a makefile from
 * standard input or --eval, crontab reading jobs from standard input, screen's
 * commands and the text `stuff` types, expect's spawn and exec. Each command is judged
 * as the shell command it becomes (PowerShell's -Command code also by the interpreter
 * rule, and its network cmdlets' hosts); a command built at run time cannot be. A script
 * that is a file (sed -f F, make -f F, crontab F) is not in the command: the sandbox
 * is the boundary there, as for sh FILE. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hook/hook_int.h"

/* Judge text[0..n) as a shell command, literal as the word it came from was. */
static void judge_piece(struct hook_judge *j, const char *what, const char *text, size_t n,
			bool lit)
{
	struct hook_word w = {strndup(text, n), 0};

	if (!w.text)
		return (void)hook_block(j, HOOK_CANNOT, "out of memory");
	w.lit = lit ? n : 0;
	hook_judge_text(j, what, &w);
	free(w.text);
}

/* ---------------------------------------------------------------- sed */

/* Past an address (/re/, \cREc, a number, $, first~step) at t[i]. */
static size_t sed_addr(const char *t, size_t i)
{
	if (t[i] == '/' || t[i] == '\\') {
		char d = t[i] == '\\' ? t[i + 1] : '/';
		i += t[i] == '\\' ? 2 : 1;
		for (; t[i] && t[i] != d; i++)
			i += t[i] == '\\' && t[i + 1];
		i += t[i] == d;
		while (t[i] == 'I' || t[i] == 'M')
			i++;
		return i;
	}
	while (t[i] && strchr("0123456789$~+", t[i]))
		i++;
	return i;
}

/* Past the two parts of s/RE/REPL/ or y/A/B/ starting at the delimiter t[i]. */
static size_t sed_parts(const char *t, size_t i)
{
	char d = t[i];

	if (!d)
		return i;
	i++;
	for (int part = 0; part < 2 && t[i]; part++) {
		for (; t[i] && t[i] != d; i++)
			i += t[i] == '\\' && t[i + 1];
		i += t[i] == d;
	}
	return i;
}

static void sed_script(struct hook_judge *j, const struct hook_word *w)
{
	const char *t = w->text;
	size_t i = 0;

	while (t[i] && !hook_decided(j)) {
		i += strspn(t + i, " \t\n;{}!");
		i = sed_addr(t, i);
		if (t[i] == ',')
			i = sed_addr(t, i + 1);
		i += strspn(t + i, " \t!");
		char c = t[i];
		if (!c)
			break;
		i++;
		if (c == 's') {
			i = sed_parts(t, i);
			size_t f = i + strspn(t + i, "gpiImMe0123456789");
			if (memchr(t + i, 'e', f - i))
				hook_block(j, HOOK_CANNOT,
					   "sed: the s///e flag runs each line of the input as a "
					   "command, so what it runs cannot be judged");
			i = f;
			if (t[i] == 'w' || t[i] == 'W')
				i += strcspn(t + i, "\n");
		} else if (c == 'y') {
			i = sed_parts(t, i);
		} else if (c == 'e') {
			size_t s = i + strspn(t + i, " \t"), e = s + strcspn(t + s, "\n;");
			if (e == s)
				hook_block(
				    j, HOOK_CANNOT,
				    "sed: the e command runs the line it reads as a command, "
				    "so what it runs cannot be judged");
			else
				judge_piece(j, "sed e", t + s, e - s, true);
			i = e;
		} else if (strchr("aicrRwWbtTv:#", c)) {
			i += strcspn(t + i, "\n"); /* text, a file name or a label */
		}
	}
}

/* One sed script: read for e commands when written in the command, else blocked (the
 * shell builds it, and could build an e command). */
static void sed_judge(struct hook_judge *j, const struct hook_word *w)
{
	if (!hook_word_literal(w))
		hook_block(j, HOOK_CANNOT,
			   "sed: the script '%.120s' is built by the shell at run time and could "
			   "hold an e command; use sed --sandbox",
			   w->text);
	else
		sed_script(j, w);
}

/* sed [-n -E -i ...] (-e SCRIPT | --expression=SCRIPT)... or SCRIPT; -f FILE is a file.
 * GNU sed --sandbox refuses e, r and w itself: nothing to judge then. */
static void check_sed(struct hook_judge *j, const struct hook_word *argv, size_t argc)
{
	bool script = false;
	const struct hook_word *first = NULL;

	for (size_t i = 1; i < argc; i++)
		if (!strcmp(argv[i].text, "--sandbox"))
			return;
	for (size_t i = 1; i < argc && !hook_decided(j); i++) {
		const char *a = argv[i].text;
		const struct hook_word *s = NULL;
		struct hook_word v;
		if (!strcmp(a, "--")) {
			if (!script && i + 1 < argc)
				first = &argv[i + 1];
			break;
		}
		if (!strcmp(a, "-e") || !strcmp(a, "--expression")) {
			s = i + 1 < argc ? &argv[++i] : NULL;
		} else if (!strncmp(a, "--expression=", 13)) {
			v = (struct hook_word){argv[i].text + 13,
					       argv[i].lit > 13 ? argv[i].lit - 13 : 0};
			s = &v;
		} else if (a[0] == '-' && a[1] != '-' && strchr(a, 'e') && !strchr(a, 'i')) {
			/* -ne SCRIPT, -neSCRIPT */
			size_t k = (size_t)(strchr(a, 'e') - a);
			v = (struct hook_word){argv[i].text + k + 1,
					       argv[i].lit > k + 1 ? argv[i].lit - k - 1 : 0};
			s = a[k + 1] ? &v : i + 1 < argc ? &argv[++i] : NULL;
		} else if (!strcmp(a, "-f") || !strcmp(a, "--file") || !strcmp(a, "-l")) {
			script |= a[1] == 'f' || a[2] == 'f';
			i++;
			continue;
		} else if (!strncmp(a, "--file=", 7) || (a[0] == '-' && a[1] == 'f')) {
			script = true;
			continue;
		} else if (a[0] == '-' && a[1]) {
			continue;
		} else if (!script && !first) {
			first = &argv[i];
			continue;
		}
		if (!s)
			continue;
		script = true;
		first = NULL;
		sed_judge(j, s);
	}
	if (first && !script && !hook_decided(j))
		sed_judge(j, first);
}

/* ---------------------------------------------------------------- tar */

/* tar --checkpoint-action=exec=CMD (the value is ACTION=ARG, so net.c's table of
 * options whose value is a command, which judges the rest of tar, cannot hold it). */
static void check_tar(struct hook_judge *j, const struct hook_word *argv, size_t argc)
{
	for (size_t i = 1; i < argc && !hook_decided(j); i++) {
		const struct hook_word *w = &argv[i];
		size_t off = 20;
		if (!strcmp(w->text, "--checkpoint-action") && i + 1 < argc)
			w = &argv[++i], off = 0;
		else if (strncmp(w->text, "--checkpoint-action=", 20))
			continue;
		if (strncmp(w->text + off, "exec=", 5))
			continue; /* dot, echo, ttyout, wait: no command */
		const char *v = w->text + off + 5;
		judge_piece(j, "tar", v, strlen(v), hook_word_literal(w));
	}
}

/* ---------------------------------------------------------------- make */

/* A makefile's recipes: lines after a tab, and the part after `;` on a rule line. */
static void make_text(struct hook_judge *j, const struct hook_word *w)
{
	const char *t = w->text;
	bool lit = hook_word_literal(w) && !strchr(t, '$');

	if (!lit) /* $(VAR), $(shell ...): make's expansions, not the shell's */
		return (void)hook_block(j, HOOK_CANNOT,
					"make: a makefile given in the command uses variables or "
					"expansions, so what its recipes run cannot be judged");
	for (const char *l = t; *l && !hook_decided(j);) {
		size_t n = strcspn(l, "\n");
		const char *r = NULL;
		if (l[0] == '\t')
			r = l + 1;
		else if (memchr(l, ':', n) && memchr(l, ';', n))
			r = (const char *)memchr(l, ';', n) + 1;
		if (r) {
			r += strspn(r, " \t@+-");
			judge_piece(j, "make", r, n - (size_t)(r - l), lit);
		}
		l += n + (l[n] == '\n');
	}
}

static void check_make(struct hook_judge *j, const struct hook_script *s,
		       const struct hook_cmd *cmd, const struct hook_word *argv, size_t argc)
{
	static const char *const stdin_names[] = {"-", "/dev/stdin", "/dev/fd/0", NULL};

	for (size_t i = 1; i < argc && !hook_decided(j); i++) {
		const char *a = argv[i].text, *v = NULL;
		bool eval = false;
		if (!strcmp(a, "-f") || !strcmp(a, "--file") || !strcmp(a, "--makefile"))
			v = i + 1 < argc ? argv[++i].text : "";
		else if (!strncmp(a, "--file=", 7) || !strncmp(a, "--makefile=", 11))
			v = strchr(a, '=') + 1;
		else if (!strcmp(a, "-E") || !strcmp(a, "--eval"))
			eval = i + 1 < argc, i += eval;
		else if (!strncmp(a, "--eval=", 7)) {
			struct hook_word w = {argv[i].text + 7,
					      argv[i].lit > 7 ? argv[i].lit - 7 : 0};
			make_text(j, &w);
		} else if (strstr(a, "$(shell") || strstr(a, "${shell"))
			hook_block(j, HOOK_CANNOT,
				   "make: the variable '%.120s' runs a command through $(shell), "
				   "which cannot be judged",
				   a);
		if (eval)
			make_text(j, &argv[i]);
		for (size_t k = 0; v && stdin_names[k]; k++) {
			struct hook_word w;
			bool owned;
			if (strcmp(v, stdin_names[k]))
				continue;
			int rc = hook_stdin_text(j, s, cmd, "make", &w, &owned);
			if (rc == 1)
				make_text(j, &w);
			else if (rc == 0)
				hook_block(
				    j, HOOK_CANNOT,
				    "make -f -: the makefile comes from standard input, which "
				    "the hook cannot see");
			if (rc == 1 && owned)
				free(w.text);
		}
	}
}

/* ---------------------------------------------------------------- crontab, at */

/* A crontab's lines: five time fields or @word, then the command. */
static void cron_text(struct hook_judge *j, const struct hook_word *w)
{
	bool lit = hook_word_literal(w);

	for (const char *l = w->text; *l && !hook_decided(j);) {
		size_t n = strcspn(l, "\n"), k = strspn(l, " \t");
		const char *e = l + n;
		if (l[k] && l[k] != '#' && l + k < e) {
			size_t name = strspn(
			    l + k,
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_0123456789");
			if (l[k + name] == '=' && name) {
				l += n + (*e == '\n');
				continue; /* NAME=value */
			}
			const char *p = l + k;
			int fields = *p == '@' ? 1 : 5; /* @reboot, @daily: one field */
			for (int f = 0; f < fields && p < e; f++) {
				p += strcspn(p, " \t\n");
				p += strspn(p, " \t");
			}
			if (p < e)
				judge_piece(j, "crontab", p, (size_t)(e - p), lit);
		}
		l += n + (*e == '\n');
	}
}

/* crontab [-u USER] [- | (stdin)]: the jobs cron runs later, outside any sandbox;
 * at and batch are wrap.c's (a shell reading stdin). */
static void check_crontab(struct hook_judge *j, const struct hook_script *s,
			  const struct hook_cmd *cmd, const struct hook_word *argv, size_t argc)
{
	struct hook_word w;
	bool owned;

	for (size_t i = 1; i < argc; i++) {
		const char *a = argv[i].text;
		if (a[0] != '-' || !a[1])
			break;
		if (strpbrk(a + 1, "lriV"))
			return; /* listing, removing: nothing from the command */
		i += !strcmp(a, "-u");
	}
	int rc = hook_stdin_text(j, s, cmd, "crontab", &w, &owned);
	if (rc == 1)
		cron_text(j, &w);
	if (rc == 1 && owned)
		free(w.text);
}

/* ---------------------------------------------------------------- screen */

static void check_screen(struct hook_judge *j, const struct hook_word *argv, size_t argc)
{
	size_t i = 1;
	bool x = false;

	for (; i < argc && argv[i].text[0] == '-'; i++) {
		const char *a = argv[i].text;
		size_t n = strlen(a);
		if (!strcmp(a, "-X")) {
			x = true;
			i++;
			break;
		}
		if (!strcmp(a, "-ls") || !strcmp(a, "-list") || !strcmp(a, "-wipe") ||
		    !strcmp(a, "-v") || !strcmp(a, "-version"))
			return; /* listing: nothing runs */
		if (n > 1 && strchr("SpcehstT", a[n - 1]))
			i++; /* -S NAME, -dmS NAME */
		else if ((strpbrk(a + 1, "rxRD") || (strchr(a + 1, 'd') && !strchr(a + 1, 'm'))) &&
			 i + 1 < argc && argv[i + 1].text[0] != '-')
			i++; /* -r NAME, -d NAME: a session, not a command */
	}
	if (!x) {
		if (i < argc)
			hook_judge_joined(j, "screen", argv, i, argc);
		return;
	}
	if (i >= argc)
		return;
	if (!strcmp(argv[i].text, "stuff")) {
		for (i++; i < argc && !hook_decided(j); i++)
			hook_judge_text(j, "screen stuff", &argv[i]);
	} else if (!strcmp(argv[i].text, "exec") || !strcmp(argv[i].text, "screen")) {
		i++;
		if (i < argc && strchr("!.|", argv[i].text[0]) && !strcmp(argv[i - 1].text, "exec"))
			i++;
		if (i < argc)
			hook_judge_joined(j, "screen", argv, i, argc);
	}
}

/* ---------------------------------------------------------------- expect */

/* expect -c TEXT: each statement that is spawn/exec/system runs a command. */
static void expect_text(struct hook_judge *j, const struct hook_word *w)
{
	bool lit = hook_word_literal(w);

	for (const char *l = w->text; *l && !hook_decided(j);) {
		size_t n = strcspn(l, "\n;"), k = strspn(l, " \t[");
		const char *p = l + k, *e = l + n;
		static const char *const runs[] = {"spawn ", "exec ", "system ", NULL};
		for (size_t r = 0; runs[r]; r++) {
			size_t rl = strlen(runs[r]);
			if ((size_t)(e - p) <= rl || strncmp(p, runs[r], rl))
				continue;
			p += rl;
			while (p < e && *p == '-') /* spawn -noecho */
				p += strcspn(p, " \t"), p += strspn(p, " \t");
			const char *q = memchr(p, ']', (size_t)(e - p));
			judge_piece(j, "expect", p, (size_t)((q ? q : e) - p), lit);
		}
		if (strstr(l, "socket") && (size_t)(strstr(l, "socket") - l) < n)
			hook_block(j, HOOK_CANNOT,
				   "expect: the code opens a socket, whose host cannot be judged");
		l += n + (l[n] != 0);
	}
}

static void check_expect(struct hook_judge *j, const struct hook_script *s,
			 const struct hook_cmd *cmd, const struct hook_word *argv, size_t argc)
{
	bool code = false;

	for (size_t i = 1; i < argc && !hook_decided(j); i++) {
		const char *a = argv[i].text;
		if (!strcmp(a, "-c") && i + 1 < argc) {
			expect_text(j, &argv[++i]);
			code = true;
		} else if (a[0] != '-' || !strcmp(a, "-f") || !strcmp(a, "--")) {
			return; /* a script file */
		}
	}
	if (!code) {
		struct hook_word w;
		bool owned;
		if (hook_stdin_text(j, s, cmd, "expect", &w, &owned) == 1)
			expect_text(j, &w);
		if (owned)
			free(w.text);
	}
}

/* ---------------------------------------------------------------- pwsh */

/* A PowerShell parameter: -c, -co, -Command all name -Command (case does not matter). */
static bool pwsh_param(const char *a, const char *name, size_t min)
{
	size_t n = strlen(a + 1);
	return a[0] == '-' && n >= min && n <= strlen(name) && !strncasecmp(a + 1, name, n);
}

/* Cmdlets and aliases that connect to the host they are given. */
static const char *const pwsh_net[] = {"invoke-webrequest",
				       "iwr",
				       "invoke-restmethod",
				       "irm",
				       "curl",
				       "wget",
				       "start-bitstransfer",
				       "test-netconnection",
				       "tnc",
				       "test-connection",
				       "resolve-dnsname",
				       NULL};

/* One statement of the code: an external program is judged as a shell command would
 * be; a cmdlet that connects has every operand that is a host or URL decided. */
static void pwsh_statement(struct hook_judge *j, const char *p, size_t n, bool lit)
{
	struct hook_script sc;
	char *t = strndup(p, n);

	if (!t)
		return (void)hook_block(j, HOOK_CANNOT, "out of memory");
	if (hook_shell_parse(t, n, j->depth + 1, &sc) == 0) {
		for (size_t c = 0; c < sc.n && !hook_decided(j); c++) {
			const struct hook_cmd *cmd = &sc.cmds[c];
			bool net = false;
			for (size_t k = 0; cmd->n_words && pwsh_net[k]; k++)
				net |= !strcasecmp(cmd->words[0].text, pwsh_net[k]);
			for (size_t w = 1; net && w < cmd->n_words && !hook_decided(j); w++) {
				const char *a = cmd->words[w].text;
				if (strstr(a, "://") || (a[0] != '-' && hook_host_like(a)))
					hook_target_text(j, cmd->words[0].text, a);
			}
		}
		hook_script_free(&sc);
		judge_piece(j, "pwsh", t, n, lit);
	} else {
		hook_script_free(&sc);
	}
	free(t);
}

/* pwsh -Command CODE... (the rest of the line is the code), -EncodedCommand B64. */
static void check_pwsh(struct hook_judge *j, const struct hook_word *argv, size_t argc)
{
	static const char *const vals[] = {
	    "executionpolicy", "workingdirectory", "configurationname",
	    "custompipename",  "settingsfile",	   "outputformat",
	    "inputformat",     "windowstyle",	   NULL};
	for (size_t i = 1; i < argc && !hook_decided(j); i++) {
		const char *a = argv[i].text;
		if (pwsh_param(a, "encodedcommand", 1) || pwsh_param(a, "ec", 2))
			return (void)hook_block(
			    j, HOOK_CANNOT,
			    "pwsh -EncodedCommand: the code is encoded, so what it "
			    "does cannot be judged");
		if (pwsh_param(a, "command", 1)) {
			size_t len = 1;
			bool lit = true;
			for (size_t k = i + 1; k < argc; k++)
				len += strlen(argv[k].text) + 1, lit &= hook_word_literal(&argv[k]);
			char *code = calloc(1, len);
			if (!code)
				return (void)hook_block(j, HOOK_CANNOT, "out of memory");
			for (size_t k = i + 1; k < argc; k++)
				strcat(strcat(code, argv[k].text), k + 1 < argc ? " " : "");
			struct hook_word w = {code, lit ? strlen(code) : 0};
			hook_interp_code(j, HOOK_L_DOLLAR, "pwsh", &w);
			for (const char *p = code; *p && !hook_decided(j);) {
				size_t n = strcspn(p, "\n;|{}");
				pwsh_statement(j, p, n, lit);
				p += n + (p[n] != 0);
			}
			free(code);
			return;
		}
		if (a[0] != '-' || pwsh_param(a, "file", 1))
			return; /* a script file */
		for (size_t k = 0; vals[k]; k++)
			if (pwsh_param(a, vals[k], 2)) {
				i++;
				break;
			}
	}
}

bool hook_runs_check(struct hook_judge *j, const struct hook_script *s, const struct hook_cmd *cmd,
		     const char *base, const struct hook_word *argv, size_t argc)
{
	if (!strcmp(base, "sed") || !strcmp(base, "gsed"))
		check_sed(j, argv, argc);
	else if (!strcmp(base, "tar") || !strcmp(base, "gtar"))
		return check_tar(j, argv, argc), false; /* net.c judges its other options */
	else if (!strcmp(base, "make") || !strcmp(base, "gmake"))
		check_make(j, s, cmd, argv, argc);
	else if (!strcmp(base, "crontab"))
		check_crontab(j, s, cmd, argv, argc);
	else if (!strcmp(base, "screen"))
		check_screen(j, argv, argc);
	else if (!strcmp(base, "expect"))
		check_expect(j, s, cmd, argv, argc);
	else if (!strcmp(base, "pwsh") || !strcmp(base, "powershell"))
		check_pwsh(j, argv, argc);
	else
		return false;
	return true;
}
