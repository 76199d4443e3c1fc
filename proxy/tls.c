/* The run's TLS termination material: a CA made at launch (EC P-256, name-constrained
 * to the hosts the policy terminates, so that even a leaked key could not vouch for
 * any other name), one leaf key, a certificate per host minted on first use and
 * cached, and the two contexts. The keys exist only in this process's memory. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proxy/proxy_int.h"

#ifdef PROXY_TLS

#include <openssl/err.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include "proxy/tls_int.h"

#define CA_DAYS	  30 /* a run or a session; the CA dies with the process anyway */
#define LEAF_DAYS 7

static const char *const system_bundles[] = {
    "/etc/ssl/certs/ca-certificates.crt", /* Debian, Ubuntu, Alpine */
    "/etc/pki/tls/certs/ca-bundle.crt",	  /* Fedora, RHEL */
    "/etc/ssl/ca-bundle.pem",		  /* openSUSE */
    "/etc/ssl/cert.pem",		  /* Alpine, macOS */
    NULL,
};

void tls_error_text(SSL *ssl, char *out, size_t n)
{
	unsigned long e = ERR_peek_last_error();
	long v = ssl ? SSL_get_verify_result(ssl) : X509_V_OK;

	if (ssl && v != X509_V_OK)
		snprintf(out, n, "certificate verify failed: %s", X509_verify_cert_error_string(v));
	else if (e)
		snprintf(out, n, "%s",
			 ERR_reason_error_string(e) ? ERR_reason_error_string(e) : "TLS error");
	else
		snprintf(out, n, "TLS handshake failed");
	ERR_clear_error();
}

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ex;
	int ok;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	ex = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!ex)
		return -EINVAL;
	ok = X509_add_ext(cert, ex, -1);
	X509_EXTENSION_free(ex);
	return ok ? 0 : -ENOMEM;
}

static X509 *cert_base(struct proxy_tls *t, EVP_PKEY *key, const char *cn, long days)
{
	X509 *x = X509_new();
	X509_NAME *name;

	if (!x)
		return NULL;
	X509_set_version(x, 2);
	ASN1_INTEGER_set_uint64(X509_get_serialNumber(x), ++t->serial);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), days * 86400L);
	X509_set_pubkey(x, key);
	name = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"halo-run", -1,
				   -1, 0);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
	return x;
}

/* "critical,permitted;DNS:a.example,permitted;DNS:example.org": every host the
 * policy terminates (a wildcard's suffix, which covers its subdomains). */
static int name_constraints(const struct halo_policy *p, char *out, size_t n)
{
	size_t len = (size_t)snprintf(out, n, "critical");

	for (size_t i = 0; i < p->n_creds + p->n_req_rules; i++) {
		const char *h =
		    i < p->n_creds ? p->creds[i].host : p->req_rules[i - p->n_creds].host;

		if (!h)
			continue;
		if (strncmp(h, "*.", 2) == 0)
			h += 2;
		len += (size_t)snprintf(out + len, len < n ? n - len : 0, ",permitted;DNS:%s", h);
	}
	return len < n ? 0 : -ENOSPC;
}

