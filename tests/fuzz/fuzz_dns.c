/* libFuzzer target for the DNS stub's query parser and answer builder (proxy/dns.c).
 * Invariants: a header is needed for anything but a drop, and a response is never
 * answered; an accepted query has one question whose name is lower case LDH text of
 * at most 253 bytes, no empty label, and its wire form within the input; the answer
 * echoes the id, sets QR, fits PROXY_DNS_MAX_ANSWER, and holds the question only when
 * there was one; parsing the input again gives the same result. */
#include <stdint.h>
#include <string.h>

#include "proxy/dns.h"
#include "tests/fuzz/fuzz_check.h"

static void check_name(const char *n)
{
	size_t len = strlen(n);

	CHECK(len > 0 && len <= PROXY_DNS_MAX_NAME);
	CHECK(n[0] != '.' && n[len - 1] != '.' && !strstr(n, ".."));
	for (size_t i = 0; i < len; i++)
		CHECK((n[i] >= 'a' && n[i] <= 'z') || (n[i] >= '0' && n[i] <= '9') || n[i] == '-' ||
		      n[i] == '_' || n[i] == '.');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proxy_dns_query q, again;
	enum proxy_dns_result r = proxy_dns_parse(data, size, &q);
	uint8_t out[PROXY_DNS_MAX_ANSWER];
	static const uint8_t ip[4] = {198, 18, 0, 1};
	int n;

	CHECK(proxy_dns_parse(data, size, &again) == r && again.question_len == q.question_len);
	if (r == PROXY_DNS_DROP) {
		CHECK(size < PROXY_DNS_HEADER || (data[2] & 0x80));
		return 0;
	}
	CHECK(size >= PROXY_DNS_HEADER && !(data[2] & 0x80));
	CHECK(q.question_len <= size - PROXY_DNS_HEADER);
	if (r == PROXY_DNS_OK) {
		check_name(q.name);
		CHECK(q.question_len >= 4 + strlen(q.name) + 2);
		CHECK(q.qclass == PROXY_DNS_CLASS_IN);
	} else {
		CHECK(q.rcode != PROXY_DNS_NOERROR && q.why && q.why[0]);
	}
	n = proxy_dns_answer(&q, data, r == PROXY_DNS_OK ? PROXY_DNS_NOERROR : q.rcode,
			     r == PROXY_DNS_OK ? ip : NULL, out, sizeof(out));
	CHECK(n >= PROXY_DNS_HEADER && (size_t)n <= sizeof(out));
	CHECK(out[0] == data[0] && out[1] == data[1] && (out[2] & 0x80));
	CHECK((out[5] == 1) == (q.question_len > 0) && out[4] == 0);
	CHECK(memcmp(out + PROXY_DNS_HEADER, data + PROXY_DNS_HEADER, q.question_len) == 0);
	return 0;
}
