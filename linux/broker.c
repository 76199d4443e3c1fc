/* The creation broker's plumbing: the filter, the listener's way to init, the pins,
 * and one notification answered. See broker_int.h for why it exists and why every
 * trapped call is performed by init rather than let through. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/broker_emul_int.h"

#define STEP "persistence guard"

/* Linux 6.6: the caller and init switch on one CPU instead of waking each other
 * across CPUs (the round trip is then a fraction of the cross-CPU wake-up). */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

#ifdef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define HALO_WAIT_KILLABLE_RECV SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#else
#define HALO_WAIT_KILLABLE_RECV (1UL << 5)
#endif

void linux_broker_install_or_die(int sock, bool await_ack, int rfd)
{
	struct sock_filter f[BROKER_BPF_MAX];
	long n = broker_bpf_build(f, BROKER_BPF_MAX, linux_broker_home_active());
	char dummy = 0;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {&dummy, 1};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf};
	struct cmsghdr *cm;
	int lfd;

	if (n < 0)
		linux_die(rfd, STEP, (int)-n, "build the creation broker's filter");
	struct sock_fprog prog = {(unsigned short)n, f};

	/* Waiting killably once init has the call (5.19+): a signal then cannot make the
	 * kernel restart a call init has already performed (mkdir twice: EEXIST). */
	lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			   SECCOMP_FILTER_FLAG_NEW_LISTENER | HALO_WAIT_KILLABLE_RECV, &prog);
	if (lfd < 0 && errno == EINVAL)
		lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
				   SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (lfd < 0)
		linux_die(rfd, STEP, errno,
			  "install the seccomp listener that refuses creating missing guard "
			  "targets (Linux 5.14 or later is needed)");
	mh.msg_controllen = sizeof(u.buf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &lfd, sizeof(int));
	if (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0)
		linux_die(rfd, STEP, errno, "hand the seccomp listener to init");
	close(lfd);
	/* Init's word that a worker is there to answer (linux_broker_ack): only then does
	 * the command run, the worker already counted in the pids budget. */
	if (await_ack && linux_broker_await_ack(sock) < 0)
		linux_die(rfd, STEP, EPIPE, "init did not start the creation broker");
	close(sock);
}

