/* libFuzzer target for the sanitizers of mixed settings files (policy/sanitize.c): the
 * output keeps no entry whose key could name a secret, no URL with userinfo, invents
 * nothing (every kept key and value is in the input) and sanitizes to itself. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy/policy.h"
#include "tests/fuzz/fuzz_check.h"

static const char *const words[] = {"auth",  "token", "pass", "secret", "user",
				    "email", "cert",  "key",  "otp",	"cred"};

static bool has_word(const char *s, size_t n, const char *w)
{
	size_t wl = strlen(w);

	for (size_t i = 0; i + wl <= n; i++)
		if (strncasecmp(s + i, w, wl) == 0)
			return true;
	return false;
}

static void check_line(const char *in, size_t len, const char *l, size_t n)
{
	const char *eq = memchr(l, '=', n);
	size_t kn;

	if (l[0] == '[') {
		CHECK(l[n - 1] == ']');
		CHECK(memmem(in, len, l, n) != NULL);
		return;
	}
	CHECK(eq != NULL);
	kn = (size_t)(eq - l);
	CHECK(kn > 0 && !(l[0] == '/' && l[1] == '/'));
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		CHECK(!has_word(l, kn, words[i]));
	CHECK(memmem(in, len, l, kn) != NULL);
	CHECK(n - kn - 1 == 0 || memmem(in, len, eq + 1, n - kn - 1) != NULL);
	for (const char *s = eq + 1; (s = memmem(s, (size_t)(l + n - s), "://", 3)); s += 3)
		for (const char *a = s + 3; a < l + n && !strchr("/?# \t\"'", *a); a++)
			CHECK(*a != '@');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *out = NULL, *again = NULL;
	size_t n = 0, n2 = 0;
	int rc = policy_sanitize(POLICY_SANITIZE_NPMRC, (const char *)data, size, &out, &n);

	CHECK(rc == 0 || rc == -22 || rc == -12);
	if (rc < 0) {
		CHECK(out == NULL);
		return 0;
	}
	CHECK(out[n] == '\0' && strlen(out) == n);
	CHECK(out[0] == ';');
	for (const char *l = strchr(out, '\n') + 1; l < out + n;) {
		const char *e = memchr(l, '\n', (size_t)(out + n - l));

		CHECK(e != NULL);
		check_line((const char *)data, size, l, (size_t)(e - l));
		l = e + 1;
	}
	CHECK(policy_sanitize(POLICY_SANITIZE_NPMRC, out, n, &again, &n2) == 0);
	CHECK(n2 == n && memcmp(out, again, n) == 0);
	free(out);
	free(again);
	return 0;
}
