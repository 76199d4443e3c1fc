/* Internal interfaces between the files of linux/. Only the child's setup sequence
 * dies, in functions named ..._or_die, which report through `report_fd` (a CLOEXEC
 * pipe read by the supervisor) and _exit(LINUX_SETUP_FAILED). */
#ifndef HALO_LINUX_INT_H
#define HALO_LINUX_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "linux/linux.h"

/* The creation broker's worker threads in init (broker_pool.c): tasks of the sandbox
 * that are halo-run's, not the command's, so the pids cgroup makes room for them. */
#define LINUX_BROKER_THREADS 4

/* halo-run's setup-failure status (exit/exit.h), the child's reserved _exit code. */
#define LINUX_SETUP_FAILED HALO_EXIT_SETUP

/* Message written to the report pipe; the supervisor prints
 * "halo-run: sandbox setup failed: <step>: <message>: <strerror(err)>". */
struct linux_report {
	int kind; /* LINUX_REPORT_SETUP, LINUX_REPORT_EXEC */
	int err;  /* errno */
	char step[64];
	char msg[512];
};
enum { LINUX_REPORT_SETUP = 1, LINUX_REPORT_EXEC = 2 };

void linux_die(int report_fd, const char *step, int err, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));

/* Test hooks (test_hooks.c): the only overrides of linux/'s behaviour, for the unit
 * tests. Production never sets them; linux_test_hooks_set(NULL) restores the defaults.
 * (The scan's bounds, linux_scan_max_*, are still variables of scan_walk.c.) */
struct linux_test_hooks {
	/* mounts_fd.c: behave as on kernels without mount_setattr(2) (before 5.12) and
	 * take the remount fallback. Default false. */
	bool force_remount;
	/* scan_sockets.c: the kernel's list of bound unix sockets (a test's fixture).
	 * Default (and NULL): /proc/net/unix. */
	const char *proc_net_unix;
	/* mounts.c: masks whose last name is this are not mounted (a sandbox made to
	 * leak, for the check that must notice: tests/helpers/it_leaky.c). NULL: none. */
	const char *unmasked_name;
	/* scan_walk.c: called with a directory's path once the walk has opened it for
	 * listing and before it lists it (a test removes it there). NULL: nothing. */
	void (*walk_before_list)(const char *path);
	/* scan_index_key.c: where halo-run-UID/index.key is kept. Default (and NULL):
	 * /tmp. */
	const char *key_base;
};
const struct linux_test_hooks *linux_test_hooks(void);
void linux_test_hooks_set(const struct linux_test_hooks *h);

/* A list of absolute paths found before launch (bounded scan). */
struct linux_paths {
	char **v;
	size_t n;
};
void linux_paths_add(struct linux_paths *p, const char *path);
void linux_paths_free(struct linux_paths *p);

/* procstat.c: /proc/PID/stat read into buf (n bytes): a pointer to the last ')' of the
 * process's name, the fields (the third on) after it; NULL when it cannot be read. */
const char *linux_proc_stat(pid_t pid, char *buf, size_t n);

/* Close the n descriptors of fds (negative ones skipped), a run of consecutive ones
 * in one close_range(2) (fds.c); fds is sorted in place. */
void linux_fds_close(int *fds, size_t n);
/* Close every descriptor from 3 up but the n of keep (negative ones skipped): the gaps
 * between them, each in one close_range(2); keep is sorted in place. */
void linux_fds_close_all_but(int *keep, size_t n);

/* What the launch scan found: the protected paths that exist (absolute and glob
 * matches), and the persistence-guard targets inside writable trees. */
