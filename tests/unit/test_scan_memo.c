/* The scan's memo of names (linux/scan_memo.c): each name is asked of the kernel once,
 * a directory asked about often is listed once, and neither ever answers differently
 * from lstat: a name that is there (in any case) is found, a symlink keeps its target,
 * a directory the caller cannot search says EACCES (not "missing"), and the memo
 * forgotten sees what was made since. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/scan_int.h"
#include "tests/unit/unit.h"

static char top[64];

static void setup(void)
{
	snprintf(top, sizeof(top), "/tmp/halo-memo.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(top));
	ck_assert_int_eq(chmod(top, 0755), 0);
}

static void teardown(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx %s; rm -rf %s", top, top);
	ck_assert_int_eq(system(cmd), 0);
}

static void make(const char *rel, bool dir)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	if (dir)
		ck_assert_int_eq(mkdir(p, 0755), 0);
	else
		ck_assert_int_eq(close(open(p, O_WRONLY | O_CREAT | O_EXCL, 0644)), 0);
}

/* lstat of top/rel through the memo. */
static int ask(struct linux_scan *s, const char *rel, const char **target)
{
	char p[256];
	const char *t = NULL;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	return linux_scan_memo_lstat(s, p, target ? target : &t);
}

START_TEST(listed_directory_answers_as_lstat)
{
	struct linux_scan s = {0};
	const char *t = NULL;
	char p[256];

	make("present", false);
	make("Mixed.Case", true);
	snprintf(p, sizeof(p), "%s/present", top);
	ck_assert_int_eq(symlink(p, strcat(strcpy((char[256]){0}, top), "/link")), 0);
	/* Enough questions that the directory is listed. */
	for (int i = 0; i < 12; i++) {
		char name[32];
		snprintf(name, sizeof(name), "absent%d", i);
		ck_assert_int_eq(ask(&s, name, NULL), -ENOENT);
	}
	ck_assert_uint_gt(s.memo.n_dirs, 0);
	ck_assert_int_eq(ask(&s, "present", NULL), 0);
	ck_assert_int_eq(ask(&s, "Mixed.Case", NULL), 0);
	ck_assert_int_eq(ask(&s, "mixed.case", NULL), -ENOENT); /* lstat's answer here */
	ck_assert_int_eq(ask(&s, "link", &t), 1);
	ck_assert_str_eq(t, p);
	ck_assert_int_eq(ask(&s, "present/below", NULL), -ENOTDIR);
	linux_scan_memo_free(&s);
}
END_TEST

/* Made after the listing: found once the memo is forgotten (as make_dirs does). */
START_TEST(forgotten_memo_sees_new_names)
{
	struct linux_scan s = {0};

	for (int i = 0; i < 8; i++) {
		char name[32];
		snprintf(name, sizeof(name), "gone%d", i);
		ck_assert_int_eq(ask(&s, name, NULL), -ENOENT);
	}
	make("late", true);
	ck_assert_int_eq(ask(&s, "late", NULL), -ENOENT); /* the snapshot */
	linux_scan_memo_free(&s);
	ck_assert_int_eq(ask(&s, "late", NULL), 0);
	linux_scan_memo_free(&s);
}
END_TEST

/* A directory the caller may read but not search: lstat of a name in it fails EACCES,
 * and so does the memo's answer, listed or not. */
START_TEST(unsearchable_directory_is_not_missing)
{
	pid_t pid;
	int st;

	make("ro", true);
	make("ro/secret", false);
	make("ro/other", false);
	ck_assert_int_eq(chmod(strcat(strcpy((char[256]){0}, top), "/ro"), 0644), 0);
	if (geteuid() == 0 && (pid = fork()) == 0) {
		struct linux_scan s = {0};
		int bad = 0;
		if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			_exit(2);
		/* Distinct names: the memo asks each once, the listing comes after a few. */
		for (int i = 0; i < 10; i++) {
			char name[32];
			snprintf(name, sizeof(name), "ro/absent%d", i);
			bad += ask(&s, name, NULL) != -EACCES;
		}
		bad += ask(&s, "ro/secret", NULL) != -EACCES;
		_exit(bad ? 1 : 0);
	} else if (geteuid() == 0) {
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
		return;
	}
	UNIT_SKIP("unsearchable directory", "needs root to drop to another uid");
}
END_TEST

