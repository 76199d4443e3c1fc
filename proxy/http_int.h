/* The HTTP protocol's own internals, shared by conn_http.c (request heads, CONNECT,
 * answers) and conn_fwd.c (absolute-form forwarding). The connection core never
 * includes this: it reaches HTTP through proxy_proto_http. */
#ifndef HALO_PROXY_HTTP_INT_H
#define HALO_PROXY_HTTP_INT_H

#include "proxy/proxy_int.h"

struct fwd;

/* The request being forwarded on this connection (c->pstate), or NULL. */
static inline struct fwd *fwd_of(const struct conn *c)
{
	return c->pstate;
}

/* ------------------------------------------------------------ conn_http.c */
/* Parse what waits in c->in: a head starts its exchange; nothing, more is read. */
void http_parse_pending(struct conn *c);

/* ------------------------------------------------------------- conn_fwd.c */
struct fwd *fwd_new(const struct proxy_http_req *req);
void fwd_set_head(struct fwd *f, char *head, size_t len); /* takes head */
void fwd_start(struct conn *c);
void fwd_on_client(struct conn *c, unsigned events);
void fwd_on_upstream(struct conn *c, unsigned events);
void fwd_free(struct fwd *f);
bool fwd_response_started(const struct fwd *f);
bool fwd_wants_client_in(const struct conn *c);

#endif