struct linux_scan {
	struct linux_paths masked;   /* exist, to be masked (no read, no write, no replace) */
	struct linux_paths guarded;  /* exist, to be made read-only */
	struct linux_paths writable; /* absolute writable trees: workspace (if writable) + roots */
	struct linux_paths readonly_extra; /* self_exe, policy files */
	struct linux_paths unwalked;	   /* writable trees the walk skips: tool caches */
	/* sandbox.allowRead carve-outs that exist: where each shows (its parent resolved,
	 * beneath a masked path) and the host file or directory bound there read-only. */
	struct linux_paths carved;
	struct linux_paths carved_src;
	/* Floor files shown as sanitized copies (scan_carve.c): the resolved path, the
	 * copy's bytes. One that could not be read or sanitized is masked whole. */
	struct linux_paths sanitized;
	char **sanitized_data;
	size_t *sanitized_len;
	/* Bound onto themselves inside the sandbox, keeping their access: a mount point
	 * cannot be renamed, removed or replaced (EBUSY). Every git directory in a
	 * writable tree, each symlink met on the way to a guard target or protected path,
	 * and the ancestors of all of these and of every mask and guard, below the top of
	 * their writable tree. Sorted parents first. */
	struct linux_paths pinned;
	struct linux_paths links; /* symlinks met resolving guards and masks (to pin) */
	/* The caches' directory, hidden inside by a tmpfs holding only this workspace's
	 * own (mounts.c alone_or_die): nothing else below it is seen, so nothing there is
	 * pinned (review 9: a link of the command's with a '..' through another
	 * workspace's cache had every later launch fail on a pin it could not open). */
	char hidden_top[PATH_MAX], hidden_own[PATH_MAX];
	struct linux_paths gitdirs; /* git directories found in writable trees */
	/* Guard targets missing at launch, as parent/name: at the top of each writable
	 * tree every guard name, in each git directory its hooks, config, commondir and
	 * config.worktree. Nothing can be mounted on a name that does not exist, so the
	 * sandbox's init refuses their creation (broker.c). */
	struct linux_paths missing;
	/* The home persistence set's missing entries (scan_home.c), full paths whose
	 * directories may be missing too: added to `missing`, where the broker refuses
	 * their creation and the creation of any link or rename on the way to them. */
	struct linux_paths home_missing;
	/* The floor's entries and protectedPaths that are missing where they would land in
	 * a writable tree (scan_home.c): added to `missing` whatever guardPersistence says
	 * (the floor is no persistence guard: no read, no write, no replace). */
	struct linux_paths floor_missing;
	/* The home set's prefix rows (policy_home_prefixes) where they land in a writable
	 * tree, each as dir/prefix (its directories may be missing too): the broker
	 * refuses making any name there that starts with the prefix, kept from the tree's
	 * top down as home_missing's entries are. */
	struct linux_paths home_prefix;
	/* The home set's entries guarded where they land (also in guarded): the broker's
	 * host-made-file rules hold in their directories (broker_home.c), wherever the
	 * workspace is (a dotfiles repository ~/.bashrc leads into). */
	struct linux_paths home_guarded;
	struct linux_paths floor_unmade;    /* ... the entries to look at for it (scan.c) */
	size_t inner_links;		    /* entries scan_links.c looked at, this launch */
	struct linux_paths links_unchecked; /* ... directories it stopped in (said) */
	struct linux_paths home_hardlinks;  /* home-set files with another name (said) */
	bool links_files; /* scan_links.c: report files with other names too (scan_home.c) */
	struct linux_paths links_seen;	  /* directories walked and files checked, this scan */
	struct linux_paths linked_stores; /* the homes' caches and hard-linked stores (abs) */
	/* The entries of `missing` from home_missing and floor_missing: the broker keeps
	 * each from its writable tree's top down (every name on the way, existing or not,
	 * refused to a rename or link), not only from the nearest directory that exists:
	 * another sandbox, started before that directory was made, can rename it away
	 * (a pin holds in its own mount namespace only) and put another in its place. */
	struct linux_paths missing_deep;
	/* Files a hook manager's shim runs (policy/hookmgr.c) that are missing: added to
	 * `missing` when inside a writable tree, so they cannot be created. */
	struct linux_paths hook_missing;
	/* The global and system git configs' core.hooksPath ("" for none), read once per
	 * launch (scan_git.c: linux_scan_git_global_hooks). */
	char git_global_hooks[PATH_MAX];
	char git_global_templ[PATH_MAX];	/* ... and their init.templateDir, as written */
	struct linux_paths git_global_rel;	/* ... and the relative programs they name */
	struct linux_paths git_global_rel_args; /* ... and later relative words of those */
	bool git_global_read;
	/* Guard targets reached through a symlink that leads nowhere (dangling, or a
	 * loop): dangling_at[i] is where the first missing name would be created, or ""
	 * for a loop. The launch refuses when the command could create it. */
	struct linux_paths dangling;
	struct linux_paths dangling_at;
	/* Home-set names (an entry, an XDG directory, a PATH entry) whose way is longer
	 * than PATH_MAX: they cannot be judged, so the launch refuses (review 11). */
	struct linux_paths too_long;
	/* Symlinks with a protected name the walk found that lead elsewhere, and the real
	 * path each masks (pairs in step): a refusal or a warning names the link. */
	struct linux_paths link_masks;
	struct linux_paths link_masks_to;
	/* sandbox.unixSockets that exist as sockets on the host: left reachable, shown
	 * at their path even beneath a fresh /run or a mask. */
	struct linux_paths sockets_open;
	/* Directories of a walked tree the walk could not list (no read or no search
	 * permission, or the listing failed): masked whole (they are in masked too),
	 * each said in a warning. */
	struct linux_paths unlisted;
	/* halo-run's own state among the masks (index and session sockets and
	 * directories, any home's): masked like the rest, but not a finding --dry-run
	 * lists, nor a file whose appearance refuses a session's call. */
	struct linux_paths own;
	size_t entries_scanned;
	bool truncated; /* the bound was hit: launch refused unless failIfUnavailable false */
	/* What a truncated walk did not cover and why (malloc'd), or NULL. */
	char *uncovered;
	/* The workspace index used and kept by the walk (scan_index_file.c), until the
	 * findings are sent; NULL when none. */
	struct linux_scan_index *index;
	size_t dirs_listed, dirs_replayed; /* by the walk: re-read, and taken from the index */
	bool sockets_truncated;		   /* more host sockets than masks: the same */
	/* linux_scan_begin: the walk is still to come (linux_scan_hand_over) and what it
	 * finds reaches the sandbox's init through late_fd (0: init reads, 1: supervisor
	 * writes). */
	bool late;
	int late_fd[2];
	/* The supervisor's word, with the lists, that init will run a creation broker: the
	 * pids budget was set for it (launch.c); init stops if it decides otherwise. */
	bool broker;
	/* What resolving paths met, by path (scan_pin.c): each directory on the way to the
	 * floor and the home persistence set of both homes is asked of the kernel once per
	 * scan, not once per entry (a missing ~/.config answers for all its children). */
	struct linux_lstat_memo {
		struct linux_lstat_ent *v;
		size_t n, cap;
		struct linux_dir_list *dirs; /* directories asked about often: listed */
		size_t n_dirs, cap_dirs;
		/* v by hash (index + 1, 0 free; a power of two, at most half full): a
		 * scan asks hundreds of names, each prefix of each entry, and a look
		 * through v each time was a tenth of a session call's walk */
		uint32_t *slots;
		size_t n_slots;
		/* list_dir's getdents buffer and names, made once a scan: a directory's
		 * 96 KiB each, made and dropped for every one listed, were most of the
		 * listings' time (the heap grown, its pages faulted in) */
		char *list_buf;
	} memo;
};

