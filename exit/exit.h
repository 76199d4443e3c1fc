/* halo-run's outcomes and the one place they become exit codes (minijail's style:
 * libminijail.h names MINIJAIL_ERR_* once). A neutral header: the launchers (linux/,
 * macos/) include it to report how a run ended as a struct halo_outcome, and the
 * processes they fork to pick their own _exit status; runner/ turns the outcome into
 * the number. No number of halo-run's own is written anywhere else. */
#ifndef HALO_RUNNER_EXIT_H
#define HALO_RUNNER_EXIT_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>

enum halo_outcome_kind {
	HALO_OUTCOME_EXITED,   /* the command exited; value is its status */
	HALO_OUTCOME_SIGNALED, /* the command died of signal `value` */
	HALO_OUTCOME_TIMEOUT,  /* the wall-clock limit was hit */
	HALO_OUTCOME_SETUP,    /* policy or usage error, the sandbox could not be built */
	HALO_OUTCOME_NOEXEC,   /* the command was found but could not be executed */
	HALO_OUTCOME_NOTFOUND, /* the command was not found */
	/* --fail-on-deny: the command exited 0 but egress was denied. Below xargs's
	 * 123-127 and timeout's 124-125, above sysexits' 64-78 and apt's 100. */
	HALO_OUTCOME_DENIED,
};

struct halo_outcome {
	enum halo_outcome_kind kind;
	int value;
};

static inline struct halo_outcome halo_outcome_of(enum halo_outcome_kind kind, int value)
{
	return (struct halo_outcome){.kind = kind, .value = value};
}

/* What the launcher saw of the run beyond its outcome, for --events: the limits the
 * kernel reported hitting and the filesystem refusals it could count. Filled by the
 * launcher's finish when the launch names one (linux_launch.facts); zero otherwise. */
#define HALO_FACT_PATH	512
#define HALO_FACT_LEARN (64 * 1024)
struct halo_run_facts {
	bool timed_out;		       /* the wall-clock limit killed the sandbox */
	long long oom_kills;	       /* the memory cgroup's OOM killer ended processes */
	long long pids_max_hits;       /* forks the pids cgroup refused (limits.processes) */
	long long fs_refusals;	       /* changes the broker refused (git hooks, config) */
	char fs_first[HALO_FACT_PATH]; /* the first of them, as the broker named it */
	/* halo-run learn: the broker's notes of refused writes as sent (learn.h's
	 * learn_record_writes_parse reads them); 0 bytes when there was no broker. */
	char learn_notes[HALO_FACT_LEARN];
	size_t learn_notes_len;
};

/* exec failed with errno err: not found (ENOENT) or not executable (anything else). */
static inline struct halo_outcome halo_outcome_exec(int err)
{
	return halo_outcome_of(err == ENOENT ? HALO_OUTCOME_NOTFOUND : HALO_OUTCOME_NOEXEC, err);
}

/* A waitpid() status: exited or killed by a signal; anything else is halo-run's
 * failure to follow its child. */
static inline struct halo_outcome halo_outcome_wait(int ws)
{
	if (WIFEXITED(ws))
		return halo_outcome_of(HALO_OUTCOME_EXITED, WEXITSTATUS(ws));
	if (WIFSIGNALED(ws))
		return halo_outcome_of(HALO_OUTCOME_SIGNALED, WTERMSIG(ws));
	return halo_outcome_of(HALO_OUTCOME_SETUP, 0);
}

/* The mapping: the command's own status, 128+N for signal N, and halo-run's own
 * failures like timeout(1) and container runtimes (see DESIGN.md, "Exit codes"). */
static inline int halo_exit_code(struct halo_outcome o)
{
	static const int own[] = {
	    [HALO_OUTCOME_TIMEOUT] = 124,  [HALO_OUTCOME_SETUP] = 125,	[HALO_OUTCOME_NOEXEC] = 126,
	    [HALO_OUTCOME_NOTFOUND] = 127, [HALO_OUTCOME_DENIED] = 122,
	};

	if (o.kind == HALO_OUTCOME_EXITED)
		return o.value & 0xff;
	if (o.kind == HALO_OUTCOME_SIGNALED)
		return 128 + o.value;
	return own[o.kind];
}

/* The signals halo-run forwards to the command (both launchers): what a terminal or a
 * job control sends to halo-run reaches the command, and ends it as 128+N. The
 * terminating ones also end a launch that has not started the command yet (a Ctrl-C
 * during the workspace walk: linux/scan_pool.c). */
#define HALO_TERMINATING_SIGNALS SIGINT, SIGTERM, SIGHUP, SIGQUIT
#define HALO_FORWARDED_SIGNALS	 HALO_TERMINATING_SIGNALS, SIGUSR1, SIGUSR2, SIGWINCH

/* halo-run's own outcomes by number, for runner/'s returns and _exit() calls. */
#define HALO_EXIT_OF(kind) halo_exit_code(halo_outcome_of(kind, 0))
#define HALO_EXIT_TIMEOUT  HALO_EXIT_OF(HALO_OUTCOME_TIMEOUT)
#define HALO_EXIT_SETUP	   HALO_EXIT_OF(HALO_OUTCOME_SETUP)
#define HALO_EXIT_NOEXEC   HALO_EXIT_OF(HALO_OUTCOME_NOEXEC)
#define HALO_EXIT_NOTFOUND HALO_EXIT_OF(HALO_OUTCOME_NOTFOUND)
#define HALO_EXIT_DENIED   HALO_EXIT_OF(HALO_OUTCOME_DENIED)

#endif
