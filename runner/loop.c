/* The supervisor's one event loop: the proxy's sockets, the sandbox's exit, signals to
 * forward, and the wall-clock limit, all on one poller. The launcher is linux/ or
 * macos/ (runner/launcher.h); the loop is the same. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "proxy/proxy.h"
#include "runner/runner_int.h"

struct loop_state {
	runner_sandbox *sb;
	struct proxy_poller *pl;
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
	runner_launcher_forward_signals(st->sb);
}

static void on_wall_clock(void *arg)
{
	struct loop_state *st = arg;

	runner_launcher_kill(st->sb);
}

static int open_audit(const char *path)
{
	int fd;

	if (!path)
		return -1;
	/* Appending keeps earlier runs' records; O_NOFOLLOW refuses a planted link. */
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		fprintf(stderr, "halo-run: --audit %s: %s\n", path, strerror(errno));
	return fd;
}

/* Hand the sandbox's listeners to a new proxy. */
static int start_proxy(const struct runner_opts *o, const runner_launch *l, struct loop_state *st,
		       int audit_fd, struct proxy **px)
{
	struct proxy_options po;
	struct halo_err e = {{0}};
	size_t n;
	int rc;

	*px = NULL;
	memset(&po, 0, sizeof(po));
	n = runner_launcher_listeners(st->sb, &po);
	if (n == 0)
		return 0;
	po.policy = l->policy;
	po.audit_fd = audit_fd;
	po.log_fd = STDERR_FILENO;
	po.quiet = o->quiet;
	rc = proxy_create(st->pl, &po, px, &e);
	if (rc < 0) {
		for (size_t i = 0; i < n; i++)
			close(po.listeners[i].fd);
		fprintf(stderr, "halo-run: egress proxy: %s\n", e.msg);
	}
	return rc;
}

/* Only now that the sandbox has its own copies: a peer closing a tunnel must not kill
 * the supervisor, and thousands of tunnels need more than the default 1024 fds. */
static void supervisor_settings(void)
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
	    proxy_poller_add(st->pl, runner_launcher_exit_fd(st->sb), PROXY_EV_IN, on_exit_fd, st);

	if (rc == 0)
		rc = proxy_poller_add(st->pl, runner_launcher_signal_fd(st->sb), PROXY_EV_IN,
				      on_signal_fd, st);
	if (rc == 0 && l->limits.wall_seconds > 0 &&
	    !proxy_timer_add(st->pl, (uint64_t)l->limits.wall_seconds * 1000, on_wall_clock, st))
		rc = -ENOMEM;
	return rc;
}

int runner_supervise(const struct runner_opts *o, const runner_launch *l, int *status,
		     struct halo_err *e)
{
	struct loop_state st = {0};
	struct proxy *px = NULL;
	int audit_fd = open_audit(o->audit);
	int rc;

	if (o->audit && audit_fd < 0)
		return -EIO;
	rc = runner_launcher_start(l, &st.sb, e);
	if (rc < 0)
		goto out;
	supervisor_settings();
	rc = proxy_poller_new(proxy_poller_default_backend(), &st.pl);
	if (rc == 0)
		rc = watch(&st, l);
	if (rc == 0)
		rc = start_proxy(o, l, &st, audit_fd, &px);
	if (rc < 0) {
		/* Without its supervisor's loop the sandbox must not run on. */
		runner_launcher_kill(st.sb);
		runner_launcher_finish(st.sb, status, e);
		halo_err_set(e, "could not start the supervisor's event loop: %s", strerror(-rc));
		goto out;
	}
	rc = proxy_poller_run(st.pl, &st.stop);
	if (rc < 0)
		runner_launcher_kill(st.sb);
	rc = runner_launcher_finish(st.sb, status, e);
	proxy_drain(px, 100);
	if (px && o->verbose)
		proxy_summary(px, stderr);
out:
	proxy_destroy(px);
	proxy_poller_free(st.pl);
	if (audit_fd >= 0)
		close(audit_fd);
	return rc;
}
