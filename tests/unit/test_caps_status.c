/* linux/caps.c reads the bounding and ambient sets back from /proc/self/status in one
 * read: the parser, with hostile text (a field missing, short, long, upper case, not
 * at a line's start). Anything it refuses makes the launch ask per capability. */
#include <errno.h>
#include <stdint.h>

#include "linux/linux_int.h"
#include "tests/unit/unit.h"

static const struct {
	const char *text;
	int rc;
	uint64_t bnd, amb;
} rows[] = {
    {"Name:\tx\nCapInh:\t0000000000000000\nCapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\n",
     0, 0, 0},
    {"CapBnd:\t000001ffffffffff\nCapAmb:\t0000000000000001", 0, 0x1ffffffffffULL, 1},
    {"CapAmb:\t0000000000000000\nCapBnd:\t0000000000000004\n", 0, 4, 0},
    {"CapBnd:\t0000000000000000\n", -ENOENT, 0, 0},
    {"CapAmb:\t0000000000000000\n", -ENOENT, 0, 0},
    {"", -ENOENT, 0, 0},
    {"CapBnd:\t000000000000000\nCapAmb:\t0000000000000000\n", -EINVAL, 0, 0},
    {"CapBnd:\t00000000000000000\nCapAmb:\t0000000000000000\n", -EINVAL, 0, 0},
    {"CapBnd:\t000001FFFFFFFFFF\nCapAmb:\t0000000000000000\n", -EINVAL, 0, 0},
    {"CapBnd: 0000000000000000\nCapAmb:\t0000000000000000\n", -ENOENT, 0, 0},
    {"XCapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\n", -ENOENT, 0, 0},
    {"CapBnd:\t-000000000000001\nCapAmb:\t0000000000000000\n", -EINVAL, 0, 0},
    {"CapBnd:\t0000000000000000 \nCapAmb:\t0000000000000000\n", -EINVAL, 0, 0},
};

START_TEST(parse_table)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t bnd = 99, amb = 99;
		int rc = linux_caps_parse_status(rows[i].text, &bnd, &amb);
		ck_assert_msg(rc == rows[i].rc, "row %zu: rc %d, want %d", i, rc, rows[i].rc);
		if (rc == 0)
			ck_assert_msg(bnd == rows[i].bnd && amb == rows[i].amb,
				      "row %zu: %llx %llx", i, (unsigned long long)bnd,
				      (unsigned long long)amb);
	}
}
END_TEST

/* The ignored signals from the same text (init's reset_signals): a field it cannot
 * read says nothing, and every signal is set back. */
START_TEST(sigign_table)
{
	static const struct {
		const char *text;
		int rc;
		uint64_t ign;
	} t[] = {
	    {"SigBlk:\t0000000000000000\nSigIgn:\t0000000000001003\nSigCgt:\t0\n", 0, 0x1003},
	    {"SigIgn:\t0000000000000000", 0, 0},
	    {"SigIgn:\t000000000000000\n", -EINVAL, 0},
	    {"SigIgn:\tzzzzzzzzzzzzzzzz\n", -EINVAL, 0},
	    {"XSigIgn:\t0000000000000000\n", -ENOENT, 0},
	    {"", -ENOENT, 0},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t ign = 99;
		int rc = linux_status_sigign(t[i].text, &ign);
		ck_assert_msg(rc == t[i].rc, "row %zu: rc %d", i, rc);
		if (rc == 0)
			ck_assert_msg(ign == t[i].ign, "row %zu: %llx", i, (unsigned long long)ign);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("caps_status");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, parse_table);
	tcase_add_test(tc, sigign_table);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(suite)
