/* rlimits: the --limit parser against hostile input (every error message exact, the
 * set untouched on failure), the accepted forms, the --timeout durations, the
 * tighten-only rule for the command line, the policy conversions, setrlimit in a forked
 * child (values read back, hard limits never raised, memory as RLIMIT_DATA and never
 * RLIMIT_AS), and the --dry-run lines. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rlimits/rlimits.h"
#include "tests/unit/unit.h"

#define ROWS(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define MIB	(1024LL * 1024)
#define GIB	(1024LL * MIB)
#define KNOWN	"(known: cpu, mem, fsize, nofile, nproc, wall)"

struct bad_row {
	const char *spec;
	const char *msg; /* the exact message */
};

static const struct bad_row bad_rows[] = {
    {"", "empty limit list; expected KEY=VALUE[,KEY=VALUE...] with keys cpu, mem, fsize, "
	 "nofile, nproc, wall"},
    {",", "empty item (stray comma?)"},
    {"cpu=2,", "empty item (stray comma?)"},
    {",cpu=2", "empty item (stray comma?)"},
    {"cpu=2,,mem=1M", "empty item (stray comma?)"},
    {"cpu", "'cpu': expected KEY=VALUE"},
    {"=2", "'=2': missing key before '='"},
    {"cpu=", "cpu: empty value; expected seconds, or a number with an s, m or h suffix"},
    {"bogus=1", "unknown key 'bogus' " KNOWN},
    {"CPU=2", "unknown key 'CPU' " KNOWN},
    {"memoryMB=512", "unknown key 'memoryMB': here it is spelled mem " KNOWN},
    {"cpuSeconds=2", "unknown key 'cpuSeconds': here it is spelled cpu " KNOWN},
    {"cpu=2,cpu=3", "cpu given twice"},
    {"cpu=2,mem=1G,cpu=2", "cpu given twice"},
    {"cpu=0", "cpu=0: must be greater than zero"},
    {"nofile=0", "nofile=0: must be greater than zero"},
    {"mem=0M", "mem=0M: must be greater than zero"},
    {"cpu=-1", "cpu=-1: not a number; expected seconds, or a number with an s, m or h suffix"},
    {"nproc=+1", "nproc=+1: not a number; expected a plain count"},
    {"cpu=1.5", "cpu=1.5: unexpected '.5'; expected seconds, or a number with an s, m or h "
		"suffix"},
    {"cpu=0x10", "cpu=0x10: unexpected 'x10'; expected seconds, or a number with an s, m or h "
		 "suffix"},
    {"cpu=010", "cpu=010: leading zero"},
    {" cpu=2", "whitespace, control or non-ASCII character at offset 0"},
    {"cpu=2 ", "whitespace, control or non-ASCII character at offset 5"},
    {"cpu =2", "whitespace, control or non-ASCII character at offset 3"},
    {"cpu=\t2", "whitespace, control or non-ASCII character at offset 4"},
    {"cpu=2\n", "whitespace, control or non-ASCII character at offset 5"},
    {"mem=1\xc3\xa9", "whitespace, control or non-ASCII character at offset 5"},
    {"mem=99999999999999999999", "mem=99999999999999999999: too large (at most "
				 "9223372036854775807 bytes)"},
    {"mem=8589934592G", "mem=8589934592G: too large (at most 9223372036854775807 bytes)"},
    {"fsize=9223372036854775808", "fsize=9223372036854775808: too large (at most "
				  "9223372036854775807 bytes)"},
    {"cpu=31536001", "cpu=31536001: too large (at most 31536000 s)"},
    {"wall=8761h", "wall=8761h: too large (at most 31536000 s)"},
    {"nproc=1073741825", "nproc=1073741825: too large (at most 1073741824)"},
    {"nofile=10K", "nofile=10K: unexpected 'K'; expected a plain count"},
    {"cpu=10K", "cpu=10K: unexpected 'K'; expected seconds, or a number with an s, m or h "
		"suffix"},
    {"mem=10s", "mem=10s: unexpected 's'; expected a byte count with an optional K, M or G "
		"suffix"},
    {"mem=10MB", "mem=10MB: unexpected 'MB'; expected a byte count with an optional K, M or G "
		 "suffix"},
    {"mem=K", "mem=K: not a number; expected a byte count with an optional K, M or G suffix"},
    {"mem=512", "mem=512: below the minimum of 1048576 bytes (did you mean 512M?)"},
    {"mem=512K", "mem=512K: below the minimum of 1048576 bytes"},
    {"cpu=2=3", "cpu=2=3: unexpected '=3'; expected seconds, or a number with an s, m or h "
		"suffix"},
    {"cpu=2;mem=1M", "cpu=2;mem=1M: unexpected ';mem=1M'; expected seconds, or a number with "
		     "an s, m or h suffix"},
    /* compound durations */
    {"wall=1h1h", "wall=1h1h: units must come in the order h, m, s, each once"},
    {"wall=30m1h", "wall=30m1h: units must come in the order h, m, s, each once"},
    {"wall=1s1s", "wall=1s1s: units must come in the order h, m, s, each once"},
    {"wall=1h30", "wall=1h30: '30' needs a unit (h, m or s)"},
    {"wall=1hm", "wall=1hm: unexpected 'm'; expected seconds, or a number with "
		 "an s, m or h suffix"},
    {"wall=1h-5m", "wall=1h-5m: unexpected '-5m'; expected seconds, or a number "
		   "with an s, m or h suffix"},
    {"wall=1h05m", "wall=1h05m: leading zero"},
    {"wall=0h0m", "wall=0h0m: must be greater than zero"},
    {"wall=8760h1s", "wall=8760h1s: too large (at most 31536000 s)"},
    {"wall=1h99999999999999999999s", "wall=1h99999999999999999999s: too large (at most "
				     "31536000 s)"},
    {"cpu=1d", "cpu=1d: unexpected 'd'; expected seconds, or a number with an s, m or h "
	       "suffix"},
    {"cpu=1H", "cpu=1H: unexpected 'H'; expected seconds, or a number with an s, m or h "
	       "suffix"},
};

