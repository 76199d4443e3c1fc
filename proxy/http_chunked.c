/* The chunked request-body decoder of absolute-form forwarding (RFC 9112 7.1).
 *
 * The proxy never passes the client's framing bytes on: it decodes the body and
 * writes a canonical re-encoding for the origin (lower-case hex sizes without leading
 * zeros, no chunk extensions, no trailers, CRLF everywhere), so the origin reads
 * exactly the chunks the proxy read, whatever its own parser tolerates. Chunk
 * boundaries and data bytes are kept as they came. Streaming: data bytes are copied
 * as they arrive, nothing of the body is held here beyond one trailer line.
 *
 * Strict and fail closed, each refusal with its own why (status 400):
 * - chunk-size is 1 to 16 hex digits, at most 2^53 (the Content-Length cap); no sign,
 *   no "0x", no whitespace before it, none after it unless an extension follows;
 * - extensions follow the grammar exactly (BWS ";" BWS token [BWS "=" BWS (token /
 *   quoted-string)]), the whole size line within 4096 bytes, and are then dropped;
 * - every line ends with CRLF: a bare LF or a bare CR is refused, and so is chunk data
 *   not followed by CRLF (a size that disagrees with the data);
 * - trailer fields are validated like header fields (proxy_http_split_field: token
 *   name, no whitespace before the colon, no control byte), no obs-fold, at most 32
 *   fields in 4096 bytes, and dropped (RFC 9110 6.5.1 lets a recipient that removes
 *   the chunked coding discard them; none of our clients send any);
 * - a NUL anywhere in the framing is refused. */
#include <stdio.h>
#include <string.h>

#include "proxy/proxy_parse.h"

#define CK_SIZE_MAX (1ULL << 53)

enum {
	CK_SIZE0,     /* first byte of a chunk-size line */
	CK_SIZE,      /* hex digits */
	CK_BWS,	      /* whitespace after the size or a value: only ';' may follow */
	CK_NAME0,     /* after ';': BWS, then an extension name */
	CK_NAME,      /* extension name */
	CK_NAME_BWS,  /* whitespace after a name: '=' or ';' must follow */
	CK_VAL0,      /* after '=': BWS, then a token or a quoted string */
	CK_VAL,	      /* token value */
	CK_QSTR,      /* inside a quoted string */
	CK_QESC,      /* after a backslash in a quoted string */
	CK_QEND,      /* after the closing quote */
	CK_SIZE_LF,   /* CR seen at the end of the size line */
	CK_DATA,      /* chunk data */
	CK_DATA_CR,   /* the CR after chunk data */
	CK_DATA_LF,   /* the LF after chunk data */
	CK_TRAILER,   /* a trailer line (or the final empty line) */
	CK_TRAILER_LF /* CR seen at the end of a trailer line */
};

