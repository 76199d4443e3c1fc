/* A terminated tunnel's SSL output (both SSLs' write side): records appended to a plain
 * buffer, which conn_tls.c sends from (BIO_get_mem_data) and empties (BIO_reset), as it
 * did with a memory BIO. The memory BIO zeroes every byte it is given before copying it
 * in (BUF_MEM_grow_clean) and its whole buffer again at each reset: three passes over
 * each byte of a terminated transfer where one copy is enough. The bytes are TLS
 * records, ciphertext: nothing to wipe. */
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy_int.h"

#ifdef PROXY_TLS

#include <pthread.h>

#include "proxy/tls_int.h"

struct out_buf {
	char *p;
	size_t len, cap;
};

static int out_write(BIO *b, const char *in, int n)
{
	struct out_buf *o = BIO_get_data(b);
	size_t cap;
	char *p;

	BIO_clear_retry_flags(b);
	if (n <= 0 || !in || !o)
		return 0;
	if (o->len + (size_t)n > o->cap) {
		for (cap = o->cap ? o->cap : 16384; cap < o->len + (size_t)n; cap *= 2)
			;
		if (!(p = realloc(o->p, cap)))
			return -1;
		o->p = p;
		o->cap = cap;
	}
	memcpy(o->p + o->len, in, (size_t)n);
	o->len += (size_t)n;
	return n;
}

static long out_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	struct out_buf *o = BIO_get_data(b);

	(void)num;
	if (!o)
		return 0;
	switch (cmd) {
	case BIO_CTRL_INFO: /* BIO_get_mem_data */
		if (ptr)
			*(char **)ptr = o->p;
		return (long)o->len;
	case BIO_CTRL_RESET:
		o->len = 0;
		return 1;
	case BIO_CTRL_PENDING:
	case BIO_CTRL_WPENDING:
		return (long)o->len;
	case BIO_CTRL_FLUSH:
		return 1;
	default:
		return 0;
	}
}

static int out_create(BIO *b)
{
	struct out_buf *o = calloc(1, sizeof(*o));

	if (!o)
		return 0;
	BIO_set_data(b, o);
	BIO_set_init(b, 1);
	return 1;
}

static int out_destroy(BIO *b)
{
	struct out_buf *o = BIO_get_data(b);

	if (o)
		free(o->p);
	free(o);
	BIO_set_data(b, NULL);
	return 1;
}

static BIO_METHOD *out_method;

static void out_method_make(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "halo-tls-out");

	if (m && (!BIO_meth_set_write(m, out_write) || !BIO_meth_set_ctrl(m, out_ctrl) ||
		  !BIO_meth_set_create(m, out_create) || !BIO_meth_set_destroy(m, out_destroy))) {
		BIO_meth_free(m);
		m = NULL;
	}
	out_method = m;
}

BIO *tls_out_bio_new(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, out_method_make);
	return out_method ? BIO_new(out_method) : BIO_new(BIO_s_mem());
}

#endif