static void fill_sentinel(struct rlimits_set *r)
{
	r->cpu_seconds = 11;
	r->memory_bytes = 22;
	r->file_size_bytes = 33;
	r->open_files = 44;
	r->processes = 55;
	r->wall_seconds = 66;
	r->memory_via = RLIMITS_MEM_DATA;
}

START_TEST(parse_refuses)
{
	const struct bad_row *row = &bad_rows[_i];
	struct rlimits_set r, before;
	struct halo_err e = {{0}};

	fill_sentinel(&r);
	before = r;
	ck_assert_int_eq(rlimits_parse_override(row->spec, &r, &e), -EINVAL);
	ck_assert_str_eq(e.msg, row->msg);
	ck_assert_mem_eq(&r, &before, sizeof(r));
}
END_TEST

START_TEST(parse_refuses_long_and_null)
{
	char spec[1100];
	struct rlimits_set r, before;
	struct halo_err e = {{0}};

	memset(spec, 'a', sizeof(spec) - 1);
	spec[sizeof(spec) - 1] = '\0';
	fill_sentinel(&r);
	before = r;
	ck_assert_int_eq(rlimits_parse_override(spec, &r, &e), -EINVAL);
	ck_assert_str_eq(e.msg, "limit list longer than 1024 bytes");
	ck_assert_int_eq(rlimits_parse_override(NULL, &r, &e), -EINVAL);
	ck_assert_mem_eq(&r, &before, sizeof(r));
	/* a long unknown key is quoted, but only its first 64 bytes */
	memset(spec, 'k', 200);
	strcpy(spec + 200, "=1");
	ck_assert_int_eq(rlimits_parse_override(spec, &r, &e), -EINVAL);
	ck_assert_int_eq((int)strlen(e.msg), (int)strlen("unknown key '' " KNOWN) + 64);
}
END_TEST

struct good_row {
	const char *spec;
	struct rlimits_set want; /* cpu, mem, fsize, nofile, nproc, wall */
};

#define U RLIMITS_UNSET
#define D RLIMITS_MEM_DATA

static const struct good_row good_rows[] = {
    {"cpu=2,mem=512M,fsize=10M,nofile=256,nproc=64", {2, 512 * MIB, 10 * MIB, 256, 64, U, D}},
    {"wall=30", {U, U, U, U, U, 30, D}},
    {"cpu=5s", {5, U, U, U, U, U, D}},
    {"cpu=2m", {120, U, U, U, U, U, D}},
    {"wall=1h", {U, U, U, U, U, 3600, D}},
    {"mem=1G", {U, GIB, U, U, U, U, D}},
    {"mem=2g", {U, 2 * GIB, U, U, U, U, D}},
    {"mem=1048576", {U, MIB, U, U, U, U, D}},
    {"mem=1024K", {U, MIB, U, U, U, U, D}},
    {"fsize=1", {U, U, 1, U, U, U, D}},
    {"fsize=10k", {U, U, 10240, U, U, U, D}},
    {"fsize=3m", {U, U, 3 * MIB, U, U, U, D}},
    {"nproc=1073741824", {U, U, U, U, 1073741824LL, U, D}},
    {"cpu=31536000", {31536000, U, U, U, U, U, D}},
    {"wall=8760h", {U, U, U, U, U, 31536000, D}},
    {"mem=8589934591G", {U, 8589934591LL * GIB, U, U, U, U, D}},
    {"fsize=9223372036854775807", {U, U, LLONG_MAX, U, U, U, D}},
    {"nofile=1,nproc=1,cpu=1,wall=1,fsize=1,mem=1M", {1, MIB, 1, 1, 1, 1, D}},
    {"wall=1h30m", {U, U, U, U, U, 5400, D}},
    {"cpu=2m30s", {150, U, U, U, U, U, D}},
    {"wall=1h0m5s", {U, U, U, U, U, 3605, D}},
    {"wall=1h5s", {U, U, U, U, U, 3605, D}},
    {"wall=0h5m", {U, U, U, U, U, 300, D}},
    {"wall=8759h59m60s", {U, U, U, U, U, 31536000, D}},
};

