/* Internal to runner/: parsed command line and the shared policy loading. */
#ifndef HALO_RUNNER_INT_H
#define HALO_RUNNER_INT_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "linux/linux.h"
#include "policy/policy.h"
#include "rlimits/rlimits.h"
#include "launch/launch.h"
#include "runner/runner.h"

#define RUNNER_MAX_POLICIES 16

/* A repeatable one-off flag's values (--allow, --writable, --env, --host-port). */
#define RUNNER_MAX_ONEOFF 64
struct runner_multi {
	const char *v[RUNNER_MAX_ONEOFF];
	size_t n;
};

struct runner_opts {
	const char *policies[RUNNER_MAX_POLICIES];
	size_t n_policies;
	struct runner_multi allow, writable, env, host_port; /* policy/oneoff.c */
	const char *workspace;
	const char *limit_spec;
	const char *timeout;
	const char *audit; /* JSON Lines file, one record per egress decision */
	bool dry_run;
	bool quiet;
	bool verbose;
	bool json;
	const char *method;  /* check -X METHOD: the request judged by egress.requestRules */
	bool resolve;	     /* check --resolve: look the name up as the proxy would */
	const char *os;	     /* profile --os macos|linux; policy render --os linux|macos|windows */
	const char *harness; /* policy render, check (or all), hook: --harness NAME */
	const char *out_dir; /* policy render --out DIR */
	const char *pin;     /* policy render --version V: the harness version pinned */
	const char *from;    /* policy import --from KIND */
	bool lossy;	     /* policy import --lossy: nearest tighter form, each printed */
	const char *format;  /* report --format text|markdown|json */
	const char *summary_md;	     /* run: the markdown report of this run, written at exit */
	bool fail_on_deny;	     /* run, report: HALO_EXIT_DENIED when something was denied */
	const char *events;	     /* run: JSON Lines of events, FILE or fd:N (events.c) */
	const char *decider;	     /* run: /bin/sh -c command asked about unmatched hosts */
	const char *decider_timeout; /* run: per question (duration), default 5 s */
	bool die_with_parent;	     /* run: PR_SET_PDEATHSIG on the supervisor */
	const char *session;	     /* run: --session NAME (runner/session*.c) */
	bool wrap;		     /* hook --wrap: answer a shell call with it run in halo-run */
	bool render_hook;	     /* policy render --hook: the settings that install the hook */
	char **rest;		     /* command (run) or operands (check, validate) */
	int n_rest;
};

/* Everything a subcommand needs once the policy is loaded. */
/* managed.c: /etc/halo/managed.{yaml,json}, read when it exists and can be trusted. */
#define RUNNER_MANAGED_DIR "/etc/halo"
struct runner_managed {
	char path[64]; /* "" when there is none */
	char *buf;
	size_t len;
};
/* 0 (m->path "" when there is no managed file), or HALO_EXIT_SETUP after saying why
 * the file cannot be trusted or read. */
int runner_managed_read(struct runner_managed *m);
void runner_managed_release(struct runner_managed *m);

struct runner_env {
	char pw_home[4096];
	const char *env_home;
	char workspace[4096];
	char discovered[4096]; /* the discovered file, "" for embedded */
	char managed[64];      /* the managed layer's file, "" for none */
	const char *paths[RUNNER_MAX_POLICIES];
	size_t n_paths;
	struct halo_policy *policy;
};

/* Parse argv (after the subcommand word). Returns 0, or HALO_EXIT_SETUP after printing
 * the usage error. */
int runner_parse(int argc, char **argv, bool stop_at_command, struct runner_opts *o);

/* Load the policy of --policy files or discovery; prints every error and warning.
 * Returns 0 or HALO_EXIT_SETUP. */
int runner_load_policy(const struct runner_opts *o, bool need_workspace, struct runner_env *re);
/* A --writable value as the launch takes it: relative ones made absolute against
 * `cwd` (load.c); -ENAMETOOLONG when it does not fit. */
