/* `halo-run proxy`'s parsers of outside input, as tables with hostile rows: listen
 * addresses (flags), LISTEN_FDS/LISTEN_PID/LISTEN_FDNAMES (the environment), the
 * client token (a file or a variable), and the client credentials the proxy reads
 * (Proxy-Authorization Basic, SOCKS5 greeting methods and RFC 1929). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "proxy/proxy_parse.h"
#include "runner/proxy_cmd.h"
#include "tests/unit/unit.h"

#define ROWS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ------------------------------------------------------------ listen addresses */

static const struct {
	const char *spec;
	int rc;
	const char *text; /* runner_listen_text when accepted */
	bool loopback, is_unix;
} listens[] = {
    {"127.0.0.1:3128", 0, "127.0.0.1:3128", true, false},
    {"127.9.8.7:1", 0, "127.9.8.7:1", true, false},
    {"3128", 0, "127.0.0.1:3128", true, false},
    {"0", 0, "127.0.0.1:0", true, false},
    {"localhost:8080", 0, "127.0.0.1:8080", true, false},
    {"[::1]:3128", 0, "[::1]:3128", true, false},
    {"[::ffff:127.0.0.1]:1", 0, "[::ffff:127.0.0.1]:1", true, false},
    {"0.0.0.0:3128", 0, "0.0.0.0:3128", false, false},
    {"[::]:3128", 0, "[::]:3128", false, false},
    {"10.0.0.1:3128", 0, "10.0.0.1:3128", false, false},
    {"[::ffff:10.0.0.1]:1", 0, "[::ffff:10.0.0.1]:1", false, false},
    {"unix:/run/halo/p.sock", 0, "unix:/run/halo/p.sock", false, true},
    {"", -EINVAL, NULL, false, false},
    {"unix:", -EINVAL, NULL, false, false},
    {"unix:rel/p.sock", -EINVAL, NULL, false, false},
    {"unix:/run/dir/", -EINVAL, NULL, false, false},
    {"unix:/"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaa",
     -EINVAL, NULL, false, false},
    {"127.0.0.1:65536", -EINVAL, NULL, false, false},
    {"127.0.0.1:-1", -EINVAL, NULL, false, false},
    {"127.0.0.1:+80", -EINVAL, NULL, false, false},
    {"127.0.0.1:080", -EINVAL, NULL, false, false},
    {"127.0.0.1:", -EINVAL, NULL, false, false},
    {"127.0.0.1:80 ", -EINVAL, NULL, false, false},
    {":80", -EINVAL, NULL, false, false},
    {"127.1:80", -EINVAL, NULL, false, false},	     /* short form */
    {"0177.0.0.1:80", -EINVAL, NULL, false, false},  /* octal */
    {"0x7f.0.0.1:80", -EINVAL, NULL, false, false},  /* hex */
    {"127.000.0.1:80", -EINVAL, NULL, false, false}, /* leading zeros */
    {"2130706433:80", -EINVAL, NULL, false, false},  /* decimal */
    {"::1:80", -EINVAL, NULL, false, false},	     /* v6 without brackets */
    {"[::1]", -EINVAL, NULL, false, false},
    {"[fe80::1%eth0]:80", -EINVAL, NULL, false, false}, /* zone */
    {"[]:80", -EINVAL, NULL, false, false},
    {"proxy.example:80", -EINVAL, NULL, false, false}, /* names are not resolved */
    {"99999", -EINVAL, NULL, false, false},
    {"http://127.0.0.1:80", -EINVAL, NULL, false, false},
};

START_TEST(listen_table)
{
	struct runner_listen_addr a;
	struct halo_err e = {{0}};
	char t[200];
	int rc = runner_listen_parse(listens[_i].spec, &a, &e);

	ck_assert_msg(rc == listens[_i].rc, "%s: rc %d", listens[_i].spec, rc);
	if (rc < 0) {
		ck_assert_msg(e.msg[0], "%s: no message", listens[_i].spec);
		return;
	}
	runner_listen_text(&a, t, sizeof(t));
	ck_assert_str_eq(t, listens[_i].text);
	ck_assert_int_eq(a.loopback, listens[_i].loopback);
	ck_assert_int_eq(a.is_unix, listens[_i].is_unix);
}
END_TEST