START_TEST(parse_accepts)
{
	const struct good_row *row = &good_rows[_i];
	struct rlimits_set r;
	struct halo_err e = {{0}};

	rlimits_init(&r);
	ck_assert_msg(rlimits_parse_override(row->spec, &r, &e) == 0, "%s: %s", row->spec, e.msg);
	ck_assert_int_eq(r.cpu_seconds, row->want.cpu_seconds);
	ck_assert_int_eq(r.memory_bytes, row->want.memory_bytes);
	ck_assert_int_eq(r.file_size_bytes, row->want.file_size_bytes);
	ck_assert_int_eq(r.open_files, row->want.open_files);
	ck_assert_int_eq(r.processes, row->want.processes);
	ck_assert_int_eq(r.wall_seconds, row->want.wall_seconds);
}
END_TEST

START_TEST(override_keeps_the_rest)
{
	struct policy_limits pl = {
	    60, 4096, 1024, 1024, 512, 900, POLICY_LIMIT_UNSET, .connections = POLICY_LIMIT_UNSET};
	struct rlimits_set r;
	struct halo_err e = {{0}};

	rlimits_from_policy(&pl, &r);
	ck_assert_int_eq(rlimits_parse_override("cpu=3,nofile=64", &r, &e), 0);
	ck_assert_int_eq(r.cpu_seconds, 3);
	ck_assert_int_eq(r.open_files, 64);
	ck_assert_int_eq(r.memory_bytes, 4096 * MIB);
	ck_assert_int_eq(r.file_size_bytes, 1024 * MIB);
	ck_assert_int_eq(r.processes, 512);
	ck_assert_int_eq(r.wall_seconds, 900);
}
END_TEST

/* ---------------------------------------------------------------- --timeout */

struct timeout_row {
	const char *text;
	long long want; /* seconds, or 0: refused with msg */
	const char *msg;
};

#define SECS_HELP "expected seconds, or a number with an s, m or h suffix"

static const struct timeout_row timeout_rows[] = {
    {"90", 90, NULL},
    {"90s", 90, NULL},
    {"1m", 60, NULL},
    {"1h30m", 5400, NULL},
    {"2m30s", 150, NULL},
    {"8760h", 31536000, NULL},
    {"31536000", 31536000, NULL},
    {"", 0, "--timeout: empty value; " SECS_HELP},
    {"0", 0, "--timeout 0: must be greater than zero"},
    {"0s", 0, "--timeout 0s: must be greater than zero"},
    {"-1", 0, "--timeout -1: not a number; " SECS_HELP},
    {"+5", 0, "--timeout +5: not a number; " SECS_HELP},
    {"1x", 0, "--timeout 1x: unexpected 'x'; " SECS_HELP},
    {"1.5", 0, "--timeout 1.5: unexpected '.5'; " SECS_HELP},
    {"1e3", 0, "--timeout 1e3: unexpected 'e3'; " SECS_HELP},
    {"0x10", 0, "--timeout 0x10: unexpected 'x10'; " SECS_HELP},
    {"010", 0, "--timeout 010: leading zero"},
    {"m", 0, "--timeout m: not a number; " SECS_HELP},
    {"1M", 0, "--timeout 1M: unexpected 'M'; " SECS_HELP},
    {"1h1h", 0, "--timeout 1h1h: units must come in the order h, m, s, each once"},
    {"30s1m", 0, "--timeout 30s1m: units must come in the order h, m, s, each once"},
    {"1m30", 0, "--timeout 1m30: '30' needs a unit (h, m or s)"},
    {"wall=1m", 0, "--timeout wall=1m: not a number; " SECS_HELP},
    {"1m,cpu=1", 0, "--timeout 1m,cpu=1: unexpected ',cpu=1'; " SECS_HELP},
    {"31536001", 0, "--timeout 31536001: too large (at most 31536000 s)"},
    {"8761h", 0, "--timeout 8761h: too large (at most 31536000 s)"},
    {"99999999999999999999", 0, "--timeout 99999999999999999999: too large (at most 31536000 s)"},
    {" 1m", 0, "--timeout: whitespace, control or non-ASCII character at offset 0"},
    {"1m ", 0, "--timeout: whitespace, control or non-ASCII character at offset 2"},
    {"1m\n", 0, "--timeout: whitespace, control or non-ASCII character at offset 2"},
    {"1m;reboot", 0, "--timeout 1m;reboot: unexpected ';reboot'; " SECS_HELP},
    {"\xff", 0, "--timeout: whitespace, control or non-ASCII character at offset 0"},
};