/* linux_scan_memo_missing: a name under a listed directory that lacks it is missing at
 * every depth below; what is there (in any case), or not yet listed, is never. */
START_TEST(missing_by_listing_at_any_depth)
{
	struct linux_scan s = {0};
	char p[256];

	make("have", true);
	make("have/file", false);
	snprintf(p, sizeof(p), "%s/nothere/deep/x", top);
	ck_assert(!linux_scan_memo_missing(&s, p)); /* not listed yet: unsure */
	for (int i = 0; i < 6; i++) {
		snprintf(p, sizeof(p), "%s/absent%d/below", top, i);
		linux_scan_memo_missing(&s, p);
	}
	snprintf(p, sizeof(p), "%s/nothere/deep/x", top);
	ck_assert(linux_scan_memo_missing(&s, p));
	snprintf(p, sizeof(p), "%s/nothere", top);
	ck_assert(linux_scan_memo_missing(&s, p));
	snprintf(p, sizeof(p), "%s/have", top);
	ck_assert(!linux_scan_memo_missing(&s, p));
	snprintf(p, sizeof(p), "%s/have/file", top);
	ck_assert(!linux_scan_memo_missing(&s, p));
	snprintf(p, sizeof(p), "%s/HAVE/x", top); /* there in another case: asked */
	ck_assert(!linux_scan_memo_missing(&s, p));
	ck_assert(!linux_scan_memo_missing(&s, "relative/name"));
	ck_assert(!linux_scan_memo_missing(&s, "/"));
	linux_scan_memo_free(&s);
}
END_TEST

/* A directory that does not exist (a home like /nonexistent, whose floor entries are
 * asked dozens of times): once it is asked about often, every name below it is missing
 * without a lookup, as lstat says. A directory that is a file, or a symlink (dangling
 * or not), is never taken for one that does not exist: lstat's answer differs. */
START_TEST(absent_directory_hides_every_name)
{
	struct linux_scan s = {0};
	char p[256], link[256];
	const char *t = NULL;

	make("file", false);
	snprintf(link, sizeof(link), "%s/dangling", top);
	ck_assert_int_eq(symlink("/nonexistent-halo-memo-target", link), 0);
	for (int i = 0; i < 8; i++) {
		char name[48];
		snprintf(name, sizeof(name), "gone/entry%d", i);
		ck_assert_int_eq(ask(&s, name, NULL), -ENOENT);
		snprintf(name, sizeof(name), "file/entry%d", i);
		ck_assert_int_eq(ask(&s, name, NULL), -ENOTDIR);
		snprintf(name, sizeof(name), "dangling/entry%d", i);
		ck_assert_int_eq(ask(&s, name, NULL), -ENOENT);
	}
	snprintf(p, sizeof(p), "%s/gone/deeper/x", top);
	ck_assert(linux_scan_memo_missing(&s, p));
	snprintf(p, sizeof(p), "%s/gone/entry1", top);
	ck_assert(linux_scan_memo_missing(&s, p));
	snprintf(p, sizeof(p), "%s/file/entry1", top);
	ck_assert(!linux_scan_memo_missing(&s, p)); /* ENOTDIR, not missing */
	snprintf(p, sizeof(p), "%s/dangling/entry1", top);
	ck_assert(!linux_scan_memo_missing(&s, p)); /* a link: asked */
	/* Made after the snapshot: seen once the memo is forgotten. */
	make("gone", true);
	make("gone/entry1", false);
	ck_assert_int_eq(ask(&s, "gone/entry1", NULL), -ENOENT);
	linux_scan_memo_free(&s);
	ck_assert_int_eq(ask(&s, "gone/entry1", &t), 0);
	linux_scan_memo_free(&s);
}
END_TEST

