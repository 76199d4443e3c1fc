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

/* Without a pid namespace nothing ends the command's background processes with it:
 * halo-run becomes their subreaper and, once the command is done, kills whatever is
 * left (bounded rounds: a killed process's children are reparented to us). */
static void kill_descendants(void)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	for (int round = 0; round < 64; round++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC), n = 0;
		ssize_t len = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		char *p = buf, *end;

		if (fd >= 0)
			close(fd);
		if (len <= 0)
			break;
		buf[len] = 0;
		for (long pid; (pid = strtol(p, &end, 10)) > 0 && end != p; p = end, n++)
			kill((pid_t)pid, SIGKILL);
		while (waitpid(-1, NULL, n ? 0 : WNOHANG) > 0 && --n > 0)
			;
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* No namespaces: failIfUnavailable: false without user namespaces (`layers`: Landlock,
 * seccomp, no capabilities still apply), or sandbox.mode: off (limits and the clean
 * environment only). The forked child becomes the command itself, so forwarded
 * signals and the wall-clock kill reach it. */
static int run_without_namespaces(const struct linux_launch *l, const struct linux_scan *scan,
				  const struct linux_cgroup *cg, bool layers, struct launch_fds *f,
				  int *status, struct halo_err *e)
{
	pid_t parent = getpid();
	pid_t pid;
	int rc;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	pid = fork();
	if (pid < 0) {
		halo_err_set(e, "fork: %s", strerror(errno));
		return -errno;
	}
	if (pid == 0) {
		int rfd = f->report_w;

		close(f->report_r);
		close(f->status_r);
		close(f->sig_fd);
		/* The parent-death signal is kept across exec (no set-id with
		 * no_new_privs) and ends the command with halo-run. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(LINUX_SETUP_FAILED);
		if (linux_cgroup_attach(cg, getpid()) < 0)
			linux_die(rfd, "cgroup", errno, "join the sandbox's cgroup");
		if (layers) {
			linux_landlock_apply_or_die(l, scan, rfd);
			linux_caps_drop_or_die(rfd);
			linux_seccomp_apply_or_die(rfd);
		}
		launch_exec_command_or_die(l, rfd);
	}
	close(f->report_w);
	close(f->status_w);
	f->report_w = f->status_w = -1;
	rc = linux_supervise(l, pid, f, false, status, e);
	kill_descendants();
	return rc;
}

/* sandbox.mode: off — the policy's explicit kill switch: limits, the clean
 * environment and supervision (timeout, signals, no leftovers) still apply. */
static int run_unsandboxed(const struct linux_launch *l, int *status, struct halo_err *e)
{
	struct linux_cgroup cg = {0};
	struct launch_fds f;
	int rc;

	if (!l->quiet)
		fprintf(stderr, "halo-run: sandbox.mode is off: the command runs unsandboxed\n");
	rc = linux_cgroup_setup(&l->limits, &cg, e);
	if (rc < 0)
		return rc;
	rc = fds_open(&f);
	if (rc < 0) {
		halo_err_set(e, "could not create the supervisor's pipes: %s", strerror(-rc));
	} else {
		rc = run_without_namespaces(l, NULL, &cg, false, &f, status, e);
		fds_close(&f);
	}
	linux_cgroup_cleanup(&cg);
	return rc;
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

	if (l->unsandboxed)
		return run_unsandboxed(l, status, e);
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
			rc = run_without_namespaces(l, &scan, &cg, true, &f, status, e);
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
