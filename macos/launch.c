/* The macOS launch: TMPDIR, proxy listener and secret, environment, profile; fork;
 * the child applies the limits, closes every inherited fd (Seatbelt checks at open(),
 * so an inherited fd would bypass the profile) and execs sandbox-exec, which runs
 * halo-run's trampoline (exec_child.c), which execs the command.
 *
 * Fails closed: a missing sandbox-exec, a profile it refuses, or anything else before
 * the trampoline says "started" stops the launch with an error (a setup failure). There is
 * no path that runs the command without sandbox-exec, except sandbox.mode: off. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macos/macos_int.h"

#define START_TIMEOUT_MS 10000
#define CHILD_REPORT_FD	 3 /* in the child: the report pipe */
#define CHILD_STDERR_FD	 4 /* in the child: the caller's stderr, for the trampoline */

extern char **environ;

/* Valid for the life of the process: the proxy keeps a pointer to it. */
static char g_secret[MACOS_SECRET_HEX + 1];

static int pipe_cloexec(int p[2])
{
	if (pipe(p) < 0)
		return -errno;
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	fcntl(p[1], F_SETFD, FD_CLOEXEC);
	return 0;
}

/* sandbox-exec -p PROFILE -D K=V... -- SELF __exec 3 4 -- CMD ARGS... */
static int build_argv(struct macos_sandbox *sb, const char *sbx, struct halo_err *e)
{
	const struct macos_launch *l = sb->l;
	size_t n_cmd = 0, k = 0;

	while (l->argv[n_cmd])
		n_cmd++;
	sb->dargs = calloc(sb->prof.n_params + 1, sizeof(char *));
	sb->argv = calloc(3 + 2 * sb->prof.n_params + 7 + n_cmd + 1, sizeof(char *));
	if (!sb->dargs || !sb->argv)
		goto nomem;
	sb->argv[k++] = (char *)sbx;
	sb->argv[k++] = "-p";
	sb->argv[k++] = sb->prof.text;
	for (size_t i = 0; i < sb->prof.n_params; i++) {
		const struct macos_param *p = &sb->prof.params[i];
		size_t len = strlen(p->key) + strlen(p->value) + 2;
		if (!(sb->dargs[i] = malloc(len)))
			goto nomem;
		sb->n_dargs++;
		snprintf(sb->dargs[i], len, "%s=%s", p->key, p->value);
		sb->argv[k++] = "-D";
		sb->argv[k++] = sb->dargs[i];
	}
	sb->argv[k++] = "--";
	sb->argv[k++] = (char *)l->self_exe;
	sb->argv[k++] = MACOS_EXEC_CHILD_WORD;
	sb->argv[k++] = "3";
	sb->argv[k++] = "4";
	sb->argv[k++] = "--";
	for (size_t i = 0; i < n_cmd; i++)
		sb->argv[k++] = l->argv[i];
	sb->argv[k] = NULL;
	return 0;
nomem:
	halo_err_set(e, "out of memory");
	return -ENOMEM;
}

