/* policy_zshenv_zdotdirs (reviews 16, 17): every $ZDOTDIR a zshenv file assigns, in the
 * spellings users write, each branch's; and hostile text (unterminated quotes, command
 * substitutions, other variables, relative values, deep nesting, a value past the
 * buffer, bytes past ASCII, NUL) is "cannot be told" (said) or nothing, never a wrong
 * directory. */
#include <errno.h>
#include <string.h>

#include "policy/policy.h"
#include "tests/unit/unit.h"

static const struct {
	const char *in;
	int rc;
	const char *want;
	bool unknown;
} rows[] = {
    {"ZDOTDIR=$HOME/.zsh\n", 1, "/h/.zsh", false},
    {"export ZDOTDIR=\"$HOME/.config/zsh\"", 1, "/h/.config/zsh", false},
    {"export ZDOTDIR=~/dots/zsh # mine\n", 1, "/h/dots/zsh", false},
    {"ZDOTDIR=${HOME}/z", 1, "/h/z", false},
    {"ZDOTDIR='/opt/zsh dir'", 1, "/opt/zsh dir", false},
    {"ZDOTDIR=\"$HOME\"/.zsh", 1, "/h/.zsh", false},
    {"ZDOTDIR=${XDG_CONFIG_HOME:-$HOME/.config}/zsh", 1, "/x/zsh", false},
    {"typeset -gx ZDOTDIR=/etc/zdot", 1, "/etc/zdot", false},
    {"[[ -d ~/.zsh ]] && export ZDOTDIR=~/.zsh", 1, "/h/.zsh", false},
    {"if true; then ZDOTDIR=/a; fi", 1, "/a", false},
    /* every branch's, each once (review 17: the last alone was taken) */
    {"ZDOTDIR=/a\nZDOTDIR=/b\nZDOTDIR=/a\n", 2, "/a:/b", false},
    {"if [[ -d ~/d ]]; then ZDOTDIR=~/d; else ZDOTDIR=~/old; fi", 2, "/h/d:/h/old", false},
    {"case $TERM in\n  xterm) ZDOTDIR=~/x ;;\n  *) ZDOTDIR=~/dots/zsh ;;\nesac", 2,
     "/h/x:/h/dots/zsh", false},
    /* $ZDOTDIR's value before the file */
    {"export ZDOTDIR=\"${ZDOTDIR:-$HOME/dotfiles/zsh}\"", 1, "/z0", false},
    {"ZDOTDIR=$ZDOTDIR/inner", 1, "/z0/inner", false},
    /* a '#' in quotes starts no comment */
    {"alias note='echo #'; export ZDOTDIR=~/dots/zsh", 1, "/h/dots/zsh", false},
    {"ZDOTDIR=/a; export ZDOTDIR", 1, "/a", false},
    /* review 18: the other ways to assign it, spaces or none */
    {": ${ZDOTDIR:=$HOME/dots/zsh}", 1, "/h/dots/zsh", false},
    {": \"${ZDOTDIR:=$HOME/q}\"", 1, "/h/q", false},
    {"${ZDOTDIR=/x}", 1, "/x", false},
    {"[[ -d /x ]]&&export ZDOTDIR=/y", 1, "/y", false},
    {"[[ -d /x ]]||ZDOTDIR=/y2", 1, "/y2", false},
    {"if [[ -d /x ]];then ZDOTDIR=/z; fi", 1, "/z", false},
    {"true;ZDOTDIR=/w", 1, "/w", false},
    /* review 19: $XDG_CONFIG_HOME as the file sets it too, lines joined by a
     * backslash, '#' and '}' within a word, a quote left open across lines */
    {"export XDG_CONFIG_HOME=$HOME/.xdg\nexport ZDOTDIR=${XDG_CONFIG_HOME:-$HOME/.config}/zsh", 2,
     "/x/zsh:/h/.xdg/zsh", false},
    {"XDG_CONFIG_HOME=$(xdg)\n", 0, "", true},
    {"export ZDOT\\\nDIR=$HOME/dots", 1, "/h/dots", false},
    {"ZDOTDIR=$HOME/dots#x", 1, "/h/dots#x", false},
    {"ZDOTDIR=$HOME/a}b", 1, "/h/a}b", false},
    {"x='multi\n#' ; export ZDOTDIR=$HOME/dots", 1, "/h/dots", false},
    {"x='multi\nZDOTDIR=/in-string'", 0, "", true},
    /* reads and the name alone are no assignment */
    {"echo $ZDOTDIR ${ZDOTDIR} ${ZDOTDIR:-/d} \"$ZDOTDIR\"", 0, "", false},
    {"export ZDOTDIR; typeset -x ZDOTDIR; unset ZDOTDIR", 0, "", false},
    {"MY_ZDOTDIR_X=1 ZDOTDIRS=2", 0, "", false},
    /* what is not understood is said */
    {"eval \"export ZDOTDIR=\\$HOME/dots/zsh\"", 0, "", true},
    {"eval 'export ZDOTDIR=$HOME/dots/zsh'", 0, "", true},
    {"source <(echo ZDOTDIR=/e)", 0, "", true},
    {"${ZDOTDIR:=$(pwd)}", 0, "", true},
    {"# ZDOTDIR=/commented\n", 0, "", false},
    {"echo ZDOTDIR=/not-one\n", 0, "", true}, /* not understood: said */
    {"echo \"ZDOTDIR=/quoted\"\n", 0, "", true},
    {"echo 'x' \"ZDOTDIR=/quoted\"\n", 0, "", true},
    {"MYZDOTDIR=/other\n", 0, "", false},
    {"", 0, "", false},
    {"ZDOTDIR\n", 0, "", true},
    /* what cannot be told: said */
    {"ZDOTDIR=$(dirname $0)", 0, "", true},
    {"ZDOTDIR=`pwd`", 0, "", true},
    {"ZDOTDIR=$OTHER/zsh", 0, "", true},
    {"ZDOTDIR=${0:a:h}", 0, "", true},
    {"ZDOTDIR=relative/zsh", 0, "", true},
    {"ZDOTDIR=\"$HOME/unterminated", 0, "", true},
    {"ZDOTDIR='/unterminated", 0, "", true},
    {"ZDOTDIR=${HOME", 0, "", true},
    {"ZDOTDIR=${HOME:+x}", 0, "", true},
    {"ZDOTDIR=/a/*", 0, "", true},
    {"ZDOTDIR=\\/a", 0, "", true},
    {"ZDOTDIR=", 0, "", true},
    {"ZDOTDIR=/a:/b", 0, "", true},
    {"ZDOTDIR=/good\nZDOTDIR=$(evil)\n", 1, "/good", true},
    {"ZDOTDIR=${HOME:-${HOME:-${HOME:-${HOME:-${HOME:-${HOME:-${HOME:-${HOME:-${HOME:-/x}}}}}}}}}",
     0, "", true}, /* deeper than 8 */
    {"ZDOTDIR=/caf\xc3\xa9", 1, "/caf\xc3\xa9", false},
};