START_TEST(timeout_grammar)
{
	const struct timeout_row *row = &timeout_rows[_i];
	struct rlimits_set r, before;
	struct halo_err e = {{0}};
	int rc;

	rlimits_init(&r);
	before = r;
	rc = rlimits_parse_timeout(row->text, NULL, &r, &e);
	if (row->want) {
		ck_assert_msg(rc == 0, "%s: %s", row->text, e.msg);
		ck_assert_int_eq(r.wall_seconds, row->want);
		return;
	}
	ck_assert_int_eq(rc, -EINVAL);
	ck_assert_str_eq(e.msg, row->msg);
	ck_assert_mem_eq(&r, &before, sizeof(r));
}
END_TEST

START_TEST(timeout_long_and_with_limit)
{
	char text[1100];
	struct rlimits_set r;
	struct halo_err e = {{0}};

	memset(text, '1', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	rlimits_init(&r);
	ck_assert_int_eq(rlimits_parse_timeout(text, NULL, &r, &e), -EINVAL);
	ck_assert_str_eq(e.msg, "--timeout: --timeout value longer than 1024 bytes");
	ck_assert_int_eq(rlimits_parse_timeout(NULL, NULL, &r, &e), -EINVAL);
	ck_assert_int_eq(r.wall_seconds, RLIMITS_UNSET);
	/* --limit wall= and --timeout together: the shorter one holds */
	r.wall_seconds = 30;
	ck_assert_int_eq(rlimits_parse_timeout("1m", NULL, &r, &e), 0);
	ck_assert_int_eq(r.wall_seconds, 30);
	ck_assert_int_eq(rlimits_parse_timeout("10", NULL, &r, &e), 0);
	ck_assert_int_eq(r.wall_seconds, 10);
}
END_TEST

/* ---------------------------------------------------------------- tighten only */

struct tighten_row {
	const char *limit;   /* --limit spec, or NULL */
	const char *timeout; /* --timeout, or NULL */
	int rc;
	const char *msg; /* when refused */
};

#define ONLY "; the command line may only tighten limits"

/* The policy: cpuSeconds 60, memoryMB 4096, fileSizeMB 10, openFiles 256, processes and
 * wallSeconds unset... except for the rows that say otherwise (wall 900 below). */
static const struct tighten_row tighten_rows[] = {
    {"mem=1G", NULL, 0, NULL},
    {"mem=4G", NULL, 0, NULL}, /* equal is not a loosening */
    {"mem=4097M", NULL, -EPERM,
     "--limit mem=4097M exceeds the policy's limits.memoryMB (4096)" ONLY},
    {"mem=8G", NULL, -EPERM, "--limit mem=8G exceeds the policy's limits.memoryMB (4096)" ONLY},
    {"cpu=1m", NULL, 0, NULL},
    {"cpu=61", NULL, -EPERM, "--limit cpu=61 exceeds the policy's limits.cpuSeconds (60)" ONLY},
    {"cpu=1h", NULL, -EPERM, "--limit cpu=1h exceeds the policy's limits.cpuSeconds (60)" ONLY},
    {"fsize=11M", NULL, -EPERM,
     "--limit fsize=11M exceeds the policy's limits.fileSizeMB (10)" ONLY},
    {"nofile=64,nproc=100000", NULL, 0, NULL}, /* processes: unset in the policy */
    {"nofile=257", NULL, -EPERM,
     "--limit nofile=257 exceeds the policy's limits.openFiles (256)" ONLY},
    {"cpu=30,nofile=1000", NULL, -EPERM,
     "--limit nofile=1000 exceeds the policy's limits.openFiles (256)" ONLY},
    {"wall=15m", NULL, 0, NULL},
    {"wall=901", NULL, -EPERM,
     "--limit wall=901 exceeds the policy's limits.wallSeconds (900)" ONLY},
    {NULL, "15m", 0, NULL},
    {NULL, "1h", -EPERM, "--timeout 1h exceeds the policy's limits.wallSeconds (900)" ONLY},
    {NULL, "15m1s", -EPERM, "--timeout 15m1s exceeds the policy's limits.wallSeconds (900)" ONLY},
    {"wall=10", "1h", -EPERM, "--timeout 1h exceeds the policy's limits.wallSeconds (900)" ONLY},
    {"mem=9", NULL, -EINVAL, "mem=9: below the minimum of 1048576 bytes (did you mean 9M?)"},
};

START_TEST(tighten_only)
{
	const struct tighten_row *row = &tighten_rows[_i];
	struct policy_limits pl = {60,
				   4096,
				   10,
				   256,
				   POLICY_LIMIT_UNSET,
				   900,
				   POLICY_LIMIT_UNSET,
				   .connections = POLICY_LIMIT_UNSET};
	struct rlimits_set policy, r;
	struct halo_err e = {{0}};
	int rc = 0;

	rlimits_from_policy(&pl, &policy);
	r = policy;
	if (row->limit)
		rc = rlimits_parse_cli(row->limit, &policy, &r, &e);
	if (rc == 0 && row->timeout)
		rc = rlimits_parse_timeout(row->timeout, &policy, &r, &e);
	ck_assert_msg(rc == row->rc, "%s %s: rc %d (%s)", row->limit ? row->limit : "",
		      row->timeout ? row->timeout : "", rc, e.msg);
	if (rc < 0) {
		ck_assert_str_eq(e.msg, row->msg);
		return;
	}
	/* whatever was accepted is at most the policy's */
	ck_assert_int_le(r.cpu_seconds, policy.cpu_seconds);
	ck_assert_int_le(r.memory_bytes, policy.memory_bytes);
	ck_assert_int_le(r.file_size_bytes, policy.file_size_bytes);
	ck_assert_int_le(r.open_files, policy.open_files);
	ck_assert_int_le(r.wall_seconds, policy.wall_seconds);
}
END_TEST

START_TEST(tighten_refusal_changes_nothing)
{
	struct policy_limits pl = {60,
				   4096,
				   10,
				   256,
				   POLICY_LIMIT_UNSET,
				   900,
				   POLICY_LIMIT_UNSET,
				   .connections = POLICY_LIMIT_UNSET};
	struct rlimits_set policy, r;
	struct halo_err e = {{0}};

	rlimits_from_policy(&pl, &policy);
	r = policy;
	ck_assert_int_eq(rlimits_parse_cli("cpu=10,mem=8G", &policy, &r, &e), -EPERM);
	ck_assert_mem_eq(&r, &policy, sizeof(r));
	ck_assert_int_eq(rlimits_parse_timeout("2h", &policy, &r, &e), -EPERM);
	ck_assert_mem_eq(&r, &policy, sizeof(r));
	/* no policy limits at all: anything goes */
	rlimits_init(&policy);
	r = policy;
	ck_assert_int_eq(rlimits_parse_cli("mem=64G,cpu=8760h", &policy, &r, &e), 0);
	ck_assert_int_eq(rlimits_parse_timeout("8760h", &policy, &r, &e), 0);
	ck_assert_int_eq(r.wall_seconds, 31536000);
}
END_TEST

START_TEST(from_policy)
{
	struct policy_limits pl = {
	    60, 4096, 1024, 1024, 1024, 900, POLICY_LIMIT_UNSET, .connections = POLICY_LIMIT_UNSET};
	struct policy_limits unset = {POLICY_LIMIT_UNSET, POLICY_LIMIT_UNSET,
				      POLICY_LIMIT_UNSET, POLICY_LIMIT_UNSET,
				      POLICY_LIMIT_UNSET, POLICY_LIMIT_UNSET,
				      POLICY_LIMIT_UNSET, .connections = POLICY_LIMIT_UNSET};
	struct policy_limits odd = {0, LLONG_MAX / 2, -5, 0, -1, 0, 0, .connections = 0};
	struct rlimits_set r;

	rlimits_from_policy(&pl, &r);
	ck_assert_int_eq(r.cpu_seconds, 60);
	ck_assert_int_eq(r.memory_bytes, 4294967296LL);
	ck_assert_int_eq(r.file_size_bytes, 1073741824LL);
	ck_assert_int_eq(r.open_files, 1024);
	ck_assert_int_eq(r.processes, 1024);
	ck_assert_int_eq(r.wall_seconds, 900);

	rlimits_from_policy(&unset, &r);
	ck_assert_int_eq(r.cpu_seconds, RLIMITS_UNSET);
	ck_assert_int_eq(r.memory_bytes, RLIMITS_UNSET);
	ck_assert_int_eq(r.file_size_bytes, RLIMITS_UNSET);
	ck_assert_int_eq(r.open_files, RLIMITS_UNSET);
	ck_assert_int_eq(r.processes, RLIMITS_UNSET);
	ck_assert_int_eq(r.wall_seconds, RLIMITS_UNSET);

	/* never valid after policy validation, but must not wrap: saturate or unset */
	rlimits_from_policy(&odd, &r);
	ck_assert_int_eq(r.cpu_seconds, RLIMITS_UNSET);
	ck_assert_int_eq(r.memory_bytes, LLONG_MAX);
	ck_assert_int_eq(r.file_size_bytes, RLIMITS_UNSET);
	ck_assert_int_eq(r.processes, RLIMITS_UNSET);
}
END_TEST

/* ---------------------------------------------------------------- apply */

/* Run `fn` in a child; it returns 0 or a line number to report. */
static void in_child(int (*fn)(void))
{
	int ws = 0;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(fn());
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	ck_assert_msg(WIFEXITED(ws), "child died of signal %d", WTERMSIG(ws));
	ck_assert_msg(WEXITSTATUS(ws) == 0, "child check failed at line %d (mod 256)",
		      WEXITSTATUS(ws));
}

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			return __LINE__ % 256 ? __LINE__ % 256 : 1;                                \
	} while (0)