static enum proxy_chunk_result fail(struct proxy_chunked *ck, const char *why)
{
	ck->error = true;
	snprintf(ck->why, sizeof(ck->why), "chunked body: %s", why);
	return PROXY_CHUNK_ERROR;
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

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

/* The state after an extension name or value, for a byte that may end it. -1: none. */
static int after_item(unsigned char c, int on_ws)
{
	if (c == ';')
		return CK_NAME0;
	if (c == '\r')
		return CK_SIZE_LF;
	return ws(c) ? on_ws : -1;
}

/* One byte of the size line. NULL or why. */
static const char *size_line_byte(struct proxy_chunked *ck, unsigned char c)
{
	int v = hexval(c), next = -1;

	if (++ck->line >= PROXY_CHUNK_MAX_LINE) /* the LF is not counted here */
		return "chunk-size line longer than 4096 bytes";
	switch (ck->st) {
	case CK_SIZE0:
		if (v < 0)
			return c == '\r' ? "empty chunk size"
			       : ws(c)	 ? "whitespace before the chunk size"
					 : "chunk size is not hexadecimal";
		/* fall through */
	case CK_SIZE:
		if (v >= 0) {
			if (++ck->digits > 16)
				return "chunk size longer than 16 hex digits";
			ck->size = ck->size * 16 + (unsigned)v;
			if (ck->size > CK_SIZE_MAX)
				return "chunk size larger than 2^53";
			next = CK_SIZE;
		} else if ((next = after_item(c, CK_BWS)) < 0) {
			return "chunk size is not hexadecimal";
		}
		break;
	case CK_BWS:
		if (c == '\r')
			return "whitespace at the end of the chunk-size line";
		next = c == ';' ? CK_NAME0 : ws(c) ? CK_BWS : -1;
		break;
	case CK_NAME0:
		next = proxy_http_tchar(c) ? CK_NAME : ws(c) ? CK_NAME0 : -1;
		break;
	case CK_NAME:
		next = proxy_http_tchar(c) ? CK_NAME
		       : c == '='	   ? CK_VAL0
					   : after_item(c, CK_NAME_BWS);
		break;
	case CK_NAME_BWS:
		next = c == '=' ? CK_VAL0 : c == ';' ? CK_NAME0 : ws(c) ? CK_NAME_BWS : -1;
		break;
	case CK_VAL0:
		next = c == '"' ? CK_QSTR : proxy_http_tchar(c) ? CK_VAL : ws(c) ? CK_VAL0 : -1;
		break;
	case CK_VAL:
		next = proxy_http_tchar(c) ? CK_VAL : after_item(c, CK_BWS);
		break;
	case CK_QSTR:
		next = c == '"' ? CK_QEND : c == '\\' ? CK_QESC : qdtext(c, false) ? CK_QSTR : -1;
		break;
	case CK_QESC:
		next = qdtext(c, true) ? CK_QSTR : -1;
		break;
	case CK_QEND:
		next = after_item(c, CK_BWS);
		break;
	}
	if (next < 0)
		return "malformed chunk extension";
	ck->st = next;
	return NULL;
}

/* The CRLF that ends the size line: announce the chunk (or wait for the trailers). */
static void size_line_done(struct proxy_chunked *ck, char *out, size_t *o)
{
	ck->line = 0;
	ck->digits = 0;
	ck->left = ck->size;
	ck->size = 0;
	if (ck->left == 0) {
		ck->st = CK_TRAILER; /* the last chunk: "0\r\n\r\n" goes out at the very end */
		return;
	}
	*o += (size_t)sprintf(out + *o, "%llx\r\n", ck->left);
	ck->st = CK_DATA;
}

/* A complete trailer line (without its CRLF) in ck->tline. NULL or why. */
static const char *trailer_line(struct proxy_chunked *ck)
{
	struct proxy_http_field f;
	const char *why;

	if (ws((unsigned char)ck->tline[0]))
		return "obs-fold (trailer line starting with whitespace) is not accepted";
	if (++ck->trailers > PROXY_CHUNK_MAX_TRAILERS)
		return "more than 32 trailer fields";
	why = proxy_http_split_field(ck->tline, ck->tlen, &f);
	if (why) {
		snprintf(ck->tmp, sizeof(ck->tmp), "trailer: %s", why);
		return ck->tmp;
	}
	return NULL;
}

/* One byte of the trailer section. 1 at its end, 0 to go on, -1 with *why. */
static int trailer_byte(struct proxy_chunked *ck, unsigned char c, const char **why)
{
	if (++ck->tbytes > PROXY_CHUNK_MAX_TRAILER_BYTES) {
		*why = "trailer section longer than 4096 bytes";
		return -1;
	}
	if (ck->st == CK_TRAILER_LF) {
		if (c != '\n') {
			*why = "bare CR in the trailer section";
			return -1;
		}
		if (ck->tlen == 0)
			return 1;
		*why = trailer_line(ck);
		ck->tlen = 0;
		ck->st = CK_TRAILER;
		return *why ? -1 : 0;
	}
	if (c == '\n') {
		*why = "bare LF in the trailer section (CRLF required)";
		return -1;
	}
	if (c == '\r')
		ck->st = CK_TRAILER_LF;
	else
		ck->tline[ck->tlen++] = (char)c; /* tbytes bounds tlen below the buffer */
	return 0;
}

/* One framing byte (not chunk data). 1 at the end of the body, 0 to go on, -1. */
static int framing_byte(struct proxy_chunked *ck, unsigned char c, char *out, size_t *o)
{
	const char *why = NULL;
	int r = 0;

	if (c == '\0')
		return fail(ck, "NUL byte in the chunked framing"), -1;
	switch (ck->st) {
	case CK_SIZE_LF:
		if (c != '\n')
			return fail(ck, "bare CR in a chunk-size line"), -1;
		size_line_done(ck, out, o);
		return 0;
	case CK_DATA_CR:
		if (c != '\r')
			return fail(ck, c == '\n' ? "bare LF after chunk data (CRLF required)"
						  : "chunk data longer than its chunk size"),
			       -1;
		ck->st = CK_DATA_LF;
		return 0;
	case CK_DATA_LF:
		if (c != '\n')
			return fail(ck, "bare CR after chunk data"), -1;
		memcpy(out + *o, "\r\n", 2);
		*o += 2;
		ck->st = CK_SIZE0;
		return 0;
	case CK_TRAILER:
	case CK_TRAILER_LF:
		r = trailer_byte(ck, c, &why);
		break;
	default:
		if (c == '\n')
			return fail(ck, "bare LF in a chunk-size line (CRLF required)"), -1;
		why = size_line_byte(ck, c);
		r = why ? -1 : 0;
	}
	if (r < 0)
		return fail(ck, why), -1;
	return r;
}

enum proxy_chunk_result proxy_chunked_feed(struct proxy_chunked *ck, const char *in, size_t len,
					   size_t *used, char *out, size_t *out_len)
{
	size_t i = 0, o = 0;
	enum proxy_chunk_result res = PROXY_CHUNK_MORE;

	*used = 0;
	*out_len = 0;
	if (ck->error)
		return PROXY_CHUNK_ERROR;
	if (ck->done)
		return PROXY_CHUNK_DONE;
	while (i < len && res == PROXY_CHUNK_MORE) {
		if (ck->st == CK_DATA) {
			size_t take = len - i < ck->left ? len - i : (size_t)ck->left;

			memcpy(out + o, in + i, take);
			o += take;
			i += take;
			ck->left -= take;
			if (ck->left == 0)
				ck->st = CK_DATA_CR;
			continue;
		}
		int r = framing_byte(ck, (unsigned char)in[i++], out, &o);
		if (r < 0)
			return PROXY_CHUNK_ERROR;
		if (r > 0) {
			memcpy(out + o, "0\r\n\r\n", 5);
			o += 5;
			ck->done = true;
			res = PROXY_CHUNK_DONE;
		}
	}
	*used = i;
	*out_len = o;
	return res;
}
