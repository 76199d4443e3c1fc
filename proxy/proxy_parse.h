/* Pure parsers of the proxy's outside input: HTTP/1.1 request heads (CONNECT and
 * absolute-form forwarding), SOCKS5, and a tunnel's first TLS ClientHello. No I/O: the event loop
 * feeds bytes in and acts on the result. Every parser has a hostile-input table and a fuzz target.
 */
#ifndef HALO_PROXY_PARSE_H
#define HALO_PROXY_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROXY_HTTP_MAX_LINE   8192  /* request line */
#define PROXY_HTTP_MAX_HEAD   16384 /* whole head, request line included */
#define PROXY_HTTP_MAX_FIELDS 100

/* ------------------------------------------------------------------ HTTP */

enum proxy_http_result {
	PROXY_HTTP_NEED_MORE = 0, /* no complete head yet, and no limit exceeded */
	PROXY_HTTP_OK = 1,	  /* a complete, acceptable head */
	PROXY_HTTP_ERROR = -1,	  /* refuse with req->status and req->why */
};

enum proxy_http_kind {
	PROXY_HTTP_CONNECT, /* CONNECT host:port HTTP/1.1 */
	PROXY_HTTP_FORWARD, /* METHOD http://host[:port]/path HTTP/1.x */
	PROXY_HTTP_ORIGIN,  /* METHOD /path HTTP/1.x inside a terminated TLS tunnel */
};

struct proxy_http_field {
	const char *name; /* points into the caller's buffer; not NUL-terminated */
	size_t name_len;
	const char *value; /* trimmed of optional whitespace */
	size_t value_len;
};

struct proxy_http_req {
	enum proxy_http_kind kind;
	char method[32];
	char host[256]; /* target host exactly as sent (Decide() normalises it); v6 without [] */
	bool host_is_v6_literal;
	unsigned port;			/* CONNECT: required; FORWARD: default 80 */
	char path[PROXY_HTTP_MAX_LINE]; /* FORWARD: origin-form "/..." (at least "/") */
	int version_minor;		/* HTTP/1.0 → 0, HTTP/1.1 → 1 */
	size_t head_len;		/* bytes of the head including the final CRLFCRLF */
	struct proxy_http_field fields[PROXY_HTTP_MAX_FIELDS];
	size_t n_fields;
	bool has_body; /* Content-Length > 0 or chunked (FORWARD only) */
	bool chunked;  /* Transfer-Encoding: chunked (FORWARD, HTTP/1.1 only) */
	unsigned long long content_length;
	bool keep_alive;      /* client wants the connection kept (1.1 default) */
	char proxy_auth[256]; /* Proxy-Authorization value, if any (macOS secret) */
	int status;	      /* on ERROR: 400, 405, 414, 431, 501, 505 ... */
	char why[160];	      /* on ERROR: one line for the body and the log */
};

/* Parse the head at the start of buf[0..len). Strict: request line 8 KiB, head 16 KiB,
 * 100 fields; refuses NUL and bare CR anywhere in the head, obs-fold, a field name
 * with whitespace before the colon, any Transfer-Encoding but one field whose value is
 * exactly "chunked" in an HTTP/1.1 request to forward (400: in a CONNECT, in HTTP/1.0,
 * together with Content-Length, duplicated, another coding), duplicate or
 * non-numeric Content-Length, a Host header
 * that disagrees with the target, userinfo in the target, a non-http scheme in
 * absolute form (https:// must use CONNECT), origin-form requests (not a proxy
 * request → 400), versions other than HTTP/1.0 and 1.1 (505). */
enum proxy_http_result proxy_http_parse(const char *buf, size_t len, struct proxy_http_req *req);

/* The same for an origin-form request inside a tunnel whose TLS the proxy terminates
 * (kind PROXY_HTTP_ORIGIN): host and port are the tunnel's (canonical); the Host header
 * is required in HTTP/1.1 and must name that host; CONNECT is refused (405). */
enum proxy_http_result proxy_http_parse_origin(const char *buf, size_t len, const char *host,
					       unsigned port, struct proxy_http_req *req);

