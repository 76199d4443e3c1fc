/* One call into a session (see session.c): join it, or start it first (the daemon
 * that keeps the sandbox: session_join.c), then run the command there with this call's stdio, pass
 * on its signals, hold its wall-clock limit, and exit as its command did. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session/session_int.h"

/* The hello's answer waits for the supervisor's walk for protected files, which in a
 * large tree without its index takes what a session's first walk does. */
#define HELLO_MS 120000
#define KILL_MS	 5000

static const int forwarded[] = {HALO_FORWARDED_SIGNALS};

/* Hello, sent without waiting for its answer: the run follows it at once (one round
 * trip less per call), and the supervisor reads the run only after a hello it took
 * (session_sup.c: a refused hello drops the connection and what came with it). */
static int hello_send(int fd, const struct runner_session_id *id)
{
	struct session_buf b = {0};

	session_buf_begin(&b, SESSION_HELLO);
	session_buf_put(&b, SESSION_K_V, SESSION_PROTO_VERSION);
	session_buf_put(&b, SESSION_K_NAME, id->name);
	session_buf_put(&b, SESSION_K_POLICY, id->policy);
	session_buf_put(&b, SESSION_K_OPTIONS, id->options);
	session_buf_put(&b, SESSION_K_WORKSPACE, id->workspace);
	return runner_session_send(fd, &b, NULL, 0);
}

/* The hello's answer, always read first: a refusal is what a call is told, even when
 * the run it sent along met a closed connection. */
static int hello_answer(struct session_conn *c, const struct runner_session_id *id, int sent,
			bool may_retry)
{
	struct session_msg m;
	int rc = runner_session_recv(c, &m, HELLO_MS);

	if (rc < 0 && may_retry && rc != -ETIMEDOUT)
		return -2; /* closed unanswered: the caller connects again */
	if (rc == -ETIMEDOUT) {
		fprintf(stderr,
			"halo-run: session %s: no answer within %d s: its walk for protected "
			"files takes that long (a very large tree without its index), or its "
			"supervisor hangs (halo-run session stop %s)\n",
			id->name, HELLO_MS / 1000, id->name);
		return -1;
	}
	if (rc < 0) {
		fprintf(stderr,
			"halo-run: session %s: no answer: %s (the session ended meanwhile, has "
			"too many callers waiting, or was started by another halo-run version, "
			"which drops a call it cannot read: halo-run session stop %s, then "
			"call again)\n",
			id->name, strerror(-(sent < 0 ? sent : rc)), id->name);
		return -1;
	}
	rc = m.verb == SESSION_OK ? 0 : -1;
	/* Said as it is: stopping the session changes nothing for these. */
	if (m.verb == SESSION_REFUSED &&
	    (strstr(m.why, SESSION_ENDS_WORDS) || strstr(m.why, SESSION_WALK_FAILED_WORDS)))
		fprintf(stderr, "halo-run: session %s: refused: %s\n", id->name, m.why);
	else if (m.verb == SESSION_REFUSED)
		fprintf(stderr,
			"halo-run: session %s: refused: %s; stop it (halo-run session stop %s) "
			"or use another name\n",
			id->name, m.why, id->name);
	else if (rc < 0)
		fprintf(stderr, "halo-run: session %s: unexpected answer '%s'\n", id->name,
			session_verb_name(m.verb));
	session_msg_free(&m);
	return rc;
}

/* The command line, the environment runner/env built, and this call's stdio (a
 * terminal among them replaced by the slave of the call's own pty: session_pty.c). */
static int send_run(int fd, const runner_launch *l, struct session_pty *pty)
{
	struct session_buf b = {0};
	int fds[3], slave, rc;

	for (int i = 0; i < 3; i++) /* open: /dev/null where the caller closed one (cli.c) */
		fds[i] = i;
	if ((rc = runner_pty_begin(pty, fds, &slave)) < 0) {
		fprintf(stderr,
			"halo-run: session: a pseudo-terminal for the call: %s (the session "
			"is never handed this terminal itself)\n",
			strerror(-rc));
		return -EPROTO;
	}
	session_buf_begin(&b, SESSION_RUN);
	if (l->limits.wall_seconds > 0) /* for the session's events: a limit record */
		session_buf_put_int(&b, SESSION_K_WALL, l->limits.wall_seconds);
	for (char *const *a = l->argv; *a; a++)
		session_buf_put(&b, SESSION_K_ARG, *a);
	for (char **e = l->envp; e && *e; e++)
		if (strchr(*e, '=') && **e != '=')
			session_buf_put(&b, SESSION_K_ENV, *e);
	rc = runner_session_send(fd, &b, fds, 3);
	if (slave >= 0)
		close(slave); /* the session's now; the master sees its holders go */
	return rc;
}

