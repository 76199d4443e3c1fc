/* libFuzzer target for `halo-run proxy`'s parsers of outside input: the first byte
 * picks one. Proxy-Authorization values (never accepted unless they decode to
 * user:SECRET exactly), SOCKS5 greetings and RFC 1929 sub-negotiations (nothing
 * consumed unless accepted, never more than given, the password inside the input),
 * listen addresses (an accepted one prints back and parses again to the same), the
 * LISTEN_FDS pair and the client token (accepted: visible ASCII, bounded). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proxy/proxy_parse.h"
#include "runner/proxy_cmd.h"
#include "tests/fuzz/fuzz_check.h"

static void basic(const char *s)
{
	bool ok = proxy_auth_basic_ok(s, "s3cret");

	if (ok)
		CHECK(strncasecmp(s, "basic", 5) == 0);
}

static void socks(const uint8_t *d, size_t n)
{
	const uint8_t *pass;
	size_t used, plen;
	enum proxy_socks_result r = proxy_socks_greeting_method(d, n, &used, 2);

	CHECK(used <= n);
	if (r != PROXY_SOCKS_OK)
		CHECK(used == 0 || r == PROXY_SOCKS_ERROR);
	r = proxy_socks_userpass(d, n, &used, &pass, &plen);
	CHECK(used <= n);
	if (r == PROXY_SOCKS_OK) {
		CHECK(plen >= 1 && plen <= 255 && pass > d && pass + plen == d + used);
		CHECK(proxy_secret_equal((const char *)pass, plen, "s3cret") ==
		      (plen == 6 && memcmp(pass, "s3cret", 6) == 0));
	} else {
		CHECK(used == 0 && !pass && plen == 0);
	}
}

static void listen_addr(const char *s)
{
	struct runner_listen_addr a, b;
	struct halo_err e = {{0}};
	char t[200];

	if (runner_listen_parse(s, &a, &e) < 0) {
		CHECK(e.msg[0] != '\0');
		return;
	}
	runner_listen_text(&a, t, sizeof(t));
	CHECK(runner_listen_parse(t, &b, &e) == 0);
	CHECK(a.is_unix == b.is_unix && a.port == b.port && a.loopback == b.loopback);
	CHECK(a.is_unix ? strcmp(a.path, b.path) == 0 : memcmp(a.addr, b.addr, 16) == 0);
	CHECK(a.port <= 65535);
}

static void token(const char *s, size_t n)
{
	char out[RUNNER_PROXY_TOKEN_MAX + 1];
	struct halo_err e = {{0}};

	if (runner_token_check(s, n, out, sizeof(out), &e) == 0) {
		size_t l = strlen(out);
		CHECK(l >= 1 && l <= RUNNER_PROXY_TOKEN_MAX);
		for (size_t i = 0; i < l; i++)
			CHECK(out[i] > 0x20 && out[i] < 0x7f);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;
	int nfds;
	struct halo_err e = {{0}};

	if (size < 1)
		return 0;
	s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (data[0] % 5) {
	case 0:
		basic(s);
		break;
	case 1:
		socks(data + 1, size - 1);
		break;
	case 2:
		listen_addr(s);
		break;
	case 3: {
		char *colon = strchr(s, ',');
		if (colon)
			*colon++ = '\0';
		if (runner_listen_fds_parse(s, colon, 4242, 16, &nfds, &e) == 0)
			CHECK(nfds >= 0 && nfds <= 16);
		CHECK(!runner_listen_fd_is_socks(s, 10000) || strstr(s, "socks"));
		break;
	}
	case 4:
		token(s, size - 1);
		break;
	}
	free(s);
	return 0;
}
