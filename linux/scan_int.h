/* Internal to the launch scan (scan.c, scan_walk.c, scan_git.c). */
#ifndef HALO_LINUX_SCAN_INT_H
#define HALO_LINUX_SCAN_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "linux/linux_int.h"
#include "linux/scan_index.h"

/* The walk is shared by up to LINUX_SCAN_WORKERS threads (scan_pool.c): a worker that
 * runs out of directories takes one another worker hands over. What they share: */
struct linux_scan_pool;

/* Threads walking at most (the calling one included); 1 walks sequentially. */
#define LINUX_SCAN_WORKERS     2
#define LINUX_SCAN_WORKERS_MAX (LINUX_SCAN_WORKERS + 1)

/* The index of one walked tree (scan_index_file.c): what was loaded (in.n == 0 when
 * nothing usable was), and what this walk records, one buffer per worker. */
struct linux_scan_tree_index {
	bool usable; /* a place to keep it, on a file system whose ctime we trust */
	struct linux_index in;
	struct linux_index_key key;
	char root[PATH_MAX];
	struct linux_index_out out[LINUX_SCAN_WORKERS_MAX];
	unsigned char *reached; /* in.dirs[i] replayed by this walk (kept as it was) */
	/* The tree's watcher (scan_watch.c) answered for this version of the index:
	 * dirty[i] says in.dirs[i] changed (or could not be watched); the others are
	 * replayed without a stat where their parent was (see scan_walk.c). */
	bool synced;
	bool no_watcher; /* none answered: start one after the walk */
	unsigned char *dirty;
	size_t listed;	 /* directories listed (not replayed): under the pool's count */
	size_t replayed; /* the others */
};

/* Every tree's index for one scan, and where they are kept. */
struct linux_scan_index {
	int dirfd; /* the index directory, -1 when none may be used */
	char dir[PATH_MAX];
	char why_not[PATH_MAX + 128]; /* why no index was used or kept, "" when it was */
	int64_t racy_from;	      /* a directory whose ctime is at or after this (s) is RACY */
	bool keep_nothing; /* HALO_RUN_INDEX=ro: read and asked, never written, none started */
	uint64_t walk_us;  /* how long this launch's walk of the trees took */
	uint64_t pays_us;  /* a walk this long starts the watchers (0: LINUX_WATCH_PAYS_US) */
	struct linux_scan_tree_index *t;
	size_t n;
};

/* One worker's walk over the trees the command can reach by name and that we bind in:
 * the workspace and the writable roots. */
struct linux_scan_ctx {
	struct linux_scan *s; /* this worker's findings (masked, guarded), merged at the end */
	struct linux_scan_pool *pool;
	struct halo_err *e;
	const char *home; /* pw home, for "~/" in git config paths */
	/* Protected globs, normalised (no leading "./" or "**\/", no trailing "/"):
	 * without a slash they match a name, with one a relative path at any depth.
	 * name_prefix[i] is the literal ASCII start of name_globs[i] (before any wildcard,
	 * escape or non-ASCII byte), a cheap test before fnmatch. */
	const char **name_globs;
	size_t n_name_globs;
	const char **name_prefix;
	const char **path_globs;
	size_t n_path_globs;
	const char *const *roots; /* every tree walked: a walk skips the others' tops */
	size_t n_roots;
	bool guard;		  /* guard persistence targets in the tree being walked */
	const char *global_hooks; /* linux_scan_git_global_hooks, once read (workers copy it) */
	size_t root_len;	  /* length of the current root in path (for relative paths) */
	char path[PATH_MAX];
	size_t max_entries;
	unsigned max_depth;
	int err;		     /* -errno of a hard error (e set), 0 otherwise */
	int signal;		     /* the terminating signal that stopped the walk, or 0 */
	struct linux_scan_index *ix; /* NULL: no index */
	unsigned worker;	     /* 0 the calling thread, helpers 1.. */
	unsigned root_id;	     /* the tree being walked: roots[root_id] */
	/* The directory being walked, or the entries being visited, lie beneath a chain
	 * of directories the watcher vouched for: their records need no stat. */
	bool trust;
	size_t next_rec;     /* where this worker expects its next record (find_near) */
	size_t taken;	     /* entries counted by this worker when nothing bounds them */
	int64_t deadline_ns; /* CLOCK_MONOTONIC; 0 none (failIfUnavailable: false only) */
};