/* The head sent to the origin of a terminated tunnel (http_origin.c): the request
 * line rebuilt, hop-by-hop fields dropped (Connection and the fields it names,
 * Keep-Alive, Proxy-*, TE, Trailer, Upgrade: no protocol switch past the rules), every
 * field named cred_header dropped and, when cred_header is not NULL, Accept-Encoding
 * replaced by "identity" (the response is scanned for the credential) and
 * "cred_header: cred_value" added. Content-Length kept, Transfer-Encoding written as
 * "chunked" (the body is re-framed canonically); a request with a body gets
 * "Connection: close" (it is the connection's last). Returns
 * bytes written (NUL-terminated) or -ENOSPC, -EINVAL. */
int proxy_http_origin_head(const char *buf, const struct proxy_http_req *req,
			   const char *cred_header, const char *cred_value, char *out,
			   size_t outlen);

/* A request asking to switch protocols (an Upgrade field: WebSocket, h2c) inside a
 * terminated tunnel: refused (501) with this why, since what follows the switch could
 * not be judged or masked; NULL when it asks for none. */
const char *proxy_http_upgrade_refused(const struct proxy_http_req *req);

/* A request whose method carries no body (GET, HEAD, OPTIONS, DELETE) that has one
 * (Content-Length > 0 or chunked): refused to hosts under egress.requestRules, since
 * an origin that ignores the length would read the body as a second request the
 * rules never judged. Returns the why (for a 400), or NULL. */
const char *proxy_http_body_refused(const struct proxy_http_req *req);

/* Rewrite a FORWARD request head for the origin: origin-form request line with the
 * client's HTTP version, hop-by-hop fields dropped (Connection and the fields it names,
 * Keep-Alive, Proxy-Connection, Proxy-Authorization, Proxy-Authenticate, TE, Trailer,
 * Transfer-Encoding, Upgrade), Host kept or added first when absent, and
 * "Connection: close" last: one origin connection per request, so the origin ends its
 * response with EOF. The client side may stay keep-alive (its next request is parsed
 * and decided again) only where the forwarder can tell where the response ends
 * (Content-Length or chunked framing in the response head); a close-delimited
 * response means closing the client too. buf is the buffer the head was parsed from.
 * Writes into
 * out (NUL-terminated); returns bytes written, -ENOSPC, or -EINVAL (not a FORWARD
 * request, or fields outside buf). */
int proxy_http_rewrite(const char *buf, const struct proxy_http_req *req, char *out, size_t outlen);

/* ------------------------------------------------- field lines (http_field.c) */

/* The largest body size either direction accepts, as Content-Length or as one chunk:
 * 2^53, the largest integer every JSON reader and every double-based parser on the
 * way holds exactly. */
#define PROXY_HTTP_SIZE_MAX (1ULL << 53)

/* a[0..an) equals the NUL-terminated b but for ASCII case. */
bool proxy_http_ieq(const char *a, size_t an, const char *b);
/* A Content-Length value v[0..n) (one element, trimmed), for requests and responses
 * alike: 1*DIGIT without leading zeros, at most PROXY_HTTP_SIZE_MAX. NULL with *out
 * set, or why ("Content-Length is not a decimal number", "... has leading zeros",
 * "... larger than 2^53"). */
const char *proxy_http_content_length(const char *v, size_t n, unsigned long long *out);

bool proxy_http_tchar(unsigned char c); /* RFC 9110 tchar */
bool proxy_http_token(const char *s, size_t n);
/* One field line p[0..n) (no CRLF) split into name and trimmed value; NULL, or why
 * it is refused (no colon, empty name, whitespace before the colon, a name that is not
 * a token or reads as Content-Length/Transfer-Encoding once '_' is '-', a control byte
 * in the value). */
const char *proxy_http_split_field(const char *p, size_t n, struct proxy_http_field *f);

/* Under request rules: a request field that would make the origin run another method
 * or path than the one judged (policy_request_override_field) turns an allowed
 * decision into a denial naming it. d->applies false: unchanged. */
struct policy_request_decision;
void proxy_http_rules_override(const struct proxy_http_req *req, const char *host,
			       struct policy_request_decision *d);

/* Next element of a comma-separated field value (RFC 9110 5.6.1), optional whitespace
 * trimmed and empty elements skipped; *pos starts at 0. False at the end. */
bool proxy_http_list_next(const char *v, size_t n, size_t *pos, const char **elem,
			  size_t *elem_len);

/* A complete response head for a refusal: status line, Content-Type text/plain,
 * Content-Length, Connection: close, X-Halo-Deny (deny_header != NULL) for a denial or
 * X-Halo-Error (error_header != NULL) for any other answer of the proxy's own, and a
 * one-line body. Returns bytes written or -ENOSPC. */
