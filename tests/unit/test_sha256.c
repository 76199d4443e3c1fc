/* SHA-256 (events/sha256.c): the digest of the effective policy that a session compares
 * at every call and --events records. Both ways of computing it (the CPU's SHA
 * extensions where it has them, the portable rounds) give OpenSSL's answer at every
 * length around the block and padding boundaries, and the FIPS 180-2 vectors. */
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events/events.h"
#include "tests/unit/unit.h"

static void reference(const unsigned char *d, size_t n, char out[65])
{
	unsigned char md[SHA256_DIGEST_LENGTH];

	SHA256(d, n, md);
	for (int i = 0; i < SHA256_DIGEST_LENGTH; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

START_TEST(known_vectors)
{
	static const struct {
		const char *in, *hex;
	} v[] = {
	    {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	    {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	    {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	};
	char out[65];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		runner_sha256_hex(v[i].in, strlen(v[i].in), out);
		ck_assert_str_eq(out, v[i].hex);
		runner_sha256_hex_portable(v[i].in, strlen(v[i].in), out);
		ck_assert_str_eq(out, v[i].hex);
	}
}
END_TEST

/* Every length from 0 to 1100 (empty, one block, the 55/56/64-byte padding edges, many
 * blocks) and one of 1 MB, of bytes that are not text. */
START_TEST(every_length_matches_openssl)
{
	size_t big = 1 << 20;
	unsigned char *d = malloc(big);
	char want[65], hw[65], sw[65];

	ck_assert_ptr_nonnull(d);
	for (size_t i = 0; i < big; i++)
		d[i] = (unsigned char)(i * 2654435761U >> 13);
	for (size_t n = 0; n <= 1100; n++) {
		reference(d, n, want);
		runner_sha256_hex(d, n, hw);
		runner_sha256_hex_portable(d, n, sw);
		ck_assert_msg(strcmp(want, hw) == 0, "length %zu: %s, want %s", n, hw, want);
		ck_assert_msg(strcmp(want, sw) == 0, "length %zu (portable): %s", n, sw);
	}
	reference(d, big, want);
	runner_sha256_hex(d, big, hw);
	ck_assert_str_eq(hw, want);
	free(d);
}
END_TEST

static Suite *sha_suite(void)
{
	Suite *s = suite_create("sha256");
	TCase *tc = tcase_create("sha256");

	tcase_add_test(tc, known_vectors);
	tcase_add_test(tc, every_length_matches_openssl);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(sha_suite)