/* A second worker only pays off past this many entries (thread start-up ~ 50 us). */
#define LINUX_SCAN_PARALLEL_AFTER 1024

/* The bounds of the walk. Variables so that tests can lower them. No bound on entries:
 * a workspace of any size is walked whole (the index makes that a one-off). */
#define LINUX_SCAN_MAX_ENTRIES SIZE_MAX
#define LINUX_SCAN_MAX_DEPTH   64
/* With failIfUnavailable: false only, the walk stops after this long and the launch
 * goes on, naming the first directory it did not cover. */
#define LINUX_SCAN_BUDGET_MS 10000
/* Masks, guards and pins together (one mount each): well under fs.mount-max. */
#define LINUX_SCAN_MAX_MOUNTS 50000
extern size_t linux_scan_max_mounts;
extern unsigned linux_scan_budget_ms;
extern size_t linux_scan_max_entries;
extern unsigned linux_scan_max_depth;
/* Threads the scan may use (LINUX_SCAN_WORKERS; tests set 1 to compare). */
extern unsigned linux_scan_workers;

/* Walk every root in c->roots (absolute, symlinks resolved; guard_of[i] says whether
 * the persistence guard applies in roots[i]) with up to `workers` threads, all joined
 * before it returns. Never follows a symlink; does not cross into kernel pseudo file
 * systems; counts entries in c->s->entries_scanned and sets c->s->truncated at a
 * bound. The findings of every thread end up in c->s (unsorted: the caller sorts). */
void linux_scan_walk_roots(struct linux_scan_ctx *c, const bool *guard_of, unsigned workers);

/* Count k more entries against the bound: how many of them may be walked (< k means
 * the bound was hit: the scan is truncated and every worker stops). */
size_t linux_scan_take(struct linux_scan_ctx *c, size_t k);

/* Has the walk been stopped (bound hit)? */
bool linux_scan_stopped(const struct linux_scan_ctx *c);

/* A bound other than the entry count was hit (depth, path length, memory): the scan is
 * truncated and every worker stops. */
void linux_scan_truncate(struct linux_scan_ctx *c);
/* Is a terminating signal pending (held blocked, not ignored)? Then the walk stops
 * (truncated), the signal in c->signal once the walk is done. Asked once per
 * directory. linux_scan_pending_signal: which one is pending now (0: none). */
bool linux_scan_interrupted(struct linux_scan_ctx *c);
int linux_scan_pending_signal(void);
/* A walk a signal ended: kept for the launch's exit (linux_scan_interrupted_by). */
void linux_scan_interrupt_note(int sig);

/* The same, saying what was not covered and why (the first such statement is kept in
 * s->uncovered): `path` is left uncovered because `why`. */
void linux_scan_uncovered(struct linux_scan_ctx *c, const char *path, const char *why);

/* The walk of one directory, by a worker (scan_walk.c): fd is open on c->path[0..len),
 * which the worker took from the pool. Closes fd. */
void linux_scan_walk_dir(struct linux_scan_ctx *c, int fd, size_t len, unsigned depth, dev_t dev);

/* Offer a directory to an idle worker instead of walking it now. Takes fd (open on
 * c->path[0..len)) when it returns true. */
bool linux_scan_offer(struct linux_scan_ctx *c, int fd, size_t len, unsigned depth, dev_t dev);

/* Does `name` (or relative path `rel`) match a protected glob? */
bool linux_scan_glob_match(const struct linux_scan_ctx *c, const char *name, const char *rel);

/* scan_index_file.c. Before the walk: c->ix for the trees in c->roots (loaded where a
 * valid index exists, its watcher asked; NULL without memory). After it: keep what
 * changed (not when the walk was truncated), and start the watchers that did not
 * answer (a launch; not --dry-run). */
/* Every place an index may be kept that lies in a writable tree: masked whole. */
/* The places a launch of this user may keep its index in (XDG_STATE_HOME's, the
 * home's default, the password database home's default), at most LINUX_INDEX_PLACES;
 * how many. */