int runner_writable_abs(const char *w, const char *cwd, char *out, size_t n);
void runner_env_release(struct runner_env *re);

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
int runner_cmd_doctor(const struct runner_opts *o); /* doctor.c */
int runner_cmd_verify(const struct runner_opts *o); /* verify.c */
int runner_cmd_probe(const struct runner_opts *o);  /* probes.c: verify's probe runner */
int runner_cmd_cache(const struct runner_opts *o);
int runner_cmd_index(const struct runner_opts *o);
/* index_cmd.c: the workspace index */ /* cache_cmd.c: list and clear caches */
/* render_cmd.c: `policy render` and `policy import`, and check's --harness lines. */
int runner_cmd_policy_render(const struct runner_opts *o);
int runner_cmd_policy_import(const struct runner_opts *o);
bool runner_harness_known(const char *name); /* a harness name or "all" */
void runner_check_harness(const struct runner_opts *o, const struct halo_policy *p,
			  const char *host, unsigned port, bool allow);

int runner_cmd_report(const struct runner_opts *o); /* report_cmd.c: the audit, read */

/* report_cmd.c, for CI: refuse --summary-md without --audit (before the launch), and
 * at exit apply --fail-on-deny to *status and write --summary-md from the records the
 * run appended to the audit (from audit_start on), through summary_fd (opened before
 * the launch). -EIO when the report could not be written (said; *status 125). */
struct proxy;
int runner_ci_check(const struct runner_opts *o);
int runner_ci_finish(const struct runner_opts *o, const struct proxy *px, int audit_fd,
		     off_t audit_start, int summary_fd, int *status);

/* check_request.c: check's request line (egress.requestRules, TLS termination) for a
 * URL target whose host is allowed; returns the final allow. */
bool runner_check_request(const struct runner_opts *o, const struct halo_policy *p,
			  const char *host, const char *target, bool allow);
int runner_cmd_hook(const struct runner_opts *o); /* hook_cmd.c: a harness's tool event */
/* session_cmd.c: stop the session NAME if it runs, saying nothing on stdout. 0 when it
 * is gone (or never was), else 1 after a line on stderr. */
int runner_session_stop_quiet(const char *name);
/* The first option given that `hook --wrap`'s rewritten line (and so the settings of
 * `policy render --hook`) would not carry, or NULL (hook_cmd.c). */
const char *runner_wrap_dropped_option(const struct runner_opts *o, bool oneoffs_carried);
/* runner/hook_fs.c: the hook's file-system callbacks (struct hook_ctx's exists,
 * read_file and resolve). */
bool runner_hook_exists(const char *abs);
int runner_hook_read_file(const char *abs, char *buf, size_t n);
int runner_hook_resolve(const char *abs, char *out, size_t n);

/* Sessions (session.c: the call, list and stop; session_sup.c: the supervisor that
 * outlives the first call). runner_session_run replaces the launch of a run with
 * --session: it joins the named session, starting it first when there is none. */
int runner_cmd_session(const struct runner_opts *o);
int runner_session_run(const struct runner_opts *o, const runner_launch *l);
/* The control directory, made if missing (every launch hides it inside: a session
 * started later keeps its socket there), or NULL when it is not ours. */
const char *runner_session_dir_made(char *out, size_t n);
/* What fixes a session's sandbox: compared at every call (refused when it differs). */
struct runner_session_id {
	char name[65];
	char policy[65]; /* SHA-256 of the effective policy (policy_to_json), hex */
	char *options;	 /* the launch options that shape the sandbox, as text */
	char workspace[4096];
	long long idle_seconds;
	/* The protected files a fresh launch would mask now (linux_session_protected):
	 * a call may bring none that the session's start did not. */
	char **prot;
	size_t n_prot;
};
/* The session's supervisor, in the daemon the first call forks: start the sandbox (l
 * with session set), tell ready_fd, serve calls on listen_fd until stopped or idle.
 * Returns the daemon's exit status. */
int runner_session_serve(const struct runner_opts *o, const runner_launch *l, int listen_fd,
			 int ready_fd, const struct runner_session_id *id, const char *sock_path);

