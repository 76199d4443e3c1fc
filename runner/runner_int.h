/* Internal to runner/: the subcommands' entry points and the run's pieces. The options
 * and the policy loading every subcommand shares are in opts/opts.h. */
#ifndef HALO_RUNNER_INT_H
#define HALO_RUNNER_INT_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "linux/linux.h"
#include "policy/policy.h"
#include "rlimits/rlimits.h"
#include "events/events.h"
#include "launch/launch.h"
#include "opts/opts.h"
#include "report/report.h"
#include "runner/run.h"
#include "runner/runner.h"
#include "session/session.h"
#include "trust/trust.h"

/* Parse argv (after the subcommand word). Returns 0, or HALO_EXIT_SETUP after printing
 * the usage error. */
int runner_parse(int argc, char **argv, bool stop_at_command, struct runner_opts *o);

int runner_cmd_check(const struct runner_opts *o);
int runner_cmd_validate(const struct runner_opts *o);
int runner_cmd_policy(const struct runner_opts *o);

/* connect.c: `halo-run connect HOST PORT`, ssh's ProxyCommand inside the sandbox. */
int runner_cmd_connect(const struct runner_opts *o);

/* upstream.c: egress.upstreamProxy resolved from the caller's environment (once, at
 * launch; an error is printed and HALO_EXIT_SETUP returned), what the proxy is given
 * (NULL: direct), and one line describing it for check and --dry-run. */
int runner_upstream_settle(const struct halo_policy *p, struct policy_upstream *out);
const struct policy_upstream *runner_upstream(void);
/* Its addresses as looked up at launch (none when the lookup failed and nothing
 * needed them then). */
const struct policy_ipaddr *runner_upstream_addrs(size_t *n);
void runner_upstream_describe(const struct halo_policy *p, const struct policy_upstream *u,
			      char *buf, size_t n);
int runner_cmd_run(const struct runner_opts *o);
int runner_cmd_cache(const struct runner_opts *o);
int runner_cmd_index(const struct runner_opts *o);
/* index_cmd.c: the workspace index */ /* cache_cmd.c: list and clear caches */
/* render_cmd.c: `policy render` and `policy import`, and check's --harness lines. */
int runner_cmd_policy_render(const struct runner_opts *o);
int runner_cmd_policy_import(const struct runner_opts *o);
bool runner_harness_known(const char *name); /* a harness name or "all" */
void runner_check_harness(const struct runner_opts *o, const struct halo_policy *p,
			  const char *host, unsigned port, bool allow);

/* check_request.c: check's request line (egress.requestRules, TLS termination) for a
 * URL target whose host is allowed; returns the final allow. */
bool runner_check_request(const struct runner_opts *o, const struct halo_policy *p,
			  const char *host, const char *target, bool allow);
int runner_cmd_hook(const struct runner_opts *o); /* hook_cmd.c: a harness's tool event */
/* The first option given that `hook --wrap`'s rewritten line (and so the settings of
 * `policy render --hook`) would not carry, or NULL (hook_cmd.c). */
const char *runner_wrap_dropped_option(const struct runner_opts *o, bool oneoffs_carried);
/* runner/hook_fs.c: the hook's file-system callbacks (struct hook_ctx's exists,
 * read_file and resolve). */
bool runner_hook_exists(const char *abs);
int runner_hook_read_file(const char *abs, char *buf, size_t n);
int runner_hook_user_home(const char *user, char *out, size_t n);
int runner_hook_resolve(const char *abs, char *out, size_t n);
/* runner_hook_link_of: runner/run.h (a session's digest walks with it too). */
/* runner/hook_resolve.c: c's resolved lists (protected paths, home-set links, XDG
 * directories, lists and $ZDOTDIR into xdg_real[5], which the caller frees, PATH entries);
 * homes_real[2]
 * the homes resolved. 0 or -ENOMEM; runner_hook_resolve_free either way. */
struct hook_ctx;
int runner_hook_resolve_ctx(struct hook_ctx *c, const struct halo_policy *p,
			    const char *const *homes_real, char **xdg_real);
void runner_hook_resolve_free(struct hook_ctx *c);
/* runner/hook_own.c: c's own_* and cache_* (hook.h), halo-run's own files and places,
 * from what a launch from re's workspace uses: the policy files (runner_policy_layers)
 * and halo-run itself, its state (linux_own_places, the session directory), the
 * caches (runner_caches_plan, nothing made). 0 or -ENOMEM; runner_hook_own_free
 * either way. */
#define RUNNER_HOOK_OWN_RO     (2 * (RUNNER_MAX_POLICIES + 2))
#define RUNNER_HOOK_OWN_HIDDEN 16
struct runner_hook_own {
	char *ro[RUNNER_HOOK_OWN_RO], *hidden[RUNNER_HOOK_OWN_HIDDEN], *cache[4];
	const char *ro_what[RUNNER_HOOK_OWN_RO], *hidden_why[RUNNER_HOOK_OWN_HIDDEN];
	size_t n_ro, n_hidden;
};
int runner_hook_own_ctx(struct hook_ctx *c, struct runner_hook_own *own,
			const struct runner_env *re);