int proxy_http_error(int status, const char *body_line, const char *deny_header,
		     const char *error_header, char *out, size_t outlen);

/* ---------------------------------- the chunk-size line (http_chunk_line.c) */

/* One grammar for both directions (the client's request bodies, http_chunked.c; the
 * origin's response bodies, resp.c): chunk-size is 1 to 16 hex digits, at most
 * PROXY_HTTP_SIZE_MAX, no sign, no "0x", no whitespace before it nor after it unless an
 * extension follows; extensions follow RFC 9112 7.1.1 exactly (BWS ";" BWS token
 * [BWS "=" BWS (token / quoted-string)]); the line, extensions included, is shorter
 * than PROXY_CHUNK_MAX_LINE; it ends with CRLF (a bare LF, a NUL or any other control
 * byte is refused). Zero-initialised to start a line. */
struct proxy_chunk_line {
	int st;
	unsigned long long size;
	unsigned digits;
	size_t len;
};
enum proxy_chunk_line_result {
	PROXY_CHUNK_LINE_MORE = 0, /* the byte belongs to the line */
	PROXY_CHUNK_LINE_CR = 1,   /* the CR that ends it: the caller wants the LF next */
	PROXY_CHUNK_LINE_BAD = -1, /* refused: *why says why */
};
/* One byte of the line (before its CR, and the CR itself). On CR, l->size is the
 * chunk's size; start the next line with a zeroed struct. */
enum proxy_chunk_line_result proxy_chunk_line_byte(struct proxy_chunk_line *l, unsigned char c,
						   const char **why);

/* ------------------------------------------- chunked bodies (http_chunked.c) */

#define PROXY_CHUNK_MAX_LINE	      4096 /* a chunk-size line, extensions included */
#define PROXY_CHUNK_MAX_TRAILERS      32
#define PROXY_CHUNK_MAX_TRAILER_BYTES 4096 /* the whole trailer section */
#define PROXY_CHUNK_SLACK	      32   /* out may exceed in by this much per feed */

enum proxy_chunk_result {
	PROXY_CHUNK_MORE = 0,  /* all input taken, the body goes on */
	PROXY_CHUNK_DONE = 1,  /* the body ended; input past *used is the next request */
	PROXY_CHUNK_ERROR = -1 /* refuse with 400 and ck->why */
};

/* Decoder state; zero-initialised to start a body. */
struct proxy_chunked {
	int st;
	bool done, error;
	struct proxy_chunk_line sl; /* the current size line */
	unsigned long long left;    /* data left in the chunk */
	size_t tbytes, trailers;    /* the trailer section so far */
	size_t tlen;		    /* bytes of the current trailer line */
	char tline[PROXY_CHUNK_MAX_TRAILER_BYTES];
	char tmp[160];
	char why[200]; /* on ERROR: one line for the answer and the log */
};

/* Decode in[0..len) and write the canonical re-encoding for the origin into out,
 * which has room for len + PROXY_CHUNK_SLACK bytes: hex sizes in lower case without
 * leading zeros, no extensions, no trailers, "0\r\n\r\n" at the end. *used: input
 * bytes taken (all of them unless DONE); *out_len: bytes written. Strict grammar:
 * see http_chunked.c. */
enum proxy_chunk_result proxy_chunked_feed(struct proxy_chunked *ck, const char *in, size_t len,
					   size_t *used, char *out, size_t *out_len);

/* ------------------------------------------- credential masking (http_mask.c) */

#define PROXY_MASK_MAX_PATS 8
#define PROXY_MASK_MAX_LEN  4096 /* an expanded credential value is shorter */

/* Overwrites every occurrence of its patterns with '*' (same length) in a stream
 * given in pieces, and every cut one: a pattern's first `stem` bytes or more, as far
 * as they agree with it (an origin that quotes the request cut at N bytes). The
 * patterns are borrowed: they must outlive the masker. */
struct proxy_mask {
	const char *pat[PROXY_MASK_MAX_PATS];
	size_t len[PROXY_MASK_MAX_PATS];
	size_t stem[PROXY_MASK_MAX_PATS]; /* len: whole occurrences only */
	size_t n, keep; /* keep: the longest pattern's length - 1, held back per stream */
	char hold[PROXY_MASK_MAX_LEN];
	size_t hold_len, hold_masked; /* held bytes (original), and how many of them to mask */
	unsigned long long hits;      /* occurrences found (for tests and the summary) */
};

