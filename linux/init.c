/* pid 1 of the sandbox. The whole isolation recipe reads top to bottom in
 * linux_init_main; every step either succeeds or stops the launch (HALO_EXIT_SETUP through
 * the report pipe): the command never starts on a partial sandbox. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/broker_int.h"
#include "linux/launch_int.h"
#include "netns/netns.h"

extern char **environ;

/* The creation broker's socket to the command's process (-1: none, as on the
 * degraded path, which has no mounts to guard with). */
static int broker_sock = -1;
static int broker_child_sock = -1;
/* Set before a shared spawn: the child then hands its listener over without waiting
 * for a worker's word (broker_take_over_or_die). */
static bool broker_shared;

struct spawn_arg {
	const struct linux_launch *l;
	int rfd;
};

/* The signals init's caller ignored (reset_signals). */
static uint64_t caller_ignored = UINT64_MAX;

static void write_file_or_die(int rfd, const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t len = (ssize_t)strlen(text);

	if (fd < 0)
		linux_die(rfd, "user namespace", errno, "open %s", path);
	if (write(fd, text, len) != len) {
		int err = errno;
		close(fd);
		linux_die(rfd, "user namespace", err, "write %s", path);
	}
	close(fd);
}

/* The caller keeps its own uid and gid inside: nobody inside is more than the caller
 * is outside, and a root caller's uid 0 holds no capability once they are dropped. */
static void map_ids_or_die(const struct launch_ids *ids, int rfd)
{
	char line[64];

	/* setgroups must be denied before an unprivileged gid_map; it also stops the
	 * command from dropping a supplementary group used as a negative permission. */
	write_file_or_die(rfd, "/proc/self/setgroups", "deny");
	snprintf(line, sizeof(line), "%u %u 1\n", ids->uid, ids->uid);
	write_file_or_die(rfd, "/proc/self/uid_map", line);
	snprintf(line, sizeof(line), "%u %u 1\n", ids->gid, ids->gid);
	write_file_or_die(rfd, "/proc/self/gid_map", line);
}

static void wait_for_go_or_die(struct launch_fds *f)
{
	char c;

	/* EOF means the supervisor died before we started: nothing to run for. */
	if (read(f->go_r, &c, 1) != 1)
		_exit(LINUX_SETUP_FAILED);
	close(f->go_r);
}

static void loopback_up_or_die(int rfd)
{
	int rc = netns_loopback_up();

	if (rc < 0)
		linux_die(rfd, "network namespace", -rc, "bring up the loopback interface");
}

/* The proxy's listeners are made here, inside the sandbox's network namespace, and
 * handed to the supervisor: the command sees a proxy on its own loopback and no
 * other way out. */
_Static_assert(NETNS_MAX_HOST_PORTS == POLICY_MAX_HOST_PORTS, "one bound on egress.hostPorts");
_Static_assert(NETNS_HTTP_PORT == POLICY_PROXY_HTTP_PORT &&
		   NETNS_SOCKS_PORT == POLICY_PROXY_SOCKS_PORT &&
		   NETNS_CAPTURE_PORT == POLICY_PROXY_CAPTURE_PORT,
	       "the environment names, and validation reserves, the ports netns/ listens on");

static void hand_over_listeners_or_die(const struct linux_launch *l, struct launch_fds *f, int rfd)
{
	struct netns_listener ls[NETNS_MAX_LISTENERS];
	const struct policy_ports *hp = &l->policy->host_ports;
	size_t n = 0;
	int rc = netns_listen_all(hp->items, hp->n, ls, &n);

	if (rc < 0)
		linux_die(rfd, "network namespace", -rc,
			  hp->n ? "listen on the proxy ports and egress.hostPorts"
				: "listen on the proxy ports");
	/* Capture is a convenience for proxy-unaware clients, not a barrier (there is no
	 * route out either way): a kernel without nf_tables in user namespaces runs
	 * without it, and the supervisor, seeing no capture listener, says so. */
	rc = netns_listen_capture(netns_capture_setup() == 0, ls, &n);
	if (rc < 0)
		linux_die(rfd, "network namespace", -rc,
			  "listen on " NETNS_DNS_ADDR
			  ":53 (halo-run's DNS stub) and the capture port");
	/* A session's supervisor tells the sockets its own commands bind in the workspace
	 * from a host service's by this namespace's socket table (netns/unix_diag.c).
	 * Without it those are refused as a host's are: nothing is loosened. */
	if (l->session && (rc = netns_diag_open()) >= 0)
		ls[n++] = (struct netns_listener){rc, NETNS_LISTEN_DIAG, 0, 0};
	rc = netns_send_listeners(f->lsock_w, ls, n);
	int fds[sizeof(ls) / sizeof(ls[0])];
	for (size_t i = 0; i < n; i++)
		fds[i] = ls[i].fd;
	linux_fds_close(fds, n); /* opened one after the other: a call or two for all */
	if (rc < 0)
		linux_die(rfd, "network namespace", -rc, "pass the proxy listeners to halo-run");
	/* The run's CA comes back the same way: made only now, in the supervisor alone. */
	if (l->ca_make)
		linux_ca_receive_or_die(f->lsock_w, rfd);
	close(f->lsock_w);
}