static int make_profile(struct macos_sandbox *sb, struct halo_err *e)
{
	const struct macos_launch *l = sb->l;
	struct macos_ttys ttys;

	macos_caller_ttys(&ttys); /* the command's stdio: the caller's terminal, if any */
	struct macos_profile_in in = {
	    .ttys = ttys.v,
	    .n_ttys = ttys.n,
	    .policy = l->policy,
	    .workspace = l->workspace,
	    .pw_home = l->pw_home,
	    .tmpdir = sb->tmpdir,
	    .proxy_port = sb->port,
	    .self_exe = l->self_exe,
	    .policy_files = l->policy_files,
	    .n_policy_files = l->n_policy_files,
	    .own_outputs = l->own_outputs,
	    .n_own_outputs = l->n_own_outputs,
	};
	const char **keys;
	char why[512];
	int rc = macos_profile_build(&in, &sb->prof, e);

	if (rc < 0)
		return rc;
	keys = calloc(sb->prof.n_params + 1, sizeof(*keys));
	if (!keys) {
		halo_err_set(e, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < sb->prof.n_params; i++)
		keys[i] = sb->prof.params[i].key;
	/* Our own profile, read back before anything runs under it. */
	rc = macos_sbpl_lint(sb->prof.text, keys, sb->prof.n_params, why, sizeof(why));
	free(keys);
	if (rc < 0)
		halo_err_set(e, "the generated profile failed its own check (%s); nothing was run",
			     why);
	return rc;
}

static int prepare_sandboxed(struct macos_sandbox *sb, const char *base, struct halo_err *e)
{
	const struct macos_launch *l = sb->l;
	const char *sbx = l->sandbox_exec ? l->sandbox_exec : macos_sandbox_exec_path();
	char url[128];
	int rc;

	if (access(sbx, X_OK) < 0) {
		rc = -errno;
		halo_err_set(e,
			     "%s: %s; the macOS sandbox needs it, and halo-run never runs a "
			     "command unsandboxed in its place",
			     sbx, strerror(-rc));
		return rc;
	}
	if (!l->self_exe || l->self_exe[0] != '/' || access(l->self_exe, X_OK) < 0) {
		halo_err_set(e,
			     "cannot find halo-run's own binary (%s), which starts the command "
			     "inside the sandbox",
			     l->self_exe && l->self_exe[0] ? l->self_exe : "unknown");
		return -ENOENT;
	}
	if ((rc = macos_tmpdir_make(base, sb->tmpdir, sizeof(sb->tmpdir), e)) < 0 ||
	    (rc = macos_listen_loopback(&sb->listen_fd, &sb->port, e)) < 0 ||
	    (rc = macos_secret_new(g_secret, sizeof(g_secret), e)) < 0)
		return rc;
	snprintf(url, sizeof(url), "http://%s:%s@127.0.0.1:%u", MACOS_PROXY_USER, g_secret,
		 sb->port);
	sb->envp = l->build_env(l->build_env_arg, url, sb->tmpdir, e);
	if (!sb->envp)
		return -ENOMEM;
	if ((rc = make_profile(sb, e)) < 0)
		return rc;
	return build_argv(sb, sbx, e);
}

static int prepare(struct macos_sandbox *sb, struct halo_err *e)
{
	const struct macos_launch *l = sb->l;
	char base[PATH_MAX];
	int rc;

	if (!l->build_env || !l->argv || !l->argv[0]) {
		halo_err_set(e, "macOS launcher: no command or no environment builder");
		return -EINVAL;
	}
	if (l->tmp_base)
		snprintf(base, sizeof(base), "%s", l->tmp_base);
	else if ((rc = macos_tmp_base(base, sizeof(base))) < 0) {
		halo_err_set(e, "no usable temp directory: %s", strerror(-rc));
		return rc;
	}
	if (!l->unsandboxed)
		return prepare_sandboxed(sb, base, e);
	/* sandbox.mode: off — no profile, no proxy: the user's own temp dir. */
	sb->envp = l->build_env(l->build_env_arg, NULL, base, e);
	return sb->envp ? 0 : -ENOMEM;
}

/* ---------------------------------------------------------------- the child */

static int move_high(int fd)
{
	int h = fd >= 0 ? fcntl(fd, F_DUPFD, 10) : -1;

	return h;
}

static void run_unsandboxed(struct macos_sandbox *sb) __attribute__((noreturn));
static void run_unsandboxed(struct macos_sandbox *sb)
{
	char *const *av = sb->l->argv;

	fcntl(CHILD_REPORT_FD, F_SETFD, FD_CLOEXEC);
	macos_report(CHILD_REPORT_FD, MACOS_REPORT_STARTED, 0, "started");
	environ = sb->envp;
	execvp(av[0], av);
	int err = errno;
	macos_report(CHILD_REPORT_FD, MACOS_REPORT_EXEC, err, "%s", av[0]);
	_exit(halo_exit_code(halo_outcome_exec(err)));
}

static void child_main(struct macos_sandbox *sb, bool handover) __attribute__((noreturn));
static void child_main(struct macos_sandbox *sb, bool handover)
{
	const struct macos_launch *l = sb->l;
	static const int keep[] = {CHILD_REPORT_FD, CHILD_STDERR_FD};
	struct halo_err e = {{0}};
	sigset_t none;
	int rep, err_copy = -1, cap = -1;

	macos_signals_child_reset();
	/* Its own process group, so that the wall-clock kill and the leftovers' kill
	 * reach everything the command started; the terminal follows it. SIGTTOU is
	 * still blocked, so tcsetpgrp from the background group succeeds. */
	setpgid(0, 0);
	if (handover)
		tcsetpgrp(STDIN_FILENO, getpid());
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Fixed numbers 3 and 4, moved out of the way first so no dup2 clobbers a
	 * source; before the limits, which may lower RLIMIT_NOFILE. */
	rep = move_high(sb->report_w);
	if (!l->unsandboxed) {
		err_copy = move_high(STDERR_FILENO);
		if (err_copy < 0)
			err_copy = move_high(open("/dev/null", O_WRONLY));
		cap = move_high(sb->capture_w);
	}
	if (rep < 0 || dup2(rep, CHILD_REPORT_FD) < 0 ||
	    (!l->unsandboxed && (err_copy < 0 || cap < 0 || dup2(err_copy, CHILD_STDERR_FD) < 0 ||
				 dup2(cap, STDERR_FILENO) < 0)))
		_exit(HALO_EXIT_SETUP);
	/* sandbox-exec's own messages now go to the capture pipe (the trampoline puts
	 * the real stderr back); no fd but 0-4 crosses into the sandbox. */
	macos_close_fds_except(keep, l->unsandboxed ? 1 : 2);
	int rc = rlimits_apply(&l->limits, &e);
	if (rc < 0) {
		macos_report(CHILD_REPORT_FD, MACOS_REPORT_SETUP, -rc, "limits: %s", e.msg);
		_exit(HALO_EXIT_SETUP);
	}
	if (l->unsandboxed)
		run_unsandboxed(sb);
	execve(sb->argv[0], sb->argv, sb->envp);
	int err = errno;
	macos_report(CHILD_REPORT_FD, MACOS_REPORT_SETUP, err, "cannot execute %s", sb->argv[0]);
	_exit(HALO_EXIT_SETUP);
}

/* ---------------------------------------------------------------- the parent */

static int spawn(struct macos_sandbox *sb, struct halo_err *e)
{
	int p[2], c[2] = {-1, -1}, rc;
	bool handover = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	sigset_t all, old;

	if ((rc = pipe_cloexec(p)) < 0 || (!sb->l->unsandboxed && (rc = pipe_cloexec(c)) < 0)) {
		halo_err_set(e, "could not create the supervisor's pipes: %s", strerror(-rc));
		return rc;
	}
	sb->report_r = p[0];
	sb->report_w = p[1];
	sb->capture_r = c[0];
	sb->capture_w = c[1];
	if ((rc = macos_signals_install()) < 0) {
		halo_err_set(e, "could not install the signal handlers: %s", strerror(-rc));
		return rc;
	}
	sb->signals = true;
	/* Nothing may be delivered between fork and the child's reset, and SIGCHLD not
	 * before the handler knows the child's pid. */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	sb->child = fork();
	if (sb->child == 0)
		child_main(sb, handover);
	rc = sb->child < 0 ? -errno : 0;
	if (rc == 0) {
		setpgid(sb->child, sb->child); /* also here: no race with the child's own */
		macos_signals_set_child(sb->child);
		if (handover)
			macos_tty_give(sb->child);
		sb->tty_handed = handover;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(sb->report_w);
	sb->report_w = -1;
	if (sb->capture_w >= 0) {
		close(sb->capture_w);
		sb->capture_w = -1;
	}
	if (rc < 0)
		halo_err_set(e, "fork: %s", strerror(-rc));
	return rc;
}

/* Wait up to `ms` for fd to be readable. 1 readable, 0 timed out. */
static int wait_readable(int fd, int ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	int r;

	do
		r = poll(&pfd, 1, ms);
	while (r < 0 && errno == EINTR);
	return r > 0 ? 1 : 0;
}

static ssize_t read_report(int fd, struct macos_report *r, int ms)
{
	ssize_t n;

	if (!wait_readable(fd, ms))
		return -ETIMEDOUT;
	do
		n = read(fd, r, sizeof(*r));
	while (n < 0 && errno == EINTR);
	return n;
}

/* Whatever sandbox-exec wrote on its stderr, up to the buffer (EOF or 1 s). */
static size_t read_capture(struct macos_sandbox *sb, char *buf, size_t cap)
{
	size_t len = 0;

	while (sb->capture_r >= 0 && len + 1 < cap && wait_readable(sb->capture_r, 1000)) {
		ssize_t n = read(sb->capture_r, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return len;
}

/* sandbox-exec's failure as one line: its message, newlines folded. */
static void failure(struct macos_sandbox *sb, int ws, bool timed_out, struct halo_err *e)
{
	char text[768], code[64];
	size_t n = read_capture(sb, text, sizeof(text));

	while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r'))
		text[--n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (text[i] == '\n' || text[i] == '\r')
			text[i] = ' ';
	if (timed_out)
		snprintf(code, sizeof(code), "did not start the command within %d s",
			 START_TIMEOUT_MS / 1000);
	else if (WIFSIGNALED(ws))
		snprintf(code, sizeof(code), "was killed by signal %d", WTERMSIG(ws));
	else
		snprintf(code, sizeof(code), "exited %d", WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
	halo_err_set(e,
		     "%s %s before the command started (the profile was refused or the sandbox "
		     "could not be applied)%s%s; nothing was run",
		     sb->argv[0], code, n ? ": " : "", text);
}

static int await_start(struct macos_sandbox *sb, struct halo_err *e)
{
	struct macos_report r;
	ssize_t n = read_report(sb->report_r, &r, START_TIMEOUT_MS);
	int ws;

	if (n == (ssize_t)sizeof(r) && r.kind == MACOS_REPORT_STARTED) {
		char text[4096];
		size_t k = read_capture(sb, text, sizeof(text));
		/* sandbox-exec's own notes (a deprecation warning) pass through. */
		if (k && !sb->l->quiet)
			(void)!write(STDERR_FILENO, text, k);
		return 0;
	}
	if (n == -ETIMEDOUT) {
		kill(sb->child, SIGKILL);
		macos_reap(sb);
		if (sb->l->unsandboxed)
			halo_err_set(e, "the command's process did not start");
		else
			failure(sb, 0, true, e);
		return -ETIMEDOUT;
	}
	ws = macos_reap(sb);
	if (n == (ssize_t)sizeof(r) && r.kind == MACOS_REPORT_SETUP) {
		halo_err_set(e, "sandbox setup failed: %s%s%s; nothing was run", r.msg,
			     r.err ? ": " : "", r.err ? strerror(r.err) : "");
		return r.err == ENOENT ? -ENOENT : -EPERM;
	}
	if (sb->l->unsandboxed)
		halo_err_set(e, "the command's process ended before it started");
	else
		failure(sb, ws, false, e);
	return -EPERM;
}

int macos_start(const struct macos_launch *l, struct macos_sandbox **out, struct halo_err *e)
{
	struct macos_sandbox *sb = calloc(1, sizeof(*sb));
	int rc;

	*out = NULL;
	if (!sb) {
		halo_err_set(e, "out of memory");
		return -ENOMEM;
	}
	sb->l = l;
	sb->report_r = sb->report_w = sb->capture_r = sb->capture_w = sb->listen_fd = -1;
	sb->child = -1;
	rc = prepare(sb, e);
	if (rc == 0)
		rc = spawn(sb, e);
	if (rc == 0)
		rc = await_start(sb, e);
	if (rc < 0) {
		macos_sandbox_free(sb);
		return rc;
	}
	*out = sb;
	return 0;
}

int macos_sandbox_take_listener(struct macos_sandbox *sb, const char **secret)
{
	int fd = sb->listen_fd;

	sb->listen_fd = -1;
	*secret = fd >= 0 ? g_secret : NULL;
	return fd;
}
