/* The supervisor's one event loop: the proxy's sockets, the sandbox's exit, signals to
 * forward, and the wall-clock limit, all on one poller. The launcher is linux/ or
 * macos/ (runner/launcher.h); the loop is the same. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proxy/proxy.h"
#include "runner/events.h"
#include "runner/runner_int.h"

struct loop_state {
	runner_sandbox *sb;
	struct proxy_poller *pl;
	struct runner_events ev;   /* --events */
	struct runner_decider *dc; /* --decider (decider.c), NULL without */
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
 * of halo-run's own outputs, runner/run.c). Appending keeps earlier runs' records;
 * O_NOFOLLOW refuses a planted link; O_NONBLOCK keeps a FIFO with no reader from
 * hanging the open, and anything but a regular file is refused: a FIFO or a device
 * would hand the records to whoever reads it, and cannot be masked as a file. */
int runner_open_audit(const char *path, struct stat *st, struct halo_err *e)
{
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd < 0) {
		halo_err_set(e, "--audit %s: %s", path,
			     errno == ELOOP   ? "is a symbolic link (refused)"
			     : errno == ENXIO ? "is a FIFO or socket (refused: not a regular file)"
					      : strerror(errno));
		return -EINVAL;
	}
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		halo_err_set(e,
			     "--audit %s: not a regular file (a FIFO, device or socket cannot "
			     "hold the audit)",
			     path);
		close(fd);
		return -EINVAL;
	}
	if (runner_output_one_link("--audit", path, st, e) < 0 ||
	    runner_output_not_stdio("--audit", path, fd, e) < 0) {
		close(fd);
		return -EINVAL;
	}
	fcntl(fd, F_SETFL, O_APPEND); /* blocking again: records are written whole */
	return fd;
}

/* The supervisor wrote through its fd, so the records are intact whatever happened to
 * the name; but a reader after the run goes by the name. If it no longer leads to the
 * file that was opened (a parent directory renamed from inside and a forgery planted
 * at the old name), say so and fail the run rather than let the forgery be read. */
static int audit_name_intact(const char *path, const struct stat *opened, struct halo_err *e)
{
	struct stat now;

	if (lstat(path, &now) == 0 && now.st_dev == opened->st_dev && now.st_ino == opened->st_ino)
		return 0;
	halo_err_set(e,
		     "--audit %s no longer names the audit file halo-run wrote (moved or replaced "
		     "during the run); do not trust what is there now",
		     path);
	return -ESTALE;
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
	int rc;

	*px = NULL;
	memset(&po, 0, sizeof(po));
	n = runner_launcher.listeners(sb, &po);
	if (n == 0)
		return 0;
	po.policy = l->policy;
	po.audit_fd = audit_fd;
	po.events_fd = x ? x->events_fd : -1;
	po.session = x ? x->session : NULL;
	if (x && x->dc)
		runner_decider_options(x->dc, &po);
	po.log_fd = log_fd;
	po.quiet = o->quiet;
	po.upstream = runner_upstream();
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
			fprintf(stderr, "halo-run: %s\n", w->v[i]);
	if (w)
		plan_text_free(w);
}

/* The exit record, and the limits and refusals before it; the events file's name
 * checked as the audit's is. */
static void events_end(struct runner_events *ev, const runner_launch *l, struct halo_outcome out,
		       int status, struct halo_err *e)
{
	static const struct halo_run_facts none;
	struct halo_err stale = {{0}};

	if (ev->fd < 0)
		return;
	runner_events_finish(ev, &l->limits, out, l->facts ? l->facts : &none, status, e->msg);
	if (ev->path && audit_name_intact(ev->path, &ev->st, &stale) < 0)
		fprintf(stderr, "halo-run: %s\n", stale.msg);
	runner_events_close(ev);
}

int runner_supervise(const struct runner_opts *o, const runner_launch *l, int *status,
		     struct halo_err *e)
{
	struct loop_state st = {0};
	struct proxy *px = NULL;
	struct halo_outcome outcome = halo_outcome_of(HALO_OUTCOME_SETUP, 0);
	struct stat audit_st;
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
	if (rc == 0)
		rc = runner_start_proxy(
		    o, l, st.sb, st.pl, audit_fd, STDERR_FILENO,
		    &(struct runner_proxy_extra){st.ev.fd, st.ev.session, st.dc}, &px);
	if (rc < 0) {
		/* Without its supervisor's loop the sandbox must not run on. */
		runner_launcher.kill(st.sb);
		runner_launcher.finish(st.sb, &outcome, e);
		halo_err_set(e, "could not start the supervisor's event loop: %s", strerror(-rc));
		goto out;
	}
	rc = proxy_poller_run(st.pl, &st.stop);
	if (rc < 0)
		runner_launcher.kill(st.sb);
	rc = runner_launcher.finish(st.sb, &outcome, e);
	*status = halo_exit_code(outcome); /* the one mapping, runner/exit.h */
	proxy_drain(px, 100);
	if (px && o->verbose)
		proxy_summary(px, stderr);
	if (rc >= 0 && audit_fd >= 0 && audit_name_intact(o->audit, &audit_st, e) < 0) {
		*status = HALO_EXIT_SETUP;
		rc = 1;
	}
	if (rc >= 0)
		runner_ci_finish(o, px, audit_fd, audit_fd >= 0 ? audit_st.st_size : 0, status);
out:
	/* The proxy first: the connections it still holds are closed and recorded (audit
	 * and egress events) before the exit record, not written to a closed fd after. */
	proxy_destroy(px);
	runner_decider_stop(st.dc); /* after the proxy: no connection waits on it */
	events_end(&st.ev, l, rc < 0 ? halo_outcome_of(HALO_OUTCOME_SETUP, 0) : outcome,
		   rc < 0 ? HALO_EXIT_SETUP : *status, e);
	proxy_poller_free(st.pl);
	if (audit_fd >= 0)
		close(audit_fd);
	return rc;
}
