/* The --dry-run lines for a set of caps: what is asked and which mechanism holds it. */
#include <stdio.h>

#include "rlimits/rlimits.h"

#define KIB 1024LL
#define MIB (1024LL * 1024)
#define GIB (1024LL * 1024 * 1024)

static void format_bytes(long long v, char *buf, size_t n)
{
	if (v % GIB == 0)
		snprintf(buf, n, "%lld GiB", v / GIB);
	else if (v % MIB == 0)
		snprintf(buf, n, "%lld MiB", v / MIB);
	else if (v % KIB == 0)
		snprintf(buf, n, "%lld KiB", v / KIB);
	else
		snprintf(buf, n, "%lld bytes", v);
}

void rlimits_describe(const struct rlimits_set *r, bool cgroup_pids, const char *mem_cgroup,
		      void (*line)(void *arg, const char *text), void *arg)
{
	char buf[512], num[64];

	line(arg, "core dumps 0 (setrlimit RLIMIT_CORE)");
	if (r->cpu_seconds > 0)
		snprintf(buf, sizeof(buf),
			 "cpu %lld s (setrlimit RLIMIT_CPU: SIGXCPU at %lld s, SIGKILL at %lld s)",
			 r->cpu_seconds, r->cpu_seconds, r->cpu_seconds + 1);
	else
		snprintf(buf, sizeof(buf), "cpu: host limit kept");
	line(arg, buf);
	if (r->memory_bytes > 0) {
		format_bytes(r->memory_bytes, num, sizeof(num));
		if (mem_cgroup)
			snprintf(buf, sizeof(buf),
				 "memory %s (%s, for the whole sandbox: over it the kernel's OOM "
				 "killer ends a process)",
				 num, mem_cgroup);
		else
			snprintf(buf, sizeof(buf),
				 "memory %s (setrlimit RLIMIT_DATA, per process: heap and private "
				 "writable memory; address-space reservations not counted)",
				 num);
	} else {
		snprintf(buf, sizeof(buf), "memory: host limit kept");
	}
	line(arg, buf);
	if (r->file_size_bytes > 0) {
		format_bytes(r->file_size_bytes, num, sizeof(num));
		snprintf(buf, sizeof(buf), "file size %s (setrlimit RLIMIT_FSIZE)", num);
	} else {
		snprintf(buf, sizeof(buf), "file size: host limit kept");
	}
	line(arg, buf);
	if (r->open_files > 0)
		snprintf(buf, sizeof(buf), "open files %lld (setrlimit RLIMIT_NOFILE)",
			 r->open_files);
	else
		snprintf(buf, sizeof(buf), "open files: host limit kept");
	line(arg, buf);
	if (r->processes > 0)
		snprintf(buf, sizeof(buf),
			 "processes %lld (setrlimit RLIMIT_NPROC, counted per uid%s)", r->processes,
			 cgroup_pids ? "; pids cgroup for the whole sandbox"
				     : "; not enforced for host uid 0");
	else
		snprintf(buf, sizeof(buf), "processes: host limit kept");
	line(arg, buf);
	if (r->wall_seconds > 0)
		snprintf(buf, sizeof(buf),
			 "wall clock %lld s (supervisor timer: sandbox killed, exit 124)",
			 r->wall_seconds);
	else
		snprintf(buf, sizeof(buf), "wall clock: no limit");
	line(arg, buf);
}
