/* macos/: the Seatbelt profile generator and its structural lint (regexes, paths,
 * TMPDIR and the environment: test_sbpl_paths.c). Golden profiles live in tests/data/sbpl/
 * (HALO_UPDATE_GOLDEN=1 rewrites them after a deliberate change: review the diff).
 * The regexes are also run through POSIX regcomp as a stand-in for Seatbelt's engine,
 * so "matches .ENV, not x.env" is tested, not only the text. */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macos/macos_int.h"
#include "tests/unit/unit.h"
#if defined(__linux__) && !defined(HALO_PORTABLE)
#include "linux/scan_int.h"
#endif

#define GOLDEN_DIR "tests/data/sbpl/"
#define HOME	   "/Users/alice"
#define WS	   "/Users/alice/proj"
#define PORT	   50123

static struct halo_policy *load(const char *yaml)
{
	struct policy_ctx ctx = {.pw_home = HOME, .env_home = HOME, .workspace = WS};
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	if (policy_parse_buffer("test", yaml, strlen(yaml), 'y', &p, &d) != 0 ||
	    policy_finalize(p, &ctx, &d) != 0) {
		for (size_t i = 0; i < d.n_errors; i++)
			fprintf(stderr, "policy: %s\n", d.errors[i]);
		ck_abort_msg("test policy refused");
	}
	policy_diags_free(&d);
	return p;
}

/* Stable output on any machine: nothing is resolved, only /tmp-style mapping. */
static int no_resolve(const char *in, char *out, size_t n)
{
	return snprintf(out, n, "%s", in) < (int)n ? 0 : -ENAMETOOLONG;
}

static const char *const policy_files[] = {"/etc/halo/policy.yaml"};

static int build_tty(const struct halo_policy *p, unsigned port, const char *tty,
		     struct macos_profile *prof, struct halo_err *e)
{
	const char *const ttys[] = {tty};
	struct macos_profile_in in = {
	    .ttys = ttys,
	    .n_ttys = tty ? 1 : 0,
	    .policy = p,
	    .workspace = WS,
	    .pw_home = HOME,
	    .tmpdir = "/tmp/halo-run.TEST",
	    .proxy_port = port,
	    .self_exe = "/usr/local/bin/halo-run",
	    .policy_files = policy_files,
	    .n_policy_files = 1,
	    .resolve = no_resolve,
	};
	return macos_profile_build(&in, prof, e);
}

static int build(const struct halo_policy *p, unsigned port, struct macos_profile *prof,
		 struct halo_err *e)
{
	return build_tty(p, port, NULL, prof, e);
}

static int lint(const struct macos_profile *prof, char *why, size_t n)
{
	const char *keys[256];

	ck_assert_uint_lt(prof->n_params, 256);
	for (size_t i = 0; i < prof->n_params; i++)
		keys[i] = prof->params[i].key;
	return macos_sbpl_lint(prof->text, keys, prof->n_params, why, n);
}

/* ------------------------------------------------------------------ golden */

static const struct {
	const char *name;
	const char *yaml;
	unsigned port;
	const char *tty; /* the caller's terminal, or NULL */
} goldens[] = {
    {"default", NULL, PORT, NULL}, /* the embedded default policy */
    {"roots",
     "sandbox:\n"
     "  mode: workspace-write\n"
     "  writableRoots: [/opt/cache, /tmp/build]\n"
     "  protectedPaths: [~/.ssh, /Users/alice/proj/keys/deep/id,\n"
     "                   \"*.pem\", \"secrets/\", \"config/**/token?.json\", \"[Kk]ey[0-9].txt\"]\n"
     "  guardPersistence: false\n"
     "egress:\n"
     "  allowedDomains: [example.com]\n",
     PORT, NULL},
    {"readonly",
     "sandbox:\n"
     "  mode: read-only\n"
     "  protectedPaths: [~/.aws]\n",
     0, NULL},
    {"carve", /* sandbox.allowRead: reads of the carve-out left out of the deny */
     "sandbox:\n"
     "  protectedPaths: [~/.aws]\n"
     "  allowRead: [~/.aws/config, ~/.ssh/known_hosts]\n",
     PORT, NULL},
    {"escaping",
     "sandbox:\n"
     "  protectedPaths: [\"/Users/alice/proj/a.b+c(d){e}^$|y\", \"/Users/alice/x y\",\n"
     "                   \"we.ird+(name)\"]\n",
     PORT, NULL},
    {"doors", /* issue 33: the caller's terminal by name; trustd only on request */
     "sandbox:\n"
     "  macos: {allowTrustd: true}\n",
     PORT, "/dev/ttys004"},
};