/* pid 1 drops a signal whose disposition is the default, unless it is blocked: a
 * blocked signal is always queued (kernel/signal.c, sig_ignored), and the signalfd
 * takes it from there. No handler is needed (what the caller ignored is undone in
 * the command, reset_signals). */
static int init_signals_or_die(int rfd)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (size_t i = 0; i < launch_n_forwarded_signals; i++)
		sigaddset(&set, launch_forwarded_signals[i]);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		linux_die(rfd, "signals", errno, "sigprocmask");
	fd = signalfd(-1, &set, SFD_CLOEXEC);
	if (fd < 0)
		linux_die(rfd, "signals", errno, "signalfd");
	return fd;
}

/* The command is done: everything else in the namespace is killed and reaped now,
 * before the status goes out (leaving pid 1 would kill it too, but only once the
 * namespaces are torn down), and the status pipe is closed once the notes are in.
 * Once the status is out, no process the command started is left: only this one,
 * exiting. The supervisor then need not wait for the teardown of the mounts and
 * namespaces (half a millisecond or more, in the kernel, with nothing of the
 * command's to run); it exits and whoever inherits init reaps it (linux_reap). */
static void report_status_and_exit(struct launch_fds *f, int wstatus, const struct linux_broker *b)
{
	ssize_t n;

	/* pid 1 itself is spared; ESRCH when nothing is left. Every process of the
	 * namespace is init's child by now or becomes one as its parent dies (its own
	 * subreapers die too): waiting until there are none leaves none running. */
	if (kill(-1, SIGKILL) == 0)
		while (waitpid(-1, NULL, __WALL) >= 0 || errno == EINTR)
			;
	/* ... nor a broker worker still making a name for one of them. */
	linux_broker_wait_done(2);
	n = write(f->status_w, &wstatus, sizeof(wstatus));
	(void)n;
	linux_broker_send_notes(b, f->status_w);
	close(f->status_w);
	/* The supervisor, woken by the status, may be queued on this CPU: it would wait
	 * for the namespaces' teardown below, which it need not (0.06 ms a launch). */
	sched_yield();
	/* Leaving pid 1 kills everything else in the namespace: nothing outlives it. */
	_exit(0);
}

/* Reap every child; forward signals to the command; exit when the command does (its
 * threads, the broker's, end with it). A session's spawner (spawner: cmd is it) shares
 * its uid and Landlock domain with every call, so a call can stop it (kill -STOP 2):
 * the --timeout kills and the calls' ends it carries would wait for ever, and with
 * them the session's idle end. A stopped spawner ends the session (its death ends
 * init, and the pid namespace with every call). */
static void __attribute__((noreturn))
init_loop(pid_t cmd, bool spawner, int sfd, struct launch_fds *f, struct linux_broker *b)
{
	for (;;) {
		struct signalfd_siginfo si;
		ssize_t n = read(sfd, &si, sizeof(si));
		int ws;
		pid_t p;

		if (n != sizeof(si)) {
			if (n < 0 && errno == EINTR)
				continue;
			_exit(LINUX_SETUP_FAILED);
		}
		if (si.ssi_signo != SIGCHLD) {
			/* A terminal's signals (SI_KERNEL) already reach the command, which
			 * shares the foreground process group: forward only sent ones. */
			if (si.ssi_code != SI_KERNEL)
				kill(cmd, (int)si.ssi_signo);
			continue;
		}
		while ((p = waitpid(-1, &ws, WNOHANG | (spawner ? WUNTRACED : 0))) > 0) {
			if (WIFSTOPPED(ws)) { /* only asked for with a spawner */
				if (p == cmd)
					kill(cmd, SIGKILL);
				continue;
			}
			if (p == cmd)
				report_status_and_exit(f, ws, b);
			linux_broker_reaped(p);
		}
	}
}

