/* The Linux launch: scan, cgroups, clone into new namespaces, hand over the proxy
 * listeners, and at the end reap and report. Fails closed:
 * when a layer the policy asks for cannot be built, the command does not run, unless
 * the policy says failIfUnavailable: false — then what is missing is printed. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/broker_int.h"
#include "linux/launch_int.h"

#define SANDBOX_NS_FLAGS                                                                           \
	(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)

static void fds_close(struct launch_fds *f)
{
	int *all[] = {&f->report_r, &f->report_w, &f->status_r, &f->status_w, &f->go_r,	 &f->go_w,
		      &f->lsock_r,  &f->lsock_w,  &f->sess_r,	&f->sess_w,   &f->sig_fd};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (*all[i] >= 0) {
			close(*all[i]);
			*all[i] = -1;
		}
}

static int fds_open(struct launch_fds *f, bool session)
{
	int p[3][2], sp[2];

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
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		int err = errno;
		fds_close(f);
		return -err;
	}
	f->lsock_r = sp[0];
	f->lsock_w = sp[1];
	if (session && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
		int err = errno;
		fds_close(f);
		return -err;
	}
	if (session) {
		f->sess_r = sp[0];
		f->sess_w = sp[1];
	}
	f->sig_fd = launch_signalfd_open();
	if (f->sig_fd < 0) {
		int err = -f->sig_fd;
		fds_close(f);
		return -err;
	}
	return 0;
}

static void close_child_ends(struct launch_fds *f)
{
	int *ends[] = {&f->report_w, &f->status_w, &f->go_r, &f->lsock_w, &f->sess_w};

	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		if (*ends[i] >= 0) {
			close(*ends[i]);
			*ends[i] = -1;
		}
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
	       "granting 'userns,' to the halo-run binary (see docs/sandbox.md, 'User namespaces "
	       "unavailable'); "
	       "inside a container, the runtime's seccomp profile may block clone(CLONE_NEWUSER). "
	       "To run with the weaker layers instead, set sandbox.failIfUnavailable: false";
}

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif

/* Fork-like clone: the child continues here as pid 1 of the new namespaces. The
 * supervisor's pidfd on it comes with the clone (Linux 5.2): no pidfd_open after. A
 * kernel that refuses the flag (EINVAL) gets the clone without it; one that ignores
 * it leaves *pidfd at -1, and watch_child opens one. */
static pid_t clone_sandbox(int *pidfd)
{
	pid_t pid;

	*pidfd = -1;
	pid = (pid_t)syscall(SYS_clone, SANDBOX_NS_FLAGS | CLONE_PIDFD | SIGCHLD, NULL, pidfd, NULL,
			     NULL);
	if (pid < 0 && errno == EINVAL)
		pid = (pid_t)syscall(SYS_clone, SANDBOX_NS_FLAGS | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid == 0)
		*pidfd = -1; /* the parent's, not the child's */
	return pid;
}

static void kill_and_reap(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* The supervisor's hold on the child: a pidfd the event loop watches (from the clone,
 * where it gave one). */
static int watch_child(struct linux_sandbox *sb, struct halo_err *e)
{
	if (sb->pidfd < 0)
		sb->pidfd = (int)syscall(SYS_pidfd_open, sb->child, 0);
	if (sb->pidfd >= 0)
		return 0;
	halo_err_set(e, "pidfd_open: %s", strerror(errno));
	kill_and_reap(sb->child);
	return -EIO;
}

/* The pids cgroup counts halo-run's own tasks on top of limits.processes: init, a
 * session's spawner, the broker's first thread where init will run a broker
 * (linux_broker_expected, as init decides it from the same lists). Settled while init
 * still waits for the lists: the command never has one process more, nor one fewer,
 * than the policy says. */
static int settle_pids(const struct linux_sandbox *sb, int ours, struct halo_err *e)
{
	int rc = linux_cgroup_pids_ours(&sb->cg, ours);

	if (rc < 0)
		halo_err_set(e, "could not settle the sandbox's process limit: %s", strerror(-rc));
	return rc;
}

static int pids_settle(void *arg, struct linux_scan *s, struct halo_err *e)
{
	const struct linux_sandbox *sb = arg;

	s->broker = linux_broker_expected(sb->l, s); /* sent with the lists: init checks it */
	return settle_pids(sb, 1 + (sb->l->session ? 1 : 0) + (s->broker ? 1 : 0), e);
}

