/* The creation broker's gate: every trapped call passes broker_admit before its row's
 * function performs it (as OpenSSH's monitor has one request table and one gate).
 * The gate reads the caller's arguments once, by the row's layout (broker_parse: no
 * file system, so the fuzz target runs it as it is), then opens what the call acts on
 * and judges it: the new name in the parent directory it lands in (pins, git rules),
 * a name in procfs, link's existing file, an exchanged name. What the row's function
 * receives is what was checked: no path is resolved again between check and use. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "linux/broker_emul_int.h"

/* A NUL-terminated string of the caller, page by page (a read that crosses into an
 * unmapped page fails as a whole). */
static int read_str(const struct broker_mem *m, uint64_t addr, char *buf, size_t n)
{
	size_t got = 0;

	if (addr == 0)
		return -EFAULT;
	while (got < n) {
		size_t want = 4096 - ((addr + got) & 4095);
		ssize_t k;

		if (want > n - got)
			want = n - got;
		k = m->read(m->ctx, addr + got, buf + got, want);
		if (k < 0)
			return (int)k;
		if (k == 0)
			return -EFAULT;
		if (memchr(buf + got, '\0', (size_t)k))
			return 0;
		got += (size_t)k;
	}
	return -ENAMETOOLONG;
}

/* /proc/self/... and /proc/thread-self/... name the caller, not init. */
int broker_own_proc(pid_t tid, char *path, size_t n)
{
	static const char *const selves[] = {"/proc/self", "/proc/thread-self"};
	char tmp[PATH_MAX];

	for (size_t i = 0; i < 2; i++) {
		size_t k = strlen(selves[i]);
		if (strncmp(path, selves[i], k) != 0 || (path[k] != '/' && path[k] != '\0'))
			continue;
		if (snprintf(tmp, sizeof(tmp), "/proc/%d%s", (int)tid, path + k) >=
		    (int)sizeof(tmp))
			return -ENAMETOOLONG;
		snprintf(path, n, "%s", tmp);
		return 0;
	}
	return 0;
}

static int read_path(const struct broker_mem *m, pid_t tid, uint64_t addr, char *buf, size_t n)
{
	int rc = read_str(m, addr, buf, n);

	return rc < 0 ? rc : broker_own_proc(tid, buf, n);
}

/* bind's address: read whole; a file name only for AF_UNIX with a path (an abstract
 * or unnamed address makes no name in a directory). */
static int parse_sockaddr(const struct broker_mem *m, uint64_t addr, uint64_t len64,
			  struct broker_req *r)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)&r->sa;
	size_t off = offsetof(struct sockaddr_un, sun_path), plen;
	socklen_t len = (socklen_t)len64;
	ssize_t k;

	if (len < sizeof(sa_family_t) || len > sizeof(r->sa))
		return -EINVAL;
	k = m->read(m->ctx, addr, &r->sa, len);
	if (k < 0)
		return (int)k;
	if (k != (ssize_t)len || addr == 0)
		return -EFAULT;
	r->len = len;
	plen = len > off ? len - off : 0;
	if (r->sa.ss_family != AF_UNIX || plen == 0 || un->sun_path[0] == '\0')
		return 0;
	if (len > sizeof(struct sockaddr_un))
		return -EINVAL; /* as the kernel says of an over-long unix address */
	memcpy(r->path, un->sun_path, plen);
	r->path[plen] = '\0';
	r->has_name = true;
	return 0;
}

/* Argument pos of the call, or dflt when the call has none there. */
static uint64_t arg(const uint64_t *a, signed char pos, uint64_t dflt)
{
	return pos == BROKER_NO ? dflt : a[pos];
}

static void req_init(struct broker_req *r, const struct broker_row *row)
{
	r->row = row;
	r->dfd = r->odfd = AT_FDCWD;
	r->flags = row ? row->fixed_flags : 0;
	r->fd = -1;
	r->mode = 0;
	r->dev = 0;
	r->len = 0;
	r->size = 0;
	r->xname[0] = '\0';
	r->value = NULL;
	r->vsize = 0;
	r->has_name = false;
	r->magic = false;
	r->path[0] = r->old[0] = '\0';
	r->base = r->obase = r->src = -1;
	r->on.pfd = -1;
	r->nn.pfd = -1;
	r->nn.git = BROKER_GIT_OK;
	r->nn.last[0] = '\0';
}

/* setxattr's name and value, read whole (as the kernel copies them). */
static int parse_xattr(const struct broker_mem *m, uint64_t name, uint64_t value, uint64_t size,
		       struct broker_req *r)
{
	int rc = read_str(m, name, r->xname, sizeof(r->xname));

