/* The creation broker (broker.c, broker_emul.c): the guard targets missing at launch
 * cannot be mount points, so their creation is refused by the sandbox's init instead.
 * The command's calls that create a name (open with O_CREAT, creat, mkdir, mknod,
 * symlink, link, rename, in every *at form) stop in a seccomp user-notification
 * filter; init, the ancestor of every process inside, performs each one itself with
 * its own copy of the arguments and answers with the result (an opened file is
 * installed in the caller with SECCOMP_ADDFD). A copy cannot change after it is
 * checked, and the name is checked against the directory it lands in, opened first:
 * no race between check and use (the reason the kernel's documentation forbids
 * letting such a call continue after a check). Init works under the same Landlock
 * domain, credentials and mounts as the command, with the caller's umask. */
#ifndef HALO_LINUX_BROKER_INT_H
#define HALO_LINUX_BROKER_INT_H

#include <limits.h>
#include <linux/seccomp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#include "linux/gitconf.h"
#include "linux/linux_int.h"

/* A missing guard target: a name in a directory (by inode: directories that hold one
 * are mount points or pinned, so they cannot be swapped for another). */
struct broker_pin {
	dev_t dev;
	ino_t ino;
	char name[NAME_MAX + 1];
	/* A home persistence set entry whose directories are missing too: what follows
	 * name on the way to it ("user" for .config/systemd/user pinned at .config), and
	 * the path of the directory that exists (dev, ino), opened again at each call to
	 * walk the way (no descriptor is held: the command inherits init's until exec,
	 * under its open-files limit). NULL for a plain pin. */
	char *rest;
	char *dir;
	/* A prefix row of the home set (policy_home_prefixes): the last name of the way
	 * (rest's, or name when rest is NULL) is a prefix, every name it starts refused. */
	bool prefix;
	/* The missing path as the scan named it (a prefix row's: its directory/prefix):
	 * what the host makes there during the run is kept too (broker_home.c). */
	char *full;
};

/* What the command made or moved beside the home set's kept files (broker_home.c): a
 * set of files, open addressing, ino 0 free. A file is its inode and its birth time: an
 * inode number the file system gives again (ext4 hands a freed one to the next file
 * in the directory: review 29) is another file. */
struct broker_inode {
	dev_t dev;
	ino_t ino;
	int64_t btime_s;
	uint32_t btime_ns;
};
struct broker_own {
	struct broker_inode *v;
	size_t n, cap;
};

/* The config of a git directory that existed at launch: pinned (a read-only mount
 * point, which no rename can replace), written in place through init's own handle on
 * the file beneath the mount, opened before init gave up mounting (broker_git.c). */
struct broker_held_config {
	dev_t dev;
	ino_t ino;
	int fd; /* read-write, beneath the read-only mount */
};

struct linux_broker {
	int listener; /* -1: no broker */
	struct broker_held_config *held;
	size_t n_held;
	struct broker_pin *pins;
	size_t n_pins;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	size_t req_size, resp_size;
	bool addfd_send; /* SECCOMP_ADDFD_FLAG_SEND works (5.14+) */
	/* The git directory rules (broker_git.c) apply: sandbox.guardPersistence in a
	 * sandbox with writable trees. */
	bool guard_git;
	/* The scan's read-only entries (a copy): a write-open of one whose read-only
	 * mount went (the host renamed another file over it, as zsh's compinit and
	 * powerlevel10k rewrite theirs) is refused (broker_emul.c). */
	struct linux_paths guarded;
	/* broker_home.c (review 28): the directories that hold a kept file or a pin, by
	 * path, and when the broker started (CLOCK_REALTIME): a file born there after it,
	 * not the command's own, is the host's (a temp file sed -i or git config renames
	 * over the entry) and not the command's to write or link. */
	struct linux_paths home_dirs;
	struct linux_paths home_names; /* the entries there, by path (and by a link's name) */
	struct timespec home_start;
	struct broker_own *own;
	struct timespec boot_rt;    /* the boot, CLOCK_REALTIME (process start times) */
	struct broker_notes *notes; /* shared by init and every worker thread */
	bool learn;		    /* halo-run learn: refused writes are noted */
	int receive_from;	    /* the first worker: the socket the listener comes on */
};

