/* linux/ — the Linux launcher: user, mount, pid, net, ipc and uts namespaces, the
 * mount layout and protected-path masking, the persistence guard, Landlock,
 * capabilities, seccomp, and the supervision of the sandbox's init. */
#ifndef HALO_LINUX_H
#define HALO_LINUX_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "netns/netns.h"
#include "plan/plan.h"
#include "policy/policy.h"
#include "rlimits/rlimits.h"
#include "exit/exit.h"

/* A file of halo-run's inside the sandbox, on the sealed (read-only) /run: Node's
 * preload that drops the one warning NODE_USE_ENV_PROXY=1 makes every Node 22 print
 * ("[UNDICI-EHPA] EnvHttpProxyAgent is experimental"). NODE_OPTIONS names it. */
#define LINUX_NODE_PRELOAD_DIR	"/run/halo"
#define LINUX_NODE_PRELOAD_PATH "/run/halo/node-preload.cjs"
#define LINUX_NODE_OPTIONS	"--require " LINUX_NODE_PRELOAD_PATH
/* The command's XDG_CONFIG_HOME (env/caches_config.c says why), written on the
 * sandbox's /run by its init: pnpm/rc, and one symlink per name (NUL-separated) to
 * mirror/NAME. */
#define LINUX_TOOL_CONFIG_DIR "/run/halo/config"
struct linux_tool_config {
	const char *rc;
	size_t rc_len;
	const char *mirror;
	const char *names;
	size_t names_len;
};
/* The run's CA (TLS termination for egress.credentials and requestRules), on the same
 * sealed /run: the bundle (system roots + the CA) and the CA alone. Read-only inside. */
#define LINUX_CA_BUNDLE_PATH "/run/halo/ca-bundle.pem"
#define LINUX_CA_CERT_PATH   "/run/halo/ca.pem"
#define LINUX_CA_JVM_PATH    "/run/halo/ca-truststore.p12"

/* The run's CA as the tools inside read it (PEM; the JVM's PKCS#12 store, or NULL). */
struct linux_ca_files {
	const char *cert, *bundle, *jvm;
	size_t cert_len, bundle_len, jvm_len;
};

struct linux_launch {
	const struct halo_policy *policy;
	const char *workspace; /* absolute, symlinks resolved */
	const char *pw_home;
	const char *env_home;	       /* may equal pw_home or be NULL */
	const char *caller_path;       /* the caller's PATH (the home set's PATH dirs), or NULL */
	const char *caller_xdg_config; /* the caller's XDG_CONFIG_HOME (the home set), or NULL */
	const char *caller_xdg_data;   /* the caller's XDG_DATA_HOME (the home set), or NULL */
	const char *caller_xdg_config_dirs; /* the caller's XDG_CONFIG_DIRS (a list), or NULL */
	const char *caller_xdg_data_dirs;   /* the caller's XDG_DATA_DIRS (a list), or NULL */
	const char *caller_zdotdir;	    /* the caller's ZDOTDIR (the home set), or NULL */
	const char *self_exe;		 /* absolute path of the running binary (made read-only) */
	const char *const *policy_files; /* made read-only inside */
	size_t n_policy_files;
	/* halo-run's own output files (--audit; any later one joins this list): opened by
	 * the supervisor before launch, masked inside (no read, no write, no unlink or
	 * rename), wherever they lie, the workspace and writable roots included. */
	const char *const *own_outputs;
	size_t n_own_outputs;
	/* halo-run's session control directory (session/session.c), or NULL: hidden inside
	 * wherever the sandbox would show it (a workspace of /tmp, an $XDG_RUNTIME_DIR in
	 * the home), so that no command removes, locks or fills what sessions keep there. */
	const char *session_dir;
	/* Tool caches (env/caches.c): bound read-write like writable roots, but never
	 * walked (no host tool reads them, and a warm npm cache holds 100k files). */
	const char *const *cache_binds;
	size_t n_cache_binds;
	/* The directory of every workspace's isolated caches (resolved), or NULL: the one
	 * bound here is shown alone in it (PLAN_F_ALONE). */
	const char *cache_hide;
	/* LINUX_TOOL_CONFIG_DIR's contents, or NULL: none. */
	const struct linux_tool_config *tool_config;
	char *const *argv;
	char **envp;	    /* built by env/ (with the proxy variables when egress_proxy) */
	char **envp_direct; /* the same without them: used when the sandbox gets no proxy */
	struct rlimits_set limits;
	bool quiet;
	/* Not 0: the walk stops past this many ms whatever failIfUnavailable says (a
	 * truncated walk is then refused as that says). `halo-run hook`'s searches: a
	 * harness that times its hook out runs the tool anyway. */
	unsigned scan_budget_ms;
	/* What the launch could not enforce (a degraded start, a missing cgroup), one line
	 * each without the "halo-run: " prefix: the runner says them. May be NULL. */
	struct plan_text *warnings;
	/* Filled by linux_finish when set (exit/exit.h): limits hit, refusals counted. */
	struct halo_run_facts *facts;
	bool learn;	   /* halo-run learn: the broker notes refused writes (facts->learn_*) */
	bool unsandboxed;  /* sandbox.mode: off — limits, environment, supervision only */
	bool egress_proxy; /* listeners for halo-run's proxy inside the sandbox's netns */
	/* The sandbox's /etc/ssh/ssh_config (linux_ssh_config_build), or NULL. */
	const char *ssh_config;
	size_t ssh_config_len;
	/* A session (session/): init's child is the spawner, which runs each call
	 * it is sent over linux_sandbox_session_fd; argv and envp are then unused. Needs
	 * the namespaces: never degraded, never unsandboxed. */
	bool session;
	/* TLS termination's CA, NULL when no host's TLS is terminated. Called by the
	 * supervisor once the sandbox's init exists (init is a fork-like copy of the
	 * supervisor: a key made before the clone would live on in it), it makes the CA
	 * and fills the public files, which init receives in sealed memfds and writes to
	 * LINUX_CA_*_PATH. The buffers stay the callee's. 0 or -errno with e set. */
	int (*ca_make)(struct linux_ca_files *out, struct halo_err *e);
	/* Called first thing in the sandbox's init (a fork-like copy of the supervisor):
	 * wipes that copy of secrets only the supervisor needs. Must not allocate or lock
	 * (other threads of the supervisor may have held locks at the clone). NULL: none. */
	void (*child_scrub)(void);
};

