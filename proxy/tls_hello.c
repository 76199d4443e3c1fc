/* The first flight of a tunnel: is it a TLS ClientHello, and which name does it carry?
 * (RFC 8446 4.1.2, 5.1; RFC 6066 3; draft-ietf-tls-esni for 0xfe0d.) No MITM: the
 * bytes are only read, then spliced unchanged or refused.
 *
 * Strict and fail closed, like the HTTP parser: whatever two TLS stacks could read
 * differently is refused, so the name checked here is the name the origin reads.
 * - A first byte that is a TLS record type (change_cipher_spec 0x14, alert 0x15,
 *   handshake 0x16, application data 0x17, heartbeat 0x18) or the SSLv2-compatible
 *   ClientHello form (high bit set, third byte 1: OpenSSL's own test) makes the
 *   stream TLS. TLS stacks drop a warning alert or a stray record before the
 *   ClientHello, so whatever precedes the hello is refused, never taken for "not
 *   TLS" and spliced unread. Any other first byte is another protocol (NOT_TLS).
 * - The ClientHello may span several records and arrive in several reads: records are
 *   reassembled up to PROXY_TLS_HELLO_MAX buffered bytes, then refused. Every record
 *   before the end of the hello is a handshake record with version 3.x and a length of
 *   1..2^14; the record that completes it holds nothing after it.
 * - Lengths are consistent at every level (session id ≤ 32, cipher suites even and
 *   non-empty, compression non-empty, extensions filling the body exactly).
 * - An extension type seen twice is refused (RFC 8446 4.2), so two server_name
 *   extensions cannot show one stack one name and another the other; so is a
 *   server_name list with more than one host_name, an entry of another type (none is
 *   defined), an empty name or one with a byte outside visible ASCII. */
#include <stdio.h>
#include <string.h>

#include "policy/policy.h"
#include "proxy/proxy_parse.h"

#define REC_HEADER	5
#define REC_MAX		16384 /* 2^14, RFC 8446 5.1 */
#define HS_HEADER	4
#define HS_CLIENT_HELLO 1
#define EXT_SERVER_NAME 0
#define EXT_ECH		0xfe0d
#define EXT_ESNI	0xffce /* its predecessor (draft-ietf-tls-esni-02..06): the same hole */
#define SNI_HOST_NAME	0

#define ALERT_UNEXPECTED_MESSAGE 10
#define ALERT_RECORD_OVERFLOW	 22
#define ALERT_ILLEGAL_PARAMETER	 47
#define ALERT_DECODE_ERROR	 50

/* why is the audit rule: a malformed hello, or (tls_refuse) a well-formed stream
 * the policy refuses. */
static enum proxy_tls_result fail(struct proxy_tls_hello *h, uint8_t alert, const char *why)
{
	h->alert = alert;
	snprintf(h->why, sizeof(h->why), "malformed ClientHello: %s", why);
	return PROXY_TLS_ERROR;
}

static enum proxy_tls_result tls_refuse(struct proxy_tls_hello *h, uint8_t alert, const char *why,
					const char *what)
{
	h->alert = alert;
	snprintf(h->why, sizeof(h->why), "tls: %s (%s)", why, what);
	return PROXY_TLS_ERROR;
}

const char *proxy_tls_record_name(uint8_t type)
{
	static const char *const names[] = {"change_cipher_spec", "alert", "handshake",
					    "application data", "heartbeat"};

	return type >= 0x14 && type <= 0x18 ? names[type - 0x14] : NULL;
}

static unsigned be16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* A cursor over the reassembled handshake body. */
struct rd {
	const uint8_t *p;
	size_t n;
	bool bad;
};

static const uint8_t *take(struct rd *r, size_t k)
{
	const uint8_t *p = r->p;

	if (r->bad || k > r->n) {
		r->bad = true;
		return NULL;
	}
	r->p += k;
	r->n -= k;
	return p;
}

static unsigned take8(struct rd *r)
{
	const uint8_t *p = take(r, 1);
	return p ? p[0] : 0;
}

