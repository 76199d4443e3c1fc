/* Internal to runner/: `halo-run doctor` (what this machine enforces, where the policy
 * comes from, the agent harnesses' own sandbox settings) and `halo-run verify` (escapes
 * tried from inside the sandbox by halo-run's own binary, `halo-run __probe`). */
#ifndef HALO_RUNNER_DOCTOR_H
#define HALO_RUNNER_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "policy/policy.h"

/* ---------------------------------------------------------------- harness posture */

/* A harness settings file is read only when it is a regular file of at most this
 * many bytes, opened O_NONBLOCK|O_NOFOLLOW; it is never written, and no message ever
 * quotes what it contains. */
#define POSTURE_MAX_FILE_BYTES (1024 * 1024)

/* Read `path` under the rules above. Returns 0 (the caller frees *buf, NUL-terminated),
 * -ENOENT when there is no such file, or another -errno with the reason in why ("is a
 * symbolic link: not followed", "is not a regular file", "is larger than 1 MiB"). */
int posture_read(const char *path, char **buf, size_t *len, char *why, size_t whylen);

/* Codex config.toml, read with a strict TOML subset reader: `hit` is called for every
 * sandbox_mode = "danger-full-access" at the top level (in_profile false) or in a
 * [profiles.NAME] table however it is spelled (in_profile true), with its line.
 * Returns 0, or -EINVAL with "line N: <what>" in why (never the file's text). */
typedef void (*posture_toml_hit_fn)(void *arg, unsigned line, bool in_profile);
int posture_codex_scan(const char *buf, size_t len, posture_toml_hit_fn hit, void *arg, char *why,
		       size_t whylen);

/* Gemini CLI settings.json (JSON with comments). *found gets these bits. */
enum {
	POSTURE_GEMINI_TOOLS_SANDBOX_OFF = 1,  /* "tools": {"sandbox": false} */
	POSTURE_GEMINI_LEGACY_SANDBOX_OFF = 2, /* top-level "sandbox": false (older layout) */
};
int posture_gemini_scan(const char *buf, size_t len, unsigned *found, char *why, size_t whylen);

/* Cursor sandbox.json: *off when "type" is "insecure_none". */
int posture_cursor_scan(const char *buf, size_t len, bool *off, char *why, size_t whylen);

/* Check every harness whose files or variables are present: `home` is $HOME, `cwd`
 * the directory doctor runs in (for a per-repository Cursor sandbox.json), `get` looks
 * variables up. emit(arg, harness, problem, fix) once per finding; returns how many. */
typedef void (*posture_emit_fn)(void *arg, const char *harness, const char *problem,
				const char *fix);
size_t posture_check(const char *home, const char *cwd, const char *(*get)(const char *name),
		     posture_emit_fn emit, void *arg);

/* ---------------------------------------------------------------- the probe runner */

/* The word verify puts after `__probe`: the runner refuses to start without it (and
 * without HALO_SANDBOX=1), so that nobody runs the probes by accident. */
#define PROBE_TOKEN "from-verify"

/* Kinds of probe the runner knows, each "KIND:PARAM" on its command line:
 *   read:PATH  write:PATH  create:PATH  env:NAME  tcp4:PORT  tcp6:PORT  udp4:PORT
 *   udp6:PORT  unix:NAME  proxy:NETNS_INO:HOST:PORT  sys:NAME  kill:PID  procmem:PID
 *   fd:N  fds:  rlimit:NAME  status:FIELD  netns:INO  ifaces:  hostname:  shm:ID
 * The runner prints one line per probe, "INDEX RESULT", RESULT being "ok",
 * "errno=NAME", "killed=SIGNAME", "value=TEXT" or "setup-failed". Every attempt is
 * harmless even outside a sandbox: invalid arguments, throwaway children, files it
 * creates only under names verify chose and removes. */
int runner_probe_main(int n, char **args);

/* The system calls the runner can try (sys:NAME), each tied to the seccomp table row
 * whose errno it expects: `row` is the row's name and `match` a substring of its
 * condition text ("" = the first row of that name). row NULL: a non-native
 * architecture call, which the filter answers by killing the process. */
struct probe_sys_info {
	const char *name;
	const char *row;
	const char *match;
};
const struct probe_sys_info *probe_sys_list(size_t *n);

/* Try the named system call probe (probes_sys.c): 0, or -1 with errno set, or
 * PROBE_SYS_UNKNOWN for a name not in the list. */
#define PROBE_SYS_UNKNOWN (-2L)
long probe_sys_try(const char *name);

/* The trust subcommands (runner/cli.c's table; stand-ins in runner/portable.c for the
 * macOS code path). */
struct runner_opts;
struct halo_plan;
int runner_cmd_doctor(const struct runner_opts *o); /* doctor.c */
int runner_cmd_verify(const struct runner_opts *o); /* verify.c */
int runner_cmd_probe(const struct runner_opts *o);  /* probes.c: verify's probe runner */

/* doctor_plan.c: the plan of a plain launch of p (the command `true`) in workspace,
 * with the scan and filesystem steps or (with_fs false) without. As linux_plan
 * (Linux only). */
int runner_plan_of(const struct halo_policy *p, const char *workspace, const char *pw_home,
		   bool with_fs, struct halo_plan *out, struct halo_err *e);

/* proxy_state.c: the state file of a running `halo-run proxy`, written at its start
 * and removed at its exit (runner/proxy_cmd.c), listed by doctor (live ones only). */
int runner_proxy_state_write(char *const *listeners, size_t n, char *path, size_t plen);
void runner_proxy_state_remove(const char *path);
void runner_proxy_state_report(FILE *out);

#endif
