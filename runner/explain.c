/* Refused connections inside the sandbox, explained (issue 24): the supervisor reads
 * the refusals' log netns/ set up in the sandbox's namespace and says, once per port
 * or address of the run, what the refusal means and what to do:
 *   - localhost:P with no listener inside while the host has one: egress.hostPorts;
 *   - a TCP connection to an IP address: egress is decided by host name.
 * One stderr line (the proxy's log fd: a session's call gets it) and one "refusal"
 * event each. The kernel logs only refused connections, rate-limited, so nothing here
 * runs for a connection that works. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "events/events.h"
#include "launch/launch.h"
#include "runner/runner_int.h"

#ifndef RUNNER_MACOS

static bool seen(struct runner_explain *x, const struct netns_refusal *r)
{
	for (size_t i = 0; i < x->n_seen; i++) {
		const struct netns_refusal *s = &x->seen[i];

		if (s->kind == r->kind && s->port == r->port &&
		    (r->kind == NETNS_REFUSED_LOCAL_PORT ||
		     (s->family == r->family && memcmp(s->addr, r->addr, 16) == 0)))
			return true;
	}
	/* Past the table's end nothing more is said: a run that refuses that many
	 * different ports has been told already. */
	if (x->n_seen == RUNNER_EXPLAIN_MAX)
		return true;
	x->seen[x->n_seen++] = *r;
	return false;
}

static bool host_port_allowed(const struct runner_explain *x, uint16_t port)
{
	for (size_t i = 0; x->host_ports && i < x->host_ports->n; i++)
		if (x->host_ports->items[i] == port)
			return true;
	return false;
}

static void say(struct runner_explain *x, const char *what, const char *addr, unsigned port,
		const char *key, const char *line)
{
	char buf[600];
	int n;

	if (x->log_fd >= 0 && !x->quiet) {
		n = snprintf(buf, sizeof(buf), "halo-run: %s\n", line);
		/* A full pipe (a session's, non-blocking) drops the line, as the proxy's;
		 * a reader gone ends the lines, not the run. */
		if (n > 0 && write(x->log_fd, buf, (size_t)n < sizeof(buf) ? (size_t)n : 0) < 0 &&
		    errno == EPIPE)
			x->log_fd = -1;
	}
	runner_events_refusal(x->ev, what, addr, port, key, line);
	x->n_said++;
}

static void say_local(struct runner_explain *x, uint16_t port)
{
	char line[512];

	/* Said only when a hostPorts entry would make it work: a port nothing on the host
	 * listens on either is an ordinary refusal. */
	if (netns_listening(0, port) != 1)
		return;
	snprintf(line, sizeof(line),
		 "localhost:%u has no listener in the sandbox; the host has one - allow it with "
		 "egress.hostPorts: [%u] or --host-port %u",
		 port, port, port);
	say(x, "localhost_port", "127.0.0.1", port, "egress.hostPorts", line);
}

/* The refusals of localhost ports waiting to be said: a command that polls for its own
 * server, still starting, is refused too; if the sandbox listens on the port by the
 * time these are judged, nothing is said. When the sandbox has ended (a run's end),
 * the refusal was the last word and is said. */
static void judge_pending(struct runner_explain *x)
{
	for (size_t i = 0; i < x->n_pending; i++)
		if (x->sandbox_pid <= 0 || netns_listening(x->sandbox_pid, x->pending[i]) != 1)
			say_local(x, x->pending[i]);
	x->n_pending = 0;
}

static void on_timer(void *arg)
{
	struct runner_explain *x = arg;

	x->timer = NULL;
	judge_pending(x);
}

/* The sandbox's pid 1, from the pidfd the loop watches: its /proc/PID/net shows the
 * sandbox's own sockets. 0 when unknown. Read at the first refused localhost port,
 * while the sandbox runs, not at the start: most runs never need it. */
static int pidfd_pid(int pidfd)
{
	char path[64], line[128];
	int pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	if (pidfd < 0 || !(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Pid: %d", &pid) == 1)
			break;
	fclose(f);
	return pid > 0 ? pid : 0;
}

static void explain_one(struct runner_explain *x, const struct netns_refusal *r)
{
	char addr[INET6_ADDRSTRLEN], line[512];

	if (seen(x, r))
		return;
	if (r->kind == NETNS_REFUSED_LOCAL_PORT) {
		if (host_port_allowed(x, r->port) || x->n_pending == RUNNER_EXPLAIN_MAX)
			return;
		if (!x->pid_read)
			x->sandbox_pid = pidfd_pid(x->pidfd);
		x->pid_read = true;
		x->pending[x->n_pending++] = r->port;
		if (!x->timer && x->pl)
			x->timer = proxy_timer_add(x->pl, RUNNER_EXPLAIN_WAIT_MS, on_timer, x);
		if (!x->timer)
			judge_pending(x);
		return;
	}
	inet_ntop(r->family, r->addr, addr, sizeof(addr));
	snprintf(line, sizeof(line),
		 "%s%s%s:%u refused: egress is decided by host name, and a connection "
		 "straight to an IP address has none; connect by name (or through the proxy, "
		 "where an address is judged against egress.allowedDomains)",
		 r->family == AF_INET6 ? "[" : "", addr, r->family == AF_INET6 ? "]" : "", r->port);
	say(x, "ip_literal", addr, r->port, "egress.allowedDomains", line);
}

static void drain(struct runner_explain *x)
{
	struct netns_refusal r[32];
	int n;

	/* Bounded: the kernel logs at most NETNS_EXPLAIN_RATE a second (and a burst of
	 * as many), a datagram each. */
	for (int round = 0; round < 8 * NETNS_EXPLAIN_RATE && x->fd >= 0; round++) {
		n = netns_explain_read(x->fd, r, sizeof(r) / sizeof(r[0]));
		if (n < 0 && n != -ENOBUFS)
			break;
		for (int i = 0; i < n; i++)
			explain_one(x, &r[i]);
	}
}

void runner_explain_poll(struct runner_explain *x)
{
	drain(x);
	judge_pending(x); /* a session's call ends: its refusals are said to it */
}

static void on_readable(void *arg, int fd, unsigned events)
{
	(void)fd;
	(void)events;
	drain(arg);
}

int runner_explain_start(struct runner_explain *x, struct proxy_poller *pl)
{
	if (x->fd < 0)
		return 0;
	x->pl = pl;
	return proxy_poller_add(pl, x->fd, PROXY_EV_IN, on_readable, x);
}

void runner_explain_finish(struct runner_explain *x)
{
	if (x->fd < 0)
		return;
	drain(x); /* the command may have ended right after its refused connection */
	judge_pending(x);
	if (x->timer)
		proxy_timer_cancel(x->pl, x->timer);
	x->timer = NULL;
	if (x->pl)
		proxy_poller_del(x->pl, x->fd);
	close(x->fd);
	x->fd = -1;
}
#else
int runner_explain_start(struct runner_explain *x, struct proxy_poller *pl)
{
	(void)x;
	(void)pl;
	return 0;
}

void runner_explain_poll(struct runner_explain *x)
{
	(void)x;
}

void runner_explain_finish(struct runner_explain *x)
{
	(void)x;
}
#endif