START_TEST(listen_null)
{
	struct runner_listen_addr a;
	struct halo_err e = {{0}};

	ck_assert_int_eq(runner_listen_parse(NULL, &a, &e), -EINVAL);
}
END_TEST

/* --------------------------------------------------------------- LISTEN_FDS */

static const struct {
	const char *pid, *fds;
	int rc, n;
} fds_rows[] = {
    {NULL, NULL, 0, 0},		/* not activated */
    {"4242", "2", 0, 2},	/* ours */
    {"4243", "2", 0, 0},	/* another process's */
    {"4242", "16", 0, 16},	/* the most */
    {"4242", "17", -EINVAL, 0}, /* too many */
    {"4242", "0", -EINVAL, 0},	{"4242", "-1", -EINVAL, 0},
    {"4242", "1x", -EINVAL, 0}, {"4242", "", -EINVAL, 0},
    {"4242", NULL, -EINVAL, 0}, {"4242", "99999999999999999999", -EINVAL, 0},
    {NULL, "1", -EINVAL, 0},	{"", "1", -EINVAL, 0},
    {"0", "1", -EINVAL, 0},	{" 4242", "1", -EINVAL, 0},
    {"4242 ", "1", -EINVAL, 0}, {"+4242", "1", -EINVAL, 0},
    {"x", "1", -EINVAL, 0},
};

START_TEST(listen_fds_table)
{
	struct halo_err e = {{0}};
	int n = -1;
	int rc = runner_listen_fds_parse(fds_rows[_i].pid, fds_rows[_i].fds, 4242, 16, &n, &e);

	ck_assert_msg(rc == fds_rows[_i].rc, "row %d: rc %d", _i, rc);
	ck_assert_int_eq(n, fds_rows[_i].n);
	if (rc < 0)
		ck_assert(e.msg[0]);
}
END_TEST

START_TEST(listen_fdnames)
{
	ck_assert(!runner_listen_fd_is_socks(NULL, 0));
	ck_assert(runner_listen_fd_is_socks("socks", 0));
	ck_assert(runner_listen_fd_is_socks("http:socks5", 1));
	ck_assert(!runner_listen_fd_is_socks("http:socks5", 0));
	ck_assert(!runner_listen_fd_is_socks("http:socks5", 2)); /* past the list */
	ck_assert(!runner_listen_fd_is_socks("socksy", 0));
	ck_assert(!runner_listen_fd_is_socks("sock", 0));
	ck_assert(!runner_listen_fd_is_socks("::socks", 1));
	ck_assert(runner_listen_fd_is_socks("::socks", 2));
	ck_assert(!runner_listen_fd_is_socks("", 0));
}
END_TEST

/* ------------------------------------------------------------------ the token */

static const struct {
	const char *raw;
	int rc;
	const char *want;
} tokens[] = {
    {"s3cret", 0, "s3cret"},	   {"s3cret\n", 0, "s3cret"},
    {"s3cret\r\n", 0, "s3cret"},   {"a:b", 0, "a:b"}, /* a colon is fine in the password part */
    {"", -EINVAL, NULL},	   {"\n", -EINVAL, NULL},
    {"s3cret\n\n", -EINVAL, NULL}, {"two words", -EINVAL, NULL},
    {"tab\there", -EINVAL, NULL},  {"caf\xc3\xa9", -EINVAL, NULL},
    {"del\x7f", -EINVAL, NULL},	   {" lead", -EINVAL, NULL},
};

START_TEST(token_table)
{
	char out[RUNNER_PROXY_TOKEN_MAX + 1];
	struct halo_err e = {{0}};
	const char *raw = tokens[_i].raw;
	int rc = runner_token_check(raw, strlen(raw), out, sizeof(out), &e);

	ck_assert_msg(rc == tokens[_i].rc, "row %d: rc %d", _i, rc);
	if (rc == 0)
		ck_assert_str_eq(out, tokens[_i].want);
	else
		ck_assert_msg(!strstr(e.msg, raw[0] ? raw : "\x01"),
			      "the message quotes the token");
}
END_TEST

