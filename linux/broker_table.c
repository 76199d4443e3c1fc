/* The creation broker's request table: one row per trapped call. The filter the
 * command installs (broker_bpf_build) and init's dispatch (broker_row_find, then the
 * row's function, after broker_admit) are both made from it, so a call cannot be
 * trapped without a function to perform it, nor performed with another call's
 * argument layout. See broker_int.h for why the broker exists. */
#include <linux/audit.h>
#include <stddef.h>
#include <sys/syscall.h>

#include "linux/broker_emul_int.h"

#if defined(__x86_64__)
#define BROKER_ARCH	    AUDIT_ARCH_X86_64
#define BROKER_NR_FCHMODAT2 452 /* Linux 6.6; glibc 2.36 has no name for it */
#elif defined(__aarch64__)
#define BROKER_ARCH	    AUDIT_ARCH_AARCH64
#define BROKER_NR_FCHMODAT2 452
#else
#error "the creation broker knows no audit arch for this target"
#endif

/* The low 32 bits of argument i (open flags live there). */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#else
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i) + 4)
#endif

/* Every position absent, then the row's own (which override: that is the point). */
#pragma GCC diagnostic ignored "-Woverride-init"
#define L(...)                                                                                     \
	{                                                                                          \
		.dfd = BROKER_NO, .path = BROKER_NO, .odfd = BROKER_NO, .old = BROKER_NO,          \
		.target = BROKER_NO, .flags = BROKER_NO, .mode = BROKER_NO, .dev = BROKER_NO,      \
		.fd = BROKER_NO, .addr = BROKER_NO, .len = BROKER_NO, .size = BROKER_NO,           \
		.xname = BROKER_NO, .value = BROKER_NO, .vsize = BROKER_NO, __VA_ARGS__            \
	}

#define NEW    BROKER_CHECK_NEW
#define OPENED (BROKER_CHECK_NEW | BROKER_CHECK_PROCFS)
#define LINKED (BROKER_CHECK_NEW | BROKER_CHECK_SOURCE)
#define MOVED  (BROKER_CHECK_NEW | BROKER_CHECK_EXCHANGE)

/* Calls that create a name, and opens that create or write (the git rules refuse
 * writing a git directory's config or hooks in place); openat2 is refused with ENOSYS
 * by the deny list (its flags are out of seccomp's sight), and other architectures are
 * killed by it. bind makes a unix socket's name (a node: git counts a socket named
 * objects or refs). unlink removes one: not the host's temp file beside a kept entry,
 * which the host renames over the entry by name (broker_home.c; rmdir is not trapped:
 * what is judged is files). truncate(2) and a chmod giving group or others write
 * change a file in place, as a write-open would: not a kept one, nor the host's temp
 * file (review 29). */
