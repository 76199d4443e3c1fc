/* The facts with one home each: halo-run's exit codes (exit/exit.h), the system
 * directories (policy/sysdirs.c) and the guard names (policy/guard.c). */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>

#include "policy/policy.h"
#include "exit/exit.h"
#include "tests/unit/unit.h"

static const struct {
	struct halo_outcome o;
	int want;
} exit_rows[] = {
    {{HALO_OUTCOME_EXITED, 0}, 0},	     {{HALO_OUTCOME_EXITED, 3}, 3},
    {{HALO_OUTCOME_EXITED, 125}, 125}, /* the command's own 125 stays its own */
    {{HALO_OUTCOME_SIGNALED, SIGKILL}, 137}, {{HALO_OUTCOME_SIGNALED, SIGTERM}, 143},
    {{HALO_OUTCOME_TIMEOUT, 0}, 124},	     {{HALO_OUTCOME_SETUP, 0}, 125},
    {{HALO_OUTCOME_NOEXEC, EACCES}, 126},    {{HALO_OUTCOME_NOTFOUND, ENOENT}, 127},
};

START_TEST(exit_codes)
{
	ck_assert_int_eq(halo_exit_code(exit_rows[_i].o), exit_rows[_i].want);
}
END_TEST

START_TEST(exit_outcomes)
{
	ck_assert_int_eq(halo_outcome_exec(ENOENT).kind, HALO_OUTCOME_NOTFOUND);
	ck_assert_int_eq(halo_outcome_exec(EACCES).kind, HALO_OUTCOME_NOEXEC);
	ck_assert_int_eq(halo_outcome_exec(ENOEXEC).kind, HALO_OUTCOME_NOEXEC);
	ck_assert_int_eq(halo_exit_code(halo_outcome_wait(7 << 8)), 7);	  /* exited 7 */
	ck_assert_int_eq(halo_exit_code(halo_outcome_wait(SIGINT)), 130); /* killed */
	ck_assert_int_eq(HALO_EXIT_SETUP, 125);
	ck_assert_int_eq(HALO_EXIT_TIMEOUT, 124);
	ck_assert_int_eq(HALO_EXIT_NOEXEC, 126);
	ck_assert_int_eq(HALO_EXIT_NOTFOUND, 127);
}
END_TEST

static const struct {
	const char *path;
	bool is_dir;	  /* policy_is_system_dir */
	const char *tree; /* policy_system_tree_of */
} dir_rows[] = {
    {"/", true, NULL},
    {"/etc", true, "/etc"},
    {"/ETC", true, "/etc"},
    {"/etc/halo", false, "/etc"},
    {"/usr/local/src", false, "/usr"},
    {"/var", true, NULL},
    {"/var/lib/x", false, "/var/lib"},
    {"/tmp", true, NULL},
    {"/tmp/ws", false, NULL},
    {"/opt/cache", false, NULL},
    {"/etcetera", false, NULL},
    {"/home/u/project", false, NULL},
    {"/nix/store/abc", false, "/nix/store"},
};

START_TEST(system_dirs)
{
	const char *tree = policy_system_tree_of(dir_rows[_i].path);

	ck_assert_int_eq(policy_is_system_dir(dir_rows[_i].path), dir_rows[_i].is_dir);
	if (dir_rows[_i].tree)
		ck_assert_str_eq(tree ? tree : "(none)", dir_rows[_i].tree);
	else
		ck_assert_msg(!tree, "%s: %s", dir_rows[_i].path, tree);
}
END_TEST

START_TEST(os_trees)
{
	static const char *const os[] = {"/etc",  "/usr/lib", "/bin",	 "/sbin",
					 "/lib",  "/lib32",   "/lib64",	 "/libx32/x",
					 "/boot", "/dev/shm", "/proc/1", "/sys/fs"};
	static const char *const not_os[] = {
	    "/run/user", "/var/lib/jenkins/.cache", "/tmp", "/home/u", "/nix/store/x", "/etcx"};

	for (size_t i = 0; i < sizeof(os) / sizeof(os[0]); i++)
		ck_assert_msg(policy_os_tree_of(os[i]) && policy_system_tree_of(os[i]), "%s",
			      os[i]);
	for (size_t i = 0; i < sizeof(not_os) / sizeof(not_os[0]); i++)
		ck_assert_msg(!policy_os_tree_of(not_os[i]), "%s", not_os[i]);
}
END_TEST

START_TEST(system_lists)
{
	size_t nt, nd;
	const char *const *t = policy_system_trees(&nt);
	const char *const *d = policy_system_dirs(&nd);

	ck_assert_uint_gt(nt, 10);
	ck_assert_uint_gt(nd, 5);
	for (size_t i = 0; i < nt; i++)
		ck_assert(policy_is_system_dir(t[i]) && t[i][0] == '/');
	for (size_t i = 0; i < nd; i++)
		ck_assert(policy_is_system_dir(d[i]) && d[i][0] == '/');
}
END_TEST

static Suite *facts_suite(void)
{
	Suite *s = suite_create("facts");
	TCase *tc = tcase_create("facts");

	tcase_add_loop_test(tc, exit_codes, 0, (int)(sizeof(exit_rows) / sizeof(exit_rows[0])));
	tcase_add_test(tc, exit_outcomes);
	tcase_add_loop_test(tc, system_dirs, 0, (int)(sizeof(dir_rows) / sizeof(dir_rows[0])));
	tcase_add_test(tc, os_trees);
	tcase_add_test(tc, system_lists);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(facts_suite)
