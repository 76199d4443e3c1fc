/* macos/ — the macOS launcher: a Seatbelt (SBPL) profile generated from the policy
 * and applied with /usr/bin/sandbox-exec, the proxy on the host's 127.0.0.1 behind a
 * per-run secret, rlimits and the stripped environment. There are no namespaces.
 *
 * Everything here is portable C with no Apple headers: the profile is generated and
 * linted on any OS (`halo-run profile --os macos`), and the launcher is plain POSIX
 * (fork, pipes, self-pipes for SIGCHLD and forwarded signals, poll), so the portable
 * build (make PLATFORM=portable) drives it on Linux against a fake sandbox-exec.
 * See ../shared/macos-seatbelt.md for the facts and the recipe this follows. */
#ifndef HALO_MACOS_H
#define HALO_MACOS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "plan/plan.h"
#include "policy/policy.h"
#include "rlimits/rlimits.h"
#include "exit/exit.h"

#define MACOS_SANDBOX_EXEC    "/usr/bin/sandbox-exec"
#define MACOS_EXAMPLE_PORT    49152 /* shown by `halo-run profile`; a run picks its own */
#define MACOS_PROXY_USER      "halo"
#define MACOS_SECRET_HEX      32 /* hex digits of the per-run proxy secret */
#define MACOS_DENY_MESSAGE    "halo-run"
#define MACOS_EXEC_CHILD_WORD "__exec" /* the hidden subcommand of the trampoline */

/* ---------------------------------------------------------------- profile */

struct macos_param {
	char *key;   /* [A-Z0-9_]+ */
	char *value; /* an absolute path, checked by macos_path_check */
};

struct macos_profile {
	char *text; /* the SBPL source, NUL-terminated */
	struct macos_param *params;
	size_t n_params;
};

/* What the profile is built from. Paths are absolute; the policy is validated. */
struct macos_profile_in {
	const struct halo_policy *policy;
	const char *workspace; /* writable in workspace-write mode */
	const char *pw_home;   /* from the password database, never $HOME */
	const char *tmpdir;    /* this run's TMPDIR (always writable); NULL = none */
	unsigned proxy_port;   /* 1..65535: outbound only to localhost:port; 0 = no network */
	const char *self_exe;  /* halo-run itself: never writable; may be NULL */
	const char *const *policy_files; /* never writable */
	size_t n_policy_files;
	const char *const *own_outputs; /* halo-run's output files: denied like protected paths */
	size_t n_own_outputs;
	/* The caller's own terminal devices (macos_caller_ttys): readable, writable and
	 * ioctl-able by literal path; every other /dev/ttys* is denied. */
	const char *const *ttys;
	size_t n_ttys;
	/* Symlink resolution of the longest existing prefix (into out, n bytes): NULL
	 * means macos_path_resolve. Tests pass their own to get stable output. */
	int (*resolve)(const char *in, char *out, size_t n);
};

/* Build the profile per the recipe's section order: basics, reads, writes, network,
 * always-deny, protected paths (last). Every path of the policy or the run goes in as
 * a -D parameter; regexes are written into the text with every metacharacter escaped.
 * A path holding a double quote or a control byte (newline, ...) is refused.
 * Returns 0, or -EINVAL / -ENOMEM with the reason in e. */
int macos_profile_build(const struct macos_profile_in *in, struct macos_profile *out,
			struct halo_err *e);
void macos_profile_free(struct macos_profile *p);

/* The same in two steps, for a caller that keeps the plan (--dry-run): the profile's
 * filesystem rules added to p (plan_fs_rules: what is writable, protected, carved
 * out, halo-run's own, the host sockets), then the profile rendered from p's steps.
 * Same returns. */
int macos_profile_plan(const struct macos_profile_in *in, struct halo_plan *p, struct halo_err *e);
int macos_profile_render(const struct macos_profile_in *in, const struct halo_plan *p,
			 struct macos_profile *out, struct halo_err *e);

/* Write the profile as a loadable .sb file: the parameters as leading comment lines
 * ("; -D KEY=VALUE"), then the SBPL text. `note` (may be NULL) is one more comment. */
void macos_profile_write(const struct macos_profile *p, const char *note, FILE *out);

/* ---------------------------------------------------------------- SBPL lint */

/* Structural check of an SBPL text: balanced forms, terminated strings, (version 1)
 * first, only allow/deny forms, only known operations and filters with the argument
 * shapes this generator uses, no (allow default), every (param "X") among `defined`,
 * and no allow after the first deny other than (deny default). Returns 0, or -EINVAL
 * with "line L: reason" in why. Used by the tests, the fake sandbox-exec and the
 * launcher itself right before exec. */
int macos_sbpl_lint(const char *text, const char *const *defined, size_t n_defined, char *why,
		    size_t whylen);

/* ---------------------------------------------------------------- paths, regexes */

/* 0 when `path` is absolute and holds no double quote and no control byte (newline,
 * tab, DEL...; a C string cannot hold NUL); else -EINVAL with the reason in why. */
int macos_path_check(const char *path, char *why, size_t whylen);

/* realpath() of the longest existing prefix, the rest appended unchanged. Returns 0
 * (out holds the input unchanged when nothing resolves) or -ENAMETOOLONG. */
int macos_path_resolve(const char *in, char *out, size_t n);

/* /tmp, /var and /etc (and what is under them) as /private/...; others unchanged.
 * Returns 0 or -ENAMETOOLONG. */
int macos_path_private(const char *in, char *out, size_t n);

