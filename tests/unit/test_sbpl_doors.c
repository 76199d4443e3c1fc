/* macos/: the doors issue 33 closed in the Seatbelt profile. trustd and ocspd (they
 * fetch certificate URLs outside the sandbox, past the proxy) only with
 * sandbox.macos.allowTrustd and a proxy; the caller's own terminal by literal path and
 * every other /dev/ttys* denied; no sysmond; no AF_SYSTEM sockets. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macos/macos_int.h"
#include "tests/unit/unit.h"

#define HOME "/Users/alice"
#define WS   "/Users/alice/proj"
#define PORT 50123

static struct halo_policy *load(const char *yaml, struct policy_diags *d)
{
	struct policy_ctx ctx = {.pw_home = HOME, .env_home = HOME, .workspace = WS};
	struct halo_policy *p = NULL;

	if (policy_parse_buffer("test", yaml, strlen(yaml), 'y', &p, d) != 0 ||
	    policy_finalize(p, &ctx, d) != 0) {
		policy_free(p);
		return NULL;
	}
	return p;
}

static int no_resolve(const char *in, char *out, size_t n)
{
	return snprintf(out, n, "%s", in) < (int)n ? 0 : -ENAMETOOLONG;
}

static char *profile(const char *yaml, unsigned port, const char *const *ttys, size_t n_ttys)
{
	struct policy_diags d = {0};
	struct halo_policy *p = load(yaml, &d);
	struct macos_profile prof;
	struct halo_err e = {{0}};
	const char *keys[256];
	char why[512], *text;

	ck_assert_msg(p != NULL, "policy refused: %s", d.n_errors ? d.errors[0] : "?");
	struct macos_profile_in in = {.policy = p,
				      .workspace = WS,
				      .pw_home = HOME,
				      .tmpdir = "/tmp/halo-run.TEST",
				      .proxy_port = port,
				      .ttys = ttys,
				      .n_ttys = n_ttys,
				      .resolve = no_resolve};
	ck_assert_msg(macos_profile_build(&in, &prof, &e) == 0, "%s", e.msg);
	ck_assert_uint_lt(prof.n_params, 256);
	for (size_t i = 0; i < prof.n_params; i++)
		keys[i] = prof.params[i].key;
	ck_assert_msg(macos_sbpl_lint(prof.text, keys, prof.n_params, why, sizeof(why)) == 0, "%s",
		      why);
	/* parameters appended as "KEY=VALUE" lines, for the tests to look at */
	size_t len = strlen(prof.text) + 1;
	for (size_t i = 0; i < prof.n_params; i++)
		len += strlen(prof.params[i].key) + strlen(prof.params[i].value) + 8;
	text = malloc(len);
	strcpy(text, prof.text);
	for (size_t i = 0; i < prof.n_params; i++)
		sprintf(text + strlen(text), ";;P %s=%s\n", prof.params[i].key,
			prof.params[i].value);
	macos_profile_free(&prof);
	policy_free(p);
	policy_diags_free(&d);
	return text;
}

/* The text of every top-level "(allow" form. */
static char *allows(const char *text)
{
	char *out = calloc(1, strlen(text) + 1);
	size_t len = 0;

	for (const char *p = strstr(text, "\n(allow"); p; p = strstr(p + 1, "\n(allow")) {
		int depth = 0;
		const char *q = ++p;
		do {
			depth += *q == '(' ? 1 : *q == ')' ? -1 : 0;
			q++;
		} while (*q && depth > 0);
		memcpy(out + len, p, (size_t)(q - p));
		len += (size_t)(q - p);
		out[len++] = '\n';
	}
	return out;
}

