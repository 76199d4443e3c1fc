/* Which launcher this build drives: linux/ on Linux; macos/ on macOS and in the
 * portable build (make PLATFORM=portable, HALO_PORTABLE), which runs the macOS code
 * path on Linux with nothing Linux-only linked in. Both launchers have the same
 * steps (start → exit fd, signal fd → finish), so runner/loop.c and runner/run.c
 * drive either through these names. */
#ifndef HALO_RUNNER_LAUNCHER_H
#define HALO_RUNNER_LAUNCHER_H

#include <stdio.h>
#include <unistd.h>

#include "proxy/proxy.h"

#if defined(__APPLE__) || defined(HALO_PORTABLE)
#define RUNNER_MACOS 1
#include "macos/macos.h"

typedef struct macos_launch runner_launch;
typedef struct macos_sandbox runner_sandbox;

/* The steps map one to one onto the launcher's own names. */
#define runner_launcher_start		macos_start
#define runner_launcher_exit_fd		macos_sandbox_exit_fd
#define runner_launcher_signal_fd	macos_sandbox_signal_fd
#define runner_launcher_forward_signals macos_sandbox_forward_signals
#define runner_launcher_kill		macos_sandbox_kill
#define runner_launcher_finish		macos_finish
#define runner_launcher_dry_run		macos_dry_run

/* The proxy's one listener on the host's loopback, behind the run's secret. */
static inline size_t runner_launcher_listeners(runner_sandbox *sb, struct proxy_options *po)
{
	int fd = macos_sandbox_take_listener(sb, &po->auth_secret);

	if (fd < 0)
		return 0;
	po->listeners[0].fd = fd;
	po->listeners[0].kind = PROXY_LISTEN_HTTP;
	po->n_listeners = 1;
	return 1;
}

#else
#include "linux/linux.h"

typedef struct linux_launch runner_launch;
typedef struct linux_sandbox runner_sandbox;

/* The steps map one to one onto the launcher's own names. */
#define runner_launcher_start		linux_start
#define runner_launcher_exit_fd		linux_sandbox_exit_fd
#define runner_launcher_signal_fd	linux_sandbox_signal_fd
#define runner_launcher_forward_signals linux_sandbox_forward_signals
#define runner_launcher_kill		linux_sandbox_kill
#define runner_launcher_finish		linux_finish
#define runner_launcher_dry_run		linux_dry_run

_Static_assert(NETNS_MAX_LISTENERS <= PROXY_MAX_LISTENERS, "the proxy takes every listener");

/* The listeners made inside the sandbox's network namespace. */
static inline size_t runner_launcher_listeners(runner_sandbox *sb, struct proxy_options *po)
{
	static const enum proxy_listener_kind kinds[] = {
	    [NETNS_LISTEN_HTTP] = PROXY_LISTEN_HTTP,
	    [NETNS_LISTEN_SOCKS5] = PROXY_LISTEN_SOCKS5,
	    [NETNS_LISTEN_HOSTPORT] = PROXY_LISTEN_HOSTPORT,
	};
	struct netns_listener ls[NETNS_MAX_LISTENERS];
	size_t n = linux_sandbox_take_listeners(sb, ls);

	for (size_t i = 0; i < n; i++) {
		po->listeners[i].fd = ls[i].fd;
		po->listeners[i].kind = kinds[ls[i].kind];
		po->listeners[i].port = ls[i].port;
		po->listeners[i].index = ls[i].index;
		po->n_listeners++;
	}
	return po->n_listeners;
}
#endif

#endif