static int signals_fd(void)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&set, forwarded[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

static int send_simple(int fd, enum session_verb v, int sig)
{
	struct session_buf b = {0};

	session_buf_begin(&b, v);
	if (v == SESSION_SIGNAL)
		session_buf_put_int(&b, SESSION_K_SIG, sig);
	return runner_session_send(fd, &b, NULL, 0);
}

/* How the command ended, as halo-run's exit code (exit/exit.h). */
static int outcome(const struct runner_opts *o, const struct session_msg *m, bool timed_out,
		   long long wall)
{
	if (timed_out) {
		fprintf(stderr,
			"halo-run: wall-clock limit of %lld s reached; the call's command was "
			"killed\n",
			wall);
		return HALO_EXIT_TIMEOUT;
	}
	if (m->verb == SESSION_EXIT)
		return halo_exit_code(halo_outcome_wait((int)m->status));
	if (m->kind == SESSION_FAIL_EXEC) {
		runner_say("%s: %s", m->msg ? m->msg : "?",
			   m->err == ENOENT ? "command not found" : strerror((int)m->err));
		return halo_exit_code(halo_outcome_exec((int)m->err));
	}
	runner_say("session %s: the call could not start: %s%s%s", o->session, m->msg ? m->msg : "",
		   m->err ? ": " : "", m->err ? strerror((int)m->err) : "");
	return HALO_EXIT_SETUP;
}

static int wait_end(const struct runner_opts *o, const runner_launch *l, struct session_conn *c,
		    int sfd, struct session_pty *pty)
{
	long long wall = l->limits.wall_seconds;
	uint64_t deadline = wall > 0 ? proxy_now_ms() + (uint64_t)wall * 1000 : 0;
	int rc;
	bool killed = false;
	struct session_msg m;
	char why[128];

	for (;;) {
		struct pollfd p[4] = {{c->fd, POLLIN, 0}, {sfd, POLLIN, 0}};
		size_t np = sfd >= 0 ? 2 : 1, nt = runner_pty_poll(pty, p + np);
		uint64_t now = proxy_now_ms();
		int ms = deadline ? (now >= deadline ? 0 : (int)(deadline - now)) : -1;
		struct signalfd_siginfo si;

		if ((rc = session_conn_next(c, &m, why, sizeof(why))) > 0) {
			if (m.verb == SESSION_EXIT || m.verb == SESSION_FAILED)
				break;
			session_msg_free(&m);
			continue;
		}
		if (rc < 0)
			goto lost;
		if (poll(p, np + nt, ms) == 0) {
			if (killed)
				goto lost;
			send_simple(c->fd, SESSION_KILL, 0); /* its process group */
			killed = true;
			deadline = proxy_now_ms() + KILL_MS;
			continue;
		}
		while (sfd >= 0 && read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGWINCH) /* the slave's size first: read on WINCH */
				runner_pty_winch(pty);
			send_simple(c->fd, SESSION_SIGNAL, (int)si.ssi_signo);
		}
		int key_sig = runner_pty_pump(pty, p + np, nt);
		if (key_sig)
			send_simple(c->fd, SESSION_SIGNAL, key_sig);
		if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) && session_conn_read(c) < 0)
			goto lost;
	}
	rc = outcome(o, &m, killed, wall);
	session_msg_free(&m);
	return rc;
lost:
	if (killed)
		return outcome(o, &m, true, wall);
	fprintf(stderr,
		"halo-run: session %s ended during the call (stopped, or its sandbox died); the "
		"command was killed\n",
		o->session);
	return halo_exit_code(halo_outcome_of(HALO_OUTCOME_SIGNALED, SIGKILL));
}