static int make_ca(struct proxy_tls *t, struct halo_err *e)
{
	char cn[64], nc[8192];
	unsigned char rnd[8];

	t->ca_key = EVP_EC_gen("P-256");
	t->leaf_key = EVP_EC_gen("P-256");
	if (!t->ca_key || !t->leaf_key || RAND_bytes(rnd, sizeof(rnd)) != 1) {
		halo_err_set(e, "TLS termination: cannot make the run's keys");
		return -ENOMEM;
	}
	t->serial = 0;
	for (size_t i = 0; i < sizeof(rnd); i++) /* serials differ between runs */
		t->serial = t->serial << 8 | rnd[i];
	t->serial &= 0x3fffffffffff0000ULL;
	snprintf(cn, sizeof(cn), "halo-run per-run CA %02x%02x%02x%02x%02x%02x", rnd[2], rnd[3],
		 rnd[4], rnd[5], rnd[6], rnd[7]);
	t->ca = cert_base(t, t->ca_key, cn, CA_DAYS);
	if (!t->ca || name_constraints(t->policy, nc, sizeof(nc)) < 0 ||
	    !X509_set_issuer_name(t->ca, X509_get_subject_name(t->ca)) ||
	    add_ext(t->ca, t->ca, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
	    add_ext(t->ca, t->ca, NID_key_usage, "critical,keyCertSign,cRLSign") ||
	    add_ext(t->ca, t->ca, NID_subject_key_identifier, "hash") ||
	    add_ext(t->ca, t->ca, NID_name_constraints, nc) ||
	    !X509_sign(t->ca, t->ca_key, EVP_sha256())) {
		halo_err_set(e, "TLS termination: cannot make the run's CA certificate");
		return -ENOMEM;
	}
	return 0;
}

static X509 *mint(struct proxy_tls *t, const char *host)
{
	char san[POLICY_HOST_MAX + 8];
	X509 *x = cert_base(t, t->leaf_key, host, LEAF_DAYS);

	snprintf(san, sizeof(san), "DNS:%s", host);
	if (!x || !X509_set_issuer_name(x, X509_get_subject_name(t->ca)) ||
	    add_ext(x, t->ca, NID_basic_constraints, "critical,CA:FALSE") ||
	    add_ext(x, t->ca, NID_key_usage, "critical,digitalSignature") ||
	    add_ext(x, t->ca, NID_ext_key_usage, "serverAuth") ||
	    add_ext(x, t->ca, NID_authority_key_identifier, "keyid:always") ||
	    add_ext(x, t->ca, NID_subject_alt_name, san) ||
	    !X509_sign(x, t->ca_key, EVP_sha256())) {
		X509_free(x);
		return NULL;
	}
	return x;
}

/* The host's certificate, a new reference (X509_free it). */
static X509 *cert_for(struct proxy_tls *t, const char *host)
{
	struct tls_cert *c;
	X509 *x;

	for (c = t->certs; c; c = c->next)
		if (strcmp(c->host, host) == 0) {
			X509_up_ref(c->x);
			return c->x;
		}
	x = mint(t, host);
	if (!x || t->n_certs >= TLS_CERT_CACHE_MAX || !(c = calloc(1, sizeof(*c))))
		return x;
	snprintf(c->host, sizeof(c->host), "%s", host);
	c->x = x;
	X509_up_ref(x);
	c->next = t->certs;
	t->certs = c;
	t->n_certs++;
	return x;
}

static void mem_bios(SSL *ssl)
{
	BIO *r = BIO_new(BIO_s_mem()), *w = tls_out_bio_new();

	if (!r || !w) {
		BIO_free(r);
		BIO_free(w);
		return;
	}
	BIO_set_mem_eof_return(r, -1); /* empty means "more to come" until the socket's EOF */
	SSL_set_bio(ssl, r, w);
}

SSL *tls_server_new(struct proxy_tls *t, const char *host, char *why, size_t n)
{
	X509 *x = t->ca ? cert_for(t, host) : NULL; /* no CA: proxy_tls_make_ca was not called */
	SSL *ssl = x ? SSL_new(t->srv) : NULL;

	if (!ssl || SSL_use_certificate(ssl, x) != 1 || SSL_use_PrivateKey(ssl, t->leaf_key) != 1) {
		snprintf(why, n, "cannot mint a certificate for %s", host);
		SSL_free(ssl);
		X509_free(x);
		return NULL;
	}
	X509_free(x);
	mem_bios(ssl);
	if (!SSL_get_rbio(ssl)) {
		snprintf(why, n, "out of memory");
		SSL_free(ssl);
		return NULL;
	}
	SSL_set_accept_state(ssl);
	return ssl;
}

static int sess_index = -1; /* SSL ex_data: the struct tls_sess key of a client SSL */

static struct tls_sess *sess_slot(struct proxy_tls *t, const char *host, unsigned port, bool make)
{
	struct tls_sess *s;

	for (s = t->sessions; s; s = s->next)
		if (s->port == port && strcmp(s->host, host) == 0)
			return s;
	if (!make || t->n_sessions >= TLS_SESS_CACHE_MAX || !(s = calloc(1, sizeof(*s))))
		return NULL;
	snprintf(s->host, sizeof(s->host), "%s", host);
	s->port = port;
	s->next = t->sessions;
	t->sessions = s;
	t->n_sessions++;
	return s;
}

/* A session (or TLS 1.3 ticket) from a verified origin: kept for its host:port. */
static int on_new_session(SSL *ssl, SSL_SESSION *sess)
{
	struct tls_sess *slot = SSL_get_ex_data(ssl, sess_index);

	if (!slot || SSL_get_verify_result(ssl) != X509_V_OK)
		return 0;
	SSL_SESSION_free(slot->s);
	slot->s = sess;
	return 1; /* ours now */
}

SSL *tls_client_new(struct proxy_tls *t, const char *host, unsigned port, char *why, size_t n)
{
	SSL *ssl = SSL_new(t->cli);
	struct tls_sess *slot = sess_slot(t, host, port, true);

	if (ssl && slot) {
		SSL_set_ex_data(ssl, sess_index, slot);
		if (slot->s)
			SSL_set_session(ssl, slot->s);
	}
	if (!ssl || SSL_set_tlsext_host_name(ssl, host) != 1 || SSL_set1_host(ssl, host) != 1) {
		snprintf(why, n, "cannot set up TLS toward %s", host);
		SSL_free(ssl);
		return NULL;
	}
	mem_bios(ssl);
	if (!SSL_get_rbio(ssl)) {
		snprintf(why, n, "out of memory");
		SSL_free(ssl);
		return NULL;
	}
	SSL_set_connect_state(ssl);
	return ssl;
}

/* ALPN toward the command: HTTP/1.1 only. A client that offers only h2 gets no ALPN
 * answer, and then speaks HTTP/1.1 or gives up (stated in the README). */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	(void)ssl;
	(void)arg;
	for (unsigned i = 0; i < inlen; i += 1u + in[i])
		if (in[i] == 8 && i + 9 <= inlen && memcmp(in + i + 1, "http/1.1", 8) == 0) {
			*out = in + i + 1;
			*outlen = 8;
			return SSL_TLSEXT_ERR_OK;
		}
	return SSL_TLSEXT_ERR_NOACK;
}