/* Patterns: NULL and empty ones skipped; -EINVAL for more than 8 or one over 4096. */
int proxy_mask_init(struct proxy_mask *m, const char *const *pats, size_t n);
/* The same, with stems[i] the shortest cut of pats[i] that is masked (0, or the
 * pattern's length or more: whole occurrences only). */
int proxy_mask_init_stems(struct proxy_mask *m, const char *const *pats, const size_t *stems,
			  size_t n);
/* A new stream (what is held is dropped: flush first). */
void proxy_mask_reset(struct proxy_mask *m);
/* Pass in[0..n) on: writes at most n + m->keep bytes into out (which must not overlap
 * in) and returns how many; the rest of the input is held back. */
size_t proxy_mask_feed(struct proxy_mask *m, const char *in, size_t n, char *out);
/* The end of the stream: the held bytes, masked, into out (at most m->keep). */
size_t proxy_mask_flush(struct proxy_mask *m, char *out);
/* A whole buffer at once (a response head), in place. */
void proxy_mask_buf(struct proxy_mask *m, char *buf, size_t n);

/* ---------------------------------------------------------------- SOCKS5 */

enum proxy_socks_result {
	PROXY_SOCKS_NEED_MORE = 0,
	PROXY_SOCKS_OK = 1,
	PROXY_SOCKS_ERROR = -1,
};

/* Greeting: VER=5, NMETHODS, METHODS. OK when "no authentication" (0x00) is offered;
 * ERROR otherwise (answer 05 FF). *used = bytes consumed. */
enum proxy_socks_result proxy_socks_greeting(const uint8_t *buf, size_t len, size_t *used);

enum proxy_socks_atyp {
	PROXY_SOCKS_IPV4 = 1,
	PROXY_SOCKS_DOMAIN = 3,
	PROXY_SOCKS_IPV6 = 4,
};

struct proxy_socks_req {
	uint8_t cmd; /* 1 CONNECT (2 BIND, 3 UDP ASSOCIATE are refused) */
	enum proxy_socks_atyp atyp;
	char host[256]; /* domain as sent (not NUL-containing), or the literal as text */
	uint8_t addr[16];
	unsigned port;
	/* On ERROR, when the whole request arrived but its domain was refused: the domain
	 * with every byte outside visible ASCII (and '\\') written \xHH, cut at 255
	 * bytes, and port holds DST.PORT, so that the refusal can be audited. Else "". */
	char shown[256];
	uint8_t reply; /* on ERROR: the SOCKS5 reply code to send (07 command not
			* supported, 08 address type not supported, 01 general failure) */
	char why[128];
};

/* Request: VER CMD RSV ATYP DST.ADDR DST.PORT. */
enum proxy_socks_result proxy_socks_request(const uint8_t *buf, size_t len, size_t *used,
					    struct proxy_socks_req *req);

/* A SOCKS5 reply (VER REP RSV ATYP=1 0.0.0.0:0) into out[10]; returns 10. */
int proxy_socks_reply(uint8_t rep, uint8_t out[10]);

/* ------------------------------------------------------ client credentials (auth.c) */

#define PROXY_AUTH_MAX 512 /* a decoded Basic credential, user:secret */
/* Is `secret` (non-empty) exactly the `glen` bytes at given? Constant in the secret's
 * length. */
bool proxy_secret_equal(const char *given, size_t glen, const char *secret);
/* A Proxy-Authorization value: "Basic " base64(user ":" secret), any user name. */
bool proxy_auth_basic_ok(const char *value, const char *secret);
/* A SOCKS5 greeting offering `method` (0x00 none, 0x02 username/password): as
 * proxy_socks_greeting. */
enum proxy_socks_result proxy_socks_greeting_method(const uint8_t *buf, size_t len, size_t *used,
						    uint8_t method);
/* RFC 1929's request: OK with *pass, *plen pointing into buf (1..255 bytes), *used
 * its length; ERROR for a version other than 1 or an empty name or password. */
enum proxy_socks_result proxy_socks_userpass(const uint8_t *buf, size_t len, size_t *used,
					     const uint8_t **pass, size_t *plen);

/* ------------------------------------------------------------------- TLS */

#define PROXY_TLS_HELLO_MAX	      16384 /* bytes buffered for a ClientHello, headers included */
#define PROXY_TLS_ALERT_ACCESS_DENIED 49