	if (rc == -ENAMETOOLONG || (rc == 0 && r->xname[0] == '\0'))
		return -ERANGE; /* what the kernel says of such a name */
	if (rc < 0)
		return rc;
	if (size > 65536)
		return -E2BIG; /* XATTR_SIZE_MAX */
	if (size == 0)
		return 0;
	if (!(r->value = malloc(size)))
		return -ENOMEM;
	r->vsize = size;
	for (size_t got = 0; got < size;) {
		ssize_t k = m->read(m->ctx, value + got, r->value + got, size - got);
		if (k <= 0)
			return k < 0 ? (int)k : -EFAULT;
		got += (size_t)k;
	}
	return 0;
}

int broker_parse(const struct broker_mem *m, pid_t tid, const struct seccomp_data *d,
		 struct broker_req *r)
{
	const struct broker_row *row = broker_row_find(d->arch, d->nr);
	const struct broker_layout *l = row ? &row->a : NULL;
	const uint64_t *a = (const uint64_t *)d->args;
	int rc = 0;

	req_init(r, row);
	if (!row)
		return -ENOSYS; /* the filter sends nothing else */
	r->dfd = (int)arg(a, l->dfd, (uint64_t)AT_FDCWD);
	r->odfd = (int)arg(a, l->odfd, (uint64_t)AT_FDCWD);
	r->flags = (int)arg(a, l->flags, (uint64_t)row->fixed_flags);
	r->mode = (mode_t)arg(a, l->mode, 0);
	r->dev = (dev_t)arg(a, l->dev, 0);
	r->fd = (int)arg(a, l->fd, (uint64_t)-1);
	r->size = (off_t)arg(a, l->size, 0);
	/* The strings in the kernel's order: the existing side (or target) first. */
	if (l->target != BROKER_NO)
		rc = read_str(m, a[l->target], r->old, sizeof(r->old));
	if (rc == 0 && l->old != BROKER_NO)
		rc = read_path(m, tid, a[l->old], r->old, sizeof(r->old));
	if (rc == 0 && l->path != BROKER_NO) {
		rc = read_path(m, tid, a[l->path], r->path, sizeof(r->path));
		r->has_name = rc == 0;
	}
	if (rc == 0 && l->addr != BROKER_NO)
		rc = parse_sockaddr(m, a[l->addr], a[l->len], r);
	if (rc == 0 && l->xname != BROKER_NO)
		rc = parse_xattr(m, a[l->xname], a[l->value], a[l->vsize], r);
	return rc;
}

/* The caller's memory, through /proc/<tid>/mem: init runs under the deny list too,
 * which refuses process_vm_readv. */
struct proc_mem {
	int fd, err;
};

static ssize_t proc_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	const struct proc_mem *pm = ctx;
	ssize_t k;

	if (pm->fd < 0)
		return pm->err;
	k = pread(pm->fd, buf, n, (off_t)addr);
	return k < 0 ? 0 : k; /* unreadable there: EFAULT */
}

/* link's existing file, opened O_PATH: a second name for a git directory's config or
 * hook would write it in place. AT_EMPTY_PATH links the caller's fd itself (an
 * O_TMPFILE): through its /proc entry, which needs no capability. */
static int open_source(struct call *c, struct broker_req *r)
{
	char p[64];
	const char *name = r->old;
	int base = r->obase, flags = r->flags;

	if ((flags & AT_EMPTY_PATH) && r->old[0] == '\0') {
		snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)c->tid, r->odfd);
		name = p;
		base = AT_FDCWD;
		flags = AT_SYMLINK_FOLLOW;
	}
	r->src =
	    openat(base, name, O_PATH | O_CLOEXEC | ((flags & AT_SYMLINK_FOLLOW) ? 0 : O_NOFOLLOW));
	if (r->src < 0)
		return -errno;
	/* (review 28) No second name for a kept file (a replaced entry, one the host made
	 * where a pin was, a name already a second one), nor for the host's temp file
	 * beside one: written through it, it would be the entry once renamed over it. */
	if (linux_broker_at_kept(c->b, r->src, NULL) || linux_broker_alias_kept(c->b, r->src) ||
	    linux_broker_fresh_opened(c->b, c->tid, r->src))
		return -EACCES;
	return linux_broker_git_check_opened(c->b, r->src);
}

/* RENAME_EXCHANGE makes the old name anew too: it is checked as one made, and what
 * the new name holds moves there (.git <-> x: checked as a rename onto .git). */