#define LINUX_INDEX_PLACES 3
size_t linux_scan_index_places(const struct linux_launch *l, char out[][PATH_MAX]);
/* Is path (absolute) a directory named halo-run/index: an index place, anyone's? And is
 * it one of l's own places (as named or resolved)? */
bool linux_index_place_named(const char *path);
bool linux_scan_own_index_place(const struct linux_launch *l, const char *path);
void linux_scan_index_shield(const struct linux_launch *l, struct linux_scan *s);
/* scan_index_key.c: the user's index key loaded (made at first) and set for
 * scan_index.c, once per process; false with why set when there is none to trust
 * (then no index is read or written). Its directory, /tmp/halo-run-UID. */
bool linux_scan_index_key(char *why, size_t n);
void linux_scan_index_key_dir(char *out, size_t n);
void linux_scan_index_open(const struct linux_launch *l, struct linux_scan *s,
			   struct linux_scan_ctx *c, const bool *guard_of);
void linux_scan_index_store(struct linux_scan_index *ix, bool truncated, bool start_watchers);
/* A directory of the tree's index replayed (its record is kept as it is). */
void linux_scan_index_reached(struct linux_scan_index *ix, unsigned tree,
			      const struct linux_index_dir *d);
/* After the walk: each tree's replayed, from the records reached. */
void linux_scan_index_count(struct linux_scan_index *ix);
void linux_scan_index_free(struct linux_scan_index *ix);
/* A directory whose ctime is within this many seconds of the walk's start is not
 * replayed next time (tests set a negative value to replay fresh trees). */
#define LINUX_SCAN_RACY_SECONDS 3
extern int linux_scan_racy_seconds;

/* scan_index_file.c, shared with the watcher: read a file of the index directory
 * when it is the caller's, unwritable by others, single-linked, not a symlink; and the
 * names of a tree's files there ("idx", "sock", "lock"). */
void *linux_scan_index_read(int dirfd, const char *name, size_t *len);
/* linux_index_parse for what linux_scan_index_read returned (a mapping). */
int linux_scan_index_parse(void *buf, size_t len, struct linux_index *ix, char *why, size_t n);
void linux_scan_index_name(const struct linux_index_key *k, const char *ext, char *out, size_t n);

/* The index watcher (scan_watch.c, scan_watch_client.c): a process per tree that
 * keeps inotify watches on every indexed directory, outlives the launch that started
 * it, and tells the next launches which directories changed since the index file was
 * written, so that the others need not even be stat'ed. It exits after
 * LINUX_WATCH_IDLE_SECONDS without a question it answered (a refused one does not keep
 * it; HALO_RUN_INDEX_WATCH_IDLE lowers the wait), when its tree or its socket is
 * removed, or when its index file stops being valid. */
#define LINUX_WATCH_ARGV0 "halo-run-index-watch"
/* A watcher pays only where the walk it saves costs more than asking it: a launch
 * whose walk replayed an index and still took less than this starts none (a first
 * walk starts none either; HALO_RUN_INDEX_WATCH=1 starts one anyway, for tests).
 * Measured (README, "The workspace index"): re-checking an indexed tree without a
 * watcher costs about 1 ms per thousand directories, asking one a socket round trip;
 * a watcher is a process of its own. */
#define LINUX_WATCH_PAYS_US 5000
/* A session's call walks at every call too, and a whole call should take about a
 * millisecond: a walk of this much already pays for a watcher there (measured: 552
 * directories, 20,000 files, re-checked in 0.6-1.1 ms, asking the watcher 0.3-0.5). */
#define LINUX_WATCH_PAYS_CALL_US 500
/* Nor in a tree of fewer directories than this, however long its walk took: the time is
 * wall time, and a walk of a handful of directories that the scheduler preempted (a
 * loaded machine) is no sign of a large tree. Re-listing so few costs less than asking
 * a watcher, a process of its own that must be woken and scheduled for every launch
 * (measured on 2 loaded cores: an empty workspace's session calls each waited for the
 * watcher a walk of 0.85 ms had started). */
#define LINUX_WATCH_MIN_DIRS 128
/* A watcher checks this often that its tree is still there (removed, unmounted,
 * replaced): it ends, with the tree's index, within twice that. */