/* The ssh client configuration the sandbox gets when its egress goes through the
 * proxy (none when self_exe lies in a tree that is the sandbox's own, /tmp or /run,
 * outside the workspace: the binary would not be there inside): "Host *" with ProxyCommand
 * "<self_exe> connect %h %p", then the host's own /etc/ssh/ssh_config (ssh keeps the first value it
 * reads, so the route wins and every other setting of the host still applies). `agent`,
 * when not NULL, is the caller's ssh-agent socket as sandbox.unixSockets lists it: named
 * IdentityAgent (SSH_AUTH_SOCK is never passed). 0 with *out
 * malloc'd, or -ENOENT (the host has no regular ssh_config: no ssh to route), or -errno. */
int linux_ssh_config_build(const char *self_exe, const char *workspace, const char *agent,
			   char **out, size_t *len);

/* A running sandbox, driven step by step so that the runner's one event loop can
 * also carry the proxy:
 *   linux_start → watch exit_fd and signal_fd (forward_signals when readable; kill on
 *   the wall-clock limit) → linux_finish once exit_fd is readable. */
struct linux_sandbox;

/* Build the sandbox and start the command. Returns 0, or -errno with e set when the
 * sandbox could not be built (HALO_OUTCOME_SETUP; nothing ran). */
int linux_start(const struct linux_launch *l, struct linux_sandbox **out, struct halo_err *e);

int linux_sandbox_exit_fd(const struct linux_sandbox *sb);   /* readable: it ended */
int linux_sandbox_signal_fd(const struct linux_sandbox *sb); /* readable: forward */
void linux_sandbox_forward_signals(struct linux_sandbox *sb);
/* The wall-clock limit: kill every process of the sandbox; finish reports the timeout. */
void linux_sandbox_kill(struct linux_sandbox *sb);

/* The proxy listeners made inside the sandbox's network namespace; the caller takes
 * them (0 when there are none: mode off, or no user namespace). */
size_t linux_sandbox_take_listeners(struct linux_sandbox *sb, struct netns_listener *out);

/* The terminating signal (HALO_TERMINATING_SIGNALS) that ended the last walk,
 * pending while the caller held it blocked, or 0: the launch then failed (-EINTR) and
 * exits as that signal says (128 + it), having run nothing. */
int linux_scan_interrupted_by(void);

/* A session's protected files (session_scan.c): what a fresh launch would mask or
 * show sanitized now, and the guarded files it would make read-only outside git
 * directories, each as "DEV:ID:PATH" (ID: which file, see session_scan.c; ending in
 * LINUX_SESSION_GUARDED for a guarded one, LINUX_SESSION_SOCKET for a socket), sorted. A joined
 * call's list must hold nothing its session's lacks. 0 or -errno with e set. */
