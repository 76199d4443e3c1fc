/* Loading policy files: hostile files (FIFO, directory, huge, empty, binary, deep,
 * truncated, alias bombs, duplicate keys), type errors with field paths and lines,
 * YAML 1.1 ambiguities, JSON/YAML equivalence, the embedded default, to_json. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "tests/unit/policy_test.h"

static char tmpdir[64];

static void tmp_setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/halo-load-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void tmp_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

static const char *tmp_file(const char *name, const char *data, size_t len)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	fclose(f);
	return path;
}

/* Parse a file; expect failure with a message containing `needle`. */
static void expect_file_error(const char *path, const char *needle)
{
	struct policy_diags d = {0};
	struct halo_policy *p = (void *)1;

	ck_assert_int_lt(policy_parse_file(path, &p, &d), 0);
	ck_assert_ptr_null(p);
	ck_assert_msg(pt_err(&d, needle), "want '%s' in:%s", needle, pt_dump(&d));
	ck_assert_msg(pt_err(&d, path), "error does not name the file:%s", pt_dump(&d));
	policy_diags_free(&d);
}

/* Parse a buffer; expect failure with `needle` among the errors. */
static void expect_parse_error(const char *text, char format, const char *needle)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	int rc = policy_parse_buffer(format == 'j' ? "t.json" : "t.yaml", text, strlen(text),
				     format, &p, &d);

	ck_assert_msg(rc < 0, "accepted: %s", text);
	ck_assert_ptr_null(p);
	ck_assert_msg(pt_err(&d, needle), "want '%s' in:%s", needle, pt_dump(&d));
	policy_diags_free(&d);
}

static struct halo_policy *expect_parse_ok(const char *text, char format)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	int rc = policy_parse_buffer(format == 'j' ? "t.json" : "t.yaml", text, strlen(text),
				     format, &p, &d);

	ck_assert_msg(rc == 0, "refused: %s%s", text, pt_dump(&d));
	ck_assert_uint_eq(d.n_errors, 0);
	policy_diags_free(&d);
	return p;
}

START_TEST(missing_file)
{
	expect_file_error(PT_DATA "no-such-policy.yaml", "cannot read: No such file or directory");
}
END_TEST

START_TEST(directory)
{
	expect_file_error(PT_DATA, "is a directory, not a regular file");
}
END_TEST

START_TEST(fifo_does_not_block)
{
	char path[128];
	struct timespec t0, t1;

	snprintf(path, sizeof(path), "%s/policy.yaml", tmpdir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	expect_file_error(path, "is a FIFO, not a regular file");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_int_lt(t1.tv_sec - t0.tv_sec, 2);
}
END_TEST

START_TEST(device)
{
	expect_file_error("/dev/null", "is a character device, not a regular file");
}
END_TEST

START_TEST(empty_file)
{
	expect_file_error(tmp_file("empty.yaml", "", 0), "the policy file is empty");
	expect_file_error(tmp_file("blank.json", " \n\t\n", 4), "the policy file is empty");
	expect_file_error(tmp_file("comments.yaml", "# nothing\n", 10),
			  "holds no YAML document (empty?)");
}
END_TEST

START_TEST(nul_bytes)
{
	static const char data[] = "sandbox:\n  mode: off\0\n";

	expect_file_error(tmp_file("nul.yaml", data, sizeof(data) - 1),
			  "nul.yaml:2: contains a NUL byte (binary file?)");
}
END_TEST

START_TEST(too_large)
{
	size_t len = 2 * 1024 * 1024;
	char *big = malloc(len + 1);

	ck_assert_ptr_nonnull(big);
	memset(big, '#', len);
	big[len] = '\0';
	for (size_t i = 79; i < len; i += 80)
		big[i] = '\n';
	expect_file_error(tmp_file("big.yaml", big, len),
			  "is too large (2097152 bytes; a policy file may hold at most 1048576)");
	expect_parse_error(big, 'y', "is too large (2097152 bytes");
	free(big);
}
END_TEST

START_TEST(unreadable_when_not_root)
{
	const char *path = tmp_file("secret.yaml", "sandbox: {}\n", 12);

	ck_assert_int_eq(chmod(path, 0), 0);
	if (geteuid() == 0)
		UNIT_SKIP("unreadable policy file", "root reads anything");
	expect_file_error(path, "cannot open: Permission denied");
}
END_TEST

START_TEST(format_from_extension_and_content)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	const char *path;

	path = tmp_file("policy", "{\"sandbox\": {\"mode\": \"read-only\"}}", 34);
	ck_assert_int_eq(policy_parse_file(path, &p, &d), 0);
	ck_assert_int_eq(p->mode, POLICY_MODE_READ_ONLY);
	ck_assert_str_eq(p->source, path);
	policy_free(p);
	/* .json is parsed as JSON even when it looks like YAML: a clear JSON error. */
	path = tmp_file("p.json", "sandbox:\n  mode: off\n", 21);
	expect_file_error(path, "p.json:1:1: JSON syntax error near 'sandbox:'");
	policy_diags_free(&d);
}
END_TEST

START_TEST(truncated)
{
	expect_parse_error("{\"sandbox\": {\"mode\": \"read-only\"", 'j',
			   "t.json:1:33: JSON syntax error: unexpected end of input (truncated "
			   "file?)");
	expect_parse_error("{\"egress\": {\"allowedDomains\": [\"a.com\", ", 'j',
			   "unexpected end of input (truncated file?)");
	expect_parse_error("sandbox:\n  writableRoots: [/a, /b\n", 'y', "(truncated file?)");
	expect_parse_error("sandbox:\n  writableRoots: [/a, /b\n", 'y',
			   "t.yaml:3:1: YAML syntax "
			   "error");
	expect_parse_error("egress: {allowedDomains: \"a.com", 'y', "t.yaml:1:");
	expect_parse_error("{\"a\": 1} trailing", 'j',
			   "t.json:1:10: JSON syntax error: data after the end of the document");
}
END_TEST

