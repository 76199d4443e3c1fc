/* The rows about the command's own process: its environment, hostname, privileges,
 * capabilities, descriptors and isolation; its limits, as the plan of the launch says
 * they hold; and one probe per system call of the deny table, expecting the errno of
 * the row that denies it. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "linux/linux.h"
#include "rlimits/rlimits.h"
#include "trust/trust.h"
#include "trust/verify_int.h"

static int value_row(struct verify *v, const char *want, const char *what, const char *fmt,
		     const char *arg)
{
	struct vrow *r = verify_add_spec(v, V_VALUE, want, what, fmt, arg);

	if (!r)
		return -ENOMEM;
	snprintf(r->want, sizeof(r->want), "%s", want);
	return 0;
}

int verify_plan_layers(struct verify *v)
{
	char pid[64];
	struct vrow *r;

	snprintf(pid, sizeof(pid), "%d:%llu", (int)v->self, v->pidns_ino);
	if (value_row(v, "absent", "planted secret HALO_VERIFY_SECRET in the environment", "env:%s",
		      "HALO_VERIFY_SECRET") < 0 ||
	    value_row(v, "halo", "hostname (uts namespace)", "hostname:%s", "") < 0 ||
	    value_row(v, "1", "no_new_privs", "status:%s", "NoNewPrivs") < 0 ||
	    value_row(v, "2", "seccomp filter", "status:%s", "Seccomp") < 0 ||
	    value_row(v, "0000000000000000", "effective capabilities", "status:%s", "CapEff") < 0 ||
	    value_row(v, "0,1,2", "open file descriptors", "fds:%s", "") < 0)
		return -ENOMEM;
	if (!verify_add_spec(v, V_REFUSED, "refused",
			     "the host's SysV shared memory (ipc namespace)", "shm:%d",
			     v->shm_id) ||
	    !verify_add_spec(v, V_REFUSED, "ESRCH or EPERM",
			     "signal a host process (verify itself)", "kill:%s", pid) ||
	    !verify_add_spec(v, V_REFUSED, "refused",
			     "open the host's /proc/PID/mem (verify itself)", "procmem:%s", pid) ||
	    !verify_add_spec(v, V_REFUSED, "refused", "open /proc/1/mem", "procmem:1"))
		return -ENOMEM;
	r = verify_add_spec(v, V_EXACT, "EBADF", "descriptor inherited from outside", "fd:%d",
			    v->leak_fd);
	if (!r)
		return -ENOMEM;
	snprintf(r->want, sizeof(r->want), "errno=EBADF");
	return 0;
}

int verify_plan_limits(struct verify *v)
{
	static const struct {
		const char *name;
		const char *what;
		size_t off;
	} caps[] = {
	    {"cpu", "limit: cpu seconds", offsetof(struct rlimits_set, cpu_seconds)},
	    {"data", "limit: memory, RLIMIT_DATA (memoryMB)",
	     offsetof(struct rlimits_set, memory_bytes)},
	    {"fsize", "limit: file size", offsetof(struct rlimits_set, file_size_bytes)},
	    {"nofile", "limit: open files", offsetof(struct rlimits_set, open_files)},
	    {"nproc", "limit: processes", offsetof(struct rlimits_set, processes)},
	};
	struct rlimits_set rs;

	if (value_row(v, "0", "limit: core dumps", "rlimit:%s", "core") < 0)
		return -ENOMEM;
	rlimits_init(&rs);
	rs.cpu_seconds = v->plan.limit_values.cpu_seconds;
	rs.memory_bytes = v->plan.limit_values.memory_bytes;
	rs.file_size_bytes = v->plan.limit_values.file_size_bytes;
	rs.open_files = v->plan.limit_values.open_files;
	rs.processes = v->plan.limit_values.processes;
	/* Memory is held by the memory cgroup where the launch can make one, else by
	 * RLIMIT_DATA: the probe checks the one the plan says this launch uses. */
	if (rs.memory_bytes != RLIMITS_UNSET && v->plan.limit_values.memory_cgroup)
		rs.memory_via = RLIMITS_MEM_CGROUP;
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		long long want = *(const long long *)((const char *)&rs + caps[i].off);
		bool memcg = caps[i].off == offsetof(struct rlimits_set, memory_bytes) &&
			     rlimits_memory_resource(&rs) < 0;
		char exp[64];
		struct vrow *r;
		if (want == RLIMITS_UNSET)
			continue;
		snprintf(exp, sizeof(exp), "<= %lld", want);
		r = memcg ? verify_add_spec(v, V_AT_MOST, exp,
					    "limit: memory, memory cgroup (memoryMB)", "memcg:")
			  : verify_add_spec(v, V_AT_MOST, exp, caps[i].what, "rlimit:%s",
					    caps[i].name);
		if (!r)
			return -ENOMEM;
		r->limit = want;
	}
	return 0;
}

/* The errno the seccomp table gives the call, as the runner prints it. */
static void table_errno(const struct probe_sys_info *s, char *out, size_t n)
{
	if (!s->row) {
		snprintf(out, n, "killed=SIGSYS");
		return;
	}
	int err = linux_seccomp_errno(s->row, s->match);

	if (err)
		snprintf(out, n, "errno=%s", strerrorname_np(err));
	else
		snprintf(out, n, "errno=?");
}

int verify_plan_syscalls(struct verify *v)
{
	size_t n;
	const struct probe_sys_info *s = probe_sys_list(&n);

	for (size_t i = 0; i < n; i++) {
		char want[64], what[160];
		struct vrow *r;
		table_errno(&s[i], want, sizeof(want));
		snprintf(what, sizeof(what), "seccomp: %s", s[i].name);
		r = verify_add_spec(v, V_EXACT,
				    s[i].row ? strchr(want, '=') + 1 : "killed (SIGSYS)", what,
				    "sys:%s", s[i].name);
		if (!r)
			return -ENOMEM;
		snprintf(r->want, sizeof(r->want), "%s", want);
	}
	return 0;
}
