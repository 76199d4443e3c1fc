/* libFuzzer target for the --limit and --timeout parsers: a refusal leaves the set
 * untouched and says why; an acceptance gives values inside each key's bounds that,
 * written back as plain numbers, parse to the same set. The same input as a command-line
 * --limit over a fixed policy never yields a value above the policy's (refused with
 * -EPERM instead), and as --timeout gives 1 s .. 1 year or a refusal. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rlimits/rlimits.h"
#include "tests/fuzz/fuzz_check.h"

#define SENTINEL (-7LL)

static void sentinel(struct rlimits_set *r)
{
	memset(r, 0, sizeof(*r)); /* padding too: sets are compared with memcmp */
	rlimits_init(r);
	r->cpu_seconds = r->memory_bytes = r->file_size_bytes = SENTINEL;
	r->open_files = r->processes = r->wall_seconds = SENTINEL;
}

static void in_bounds(long long v, long long lo, long long hi)
{
	CHECK(v == SENTINEL || (v >= lo && v <= hi));
}

static void discard(void *arg, const char *text)
{
	(void)arg;
	CHECK(text && strlen(text) < 256);
}

/* Write the set back as "key=N,..." (plain bytes and seconds) and parse it again. */
static void round_trip(const struct rlimits_set *r)
{
	const struct {
		const char *key;
		long long v;
	} f[] = {{"cpu", r->cpu_seconds},   {"mem", r->memory_bytes}, {"fsize", r->file_size_bytes},
		 {"nofile", r->open_files}, {"nproc", r->processes},  {"wall", r->wall_seconds}};
	char spec[512] = "";
	size_t off = 0;
	struct rlimits_set again;
	struct halo_err e = {{0}};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i].v != SENTINEL)
			off += (size_t)snprintf(spec + off, sizeof(spec) - off, "%s%s=%lld",
						off ? "," : "", f[i].key, f[i].v);
	sentinel(&again);
	if (off == 0)
		return;
	CHECK(rlimits_parse_override(spec, &again, &e) == 0);
	CHECK(memcmp(&again, r, sizeof(again)) == 0);
}

static void as_cli(const char *spec)
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
	int rc;

	memset(&policy, 0, sizeof(policy));
	rlimits_from_policy(&pl, &policy);
	r = policy;
	rc = rlimits_parse_cli(spec, &policy, &r, &e);
	CHECK(rc == 0 || rc == -EINVAL || rc == -EPERM);
	if (rc < 0) {
		CHECK(memcmp(&r, &policy, sizeof(r)) == 0);
		CHECK(e.msg[0] != '\0');
		CHECK(rc != -EPERM || strstr(e.msg, "the command line may only tighten limits"));
		return;
	}
	CHECK(r.cpu_seconds <= policy.cpu_seconds && r.memory_bytes <= policy.memory_bytes);
	CHECK(r.file_size_bytes <= policy.file_size_bytes && r.open_files <= policy.open_files);
	CHECK(r.wall_seconds <= policy.wall_seconds);
}

static void as_timeout(const char *text)
{
	struct rlimits_set r, before, again;
	struct halo_err e = {{0}};
	char plain[32];
	int rc;

	memset(&r, 0, sizeof(r));
	rlimits_init(&r);
	before = r;
	rc = rlimits_parse_timeout(text, NULL, &r, &e);
	CHECK(rc == 0 || rc == -EINVAL);
	if (rc < 0) {
		CHECK(memcmp(&r, &before, sizeof(r)) == 0);
		CHECK(strncmp(e.msg, "--timeout", 9) == 0);
		return;
	}
	in_bounds(r.wall_seconds, 1, 31536000);
	snprintf(plain, sizeof(plain), "%lld", r.wall_seconds);
	rlimits_init(&again);
	CHECK(rlimits_parse_timeout(plain, NULL, &again, &e) == 0);
	CHECK(again.wall_seconds == r.wall_seconds);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *spec = malloc(size + 1);
	struct rlimits_set r, before;
	struct halo_err e;
	int rc;

	if (!spec)
		return 0;
	memcpy(spec, data, size);
	spec[size] = '\0';
	memset(&e, 0, sizeof(e));
	sentinel(&r);
	before = r;
	rc = rlimits_parse_override(spec, &r, &e);
	CHECK(rc == 0 || rc == -EINVAL);
	if (rc < 0) {
		CHECK(memcmp(&r, &before, sizeof(r)) == 0);
		CHECK(e.msg[0] != '\0');
		CHECK(memchr(e.msg, '\0', sizeof(e.msg)) != NULL);
	} else {
		CHECK(strpbrk(spec, " \t\n") == NULL);
		in_bounds(r.cpu_seconds, 1, 31536000);
		in_bounds(r.wall_seconds, 1, 31536000);
		in_bounds(r.memory_bytes, 1024 * 1024, INT64_MAX);
		in_bounds(r.file_size_bytes, 1, INT64_MAX);
		in_bounds(r.open_files, 1, 1073741824);
		in_bounds(r.processes, 1, 1073741824);
		round_trip(&r);
		rlimits_describe(&r, true, NULL, discard, NULL);
		rlimits_describe(&r, false, "memory cgroup v2 /sys/fs/cgroup/x", discard, NULL);
	}
	as_cli(spec);
	as_timeout(spec);
	free(spec);
	return 0;
}
