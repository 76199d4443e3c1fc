/* `halo-run hook`: one harness event on stdin, judged by the policy; exit 0 to allow,
 * 2 to block with one line on stderr. An event or a policy that cannot be judged
 * blocks too (exit 2): the harnesses run the tool on any other non-zero status, so a
 * hook that failed any other way would fail open. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hook/hook.h"
#include "events/events.h"
#include "runner/runner_int.h"
/* The persistence guard's names. Their one home is moving to policy/; until then the
 * macOS profile's copy (built on every platform) is the list both launchers use. */

#define HOOK_EXIT_ALLOW 0
#define HOOK_EXIT_BLOCK 2

static int blocked(const char *what, const char *reason)
{
	fprintf(stderr, "halo-run: blocked%s: %s\n", what, reason);
	return HOOK_EXIT_BLOCK;
}

static char *read_stdin(size_t *len, char *why, size_t whylen)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap + 1);

	while (buf) {
		if (n == cap) {
			if (cap > HOOK_MAX_EVENT) {
				snprintf(why, whylen, "the event is larger than 32 MiB");
				free(buf);
				return NULL;
			}
			char *nb = realloc(buf, cap * 2 + 1);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(STDIN_FILENO, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(why, whylen, "reading standard input: %s", strerror(errno));
			free(buf);
			return NULL;
		}
		if (r == 0) {
			buf[n] = 0;
			*len = n;
			return buf;
		}
		n += (size_t)r;
	}
	free(buf);
	snprintf(why, whylen, "out of memory");
	return NULL;
}

/* found: the policy file discovery chose when no --policy was given ("" for none). */
static int judge(const struct runner_opts *o, const struct hook_event *ev, char *found,
		 size_t found_n)
{
	struct runner_opts lo = *o;
	struct runner_env re;
	struct hook_verdict v;
	struct stat st;
	char *cwd_real = NULL;
	size_t ng;

	lo.quiet = true; /* warnings on every tool call would drown the one line */
	if (ev->cwd && stat(ev->cwd, &st) == 0 && S_ISDIR(st.st_mode))
		lo.workspace = ev->cwd;
	if (runner_load_policy(&lo, false, &re) != 0)
		return blocked("", "cannot judge: the policy is invalid (above); fix it or "
				   "`halo-run validate` it");
	struct hook_ctx c = {
	    .policy = re.policy,
	    .cwd = ev->cwd ? ev->cwd : re.workspace,
	    .home = re.pw_home,
	    .env_home = re.env_home,
	    .path_env = getenv("PATH"),
	    .xdg_config = getenv("XDG_CONFIG_HOME"),
	    .xdg_data = getenv("XDG_DATA_HOME"),
	    .xdg_config_dirs = getenv("XDG_CONFIG_DIRS"),
	    .xdg_data_dirs = getenv("XDG_DATA_DIRS"),
	    .zdotdir = runner_zdotdir(),
	    .resolve = runner_hook_resolve,
	    .exists = runner_hook_exists,
	    .read_file = runner_hook_read_file,
	    .user_home = runner_hook_user_home,
	    .git_config_global = getenv("GIT_CONFIG_GLOBAL"),
	    .git_config_system = getenv("GIT_CONFIG_SYSTEM"),
	    .find_protected = runner_hook_find_protected,
#ifndef RUNNER_MACOS
	    .masked = runner_hook_masked,
#endif
	};
	char *xdg_real[5] = {NULL, NULL, NULL, NULL, NULL};
	char *home_real = re.pw_home[0] ? realpath(re.pw_home, NULL) : NULL;
	char *env_real = re.env_home ? realpath(re.env_home, NULL) : NULL;
	if (home_real && strcmp(home_real, re.pw_home))
		c.home_resolved = home_real;
	if (env_real && strcmp(env_real, re.env_home))
		c.env_home_resolved = env_real;
	c.guard_names = policy_guard_names(&ng);
	c.n_guard_names = ng;
	const char *homes_real[] = {home_real, env_real};
	if (runner_hook_resolve_ctx(&c, re.policy, homes_real, xdg_real) < 0) {
		runner_hook_resolve_free(&c);
		free(home_real);
		free(env_real);
		for (int k = 0; k < 5; k++)
			free(xdg_real[k]);
		runner_env_release(&re);
		return blocked(" (cannot judge)", "out of memory");
	}
	if (c.cwd && (cwd_real = realpath(c.cwd, NULL)))
		c.cwd_real = cwd_real;
#ifndef RUNNER_MACOS
	runner_hook_walk_launch(re.workspace, re.pw_home, re.env_home);
#endif
	struct runner_hook_own own;
	if (runner_hook_own_ctx(&c, &own, &re) < 0)
		v = (struct hook_verdict){HOOK_CANNOT, "out of memory"};
	else
		hook_event_judge(&c, ev, &v);
	runner_hook_own_free(&own);
#ifndef RUNNER_MACOS
	runner_hook_walk_launch(NULL, NULL, NULL);
#endif
	snprintf(found, found_n, "%s", re.discovered);
	runner_hook_resolve_free(&c);
	free(cwd_real);
	free(home_real);
	free(env_real);
	for (int k = 0; k < 5; k++)
		free(xdg_real[k]);
	runner_env_release(&re);
	if (v.outcome == HOOK_ALLOW)
		return HOOK_EXIT_ALLOW;
	return blocked(v.outcome == HOOK_CANNOT ? " (cannot judge)" : "", v.reason);
}