/* A protected name pattern (".env*", "secrets/", "*.pem") as an SBPL regex matching
 * any absolute path with a component (or component run) that matches it, and
 * everything beneath: letters as [Xx] classes (SBPL has no case-insensitive flag),
 * '*' and '?' as on Linux (within a name for name patterns; crossing '/' for patterns
 * with a '/'), "**" as any depth, classes kept. Returns 0, -EINVAL (quote, control
 * byte or an empty pattern) or -ENAMETOOLONG. */
int macos_glob_regex(const char *glob, char *out, size_t n);

/* An absolute path as a case-insensitive regex for it and everything beneath:
 * "^/[Uu]sers/..(/.*)?$" with every metacharacter escaped. Same returns. */
int macos_path_regex(const char *path, char *out, size_t n);

/* ---------------------------------------------------------------- launch */

/* Builds the command's environment once the proxy URL and TMPDIR are known (runner/
 * owns the environment rules). proxy_url is NULL when the command gets no proxy.
 * Returns a NULL-terminated malloc'd array of malloc'd strings (the launcher frees
 * it), or NULL with e set. */
typedef char **(*macos_env_fn)(void *arg, const char *proxy_url, const char *tmpdir,
			       struct halo_err *e);

/* Field names match struct linux_launch where the meaning is the same. */
struct macos_launch {
	const struct halo_policy *policy;
	const char *workspace; /* absolute, symlinks resolved */
	const char *pw_home;
	const char *env_home;
	const char *self_exe; /* halo-run: never writable, and the exec trampoline */
	const char *const *policy_files;
	size_t n_policy_files;
	const char *const *own_outputs; /* --audit...: neither readable nor writable inside */
	size_t n_own_outputs;
	char *const *argv;
	struct rlimits_set limits;
	bool quiet;
	struct plan_text *warnings;   /* as linux_launch's: the runner says them */
	struct halo_run_facts *facts; /* as linux_launch's; only timed_out is known here */
	bool unsandboxed;	      /* sandbox.mode: off: limits, environment, supervision only */
	macos_env_fn build_env;
	void *build_env_arg;
	const char *sandbox_exec; /* NULL: macos_sandbox_exec_path() */
	const char *tmp_base;	  /* where the per-run TMPDIR is made; NULL: the default */
};

/* The sandbox-exec to run: /usr/bin/sandbox-exec. Only a build compiled with
 * HALO_SANDBOX_EXEC_OVERRIDE (the portable test build; refused at compile time on
 * Apple) honours $HALO_TEST_SANDBOX_EXEC, so the tests can run a fake one. */
const char *macos_sandbox_exec_path(void);

/* The terminal devices of this process's stdin, stdout and stderr (ttyname), each
 * once, absolute under /dev/; none when no fd is a terminal. */
struct macos_ttys {
	char path[3][PATH_MAX];
	const char *v[3];
	size_t n;
};
void macos_caller_ttys(struct macos_ttys *t);

/* The running binary's absolute path (the trampoline sandbox-exec runs). */
int macos_self_exe(char *out, size_t n);

/* The default parent of the per-run TMPDIR: the user's temp dir ($TMPDIR when it is
 * an absolute directory, else /tmp), symlinks resolved. */
int macos_tmp_base(char *out, size_t n);

/* A running sandbox, driven in the same steps as linux/'s:
 *   macos_start → watch exit_fd and signal_fd (forward_signals when readable; kill on
 *   the wall-clock limit) → macos_finish once exit_fd is readable.
 * One sandbox per process at a time (the signal handlers are process-wide). */
struct macos_sandbox;

/* Make the per-run TMPDIR, the proxy listener on 127.0.0.1:0 and its secret, the
 * environment and the profile; fork; the child applies the limits, closes every fd
 * above 2 and execs sandbox-exec, which runs halo-run's trampoline, which says
 * "started" and execs the command. Returns once the trampoline has started: 0, or
 * -errno with e set when the sandbox could not be built — a profile sandbox-exec
 * refused, a missing sandbox-exec: a setup failure, and nothing ran. */
int macos_start(const struct macos_launch *l, struct macos_sandbox **out, struct halo_err *e);

int macos_sandbox_exit_fd(const struct macos_sandbox *sb);   /* readable: it ended */
int macos_sandbox_signal_fd(const struct macos_sandbox *sb); /* readable: forward */
void macos_sandbox_forward_signals(struct macos_sandbox *sb);
/* The wall-clock limit: kill the command's process group; finish reports the timeout. */
void macos_sandbox_kill(struct macos_sandbox *sb);

/* The proxy's listener (HTTP, non-blocking) and the secret clients must present as
 * the Basic password; the caller takes the fd. -1 when there is none (mode off). The
 * secret stays valid for the life of the process. */
int macos_sandbox_take_listener(struct macos_sandbox *sb, const char **secret);

/* Reap, kill what is left of the command's process group, remove the TMPDIR, and
 * say how the run ended in *out (as linux_finish: 0 ran, 1 explained in e, -errno).
 * Frees sb. */
int macos_finish(struct macos_sandbox *sb, struct halo_outcome *out, struct halo_err *e);

/* The plan: the sandbox-exec invocation, the profile and its parameters (with an
 * example port and TMPDIR), limits and what is not enforced (macos/plan.c). Returns 0
 * or -errno with e set; plan_free it either way. */
int macos_plan(const struct macos_launch *l, struct halo_plan *p, struct halo_err *e);

/* The trampoline sandbox-exec runs: args = { REPORT_FD, STDERR_FD, CMD, ARGS... }.
 * Puts the real stderr back on fd 2, tells the supervisor it started, execs CMD.
 * Returns only on a usage error (-EINVAL: the caller says so and exits with HALO_EXIT_SETUP). */
int macos_exec_child(int n, char **args);

/* What the macOS backend does not do, one line each (NULL-terminated), for
 * `halo-run doctor` and the README. */
const char *const *macos_gaps(void);

#endif