static char *file_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = '\0';
	fclose(f);
	return buf;
}

static char *render(const struct macos_profile *prof)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	macos_profile_write(prof, NULL, f);
	fclose(f);
	return text;
}

static struct halo_policy *golden_policy(int i)
{
	if (goldens[i].yaml)
		return load(goldens[i].yaml);
	struct halo_policy *p = NULL;
	ck_assert_int_eq(policy_load(NULL, 0,
				     &(struct policy_ctx){.pw_home = HOME, .workspace = WS}, &p,
				     &(struct policy_diags){0}),
			 0);
	return p;
}

START_TEST(host_ports_allowed_directly)
{
	struct halo_policy *p = load("egress: {default: deny, hostPorts: [4873, 5432]}\n");
	struct macos_profile prof;
	struct halo_err e = {{0}};
	char why[512];

	ck_assert_msg(build(p, PORT, &prof, &e) == 0, "%s", e.msg);
	ck_assert_msg(lint(&prof, why, sizeof(why)) == 0, "%s", why);
	ck_assert_ptr_nonnull(strstr(prof.text, "(allow network-outbound (remote ip "
						"\"localhost:4873\"))\n(allow network-outbound "
						"(remote ip \"localhost:5432\"))\n"));
	macos_profile_free(&prof);
	/* no proxy for the run (mode off cannot list ports): no network at all */
	ck_assert_msg(build(p, 0, &prof, &e) == 0, "%s", e.msg);
	ck_assert_ptr_null(strstr(prof.text, "localhost:4873"));
	macos_profile_free(&prof);
	policy_free(p);
}
END_TEST

START_TEST(unix_sockets_allowed_last)
{
	struct halo_policy *p = load("sandbox: {unixSockets: [~/.ssh/agent.sock]}\n");
	struct macos_profile prof;
	struct halo_err e = {{0}};
	char why[512];
	const char *allow, *deny;

	ck_assert_msg(build(p, PORT, &prof, &e) == 0, "%s", e.msg);
	ck_assert_msg(lint(&prof, why, sizeof(why)) == 0, "%s", why);
	allow = strstr(prof.text, "(allow network-outbound\n  (remote unix-socket (path-literal "
				  "(param \"UNIX_SOCKET");
	ck_assert_ptr_nonnull(allow);
	/* carved out of the runtime denies (which come later and would win) */
	deny = strstr(prof.text, "(deny network-outbound");
	ck_assert(deny && allow < deny);
	ck_assert_ptr_nonnull(strstr(deny, "(require-all\n  (require-not (remote unix-socket "
					   "(path-literal (param \"UNIX_SOCKET"));
	macos_profile_free(&prof);
	policy_free(p);
	/* none named: no unix socket rule at all */
	p = load("sandbox: {mode: workspace-write}\n");
	ck_assert_msg(build(p, PORT, &prof, &e) == 0, "%s", e.msg);
	ck_assert_ptr_null(strstr(prof.text, "sandbox.unixSockets"));
	macos_profile_free(&prof);
	policy_free(p);
}
END_TEST

