/* policy_zshenv_zdotdir (review 16): the $ZDOTDIR a zshenv file assigns, in the
 * spellings users write, the last one winning; and hostile text (unterminated quotes,
 * command substitutions, other variables, relative values, a value past the buffer,
 * bytes past ASCII, NUL) is "cannot be told" or nothing, never a wrong directory. */
#include <errno.h>
#include <string.h>

#include "policy/policy.h"
#include "tests/unit/unit.h"

static const struct {
	const char *in;
	int rc;
	const char *want;
} rows[] = {
    {"ZDOTDIR=$HOME/.zsh\n", 1, "/h/.zsh"},
    {"export ZDOTDIR=\"$HOME/.config/zsh\"", 1, "/h/.config/zsh"},
    {"export ZDOTDIR=~/dots/zsh # mine\n", 1, "/h/dots/zsh"},
    {"ZDOTDIR=${HOME}/z", 1, "/h/z"},
    {"ZDOTDIR='/opt/zsh dir'", 1, "/opt/zsh dir"},
    {"ZDOTDIR=\"$HOME\"/.zsh", 1, "/h/.zsh"},
    {"ZDOTDIR=${XDG_CONFIG_HOME:-$HOME/.config}/zsh", 1, "/x/zsh"},
    {"typeset -gx ZDOTDIR=/etc/zdot", 1, "/etc/zdot"},
    {"[[ -d ~/.zsh ]] && export ZDOTDIR=~/.zsh", 1, "/h/.zsh"},
    {"if true; then ZDOTDIR=/a; fi", 1, "/a"},
    {"ZDOTDIR=/a\nZDOTDIR=/b\n", 1, "/b"}, /* the last wins */
    {"ZDOTDIR=/a; export ZDOTDIR", 1, "/a"},
    {"# ZDOTDIR=/commented\n", 0, ""},
    {"echo ZDOTDIR=/not-one\n", 0, ""},
    {"echo \"ZDOTDIR=/quoted\"\n", 0, ""},
    {"MYZDOTDIR=/other\n", 0, ""},
    {"", 0, ""},
    {"ZDOTDIR\n", 0, ""},
    /* what cannot be told */
    {"ZDOTDIR=$(dirname $0)", -EINVAL, ""},
    {"ZDOTDIR=`pwd`", -EINVAL, ""},
    {"ZDOTDIR=$OTHER/zsh", -EINVAL, ""},
    {"ZDOTDIR=${0:a:h}", -EINVAL, ""},
    {"ZDOTDIR=relative/zsh", -EINVAL, ""},
    {"ZDOTDIR=\"$HOME/unterminated", -EINVAL, ""},
    {"ZDOTDIR='/unterminated", -EINVAL, ""},
    {"ZDOTDIR=${HOME", -EINVAL, ""},
    {"ZDOTDIR=${HOME:+x}", -EINVAL, ""},
    {"ZDOTDIR=/a/*", -EINVAL, ""},
    {"ZDOTDIR=\\/a", -EINVAL, ""},
    {"ZDOTDIR=", -EINVAL, ""},
    {"ZDOTDIR=/good\nZDOTDIR=$(evil)\n", -EINVAL, ""}, /* the last cannot be told */
    {"ZDOTDIR=/caf\xc3\xa9", 1, "/caf\xc3\xa9"},
};

START_TEST(table)
{
	const struct policy_zshenv_env env = {"/h", "/x"};
	char out[256] = "junk";
	int rc = policy_zshenv_zdotdir(rows[_i].in, strlen(rows[_i].in), &env, out, sizeof(out));

	ck_assert_msg(rc == rows[_i].rc, "%s: rc %d, want %d", rows[_i].in, rc, rows[_i].rc);
	ck_assert_str_eq(out, rows[_i].want);
}
END_TEST

START_TEST(unset_and_bounds)
{
	const struct policy_zshenv_env none = {NULL, NULL};
	char out[256], small[8], big[600];
	const char nul[] = "ZDOTDIR=/a\0ZDOTDIR=/b";

	/* $HOME unset: cannot be told; $XDG_CONFIG_HOME unset takes the default */
	ck_assert_int_eq(policy_zshenv_zdotdir("ZDOTDIR=$HOME/z", 15, &none, out, sizeof(out)),
			 -EINVAL);
	const struct policy_zshenv_env home = {"/h", NULL};
	const char *d = "ZDOTDIR=${XDG_CONFIG_HOME:-$HOME/.config}/zsh";
	ck_assert_int_eq(policy_zshenv_zdotdir(d, strlen(d), &home, out, sizeof(out)), 1);
	ck_assert_str_eq(out, "/h/.config/zsh");
	/* a relative $HOME is no directory to name */
	const struct policy_zshenv_env rel = {"h", NULL};
	ck_assert_int_eq(policy_zshenv_zdotdir("ZDOTDIR=~/z", 11, &rel, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(
	    policy_zshenv_zdotdir("ZDOTDIR=/long/name", 18, &home, small, sizeof(small)),
	    -ENAMETOOLONG);
	ck_assert_str_eq(small, "");
	/* a value longer than the reader's own buffer */
	memcpy(big, "ZDOTDIR=/", 9);
	memset(big + 9, 'a', sizeof(big) - 9);
	ck_assert_int_eq(policy_zshenv_zdotdir(big, sizeof(big), &home, out, sizeof(out)),
			 -ENAMETOOLONG);
	/* the length is the caller's: a NUL in a value cannot be told */
	ck_assert_int_eq(policy_zshenv_zdotdir(nul, sizeof(nul) - 1, &home, out, sizeof(out)),
			 -EINVAL);
	ck_assert_int_eq(policy_zshenv_zdotdir(NULL, 0, &home, out, sizeof(out)), 0);
	ck_assert_int_eq(policy_zshenv_zdotdir("x", 1, &home, NULL, 0), -EINVAL);
}
END_TEST

static Suite *zshenv_suite(void)
{
	Suite *s = suite_create("zshenv");
	TCase *t = tcase_create("core");

	tcase_add_loop_test(t, table, 0, (int)(sizeof(rows) / sizeof(rows[0])));
	tcase_add_test(t, unset_and_bounds);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(zshenv_suite)