/* The system roots for origin verification. Reading the whole bundle costs the
 * launch ~17 ms; the hashed directory (/etc/ssl/certs on Debian) is looked up lazily,
 * one issuer at a time, so it is preferred when it is there and the caller has not
 * named a bundle of their own (SSL_CERT_FILE, which OpenSSL's defaults honour). */
static int load_system_roots(SSL_CTX *ctx)
{
	const char *dir = getenv(X509_get_default_cert_dir_env());
	const char *file = getenv(X509_get_default_cert_file_env());
	char probe[512];
	struct stat ps, fs;

	if (!dir)
		dir = X509_get_default_cert_dir();
	snprintf(probe, sizeof(probe), "%s/ca-certificates.crt", dir);
	/* A bundle named by the caller counts unless it is that directory's own. */
	if (stat(probe, &ps) != 0 ||
	    (file && (stat(file, &fs) != 0 || fs.st_dev != ps.st_dev || fs.st_ino != ps.st_ino)))
		return SSL_CTX_set_default_verify_paths(ctx);
	return SSL_CTX_set_default_verify_dir(ctx);
}

static int make_contexts(struct proxy_tls *t, struct halo_err *e)
{
	static const unsigned char alpn[] = "\x08http/1.1";
	const struct policy_list *cas = &t->policy->trusted_cas;
	long opts = SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION;

	t->srv = SSL_CTX_new(TLS_server_method());
	t->cli = SSL_CTX_new(TLS_client_method());
	if (!t->srv || !t->cli) {
		halo_err_set(e, "TLS termination: out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < 2; i++) {
		SSL_CTX *ctx = i ? t->cli : t->srv;

		SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
		SSL_CTX_set_options(ctx, opts);
		SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	}
	SSL_CTX_set_alpn_select_cb(t->srv, alpn_select, NULL);
	SSL_CTX_set_session_cache_mode(t->srv, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_num_tickets(t->srv, 0);
	SSL_CTX_set_verify(t->cli, SSL_VERIFY_PEER, NULL);
	if (sess_index < 0)
		sess_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
	SSL_CTX_set_session_cache_mode(t->cli,
				       SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(t->cli, on_new_session);
	SSL_CTX_set_alpn_protos(t->cli, alpn, sizeof(alpn) - 1);
	if (load_system_roots(t->cli) != 1) {
		halo_err_set(e, "TLS termination: cannot load the system's root certificates");
		return -EINVAL;
	}
	for (size_t i = 0; i < cas->n; i++)
		if (SSL_CTX_load_verify_locations(t->cli, cas->items[i], NULL) != 1) {
			ERR_clear_error();
			halo_err_set(
			    e, "egress.trustedCAs[%zu] %s: cannot be read as PEM certificates", i,
			    cas->items[i]);
			return -EINVAL;
		}
	return 0;
}

int proxy_tls_prepare(const struct halo_policy *p,
		      const char *(*lookup)(void *arg, const char *name), void *arg,
		      struct proxy_tls **out, struct halo_err *e)
{
	struct proxy_tls *t;
	int rc;

	*out = NULL;
	if ((rc = proxy_tls_lib_load(e)) < 0) /* the first OpenSSL call of a run */
		return rc;
	t = calloc(1, sizeof(*t));
	if (!t) {
		halo_err_set(e, "TLS termination: out of memory");
		return -ENOMEM;
	}
	t->policy = p;
	rc = tls_values_expand(t, lookup, arg, e);
	if (rc == 0)
		rc = make_contexts(t, e);
	if (rc < 0) {
		if (rc == -ENOMEM && !e->msg[0])
			halo_err_set(e, "TLS termination: out of memory");
		proxy_tls_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int proxy_tls_make_ca(struct proxy_tls *t, struct halo_err *e)
{
	if (t->ca_key) {
		halo_err_set(e, "TLS termination: the run's CA exists already");
		return -EEXIST;
	}
	return make_ca(t, e);
}

int proxy_tls_new(const struct halo_policy *p, const char *(*lookup)(void *arg, const char *name),
		  void *arg, struct proxy_tls **out, struct halo_err *e)
{
	int rc = proxy_tls_prepare(p, lookup, arg, out, e);

	if (rc == 0 && (rc = proxy_tls_make_ca(*out, e)) < 0) {
		proxy_tls_free(*out);
		*out = NULL;
	}
	return rc;
}

void proxy_tls_free(struct proxy_tls *t)
{
	if (!t)
		return;
	tls_values_free(t);
	while (t->sessions) {
		struct tls_sess *s = t->sessions;
		t->sessions = s->next;
		SSL_SESSION_free(s->s);
		free(s);
	}
	while (t->certs) {
		struct tls_cert *c = t->certs;
		t->certs = c->next;
		X509_free(c->x);
		free(c);
	}
	SSL_CTX_free(t->srv);
	SSL_CTX_free(t->cli);
	X509_free(t->ca);
	EVP_PKEY_free(t->ca_key);
	EVP_PKEY_free(t->leaf_key);
	free(t);
}

int proxy_tls_ca_pem(const struct proxy_tls *t, char **pem, size_t *len, struct halo_err *e)
{
	BIO *b = t->ca ? BIO_new(BIO_s_mem()) : NULL; /* no CA before proxy_tls_make_ca */
	char *data;
	long n;

	if (!b || PEM_write_bio_X509(b, t->ca) != 1 || (n = BIO_get_mem_data(b, &data)) <= 0 ||
	    !(*pem = malloc((size_t)n + 1))) {
		BIO_free(b);
		halo_err_set(e, "TLS termination: cannot write the CA certificate");
		return -ENOMEM;
	}
	memcpy(*pem, data, (size_t)n);
	(*pem)[n] = '\0';
	*len = (size_t)n;
	BIO_free(b);
	return 0;
}

/* For the test that looks for the keys in other processes' memory: the SHA-256 of each
 * private scalar as 32 little-endian bytes, which is how OpenSSL's BIGNUM holds it on a
 * little-endian machine (the words, least significant first). The digests say nothing
 * of the keys. */
static int scalar_digest(EVP_PKEY *k, unsigned char out[32])
{
	BIGNUM *d = NULL;
	unsigned char le[32];
	unsigned int n = 32;
	int ok = k && EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_PRIV_KEY, &d) == 1 &&
		 BN_bn2lebinpad(d, le, sizeof(le)) == (int)sizeof(le) &&
		 EVP_Digest(le, sizeof(le), out, &n, EVP_sha256(), NULL) == 1;

	OPENSSL_cleanse(le, sizeof(le));
	BN_clear_free(d);
	return ok ? 0 : -EINVAL;
}

int proxy_tls_key_digests(const struct proxy_tls *t, unsigned char ca[32], unsigned char leaf[32])
{
	if (!t || scalar_digest(t->ca_key, ca) < 0 || scalar_digest(t->leaf_key, leaf) < 0)
		return -EINVAL;
	return 0;
}

/* The first system bundle that exists, read whole (at most 8 MiB). */
static int read_system_roots(char **buf, size_t *len)
{
	for (size_t i = 0; system_bundles[i]; i++) {
		int fd = open(system_bundles[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		struct stat st;
		ssize_t r;

		if (fd < 0)
			continue;
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (8 << 20) ||
		    !(*buf = malloc((size_t)st.st_size + 1))) {
			close(fd);
			continue;
		}
		r = read(fd, *buf, (size_t)st.st_size);
		close(fd);
		if (r == st.st_size) {
			*len = (size_t)r;
			return 0;
		}
		free(*buf);
		*buf = NULL;
	}
	return -ENOENT;
}

int proxy_tls_bundle(const struct proxy_tls *t, char **pem, size_t *len, struct halo_err *e)
{
	char *roots = NULL, *ca, *all;
	size_t rl = 0, cl;
	int rc = proxy_tls_ca_pem(t, &ca, &cl, e);

	if (rc < 0)
		return rc;
	read_system_roots(&roots, &rl); /* none: the bundle holds the CA alone */
	all = malloc(rl + cl + 2);
	if (!all) {
		free(roots);
		free(ca);
		halo_err_set(e, "TLS termination: out of memory");
		return -ENOMEM;
	}
	if (rl)
		memcpy(all, roots, rl);
	if (rl && roots[rl - 1] != '\n')
		all[rl++] = '\n';
	memcpy(all + rl, ca, cl + 1);
	*pem = all;
	*len = rl + cl;
	free(roots);
	free(ca);
	return 0;
}

#else /* a build without OpenSSL: a policy that terminates TLS cannot run here */

int proxy_tls_new(const struct halo_policy *p, const char *(*lookup)(void *arg, const char *name),
		  void *arg, struct proxy_tls **out, struct halo_err *e)
{
	(void)p;
	(void)lookup;
	(void)arg;
	*out = NULL;
	halo_err_set(e, "egress.credentials and egress.requestRules need TLS termination, which "
			"this build of halo-run does not have (Linux only for now)");
	return -ENOTSUP;
}

int proxy_tls_prepare(const struct halo_policy *p,
		      const char *(*lookup)(void *arg, const char *name), void *arg,
		      struct proxy_tls **out, struct halo_err *e)
{
	return proxy_tls_new(p, lookup, arg, out, e);
}

int proxy_tls_make_ca(struct proxy_tls *t, struct halo_err *e)
{
	(void)t;
	halo_err_set(e, "no TLS termination in this build");
	return -ENOTSUP;
}

void proxy_tls_free(struct proxy_tls *t)
{
	(void)t;
}

void proxy_tls_wipe_values(struct proxy_tls *t)
{
	(void)t;
}

int proxy_tls_ca_pem(const struct proxy_tls *t, char **pem, size_t *len, struct halo_err *e)
{
	(void)t;
	(void)pem;
	(void)len;
	halo_err_set(e, "no TLS termination in this build");
	return -ENOTSUP;
}

int proxy_tls_bundle(const struct proxy_tls *t, char **pem, size_t *len, struct halo_err *e)
{
	return proxy_tls_ca_pem(t, pem, len, e);
}

int proxy_tls_key_digests(const struct proxy_tls *t, unsigned char ca[32], unsigned char leaf[32])
{
	(void)t;
	(void)ca;
	(void)leaf;
	return -ENOTSUP;
}

#endif