/* halo-sh (shell.c): is argv[0] halo-sh? Then runner_shell_main runs /bin/sh with the
 * same arguments under the discovered policy. */
bool runner_is_shell(const char *argv0);
int runner_shell_main(int argc, char **argv);

/* decider.c: --decider's process and its questions on the supervisor's loop. start
 * after the sandbox (the decider runs outside it); options hands the proxy its ask;
 * stop after the proxy is destroyed. */
struct runner_decider;
struct proxy_poller;
int runner_decider_start(const struct runner_opts *o, struct proxy_poller *pl, int events_fd,
			 const char *session, struct runner_decider **out, struct halo_err *e);
void runner_decider_options(struct runner_decider *dc, struct proxy_options *po);
/* Where halo-run's lines about the decider go (default stderr; a session's supervisor
 * gives the pipe that reaches its running calls). */
void runner_decider_log_to(struct runner_decider *dc, int fd);
void runner_decider_stop(struct runner_decider *dc);
/* --decider-timeout (NULL: 5 s) in ms; 0, or -EINVAL with e set. */
int runner_decider_timeout(const char *spec, unsigned *ms, struct halo_err *e);

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

/* The password database's home directory of uid (absolute) into out. Returns 0 or
 * -ENOENT. See pwhome.c for the fast path and when getpwuid() answers instead. */
int runner_pw_home(uid_t uid, char *out, size_t n);
/* Parts of the fast path, for tests: does nsswitch.conf text consult "files" first for
 * passwd, with nothing that could let another source answer? And the home of uid in
 * /etc/passwd text: 0, -ENOENT (absent) or -EINVAL (something glibc may read otherwise). */
bool runner_passwd_files_first(const char *nsswitch);
int runner_passwd_home_in(const char *passwd, uid_t uid, char *out, size_t n);

/* Start the sandbox and run the one event loop (proxy, exit, signals, wall clock)
 * until it ends. Returns as linux_finish does. */
int runner_supervise(const struct runner_opts *o, const runner_launch *l, int *status,
		     struct halo_err *e);

/* plan_print.c, plan_json.c: --dry-run's one printer of a plan, as text or JSON
 * (0 or -ENOMEM). */
void runner_plan_print(const struct halo_plan *p, FILE *out);
int runner_plan_json(const struct halo_plan *p, FILE *out);
#ifndef RUNNER_MACOS
/* doctor_plan.c: the plan of a plain launch of p (the command `true`) in workspace,
 * with the scan and filesystem steps or (with_fs false) without. As linux_plan. */
int runner_plan_of(const struct halo_policy *p, const char *workspace, const char *pw_home,
		   bool with_fs, struct halo_plan *out, struct halo_err *e);
#endif
/* loop.c, shared with the session's supervisor: the --audit file (opened before the
 * launch, so that the sandbox masks it), the proxy on the sandbox's listeners, and
 * the supervisor's process settings (SIGPIPE ignored, the fd limit raised). */
struct stat;
struct proxy_poller;
int runner_open_audit(const char *path, struct stat *st, struct halo_err *e);
/* What a run adds to its proxy beyond the listeners: the --events fd (-1: none),
 * the events' session name, the --decider (NULL: none). */
struct runner_decider;
struct runner_proxy_extra {
	int events_fd;
	size_t *events_lost; /* NULL: not counted */
	const char *session;
	struct runner_decider *dc;
};
int runner_start_proxy(const struct runner_opts *o, const runner_launch *l, runner_sandbox *sb,
		       struct proxy_poller *pl, int audit_fd, int log_fd,
		       const struct runner_proxy_extra *x, struct proxy **px);
void runner_supervisor_settings(void);

/* Say what the launch could not enforce ("halo-run: LINE"), unless --quiet. */
void runner_say_warnings(const struct runner_opts *o, struct plan_text *w);
/* One line of halo-run's own on stderr, "halo-run: " and the text: names and paths in
 * it may come from inside the sandbox, so every byte that is not printable ASCII is
 * escaped (policy_printable) and can neither drive the terminal nor forge a line. */
void runner_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
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
