/* Internal to `halo-run verify` (verify.c runs and reports, verify_plan.c decides what
 * to try from the policy and the seccomp table, and how to judge what happened). */
#ifndef HALO_RUNNER_VERIFY_INT_H
#define HALO_RUNNER_VERIFY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "plan/plan.h"
#include "policy/policy.h"

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
	char secret[80];    /* planted in files and in the environment */
	char tag[20];	    /* random, in the names of what verify creates */
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

/* Judge every row from its raw answer and the host-side evidence; removes what the
 * probes created on the host. Rows without an answer fail. */
void verify_judge(struct verify *v);

/* Add one row (printf-style probe text). Returns the row, or NULL on ENOMEM. */
struct vrow *verify_add(struct verify *v, enum vcheck check, const char *expected, const char *spec,
			const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