/* ------------------------------------------------------------ --wrap */

/* The session of a harness session: its id when that is already a session name,
 * else a digest of it (another prefix, so the two forms never meet). */
static void wrap_session_name(const char *sid, char *out, size_t n)
{
	size_t len = strlen(sid);
	char hex[65];

	if (len <= 59 && strspn(sid, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				     "0123456789._-") == len) {
		snprintf(out, n, "hook-%s", sid);
		return;
	}
	runner_sha256_hex(sid, len, hex);
	snprintf(out, n, "hookx-%.40s", hex);
}

/* The one-off flags the hook judged with, for the rewritten call: the sandbox must
 * hold what the hook allowed (a --writable the hook let the file tools write, the
 * Bash call's sandbox refused otherwise). NULL, or why the call cannot be wrapped. */
static const char *wrap_oneoffs(const struct runner_opts *o, const char **argv, size_t *n)
{
	static char wabs[RUNNER_MAX_ONEOFF][4096];
	const struct runner_multi *verbatim[] = {&o->allow, &o->host_port, &o->env};
	static const char *const flags[] = {"--allow", "--host-port", "--env"};
	char *cwd = getcwd(NULL, 0);
	const char *why = NULL;

	for (size_t i = 0; i < o->writable.n && !why; i++) {
		if (runner_writable_abs(o->writable.v[i], cwd, wabs[i], sizeof(wabs[i])) < 0)
			why = "a --writable directory is too long to name";
		argv[(*n)++] = "--writable";
		argv[(*n)++] = wabs[i];
	}
	free(cwd);
	for (size_t f = 0; f < 3 && !why; f++)
		for (size_t i = 0; i < verbatim[f]->n; i++) {
			if (f == 2 && strchr(verbatim[f]->v[i], '='))
				return "--env NAME=VALUE would put its value into the rewritten "
				       "command, which the harness shows and records: set it in a "
				       "policy file (env.set)";
			argv[(*n)++] = flags[f];
			argv[(*n)++] = verbatim[f]->v[i];
		}
	if (o->mode && !why) {
		argv[(*n)++] = "--mode";
		argv[(*n)++] = o->mode;
	}
	return why;
}

/* Answer an allowed shell call with it rewritten into
 *   /path/to/halo-run [--policy ABS]... [one-off flags]... --session hook-ID
 *                     --workspace CWD -- bash -c CMD
 * on stdout (exit 0). What cannot be rewritten exactly is blocked: a call that ran
 * outside the sandbox because the hook could not wrap it would be the bypass. */
