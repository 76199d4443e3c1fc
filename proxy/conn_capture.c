/* Captured connections (proxy_proto_captured): a client that ignores the proxy
 * variables looked a name up through the in-sandbox DNS stub, got a fake address,
 * and connected to it; netns/capture.c redirected that connection here. The address
 * it dialled (SO_ORIGINAL_DST) is mapped back to the name, and from there it is a
 * CONNECT to name:port: Decide() with the port, resolution by the supervisor, the
 * address rule, the dial, and the tunnel with its first flight's TLS name checked
 * against the name. A refusal closes the connection (to port 22, with an SSH
 * disconnect naming the rule first); the audit record and the denial line say why. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "proxy/dns.h"
#include "proxy/proxy_int.h"

#if defined(__linux__) && !defined(HALO_PORTABLE)
#include <linux/netfilter_ipv4.h> /* SO_ORIGINAL_DST */

static int original_dst(int fd, struct sockaddr_in *dst)
{
	socklen_t len = sizeof(*dst);

	return getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, dst, &len) == 0 && dst->sin_family == AF_INET
		   ? 0
		   : -1;
}
#else
/* Capture is made by netns/ (Linux): elsewhere no listener of this kind exists. */
static int original_dst(int fd, struct sockaddr_in *dst)
{
	(void)fd;
	(void)dst;
	return -1;
}
#endif

/* The one mapping of a fake address back to its name, for every target a client
 * names (conn_target: CONNECT, SOCKS5, forwarding; http_parse_pending before a
 * forwarded request's rules are judged): any spelling policy_host_parse() reads as
 * that IPv4 address (a trailing dot included) is the name. */
const char *capture_unfake(struct proxy *px, const char *host, size_t *len)
{
	struct policy_host h;
	const char *name;

	if (!px->fake.n || policy_host_parse(host, *len, false, &h, NULL, 0) != 0 ||
	    h.kind != POLICY_HOST_IPV4 || !(name = proxy_fakeip_name(&px->fake, h.addr)))
		return host;
	*len = strlen(name);
	return name;
}

static void captured_deny(struct conn *c, const char *host, unsigned port, const char *rule)
{
	conn_exchange_begin(c, PROTO_CAPTURED, host, strlen(host), port);
	c->st = CS_RESOLVING; /* past the request: the refusal is answered */
	snprintf(c->ex.rule, sizeof(c->ex.rule), "%s", rule);
	conn_fail(c, FAIL_DENY, NULL);
}

static void captured_start(struct conn *c, const struct listener *l)
{
	struct sockaddr_in dst;
	char text[INET_ADDRSTRLEN];
	const char *name;
	unsigned port;

	(void)l;
	if (original_dst(c->c.fd, &dst) != 0) {
		captured_deny(c, "", 0,
			      "captured: no original destination (not a redirected "
			      "connection)");
		return;
	}
	port = ntohs(dst.sin_port);
	inet_ntop(AF_INET, &dst.sin_addr, text, sizeof(text));
	name = proxy_fakeip_name(&c->px->fake, (const uint8_t *)&dst.sin_addr);
	if (!name) {
		captured_deny(c, text, port,
			      "captured: this address was never handed out by halo-run's DNS");
		return;
	}
	conn_target(c, PROTO_CAPTURED, name, strlen(name), port);
}

/* Bytes the client sent first (a TLS hello) are judged as after a CONNECT. */
static void captured_connected(struct conn *c)
{
	hello_start(c);
}

static void captured_on_error(struct conn *c, enum conn_fail why, bool open, const char *detail)
{
	char buf[1200], hp[300], msg[700];
	int n = 0;

	(void)open;
	if (conn_fail_denied(why) && c->ex.port == 22) {
		audit_hostport(&c->ex, hp, sizeof(hp));
		snprintf(msg, sizeof(msg), "halo-run: egress denied: %s (%s)", hp, c->ex.rule);
		n = proxy_ssh_refusal(msg, buf, sizeof(buf));
	} else if (!conn_fail_denied(why) && c->st != CS_REQUEST) {
		audit_error_line(c->px, c->ex.host, c->ex.port,
				 detail ? detail : conn_fail_reason(why), "closed");
	}
	conn_answer_close(c, buf, n > 0 ? (size_t)n : 0);
}

const struct proto_ops proxy_proto_captured = {
    .on_accept = captured_start,
    .on_request = conn_on_client_flush, /* not reached: on_accept leaves CS_REQUEST */
    .on_connected = captured_connected,
    .on_error = captured_on_error,
    .audit_proto = PROTO_CAPTURED,
};
