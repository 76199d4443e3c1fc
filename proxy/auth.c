/* Client credentials for a proxy listener that needs them (the macOS run's host
 * loopback listener, `halo-run proxy` on a non-loopback address): HTTP
 * Proxy-Authorization "Basic base64(user:secret)" (any user name) and SOCKS5's
 * username/password sub-negotiation (RFC 1929) with the secret as password.
 * Pure: parsers of outside input, fuzzed by fuzz_proxy_auth. Secrets are compared in time
 * that depends on the secret's length only, never on where the first difference is. */
#include <string.h>
#include <strings.h>

#include "proxy/proxy_parse.h"

static int b64val(unsigned char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	return ch == '+' ? 62 : ch == '/' ? 63 : -1;
}

/* Standard base64 with optional '=' padding at the end only; 0 for anything else
 * (a byte outside the alphabet, data after padding, no room). */
static size_t b64dec(const char *in, size_t len, char *out, size_t cap)
{
	unsigned acc = 0, bits = 0;
	size_t o = 0, i = 0;

	for (; i < len && in[i] != '='; i++) {
		int v = b64val((unsigned char)in[i]);
		if (v < 0 || o + 1 >= cap)
			return 0;
		acc = acc << 6 | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)(acc >> bits & 0xff);
		}
	}
	for (size_t pad = 0; i < len; i++, pad++)
		if (in[i] != '=' || pad >= 2)
			return 0;
	out[o] = '\0';
	return o;
}

bool proxy_secret_equal(const char *given, size_t glen, const char *secret)
{
	size_t sl = strlen(secret);
	unsigned diff = glen != sl;

	/* Every byte of the secret is looked at whatever was given. */
	for (size_t i = 0; i < sl; i++)
		diff |=
		    (unsigned)((unsigned char)(i < glen ? given[i] : 0) ^ (unsigned char)secret[i]);
	return diff == 0 && sl > 0;
}

bool proxy_auth_basic_ok(const char *value, const char *secret)
{
	char dec[PROXY_AUTH_MAX];
	const char *pw;
	size_t n, vl;

	if (!value || !secret || strncasecmp(value, "Basic ", 6) != 0)
		return false;
	value += 6;
	while (*value == ' ')
		value++;
	vl = strlen(value);
	while (vl && value[vl - 1] == ' ')
		vl--;
	n = b64dec(value, vl, dec, sizeof(dec));
	pw = n ? memchr(dec, ':', n) : NULL;
	if (!pw)
		return false;
	pw++;
	return proxy_secret_equal(pw, n - (size_t)(pw - dec), secret);
}

enum proxy_socks_result proxy_socks_greeting_method(const uint8_t *buf, size_t len, size_t *used,
						    uint8_t method)
{
	*used = 0;
	if (len < 1)
		return PROXY_SOCKS_NEED_MORE;
	if (buf[0] != 5)
		return PROXY_SOCKS_ERROR;
	if (len < 2)
		return PROXY_SOCKS_NEED_MORE;
	if (buf[1] == 0)
		return PROXY_SOCKS_ERROR;
	if (len < 2u + buf[1])
		return PROXY_SOCKS_NEED_MORE;
	*used = 2u + buf[1];
	return memchr(buf + 2, method, buf[1]) ? PROXY_SOCKS_OK : PROXY_SOCKS_ERROR;
}

/* RFC 1929: VER=1 ULEN UNAME PLEN PASSWD, each length 1..255. */
enum proxy_socks_result proxy_socks_userpass(const uint8_t *buf, size_t len, size_t *used,
					     const uint8_t **pass, size_t *plen)
{
	size_t ulen;

	*used = 0;
	*pass = NULL;
	*plen = 0;
	if (len < 1)
		return PROXY_SOCKS_NEED_MORE;
	if (buf[0] != 1)
		return PROXY_SOCKS_ERROR;
	if (len < 2)
		return PROXY_SOCKS_NEED_MORE;
	ulen = buf[1];
	if (ulen == 0)
		return PROXY_SOCKS_ERROR;
	if (len < 3 + ulen)
		return PROXY_SOCKS_NEED_MORE;
	if (buf[2 + ulen] == 0)
		return PROXY_SOCKS_ERROR;
	if (len < 3 + ulen + buf[2 + ulen])
		return PROXY_SOCKS_NEED_MORE;
	*plen = buf[2 + ulen];
	*pass = buf + 3 + ulen;
	*used = 3 + ulen + *plen;
	return PROXY_SOCKS_OK;
}