START_TEST(token_lengths)
{
	char raw[RUNNER_PROXY_TOKEN_MAX + 2], out[RUNNER_PROXY_TOKEN_MAX + 1];
	struct halo_err e = {{0}};

	memset(raw, 'k', sizeof(raw));
	ck_assert_int_eq(runner_token_check(raw, RUNNER_PROXY_TOKEN_MAX, out, sizeof(out), &e), 0);
	ck_assert_int_eq(runner_token_check(raw, RUNNER_PROXY_TOKEN_MAX + 1, out, sizeof(out), &e),
			 -EINVAL);
	/* a NUL inside (a binary file) is not visible ASCII */
	raw[3] = '\0';
	ck_assert_int_eq(runner_token_check(raw, 8, out, sizeof(out), &e), -EINVAL);
}
END_TEST

/* ------------------------------------------------------- client credentials */

static const struct {
	const char *value;
	bool ok;
} basics[] = {
    {"Basic aGFsbzpzM2NyZXQ=", true},	  /* halo:s3cret */
    {"basic aGFsbzpzM2NyZXQ=", true},	  /* the scheme has no case */
    {"Basic  aGFsbzpzM2NyZXQ= ", true},	  /* spaces around the token68 */
    {"Basic OnMzY3JldA==", true},	  /* empty user */
    {"Basic aGFsbzpzM2NyZXQ", true},	  /* padding left out */
    {"Basic aGFsbzpzM2NyZXR4", false},	  /* halo:s3cretx */
    {"Basic aGFsbzpzM2NyZQ==", false},	  /* halo:s3cre */
    {"Basic aGFsbw==", false},		  /* no colon */
    {"Basic czNjcmV0", false},		  /* s3cret alone */
    {"Basic aGFsbzpzM2NyZXQ=x", false},	  /* data after padding */
    {"Basic aGFsbzpzM2NyZXQ===", false},  /* three pads */
    {"Basic aGFs bzpzM2NyZXQ=", false},	  /* inner space */
    {"Basic aGFsbzpzM2NyZXQ\x01", false}, /* control byte */
    {"Bearer s3cret", false},
    {"Basic", false},
    {"Basic ", false},
    {"", false},
    {"Digest username=x", false},
    {"Basic OnMzY3JldAA=", false}, /* ":s3cret\0": a NUL after */
};

START_TEST(basic_table)
{
	ck_assert_msg(proxy_auth_basic_ok(basics[_i].value, "s3cret") == basics[_i].ok, "%s",
		      basics[_i].value);
}
END_TEST

START_TEST(basic_long)
{
	char v[2048];

	memset(v, 'A', sizeof(v));
	memcpy(v, "Basic ", 6);
	v[sizeof(v) - 1] = '\0';
	ck_assert(!proxy_auth_basic_ok(v, "s3cret"));
	ck_assert(!proxy_auth_basic_ok(NULL, "s3cret"));
	ck_assert(!proxy_auth_basic_ok("Basic OnMzY3JldA==", NULL));
	ck_assert(!proxy_auth_basic_ok("Basic Og==", "")); /* an empty secret never matches */
}
END_TEST

START_TEST(secret_equal)
{
	ck_assert(proxy_secret_equal("abc", 3, "abc"));
	ck_assert(!proxy_secret_equal("abc", 2, "abc"));
	ck_assert(!proxy_secret_equal("abcd", 4, "abc"));
	ck_assert(!proxy_secret_equal("abd", 3, "abc"));
	ck_assert(!proxy_secret_equal("", 0, ""));
	ck_assert(!proxy_secret_equal("a\0c", 3, "abc"));
}
END_TEST

#define B(...)                                                                                     \
	(const uint8_t[])                                                                          \
	{                                                                                          \
		__VA_ARGS__                                                                        \
	}
#define BLEN(...) sizeof((const uint8_t[]){__VA_ARGS__})
#define IN(...)	  B(__VA_ARGS__), BLEN(__VA_ARGS__)

