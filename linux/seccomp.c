/* seccomp: a default-allow filter with a deny table, loaded last, right before exec.
 *
 * The table is the policy; the code below only turns rows into libseccomp rules. Each
 * row names a syscall (with the x86_64 number to use when this libseccomp does not know
 * the name), the errno the caller gets, at most two argument conditions and the reason.
 *
 * Choices made here:
 *  - EPERM for nearly everything: it is what an unprivileged process gets anyway, so
 *    programs already handle it.
 *  - ENOSYS for clone3, openat2 and the new mount API: their interesting arguments live
 *    in memory seccomp cannot read, and "not implemented" makes glibc and util-linux
 *    fall back to clone(), openat() and mount(), which are filtered on their flags.
 *  - EAFNOSUPPORT for socket families outside AF_UNIX, AF_INET, AF_INET6 and
 *    AF_NETLINK/NETLINK_ROUTE: "this kernel has no such family", which libaudit and
 *    friends treat as "feature absent" rather than as an error.
 *  - EPERM for SOCK_RAW and SOCK_PACKET on AF_INET/AF_INET6, as without CAP_NET_RAW.
 *  - personality: PER_LINUX, PER_LINUX32, UNAME26, both together, and the 0xffffffff
 *    query stay allowed (what container runtimes allow); anything else (notably
 *    READ_IMPLIES_EXEC and ADDR_NO_RANDOMIZE) is EPERM.
 *  - unshare is denied whatever its flags (CLONE_FILES/CLONE_FS alone are harmless but
 *    rare, and a blanket rule also covers namespace flags added later); clone is denied
 *    only with a CLONE_NEW* flag, since every fork() and pthread_create() goes through it.
 *  - name_to_handle_at stays allowed: a handle is useless without open_by_handle_at.
 *  - Setuid/setgid bits: chmod, fchmod, fchmodat and fchmodat2 as asked, and also the
 *    calls that create a file with a mode (open, openat, creat, mknod, mknodat) since
 *    open(path, O_CREAT, 04755) leaves a setuid file just the same (openat2 carries its
 *    mode in memory: ENOSYS, see above). A known cost: `chmod g+s` on a directory is
 *    refused too, since seccomp cannot tell a directory from a file.
 *
 * Argument comparisons: values the kernel reads as 32-bit (ioctl's request) are matched
 * on the low 32 bits, so high garbage bits cannot sneak past. Allowlists ("anything but
 * these families") compare all 64 bits, so garbage in the high bits is denied. As
 * libseccomp 2.5 takes one comparison per argument in a rule, "any of these bits" is
 * expanded into one rule per bit and "not in this set" into ranges covered by masked
 * comparisons (like a CIDR decomposition).
 *
 * Architectures: only the native one is in the filter and every other (i386, x32
 * syscall numbers on x86_64) hits the bad-architecture action, which kills the process:
 * its syscall numbers would mean other calls. */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "linux/linux_int.h"

#define STEP "seccomp"

#ifdef __x86_64__
#define X86_64(n) (n)
#else
#define X86_64(n) (-1)
#endif

enum cond_kind {
	COND_NONE = 0,
	COND_EQ,
	COND_NE,
	COND_MASKED_EQ, /* (arg & a) == b */
	COND_ANY_BIT,	/* any bit of a set: expanded to one rule per bit */
	COND_NOT_IN,	/* arg not in set (ascending): expanded to ranges */
};

struct cond {
	enum cond_kind kind;
	unsigned arg;
	uint64_t a, b;
	const uint64_t *set;
	size_t n_set;
};

struct deny_row {
	const char *name;
	int fallback_nr; /* x86_64 number when libseccomp does not know the name; -1 none */
	int err;
	struct cond c[2]; /* ANDed; only c[0] may be ANY_BIT or NOT_IN */
	const char *when; /* the condition in words, "" when the call is always denied */
	const char *why;
};

/* clang-format off */
#define ALWAYS             {{0}}
#define EQ(i, v)           {COND_EQ, i, v, 0, NULL, 0}
#define NE(i, v)           {COND_NE, i, v, 0, NULL, 0}
#define MASKED_EQ(i, m, v) {COND_MASKED_EQ, i, m, v, NULL, 0}
#define LOW32_EQ(i, v)     MASKED_EQ(i, 0xffffffffULL, v)
#define ANY_BIT(i, bits)   {COND_ANY_BIT, i, bits, 0, NULL, 0}
#define NOT_IN(i, set)     {COND_NOT_IN, i, 0, 0, set, sizeof(set) / sizeof((set)[0])}
#define ONE(c)             {c}
#define BOTH(c1, c2)       {c1, c2}
/* clang-format on */

#define CLONE_NEW_ANY                                                                              \
	(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |             \
	 CLONE_NEWPID | CLONE_NEWNET)
