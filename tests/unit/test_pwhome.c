/* opts/pwhome: the fast path reads /etc/passwd only when nsswitch.conf lets "files"
 * answer first and alone, takes the first line with the uid, and hands anything unusual
 * to getpwuid(); on this machine it agrees with getpwuid() for the caller. */
#include <errno.h>
#include <pwd.h>
#include <string.h>
#include <unistd.h>

#include "runner/runner_int.h"
#include "tests/unit/unit.h"

START_TEST(nsswitch_files_first)
{
	static const struct {
		const char *text;
		bool want;
	} t[] = {
	    {"passwd:         files systemd\ngroup: files\n", true},
	    {"# comment\npasswd: files\n", true},
	    {"passwd:files", true},
	    {"  passwd :\tfiles # local only\n", true},
	    {"PASSWD: files\n", true},
	    {"passwd: compat\n", false},
	    {"passwd: sss files\n", false},
	    {"passwd: filesx\n", false},
	    {"passwd: files [SUCCESS=continue] ldap\n", false},
	    {"passwd: files [NOTFOUND=return]\n", false},
	    {"passwd: files\npasswd: ldap\n", false}, /* said twice */
	    {"group: files\n", false},		      /* glibc's default: not guessed */
	    {"#passwd: files\n", false},
	    {"passwdx: files\n", false},
	    {"", false},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_msg(runner_passwd_files_first(t[i].text) == t[i].want, "row %zu: %s", i,
			      t[i].text);
}
END_TEST

START_TEST(passwd_lines)
{
	static const struct {
		const char *text;
		uid_t uid;
		int rc;
		const char *home;
	} t[] = {
	    {"root:x:0:0:root:/root:/bin/bash\nu:x:1000:1000::/home/u:/bin/sh\n", 1000, 0,
	     "/home/u"},
	    {"root:x:0:0:root:/root:/bin/bash\n", 0, 0, "/root"},
	    {"a:x:5:5::/first:/bin/sh\nb:x:5:5::/second:/bin/sh\n", 5, 0, "/first"},
	    {"# c:x:7:7::/comment:/bin/sh\n\n   \nc:x:7:7::/real:/bin/sh", 7, 0, "/real"},
	    {"d:x:8:8:gecos, with: colon?:/d:/bin/sh\n", 8, -EINVAL, ""}, /* 8 fields */
	    {"e:x:9:9::/home/with space:/bin/sh\n", 9, 0, "/home/with space"},
	    {"root:x:0:0:root:/root:/bin/bash\n", 1, -ENOENT, ""},
	    {"+::::::\nroot:x:0:0::/root:/bin/sh\n", 0, -EINVAL, ""}, /* NIS compat */
	    {"-bad::::::\n", 0, -EINVAL, ""},
	    {"f:x: 10:10::/f:/bin/sh\n", 10, -EINVAL, ""}, /* strtoul would take it */
	    {"g:x:abc:1::/g:/bin/sh\nh:x:11:1::/h:/bin/sh\n", 11, -EINVAL, ""},
	    {"i:x:12:12::relative:/bin/sh\n", 12, -EINVAL, ""},
	    {"j:x:13:13:::/bin/sh\n", 13, -EINVAL, ""},
	    {"k:x:14:14::/k\n", 14, -EINVAL, ""}, /* no shell field */
	    {"l:x:99999999999:1::/l:/bin/sh\n", 1, -EINVAL, ""},
	    {"m:x:4294967295:1::/m:/bin/sh\n", 4294967295U, 0, "/m"},
	};
	char out[64];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		strcpy(out, "");
		int rc = runner_passwd_home_in(t[i].text, t[i].uid, out, sizeof(out));
		ck_assert_msg(rc == t[i].rc, "row %zu: rc %d, want %d", i, rc, t[i].rc);
		ck_assert_msg(strcmp(out, t[i].home) == 0, "row %zu: home '%s', want '%s'", i, out,
			      t[i].home);
	}
	/* A home that does not fit the caller's buffer is not cut short. */
	ck_assert_int_eq(runner_passwd_home_in("n:x:1:1::/abcdef:/bin/sh\n", 1, out, 7), -EINVAL);
}
END_TEST

START_TEST(agrees_with_getpwuid)
{
	char home[4096];
	struct passwd *pw = getpwuid(getuid());

	ck_assert_ptr_nonnull(pw);
	ck_assert_int_eq(runner_pw_home(getuid(), home, sizeof(home)), 0);
	ck_assert_str_eq(home, pw->pw_dir);
	/* A uid nobody has: no home from either path. */
	if (getpwuid(0x7ffffff0) == NULL)
		ck_assert_int_eq(runner_pw_home(0x7ffffff0, home, sizeof(home)), -ENOENT);
}
END_TEST

static Suite *pwhome_suite(void)
{
	Suite *s = suite_create("pwhome");
	TCase *tc = tcase_create("pwhome");

	tcase_add_test(tc, nsswitch_files_first);
	tcase_add_test(tc, passwd_lines);
	tcase_add_test(tc, agrees_with_getpwuid);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(pwhome_suite)