static int wrap_answer(const struct runner_opts *o, const struct hook_event *ev, const char *cmd,
		       const char *found)
{
	const char *argv[10 + 2 * RUNNER_MAX_POLICIES + 8 * RUNNER_MAX_ONEOFF], *why;
	char self[4096], name[80], abs[RUNNER_MAX_POLICIES][4096];
	char *line = NULL, *json = NULL;
	size_t n = 0;
	ssize_t k;
	int rc;

	if (!ev->session_id || !ev->cwd)
		return blocked(" (cannot wrap)", "the event has no session_id or no cwd");
	if ((k = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
		return blocked(" (cannot wrap)", "cannot tell where halo-run itself is "
						 "(/proc/self/exe)");
	self[k] = 0;
	wrap_session_name(ev->session_id, name, sizeof(name));
	argv[n++] = self;
	for (size_t i = 0; i < o->n_policies; i++) {
		if (!realpath(o->policies[i], abs[i]))
			return blocked(" (cannot wrap)", "a --policy file cannot be resolved");
		argv[n++] = "--policy";
		argv[n++] = abs[i];
	}
	/* Without --policy, the file the hook judged with (discovery: $HALO_POLICY, /etc,
	 * ~/.config), by name: the harness's shell could discover another one. */
	if (!o->n_policies && found[0]) {
		if (!realpath(found, abs[0]))
			return blocked(" (cannot wrap)",
				       "the discovered policy cannot be resolved");
		argv[n++] = "--policy";
		argv[n++] = abs[0];
	}
	if ((why = wrap_oneoffs(o, argv, &n)))
		return blocked(" (cannot wrap)", why);
	argv[n++] = "--session";
	argv[n++] = name;
	argv[n++] = "--workspace";
	argv[n++] = ev->cwd;
	argv[n++] = "--";
	argv[n++] = "bash";
	argv[n++] = "-c";
	rc = hook_wrap_line(argv, n, cmd, strlen(cmd), &line);
	if (rc == 0)
		rc = hook_wrap_answer(ev, line, &json);
	free(line);
	if (rc < 0)
		return blocked(" (cannot wrap)",
			       rc == -EINVAL ? "the command holds a NUL byte" : "out of memory");
	puts(json);
	free(json);
	return fflush(stdout) == 0 ? HOOK_EXIT_ALLOW
				   : blocked(" (cannot wrap)", "cannot write the answer");
}

/* The options the rewritten line does not carry: the call would run without what the
 * hook was told (a limit, a decider, an audit file...), so --wrap refuses them rather
 * than judge with them and drop them. Put them in the policy. The one-off flags are
 * carried by hook --wrap (wrap_oneoffs), not by the rendered settings' command:
 * `oneoffs_carried` says which asks. */
const char *runner_wrap_dropped_option(const struct runner_opts *o, bool oneoffs_carried)
{
	const struct {
		const char *name;
		bool set;
	} rows[] = {
	    {"--limit", o->limit_spec},
	    {"--timeout", o->timeout},
	    {"--audit", o->audit},
	    {"--events", o->events},
	    {"--decider", o->decider},
	    {"--decider-timeout", o->decider_timeout},
	    {"--allow", !oneoffs_carried && o->allow.n > 0},
	    {"--writable", !oneoffs_carried && o->writable.n > 0},
	    {"--env", !oneoffs_carried && o->env.n > 0},
	    {"--host-port", !oneoffs_carried && o->host_port.n > 0},
	    {"--mode", !oneoffs_carried && o->mode},
	    {"--session", o->session},
	    {"--workspace", o->workspace},
	    {"--die-with-parent", o->die_with_parent},
	    {"--summary-md", o->summary_md},
	    {"--fail-on-deny", o->fail_on_deny},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].set)
			return rows[i].name;
	return NULL;
}

/* Claude Code runs the original call, unwrapped, when its hook crashes or outlives its
 * timeout (the rendered settings say 10 s). So under --wrap the hook blocks by itself
 * first: after WRAP_BUDGET_S, or on a fatal signal. */
#define WRAP_BUDGET_S 8

static void wrap_give_up(int sig)
{
	static const char slow[] = "halo-run: blocked (cannot wrap): the hook took more than "
				   "8 s; blocked rather than let the harness run the call "
				   "unwrapped at its timeout\n";
	static const char crash[] = "halo-run: blocked (cannot wrap): the hook failed (fatal "
				    "signal); blocked rather than let the call run unwrapped\n";
	ssize_t w = sig == SIGALRM ? write(STDERR_FILENO, slow, sizeof(slow) - 1)
				   : write(STDERR_FILENO, crash, sizeof(crash) - 1);

	(void)w;
	_exit(HOOK_EXIT_BLOCK);
}

static void wrap_fail_closed(void)
{
	static char alt[64 * 1024]; /* a stack overflow still reaches the handler */
	static const int sigs[] = {SIGALRM, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
	stack_t st = {.ss_sp = alt, .ss_size = sizeof(alt)};
	struct sigaction sa = {.sa_handler = wrap_give_up, .sa_flags = SA_ONSTACK};

	sigaltstack(&st, NULL);
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	alarm(WRAP_BUDGET_S);
}

/* SessionEnd: the harness session is over, and so is its sandbox. */
static int wrap_session_end(const struct hook_event *ev)
{
	char name[80];

	if (!ev->session_id)
		return 0;
	wrap_session_name(ev->session_id, name, sizeof(name));
	return runner_session_stop_quiet(name);
}

int runner_cmd_hook(const struct runner_opts *o)
{
	enum hook_harness h = HOOK_HARNESS_ANY;
	struct hook_event ev;
	const char *cmd, *wrap_for = o->harness ? o->harness : "claude-code";
	char why[512], names[200], found[4096] = "";
	size_t len = 0;
	char *in;
	int rc;

	if (o->harness && hook_harness_parse(o->harness, &h) < 0) {
		policy_harness_names(POLICY_HARNESS_HOOK, names, sizeof(names));
		snprintf(why, sizeof(why), "--harness %.40s: expected %s", o->harness, names);
		return blocked(" (cannot judge)", why);
	}
	/* Without --harness, --wrap reads the events of the harness that can take a
	 * rewritten input (claude-code, the table's only one today). */
	if (o->wrap && !policy_harness_find(wrap_for, POLICY_HARNESS_WRAP)) {
		policy_harness_names(POLICY_HARNESS_WRAP, names, sizeof(names));
		snprintf(why, sizeof(why),
			 "--wrap: %.40s cannot take a rewritten input without a decision that "
			 "widens its permissions (docs/hook.md, hook --wrap); --wrap works with %s",
			 wrap_for, names);
		return blocked(" (cannot wrap)", why);
	}
	if (o->wrap)
		wrap_fail_closed();
	if (o->wrap && !o->harness)
		h = HOOK_HARNESS_CLAUDE_CODE; /* another harness's event: refused, not let by */
	const char *dropped = o->wrap ? runner_wrap_dropped_option(o, true) : NULL;
	if (dropped) {
		snprintf(why, sizeof(why),
			 "%s: the rewritten call would run without it (hook --wrap carries only "
			 "--policy); put it in the policy file",
			 dropped);
		return blocked(" (cannot wrap)", why);
	}
	if (o->n_rest)
		return blocked(" (cannot judge)",
			       "hook takes no operands: the event comes on standard input");
	if (!(in = read_stdin(&len, why, sizeof(why))))
		return blocked(" (cannot judge)", why);
	if (hook_event_parse(in, len, h, &ev, why, sizeof(why)) < 0) {
		hook_event_free(&ev);
		free(in);
		return blocked(" (cannot judge)", why);
	}
	if (ev.session_end && o->wrap)
		alarm(0); /* nothing runs on a SessionEnd: the stop takes what it takes */
	if (ev.session_end)
		rc = o->wrap ? wrap_session_end(&ev)
			     : blocked(" (cannot judge)",
				       "the event is SessionEnd: install `halo-run hook` on the "
				       "pre-tool event (PreToolUse; Gemini CLI: BeforeTool), where "
				       "a block stops the tool; SessionEnd is for hook --wrap");
	else if ((rc = judge(o, &ev, found, sizeof(found))) == HOOK_EXIT_ALLOW && o->wrap &&
		 hook_event_is_shell(&ev))
		rc = (cmd = hook_event_command(&ev))
			 ? wrap_answer(o, &ev, cmd, found)
			 : blocked(" (cannot wrap)", "the shell call's command is not one string "
						     "(Bash: tool_input.command): it would run "
						     "outside the sandbox");
	hook_event_free(&ev);
	free(in);
	return rc;
}