START_TEST(deep_nesting)
{
	size_t depth = 1000;
	char *j = malloc(2 * depth + 16), *y = malloc(4 * depth * depth / 2 + depth * 8);
	size_t o = 0;

	ck_assert_ptr_nonnull(j);
	ck_assert_ptr_nonnull(y);
	o += (size_t)sprintf(j, "{\"x\":");
	for (size_t i = 0; i < depth; i++)
		j[o++] = '[';
	for (size_t i = 0; i < depth; i++)
		j[o++] = ']';
	j[o++] = '}';
	j[o] = '\0';
	expect_parse_error(j, 'j', "t.json:1: nesting deeper than 32 levels");
	/* YAML flow style: the same brackets are a valid YAML document. */
	expect_parse_error(j, 'y', "t.yaml:1: nesting deeper than 32 levels");
	/* YAML block style: one more level of indentation per line. */
	o = 0;
	for (size_t i = 0; i < depth; i++) {
		memset(y + o, ' ', 2 * i);
		o += 2 * i;
		o += (size_t)sprintf(y + o, "k:\n");
	}
	y[o] = '\0';
	expect_parse_error(y, 'y', "t.yaml:33: nesting deeper than 32 levels");
	free(j);
	free(y);
}
END_TEST

START_TEST(nesting_at_the_limit_is_only_a_type_error)
{
	char j[200];
	size_t o = (size_t)sprintf(j, "{\"x\":");

	for (int i = 0; i < 31; i++)
		j[o++] = '[';
	for (int i = 0; i < 31; i++)
		j[o++] = ']';
	j[o++] = '}';
	j[o] = '\0';
	/* 32 levels parse; the unknown top-level key is then only a warning. */
	policy_free(expect_parse_ok(j, 'j'));
}
END_TEST

START_TEST(wrong_types)
{
	expect_parse_error("{\"egress\": {\"allowedDomains\": [\"a.com\", \"b.com\", 3]}}", 'j',
			   "t.json: egress.allowedDomains[2]: expected a string, got a number");
	expect_parse_error("egress:\n  allowedDomains:\n    - a.com\n    - b.com\n    - 3\n", 'y',
			   "t.yaml:5: egress.allowedDomains[2]: expected a string, got a number");
	expect_parse_error("sandbox: workspace-write\n", 'y',
			   "t.yaml:1: sandbox: expected a mapping, got a string");
	expect_parse_error("sandbox:\n  writableRoots: /opt/x\n", 'y',
			   "t.yaml:2: sandbox.writableRoots: expected a list, got a string");
	expect_parse_error("sandbox:\n  writableRoots:\n", 'y',
			   "t.yaml:2: sandbox.writableRoots: expected a list, got null");
	expect_parse_error("{\"sandbox\": {\"failIfUnavailable\": \"true\"}}", 'j',
			   "sandbox.failIfUnavailable: expected a boolean (true or false), got a "
			   "string");
	expect_parse_error("{\"sandbox\": {\"mode\": true}}", 'j',
			   "sandbox.mode: expected a string, got a boolean");
	expect_parse_error("gateway: [a.com]\n", 'y', "gateway: expected a string, got a list");
	/* A plain ~ is YAML's null, not the home directory. */
	expect_parse_error("sandbox: {writableRoots: [~]}\n", 'y',
			   "sandbox.writableRoots[0]: expected a string, got null");
	expect_parse_error("env: {set: [A]}\n", 'y', "env.set: expected a mapping, got a list");
	expect_parse_error("[1, 2]\n", 'y', "t.yaml:1: the top level must be a mapping");
	expect_parse_error("\"just a string\"", 'j', "t.json: the top level must be a mapping");
}
END_TEST