static unsigned take16(struct rd *r)
{
	const uint8_t *p = take(r, 2);
	return p ? be16(p) : 0;
}

/* A sub-cursor over a length-prefixed vector of `lenbytes` (1 or 2) bytes. */
static struct rd vec(struct rd *r, int lenbytes)
{
	size_t k = lenbytes == 1 ? take8(r) : take16(r);
	const uint8_t *p = take(r, k);
	struct rd v = {p, p ? k : 0, p == NULL};

	return v;
}

/* ------------------------------------------------------------ server_name */

static enum proxy_tls_result server_name(struct rd *ext, struct proxy_tls_hello *h)
{
	struct rd list = vec(ext, 2);
	bool host_seen = false;

	if (list.bad || ext->n)
		return fail(h, ALERT_DECODE_ERROR, "server_name extension lengths disagree");
	if (list.n == 0)
		return fail(h, ALERT_DECODE_ERROR, "empty server_name list");
	while (list.n) {
		unsigned type = take8(&list);
		struct rd name = vec(&list, 2);

		if (list.bad || name.bad)
			return fail(h, ALERT_DECODE_ERROR, "server_name entry overruns its list");
		if (type != SNI_HOST_NAME)
			return fail(h, ALERT_ILLEGAL_PARAMETER,
				    "server_name entry of a type other than host_name");
		if (host_seen)
			return fail(h, ALERT_ILLEGAL_PARAMETER,
				    "more than one host_name in server_name");
		host_seen = true;
		if (name.n == 0 || name.n >= sizeof(h->sni))
			return fail(h, ALERT_DECODE_ERROR,
				    "host_name empty or longer than 255 bytes");
		for (size_t i = 0; i < name.n; i++)
			if (name.p[i] <= 0x20 || name.p[i] >= 0x7f)
				return fail(h, ALERT_ILLEGAL_PARAMETER,
					    "host_name holds a byte outside visible ASCII");
		memcpy(h->sni, name.p, name.n);
		h->sni[name.n] = '\0';
		h->has_sni = true;
	}
	return PROXY_TLS_HELLO;
}

/* ------------------------------------------------------------ ClientHello */

static enum proxy_tls_result extensions(struct rd *body, struct proxy_tls_hello *h)
{
	uint8_t seen[65536 / 8] = {0};
	struct rd all = vec(body, 2);

	if (all.bad || body->n)
		return fail(h, ALERT_DECODE_ERROR, "extensions do not fill the ClientHello");
	while (all.n) {
		unsigned type = take16(&all);
		struct rd ext = vec(&all, 2);

		if (all.bad || ext.bad)
			return fail(h, ALERT_DECODE_ERROR, "extension overruns the ClientHello");
		if (seen[type / 8] & (1u << (type % 8)))
			return fail(h, ALERT_ILLEGAL_PARAMETER,
				    type == EXT_SERVER_NAME ? "duplicate server_name extension"
							    : "duplicate extension");
		seen[type / 8] |= (uint8_t)(1u << (type % 8));
		if (type == EXT_ECH || type == EXT_ESNI)
			h->ech = true;
		if (type == EXT_SERVER_NAME && server_name(&ext, h) != PROXY_TLS_HELLO)
			return PROXY_TLS_ERROR;
	}
	return PROXY_TLS_HELLO;
}

static enum proxy_tls_result client_hello(const uint8_t *b, size_t n, struct proxy_tls_hello *h)
{
	struct rd body = {b, n, false}, v;
	const uint8_t *ver = take(&body, 2);

	if (!ver || ver[0] != 3)
		return fail(h, ALERT_DECODE_ERROR, "ClientHello version is not 3.x");
	take(&body, 32); /* random */
	v = vec(&body, 1);
	if (v.bad || v.n > 32)
		return fail(h, ALERT_DECODE_ERROR, "session id longer than 32 bytes or cut short");
	v = vec(&body, 2);
	if (v.bad || v.n == 0 || v.n % 2)
		return fail(h, ALERT_DECODE_ERROR, "cipher suites empty, odd or cut short");
	v = vec(&body, 1);
	if (v.bad || v.n == 0)
		return fail(h, ALERT_DECODE_ERROR, "compression methods empty or cut short");
	if (body.n == 0)
		return PROXY_TLS_HELLO; /* no extensions (before TLS 1.2): no name */
	return extensions(&body, h);
}