/* broker_learn.c: note a trapped call's refusal (rc: the call's result; admitted:
 * false when the gate refused it, the guard's refusal) for halo-run learn, and send
 * the notes ("W ERRNO PATH\0", "G ERRNO PATH\0", "T\0" when cut) after the status. */
struct broker_req;
void broker_learn_note(struct linux_broker *b, const struct broker_req *r, long rc, bool admitted);
void broker_learn_send(const struct linux_broker *b, int fd);

#define BROKER_LEARN_MAX  48
#define BROKER_LEARN_PATH 1024

/* What the git rules refused: a count and the first one, written by whichever worker
 * thread refused first, read by init's main thread at the end. */
struct broker_notes {
	_Atomic size_t git_refused;
	_Atomic bool why_ready;
	char git_why[PATH_MAX + 200];
	/* halo-run learn (broker_learn.c): the distinct writes refused, sent after the
	 * status. Bounded so that everything fits the status pipe's buffer (64 KiB)
	 * with init gone: the supervisor reads it only once init has exited. */
	atomic_flag learn_lock;
	size_t n_learned;
	bool learn_cut;
	struct broker_learned {
		int err;
		bool guard;
		char path[BROKER_LEARN_PATH];
	} learned[BROKER_LEARN_MAX];
};

/* What a trapped call does to the name it makes (the git rules differ by call). */
enum broker_op {
	BROKER_OP_OPEN_CREATE,
	BROKER_OP_OPEN_WRITE, /* an existing file opened for writing */
	BROKER_OP_MKDIR,
	BROKER_OP_MKNOD,
	BROKER_OP_SYMLINK,
	BROKER_OP_LINK,
	BROKER_OP_RENAME,
	BROKER_OP_UNLINK, /* a name removed (review 29: the host's temp file is its own) */
	BROKER_OP_META,	  /* an existing file truncated, or made writable to others */
};

/* The note for the supervisor, written to fd after the command's status: what the
 * git rules refused ("N first-refusal"), nothing when they refused nothing. */
void linux_broker_send_notes(const struct linux_broker *b, int fd);

/* Whether init will run a broker for these lists (the supervisor asks, for the pids
 * budget; a broker thread that cannot start is init answering alone, still counted). */
bool linux_broker_expected(const struct linux_launch *l, const struct linux_scan *s);
/* The git directory rules apply wherever the command can write a tree of the host's. */
bool linux_broker_guard_git(const struct linux_launch *l);

/* Init, after the mounts: the pins from s->missing (opened in the sandbox's view), and
 * the git directory rules when guard_git. Returns false when there is nothing to do, or when Yama
 * forbids it and it is not `required` (sandbox.failIfUnavailable: false); dies when it is. */
bool linux_broker_pins_or_die(struct linux_broker *b, const struct linux_scan *s, bool guard_git,
			      bool required, int rfd);

/* The command's process, right before exec: install the filter and hand its listener
 * to init over `sock`; with await_ack, go on only once init's word says a worker is
 * there (not after a shared spawn, whose init starts one only once the child execs). */
void linux_broker_install_or_die(int sock, bool await_ack, int rfd);

/* Init, once every process of the command's is reaped: wait (up to timeout_s) until
 * no worker is answering a call, so that none makes a name after the status goes out. */
void linux_broker_wait_done(int timeout_s);

/* Init, after the fork: take the listener from `sock`. False when the command ended
 * before it could send it (it reports why itself). */
bool linux_broker_receive(struct linux_broker *b, int sock);

/* The command's process waits, after handing the listener over, for init's word
 * that a worker will answer (sent by the first worker itself, or by init when it
 * answers alone): 0, or -errno. */
int linux_broker_ack(int sock);
int linux_broker_await_ack(int sock);

/* Init: answer one notification (the listener is readable). */
void linux_broker_serve(struct linux_broker *b);

/* broker_pool.c. Init, once it holds the listener: the worker threads that answer every
 * notification from now on, so that init's own loop (reaping, signals, the exit)
 * never waits on a trapped call. Threads, not processes: init is the command's
 * ancestor, which Yama's ptrace_scope 1 asks of whoever reads its memory. 0 or -errno
 * (then init answers nothing and the calls fail: the command reports it). */