/* egress.hostPorts: integers only, in both formats; every refusal names the entry. */
static const struct {
	const char *text;
	char format;
	const char *error;
} host_port_cases[] = {
    {"egress:\n  hostPorts: [\"4873\"]\n", 'y',
     "t.yaml:2: egress.hostPorts[0]: expected a port number (an integer from 1 to 65535), got "
     "the string '4873'; write it without quotes"},
    {"{\"egress\": {\"hostPorts\": [4873, \"5432\"]}}", 'j',
     "t.json: egress.hostPorts[1]: expected a port number (an integer from 1 to 65535), got "
     "the string '5432'"},
    {"egress: {hostPorts: [0]}\n", 'y',
     "egress.hostPorts[0]: must be an integer from 1 to "
     "65535, got 0"},
    {"egress: {hostPorts: [-22]}\n", 'y',
     "egress.hostPorts[0]: must be an integer from 1 to "
     "65535, got -22"},
    {"egress: {hostPorts: [65536]}\n", 'y',
     "egress.hostPorts[0]: must be an integer from 1 to "
     "65535, got 65536"},
    {"{\"egress\": {\"hostPorts\": [1e99]}}", 'j', "egress.hostPorts[0]: must be an integer"},
    {"{\"egress\": {\"hostPorts\": [-1e400]}}", 'j', "egress.hostPorts[0]: must be an integer"},
    {"egress: {hostPorts: [80, 4873.5]}\n", 'y',
     "egress.hostPorts[1]: must be an integer from 1 to 65535, got 4873.5"},
    {"egress: {hostPorts: [.inf]}\n", 'y', "egress.hostPorts[0]: '.inf' is not a plain decimal"},
    {"egress: {hostPorts: [0x10]}\n", 'y', "egress.hostPorts[0]: '0x10' is not a plain decimal"},
    {"egress: {hostPorts: [0755]}\n", 'y', "egress.hostPorts[0]: '0755' is not a plain decimal"},
    {"egress: {hostPorts: [4_873]}\n", 'y', "egress.hostPorts[0]: '4_873' is not a plain decimal"},
    {"egress: {hostPorts: [localhost:4873]}\n", 'y', "got the string 'localhost:4873'"},
    {"egress: {hostPorts: [true]}\n", 'y',
     "egress.hostPorts[0]: expected a port number (an integer from 1 to 65535), got a boolean"},
    {"egress: {hostPorts: [~]}\n", 'y', "egress.hostPorts[0]: expected a port number"},
    {"egress: {hostPorts: [[4873]]}\n", 'y', "egress.hostPorts[0]: expected a port number"},
    {"egress: {hostPorts: {a: 1}}\n", 'y',
     "egress.hostPorts: expected a list of port numbers, got a mapping"},
    {"egress: {hostPorts: 4873}\n", 'y',
     "egress.hostPorts: expected a list of port numbers, got a number"},
    {"{\"egress\": {\"hostPorts\": null}}", 'j',
     "egress.hostPorts: expected a list of port numbers, got null"},
};

START_TEST(host_ports_hostile)
{
	expect_parse_error(host_port_cases[_i].text, host_port_cases[_i].format,
			   host_port_cases[_i].error);
}
END_TEST

START_TEST(host_ports_both_formats)
{
	struct halo_policy *y = expect_parse_ok("egress:\n  hostPorts:\n    - 4873\n    - 5432\n"
						"    - 1e3\n",
						'y');
	struct halo_policy *j =
	    expect_parse_ok("{\"egress\": {\"hostPorts\": [4873, 5432, 1000.0]}}", 'j');

	for (int k = 0; k < 2; k++) {
		const struct halo_policy *p = k ? j : y;

		ck_assert_uint_eq(p->host_ports.n, 3);
		ck_assert_uint_eq(p->host_ports.items[0], 4873);
		ck_assert_uint_eq(p->host_ports.items[1], 5432);
		ck_assert_uint_eq(p->host_ports.items[2], 1000);
	}
	policy_free(y);
	policy_free(j);
}
END_TEST

START_TEST(every_type_error_is_reported)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	const char *text = "sandbox:\n  mode: 1\n  writableRoots: [1, 2]\nlimits:\n  memoryMB: "
			   "x\n";

	ck_assert_int_eq(policy_parse_buffer("t.yaml", text, strlen(text), 'y', &p, &d), -EINVAL);
	ck_assert_uint_eq(d.n_errors, 4);
	ck_assert(pt_err(&d, "t.yaml:2: sandbox.mode: expected a string, got a number"));
	ck_assert(pt_err(&d, "t.yaml:3: sandbox.writableRoots[0]: expected a string"));
	ck_assert(pt_err(&d, "t.yaml:3: sandbox.writableRoots[1]: expected a string"));
	ck_assert(pt_err(&d, "t.yaml:5: limits.memoryMB: expected a positive integer, got a "
			     "string"));
	policy_diags_free(&d);
}
END_TEST

START_TEST(enum_values)
{
	struct halo_policy *p;

	expect_parse_error("sandbox: {mode: readonly}\n", 'y',
			   "sandbox.mode: unknown mode 'readonly' (expected off, workspace-write "
			   "or read-only)");
	expect_parse_error("egress: {default: block}\n", 'y',
			   "egress.default: unknown value 'block' (expected allow or deny)");
	/* Plain `off` is the mode's name, not YAML 1.1's false. */
	p = expect_parse_ok("sandbox: {mode: off}\n", 'y');
	ck_assert_int_eq(p->mode, POLICY_MODE_OFF);
	policy_free(p);
	p = expect_parse_ok("sandbox: {mode: !!str off}\n", 'y');
	ck_assert_int_eq(p->mode, POLICY_MODE_OFF);
	policy_free(p);
}
END_TEST

START_TEST(yaml11_booleans_and_numbers)
{
	struct halo_policy *p;

	expect_parse_error("sandbox:\n  failIfUnavailable: yes\n", 'y',
			   "t.yaml:2: sandbox.failIfUnavailable: 'yes' is a YAML 1.1 boolean "
			   "spelling; write true or false");
	expect_parse_error("sandbox: {guardPersistence: Off}\n", 'y',
			   "'Off' is a YAML 1.1 boolean spelling");
	expect_parse_error("env: {set: {DEBUG: yes}}\n", 'y',
			   "env.set.DEBUG: 'yes' is a boolean in YAML 1.1; quote it if you mean "
			   "the string");
	expect_parse_error("env: {set: {UMASK: 0022}}\n", 'y',
			   "env.set.UMASK: '0022' is a number in some YAML readers; quote it");
	expect_parse_error("env: {set: {JOBS: 4}}\n", 'y',
			   "env.set.JOBS: expected a string, got a number (quote it)");
	expect_parse_error("env: {set: {CI: true}}\n", 'y',
			   "env.set.CI: expected a string, got a boolean (quote it)");
	expect_parse_error("limits: {memoryMB: 0x400}\n", 'y',
			   "limits.memoryMB: '0x400' is not a plain decimal integer");
	expect_parse_error("limits: {cpuSeconds: 1:30}\n", 'y',
			   "limits.cpuSeconds: '1:30' is not a plain decimal integer");
	expect_parse_error("limits: {cpuSeconds: 1_000}\n", 'y', "'1_000' is not a plain decimal");
	expect_parse_error("limits: {cpuSeconds: .inf}\n", 'y', "'.inf' is not a plain decimal");
	p = expect_parse_ok("sandbox: {failIfUnavailable: false, guardPersistence: True}\n"
			    "env: {set: {DEBUG: \"yes\", UMASK: '0022'}}\n",
			    'y');
	ck_assert_int_eq(p->fail_if_unavailable, 0);
	ck_assert_int_eq(p->guard_persistence, 1);
	ck_assert_str_eq(p->env_set[0].value, "yes");
	ck_assert_str_eq(p->env_set[1].value, "0022");
	policy_free(p);
	/* Numbers in JSON spelling are numbers in both formats. */
	p = expect_parse_ok("limits: {cpuSeconds: 6e1}\n", 'y');
	ck_assert_int_eq(p->limits.cpu_seconds, 60);
	policy_free(p);
}
END_TEST

