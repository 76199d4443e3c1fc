/* libFuzzer target for the reader of $ZDOTDIR in a zshenv file (policy/zshenv.c):
 * whatever the bytes, a count or one of its errors; the list it tells holds that many
 * absolute directories, fits, and nothing told leaves it empty; and an assignment on a
 * line of its own after any bytes is among those it tells, or the reading says it
 * cannot tell (what came before cannot hide it silently). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "tests/fuzz/fuzz_check.h"

#define TAIL                                                                                       \
	"\n\nZDOTDIR=$HOME/zz-fuzz\n" /* (a blank line: a trailing backslash joins only the first) \
				       */

static int count(const char *list)
{
	int n = 0;

	for (const char *p = list; *p; p += strcspn(p, ":"), p += *p == ':') {
		CHECK(*p == '/');
		n++;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct policy_zshenv_env env = {"/h", size % 2 ? "/x" : NULL, size % 3 ? "/z" : NULL};
	char out[256], *more;
	bool unknown;
	int rc = policy_zshenv_zdotdirs((const char *)data, size, &env, out, sizeof(out), &unknown);

	CHECK(rc >= 0 || rc == -ENAMETOOLONG);
	CHECK(rc >= 0 ? count(out) == rc && strlen(out) < sizeof(out) : out[0] == '\0');
	more = malloc(size + sizeof(TAIL));
	CHECK(more != NULL);
	memcpy(more, data, size);
	memcpy(more + size, TAIL, sizeof(TAIL) - 1);
	rc =
	    policy_zshenv_zdotdirs(more, size + sizeof(TAIL) - 1, &env, out, sizeof(out), &unknown);
	if (rc >= 0) { /* (a list past the buffer tells nothing) */
		size_t l = strlen(out);
		/* told, or said (a quote the bytes left open swallows the line) */
		CHECK(unknown || (l >= 10 && strcmp(out + l - 10, "/h/zz-fuzz") == 0) ||
		      strstr(out, "/h/zz-fuzz:") != NULL);
	}
	free(more);
	return 0;
}