/* The scan's findings as the plan's input (borrowed: s and l outlive the plan). */
void linux_scan_findings(const struct linux_launch *l, const struct linux_scan *s,
			 struct plan_fs_in *in);
/* The numbers behind the plan's limits. */
void linux_plan_limit_values(struct halo_plan *p, const struct rlimits_set *r);

/* Walk the workspace and writable roots (bounded in entries and depth, never following
 * symlinks) to find glob matches of protected paths and persistence-guard targets.
 * Returns 0 or -errno with e set. */
int linux_scan(const struct linux_launch *l, struct linux_scan *s, struct halo_err *e);
/* linux_scan for a session's call (session_scan.c), which walks again at every call:
 * it also starts the trees' index watchers where its walk took LINUX_WATCH_PAYS_CALL_US
 * or more (a launch waits for LINUX_WATCH_PAYS_US). */
int linux_scan_call(const struct linux_launch *l, struct linux_scan *s, struct halo_err *e);
void linux_scan_free(struct linux_scan *s);

/* The same scan in two halves, so that the walk (most of a large workspace's launch
 * time) runs while the sandbox's init builds its namespaces and mounts:
 *  - linux_scan_begin, before the clone: the writable trees (their errors) alone,
 *    what the first mount steps need.
 *  - linux_scan_hand_over, in the supervisor once the child runs (while it builds
 *    its namespaces): absolute protected paths, halo-run's own outputs and state,
 *    carve-outs and sanitized copies, host sockets, read-only extras, the walk, the
 *    checks linux_scan makes (and the truncation refusal unless failIfUnavailable is
 *    false); then before_send (when given: its -errno, e set, stops the launch),
 *    then every list the late mount steps use is sent to the
 *    child. On -errno (e set) the caller kills the child.
 *  - linux_scan_settle_here: all of that but the walk, in this process, for a
 *    launch that found no namespaces to build (Landlock needs the lists).
 *  - linux_scan_receive_or_die, in the child where the mounts need them: returns s
 *    itself when nothing is late, else `late` filled with the final lists (its
 *    writable aliases s's). */