START_TEST(golden_profiles)
{
	struct halo_policy *p = golden_policy(_i);
	struct macos_profile prof;
	struct halo_err e = {{0}};
	char path[256], why[512];
	char *got, *want;

	ck_assert_msg(build_tty(p, goldens[_i].port, goldens[_i].tty, &prof, &e) == 0, "%s", e.msg);
	ck_assert_msg(lint(&prof, why, sizeof(why)) == 0, "%s: %s", goldens[_i].name, why);
	got = render(&prof);
	snprintf(path, sizeof(path), GOLDEN_DIR "%s.sb", goldens[_i].name);
	if (getenv("HALO_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fputs(got, f);
		fclose(f);
	}
	want = file_text(path);
	ck_assert_msg(want != NULL, "%s missing (HALO_UPDATE_GOLDEN=1 writes it)", path);
	if (strcmp(got, want) != 0) {
		char actual[300];
		snprintf(actual, sizeof(actual), "/tmp/halo-sbpl-%s.actual", goldens[_i].name);
		FILE *f = fopen(actual, "w");
		if (f) {
			fputs(got, f);
			fclose(f);
		}
		ck_abort_msg("%s differs from the generated profile: diff %s %s", path, path,
			     actual);
	}
	free(got);
	free(want);
	macos_profile_free(&prof);
	policy_free(p);
}
END_TEST

/* ------------------------------------------------------------------ families */

/* The text of every top-level form starting with `head` ("(allow", "(deny"), joined. */
static char *forms(const char *text, const char *head)
{
	size_t cap = strlen(text) + 1, len = 0;
	char *out = calloc(1, cap);

	for (const char *p = strstr(text, head); p; p = strstr(p + 1, head)) {
		if (p != text && p[-1] != '\n')
			continue;
		int depth = 0;
		const char *q = p;
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

static size_t last_of(const char *text, const char *needle)
{
	size_t at = 0;

	for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
		at = (size_t)(p - text);
	return at;
}

START_TEST(rule_families_present)
{
	struct halo_policy *p = golden_policy(0);
	struct macos_profile prof;
	struct halo_err e = {{0}};
	static const char *const want[] = {
	    "(version 1)\n(deny default (with message \"halo-run\"))\n",
	    "(allow process-fork)",
	    "(allow process-exec)",
	    "(allow signal (target same-sandbox))",
	    "(allow sysctl-read",
	    "(allow ipc-posix-sem)",
	    "(allow mach-lookup\n  (global-name \"com.apple.system.opendirectoryd.libinfo\")",
	    "(allow file-read*)\n",
	    "(allow file-write*\n  (require-all\n    (require-any\n      (subpath (param "
	    "\"WORKSPACE_0\"))",
	    "(subpath (param \"TMPDIR_0\"))",
	    "(require-not (subpath (param \"PROTECTED_0\")))",
	    "(allow network-outbound (remote ip \"localhost:50123\"))\n",
	    "(literal \"/private/var/run/docker.sock\")",
	    "(remote unix-socket (path-literal \"/var/run/docker.sock\"))",
	    "(global-name-prefix \"com.docker.\")",
	    "(deny appleevent-send lsopen",
	    "(regex #\"/\\.[Gg][Ii][Tt]/",
	    "(subpath (param \"GUARD_0\"))",
	    "(regex #\"/\\.[Ee][Nn][Vv][^/]*(/.*)?$\")",
	    "(regex #\"^/[Uu][Ss][Ee][Rr][Ss]/[Aa][Ll][Ii][Cc][Ee]/\\.[Ss][Ss][Hh](/.*)?$\")",
	};

	ck_assert_int_eq(build(p, PORT, &prof, &e), 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(strstr(prof.text, want[i]), "missing: %s", want[i]);
	ck_assert_ptr_null(strstr(prof.text, "(allow default"));
	ck_assert_ptr_null(strstr(prof.text, "localhost:*"));
	ck_assert_ptr_null(strstr(prof.text, "import"));
	ck_assert_ptr_null(strstr(prof.text, "mDNSResponder"));
	macos_profile_free(&prof);
	policy_free(p);
}
END_TEST

/* Never allowed, in any policy: osascript → Terminal, open -a, the pasteboard, launchd
 * job submission, TCC, Docker, the Keychain. */
START_TEST(dangerous_services_never_allowed)
{
	static const char *const never[] = {
	    "appleevent",    "launchservicesd", "pasteboard", "windowserver",	"tccd",
	    "xpc.launchd",   "com.docker",	"OrbStack",   "SecurityServer", "securityd",
	    "mDNSResponder", "lsopen",		"sysmond",    "AF_SYSTEM",
	};
	struct halo_policy *p = golden_policy(_i);
	struct macos_profile prof;
	struct halo_err e = {{0}};

	ck_assert_int_eq(build(p, goldens[_i].port, &prof, &e), 0);
	char *allows = forms(prof.text, "(allow");
	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		ck_assert_msg(!strstr(allows, never[i]), "%s allowed in %s", never[i],
			      goldens[_i].name);
	free(allows);
	macos_profile_free(&prof);
	policy_free(p);
}
END_TEST

/* Last match wins among filtered rules: every allow comes before the first deny, and
 * the protected paths' deny is the very last family. */
START_TEST(allows_before_denies)
{
	struct halo_policy *p = golden_policy(_i);
	struct macos_profile prof;
	struct halo_err e = {{0}};

	ck_assert_int_eq(build(p, goldens[_i].port, &prof, &e), 0);
	const char *after_default = strstr(prof.text, "(deny default") + 1;
	const char *first_deny = strstr(after_default, "\n(deny ");
	size_t last_allow = last_of(prof.text, "\n(allow ");
	ck_assert_ptr_nonnull(first_deny);
	ck_assert_uint_lt(last_allow, (size_t)(first_deny - prof.text));
	size_t protected_at = last_of(prof.text, ";; 6. protected paths");
	ck_assert_uint_gt(protected_at, last_of(prof.text, "(deny mach-lookup"));
	ck_assert_uint_gt(protected_at, last_of(prof.text, "(deny network-outbound"));
	/* The guard's write denies (section 5) come before; section 6 may deny writes of
	 * allowRead carve-outs itself. */
	size_t last_write_deny = last_of(prof.text, "(deny file-write* (with");
	ck_assert(last_write_deny < protected_at ||
		  strncmp(prof.text + last_write_deny - 3, "))\n", 3) == 0);
	macos_profile_free(&prof);
	policy_free(p);
}
END_TEST

static const char *param_value(const struct macos_profile *prof, const char *key)
{
	for (size_t i = 0; i < prof->n_params; i++)
		if (strcmp(prof->params[i].key, key) == 0)
			return prof->params[i].value;
	return NULL;
}

/* Paths are parameters: both spellings of /tmp, ~ from the password database, the
 * protected path's ancestors inside the workspace, never the path in the text. */
START_TEST(paths_are_parameters)
{
	struct halo_policy *p = load(goldens[1].yaml);
	struct macos_profile prof;
	struct halo_err e = {{0}};

	ck_assert_int_eq(build(p, PORT, &prof, &e), 0);
	ck_assert_str_eq(param_value(&prof, "WORKSPACE_0"), WS);
	ck_assert_str_eq(param_value(&prof, "WRITABLE_0"), "/opt/cache");
	ck_assert_str_eq(param_value(&prof, "WRITABLE_1"), "/private/tmp/build");
	ck_assert_str_eq(param_value(&prof, "WRITABLE_2"), "/tmp/build");
	ck_assert_str_eq(param_value(&prof, "TMPDIR_0"), "/private/tmp/halo-run.TEST");
	ck_assert_str_eq(param_value(&prof, "TMPDIR_1"), "/tmp/halo-run.TEST");
	ck_assert_str_eq(param_value(&prof, "PROTECTED_0"), HOME "/.ssh");
	ck_assert_str_eq(param_value(&prof, "ANCESTOR_0"), WS "/keys/deep");
	ck_assert_str_eq(param_value(&prof, "ANCESTOR_1"), WS "/keys");
	ck_assert_str_eq(param_value(&prof, "ANCESTOR_2"), WS);
	ck_assert_ptr_null(param_value(&prof, "ANCESTOR_3"));
	ck_assert_ptr_null(param_value(&prof, "GUARD_0")); /* guardPersistence: false */
	ck_assert_ptr_null(strstr(prof.text, "\"/opt/cache"));
	ck_assert_ptr_null(strstr(prof.text, "\"" WS));
	ck_assert_ptr_nonnull(strstr(prof.text,
				     "(deny file-write-unlink (with message "
				     "\"halo-run\")\n  (literal (param \"ANCESTOR_0\"))"));
	macos_profile_free(&prof);
	policy_free(p);
}
END_TEST

START_TEST(read_only_has_no_workspace_write_and_no_network)
{
	struct halo_policy *p = load(goldens[2].yaml);
	struct macos_profile prof;
	struct halo_err e = {{0}};

	ck_assert_int_eq(build(p, 0, &prof, &e), 0);
	ck_assert_ptr_null(param_value(&prof, "WORKSPACE_0"));
	ck_assert_ptr_nonnull(param_value(&prof, "TMPDIR_0"));
	ck_assert_ptr_null(strstr(prof.text, "network-outbound (remote ip"));
	ck_assert_ptr_nonnull(strstr(prof.text, ";; 4. network: none"));
	macos_profile_free(&prof);
	policy_free(p);
}
END_TEST

/* ------------------------------------------------------------------ refusals */

START_TEST(refuses_quote_in_protected_path)
{
	struct halo_policy *p = load("sandbox:\n  protectedPaths: [\"/Users/alice/a\\\"b\"]\n");
	struct macos_profile prof;
	struct halo_err e = {{0}};

	ck_assert_int_eq(build(p, PORT, &prof, &e), -EINVAL);
	ck_assert_str_eq(e.msg, "profile: protected path '/Users/alice/a\"b' contains a double "
				"quote, which an SBPL profile cannot carry safely");
	ck_assert_ptr_null(prof.text);
	policy_free(p);
}
END_TEST

START_TEST(refuses_control_bytes_in_run_paths)
{
	static const char *const bad[] = {"/Users/alice/pro\nj", "/Users/alice/pro\tj",
					  "/Users/alice/pro\x7fj"};
	static const char *const want[] = {
	    "profile: the workspace '/Users/alice/pro\nj' contains a control character (byte "
	    "0x0a, a newline)",
	    "profile: the workspace '/Users/alice/pro\tj' contains a control character (byte "
	    "0x09)",
	    "profile: the workspace '/Users/alice/pro\x7fj' contains a control character (byte "
	    "0x7f)",
	};
	struct halo_policy *p = load("sandbox: {mode: workspace-write}\n");
	struct macos_profile prof;
	struct halo_err e = {{0}};
	struct macos_profile_in in = {
	    .policy = p,
	    .pw_home = HOME,
	    .tmpdir = "/tmp/t",
	    .proxy_port = PORT,
	    .resolve = no_resolve,
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		in.workspace = bad[i];
		ck_assert_int_eq(macos_profile_build(&in, &prof, &e), -EINVAL);
		ck_assert_str_eq(e.msg, want[i]);
	}
	in.workspace = WS;
	in.tmpdir = "/tmp/a\"b";
	ck_assert_int_eq(macos_profile_build(&in, &prof, &e), -EINVAL);
	ck_assert_str_eq(e.msg,
			 "profile: TMPDIR '/tmp/a\"b' contains a double quote, which an SBPL "
			 "profile cannot carry safely");
	in.tmpdir = "relative";
	ck_assert_int_eq(macos_profile_build(&in, &prof, &e), -EINVAL);
	ck_assert_str_eq(e.msg, "profile: TMPDIR 'relative' is not an absolute path");
	policy_free(p);
}
END_TEST

/* halo-run's own output files (--audit): denied like a protected path (no read, no
 * write, no creation, no unlink) even inside the workspace, and the directories
 * between it and the workspace cannot be renamed away. */
START_TEST(own_outputs_denied)
{
	static const char *const outs[] = {WS "/logs/egress.jsonl"};
	struct halo_policy *p = load("sandbox: {mode: workspace-write}\n");
	struct macos_profile prof;
	struct halo_err e = {{0}};
	struct macos_profile_in in = {
	    .policy = p,
	    .workspace = WS,
	    .pw_home = HOME,
	    .tmpdir = "/tmp/t",
	    .proxy_port = PORT,
	    .own_outputs = outs,
	    .n_own_outputs = 1,
	    .resolve = no_resolve,
	};
	const char *key = NULL, *deny, *unlink;
	char want[128], why[256];

	ck_assert_int_eq(macos_profile_build(&in, &prof, &e), 0);
	for (size_t i = 0; i < prof.n_params; i++)
		if (strcmp(prof.params[i].value, outs[0]) == 0)
			key = prof.params[i].key;
	ck_assert_ptr_nonnull(key);
	ck_assert(strncmp(key, "PROTECTED_", 10) == 0);
	deny = strstr(prof.text, "(deny file-read* file-write* (with message \"halo-run\")");
	ck_assert_ptr_nonnull(deny);
	snprintf(want, sizeof(want), "(literal (param \"%s\"))", key);
	ck_assert_ptr_nonnull(strstr(deny, want));
	unlink = strstr(prof.text, "(deny file-write-unlink");
	ck_assert_ptr_nonnull(unlink);
	ck_assert_str_eq(param_value(&prof, "ANCESTOR_0"), WS "/logs");
	ck_assert_int_eq(lint(&prof, why, sizeof(why)), 0);
	macos_profile_free(&prof);
	policy_free(p);
}
END_TEST

START_TEST(mode_off_has_no_profile)
{
	struct halo_policy *p = load("sandbox: {mode: 'off'}\n");
	struct macos_profile prof;
	struct halo_err e = {{0}};

	ck_assert_int_eq(build(p, PORT, &prof, &e), -EINVAL);
	ck_assert_str_eq(e.msg, "sandbox.mode is off: there is no profile to apply");
	policy_free(p);
}
END_TEST

/* ------------------------------------------------------------------ lint */

static const struct {
	const char *text;
	const char *why; /* NULL: accepted */
} lint_rows[] = {
    {"(version 1)\n(deny default)\n(allow file-read* (subpath (param \"A\")))\n", NULL},
    {"(version 1)\n; a comment\n(deny default (with message \"m\"))\n"
     "(allow file-read* (require-all (regex #\"^/a\\.b$\") (require-not (literal \"/x\"))))\n",
     NULL},
    {"", "line 1: empty profile"},
    {"(version 2)", "line 1: the profile must start with (version 1)"},
    {"(deny default)", "line 1: the profile must start with (version 1)"},
    {"(version 1)\n(deny default", "line 2: unbalanced '(': no closing ')'"},
    {"(version 1))", "line 1: unbalanced ')'"},
    {"(version 1)\n(allow file-read* (subpath \"/x))", "line 2: unterminated string"},
    {"(version 1)\n(allow file-read* (subpath \"/x\ny\"))",
     "line 2: control character in a string"},
    {"(version 1)\n(allow file-read* (subpath \"/x\\n\"))",
     "line 2: unknown escape \\n in a string"},
    {"(version 1)\n(allow default)", "line 2: (allow default) opens everything: never used"},
    {"(version 1)\n(deny default (subpath \"/\"))", "line 2: (deny default) takes no filter"},
    {"(version 1)\n(allow file-frobnicate)", "line 2: unknown operation file-frobnicate"},
    {"(version 1)\n(allow (subpath \"/x\"))", "line 2: a rule needs an operation"},
    {"(version 1)\n(allow file-read* (frob \"/x\"))", "line 2: unknown filter (frob ...)"},
    {"(version 1)\n(allow file-read* (subpath (param \"NOPE\")))",
     "line 2: parameter \"NOPE\" is used but not defined with -D"},
    {"(version 1)\n(allow file-read* (subpath (param NOPE)))",
     "line 2: (param ...) takes one string"},
    {"(version 1)\n(allow file-read* (subpath \"relative\"))",
     "line 2: (subpath ...) takes an absolute path"},
    {"(version 1)\n(allow file-read* (subpath \"/a\" \"/b\"))",
     "line 2: (subpath ...) takes exactly one argument"},
    {"(version 1)\n(deny file-read* (subpath \"/a\"))\n(allow file-read* (subpath \"/b\"))",
     "line 3: an allow after a deny: denies must come last"},
    {"(version 1)\n(allow network-outbound (remote ip \"localhost:*\"))",
     "line 2: (remote ip ...) must be \"localhost:PORT\" with one port"},
    {"(version 1)\n(allow network-outbound (remote ip \"*:443\"))",
     "line 2: (remote ip ...) must be \"localhost:PORT\" with one port"},
    {"(version 1)\n(allow network-outbound (remote ip \"localhost:65536\"))",
     "line 2: (remote ip ...) must be \"localhost:PORT\" with one port"},
    {"(version 1)\n(allow network-outbound (remote tcp \"localhost:80\"))",
     "line 2: (remote ...) takes ip \"localhost:PORT\" or unix-socket with a path filter"},
    {"(version 1)\n(import \"system.sb\")", "line 2: unknown top-level form (import ...)"},
    {"(version 1)\n(allow signal (target everyone))", "line 2: unknown (target ...)"},
    {"(version 1)\n(allow file-read* (require-not))",
     "line 2: (require-not ...) takes exactly one argument"},
    {"(version 1)\n(allow file-read* (with frobnicate))", "line 2: unknown (with ...) modifier"},
    {"(version 1)\n(allow file-read* (subpath \"/x\") file-write*)",
     "line 2: a filter must be a form such as (subpath ...)"},
    {"(version 1)\n(allow file-read* @)", "line 2: unexpected character '@'"},
};

START_TEST(lint_table)
{
	const char *defined[] = {"A"};
	char why[512];
	int rc = macos_sbpl_lint(lint_rows[_i].text, defined, 1, why, sizeof(why));

	if (!lint_rows[_i].why) {
		ck_assert_msg(rc == 0, "row %d refused: %s", _i, why);
		return;
	}
	ck_assert_int_eq(rc, -EINVAL);
	ck_assert_str_eq(why, lint_rows[_i].why);
}
END_TEST

/* ------------------------------------------------------------------ regexes */

static bool ere_match(const char *re, const char *path)
{
	regex_t r;
	int rc;

	ck_assert_msg(regcomp(&r, re, REG_EXTENDED | REG_NOSUB) == 0, "bad regex %s", re);
	rc = regexec(&r, path, 0, NULL, 0);
	regfree(&r);
	return rc == 0;
}

/* The persistence guard's git regexes, as folded into the profile. */
START_TEST(guard_git_regexes)
{
	struct halo_policy *p = golden_policy(0);
	struct macos_profile prof;
	struct halo_err e = {{0}};
	char re[3][1024];
	const char *at;

	ck_assert_int_eq(build(p, PORT, &prof, &e), 0);
	at = strstr(prof.text, "(deny file-write* (with message \"halo-run\")\n  (regex");
	ck_assert_ptr_nonnull(at);
	for (int k = 0; k < 3; k++) {
		at = strstr(at, "#\"/\\.[Gg][Ii][Tt]/");
		ck_assert_ptr_nonnull(at);
		const char *end = strstr(at + 2, "\")");
		snprintf(re[k], sizeof(re[k]), "%.*s", (int)(end - at - 2), at + 2);
		at = end;
	}
	static const char *const hooks_yes[] = {"/w/.git/hooks", "/w/.git/hooks/pre-commit",
						"/w/.GIT/Hooks/x", "/w/.git/modules/sub/hooks/x",
						"/w/.git/worktrees/wt/hooks"};
	for (size_t i = 0; i < 5; i++)
		ck_assert_msg(ere_match(re[0], hooks_yes[i]), "%s", hooks_yes[i]);
	ck_assert(!ere_match(re[0], "/w/.git/objects/hooks-not"));
	ck_assert(!ere_match(re[0], "/w/git/hooks"));
	ck_assert(ere_match(re[1], "/w/.git/config"));
	ck_assert(ere_match(re[1], "/w/.git/CONFIG"));
	ck_assert(ere_match(re[2], "/w/.git/worktrees/wt/config.worktree"));
	ck_assert(!ere_match(re[1], "/w/.git/config.worktree"));
	ck_assert(ere_match(re[1], "/w/.git/modules/a/modules/b/config"));
	ck_assert(!ere_match(re[1], "/w/.git/configx"));
	ck_assert(!ere_match(re[1], "/w/.git/refs/config/x"));
	macos_profile_free(&prof);
	policy_free(p);
}
END_TEST

/* One list (policy/guard.c) for both launchers. */
START_TEST(guard_names_in_policy)
{
	size_t n;
	const char *const *names = policy_guard_names(&n);

	ck_assert_uint_eq(n, 21);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(policy_guard_name(names[i]), "%s", names[i]);
	ck_assert(!policy_guard_name(".env") && !policy_guard_name("bashrc") &&
		  !policy_guard_name(".BASHRC") && !policy_guard_name(".git"));
}
END_TEST

static Suite *sbpl_suite(void)
{
	Suite *s = suite_create("sbpl");
	TCase *tc = tcase_create("profile");
	int n_goldens = (int)(sizeof(goldens) / sizeof(goldens[0]));

	tcase_add_loop_test(tc, golden_profiles, 0, n_goldens);
	tcase_add_test(tc, rule_families_present);
	tcase_add_test(tc, own_outputs_denied);
	tcase_add_test(tc, host_ports_allowed_directly);
	tcase_add_loop_test(tc, dangerous_services_never_allowed, 0, n_goldens);
	tcase_add_loop_test(tc, allows_before_denies, 0, n_goldens);
	tcase_add_test(tc, paths_are_parameters);
	tcase_add_test(tc, read_only_has_no_workspace_write_and_no_network);
	tcase_add_test(tc, refuses_quote_in_protected_path);
	tcase_add_test(tc, refuses_control_bytes_in_run_paths);
	tcase_add_test(tc, mode_off_has_no_profile);
	tcase_add_loop_test(tc, lint_table, 0, (int)(sizeof(lint_rows) / sizeof(lint_rows[0])));
	tcase_add_test(tc, guard_git_regexes);
	tcase_add_test(tc, guard_names_in_policy);
	tcase_add_test(tc, unix_sockets_allowed_last);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(sbpl_suite)
