/* The supervisor's one event loop: the proxy's sockets, the sandbox's exit, signals to
 * forward, and the wall-clock limit, all on one poller. The launcher is linux/ or
 * macos/ (launch/launch.h); the loop is the same. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proxy/proxy.h"
#include "events/events.h"
#include "runner/runner_int.h"

struct loop_state {
	runner_sandbox *sb;
	struct proxy_poller *pl;
	struct runner_events ev;   /* --events */
	struct runner_decider *dc; /* --decider (decider.c), NULL without */
	struct runner_learn *lr;   /* halo-run learn (learn_run.c), NULL without */
	struct runner_explain xp;  /* refused connections inside, explained */
	volatile bool stop;
};

static void on_exit_fd(void *arg, int fd, unsigned events)
{
	struct loop_state *st = arg;

	(void)fd;
	(void)events;
	st->stop = true;
}

static void on_signal_fd(void *arg, int fd, unsigned events)
{
	struct loop_state *st = arg;

	(void)fd;
	(void)events;
	runner_launcher.forward_signals(st->sb);
}

static void on_wall_clock(void *arg)
{
	struct loop_state *st = arg;

	runner_launcher.kill(st->sb);
}

/* The audit file, opened before the launch so that the sandbox can mask it (it is one
 * of halo-run's own outputs, runner/run.c), by the one opener of output files. */
int runner_open_audit(const char *path, struct stat *st, struct halo_err *e)
{
	return runner_open_output("--audit", path, 0600, st, e);
}

/* --events ./F --audit F, or fd:N open on the audit file: the string compare in
 * runner/run.c sees two names, the inodes say one file. */
