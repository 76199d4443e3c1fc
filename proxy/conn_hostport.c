/* egress.hostPorts (proxy_proto_hostport): a connection accepted on a host-port
 * listener (made inside the sandbox's namespace on 127.0.0.1:P and [::1]:P) is a
 * tunnel that needs no request.
 * Listing the port is the permission, so there is no host to Decide() on and no
 * address check: the supervisor dials the host's 127.0.0.1:P, then [::1]:P, from its
 * own namespace, and relays. Each connection is one audited exchange. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proxy/proxy_int.h"

static void hostport_start(struct conn *c, const struct listener *l)
{
	unsigned port = l->port;
	/* 127.0.0.1 first: most host services bind it, and a v6-only one still answers
	 * on the second try. */
	struct proxy_addr a[2] = {{.family = AF_INET, .addr = {127, 0, 0, 1}},
				  {.family = AF_INET6, .addr = {[15] = 1}}};

	conn_exchange_begin(c, PROTO_HOSTPORT, "localhost", strlen("localhost"), port);
	c->ex.allow = true;
	snprintf(c->ex.rule, sizeof(c->ex.rule), "egress.hostPorts[%zu] %u", l->index, port);
	c->st = CS_CONNECTING;
	conn_dial(c, a, 2);
}

/* Nothing to answer in a protocol we do not speak: close the client's connection
 * (a FIN after draining what it sent, not a reset), and say why once per port (the
 * audit has every attempt). */
static void hostport_fail(struct conn *c, enum conn_fail why, bool open, const char *detail)
{
	const struct exchange *ex = &c->ex;
	struct proxy *px = c->px;
	char line[400];
	int n;

	/* The record has them all; the line says ex->error. */
	(void)why;
	(void)open;
	(void)detail;
	if (px->o.log_fd >= 0 && !px->o.quiet && hosts_first_exchange_error(px, ex)) {
		n = snprintf(line, sizeof(line),
			     "halo-run: host port %u (%s): %s on the host's 127.0.0.1:%u and "
			     "[::1]:%u%s; the sandbox's connection is closed\n",
			     ex->port, ex->rule, ex->error ? ex->error : "failed", ex->port,
			     ex->port,
			     ex->error && strcmp(ex->error, "connection refused") == 0
				 ? " (is the service running?)"
				 : "");
		if (n > 0) {
			ssize_t w = write(px->o.log_fd, line,
					  (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
			(void)w;
		}
	}
	conn_answer_close(c, NULL, 0);
}

/* No request, no answer: bytes flow from the first one. */
static void hostport_connected(struct conn *c)
{
	tunnel_start(c);
}

const struct proto_ops proxy_proto_hostport = {
    .on_accept = hostport_start,
    .on_request = conn_on_client_flush, /* not reached: on_accept leaves CS_REQUEST */
    .on_connected = hostport_connected,
    .on_error = hostport_fail,
    .audit_proto = PROTO_HOSTPORT,
};