#define SETID_BITS (S_ISUID | S_ISGID)
#define TYPE_MASK  0xfULL /* SOCK_TYPE_MASK: the type without SOCK_NONBLOCK/CLOEXEC */

static const uint64_t personality_ok[] = {0x0, 0x0008, 0x20000, 0x20008, 0xffffffff};
static const uint64_t socket_families_ok[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};
static const uint64_t socketpair_families_ok[] = {AF_UNIX};

#define SETID_WHEN " (mode with S_ISUID or S_ISGID)"
#define SETID_WHY  "would leave a setuid/setgid file, owned by host root for a root caller"
#define NS_WHY	   "nested namespaces"
#define NEWMNT_WHY "new mount API; callers fall back to mount(2)"

static const struct deny_row deny_table[] = {
    {"unshare", -1, EPERM, ALWAYS, "", NS_WHY},
    {"setns", -1, EPERM, ALWAYS, "", NS_WHY},
    {"clone", -1, EPERM, ONE(ANY_BIT(0, CLONE_NEW_ANY)), " (flags with a CLONE_NEW* bit)", NS_WHY},
    {"clone3", X86_64(435), ENOSYS, ALWAYS, "",
     "flags unreadable by seccomp; glibc falls back to clone()"},
    {"mount", -1, EPERM, ALWAYS, "", "mounts"},
    {"umount2", -1, EPERM, ALWAYS, "", "mounts"},
    {"fsopen", X86_64(430), ENOSYS, ALWAYS, "", NEWMNT_WHY},
    {"fsconfig", X86_64(431), ENOSYS, ALWAYS, "", NEWMNT_WHY},
    {"fsmount", X86_64(432), ENOSYS, ALWAYS, "", NEWMNT_WHY},
    {"fspick", X86_64(433), ENOSYS, ALWAYS, "", NEWMNT_WHY},
    {"move_mount", X86_64(429), ENOSYS, ALWAYS, "", NEWMNT_WHY},
    {"open_tree", X86_64(428), ENOSYS, ALWAYS, "", NEWMNT_WHY},
    {"mount_setattr", X86_64(442), ENOSYS, ALWAYS, "", NEWMNT_WHY},
    {"pivot_root", -1, EPERM, ALWAYS, "", "changing the root"},
    {"chroot", -1, EPERM, ALWAYS, "", "changing the root"},
    {"ptrace", -1, EPERM, ALWAYS, "", "tracing other processes"},
    {"process_vm_readv", -1, EPERM, ALWAYS, "", "reading another process's memory"},
    {"process_vm_writev", -1, EPERM, ALWAYS, "", "writing another process's memory"},
    {"bpf", -1, EPERM, ALWAYS, "", "kernel attack surface"},
    {"perf_event_open", -1, EPERM, ALWAYS, "", "kernel attack surface, side channels"},
    {"keyctl", -1, EPERM, ALWAYS, "", "kernel keyrings are not namespaced"},
    {"add_key", -1, EPERM, ALWAYS, "", "kernel keyrings are not namespaced"},
    {"request_key", -1, EPERM, ALWAYS, "", "kernel keyrings are not namespaced"},
    {"userfaultfd", -1, EPERM, ALWAYS, "", "stalls kernel paths: exploit primitive"},
    {"io_uring_setup", X86_64(425), EPERM, ALWAYS, "", "bypasses seccomp, attack surface"},
    {"io_uring_enter", X86_64(426), EPERM, ALWAYS, "", "bypasses seccomp, attack surface"},
    {"io_uring_register", X86_64(427), EPERM, ALWAYS, "", "bypasses seccomp, attack surface"},
    {"open_by_handle_at", -1, EPERM, ALWAYS, "", "opens files outside the mount layout"},
    {"kexec_load", -1, EPERM, ALWAYS, "", "replacing the kernel"},
    {"kexec_file_load", -1, EPERM, ALWAYS, "", "replacing the kernel"},
    {"init_module", -1, EPERM, ALWAYS, "", "kernel modules"},
    {"finit_module", -1, EPERM, ALWAYS, "", "kernel modules"},
    {"delete_module", -1, EPERM, ALWAYS, "", "kernel modules"},
    {"reboot", -1, EPERM, ALWAYS, "", "rebooting"},
    {"swapon", -1, EPERM, ALWAYS, "", "swap"},
    {"swapoff", -1, EPERM, ALWAYS, "", "swap"},
    {"settimeofday", -1, EPERM, ALWAYS, "", "setting the clock"},
    {"clock_settime", -1, EPERM, ALWAYS, "", "setting the clock"},
    {"clock_adjtime", -1, EPERM, ALWAYS, "", "setting the clock"},
    {"adjtimex", -1, EPERM, ALWAYS, "", "setting the clock"},
    {"acct", -1, EPERM, ALWAYS, "", "process accounting"},
    {"quotactl", -1, EPERM, ALWAYS, "", "disk quotas"},
    {"quotactl_fd", X86_64(443), EPERM, ALWAYS, "", "disk quotas"},
    {"personality", -1, EPERM, ONE(NOT_IN(0, personality_ok)),
     " (other than PER_LINUX, PER_LINUX32, UNAME26 and the query)",
     "READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE weaken exploit mitigations"},
    {"ioctl", -1, EPERM, ONE(LOW32_EQ(1, TIOCSTI)), " (TIOCSTI, low 32 bits)",
     "typing into the terminal of the caller"},
    {"ioctl", -1, EPERM, ONE(LOW32_EQ(1, TIOCLINUX)), " (TIOCLINUX, low 32 bits)",
     "console injection"},
    {"chmod", -1, EPERM, ONE(ANY_BIT(1, SETID_BITS)), SETID_WHEN, SETID_WHY},
    {"fchmod", -1, EPERM, ONE(ANY_BIT(1, SETID_BITS)), SETID_WHEN, SETID_WHY},
    {"fchmodat", -1, EPERM, ONE(ANY_BIT(2, SETID_BITS)), SETID_WHEN, SETID_WHY},
    {"fchmodat2", X86_64(452), EPERM, ONE(ANY_BIT(2, SETID_BITS)), SETID_WHEN, SETID_WHY},
    {"open", -1, EPERM, ONE(ANY_BIT(2, SETID_BITS)), SETID_WHEN, SETID_WHY},
    {"openat", -1, EPERM, ONE(ANY_BIT(3, SETID_BITS)), SETID_WHEN, SETID_WHY},
    {"creat", -1, EPERM, ONE(ANY_BIT(1, SETID_BITS)), SETID_WHEN, SETID_WHY},
    {"mknod", -1, EPERM, ONE(ANY_BIT(1, SETID_BITS)), SETID_WHEN, SETID_WHY},
    {"mknodat", -1, EPERM, ONE(ANY_BIT(2, SETID_BITS)), SETID_WHEN, SETID_WHY},
    {"openat2", X86_64(437), ENOSYS, ALWAYS, "",
     "mode unreadable by seccomp; callers fall back to openat()"},
    {"socket", -1, EAFNOSUPPORT, ONE(NOT_IN(0, socket_families_ok)),
     " (family other than AF_UNIX, AF_INET, AF_INET6, AF_NETLINK)", "network attack surface"},
    {"socket", -1, EAFNOSUPPORT, BOTH(EQ(0, AF_NETLINK), NE(2, NETLINK_ROUTE)),
     " (AF_NETLINK other than NETLINK_ROUTE)", "audit, netfilter and other kernel interfaces"},
    {"socket", -1, EPERM, BOTH(EQ(0, AF_INET), MASKED_EQ(1, TYPE_MASK, SOCK_RAW)),
     " (AF_INET, SOCK_RAW)", "raw packets"},
    {"socket", -1, EPERM, BOTH(EQ(0, AF_INET6), MASKED_EQ(1, TYPE_MASK, SOCK_RAW)),
     " (AF_INET6, SOCK_RAW)", "raw packets"},
    {"socket", -1, EPERM, BOTH(EQ(0, AF_INET), MASKED_EQ(1, TYPE_MASK, SOCK_PACKET)),
     " (AF_INET, SOCK_PACKET)", "raw packets"},
    {"socket", -1, EPERM, BOTH(EQ(0, AF_INET6), MASKED_EQ(1, TYPE_MASK, SOCK_PACKET)),
     " (AF_INET6, SOCK_PACKET)", "raw packets"},
    {"socketpair", -1, EAFNOSUPPORT, ONE(NOT_IN(0, socketpair_families_ok)),
     " (family other than AF_UNIX)", "network attack surface"},
};
#define N_ROWS (sizeof(deny_table) / sizeof(deny_table[0]))

