/* A session's supervisor: the daemon the first call of `halo-run --session NAME`
 * forks (session.c). It is what a fresh launch's supervisor is (the sandbox's parent,
 * in the host's network namespace, the proxy on the sandbox's listeners, the audit),
 * plus the control socket: each call connects, says hello (refused unless what fixes
 * the sandbox is the same), sends its command line, environment and stdio, and is
 * told how its command ended. The commands themselves are forked inside the sandbox
 * by the spawner (linux/session_spawn.c), over the launcher's session channel.
 *
 * The proxy's lines (egress denied, egress error) go to the session's log and to the
 * stderr of every call running when they are written: the proxy cannot tell which
 * call opened a connection (they share the loopback), and a line to one call too many
 * beats a refusal without its reason.
 *
 * Only the same user may connect (SO_PEERCRED; the directory is 0700 too). It ends
 * when stopped (`session stop`, SIGTERM, its socket removed), when idle (no call
 * running for limits.sessionIdleSeconds: background processes do not count), or
 * when the sandbox's init ends; ending kills every process of the sandbox. It never
 * ends with a call: a call that goes away only kills its own command. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session/sup_int.h"

static void on_log(void *arg, int fd, unsigned events);

static void spawner_msg(struct sup *s, const struct session_msg *m)
{
	struct client *c;
	struct session_buf b = {0};

	if (m->verb == SESSION_OK) {
		/* Every layer in place: the mounts every call's walk is held to. */
		if (!s->n_mounts && linux_session_mounts(s->sb, &s->mounts, &s->n_mounts) < 0) {
			sup_ready_say(s, 'E', "session: its sandbox's mounts cannot be read");
			s->stop = true;
			return;
		}
		sup_ready_say(s, 'R', "ready");
		return;
	}
	if ((m->verb != SESSION_EXIT && m->verb != SESSION_FAILED) ||
	    !(c = sup_client_by_id(s, m->id)))
		return;
	/* A refusal logged just before the command ended is this call's to say, and so
	 * is a line already in the log pipe that the loop has not forwarded yet (the
	 * spawner's message can come first): both go out before the call is let go. */
	runner_explain_poll(&s->xp);
	if (s->log_r >= 0)
		on_log(s, s->log_r, 0);
	runner_session_ev_exit(&s->ev, s->l, &c->ev, m, c->left);
	if (!c->gone) {
		session_buf_begin(&b, m->verb);
		if (m->verb == SESSION_EXIT)
			session_buf_put_int(&b, SESSION_K_STATUS, m->status);
		else {
			session_buf_put(&b, SESSION_K_KIND,
					m->kind == SESSION_FAIL_EXEC ? "exec" : "setup");
			session_buf_put_int(&b, SESSION_K_ERR, m->err);
			session_buf_put(&b, SESSION_K_MSG, m->msg ? m->msg : "");
		}
		sup_reply(c, &b);
	}
	c->state = C_JOINED;
	c->gone = true;
	s->running--;
	s->last_ms = proxy_now_ms();
	sup_client_drop(s, c);
}

static void on_chan(void *arg, int fd, unsigned events)
{
	struct sup *s = arg;
	struct session_msg m;
	char why[128];
	int rc;

	(void)fd;
	(void)events;
	rc = session_conn_read(&s->chan);
	while (rc >= 0 && (rc = session_conn_next(&s->chan, &m, why, sizeof(why))) > 0) {
		spawner_msg(s, &m);
		session_msg_free(&m);
	}
	if (rc < 0) { /* the spawner is gone or spoke nonsense: the session is over */
		s->why_end = s->why_end ? s->why_end : "sandbox ended";
		s->stop = true;
	}
}

/* A line that would block is dropped, never waited for: a call's descriptor does not
 * block (sup_calls.c err_writer: a socket is sent to without waiting, anything else
 * was opened O_NONBLOCK), and a pipe with room for PIPE_BUF takes a line of the
 * proxy's whole. */
static void to_stderr(int fd, const char *p, size_t n)
{
	struct pollfd pf = {fd, POLLOUT, 0};

	if (n > PIPE_BUF || send(fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0 || errno != ENOTSOCK)
		return;
	if (poll(&pf, 1, 0) == 1 && (pf.revents & POLLOUT)) {
		ssize_t w = write(fd, p, n);
		(void)w;
	}
}

static void on_log(void *arg, int fd, unsigned events)
{
	struct sup *s = arg;
	char buf[PIPE_BUF];
	ssize_t n;

	(void)events;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		to_stderr(STDERR_FILENO, buf, (size_t)n);
		for (size_t i = 0; i < s->n; i++)
			if (s->c[i]->state == C_RUNNING && s->c[i]->err_fd >= 0)
				to_stderr(s->c[i]->err_fd, buf, (size_t)n);
	}
}

static void on_stop(void *arg, int fd, unsigned events)
{
	struct sup *s = arg;

	(void)events;
	if (!s->why_end)
		s->why_end = fd == runner_launcher.exit_fd(s->sb) ? "sandbox ended" : "signal";
	s->stop = true;
}