/* A session's namespaces, for masking a host socket that appears later
 * (session_mask.c): held now, while init waits for "go" and can still be looked at
 * (an unprivileged supervisor may not open them once init is not dumpable). One that
 * cannot be had leaves that step out: such a socket is refused as before. */
static void hold_namespaces(struct linux_sandbox *sb)
{
	char p[64];

	snprintf(p, sizeof(p), "/proc/%d/ns/user", (int)sb->child);
	sb->ns_user_fd = open(p, O_RDONLY | O_CLOEXEC);
	snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)sb->child);
	sb->ns_mnt_fd = open(p, O_RDONLY | O_CLOEXEC);
	/* the very child still (its pid not taken again meanwhile) */
	if (sb->pidfd < 0 || syscall(SYS_pidfd_send_signal, sb->pidfd, 0, NULL, 0) < 0) {
		if (sb->ns_user_fd >= 0)
			close(sb->ns_user_fd);
		if (sb->ns_mnt_fd >= 0)
			close(sb->ns_mnt_fd);
		sb->ns_user_fd = sb->ns_mnt_fd = -1;
	}
}

/* The child waits for "go" until it is accounted for in the cgroups; then, with
 * egress through the proxy, it hands over the listeners it made in its namespace, and
 * gets the run's CA files, when some host's TLS is terminated, in return. */
