/* Internal to the creation broker's emulation: the request table (broker_table.c),
 * the gate every request passes (broker_admit.c), the rows' functions (broker_emul.c,
 * broker_bind.c) and the steps they share. */
#ifndef HALO_LINUX_BROKER_EMUL_INT_H
#define HALO_LINUX_BROKER_EMUL_INT_H

#include <fcntl.h>
#include <linux/filter.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "linux/broker_int.h"

struct call {
	struct linux_broker *b;
	const struct seccomp_notif *req;
	pid_t tid;
	enum broker_op op; /* for the git rules */
	mode_t umask;	   /* the caller's (broker_take_umask) */
	bool judged;	   /* holds the broker's judgment lock (broker_judge_lock) */
};

static inline void broker_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}
#define AUTO_FD __attribute__((cleanup(broker_close_fd))) int

/* A new name: its parent directory opened from base (following links on the way, as
 * the kernel does), and the name, checked against the pins. Trailing slashes are
 * kept on the name used for the call (the kernel's rules for them stay its own) but
 * not on the one checked. */
struct newname {
	int pfd;
	char last[NAME_MAX + 2];
	int git; /* what the git rules said (BROKER_GIT_OK or BROKER_GIT_CONFIG) */
};

/* ---- The request table (broker_table.c): one row per trapped call. ----
 *
 * A row says where the call's arguments are (by position; BROKER_NO when the call has
 * none), when the filter traps it, what the name it makes is checked for and which
 * function performs it. The BPF filter (broker_bpf_build) and the dispatch
 * (broker_row_find) are both made from the table, and every request passes one gate
 * (broker_admit) before its row's function runs. */
#define BROKER_NO (-1)

struct broker_layout {
	signed char dfd, path;		 /* the name made or opened, and its directory fd */
	signed char odfd, old;		 /* the existing side of link and rename */
	signed char target;		 /* a symlink's content (a string, never resolved) */
	signed char flags, mode;	 /* open flags / link, rename flags; the mode made */
	signed char dev;		 /* mknod */
	signed char fd, addr, len;	 /* bind: the caller's socket and its address */
	signed char size;		 /* truncate's length */
	signed char xname, value, vsize; /* setxattr's name, value and its size */
};

/* When the filter sends the call to init. */
enum broker_trap {
	BROKER_TRAP_ALWAYS,
	/* Only with O_CREAT, O_WRONLY, O_RDWR or O_TRUNC in the flags (low 32 bits):
	 * read-only opens pass untouched. */
	BROKER_TRAP_WRITE,
	/* Only with a group or other write bit in the mode (chmod 666 of a kept file the
	 * host replaced would leave it writable to every local user): review 29. */
	BROKER_TRAP_MODE,
};
#define BROKER_MODE_BITS   0022
#define BROKER_WRITE_FLAGS (O_CREAT | O_WRONLY | O_RDWR | O_TRUNC)

/* What the gate checks before the row's function runs (a row's `checks`). */
enum {
	BROKER_CHECK_NEW = 1 << 0,	/* the name made: pins and git rules, in its parent */
	BROKER_CHECK_SOURCE = 1 << 1,	/* link's existing file: the git rules, as a write */
	BROKER_CHECK_EXCHANGE = 1 << 2, /* RENAME_EXCHANGE: the old name as one made too */
	BROKER_CHECK_PROCFS = 1 << 3,	/* a name in procfs: only the caller's own /proc/<pid> */
};

struct broker_req;
typedef long (*broker_emul_fn)(struct call *c, struct broker_req *r, int *fd_out);

struct broker_row {
	const char *name;
	int nr;
	struct broker_layout a;
	enum broker_trap trap;
	int fixed_flags; /* flags the call implies (creat: O_CREAT|O_WRONLY|O_TRUNC) */
	enum broker_op op;
	unsigned checks;
	broker_emul_fn emul;
};

extern const struct broker_row broker_rows[];
extern const size_t broker_n_rows;

/* The row for syscall nr of the native architecture, or NULL. */
const struct broker_row *broker_row_find(unsigned arch, int nr);

/* The filter of the table into f (at most max instructions): the number of
 * instructions, or -ENOSPC. */
#define BROKER_BPF_MAX 160
/* home: with the rows only a home workspace needs (unlink, truncate, chmod: the home
 * set's rules, broker_home.c); without them those calls never leave the kernel. */
long broker_bpf_build(struct sock_filter *f, size_t max, bool home);

/* A request, as the gate leaves it for the row's function: the arguments decoded by
 * the row's layout, the caller's strings copied once, and the descriptors the gate
 * opened and judged (-1 when not used). */
