/* runner_lineage_adopted: --die-with-parent's "was the parent already gone" judgment,
 * a table of lineages as a fork, a reaper and the usual launchers leave them. */
#include <unistd.h>

#include "runner/runner_int.h"
#include "tests/unit/unit.h"

static const struct {
	const char *what;
	struct runner_lineage l;
	bool adopted;
} rows[] = {
    /* self, parent, sid, parent_sid, pgid, parent_pgid, tty_job, leader_parent */
    {"forked by its parent: same session and group",
     {500, 400, 100, 100, 300, 300, false, -1},
     false},
    {"its own session (setsid)", {500, 1, 500, 1, 500, 1, false, -1}, false},
    {"its own group (timeout, a job of one)", {500, 400, 100, 100, 500, 300, false, -1}, false},
    {"adopted by init in another session", {500, 1, 100, 1, 300, 1, false, -1}, true},
    {"adopted by a subreaper in another session", {500, 40, 100, 40, 300, 40, false, -1}, true},
    {"adopted by a reaper in the same session, another group",
     {500, 1, 1, 1, 300, 1, false, -1},
     true},
    {"adopted where sessions are outside the pid namespace (all read 0)",
     {500, 1, 0, 0, 300, 0, false, -1},
     true},
    {"a pipeline's member under a job-control shell",
     {500, 400, 400, 400, 499, 400, true, -1},
     false},
    {"a pipeline's member under set -m, its leader alive",
     {500, 400, 100, 100, 499, 400, false, 400},
     false},
    {"a pipeline's member under set -m, its leader gone (refused: cannot be told)",
     {500, 400, 100, 100, 499, 400, false, -1},
     true},
    {"adopted; its group's leader a child of someone else",
     {500, 1, 1, 1, 300, 1, false, 200},
     true},
    {"no parent in this namespace (halo-run is init)", {1, 0, 0, -1, 0, -1, false, -1}, false},
    {"parent's ids unreadable", {500, 400, 100, -1, 300, -1, false, -1}, false},
    {"same session and group as the reaper: cannot be told",
     {500, 1, 1, 1, 1, 1, false, -1},
     false},
};

START_TEST(lineage_table)
{
	ck_assert_msg(runner_lineage_adopted(&rows[_i].l) == rows[_i].adopted, "%s", rows[_i].what);
}
END_TEST

START_TEST(lineage_of_this_process)
{
	struct runner_lineage l;

	runner_lineage_read(&l);
	ck_assert_int_eq(l.self, getpid());
	ck_assert_int_eq(l.parent, getppid());
	/* Check forked this test from its runner, which is alive: not adopted. */
	ck_assert(!runner_lineage_adopted(&l));
}
END_TEST

static Suite *lineage_suite(void)
{
	Suite *s = suite_create("lineage");
	TCase *tc = tcase_create("adopted");

	tcase_add_loop_test(tc, lineage_table, 0, (int)(sizeof(rows) / sizeof(rows[0])));
	tcase_add_test(tc, lineage_of_this_process);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(lineage_suite)
