/* libFuzzer target for the HelloRetryRequest watch (proxy/tls_retry.c). The input is
 * split in two at its first byte's value: the server's answer, fed in pieces of
 * varying size, and the client's flight after a retry. Invariants: the scan gives the
 * same result fed whole or in pieces, is sticky, looks at no more than its bound, says
 * HRR only when a handshake record carries a ServerHello with the fixed random; the
 * retry parse never says NOT_TLS, accepts only a ClientHello (behind at most one
 * change_cipher_spec) that reads the same without that record, and names its
 * refusals. */
#include <stdint.h>
#include <string.h>

#include "proxy/proxy_parse.h"
#include "tests/fuzz/fuzz_check.h"

static void scan(const uint8_t *d, size_t n, size_t step)
{
	struct proxy_tls_srv_scan whole = {0}, parts = {0};
	enum proxy_tls_srv a = proxy_tls_srv_feed(&whole, d, n), b = PROXY_TLS_SRV_MORE;

	for (size_t off = 0; off < n; off += step)
		b = proxy_tls_srv_feed(&parts, d + off, n - off < step ? n - off : step);
	CHECK(a == b || n == 0);
	CHECK(whole.seen <= PROXY_TLS_SRV_WATCH_MAX);
	CHECK(proxy_tls_srv_feed(&whole, (const uint8_t *)"\x16\x03\x03", 3) == a || a == 0);
	if (a == PROXY_TLS_SRV_HRR)
		CHECK(n >= 43 && whole.hs[0] == 2 && whole.hs[6] == 0xcf);
}

static void retry(const uint8_t *d, size_t n)
{
	struct proxy_tls_hello h, again;
	enum proxy_tls_result r = proxy_tls_retry_parse(d, n, &h);

	CHECK(r != PROXY_TLS_NOT_TLS);
	if (r == PROXY_TLS_ERROR)
		CHECK(h.alert && !h.has_sni &&
		      (strncmp(h.why, "tls: ", 5) == 0 ||
		       strncmp(h.why, "malformed ClientHello: ", 23) == 0));
	if (r == PROXY_TLS_HELLO) {
		size_t off = d[0] == 0x14 ? 6 : 0;
		CHECK(h.used <= n && !h.sslv2 && d[off] == 0x16);
		CHECK(proxy_tls_hello_parse(d + off, h.used - off, &again) == PROXY_TLS_HELLO);
		CHECK(strcmp(again.sni, h.sni) == 0 && again.used + off == h.used);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t cut;

	if (size < 2)
		return 0;
	cut = data[0] < size - 1 ? data[0] : size - 1;
	scan(data + 1, cut, (size_t)(data[1] % 7) + 1);
	retry(data + 1 + cut, size - 1 - cut);
	return 0;
}