/* clang-format off */
const struct broker_row broker_rows[] = {
    {"openat", __NR_openat, L(.dfd = 0, .path = 1, .flags = 2, .mode = 3), BROKER_TRAP_WRITE, 0,
     BROKER_OP_OPEN_CREATE, OPENED, broker_do_open},
    {"mkdirat", __NR_mkdirat, L(.dfd = 0, .path = 1, .mode = 2), BROKER_TRAP_ALWAYS, 0,
     BROKER_OP_MKDIR, NEW, broker_do_mkdir},
    {"mknodat", __NR_mknodat, L(.dfd = 0, .path = 1, .mode = 2, .dev = 3), BROKER_TRAP_ALWAYS, 0,
     BROKER_OP_MKNOD, NEW, broker_do_mknod},
    {"symlinkat", __NR_symlinkat, L(.target = 0, .dfd = 1, .path = 2), BROKER_TRAP_ALWAYS, 0,
     BROKER_OP_SYMLINK, NEW, broker_do_symlink},
    {"linkat", __NR_linkat, L(.odfd = 0, .old = 1, .dfd = 2, .path = 3, .flags = 4),
     BROKER_TRAP_ALWAYS, 0, BROKER_OP_LINK, LINKED, broker_do_link},
    {"renameat2", __NR_renameat2, L(.odfd = 0, .old = 1, .dfd = 2, .path = 3, .flags = 4),
     BROKER_TRAP_ALWAYS, 0, BROKER_OP_RENAME, MOVED, broker_do_rename},
    {"bind", __NR_bind, L(.fd = 0, .addr = 1, .len = 2), BROKER_TRAP_ALWAYS, 0,
     BROKER_OP_MKNOD, NEW, broker_do_bind},
    {"unlinkat", __NR_unlinkat, L(.dfd = 0, .path = 1, .flags = 2), BROKER_TRAP_ALWAYS, 0,
     BROKER_OP_UNLINK, NEW, broker_do_unlink},
    {"truncate", __NR_truncate, L(.path = 0, .size = 1), BROKER_TRAP_ALWAYS, 0, BROKER_OP_META,
     NEW, broker_do_truncate},
    {"fchmodat", __NR_fchmodat, L(.dfd = 0, .path = 1, .mode = 2), BROKER_TRAP_MODE, 0,
     BROKER_OP_META, NEW, broker_do_chmod},
    {"fchmodat2", BROKER_NR_FCHMODAT2, L(.dfd = 0, .path = 1, .mode = 2, .flags = 3),
     BROKER_TRAP_MODE, 0, BROKER_OP_META, NEW, broker_do_chmod},
    {"fchmod", __NR_fchmod, L(.fd = 0, .mode = 1), BROKER_TRAP_MODE, 0, BROKER_OP_META, 0,
     broker_do_fchmod},
    /* (review 31) an ACL (system.posix_acl_access) is a chmod by other means */
    {"setxattr", __NR_setxattr,
     L(.path = 0, .xname = 1, .value = 2, .vsize = 3, .flags = 4), BROKER_TRAP_ALWAYS, 0,
     BROKER_OP_META, NEW, broker_do_setxattr},
    {"lsetxattr", __NR_lsetxattr,
     L(.path = 0, .xname = 1, .value = 2, .vsize = 3, .flags = 4), BROKER_TRAP_ALWAYS, 0,
     BROKER_OP_META, NEW, broker_do_setxattr},
    {"fsetxattr", __NR_fsetxattr, L(.fd = 0, .xname = 1, .value = 2, .vsize = 3, .flags = 4),
     BROKER_TRAP_ALWAYS, 0, BROKER_OP_META, 0, broker_do_setxattr},
#ifdef __NR_open
    {"open", __NR_open, L(.path = 0, .flags = 1, .mode = 2), BROKER_TRAP_WRITE, 0,
     BROKER_OP_OPEN_CREATE, OPENED, broker_do_open},
    {"creat", __NR_creat, L(.path = 0, .mode = 1), BROKER_TRAP_ALWAYS,
     O_CREAT | O_WRONLY | O_TRUNC, BROKER_OP_OPEN_CREATE, OPENED, broker_do_open},
    {"mkdir", __NR_mkdir, L(.path = 0, .mode = 1), BROKER_TRAP_ALWAYS, 0, BROKER_OP_MKDIR, NEW,
     broker_do_mkdir},
    {"mknod", __NR_mknod, L(.path = 0, .mode = 1, .dev = 2), BROKER_TRAP_ALWAYS, 0,
     BROKER_OP_MKNOD, NEW, broker_do_mknod},
    {"symlink", __NR_symlink, L(.target = 0, .path = 1), BROKER_TRAP_ALWAYS, 0,
     BROKER_OP_SYMLINK, NEW, broker_do_symlink},
    {"link", __NR_link, L(.old = 0, .path = 1), BROKER_TRAP_ALWAYS, 0, BROKER_OP_LINK, LINKED,
     broker_do_link},
    {"rename", __NR_rename, L(.old = 0, .path = 1), BROKER_TRAP_ALWAYS, 0, BROKER_OP_RENAME,
     MOVED, broker_do_rename},
    {"renameat", __NR_renameat, L(.odfd = 0, .old = 1, .dfd = 2, .path = 3), BROKER_TRAP_ALWAYS,
     0, BROKER_OP_RENAME, MOVED, broker_do_rename},
    {"unlink", __NR_unlink, L(.path = 0), BROKER_TRAP_ALWAYS, 0, BROKER_OP_UNLINK, NEW,
     broker_do_unlink},
    {"chmod", __NR_chmod, L(.path = 0, .mode = 1), BROKER_TRAP_MODE, 0, BROKER_OP_META, NEW,
     broker_do_chmod},
#endif
};
/* clang-format on */
const size_t broker_n_rows = sizeof(broker_rows) / sizeof(broker_rows[0]);

const struct broker_row *broker_row_find(unsigned arch, int nr)
{
	if (arch != BROKER_ARCH)
		return NULL;
	for (size_t i = 0; i < broker_n_rows; i++)
		if (broker_rows[i].nr == nr)
			return &broker_rows[i];
	return NULL;
}

#define NOTIFY (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF)
#define ALLOW  (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define IS(nr, t, f)                                                                               \
	(struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)(nr), (t), (f))
#define LOAD(off) (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))

/* Each row: "is it this call? notify" (2 instructions), or, for a row trapped on its
 * flags (mode), "is it this call? load the flags (mode); any write bit? notify : allow"
 * (5). */
long broker_bpf_build(struct sock_filter *f, size_t max, bool home)
{
	size_t n = 0;

	if (max < 5 + 5 * broker_n_rows)
		return -ENOSPC;
	f[n++] = LOAD(offsetof(struct seccomp_data, arch));
	f[n++] = IS(BROKER_ARCH, 1, 0);
	f[n++] = ALLOW; /* the deny list kills every other architecture */
	f[n++] = LOAD(offsetof(struct seccomp_data, nr));
	for (size_t i = 0; i < broker_n_rows; i++) {
		const struct broker_row *r = &broker_rows[i];

		if (!home && (r->op == BROKER_OP_UNLINK || r->op == BROKER_OP_META))
			continue;
		if (r->trap == BROKER_TRAP_ALWAYS) {
			f[n++] = IS(r->nr, 0, 1);
			f[n++] = NOTIFY;
			continue;
		}
		f[n++] = IS(r->nr, 0, 4);
		f[n++] = LOAD(ARG_LO(r->trap == BROKER_TRAP_MODE ? r->a.mode : r->a.flags));
		f[n++] = (struct sock_filter)BPF_JUMP(
		    BPF_JMP | BPF_JSET | BPF_K,
		    r->trap == BROKER_TRAP_MODE ? BROKER_MODE_BITS : BROKER_WRITE_FLAGS, 0, 1);
		f[n++] = NOTIFY;
		f[n++] = ALLOW;
	}
	f[n++] = ALLOW;
	return (long)n;
}
