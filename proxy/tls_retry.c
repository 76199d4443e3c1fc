/* Every ClientHello is checked: a HelloRetryRequest (RFC 8446 4.1.4) makes the client
 * send a second ClientHello, and an origin that hosts several names reads the name of
 * that second one. Two pure pieces, for conn_hello.c:
 * - the server's side, fed as it flows to the client (never held): is its first
 *   handshake message a ServerHello carrying the HelloRetryRequest random? Alert
 *   records before it are stepped over; anything else ends the watch, which also ends
 *   after PROXY_TLS_SRV_WATCH_MAX bytes, so a tunnel never copies for long.
 * - the client's side after a HelloRetryRequest: the one change_cipher_spec record
 *   TLS 1.3's middlebox compatibility mode puts there (RFC 8446 D.4), then the second
 *   ClientHello, parsed whole by proxy_tls_hello_parse. Any other record (an alert,
 *   application data: early data after a HelloRetryRequest is not allowed, 4.2.10) is
 *   refused and named. */
#include <stdio.h>
#include <string.h>

#include "proxy/proxy_parse.h"

#define REC_HEADER	 5
#define HS_SERVER_HELLO	 2
#define ALERT_UNEXPECTED 10
#define ALERT_DECODE	 50
#define SH_RANDOM_OFFSET 6 /* type, length[3], legacy_version[2] */
#define REC_ALERT	 0x15
#define REC_HANDSHAKE	 0x16
#define REC_CCS		 0x14

static const uint8_t hrr_random[32] = {
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c};

/* A record header is in: keep watching its body, or end the watch. */
static enum proxy_tls_srv srv_header(struct proxy_tls_srv_scan *s)
{
	if ((s->hdr[0] != REC_HANDSHAKE && s->hdr[0] != REC_ALERT) || s->hdr[1] != 3)
		return PROXY_TLS_SRV_DONE; /* not TLS, or no handshake to come first */
	s->left = (size_t)s->hdr[3] << 8 | s->hdr[4];
	if (s->left == 0)
		s->hdr_len = 0;
	return PROXY_TLS_SRV_MORE;
}

/* Handshake bytes of the server's first message: decide once 38 are in. */
static enum proxy_tls_srv srv_hs(struct proxy_tls_srv_scan *s)
{
	if (s->hs_len >= 1 && s->hs[0] != HS_SERVER_HELLO)
		return PROXY_TLS_SRV_DONE;
	if (s->hs_len < sizeof(s->hs))
		return PROXY_TLS_SRV_MORE;
	return memcmp(s->hs + SH_RANDOM_OFFSET, hrr_random, sizeof(hrr_random)) == 0
		   ? PROXY_TLS_SRV_HRR
		   : PROXY_TLS_SRV_DONE;
}

enum proxy_tls_srv proxy_tls_srv_feed(struct proxy_tls_srv_scan *s, const uint8_t *p, size_t n)
{
	if (s->res == PROXY_TLS_SRV_MORE && n > PROXY_TLS_SRV_WATCH_MAX - s->seen)
		n = PROXY_TLS_SRV_WATCH_MAX - s->seen; /* the rest is not looked at */
	while (n && s->res == PROXY_TLS_SRV_MORE) {
		size_t k;

		if (s->hdr_len < REC_HEADER) {
			k = REC_HEADER - s->hdr_len < n ? REC_HEADER - s->hdr_len : n;
			memcpy(s->hdr + s->hdr_len, p, k);
			s->hdr_len += k;
			if (s->hdr_len == REC_HEADER)
				s->res = srv_header(s);
		} else {
			k = s->left < n ? s->left : n;
			if (s->hdr[0] == REC_HANDSHAKE) {
				size_t room = sizeof(s->hs) - s->hs_len, c = k < room ? k : room;

				memcpy(s->hs + s->hs_len, p, c);
				s->hs_len += c;
				s->res = srv_hs(s);
			}
			s->left -= k;
			if (s->left == 0)
				s->hdr_len = 0;
		}
		p += k, n -= k, s->seen += k;
	}
	if (s->res == PROXY_TLS_SRV_MORE && s->seen >= PROXY_TLS_SRV_WATCH_MAX)
		s->res = PROXY_TLS_SRV_DONE;
	return s->res;
}

static enum proxy_tls_result retry_refuse(struct proxy_tls_hello *h, uint8_t alert,
					  const char *what)
{
	memset(h, 0, sizeof(*h));
	h->alert = alert;
	snprintf(h->why, sizeof(h->why),
		 "tls: record after HelloRetryRequest other than ClientHello (%s)", what);
	return PROXY_TLS_ERROR;
}

/* The middlebox-compatibility record, exactly: 14 03 0x 00 01 01. */
static enum proxy_tls_result ccs(const uint8_t *b, size_t len, struct proxy_tls_hello *h)
{
	static const uint8_t want[6] = {REC_CCS, 3, 0, 0, 1, 1};

	for (size_t i = 0; i < len && i < sizeof(want); i++)
		if (i != 2 ? b[i] != want[i] : b[i] < 1 || b[i] > 4)
			return retry_refuse(h, ALERT_DECODE, "malformed change_cipher_spec");
	return len < sizeof(want) ? PROXY_TLS_NEED_MORE : PROXY_TLS_HELLO;
}

enum proxy_tls_result proxy_tls_retry_parse(const uint8_t *buf, size_t len,
					    struct proxy_tls_hello *h)
{
	size_t off = 0;
	enum proxy_tls_result r;
	const char *name;

	memset(h, 0, sizeof(*h));
	if (len && buf[0] == REC_CCS) {
		if ((r = ccs(buf, len, h)) != PROXY_TLS_HELLO)
			return r;
		off = 6;
	}
	if (off == len)
		return PROXY_TLS_NEED_MORE;
	if (buf[off] != REC_HANDSHAKE) {
		name = proxy_tls_record_name(buf[off]);
		return retry_refuse(
		    h, ALERT_UNEXPECTED,
		    name ? name
			 : (buf[off] & 0x80 ? "SSLv2-compatible hello or not TLS" : "not TLS"));
	}
	r = proxy_tls_hello_parse(buf + off, len - off, h);
	if (r == PROXY_TLS_NEED_MORE && len >= PROXY_TLS_HELLO_MAX) {
		memset(h, 0, sizeof(*h));
		h->alert = PROXY_TLS_ALERT_ACCESS_DENIED;
		snprintf(h->why, sizeof(h->why),
			 "malformed ClientHello: ClientHello larger than 16 KiB");
		return PROXY_TLS_ERROR;
	}
	if (r == PROXY_TLS_HELLO)
		h->used += off;
	return r;
}
