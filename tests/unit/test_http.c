/* HTTP request-head parser: a hostile-input table (every refusal class with its status
 * and a piece of its why), accepted heads with their parsed values, limits at their
 * exact edges, incremental feeding, and the exact bytes of the rewrite and the error
 * answers. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "proxy/proxy_parse.h"
#include "tests/unit/unit.h"

#define ROWS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Big (the path alone is 8 KiB): keep it off the stack. */
static struct proxy_http_req req;

#define G   "GET http://example.com/ HTTP/1.1\r\n"
#define C   "CONNECT example.com:443 HTTP/1.1\r\n"
#define L64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

struct bad_row {
	const char *in;
	size_t len;
	int status;
	const char *why;
};

#define BAD(s, st, w)                                                                              \
	{                                                                                          \
		s, sizeof(s) - 1, st, w                                                            \
	}

static const struct bad_row bad_rows[] = {
    /* bytes and line endings */
    BAD(G "Host: example.com\n\r\n", 400, "bare LF line ending"),
    BAD("GET http://example.com/ HTTP/1.1\n\n", 400, "bare LF line ending"),
    BAD(G "X: a\rb\r\n\r\n", 400, "bare CR"),
    BAD(G "\r\r\n", 400, "bare CR"),
    BAD(G "X: a\0b\r\n\r\n", 400, "NUL byte"),
    BAD("GET http://exa\0mple.com/ HTTP/1.1\r\n\r\n", 400, "NUL byte"),
    BAD("GET http://example.com/\0", 400, "NUL byte"), /* before the head is complete */
    BAD("\r\nGET http://example.com/ HTTP/1.1\r\n\r\n", 400, "empty request line"),
    BAD(G "X-A: 1\r\n  continued\r\n\r\n", 400, "obs-fold"),
    BAD(G "X-A: 1\r\n\tcontinued\r\n\r\n", 400, "obs-fold"),
    BAD(G " Host: example.com\r\n\r\n", 400, "obs-fold"),
    BAD(G "Host: example.com\r\n Transfer-Encoding: chunked\r\n\r\n", 400, "obs-fold"),
    /* field lines */
    BAD(G "Host : example.com\r\n\r\n", 400, "whitespace before the colon"),
    BAD(G "Content-Length\t: 5\r\n\r\n", 400, "whitespace before the colon"),
    BAD(G "Bad Name: x\r\n\r\n", 400, "field name is not a token"),
    BAD(G "X(y): 1\r\n\r\n", 400, "field name is not a token"),
    BAD(G "Caf\xc3\xa9: 1\r\n\r\n", 400, "field name is not a token"),
    BAD(G "NoColonHere\r\n\r\n", 400, "header line without a colon"),
    BAD(G ": empty\r\n\r\n", 400, "empty header field name"),
    BAD(G "X-Ctl: a\x01"
	  "b\r\n\r\n",
	400, "control character in a header field value"),
    BAD(G "X-Del: a\x7f\r\n\r\n", 400, "control character in a header field value"),
    BAD(G "X-Esc: \x1b[31m\r\n\r\n", 400, "control character in a header field value"),
    /* request smuggling shapes */
    BAD(G "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
	"Content-Length together with Transfer-Encoding"),
    BAD(G "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", 400,
	"Content-Length together with Transfer-Encoding"),
    BAD(G "Content-Length: 5\r\nContent-Length: 5\r\n\r\n", 400, "duplicate Content-Length"),
    BAD(G "Content-Length: 5\r\ncontent-length: 6\r\n\r\n", 400, "duplicate Content-Length"),
    BAD(G "Content-Length: 1, 2\r\n\r\n", 400, "Content-Length is not a decimal number"),
    BAD(G "Content-Length: 5,5\r\n\r\n", 400, "Content-Length is not a decimal number"),
    BAD(G "Content-Length: +5\r\n\r\n", 400, "Content-Length is not a decimal number"),
    BAD(G "Content-Length: -1\r\n\r\n", 400, "Content-Length is not a decimal number"),
    BAD(G "Content-Length: 0x10\r\n\r\n", 400, "Content-Length is not a decimal number"),
    BAD(G "Content-Length: 5 5\r\n\r\n", 400, "Content-Length is not a decimal number"),
    BAD(G "Content-Length:\r\n\r\n", 400, "Content-Length is not a decimal number"),
    BAD(G "Content-Length: 007\r\n\r\n", 400, "Content-Length has leading zeros"),
    BAD(G "Content-Length: 9007199254740993\r\n\r\n", 400, "larger than 2^53"),
    BAD(G "Content-Length: 99999999999999999999999999\r\n\r\n", 400, "larger than 2^53"),
    BAD(G "Transfer-Encoding: gzip, chunked\r\n\r\n", 400, "more than one coding"),
    BAD(G "Transfer-Encoding: chunked, chunked\r\n\r\n", 400, "more than one coding"),
    BAD(G "Transfer-Encoding: chunked, gzip\r\n\r\n", 400, "chunked is not the final coding"),
    BAD(G "Transfer-Encoding: chunked,\r\n\r\n", 400, "other than chunked"),
    BAD(G "Transfer-Encoding: ,chunked\r\n\r\n", 400, "other than chunked"),
    BAD(G "Transfer-Encoding: xchunked\r\n\r\n", 400, "other than chunked"),
    BAD(G "Transfer-Encoding: chunked;q=1\r\n\r\n", 400, "other than chunked"),
    BAD(G "Transfer-Encoding: \"chunked\"\r\n\r\n", 400, "other than chunked"),
    BAD(G "Transfer-Encoding: chun ked\r\n\r\n", 400, "other than chunked"),
    BAD(G "Transfer-Encoding: identity\r\n\r\n", 400, "other than chunked"),
    BAD(G "Transfer-Encoding:\r\n\r\n", 400, "other than chunked"),
    BAD(G "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
	"duplicate Transfer-Encoding"),
    BAD(G "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
	"other than chunked"),
    BAD(G "Transfer-Encoding: chunked\r\ntransfer-encoding: identity\r\n\r\n", 400,
	"duplicate Transfer-Encoding"),
    BAD("POST http://example.com/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
	"Transfer-Encoding in an HTTP/1.0 request"),
    BAD(G "Connection: Transfer-Encoding\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
	"Connection header names an end-to-end field"),
    BAD(G "Transfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n", 400,
	"Content-Length together with Transfer-Encoding"),
    BAD(G "Transfer-Encoding : chunked\r\n\r\n", 400, "whitespace before the colon"),
    BAD(G "Transfer_Encoding: chunked\r\n\r\n", 400, "reads as Content-Length or Transfer"),
    BAD(G "Content_Length: 5\r\n\r\n", 400, "reads as Content-Length or Transfer-Encoding"),
    BAD(C "Transfer-Encoding: chunked\r\n\r\n", 400, "Transfer-Encoding in a CONNECT"),
    BAD(C "Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
	"Content-Length together with Transfer-Encoding"),
    BAD(C "Content-Length: 1\r\nContent-Length: 1\r\n\r\n", 400, "duplicate Content-Length"),
    BAD(G "Connection: Content-Length\r\nContent-Length: 3\r\n\r\n", 400,
	"Connection header names an end-to-end field"),
    BAD(G "Connection: close, Host\r\n\r\n", 400, "Connection header names an end-to-end"),
    BAD(G "Connection: a b\r\n\r\n", 400, "malformed Connection header"),
    /* request line */
    BAD("GET  http://example.com/ HTTP/1.1\r\n\r\n", 400, "malformed request line"),
    BAD("GET http://example.com/  HTTP/1.1\r\n\r\n", 400, "malformed request line"),
    BAD(" GET http://example.com/ HTTP/1.1\r\n\r\n", 400, "malformed request line"),
    BAD("GET http://example.com/ HTTP/1.1 \r\n\r\n", 400, "malformed request line"),
    BAD("GET http://example.com/\r\n\r\n", 400, "malformed request line"),
    BAD("GET\thttp://example.com/ HTTP/1.1\r\n\r\n", 400, "malformed request line"),
    BAD("GET http://example.com/ \r\n\r\n", 400, "malformed request line"),
    BAD("G(T http://example.com/ HTTP/1.1\r\n\r\n", 400, "method is not a token"),
    BAD("ABCDEFGHIJABCDEFGHIJABCDEFGHIJAB http://example.com/ HTTP/1.1\r\n\r\n", 400,
	"method longer than 31 bytes"),
    /* versions */
    BAD("GET http://example.com/ HTTP/2.0\r\n\r\n", 505, "HTTP version not supported"),
    BAD("GET http://example.com/ HTTP/0.9\r\n\r\n", 505, "HTTP version not supported"),
    BAD("GET http://example.com/ HTTP/1.2\r\n\r\n", 505, "HTTP version not supported"),
    BAD("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505, "HTTP version not supported"),
    BAD("GET http://example.com/ http/1.1\r\n\r\n", 400, "malformed HTTP version"),
    BAD("GET http://example.com/ HTTP/1.10\r\n\r\n", 400, "malformed HTTP version"),
    BAD("GET http://example.com/ HTTP/1\r\n\r\n", 400, "malformed HTTP version"),
    BAD("GET http://example.com/ HTTP/1.x\r\n\r\n", 400, "malformed HTTP version"),
    BAD("GET http://example.com/ FOO\r\n\r\n", 400, "malformed HTTP version"),
    /* target forms of a request to forward */
    BAD("GET /index.html HTTP/1.1\r\nHost: example.com\r\n\r\n", 400,
	"not a proxy request (origin-form"),
    BAD("OPTIONS * HTTP/1.1\r\n\r\n", 400, "not a proxy request (asterisk-form"),
    BAD("GET https://example.com/ HTTP/1.1\r\n\r\n", 400, "use CONNECT"),
    BAD("GET HTTPS://example.com/ HTTP/1.1\r\n\r\n", 400, "use CONNECT"),
    BAD("GET ftp://example.com/ HTTP/1.1\r\n\r\n", 400, "unsupported scheme"),
    BAD("GET example.com:80 HTTP/1.1\r\n\r\n", 400, "not a proxy request"),
    BAD("GET http:/example.com/ HTTP/1.1\r\n\r\n", 400, "not a proxy request"),
    BAD("GET http://user:pw@example.com/ HTTP/1.1\r\n\r\n", 400, "userinfo"),
    BAD("GET http://example.com@evil.example/ HTTP/1.1\r\n\r\n", 400, "userinfo"),
    BAD("GET http://example.com\\@evil.example/ HTTP/1.1\r\n\r\n", 400, "backslash"),
    BAD("GET http://example.com/#frag HTTP/1.1\r\n\r\n", 400, "fragment"),
    BAD("GET http://example.com#frag HTTP/1.1\r\n\r\n", 400, "fragment"),
    BAD("GET http:///path HTTP/1.1\r\n\r\n", 400, "empty host"),
    BAD("GET http://example.com:/ HTTP/1.1\r\n\r\n", 400, "empty port"),
    BAD("GET http://example.com:0/ HTTP/1.1\r\n\r\n", 400, "port out of range"),
    BAD("GET http://example.com:65536/ HTTP/1.1\r\n\r\n", 400, "port out of range"),
    BAD("GET http://example.com:99999999999/ HTTP/1.1\r\n\r\n", 400, "port out of range"),
    BAD("GET http://example.com:080/ HTTP/1.1\r\n\r\n", 400, "port has leading zeros"),
    BAD("GET http://example.com:8o/ HTTP/1.1\r\n\r\n", 400, "port is not a decimal number"),
    BAD("GET http://exa%6dple.com/ HTTP/1.1\r\n\r\n", 400, "'%' in the host"),
    BAD("GET http://ex\xc3\xa4mple.com/ HTTP/1.1\r\n\r\n", 400, "outside visible ASCII"),
    BAD("GET http://example.com/\xc3\xa4 HTTP/1.1\r\n\r\n", 400, "outside visible ASCII"),
    BAD("GET http://[::1/ HTTP/1.1\r\n\r\n", 400, "malformed IPv6 literal"),
    BAD("GET http://::1/ HTTP/1.1\r\n\r\n", 400, "more than one ':'"),
    /* CONNECT targets */
    BAD("CONNECT example.com HTTP/1.1\r\n\r\n", 400, "missing port"),
    BAD("CONNECT example.com: HTTP/1.1\r\n\r\n", 400, "empty port"),
    BAD("CONNECT example.com:0 HTTP/1.1\r\n\r\n", 400, "port out of range"),
    BAD("CONNECT example.com:+443 HTTP/1.1\r\n\r\n", 400, "port is not a decimal"),
    BAD("CONNECT example.com:0443 HTTP/1.1\r\n\r\n", 400, "port has leading zeros"),
    BAD("CONNECT example.com:443/path HTTP/1.1\r\n\r\n", 400, "no path, query or fragment"),
    BAD("CONNECT example.com:443?q HTTP/1.1\r\n\r\n", 400, "no path, query or fragment"),
    BAD("CONNECT http://example.com:443 HTTP/1.1\r\n\r\n", 400, "CONNECT target: authority"),
    BAD("CONNECT user@example.com:443 HTTP/1.1\r\n\r\n", 400, "userinfo"),
    BAD("CONNECT :443 HTTP/1.1\r\n\r\n", 400, "empty host"),
    BAD("CONNECT exa%2ample.com:443 HTTP/1.1\r\n\r\n", 400, "'%' in the host"),
    BAD("CONNECT [fe80::1%25eth0]:443 HTTP/1.1\r\n\r\n", 400, "'%' in the host"),
    BAD("CONNECT [example.com]:443 HTTP/1.1\r\n\r\n", 400, "malformed IPv6 literal"),
    BAD("CONNECT []:443 HTTP/1.1\r\n\r\n", 400, "malformed IPv6 literal"),
    BAD("CONNECT [::1]443 HTTP/1.1\r\n\r\n", 400, "unexpected bytes after the IPv6"),
    BAD("CONNECT [::1] HTTP/1.1\r\n\r\n", 400, "missing port"),
    BAD("CONNECT ::1:443 HTTP/1.1\r\n\r\n", 400, "more than one ':'"),
    BAD("CONNECT ex\\ample.com:443 HTTP/1.1\r\n\r\n", 400, "backslash"),
    BAD("CONNECT exam[ple.com:443 HTTP/1.1\r\n\r\n", 400, "misplaced '[' or ']'"),
    BAD("CONNECT ex\xff"
	"ample.com:443 HTTP/1.1\r\n\r\n",
	400, "outside visible ASCII"),
    BAD("CONNECT " L64 L64 L64 L64 ":443 HTTP/1.1\r\n\r\n", 400, "host longer than 255"),
    /* Host header against the target */
    BAD(G "Host: example.com\r\nHost: example.com\r\n\r\n", 400, "duplicate Host header"),
    /* (absolute form: a disagreeing Host is replaced, see the rewrite table) */
    BAD(G "Host: example.com\r\nhost: evil.example\r\n\r\n", 400, "duplicate Host header"),
    BAD("GET http://example.com:8080/ HTTP/1.1\r\nHost: example.com:8080/x\r\n\r\n", 400,
	"malformed Host header"),
    BAD(G "Host: example.com:0\r\n\r\n", 400, "malformed Host header"),
    BAD(C "Host: evil.example:443\r\n\r\n", 400, "Host header disagrees with the target"),
    BAD(C "Host: example.com:444\r\n\r\n", 400, "Host header disagrees with the target"),
    BAD("CONNECT [::1]:443 HTTP/1.1\r\nHost: [::2]:443\r\n\r\n", 400,
	"Host header disagrees with the target"),
    BAD("CONNECT [::1]:443 HTTP/1.1\r\nHost: localhost:443\r\n\r\n", 400,
	"Host header disagrees with the target"),
    BAD(G "Host: user@example.com\r\n\r\n", 400, "malformed Host header: userinfo"),
    BAD(G "Host:\r\n\r\n", 400, "malformed Host header: empty host"),
    BAD(G "Host: exa%6dple.com\r\n\r\n", 400, "malformed Host header: '%'"),
    /* Proxy-Authorization */
    BAD(G "Proxy-Authorization: Basic YQ==\r\nProxy-Authorization: Basic Yg==\r\n\r\n", 400,
	"duplicate Proxy-Authorization"),
    BAD(G "Proxy-Authorization: " L64 L64 L64 L64 "\r\n\r\n", 400,
	"Proxy-Authorization longer than 255 bytes"),
};

START_TEST(bad_table)
{
	const struct bad_row *r = &bad_rows[_i];
	enum proxy_http_result rc = proxy_http_parse(r->in, r->len, &req);

	ck_assert_msg(rc == PROXY_HTTP_ERROR, "row %d: result %d, not ERROR", _i, rc);
	ck_assert_msg(req.status == r->status, "row %d: status %d, want %d (%s)", _i, req.status,
		      r->status, req.why);
	ck_assert_msg(strstr(req.why, r->why), "row %d: why '%s' lacks '%s'", _i, req.why, r->why);
}
END_TEST

struct good_row {
	const char *in;
	size_t len;
	enum proxy_http_kind kind;
	const char *host;
	bool v6;
	unsigned port;
	const char *path;
	int minor;
	bool keep_alive;
	unsigned long long content_length;
	size_t head_len; /* 0: the whole input */
	bool chunked;
};

#define GOOD(s, k, h, v6, p, path, minor, ka, cl)                                                  \
	{                                                                                          \
		s, sizeof(s) - 1, k, h, v6, p, path, minor, ka, cl, 0, false                       \
	}
#define CON PROXY_HTTP_CONNECT
#define FWD PROXY_HTTP_FORWARD

static const struct good_row good_rows[] = {
    GOOD(C "\r\n", CON, "example.com", false, 443, "", 1, true, 0),
    GOOD(C "Host: example.com:443\r\nUser-Agent: curl/7.88.1\r\n\r\n", CON, "example.com", false,
	 443, "", 1, true, 0),
    GOOD("CONNECT Example.COM.:443 HTTP/1.1\r\nHost: example.com\r\n\r\n", CON, "Example.COM.",
	 false, 443, "", 1, true, 0),
    GOOD("CONNECT [::1]:443 HTTP/1.1\r\nHost: [::1]:443\r\n\r\n", CON, "::1", true, 443, "", 1,
	 true, 0),
    GOOD("CONNECT [2001:DB8::1]:8443 HTTP/1.0\r\n\r\n", CON, "2001:DB8::1", true, 8443, "", 0,
	 false, 0),
    GOOD("CONNECT [::ffff:127.0.0.1]:1 HTTP/1.1\r\n\r\n", CON, "::ffff:127.0.0.1", true, 1, "", 1,
	 true, 0),
    GOOD("CONNECT 192.0.2.1:65535 HTTP/1.1\r\n\r\n", CON, "192.0.2.1", false, 65535, "", 1, true,
	 0),
    GOOD(C "Content-Length: 10\r\n\r\n", CON, "example.com", false, 443, "", 1, true, 0),
    GOOD("GET http://example.com HTTP/1.1\r\n\r\n", FWD, "example.com", false, 80, "/", 1, true, 0),
    GOOD("GET HTTP://Example.com:8080/a/b?c=d HTTP/1.1\r\nHost: EXAMPLE.COM.:8080\r\n\r\n", FWD,
	 "Example.com", false, 8080, "/a/b?c=d", 1, true, 0),
    GOOD("GET http://example.com?x=1 HTTP/1.1\r\n\r\n", FWD, "example.com", false, 80, "/?x=1", 1,
	 true, 0),
    GOOD("GET http://example.com/%7Euser/a%20b HTTP/1.1\r\n\r\n", FWD, "example.com", false, 80,
	 "/%7Euser/a%20b", 1, true, 0),
    GOOD("POST http://example.com/up HTTP/1.1\r\nContent-Length: 12\r\n\r\n", FWD, "example.com",
	 false, 80, "/up", 1, true, 12),
    GOOD("POST http://example.com/up HTTP/1.1\r\nContent-Length: 0\r\n\r\n", FWD, "example.com",
	 false, 80, "/up", 1, true, 0),
    GOOD("POST http://example.com/ HTTP/1.1\r\nContent-Length: 9007199254740992\r\n\r\n", FWD,
	 "example.com", false, 80, "/", 1, true, 9007199254740992ULL),
    GOOD(G "Connection: close\r\n\r\n", FWD, "example.com", false, 80, "/", 1, false, 0),
    GOOD(G "Connection: keep-alive, CLOSE\r\n\r\n", FWD, "example.com", false, 80, "/", 1, false,
	 0),
    GOOD("GET http://example.com/ HTTP/1.0\r\n\r\n", FWD, "example.com", false, 80, "/", 0, false,
	 0),
    GOOD("GET http://example.com/ HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", FWD, "example.com",
	 false, 80, "/", 0, true, 0),
    GOOD("GET http://example.com/ HTTP/1.0\r\nProxy-Connection: keep-alive\r\n\r\n", FWD,
	 "example.com", false, 80, "/", 0, true, 0),
    GOOD("GET http://[::1]:8080/ HTTP/1.1\r\nHost: [0:0::1]:8080\r\n\r\n", FWD, "::1", true, 8080,
	 "/", 1, true, 0),
    GOOD("GET http://example.com:80/ HTTP/1.1\r\nHost: example.com\r\n\r\n", FWD, "example.com",
	 false, 80, "/", 1, true, 0),
    GOOD(G "Host: example.com:80\r\n\r\n", FWD, "example.com", false, 80, "/", 1, true, 0),
    GOOD(G "User-Agent: caf\xc3\xa9\r\nX-Empty:\r\nX-Tab:\tv\t\r\n\r\n", FWD, "example.com", false,
	 80, "/", 1, true, 0),
    GOOD("M-SEARCH http://example.com/ HTTP/1.1\r\n\r\n", FWD, "example.com", false, 80, "/", 1,
	 true, 0),
    /* chunked request bodies: exactly one "chunked", any case, OWS around it */
    {G "Transfer-Encoding: chunked\r\n\r\n", sizeof(G "Transfer-Encoding: chunked\r\n\r\n") - 1,
     FWD, "example.com", false, 80, "/", 1, true, 0, 0, true},
    {G "transfer-encoding:\tCHUNKED \r\n\r\n5\r\nhello\r\n0\r\n\r\n",
     sizeof(G "transfer-encoding:\tCHUNKED \r\n\r\n5\r\nhello\r\n0\r\n\r\n") - 1, FWD,
     "example.com", false, 80, "/", 1, true, 0,
     sizeof(G "transfer-encoding:\tCHUNKED \r\n\r\n") - 1, true},
    /* a pipelined body or next request is not part of the head */
    {C "\r\nGET / HTTP/1.1\r\n\r\n", sizeof(C "\r\nGET / HTTP/1.1\r\n\r\n") - 1, CON, "example.com",
     false, 443, "", 1, true, 0, sizeof(C "\r\n") - 1, false},
    {"POST http://example.com/ HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
     sizeof("POST http://example.com/ HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc") - 1, FWD,
     "example.com", false, 80, "/", 1, true, 3,
     sizeof("POST http://example.com/ HTTP/1.1\r\nContent-Length: 3\r\n\r\n") - 1, false},
};

START_TEST(good_table)
{
	const struct good_row *r = &good_rows[_i];
	enum proxy_http_result rc = proxy_http_parse(r->in, r->len, &req);

	ck_assert_msg(rc == PROXY_HTTP_OK, "row %d: result %d (%d %s)", _i, rc, req.status,
		      req.why);
	ck_assert_int_eq(req.kind, r->kind);
	ck_assert_str_eq(req.host, r->host);
	ck_assert_int_eq(req.host_is_v6_literal, r->v6);
	ck_assert_uint_eq(req.port, r->port);
	ck_assert_str_eq(req.path, r->path);
	ck_assert_int_eq(req.version_minor, r->minor);
	ck_assert_int_eq(req.keep_alive, r->keep_alive);
	ck_assert_uint_eq(req.content_length, r->content_length);
	ck_assert_int_eq(req.has_body, r->kind == FWD && (r->content_length > 0 || r->chunked));
	ck_assert_int_eq(req.chunked, r->chunked);
	ck_assert_uint_eq(req.head_len, r->head_len ? r->head_len : r->len);
	ck_assert_int_eq(req.status, 0);
}
END_TEST

START_TEST(fields_and_auth)
{
	static const char in[] = "GET http://example.com/ HTTP/1.1\r\n"
				 "Host:example.com \r\n"
				 "Proxy-Authorization: \tBasic dXNlcjpzZWNyZXQ= \r\n"
				 "X-Empty:\r\n\r\n";

	ck_assert_int_eq(proxy_http_parse(in, sizeof(in) - 1, &req), PROXY_HTTP_OK);
	ck_assert_str_eq(req.method, "GET");
	ck_assert_uint_eq(req.n_fields, 3);
	ck_assert_uint_eq(req.fields[0].name_len, 4);
	ck_assert(memcmp(req.fields[0].name, "Host", 4) == 0);
	ck_assert_uint_eq(req.fields[0].value_len, 11);
	ck_assert(memcmp(req.fields[0].value, "example.com", 11) == 0);
	ck_assert_uint_eq(req.fields[2].value_len, 0);
	ck_assert_str_eq(req.proxy_auth, "Basic dXNlcjpzZWNyZXQ=");
}
END_TEST

static const char *const need_more[] = {
    "",
    "G",
    "CONNECT example.com:443 HTTP/1.1",
    "CONNECT example.com:443 HTTP/1.1\r",
    "CONNECT example.com:443 HTTP/1.1\r\n",
    "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n",
    "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r",
    /* refusals that need the whole head are not made early */
    "GET /origin-form HTTP/1.1\r\n",
    "GET http://example.com/ HTTP/9.9\r\n",
};

START_TEST(need_more_table)
{
	const char *in = need_more[_i];

	ck_assert_int_eq(proxy_http_parse(in, strlen(in), &req), PROXY_HTTP_NEED_MORE);
}
END_TEST

/* ---------------------------------------------------------------- limits */

static char big[PROXY_HTTP_MAX_HEAD + 4096];

/* "GET http://example.com/aaaa... HTTP/1.1" with a request line of exactly n bytes. */
static size_t request_line(size_t n)
{
	static const char pre[] = "GET http://example.com/", post[] = " HTTP/1.1";
	size_t fill = n - (sizeof(pre) - 1) - (sizeof(post) - 1);

	memcpy(big, pre, sizeof(pre) - 1);
	memset(big + sizeof(pre) - 1, 'a', fill);
	memcpy(big + sizeof(pre) - 1 + fill, post, sizeof(post) - 1);
	return n;
}

START_TEST(request_line_limit)
{
	size_t n = request_line(PROXY_HTTP_MAX_LINE);

	memcpy(big + n, "\r\n\r\n", 4);
	ck_assert_int_eq(proxy_http_parse(big, n + 4, &req), PROXY_HTTP_OK);
	ck_assert_uint_eq(strlen(req.path), PROXY_HTTP_MAX_LINE - 4 - 18 - 9);

	n = request_line(PROXY_HTTP_MAX_LINE + 1);
	memcpy(big + n, "\r\n\r\n", 4);
	ck_assert_int_eq(proxy_http_parse(big, n + 4, &req), PROXY_HTTP_ERROR);
	ck_assert_int_eq(req.status, 414);
	ck_assert_str_eq(req.why, "request line longer than 8192 bytes");

	/* 414 as soon as byte 8193 arrives, long before the head could be complete */
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET http://example.com/", 23);
	ck_assert_int_eq(proxy_http_parse(big, PROXY_HTTP_MAX_LINE, &req), PROXY_HTTP_NEED_MORE);
	ck_assert_int_eq(proxy_http_parse(big, PROXY_HTTP_MAX_LINE + 1, &req), PROXY_HTTP_ERROR);
	ck_assert_int_eq(req.status, 414);
}
END_TEST

/* A head of exactly n bytes: G, then "X-Pad: aaa...\r\n" fields, then CRLF. */
static size_t padded_head(size_t n)
{
	size_t off = sizeof(G) - 1;

	memcpy(big, G, off);
	while (n - off - 2 > 0) {
		size_t room = n - off - 2, line = room > 1000 ? 1000 : room;

		if (room - line > 0 && room - line < 12)
			line = room - 12; /* leave room for one more whole field line */
		memcpy(big + off, "X-Pad: ", 7);
		memset(big + off + 7, 'a', line - 9);
		memcpy(big + off + line - 2, "\r\n", 2);
		off += line;
	}
	memcpy(big + off, "\r\n", 2);
	return n;
}

START_TEST(head_limit)
{
	size_t n = padded_head(PROXY_HTTP_MAX_HEAD);

	ck_assert_int_eq(proxy_http_parse(big, n, &req), PROXY_HTTP_OK);
	ck_assert_uint_eq(req.head_len, PROXY_HTTP_MAX_HEAD);

	n = padded_head(PROXY_HTTP_MAX_HEAD + 1);
	ck_assert_int_eq(proxy_http_parse(big, n, &req), PROXY_HTTP_ERROR);
	ck_assert_int_eq(req.status, 431);
	ck_assert_str_eq(req.why, "request head longer than 16384 bytes");

	/* no end in sight: refused once byte 16385 arrives */
	padded_head(PROXY_HTTP_MAX_HEAD + 1000);
	ck_assert_int_eq(proxy_http_parse(big, PROXY_HTTP_MAX_HEAD - 100, &req),
			 PROXY_HTTP_NEED_MORE);
	ck_assert_int_eq(proxy_http_parse(big, PROXY_HTTP_MAX_HEAD + 1, &req), PROXY_HTTP_ERROR);
	ck_assert_int_eq(req.status, 431);
}
END_TEST

static size_t many_fields(int n, bool end)
{
	size_t off = sizeof(G) - 1;

	memcpy(big, G, off);
	for (int i = 0; i < n; i++)
		off += (size_t)sprintf(big + off, "X-F%d: v\r\n", i);
	if (end)
		off += (size_t)sprintf(big + off, "\r\n");
	return off;
}

START_TEST(field_count_limit)
{
	size_t n = many_fields(PROXY_HTTP_MAX_FIELDS, true);

	ck_assert_int_eq(proxy_http_parse(big, n, &req), PROXY_HTTP_OK);
	ck_assert_uint_eq(req.n_fields, PROXY_HTTP_MAX_FIELDS);

	n = many_fields(PROXY_HTTP_MAX_FIELDS + 1, true);
	ck_assert_int_eq(proxy_http_parse(big, n, &req), PROXY_HTTP_ERROR);
	ck_assert_int_eq(req.status, 431);
	ck_assert_str_eq(req.why, "more than 100 header fields");

	n = many_fields(PROXY_HTTP_MAX_FIELDS + 1, false); /* refused before the end */
	ck_assert_int_eq(proxy_http_parse(big, n, &req), PROXY_HTTP_ERROR);
	ck_assert_int_eq(req.status, 431);
}
END_TEST

/* ----------------------------------------------------------- incremental */

START_TEST(byte_by_byte_good)
{
	const struct good_row *r = &good_rows[_i];
	size_t head = r->head_len ? r->head_len : r->len;

	for (size_t k = 0; k < head; k++)
		ck_assert_msg(proxy_http_parse(r->in, k, &req) == PROXY_HTTP_NEED_MORE,
			      "row %d: prefix %zu not NEED_MORE (%s)", _i, k, req.why);
	ck_assert_int_eq(proxy_http_parse(r->in, head, &req), PROXY_HTTP_OK);
	ck_assert_uint_eq(req.head_len, head);
}
END_TEST

/* A refusal never turns into OK with more bytes, and prefixes never refuse with a
 * different status than the whole input does. */
START_TEST(byte_by_byte_bad)
{
	const struct bad_row *r = &bad_rows[_i];

	for (size_t k = 0; k <= r->len; k++) {
		enum proxy_http_result rc = proxy_http_parse(r->in, k, &req);

		ck_assert_msg(rc != PROXY_HTTP_OK, "row %d: prefix %zu accepted", _i, k);
		if (rc == PROXY_HTTP_ERROR) {
			ck_assert_int_eq(req.status, r->status);
			ck_assert_msg(strstr(req.why, r->why), "row %d prefix %zu: '%s'", _i, k,
				      req.why);
			break;
		}
	}
}
END_TEST

/* ---------------------------------------------------------------- rewrite */

static char out[4096];

static const struct {
	const char *in, *want;
} rewrites[] = {
    {"GET http://example.com/a?b HTTP/1.1\r\n"
     "Host: example.com\r\n"
     "User-Agent: t\r\n"
     "Connection: keep-alive, X-Secret\r\n"
     "X-Secret: s\r\n"
     "Keep-Alive: 5\r\n"
     "Proxy-Connection: keep-alive\r\n"
     "Proxy-Authorization: Basic Zm9v\r\n"
     "TE: trailers\r\n"
     "Trailer: X\r\n"
     "Upgrade: h2c\r\n"
     "Proxy-Authenticate: x\r\n"
     "Accept:  */*  \r\n\r\n",
     "GET /a?b HTTP/1.1\r\n"
     "Host: example.com\r\n"
     "User-Agent: t\r\n"
     "Accept: */*\r\n"
     "Connection: close\r\n\r\n"},
    {"GET http://Example.com:8080 HTTP/1.0\r\naccept: */*\r\n\r\n",
     "GET / HTTP/1.0\r\nHost: example.com:8080\r\naccept: */*\r\nConnection: close\r\n\r\n"},
    /* the name as the rules judged it (review 23): no trailing dot, lower case */
    {"GET http://RULES.test.:9105/ok HTTP/1.1\r\nHost: RULES.test.:9105\r\n\r\n",
     "GET /ok HTTP/1.1\r\nHost: rules.test:9105\r\nConnection: close\r\n\r\n"},
    {"POST http://[::1]/x HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
     "POST /x HTTP/1.1\r\nHost: [::1]\r\nContent-Length: 3\r\nConnection: close\r\n\r\n"},
    {"PUT http://example.com/u HTTP/1.1\r\nTransfer-Encoding:  chunked\r\nTE: trailers\r\n"
     "Trailer: X-Sum\r\nExpect: 100-continue\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
     "PUT /u HTTP/1.1\r\nHost: example.com\r\nExpect: 100-continue\r\n"
     "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"},
    {"GET http://example.com:80/?q HTTP/1.1\r\nhost: EXAMPLE.com\r\nCONNECTION: x-a\r\n"
     "X-A: 1\r\nx-b: 2\r\n\r\n",
     "GET /?q HTTP/1.1\r\nHost: example.com\r\nx-b: 2\r\nConnection: close\r\n\r\n"},
    /* RFC 9112 3.2.2: the received Host is ignored and replaced by the URL's authority,
     * whatever it says (libgit2 sends the name without the URL's port) */
    {"GET http://crates.test:8080/index/config.json HTTP/1.1\r\nUser-Agent: git/2.0 "
     "(libgit2 1.5.1)\r\nHost: crates.test\r\nAccept: */*\r\n\r\n",
     "GET /index/config.json HTTP/1.1\r\nHost: crates.test:8080\r\nUser-Agent: git/2.0 "
     "(libgit2 1.5.1)\r\nAccept: */*\r\nConnection: close\r\n\r\n"},
    {G "Host: evil.example\r\n\r\n",
     "GET / HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n"},
    {G "Host: example.com.evil\r\n\r\n",
     "GET / HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n"},
    {G "Host: example.com:8080\r\n\r\n",
     "GET / HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n"},
    {"GET http://127.0.0.1/ HTTP/1.1\r\nHost: 127.1\r\n\r\n",
     "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"},
    {"GET http://[::1]:8080/ HTTP/1.1\r\nHost: localhost:8080\r\n\r\n",
     "GET / HTTP/1.1\r\nHost: [::1]:8080\r\nConnection: close\r\n\r\n"},
    {"GET http://example.com/ HTTP/1.1\r\nX-A: 1\r\nHost: example.com\r\n\r\n",
     "GET / HTTP/1.1\r\nHost: example.com\r\nX-A: 1\r\nConnection: close\r\n\r\n"},
};

START_TEST(rewrite_table)
{
	const char *in = rewrites[_i].in, *want = rewrites[_i].want;

	ck_assert_int_eq(proxy_http_parse(in, strlen(in), &req), PROXY_HTTP_OK);
	int n = proxy_http_rewrite(in, &req, out, sizeof(out));
	ck_assert_str_eq(out, want);
	ck_assert_int_eq(n, (int)strlen(want));
}
END_TEST

START_TEST(rewrite_refusals)
{
	static const char in[] = G "Accept: */*\r\n\r\n";
	static const char con[] = C "\r\n";
	static const char want[] =
	    "GET / HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\nConnection: close\r\n\r\n";

	ck_assert_int_eq(proxy_http_parse(in, sizeof(in) - 1, &req), PROXY_HTTP_OK);
	for (size_t cap = 0; cap < sizeof(want); cap++)
		ck_assert_int_eq(proxy_http_rewrite(in, &req, out, cap), -ENOSPC);
	ck_assert_int_eq(proxy_http_rewrite(in, &req, out, sizeof(want)), sizeof(want) - 1);
	ck_assert_str_eq(out, want);
	/* fields must lie in the buffer the head came from */
	char copy[sizeof(in)];
	memcpy(copy, in, sizeof(in));
	ck_assert_int_eq(proxy_http_rewrite(copy, &req, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(proxy_http_parse(con, sizeof(con) - 1, &req), PROXY_HTTP_OK);
	ck_assert_int_eq(proxy_http_rewrite(con, &req, out, sizeof(out)), -EINVAL);
}
END_TEST

/* ------------------------------------------------------------------ errors */

START_TEST(error_deny)
{
	static const char want[] = "HTTP/1.1 403 Forbidden\r\n"
				   "Content-Type: text/plain; charset=utf-8\r\n"
				   "Content-Length: 58\r\n"
				   "Connection: close\r\n"
				   "X-Halo-Deny: pastebin.com (deniedDomains[0])\r\n"
				   "\r\n"
				   "blocked by egress policy: pastebin.com (deniedDomains[0])\n";
	int n = proxy_http_error(403, "blocked by egress policy: pastebin.com (deniedDomains[0])",
				 "pastebin.com (deniedDomains[0])", NULL, out, sizeof(out));

	ck_assert_str_eq(out, want);
	ck_assert_int_eq(n, sizeof(want) - 1);
	for (size_t cap = 0; cap < sizeof(want); cap++)
		ck_assert_int_eq(proxy_http_error(403,
						  "blocked by egress policy: pastebin.com "
						  "(deniedDomains[0])",
						  "pastebin.com (deniedDomains[0])", NULL, out,
						  cap),
				 -ENOSPC);
}
END_TEST

START_TEST(error_shapes)
{
	proxy_http_error(407, "proxy authentication required", NULL,
			 "proxy authentication required", out, sizeof(out));
	ck_assert_str_eq(out, "HTTP/1.1 407 Proxy Authentication Required\r\n"
			      "Proxy-Authenticate: Basic realm=\"halo-run\"\r\n"
			      "Content-Type: text/plain; charset=utf-8\r\n"
			      "Content-Length: 30\r\n"
			      "Connection: close\r\n"
			      "X-Halo-Error: proxy authentication required\r\n\r\n"
			      "proxy authentication required\n");
	proxy_http_error(502, "x\r\ny", "a\r\nSet-Cookie: s=1\n\x01", NULL, out, sizeof(out));
	ck_assert_str_eq(out, "HTTP/1.1 502 Bad Gateway\r\n"
			      "Content-Type: text/plain; charset=utf-8\r\n"
			      "Content-Length: 5\r\n"
			      "Connection: close\r\n"
			      "X-Halo-Deny: a  Set-Cookie: s=1  \r\n\r\n"
			      "x  y\n");
	proxy_http_error(400, "b", NULL, "chunked body: bare LF\r\nSet-Cookie: s=1", out,
			 sizeof(out));
	ck_assert_str_eq(out, "HTTP/1.1 400 Bad Request\r\n"
			      "Content-Type: text/plain; charset=utf-8\r\n"
			      "Content-Length: 2\r\n"
			      "Connection: close\r\n"
			      "X-Halo-Error: chunked body: bare LF  Set-Cookie: s=1\r\n\r\n"
			      "b\n");
	proxy_http_error(403, "d", "deny", "not both", out, sizeof(out)); /* a denial wins */
	ck_assert_ptr_null(strstr(out, "X-Halo-Error"));
	proxy_http_error(299, NULL, NULL, NULL, out, sizeof(out));
	ck_assert_str_eq(out, "HTTP/1.1 500 Internal Server Error\r\n"
			      "Content-Type: text/plain; charset=utf-8\r\n"
			      "Content-Length: 22\r\n"
			      "Connection: close\r\n\r\n"
			      "Internal Server Error\n");
}
END_TEST

static const struct {
	int code;
	const char *line;
} status_lines[] = {
    {400, "HTTP/1.1 400 Bad Request\r\n"},
    {403, "HTTP/1.1 403 Forbidden\r\n"},
    {405, "HTTP/1.1 405 Method Not Allowed\r\n"},
    {407, "HTTP/1.1 407 Proxy Authentication Required\r\n"},
    {408, "HTTP/1.1 408 Request Timeout\r\n"},
    {411, "HTTP/1.1 411 Length Required\r\n"},
    {413, "HTTP/1.1 413 Content Too Large\r\n"},
    {414, "HTTP/1.1 414 URI Too Long\r\n"},
    {431, "HTTP/1.1 431 Request Header Fields Too Large\r\n"},
    {500, "HTTP/1.1 500 Internal Server Error\r\n"},
    {501, "HTTP/1.1 501 Not Implemented\r\n"},
    {502, "HTTP/1.1 502 Bad Gateway\r\n"},
    {503, "HTTP/1.1 503 Service Unavailable\r\n"},
    {504, "HTTP/1.1 504 Gateway Timeout\r\n"},
    {505, "HTTP/1.1 505 HTTP Version Not Supported\r\n"},
};

START_TEST(status_line_table)
{
	int n = proxy_http_error(status_lines[_i].code, "why", NULL, NULL, out, sizeof(out));

	ck_assert_int_gt(n, 0);
	ck_assert_msg(strncmp(out, status_lines[_i].line, strlen(status_lines[_i].line)) == 0,
		      "got '%.60s'", out);
	ck_assert_str_eq(out + n - 4, "why\n");
}
END_TEST

START_TEST(list_elements)
{
	static const char v[] = " ,a, b ,,\tc-d\t, ";
	const char *e;
	size_t pos = 0, n;

	ck_assert(proxy_http_list_next(v, sizeof(v) - 1, &pos, &e, &n));
	ck_assert(n == 1 && e[0] == 'a');
	ck_assert(proxy_http_list_next(v, sizeof(v) - 1, &pos, &e, &n));
	ck_assert(n == 1 && e[0] == 'b');
	ck_assert(proxy_http_list_next(v, sizeof(v) - 1, &pos, &e, &n));
	ck_assert(n == 3 && memcmp(e, "c-d", 3) == 0);
	ck_assert(!proxy_http_list_next(v, sizeof(v) - 1, &pos, &e, &n));
}
END_TEST

static Suite *http_suite(void)
{
	Suite *s = suite_create("http");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, bad_table, 0, ROWS(bad_rows));
	tcase_add_loop_test(tc, good_table, 0, ROWS(good_rows));
	tcase_add_test(tc, fields_and_auth);
	tcase_add_loop_test(tc, need_more_table, 0, ROWS(need_more));
	tcase_add_test(tc, request_line_limit);
	tcase_add_test(tc, head_limit);
	tcase_add_test(tc, field_count_limit);
	tcase_add_loop_test(tc, byte_by_byte_good, 0, ROWS(good_rows));
	tcase_add_loop_test(tc, byte_by_byte_bad, 0, ROWS(bad_rows));
	suite_add_tcase(s, tc);

	tc = tcase_create("answers");
	tcase_add_loop_test(tc, rewrite_table, 0, ROWS(rewrites));
	tcase_add_test(tc, rewrite_refusals);
	tcase_add_test(tc, error_deny);
	tcase_add_test(tc, error_shapes);
	tcase_add_loop_test(tc, status_line_table, 0, ROWS(status_lines));
	tcase_add_test(tc, list_elements);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(http_suite)
