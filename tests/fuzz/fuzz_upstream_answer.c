/* libFuzzer target for the upstream proxy's answer to our CONNECT (proxy/
 * upstream_answer.c: upstream_judge, the production function; egress.upstreamProxy).
 * Invariants: 2xx is 0 with the head's length inside the input, every other complete
 * head -EPROTO with a one-line, printable why naming the upstream, an incomplete one
 * -EAGAIN; the answer never depends on the bytes after the head (an origin that speaks
 * first has its bytes there), so a cut at the head's end answers the same. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "proxy/proxy_int.h"
#include "tests/fuzz/fuzz_check.h"

static int judge(const char *b, size_t n, size_t *hl, char *why, size_t wn)
{
	int rc;

	memset(why, 'X', wn);
	why[0] = '\0';
	*hl = 0;
	rc = upstream_judge(b, n, "up.example:3128", hl, why, wn);
	CHECK(rc == 0 || rc == -EAGAIN || rc == -EPROTO);
	if (rc == -EPROTO) {
		CHECK(strlen(why) < wn && strstr(why, "upstream proxy up.example:3128"));
		for (const char *p = why; *p; p++)
			CHECK((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f);
	}
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *b = (const char *)data;
	char why[256], why2[256], small[40];
	size_t hl, hl2;
	int rc = judge(b, size, &hl, why, sizeof(why));

	if (rc == -EAGAIN)
		return 0;
	/* A why cut to a small buffer is still a string. */
	judge(b, size, &hl2, small, sizeof(small));
	if (rc != 0 && hl == 0)
		return 0; /* malformed: refused before a head's length is known */
	CHECK(hl >= 4 && hl <= size && memcmp(b + hl - 4, "\r\n\r\n", 4) == 0);
	CHECK(judge(b, hl, &hl2, why2, sizeof(why2)) == rc && hl2 == hl);
	CHECK(strcmp(why, why2) == 0);
	if (rc == 0)
		CHECK(memcmp(b, "HTTP/1.", 7) == 0 && b[9] == '2');
	return 0;
}