START_TEST(limits_bounds)
{
	expect_parse_error("limits: {memoryMB: 0}\n", 'y',
			   "limits.memoryMB: must be a positive integer up to 16777216, got 0");
	expect_parse_error("limits: {processes: -5}\n", 'y',
			   "limits.processes: must be a positive integer up to");
	expect_parse_error("{\"limits\": {\"wallSeconds\": 1.5}}", 'j',
			   "limits.wallSeconds: expected a positive integer, got 1.5");
	expect_parse_error("{\"limits\": {\"openFiles\": 1e300}}", 'j',
			   "limits.openFiles: must be a positive integer up to 1048576");
	expect_parse_error("limits: {memoryMB: \"4096\"}\n", 'y',
			   "limits.memoryMB: expected a positive integer, got a string");
	expect_parse_error("limits: {memoryGB: 4}\n", 'y',
			   "limits: unknown key 'memoryGB' (known: cpuSeconds, memoryMB");
	expect_parse_error(
	    "limits: {sessionIdleSeconds: 0}\n", 'y',
	    "limits.sessionIdleSeconds: must be a positive integer up to 2678400, got 0");
	expect_parse_error("{\"limits\": {\"sessionIdleSeconds\": \"30m\"}}", 'j',
			   "limits.sessionIdleSeconds: expected a positive integer, got a string");
	expect_parse_error("limits: {sessionIdleSeconds: 2678401}\n", 'y',
			   "limits.sessionIdleSeconds: must be a positive integer up to 2678400");
	expect_parse_error(
	    "limits: {sessionIdle: 60}\n", 'y',
	    "limits: unknown key 'sessionIdle' (known: cpuSeconds, memoryMB, fileSizeMB, "
	    "openFiles, processes, wallSeconds, sessionIdleSeconds, connections, wildcardNames, "
	    "wildcardNamesPerMinute)");
	struct halo_policy *p = expect_parse_ok("limits: {sessionIdleSeconds: 600}\n", 'y');
	ck_assert_int_eq(p->limits.session_idle_seconds, 600);
	ck_assert_int_eq(p->limits.connections, POLICY_LIMIT_UNSET);
	policy_free(p);
	/* Issue 33: the proxy's limits, validated like the others. */
	expect_parse_error("limits: {connections: 0}\n", 'y',
			   "limits.connections: must be a positive integer up to 65536, got 0");
	expect_parse_error("limits: {connections: 65537}\n", 'y',
			   "limits.connections: must be a positive integer up to 65536");
	expect_parse_error("limits: {connections: -5}\n", 'y', "limits.connections: must be");
	expect_parse_error("limits: {connections: 2.5}\n", 'y',
			   "limits.connections: expected a positive integer, got 2.5");
	expect_parse_error("{\"limits\": {\"connections\": \"10\"}}", 'j',
			   "limits.connections: expected a positive integer, got a string");
	expect_parse_error("limits: {connections: 0x10}\n", 'y', "limits.connections: '0x10'");
	expect_parse_error("limits: {wildcardNames: 0}\n", 'y',
			   "limits.wildcardNames: must be a positive integer up to 1000000, got 0");
	expect_parse_error(
	    "limits: {wildcardNamesPerMinute: 1e9}\n", 'y',
	    "limits.wildcardNamesPerMinute: must be a positive integer up to 1000000");
	expect_parse_error("limits: {wildcardnames: 5}\n", 'y',
			   "limits: unknown key 'wildcardnames'");
	p = expect_parse_ok(
	    "limits: {connections: 8, wildcardNames: 5, wildcardNamesPerMinute: 3}\n", 'y');
	ck_assert_int_eq(p->limits.connections, 8);
	ck_assert_int_eq(p->limits.wildcard_names, 5);
	ck_assert_int_eq(p->limits.wildcard_names_per_minute, 3);
	policy_free(p);
}
END_TEST

START_TEST(duplicate_keys)
{
	expect_parse_error("sandbox:\n  mode: off\n  mode: read-only\n", 'y',
			   "t.yaml:3: sandbox: duplicate key 'mode' (first at line 2)");
	expect_parse_error("egress: {}\nsandbox: {}\negress: {}\n", 'y',
			   "t.yaml:3: duplicate key 'egress' (first at line 1)");
	expect_parse_error("{\"sandbox\": {\"mode\": \"off\", \"mode\": \"read-only\"}}", 'j',
			   "t.json: sandbox: duplicate key 'mode'");
	expect_parse_error("{\"env\": {\"set\": {\"A\": \"1\", \"B\": \"2\", \"A\": \"3\"}}}", 'j',
			   "t.json: env.set: duplicate key 'A'");
}
END_TEST

