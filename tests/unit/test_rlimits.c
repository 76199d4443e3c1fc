/* rlimits: the --limit parser against hostile input (every error message exact, the
 * set untouched on failure), the accepted forms, the policy conversions, setrlimit in
 * a forked child (values read back, hard limits never raised), and the --dry-run lines. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
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
};

static void fill_sentinel(struct rlimits_set *r)
{
	r->cpu_seconds = 11;
	r->memory_bytes = 22;
	r->file_size_bytes = 33;
	r->open_files = 44;
	r->processes = 55;
	r->wall_seconds = 66;
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

static const struct good_row good_rows[] = {
    {"cpu=2,mem=512M,fsize=10M,nofile=256,nproc=64", {2, 512 * MIB, 10 * MIB, 256, 64, U}},
    {"wall=30", {U, U, U, U, U, 30}},
    {"cpu=5s", {5, U, U, U, U, U}},
    {"cpu=2m", {120, U, U, U, U, U}},
    {"wall=1h", {U, U, U, U, U, 3600}},
    {"mem=1G", {U, GIB, U, U, U, U}},
    {"mem=2g", {U, 2 * GIB, U, U, U, U}},
    {"mem=1048576", {U, MIB, U, U, U, U}},
    {"mem=1024K", {U, MIB, U, U, U, U}},
    {"fsize=1", {U, U, 1, U, U, U}},
    {"fsize=10k", {U, U, 10240, U, U, U}},
    {"fsize=3m", {U, U, 3 * MIB, U, U, U}},
    {"nproc=1073741824", {U, U, U, U, 1073741824LL, U}},
    {"cpu=31536000", {31536000, U, U, U, U, U}},
    {"wall=8760h", {U, U, U, U, U, 31536000}},
    {"mem=8589934591G", {U, 8589934591LL * GIB, U, U, U, U}},
    {"fsize=9223372036854775807", {U, U, LLONG_MAX, U, U, U}},
    {"nofile=1,nproc=1,cpu=1,wall=1,fsize=1,mem=1M", {1, MIB, 1, 1, 1, 1}},
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
	struct policy_limits pl = {60, 4096, 1024, 1024, 512, 900};
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

START_TEST(from_policy)
{
	struct policy_limits pl = {60, 4096, 1024, 1024, 1024, 900};
	struct policy_limits unset = {POLICY_LIMIT_UNSET, POLICY_LIMIT_UNSET, POLICY_LIMIT_UNSET,
				      POLICY_LIMIT_UNSET, POLICY_LIMIT_UNSET, POLICY_LIMIT_UNSET};
	struct policy_limits odd = {0, LLONG_MAX / 2, -5, 0, -1, 0};
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
	rlim_t as = under_hard(RLIMIT_AS, (rlim_t)128 * 1024 * GIB);
	rlim_t fsize = under_hard(RLIMIT_FSIZE, 10 * MIB);
	rlim_t nproc = under_hard(RLIMIT_NPROC, 4000);
	rlim_t cpu_hard = under_hard(RLIMIT_CPU, 301);

	/* a host hard limit lower than what is asked: kept, never raised */
	CHECK(setrlimit(RLIMIT_NOFILE, &nofile_hard) == 0);
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
	CHECK(limit_is(RLIMIT_AS, as, as));
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

START_TEST(apply_in_child)
{
	in_child(apply_values);
	in_child(apply_unset_keeps_host);
	in_child(apply_cpu_clamped);
	in_child(apply_fsize_enforced);
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
	rlimits_describe(&r, true, false, collect, &l);
	ck_assert_int_eq(l.n, 7);
	ck_assert_str_eq(l.text[0], "core dumps 0 (setrlimit RLIMIT_CORE)");
	ck_assert_str_eq(l.text[1],
			 "cpu 60 s (setrlimit RLIMIT_CPU: SIGXCPU at 60 s, SIGKILL at 61 s)");
	ck_assert_str_eq(l.text[2], "memory 4 GiB (setrlimit RLIMIT_AS, per process)");
	ck_assert_str_eq(l.text[3], "file size 10485761 bytes (setrlimit RLIMIT_FSIZE)");
	ck_assert_str_eq(l.text[4], "open files 256 (setrlimit RLIMIT_NOFILE)");
	ck_assert_str_eq(l.text[5], "processes 64 (setrlimit RLIMIT_NPROC, counted per uid; pids "
				    "cgroup for the whole sandbox)");
	ck_assert_str_eq(l.text[6],
			 "wall clock 900 s (supervisor timer: sandbox killed, exit 124)");

	l.n = 0;
	r.memory_bytes = 512 * MIB;
	r.file_size_bytes = 64 * 1024;
	rlimits_describe(&r, false, true, collect, &l);
	ck_assert_str_eq(l.text[2], "memory 512 MiB (setrlimit RLIMIT_AS, per process; memory "
				    "cgroup for the whole sandbox)");
	ck_assert_str_eq(l.text[3], "file size 64 KiB (setrlimit RLIMIT_FSIZE)");
	ck_assert_str_eq(l.text[5], "processes 64 (setrlimit RLIMIT_NPROC, counted per uid; not "
				    "enforced for host uid 0)");

	l.n = 0;
	rlimits_init(&r);
	rlimits_describe(&r, false, false, collect, &l);
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
	tcase_add_test(tc, from_policy);
	tcase_add_test(tc, describe_lines);
	tcase_add_test(ta, apply_in_child);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, ta);
	return s;
}

UNIT_MAIN(rlimits_suite)