/* Idle, or its socket gone (removed, or replaced by another): time to end. */
static void on_tick(void *arg)
{
	struct sup *s = arg;
	struct stat st;
	uint64_t idle_ms = (uint64_t)s->id->idle_seconds * 1000;

	if (lstat(s->sock_path, &st) < 0 || st.st_ino != s->sock_st.st_ino ||
	    st.st_dev != s->sock_st.st_dev) {
		s->why_end = s->why_end ? s->why_end : "socket removed";
		s->stop = true;
	}
	/* A connection that says nothing gives its slot back (the slots are bounded: a
	 * thousand silent ones would lock every call out). */
	for (size_t i = s->n; i-- > 0;)
		if (s->c[i]->state == C_NEW && !s->c[i]->waiting &&
		    proxy_now_ms() - s->c[i]->accept_ms >= SUP_HELLO_MS)
			sup_client_drop(s, s->c[i]);
	if (s->running == 0 && proxy_now_ms() - s->last_ms >= idle_ms) {
		s->why_end = s->why_end ? s->why_end : "idle";
		s->stop = true;
	}
	if (!s->stop && !proxy_timer_add(s->pl, idle_ms < 1000 ? idle_ms : 1000, on_tick, s))
		s->stop = true;
}

static int watch(struct sup *s)
{
	int sfd = runner_launcher.signal_fd(s->sb);
	int rc = proxy_poller_add(s->pl, runner_launcher.exit_fd(s->sb), PROXY_EV_IN, on_stop, s);

	if (rc == 0)
		rc = proxy_poller_add(s->pl, sfd, PROXY_EV_IN, on_stop, s);
	if (rc == 0)
		rc = proxy_poller_add(s->pl, s->listen_fd, PROXY_EV_IN, sup_on_accept, s);
	if (rc == 0)
		rc = proxy_poller_add(s->pl, s->chan.fd, PROXY_EV_IN, on_chan, s);
	if (rc == 0 && s->log_r >= 0)
		rc = proxy_poller_add(s->pl, s->log_r, PROXY_EV_IN, on_log, s);
	if (rc == 0 && !proxy_timer_add(s->pl, 200, on_tick, s))
		rc = -ENOMEM;
	return rc;
}

/* The lock and the log go with the session, the lock only when nobody holds it (a
 * call that locked the removed file notices and locks the new one, session_call.c);
 * the log stays when the session never got ready: the first call points to it. */
static void remove_files(const struct sup *s, bool ready)
{
	size_t n = strlen(s->sock_path);
	char path[4300];
	int fd;

	if (n < 5 || n - 5 + 6 > sizeof(path))
		return;
	memcpy(path, s->sock_path, n - 5);
	strcpy(path + n - 5, ".lock");
	if ((fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)) >= 0) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			unlink(path);
		close(fd);
	}
	strcpy(path + n - 5, ".log");
	if (ready)
		unlink(path);
}

static void end(struct sup *s)
{
	struct stat st;

	/* Its socket first: a call arriving now starts a new session, not this one. */
	if (lstat(s->sock_path, &st) == 0 && st.st_ino == s->sock_st.st_ino &&
	    st.st_dev == s->sock_st.st_dev) {
		unlink(s->sock_path);
		remove_files(s, s->ready_fd < 0);
	}
	/* Every call still running dies with the sandbox; its caller sees the end. */
	for (size_t i = 0; i < s->n; i++)
		if (s->c[i]->state == C_RUNNING)
			runner_session_ev_exit(&s->ev, s->l, &s->c[i]->ev, NULL, s->c[i]->left);
	while (s->n) {
		s->c[0]->gone = true;
		sup_client_drop(s, s->c[0]);
	}
}

/* --events and --audit are opened before the launch (the sandbox masks them); the
 * events' session name is the session's. */
static int open_outputs(struct sup *s, int *audit_fd, struct stat *audit_st)
{
	struct halo_err e = {{0}};

	if (s->o->audit && (*audit_fd = runner_open_audit(s->o->audit, audit_st, &e)) < 0) {
		sup_ready_say(s, 'E', e.msg);
		return -1;
	}
	if (runner_events_open(s->o->events, s->id->name, &s->ev, &e) < 0) {
		sup_ready_say(s, 'E', e.msg);
		return -1;
	}
	return 0;
}

/* The decider, outside the sandbox, the supervisor's child: it lives as long as the
 * session (its "remember":"session" answers too) and dies with it. Its troubles are
 * said on the log pipe, which reaches the calls running then. */
static int start_decider(struct sup *s, int log_w, struct halo_err *e)
{
	int rc;

	if (!s->o->decider)
		return 0;
	rc = runner_decider_start(s->o, s->pl, s->ev.fd, s->id->name, &s->dc, e);
	if (rc == 0 && log_w >= 0)
		runner_decider_log_to(s->dc, log_w);
	return rc;
}

