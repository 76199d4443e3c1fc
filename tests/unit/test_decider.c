/* events/decider_parse: the decider's answers are outside input; everything but the
 * protocol's exact shape is refused (the policy's default then applies). And the
 * SHA-256 behind --events' policy digest, against FIPS 180-4's vectors. */
#include <string.h>

#include "events/decider_int.h"
#include "events/events.h"
#include "tests/unit/unit.h"

START_TEST(answers)
{
	static const struct {
		const char *line;
		int rc;
		unsigned long long id;
		bool allow, session;
	} t[] = {
	    {"{\"id\":1,\"decision\":\"allow\"}", 0, 1, true, false},
	    {"{\"id\":7,\"decision\":\"deny\",\"remember\":\"once\"}", 0, 7, false, false},
	    {"{\"id\":7,\"decision\":\"allow\",\"remember\":\"session\"}", 0, 7, true, true},
	    {"  {\"decision\":\"deny\",\"id\":2}  \r", 0, 2, false, false},
	    {"{\"id\":3,\"decision\":\"allow\",\"note\":\"from a newer decider\"}", 0, 3, true,
	     false},
	    {"{\"id\":9007199254740991,\"decision\":\"allow\"}", 0, 9007199254740991ULL, true,
	     false},
	    /* hostile: each is the default */
	    {"", -EINVAL, 0, false, false},
	    {"sure, go ahead", -EINVAL, 0, false, false},
	    {"null", -EINVAL, 0, false, false},
	    {"[1,\"allow\"]", -EINVAL, 0, false, false},
	    {"\"allow\"", -EINVAL, 0, false, false},
	    {"{\"id\":1}", -EINVAL, 0, false, false},
	    {"{\"decision\":\"allow\"}", -EINVAL, 0, false, false},
	    {"{\"id\":\"1\",\"decision\":\"allow\"}", -EINVAL, 0, false, false},
	    {"{\"id\":0,\"decision\":\"allow\"}", -EINVAL, 0, false, false},
	    {"{\"id\":-1,\"decision\":\"allow\"}", -EINVAL, 0, false, false},
	    {"{\"id\":1.5,\"decision\":\"allow\"}", -EINVAL, 0, false, false},
	    {"{\"id\":1e300,\"decision\":\"allow\"}", -EINVAL, 0, false, false},
	    {"{\"id\":9007199254740992,\"decision\":\"allow\"}", -EINVAL, 0, false, false},
	    {"{\"id\":1,\"decision\":\"ALLOW\"}", -EINVAL, 0, false, false},
	    {"{\"id\":1,\"decision\":\"allow \"}", -EINVAL, 0, false, false},
	    {"{\"id\":1,\"decision\":true}", -EINVAL, 0, false, false},
	    {"{\"id\":1,\"decision\":\"yes\"}", -EINVAL, 0, false, false},
	    {"{\"id\":1,\"decision\":\"allow\",\"remember\":\"forever\"}", -EINVAL, 0, false,
	     false},
	    {"{\"id\":1,\"decision\":\"allow\",\"remember\":1}", -EINVAL, 0, false, false},
	    {"{\"id\":1,\"decision\":\"deny\",\"decision\":\"allow\"}", -EINVAL, 0, false, false},
	    {"{\"id\":1,\"id\":2,\"decision\":\"allow\"}", -EINVAL, 0, false, false},
	    {"{\"id\":1,\"decision\":\"allow\"}{\"id\":2,\"decision\":\"allow\"}", -EINVAL, 0,
	     false, false},
	    {"{\"id\":1,\"decision\":\"allow\"} x", -EINVAL, 0, false, false},
	    {"{\"id\":1,\"decision\":\"allow\"", -EINVAL, 0, false, false},
	    {"{\"Id\":1,\"Decision\":\"allow\"}", -EINVAL, 0, false, false},
	    /* An escaped NUL: cJSON's C string stops there, another reader's does not. */
	    {"{\"id\":1,\"decision\":\"allow\\u0000deny\"}", -EINVAL, 0, false, false},
	    {"{\"id\":1,\"decision\\u0000x\":\"allow\"}", -EINVAL, 0, false, false},
	    {"{\"id\":1,\"decision\":\"allow\",\"remember\":\"session\\u0000\"}", -EINVAL, 0, false,
	     false},
	    /* ... but an escaped backslash before "u0000" is text, not a NUL. */
	    {"{\"id\":4,\"decision\":\"allow\",\"note\":\"a\\\\u0000\"}", 0, 4, true, false},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct runner_decider_answer a;
		char why[96] = "";
		int rc =
		    runner_decider_parse_answer(t[i].line, strlen(t[i].line), &a, why, sizeof(why));

		ck_assert_msg(rc == t[i].rc, "row %zu (%s): rc %d", i, t[i].line, rc);
		if (rc) {
			ck_assert_msg(why[0], "row %zu: a refusal names its reason", i);
			continue;
		}
		ck_assert_msg(a.id == t[i].id && a.allow == t[i].allow &&
				  a.remember_session == t[i].session,
			      "row %zu (%s)", i, t[i].line);
	}
}
END_TEST