#define LINUX_WATCH_CHECK_MS	 500
#define LINUX_WATCH_IDLE_SECONDS 900
#define LINUX_WATCH_MAGIC	 0x68697731U
#define LINUX_WATCH_MAX_DIRTY	 16384 /* more changed directories: "unknown" */
#define LINUX_WATCH_TIMEOUT_MS	 50    /* a launch waits no longer for an answer */
enum { LINUX_WATCH_SYNC = 1 };
enum { LINUX_WATCH_OK = 0, LINUX_WATCH_UNKNOWN = 1 };
struct linux_watch_msg {
	uint32_t magic, op;
	uint64_t token; /* the checksum of the index file the launch loaded */
};
struct linux_watch_reply {
	uint32_t magic, status;
	uint32_t n, bytes; /* changed directories: n relative paths, NUL-terminated */
};
/* false: no watcher is asked nor started (tests; HALO_RUN_INDEX_WATCH=0). */
extern bool linux_scan_watch_enabled;
/* true: one is started whatever the walk took (HALO_RUN_INDEX_WATCH=1). */
extern bool linux_scan_watch_forced;
void linux_scan_watch_sync(struct linux_scan_index *ix, struct linux_scan_tree_index *t);
/* Does process pid see the file tree as this one does (same mount namespace, same
 * root)? A watcher vouches only for its own view: both ends check. */
bool linux_scan_same_view(pid_t pid);
/* Would a watcher pay for tree t after this walk (LINUX_WATCH_PAYS_US, _CALL_US,
 * LINUX_WATCH_MIN_DIRS; always when forced)? */
bool linux_scan_watch_pays(const struct linux_scan_index *ix,
			   const struct linux_scan_tree_index *t);
/* The directories this index directory's other running watchers watch (all but the
 * tree dev/ino's): the cap (linux_scan_watch_cap) is for all of them together. */
size_t linux_scan_watch_held(const char *dir, uint64_t dev, uint64_t ino);
void linux_scan_watch_start(const struct linux_scan_index *ix,
			    const struct linux_scan_tree_index *t);
/* The watcher's own main (exec'd as LINUX_WATCH_ARGV0 --index-watch INDEX_DIR ROOT
 * walk-us=N max-dirs=N idle-s=N); it ends after idle_s seconds without a question it
 * answered. */
void linux_scan_watch_main(const char *dir, const char *root, size_t max_dirs, unsigned idle_s)
    __attribute__((noreturn));

/* Is `name` a persistence-guard target found by its name (.bashrc, .vscode, ...)? */
bool linux_scan_guard_name(const char *name);
const char *const *linux_scan_guard_names(size_t *n);

/* The repository at `dotgit` (a .git directory, or a .git file pointing at one) whose
 * work tree is `worktree`: guard its hooks and config, the hook directory and
 * included files its config names, and its submodules' git directories. */
/* The global and system git configs' hooksPath, when absolute (scan_git.c). */
void linux_scan_git_global(struct linux_scan *s, const char *home);
/* That hooksPath as written ("" for none), read on first need and kept in c->s. */
const char *linux_scan_git_global_hooks(struct linux_scan_ctx *c);
void linux_scan_git_repo(struct linux_scan_ctx *c, const char *dotgit, const char *worktree,
			 bool is_file);

/* Add `path` to list, or its resolved target when it is a symlink (nothing when the
 * target does not exist). Returns true when something was added. */
bool linux_scan_add_resolved(struct linux_scan *s, struct linux_paths *list, const char *path);

/* scan_pin.c. Resolve `path` (absolute) one component at a time, as the kernel would,
 * appending each symlink met (its own absolute path) to s->links when `links`. 0 with
 * the real path in out; -ENOENT with the first missing path in out (where a create
 * would happen); -ELOOP past 40 links; other -errno. What each component is (missing,
 * a symlink and its target, anything else) is asked of the kernel once per scan and
 * kept in s->memo: the scan is one snapshot of the host's names. */
int linux_scan_resolve(struct linux_scan *s, const char *path, char *out, size_t n, bool links);
/* The same; on -ENOENT, tail (tn bytes) also gets what follows the first missing name
 * ("" when it was the last), as it would be resolved from there. */
int linux_scan_resolve_tail(struct linux_scan *s, const char *path, char *out, size_t n, bool links,
			    char *tail, size_t tn);