/* ------------------------------------------------------------ records */

/* Copy the handshake bytes of the records in buf into hs (at most cap). Sets *need to
 * the handshake message's total length once its header is in, and *used to the end of
 * the record that completes it. */
static enum proxy_tls_result reassemble(const uint8_t *buf, size_t len, uint8_t *hs, size_t *hs_len,
					size_t *used, struct proxy_tls_hello *h)
{
	size_t off = 0, need = 0;

	*hs_len = 0;
	while (off + REC_HEADER <= len) {
		const uint8_t *r = buf + off;
		size_t rl = be16(r + 3);

		if (r[0] != 0x16)
			return tls_refuse(
			    h, ALERT_UNEXPECTED_MESSAGE,
			    "record other than handshake before the ClientHello ended",
			    proxy_tls_record_name(r[0]) ? proxy_tls_record_name(r[0])
							: "not a record type");
		if (r[1] != 3 || r[2] > 4)
			return fail(h, ALERT_DECODE_ERROR, "record version is not 3.0-3.4");
		if (rl == 0)
			return fail(h, ALERT_DECODE_ERROR, "empty handshake record");
		if (rl > REC_MAX)
			return fail(h, ALERT_RECORD_OVERFLOW, "record longer than 2^14 bytes");
		if (off + REC_HEADER + rl > PROXY_TLS_HELLO_MAX)
			return fail(h, PROXY_TLS_ALERT_ACCESS_DENIED,
				    "ClientHello larger than 16 KiB");
		if (off + REC_HEADER + rl > len)
			return PROXY_TLS_NEED_MORE;
		memcpy(hs + *hs_len, r + REC_HEADER, rl);
		*hs_len += rl;
		off += REC_HEADER + rl;
		if (!need && *hs_len >= HS_HEADER) {
			if (hs[0] != HS_CLIENT_HELLO)
				return fail(h, ALERT_UNEXPECTED_MESSAGE,
					    "first handshake message is not a ClientHello");
			need = HS_HEADER + ((size_t)hs[1] << 16 | (size_t)hs[2] << 8 | hs[3]);
			if (need > PROXY_TLS_HELLO_MAX - REC_HEADER)
				return fail(h, PROXY_TLS_ALERT_ACCESS_DENIED,
					    "ClientHello larger than 16 KiB");
		}
		if (need && *hs_len >= need) {
			if (*hs_len > need)
				return fail(h, ALERT_UNEXPECTED_MESSAGE,
					    "bytes after the ClientHello in its record");
			*used = off;
			return PROXY_TLS_HELLO;
		}
	}
	return len >= PROXY_TLS_HELLO_MAX
		   ? fail(h, PROXY_TLS_ALERT_ACCESS_DENIED, "ClientHello larger than 16 KiB")
		   : PROXY_TLS_NEED_MORE;
}

/* The SSLv2-compatible ClientHello (RFC 5246 E.2): a two-byte header with the high
 * bit set, msg_type 1, version 3.x, then three lengths that fill the message. It has
 * no extensions, so no name: the name rule decides. */
static enum proxy_tls_result sslv2_hello(const uint8_t *b, size_t len, struct proxy_tls_hello *h)
{
	size_t n = ((size_t)(b[0] & 0x7f) << 8 | b[1]) + 2, specs, sid, chal;