START_TEST(table)
{
	const struct policy_zshenv_env env = {"/h", "/x", "/z0"};
	char out[256] = "junk";
	bool unknown = !rows[_i].unknown;
	int rc = policy_zshenv_zdotdirs(rows[_i].in, strlen(rows[_i].in), &env, out, sizeof(out),
					&unknown);

	ck_assert_msg(rc == rows[_i].rc, "%s: rc %d, want %d", rows[_i].in, rc, rows[_i].rc);
	ck_assert_str_eq(out, rows[_i].want);
	ck_assert_msg(unknown == rows[_i].unknown, "%s: unknown %d", rows[_i].in, unknown);
}
END_TEST

START_TEST(unset_and_bounds)
{
	const struct policy_zshenv_env none = {NULL, NULL, NULL}, home = {"/h", NULL, NULL};
	char out[256], small[8], big[600];
	const char nul[] = "ZDOTDIR=/a\0ZDOTDIR=/b";
	bool u;

	/* $HOME unset: cannot be told; $XDG_CONFIG_HOME and $ZDOTDIR unset: the default */
	ck_assert_int_eq(policy_zshenv_zdotdirs("ZDOTDIR=$HOME/z", 15, &none, out, sizeof(out), &u),
			 0);
	ck_assert(u);
	const char *d = "ZDOTDIR=${XDG_CONFIG_HOME:-$HOME/.config}/zsh";
	ck_assert_int_eq(policy_zshenv_zdotdirs(d, strlen(d), &home, out, sizeof(out), &u), 1);
	ck_assert_str_eq(out, "/h/.config/zsh");
	d = "ZDOTDIR=${ZDOTDIR:-~/z}";
	ck_assert_int_eq(policy_zshenv_zdotdirs(d, strlen(d), &home, out, sizeof(out), &u), 1);
	ck_assert_str_eq(out, "/h/z");
	/* a relative $HOME is no directory to name */
	const struct policy_zshenv_env rel = {"h", NULL, NULL};
	ck_assert_int_eq(policy_zshenv_zdotdirs("ZDOTDIR=~/z", 11, &rel, out, sizeof(out), &u), 0);
	ck_assert(u);
	ck_assert_int_eq(
	    policy_zshenv_zdotdirs("ZDOTDIR=/long/name", 18, &home, small, sizeof(small), &u),
	    -ENAMETOOLONG);
	ck_assert_str_eq(small, "");
	/* a value longer than the reader's own buffer */
	memcpy(big, "ZDOTDIR=/", 9);
	memset(big + 9, 'a', sizeof(big) - 9);
	ck_assert_int_eq(policy_zshenv_zdotdirs(big, sizeof(big), &home, out, sizeof(out), &u),
			 -ENAMETOOLONG);
	/* the length is the caller's: a NUL in a value cannot be told */
	ck_assert_int_eq(policy_zshenv_zdotdirs(nul, sizeof(nul) - 1, &home, out, sizeof(out), &u),
			 0);
	ck_assert(u);
	ck_assert_int_eq(policy_zshenv_zdotdirs(NULL, 0, &home, out, sizeof(out), &u), 0);
	ck_assert_int_eq(policy_zshenv_zdotdirs("x", 1, &home, NULL, 0, &u), -EINVAL);
}
END_TEST

/* Nesting is bounded (review 17: 29,000 levels of ${HOME:-...} overflowed the stack). */
START_TEST(deep_nesting)
{
	enum { N = 100000 };
	static char text[16 + 9 * N + 3 + N];
	const struct policy_zshenv_env home = {"/h", NULL, NULL};
	char out[256];
	bool u = false;
	size_t o = 0;

	memcpy(text, "ZDOTDIR=", 8), o = 8;
	for (int i = 0; i < N; i++)
		memcpy(text + o, "${HOME:-", 8), o += 8;
	memcpy(text + o, "/x", 2), o += 2;
	memset(text + o, '}', N), o += N;
	ck_assert_int_eq(policy_zshenv_zdotdirs(text, o, &home, out, sizeof(out), &u), 0);
	ck_assert(u);
}
END_TEST

static Suite *zshenv_suite(void)
{
	Suite *s = suite_create("zshenv");
	TCase *t = tcase_create("core");

	tcase_add_loop_test(t, table, 0, (int)(sizeof(rows) / sizeof(rows[0])));
	tcase_add_test(t, unset_and_bounds);
	tcase_add_test(t, deep_nesting);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(zshenv_suite)
