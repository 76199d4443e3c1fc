/* Pure parsers of the proxy's outside input: HTTP/1.1 request heads (CONNECT and
 * absolute-form forwarding) and SOCKS5. No I/O: the event loop feeds bytes in and
 * acts on the result. Every parser has a hostile-input table and a fuzz target. */
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
	bool has_body; /* Content-Length > 0 (FORWARD only) */
	unsigned long long content_length;
	bool keep_alive;      /* client wants the connection kept (1.1 default) */
	char proxy_auth[256]; /* Proxy-Authorization value, if any (macOS secret) */
	int status;	      /* on ERROR: 400, 405, 414, 431, 501, 505 ... */
	char why[160];	      /* on ERROR: one line for the body and the log */
};

/* Parse the head at the start of buf[0..len). Strict: request line 8 KiB, head 16 KiB,
 * 100 fields; refuses NUL and bare CR anywhere in the head, obs-fold, a field name
 * with whitespace before the colon, Transfer-Encoding (any: 501 in a request to
 * forward, since chunked request bodies are not supported — keeps smuggling out; 400
 * in a CONNECT or together with Content-Length), duplicate or
 * non-numeric Content-Length, Content-Length with Transfer-Encoding, a Host header
 * that disagrees with the target, userinfo in the target, a non-http scheme in
 * absolute form (https:// must use CONNECT), origin-form requests (not a proxy
 * request → 400), versions other than HTTP/1.0 and 1.1 (505). */
enum proxy_http_result proxy_http_parse(const char *buf, size_t len, struct proxy_http_req *req);

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

/* Next element of a comma-separated field value (RFC 9110 5.6.1), optional whitespace
 * trimmed and empty elements skipped; *pos starts at 0. False at the end. */
bool proxy_http_list_next(const char *v, size_t n, size_t *pos, const char **elem,
			  size_t *elem_len);

/* A complete response head for a refusal: status line, Content-Type text/plain,
 * Content-Length, Connection: close, optional X-Halo-Deny (deny_header != NULL), and
 * a one-line body. Returns bytes written or -ENOSPC. */
int proxy_http_error(int status, const char *body_line, const char *deny_header, char *out,
		     size_t outlen);

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
	uint8_t reply; /* on ERROR: the SOCKS5 reply code to send (07 command not
			* supported, 08 address type not supported, 01 general failure) */
	char why[128];
};

/* Request: VER CMD RSV ATYP DST.ADDR DST.PORT. */
enum proxy_socks_result proxy_socks_request(const uint8_t *buf, size_t len, size_t *used,
					    struct proxy_socks_req *req);

/* A SOCKS5 reply (VER REP RSV ATYP=1 0.0.0.0:0) into out[10]; returns 10. */
int proxy_socks_reply(uint8_t rep, uint8_t out[10]);

#endif
