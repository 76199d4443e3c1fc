/* What this machine offers, asked the only reliable way: by trying, each layer in a
 * throwaway child (a sysctl can say yes while a container's seccomp profile or an LSM
 * says no). For each layer: available or not (and why), whether the policy relies on
 * it, what it does not stop even when present, and for each failure the fix. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/linux.h"
#include "netns/netns.h"
#include "trust/doctor_int.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_restrict_self  446
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* Run fn in a child; 0, or the errno it reported (EIO if it was killed). */
static int in_child(int (*fn)(long), long arg)
{
	pid_t pid = fork();
	int ws = 0;

	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(fn(arg) & 0xff);
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : EIO;
}

static int try_unshare(long flags)
{
	return unshare((int)flags) == 0 ? 0 : errno;
}

/* halo-run's own filter, loaded the way the launch loads it. */
static int try_seccomp(long unused)
{
	size_t n;
	const struct sock_filter *insns = linux_seccomp_program(&n);
	struct sock_fprog prog = {(unsigned short)n, (struct sock_filter *)insns};

	(void)unused;
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0)
		return errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return errno;
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0 ? 0 : errno;
}

static int try_nnp(long unused)
{
	(void)unused;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return errno;
	return prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ? 0 : EINVAL;
}

static int try_landlock(long unused)
{
	struct {
		__u64 fs;
	} attr = {LANDLOCK_ACCESS_FS_WRITE_FILE};
	int fd;

	(void)unused;
	fd = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (fd < 0)
		return errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return errno;
	return syscall(SYS_landlock_restrict_self, fd, 0) == 0 ? 0 : errno;
}

/* The proxy's listeners are made inside the sandbox's network namespace. */
static int try_listeners(long unused)
{
	struct netns_listener ls[NETNS_MAX_LISTENERS];
	size_t n = 0;
	int rc;

	(void)unused;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
		return errno;
	if ((rc = netns_loopback_up()) < 0 || (rc = netns_listen_all(NULL, 0, ls, &n)) < 0)
		return -rc;
	for (size_t i = 0; i < n; i++)
		close(ls[i].fd);
	return 0;
}

/* Capture of proxy-unaware clients: the fake range made local and the nf_tables
 * redirect, in a throwaway network namespace, as the sandbox's init does it. */
static int try_capture(long unused)
{
	(void)unused;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
		return errno;
	int rc = netns_loopback_up();

	return -(rc < 0 ? rc : netns_capture_setup());
}

