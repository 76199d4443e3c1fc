/* Internal to `halo-run verify` (verify.c runs and reports, verify_plan.c decides what
 * to try from the policy and the seccomp table, and how to judge what happened). */
#ifndef HALO_RUNNER_VERIFY_INT_H
#define HALO_RUNNER_VERIFY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "plan/plan.h"
#include "policy/policy.h"

struct runner_opts;

/* How a row's result is judged. */
enum vcheck {
	V_REFUSED,	   /* the attempt failed (any errno, or the probe was killed) */
	V_EXACT,	   /* the result is exactly `want` (errno=EPERM, killed=SIGSYS) */
	V_VALUE,	   /* value=`want` */
	V_AT_MOST,	   /* value is a number <= limit */
	V_NOT_ON_HOST,	   /* create: refused, or made only inside (not found on the host) */
	V_ON_HOST,	   /* create: must succeed and appear on the host (a control) */
	V_NOTHING_ARRIVED, /* a datagram: the host's socket must have received nothing */
	V_SKIP,		   /* not applicable to this policy or machine */
};

enum vres { R_PASS, R_FAIL, R_SKIP };

struct vrow {
	char probe[128];   /* what is tried, in words */
	char expected[64]; /* in words */
	char *spec;	   /* KIND:PARAM for the probe runner (heap); NULL: nothing to run */
	enum vcheck check;
	char want[64];
	long long limit;
	char *host_path; /* create rows: the file to look for (and remove) on the host */
	int host_fd;	 /* a listener of ours: anything arriving there is a FAIL */
	char got[160];	 /* the runner's raw answer, then the words shown */
	bool home;	 /* probed by the second launch, in a temporary home (verify_home.c) */
	enum vres res;
};

struct verify {
	struct vrow *rows;
	size_t n, cap;
	const struct halo_policy *p;
	/* The plan of the launch verify makes (runner_plan_of, scan included): what is
	 * writable, which limits hold and how, whether the guard is on. */
	struct halo_plan plan;
	const char *home;   /* $HOME (or the password database's) */
	char ws[4096];	    /* the temporary workspace */
	char home_ws[4096]; /* the temporary home of the home set's launch, or "" */
	/* The real workspace (verify_ws.c): its rows are rows[ws_from..n) (none when
	 * ws_from == n), probed by a launch there with a runner in runner_dir. */
	char real_ws[4096];
	size_t ws_from;
	char runner_dir[64];
	char secret[80]; /* planted in files and in the environment */
	char tag[20];	 /* random, in the names of what verify creates */
	pid_t self;
	unsigned long long netns_ino;
	unsigned long long pidns_ino;
	int tcp4, tcp6, udp4, udp6, unix_fd, target4; /* host-side sockets, -1 if none */
	unsigned port_tcp4, port_tcp6, port_udp4, port_udp6, port_target4;
	char unix_name[64];
	int shm_id;
	int leak_fd;
};

/* The rows of the command's own process (verify_proc.c): environment, hostname,
 * no_new_privs, seccomp, capabilities, descriptors, ipc and pid isolation; the
 * limits; one probe per system call of the deny table. 0 or -ENOMEM. */
int verify_plan_layers(struct verify *v);
int verify_plan_limits(struct verify *v);
int verify_plan_syscalls(struct verify *v);
/* A row whose runner spec is printf-formatted. */
struct vrow *verify_add_spec(struct verify *v, enum vcheck check, const char *expected,
			     const char *probe, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* verify_home.c: the temporary workspace (in $TMPDIR or /tmp; 0 or -1, said on
 * stderr), and the removal of a tree verify made (never following a link, never
 * crossing into a mount; "" is nothing). */
int verify_make_workspace(struct verify *v);
void verify_remove_tree(const char *ws);

/* The home persistence set's rows (verify_home.c): made in a temporary home (home_ws),
 * probed by a second launch whose workspace and HOME it is. 0 or -errno. */
int verify_plan_home(struct verify *v);

/* Add every row for this policy and machine (verify.c has set up the sockets, the
 * workspace and the secret). Returns 0 or -ENOMEM. */
int verify_plan(struct verify *v);

/* One launch of the probe runner: its exit status and what it said. */
#define VERIFY_MAX_MESSAGES 20
struct run {
	int status;			     /* halo-run's exit status, -1 unknown */
	char *messages[VERIFY_MAX_MESSAGES]; /* the launcher's stderr lines worth showing */
	size_t n_messages;
};
/* Which rows a launch probes (rows[from..to)), in which workspace, with the probe
 * runner copied into runner_dir. */
struct launch_of {
	const char *ws, *runner_dir;
	size_t from, to;
	bool home; /* the home set's launch: HOME is ws, and only rows[].home are probed */
};
/* verify.c: run that launch, its answers into the rows (0, or -1 said on stderr); the
 * row of the launch itself, inserted at rows[at] (0 or -ENOMEM). */
int verify_run_probes(const struct runner_opts *o, struct verify *v, const struct launch_of *at,
		      struct run *run);
int verify_launch_row(struct verify *v, const struct run *run, size_t at, const char *what);
/* verify_report.c: the table (text, or JSON for --json) under the policy's source,
 * and the rows counted by result (c[R_PASS], c[R_FAIL], c[R_SKIP]). */
void verify_print_text(const struct verify *v, const struct run *run, const char *source);
void verify_print_json(const struct verify *v, const struct run *run, const char *source);
void verify_count(const struct verify *v, size_t c[3]);

/* The rows of the real workspace (verify_ws.c): every protected file and guard
 * target a fresh walk finds there. 0 (rows to probe), 1 (a row says why there is
 * nothing to launch), -ENOMEM. */
int verify_plan_workspace(const struct runner_opts *o, struct verify *v);
/* All of it: rows, launch, judgement, its launch row; its messages join run's. 0, or
 * -1 (said on stderr). */
int verify_check_workspace(const struct runner_opts *o, struct verify *v, struct run *run);

/* Judge rows [from, to) from their raw answer and the host-side evidence; removes what the
 * probes created on the host. Rows without an answer fail. */
void verify_judge_rows(struct verify *v, size_t from, size_t to);

/* Add one row (printf-style probe text). Returns the row, or NULL on ENOMEM. */
struct vrow *verify_add(struct verify *v, enum vcheck check, const char *expected, const char *spec,
			const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