int linux_broker_start(struct linux_broker *b);
/* The same as soon as the command's process exists: the first worker is started now,
 * sends the command's process its word (linux_broker_ack) and takes the listener
 * from `sock` itself (it owns sock from here on, and ends when the command ended
 * before sending it). The command waits for that word before it execs: the thread is
 * there before any process of the command's own, in the sandbox's pids budget (limit
 * + init + this worker) as planned, however late init is scheduled. 0, or -errno with
 * sock untouched (the caller acks, receives and starts as before). */
int linux_broker_start_before(struct linux_broker *b, int sock);

/* Init's reaper, for every child it reaps: a process a worker started for an open
 * that waits (broker_emul.c) frees its slot. */
void linux_broker_reaped(pid_t pid);

/* A worker thread: hand an open that may wait to a child of init (a FIFO without its
 * other end, a file whose lease is being broken), at most BROKER_MAX_WAITERS at once.
 * The child answers the call; BROKER_ANSWERED, or -EAGAIN when every slot is taken. */
#define BROKER_MAX_WAITERS 64
long linux_broker_open_waiting(struct linux_broker *b, int target, int flags, bool cloexec);

/* broker_admit.c: perform the call in req for its caller (its row of the table, after
 * the gate). Returns the syscall's value
 * or -errno; *fd_out >= 0 is a file to install in the caller (the value is then the
 * O_CLOEXEC flag wanted for it); BROKER_ANSWERED when a child of init answers (an
 * open that may block). */
#define BROKER_ANSWERED LONG_MIN
long linux_broker_emulate(struct linux_broker *b, const struct seccomp_notif *req, int *fd_out);

/* Answer the current notification: with rc (a value or -errno), or by installing fd
 * (>= 0) in the caller, O_CLOEXEC when rc is non-zero. */
void linux_broker_answer(struct linux_broker *b, long rc, int fd);

/* Is making `name` (by op) in the directory open at dfd refused by a pin: a missing guard
 * target, or, for a symlink, link or rename, a name on the way to a missing home set
 * entry (what is moved or linked there could hold the entry already)? */
/* The file open at fd (name NULL), or name in the directory open at fd, is, or lies
 * beneath, a read-only entry whose mount is gone (broker.c). */
bool linux_broker_guarded_gone(const struct linux_broker *b, int fd, const char *name);
bool linux_broker_pinned(const struct linux_broker *b, int dfd, const char *name,
			 enum broker_op op);
/* The same for a path (the sandbox's view): is, or lies beneath, a read-only entry
 * whose mount is gone. */
bool linux_broker_gone_path(const struct linux_broker *b, const char *path);

/* broker_home.c (review 28): what the host makes, replaces or writes beside the home
 * set's kept entries during the run stays out of the command's hands. */
/* Init, after the pins: the start, and the set of the command's own files. */
void linux_broker_home_setup(struct linux_broker *b);
/* ... then the directories the rules hold in: those of the home set's entries
 * (s->home_guarded, the missing ones kept from their tree's top, missing_deep, and the
 * prefix rows): the rules
 * are the home set's, wherever it lands in a writable tree (the home as the workspace,
 * a dotfiles repository ~/.bashrc leads into); an ordinary workspace's root, which holds
 * only guard names, is not judged so (a file the user saves there during a run stays
 * the command's to rewrite). */
void linux_broker_home_scope(struct linux_broker *b, const struct linux_scan *s);
/* Whether any such directory is left (the filter then sends unlink, truncate, chmod). */
bool linux_broker_home_active(void);
/* Init, in a session: its calls' spawner (init's child, each call a child of it): a file
 * the host made before the caller's call started is not judged fresh. Every worker
 * thread sees it (they copy the broker). */
void linux_broker_set_spawner(pid_t spawner);
/* Is path (the sandbox's view) a pinned entry, or beneath one (the host made ~/.local/bin
 * during the run: git in it is refused as the entry is)? Case folded; a prefix pin's
 * last name by its start. */
bool linux_broker_path_kept(const struct linux_broker *b, const char *path);
/* Is path (the sandbox's view) a name beside a kept entry, in a directory of the home
 * set's: the entry's name, a dot, anything (.vimrc.tmp beside .vimrc)? A script's temp
 * file for the entry, made first by the command (a symlink to a file of its own), would
 * be what the host renames over it (review 31). */
