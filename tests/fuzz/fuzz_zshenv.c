/* libFuzzer target for the reader of $ZDOTDIR in a zshenv file (policy/zshenv.c):
 * whatever the bytes, one of its four answers; a directory it tells is absolute, fits
 * and holds no NUL; nothing told leaves out empty; and an assignment on a line of its
 * own after any bytes is the one it tells (what came before cannot hide it). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "tests/fuzz/fuzz_check.h"

#define TAIL "\nZDOTDIR=$HOME/zz-fuzz\n"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct policy_zshenv_env env = {"/h", size % 2 ? "/x" : NULL};
	char out[128], *more;
	int rc = policy_zshenv_zdotdir((const char *)data, size, &env, out, sizeof(out));

	CHECK(rc == 1 || rc == 0 || rc == -EINVAL || rc == -ENAMETOOLONG);
	CHECK(rc == 1 ? out[0] == '/' && strlen(out) < sizeof(out) : out[0] == '\0');
	more = malloc(size + sizeof(TAIL));
	CHECK(more != NULL);
	memcpy(more, data, size);
	memcpy(more + size, TAIL, sizeof(TAIL) - 1);
	rc = policy_zshenv_zdotdir(more, size + sizeof(TAIL) - 1, &env, out, sizeof(out));
	CHECK(rc == 1 && strcmp(out, "/h/zz-fuzz") == 0);
	free(more);
	return 0;
}