#define LINUX_SESSION_GUARDED "+ro"
#define LINUX_SESSION_SOCKET  "+sk" /* ... and in a socket's */
#define LINUX_SESSION_PLACE   "+ix" /* ... and in another index place's, masked whole */
int linux_session_protected(const struct linux_launch *l, char ***out, size_t *n,
			    struct halo_err *e);
void linux_session_protected_free(char **v, size_t n);
/* lstat and readlink of absolute names, each asked once, as the launch's scan asks
 * them (linux/scan_memo.c: a directory asked about often is listed once, and a name
 * its listing lacks is missing without a question): for a session call's identity,
 * whose home set asks a hundred names of one home. linux_lstat_memo_link answers as
 * policy_path_leads's link_of: 1 a symlink (its target in buf), 0 anything else,
 * -errno (-ENAMETOOLONG: the target does not fit). NULL from new without memory. */
struct linux_lstat_memo;
struct linux_lstat_memo *linux_lstat_memo_new(void);
int linux_lstat_memo_link(struct linux_lstat_memo *m, const char *path, char *buf, size_t n);
void linux_lstat_memo_free(struct linux_lstat_memo *m);
/* For `halo-run hook` (runner/hook_walk.c): what a launch from l would mask or show
 * sanitized (the original a host reader gets), by the launch's own walk (the index
 * keeps it cheap at any size): v, resolved paths; roots, the trees that walk covered
 * (nothing is known beneath others). 0, -E2BIG when the walk stopped short, or -errno
 * with e set; linux_masked_free either way. */
struct linux_masked {
	char **v, **roots;
	size_t n, n_roots;
};
int linux_masked_list(const struct linux_launch *l, struct linux_masked *m, struct halo_err *e);
void linux_masked_free(struct linux_masked *m);
/* Is entry (one of those "DEV:ID:PATH") a unix socket that the session's own commands
 * bound, by the files bound in its namespace (netns_unix_files, read from
 * linux_sandbox_diag_fd), and the very file the entry names, on a file system whose
 * inode numbers that table gives whole (ext4)? true only when all of it is so, now. */
struct netns_unix_files;
bool linux_session_own_socket(const struct netns_unix_files *bound, const char *entry);
/* The mounts of a session's sandbox as its init sees them, "ID PATH" each, sorted
 * (session_mounts.c; free with linux_session_protected_free). 0 or -errno. */
#define LINUX_SESSION_MAX_MOUNTS 100000
int linux_session_mounts(const struct linux_sandbox *sb, char ***out, size_t *n);
/* The mount point of the first of start's mounts that now lacks (gone, or at another
 * path), *lost how many; NULL when none is. A mask of one of prot's sockets (the
 * session's protected list) does not count: it goes with its socket; nor one of
 * another launch's index place (not one of l's own). */
const char *linux_session_mount_lost(const struct linux_launch *l, char *const *start,
				     size_t n_start, char *const *now, size_t n_now,
				     char *const *prot, size_t n_prot, size_t *lost);
/* Masks, in the running session's mount namespace, each host socket of entries (a
 * LINUX_SESSION_SOCKET entry of linux_session_protected, its ID a file handle) that is
 * still that very file there (session_mask.c); masked[i] says which. The number
 * masked, or -errno. At most LINUX_SESSION_MASK_MAX a call (the rest: not masked). */
#define LINUX_SESSION_MASK_MAX 64
int linux_session_mask_sockets(const struct linux_sandbox *sb, char *const *entries, size_t n,
			       bool *masked);
/* A session's socket table (netns/unix_diag.c), -1 without one. */
int linux_sandbox_diag_fd(const struct linux_sandbox *sb);

/* A session's channel to its spawner (linux/session_proto.h frames), -1 without one. */
int linux_sandbox_session_fd(const struct linux_sandbox *sb);

/* Reap, release, and say how the run ended in *out (the command's status or signal,
 * the timeout, exec failed: exit/exit.h). Returns 0 when the command ran, 1 when it
 * ended in a way halo-run must explain (message in e), -errno when the sandbox failed
 * during setup (*out: HALO_OUTCOME_SETUP). Frees sb. */
int linux_finish(struct linux_sandbox *sb, struct halo_outcome *out, struct halo_err *e);
/* Readable once init has sent the command's status (before its own exit, which the
 * caller need not wait for: -1 without an init); linux_finish may then leave init to
 * linux_reap, which the caller calls last and which does not wait for it. */
int linux_sandbox_done_fd(const struct linux_sandbox *sb);
void linux_reap(void);

/* The plan of this launch on this machine (linux/plan.c): the probes (user
 * namespaces, Landlock, the memory cgroup), the scan, and from them the ordered
 * filesystem steps, layers, limits, egress and gaps. The plan borrows l's strings and
 * owns the scan (plan_free releases it). Returns 0 or -errno with e set. */
