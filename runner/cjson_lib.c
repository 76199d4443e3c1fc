/* libcjson on first use. The halo-run binary (x86-64 Linux, the Makefile's CJSON_LAZY)
 * does not link libcjson: each cJSON function it calls is a trampoline
 * (tools/gen_ssl_stubs.sh, STUBS=halo_cjson) that jumps through a slot filled here at
 * the first cJSON call: a JSON policy, --events, the audit read back, a harness's
 * settings. A run that reads and writes no JSON (most launches: YAML or no policy
 * file, the audit written by hand in proxy/audit.c) never maps nor relocates the
 * library: linked in, the loader opened, mapped and relocated it at every exec (nine
 * system calls before main). Every other build (unit tests, ASan, fuzz, the portable
 * build, other architectures) links libcjson as before: the generated table is absent
 * there (weak references, NULL) and nothing here is reached. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/runner_int.h"

#if defined(__linux__) && !defined(HALO_PORTABLE)

#define CJSON_LIB_NAME "libcjson.so.1"

/* The generated table: one slot per function, and the names one after the other,
 * each NUL-terminated, an empty one last. */
extern void *halo_cjson_slot[] __attribute__((weak));
extern const char halo_cjson_names[] __attribute__((weak));

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static char lib_error[512];

/* Every slot filled at once, or none: a function the library lacks is found at the
 * first call, not at some later one. The handle is kept for the process's life. */
static void lib_open(void)
{
	void *h = dlopen(CJSON_LIB_NAME, RTLD_NOW | RTLD_LOCAL);
	size_t n = 0;

	if (!h) {
		snprintf(lib_error, sizeof(lib_error),
			 "halo-run needs " CJSON_LIB_NAME " (Debian's libcjson1), which could "
			 "not be loaded: %s",
			 dlerror());
		return;
	}
	for (const char *s = halo_cjson_names; *s; s += strlen(s) + 1)
		if (!dlsym(h, s)) {
			snprintf(lib_error, sizeof(lib_error),
				 "halo-run needs " CJSON_LIB_NAME ", which has no %s", s);
			return;
		}
	for (const char *s = halo_cjson_names; *s; s += strlen(s) + 1, n++)
		__atomic_store_n(&halo_cjson_slot[n], dlsym(h, s), __ATOMIC_RELEASE);
}

/* A cJSON function called for the first time: load the library, then go on to the
 * function. Nothing can be returned to the caller of cJSON_whatever, so a library that
 * cannot be loaded ends the process, naming it, with the set-up failure's status
 * (mostly before any launch: a JSON policy, --events; at a run's end, the audit read
 * back for --summary-md or --fail-on-deny). */
void *runner_cjson_lib_bind(unsigned idx)
{
	pthread_once(&lib_once, lib_open);
	if (lib_error[0]) {
		char line[sizeof(lib_error) + 2];
		int n = snprintf(line, sizeof(line), "%s\n", lib_error);

		if (write(STDERR_FILENO, line, (size_t)n) < 0) {
			/* nothing more to say it with */
		}
		_exit(HALO_EXIT_SETUP);
	}
	return __atomic_load_n(&halo_cjson_slot[idx], __ATOMIC_ACQUIRE);
}

#endif