/* ---------------------------------------------------------------- building */

#define MAX_EXPANDED 128 /* rules one row may expand into; the personality row needs ~80 */

struct expansion {
	struct scmp_arg_cmp v[MAX_EXPANDED];
	size_t n;
	bool overflow;
};

static void push(struct expansion *x, unsigned arg, enum scmp_compare op, uint64_t a, uint64_t b)
{
	if (x->n == MAX_EXPANDED) {
		x->overflow = true;
		return;
	}
	x->v[x->n++] = (struct scmp_arg_cmp){.arg = arg, .op = op, .datum_a = a, .datum_b = b};
}

/* Cover [lo, hi] (hi < UINT64_MAX) with aligned power-of-two blocks, one masked
 * comparison each. */
static void push_range(struct expansion *x, unsigned arg, uint64_t lo, uint64_t hi)
{
	while (lo <= hi) {
		uint64_t size = lo ? (lo & -lo) : (1ULL << 63);
		while (size - 1 > hi - lo)
			size >>= 1;
		push(x, arg, SCMP_CMP_MASKED_EQ, ~(size - 1), lo);
		if (hi - lo == size - 1)
			return;
		lo += size;
	}
}

/* The comparisons of the expandable condition, each to become its own rule. */
static void expand(const struct cond *c, struct expansion *x)
{
	x->n = 0;
	x->overflow = false;
	switch (c->kind) {
	case COND_ANY_BIT:
		for (unsigned bit = 0; bit < 64; bit++)
			if (c->a & (1ULL << bit))
				push(x, c->arg, SCMP_CMP_MASKED_EQ, 1ULL << bit, 1ULL << bit);
		break;
	case COND_NOT_IN:
		if (c->set[0] > 0)
			push(x, c->arg, SCMP_CMP_LT, c->set[0], 0);
		for (size_t i = 0; i + 1 < c->n_set; i++)
			if (c->set[i + 1] > c->set[i] + 1)
				push_range(x, c->arg, c->set[i] + 1, c->set[i + 1] - 1);
		push(x, c->arg, SCMP_CMP_GT, c->set[c->n_set - 1], 0);
		break;
	case COND_EQ:
		push(x, c->arg, SCMP_CMP_EQ, c->a, 0);
		break;
	case COND_NE:
		push(x, c->arg, SCMP_CMP_NE, c->a, 0);
		break;
	case COND_MASKED_EQ:
		push(x, c->arg, SCMP_CMP_MASKED_EQ, c->a, c->b);
		break;
	case COND_NONE:
	default:
		break;
	}
}

