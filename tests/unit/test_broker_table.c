/* The creation broker's request table (linux/broker_table.c) and the parse half of
 * its gate (linux/broker_admit.c), without a caller: the generated BPF run in a small
 * interpreter traps exactly the table's calls (write opens only on their flags, the
 * low 32 bits, nothing else, another architecture left to the deny list); the rows are
 * consistent; broker_parse reads by the row's layout and refuses unreadable,
 * unterminated and over-long input. test_broker.c drives the rows for real. */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "linux/broker_emul_int.h"
#include "tests/unit/unit.h"

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#else
#define ARCH AUDIT_ARCH_AARCH64
#endif
/* ------------------------------------------------------------ the BPF, interpreted */

/* The instructions broker_bpf_build emits (loads, JEQ, JSET, JA, RET); anything else
 * fails the test. */
static unsigned run_bpf(const struct sock_filter *f, long n, const struct seccomp_data *d)
{
	uint32_t acc = 0;

	for (long pc = 0; pc < n; pc++) {
		const struct sock_filter *i = &f[pc];
		switch (i->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			ck_assert_uint_le(i->k + 4, sizeof(*d));
			memcpy(&acc, (const char *)d + i->k, 4);
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += acc == i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			pc += (acc & i->k) ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JA:
			pc += i->k;
			break;
		case BPF_RET | BPF_K:
			return i->k;
		default:
			ck_abort_msg("unexpected BPF instruction 0x%x at %ld", i->code, pc);
		}
	}
	ck_abort_msg("the filter ran off its end");
	return 0;
}

static bool filter_home = true; /* the home workspace's filter (every row) */

static unsigned filter_says(unsigned arch, int nr, int flag_arg, uint64_t flags)
{
	struct sock_filter f[BROKER_BPF_MAX];
	long n = broker_bpf_build(f, BROKER_BPF_MAX, filter_home);
	struct seccomp_data d = {.nr = nr, .arch = arch};

	ck_assert_int_gt(n, 0);
	if (flag_arg >= 0)
		d.args[flag_arg] = flags;
	return run_bpf(f, n, &d);
}

START_TEST(bpf_traps_the_table)
{
	static const int untrapped[] = {__NR_read, __NR_rmdir, __NR_fchown, __NR_close,
					__NR_openat2};

	for (size_t i = 0; i < broker_n_rows; i++) {
		const struct broker_row *r = &broker_rows[i];
		ck_assert_ptr_eq(broker_row_find(ARCH, r->nr), r);
		ck_assert_ptr_null(broker_row_find(ARCH ^ 1, r->nr));
		if (r->trap == BROKER_TRAP_ALWAYS) {
			ck_assert_uint_eq(filter_says(ARCH, r->nr, -1, 0), SECCOMP_RET_USER_NOTIF);
			continue;
		}
		if (r->trap == BROKER_TRAP_MODE) { /* group or other write only */
			ck_assert_int_ne(r->a.mode, BROKER_NO);
			static const unsigned quiet[] = {0755, 0644, 0700, 0444, 04755, 0},
					      loud[] = {0666, 0775, 0757, 0020, 0002, 01777};
			for (size_t k = 0; k < 6; k++) {
				ck_assert_uint_eq(filter_says(ARCH, r->nr, r->a.mode, quiet[k]),
						  SECCOMP_RET_ALLOW);
				ck_assert_uint_eq(filter_says(ARCH, r->nr, r->a.mode, loud[k]),
						  SECCOMP_RET_USER_NOTIF);
			}
			continue;
		}
		ck_assert_int_ne(r->a.flags, BROKER_NO);
		ck_assert_uint_eq(filter_says(ARCH, r->nr, r->a.flags, O_RDONLY),
				  SECCOMP_RET_ALLOW);
		ck_assert_uint_eq(filter_says(ARCH, r->nr, r->a.flags, O_RDONLY | O_CLOEXEC),
				  SECCOMP_RET_ALLOW);
		static const int w[] = {O_CREAT, O_WRONLY, O_RDWR, O_TRUNC};
		for (size_t k = 0; k < 4; k++)
			ck_assert_uint_eq(filter_says(ARCH, r->nr, r->a.flags, (uint64_t)w[k]),
					  SECCOMP_RET_USER_NOTIF);
		/* Only the low 32 bits are the flags the kernel reads. */
		ck_assert_uint_eq(filter_says(ARCH, r->nr, r->a.flags, 1ULL << 40),
				  SECCOMP_RET_ALLOW);
	}
	for (size_t i = 0; i < sizeof(untrapped) / sizeof(untrapped[0]); i++)
		ck_assert_uint_eq(filter_says(ARCH, untrapped[i], -1, 0), SECCOMP_RET_ALLOW);
	/* An ordinary workspace's filter: unlink, truncate and chmod never leave the kernel
	 * (the home set's rules are a home workspace's). */
	filter_home = false;
	for (size_t i = 0; i < broker_n_rows; i++) {
		const struct broker_row *r = &broker_rows[i];
		bool home_only = r->op == BROKER_OP_UNLINK || r->op == BROKER_OP_META;
		if (r->trap == BROKER_TRAP_MODE)
			ck_assert_uint_eq(filter_says(ARCH, r->nr, r->a.mode, 0666),
					  SECCOMP_RET_ALLOW);
		else if (r->trap == BROKER_TRAP_WRITE)
			ck_assert_uint_eq(filter_says(ARCH, r->nr, r->a.flags, O_WRONLY),
					  SECCOMP_RET_USER_NOTIF);
		else
			ck_assert_uint_eq(filter_says(ARCH, r->nr, -1, 0),
					  home_only ? SECCOMP_RET_ALLOW : SECCOMP_RET_USER_NOTIF);
	}
	filter_home = true;
	/* Another architecture is the deny list's to kill. */
	ck_assert_uint_eq(filter_says(ARCH ^ 1, __NR_mkdirat, -1, 0), SECCOMP_RET_ALLOW);
}
END_TEST