struct broker_req {
	const struct broker_row *row;
	int dfd, odfd, flags, fd; /* AT_FDCWD when the call has no directory fd */
	mode_t mode;
	dev_t dev;
	socklen_t len;
	off_t size;
	char xname[256];      /* setxattr: the attribute's name (XATTR_NAME_MAX + 1) */
	unsigned char *value; /* ... its value, vsize bytes (heap: broker_req_release) */
	size_t vsize;
	bool has_name;		    /* false: a bind whose address names no file */
	bool magic;		    /* the name is in procfs (the caller's own: checked) */
	char path[PATH_MAX];	    /* the name made (bind: the socket's path) */
	char old[PATH_MAX];	    /* the existing side, or a symlink's target */
	struct sockaddr_storage sa; /* bind */
	/* broker_admit */
	int base, obase, src;
	/* rename: the existing side's directory, opened once, and its last name: every
	 * check and the rename itself act on them (review 30: a path resolved again, through
	 * a /proc/PID/cwd the command moves, was another file each time) */
	struct newname on;
	struct newname nn;
};

/* How the gate reads the caller's memory: n bytes at addr into buf; the number read
 * (short at an unmapped page) or -errno. Production reads /proc/<tid>/mem; the fuzz
 * target, a buffer. */
struct broker_mem {
	ssize_t (*read)(void *ctx, uint64_t addr, void *buf, size_t n);
	void *ctx;
};

/* The parse half of the gate, without the file system: the row for the call, its
 * arguments decoded and range-checked, the caller's strings read through m (a path
 * longer than PATH_MAX: -ENAMETOOLONG; an unreadable one: -EFAULT), /proc/self
 * rewritten to the caller's tid. 0 or -errno (-ENOSYS: not a trapped call). */
int broker_parse(const struct broker_mem *m, pid_t tid, const struct seccomp_data *d,
		 struct broker_req *r);

/* The gate every request passes: broker_parse, then the bases reopened, the new
 * name's parent opened and judged (pins, git rules), link's source opened and judged,
 * an exchanged name judged, the caller still waiting. 0 or -errno; the descriptors
 * in r are released by broker_req_release whatever it returned. */
int broker_admit(struct call *c, struct broker_req *r);
/* The name made, judged: r->path's parent opened from r->base into r->nn (pins, git
 * rules), a name in procfs only in the caller's own /proc/<pid>. The gate's step for
 * the name, and an open's at each symlink it follows. */
int broker_admit_name(struct call *c, struct broker_req *r);
void broker_req_release(struct broker_req *r);

/* The git rules judge a directory by names other calls make (HEAD, objects, refs,
 * hooks/...): with several worker threads, a check and the action it allows must not
 * interleave with another call's, or two calls that each pass alone (make refs/ in a
 * directory whose hooks/ is empty; make hooks/pre-commit in a directory without
 * refs/) together leave a git directory with a hook. So from its first check to the
 * end of the call, a call holds one lock (taken by broker_open_parent, dropped by
 * linux_broker_emulate). Nothing under it waits: the caller's memory is read before,
 * an open that waits is handed to a child of init. Taken only with the git rules:
 * the pins name fixed directories and a missing name, which no other call changes. */
void broker_judge_lock(struct call *c);
void broker_judge_unlock(struct call *c); /* at the end of the call */

/* The base a path starts from (/, the caller's cwd or its dfd), reopened in init. */
int broker_open_base(struct call *c, int dfd, const char *path);
/* The new name's parent opened from base, the name checked (pins, git rules). */
int broker_open_parent(struct call *c, int base, char *path, struct newname *nn);
/* Its first half: path split, its directory opened once (no check); 1 when it ended
 * with a slash, 0, or -errno. */
int broker_split_open(int base, char *path, struct newname *nn);
int broker_own_proc(pid_t tid, char *path, size_t n); /* /proc/self → the caller's */
bool broker_own_procfs(struct call *c, int pfd);      /* procfs: the caller's own only */
void broker_take_umask(struct call *c);		      /* the caller's umask, for a creation */
mode_t broker_mode(const struct call *c, int pfd, mode_t mode); /* ... applied in pfd */
bool broker_still_valid(struct call *c);  /* the caller still waits for this call */
long broker_R(long rc);			  /* a syscall's result as the caller sees it */
pid_t broker_caller_tgid(struct call *c); /* the caller's process, or -ESRCH */

/* The rows' functions (broker_emul.c, broker_bind.c). */
long broker_do_open(struct call *c, struct broker_req *r, int *fd_out);
long broker_do_mkdir(struct call *c, struct broker_req *r, int *fd_out);
long broker_do_mknod(struct call *c, struct broker_req *r, int *fd_out);
long broker_do_symlink(struct call *c, struct broker_req *r, int *fd_out);
long broker_do_link(struct call *c, struct broker_req *r, int *fd_out);
long broker_do_rename(struct call *c, struct broker_req *r, int *fd_out);
long broker_do_bind(struct call *c, struct broker_req *r, int *fd_out);
long broker_do_unlink(struct call *c, struct broker_req *r, int *fd_out);
long broker_do_truncate(struct call *c, struct broker_req *r, int *fd_out);
long broker_do_chmod(struct call *c, struct broker_req *r, int *fd_out);
long broker_do_fchmod(struct call *c, struct broker_req *r, int *fd_out);
long broker_do_setxattr(struct call *c, struct broker_req *r, int *fd_out);

#endif
