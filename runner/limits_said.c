/* A limit the command hit, said in one line that names the limit, its policy key and
 * the --limit item, as the memory limit (linux/supervise.c) and the wall clock say
 * theirs: an exit status of 152, 153 or a "Cannot fork" alone does not tell a user
 * that halo-run's limit stopped the command. What the kernel shows is said: the
 * signal the command died of (SIGXCPU, SIGXFSZ, and SIGKILL with a CPU limit set,
 * which is the hard limit after an ignored SIGXCPU) and the pids cgroup's count of
 * refused forks. The events file gets the same facts (events/events.c). */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "events/events.h"
#include "runner/runner_int.h"

/* The policy key and --limit item of each limit the events and these lines name. */
static const struct {
	const char *limit, *key, *item;
} keys[] = {
    {"cpu", "limits.cpuSeconds", "cpu"},	{"fsize", "limits.fileSizeMB", "fsize"},
    {"processes", "limits.processes", "nproc"}, {"nofile", "limits.openFiles", "nofile"},
    {"memory", "limits.memoryMB", "mem"},	{"wall", "limits.wallSeconds", "wall"},
};

const char *runner_limit_key(const char *limit, const char **item)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(keys[i].limit, limit) == 0) {
			if (item)
				*item = keys[i].item;
			return keys[i].key;
		}
	return NULL;
}

static void say_hit(const char *name, const char *limit, const char *what)
{
	const char *item = "", *key = runner_limit_key(limit, &item);

	runner_say("%s limit hit: %s (%s; --limit %s=... lowers it, a policy raises it)", name,
		   what, key, item);
}

void runner_say_limits(const struct rlimits_set *r, struct halo_outcome out,
		       const struct halo_run_facts *f)
{
	bool sig = out.kind == HALO_OUTCOME_SIGNALED;
	char what[256];

	if (sig && out.value == SIGXCPU) {
		snprintf(what, sizeof(what),
			 "the command used its %lld s of CPU time and was killed (SIGXCPU)",
			 r->cpu_seconds);
		say_hit("CPU-time", "cpu", what);
	} else if (sig && out.value == SIGKILL && r->cpu_seconds != RLIMITS_UNSET &&
		   !f->timed_out && f->oom_kills <= 0) {
		snprintf(what, sizeof(what),
			 "the command was killed (SIGKILL) past its %lld s of CPU time: the hard "
			 "limit, after it ignored SIGXCPU",
			 r->cpu_seconds);
		say_hit("CPU-time", "cpu", what);
	}
	if (sig && out.value == SIGXFSZ) {
		snprintf(what, sizeof(what),
			 "a write past %lld KiB was refused and the command killed (SIGXFSZ)",
			 r->file_size_bytes / 1024);
		say_hit("file-size", "fsize", what);
	}
	if (f->pids_max_hits > 0) {
		snprintf(what, sizeof(what),
			 "the kernel refused %lld fork%s: the sandbox may hold %lld processes "
			 "(\"Cannot fork\", EAGAIN)",
			 f->pids_max_hits, f->pids_max_hits == 1 ? "" : "s", r->processes);
		say_hit("process", "processes", what);
	}
}
