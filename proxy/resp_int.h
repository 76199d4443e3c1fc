/* An origin's response as the proxy reads it (resp.c): the head's framing fields, its
 * rewrite for the client, and the chunked body's scanner. Private to proxy/ (included
 * by proxy_int.h). */
#ifndef HALO_PROXY_RESP_INT_H
#define HALO_PROXY_RESP_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "proxy/proxy.h"
#include "proxy/proxy_parse.h"

struct resp_head {
	int status;
	int minor;
	size_t head_len;
	bool has_cl;
	unsigned long long cl;
	bool has_te;
	bool chunked;	  /* Transfer-Encoding whose final coding is chunked */
	bool conflicting; /* both TE and CL, or duplicate CL values disagreeing */
	bool encoded;	  /* a Content-Encoding other than identity, or a transfer coding
			   * other than chunked, or chunked twice or not last: the body's
			   * bytes are not its text */
};

enum resp_result { RESP_NEED_MORE = 0, RESP_OK = 1, RESP_BAD = -1 };

enum resp_result resp_parse(const char *buf, size_t len, struct resp_head *h);
/* The response head for the client: status line kept, Connection, Keep-Alive,
 * Proxy-Connection and the fields Connection names dropped, then our own Connection
 * field (close, or keep-alive for a 1.0 client we keep). Returns length or -ENOSPC. */
int resp_rewrite(const char *buf, const struct resp_head *h, bool keep, int client_minor, char *out,
		 size_t outlen);

/* Does one of the head's Connection fields name token (no case)? */
bool resp_connection_names(const char *buf, size_t head_len, const char *token);

/* An origin's chunked body; zero-initialised to start one. */
struct chunk_scan {
	int st;
	unsigned long long left;
	struct proxy_chunk_line line; /* the size line: the grammar of both directions */
};
/* Feed body bytes; returns how many belong to the body (== len unless the end was
 * found), sets *done at the end of the chunked body, -1 on a framing error (a size
 * line proxy_chunk_line_byte refuses, a bare CR or LF in the framing). */
long chunk_scan(struct chunk_scan *cs, const char *p, size_t len, bool *done);
/* The same, stopping after the first run of chunk data it meets: *data, *dlen point
 * at it (dlen 0: the bytes taken held only framing). Returns the bytes taken. */
long chunk_scan_data(struct chunk_scan *cs, const char *p, size_t len, bool *done,
		     const char **data, size_t *dlen);

#endif