int linux_plan(const struct linux_launch *l, struct halo_plan *p, struct halo_err *e);
/* The same without the scan and the filesystem steps: layers, limits, egress, gaps. */
int linux_plan_layers(const struct linux_launch *l, struct halo_plan *p, struct halo_err *e);

/* ---- for doctor and verify, which check the machine and the sandbox against the
 * plan: the probes the plan is built from, and the facts of the deny table. */

/* Is this clone() errno the "user namespaces unavailable" family? And what to do. */
bool linux_userns_error(int err);
const char *linux_userns_advice(void);
/* 0 when this user can create the namespaces, else -errno (tries in a child). */
int linux_userns_probe(void);

/* The seccomp program compiled into the library (from the generated header). */
struct sock_filter;
const struct sock_filter *linux_seccomp_program(size_t *n_insns);
/* The errno the deny table gives the call `name` under the condition whose words
 * hold `match` ("" for an unconditional row); 0 when no row matches. */
int linux_seccomp_errno(const char *name, const char *match);

/* Would a memory cgroup hold the memory limit for this caller? Read-only: nothing is
 * created. Returns true with `desc` set ("memory cgroup v1 (...)"), else false with the
 * reason in `desc`. */
#define LINUX_CGROUP_PATH 512
bool linux_cgroup_memory_probe(char *desc, size_t n);
/* cgroup_find.c: the caller's cgroup path for `controller` (NULL: the v2 "0::" line)
 * in /proc/self/cgroup text; 0, -ENOENT or -ENAMETOOLONG. */
int linux_cgroup_own_path(const char *proc_cgroup, const char *controller, char *out, size_t n);
int linux_cgroup_read_self(char *buf, size_t n);

/* The most directories a watcher watches: an eighth of the user's inotify watches, at
 * most 131072, lowered (never raised) by $HALO_RUN_INDEX_WATCH_MAX. */
size_t linux_scan_watch_cap(void);

/* The workspace index from outside a launch (index_admin.c, `halo-run index`). */
struct linux_index_info {
	char base[40];	   /* the files' common name: DEV-INO of the tree's top */
	char root[4096];   /* the tree, as its index names it */
	size_t dirs;	   /* directories in the index */
	size_t bytes;	   /* the index file's size */
	bool valid;	   /* the file parses (else it is rebuilt at the next launch) */
	bool watcher;	   /* a watcher's socket is there */
	bool running;	   /* ... and a watcher answers on it */
	bool tree_gone;	   /* the tree is no longer there (its index is of no use) */
	int pid;	   /* the running watcher's pid (0: unknown) */
	long long walk_us; /* the walk that started it, in µs (-1: unknown) */
	long long pays_us; /* a launch starts one only where its walk takes this long */
	long long call_us; /* ... a session's call (it walks at every call) */
	long long min_dir; /* ... and only in a tree of this many directories or more */
};
/* ${XDG_STATE_HOME:-HOME/.local/state}/halo-run/index. 0 or -errno. */
int linux_index_place(const char *home, char *out, size_t n);
/* halo-run's own places that no sandbox sees, for `halo-run hook` (which refuses a
 * harness's tools there too): the index key's directory, /tmp/halo-run-UID (each
 * sandbox has a /tmp of its own; a writable root there gets the key masked), and every
 * place a launch of this user may keep its indexes in (masked where a writable tree
 * holds it), as named, why[i] saying which. At most LINUX_OWN_PLACES; how many. */
#define LINUX_OWN_PLACES 5
size_t linux_own_places(const char *pw_home, const char *env_home, char out[][PATH_MAX],
			const char **why);
/* Every tree's index in dir (none when dir does not exist). 0 or -errno. */
int linux_index_list(const char *dir, struct linux_index_info **out, size_t *n);
/* Stop its watcher (it exits once its socket is gone) or, with clear, also remove the
 * index (the next launch walks the tree afresh). 0 or -errno. */
int linux_index_end(const char *dir, const struct linux_index_info *in, bool clear);

/* Where a process last ran (the CPU, from /proc/PID/stat), or -1; and a thread of
 * this process kept off one CPU, on every other this process may use (none other:
 * left as it is). A session's walk is kept off the calling halo-run's CPU (cpus.c). */
int linux_cpu_of(pid_t pid);
void linux_thread_keep_off(pid_t tid, int cpu);
/* The calling thread on the CPUs thread tid may use (a child a walker forks: its
 * process's main thread's, the pid). */
void linux_cpus_as_thread(pid_t tid);

#endif
