/* libFuzzer target for the refusals' log parser (netns/explain.c): whatever the bytes,
 * the parser stays inside them, says at most max refusals, and says only what the
 * supervisor may say: a local port that is not 0, an address that is not loopback,
 * each of a known family. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "netns/netns.h"
#include "tests/fuzz/fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct netns_refusal r[4];
	uint8_t *copy = malloc(size ? size : 1); /* aligned, and exactly size long */
	size_t n;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	n = netns_explain_parse(copy, size, r, 4);
	CHECK(n <= 4);
	for (size_t i = 0; i < n; i++) {
		CHECK(r[i].family == AF_INET || r[i].family == AF_INET6);
		if (r[i].kind == NETNS_REFUSED_LOCAL_PORT)
			CHECK(r[i].port != 0);
		else
			CHECK(r[i].kind == NETNS_REFUSED_LITERAL &&
			      !(r[i].family == AF_INET && r[i].addr[0] == 127));
	}
	free(copy);
	return 0;
}
