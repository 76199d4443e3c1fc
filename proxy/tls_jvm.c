/* The JVM's trust store for a run with TLS termination: the JVM reads neither PEM
 * bundles nor SSL_CERT_FILE, only a key store named by -Djavax.net.ssl.trustStore. A
 * PKCS#12 file of certificate entries is one, provided every entry carries Oracle's
 * "trusted key usage" attribute (2.16.840.1.113894.746875.1.1 = anyExtendedKeyUsage):
 * without it the JDK loads the file and trusts nothing in it. The store holds the
 * system roots and the run's CA: public material only, so its password is the JDK's
 * well-known default. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy_int.h"

#ifdef PROXY_TLS

#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>

#include "proxy/tls_int.h"

#define JDK_TRUST_OID "2.16.840.1.113894.746875.1.1"
#define ANY_EKU_OID   "2.5.29.37.0"

static int add_trusted(STACK_OF(PKCS12_SAFEBAG) * *bags, X509 *x)
{
	PKCS12_SAFEBAG *bag = PKCS12_add_cert(bags, x);
	ASN1_OBJECT *eku = OBJ_txt2obj(ANY_EKU_OID, 1);
	int ok = bag && eku &&
		 PKCS12_add1_attr_by_txt(bag, JDK_TRUST_OID, V_ASN1_OBJECT, (unsigned char *)eku,
					 -1) == 1;

	ASN1_OBJECT_free(eku);
	return ok ? 0 : -ENOMEM;
}

/* Every certificate of the PEM text, trusted. */
static int add_pem(STACK_OF(PKCS12_SAFEBAG) * *bags, const char *pem, size_t len)
{
	BIO *b = BIO_new_mem_buf(pem, (int)len);
	X509 *x;
	int rc = 0, n = 0;

	if (!b)
		return -ENOMEM;
	while (rc == 0 && (x = PEM_read_bio_X509(b, NULL, NULL, NULL))) {
		rc = add_trusted(bags, x);
		X509_free(x);
		n++;
	}
	ERR_clear_error(); /* the end of the text reads as an error */
	BIO_free(b);
	return rc ? rc : n ? 0 : -EINVAL;
}

int proxy_tls_jvm_store(const struct proxy_tls *t, unsigned char **der, size_t *len,
			struct halo_err *e)
{
	STACK_OF(PKCS12_SAFEBAG) *bags = NULL;
	STACK_OF(PKCS7) *safes = NULL;
	PKCS12 *p12 = NULL;
	unsigned char *out = NULL;
	char *bundle = NULL;
	size_t bl = 0;
	int rc = proxy_tls_bundle(t, &bundle, &bl, e), n;

	*der = NULL;
	if (rc < 0)
		return rc;
	rc = add_pem(&bags, bundle, bl);
	if (rc == 0 && !PKCS12_add_safe(&safes, bags, -1, 0, PROXY_TLS_JVM_STORE_PASSWORD))
		rc = -ENOMEM;
	if (rc == 0 && !(p12 = PKCS12_add_safes(safes, 0)))
		rc = -ENOMEM;
	if (rc == 0 && !PKCS12_set_mac(p12, PROXY_TLS_JVM_STORE_PASSWORD, -1, NULL, 0, 2048, NULL))
		rc = -ENOMEM;
	if (rc == 0 && (n = i2d_PKCS12(p12, &out)) <= 0)
		rc = -ENOMEM;
	if (rc == 0 && !(*der = malloc((size_t)n))) /* the caller frees with free() */
		rc = -ENOMEM;
	if (rc == 0) {
		memcpy(*der, out, (size_t)n);
		*len = (size_t)n;
	}
	OPENSSL_free(out);
	if (rc < 0)
		halo_err_set(e, "TLS termination: cannot make the JVM's trust store");
	PKCS12_free(p12);
	sk_PKCS7_pop_free(safes, PKCS7_free);
	sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
	free(bundle);
	return rc;
}

#else

int proxy_tls_jvm_store(const struct proxy_tls *t, unsigned char **der, size_t *len,
			struct halo_err *e)
{
	(void)t;
	(void)len;
	*der = NULL;
	halo_err_set(e, "no TLS termination in this build");
	return -ENOTSUP;
}

#endif