/* No thread could start with the command: init takes the listener itself (the command
 * sends it before it waits), starts the workers, and only then gives the word, so the
 * command still goes on with its worker counted. Without workers (or a word that
 * cannot be given) the socket is closed unanswered: the command reads EOF and stops
 * before it runs, naming why (linux_broker_install_or_die), rather than run with
 * every trapped call failing. */
static void broker_answer_alone(struct linux_broker *b)
{
	int take = dup(broker_sock);

	if (take < 0 || !linux_broker_receive(b, take))
		b->listener = -1; /* the command ended first; it says why */
	if (b->listener >= 0 && linux_broker_start(b) < 0) {
		close(b->listener);
		b->listener = -1;
	}
	if (b->listener >= 0)
		(void)linux_broker_ack(broker_sock);
	close(broker_sock);
	broker_sock = -1;
}

static void broker_socket_or_die(int rfd)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		linux_die(rfd, "persistence guard", errno, "socketpair for the creation broker");
	broker_sock = sv[0];
	broker_child_sock = sv[1];
}

/* Init keeps nothing the supervisor held at the clone but its own ends of the launch's
 * pipes and the walk's socket: not the caller's descriptors beyond 0-2 (a lock file's,
 * a make jobserver's, a harness's status pipe), nor the supervisor's own (its audit
 * and events files). halo-run does not wait for init's exit: any of them held here
 * would outlive halo-run by the teardown's milliseconds (a `flock` after it found the
 * lock still taken). */
static void close_inherited(const struct launch_fds *f, const struct linux_scan *s)
{
	int mine[] = {f->report_w,
		      f->status_w,
		      f->go_r,
		      f->lsock_w,
		      f->sess_w,
		      s->late ? s->late_fd[0] : -1,
		      s->late ? s->late_fd[1] : -1};

	linux_fds_close_all_but(mine, sizeof(mine) / sizeof(mine[0]));
}

/* Init's copies of the caller's stdin, stdout and stderr go once the command has its
 * own: a caller that reads the output to its end (`$(halo-run ...)`, a harness's pipe)
 * gets that end with the command's last process, not with init's teardown, which the
 * supervisor does not wait for either. /dev/null keeps the three numbers taken. */
static void release_stdio(void)
{
	syscall(SYS_close_range, 0U, 2U, 0U);
	if (open("/dev/null", O_RDWR) == 0) /* the lowest free: 0, then 1 and 2 */
		for (int i = 1; i < 3; i++)
			(void)dup(0);
}

static int command_main(void *arg)
{
	const struct spawn_arg *a = arg;

	launch_exec_command_or_die(a->l, a->l->envp, a->rfd);
	return 0; /* not reached: exec or _exit */
}

/* Without a process limit the command's process can share init's memory until its
 * exec (CLONE_VM | CLONE_VFORK, as posix_spawn does, on a stack of its own): init's
 * page tables are neither copied at the fork nor torn down at the exec, a few hundred
 * microseconds a launch. Init waits meanwhile, so nothing runs on its memory but the
 * child, which writes none of init's state but environ (init no longer reads it).
 * The child cannot wait for a broker worker then (init starts it once the child has
 * gone): with a pids cgroup the command could take the worker's place in the budget
 * meanwhile, so a process limit keeps the fork and the worker's word first. A session
 * keeps the fork: its spawner stays. */
static bool shared_spawn(const struct linux_launch *l)
{
	return !l->session && l->limits.processes == RLIMITS_UNSET;
}

/* After a shared spawn: the listener the command sent before its exec is in the
 * socket; workers answer it from now on. None could start: the command's trapped
 * calls were never answered, and the launch stops as it would have before the exec. */
static void broker_take_over_or_die(struct linux_broker *b, pid_t cmd, int rfd)
{
	bool got;

	if (broker_sock < 0)
		return;
	got = linux_broker_receive(b, broker_sock); /* closes it */
	broker_sock = -1;
	if (!got || linux_broker_start(b) == 0)
		return; /* or the command ended before handing it over: it says why */
	kill(cmd, SIGKILL);
	linux_die(rfd, "persistence guard", EAGAIN, "start the creation broker's worker");
}