/* The row's syscall number: >= 0, or -1 when nobody knows it, or another negative
 * number (libseccomp's pseudo-syscall) when the native architecture has no such call
 * (open, creat and mknod do not exist on arm64): such a row is simply not needed. */
static int row_syscall(const struct deny_row *r)
{
	int nr = seccomp_syscall_resolve_name(r->name);

	return nr == __NR_SCMP_ERROR ? r->fallback_nr : nr;
}

static void add_row_or_die(scmp_filter_ctx ctx, const struct deny_row *r, int rfd)
{
	struct expansion first, second;
	int nr = row_syscall(r);
	int rc;

	if (nr == -1)
		linux_die(rfd, STEP, ENOSYS, "no syscall number known for %s", r->name);
	if (nr < 0)
		return;
	expand(&r->c[0], &first);
	expand(&r->c[1], &second);
	if (first.overflow || second.n > 1)
		linux_die(rfd, STEP, EINVAL, "deny row %s%s expands badly", r->name, r->when);
	if (first.n == 0) {
		rc = seccomp_rule_add_exact_array(ctx, SCMP_ACT_ERRNO(r->err), nr, 0, NULL);
		if (rc < 0)
			linux_die(rfd, STEP, -rc, "add rule %s", r->name);
		return;
	}
	for (size_t i = 0; i < first.n; i++) {
		struct scmp_arg_cmp cmp[2] = {first.v[i], second.n ? second.v[0] : first.v[i]};
		rc = seccomp_rule_add_exact_array(ctx, SCMP_ACT_ERRNO(r->err), nr, second.n ? 2 : 1,
						  cmp);
		if (rc < 0)
			linux_die(rfd, STEP, -rc, "add rule %s%s", r->name, r->when);
	}
}

static void cleanup_ctx(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}

void linux_seccomp_apply_or_die(int report_fd)
{
	__attribute__((cleanup(cleanup_ctx))) scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc;

	if (!ctx)
		linux_die(report_fd, STEP, ENOMEM, "seccomp_init");
	/* Only the native architecture is in the filter: anything else is killed. */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc < 0)
		linux_die(report_fd, STEP, -rc, "set the bad-architecture action");
	/* A binary tree of syscall numbers: every allowed call pays a few comparisons
	 * instead of one per row. */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (rc < 0)
		linux_die(report_fd, STEP, -rc, "set the filter optimisation");
	for (size_t i = 0; i < N_ROWS; i++)
		add_row_or_die(ctx, &deny_table[i], report_fd);
	rc = seccomp_load(ctx);
	if (rc < 0)
		linux_die(report_fd, STEP, -rc, "load the filter");
}

void linux_seccomp_describe(void (*line)(void *arg, const char *text), void *arg)
{
	char buf[256];

	for (size_t i = 0; i < N_ROWS; i++) {
		const struct deny_row *r = &deny_table[i];
		const char *err = strerrorname_np(r->err);
		snprintf(buf, sizeof(buf), "%s%s: %s (%s)", r->name, r->when, err ? err : "?",
			 r->why);
		line(arg, buf);
	}
	line(arg, "any other architecture, x32 syscalls included: process killed");
	line(arg, "everything else: allowed");
}
