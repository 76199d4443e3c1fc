/* macos/: the regex translation of protected patterns and paths (run through POSIX
 * regcomp as a stand-in for Seatbelt's engine, so matches are tested, not only the
 * text), path spellings (/private, the longest existing prefix), the per-run TMPDIR's
 * removal, the proxy-URL environment and the list of gaps. */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macos/macos_int.h"
#include "env/env.h"
#include "tests/unit/unit.h"

static bool ere_match(const char *re, const char *path)
{
	regex_t r;
	int rc;

	ck_assert_msg(regcomp(&r, re, REG_EXTENDED | REG_NOSUB) == 0, "bad regex %s", re);
	rc = regexec(&r, path, 0, NULL, 0);
	regfree(&r);
	return rc == 0;
}

/* ------------------------------------------------------------------ regexes */

static const struct {
	const char *glob;
	const char *regex;
	const char *yes[4];
	const char *no[4];
} glob_rows[] = {
    {".env*",
     "/\\.[Ee][Nn][Vv][^/]*(/.*)?$",
     {"/w/.env", "/w/.ENV", "/w/a/b/.env.local", "/w/.Env/inner"},
     {"/w/x.env", "/w/.xenv", "/w/envs/.xenv", "/w/env"}},
    {"*.pem",
     "/[^/]*\\.[Pp][Ee][Mm](/.*)?$",
     {"/w/key.pem", "/w/a/KEY.PEM", "/w/.pem", NULL},
     {"/w/key.pem.txt", "/w/keypem", NULL, NULL}},
    {"secrets/",
     "/[Ss][Ee][Cc][Rr][Ee][Tt][Ss](/.*)?$",
     {"/w/secrets", "/w/a/SECRETS/x", NULL, NULL},
     {"/w/secretsx", "/w/my-secrets", NULL, NULL}},
    {"config/**/token?.json",
     "/[Cc][Oo][Nn][Ff][Ii][Gg]/(.*/)?[Tt][Oo][Kk][Ee][Nn].\\.[Jj][Ss][Oo][Nn](/.*)?$",
     {"/w/config/token1.json", "/w/config/a/b/tokenX.json", NULL, NULL},
     {"/w/config/token.json", "/w/xconfig/token1.json", NULL, NULL}},
    {"[Kk]ey[0-9].txt",
     "/[KkkK][Ee][Yy][0-9]\\.[Tt][Xx][Tt](/.*)?$",
     {"/w/key1.txt", "/w/KEY9.TXT", NULL, NULL},
     {"/w/keyA.txt", "/w/key10.txt", NULL, NULL}},
    {"**/id_[a-z]*",
     "/[Ii][Dd]_[a-zA-Z][^/]*(/.*)?$",
     {"/w/id_rsa", "/w/.ssh/ID_ED25519", NULL, NULL},
     {"/w/id_1", "/w/xid_rsa", NULL, NULL}},
    {"we.ird+(name)",
     "/[Ww][Ee]\\.[Ii][Rr][Dd]\\+\\([Nn][Aa][Mm][Ee]\\)(/.*)?$",
     {"/w/we.ird+(name)", "/w/WE.IRD+(NAME)/x", NULL, NULL},
     {"/w/weXird+(name)", "/w/we.irdd(name)", NULL, NULL}},
};

START_TEST(glob_regexes)
{
	char re[1024];

	ck_assert_int_eq(macos_glob_regex(glob_rows[_i].glob, re, sizeof(re)), 0);
	ck_assert_str_eq(re, glob_rows[_i].regex);
	for (int k = 0; k < 4 && glob_rows[_i].yes[k]; k++)
		ck_assert_msg(ere_match(re, glob_rows[_i].yes[k]), "%s should match %s", re,
			      glob_rows[_i].yes[k]);
	for (int k = 0; k < 4 && glob_rows[_i].no[k]; k++)
		ck_assert_msg(!ere_match(re, glob_rows[_i].no[k]), "%s should not match %s", re,
			      glob_rows[_i].no[k]);
}
END_TEST