static long read_long(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

/* "Seccomp:" of /proc/self/status: non-zero when something (a container runtime)
 * already filters this process's system calls. */
static int own_seccomp_mode(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[128];
	int mode = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Seccomp: %d", &mode) == 1)
			break;
	if (f)
		fclose(f);
	return mode;
}

/* ---------------------------------------------------------------- records */

static struct doctor_layer *layer(struct doctor *d, const char *key, const char *name,
				  const char *gaps)
{
	struct doctor_layer *l = &d->layers[d->n_layers++];

	memset(l, 0, sizeof(*l));
	l->key = key;
	l->name = name;
	l->gaps = gaps;
	return l;
}

static void set_result(struct doctor_layer *l, int err, const char *what)
{
	const char *name = strerrorname_np(err);

	l->available = err == 0;
	if (err == 0) {
		snprintf(l->detail, sizeof(l->detail), "available");
		return;
	}
	snprintf(l->detail, sizeof(l->detail), "unavailable (%s)", name ? name : "?");
	snprintf(l->error, sizeof(l->error), "%s: %s", what, strerror(err));
}

static void set_use(struct doctor_layer *l, bool used, const char *words)
{
	l->used = used;
	snprintf(l->use, sizeof(l->use), "%s", words);
}

static const char *self_path(char *buf, size_t n)
{
	ssize_t len = readlink("/proc/self/exe", buf, n - 1);

	buf[len > 0 ? len : 0] = '\0';
	return len > 0 ? buf : "/usr/local/bin/halo-run";
}

/* Why user namespaces fail here, and what to change: every cause that applies. */
static void userns_fixes(struct doctor *d, int err)
{
	char exe[4096], fix[4096 + 1024];
	bool named = false;

	if (read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1 &&
	    (err == EPERM || err == EACCES)) {
		self_path(exe, sizeof(exe));
		snprintf(fix, sizeof(fix),
			 "as root, install this AppArmor profile as /etc/apparmor.d/halo-run and "
			 "load it with `apparmor_parser -r /etc/apparmor.d/halo-run`:\n"
			 "abi <abi/4.0>,\n"
			 "include <tunables/global>\n"
			 "\n"
			 "profile halo-run %s flags=(unconfined) {\n"
			 "  userns,\n"
			 "\n"
			 "  include if exists <local/halo-run>\n"
			 "}\n"
			 "(or, for the whole machine: sysctl -w "
			 "kernel.apparmor_restrict_unprivileged_userns=0)",
			 exe);
		doctor_add(d, true, NULL, fix,
			   "kernel.apparmor_restrict_unprivileged_userns=1 (Ubuntu 23.10+): "
			   "unprivileged user namespaces need an AppArmor profile for halo-run");
		named = true;
	}
	if (read_long("/proc/sys/user/max_user_namespaces") == 0 || err == ENOSPC) {
		doctor_add(d, true, NULL,
			   "as root: sysctl -w user.max_user_namespaces=15000, and put "
			   "user.max_user_namespaces=15000 in /etc/sysctl.d/50-halo-run.conf",
			   "user.max_user_namespaces is 0 (or used up) for this user");
		named = true;
	}
	if (read_long("/proc/sys/kernel/unprivileged_userns_clone") == 0) {
		doctor_add(
		    d, true, NULL,
		    "as root: sysctl -w kernel.unprivileged_userns_clone=1, and persist it in "
		    "/etc/sysctl.d/",
		    "kernel.unprivileged_userns_clone is 0");
		named = true;
	}
	if (own_seccomp_mode() != 0 && err == EPERM && !named) {
		doctor_add(
		    d, true, NULL,
		    "run the container with a seccomp profile that allows clone/unshare with "
		    "CLONE_NEWUSER (or run halo-run outside the container)",
		    "this process already runs under a seccomp filter (a container runtime's "
		    "profile) that refuses new user namespaces");
		named = true;
	}
	if (!named)
		doctor_add(d, true, NULL, linux_userns_advice(),
			   "user namespaces cannot be created by this user (%s)", strerror(err));
	if (d->p->fail_if_unavailable == 0)
		doctor_add(
		    d, false, NULL, "fix the problem above, or accept the gap knowingly",
		    "the policy says failIfUnavailable: false, so halo-run would still run "
		    "commands, WITHOUT protected-path masking, read-only root, private /tmp, "
		    "persistence guard, pid/ipc/uts/net isolation and egress control");
}

/* ---------------------------------------------------------------- layers */

static const struct {
	const char *key, *name;
	long flag;
	const char *flag_name;
	const char *gaps;
} namespaces[] = {
    {"user-namespace", "user namespace", 0, "",
     "maps only your own uid and gid; root inside holds no capability on the host. It "
     "hides no file your uid can read: that is the mount layer's job"},
    {"mount-namespace", "mount namespace", CLONE_NEWNS, "|CLONE_NEWNS",
     "masks protected paths by name as found at launch: a file created later that "
     "matches a glob, a hard link to a protected file and its copies in git history are "
     "not masked; the rest of the host stays readable"},
    {"pid-namespace", "pid namespace", CLONE_NEWPID, "|CLONE_NEWPID",
     "hides and shields host processes; it limits neither CPU nor memory"},
    {"net-namespace", "net namespace", CLONE_NEWNET, "|CLONE_NEWNET",
     "loopback only, no route out but halo-run's proxy; whatever reaches an allowed host "
     "can carry any data there"},
    {"ipc-namespace", "ipc namespace", CLONE_NEWIPC, "|CLONE_NEWIPC",
     "isolates SysV IPC and POSIX message queues; not files or unix sockets in writable "
     "trees"},
    {"uts-namespace", "uts namespace", CLONE_NEWUTS, "|CLONE_NEWUTS",
     "gives the sandbox its own hostname; nothing more"},
};

/* Does a launch of this policy apply the layer? The plan says, not the policy. */
static bool uses(const struct doctor *d, const char *layer)
{
	const struct plan_layer *y = plan_layer_find(&d->plan, layer);

	return y && y->used;
}

static int check_namespaces(struct doctor *d, bool off)
{
	int first_err = 0;

	for (size_t i = 0; i < sizeof(namespaces) / sizeof(namespaces[0]); i++) {
		struct doctor_layer *l =
		    layer(d, namespaces[i].key, namespaces[i].name, namespaces[i].gaps);
		int err = in_child(try_unshare, CLONE_NEWUSER | namespaces[i].flag);
		char what[64];
		snprintf(what, sizeof(what), "unshare(CLONE_NEWUSER%s)", namespaces[i].flag_name);
		set_result(l, err, what);
		set_use(l, !off, off ? "not used (sandbox.mode: off)" : "used");
		if (err && !first_err)
			first_err = err;
	}
	if (first_err && !off)
		userns_fixes(d, first_err);
	return first_err;
}

static void check_seccomp(struct doctor *d, bool off)
{
	struct doctor_layer *l =
	    layer(d, "seccomp", "seccomp",
		  "a deny list of dangerous system calls (doctor --json and "
		  "--dry-run list them); everything else is allowed, and kernel "
		  "bugs in allowed calls are not covered");
	int err = in_child(try_seccomp, 0);

	set_result(l, err, "loading halo-run's filter");
	set_use(l, uses(d, "seccomp"), off ? "not used (sandbox.mode: off)" : "used (required)");
	if (err && !off)
		doctor_add(d, true, NULL,
			   "use a kernel built with CONFIG_SECCOMP_FILTER; in a container, allow "
			   "seccomp(2) and prctl(PR_SET_SECCOMP)",
			   "seccomp filters cannot be loaded: every launch would fail");
	if (own_seccomp_mode() != 0)
		doctor_add(d, false, NULL, "none needed if the launch works; see the layers above",
			   "doctor itself runs under a seccomp filter (mode %d), probably a "
			   "container runtime's: it may refuse calls the sandbox needs",
			   own_seccomp_mode());
}

static void check_landlock(struct doctor *d, bool off)
{
	static char gaps[640];
	struct doctor_layer *l = layer(d, "landlock", "landlock", gaps);
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	int err = abi < 0 ? errno : in_child(try_landlock, 0);

	set_result(l, err, abi < 0 ? "landlock_create_ruleset" : "landlock_restrict_self");
	if (err == 0)
		snprintf(l->detail, sizeof(l->detail), "available, ABI %ld", abi);
	snprintf(gaps, sizeof(gaps),
		 "a second layer on writes (only where the mounts allow them); reads are not "
		 "limited by it (masking does that)%s%s%s",
		 abi >= 4 ? "; TCP is limited only without a network namespace (there: every "
			    "connect refused)"
			  : "; without a network namespace TCP connect is not limited (ABI < 4)",
		 abi >= 6 ? "" : "; abstract unix sockets and signals are not scoped (ABI < 6)",
		 abi >= 9 ? "; pathname unix sockets: only the sandbox's own and those "
			    "sandbox.unixSockets names are connectable (ABI 9)"
			  : "; host pathname unix sockets are not handled (ABI < 9): they are "
			    "masked by name at launch (every one the host's /proc/net/unix lists, "
			    "and the known agent and engine places); one bound after the launch "
			    "at a visible path outside /tmp and /run is reachable");
	set_use(l, uses(d, "landlock") && err == 0,
		off ? "not used (sandbox.mode: off)" : "used (second layer)");
	if (err && !off)
		doctor_add(d, false, NULL,
			   "boot a kernel with CONFIG_SECURITY_LANDLOCK=y and landlock in its lsm= "
			   "list",
			   "Landlock is unavailable (%s): writes are held by the read-only mount "
			   "layout alone, with no second layer",
			   strerror(err));
}

static void check_nnp(struct doctor *d, bool off)
{
	struct doctor_layer *l =
	    layer(d, "no-new-privs", "no_new_privs",
		  "no privilege gained through setuid/setgid binaries or file capabilities; it "
		  "removes none already held (capabilities are dropped separately)");
	int err = in_child(try_nnp, 0);

	set_result(l, err, "prctl(PR_SET_NO_NEW_PRIVS)");
	set_use(l, uses(d, "no_new_privs"),
		off ? "not used (sandbox.mode: off)" : "used (required)");
	if (err && !off)
		doctor_add(d, true, NULL, "use a kernel newer than 3.5",
			   "no_new_privs cannot be set: every launch would fail");
}

static void check_proxy(struct doctor *d, bool off, int userns_err)
{
	struct doctor_layer *l =
	    layer(d, "proxy", "egress proxy",
		  "decides every host by name and refuses private addresses after resolution; it "
		  "sees inside TLS only for hosts with egress.credentials or egress.requestRules "
		  "(terminated with a per-run CA, HTTP/1.1), so any other allowed host (and "
		  "whatever shares its name, such as a CDN) can receive anything the command "
		  "sends");
	int err = userns_err ? userns_err : in_child(try_listeners, 0);

	set_result(l, err, "listeners in a new network namespace");
	set_use(l, d->plan.egress.listeners.n > 0, off ? "not used (sandbox.mode: off)" : "used");
	if (err && !userns_err && !off)
		doctor_add(d, true, NULL,
			   "check that the loopback interface can be brought up in a "
			   "new network namespace (rtnetlink)",
			   "the proxy's listeners cannot be made in a new network namespace: %s",
			   strerror(err));
}

static void check_capture(struct doctor *d, bool off, int userns_err)
{
	struct doctor_layer *l =
	    layer(d, "capture", "capture",
		  "clients that ignore the proxy variables: the DNS stub answers names the policy "
		  "could allow with fake addresses and TCP to them is decided by name; not "
		  "captured: UDP other than DNS, IP literals, IPv6");
	int err = userns_err ? userns_err : in_child(try_capture, 0);

	set_result(l, err, "nf_tables redirect in a new network namespace");
	set_use(l, d->plan.egress.listeners.n > 0 && !err,
		off ? "not used (sandbox.mode: off)" : "used");
	if (err && !userns_err && !off)
		doctor_add(d, false, NULL,
			   "use a kernel with nf_tables (NF_TABLES, NFT_REDIR, NF_NAT) usable in "
			   "user namespaces",
			   "connections cannot be captured (%s): clients that ignore the proxy "
			   "variables get REFUSED for every name inside the sandbox",
			   strerror(err));
}

/* Can a directory be made in this cgroup hierarchy (and removed again)? */
static bool cgroup_writable(const char *base, const char *file)
{
	char dir[256], path[320];
	struct stat st;
	bool ok;

	snprintf(dir, sizeof(dir), "%s/halo-doctor.%d", base, (int)getpid());
	if (mkdir(dir, 0755) < 0)
		return false;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	ok = stat(path, &st) == 0;
	rmdir(dir);
	return ok;
}

static bool controller_listed(const char *name)
{
	char buf[512] = "";
	int fd = open("/sys/fs/cgroup/cgroup.controllers", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (char *save = NULL, *t = strtok_r(buf, " \n", &save); t;
	     t = strtok_r(NULL, " \n", &save))
		if (strcmp(t, name) == 0)
			return true;
	return false;
}

/* Which mechanism holds limits.memoryMB on this machine, for this caller: a note, since
 * either holds (RLIMIT_DATA per process, the cgroup for the whole sandbox). */
static void note_memory(struct doctor *d, bool cgroup, const char *desc)
{
	const struct policy_limits *pl = &d->p->limits;

	if (pl->memory_mb == POLICY_LIMIT_UNSET)
		return;
	if (cgroup)
		doctor_add(d, false, NULL, "none needed",
			   "limits.memoryMB (%lld) is held by the %s for the whole sandbox: over "
			   "it the kernel's OOM killer ends a process and halo-run says "
			   "\"memory limit hit\"",
			   (long long)pl->memory_mb, desc);
	else
		doctor_add(d, false, NULL,
			   geteuid() == 0 ? "mount the memory cgroup controller"
					  : "run under a systemd user session that delegates the "
					    "memory controller (user@UID.service), or as root",
			   "limits.memoryMB (%lld) is held per process by RLIMIT_DATA (%s): an "
			   "allocation over it fails; several processes together may use more",
			   (long long)pl->memory_mb, desc);
}

static void check_cgroups_user(struct doctor *d, struct doctor_layer *l, bool asks, bool mem,
			       const char *desc)
{
	l->available = true;
	snprintf(l->detail, sizeof(l->detail), "%s",
		 mem ? "not needed (not root); delegated: memory" : "not needed (not root)");
	set_use(l, asks && mem && d->p->limits.memory_mb != POLICY_LIMIT_UNSET,
		!asks ? "not used (no limits)"
		: mem ? "memory in the delegated cgroup; processes by RLIMIT_NPROC"
		      : "not used (RLIMIT_NPROC, RLIMIT_DATA hold)");
	note_memory(d, mem, desc);
}

static void check_cgroups(struct doctor *d)
{
	struct doctor_layer *l =
	    layer(d, "cgroups", "cgroups (root)",
		  "cap processes and memory of the whole sandbox; CPU time stays per process "
		  "(RLIMIT_CPU), disk I/O and network bandwidth are not limited");
	const struct policy_limits *pl = &d->p->limits;
	bool asks = d->plan.limit_values.processes > 0 || d->plan.limit_values.memory_bytes > 0;
	char desc[LINUX_CGROUP_PATH + 64];
	bool mem = linux_cgroup_memory_probe(desc, sizeof(desc));
	struct statfs fs;
	bool pids;

	if (geteuid() != 0) {
		check_cgroups_user(d, l, asks, mem, desc);
		return;
	}
	if (statfs("/sys/fs/cgroup", &fs) == 0 && (unsigned long)fs.f_type == CGROUP2_SUPER_MAGIC) {
		pids =
		    controller_listed("pids") && cgroup_writable("/sys/fs/cgroup", "cgroup.procs");
		mem = mem && pids;
	} else {
		pids = cgroup_writable("/sys/fs/cgroup/pids", "pids.max");
	}
	l->available = pids;
	snprintf(l->detail, sizeof(l->detail), "%s",
		 pids && mem ? "pids, memory"
		 : pids	     ? "pids (no memory)"
			     : "unavailable (no pids)");
	set_use(l, asks, asks ? "used (processes/memory for root)" : "not used (no limits)");
	if (pl->processes != POLICY_LIMIT_UNSET && !pids)
		doctor_add(
		    d, true, NULL,
		    "mount the pids controller (cgroup v1 /sys/fs/cgroup/pids or v2 with "
		    "pids enabled), or run halo-run as a non-root user",
		    "limits.processes cannot be enforced for root without the pids cgroup "
		    "controller (RLIMIT_NPROC does not apply to uid 0): the launch is refused");
	note_memory(d, mem, desc);
}

void doctor_layers(struct doctor *d)
{
	bool off = !d->plan.sandboxed;
	int userns_err = check_namespaces(d, off);

	check_seccomp(d, off);
	check_landlock(d, off);
	check_nnp(d, off);
	check_proxy(d, off, userns_err);
	check_capture(d, off, userns_err);
	check_cgroups(d);
	if (off)
		doctor_add(d, true, NULL, "set sandbox.mode: workspace-write (or read-only)",
			   "sandbox.mode is off: commands run unsandboxed (limits, a clean "
			   "environment and supervision only)");
}
