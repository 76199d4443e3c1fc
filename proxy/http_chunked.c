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
 * - the chunk-size line is read by the grammar both directions share
 *   (http_chunk_line.c): 1 to 16 hex digits, at most 2^53 (the Content-Length cap),
 *   extensions exactly as RFC 9112 has them, 4096 bytes; the extensions are dropped;
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

enum {
	CK_LINE,      /* the chunk-size line (http_chunk_line.c) */
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

static bool ws(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* The CRLF that ends the size line: announce the chunk (or wait for the trailers). */
static void size_line_done(struct proxy_chunked *ck, char *out, size_t *o)
{
	ck->left = ck->sl.size;
	ck->sl = (struct proxy_chunk_line){0};
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
		ck->st = CK_LINE;
		return 0;
	case CK_TRAILER:
	case CK_TRAILER_LF:
		r = trailer_byte(ck, c, &why);
		break;
	default:
		r = proxy_chunk_line_byte(&ck->sl, c, &why);
		if (r == PROXY_CHUNK_LINE_CR)
			ck->st = CK_SIZE_LF;
		r = r == PROXY_CHUNK_LINE_BAD ? -1 : 0;
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
