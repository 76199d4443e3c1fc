/* Harness posture: the strict TOML subset reader for Codex's sandbox_mode, the Gemini
 * and Cursor JSON checks, and the file-reading rules (FIFO, size, symlink), with the
 * rule that no message ever quotes a file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trust/trust.h"
#include "tests/unit/unit.h"

#define SECRET "s3cr3t-h12-planted"

struct hits {
	unsigned n;
	unsigned line[8];
	bool profile[8];
};

static void on_hit(void *arg, unsigned line, bool in_profile)
{
	struct hits *h = arg;

	if (h->n < 8) {
		h->line[h->n] = line;
		h->profile[h->n] = in_profile;
	}
	h->n++;
}

/* Each row: a document, how many hits, the first hit's line and kind (t = top level,
 * p = profile, - = none), or an error whose message must be exactly `err`. */
static const struct {
	const char *doc;
	unsigned hits;
	unsigned line;
	char kind;
	const char *err;
} toml_rows[] = {
    {"sandbox_mode = \"danger-full-access\"\n", 1, 1, 't', NULL},
    {"sandbox_mode='danger-full-access'", 1, 1, 't', NULL},
    {"\"sandbox_mode\" = \"danger-full-access\" # yolo\n", 1, 1, 't', NULL},
    {"'sandbox_mode' = \"danger-full-access\"\r\n", 1, 1, 't', NULL},
    {"\xef\xbb\xbfsandbox_mode = \"danger-full-access\"", 1, 1, 't', NULL},
    {"model = \"o4\"\n\nsandbox_mode = \"danger\\u002dfull-access\"\n", 1, 3, 't', NULL},
    {"sandbox_mode = \"danger\\x2dfull-access\"\n", 1, 1, 't', NULL},
    {"sandbox_mode = \"\"\"danger-full-access\"\"\"\n", 1, 1, 't', NULL},
    {"sandbox_mode = '''\ndanger-full-access'''\n", 1, 1, 't', NULL},
    {"[profiles.yolo]\nsandbox_mode = \"danger-full-access\"\n", 1, 2, 'p', NULL},
    {"[ profiles . \"my profile\" ]\nmodel = 1\nsandbox_mode = \"danger-full-access\"", 1, 3, 'p',
     NULL},
    {"[profiles]\nci.sandbox_mode = \"danger-full-access\"\n", 1, 2, 'p', NULL},
    {"profiles.ci.sandbox_mode = \"danger-full-access\"\n", 1, 1, 'p', NULL},
    {"profiles = { ci = { sandbox_mode = \"danger-full-access\" } }\n", 1, 1, 'p', NULL},
    {"profiles = {\n  ci = {\n    sandbox_mode = \"danger-full-access\",\n  },\n}\n", 1, 3, 'p',
     NULL},
    {"[[profiles.x]]\nsandbox_mode = \"danger-full-access\"\n", 1, 2, 'p', NULL},
    {"sandbox_mode = \"danger-full-access\"\n[profiles.a]\nsandbox_mode = "
     "\"danger-full-access\"\n",
     2, 1, 't', NULL},
    /* not a hit */
    {"sandbox_mode = \"workspace-write\"\n", 0, 0, '-', NULL},
    {"sandbox_mode = \"Danger-Full-Access\"\n", 0, 0, '-', NULL},
    {"sandbox_mode = \"danger-full-access \"\n", 0, 0, '-', NULL},
    {"# sandbox_mode = \"danger-full-access\"\n", 0, 0, '-', NULL},
    {"[other]\nsandbox_mode = \"danger-full-access\"\n", 0, 0, '-', NULL},
    {"[profiles.x.sub]\nsandbox_mode = \"danger-full-access\"\n", 0, 0, '-', NULL},
    {"[profiles]\nsandbox_mode = \"danger-full-access\"\n", 0, 0, '-', NULL},
    {"notes = \"\"\"\nsandbox_mode = \"danger-full-access\"\n\"\"\"\n", 0, 0, '-', NULL},
    {"notes = '''\nsandbox_mode = \"danger-full-access\"'''\n", 0, 0, '-', NULL},
    {"args = [\n  \"sandbox_mode = danger-full-access\", # c\n  1,\n]\n", 0, 0, '-', NULL},
    {"list = [{ sandbox_mode = \"danger-full-access\" }]\n", 0, 0, '-', NULL},
    {"x = { sandbox_mode = \"danger-full-access\" }\n", 0, 0, '-', NULL},
    {"sandbox_mode = [\"danger-full-access\"]\n", 0, 0, '-', NULL},
    {"t = 1979-05-27 07:32:00Z\nn = -1_000\nf = +inf\nb = true\n", 0, 0, '-', NULL},
    {"[mcp_servers.x]\ncommand = \"npx\"\nargs = [\"-y\", \"pkg\"]\nenv = { \"A\" = \"B\" }\n", 0,
     0, '-', NULL},
    {"s = \"a\\\"b\" # \"sandbox_mode\"\n", 0, 0, '-', NULL},
    {"s = \"\"\"one \\\n   two\"\"\"\nsandbox_mode = \"danger-full-access\"\n", 1, 3, 't', NULL},
    /* the scan reads what import refuses: duplicate keys, \e, a table twice */
    {"a = 1\na = 2\nsandbox_mode = \"danger-full-access\"\n", 1, 3, 't', NULL},
    {"s = \"\\e\"\n[t]\n[t]\n[profiles.p]\nsandbox_mode = 'danger-full-access'\n", 1, 5, 'p', NULL},
    /* errors: the line, never the content */
    {"# c\r" SECRET "\n", 0, 0, '-', "line 1: control character in a comment"},
    {"sandbox_mode = \"" SECRET "\n", 0, 0, '-', "line 1: unterminated string"},
    {"ok = 1\n" SECRET "\n", 0, 0, '-', "line 2: expected '=' after a key"},
    {"x = " SECRET "\n", 0, 0, '-', "line 1: a value is missing or not understood"},
    {"x = 1 " SECRET "\n", 0, 0, '-', "line 1: unexpected text after a value"},
    {"[profiles.x\n", 0, 0, '-', "line 1: a table header is not closed"},
    {"s = \"\\q" SECRET "\"\n", 0, 0, '-', "line 1: bad escape in a string"},
    {"s = \"\\uD800\"\n", 0, 0, '-', "line 1: escape names no Unicode scalar value"},
    {"s = \"\"\"" SECRET "\n\n", 0, 0, '-', "line 3: unterminated multi-line string"},
    {"a = [1, 2\n", 0, 0, '-', "line 2: expected ',' or ']' in an array"},
    {"a = [1 2]\n", 0, 0, '-', "line 1: expected ',' or ']' in an array"},
    {"a = { b = 1 c = 2 }\n", 0, 0, '-', "line 1: expected ',' or '}' in an inline table"},
    {"a = 1\r" SECRET "\n", 0, 0, '-', "line 1: unexpected text after a value"},
    {"# \x01" SECRET "\n", 0, 0, '-', "line 1: control character in a comment"},
    {"= 1\n", 0, 0, '-', "line 1: a key is missing or not understood"},
};

