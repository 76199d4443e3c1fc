/* The chunk-size line (RFC 9112 7.1), one grammar for both directions: the client's
 * request bodies (http_chunked.c decodes and re-encodes them) and the origin's
 * response bodies (resp.c finds where they end). Two grammars would let a body end
 * in one place for the proxy and in another for the peer; the strict one is kept for
 * both: see proxy_parse.h for the rules. */
#include "policy/policy.h"
#include "proxy/proxy_parse.h"

enum {
	CL_SIZE0,    /* first byte of the line */
	CL_SIZE,     /* hex digits */
	CL_BWS,	     /* whitespace after the size or a value: only ';' may follow */
	CL_NAME0,    /* after ';': BWS, then an extension name */
	CL_NAME,     /* extension name */
	CL_NAME_BWS, /* whitespace after a name: '=' or ';' must follow */
	CL_VAL0,     /* after '=': BWS, then a token or a quoted string */
	CL_VAL,	     /* token value */
	CL_QSTR,     /* inside a quoted string */
	CL_QESC,     /* after a backslash in a quoted string */
	CL_QEND,     /* after the closing quote */
};

static bool ws(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* qdtext and the byte after a backslash (RFC 9110 5.6.4), obs-text included. */
static bool qdtext(unsigned char c, bool escaped)
{
	if (c == '\t' || c == ' ' || c >= 0x80)
		return true;
	if (c < 0x21 || c == 0x7f)
		return false;
	return escaped || (c != '"' && c != '\\');
}

/* The state after an extension name or value, for a byte that may end it; CL_SIZE0
 * stands for the CR that ends the line. -1: none. */
static int after_item(unsigned char c, int on_ws)
{
	if (c == ';')
		return CL_NAME0;
	if (c == '\r')
		return CL_SIZE0;
	return ws(c) ? on_ws : -1;
}

/* A digit of the size: NULL or why. */
static const char *digit(struct proxy_chunk_line *l, int v)
{
	if (++l->digits > 16)
		return "chunk size longer than 16 hex digits";
	l->size = l->size * 16 + (unsigned)v; /* at most 2^53 * 16: no wrap */
	if (l->size > PROXY_HTTP_SIZE_MAX)
		return "chunk size larger than 2^53";
	return NULL;
}

/* The next state, -1 for a malformed extension; or *why for a refusal of its own. */
static int next_state(struct proxy_chunk_line *l, unsigned char c, const char **why)
{
	int v = policy_hexval(c);

	switch (l->st) {
	case CL_SIZE0:
		if (v < 0) {
			*why = c == '\r' ? "empty chunk size"
			       : ws(c)	 ? "whitespace before the chunk size"
					 : "chunk size is not hexadecimal";
			return -1;
		}
		/* fall through */
	case CL_SIZE:
		if (v >= 0)
			return (*why = digit(l, v)) ? -1 : CL_SIZE;
		if (after_item(c, CL_BWS) < 0)
			*why = "chunk size is not hexadecimal";
		return after_item(c, CL_BWS);
	case CL_BWS:
		if (c == '\r')
			*why = "whitespace at the end of the chunk-size line";
		return c == ';' ? CL_NAME0 : ws(c) ? CL_BWS : -1;
	case CL_NAME0:
		return proxy_http_tchar(c) ? CL_NAME : ws(c) ? CL_NAME0 : -1;
	case CL_NAME:
		return proxy_http_tchar(c) ? CL_NAME
		       : c == '='	   ? CL_VAL0
					   : after_item(c, CL_NAME_BWS);
	case CL_NAME_BWS:
		return c == '=' ? CL_VAL0 : c == ';' ? CL_NAME0 : ws(c) ? CL_NAME_BWS : -1;
	case CL_VAL0:
		return c == '"' ? CL_QSTR : proxy_http_tchar(c) ? CL_VAL : ws(c) ? CL_VAL0 : -1;
	case CL_VAL:
		return proxy_http_tchar(c) ? CL_VAL : after_item(c, CL_BWS);
	case CL_QSTR:
		return c == '"' ? CL_QEND : c == '\\' ? CL_QESC : qdtext(c, false) ? CL_QSTR : -1;
	case CL_QESC:
		return qdtext(c, true) ? CL_QSTR : -1;
	case CL_QEND:
		return after_item(c, CL_BWS);
	}
	return -1;
}

enum proxy_chunk_line_result proxy_chunk_line_byte(struct proxy_chunk_line *l, unsigned char c,
						   const char **why)
{
	int next;

	*why = NULL;
	if (c == '\0')
		*why = "NUL byte in the chunked framing";
	else if (c == '\n')
		*why = "bare LF in a chunk-size line (CRLF required)";
	else if (++l->len >= PROXY_CHUNK_MAX_LINE) /* the LF is not counted here */
		*why = "chunk-size line longer than 4096 bytes";
	if (*why)
		return PROXY_CHUNK_LINE_BAD;
	next = next_state(l, c, why);
	if (next < 0) {
		if (!*why)
			*why = "malformed chunk extension";
		return PROXY_CHUNK_LINE_BAD;
	}
	/* Only a CR takes a line that has a size back to CL_SIZE0. */
	if (next == CL_SIZE0)
		return PROXY_CHUNK_LINE_CR;
	l->st = next;
	return PROXY_CHUNK_LINE_MORE;
}
