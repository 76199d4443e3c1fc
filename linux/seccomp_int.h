/* Internal to the seccomp layer. The deny table (seccomp_table.c) is the policy; the
 * builder (seccomp_build.c) turns it into a filter with libseccomp, which stays the one
 * source of truth for the BPF. The build runs that builder once (tools/gen_seccomp)
 * and compiles the exported program into seccomp.c, so a launch only hands a ready
 * program to the kernel instead of rebuilding it with libseccomp every time. */
#ifndef HALO_LINUX_SECCOMP_INT_H
#define HALO_LINUX_SECCOMP_INT_H

#include <linux/filter.h>
#include <stddef.h>
#include <stdint.h>

enum linux_seccomp_cond_kind {
	COND_NONE = 0,
	COND_EQ,
	COND_NE,
	COND_MASKED_EQ, /* (arg & a) == b */
	COND_ANY_BIT,	/* any bit of a set: expanded to one rule per bit */
	COND_NOT_IN,	/* arg not in set (ascending): expanded to ranges */
};

struct linux_seccomp_cond {
	enum linux_seccomp_cond_kind kind;
	unsigned arg;
	uint64_t a, b;
	const uint64_t *set;
	size_t n_set;
};

struct linux_seccomp_row {
	const char *name;
	int fallback_nr; /* x86_64 number when libseccomp does not know the name; -1 none */
	int err;
	struct linux_seccomp_cond c[2]; /* ANDed; only c[0] may be ANY_BIT or NOT_IN */
	const char *when; /* the condition in words, "" when the call is always denied */
	const char *why;
};

extern const struct linux_seccomp_row linux_seccomp_table[];
extern const size_t linux_seccomp_n_rows;

/* Build the filter from the table with libseccomp and write it to fd as raw BPF
 * (struct sock_filter records, seccomp_export_bpf). Returns 0, or -errno with a
 * message naming the row in msg. Only the generator and the tests link this: the
 * halo-run binary needs no libseccomp at run time. */
int linux_seccomp_export(int fd, char *msg, size_t n);

#endif