static pid_t spawn_shared_or_die(const struct linux_launch *l, struct linux_broker *b, int rfd)
{
	struct spawn_arg a = {l, rfd};
	pid_t pid;

	broker_shared = true;
	if ((pid = launch_spawn_shared(command_main, &a)) < 0)
		linux_die(rfd, "spawn", errno, "start the command");
	if (broker_child_sock >= 0) {
		close(broker_child_sock);
		broker_child_sock = -1;
	}
	broker_take_over_or_die(b, pid, rfd);
	return pid;
}

/* The command (or a session's spawner) forked, and the broker's first worker at once,
 * before the command's process goes on past handing its listener over (it waits for
 * the worker's word): counted in the pids budget before any process of the command's
 * own, however late init runs again. Without the thread, init answers alone
 * (broker_answer_alone). */
static pid_t spawn_forked_or_die(const struct linux_launch *l, struct launch_fds *f,
				 struct linux_broker *b, int rfd)
{
	pid_t pid = l->session ? launch_spawn_session_or_die(l, f->sess_w, rfd)
			       : launch_spawn_command_or_die(l, rfd);

	if (broker_sock >= 0 && linux_broker_start_before(b, broker_sock) == 0)
		broker_sock = -1; /* the worker's now */
	else if (broker_sock >= 0)
		broker_answer_alone(b);
	return pid;
}

void linux_init_main(const struct linux_launch *l, const struct linux_scan *s,
		     const struct launch_ids *ids, struct launch_fds *f)
{
	struct linux_broker broker = {.listener = -1, .receive_from = -1};
	bool have_broker;
	int rfd = f->report_w;
	int sfd;
	pid_t cmd;

	if (l->child_scrub)
		l->child_scrub();
	close_inherited(f, s); /* the supervisor's ends of the pipes with the rest */
	/* If the supervisor dies, so does the sandbox (and, as pid 1, all of it). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		linux_die(rfd, "supervision", errno, "PR_SET_PDEATHSIG");
	wait_for_go_or_die(f);		/* placed in the cgroups first */
	launch_cpus_restore();		/* the caller's CPUs, for the command */
	map_ids_or_die(ids, rfd);	/* user: caller's ids only */
	if (sethostname("halo", 4) < 0) /* uts: the host's name stays outside */
		linux_die(rfd, "uts namespace", errno, "sethostname");
	loopback_up_or_die(rfd); /* net: loopback only, no route out */
	if (l->egress_proxy)	 /* ... and halo-run's proxy on it */
		hand_over_listeners_or_die(l, f, rfd);
	else
		close(f->lsock_w);
	netns_setup_done();
	s = linux_mounts_setup_or_die(l, s, rfd); /* mount: ro root, masks, pivot_root */
	/* Guard targets missing at launch: their creation refused; git directories' hooks
	 * and config held, whenever made (broker_int.h, broker_git.c). */
	have_broker = linux_broker_pins_or_die(&broker, s, linux_broker_guard_git(l),
					       l->policy->fail_if_unavailable != 0, rfd);
	linux_broker_home_scope(&broker, s); /* the home set's directories only */
	/* The supervisor set the pids budget for the broker it expected from the same
	 * lists (launch.c): only Yama's setting, read there and here, can differ. */
	if (have_broker != s->broker)
		linux_die(rfd, "persistence guard", EAGAIN,
			  "kernel.yama.ptrace_scope changed during the launch (the process limit "
			  "was set %s a creation broker); run the command again",
			  s->broker ? "with" : "without");
	if (have_broker)
		broker_socket_or_die(rfd);
	broker.learn = l->learn; /* halo-run learn: refused writes noted (broker_learn.c) */
	/* Not dumpable: the command can neither ptrace init nor open /proc/1/mem. */
	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		linux_die(rfd, "init", errno, "PR_SET_DUMPABLE");
	sfd = init_signals_or_die(rfd);
	linux_landlock_apply_or_die(s, true, NULL, rfd); /* second layer on writes */
	linux_caps_drop_or_die(rfd, &caller_ignored);	 /* no capability, no_new_privs */
	linux_seccomp_apply_or_die(rfd);		 /* deny table, last */
	cmd = shared_spawn(l) ? spawn_shared_or_die(l, &broker, rfd)
			      : spawn_forked_or_die(l, f, &broker, rfd);
	if (l->session) /* each call a child of it: the host's files judged by call */
		linux_broker_set_spawner(cmd);
	release_stdio();
	close(rfd);
	init_loop(cmd, l->session, sfd, f, &broker);
}

