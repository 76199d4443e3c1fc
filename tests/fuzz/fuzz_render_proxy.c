/* libFuzzer target for `policy render --proxy`'s value (render_proxy_parse): whatever
 * the bytes, 0 with one or two ports in 1-65535 (the two different) that print back to
 * the input, or -EINVAL with both ports zero and a reason that starts "--proxy: ". */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/render.h"
#include "tests/fuzz/fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct halo_err e = {{0}};
	unsigned http = 1, socks = 1;
	char *s = malloc(size + 1), back[32];
	int rc;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0; /* a command-line word: cut at its first NUL, as argv would be */
	rc = render_proxy_parse(s, &http, &socks, &e);
	CHECK(rc == 0 || rc == -EINVAL);
	if (rc == 0) {
		CHECK(http >= 1 && http <= 65535 && socks <= 65535 && socks != http);
		if (socks)
			snprintf(back, sizeof(back), "%u,%u", http, socks);
		else
			snprintf(back, sizeof(back), "%u", http);
		CHECK(strcmp(back, s) == 0);
	} else {
		CHECK(http == 0 && socks == 0);
		CHECK(strncmp(e.msg, "--proxy: ", 9) == 0);
	}
	free(s);
	return 0;
}
