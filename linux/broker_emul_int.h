/* Internal to the creation broker's emulation (broker_emul.c, broker_bind.c): one
 * trapped call, and the steps every emulated call shares. */
#ifndef HALO_LINUX_BROKER_EMUL_INT_H
#define HALO_LINUX_BROKER_EMUL_INT_H

#include <unistd.h>

#include "linux/broker_int.h"

struct call {
	struct linux_broker *b;
	const struct seccomp_notif *req;
	pid_t tid;
	const uint64_t *a;
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

/* The base a path starts from (/, the caller's cwd or its dfd), reopened in init. */
int broker_open_base(struct call *c, int dfd, const char *path);
/* The new name's parent opened from base, the name checked (pins, git rules). */
int broker_open_parent(struct call *c, int base, char *path, struct newname *nn);
void broker_take_umask(struct call *c); /* the caller's umask, for a creation */
mode_t broker_mode(const struct call *c, int pfd, mode_t mode); /* ... applied in pfd */
bool broker_still_valid(struct call *c);  /* the caller still waits for this call */
long broker_R(long rc);			  /* a syscall's result as the caller sees it */
pid_t broker_caller_tgid(struct call *c); /* the caller's process, or -ESRCH */

/* broker_bind.c */
long broker_do_bind(struct call *c, int fd, uint64_t addr, socklen_t len);

#endif
