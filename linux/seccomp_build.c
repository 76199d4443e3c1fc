/* The deny table as a libseccomp filter, exported as raw BPF. Run at build time by
 * tools/gen_seccomp (and by the unit tests, which check that the program compiled into
 * the library is still what libseccomp makes of the table today).
 *
 * libseccomp 2.5 takes one comparison per argument in a rule, so "any of these bits"
 * becomes one rule per bit and "not in this set" becomes ranges covered by masked
 * comparisons (like a CIDR decomposition). */
#include <errno.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdio.h>

#include "linux/seccomp_int.h"

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
static void expand(const struct linux_seccomp_cond *c, struct expansion *x)
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
static int row_syscall(const struct linux_seccomp_row *r)
{
	int nr = seccomp_syscall_resolve_name(r->name);

	return nr == __NR_SCMP_ERROR ? r->fallback_nr : nr;
}

static int add_row(scmp_filter_ctx ctx, const struct linux_seccomp_row *r, char *msg, size_t n)
{
	struct expansion first, second;
	int nr = row_syscall(r);
	int rc;

	if (nr == -1) {
		snprintf(msg, n, "no syscall number known for %s", r->name);
		return -ENOSYS;
	}
	if (nr < 0)
		return 0;
	expand(&r->c[0], &first);
	expand(&r->c[1], &second);
	if (first.overflow || second.n > 1) {
		snprintf(msg, n, "deny row %s%s expands badly", r->name, r->when);
		return -EINVAL;
	}
	if (first.n == 0) {
		rc = seccomp_rule_add_exact_array(ctx, SCMP_ACT_ERRNO(r->err), nr, 0, NULL);
		if (rc < 0)
			snprintf(msg, n, "add rule %s", r->name);
		return rc;
	}
	for (size_t i = 0; i < first.n; i++) {
		struct scmp_arg_cmp cmp[2] = {first.v[i], second.n ? second.v[0] : first.v[i]};
		rc = seccomp_rule_add_exact_array(ctx, SCMP_ACT_ERRNO(r->err), nr, second.n ? 2 : 1,
						  cmp);
		if (rc < 0) {
			snprintf(msg, n, "add rule %s%s", r->name, r->when);
			return rc;
		}
	}
	return 0;
}

static void release_ctx(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}

int linux_seccomp_export(int fd, char *msg, size_t n)
{
	__attribute__((cleanup(release_ctx))) scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc;

	if (!ctx) {
		snprintf(msg, n, "seccomp_init");
		return -ENOMEM;
	}
	/* Only the native architecture is in the filter: anything else is killed. */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc < 0) {
		snprintf(msg, n, "set the bad-architecture action");
		return rc;
	}
	/* A binary tree of syscall numbers: every allowed call pays a few comparisons
	 * instead of one per row. */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (rc < 0) {
		snprintf(msg, n, "set the filter optimisation");
		return rc;
	}
	for (size_t i = 0; i < linux_seccomp_n_rows; i++)
		if ((rc = add_row(ctx, &linux_seccomp_table[i], msg, n)) < 0)
			return rc;
	rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0)
		snprintf(msg, n, "export the filter");
	return rc;
}