static int start_init(struct linux_sandbox *sb, struct halo_err *e)
{
	struct launch_fds *f = &sb->f;
	bool ca = sb->l->ca_make && sb->l->egress_proxy;
	int ca_fds[LAUNCH_CA_FILES] = {-1, -1, -1};
	int rc;

	close_child_ends(f);
	if (sb->l->session)
		hold_namespaces(sb);
	if (linux_cgroup_attach(&sb->cg, sb->child) < 0) {
		halo_err_set(e, "could not place the sandbox in its cgroup: %s", strerror(errno));
		kill_and_reap(sb->child);
		return -EPERM;
	}
	if (write(f->go_w, "g", 1) != 1) {
		halo_err_set(e, "could not start the sandbox: %s", strerror(errno));
		kill_and_reap(sb->child);
		return -EPIPE;
	}
	close(f->go_w);
	f->go_w = -1;
	/* The CA, then the workspace walk, while the child builds its namespaces. With a
	 * CA the child waits for it (after its listeners) before the mounts that read the
	 * walk's lists, which can be more than their socket holds: the listeners and the
	 * CA go first, or both sides would wait on each other for good. No listeners means
	 * the child failed before making them: it is killed, and linux_finish reports the
	 * setup step that failed (as it does when the CA files cannot be sent: the child,
	 * waiting for them, says so). */
	if (ca && (rc = launch_ca_make(sb->l, ca_fds, e)) < 0) {
		kill_and_reap(sb->child);
		return rc;
	}
	if (ca && (netns_recv_listeners(f->lsock_r, sb->listeners, &sb->n_listeners, 10000) < 0 ||
		   launch_ca_send(f->lsock_r, ca_fds) < 0))
		kill(sb->child, SIGKILL);
	launch_ca_close(ca_fds);
	if ((rc = linux_scan_hand_over(sb->l, &sb->scan, pids_settle, sb, e)) < 0) {
		kill_and_reap(sb->child);
		return rc;
	}
	if ((rc = watch_child(sb, e)) < 0 || !sb->l->egress_proxy || ca)
		return rc;
	if (netns_recv_listeners(f->lsock_r, sb->listeners, &sb->n_listeners, 10000) < 0)
		kill(sb->child, SIGKILL);
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
static int start_without_namespaces(struct linux_sandbox *sb, bool layers, struct halo_err *e)
{
	const struct linux_launch *l = sb->l;
	struct launch_fds *f = &sb->f;
	pid_t parent = getpid();
	int rc;

	/* The command alone in the pids cgroup: none of halo-run's tasks on top. */
	if ((rc = settle_pids(sb, 0, e)) < 0)
		return rc;
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	sb->subreaper = true;
	sb->via_init = false;
	sb->child = fork();
	if (sb->child < 0) {
		halo_err_set(e, "fork: %s", strerror(errno));
		return -errno;
	}
	if (sb->child == 0) {
		int rfd = f->report_w;

		close(f->report_r);
		close(f->status_r);
		close(f->sig_fd);
		/* The parent-death signal is kept across exec (no set-id with
		 * no_new_privs) and ends the command with halo-run. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(LINUX_SETUP_FAILED);
		if (linux_cgroup_attach(&sb->cg, getpid()) < 0)
			linux_die(rfd, "cgroup", errno, "join the sandbox's cgroup");
		if (layers) {
			linux_landlock_apply_or_die(&sb->scan, false, &l->policy->host_ports, rfd);
			linux_caps_drop_or_die(rfd, NULL);
			linux_seccomp_apply_or_die(rfd);
		}
		/* No network namespace, so no proxy of ours: no variables pointing at one
		 * (a host service on that port would otherwise get the traffic). The
		 * runner builds it for every launch that may come here. */
		if (!l->envp_direct)
			linux_die(rfd, "environment", EINVAL, "no environment without the proxy");
		launch_exec_command_or_die(l, l->envp_direct, rfd);
	}
	close_child_ends(f);
	return watch_child(sb, e);
}

/* What the launch could not enforce goes back to the runner, which says it (nothing
 * below runner/ prints). Lost only when memory runs out. */
#define WARN(l, ...) ((l)->warnings ? (void)plan_text_add((l)->warnings, __VA_ARGS__) : (void)0)

static void warn_degraded(const struct linux_launch *l)
{
	int abi = linux_landlock_abi();

	WARN(l, "WARNING: user namespaces unavailable; running with Landlock, seccomp, limits "
		"and a clean environment only (failIfUnavailable: false).");
	WARN(l, "NOT enforced: protected-path masking, read-only root, private /tmp and /run, "
		"persistence guard, pid/ipc/uts/net isolation.");
	/* No network namespace means no proxy: say exactly what the command can reach. */
	if (abi >= 4) {
		const struct policy_ports *hp = &l->policy->host_ports;
		WARN(l,
		     "network: every TCP connect is refused (Landlock ABI %d), the host's "
		     "loopback included; UDP (DNS too) and unix sockets are NOT filtered.",
		     abi);
		/* Landlock rules name ports, not addresses. */
		for (size_t i = 0; i < hp->n; i++)
			WARN(l,
			     "network: egress.hostPorts %u is open on EVERY address (Landlock "
			     "cannot limit a port to the loopback), not only the host's.",
			     (unsigned)hp->items[i]);
	} else
		WARN(l, "network: egress is open (no network namespace, and Landlock below ABI 4 "
			"cannot refuse TCP): TCP, UDP and unix sockets reach the host and beyond.");
}

/* Scan, cgroups, pipes: everything the supervisor prepares before the child exists. */
static int prepare(struct linux_sandbox *sb, bool may_degrade, struct halo_err *e)
{
	const struct linux_launch *l = sb->l;
	int rc;

	/* The rest of the scan and the walk come after the clone (linux_scan_hand_over). */
	if (!l->unsandboxed && (rc = linux_scan_begin(l, &sb->scan, e)) < 0)
		return rc;
	rc = linux_cgroup_setup(&l->limits, &sb->cg, e);
	if (rc < 0 && !may_degrade)
		return rc;
	/* The memory cgroup, where there is one, holds memory instead of RLIMIT_DATA. */
	sb->own.limits.memory_via = sb->cg.memory ? RLIMITS_MEM_CGROUP : RLIMITS_MEM_DATA;
	if (rc < 0)
		WARN(l, "WARNING: %s (failIfUnavailable: false)", e->msg);
	if ((rc = fds_open(&sb->f, l->session)) < 0)
		halo_err_set(e, "could not create the supervisor's pipes: %s", strerror(-rc));
	return rc;
}

static void sandbox_free(struct linux_sandbox *sb)
{
	for (size_t i = 0; i < sb->n_listeners; i++)
		close(sb->listeners[i].fd);
	if (sb->pidfd >= 0)
		close(sb->pidfd);
	if (sb->diag_fd >= 0)
		close(sb->diag_fd);
	if (sb->ns_user_fd >= 0)
		close(sb->ns_user_fd);
	if (sb->ns_mnt_fd >= 0)
		close(sb->ns_mnt_fd);
	fds_close(&sb->f);
	linux_cgroup_cleanup(&sb->cg);
	linux_scan_free(&sb->scan);
	free(sb);
}

static int start(struct linux_sandbox *sb, struct halo_err *e)
{
	const struct linux_launch *l = sb->l;
	bool may_degrade = l->policy->fail_if_unavailable == 0;
	struct launch_ids ids = {getuid(), getgid()};
	int rc, err;

	if (l->session && l->unsandboxed) {
		halo_err_set(e, "a session needs the sandbox (sandbox.mode is off)");
		return -EINVAL;
	}
	if ((rc = prepare(sb, may_degrade, e)) < 0)
		return rc;
	if (l->unsandboxed) {
		WARN(l, "sandbox.mode is off: the command runs unsandboxed");
		return start_without_namespaces(sb, false, e);
	}
	sb->via_init = true;
	launch_cpus_note();
	sb->child = clone_sandbox(&sb->pidfd);
	if (sb->child > 0)
		launch_cpus_place(sb->child); /* before "go": init restores after it */
	if (sb->child == 0)
		linux_init_main(l, &sb->scan, &ids, &sb->f);
	if (sb->child > 0)
		return start_init(sb, e);
	err = errno;
	if (!linux_userns_error(err) || !may_degrade || l->session) {
		halo_err_set(e, "cannot create the sandbox's namespaces (%s): %s", strerror(err),
			     linux_userns_error(err) ? linux_userns_advice() : "clone failed");
		return -err;
	}
	/* The scan's lists were to follow the clone: Landlock needs them here. A launch
	 * they refuse says only why, not first that it runs with the weaker layers. */
	if ((rc = linux_scan_settle_here(l, &sb->scan, e)) < 0)
		return rc;
	warn_degraded(l);
	return start_without_namespaces(sb, true, e);
}

int linux_start(const struct linux_launch *l, struct linux_sandbox **out, struct halo_err *e)
{
	struct linux_sandbox *sb = calloc(1, sizeof(*sb));
	int rc;

	*out = NULL;
	if (!sb) {
		halo_err_set(e, "out of memory");
		return -ENOMEM;
	}
	sb->own = *l;
	sb->l = &sb->own;
	sb->pidfd = -1;
	sb->diag_fd = -1;
	sb->ns_user_fd = sb->ns_mnt_fd = -1;
	memset(&sb->f, -1, sizeof(sb->f));
	rc = start(sb, e);
	if (rc < 0) {
		sandbox_free(sb);
		return rc;
	}
	*out = sb;
	return 0;
}

/* init, its status read, may still be exiting: left to linux_reap, the caller's last
 * step. One at a time (one sandbox per supervisor). */
static pid_t reap_later = -1;

/* Whether init's whole status is in the pipe: then the outcome needs no wait status,
 * and nothing of the command's is left (init reaped it all before sending it), so
 * the supervisor need not wait for init's own teardown. Not with a cgroup (its
 * removal needs init gone), nor after a kill (the wait status is the outcome). */
static bool reap_can_wait(const struct linux_sandbox *sb)
{
	int queued = 0;

	return sb->via_init && !sb->timed_out && !sb->cg.pids && !sb->cg.memory &&
	       ioctl(sb->f.status_r, FIONREAD, &queued) == 0 && queued >= (int)sizeof(int);
}

int linux_finish(struct linux_sandbox *sb, struct halo_outcome *out, struct halo_err *e)
{
	int ws = 0, rc;
	bool later = reap_can_wait(sb) && waitpid(sb->child, &ws, WNOHANG) == 0;

	while (!later && waitpid(sb->child, &ws, 0) < 0 && errno == EINTR)
		;
	if (later)
		reap_later = sb->child;
	rc = launch_outcome(sb, ws, out, e);
	if (sb->subreaper)
		kill_descendants();
	sandbox_free(sb);
	return rc;
}

/* Not waited for: init reaped every other process before it sent the status, and
 * what remains is the kernel's teardown of its namespaces. Reaped here if already
 * done; otherwise whoever inherits it at our exit does (as bubblewrap's monitor
 * leaves its pid 1). */
void linux_reap(void)
{
	if (reap_later > 0)
		(void)waitpid(reap_later, NULL, WNOHANG);
	reap_later = -1;
}

int linux_sandbox_done_fd(const struct linux_sandbox *sb)
{
	return sb->via_init ? sb->f.status_r : -1;
}