START_TEST(alias_bomb_and_anchors)
{
	const char *bomb = "a: &a [\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\"]\n"
			   "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
			   "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
			   "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
			   "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
			   "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n";

	expect_parse_error(bomb, 'y',
			   "t.yaml:1: YAML anchors are not allowed in a policy (anchor 'a')");
	expect_parse_error("egress:\n  deniedDomains: *list\n", 'y',
			   "t.yaml:2: YAML aliases are not allowed in a policy (alias 'list')");
	expect_parse_error("sandbox: &s {mode: off}\n", 'y', "anchor 's'");
	expect_parse_error("sandbox: {mode: !custom off}\n", 'y',
			   "YAML tags are not allowed in a policy (tag '!custom')");
	expect_parse_error("limits: {memoryMB: !!int 12}\n", 'y', "(tag 'tag:yaml.org,2002:int')");
	expect_parse_error("? [a, b]\n: c\n", 'y', "mapping keys must be strings");
	expect_parse_error("sandbox: {}\n---\negress: {}\n", 'y',
			   "t.yaml:2: more than one YAML document in a policy file");
}
END_TEST

START_TEST(caches_values)
{
	static const struct {
		const char *text;
		enum policy_caches want;
	} ok[] = {
	    {"sandbox: {caches: isolated}\n", POLICY_CACHES_ISOLATED},
	    {"sandbox: {caches: host}\n", POLICY_CACHES_HOST},
	    {"sandbox: {caches: off}\n", POLICY_CACHES_OFF},
	    {"sandbox: {mode: read-only}\n", POLICY_CACHES_UNSET},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct halo_policy *p = expect_parse_ok(ok[i].text, 'y');
		ck_assert_int_eq(p->caches, ok[i].want);
		policy_free(p);
	}
	expect_parse_error("sandbox: {caches: shared}\n", 'y',
			   "t.yaml:1: sandbox.caches: unknown value 'shared' (expected isolated, "
			   "host or off)");
	expect_parse_error("sandbox: {caches: Host}\n", 'y', "unknown value 'Host'");
	expect_parse_error("sandbox: {caches: false}\n", 'y', "sandbox.caches: expected a string");
	expect_parse_error("sandbox: {caches: [host]}\n", 'y', "sandbox.caches: expected a string");
	expect_parse_error("{\"sandbox\": {\"caches\": 1}}", 'j',
			   "sandbox.caches: expected a string");
}
END_TEST

START_TEST(unknown_keys)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	const char *text = "version: 2\nsandbox: {mode: read-only}\n";

	expect_parse_error(
	    "sandbox:\n  writeableRoots: [/opt/x]\n", 'y',
	    "t.yaml:2: sandbox: unknown key 'writeableRoots' (known: mode, "
	    "writableRoots, protectedPaths, allowRead, failIfUnavailable, guardPersistence, "
	    "caches, unixSockets, macos)");
	expect_parse_error("{\"egress\": {\"allowDomains\": []}}", 'j',
			   "t.json: egress: unknown key 'allowDomains' (known: default, "
			   "allowedDomains, presets, deniedDomains, allowPrivate, hostPorts, "
			   "upstreamProxy, trustedCAs, credentials, requestRules)");
	expect_parse_error("permissions: {network: none}\n", 'y',
			   "permissions: unknown key 'network' (known: sandbox)");
	/* A near miss of a block name would drop a whole block of rules. */
	expect_parse_error("egres:\n  default: deny\n", 'y',
			   "t.yaml:1: unknown top-level key 'egres': did you mean 'egress'?");
	expect_parse_error("Sandbox: {}\n", 'y', "did you mean 'sandbox'?");
	/* Anything else at the top is only a warning. */
	ck_assert_int_eq(policy_parse_buffer("t.yaml", text, strlen(text), 'y', &p, &d), 0);
	ck_assert_uint_eq(d.n_errors, 0);
	ck_assert_msg(pt_warn(&d, "t.yaml:1: unknown top-level key 'version' ignored"), "%s",
		      pt_dump(&d));
	ck_assert_int_eq(p->mode, POLICY_MODE_READ_ONLY);
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(hostile_strings)
{
	struct halo_policy *p;

	expect_parse_error(
	    "{\"egress\": {\"allowedDomains\": [\"evil.example\\u0000.good.example\"]}}", 'j',
	    "t.json:1: a string contains \\u0000 (NUL), which is not allowed");
	expect_parse_error("egress: {allowedDomains: [\"evil.example\\0.good\"]}\n", 'y',
			   "t.yaml:1: a value contains a NUL character");
	expect_parse_error("sandbox: {writableRoots: [\"/opt/a\\tb\"]}\n", 'y',
			   "sandbox.writableRoots[0]: '/opt/a\\x09b' contains a control character");
	expect_parse_error("gateway: \"\\e[31mred\"\n", 'y',
			   "gateway: '\\x1b[31mred' contains a control character");
	expect_parse_error("gateway: caf\xc3\n", 'y', "t.yaml:1: invalid UTF-8 at byte 12");
	expect_parse_error("{\"gateway\": \"\xed\xa0\x80\"}", 'j', "invalid UTF-8 at byte 13");
	expect_parse_error("{\"gateway\": \"\xc0\xaf\"}", 'j', "invalid UTF-8");
	/* Unknown keys are quoted and escaped in messages. */
	expect_parse_error("sandbox: {\"a\\x1b]0;pwn\\x07\": 1}\n", 'y',
			   "unknown key 'a\\x1b]0;pwn\\x07'");
	/* A UTF-8 byte order mark is fine in both formats. */
	p = expect_parse_ok("\xef\xbb\xbf{\"sandbox\": {\"mode\": \"off\"}}", 'j');
	ck_assert_int_eq(p->mode, POLICY_MODE_OFF);
	policy_free(p);
	p = expect_parse_ok("\xef\xbb\xbfsandbox: {mode: off}\n", 'y');
	ck_assert_int_eq(p->mode, POLICY_MODE_OFF);
	policy_free(p);
}
END_TEST