START_TEST(regex_refusals)
{
	char re[64];

	ck_assert_int_eq(macos_glob_regex("a\"b", re, sizeof(re)), -EINVAL);
	ck_assert_int_eq(macos_glob_regex("a\nb", re, sizeof(re)), -EINVAL);
	ck_assert_int_eq(macos_glob_regex("**/", re, sizeof(re)), -EINVAL);
	ck_assert_int_eq(macos_glob_regex("", re, sizeof(re)), -EINVAL);
	ck_assert_int_eq(macos_path_regex("relative", re, sizeof(re)), -EINVAL);
	ck_assert_int_eq(macos_path_regex("/a\"b", re, sizeof(re)), -EINVAL);
	ck_assert_int_eq(macos_path_regex("/a-very-long-path-that-does-not-fit", re, 16),
			 -ENAMETOOLONG);
}
END_TEST

START_TEST(path_regex_escapes_and_folds)
{
	char re[1024];

	ck_assert_int_eq(macos_path_regex("/Users/a.b/x+(y)|z$^{1}[2]\\", re, sizeof(re)), 0);
	ck_assert_str_eq(re, "^/[Uu][Ss][Ee][Rr][Ss]/[Aa]\\.[Bb]/[Xx]\\+\\([Yy]\\)\\|[Zz]\\$\\^"
			     "\\{1\\}\\[2\\]\\\\(/.*)?$");
	ck_assert(ere_match(re, "/users/A.B/X+(Y)|z$^{1}[2]\\"));
	ck_assert(ere_match(re, "/Users/a.b/x+(y)|z$^{1}[2]\\/inner"));
	ck_assert(!ere_match(re, "/Users/aXb/x+(y)|z$^{1}[2]\\"));
	ck_assert_int_eq(macos_path_regex("/Users/alice/.ssh", re, sizeof(re)), 0);
	ck_assert(ere_match(re, "/USERS/Alice/.SSH/id_rsa"));
	ck_assert(!ere_match(re, "/Users/alice/.sshx"));
	ck_assert(!ere_match(re, "/x/Users/alice/.ssh"));
}
END_TEST

/* ------------------------------------------------------------------ paths */

START_TEST(private_mapping)
{
	static const char *const rows[][2] = {
	    {"/tmp", "/private/tmp"},
	    {"/tmp/x", "/private/tmp/x"},
	    {"/var/folders/ab/T", "/private/var/folders/ab/T"},
	    {"/etc/halo", "/private/etc/halo"},
	    {"/tmpx", "/tmpx"},
	    {"/private/tmp/x", "/private/tmp/x"},
	    {"/Users/a/tmp", "/Users/a/tmp"},
	    {"/", "/"},
	};
	char out[256];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		ck_assert_int_eq(macos_path_private(rows[i][0], out, sizeof(out)), 0);
		ck_assert_str_eq(out, rows[i][1]);
	}
	ck_assert_int_eq(macos_path_private("/tmp/abcdef", out, 8), -ENAMETOOLONG);
}
END_TEST