/* Rows are unique, and every position a row names is a syscall argument. */
START_TEST(table_is_consistent)
{
	for (size_t i = 0; i < broker_n_rows; i++) {
		const struct broker_row *r = &broker_rows[i];
		const signed char *pos = (const signed char *)&r->a;

		for (size_t k = 0; k < sizeof(r->a); k++)
			ck_assert(pos[k] == BROKER_NO || (pos[k] >= 0 && pos[k] < 6));
		ck_assert_ptr_nonnull(r->emul);
		/* fchmod names its file by descriptor: judged where that leads (meta_target) */
		bool by_fd = r->op == BROKER_OP_META && r->a.fd != BROKER_NO;
		ck_assert_msg(by_fd || (r->a.path != BROKER_NO) != (r->a.addr != BROKER_NO),
			      "%s: one name, by path or by address", r->name);
		/* Every trapped call makes (or opens for writing) a name: judged. */
		ck_assert_msg(by_fd || (r->checks & BROKER_CHECK_NEW), "%s: its name unchecked",
			      r->name);
		ck_assert(!(r->checks & BROKER_CHECK_SOURCE) || r->a.old != BROKER_NO);
		ck_assert(!(r->checks & BROKER_CHECK_EXCHANGE) || r->op == BROKER_OP_RENAME);
		for (size_t j = 0; j < i; j++)
			ck_assert_int_ne(broker_rows[j].nr, r->nr);
	}
}
END_TEST

/* ----------------------------------------------------- the gate's parse, on memory */

/* A fake caller memory: one buffer at a made-up address. */
struct fake_mem {
	uint64_t base;
	const char *buf;
	size_t n;
};

static ssize_t fake_read(void *ctx, uint64_t addr, void *out, size_t n)
{
	const struct fake_mem *f = ctx;

	if (addr < f->base || addr - f->base >= f->n)
		return 0;
	if (n > f->n - (addr - f->base))
		n = f->n - (addr - f->base);
	memcpy(out, f->buf + (addr - f->base), n);
	return (ssize_t)n;
}