START_TEST(legacy_permissions)
{
	struct halo_policy *p;

	p = expect_parse_ok("permissions: {sandbox: read-only}\n", 'y');
	ck_assert_int_eq(p->mode, POLICY_MODE_READ_ONLY);
	ck_assert_str_eq(p->legacy_permissions_sandbox, "read-only");
	policy_free(p);
	p = expect_parse_ok("permissions: {sandbox: off}\nsandbox: {mode: off}\n", 'y');
	ck_assert_int_eq(p->mode, POLICY_MODE_OFF);
	policy_free(p);
	expect_parse_error(
	    "sandbox:\n  mode: workspace-write\npermissions:\n  sandbox: read-only\n", 'y',
	    "t.yaml:4: permissions.sandbox: 'read-only' disagrees with "
	    "sandbox.mode 'workspace-write'");
	expect_parse_error("permissions: {sandbox: none}\n", 'y',
			   "permissions.sandbox: unknown mode 'none'");
}
END_TEST

/* ------------------------------------------------------------ equivalence */

static char *load_json_text(const char *path, const struct policy_ctx *ctx)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	char *text;

	ck_assert_msg(policy_load(&path, 1, ctx, &p, &d) == 0, "%s:%s", path, pt_dump(&d));
	ck_assert_msg(d.n_warnings == 0, "%s:%s", path, pt_dump(&d));
	free(p->source);
	p->source = strdup("same");
	text = policy_to_json(p);
	ck_assert_ptr_nonnull(text);
	policy_free(p);
	policy_diags_free(&d);
	return text;
}

START_TEST(json_yaml_equivalence)
{
	static const char *const pairs[] = {"full", "denylist",	 "readonly",
					    "off",  "team-base", "project-loose"};

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		char y[128], j[128];
		char *ty, *tj;

		snprintf(y, sizeof(y), PT_DATA "%s.yaml", pairs[i]);
		snprintf(j, sizeof(j), PT_DATA "%s.json", pairs[i]);
		for (int c = 0; c < 2; c++) {
			ty = load_json_text(y, c ? &pt_ctx2 : &pt_ctx);
			tj = load_json_text(j, c ? &pt_ctx2 : &pt_ctx);
			ck_assert_msg(strcmp(ty, tj) == 0, "%s differs:\n%s\n----\n%s", pairs[i],
				      ty, tj);
			free(ty);
			free(tj);
		}
	}
}
END_TEST

