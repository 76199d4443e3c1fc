/* Shared between the supervisor side (launch.c, supervise.c) and the sandbox's
 * init (init.c). */
#ifndef HALO_LINUX_LAUNCH_INT_H
#define HALO_LINUX_LAUNCH_INT_H

#include <stdbool.h>
#include <sys/types.h>

#include "linux/linux_int.h"

/* Pipes between the supervisor and the sandbox's init. Every fd is CLOEXEC. */
struct launch_fds {
	int report_r, report_w; /* setup failures and exec errors (struct linux_report) */
	int status_r, status_w; /* init writes the command's wait status (int) */
	int go_r, go_w;		/* supervisor → init: placed in cgroups, proceed */
	int lsock_r, lsock_w;	/* init → supervisor: proxy listeners (SCM_RIGHTS) */
	int sess_r, sess_w;	/* a session: supervisor ↔ spawner (session_proto.h) */
	int sig_fd;		/* the supervisor's signalfd; closed in the child */
};

/* Everything the supervisor holds for one run. */
struct linux_sandbox {
	const struct linux_launch *l; /* &own */
	struct linux_launch own;      /* the caller's, with limits.memory_via settled */
	struct linux_scan scan;
	struct linux_cgroup cg;
	struct launch_fds f;
	pid_t child;
	int pidfd;
	bool via_init; /* child is the sandbox's init (else the command itself) */
	bool timed_out;
	bool subreaper; /* no pid namespace: leftovers are ours to kill */
	struct netns_listener listeners[NETNS_MAX_LISTENERS];
	size_t n_listeners;
	int diag_fd; /* a session's: its namespace's socket table (netns/unix_diag.c), or -1 */
	/* A session's user and mount namespaces, opened while init could still be looked
	 * at (before it is made not dumpable): session_mask.c joins them. -1 otherwise. */
	int ns_user_fd, ns_mnt_fd;
};

struct launch_ids {
	uid_t uid;
	gid_t gid;
};

/* ca_files.c: the run's CA files (TLS termination; l->ca_make set, egress through the
 * proxy), made by the supervisor after the clone and sent to init over lsock once the
 * listeners are in: the bundle, the CA alone, the JVM's store (-1 when there is none).
 * launch_ca_make and launch_ca_send return 0 or -errno (make sets e). */
#define LAUNCH_CA_FILES 3
int launch_ca_make(const struct linux_launch *l, int fds[LAUNCH_CA_FILES], struct halo_err *e);
int launch_ca_send(int sock, const int fds[LAUNCH_CA_FILES]);
void launch_ca_close(int fds[LAUNCH_CA_FILES]);
/* In init: receive them (after the listeners went the other way), then write them
 * onto the sandbox's /run (the mount step that makes it). */
void linux_ca_receive_or_die(int sock, int report_fd);
void linux_ca_write_or_die(int report_fd, int run);

/* Signals forwarded from the supervisor to the sandbox and from init to the command. */
extern const int launch_forwarded_signals[];
extern const size_t launch_n_forwarded_signals;

/* pid 1 of the sandbox: builds every layer, runs the command, exits with it. */
void linux_init_main(const struct linux_launch *l, const struct linux_scan *s,
		     const struct launch_ids *ids, struct launch_fds *f) __attribute__((noreturn));

/* Fork the command from a process whose layers are in place: rlimits, fds closed,
 * environment, exec. Returns the pid, or dies. Shared by init and the degraded path. */
/* fn(arg) in a child that shares the caller's memory until it execs or exits, which
 * the caller waits for (spawn_shared.c). Its pid, or -1 with errno. */
pid_t launch_spawn_shared(int (*fn)(void *), void *arg);
pid_t launch_spawn_command_or_die(const struct linux_launch *l, int report_fd);

/* The command's side of launch_spawn_command_or_die, in the calling process: signal
 * dispositions reset, rlimits, fds closed, environment, exec. Never returns. */
void launch_exec_command_or_die(const struct linux_launch *l, char **envp, int report_fd)
    __attribute__((noreturn));

/* The same recipe for any command line: what a fresh launch's command and each call
 * into a session go through before exec (the layers above them, Landlock,
 * capabilities, no_new_privs, seccomp, are inherited from init and cannot be undone). */
struct launch_exec {
	char *const *argv;
	char **envp;
	const struct rlimits_set *limits;
};
void launch_exec_or_die(const struct launch_exec *x, int report_fd) __attribute__((noreturn));

/* A session (l->session): init's one child is the spawner instead of the command;
 * it forks and execs each call (session_spawn.c). Returns its pid, or dies. */
pid_t launch_spawn_session_or_die(const struct linux_launch *l, int chan, int report_fd);
void linux_session_spawner_main(const struct linux_launch *l, int chan) __attribute__((noreturn));

/* How the sandbox ended (see linux_finish). */
int launch_outcome(struct linux_sandbox *sb, int child_ws, struct halo_outcome *out,
		   struct halo_err *e);

/* Create the signalfd (signals blocked first) used by linux_supervise. */
int launch_signalfd_open(void);

/* Init on a CPU of its own until its "go" (cpus.c): note the caller's set before the
 * clone, place the child after it, and restore the set in init once "go" is read. */
void launch_cpus_note(void);
void launch_cpus_place(pid_t child);
void launch_cpus_restore(void);

#endif
