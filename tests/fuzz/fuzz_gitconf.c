/* libFuzzer target for the check of git configs written inside the sandbox
 * (linux/gitconf.c): whatever the bytes, the check returns 0, -EACCES or -EINVAL with
 * a reason, and a config it accepts cannot hide what follows it: the same bytes with
 * an [alias] section appended are never accepted. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/gitconf.h"
#include "tests/fuzz/fuzz_check.h"

#define TAIL "\n[alias]\n\tx = !sh\n"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[160], *more;
	int rc = linux_gitconf_check((const char *)data, size, why, sizeof(why));

	CHECK(rc == 0 || rc == -EACCES || rc == -EINVAL);
	CHECK(rc == 0 ? why[0] == '\0' : why[0] != '\0');
	if (rc != 0)
		return 0;
	more = malloc(size + sizeof(TAIL));
	CHECK(more != NULL);
	memcpy(more, data, size);
	memcpy(more + size, TAIL, sizeof(TAIL) - 1);
	CHECK(linux_gitconf_check(more, size + sizeof(TAIL) - 1, why, sizeof(why)) != 0);
	free(more);
	return 0;
}
