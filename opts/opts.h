/* opts/ — what every subcommand shares, below them all: the parsed command line
 * (struct runner_opts, filled by runner/cli.c), the policy it loads (load.c: --policy
 * files or discovery, the managed layer of managed.c, the password home of pwhome.c)
 * and halo-run's one line on stderr (say.c). The capabilities (session/, trust/,
 * report/, events/) take these from here, not from runner/. */
#ifndef HALO_OPTS_H
#define HALO_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "exit/exit.h"
#include "policy/policy.h"

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
	const char *mode; /* --mode: sandbox.mode over every file (policy/oneoff.c) */
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
	const char *session;	     /* run: --session NAME (session/) */
	bool learn;		     /* halo-run learn: default denials allowed and recorded */
	bool wildcards;		     /* learn --wildcards: "*.x" for names below one parent */
	bool wrap;		     /* hook --wrap: answer a shell call with it run in halo-run */
	bool render_hook;	     /* policy render --hook: the settings that install the hook */
	const char *render_proxy;    /* policy render --proxy PORT[,SOCKSPORT] */
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

/* Load the policy of --policy files or discovery; prints every error and warning.
 * Returns 0 or HALO_EXIT_SETUP. */
int runner_load_policy(const struct runner_opts *o, bool need_workspace, struct runner_env *re);
/* A --writable value as the launch takes it: relative ones made absolute against
 * `cwd` (load.c); -ENAMETOOLONG when it does not fit. */
int runner_writable_abs(const char *w, const char *cwd, char *out, size_t n);
void runner_env_release(struct runner_env *re);
/* The policy's files in layer order, the managed file first: what a launch keeps
 * read-only inside (linux/scan.c, the plan's "policy file: never writable", the macOS
 * profile) and what `halo-run hook` refuses a harness's tools to write. out holds
 * RUNNER_MAX_POLICIES + 1; returns how many. */
size_t runner_policy_layers(const struct runner_env *re, const char **out);
/* load.c: the loader's context (with its file-system callbacks) for another load. */
struct policy_ctx;
void runner_policy_ctx(struct policy_ctx *ctx, const char *pw_home, const char *env_home,
		       const char *workspace);

/* The password database's home directory of uid (absolute) into out. Returns 0 or
 * -ENOENT. See pwhome.c for the fast path and when getpwuid() answers instead. */
int runner_pw_home(uid_t uid, char *out, size_t n);
/* Where the caller's $ZDOTDIR may be once zsh has started: the environment's and
 * every directory the system's zshenv and .zshenv assign (opts/zdotdir.c), a colon
 * list; NULL when none. runner_zdotdir_unknown: one assignment could not be told. */
const char *runner_zdotdir(void);
bool runner_zdotdir_unknown(void);
/* Parts of the fast path, for tests: does nsswitch.conf text consult "files" first for
 * passwd, with nothing that could let another source answer? And the home of uid in
 * /etc/passwd text: 0, -ENOENT (absent) or -EINVAL (something glibc may read otherwise). */
bool runner_passwd_files_first(const char *nsswitch);
int runner_passwd_home_in(const char *passwd, uid_t uid, char *out, size_t n);

/* One line of halo-run's own on stderr, "halo-run: " and the text: names and paths in
 * it may come from inside the sandbox, so every byte that is not printable ASCII is
 * escaped (policy_printable) and can neither drive the terminal nor forge a line. */
void runner_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
