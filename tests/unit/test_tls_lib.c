/* OpenSSL on first use (proxy/tls_lib.c, tools/gen_ssl_stubs.sh). Where the build
 * makes the trampolines (the Makefile's SSL_LAZY links them into this test): loading
 * binds every slot to the library's own function; an OpenSSL function called before
 * the load takes the slow path, which loads and then runs it with its arguments
 * intact: a variadic call, a call with an argument on the stack. Each case runs in a
 * child of its own, whose first OpenSSL call is the one that binds. Elsewhere OpenSSL
 * is linked in: there is no table and loading is a no-op. */
#include <dlfcn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/unit.h"

#include "proxy/proxy_int.h"

#ifdef PROXY_TLS

#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/x509.h>

#include "proxy/tls_int.h"

extern void *halo_ssl_slot[] __attribute__((weak));
extern const char halo_ssl_names[] __attribute__((weak));

/* fn's status in a child; 128+N when it died of signal N. */
static int in_child(int (*fn)(void))
{
	int st = 0;
	pid_t p = fork();

	if (p == 0)
		_exit(fn());
	ck_assert_int_gt(p, 0);
	ck_assert_int_eq(waitpid(p, &st, 0), p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Every slot at its stub (want false), or at the library's function (true), as the
 * test's own handle on the library finds it (the same library: one copy a process). */
static bool slots_bound(bool want)
{
	void *h = dlopen("libssl.so.3", RTLD_NOW | RTLD_LOCAL);
	size_t i = 0;

	for (const char *s = halo_ssl_names; h && *s; s += strlen(s) + 1, i++) {
		void *real = dlsym(h, s);

		if (!real || (halo_ssl_slot[i] == real) != want) {
			dlclose(h);
			return false;
		}
	}
	if (h)
		dlclose(h);
	return i > 0;
}

static int load_binds(void)
{
	struct halo_err e = {{0}};

	if (!slots_bound(false))
		return 2;
	if (proxy_tls_lib_load(&e) < 0 || !slots_bound(true))
		return 1;
	return proxy_tls_lib_load(&e) == 0 && slots_bound(true) ? 0 : 3;
}

/* EVP_PKEY_Q_keygen(ctx, propq, "EC", curve): the curve is a variadic argument. */
static int variadic_first(void)
{
	EVP_PKEY *k;
	int ok;

	if (!slots_bound(false))
		return 2;
	k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	ok = k && EVP_PKEY_get_bits(k) == 256 && EVP_PKEY_is_a(k, "EC");
	EVP_PKEY_free(k);
	return ok && slots_bound(true) ? 0 : 1;
}

/* X509_NAME_add_entry_by_txt's seventh argument (set) is on the stack. The name is
 * made and read back by functions halo-run does not call: no trampoline, libcrypto's
 * own (this test links it). */
static int stack_arg_first(void)
{
	X509_NAME *n = X509_NAME_new();
	char cn[64] = "";
	int ok;

	if (!n || !slots_bound(false))
		return 2;
	ok = X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)"stub.test",
					-1, -1, 0) == 1;
	ok = ok && X509_NAME_entry_count(n) == 1 &&
	     X509_NAME_get_text_by_NID(n, NID_commonName, cn, sizeof(cn)) == 9 &&
	     strcmp(cn, "stub.test") == 0;
	X509_NAME_free(n);
	return ok && slots_bound(true) ? 0 : 1;
}

START_TEST(lazy_load_binds_every_slot)
{
	struct halo_err e = {{0}};

	if (!halo_ssl_slot) {
		ck_assert_int_eq(proxy_tls_lib_load(&e), 0); /* linked in: nothing to load */
		UNIT_SKIP("the trampolines", "this build links OpenSSL (SSL_LAZY off)");
	}
	ck_assert_int_eq(in_child(load_binds), 0);
}
END_TEST

START_TEST(lazy_first_call_variadic)
{
	if (!halo_ssl_slot)
		UNIT_SKIP("the trampolines' slow path", "this build links OpenSSL (SSL_LAZY off)");
	ck_assert_int_eq(in_child(variadic_first), 0);
}
END_TEST

START_TEST(lazy_first_call_stack_argument)
{
	if (!halo_ssl_slot)
		UNIT_SKIP("the trampolines' slow path", "this build links OpenSSL (SSL_LAZY off)");
	ck_assert_int_eq(in_child(stack_arg_first), 0);
}
END_TEST

static Suite *tls_lib_suite(void)
{
	Suite *s = suite_create("tls_lib");
	TCase *tc = tcase_create("lazy");

	tcase_add_test(tc, lazy_load_binds_every_slot);
	tcase_add_test(tc, lazy_first_call_variadic);
	tcase_add_test(tc, lazy_first_call_stack_argument);
	suite_add_tcase(s, tc);
	return s;
}

#else

static Suite *tls_lib_suite(void)
{
	return suite_create("tls_lib");
}

#endif

UNIT_MAIN(tls_lib_suite)
