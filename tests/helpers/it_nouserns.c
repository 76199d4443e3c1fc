/* it_nouserns CMD ARGS... — run CMD the way a container runtime's default seccomp
 * profile would: clone/unshare with CLONE_NEWUSER fail with EPERM, clone3 with ENOSYS
 * (its flags live in memory, out of a filter's reach). The fail-closed test uses it
 * for the EPERM family, next to user.max_user_namespaces=0 (ENOSPC). */
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

static int deny_userns(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc;

	if (!ctx)
		return -ENOMEM;
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
			      SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc;
}

int main(int argc, char **argv)
{
	int rc;

	if (argc < 2) {
		fprintf(stderr, "usage: it_nouserns CMD [ARGS...]\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		perror("it_nouserns: no_new_privs");
		return 2;
	}
	if ((rc = deny_userns()) < 0) {
		fprintf(stderr, "it_nouserns: seccomp: error %d\n", rc);
		return 2;
	}
	execvp(argv[1], argv + 1);
	perror("it_nouserns: exec");
	return 127;
}