int linux_scan_begin(const struct linux_launch *l, struct linux_scan *s, struct halo_err *e);
int linux_scan_hand_over(const struct linux_launch *l, struct linux_scan *s,
			 int (*before_send)(void *arg, struct linux_scan *s, struct halo_err *e),
			 void *arg, struct halo_err *e);
int linux_scan_settle_here(const struct linux_launch *l, struct linux_scan *s, struct halo_err *e);
const struct linux_scan *linux_scan_receive_or_die(const struct linux_scan *s,
						   struct linux_scan *late, int report_fd);

/* In the child, in its new user and mount namespaces, as pid 1 of the new pid
 * namespace: build the mount layout of DESIGN.md / issue 3 and pivot_root into it.
 * Afterwards the cwd is the workspace. Returns the scan with the walk's findings (s
 * itself, or the late lists received from the supervisor). */
const struct linux_scan *linux_mounts_setup_or_die(const struct linux_launch *l,
						   const struct linux_scan *s, int report_fd);

/* Landlock: the ABI the kernel offers (0 = none). apply: restrict writes to s->writable
 * plus /tmp, /dev/{null,zero,full,tty,pts,shm}; on ABI >= 6 scope abstract unix sockets
 * and signals; without a network namespace (!in_netns) and ABI >= 4, refuse every TCP
 * connect. With ABI 0 it returns without dying (the caller reports it). */
int linux_landlock_abi(void);
void linux_landlock_apply_or_die(const struct linux_scan *s, bool in_netns,
				 const struct policy_ports *host_ports, int report_fd);

/* Drop every capability (effective, permitted, inheritable, ambient, bounding). The
 * read-back of /proc/self/status also tells which signals this process ignores (bit
 * n-1 for signal n): *sig_ignored (when not NULL), UINT64_MAX when it did not say. */
void linux_caps_drop_or_die(int report_fd, uint64_t *sig_ignored);
/* The CapBnd and CapAmb sets from the text of /proc/self/status. 0, -ENOENT (a field
 * missing) or -EINVAL (not 16 lower-case hex digits). */
int linux_caps_parse_status(const char *text, uint64_t *bnd, uint64_t *amb);
/* SigIgn from the same text; same answers. */
int linux_status_sigign(const char *text, uint64_t *ign);

/* Load the seccomp deny list (the table in seccomp.c). Loaded last, right before exec. */
void linux_seccomp_apply_or_die(int report_fd);

/* One line per rule for --dry-run. */
void linux_seccomp_describe(void (*line)(void *arg, const char *text), void *arg);

/* Whole-sandbox limits through cgroups: root gets pids and memory (v2, else v1 under
 * its own cgroup); an unprivileged caller gets memory in a subtree systemd delegated to
 * it (v2), when there is one. Where no memory cgroup is had, RLIMIT_DATA holds memory. */
struct linux_cgroup {
	bool pids;
	bool memory;
	char path_pids[LINUX_CGROUP_PATH];
	char path_mem[LINUX_CGROUP_PATH];
	bool v2;
	char mem_desc[LINUX_CGROUP_PATH + 64]; /* what holds memory, for messages */
	long long pids_budget;		       /* limits.processes, with pids */
};
int linux_cgroup_setup(const struct rlimits_set *r, struct linux_cgroup *cg, struct halo_err *e);
int linux_cgroup_attach(const struct linux_cgroup *cg, int pid);
/* pids.max as limits.processes plus `ours` (halo-run's own tasks in the cgroup: init,
 * a session's spawner, the broker's first thread), before the command exists. 0 or
 * -errno. */
int linux_cgroup_pids_ours(const struct linux_cgroup *cg, int ours);
void linux_cgroup_cleanup(struct linux_cgroup *cg);
/* How many processes the kernel's OOM killer ended in the memory cgroup (0 without). */
long long linux_cgroup_oom_kills(const struct linux_cgroup *cg);
/* How many forks the pids cgroup refused at pids.max (0 without). */
long long linux_cgroup_pids_max_hits(const struct linux_cgroup *cg);

/* Does dir/file list `word` (space or comma separated)? */
bool linux_cgroup_file_has(const char *dir, const char *file, const char *word);
/* A delegated v2 subtree for uid: the nearest proper ancestor of mount+own, at or below
 * .../user@UID.service, owned and writable by uid, with memory in its
 * cgroup.subtree_control. 0 with the directory in out, else -ENOENT. */
int linux_cgroup_delegated_find(const char *mount, const char *own, uid_t uid, char *out, size_t n);

#endif
