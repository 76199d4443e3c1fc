/* A session's spawner: init's one child when the sandbox is a session. It holds
 * every layer init built (mounts, Landlock, no capabilities, no_new_privs, the deny
 * table, the creation broker's filter) and is not dumpable (inherited from init), so
 * the sandboxed processes can neither trace it nor reach its channel. For each call
 * the supervisor sends (`run` with the call's stdin, stdout and stderr), it forks a
 * child that takes those three descriptors, becomes a process group of its own (the
 * call's wall-clock kill ends its group), and goes through the same recipe as a
 * fresh launch's command (launch_exec_or_die: rlimits, closed descriptors, the
 * environment, exec). What becomes of it goes back as `exit` or `failed`.
 *
 * Background processes outlive their call: when a call's command exits, its children
 * are reparented to init, which reaps them and keeps them in the session. When the
 * spawner ends (its channel closed: the supervisor is gone), init ends, and with it
 * every process of the sandbox. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/launch_int.h"
#include "linux/session_proto.h"

struct call {
	long long id;
	pid_t pid;
	bool failed;
	struct linux_report r;
};

struct spawner {
	const struct linux_launch *l;
	struct session_conn c;
	struct call *calls;
	size_t n, cap;
	struct session_buf out;
};

static void __attribute__((noreturn)) leave(void)
{
	/* Init follows: leaving pid 1's one child ends the sandbox. */
	_exit(0);
}

static void send_or_leave(struct spawner *s)
{
	if (session_buf_end(&s->out) < 0 || session_send(s->c.fd, &s->out, NULL, 0, 10000) < 0)
		leave();
}

static struct call *find(struct spawner *s, long long id, pid_t pid)
{
	for (size_t i = 0; i < s->n; i++)
		if ((id && s->calls[i].id == id) || (pid && s->calls[i].pid == pid))
			return &s->calls[i];
	return NULL;
}

/* The call's child: its stdio, its own process group, then the launch recipe. */
struct child_arg {
	struct spawner *s;
	const struct session_msg *m;
	const int *fds;
	int rfd;
};

static int child(void *arg)
{
	const struct child_arg *a = arg;
	struct launch_exec x = {a->m->arg, a->m->env, &a->s->l->limits};

	for (int i = 0; i < SESSION_MAX_FDS; i++)
		if (dup2(a->fds[i], i) < 0)
			linux_die(a->rfd, "session", errno, "take the call's descriptor %d", i);
	if (setpgid(0, 0) < 0)
		linux_die(a->rfd, "session", errno, "setpgid");
	launch_exec_or_die(&x, a->rfd);
	return 127; /* not reached */
}

/* The child shares the spawner's memory until its exec (launch_spawn_shared): what
 * the recipe changes is the child's alone. */
static pid_t spawn(struct spawner *s, const struct session_msg *m, const int *fds, int rfd)
{
	struct child_arg a = {s, m, fds, rfd};

	return launch_spawn_shared(child, &a);
}

/* Fork the call; wait for its exec (the report pipe closes) or its report. */
static void run(struct spawner *s, const struct session_msg *m, int fds[SESSION_MAX_FDS])
{
	struct call c = {.id = m->id};
	int rp[2];
	ssize_t n;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct call *g = realloc(s->calls, cap * sizeof(*g));
		if (!g)
			leave();
		s->calls = g;
		s->cap = cap;
	}
	if (pipe2(rp, O_CLOEXEC) < 0)
		leave();
	c.pid = spawn(s, m, fds, rp[1]);
	close(rp[1]);
	if (c.pid < 0) {
		c.failed = true;
		c.r.kind = LINUX_REPORT_SETUP;
		c.r.err = errno;
		snprintf(c.r.step, sizeof(c.r.step), "session");
		snprintf(c.r.msg, sizeof(c.r.msg), "fork the call");
	} else {
		while ((n = read(rp[0], &c.r, sizeof(c.r))) < 0 && errno == EINTR)
			;
		c.failed = n == (ssize_t)sizeof(c.r);
	}
	close(rp[0]);
	s->calls[s->n++] = c;
	if (c.pid < 0) { /* nothing to reap: say so now */
		session_buf_begin(&s->out, SESSION_FAILED);
		session_buf_put_int(&s->out, SESSION_K_ID, c.id);
		session_buf_put(&s->out, SESSION_K_KIND, "setup");
		session_buf_put_int(&s->out, SESSION_K_ERR, c.r.err);
		session_buf_put(&s->out, SESSION_K_MSG, c.r.msg);
		send_or_leave(s);
		s->n--;
	}
}

static void ended(struct spawner *s, pid_t pid, int ws)
{
	struct call *c = find(s, 0, pid);

	if (!c)
		return;
	if (c->failed) {
		session_buf_begin(&s->out, SESSION_FAILED);
		session_buf_put_int(&s->out, SESSION_K_ID, c->id);
		session_buf_put(&s->out, SESSION_K_KIND,
				c->r.kind == LINUX_REPORT_EXEC ? "exec" : "setup");
		session_buf_put_int(&s->out, SESSION_K_ERR,
				    c->r.err >= 0 && c->r.err < 4096 ? c->r.err : 0);
		c->r.msg[sizeof(c->r.msg) - 1] = '\0';
		session_buf_put(&s->out, SESSION_K_MSG, c->r.msg);
	} else {
		session_buf_begin(&s->out, SESSION_EXIT);
		session_buf_put_int(&s->out, SESSION_K_ID, c->id);
		session_buf_put_int(&s->out, SESSION_K_STATUS, ws & 0xffff);
	}
	*c = s->calls[--s->n];
	send_or_leave(s);
}

static void handle(struct spawner *s, const struct session_msg *m)
{
	int fds[SESSION_MAX_FDS];
	size_t nf = session_conn_take_fds(&s->c, fds);
	struct call *c = m->id ? find(s, m->id, 0) : NULL;

	if (m->verb == SESSION_RUN && m->id && nf == SESSION_MAX_FDS && !c)
		run(s, m, fds);
	else if (m->verb == SESSION_SIGNAL && c && c->pid > 0)
		kill(c->pid, (int)m->sig);
	else if (m->verb == SESSION_KILL && c && c->pid > 0) {
		kill(-c->pid, SIGKILL);
		kill(c->pid, SIGKILL);
	}
	for (size_t i = 0; i < nf; i++)
		close(fds[i]);
}

static void read_channel(struct spawner *s)
{
	struct session_msg m;
	char why[128];
	int rc;

	if (session_conn_read(&s->c) < 0)
		leave();
	while ((rc = session_conn_next(&s->c, &m, why, sizeof(why))) > 0) {
		handle(s, &m);
		session_msg_free(&m);
	}
	if (rc < 0)
		leave();
}

void linux_session_spawner_main(const struct linux_launch *l, int chan)
{
	struct spawner s = {.l = l};
	struct pollfd pf[2];
	sigset_t set;
	int sfd;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if ((sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
		leave();
	session_conn_init(&s.c, chan);
	session_buf_begin(&s.out, SESSION_OK); /* ready: every layer is in place */
	send_or_leave(&s);
	pf[0] = (struct pollfd){chan, POLLIN, 0};
	pf[1] = (struct pollfd){sfd, POLLIN, 0};
	for (;;) {
		struct signalfd_siginfo si;
		int ws;
		pid_t p;

		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			leave();
		if (pf[0].revents)
			read_channel(&s);
		while (read(sfd, &si, sizeof(si)) == sizeof(si))
			;
		while ((p = waitpid(-1, &ws, WNOHANG)) > 0)
			ended(&s, p, ws);
	}
}