START_TEST(parse_reads_by_layout)
{
	static char mem[2 * PATH_MAX];
	struct fake_mem f = {0x10000, mem, sizeof(mem)};
	struct broker_mem m = {fake_read, &f};
	struct seccomp_data d = {.nr = __NR_linkat, .arch = ARCH};
	struct broker_req r;

	strcpy(mem, "/proc/self/fd/3");
	strcpy(mem + 100, "new");
	d.args[0] = 7;
	d.args[1] = f.base;
	d.args[2] = (uint64_t)AT_FDCWD;
	d.args[3] = f.base + 100;
	d.args[4] = AT_SYMLINK_FOLLOW;
	ck_assert_int_eq(broker_parse(&m, 42, &d, &r), 0);
	ck_assert_str_eq(r.old, "/proc/42/fd/3");
	ck_assert_str_eq(r.path, "new");
	ck_assert_int_eq(r.odfd, 7);
	ck_assert_int_eq(r.dfd, AT_FDCWD);
	ck_assert_int_eq(r.flags, AT_SYMLINK_FOLLOW);
	/* Unreadable, unterminated within PATH_MAX, NULL; not a trapped call. */
	d.args[3] = f.base + sizeof(mem);
	ck_assert_int_eq(broker_parse(&m, 42, &d, &r), -EFAULT);
	memset(mem + 100, 'a', sizeof(mem) - 100);
	d.args[3] = f.base + 100;
	ck_assert_int_eq(broker_parse(&m, 42, &d, &r), -ENAMETOOLONG);
	d.args[3] = 0;
	ck_assert_int_eq(broker_parse(&m, 42, &d, &r), -EFAULT);
	d.nr = __NR_rmdir;
	ck_assert_int_eq(broker_parse(&m, 42, &d, &r), -ENOSYS);
	/* setxattr (review 31): name and value read whole; hostile ones as the kernel says */
	memset(mem, 0, sizeof(mem));
	strcpy(mem, "f");
	strcpy(mem + 100, "user.x");
	memcpy(mem + 200, "v\0w", 3);
	d = (struct seccomp_data){.nr = __NR_setxattr, .arch = ARCH};
	d.args[0] = f.base;
	d.args[1] = f.base + 100;
	d.args[2] = f.base + 200;
	d.args[3] = 3;
	ck_assert_int_eq(broker_parse(&m, 42, &d, &r), 0);
	ck_assert(strcmp(r.xname, "user.x") == 0 && r.vsize == 3 &&
		  memcmp(r.value, "v\0w", 3) == 0);
	broker_req_release(&r);
	d.args[3] = 65537; /* past XATTR_SIZE_MAX */
	ck_assert_int_eq(broker_parse(&m, 42, &d, &r), -E2BIG);
	d.args[3] = 3;
	d.args[1] = f.base + 300; /* an empty name */
	ck_assert_int_eq(broker_parse(&m, 42, &d, &r), -ERANGE);
	memset(mem + 400, 'n', 300); /* a name past XATTR_NAME_MAX */
	d.args[1] = f.base + 400;
	ck_assert_int_eq(broker_parse(&m, 42, &d, &r), -ERANGE);
	d.args[1] = f.base + 100;
	d.args[2] = f.base + sizeof(mem) - 1; /* the value runs off the caller's memory */
	ck_assert_int_eq(broker_parse(&m, 42, &d, &r), -EFAULT);
	broker_req_release(&r);
	d.nr = __NR_mkdirat;
	d.arch = ARCH ^ 1;
	ck_assert_int_eq(broker_parse(&m, 42, &d, &r), -ENOSYS);
}
END_TEST

/* A unix address longer than struct sockaddr_un (the old broker copied it past its
 * buffer), without a path, abstract, and truncated. */
START_TEST(parse_sockaddr)
{
	static struct sockaddr_storage ss;
	struct fake_mem f = {0x20000, (const char *)&ss, sizeof(ss)};
	struct broker_mem m = {fake_read, &f};
	struct seccomp_data d = {.nr = __NR_bind, .arch = ARCH};
	struct broker_req r;

	ss.ss_family = AF_UNIX;
	memset((char *)&ss + 2, 'a', sizeof(ss) - 2);
	d.args[0] = 3;
	d.args[1] = f.base;
	d.args[2] = sizeof(ss);
	ck_assert_int_eq(broker_parse(&m, 1, &d, &r), -EINVAL);
	d.args[2] = sizeof(ss) + 1;
	ck_assert_int_eq(broker_parse(&m, 1, &d, &r), -EINVAL);
	d.args[2] = 1;
	ck_assert_int_eq(broker_parse(&m, 1, &d, &r), -EINVAL);
	d.args[2] = sizeof(struct sockaddr_un);
	ck_assert_int_eq(broker_parse(&m, 1, &d, &r), 0);
	ck_assert(r.has_name);
	ck_assert_uint_eq(strlen(r.path), sizeof(((struct sockaddr_un *)0)->sun_path));
	d.args[2] = 2;
	ck_assert_int_eq(broker_parse(&m, 1, &d, &r), 0);
	ck_assert(!r.has_name);
	((struct sockaddr_un *)&ss)->sun_path[0] = '\0';
	d.args[2] = 20;
	ck_assert_int_eq(broker_parse(&m, 1, &d, &r), 0);
	ck_assert(!r.has_name);
	d.args[1] = f.base + sizeof(ss) - 4;
	ck_assert_int_eq(broker_parse(&m, 1, &d, &r), -EFAULT);
}
END_TEST

static Suite *broker_table_suite(void)
{
	Suite *s = suite_create("broker_table");
	TCase *tt = tcase_create("table");

	tcase_add_test(tt, bpf_traps_the_table);
	tcase_add_test(tt, table_is_consistent);
	tcase_add_test(tt, parse_reads_by_layout);
	tcase_add_test(tt, parse_sockaddr);
	suite_add_tcase(s, tt);
	return s;
}

UNIT_MAIN(broker_table_suite)
