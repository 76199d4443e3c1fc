/* OpenSSL on first use. The halo-run binary (x86-64 Linux, the Makefile's SSL_LAZY)
 * does not link libssl and libcrypto: each OpenSSL function it calls is a trampoline
 * (tools/gen_ssl_stubs.sh) that jumps through a slot filled here, when a policy first
 * terminates TLS. A run that terminates nothing never maps nor relocates the two
 * libraries: linked in, their ~18,500 relocations copied ~100 pages at every exec.
 * Every other build (unit tests, ASan, fuzz, other architectures) links OpenSSL as
 * before: the generated table is absent there (weak references, NULL) and loading is
 * a no-op. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proxy/proxy_int.h"

#ifdef PROXY_TLS

#include "proxy/tls_int.h"

#define TLS_LIB_NAME "libssl.so.3" /* libcrypto.so.3 comes with it (its DT_NEEDED) */

/* The generated table (tools/gen_ssl_stubs.sh): one slot per function, and the names
 * one after the other, each NUL-terminated, an empty one last. */
extern void *halo_ssl_slot[] __attribute__((weak));
extern const char halo_ssl_names[] __attribute__((weak));

static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
static bool lib_loaded;

/* Every slot filled at once, or none: a function the library lacks is found now and
 * not in the middle of a connection. The handle is kept for the process's life. */
static int lib_open(struct halo_err *e)
{
	void *h = dlopen(TLS_LIB_NAME, RTLD_NOW | RTLD_LOCAL);
	size_t n = 0;

	if (!h) {
		halo_err_set(e,
			     "TLS termination needs OpenSSL 3 (" TLS_LIB_NAME
			     ", Debian's libssl3), "
			     "which could not be loaded: %s",
			     dlerror());
		return -ENOENT;
	}
	for (const char *s = halo_ssl_names; *s; s += strlen(s) + 1, n++)
		if (!dlsym(h, s)) {
			halo_err_set(e,
				     "TLS termination needs OpenSSL 3: " TLS_LIB_NAME
				     " (or its libcrypto.so.3) has no %s",
				     s);
			dlclose(h);
			return -ENOENT;
		}
	n = 0;
	for (const char *s = halo_ssl_names; *s; s += strlen(s) + 1, n++)
		__atomic_store_n(&halo_ssl_slot[n], dlsym(h, s), __ATOMIC_RELEASE);
	__atomic_store_n(&lib_loaded, true, __ATOMIC_RELEASE);
	return 0;
}

int proxy_tls_lib_load(struct halo_err *e)
{
	int rc = 0;

	if (!halo_ssl_slot || __atomic_load_n(&lib_loaded, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&lib_lock);
	if (!lib_loaded)
		rc = lib_open(e);
	pthread_mutex_unlock(&lib_lock);
	return rc;
}

/* An OpenSSL function called before proxy_tls_lib_load (every path that terminates TLS
 * starts in proxy_tls_prepare, which loads it): load now. Nothing can be returned to
 * the caller of SSL_whatever, so a library that cannot be loaded here ends the
 * process, naming it, rather than run on without TLS. */
void *proxy_tls_lib_bind(unsigned idx)
{
	struct halo_err e = {{0}};

	if (proxy_tls_lib_load(&e) < 0) {
		char line[sizeof(e.msg) + 16];
		int n = snprintf(line, sizeof(line), "halo-run: %s\n", e.msg);

		if (write(STDERR_FILENO, line, (size_t)n) < 0) {
			/* nothing more to say it with */
		}
		abort();
	}
	return __atomic_load_n(&halo_ssl_slot[idx], __ATOMIC_ACQUIRE);
}

#endif