/* realpath(3) through the same memo (a relative path: realpath itself); out holds
 * PATH_MAX bytes. false with errno set. */
bool linux_scan_realpath(struct linux_scan *s, const char *path, char *out);
/* scan_memo.c: lstat + readlink of `path` through s->memo: -errno, 0 for anything but
 * a symlink, 1 for a symlink (its target in *target, the memo's). */
int linux_scan_memo_lstat(struct linux_scan *s, const char *path, const char **target);
/* Whether the memo's listings show that absolute `path` does not resolve (some
 * directory on the way, listed, lacks the next name); false when unsure. */
bool linux_scan_memo_missing(struct linux_scan *s, const char *path);
/* Whether absolute `path` exists with no symlink on the way, learnt in one lookup
 * (and noted in the memo for every name on it) when the memo knows too few of its
 * names; false when that cannot be said so (ask one name at a time). */
bool linux_scan_memo_plain_path(struct linux_scan *s, const char *path);
/* scan_pin.c: whether `path` exists, written plainly (no empty, "." or ".." name),
 * with no symlink on the way, itself included: one openat2(RESOLVE_NO_SYMLINKS). */
bool linux_scan_no_links(const char *path);
/* The same from the listings made so far only: none is made or counted towards. */
bool linux_scan_memo_known_missing(struct linux_scan *s, const char *path);
/* scan_bounds.c, after the walk: 0, or -E2BIG with e set when a truncated walk is
 * refused (failIfUnavailable), or the masks, guards and pins need more mounts than
 * linux_scan_max_mounts (a truncated walk accepted is said in l->warnings). */
int linux_scan_judge_truncated(const struct linux_launch *l, const struct linux_scan *s,
			       struct halo_err *e);
int linux_scan_check_mounts(const struct linux_scan *s, struct halo_err *e);
/* The names in directory `dir` (absolute, resolved) that start with prefix
 * (policy_home_prefix_name) into out, from the memo's listing (made now when not yet)
 * or, where the memo cannot list it, from readdir: 0 or -errno. */
int linux_scan_memo_names(struct linux_scan *s, const char *dir, const char *prefix,
			  struct linux_paths *out);
/* Forget what s->memo holds (linux_scan_free, and whenever the scan makes a directory). */
void linux_scan_memo_free(struct linux_scan *s);

/* scan_home.c: the home persistence set (policy_home_set_each) of each home (pw and
 * $HOME) that a writable tree is or holds: what exists guarded (and the links on the
 * way pinned), what is missing into s->home_missing (its nearest existing directory
 * pinned), a symlink loop on the way refused like the guard's. */
void linux_scan_home_set(const struct linux_launch *l, struct linux_scan *s);
/* ... and the floor's and protectedPaths' missing entries into s->floor_missing. */
void linux_scan_protected_missing(struct linux_scan *s);

/* Each symlink up to depth levels below the real directory dir (scan_links.c, at most
 * 1024 entries below it and 16384 a launch, .git skipped): fn gets the link, what
 * resolving it gave (0, or -errno: linux_scan_resolve_tail's), where it leads and the
 * missing tail; and each regular file with another name (a hard link) as (path, 1,
 * path). */
typedef void (*linux_scan_link_fn)(struct linux_scan *s, const char *link, int rc, char *real,
				   char *tail, size_t tn, void *arg);
void linux_scan_inner_links(struct linux_scan *s, const char *dir, int depth, linux_scan_link_fn fn,
			    void *arg);

/* Whether path was walked or checked already this scan (noted if not). */
bool linux_scan_links_seen(struct linux_scan *s, const char *path);
/* A line for each directory whose links scan_links.c stopped following at its bounds. */
void linux_scan_say_links(const struct linux_launch *l, struct linux_scan *s);
/* A protected path (the floor's, sandbox.protectedPaths): masked where it leads, kept
 * from being made where missing in a writable tree (s->floor_unmade), and what the
 * links inside a protected directory lead to as well (scan_links.c). */
void linux_scan_protect(struct linux_scan *s, const char *path);

/* A guard target: its real path guarded, every symlink on the way recorded to be
 * pinned; a link that leads nowhere (or, with must_exist, any missing target: a path
 * a git config names) recorded in s->dangling. True when guarded. */
bool linux_scan_add_guard(struct linux_scan *s, const char *path, bool must_exist);