enum proxy_tls_result {
	PROXY_TLS_NEED_MORE = 0,
	PROXY_TLS_HELLO = 1,   /* a complete, well-formed ClientHello */
	PROXY_TLS_NOT_TLS = 2, /* the first byte is neither a TLS record type nor SSLv2's form */
	PROXY_TLS_ERROR = -1,  /* TLS, but not a well-formed ClientHello first (a record
				* before it, malformed, over the bound): refuse (alert, why) */
};

struct proxy_tls_hello {
	bool has_sni;
	char sni[256]; /* the host_name as sent: 1..255 visible ASCII bytes */
	bool ech;      /* encrypted_client_hello (0xfe0d) or ESNI's encrypted_server_name
			* (0xffce): sni is the outer name */
	bool sslv2;    /* the SSLv2-compatible form (no extensions, so no name) */
	size_t used;   /* on HELLO: bytes of the records that carried the ClientHello */
	uint8_t alert; /* on ERROR: the TLS alert description to answer with */
	char why[160]; /* on ERROR: the audit rule ("malformed ClientHello: ...", "tls: ...") */
};

/* The client's first bytes of a tunnel, as many as have arrived (tls_hello.c). */
enum proxy_tls_result proxy_tls_hello_parse(const uint8_t *buf, size_t len,
					    struct proxy_tls_hello *h);

/* "alert", "handshake"... for a TLS record type (0x14..0x18); NULL for another byte. */
const char *proxy_tls_record_name(uint8_t type);

/* One name per tunnel: true when the hello names `target` (the canonical host
 * Decide() judged: lower case, no trailing dot, v6 without brackets) but for ASCII
 * case, or names no host while the target is an IP literal. A name with a trailing
 * dot is refused (an origin that keeps the dot serves its default site). Else false
 * with "sni mismatch: NAME", "tls: SNI ends with a dot: ..." or "tls: ClientHello
 * without SNI ..." in rule. */
bool proxy_tls_sni_allowed(const char *target, const struct proxy_tls_hello *h, char *rule,
			   size_t n);

/* A tunnel the proxy splices: proxy_tls_sni_allowed, and no encrypted_client_hello
 * extension. Under ECH the origin serves the encrypted inner name, which may be any
 * site behind its keys whatever the outer name is, and its acceptance is hidden from
 * the proxy; GREASE ECH looks the same and is refused with it. Else false with the
 * name rule's reason or "tls: encrypted_client_hello (ECH): ..." in rule. */
bool proxy_tls_splice_allowed(const char *target, const struct proxy_tls_hello *h, char *rule,
			      size_t n);

/* Every ClientHello is checked (tls_retry.c). The server's bytes after an allowed
 * ClientHello, fed as they flow: is its first handshake message a HelloRetryRequest
 * (a ServerHello whose random is RFC 8446's fixed value)? MORE until its first 38
 * bytes are in; DONE for any other answer (a ServerHello, not TLS, over the bound):
 * the watch ends. The result is sticky. */
enum proxy_tls_srv { PROXY_TLS_SRV_MORE = 0, PROXY_TLS_SRV_HRR = 1, PROXY_TLS_SRV_DONE = 2 };
#define PROXY_TLS_SRV_WATCH_MAX (PROXY_TLS_HELLO_MAX + 5) /* server bytes read, at most */

struct proxy_tls_srv_scan {
	uint8_t hdr[5]; /* the current record's header */
	size_t hdr_len;
	size_t left; /* bytes of the current record's body still to come */
	uint8_t hs[38];
	size_t hs_len; /* the first handshake message's first bytes */
	size_t seen;
	enum proxy_tls_srv res;
};
enum proxy_tls_srv proxy_tls_srv_feed(struct proxy_tls_srv_scan *s, const uint8_t *p, size_t n);

/* The client's bytes after a HelloRetryRequest: at most one change_cipher_spec record
 * (RFC 8446 D.4), then a second ClientHello, whole. NOT_TLS never: anything else is an
 * ERROR naming it. used counts the change_cipher_spec too. */
enum proxy_tls_result proxy_tls_retry_parse(const uint8_t *buf, size_t len,
					    struct proxy_tls_hello *h);

/* A fatal TLS alert record (legacy version 3.3) into out[7]; returns 7. */
int proxy_tls_alert(uint8_t desc, uint8_t out[7]);

#endif