int linux_broker_ack(int sock)
{
	ssize_t n;

	do
		n = send(sock, "k", 1, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : -errno;
}

int linux_broker_await_ack(int sock)
{
	char c;
	ssize_t n;

	do
		n = read(sock, &c, 1);
	while (n < 0 && errno == EINTR);
	return n == 1 && c == 'k' ? 0 : -EPIPE;
}

bool linux_broker_receive(struct linux_broker *b, int sock)
{
	char dummy;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {&dummy, 1};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *cm;
	ssize_t n;

	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	close(sock);
	cm = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
	if (!cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return false;
	memcpy(&b->listener, CMSG_DATA(cm), sizeof(int));
	(void)ioctl(b->listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	return true;
}

static void sizes_or_die(struct linux_broker *b, int rfd)
{
	struct seccomp_notif_sizes sz;

	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
		linux_die(rfd, STEP, errno, "seccomp user notification is unavailable");
	/* The kernel's structs may be larger than ours: allocate what it says. */
	b->req_size = sz.seccomp_notif > sizeof(*b->req) ? sz.seccomp_notif : sizeof(*b->req);
	b->resp_size =
	    sz.seccomp_notif_resp > sizeof(*b->resp) ? sz.seccomp_notif_resp : sizeof(*b->resp);
	b->req = calloc(1, b->req_size);
	b->resp = calloc(1, b->resp_size);
	b->notes = calloc(1, sizeof(*b->notes));
	if (!b->req || !b->resp || !b->notes)
		linux_die(rfd, STEP, ENOMEM, "seccomp notification buffers");
}

/* Yama's ptrace_scope 2 and 3 keep init from reading the command's paths even as its
 * ancestor (scope 1 allows that). */
static int yama_scope(void)
{
	char buf[16] = "";
	int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	return n > 0 ? atoi(buf) : 0;
}

bool linux_broker_guard_git(const struct linux_launch *l)
{
	return l->policy->guard_persistence != 0 && l->policy->mode != POLICY_MODE_READ_ONLY;
}

bool linux_broker_expected(const struct linux_launch *l, const struct linux_scan *s)
{
	return (s->missing.n > 0 || s->home_prefix.n > 0 || linux_broker_guard_git(l)) &&
	       yama_scope() < 2;
}

/* The directory the last pin was made in: the missing guard names at a tree's top all
 * share it, and each would open and stat it again. */
struct pin_dir {
	char path[PATH_MAX];
	dev_t dev;
	ino_t ino;
};

/* The pin for the missing path p: its nearest directory that exists (in the sandbox's
 * view), the name to be made there, and what follows on the way (home set entries whose
 * directories are missing too). */
static void pin_or_die(struct broker_pin *pin, const char *p, struct pin_dir *last, int rfd)
{
	char dir[PATH_MAX];
	size_t len = strlen(p);
	struct stat st;
	bool found = false, known = false;
	int fd = -1;

	if (p[0] != '/' || len >= sizeof(dir) || len < 2)
		linux_die(rfd, STEP, EINVAL, "bad missing guard target %s", p);
	memcpy(dir, p, len + 1);
	for (char *sl; !found && (sl = strrchr(dir, '/'));) {
		const char *name = p + (sl - dir) + 1, *end = strchr(name, '/');
		size_t nl = end ? (size_t)(end - name) : strlen(name);
		const char *at;

		if (nl == 0 || nl > NAME_MAX)
			linux_die(rfd, STEP, EINVAL, "bad missing guard target %s", p);
		*sl = '\0';
		at = sl == dir ? "/" : dir;
		known = last->path[0] && strcmp(at, last->path) == 0;
		/* ENOTDIR: a file where a directory of the path would be (it may be
		 * swapped for one): the nearest directory above it is the pin. */
		if (!known && (fd = open(at, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 &&
		    errno != ENOENT && errno != ENOTDIR)
			linux_die(rfd, STEP, errno, "open %s to refuse creating %s in it", at,
				  name);
		if (!known && fd < 0)
			continue;
		found = true;
		memcpy(pin->name, name, nl);
		pin->name[nl] = '\0';
		if (end && !(pin->rest = strdup(end + 1)))
			linux_die(rfd, STEP, ENOMEM, "the missing guard targets");
	}
	if (!found || (!known && fstat(fd, &st) < 0))
		linux_die(rfd, STEP, !found ? ENOENT : errno, "open a directory of %s", p);
	if (!known) {
		close(fd);
		snprintf(last->path, sizeof(last->path), "%s", dir[0] ? dir : "/");
		last->dev = st.st_dev;
		last->ino = st.st_ino;
	}
	pin->dev = last->dev;
	pin->ino = last->ino;
	if (pin->rest && !(pin->dir = strdup(dir[0] ? dir : "/")))
		linux_die(rfd, STEP, ENOMEM, "the missing guard targets");
}

/* A home-set or floor entry (missing_deep): kept from its writable tree's top, every
 * name on the way walked at each call, so that no rename or link puts a directory in
 * the place of one that existed at launch (another sandbox, whose pins are in its own
 * mount namespace, can rename that one away). */
static void deepen_or_die(struct broker_pin *pin, const char *p, const char *top, int rfd)
{
	size_t tl = strlen(top);
	const char *below = p + tl + (strcmp(top, "/") != 0), *end = strchr(below, '/');
	struct stat st;
	int fd;

	if (!end || (pin->dir && strcmp(pin->dir, top) == 0))
		return; /* made right in the top: the plain pin is the whole way */
	if ((size_t)(end - below) > NAME_MAX)
		linux_die(rfd, STEP, ENAMETOOLONG, "bad missing guard target %s", p);
	if ((fd = open(top, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		linux_die(rfd, STEP, errno, "open %s to keep %s from being made", top, p);
	if (fstat(fd, &st) < 0)
		linux_die(rfd, STEP, errno, "stat %s", top);
	close(fd);
	free(pin->rest);
	free(pin->dir);
	memcpy(pin->name, below, (size_t)(end - below));
	pin->name[end - below] = '\0';
	pin->rest = strdup(end + 1);
	pin->dir = strdup(top);
	if (!pin->rest || !pin->dir)
		linux_die(rfd, STEP, ENOMEM, "the missing guard targets");
	pin->dev = st.st_dev;
	pin->ino = st.st_ino;
}

static const char *deep_top(const struct linux_scan *s, const char *p, bool deep)
{
	for (size_t i = 0; i < s->missing_deep.n && !deep; i++)
		deep = strcmp(s->missing_deep.v[i], p) == 0;
	for (size_t i = 0; deep && i < s->writable.n; i++)
		if (policy_path_beneath(p, s->writable.v[i]) && strcmp(p, s->writable.v[i]))
			return s->writable.v[i];
	return NULL;
}

/* One pin for p (a prefix row's when prefix): deep when it is a home-set or floor one. */
static void pin_one_or_die(struct linux_broker *b, const struct linux_scan *s, const char *p,
			   bool prefix, struct pin_dir *last, int rfd)
{
	const char *top = deep_top(s, p, prefix);

	pin_or_die(&b->pins[b->n_pins], p, last, rfd);
	if (!(b->pins[b->n_pins].full = strdup(p)))
		linux_die(rfd, STEP, ENOMEM, "the missing guard targets");
	if (top)
		deepen_or_die(&b->pins[b->n_pins], p, top, rfd);
	b->pins[b->n_pins++].prefix = prefix;
}

bool linux_broker_pins_or_die(struct linux_broker *b, const struct linux_scan *s, bool guard_git,
			      bool required, int rfd)
{
	int yama = yama_scope();
	size_t n = s->missing.n + s->home_prefix.n;

	memset(b, 0, sizeof(*b));
	b->listener = -1;
	b->addfd_send = true;
	for (size_t i = 0; i < s->guarded.n; i++)
		linux_paths_add(&b->guarded, s->guarded.v[i]);
	if (n == 0 && !guard_git)
		return false;
	/* linux_broker_expected says the same in the supervisor (the pids budget). */
	if (yama >= 2) {
		if (!required)
			return false; /* failIfUnavailable: false (dry-run and doctor say so) */
		linux_die(rfd, STEP, EPERM,
			  "kernel.yama.ptrace_scope is %d: halo-run's init cannot read the "
			  "command's paths to refuse creating missing guard targets (%s) or "
			  "hooks in git directories; set it to 1, or "
			  "sandbox.failIfUnavailable: false to run without that",
			  yama,
			  s->missing.n	     ? s->missing.v[0]
			  : s->home_prefix.n ? s->home_prefix.v[0]
					     : "none missing");
	}
	b->guard_git = guard_git;
	if (guard_git)
		linux_broker_git_hold(b, s);
	if (n == 0) {
		linux_broker_home_setup(b);
		sizes_or_die(b, rfd);
		return true;
	}
	if (!(b->pins = calloc(n, sizeof(*b->pins))))
		linux_die(rfd, STEP, ENOMEM, "the missing guard targets");
	struct pin_dir last = {.path = ""};
	for (size_t i = 0; i < s->missing.n; i++)
		pin_one_or_die(b, s, s->missing.v[i], false, &last, rfd);
	for (size_t i = 0; i < s->home_prefix.n; i++)
		pin_one_or_die(b, s, s->home_prefix.v[i], true, &last, rfd);
	linux_broker_home_setup(b);
	sizes_or_die(b, rfd);
	return true;
}

/* Is name the way's name comp (k long; the last one when last), case folded? The last
 * of a prefix pin's way is a prefix (policy_home_prefix_name, the one predicate). */
static bool way_name(const struct broker_pin *pin, const char *comp, size_t k, bool last,
		     const char *name)
{
	char c[NAME_MAX + 1];

	if (k > NAME_MAX)
		return false;
	memcpy(c, comp, k);
	c[k] = '\0';
	return last && pin->prefix ? policy_home_prefix_name(name, c) : strcasecmp(name, c) == 0;
}

/* Is name one of the pin's names on the way (case folded)? */
static bool name_on_way(const struct broker_pin *pin, const char *name)
{
	if (way_name(pin, pin->name, strlen(pin->name), !pin->rest || !*pin->rest, name))
		return true;
	for (const char *r = pin->rest; r && *r; r += strspn(r, "/")) {
		size_t k = strcspn(r, "/");
		if (way_name(pin, r, k, !r[k + strspn(r + k, "/")], name))
			return true;
		r += k;
	}
	return false;
}

/* A call of op making `name` in the directory st, on the way to a deep pin: walked from
 * the directory that existed at launch, one name at a time, without following links.
 * The entry itself is refused; a name before it only when made by symlink, link or
 * rename (an empty directory or file there holds nothing; what is moved or linked
 * could). init answers one call at a time, and every rename passes here, so the way
 * cannot change during the walk. */
static bool deep_refused(const struct broker_pin *pin, const struct stat *st, const char *name,
			 enum broker_op op)
{
	char comp[NAME_MAX + 1];
	const char *next = pin->rest;
	int top, cur;
	bool refused = false;
	struct stat ts;

	/* Most calls make a name that is none on the way: told without a system call. */
	if (!name_on_way(pin, name))
		return false;
	top = open(pin->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	cur = top;
	/* The directory is pinned (a mount point): another one there means the tree is
	 * being rearranged; refuse the names on the way. */
	if (top < 0 || fstat(top, &ts) < 0 || ts.st_dev != pin->dev || ts.st_ino != pin->ino) {
		if (top >= 0)
			close(top);
		return strcasecmp(name, pin->name) == 0 || strcasestr(pin->rest, name) ||
		       (pin->prefix && name_on_way(pin, name));
	}
	memcpy(comp, pin->name, strlen(pin->name) + 1);
	for (;;) {
		struct stat cs;
		bool last = !*next;
		size_t k;
		int nx;

		if (way_name(pin, comp, strlen(comp), last, name) && fstat(cur, &cs) == 0 &&
		    cs.st_ino == st->st_ino && cs.st_dev == st->st_dev) {
			refused = last || op == BROKER_OP_SYMLINK || op == BROKER_OP_LINK ||
				  op == BROKER_OP_RENAME;
			break;
		}
		if (last)
			break;
		nx = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/* A link on the way (the host's: one made inside by symlink is refused
		 * above) is followed as the command's path would be (review: the host linked
		 * ~/.config/systemd to a directory of dotfiles, and the command made
		 * user/evil.service through it). */
		if (nx < 0 && (errno == ENOTDIR || errno == ELOOP))
			nx = openat(cur, comp, O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(cur);
		if ((cur = nx) < 0)
			return false; /* not made yet: nothing beneath it can be either */
		k = strcspn(next, "/");
		if (k > NAME_MAX)
			break;
		memcpy(comp, next, k);
		comp[k] = '\0';
		next += k;
		next += strspn(next, "/");
	}
	close(cur);
	return refused;
}

/* Is the file open at fd (or name in the directory open at fd), or a directory above
 * it, an entry the sandbox keeps read-only whose mount is gone? The host renamed another file over
 * it after the launch (compinit and powerlevel10k rewrite theirs so), or removed it, which detaches
 * the read-only bind in this namespace too (review 27). An entry still a mount root is as the
 * launch left it (the kernel answers for it; git's held configs are written beneath it by init's
 * own handle). */
bool linux_broker_gone_path(const struct linux_broker *b, const char *path)
{
	struct statx sx;

	for (size_t i = 0; i < b->guarded.n; i++) {
		const char *e = b->guarded.v[i];
		if (!policy_path_beneath(path, e))
			continue;
		if (statx(AT_FDCWD, e, AT_SYMLINK_NOFOLLOW, 0, &sx) < 0 ||
		    !(sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
		    !(sx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
			return true;
	}
	return false;
}

int linux_broker_name_path(int fd, const char *name, char *path, size_t n)
{
	char at[PATH_MAX];
	int k;

	if (linux_broker_fd_path(fd, at, sizeof(at)) < 0)
		return 1;
	if (!name)
		k = snprintf(path, n, "%s", at);
	else
		k = snprintf(path, n, "%s/%s", strcmp(at, "/") ? at : "", name);
	return k >= (int)n ? -1 : 0;
}

bool linux_broker_guarded_gone(const struct linux_broker *b, int fd, const char *name)
{
	char path[PATH_MAX];
	int rc;

	if (b->guarded.n == 0)
		return false;
	rc = linux_broker_name_path(fd, name, path, sizeof(path));
	return rc < 0 || (rc == 0 && linux_broker_gone_path(b, path));
}

/* Does op make the name (not write, remove or change one there: a file beside an entry
 * that was there at the launch, ~/.tmux.conf.local, stays the user's to edit)? */
static bool beside_made(enum broker_op op, int dfd, const char *name)
{
	struct stat st;

	if (op == BROKER_OP_OPEN_WRITE || op == BROKER_OP_UNLINK || op == BROKER_OP_META)
		return false;
	return op != BROKER_OP_OPEN_CREATE || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0;
}

bool linux_broker_pinned(const struct linux_broker *b, int dfd, const char *name, enum broker_op op)
{
	char path[PATH_MAX];
	struct stat st;
	int rc;

	if (b->guarded.n == 0 && b->n_pins == 0)
		return false;
	/* A read-only entry the host replaced or removed: made again, or renamed onto,
	 * from inside, it would be the command's (review 27); and what the host made at
	 * or beneath a pinned entry during the run (review 28). */
	if ((rc = linux_broker_name_path(dfd, name, path, sizeof(path))) < 0)
		return true; /* cannot tell: refuse */
	if (rc == 0 && (linux_broker_gone_path(b, path) || linux_broker_path_kept(b, path) ||
			(beside_made(op, dfd, name) && linux_broker_beside_kept(b, path))))
		return true;
	if (b->n_pins == 0)
		return false;
	if (fstat(dfd, &st) < 0)
		return true; /* cannot tell: refuse */
	/* Case folded: on a case-insensitive file system .VSCODE is .vscode. */
	for (size_t i = 0; i < b->n_pins; i++) {
		const struct broker_pin *pin = &b->pins[i];

		if (pin->rest && deep_refused(pin, &st, name, op))
			return true;
		if (!pin->rest && pin->ino == st.st_ino && pin->dev == st.st_dev &&
		    way_name(pin, pin->name, strlen(pin->name), true, name))
			return true;
	}
	return false;
}

/* Install fd in the caller and answer with its number. */
static void answer_fd(struct linux_broker *b, int fd, bool cloexec)
{
	struct seccomp_notif_addfd a = {.id = b->req->id,
					.flags = SECCOMP_ADDFD_FLAG_SEND,
					.srcfd = (unsigned)fd,
					.newfd_flags = cloexec ? O_CLOEXEC : 0};
	int n = b->addfd_send ? ioctl(b->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a) : -1;

	if (n < 0 && (!b->addfd_send || errno == EINVAL)) {
		/* Before 5.14: add, then answer with the number. */
		b->addfd_send = false;
		a.flags = 0;
		n = ioctl(b->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
		memset(b->resp, 0, b->resp_size);
		b->resp->id = b->req->id;
		b->resp->val = n;
		b->resp->error = n < 0 ? -errno : 0;
		(void)ioctl(b->listener, SECCOMP_IOCTL_NOTIF_SEND, b->resp);
	}
	close(fd);
}

void linux_broker_send_notes(const struct linux_broker *b, int fd)
{
	char buf[sizeof(b->notes->git_why) + 32];
	size_t refused = b->notes ? atomic_load(&b->notes->git_refused) : 0;
	int n;
	ssize_t w;

	if (refused == 0) {
		broker_learn_send(b, fd);
		return;
	}
	/* A worker still writing the first one: its count stands, its name is unknown. */
	n = snprintf(buf, sizeof(buf), "%zu %s", refused,
		     atomic_load(&b->notes->why_ready) ? b->notes->git_why : "?");
	w = write(fd, buf, (size_t)n + 1);
	(void)w;
	broker_learn_send(b, fd);
}

void linux_broker_answer(struct linux_broker *b, long rc, int fd)
{
	if (fd >= 0) {
		answer_fd(b, fd, rc != 0);
		return;
	}
	memset(b->resp, 0, b->resp_size);
	b->resp->id = b->req->id;
	b->resp->val = rc < 0 ? 0 : rc;
	b->resp->error = rc < 0 ? (int)rc : 0;
	(void)ioctl(b->listener, SECCOMP_IOCTL_NOTIF_SEND, b->resp);
}

void linux_broker_serve(struct linux_broker *b)
{
	int fd = -1;
	long rc;

	memset(b->req, 0, b->req_size);
	/* ENOENT: the caller was interrupted (a signal) before we looked. */
	if (ioctl(b->listener, SECCOMP_IOCTL_NOTIF_RECV, b->req) < 0)
		return;
	rc = linux_broker_emulate(b, b->req, &fd);
	if (rc != BROKER_ANSWERED)
		linux_broker_answer(b, rc, fd);
}