int runner_session_refusal(const struct runner_opts *o, const runner_launch *l, bool say)
{
	if (!session_name_ok(o->session)) {
		if (say)
			fprintf(stderr,
				"halo-run: --session '%s': a name is 1 to %d of A-Z a-z 0-9 . _ - "
				"(not starting with . or -)\n",
				o->session, SESSION_NAME_MAX);
		return HALO_EXIT_SETUP;
	}
	if (o->summary_md || o->fail_on_deny) {
		if (say)
			fprintf(stderr,
				"halo-run: --summary-md and --fail-on-deny report on one run; "
				"they are not available with --session\n");
		return HALO_EXIT_SETUP;
	}
	if (o->events && strncmp(o->events, "fd:", 3) == 0) {
		if (say)
			fprintf(stderr,
				"halo-run: --events %s: a descriptor is this call's; the session "
				"outlives it and its supervisor holds the events for every call: "
				"use --events FILE with --session\n",
				o->events);
		return HALO_EXIT_SETUP;
	}
	if (l->unsandboxed) {
		if (say)
			fprintf(stderr,
				"halo-run: --session needs the sandbox (sandbox.mode is off)\n");
		return HALO_EXIT_SETUP;
	}
	return 0;
}

#define RETRY (-2)

/* Hello, run and wait on fd: the command's exit code, HALO_EXIT_SETUP (said), or
 * RETRY when may_retry and the session closed the connection before any answer. */
static int one_call(const struct runner_opts *o, const runner_launch *l,
		    const struct runner_session_id *id, int fd, bool may_retry)
{
	struct session_conn c;
	struct session_pty pty = {.master = -1, .in = -1, .out = -1, .term = -1};
	int sfd = -1, rc = HALO_EXIT_SETUP, answer;

	session_conn_init(&c, fd);
	/* Signals are held from before the command starts: none is lost. */
	int sent = hello_send(fd, id), err = -EPROTO;
	if (sent == 0) {
		sfd = signals_fd();
		err = send_run(fd, l, &pty);
	}
	if ((answer = hello_answer(&c, id, sent, may_retry)) == -2)
		rc = RETRY;
	else if (answer < 0)
		; /* said */
	else if (err == 0)
		rc = wait_end(o, l, &c, sfd, &pty);
	else if (err == -EPROTO)
		; /* said */
	else if (err == -E2BIG)
		fprintf(stderr,
			"halo-run: session %s: the command line and environment are over the "
			"session protocol's %u bytes; run it without --session\n",
			o->session, SESSION_FRAME_MAX);
	else
		fprintf(stderr, "halo-run: session %s: sending the call: %s\n", o->session,
			strerror(-err));
	runner_pty_end(&pty); /* every way out: the terminal as it was */
	if (sfd >= 0)
		close(sfd);
	session_conn_release(&c);
	return rc;
}

static int call(const struct runner_opts *o, const runner_launch *l)
{
	struct runner_session_id id;
	struct halo_err e = {{0}};
	char dir[4200];
	int fd, rc = HALO_EXIT_SETUP;

	if (runner_session_refusal(o, l, true) != 0)
		return HALO_EXIT_SETUP;
	/* runner/run.c made and checked it already (l->session_dir); else say why not. */
	if (l->session_dir && strlen(l->session_dir) < sizeof(dir))
		strcpy(dir, l->session_dir);
	else if (runner_session_place(dir, sizeof(dir), &e) < 0) {
		runner_say("session: %s", e.msg);
		return HALO_EXIT_SETUP;
	}
	if (runner_session_identity(o->session, o, l, &id) < 0) {
		fprintf(stderr, "halo-run: session: out of memory\n");
		return HALO_EXIT_SETUP;
	}
	/* A connection made first thing (runner_session_early) that the session closes
	 * unanswered (it ended meanwhile: stopped, idle, or a protected file appeared)
	 * is tried once more the ordinary way, which starts a session when none runs.
	 * Nothing ran: a run is read only after a hello that passed. */
	for (int attempt = 0; attempt < 2 && rc == HALO_EXIT_SETUP; attempt++) {
		bool early = false;
		if ((fd = runner_session_join(o, l, &id, dir, &early)) < 0)
			break;
		if ((rc = one_call(o, l, &id, fd, early)) != RETRY)
			break;
		rc = HALO_EXIT_SETUP;
	}
	free(id.options);
	linux_session_protected_free(id.prot, id.n_prot);
	return rc;
}

int runner_session_run(const struct runner_opts *o, const runner_launch *l)
{
	int rc = call(o, l);

	runner_session_early_drop();
	return rc;
}
