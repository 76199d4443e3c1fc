/* The launcher this build drives, as runner's ops table (launcher.h). */
#include "launch/launch.h"

#ifdef RUNNER_MACOS
/* The proxy's one listener on the host's loopback, behind the run's secret. */
static size_t macos_listeners(runner_sandbox *sb, struct proxy_options *po, int *explain_fd)
{
	int fd = macos_sandbox_take_listener(sb, &po->auth_secret);

	*explain_fd = -1; /* no namespace of its own to explain */
	if (fd < 0)
		return 0;
	po->listeners[0].fd = fd;
	po->listeners[0].kind = PROXY_LISTEN_HTTP;
	po->n_listeners = 1;
	return 1;
}

const struct runner_launcher runner_launcher = {
    .plan = macos_plan,
    .start = macos_start,
    .exit_fd = macos_sandbox_exit_fd,
    .signal_fd = macos_sandbox_signal_fd,
    .forward_signals = macos_sandbox_forward_signals,
    .kill = macos_sandbox_kill,
    .listeners = macos_listeners,
    .finish = macos_finish,
};
#else
_Static_assert(NETNS_MAX_LISTENERS - 2 <= PROXY_MAX_LISTENERS,
	       "the proxy takes every listener but the refusals' log and the socket table");

/* The listeners made inside the sandbox's network namespace; the refusals' log is the
 * runner's (runner/explain.c). */
static size_t linux_listeners(runner_sandbox *sb, struct proxy_options *po, int *explain_fd)
{
	static const enum proxy_listener_kind kinds[] = {
	    [NETNS_LISTEN_HTTP] = PROXY_LISTEN_HTTP,
	    [NETNS_LISTEN_SOCKS5] = PROXY_LISTEN_SOCKS5,
	    [NETNS_LISTEN_HOSTPORT] = PROXY_LISTEN_HOSTPORT,
	    [NETNS_LISTEN_DNS_UDP] = PROXY_LISTEN_DNS_UDP,
	    [NETNS_LISTEN_DNS_TCP] = PROXY_LISTEN_DNS_TCP,
	    [NETNS_LISTEN_CAPTURE] = PROXY_LISTEN_CAPTURE,
	};
	struct netns_listener ls[NETNS_MAX_LISTENERS];
	size_t n = linux_sandbox_take_listeners(sb, ls);

	*explain_fd = -1;
	for (size_t i = 0; i < n; i++) {
		struct proxy_listener *pl = &po->listeners[po->n_listeners];

		if (ls[i].kind == NETNS_LISTEN_EXPLAIN) {
			if (*explain_fd >= 0)
				close(*explain_fd);
			*explain_fd = ls[i].fd;
			continue;
		}
		pl->fd = ls[i].fd;
		pl->nonblocking = true; /* netns_listen: SOCK_NONBLOCK */
		pl->kind = kinds[ls[i].kind];
		pl->port = ls[i].port;
		pl->index = ls[i].index;
		po->n_listeners++;
	}
	return po->n_listeners;
}

const struct runner_launcher runner_launcher = {
    .plan = linux_plan,
    .start = linux_start,
    .exit_fd = linux_sandbox_exit_fd,
    .signal_fd = linux_sandbox_signal_fd,
    .forward_signals = linux_sandbox_forward_signals,
    .kill = linux_sandbox_kill,
    .listeners = linux_listeners,
    .finish = linux_finish,
    .done_fd = linux_sandbox_done_fd,
    .reap = linux_reap,
    .session_fd = linux_sandbox_session_fd,
    .interrupted_by = linux_scan_interrupted_by,
};
#endif
