/* rlimits/ — resource caps: parsed from the policy and from --limit, applied with
 * setrlimit() in the command's process. Whole-sandbox enforcement through cgroups
 * lives with the launcher (linux/cgroup.c); this module only says what is asked. */
#ifndef HALO_RLIMITS_H
#define HALO_RLIMITS_H

#include "policy/policy.h"

#define RLIMITS_UNSET (-1LL)

/* Byte and count values, ready for setrlimit(); RLIMITS_UNSET leaves the host's. */
struct rlimits_set {
	long long cpu_seconds;
	long long memory_bytes; /* RLIMIT_AS */
	long long file_size_bytes;
	long long open_files;
	long long processes;
	long long wall_seconds; /* enforced by the supervisor, not setrlimit */
};

void rlimits_init(struct rlimits_set *r);
void rlimits_from_policy(const struct policy_limits *pl, struct rlimits_set *r);

/* "--limit cpu=2,mem=512M,fsize=10M,nofile=256,nproc=64,wall=30": overrides r in
 * place. Sizes take K, M, G suffixes (powers of 1024; bare numbers are bytes for
 * mem/fsize). Returns 0 or -EINVAL with the offending item named in e. */
int rlimits_parse_override(const char *spec, struct rlimits_set *r, struct halo_err *e);

/* setrlimit every set cap, RLIMIT_CORE always 0. Lowers only: never raises a hard
 * limit the host already imposes. Returns 0 or -errno, with the resource named. */
int rlimits_apply(const struct rlimits_set *r, struct halo_err *e);

/* One line per cap for --dry-run: "cpu 60 s (setrlimit RLIMIT_CPU)"; `cgroup_pids`
 * and `cgroup_mem` say whether the launcher also holds them with a cgroup. */
void rlimits_describe(const struct rlimits_set *r, bool cgroup_pids, bool cgroup_mem,
		      void (*line)(void *arg, const char *text), void *arg);

#endif
