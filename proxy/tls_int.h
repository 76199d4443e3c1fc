/* Internals of TLS termination (tls.c: the CA, certificates, contexts; conn_tls.c: the
 * terminated connection). Not a public interface. */
#ifndef HALO_PROXY_TLS_INT_H
#define HALO_PROXY_TLS_INT_H

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "proxy/proxy_int.h"

#define TLS_CERT_CACHE_MAX 4096 /* minted certificates kept; beyond, minted per use */
#define TLS_SESS_CACHE_MAX 1024 /* origin sessions kept for resumption, one per host:port */

/* The last session an origin gave us, resumed by the next tunnel to the same host and
 * port: it was made by a verified handshake with that name, so resuming it keeps the
 * verification (and saves the origin's signature and our chain check). */
struct tls_sess {
	struct tls_sess *next;
	SSL_SESSION *s;
	unsigned port;
	char host[POLICY_HOST_MAX + 1];
};

/* The strings a response from a credential's host may never carry inside: the
 * whole value, and each ${VAR} it expanded that is long enough to be a secret of its
 * own (a token echoed without its "Bearer "). pat[0] is values[i]; the rest are owned.
 * A cut occurrence is masked too from TLS_SECRET_PART_MIN bytes of a ${VAR}'s value, and
 * from that many past the last space of the whole value (its scheme, "Bearer ", is no
 * secret): an origin that quotes the request cut at N bytes leaks no usable prefix. */
#define TLS_SECRET_PART_MIN 8
struct tls_secret {
	const char *pat[PROXY_MASK_MAX_PATS];
	size_t stem[PROXY_MASK_MAX_PATS]; /* the shortest cut of pat[k] that is masked */
	size_t n;
};

struct tls_cert {
	struct tls_cert *next;
	X509 *x;
	char host[POLICY_HOST_MAX + 1];
};

struct proxy_tls {
	const struct halo_policy *policy;
	EVP_PKEY *ca_key, *leaf_key; /* never leave this process */
	X509 *ca;
	SSL_CTX *srv;  /* toward the command: our certificates, ALPN http/1.1 only */
	SSL_CTX *cli;  /* toward origins: system roots + egress.trustedCAs, hostname checked */
	char **values; /* the credentials' expanded values, parallel to policy->creds */
	size_t n_values;
	struct tls_secret *secrets; /* what responses are masked for, parallel to values */
	struct tls_cert *certs;
	size_t n_certs;
	struct tls_sess *sessions;
	size_t n_sessions;
	unsigned long long serial;
};

/* The patterns to mask in responses from `host` (none: false). */
bool tls_secret_patterns(const struct proxy_tls *t, const char *host, const char *const **pats,
			 const size_t **stems, size_t *n);
/* tls_secret.c: each credential's value expanded (with the caller's lookup) and its
 * masking patterns; and all of it wiped and freed. */
int tls_values_expand(struct proxy_tls *t, const char *(*lookup)(void *, const char *), void *arg,
		      struct halo_err *e);
void tls_values_free(struct proxy_tls *t);
/* tls_out.c: an SSL's write side, read as a memory BIO is (BIO_get_mem_data,
 * BIO_reset) without its zeroing passes. */
BIO *tls_out_bio_new(void);
/* A server-side SSL for the command's tunnel to `host` (canonical), with the host's
 * certificate (minted now or from the cache), on memory BIOs; NULL with why. */
SSL *tls_server_new(struct proxy_tls *t, const char *host, char *why, size_t n);
/* A client-side SSL toward the origin `host`: SNI, hostname verification, ALPN
 * http/1.1, on memory BIOs; NULL with why. */
SSL *tls_client_new(struct proxy_tls *t, const char *host, unsigned port, char *why, size_t n);
/* The credential for `host`: header name and expanded value, or false. */
bool tls_credential(const struct proxy_tls *t, const char *host, const char **header,
		    const char **value);
/* The last OpenSSL error of this thread, or the verification result, in words. */
void tls_error_text(SSL *ssl, char *out, size_t n);

/* ------------------------------------------------------------ a terminated tunnel */

#define TERM_RBIO_MAX	   (64 * 1024) /* ciphertext waiting per side: its socket is left unread */
#define TERM_HEAD_MAX	   (PROXY_HTTP_MAX_HEAD + 1024)
#define TERM_RESP_HEAD_MAX (64 * 1024)

enum term_rq {
	RQ_HEAD, /* reading the next request head */
	RQ_BODY, /* forwarding its body */
	RQ_WAIT, /* the request is out: its response comes before the next head is read */
};

enum term_rs {
	RS_IDLE, /* no request outstanding */
	RS_HEAD,
	RS_BODY, /* Content-Length or chunked */
	RS_EOF,	 /* delimited by the origin's close */
};

/* The connection's protocol state (c->pstate) once the proxy speaks TLS on both sides:
 * cs toward the command (our certificate), us toward the origin (verified). Both run on
 * memory BIOs; the sockets stay the connection core's, non-blocking, in the one loop. */
struct term {
	SSL *cs, *us;
	bool c_done, u_done; /* handshakes */
	bool u_failed;	     /* the origin's handshake failed: every request gets 502 */
	char u_why[200];
	bool c_eof, u_eof; /* TLS-level end of each side's input */
	enum term_rq rq;
	bool rq_chunked;
	unsigned long long rq_left;
	struct proxy_chunked ck;
	char *ckbuf; /* re-encoded chunked body */
	bool keep;   /* the client asked to keep the connection after this request */
	int minor;
	bool head_req;
	enum term_rs rs;
	char *rb; /* the origin's plaintext: a response head, then what follows it */
	size_t rb_len;
	bool rs_chunked;
	unsigned long long rs_left;
	struct chunk_scan cks;
	bool resp_keep;
	unsigned requests;
	struct proxy_mask *mask; /* the host has a credential: responses are masked */
	char *mbuf;		 /* masked body bytes (with room for chunk framing) */
};

/* mbuf: a chunk-size line before the data, its CRLF after */
#define TERM_MASK_PRE 24
#define TERM_MBUF     (TERM_MASK_PRE + 16384 + PROXY_MASK_MAX_LEN + 2)

static inline struct term *term_of(const struct conn *c)
{
	return c->pstate;
}

/* conn_tls.c: the hello to a terminated host was judged; take the connection over. */
void term_start(struct conn *c);
/* Plaintext into the SSL toward the client or the origin. 0 or -EPROTO. */
int term_send(SSL *ssl, const void *p, size_t n);
/* Read plaintext: bytes, 0 at the TLS-level end (sets *eof), -EAGAIN, -EPROTO. */
long term_recv(SSL *ssl, void *buf, size_t cap, bool *eof);
/* Answer the command over TLS (proxy_http_error's head and body), then close. */
void term_answer(struct conn *c, int status, const char *body, const char *deny, const char *error);
/* close_notify to the command, then the core's linger-close. */
void term_close_client(struct conn *c);

/* conn_tls_http.c: the HTTP/1.1 exchanges. Each sets *progress when it moved. */
void term_requests(struct conn *c, bool *progress);
void term_responses(struct conn *c, bool *progress);

/* tls_lib.c: OpenSSL loaded on first use where the binary does not link it (the
 * Makefile's SSL_LAZY); a no-op where it does. 0, or -ENOENT with e naming the
 * library. proxy_tls_lib_bind is the generated trampolines' slow path. */
int proxy_tls_lib_load(struct halo_err *e);
void *proxy_tls_lib_bind(unsigned idx);

#endif
