/* linux_fds_close: exactly the descriptors given are closed, runs of consecutive ones
 * in one close_range, never one that sits between two of them but is not in the set. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "linux/linux_int.h"
#include "tests/unit/unit.h"

static bool is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/* n descriptors open on /dev/null, at the lowest numbers free: mostly consecutive. */
static void open_n(int *fds, int n)
{
	for (int i = 0; i < n; i++) {
		fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		ck_assert_int_ge(fds[i], 0);
	}
}

START_TEST(closes_a_run_and_leaves_the_rest)
{
	int fds[8], set[8], n = 0;

	open_n(fds, 8);
	/* Every other one but a run of three in the middle: 0, 2, 3, 4, 6. */
	for (int i = 0; i < 8; i++)
		if (i == 0 || (i >= 2 && i <= 4) || i == 6)
			set[n++] = fds[i];
	linux_fds_close(set, (size_t)n);
	for (int i = 0; i < 8; i++) {
		bool closed = i == 0 || (i >= 2 && i <= 4) || i == 6;
		ck_assert_msg(is_open(fds[i]) == !closed, "fd %d (index %d): %s", fds[i], i,
			      closed ? "left open" : "closed but not in the set");
	}
	close(fds[1]);
	close(fds[5]);
	close(fds[7]);
}
END_TEST

START_TEST(unsorted_repeated_and_negative)
{
	int fds[5];

	open_n(fds, 5);
	int set[] = {fds[4], -1, fds[1], fds[4], fds[2], -7, fds[1]};
	linux_fds_close(set, sizeof(set) / sizeof(set[0]));
	ck_assert(is_open(fds[0]));
	ck_assert(!is_open(fds[1]));
	ck_assert(!is_open(fds[2]));
	ck_assert(is_open(fds[3]));
	ck_assert(!is_open(fds[4]));
	close(fds[0]);
	close(fds[3]);
}
END_TEST

START_TEST(empty_and_single)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC), keep = dup(fd);

	linux_fds_close(NULL, 0);
	ck_assert(is_open(fd));
	linux_fds_close(&fd, 1);
	ck_assert(!is_open(fd));
	ck_assert(is_open(keep));
	close(keep);
}
END_TEST

static Suite *fds_suite(void)
{
	Suite *s = suite_create("fds");
	TCase *tc = tcase_create("fds");

	tcase_add_test(tc, closes_a_run_and_leaves_the_rest);
	tcase_add_test(tc, unsorted_repeated_and_negative);
	tcase_add_test(tc, empty_and_single);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(fds_suite)