/* A protected path: its real path masked, every symlink on the way recorded to be
 * pinned (the link protects as much as its target). True when masked. */
/* linux_scan_add_mask, saying how: 0 masked at path, 1 at what a link on the way
 * leads to, -1 nothing there (no link on the way), -2 nothing where a link leads. */
int linux_scan_add_mask_how(struct linux_scan *s, const char *path);
bool linux_scan_add_mask(struct linux_scan *s, const char *path);
/* The same for a symlink with a protected name that the walk found: when it leads
 * elsewhere, the pair is kept (s->link_masks, s->link_masks_to) so that a refusal or
 * a warning about the mask names the link, the thing to remove. */
bool linux_scan_add_link_mask(struct linux_scan *s, const char *link);
/* The link of such a pair that masks m, or NULL; and the warning, one per pair whose
 * target lies in the system's own trees. */
const char *linux_scan_link_of(const struct linux_scan *s, const char *m);
void linux_scan_say_link_masks(const struct linux_launch *l, const struct linux_scan *s);
/* The same for halo-run's own state (an index directory, a session's, a watcher's
 * socket): also recorded in s->own. */
bool linux_scan_add_own_mask(struct linux_scan *s, const char *path);
/* Does the ".git" in the directory dfd hold what a git directory holds (HEAD and
 * commondir, or objects and refs)? Its objects and refs are not walked for names. */
bool linux_scan_dotgit_is_gitdir(int dfd);

/* After the walk, masks and guards settled: the pinned list (see linux_scan), the
 * missing guard targets (when `guard`), and the refusal of guard chains the command
 * could complete (-EPERM, e set). */
int linux_scan_pin(bool guard, struct linux_scan *s, struct halo_err *e);
/* scan_index_file.c: the caches directory's parent pinned when a writable tree holds it. */
void linux_scan_cache_pin(const struct linux_launch *l, struct linux_scan *s);

/* scan_sockets.c: mask the host's pathname unix sockets the command could reach by
 * name (bound ones from /proc/net/unix, known places, $SSH_AUTH_SOCK, $DOCKER_HOST),
 * except those sandbox.unixSockets names, which go to s->sockets_open. More than
 * LINUX_SCAN_MAX_SOCKETS to mask sets s->sockets_truncated. */
#define LINUX_SCAN_MAX_SOCKETS	    4096
#define LINUX_MAX_OPEN_SOCKETS	    128 /* unixSockets, in both home forms */
#define LINUX_SCAN_MAX_SOCKET_LINES (256 * 1024)
void linux_scan_host_sockets(const struct linux_launch *l, struct linux_scan *s);
/* Is the socket at `path` an index watcher's: named as one (.../halo-run/index/NAME.sock)
 * and served by a process of this uid running this very binary? (One connect.) */
bool linux_scan_own_socket(const char *path);

/* Sort paths with '/' lowest (a directory right before what is beneath it) and drop
 * duplicates (scan.c). */
/* qsort/bsearch order of paths: '/' sorts lowest, so a directory is followed by
 * what is beneath it. */
int linux_path_cmp(const void *a, const void *b);
void linux_paths_sort_unique(struct linux_paths *p);

/* Is `path` equal to or beneath `dir`? (Both absolute, no trailing slash.) */
bool linux_path_beneath(const char *path, const char *dir);
bool linux_paths_beneath_any(const char *path, const struct linux_paths *dirs);

/* Send the masked and guarded lists to the sandbox's init (scan_late.c). Failures are
 * not reported: they mean the child is gone, and it says why. */
void linux_scan_send(const struct linux_scan *s, int fd);

/* sandbox.allowRead and the sanitized floor files (scan_carve.c): collect them (before
 * the clone), check the carve-outs against every mask (before the masks are
 * normalised), free them. */
void linux_scan_carve(const struct linux_launch *l, struct linux_scan *s);
int linux_scan_check_carves(const struct linux_scan *s, struct halo_err *e);
void linux_scan_carve_free(struct linux_scan *s);

/* Is `path` beneath a directory the sandbox gets fresh (/tmp, /run, /var/run, /dev),
 * so that the host's content there is not visible inside? */
bool linux_path_in_fresh_dir(const char *path);

#endif