static int limit_is(int res, rlim_t soft, rlim_t hard)
{
	struct rlimit l;

	return getrlimit(res, &l) == 0 && l.rlim_cur == soft && l.rlim_max == hard;
}

/* What the value becomes under the hard limit the test runner already has. */
static rlim_t under_hard(int res, rlim_t v)
{
	struct rlimit l = {0, 0};

	getrlimit(res, &l);
	return v < l.rlim_max ? v : l.rlim_max;
}

static int apply_values(void)
{
	struct rlimits_set r;
	struct halo_err e = {{0}};
	struct rlimit nofile_hard = {100, 200};
	/* 128 TiB: the whole x86_64 user space, so even a sanitizer's shadow fits */
	rlim_t data = under_hard(RLIMIT_DATA, (rlim_t)128 * 1024 * GIB);
	struct rlimit as_before;
	rlim_t fsize = under_hard(RLIMIT_FSIZE, 10 * MIB);
	rlim_t nproc = under_hard(RLIMIT_NPROC, 4000);
	rlim_t cpu_hard = under_hard(RLIMIT_CPU, 301);

	/* a host hard limit lower than what is asked: kept, never raised */
	CHECK(setrlimit(RLIMIT_NOFILE, &nofile_hard) == 0);
	CHECK(getrlimit(RLIMIT_AS, &as_before) == 0);
	rlimits_init(&r);
	r.cpu_seconds = 300;
	r.memory_bytes = (long long)128 * 1024 * GIB;
	r.file_size_bytes = 10 * MIB;
	r.open_files = 256;
	r.processes = 4000;
	r.wall_seconds = 5; /* not an rlimit */
	CHECK(rlimits_apply(&r, &e) == 0);
	CHECK(limit_is(RLIMIT_CORE, 0, 0));
	CHECK(limit_is(RLIMIT_CPU, cpu_hard < 300 ? cpu_hard : 300, cpu_hard));
	CHECK(limit_is(RLIMIT_DATA, data, data));
	CHECK(limit_is(RLIMIT_AS, as_before.rlim_cur, as_before.rlim_max));
	CHECK(limit_is(RLIMIT_FSIZE, fsize, fsize));
	CHECK(limit_is(RLIMIT_NOFILE, 200, 200));
	CHECK(limit_is(RLIMIT_NPROC, nproc, nproc));
	/* applying again with lower values lowers; higher ones stay clamped */
	r.open_files = 50;
	r.file_size_bytes = 20 * MIB;
	CHECK(rlimits_apply(&r, &e) == 0);
	CHECK(limit_is(RLIMIT_NOFILE, 50, 50));
	CHECK(limit_is(RLIMIT_FSIZE, fsize, fsize));
	return 0;
}