START_TEST(trustd_only_on_request)
{
	static const char *const svc[] = {"com.apple.trustd\"", "com.apple.trustd.agent",
					  "com.apple.ocspd"};
	char *t = profile("sandbox: {mode: workspace-write}\n", PORT, NULL, 0);
	char *a = allows(t);

	for (size_t i = 0; i < 3; i++)
		ck_assert_msg(!strstr(a, svc[i]), "%s allowed by default", svc[i]);
	/* the proxy's port and configd stay */
	ck_assert_ptr_nonnull(strstr(a, "(remote ip \"localhost:50123\")"));
	ck_assert_ptr_nonnull(strstr(a, "com.apple.SystemConfiguration.configd"));
	free(a);
	free(t);

	t = profile("sandbox: {macos: {allowTrustd: true}}\n", PORT, NULL, 0);
	a = allows(t);
	for (size_t i = 0; i < 3; i++)
		ck_assert_msg(strstr(a, svc[i]), "%s missing with allowTrustd", svc[i]);
	ck_assert_ptr_nonnull(strstr(t, ";; sandbox.macos.allowTrustd:"));
	free(a);
	free(t);

	/* no proxy (no network): the opt-in does not open one */
	t = profile("sandbox: {macos: {allowTrustd: true}}\n", 0, NULL, 0);
	ck_assert_ptr_null(strstr(t, "trustd"));
	free(t);
}
END_TEST

START_TEST(allow_trustd_policy_key)
{
	struct policy_diags d = {0};
	struct halo_policy *p = load("sandbox: {macos: {allowTrustd: true}}\n", &d);
	bool warned = false;

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(p->macos_allow_trustd, 1);
	for (size_t i = 0; i < d.n_warnings; i++)
		warned |= strstr(d.warnings[i], "sandbox.macos.allowTrustd") &&
			  strstr(d.warnings[i], "egress path");
	ck_assert(warned);
	policy_free(p);
	policy_diags_free(&d);
	static const char *const bad[] = {
	    "sandbox: {macos: {allowTrustd: yes please}}\n",
	    "sandbox: {macos: {allowTrustD: true}}\n",
	    "sandbox: {macos: true}\n",
	    "sandbox: {mode: 'off', macos: {allowTrustd: true}}\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		d = (struct policy_diags){0};
		p = load(bad[i], &d);
		ck_assert_msg(p == NULL || d.n_errors > 0, "accepted: %s", bad[i]);
		ck_assert_msg(d.n_errors > 0 && strstr(d.errors[0], "macos"), "%s: %s", bad[i],
			      d.n_errors ? d.errors[0] : "no error");
		policy_free(p);
		policy_diags_free(&d);
	}
}
END_TEST

START_TEST(own_terminal_only)
{
	const char *const ttys[] = {"/dev/ttys004", "/dev/ttys011"};
	char *t = profile("sandbox: {mode: workspace-write}\n", PORT, ttys, 2);
	char *a = allows(t);
	const char *deny;

	ck_assert_ptr_nonnull(strstr(t, ";;P TTY_0=/dev/ttys004\n"));
	ck_assert_ptr_nonnull(strstr(t, ";;P TTY_1=/dev/ttys011\n"));
	ck_assert_ptr_nonnull(strstr(a, "(allow file-read* file-write-data file-ioctl\n  "
					"(require-all (vnode-type CHARACTER-DEVICE)\n    "
					"(require-any\n      (literal (param \"TTY_0\"))\n      "
					"(literal (param \"TTY_1\")))))"));
	/* the only pattern over terminals in an allow is the command's own ptys */
	for (const char *p = strstr(a, "ttys[0-9]"); p; p = strstr(p + 1, "ttys[0-9]"))
		ck_assert_msg(
		    strncmp(p, "ttys[0-9]+$\") (extension \"com.apple.sandbox.pty\")", 48) == 0,
		    "a terminal pattern without the pty extension: %.60s", p);
	/* every other terminal denied, after the broad read, the two named carved out */
	deny = strstr(t, "(deny file-read* file-write* file-ioctl (with message \"halo-run\")\n"
			 "  (require-all (regex #\"^/dev/ttys[0-9]+$\")\n"
			 "    (require-not (extension \"com.apple.sandbox.pty\"))\n"
			 "    (require-not (literal (param \"TTY_0\")))\n"
			 "    (require-not (literal (param \"TTY_1\")))))");
	ck_assert_ptr_nonnull(deny);
	ck_assert(strstr(t, "(allow file-read*)\n") < deny);
	free(a);
	free(t);

	/* no terminal (a pipe, CI): none named, all denied */
	t = profile("sandbox: {mode: workspace-write}\n", PORT, NULL, 0);
	ck_assert_ptr_null(strstr(t, "TTY_"));
	ck_assert_ptr_nonnull(strstr(t, "(require-not (extension \"com.apple.sandbox.pty\"))))"));
	free(t);
}
END_TEST