START_TEST(resolve_longest_existing_prefix)
{
	char dir[] = "/tmp/halo-sbpl.XXXXXX", path[512], want[512], out[512], *real;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	real = realpath(dir, NULL);
	snprintf(path, sizeof(path), "%s/real", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/link", dir);
	ck_assert_int_eq(symlink("real", path), 0);
	snprintf(path, sizeof(path), "%s/link/missing/file", dir);
	snprintf(want, sizeof(want), "%s/real/missing/file", real);
	ck_assert_int_eq(macos_path_resolve(path, out, sizeof(out)), 0);
	ck_assert_str_eq(out, want);
	ck_assert_int_eq(macos_path_resolve("/nonexistent-halo/x", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/nonexistent-halo/x");
	ck_assert_int_eq(macos_path_resolve("/", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/");
	/* Both spellings, resolved and /private-mapped first. */
	char sp[2][PATH_MAX];
	ck_assert_int_eq(macos_spellings(NULL, path, sp), 2);
	ck_assert_str_eq(sp[1], path);
	snprintf(path, sizeof(path), "%s/link", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/real", dir);
	rmdir(path);
	rmdir(dir);
	free(real);
}
END_TEST

/* The per-run TMPDIR goes away, but a symlink in it is removed, never followed. */
START_TEST(tmpdir_removal_never_follows_links)
{
	char outside[] = "/tmp/halo-outside.XXXXXX", dir[PATH_MAX], path[PATH_MAX + 64];
	struct halo_err e = {{0}};
	struct stat st;

	ck_assert_ptr_nonnull(mkdtemp(outside));
	snprintf(path, sizeof(path), "%s/keep", outside);
	close(open(path, O_CREAT | O_WRONLY, 0600));
	ck_assert_int_eq(macos_tmpdir_make("/tmp", dir, sizeof(dir), &e), 0);
	ck_assert_int_eq(stat(dir, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	snprintf(path, sizeof(path), "%s/a", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/a/b", dir);
	ck_assert_int_eq(mkdir(path, 0500), 0);
	snprintf(path, sizeof(path), "%s/a/out", dir);
	ck_assert_int_eq(symlink(outside, path), 0);
	snprintf(path, sizeof(path), "%s/f", dir);
	close(open(path, O_CREAT | O_WRONLY, 0600));
	macos_tmpdir_remove(dir);
	ck_assert_int_eq(stat(dir, &st), -1);
	snprintf(path, sizeof(path), "%s/keep", outside);
	ck_assert_int_eq(stat(path, &st), 0);
	unlink(path);
	rmdir(outside);
}
END_TEST

/* ------------------------------------------------------------------ env, gaps */

START_TEST(env_proxy_url)
{
	static char *caller[] = {"PATH=/usr/bin", "HOME=/Users/alice", "GITHUB_TOKEN=x",
				 "HTTPS_PROXY=http://evil:1", NULL};
	const char *url = "http://halo:0123abcd@127.0.0.1:50123";
	struct halo_err e = {{0}};
	char **env = runner_env_build_proxy_url(NULL, caller, "/tmp/run", url, NULL, &e);
	static const char *const want[] = {
	    "HTTP_PROXY=http://halo:0123abcd@127.0.0.1:50123",
	    "HTTPS_PROXY=http://halo:0123abcd@127.0.0.1:50123",
	    "https_proxy=http://halo:0123abcd@127.0.0.1:50123",
	    "ALL_PROXY=http://halo:0123abcd@127.0.0.1:50123",
	    "all_proxy=http://halo:0123abcd@127.0.0.1:50123",
	    "npm_config_https_proxy=http://halo:0123abcd@127.0.0.1:50123",
	    "NO_PROXY=localhost,127.0.0.1,::1",
	    "JAVA_TOOL_OPTIONS=-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=50123 "
	    "-Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=50123 "
	    "-Dhttp.nonProxyHosts=localhost|127.0.0.1",
	    "TMPDIR=/tmp/run",
	    "HALO_SANDBOX=1",
	};
	size_t found = 0;

	ck_assert_ptr_nonnull(env);
	for (size_t i = 0; env[i]; i++) {
		ck_assert_msg(strncmp(env[i], "GITHUB_TOKEN", 12) != 0, "token passed");
		ck_assert_msg(!strstr(env[i], "evil"), "caller's proxy kept: %s", env[i]);
		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
			found += strcmp(env[i], want[k]) == 0;
	}
	ck_assert_uint_eq(found, sizeof(want) / sizeof(want[0]));
	runner_env_free(env);
	ck_assert_ptr_null(runner_env_build_proxy_url(NULL, caller, "/t", NULL, NULL, &e));
}
END_TEST

START_TEST(gaps_listed)
{
	static const char *const want[] = {
	    "not yet run on a real Mac",  "no seccomp", "no pid, ipc", "DNS and per-domain rules",
	    "sandbox-exec is deprecated", "no nesting"};
	const char *const *g = macos_gaps();
	size_t found = 0;

	for (size_t i = 0; g[i]; i++)
		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
			found += strstr(g[i], want[k]) != NULL;
	ck_assert_uint_eq(found, sizeof(want) / sizeof(want[0]));
}
END_TEST

static Suite *sbpl_paths_suite(void)
{
	Suite *s = suite_create("sbpl_paths");
	TCase *tc = tcase_create("paths");

	tcase_add_loop_test(tc, glob_regexes, 0, (int)(sizeof(glob_rows) / sizeof(glob_rows[0])));
	tcase_add_test(tc, regex_refusals);
	tcase_add_test(tc, path_regex_escapes_and_folds);
	tcase_add_test(tc, private_mapping);
	tcase_add_test(tc, resolve_longest_existing_prefix);
	tcase_add_test(tc, tmpdir_removal_never_follows_links);
	tcase_add_test(tc, env_proxy_url);
	tcase_add_test(tc, gaps_listed);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(sbpl_paths_suite)
