/* libFuzzer target for the tunnel's ClientHello parser. Invariants: NOT_TLS only
 * when the first byte is no TLS record type (0x14..0x18); another record type first is
 * an ERROR naming it; an accepted hello used no more than
 * was given, reads the same from exactly its own records, and one byte less of them
 * waits for more; its name is 1..255 visible ASCII bytes; a refusal names an alert and
 * a why and carries no name; the name rule never accepts a name other than the target
 * spelled differently, nor a hello without a name for a target that is a name. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proxy/proxy_parse.h"
#include "tests/fuzz/fuzz_check.h"

static void check_hello(const uint8_t *d, size_t size, const struct proxy_tls_hello *h)
{
	struct proxy_tls_hello again;
	size_t n = strnlen(h->sni, sizeof(h->sni));
	char rule[300];

	CHECK(h->used <= size);
	if (h->sslv2) /* the SSLv2 form: no name, header + 9 + 3 + 16 bytes at least */
		CHECK(h->used >= 30 && !h->has_sni && !h->ech && (d[0] & 0x80));
	else
		CHECK(h->used >= 5 + 4 + 2 + 32 + 1 + 2 + 2 + 1 && d[0] == 0x16);
	CHECK(h->used <= PROXY_TLS_HELLO_MAX);
	CHECK(h->has_sni == (n > 0) && n < sizeof(h->sni));
	for (size_t i = 0; i < n; i++)
		CHECK(h->sni[i] > 0x20 && h->sni[i] < 0x7f);
	CHECK(proxy_tls_hello_parse(d, h->used, &again) == PROXY_TLS_HELLO);
	CHECK(strcmp(again.sni, h->sni) == 0 && again.ech == h->ech && again.used == h->used);
	CHECK(proxy_tls_hello_parse(d, h->used - 1, &again) == PROXY_TLS_NEED_MORE);
	CHECK(h->has_sni || !proxy_tls_sni_allowed("allowed.test", h, rule, sizeof(rule)));
	CHECK(h->has_sni || proxy_tls_sni_allowed("192.0.2.1", h, rule, sizeof(rule)));
	if (proxy_tls_sni_allowed("allowed.test", h, rule, sizeof(rule)) && h->has_sni) {
		/* the name as sent, but for ASCII case: no trailing dot */
		CHECK(strlen(h->sni) == 12 && strncasecmp(h->sni, "allowed.test", 12) == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proxy_tls_hello h;
	enum proxy_tls_result r = proxy_tls_hello_parse(data, size, &h);

	if (r == PROXY_TLS_NOT_TLS)
		CHECK(size > 0 && !proxy_tls_record_name(data[0]));
	if (size > 0 && data[0] >= 0x14 && data[0] <= 0x18 && data[0] != 0x16)
		CHECK(r == PROXY_TLS_ERROR && strstr(h.why, "record before ClientHello"));
	switch (r) {
	case PROXY_TLS_HELLO:
		check_hello(data, size, &h);
		break;
	case PROXY_TLS_ERROR:
		CHECK(h.alert != 0 && !h.has_sni && h.sni[0] == '\0');
		CHECK(strncmp(h.why, "tls: ", 5) == 0 ||
		      strncmp(h.why, "malformed ClientHello: ", 23) == 0);
		break;
	case PROXY_TLS_NEED_MORE:
		CHECK(size < PROXY_TLS_HELLO_MAX);
		break;
	case PROXY_TLS_NOT_TLS:
		break;
	default:
		CHECK(0);
	}
	return 0;
}