START_TEST(no_sysmond_no_af_system)
{
	static const char *const yaml[] = {
	    "sandbox: {mode: workspace-write}\n",
	    "sandbox: {mode: read-only}\n",
	    "egress: {default: allow}\n",
	    "sandbox: {macos: {allowTrustd: true}}\n",
	};
	for (size_t i = 0; i < sizeof(yaml) / sizeof(yaml[0]); i++)
		for (unsigned port = 0; port <= PORT; port += PORT) {
			char *t = profile(yaml[i], port, NULL, 0);
			ck_assert_msg(!strstr(t, "sysmond"), "%s", yaml[i]);
			ck_assert_msg(!strstr(t, "AF_SYSTEM"), "%s", yaml[i]);
			ck_assert_msg(!strstr(t, "system-socket"), "%s", yaml[i]);
			free(t);
		}
}
END_TEST

/* macos_caller_ttys: the terminal of stdin/stdout/stderr, once each; none for pipes. */
START_TEST(caller_ttys_resolved)
{
	struct macos_ttys t;
	int m = posix_openpt(O_RDWR | O_NOCTTY), s, saved[3];
	int pipefd[2];

	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0) {
		UNIT_SKIP("caller_ttys_resolved", "no pseudo-terminal available");
		return;
	}
	s = open(ptsname(m), O_RDWR | O_NOCTTY);
	ck_assert_int_ge(s, 0);
	ck_assert_int_eq(pipe(pipefd), 0);
	for (int fd = 0; fd < 3; fd++)
		saved[fd] = dup(fd);
	dup2(s, 0);
	dup2(s, 1);
	dup2(pipefd[1], 2);
	macos_caller_ttys(&t);
	for (int fd = 0; fd < 3; fd++)
		dup2(saved[fd], fd);
	ck_assert_uint_eq(t.n, 1);
	ck_assert_str_eq(t.v[0], ptsname(m));
	dup2(pipefd[0], 0);
	dup2(pipefd[1], 1);
	dup2(pipefd[1], 2);
	macos_caller_ttys(&t);
	for (int fd = 0; fd < 3; fd++)
		dup2(saved[fd], fd);
	ck_assert_uint_eq(t.n, 0);
}
END_TEST

/* Turning allowTrustd on in a later layer is a loosening, reported. */
START_TEST(allow_trustd_layering)
{
	struct policy_diags d = {0};
	struct halo_policy *base = NULL, *upper = NULL;
	const char *b = "sandbox: {mode: workspace-write}\n",
		   *u = "sandbox: {macos: {allowTrustd: true}}\n";
	bool loosened = false;

	ck_assert_int_eq(policy_parse_buffer("base", b, strlen(b), 'y', &base, &d), 0);
	ck_assert_int_eq(policy_parse_buffer("upper", u, strlen(u), 'y', &upper, &d), 0);
	ck_assert_int_eq(policy_layer(base, upper, "upper", &d), 0);
	ck_assert_int_eq(base->macos_allow_trustd, 1);
	for (size_t i = 0; i < d.n_warnings; i++)
		loosened |= strstr(d.warnings[i], "loosens sandbox.macos.allowTrustd") != NULL;
	ck_assert(loosened);
	policy_free(base);
	policy_free(upper);
	policy_diags_free(&d);
}
END_TEST

static Suite *doors_suite(void)
{
	Suite *s = suite_create("sbpl_doors");
	TCase *tc = tcase_create("doors");

	tcase_add_test(tc, trustd_only_on_request);
	tcase_add_test(tc, allow_trustd_policy_key);
	tcase_add_test(tc, own_terminal_only);
	tcase_add_test(tc, no_sysmond_no_af_system);
	tcase_add_test(tc, caller_ttys_resolved);
	tcase_add_test(tc, allow_trustd_layering);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(doors_suite)
