/* rlimits/ — resource caps: parsed from the policy and from --limit, applied with
 * setrlimit() in the command's process. Whole-sandbox enforcement through cgroups
 * lives with the launcher (linux/cgroup.c); this module only says what is asked. */
#ifndef HALO_RLIMITS_H
#define HALO_RLIMITS_H

#include "policy/policy.h"

#define RLIMITS_UNSET (-1LL)

/* What holds the memory limit: RLIMIT_DATA in the command's process unless the
 * launcher put the whole sandbox into a memory cgroup (then no rlimit is set for it). */
enum rlimits_mem_via {
	RLIMITS_MEM_DATA = 0,
	RLIMITS_MEM_CGROUP,
};

/* Byte and count values, ready for setrlimit(); RLIMITS_UNSET leaves the host's. */
struct rlimits_set {
	long long cpu_seconds;
	long long memory_bytes; /* RLIMIT_DATA, or the memory cgroup (memory_via) */
	long long file_size_bytes;
	long long open_files;
	long long processes;
	long long wall_seconds; /* enforced by the supervisor, not setrlimit */
	enum rlimits_mem_via memory_via;
};

void rlimits_init(struct rlimits_set *r);
void rlimits_from_policy(const struct policy_limits *pl, struct rlimits_set *r);

/* "--limit cpu=2,mem=512M,fsize=10M,nofile=256,nproc=64,wall=30": overrides r in
 * place. Sizes take K, M, G suffixes (powers of 1024; bare numbers are bytes for
 * mem/fsize). Returns 0 or -EINVAL with the offending item named in e. */
int rlimits_parse_override(const char *spec, struct rlimits_set *r, struct halo_err *e);

/* The command line's --limit over the policy's set `policy` (r starts as a copy of it):
 * a value may tighten, never loosen. A value above the policy's for the same limit is
 * -EPERM, with a message naming the limit and the policy's value ("--limit mem=8G
 * exceeds the policy's limits.memoryMB (4096); ..."); syntax errors are -EINVAL. */
int rlimits_parse_cli(const char *spec, const struct rlimits_set *policy, struct rlimits_set *r,
		      struct halo_err *e);

/* --timeout DURATION: the grammar of --limit wall= ("90", "1m", "1h30m"), the same
 * tighten-only rule (-EPERM), messages starting with "--timeout". With a wall limit
 * already in r (from --limit wall=) the shorter one holds. */
int rlimits_parse_timeout(const char *text, const struct rlimits_set *policy, struct rlimits_set *r,
			  struct halo_err *e);

/* The setrlimit resource that carries memory_bytes (RLIMIT_DATA), or -1 when the
 * memory cgroup holds it instead. */
int rlimits_memory_resource(const struct rlimits_set *r);

/* setrlimit every set cap, RLIMIT_CORE always 0. Lowers only: never raises a hard
 * limit the host already imposes. Returns 0 or -errno, with the resource named. */
int rlimits_apply(const struct rlimits_set *r, struct halo_err *e);

/* One line per cap for --dry-run: "cpu 60 s (setrlimit RLIMIT_CPU)"; `cgroup_pids`
 * says whether the launcher also holds processes with a cgroup, `mem_cgroup` (NULL:
 * RLIMIT_DATA holds memory) names the memory cgroup that holds memory instead. */
void rlimits_describe(const struct rlimits_set *r, bool cgroup_pids, const char *mem_cgroup,
		      void (*line)(void *arg, const char *text), void *arg);

#endif
