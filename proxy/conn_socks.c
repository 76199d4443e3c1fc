/* The SOCKS5 listener (RFC 1928, no authentication, CONNECT only): greeting, request,
 * then the same Decide → resolve → check → dial path as HTTP, and a tunnel. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "proxy/proxy_int.h"

#define SOCKS_IN_MAX 600 /* a greeting (≤ 257) and a request (≤ 262) */

void socks_answer(struct conn *c, uint8_t rep)
{
	uint8_t out[10];
	int n = proxy_socks_reply(rep, out);

	conn_answer_close(c, out, n > 0 ? (size_t)n : 0);
}

static void parse(struct conn *c)
{
	const uint8_t *in = (const uint8_t *)c->in;
	struct proxy_socks_req req;
	size_t used = 0;

	if (c->st == CS_SOCKS_GREET) {
		enum proxy_socks_result r = proxy_socks_greeting(in, c->in_len, &used);
		static const uint8_t no_auth[2] = {5, 0}, refuse[2] = {5, 0xff};

		if (r == PROXY_SOCKS_NEED_MORE)
			goto more;
		/* With a secret (macOS) only HTTP can carry it: refuse every method. */
		if (r == PROXY_SOCKS_ERROR || c->px->o.auth_secret) {
			conn_answer_close(c, refuse, sizeof(refuse));
			return;
		}
		conn_in_consume(c, used);
		c->st = CS_SOCKS_REQ;
		if (side_send(c, &c->c, no_auth, sizeof(no_auth), NULL) != 0) {
			conn_close(c);
			return;
		}
		if (!c->in_len)
			goto more;
		in = (const uint8_t *)c->in;
	}
	switch (proxy_socks_request(in, c->in_len, &used, &req)) {
	case PROXY_SOCKS_NEED_MORE:
		goto more;
	case PROXY_SOCKS_ERROR:
		conn_timer_clear(c, &c->t_head);
		socks_answer(c, req.reply);
		return;
	case PROXY_SOCKS_OK:
		break;
	}
	conn_timer_clear(c, &c->t_head);
	conn_in_consume(c, used);
	conn_target(c, PROTO_SOCKS5, req.host, strlen(req.host), req.port);
	return;
more:
	if (c->in_len >= SOCKS_IN_MAX) {
		conn_close(c);
		return;
	}
	conn_set_interest(c);
}

void socks_on_client(struct conn *c, unsigned events)
{
	ssize_t n;

	if (side_flush(c, &c->c, NULL) != 0) {
		conn_close(c);
		return;
	}
	if (!(events & (PROXY_EV_IN | PROXY_EV_ERR))) {
		conn_set_interest(c);
		return;
	}
	if (conn_in_reserve(c, SOCKS_IN_MAX - c->in_len) != 0) {
		conn_close(c);
		return;
	}
	do
		n = recv(c->c.fd, c->in + c->in_len, SOCKS_IN_MAX - c->in_len, 0);
	while (n < 0 && errno == EINTR);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
		conn_close(c);
		return;
	}
	if (n > 0) {
		c->in_len += (size_t)n;
		conn_touch(c);
		conn_head_timer_start(c);
	}
	parse(c);
}

void socks_connected(struct conn *c)
{
	uint8_t ok[10];
	int n = proxy_socks_reply(0x00, ok);

	if (side_send(c, &c->c, ok, (size_t)n, NULL) != 0) {
		conn_close(c);
		return;
	}
	hello_start(c); /* the first flight's TLS name is checked as after CONNECT */
}