static int apply_unset_keeps_host(void)
{
	struct rlimits_set r;
	struct halo_err e = {{0}};
	struct rlimit as_before, as_after, fs = {RLIM_INFINITY, RLIM_INFINITY};

	CHECK(getrlimit(RLIMIT_AS, &as_before) == 0);
	setrlimit(RLIMIT_FSIZE, &fs); /* may fail unprivileged; then it is already lower */
	CHECK(getrlimit(RLIMIT_FSIZE, &fs) == 0);
	rlimits_init(&r);
	CHECK(rlimits_apply(&r, &e) == 0);
	CHECK(limit_is(RLIMIT_CORE, 0, 0));
	CHECK(getrlimit(RLIMIT_AS, &as_after) == 0);
	CHECK(as_after.rlim_cur == as_before.rlim_cur && as_after.rlim_max == as_before.rlim_max);
	CHECK(limit_is(RLIMIT_FSIZE, fs.rlim_cur, fs.rlim_max));
	return 0;
}

/* The CPU hard limit sits one second above the soft one, but never above the host's. */
static int apply_cpu_clamped(void)
{
	struct rlimits_set r;
	struct halo_err e = {{0}};
	struct rlimit cpu = {5, 30};

	CHECK(setrlimit(RLIMIT_CPU, &cpu) == 0);
	rlimits_init(&r);
	r.cpu_seconds = 30;
	CHECK(rlimits_apply(&r, &e) == 0);
	CHECK(limit_is(RLIMIT_CPU, 30, 30));
	r.cpu_seconds = 60;
	CHECK(rlimits_apply(&r, &e) == 0);
	CHECK(limit_is(RLIMIT_CPU, 30, 30));
	r.cpu_seconds = 10;
	CHECK(rlimits_apply(&r, &e) == 0);
	CHECK(limit_is(RLIMIT_CPU, 10, 11));
	return 0;
}