/* A directory of many names (a home under /tmp: every floor entry asks about /tmp on
 * the way) answers each name by its listing as lstat would, in any case, first and
 * last of the listing alike. */
/* Review 7: a link on the way (dangling, or to a directory) is never listed through:
 * "missing" from the memo means missing with no link on the way (add_mask's -1), and a
 * name beneath a link to a directory not made yet must go to the full resolution,
 * which keeps it from being made where the link leads. */
START_TEST(no_listing_through_a_link)
{
	struct linux_scan s = {0};
	char p[256], link[256], to[256];

	make("real", true);
	snprintf(link, sizeof(link), "%s/dangling", top);
	snprintf(to, sizeof(to), "%s/not-yet", top);
	ck_assert_int_eq(symlink(to, link), 0);
	snprintf(link, sizeof(link), "%s/tolisted", top);
	snprintf(to, sizeof(to), "%s/real", top);
	ck_assert_int_eq(symlink(to, link), 0);
	for (int i = 0; i < 8; i++) {
		snprintf(p, sizeof(p), "%s/dangling/keys/k%d", top, i);
		ck_assert_msg(!linux_scan_memo_missing(&s, p), "%s taken for missing", p);
		snprintf(p, sizeof(p), "%s/tolisted/k%d", top, i);
		ck_assert_msg(!linux_scan_memo_missing(&s, p), "%s taken for missing", p);
	}
	linux_scan_memo_free(&s);
}
END_TEST

START_TEST(large_listing_answers_every_name)
{
	struct linux_scan s = {0};
	char p[256], r[32];

	make("big", true);
	for (int i = 0; i < 700; i++) {
		snprintf(r, sizeof(r), "big/%c%03d", "aBcD"[i % 4], i);
		make(r, false);
	}
	for (int i = 0; i < 6; i++) { /* listed after a few questions */
		snprintf(r, sizeof(r), "big/none%d", i);
		ck_assert_int_eq(ask(&s, r, NULL), -ENOENT);
	}
	for (int i = 0; i < 700; i++) {
		char q[256];
		snprintf(q, sizeof(q), "%s/big/%c%03d/x", top, "aBcD"[i % 4], i);
		ck_assert_msg(!linux_scan_memo_missing(&s, q), "%s", q); /* there: asked */
		snprintf(q, sizeof(q), "%s/big/%c%03d/x", top, "AbCd"[i % 4], i);
		ck_assert_msg(!linux_scan_memo_missing(&s, q), "%s", q); /* another case */
		snprintf(q, sizeof(q), "%s/big/%c%03dz/x", top, "aBcD"[i % 4], i);
		ck_assert_msg(linux_scan_memo_missing(&s, q), "%s", q);
	}
	snprintf(p, sizeof(p), "%s/big/0/x", top);
	ck_assert(linux_scan_memo_missing(&s, p));
	snprintf(p, sizeof(p), "%s/big/zzzz/x", top);
	ck_assert(linux_scan_memo_missing(&s, p));
	linux_scan_memo_free(&s);
}
END_TEST

static Suite *memo_suite(void)
{
	Suite *s = suite_create("scan_memo");
	TCase *tc = tcase_create("scan_memo");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, listed_directory_answers_as_lstat);
	tcase_add_test(tc, forgotten_memo_sees_new_names);
	tcase_add_test(tc, unsearchable_directory_is_not_missing);
	tcase_add_test(tc, missing_by_listing_at_any_depth);
	tcase_add_test(tc, absent_directory_hides_every_name);
	tcase_add_test(tc, large_listing_answers_every_name);
	tcase_add_test(tc, no_listing_through_a_link);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(memo_suite)