static const struct {
	const uint8_t *in;
	size_t len;
	int result;
	size_t used;
	const char *pass;
} userpass[] = {
    {IN(1, 1, 'u', 3, 'a', 'b', 'c'), PROXY_SOCKS_OK, 7, "abc"},
    {IN(1, 1, 'u', 3, 'a', 'b', 'c', 5, 1), PROXY_SOCKS_OK, 7, "abc"}, /* the request follows */
    {IN(1, 1, 'u', 3, 'a', 'b'), PROXY_SOCKS_NEED_MORE, 0, NULL},
    {IN(1, 1, 'u'), PROXY_SOCKS_NEED_MORE, 0, NULL},
    {IN(1), PROXY_SOCKS_NEED_MORE, 0, NULL},
    {NULL, 0, PROXY_SOCKS_NEED_MORE, 0, NULL},
    {IN(5, 1, 'u', 3, 'a', 'b', 'c'), PROXY_SOCKS_ERROR, 0, NULL}, /* wrong version */
    {IN(1, 0, 3, 'a', 'b', 'c'), PROXY_SOCKS_ERROR, 0, NULL},	   /* empty name */
    {IN(1, 1, 'u', 0), PROXY_SOCKS_ERROR, 0, NULL},		   /* empty password */
};

START_TEST(userpass_table)
{
	const uint8_t *pass = (const uint8_t *)"x";
	size_t used = 99, plen = 99;
	int r = proxy_socks_userpass(userpass[_i].in, userpass[_i].len, &used, &pass, &plen);

	ck_assert_int_eq(r, userpass[_i].result);
	ck_assert_uint_eq(used, userpass[_i].used);
	if (r == PROXY_SOCKS_OK) {
		ck_assert_uint_eq(plen, strlen(userpass[_i].pass));
		ck_assert(memcmp(pass, userpass[_i].pass, plen) == 0);
	} else {
		ck_assert(pass == NULL && plen == 0);
	}
}
END_TEST

START_TEST(userpass_max)
{
	uint8_t m[3 + 255 + 255];

	memset(m, 'x', sizeof(m));
	m[0] = 1;
	m[1] = 255;
	m[2 + 255] = 255;
	for (size_t n = 0; n < sizeof(m); n++) {
		const uint8_t *p;
		size_t used, plen;
		ck_assert_int_eq(proxy_socks_userpass(m, n, &used, &p, &plen),
				 PROXY_SOCKS_NEED_MORE);
	}
	{
		const uint8_t *p;
		size_t used, plen;
		ck_assert_int_eq(proxy_socks_userpass(m, sizeof(m), &used, &p, &plen),
				 PROXY_SOCKS_OK);
		ck_assert_uint_eq(used, sizeof(m));
		ck_assert_uint_eq(plen, 255);
	}
}
END_TEST

START_TEST(greeting_method)
{
	size_t used;

	ck_assert_int_eq(proxy_socks_greeting_method(IN(5, 1, 2), &used, 2), PROXY_SOCKS_OK);
	ck_assert_uint_eq(used, 3);
	ck_assert_int_eq(proxy_socks_greeting_method(IN(5, 1, 0), &used, 2), PROXY_SOCKS_ERROR);
	ck_assert_int_eq(proxy_socks_greeting_method(IN(5, 2, 0, 2), &used, 2), PROXY_SOCKS_OK);
	ck_assert_int_eq(proxy_socks_greeting_method(IN(5, 2, 0), &used, 2), PROXY_SOCKS_NEED_MORE);
	ck_assert_int_eq(proxy_socks_greeting_method(IN(5, 0), &used, 2), PROXY_SOCKS_ERROR);
	ck_assert_int_eq(proxy_socks_greeting_method(IN(4, 1, 2), &used, 2), PROXY_SOCKS_ERROR);
}
END_TEST

static Suite *proxy_cmd_suite(void)
{
	Suite *s = suite_create("proxy_cmd");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, listen_table, 0, ROWS(listens));
	tcase_add_test(tc, listen_null);
	tcase_add_loop_test(tc, listen_fds_table, 0, ROWS(fds_rows));
	tcase_add_test(tc, listen_fdnames);
	tcase_add_loop_test(tc, token_table, 0, ROWS(tokens));
	tcase_add_test(tc, token_lengths);
	tcase_add_loop_test(tc, basic_table, 0, ROWS(basics));
	tcase_add_test(tc, basic_long);
	tcase_add_test(tc, secret_equal);
	tcase_add_loop_test(tc, userpass_table, 0, ROWS(userpass));
	tcase_add_test(tc, userpass_max);
	tcase_add_test(tc, greeting_method);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(proxy_cmd_suite)