	if (len < 11)
		return PROXY_TLS_NEED_MORE;
	if (b[3] != 3)
		return fail(h, ALERT_DECODE_ERROR, "SSLv2-compatible hello version is not 3.x");
	specs = be16(b + 5), sid = be16(b + 7), chal = be16(b + 9);
	if (specs == 0 || specs % 3 || (sid != 0 && sid != 16) || chal < 16 || chal > 32 ||
	    n != 11 + specs + sid + chal)
		return fail(h, ALERT_DECODE_ERROR, "SSLv2-compatible hello lengths disagree");
	if (n > PROXY_TLS_HELLO_MAX)
		return fail(h, PROXY_TLS_ALERT_ACCESS_DENIED, "ClientHello larger than 16 KiB");
	if (len < n)
		return PROXY_TLS_NEED_MORE;
	h->used = n;
	h->sslv2 = true;
	return PROXY_TLS_HELLO;
}

enum proxy_tls_result proxy_tls_hello_parse(const uint8_t *buf, size_t len,
					    struct proxy_tls_hello *h)
{
	uint8_t hs[PROXY_TLS_HELLO_MAX];
	size_t hs_len = 0, used = 0;
	enum proxy_tls_result r;

	memset(h, 0, sizeof(*h));
	if (len == 0)
		return PROXY_TLS_NEED_MORE;
	if (buf[0] & 0x80) { /* OpenSSL's test for the SSLv2 form: the third byte is 1 */
		if (len < 3)
			return PROXY_TLS_NEED_MORE;
		return buf[2] == 1 ? sslv2_hello(buf, len, h) : PROXY_TLS_NOT_TLS;
	}
	if (!proxy_tls_record_name(buf[0]))
		return PROXY_TLS_NOT_TLS;
	if (buf[0] != 0x16)
		return tls_refuse(h, ALERT_UNEXPECTED_MESSAGE, "record before ClientHello",
				  proxy_tls_record_name(buf[0]));
	r = reassemble(buf, len, hs, &hs_len, &used, h);
	if (r != PROXY_TLS_HELLO)
		return r;
	r = client_hello(hs + HS_HEADER, hs_len - HS_HEADER, h);
	if (r == PROXY_TLS_HELLO)
		h->used = used;
	else
		h->has_sni = false, h->ech = false, h->sni[0] = '\0';
	return r;
}

/* ------------------------------------------------------------ the rule */

bool proxy_tls_sni_allowed(const char *target, const struct proxy_tls_hello *h, char *rule,
			   size_t n)
{
	struct policy_host sni, t;
	char why[128];

	if (!h->has_sni) {
		/* No name: the origin serves its default site, which need not be the
		 * target's. Only a target given as an address names no site at all. */
		if (policy_host_parse(target, strlen(target), true, &t, why, sizeof(why)) == 0 &&
		    t.kind != POLICY_HOST_NAME)
			return true;
		snprintf(rule, n, "tls: ClientHello without SNI for a host allowed by name");
		return false;
	}
	if (h->sni[strlen(h->sni) - 1] == '.') {
		/* RFC 6066 names have no trailing dot; an origin that keeps it matches none
		 * of its names (OpenSSL's servername compare, HAProxy's req.ssl_sni) and
		 * serves its default site, as for no name at all. */
		snprintf(rule, n,
			 "tls: SNI ends with a dot: %.200s (an origin that keeps the dot serves "
			 "its default site)",
			 h->sni);
		return false;
	}
	if (policy_host_parse(h->sni, strlen(h->sni), true, &sni, why, sizeof(why)) == 0 &&
	    strcmp(sni.text, target) == 0)
		return true;
	snprintf(rule, n, "sni mismatch: %s", h->sni);
	return false;
}

bool proxy_tls_splice_allowed(const char *target, const struct proxy_tls_hello *h, char *rule,
			      size_t n)
{
	if (!proxy_tls_sni_allowed(target, h, rule, n))
		return false;
	if (h->ech) {
		snprintf(rule, n,
			 "tls: encrypted_client_hello (ECH): the origin may serve the encrypted "
			 "inner name, which cannot be checked");
		return false;
	}
	return true;
}

int proxy_tls_alert(uint8_t desc, uint8_t out[7])
{
	static const uint8_t head[5] = {0x15, 0x03, 0x03, 0x00, 0x02};

	memcpy(out, head, sizeof(head));
	out[5] = 2; /* fatal */
	out[6] = desc;
	return 7;
}
