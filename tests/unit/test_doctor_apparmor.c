/* doctor's AppArmor note: the restriction sysctl, the loaded profiles list, this
 * process's confinement and the package's profile file, as fixtures. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trust/apparmor_int.h"
#include "tests/unit/unit.h"

struct acase {
	const char *name;
	const char *sysctl;   /* NULL: the file is absent */
	const char *profiles; /* NULL: absent (unreadable) */
	const char *current;  /* NULL: absent */
	bool profile_file;
	enum doctor_apparmor_state want;
	const char *text; /* in the text */
	const char *fix;  /* in the fix */
};

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static const struct acase cases[] = {
    {"no AppArmor", NULL, NULL, NULL, false, DOCTOR_AA_NOT_RESTRICTED},
    {"not restricted", "0\n", "halo-run (unconfined)\n", NULL, true, DOCTOR_AA_NOT_RESTRICTED},
    {"garbage sysctl", "yes\n", NULL, NULL, false, DOCTOR_AA_NOT_RESTRICTED},
    {"confined by it", "1\n", "halo-run (unconfined)\n", "halo-run (unconfined)\n", true,
     DOCTOR_AA_APPLIES, "runs under its profile", "nothing to do"},
    {"loaded, other path", "1\n", "bwrap (unconfined)\nhalo-run (unconfined)\n", "unconfined\n",
     true, DOCTOR_AA_ELSEWHERE, "does not apply to /opt/h/halo-run",
     "profile halo-run-local /opt/h/halo-run flags=(unconfined)"},
    {"a longer name is not it", "1\n", "halo-run-other (unconfined)\nxhalo-run (enforce)\n",
     "unconfined\n", true, DOCTOR_AA_NOT_LOADED, "is not loaded", "apparmor_parser -r "},
    {"not loaded, file there", "1\n", "bwrap (unconfined)\n", "unconfined\n", true,
     DOCTOR_AA_NOT_LOADED, "is not loaded", "as root: apparmor_parser -r "},
    {"not loaded, no file", "1\n", "", NULL, false, DOCTOR_AA_NOT_LOADED, "is not loaded",
     "apt-get install ./halo-run_*.deb"},
    {"list unreadable", "1\n", NULL, "unconfined\n", false, DOCTOR_AA_UNKNOWN, "cannot be told",
     "apparmor_parser -r"},
};

static void put(const char *dir, const char *name, const char *text, char *path, size_t n)
{
	snprintf(path, n, "%s/%s", dir, name);
	unlink(path);
	if (text) {
		FILE *f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fputs(text, f);
		fclose(f);
	}
}

START_TEST(test_assess)
{
	const struct acase *c = &cases[_i];
	char dir[] = "/tmp/halo-aa-XXXXXX", s[64], pr[64], cur[64], old[64], pf[64];
	char text[8192], fix[16384];
	struct doctor_apparmor_paths p = {s, pr, cur, old, pf};

	ck_assert_ptr_nonnull(mkdtemp(dir));
	put(dir, "sysctl", c->sysctl, s, sizeof(s));
	put(dir, "profiles", c->profiles, pr, sizeof(pr));
	put(dir, "current", c->current, cur, sizeof(cur));
	put(dir, "current_old", NULL, old, sizeof(old));
	put(dir, "halo-run", c->profile_file ? "profile halo-run /usr/bin/halo-run {}\n" : NULL, pf,
	    sizeof(pf));
	enum doctor_apparmor_state got =
	    doctor_apparmor_assess(&p, "/opt/h/halo-run", text, sizeof(text), fix, sizeof(fix));
	ck_assert_msg(got == c->want, "%s: got %d want %d (%s)", c->name, got, c->want, text);
	if (c->text)
		ck_assert_msg(strstr(text, c->text), "%s: text '%s'", c->name, text);
	if (c->fix)
		ck_assert_msg(strstr(fix, c->fix), "%s: fix '%s'", c->name, fix);
	if (got == DOCTOR_AA_NOT_LOADED && c->profile_file)
		ck_assert_msg(strstr(fix, pf), "%s: names the file", c->name);
	unlink(s);
	unlink(pr);
	unlink(cur);
	unlink(pf);
	rmdir(dir);
}
END_TEST

static Suite *aa_suite(void)
{
	Suite *s = suite_create("doctor_apparmor");
	TCase *t = tcase_create("assess");

	tcase_add_loop_test(t, test_assess, 0, sizeof(cases) / sizeof(cases[0]));
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(aa_suite)