START_TEST(hostile_bytes)
{
	struct runner_decider_answer a;
	char why[96], big[RUNNER_DECIDER_MAX_LINE + 64];
	static const char nul[] = "{\"id\":1,\"decision\":\"allow\"}\0{\"id\":2}";
	static const char nul_in_string[] = "{\"id\":1,\"decision\":\"al\0low\"}";

	ck_assert_int_eq(runner_decider_parse_answer(nul, sizeof(nul) - 1, &a, why, sizeof(why)),
			 -EINVAL);
	ck_assert_int_eq(runner_decider_parse_answer(nul_in_string, sizeof(nul_in_string) - 1, &a,
						     why, sizeof(why)),
			 -EINVAL);
	/* Over the line limit, even when it parses. */
	memset(big, ' ', sizeof(big));
	memcpy(big, "{\"id\":1,\"decision\":\"allow\"}", 27);
	ck_assert_int_eq(runner_decider_parse_answer(big, sizeof(big), &a, why, sizeof(why)),
			 -EINVAL);
	/* Deep nesting: refused, never a crash. */
	memset(big, '[', sizeof(big));
	ck_assert_int_eq(
	    runner_decider_parse_answer(big, RUNNER_DECIDER_MAX_LINE, &a, why, sizeof(why)),
	    -EINVAL);
}
END_TEST

START_TEST(sha256_vectors)
{
	static const struct {
		const char *in;
		const char *hex;
	} t[] = {
	    {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	    {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	    {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	    /* 64 bytes: the padding takes a block of its own */
	    {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	     "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
	};
	/* Runs of 'b' either side of the padding boundaries (sha256sum's answers). */
	static const struct {
		size_t n;
		const char *hex;
	} runs[] = {
	    {55, "eb2c86e932179f4ba13fe8715a26124b77d6bad290b9b4c1cc140cf633300c19"},
	    {56, "a5fc6e203a4c2b657d0d153885932414b2ffc6a93f0f8bf8b3183315e5a7212c"},
	    {63, "94e419fabac7f930810f9636354042f8c1426d2f834d4ab65c93dc1e69326b13"},
	    {119, "68297a9eb141ce16bbc0847da1c0c48e2858704feaa13993bde29f87a198a6e1"},
	    {120, "392add47fbaa8197a874ebe770a947a26dd6f2becce5f64688cc4d18c9da93bd"},
	    {200, "aaebc35c4c4e2cc7ac7c65812a7fa476d807b9f3fc60d478dfe098ceeb122321"},
	};
	char hex[65], b[200];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		runner_sha256_hex(t[i].in, strlen(t[i].in), hex);
		ck_assert_str_eq(hex, t[i].hex);
	}
	memset(b, 'b', sizeof(b));
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		runner_sha256_hex(b, runs[i].n, hex);
		ck_assert_msg(strcmp(hex, runs[i].hex) == 0, "%zu bytes: %s", runs[i].n, hex);
	}
}
END_TEST

static Suite *decider_suite(void)
{
	Suite *s = suite_create("decider");
	TCase *tc = tcase_create("decider");

	tcase_add_test(tc, answers);
	tcase_add_test(tc, hostile_bytes);
	tcase_add_test(tc, sha256_vectors);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(decider_suite)
