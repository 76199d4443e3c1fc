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

static Suite *suite(void)
{
	Suite *s = suite_create("caps_status");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, parse_table);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(suite)
