/* Where the sandbox's init starts. A child made by clone() is queued on its parent's
 * CPU, and the scheduler leaves it there while the parent runs on, even with another
 * CPU idle: the supervisor goes on with the workspace walk right after the clone, and
 * init started 0.2 to 0.45 ms later (measured on two CPUs), every step of its set-up
 * waiting behind the walk. Init is put on another CPU the caller allows; once it has
 * its "go", which the supervisor writes after this, it takes the caller's whole set back,
 * so the command runs wherever halo-run's caller let it. */
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "linux/launch_int.h"
#include "linux/linux.h"

static cpu_set_t caller_cpus;
static bool caller_cpus_known;

void launch_cpus_note(void)
{
	caller_cpus_known = sched_getaffinity(0, sizeof(caller_cpus), &caller_cpus) == 0 &&
			    CPU_COUNT(&caller_cpus) > 1;
}

void launch_cpus_place(pid_t child)
{
	int here = sched_getcpu();
	cpu_set_t one;

	if (!caller_cpus_known || here < 0)
		return;
	/* The next allowed CPU after this one, around: with many, launches in parallel
	 * spread rather than all land on CPU 0. */
	CPU_ZERO(&one);
	for (int k = 1; k < CPU_SETSIZE; k++) {
		int c = (here + k) % CPU_SETSIZE;
		if (CPU_ISSET(c, &caller_cpus)) {
			CPU_SET(c, &one);
			break;
		}
	}
	/* Failing (a CPU gone offline meanwhile) leaves init where it was: slower only. */
	(void)sched_setaffinity(child, sizeof(one), &one);
}

void launch_cpus_restore(void)
{
	if (caller_cpus_known)
		(void)sched_setaffinity(0, sizeof(caller_cpus), &caller_cpus);
}

int linux_cpu_of(pid_t pid)
{
	char buf[1024];
	const char *p = linux_proc_stat(pid, buf, sizeof(buf));
	int cpu = -1;

	/* The CPU last run on is field 39, the 37th after the name. */
	for (int field = 2; field < 39 && p; field++)
		p = strchr(p + 1, ' ');
	return p && sscanf(p + 1, "%d", &cpu) == 1 ? cpu : -1;
}

void linux_thread_keep_off(pid_t tid, int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof(set), &set) < 0)
		return;
	CPU_CLR(cpu, &set);
	if (CPU_COUNT(&set) > 0)
		(void)sched_setaffinity(tid, sizeof(set), &set);
}

void linux_cpus_as_thread(pid_t tid)
{
	cpu_set_t set;

	if (sched_getaffinity(tid, sizeof(set), &set) == 0)
		(void)sched_setaffinity(0, sizeof(set), &set);
}