void runner_hook_own_free(struct runner_hook_own *own);
/* hook_walk.c: a content search's bounded walk (hook.h, find_protected). */
int runner_hook_find_protected(const struct halo_policy *p, const char *folder, const char *glob,
			       char *out, size_t n);
#ifndef RUNNER_MACOS
/* Where the hook's launch would start (its workspace, resolved, and homes): within the
 * trees that launch walks, find_protected asks its scan, not a bounded walk. NULL
 * workspace: none. The strings stay the caller's until the next call. */
void runner_hook_walk_launch(const char *workspace, const char *pw_home, const char *env_home);
/* hook.h's masked: what that launch masks (its scan, asked once per judgment). */
int runner_hook_masked(const struct halo_policy *p, const char *abs, char *out, size_t n);
#endif

/* halo-sh (shell.c): is argv[0] halo-sh? Then runner_shell_main runs /bin/sh with the
 * same arguments under the discovered policy. */
bool runner_is_shell(const char *argv0);
int runner_shell_main(int argc, char **argv);

void runner_usage(FILE *out);
/* getppid() as halo-run saw it first, before main (--die-with-parent's race check);
 * and whether halo-run had already been adopted by a reaper then, its parent gone
 * before it could look (runner/cli.c says how that is told). */
pid_t runner_parent_at_start(void);
bool runner_adopted_at_start(void);

/* What a fork leaves of a process's lineage (runner/lineage.c): ids as getsid/getpgid
 * read them (-1 when unreadable), and whether a job-control shell could have placed
 * this process in its group (a controlling terminal, the parent leading the session;
 * or the group's leader, alive, is the parent's child too). */
struct runner_lineage {
	pid_t self, parent, sid, parent_sid, pgid, parent_pgid;
	bool tty_job;
	pid_t leader_parent; /* the parent of the group's leader; -1: gone or unread */
};
void runner_lineage_read(struct runner_lineage *l);
/* True when the lineage says the parent that forked this process is gone: a reaper
 * adopted it (a session, or a process group, that is neither its own nor its parent's). */
bool runner_lineage_adopted(const struct runner_lineage *l);

/* Start the sandbox and run the one event loop (proxy, exit, signals, wall clock)
 * until it ends. Returns as linux_finish does. */
/* A start that failed: its outcome and exit (125, or 128 + the signal that stopped
 * it before the command ran: runner_launcher.interrupted_by). */
struct halo_outcome runner_start_failed_outcome(void);
int runner_start_failed_exit(void);
int runner_supervise(const struct runner_opts *o, const runner_launch *l, int *status,
		     struct halo_err *e);

/* plan_print.c, plan_json.c: --dry-run's one printer of a plan, as text or JSON
 * (0 or -ENOMEM). */
void runner_plan_print(const struct halo_plan *p, FILE *out);
int runner_plan_json(const struct halo_plan *p, FILE *out);

/* Say what the launch could not enforce ("halo-run: LINE"), unless --quiet. */
void runner_say_warnings(const struct runner_opts *o, struct plan_text *w);
/* runner/limits_said.c: one line for each limit the command hit (cpu, file size,
 * processes), naming its policy key (runner_limit_key, events/events.h). */
/* runner/ssh_identity.c: a line for each identity file GIT_SSH_COMMAND names that the
 * sandbox cannot see (the host's /tmp, a protected path). */
void runner_ssh_identity_note(char *const *envp, const struct halo_policy *p, const char *workspace,
			      const char *home);
void runner_say_limits(const struct rlimits_set *r, struct halo_outcome out,
		       const struct halo_run_facts *f);

/* profile.c: `halo-run profile --os macos` prints the Seatbelt profile; the hidden
 * __exec subcommand is the macOS launcher's trampoline (see macos/exec_child.c). */
int runner_cmd_profile(const struct runner_opts *o);
int runner_cmd_exec_child(const struct runner_opts *o);

/* tls_setup.c: TLS termination at launch, for a policy with credentials or request
 * rules (nothing otherwise, nor on --dry-run): the CA made, the bundle handed to the
 * launcher, 125 with the reason (a missing ${NAME}) when it cannot be. runner_tls_env
 * fills the variables that make the tools trust it (none without a CA). */
struct proxy_tls;
int runner_tls_prepare(const struct runner_opts *o, const struct halo_policy *p, runner_launch *l);
struct proxy_tls *runner_tls(void);
#define RUNNER_TLS_ENV_MAX 12
size_t runner_tls_env(struct policy_kv *out, size_t max);
/* The JVM's trust-store properties for JAVA_TOOL_OPTIONS, or NULL. */
const char *runner_tls_java_options(void);
void runner_tls_release(void);

/* home_note.c: one stderr line when a writable tree is the home or holds it. */
void runner_home_note(const struct runner_opts *o, const struct runner_env *re);
/* Around the launch (its scan): when the home is the workspace and the launch takes
 * more than a second (a large home's first scan), one line says what it is doing. */
void runner_home_scan_begin(void);
void runner_home_scan_end(void);

#ifdef RUNNER_MACOS
/* run_macos.c: the macOS half of filling a launch (self path, environment builder). */
int runner_macos_launch_fill(runner_launch *l, char *self, size_t self_len);
#endif

#endif