int runner_session_serve(const struct runner_opts *o, const runner_launch *l, int listen_fd,
			 int ready_fd, const struct runner_session_id *id, const char *sock_path)
{
	struct sup s = {.o = o,
			.l = l,
			.id = id,
			.sock_path = sock_path,
			.listen_fd = listen_fd,
			.ready_fd = ready_fd,
			.log_r = -1,
			.cap = 1024};
	struct halo_outcome out;
	struct halo_err e = {{0}};
	struct proxy *px = NULL;
	struct stat audit_st;
	int audit_fd = -1, logp[2] = {-1, -1}, rc;

	/* listen() again: the credentials a call checks (runner_session_peer_ok) are the
	 * last listener's, this process's rather than the first call's, which ends. */
	if (listen(listen_fd, 128) < 0 || lstat(sock_path, &s.sock_st) < 0 ||
	    !(s.c = calloc(s.cap, sizeof(*s.c)))) {
		sup_ready_say(&s, 'E', "session: the control socket vanished");
		return HALO_EXIT_SETUP;
	}
	s.ev.fd = -1;
	if (open_outputs(&s, &audit_fd, &audit_st) < 0)
		return HALO_EXIT_SETUP;
	if (o->learn && runner_learn_new(o, &s.lr, &e) < 0) {
		sup_ready_say(&s, 'E', e.msg);
		return HALO_EXIT_SETUP;
	}
	rc = runner_launcher.start(l, &s.sb, &e);
	for (size_t i = 0; l->warnings && i < l->warnings->n; i++)
		sup_ready_say(&s, 'W', l->warnings->v[i]);
	if (rc < 0) {
		sup_ready_say(&s, 'E', e.msg);
		return HALO_EXIT_SETUP;
	}
	runner_supervisor_settings();
	session_conn_init(&s.chan, runner_launcher.session_fd(s.sb));
	/* Non-blocking both ways: the proxy never stalls on its lines (it drops them),
	 * and this loop reads them between its other events. */
	s.log_r = pipe2(logp, O_CLOEXEC | O_NONBLOCK) == 0 ? logp[0] : -1;
	s.last_ms = proxy_now_ms();
	rc = proxy_poller_new(proxy_poller_default_backend(), &s.pl);
	if (rc == 0)
		rc = watch(&s);
	if (rc == 0)
		rc = sup_walk_start(&s);
	if (rc == 0)
		rc = start_decider(&s, s.log_r >= 0 ? logp[1] : -1, &e);
	s.xp = (struct runner_explain){.fd = -1,
				       .log_fd = s.log_r >= 0 ? logp[1] : STDERR_FILENO,
				       .pidfd = runner_launcher.exit_fd(s.sb),
				       .ev = &s.ev,
				       .quiet = o->quiet,
				       .host_ports = &l->policy->host_ports};
	if (rc == 0)
		rc = runner_start_proxy(o, l, s.sb, s.pl, audit_fd,
					s.log_r >= 0 ? logp[1] : STDERR_FILENO,
					&(struct runner_proxy_extra){.events_fd = s.ev.fd,
								     .session = id->name,
								     .dc = s.dc,
								     .lr = s.lr,
								     .explain_fd = &s.xp.fd},
					&px);
	if (rc == 0)
		rc = runner_explain_start(&s.xp, s.pl);
	if (rc == 0)
		rc = proxy_poller_run(s.pl, &s.stop);
	/* Before the calls are let go: `session stop` returns with the file written. */
	if (s.lr)
		runner_learn_finish(s.lr, o, l);
	runner_explain_finish(&s.xp);
	end(&s);
	/* No call is taken from here on (review 26: one accepted during the drain below
	 * asked the stopped walker for a walk: SIGSEGV, the session's end unsaid). */
	(void)proxy_poller_del(s.pl, s.listen_fd);
	runner_launcher.kill(s.sb);
	/* After the kill: a walk under way (a large tree without its index) must not keep
	 * the sandbox running past `session stop`. */
	sup_walk_stop(&s);
	rc = runner_launcher.finish(s.sb, &out, &e);
	if (s.ready_fd >= 0) /* ended before it was ready: why */
		sup_ready_say(&s, 'E',
			      e.msg[0] ? e.msg : "the session's sandbox ended during setup");
	s.chan.fd = -1; /* the launcher's, closed by finish */
	session_conn_release(&s.chan);
	proxy_drain(px, 100);
	proxy_destroy(px);
	runner_decider_stop(s.dc); /* after the proxy: no connection waits on it */
	runner_learn_free(s.lr);
	runner_session_ev_end(&s.ev, s.why_end ? s.why_end : "ended", s.next_id);
	proxy_poller_free(s.pl);
	for (int i = 0; i < 2; i++)
		if (logp[i] >= 0)
			close(logp[i]);
	free(s.c);
	linux_session_protected_free(s.mounts, s.n_mounts);
	for (size_t i = 0; i < s.n_own_socks; i++)
		free(s.own_socks[i]);
	free(s.own_socks);
	if (audit_fd >= 0)
		close(audit_fd);
	return 0;
}