START_TEST(test_codex_toml)
{
	for (size_t i = 0; i < sizeof(toml_rows) / sizeof(toml_rows[0]); i++) {
		struct hits h = {0};
		char why[256] = "";
		int rc = posture_codex_scan(toml_rows[i].doc, strlen(toml_rows[i].doc), on_hit, &h,
					    why, sizeof(why));

		if (toml_rows[i].err) {
			ck_assert_msg(rc == -EINVAL, "row %zu: want an error", i);
			ck_assert_msg(strcmp(why, toml_rows[i].err) == 0, "row %zu: why [%s]", i,
				      why);
			ck_assert_msg(!strstr(why, SECRET), "row %zu echoes content", i);
			continue;
		}
		ck_assert_msg(rc == 0, "row %zu: rc %d why [%s]", i, rc, why);
		ck_assert_msg(h.n == toml_rows[i].hits, "row %zu: %u hits", i, h.n);
		if (h.n) {
			ck_assert_msg(h.line[0] == toml_rows[i].line, "row %zu: line %u", i,
				      h.line[0]);
			ck_assert_msg(h.profile[0] == (toml_rows[i].kind == 'p'), "row %zu: kind",
				      i);
		}
	}
}
END_TEST

START_TEST(test_codex_nesting_bound)
{
	char doc[256];
	struct hits h = {0};
	char why[128];
	size_t n = 0;

	n += (size_t)snprintf(doc + n, sizeof(doc) - n, "a = ");
	for (int i = 0; i < 40; i++)
		doc[n++] = '[';
	doc[n] = '\0';
	ck_assert_int_eq(posture_codex_scan(doc, n, on_hit, &h, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "line 1: arrays or inline tables nested too deeply");
	/* A NUL in the middle is a control character, not the end of the file. */
	ck_assert_int_eq(posture_codex_scan("a = 1\n\0b", 9, on_hit, &h, why, sizeof(why)),
			 -EINVAL);
	ck_assert_str_eq(why, "line 2: a key is missing or not understood");
}
END_TEST

static const struct {
	const char *doc;
	unsigned bits;
	const char *err;
} gemini_rows[] = {
    {"{\"tools\": {\"sandbox\": false}}", POSTURE_GEMINI_TOOLS_SANDBOX_OFF, NULL},
    {"// mine\n{\"tools\": /* x */ {\"sandbox\": false, \"a\": \"// not a comment\"}}",
     POSTURE_GEMINI_TOOLS_SANDBOX_OFF, NULL},
    {"{\"sandbox\": false}", POSTURE_GEMINI_LEGACY_SANDBOX_OFF, NULL},
    {"{\"tools\": {\"sandbox\": \"docker\"}}", 0, NULL},
    {"{\"tools\": {\"sandbox\": true}}", 0, NULL},
    {"{\"tools\": {\"sandbox\": 0}}", 0, NULL},
    {"{\"tools\": {\"sandbox\": {\"command\": \"docker\"}}}", 0, NULL},
    {"{\"tools\": false}", 0, NULL},
    {"{\"Tools\": {\"sandbox\": false}}", 0, NULL},
    {"{\n\"a\": \"" SECRET "\",\n" SECRET "\n}", 0, "line 3: not valid JSON"},
    {"{\"a\": 1} /* " SECRET, 0, "line 1: unterminated comment"},
};

START_TEST(test_gemini)
{
	for (size_t i = 0; i < sizeof(gemini_rows) / sizeof(gemini_rows[0]); i++) {
		unsigned bits = 99;
		char why[256] = "";
		int rc = posture_gemini_scan(gemini_rows[i].doc, strlen(gemini_rows[i].doc), &bits,
					     why, sizeof(why));
		if (gemini_rows[i].err) {
			ck_assert_msg(rc == -EINVAL, "row %zu", i);
			ck_assert_msg(strcmp(why, gemini_rows[i].err) == 0, "row %zu: [%s]", i,
				      why);
			continue;
		}
		ck_assert_msg(rc == 0, "row %zu: %s", i, why);
		ck_assert_msg(bits == gemini_rows[i].bits, "row %zu: bits %u", i, bits);
	}
}
END_TEST

START_TEST(test_cursor)
{
	bool off = false;
	char why[128];

	ck_assert_int_eq(posture_cursor_scan("{\"type\":\"insecure_none\"}", 24, &off, why, 128),
			 0);
	ck_assert(off);
	ck_assert_int_eq(
	    posture_cursor_scan("{\"type\":\"workspace_readwrite\"}", 30, &off, why, 128), 0);
	ck_assert(!off);
	ck_assert_int_eq(posture_cursor_scan("{\"type\":[\"insecure_none\"]}", 26, &off, why, 128),
			 0);
	ck_assert(!off);
	ck_assert_int_eq(posture_cursor_scan("[" SECRET, strlen(SECRET) + 1, &off, why, 128),
			 -EINVAL);
	ck_assert_str_eq(why, "line 1: not valid JSON");
}
END_TEST

/* ---------------------------------------------------------------- files */

static char dir[64];

static void mkdir_home(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_posture.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void write_file(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void rm_rf(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_read_rules)
{
	char path[256], why[128], *buf;
	size_t len;
	FILE *f;

	mkdir_home();
	snprintf(path, sizeof(path), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	/* Would block forever without O_NONBLOCK: refused before any read. */
	ck_assert_int_eq(posture_read(path, &buf, &len, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "is not a regular file: not read");

	write_file("secret", SECRET "\n");
	snprintf(path, sizeof(path), "%s/link", dir);
	ck_assert_int_eq(symlink("secret", path), 0);
	ck_assert_int_eq(posture_read(path, &buf, &len, why, sizeof(why)), -ELOOP);
	ck_assert_str_eq(why, "is a symbolic link: not followed, not read");

	snprintf(path, sizeof(path), "%s/big", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(ftruncate(fileno(f), 2 * 1024 * 1024), 0);
	fclose(f);
	ck_assert_int_eq(posture_read(path, &buf, &len, why, sizeof(why)), -EFBIG);
	ck_assert_str_eq(why, "is larger than 1 MiB: not read");

	snprintf(path, sizeof(path), "%s/none", dir);
	ck_assert_int_eq(posture_read(path, &buf, &len, why, sizeof(why)), -ENOENT);

	snprintf(path, sizeof(path), "%s/secret", dir);
	ck_assert_int_eq(posture_read(path, &buf, &len, why, sizeof(why)), 0);
	ck_assert_uint_eq(len, strlen(SECRET) + 1);
	ck_assert_str_eq(buf, SECRET "\n");
	free(buf);
	rm_rf();
}
END_TEST

static char emitted[8192];
static const char *env_codex_home, *env_gemini, *env_opencode;

static void collect(void *arg, const char *harness, const char *problem, const char *fix)
{
	size_t n = strlen(emitted);

	(void)arg;
	snprintf(emitted + n, sizeof(emitted) - n, "posture:%s: %s; fix: %s\n", harness, problem,
		 fix);
}

static const char *fake_getenv(const char *name)
{
	if (strcmp(name, "CODEX_HOME") == 0)
		return env_codex_home;
	if (strcmp(name, "GEMINI_SANDBOX") == 0)
		return env_gemini;
	if (strcmp(name, "OPENCODE_PERMISSION") == 0)
		return env_opencode;
	return NULL;
}

START_TEST(test_check_home)
{
	char path[256], alt[256];
	size_t n;

	mkdir_home();
	emitted[0] = '\0';
	env_codex_home = env_gemini = env_opencode = NULL;
	ck_assert_uint_eq(posture_check(dir, NULL, fake_getenv, collect, NULL), 0);
	ck_assert_str_eq(emitted, "");

	snprintf(path, sizeof(path), "%s/.codex", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/.gemini", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/.cursor", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	write_file(".codex/config.toml", "[profiles.ci]\n# " SECRET "\nsandbox_mode = "
					 "\"danger-full-access\"\n");
	write_file(".gemini/settings.json", "{\"tools\":{\"sandbox\":false},\"k\":\"" SECRET "\"}");
	write_file(".cursor/sandbox.json", "{\"type\":\"insecure_none\", \"x\": \"" SECRET "\"}");
	env_gemini = "False";
	env_opencode = "{\"bash\":\"allow\",\"s\":\"" SECRET "\"}";
	n = posture_check(dir, NULL, fake_getenv, collect, NULL);
	ck_assert_uint_eq(n, 5);
	ck_assert_ptr_null(strstr(emitted, SECRET));
	ck_assert_ptr_nonnull(strstr(emitted,
				     "posture:codex: sandbox_mode = \"danger-full-access\" "
				     "in a [profiles.NAME] table of ~/.codex/config.toml "
				     "(line 3)"));
	ck_assert_ptr_nonnull(strstr(emitted, "posture:gemini: GEMINI_SANDBOX is false"));
	ck_assert_ptr_nonnull(strstr(emitted, "posture:gemini: \"tools\": {\"sandbox\": false} in "
					      "~/.gemini/settings.json"));
	ck_assert_ptr_nonnull(strstr(emitted, "posture:cursor: \"type\": \"insecure_none\" in "
					      "~/.cursor/sandbox.json"));
	ck_assert_ptr_nonnull(strstr(emitted, "posture:opencode: OPENCODE_PERMISSION is set in the "
					      "environment (content not shown)"));

	/* CODEX_HOME elsewhere: that config.toml is the one read; a symlink there to a
	 * secret is refused unread. */
	snprintf(alt, sizeof(alt), "%s/alt", dir);
	ck_assert_int_eq(mkdir(alt, 0700), 0);
	snprintf(path, sizeof(path), "%s/alt/config.toml", dir);
	ck_assert_int_eq(symlink("../.gemini/settings.json", path), 0);
	env_codex_home = alt;
	env_gemini = env_opencode = NULL;
	emitted[0] = '\0';
	n = posture_check(dir, NULL, fake_getenv, collect, NULL);
	ck_assert_uint_eq(n, 4);
	ck_assert_ptr_null(strstr(emitted, SECRET));
	ck_assert_ptr_nonnull(strstr(emitted, "posture:codex: CODEX_HOME is set to"));
	ck_assert_ptr_nonnull(strstr(emitted,
				     "posture:codex: $CODEX_HOME/config.toml is a symbolic "
				     "link: not followed, not read"));
	ck_assert_ptr_null(strstr(emitted, "[profiles.NAME]"));
	rm_rf();
}
END_TEST

static Suite *posture_suite(void)
{
	Suite *s = suite_create("posture");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_codex_toml);
	tcase_add_test(tc, test_codex_nesting_bound);
	tcase_add_test(tc, test_gemini);
	tcase_add_test(tc, test_cursor);
	tcase_add_test(tc, test_read_rules);
	tcase_add_test(tc, test_check_home);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(posture_suite)
