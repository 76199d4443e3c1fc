/* seccomp: load the deny filter, last, right before exec. The rules and their reasons
 * are the table in seccomp_table.c; the BPF program below is what libseccomp made of
 * that table at build time (tools/gen_seccomp, seccomp_build.c), compiled in. Loading
 * it is one system call: no filter is rebuilt at every launch, and halo-run does not
 * need libseccomp at run time. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/linux_int.h"
#include "linux/seccomp_int.h"

/* $(BUILD)/gen/seccomp_bpf.h, written by tools/gen_seccomp. */
#include "seccomp_bpf.h"

#define STEP "seccomp"

_Static_assert(sizeof(linux_seccomp_bpf) / sizeof(linux_seccomp_bpf[0]) <= BPF_MAXINSNS,
	       "the deny filter is longer than the kernel accepts");

const struct sock_filter *linux_seccomp_program(size_t *n_insns)
{
	*n_insns = sizeof(linux_seccomp_bpf) / sizeof(linux_seccomp_bpf[0]);
	return linux_seccomp_bpf;
}

void linux_seccomp_apply_or_die(int report_fd)
{
	struct sock_fprog prog = {
	    .len = (unsigned short)(sizeof(linux_seccomp_bpf) / sizeof(linux_seccomp_bpf[0])),
	    .filter = (struct sock_filter *)linux_seccomp_bpf,
	};

	/* A filter may only be installed without CAP_SYS_ADMIN under no_new_privs (which
	 * libseccomp's loader also set); the capability step has usually set it already. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		linux_die(report_fd, STEP, errno, "PR_SET_NO_NEW_PRIVS");
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0)
		return;
	/* Kernels before 3.17 have no seccomp(2): the same filter through prctl. */
	if (errno != ENOSYS || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
		linux_die(report_fd, STEP, errno, "load the filter");
}
