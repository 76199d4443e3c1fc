/* it_nonft CMD ARGS... — run CMD as on a kernel without nf_tables: socket(AF_NETLINK,
 * *, NETLINK_NETFILTER) fails with EAFNOSUPPORT, everything else is allowed. The
 * capture test uses it for the fail-closed path: the redirect cannot be set up, the
 * DNS stub refuses every lookup, and proxy-aware clients still get out. */
#include <errno.h>
#include <linux/netlink.h>
#include <seccomp.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

static int deny_nfnetlink(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc;

	if (!ctx)
		return -ENOMEM;
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 2,
			      SCMP_A0(SCMP_CMP_EQ, AF_NETLINK),
			      SCMP_A2(SCMP_CMP_EQ, NETLINK_NETFILTER));
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc;
}

int main(int argc, char **argv)
{
	int rc;

	if (argc < 2) {
		fprintf(stderr, "usage: it_nonft CMD [ARGS...]\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		perror("it_nonft: no_new_privs");
		return 2;
	}
	if ((rc = deny_nfnetlink()) < 0) {
		fprintf(stderr, "it_nonft: seccomp: error %d\n", rc);
		return 2;
	}
	execvp(argv[1], argv + 1);
	perror("it_nonft: exec");
	return 127;
}