/* A file-size limit is really enforced: the write past it fails with EFBIG. */
static int apply_fsize_enforced(void)
{
	struct rlimits_set r;
	struct halo_err e = {{0}};
	char path[] = "/tmp/halo-rlimits-XXXXXX", buf[4096] = {0};
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	unlink(path);
	signal(SIGXFSZ, SIG_IGN);
	rlimits_init(&r);
	r.file_size_bytes = 1000;
	CHECK(rlimits_apply(&r, &e) == 0);
	CHECK(write(fd, buf, sizeof(buf)) == 1000);
	errno = 0;
	CHECK(write(fd, buf, 1) == -1 && errno == EFBIG);
	close(fd);
	return 0;
}

/* Memory is RLIMIT_DATA: a reservation far beyond it (what V8, the JVM, Go and wasm
 * make at start) succeeds, touching more than it fails. Address space is never capped. */
static int apply_memory_counts_use(void)
{
	struct rlimits_set r;
	struct halo_err e = {{0}};
	struct rlimit as_before;
	void *big;

	CHECK(getrlimit(RLIMIT_AS, &as_before) == 0);
	rlimits_init(&r);
	r.memory_bytes = 64 * MIB;
	CHECK(rlimits_memory_resource(&r) == RLIMIT_DATA);
	CHECK(rlimits_apply(&r, &e) == 0);
	CHECK(limit_is(RLIMIT_DATA, (rlim_t)(64 * MIB), (rlim_t)(64 * MIB)) ||
	      limit_is(RLIMIT_DATA, under_hard(RLIMIT_DATA, 64 * MIB),
		       under_hard(RLIMIT_DATA, 64 * MIB)));
	CHECK(limit_is(RLIMIT_AS, as_before.rlim_cur, as_before.rlim_max));
	big = mmap(NULL, (size_t)(8 * GIB), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		   -1, 0);
	CHECK(big != MAP_FAILED); /* a reservation is not use */
	munmap(big, (size_t)(8 * GIB));
	big = mmap(NULL, (size_t)(128 * MIB), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	CHECK(big == MAP_FAILED && errno == ENOMEM); /* writable memory beyond it is refused */
	return 0;
}

/* With the memory cgroup holding memory, no rlimit is set for it. */
static int apply_memory_cgroup(void)
{
	struct rlimits_set r;
	struct halo_err e = {{0}};
	struct rlimit data_before, as_before;

	CHECK(getrlimit(RLIMIT_DATA, &data_before) == 0);
	CHECK(getrlimit(RLIMIT_AS, &as_before) == 0);
	rlimits_init(&r);
	r.memory_bytes = 64 * MIB;
	r.memory_via = RLIMITS_MEM_CGROUP;
	CHECK(rlimits_memory_resource(&r) == -1);
	CHECK(rlimits_apply(&r, &e) == 0);
	CHECK(limit_is(RLIMIT_DATA, data_before.rlim_cur, data_before.rlim_max));
	CHECK(limit_is(RLIMIT_AS, as_before.rlim_cur, as_before.rlim_max));
	return 0;
}

START_TEST(apply_in_child)
{
	in_child(apply_values);
	in_child(apply_unset_keeps_host);
	in_child(apply_cpu_clamped);
	in_child(apply_fsize_enforced);
	in_child(apply_memory_counts_use);
	in_child(apply_memory_cgroup);
}
END_TEST

/* ---------------------------------------------------------------- describe */

struct lines {
	char text[16][256];
	int n;
};

static void collect(void *arg, const char *text)
{
	struct lines *l = arg;

	ck_assert_int_lt(l->n, 16);
	snprintf(l->text[l->n++], sizeof(l->text[0]), "%s", text);
}

START_TEST(describe_lines)
{
	struct rlimits_set r;
	struct lines l = {.n = 0};

	rlimits_init(&r);
	r.cpu_seconds = 60;
	r.memory_bytes = 4 * GIB;
	r.file_size_bytes = 10 * MIB + 1;
	r.open_files = 256;
	r.processes = 64;
	r.wall_seconds = 900;
	rlimits_describe(&r, true, NULL, collect, &l);
	ck_assert_int_eq(l.n, 7);
	ck_assert_str_eq(l.text[0], "core dumps 0 (setrlimit RLIMIT_CORE)");
	ck_assert_str_eq(l.text[1],
			 "cpu 60 s (setrlimit RLIMIT_CPU: SIGXCPU at 60 s, SIGKILL at 61 s)");
	ck_assert_str_eq(l.text[2], "memory 4 GiB (setrlimit RLIMIT_DATA, per process: heap and "
				    "private writable memory; address-space reservations not "
				    "counted)");
	ck_assert_str_eq(l.text[3], "file size 10485761 bytes (setrlimit RLIMIT_FSIZE)");
	ck_assert_str_eq(l.text[4], "open files 256 (setrlimit RLIMIT_NOFILE)");
	ck_assert_str_eq(l.text[5], "processes 64 (setrlimit RLIMIT_NPROC, counted per uid; pids "
				    "cgroup for the whole sandbox)");
	ck_assert_str_eq(l.text[6],
			 "wall clock 900 s (supervisor timer: sandbox killed, exit 124)");

	l.n = 0;
	r.memory_bytes = 512 * MIB;
	r.file_size_bytes = 64 * 1024;
	rlimits_describe(&r, false, "memory cgroup v1 under /sys/fs/cgroup/memory", collect, &l);
	ck_assert_str_eq(l.text[2], "memory 512 MiB (memory cgroup v1 under /sys/fs/cgroup/memory, "
				    "for the whole sandbox: over it the kernel's OOM killer ends a "
				    "process)");
	ck_assert_str_eq(l.text[3], "file size 64 KiB (setrlimit RLIMIT_FSIZE)");
	ck_assert_str_eq(l.text[5], "processes 64 (setrlimit RLIMIT_NPROC, counted per uid; not "
				    "enforced for host uid 0)");

	l.n = 0;
	rlimits_init(&r);
	rlimits_describe(&r, false, NULL, collect, &l);
	ck_assert_int_eq(l.n, 7);
	ck_assert_str_eq(l.text[1], "cpu: host limit kept");
	ck_assert_str_eq(l.text[2], "memory: host limit kept");
	ck_assert_str_eq(l.text[3], "file size: host limit kept");
	ck_assert_str_eq(l.text[4], "open files: host limit kept");
	ck_assert_str_eq(l.text[5], "processes: host limit kept");
	ck_assert_str_eq(l.text[6], "wall clock: no limit");
}
END_TEST

static Suite *rlimits_suite(void)
{
	Suite *s = suite_create("rlimits");
	TCase *tc = tcase_create("parse");
	TCase *ta = tcase_create("apply");

	tcase_add_loop_test(tc, parse_refuses, 0, ROWS(bad_rows));
	tcase_add_test(tc, parse_refuses_long_and_null);
	tcase_add_loop_test(tc, parse_accepts, 0, ROWS(good_rows));
	tcase_add_test(tc, override_keeps_the_rest);
	tcase_add_loop_test(tc, timeout_grammar, 0, ROWS(timeout_rows));
	tcase_add_test(tc, timeout_long_and_with_limit);
	tcase_add_loop_test(tc, tighten_only, 0, ROWS(tighten_rows));
	tcase_add_test(tc, tighten_refusal_changes_nothing);
	tcase_add_test(tc, from_policy);
	tcase_add_test(tc, describe_lines);
	tcase_add_test(ta, apply_in_child);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, ta);
	return s;
}

UNIT_MAIN(rlimits_suite)
