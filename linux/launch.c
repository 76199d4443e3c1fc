/* The Linux launch: scan, cgroups, clone into new namespaces, supervise. Fails closed:
 * when a layer the policy asks for cannot be built, the command does not run, unless
 * the policy says failIfUnavailable: false — then what is missing is printed. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/launch_int.h"

#define SANDBOX_NS_FLAGS                                                                           \
	(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)

static void fds_close(struct launch_fds *f)
{
	int *all[] = {&f->report_r, &f->report_w, &f->status_r, &f->status_w,
		      &f->go_r,     &f->go_w,     &f->sig_fd};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (*all[i] >= 0) {
			close(*all[i]);
			*all[i] = -1;
		}
}

static int fds_open(struct launch_fds *f)
{
	int p[3][2];

	memset(f, -1, sizeof(*f));
	for (int i = 0; i < 3; i++)
		if (pipe2(p[i], O_CLOEXEC) < 0) {
			int err = errno;
			while (i-- > 0) {
				close(p[i][0]);
				close(p[i][1]);
			}
			return -err;
		}
	f->report_r = p[0][0];
	f->report_w = p[0][1];
	f->status_r = p[1][0];
	f->status_w = p[1][1];
	f->go_r = p[2][0];
	f->go_w = p[2][1];
	f->sig_fd = launch_signalfd_open();
	if (f->sig_fd < 0) {
		int err = -f->sig_fd;
		fds_close(f);
		return -err;
	}
	return 0;
}

bool linux_userns_error(int err)
{
	/* EPERM: AppArmor/sysctl restriction or a seccomp'd container; ENOSPC:
	 * user.max_user_namespaces exhausted or 0; EUSERS: nesting depth; EINVAL:
	 * a kernel built without CONFIG_USER_NS. */
	return err == EPERM || err == ENOSPC || err == EUSERS || err == EINVAL || err == EACCES;
}

const char *linux_userns_advice(void)
{
	return "user namespaces are unavailable to this user. Check: sysctl "
	       "user.max_user_namespaces (must be > 0); on Ubuntu 23.10+ "
	       "kernel.apparmor_restrict_unprivileged_userns=1 requires an AppArmor profile "
	       "granting 'userns,' to the halo-run binary (see README: 'User namespaces'); "
	       "inside a container, the runtime's seccomp profile may block clone(CLONE_NEWUSER). "
	       "To run with the weaker layers instead, set sandbox.failIfUnavailable: false";
}

/* Fork-like clone: the child continues here as pid 1 of the new namespaces. */
static pid_t clone_sandbox(void)
{
	return (pid_t)syscall(SYS_clone, SANDBOX_NS_FLAGS | SIGCHLD, NULL, NULL, NULL, NULL);
}

static int start_child(const struct linux_launch *l, struct linux_cgroup *cg, pid_t child,
		       struct launch_fds *f, struct halo_err *e)
{
	close(f->report_w);
	close(f->status_w);
	close(f->go_r);
	f->report_w = f->status_w = f->go_r = -1;
	if (linux_cgroup_attach(cg, child) < 0) {
		halo_err_set(e, "could not place the sandbox in its cgroup: %s", strerror(errno));
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return -EPERM;
	}
	(void)l;
	/* Go: the child starts building its layers only once it is accounted for. */
	if (write(f->go_w, "g", 1) != 1) {
		halo_err_set(e, "could not start the sandbox: %s", strerror(errno));
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return -EPIPE;
	}
	close(f->go_w);
	f->go_w = -1;
	return 0;
}

/* failIfUnavailable: false and no user namespace: Landlock, seccomp, limits and the
 * environment still apply; the mount layout, masks and namespaces do not. */
static int run_degraded(const struct linux_launch *l, struct launch_fds *f, int *status,
			struct halo_err *e)
{
	struct linux_scan none = {0};
	pid_t parent = getpid();
	pid_t pid = fork();

	if (pid < 0) {
		halo_err_set(e, "fork: %s", strerror(errno));
		return -errno;
	}
	if (pid == 0) {
		int rfd = f->report_w;

		close(f->report_r);
		close(f->status_r);
		close(f->sig_fd);
		/* Without a pid namespace there is no init to hold the command: this child
		 * becomes the command itself, so forwarded signals and the wall-clock kill
		 * reach it, and the parent-death signal (kept across exec: no set-id with
		 * no_new_privs) ends it with halo-run. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(LINUX_SETUP_FAILED);
		linux_landlock_apply_or_die(l, &none, rfd);
		linux_caps_drop_or_die(rfd);
		linux_seccomp_apply_or_die(rfd);
		launch_exec_command_or_die(l, rfd);
	}
	close(f->report_w);
	close(f->status_w);
	f->report_w = f->status_w = -1;
	return linux_supervise(l, pid, f, false, status, e);
}

static void warn_degraded(const struct linux_launch *l)
{
	if (l->quiet)
		return;
	fprintf(stderr, "halo-run: WARNING: user namespaces unavailable; running with Landlock, "
			"seccomp, limits and a clean environment only (failIfUnavailable: false).\n"
			"halo-run: NOT enforced: protected-path masking, read-only root, private /tmp "
			"and /run, persistence guard, pid/ipc/uts/net isolation (egress is open).\n");
}

int linux_run(const struct linux_launch *l, int *status, struct halo_err *e)
{
	struct linux_scan scan = {0};
	struct linux_cgroup cg = {0};
	struct launch_fds f;
	struct launch_ids ids = {getuid(), getgid()};
	bool may_degrade = l->policy->fail_if_unavailable == 0;
	pid_t child;
	int rc;

	rc = linux_scan(l, &scan, e);
	if (rc < 0)
		return rc;
	if (scan.truncated && !may_degrade) {
		halo_err_set(e, "the workspace scan stopped at %zu entries before covering every "
				"protected path; run in a smaller workspace",
			     scan.entries_scanned);
		rc = -E2BIG;
		goto out;
	}
	rc = linux_cgroup_setup(&l->limits, &cg, e);
	if (rc < 0 && !may_degrade)
		goto out;
	if (rc < 0 && !l->quiet)
		fprintf(stderr, "halo-run: WARNING: %s (failIfUnavailable: false)\n", e->msg);
	rc = fds_open(&f);
	if (rc < 0) {
		halo_err_set(e, "could not create the supervisor's pipes: %s", strerror(-rc));
		goto out;
	}
	child = clone_sandbox();
	if (child == 0)
		linux_init_main(l, &scan, &ids, &f);
	if (child < 0) {
		int err = errno;
		if (!linux_userns_error(err) || !may_degrade) {
			halo_err_set(e, "cannot create the sandbox's namespaces (%s): %s", strerror(err),
				     linux_userns_error(err) ? linux_userns_advice() : "clone failed");
			rc = -err;
		} else {
			warn_degraded(l);
			rc = run_degraded(l, &f, status, e);
		}
		fds_close(&f);
		goto out;
	}
	rc = start_child(l, &cg, child, &f, e);
	if (rc == 0)
		rc = linux_supervise(l, child, &f, true, status, e);
	fds_close(&f);
out:
	linux_cgroup_cleanup(&cg);
	linux_scan_free(&scan);
	return rc;
}