static void report_exec_failure(int rfd, int err, const char *cmd) __attribute__((noreturn));
static void report_exec_failure(int rfd, int err, const char *cmd)
{
	struct linux_report r;
	ssize_t n;

	memset(&r, 0, sizeof(r));
	r.kind = LINUX_REPORT_EXEC;
	r.err = err;
	snprintf(r.step, sizeof(r.step), "exec");
	snprintf(r.msg, sizeof(r.msg), "%s", cmd);
	n = write(rfd, &r, sizeof(r));
	(void)n;
	_exit(halo_exit_code(halo_outcome_exec(err)));
}

/* Init's blocked signals are not the command's, nor what its caller ignored: a
 * shell's `cmd &` without job control ignores INT and QUIT, nohup HUP, and an ignored
 * disposition survives fork and exec (init itself takes them all, blocked, from its
 * signalfd, and installs no handler, which exec would undo anyway). So only those of
 * them that are ignored are set back: /proc/self/status, read back by the capability
 * step, says which (caller_ignored; every one of them when it could not say, as in
 * the launch without namespaces): no call at all in the common case, where eight
 * were. */
static void reset_signals(void)
{
	sigset_t none;

	sigemptyset(&none);
	for (size_t i = 0; i <= launch_n_forwarded_signals; i++) {
		int sig = i < launch_n_forwarded_signals ? launch_forwarded_signals[i] : SIGCHLD;
		if (caller_ignored & (1ULL << (sig - 1)))
			signal(sig, SIG_DFL);
	}
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Init's one child: the command (body NULL) or a session's spawner. The creation
 * broker's listener is handed back from it either way: a spawner installs the filter
 * once, and every call it forks inherits it. */
static pid_t spawn_or_die(const struct linux_launch *l, int chan, int rfd)
{
	pid_t pid = fork();

	if (pid < 0)
		linux_die(rfd, "spawn", errno, "fork the command");
	if (pid == 0) {
		if (broker_child_sock >= 0) {
			close(broker_sock);
			broker_sock = -1;
		}
		if (chan < 0)
			launch_exec_command_or_die(l, l->envp, rfd);
		reset_signals();
		if (broker_child_sock >= 0)
			linux_broker_install_or_die(broker_child_sock, true, rfd);
		broker_child_sock = -1;
		close(rfd);
		linux_session_spawner_main(l, chan);
	}
	if (chan >= 0)
		close(chan);
	if (broker_child_sock >= 0) {
		close(broker_child_sock);
		broker_child_sock = -1;
	}
	return pid;
}

pid_t launch_spawn_command_or_die(const struct linux_launch *l, int rfd)
{
	return spawn_or_die(l, -1, rfd);
}

pid_t launch_spawn_session_or_die(const struct linux_launch *l, int chan, int rfd)
{
	return spawn_or_die(l, chan, rfd);
}

void launch_exec_command_or_die(const struct linux_launch *l, char **envp, int rfd)
{
	struct launch_exec x = {l->argv, envp ? envp : l->envp, &l->limits};

	launch_exec_or_die(&x, rfd);
}

void launch_exec_or_die(const struct launch_exec *x, int rfd)
{
	struct halo_err e = {{0}};

	reset_signals();
	if (rlimits_apply(x->limits, &e) < 0)
		linux_die(rfd, "limits", errno, "%s", e.msg);
	/* Last before exec: from here on each call that creates a name goes to init (a
	 * session's calls inherit the spawner's filter instead: the sock is gone). */
	if (broker_child_sock >= 0)
		linux_broker_install_or_die(broker_child_sock, !broker_shared, rfd);
	/* Nothing opened before launch is visible inside, except the report pipe, which
	 * is CLOEXEC and gone once exec succeeds. */
	linux_fds_close_all_but(&rfd, 1);
	/* execvp looks PATH up in environ, so the command's own PATH decides. */
	environ = x->envp;
	execvp(x->argv[0], x->argv);
	report_exec_failure(rfd, errno, x->argv[0]);
}
