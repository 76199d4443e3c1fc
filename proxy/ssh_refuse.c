/* What a refused SSH connection is told, so that OpenSSH prints halo-run's reason
 * instead of "Connection closed by remote host": our identification string, then one
 * unencrypted SSH_MSG_DISCONNECT packet (RFC 4253 4.2, 6 and 11.1). Before key
 * exchange a packet has no MAC and the identity cipher, and a client reads a
 * disconnect at any point: it logs "Received disconnect from ...: <description>".
 * Sent after the 403 head of a refused CONNECT to port 22 (a ProxyCommand passes the
 * rest on), or as the whole answer to a refused captured connection to port 22. */
#include <stdint.h>
#include <string.h>

#include "proxy/proxy_int.h"

#define SSH_MSG_DISCONNECT			   1
#define SSH_DISCONNECT_HOST_NOT_ALLOWED_TO_CONNECT 1
#define SSH_IDENT				   "SSH-2.0-halo-run\r\n"
#define SSH_DESC_MAX				   400

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

int proxy_ssh_refusal(const char *why, char *out, size_t cap)
{
	size_t il = sizeof(SSH_IDENT) - 1, dl = strlen(why), payload, pad, plen, total;
	uint8_t *p;

	if (dl > SSH_DESC_MAX)
		dl = SSH_DESC_MAX;
	/* type, reason code, description, language tag (empty) */
	payload = 1 + 4 + 4 + dl + 4;
	/* packet_length (4) + padding_length (1) + payload + padding: a multiple of 8,
	 * with at least 4 bytes of padding. */
	pad = 8 - (5 + payload) % 8;
	if (pad < 4)
		pad += 8;
	plen = 1 + payload + pad;
	total = il + 4 + plen;
	if (total > cap)
		return -1;
	memcpy(out, SSH_IDENT, il);
	p = (uint8_t *)out + il;
	put32(p, (uint32_t)plen);
	p[4] = (uint8_t)pad;
	p[5] = SSH_MSG_DISCONNECT;
	put32(p + 6, SSH_DISCONNECT_HOST_NOT_ALLOWED_TO_CONNECT);
	put32(p + 10, (uint32_t)dl);
	/* Printable ASCII only: the client prints it on the user's terminal. */
	for (size_t i = 0; i < dl; i++)
		p[14 + i] = (uint8_t)(why[i] >= 0x20 && why[i] < 0x7f ? why[i] : '?');
	put32(p + 14 + dl, 0);
	memset(p + 18 + dl, 0, pad);
	return (int)total;
}
