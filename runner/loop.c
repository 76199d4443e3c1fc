/* The supervisor's one event loop: the proxy's sockets, the sandbox's exit, signals to
 * forward, and the wall-clock limit, all on one poller. */
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
	struct linux_sandbox *sb;
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
	linux_sandbox_forward_signals(st->sb);
}

static void on_wall_clock(void *arg)
{
	struct loop_state *st = arg;

	linux_sandbox_kill(st->sb);
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
static int start_proxy(const struct runner_opts *o, const struct linux_launch *l,
		       struct loop_state *st, int audit_fd, struct proxy **px)
{
	struct netns_listener ls[NETNS_MAX_LISTENERS];
	struct proxy_options po;
	struct halo_err e = {{0}};
	size_t n = linux_sandbox_take_listeners(st->sb, ls);
	int rc;

	*px = NULL;
	if (n == 0)
		return 0;
	memset(&po, 0, sizeof(po));
	po.policy = l->policy;
	for (size_t i = 0; i < n && i < PROXY_MAX_LISTENERS; i++) {
		po.listeners[i].fd = ls[i].fd;
		po.listeners[i].kind = ls[i].kind == NETNS_LISTEN_SOCKS5 ? PROXY_LISTEN_SOCKS5
									 : PROXY_LISTEN_HTTP;
		po.n_listeners++;
	}
	po.audit_fd = audit_fd;
	po.log_fd = STDERR_FILENO;
	po.quiet = o->quiet;
	rc = proxy_create(st->pl, &po, px, &e);
	if (rc < 0) {
		for (size_t i = 0; i < n; i++)
			close(ls[i].fd);
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

static int watch(struct loop_state *st, const struct linux_launch *l)
{
	int rc = proxy_poller_add(st->pl, linux_sandbox_exit_fd(st->sb), PROXY_EV_IN, on_exit_fd, st);

	if (rc == 0)
		rc = proxy_poller_add(st->pl, linux_sandbox_signal_fd(st->sb), PROXY_EV_IN,
				      on_signal_fd, st);
	if (rc == 0 && l->limits.wall_seconds > 0 &&
	    !proxy_timer_add(st->pl, (uint64_t)l->limits.wall_seconds * 1000, on_wall_clock, st))
		rc = -ENOMEM;
	return rc;
}

int runner_supervise(const struct runner_opts *o, const struct linux_launch *l, int *status,
		     struct halo_err *e)
{
	struct loop_state st = {0};
	struct proxy *px = NULL;
	int audit_fd = open_audit(o->audit);
	int rc;

	if (o->audit && audit_fd < 0)
		return -EIO;
	rc = linux_start(l, &st.sb, e);
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
		linux_sandbox_kill(st.sb);
		linux_finish(st.sb, status, e);
		halo_err_set(e, "could not start the supervisor's event loop: %s", strerror(-rc));
		goto out;
	}
	rc = proxy_poller_run(st.pl, &st.stop);
	if (rc < 0)
		linux_sandbox_kill(st.sb);
	rc = linux_finish(st.sb, status, e);
	if (px && o->verbose)
		proxy_summary(px, stderr);
out:
	proxy_destroy(px);
	proxy_poller_free(st.pl);
	if (audit_fd >= 0)
		close(audit_fd);
	return rc;
}
