/* SOCKS5 (RFC 1928) greeting and request parsers, no authentication, CONNECT only.
 *
 * Decisions, all fail closed:
 * - A request is refused as soon as its first bytes show it: a bad VER or non-zero RSV
 *   with 01 (general failure: the request is malformed, no code names that better),
 *   BIND, UDP ASSOCIATE or any other command with 07, an unknown ATYP with 08.
 * - A domain must be 1..255 bytes of visible ASCII: a zero length, NUL, a control byte,
 *   a space or a non-ASCII byte is 01. The address type is supported, the name is
 *   malformed; Decide() never sees a name that logs or compares ambiguously.
 * - Port 0 is 01: nothing can be connected to there.
 * - IPv4 and IPv6 addresses are also given as text (inet_ntop) so that Decide() and the
 *   logs treat them like literals sent over HTTP. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "proxy/proxy_parse.h"

#define SOCKS_VER 5

enum proxy_socks_result proxy_socks_greeting(const uint8_t *buf, size_t len, size_t *used)
{
	*used = 0;
	if (len < 1)
		return PROXY_SOCKS_NEED_MORE;
	if (buf[0] != SOCKS_VER)
		return PROXY_SOCKS_ERROR;
	if (len < 2)
		return PROXY_SOCKS_NEED_MORE;
	size_t n = buf[1];
	if (n == 0)
		return PROXY_SOCKS_ERROR;
	if (len < 2 + n)
		return PROXY_SOCKS_NEED_MORE;
	*used = 2 + n;
	return memchr(buf + 2, 0x00, n) ? PROXY_SOCKS_OK : PROXY_SOCKS_ERROR;
}

static enum proxy_socks_result refuse(struct proxy_socks_req *req, uint8_t reply, const char *why)
{
	req->reply = reply;
	snprintf(req->why, sizeof(req->why), "%s", why);
	return PROXY_SOCKS_ERROR;
}

static const struct {
	uint8_t cmd;
	const char *why;
} refused_cmds[] = {
    {2, "SOCKS5 BIND is not supported"},
    {3, "SOCKS5 UDP ASSOCIATE is not supported"},
};

/* VER CMD RSV ATYP, checked byte by byte as they arrive. */
static enum proxy_socks_result check_fixed(const uint8_t *buf, size_t len,
					   struct proxy_socks_req *req)
{
	if (len >= 1 && buf[0] != SOCKS_VER)
		return refuse(req, 0x01, "not a SOCKS5 request (VER is not 5)");
	if (len >= 2 && buf[1] != 1) {
		for (size_t i = 0; i < sizeof(refused_cmds) / sizeof(refused_cmds[0]); i++)
			if (refused_cmds[i].cmd == buf[1])
				return refuse(req, 0x07, refused_cmds[i].why);
		return refuse(req, 0x07, "unknown SOCKS5 command");
	}
	if (len >= 3 && buf[2] != 0)
		return refuse(req, 0x01, "SOCKS5 RSV byte is not 0");
	if (len >= 4 && buf[3] != PROXY_SOCKS_IPV4 && buf[3] != PROXY_SOCKS_DOMAIN &&
	    buf[3] != PROXY_SOCKS_IPV6)
		return refuse(req, 0x08, "unknown SOCKS5 address type");
	return len >= 4 ? PROXY_SOCKS_OK : PROXY_SOCKS_NEED_MORE;
}

static enum proxy_socks_result take_domain(const uint8_t *name, size_t n,
					   struct proxy_socks_req *req)
{
	if (n == 0)
		return refuse(req, 0x01, "empty SOCKS5 domain name");
	for (size_t i = 0; i < n; i++) {
		if (name[i] == 0)
			return refuse(req, 0x01, "NUL byte in the SOCKS5 domain name");
		if (name[i] <= 0x20 || name[i] >= 0x7f)
			return refuse(req, 0x01,
				      "SOCKS5 domain name contains a byte outside visible ASCII");
	}
	memcpy(req->host, name, n);
	req->host[n] = '\0';
	return PROXY_SOCKS_OK;
}

/* A refused name as the audit shows it: printable, and nothing in it reads as an
 * escape the name did not need. */
static void show_name(const uint8_t *name, size_t n, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		char esc[5];
		size_t el = 1;

		esc[0] = (char)name[i];
		if (name[i] <= 0x20 || name[i] >= 0x7f || name[i] == '\\')
			el = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", name[i]);
		if (o + el >= cap)
			break;
		memcpy(out + o, esc, el);
		o += el;
	}
	out[o] = '\0';
}

enum proxy_socks_result proxy_socks_request(const uint8_t *buf, size_t len, size_t *used,
					    struct proxy_socks_req *req)
{
	enum proxy_socks_result r;
	size_t alen, off = 4;

	*used = 0;
	memset(req, 0, sizeof(*req));
	if ((r = check_fixed(buf, len, req)) != PROXY_SOCKS_OK)
		return r;
	req->cmd = buf[1];
	req->atyp = (enum proxy_socks_atyp)buf[3];
	if (req->atyp == PROXY_SOCKS_IPV4) {
		alen = 4;
	} else if (req->atyp == PROXY_SOCKS_IPV6) {
		alen = 16;
	} else {
		if (len < 5)
			return PROXY_SOCKS_NEED_MORE;
		alen = buf[4];
		off = 5;
		if (alen == 0)
			return refuse(req, 0x01, "empty SOCKS5 domain name");
	}
	if (len < off + alen + 2)
		return PROXY_SOCKS_NEED_MORE;
	if (req->atyp == PROXY_SOCKS_DOMAIN) {
		if (take_domain(buf + off, alen, req) != PROXY_SOCKS_OK) {
			show_name(buf + off, alen, req->shown, sizeof(req->shown));
			req->port = (unsigned)buf[off + alen] << 8 | buf[off + alen + 1];
			return PROXY_SOCKS_ERROR;
		}
	} else {
		memcpy(req->addr, buf + off, alen);
		inet_ntop(alen == 4 ? AF_INET : AF_INET6, req->addr, req->host, sizeof(req->host));
	}
	req->port = (unsigned)buf[off + alen] << 8 | buf[off + alen + 1];
	if (req->port == 0)
		return refuse(req, 0x01, "SOCKS5 port 0");
	*used = off + alen + 2;
	return PROXY_SOCKS_OK;
}

int proxy_socks_reply(uint8_t rep, uint8_t out[10])
{
	static const uint8_t tmpl[10] = {SOCKS_VER, 0, 0, 1, 0, 0, 0, 0, 0, 0};

	memcpy(out, tmpl, sizeof(tmpl));
	out[1] = rep;
	return 10;
}