static bool same_file(int a, int b)
{
	struct stat sa, sb;

	return a >= 0 && b >= 0 && fstat(a, &sa) == 0 && fstat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Hand the sandbox's listeners to a new proxy. */
int runner_start_proxy(const struct runner_opts *o, const runner_launch *l, runner_sandbox *sb,
		       struct proxy_poller *pl, int audit_fd, int log_fd,
		       const struct runner_proxy_extra *x, struct proxy **px)
{
	struct proxy_options po;
	struct halo_err e = {{0}};
	size_t n;
	int rc, xfd = -1;

	*px = NULL;
	memset(&po, 0, sizeof(po));
	n = runner_launcher.listeners(sb, &po, &xfd);
	if (x && x->explain_fd)
		*x->explain_fd = xfd;
	else if (xfd >= 0)
		close(xfd);
	if (n == 0)
		return 0;
	po.policy = l->policy;
	po.audit_fd = audit_fd;
	po.events_fd = x ? x->events_fd : -1;
	po.events_lost = x ? x->events_lost : NULL;
	po.session = x ? x->session : NULL;
	if (x && x->dc)
		runner_decider_options(x->dc, &po);
	if (x)
		runner_learn_options(x->lr, &po);
	po.log_fd = log_fd;
	po.quiet = o->quiet;
	po.upstream = runner_upstream();
	po.upstream_addrs = runner_upstream_addrs(&po.n_upstream_addrs);
	po.sigpipe_ignored = true; /* supervisor_settings(), before the proxy starts */
	po.tls = runner_tls();	   /* NULL unless some host's TLS is terminated */
	rc = proxy_create(pl, &po, px, &e);
	if (rc < 0) {
		for (size_t i = 0; i < n; i++)
			close(po.listeners[i].fd);
		fprintf(stderr, "halo-run: egress proxy: %s\n", e.msg);
	}
	return rc;
}

/* Only now that the sandbox has its own copies: a peer closing a tunnel must not kill
 * the supervisor, and thousands of tunnels need more than the default 1024 fds. */
void runner_supervisor_settings(void)
{
	struct rlimit r;

	signal(SIGPIPE, SIG_IGN);
	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
}

static int watch(struct loop_state *st, const runner_launch *l)
{
	int rc =
	    proxy_poller_add(st->pl, runner_launcher.exit_fd(st->sb), PROXY_EV_IN, on_exit_fd, st);

	/* The command's status can come before init's exit: the loop ends then. */
	int done = runner_launcher.done_fd ? runner_launcher.done_fd(st->sb) : -1;
	if (rc == 0 && done >= 0)
		rc = proxy_poller_add(st->pl, done, PROXY_EV_IN, on_exit_fd, st);
	if (rc == 0)
		rc = proxy_poller_add(st->pl, runner_launcher.signal_fd(st->sb), PROXY_EV_IN,
				      on_signal_fd, st);
	if (rc == 0 && l->limits.wall_seconds > 0 &&
	    !proxy_timer_add(st->pl, (uint64_t)l->limits.wall_seconds * 1000, on_wall_clock, st))
		rc = -ENOMEM;
	return rc;
}

void runner_say_warnings(const struct runner_opts *o, struct plan_text *w)
{
	for (size_t i = 0; w && i < w->n; i++)
		if (!o->quiet)
			runner_say("%s", w->v[i]);
	if (w)
		plan_text_free(w);
}

/* The exit record, and the limits and refusals before it. */
static void events_end(struct runner_events *ev, const runner_launch *l, struct halo_outcome out,
		       int status, struct halo_err *e)
{
	static const struct halo_run_facts none;

	if (ev->fd < 0)
		return;
	runner_events_finish(ev, &l->limits, out, l->facts ? l->facts : &none, status, e->msg);
	runner_events_close(ev);
}

/* Records the proxy could not write (a full disk, a file-size limit): the audit is
 * incomplete, and a run must not pass as audited. */
static int audit_lost(const struct runner_opts *o, const struct proxy *px, struct halo_err *e)
{
	struct proxy_stats ps = {0};

	if (px)
		proxy_get_stats(px, &ps);
	if (!ps.audit_lost)
		return 0;
	halo_err_set(e, "--audit %s: %zu record%s could not be written; the audit is incomplete",
		     o->audit, ps.audit_lost, ps.audit_lost == 1 ? "" : "s");
	return -EIO;
}

/* --summary-md: opened (created) before the launch like the audit, so that the
 * sandbox masks it and the report goes through this descriptor: a command that
 * forges the file, makes it read-only or swaps a parent for a link changes nothing. */
struct summary_out {
	int fd;
	struct stat st;
};

static int open_summary(const struct runner_opts *o, int audit_fd, int events_fd,
			struct summary_out *sum, struct halo_err *e)
{
	sum->fd = runner_open_output("--summary-md", o->summary_md, 0644, &sum->st, e);
	if (sum->fd < 0)
		return sum->fd;
	if (same_file(sum->fd, audit_fd) || same_file(sum->fd, events_fd)) {
		halo_err_set(e, "--summary-md %s: the same file as --%s", o->summary_md,
			     same_file(sum->fd, audit_fd) ? "audit" : "events");
		close(sum->fd);
		sum->fd = -1;
		return -EINVAL;
	}
	return 0;
}

/* The events file and the summary, by name, after the run: each moved or replaced
 * one is said and fails the run, as the audit does. */
static int others_intact(const struct runner_opts *o, const struct runner_events *ev,
			 const struct summary_out *sum)
{
	struct halo_err stale = {{0}};
	int rc = 0;

	if (ev->fd >= 0 && ev->path &&
	    runner_output_intact("--events", ev->path, &ev->st, &stale) < 0) {
		fprintf(stderr, "halo-run: %s\n", stale.msg);
		rc = -ESTALE;
	}
	if (sum->fd >= 0 &&
	    runner_output_intact("--summary-md", o->summary_md, &sum->st, &stale) < 0) {
		fprintf(stderr, "halo-run: %s\n", stale.msg);
		rc = -ESTALE;
	}
	return rc;
}

/* A start that failed: a setup error (125), or a terminating signal that stopped it
 * before the command ran (a Ctrl-C during the workspace walk: 128 + it). */
struct halo_outcome runner_start_failed_outcome(void)
{
	int sig = runner_launcher.interrupted_by ? runner_launcher.interrupted_by() : 0;

	return sig ? halo_outcome_of(HALO_OUTCOME_SIGNALED, sig)
		   : halo_outcome_of(HALO_OUTCOME_SETUP, 0);
}

int runner_start_failed_exit(void)
{
	return halo_exit_code(runner_start_failed_outcome());
}

int runner_supervise(const struct runner_opts *o, const runner_launch *l, int *status,
		     struct halo_err *e)
{
	struct loop_state st = {0};
	struct proxy *px = NULL;
	struct halo_outcome outcome = halo_outcome_of(HALO_OUTCOME_SETUP, 0);
	struct stat audit_st;
	struct summary_out sum = {.fd = -1};
	struct halo_err lost = {{0}};
	int audit_fd = -1;
	int rc;

	if (o->audit && (audit_fd = runner_open_audit(o->audit, &audit_st, e)) < 0)
		return audit_fd;
	/* Sessions (another branch) name theirs here; "" outside a session. */
	if ((rc = runner_events_open(o->events, "", &st.ev, e)) < 0) {
		if (audit_fd >= 0)
			close(audit_fd);
		return rc;
	}
	if (audit_fd >= 0 && same_file(audit_fd, st.ev.fd)) {
		halo_err_set(e, "--events and --audit name the same file");
		runner_events_close(&st.ev);
		close(audit_fd);
		return -EINVAL;
	}
	if (o->summary_md && (rc = open_summary(o, audit_fd, st.ev.fd, &sum, e)) < 0) {
		runner_events_close(&st.ev);
		close(audit_fd);
		return rc;
	}
	rc = 0;
	if (o->learn && l->policy->mode == POLICY_MODE_OFF) { /* no proxy, no broker */
		halo_err_set(e, "learn: sandbox.mode is off: the command would run unsandboxed, "
				"so nothing could be learned");
		rc = -EINVAL;
	}
	if (o->learn && (rc < 0 || (rc = runner_learn_new(o, &st.lr, e)) < 0)) {
		runner_events_close(&st.ev);
		if (audit_fd >= 0)
			close(audit_fd);
		if (sum.fd >= 0)
			close(sum.fd);
		return rc;
	}
	runner_learn_command(st.lr, l->argv);
	runner_events_start(&st.ev, l->policy, l->policy_files, l->n_policy_files, l->workspace,
			    l->argv);
	runner_home_scan_begin();
	rc = runner_launcher.start(l, &st.sb, e);
	runner_home_scan_end();
	runner_say_warnings(o, l->warnings);
	if (rc < 0)
		goto out;
	runner_supervisor_settings();
	rc = proxy_poller_new(proxy_poller_default_backend(), &st.pl);
	if (rc == 0)
		rc = watch(&st, l);
	if (rc == 0 && o->decider)
		rc = runner_decider_start(o, st.pl, st.ev.fd, st.ev.session, &st.dc, e);
	st.xp = (struct runner_explain){.fd = -1,
					.log_fd = STDERR_FILENO,
					.pidfd = runner_launcher.exit_fd(st.sb),
					.ev = &st.ev,
					.quiet = o->quiet,
					.host_ports = &l->policy->host_ports};
	if (rc == 0)
		rc = runner_start_proxy(o, l, st.sb, st.pl, audit_fd, STDERR_FILENO,
					&(struct runner_proxy_extra){.events_fd = st.ev.fd,
								     .events_lost = &st.ev.lost,
								     .session = st.ev.session,
								     .dc = st.dc,
								     .lr = st.lr,
								     .explain_fd = &st.xp.fd},
					&px);
	if (rc == 0)
		rc = runner_explain_start(&st.xp, st.pl);
	if (rc < 0) {
		/* Without its supervisor's loop the sandbox must not run on. */
		runner_explain_finish(&st.xp);
		runner_launcher.kill(st.sb);
		runner_launcher.finish(st.sb, &outcome, e);
		halo_err_set(e, "could not start the supervisor's event loop: %s", strerror(-rc));
		goto out;
	}
	rc = proxy_poller_run(st.pl, &st.stop);
	if (rc < 0)
		runner_launcher.kill(st.sb);
	runner_explain_finish(&st.xp);
	rc = runner_launcher.finish(st.sb, &outcome, e);
	*status = halo_exit_code(outcome); /* the one mapping, exit/exit.h */
	if (rc >= 0 && l->facts)
		runner_say_limits(&l->limits, outcome, l->facts);
	proxy_drain(px, 100);
	if (px && o->verbose)
		proxy_summary(px, stderr);
	/* learn: a policy that cannot be written is the run's failure, said */
	if (rc >= 0 && st.lr && runner_learn_finish(st.lr, o, l) < 0) {
		*status = HALO_EXIT_SETUP;
		rc = 1;
	}
	if (rc >= 0 && audit_fd >= 0 && audit_lost(o, px, e) < 0) {
		*status = HALO_EXIT_SETUP;
		rc = 1;
	}
	if (rc >= 0 && audit_fd >= 0 &&
	    runner_output_intact("--audit", o->audit, &audit_st, e) < 0) {
		*status = HALO_EXIT_SETUP;
		rc = 1;
	}
	if (rc >= 0 && runner_ci_finish(o, px, audit_fd, audit_fd >= 0 ? audit_st.st_size : 0,
					sum.fd, status) < 0)
		rc = 1; /* said why; *status is HALO_EXIT_SETUP */
	if (rc >= 0 && others_intact(o, &st.ev, &sum) < 0) {
		*status = HALO_EXIT_SETUP;
		rc = 1;
	}
out:
	/* The process exits after this run (runner_cmd_run returns its status), and no
	 * loop runs any more: the descriptors the proxy and the poller hold are left to
	 * the exit, not taken out of the epoll set and closed one by one. What is
	 * recorded (audit, events, summary) is written as before. */
	proxy_poller_set_ending(st.pl);
	/* The proxy first: the connections it still holds are closed and recorded (audit
	 * and egress events) before the exit record, not written to a closed fd after. */
	proxy_destroy(px);
	runner_decider_stop(st.dc); /* after the proxy: no connection waits on it */
	runner_learn_free(st.lr);
	events_end(&st.ev, l, rc < 0 ? runner_start_failed_outcome() : outcome,
		   rc < 0 ? runner_start_failed_exit() : *status, e);
	if (rc >= 0 && runner_events_lost(&st.ev, &lost) < 0) {
		/* Even the exit record may be among them: only the status can say it. */
		fprintf(stderr, "halo-run: %s\n", lost.msg);
		*status = HALO_EXIT_SETUP;
		rc = 1;
	}
	proxy_poller_free(st.pl);
	if (audit_fd >= 0)
		close(audit_fd);
	if (sum.fd >= 0)
		close(sum.fd);
	if (runner_launcher.reap) /* init, once all of the above is done */
		runner_launcher.reap();
	return rc;
}