bool linux_broker_beside_kept(const struct linux_broker *b, const char *path);
/* Is the directory open at fd one of those (that hold a kept entry)? */
bool linux_broker_home_dir_fd(const struct linux_broker *b, int fd);
/* Is the regular file open at fd, with more than one name, one of the kept files (a
 * guarded entry, a pinned one the host made, a prefix row's match): a second name made
 * for it (a link to the host's temp file before it was renamed over the entry) must
 * not write it. */
bool linux_broker_alias_kept(const struct linux_broker *b, int fd);
/* Is name in the directory open at fd (or the file open at fd, name NULL: a link's
 * source) where a kept entry is: a read-only one whose mount is gone, or at or beneath
 * a pinned one? */
bool linux_broker_at_kept(const struct linux_broker *b, int fd, const char *name);
/* Is the regular file open at fd one the host made during the run beside a kept entry
 * (in a directory that holds one; born after the start, or in a session after the
 * start of the call of the caller tid; not the command's own)? */
bool linux_broker_fresh_opened(struct linux_broker *b, pid_t tid, int fd);
/* The same for name in the directory open at dfd, not followed (a rename's sides, an
 * unlink's name); a name ending in '/' is a directory's: not judged. */
bool linux_broker_host_fresh_at(struct linux_broker *b, pid_t tid, int dfd, const char *name);
/* The command made the file open at fd (an open that created it, an O_TMPFILE), or moved
 * or linked `name` into the directory open at dfd: its own, when beside a kept entry. */
void linux_broker_note_own_opened(struct linux_broker *b, int fd);
void linux_broker_note_own_at(struct linux_broker *b, int dfd, const char *name);
/* The path of the directory open at fd into buf (n bytes): 0, or -1 (no name). */
int linux_broker_fd_path(int fd, char *buf, size_t n);
/* The path of name in the directory open at fd (of the file open at fd, name NULL) into
 * path (n bytes): 0, 1 (no name: a pipe, a socket), or -1 (too long to tell). */
int linux_broker_name_path(int fd, const char *name, char *path, size_t n);
/* The process (thread group) of thread tid, or -ESRCH (broker_emul.c). */
pid_t linux_broker_tgid(pid_t tid);

/* broker_git.c: the git directory rules for making `name` in the directory open at
 * pfd. BROKER_GIT_OK, BROKER_GIT_CONFIG (a rename onto a git directory's config: let
 * linux_broker_git_config_rename perform it), or -EACCES (refused, noted). */
#define BROKER_GIT_OK	  0
#define BROKER_GIT_CONFIG 1
#define BROKER_GIT_EMPTY                                                                           \
	2 /* an open that creates a git directory's config: made empty,                            \
	   * the caller writes to a file of its own (linux_broker_git_empty) */
int linux_broker_git_check(struct linux_broker *b, int pfd, const char *name, enum broker_op op);

/* rename(obase/old → pfd/name) of a directory onto the name .git: what it holds must
 * pass as a directory becoming a git directory's does (hooks only samples, configs on
 * the allow list, replaced by init's copies). 0 or -errno (refused, noted). */
int linux_broker_git_dotgit_rename(struct linux_broker *b, int obase, const char *old, int pfd,
				   const char *name);

/* rename(obase/old → pfd/name) onto a git directory's config: the new content
 * checked, init's own copy installed, old removed. 0 or -errno. */
long linux_broker_git_config_rename(struct linux_broker *b, int obase, const char *old, int pfd,
				    const char *name, unsigned flags);

/* Init, after the mounts and before Landlock: a read-write handle on each guarded git
 * config (config, config.worktree of a git directory) that exists, at most
 * BROKER_HELD_MAX. Best effort: a config not held is refused (EACCES) when written. */
#define BROKER_HELD_MAX 256
void linux_broker_git_hold(struct linux_broker *b, const struct linux_scan *s);

/* A config made empty by init (mode as the caller asked, less its umask), and the
 * descriptor the caller gets instead: an anonymous file, so that what it writes
 * there never reaches the config git reads. The descriptor or -errno. */
int linux_broker_git_empty(struct linux_broker *b, int pfd, const char *name, mode_t mode);

/* A file init opened for writing through a magic link (/proc/<pid>/fd/N), or the
 * source of a hard link (opened O_PATH): the rules applied to where it lies, as a write
 * there. 0 or -EACCES. */
int linux_broker_git_check_opened(struct linux_broker *b, int fd);

#endif