static int exchange_side(struct call *c, struct broker_req *r)
{
	struct newname *on = &r->on;
	int git;

	if (linux_broker_pinned(c->b, on->pfd, on->last, BROKER_OP_RENAME))
		return -EACCES;
	if ((git = linux_broker_git_check(c->b, on->pfd, on->last, BROKER_OP_RENAME)) < 0)
		return git;
	if (git == BROKER_GIT_CONFIG)
		return -EACCES; /* a git config is replaced by rename only, never swapped */
	return linux_broker_git_dotgit_rename(c->b, r->nn.pfd, r->nn.last, on->pfd, on->last);
}

/* A rename's existing side: its directory opened once (every check and the rename act
 * on it). Not a kept name moved away (the host's temp file at a prefix-kept name: its
 * rename over the entry would fail, the entry lost), nor a replaced read-only entry. */
static int rename_source(struct call *c, struct broker_req *r)
{
	char path[PATH_MAX];
	int slash;

	snprintf(path, sizeof(path), "%s", r->old);
	if ((slash = broker_split_open(r->obase, path, &r->on)) < 0)
		return slash;
	if (linux_broker_at_kept(c->b, r->on.pfd, r->on.last))
		return -EACCES;
	if (slash)
		strcat(r->on.last, "/");
	return 0;
}

int broker_admit_name(struct call *c, struct broker_req *r)
{
	struct statfs sf;
	int rc = broker_open_parent(c, r->base, r->path, &r->nn);

	if (rc < 0)
		return rc;
	/* A name in procfs is a magic link: opened by init, it must be the caller's own. */
	r->magic = (r->row->checks & BROKER_CHECK_PROCFS) && fstatfs(r->nn.pfd, &sf) == 0 &&
		   sf.f_type == PROC_SUPER_MAGIC;
	return r->magic && !broker_own_procfs(c, r->nn.pfd) ? -EACCES : 0;
}

/* The judging half of the gate, on a parsed request. */
static int admit_parsed(struct call *c, struct broker_req *r)
{
	const struct broker_row *row = r->row;
	int rc;

	c->op = row->op == BROKER_OP_OPEN_CREATE && !(r->flags & O_CREAT) ? BROKER_OP_OPEN_WRITE
									  : row->op;
	if (row->a.old != BROKER_NO) {
		r->obase = broker_open_base(c, r->odfd, r->old[0] ? r->old : ".");
		if (r->obase < 0)
			return r->obase;
		if (row->op == BROKER_OP_RENAME && r->old[0] == '\0')
			return -ENOENT;
	}
	/* bind without a file name (abstract, or not AF_UNIX): nothing is made. */
	if (!(row->checks & BROKER_CHECK_NEW) || !r->has_name)
		return 0;
	if ((r->base = broker_open_base(c, r->dfd, r->path)) < 0)
		return r->base;
	if ((rc = broker_admit_name(c, r)) < 0)
		return rc;
	if (!broker_still_valid(c))
		return -ENOENT;
	if ((row->checks & BROKER_CHECK_SOURCE) && (rc = open_source(c, r)) < 0)
		return rc;
	if (row->op == BROKER_OP_RENAME && (rc = rename_source(c, r)) < 0)
		return rc;
	if ((row->checks & BROKER_CHECK_EXCHANGE) && (r->flags & RENAME_EXCHANGE))
		return exchange_side(c, r);
	return 0;
}

int broker_admit(struct call *c, struct broker_req *r)
{
	char p[64];
	struct proc_mem pm;
	struct broker_mem m = {proc_read, &pm};
	int rc;

	snprintf(p, sizeof(p), "/proc/%d/mem", (int)c->tid);
	pm.fd = open(p, O_RDONLY | O_CLOEXEC);
	pm.err = pm.fd >= 0 ? 0 : errno == ENOENT ? -ESRCH : -EPERM;
	rc = broker_parse(&m, c->tid, &c->req->data, r);
	if (pm.fd >= 0)
		close(pm.fd);
	return rc < 0 ? rc : admit_parsed(c, r);
}

void broker_req_release(struct broker_req *r)
{
	int *fds[] = {&r->base, &r->obase, &r->src, &r->nn.pfd, &r->on.pfd};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
	free(r->value);
	r->value = NULL;
}

long linux_broker_emulate(struct linux_broker *b, const struct seccomp_notif *req, int *fd_out)
{
	struct call c = {.b = b,
			 .req = req,
			 .tid = (pid_t)req->pid,
			 .op = BROKER_OP_OPEN_CREATE,
			 .umask = 022,
			 .judged = false};
	struct broker_req r;
	long rc;

	*fd_out = -1;
	rc = broker_admit(&c, &r);
	if (rc == 0) {
		rc = r.row->emul(&c, &r, fd_out);
		broker_learn_note(b, &r, rc, true);
	} else {
		broker_learn_note(b, &r, rc, false);
	}
	broker_req_release(&r);
	broker_judge_unlock(&c);
	return rc;
}
