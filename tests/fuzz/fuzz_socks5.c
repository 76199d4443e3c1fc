/* libFuzzer target for the SOCKS5 greeting and request parsers. Invariants: nothing is
 * consumed unless accepted, never more than was given; an accepted request names a
 * CONNECT to a non-empty host without NUL and a non-zero port, and one byte less of it
 * waits for more; a refusal carries a reply code of 01, 07 or 08 and a why. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy_parse.h"
#include "tests/fuzz/fuzz_check.h"

static void check_greeting(const uint8_t *d, size_t size, size_t *used)
{
	enum proxy_socks_result r = proxy_socks_greeting(d, size, used);

	CHECK(*used <= size);
	if (r == PROXY_SOCKS_NEED_MORE)
		CHECK(*used == 0 && (size < 2 || size < 2u + d[1]));
	if (r == PROXY_SOCKS_OK)
		CHECK(d[0] == 5 && *used == 2u + d[1] && memchr(d + 2, 0, d[1]));
	if (r != PROXY_SOCKS_OK)
		*used = 0;
}

static void check_ok(const uint8_t *d, size_t used, const struct proxy_socks_req *q)
{
	struct proxy_socks_req again;
	size_t u2 = 99, hn = strnlen(q->host, sizeof(q->host));

	CHECK(q->cmd == 1 && q->port != 0 && q->port == ((unsigned)d[used - 2] << 8 | d[used - 1]));
	CHECK(hn > 0 && hn < sizeof(q->host));
	if (q->atyp == PROXY_SOCKS_IPV4)
		CHECK(used == 10 && memcmp(q->addr, d + 4, 4) == 0);
	else if (q->atyp == PROXY_SOCKS_IPV6)
		CHECK(used == 22 && memcmp(q->addr, d + 4, 16) == 0);
	else
		CHECK(q->atyp == PROXY_SOCKS_DOMAIN && used == 7u + d[4] && hn == d[4] &&
		      memcmp(q->host, d + 5, hn) == 0);
	CHECK(proxy_socks_request(d, used - 1, &u2, &again) == PROXY_SOCKS_NEED_MORE && u2 == 0);
}

static void check_request(const uint8_t *d, size_t size)
{
	struct proxy_socks_req q;
	size_t used = 99;
	enum proxy_socks_result r = proxy_socks_request(d, size, &used, &q);

	CHECK(used <= size);
	if (r == PROXY_SOCKS_OK) {
		check_ok(d, used, &q);
	} else if (r == PROXY_SOCKS_ERROR) {
		CHECK(used == 0);
		CHECK(q.reply == 0x01 || q.reply == 0x07 || q.reply == 0x08);
		CHECK(q.why[0] != '\0' && strnlen(q.why, sizeof(q.why)) < sizeof(q.why));
		/* a refused name is shown for the audit: visible ASCII only, bounded */
		CHECK(strnlen(q.shown, sizeof(q.shown)) < sizeof(q.shown));
		for (const char *p = q.shown; *p; p++)
			CHECK(*p > 0x20 && *p < 0x7f);
	} else {
		CHECK(r == PROXY_SOCKS_NEED_MORE && used == 0 && size < 5 + 255 + 2);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t used = 0;
	uint8_t rep[10];

	check_greeting(data, size, &used);
	check_request(data, size);
	if (used)
		check_request(data + used, size - used);
	CHECK(proxy_socks_reply(size ? data[0] : 0, rep) == 10);
	CHECK(rep[0] == 5 && rep[1] == (size ? data[0] : 0) && rep[2] == 0 && rep[3] == 1);
	return 0;
}