START_TEST(full_policy_model)
{
	const char *path = PT_DATA "full.yaml";
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	ck_assert_int_eq(policy_load(&path, 1, &pt_ctx2, &p, &d), 0);
	ck_assert_int_eq(p->mode, POLICY_MODE_WORKSPACE_WRITE);
	ck_assert_uint_eq(p->writable_abs.n, 2);
	ck_assert_str_eq(p->writable_abs.items[1], "/home/alice/.cache/halo-build");
	/* The policy's own entries first, then the credential floor's. */
	ck_assert_uint_gt(p->protected_abs.n, 4);
	ck_assert_str_eq(p->protected_abs.items[0], "/home/alice/.ssh");
	ck_assert_str_eq(p->protected_abs.items[1], "/work/envhome/.ssh");
	ck_assert(pt_list_has(&p->protected_abs, "/work/envhome/.npmrc"));
	ck_assert_uint_eq(p->protected_globs.n, 2);
	ck_assert_str_eq(p->protected_globs.items[1], "*.pem");
	ck_assert_uint_eq(p->n_cidrs, 2);
	ck_assert_int_eq(p->cidrs[0].prefix, 16);
	ck_assert_int_eq(p->limits.memory_mb, 4096);
	ck_assert_int_eq(p->limits.wall_seconds, 900);
	ck_assert_uint_eq(p->host_ports.n, 2);
	ck_assert_uint_eq(p->host_ports.items[1], 5432);
	ck_assert_uint_eq(p->n_env_set, 2);
	ck_assert_str_eq(p->env_set[1].key, "LANG");
	ck_assert_str_eq(p->env_set[1].value, "C.UTF-8");
	ck_assert(!p->egress_default_allow);
	ck_assert_ptr_nonnull(p->index);
	ck_assert_str_eq(p->source, path);
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(embedded_default)
{
	struct policy_diags d = {0};
	struct halo_policy *p = policy_embedded_default();

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(p->mode, POLICY_MODE_WORKSPACE_WRITE);
	/* The credential stores are the floor's, under this policy as under any. */
	ck_assert_uint_eq(p->protected_paths.n, 0);
	ck_assert_int_eq(p->egress_default, POLICY_EGRESS_DENY);
	ck_assert_uint_eq(p->allowed_domains.n + p->presets.n + p->writable_roots.n, 0);
	ck_assert_str_eq(p->source, "embedded default");
	ck_assert_int_eq(policy_finalize(p, &pt_ctx, &d), 0);
	ck_assert_uint_eq(d.n_errors + d.n_warnings, 0);
	ck_assert(!p->egress_default_allow);
	ck_assert_uint_eq(p->protected_globs.n, 1);
	ck_assert_str_eq(p->protected_globs.items[0], ".env*");
	for (const char *const *w = (const char *const[]){"/home/alice/.ssh", "/home/alice/.aws",
							  "/home/alice/.docker/config.json",
							  "/home/alice/.git-credentials", NULL};
	     *w; w++)
		ck_assert_msg(pt_list_has(&p->protected_abs, *w), "%s missing", *w);
	policy_free(p);
	/* policy_load with no file is the embedded default, finalized. */
	ck_assert_int_eq(policy_load(NULL, 0, &pt_ctx2, &p, &d), 0);
	ck_assert_str_eq(p->source, "embedded default");
	ck_assert(pt_list_has(&p->protected_abs, "/work/envhome/.kube"));
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(load_reports_every_file)
{
	const char *paths[] = {PT_DATA "missing-one.yaml", PT_DATA "full.yaml",
			       PT_DATA "missing-two.json"};
	struct policy_diags d = {0};
	struct halo_policy *p = (void *)1;

	ck_assert_int_eq(policy_load(paths, 3, &pt_ctx, &p, &d), -EINVAL);
	ck_assert_ptr_null(p);
	ck_assert_uint_eq(d.n_errors, 2);
	ck_assert(pt_err(&d, "missing-one.yaml: cannot read"));
	ck_assert(pt_err(&d, "missing-two.json: cannot read"));
	policy_diags_free(&d);
}
END_TEST

/* Issue 24: a file with a field error is still validated: its type errors and its
 * validation errors (and a later file's) come out of one run. */
START_TEST(load_reports_every_stage)
{
	const char *ta = "sandbox:\n  bogus: 1\n  writableRoots: [relative]\n"
			 "egress:\n  allowedDomains: [Upper.example]\nlimits: {cpuSeconds: -1}\n",
		   *tb = "egress:\n  presets: [nope]\n";
	const char *a = tmp_file("a.yaml", ta, strlen(ta));
	char first[128];
	struct policy_diags d = {0};
	struct halo_policy *p = (void *)1;

	snprintf(first, sizeof(first), "%s", a);
	const char *b = tmp_file("b.yaml", tb, strlen(tb));
	const char *paths[] = {first, b};
	ck_assert_int_eq(policy_load(paths, 2, &pt_ctx, &p, &d), -EINVAL);
	ck_assert_ptr_null(p);
	ck_assert(pt_err(&d, "sandbox: unknown key 'bogus'"));
	ck_assert(pt_err(&d, "limits.cpuSeconds: must be a positive integer"));
	ck_assert(pt_err(&d, "sandbox.writableRoots[0]: 'relative' must be an absolute path"));
	ck_assert(pt_err(&d, "egress.allowedDomains[0]: 'Upper.example': upper case"));
	ck_assert(pt_err(&d, "egress.presets[0]: unknown preset 'nope'"));
	policy_diags_free(&d);
	/* A direct parse never hands out a partial policy. */
	p = (void *)1;
	ck_assert_int_eq(policy_parse_file(first, &p, &d), -EINVAL);
	ck_assert_ptr_null(p);
	policy_diags_free(&d);
}
END_TEST

/* A hostile file's flood of errors makes a bounded report: the first POLICY_DIAGS_MAX
 * kept, the rest counted; warnings (a loosening among them) are all kept. */
START_TEST(diags_errors_bounded)
{
	struct policy_diags d = {0};

	for (int i = 0; i < POLICY_DIAGS_MAX + 50; i++) {
		policy_diags_add_error(&d, "e%d", i);
		policy_diags_add_warning(&d, "w%d", i);
	}
	ck_assert_uint_eq(d.n_errors, POLICY_DIAGS_MAX);
	ck_assert_uint_eq(d.n_errors_more, 50);
	ck_assert_str_eq(d.errors[0], "e0");
	ck_assert_uint_eq(d.n_warnings, POLICY_DIAGS_MAX + 50);
	policy_diags_free(&d);
	ck_assert_uint_eq(d.n_errors_more, 0);
}
END_TEST

/* policy_to_text (a session call's identity) walks what policy_to_json walks: the
 * compact text parses to the same tree, quotes, backslashes, control and non-ASCII
 * characters included; and policies that differ give texts that differ. */
START_TEST(to_text_matches_to_json)
{
	static const char *const docs[] = {
	    "{}\n",
	    "egress: {default: deny, presets: [package-registries, vcs, vcs], hostPorts: [4873]}\n"
	    "sandbox: {writableRoots: [~/c], protectedPaths: [~/.ssh, '.env*', 'a\"b\\\\c'],"
	    " allowRead: [~/.aws/config]}\n"
	    "limits: {memoryMB: 100, wallSeconds: 5}\n"
	    "env: {pass: [GOPATH], set: {A: \"q\\\"u\\\\o\\te\\x01\\u00e9\"}}\n",
	    "egress:\n  allowedDomains: [a.example]\n  credentials:\n"
	    "    - {host: a.example, header: Authorization, value: 'Bearer ${TOK}'}\n"
	    "  requestRules:\n    - {host: a.example, methods: [GET], paths: ['/x/*']}\n",
	    "egress:\n  allowedDomains: [a.example]\n  credentials:\n"
	    "    - {host: a.example, header: Authorization, value: 'Bearer ${TOK2}'}\n"
	    "  requestRules:\n    - {host: a.example, methods: [GET], paths: ['/x/*']}\n",
	    "sandbox: {mode: read-only}\n",
	};
	enum { N = sizeof(docs) / sizeof(docs[0]) };
	char *seen[N];

	for (size_t i = 0; i < N; i++) {
		struct policy_diags d = {0};
		struct halo_policy *p = NULL;
		char *json, *text;
		cJSON *a, *b;

		ck_assert_msg(pt_load(docs[i], &p, &d) == 0, "doc %zu", i);
		ck_assert_ptr_nonnull(json = policy_to_json(p));
		ck_assert_ptr_nonnull(text = policy_to_text(p));
		ck_assert_ptr_nonnull(a = cJSON_Parse(json));
		ck_assert_msg((b = cJSON_Parse(text)) != NULL, "doc %zu: %s", i, text);
		ck_assert_msg(cJSON_Compare(a, b, true), "doc %zu: %s\nvs %s", i, json, text);
		for (size_t k = 0; k < i; k++)
			ck_assert_str_ne(seen[k], text);
		seen[i] = text;
		cJSON_Delete(a);
		cJSON_Delete(b);
		free(json);
		policy_free(p);
		policy_diags_free(&d);
	}
	for (size_t i = 0; i < N; i++)
		free(seen[i]);
}
END_TEST

START_TEST(to_json_expands_presets)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL, *again = NULL;
	char *text, *text2;

	ck_assert_int_eq(pt_load("egress: {presets: [package-registries]}\n", &p, &d), 0);
	text = policy_to_json(p);
	ck_assert_ptr_nonnull(strstr(text, "\"egressDefaultFrom\":\t\"unset, with an allowlist"));
	free(text);
	policy_free(p);
	ck_assert_int_eq(
	    pt_load(
		"egress: {default: deny, presets: [package-registries], hostPorts: [4873, 22]}\n"
		"sandbox: {writableRoots: [~/c], protectedPaths: [~/.ssh, .env*]}\n"
		"limits: {memoryMB: 100}\nenv: {set: {A: b}}\n",
		&p, &d),
	    0);
	text = policy_to_json(p);
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(strstr(text, "\"egressDefault\":\t\"deny\""));
	ck_assert_ptr_nonnull(strstr(text, "\"pattern\":\t\"registry.npmjs.org\""));
	ck_assert_ptr_nonnull(strstr(text, "\"pattern\":\t\"api.nuget.org\""));
	ck_assert_ptr_nonnull(strstr(text, "\"source\":\t\"Go module proxy\""));
	ck_assert_ptr_nonnull(strstr(text, "\"hostPorts\":\t[4873, 22]"));
	/* The output loads back as the same policy ("effective" is only a warning). */
	ck_assert_int_eq(policy_parse_buffer("again.json", text, strlen(text), 0, &again, &d), 0);
	ck_assert(pt_warn(&d, "again.json: unknown top-level key 'effective' ignored"));
	ck_assert_int_eq(policy_finalize(again, &pt_ctx, &d), 0);
	free(again->source);
	again->source = strdup(p->source);
	text2 = policy_to_json(again);
	ck_assert_str_eq(text, text2);
	free(text);
	free(text2);
	policy_free(p);
	policy_free(again);
	policy_diags_free(&d);
}
END_TEST

static Suite *load_suite(void)
{
	Suite *s = suite_create("policy_load");
	TCase *files = tcase_create("files"), *parse = tcase_create("parse");
	TCase *model = tcase_create("model");

	tcase_add_checked_fixture(files, tmp_setup, tmp_teardown);
	tcase_add_test(files, load_reports_every_stage);
	tcase_add_test(files, missing_file);
	tcase_add_test(files, directory);
	tcase_add_test(files, fifo_does_not_block);
	tcase_add_test(files, device);
	tcase_add_test(files, empty_file);
	tcase_add_test(files, nul_bytes);
	tcase_add_test(files, too_large);
	tcase_add_test(files, unreadable_when_not_root);
	tcase_add_test(files, format_from_extension_and_content);
	tcase_add_test(parse, truncated);
	tcase_add_test(parse, deep_nesting);
	tcase_add_test(parse, nesting_at_the_limit_is_only_a_type_error);
	tcase_add_test(parse, wrong_types);
	tcase_add_loop_test(parse, host_ports_hostile, 0,
			    (int)(sizeof(host_port_cases) / sizeof(host_port_cases[0])));
	tcase_add_test(parse, host_ports_both_formats);
	tcase_add_test(parse, every_type_error_is_reported);
	tcase_add_test(parse, enum_values);
	tcase_add_test(parse, yaml11_booleans_and_numbers);
	tcase_add_test(parse, limits_bounds);
	tcase_add_test(parse, duplicate_keys);
	tcase_add_test(parse, alias_bomb_and_anchors);
	tcase_add_test(parse, unknown_keys);
	tcase_add_test(parse, caches_values);
	tcase_add_test(parse, hostile_strings);
	tcase_add_test(parse, legacy_permissions);
	tcase_add_test(model, json_yaml_equivalence);
	tcase_add_test(model, full_policy_model);
	tcase_add_test(model, embedded_default);
	tcase_add_test(model, load_reports_every_file);
	tcase_add_test(model, to_json_expands_presets);
	tcase_add_test(model, to_text_matches_to_json);
	tcase_add_test(model, diags_errors_bounded);
	suite_add_tcase(s, files);
	suite_add_tcase(s, parse);
	suite_add_tcase(s, model);
	return s;
}

UNIT_MAIN(load_suite)
