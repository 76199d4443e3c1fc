/* Whole-sandbox limits through cgroups. RLIMIT_NPROC is never enforced for host uid 0,
 * and memory is best counted for the sandbox as a whole (RLIMIT_DATA is per process),
 * so when halo-run may create a cgroup the sandbox is capped there:
 *   root, cgroup v2:  a leaf under the root cgroup, pids.max and memory.max;
 *   root, cgroup v1:  a child of the caller's own pids and memory cgroups (so limits an
 *                     outer manager set on those still hold);
 *   user, cgroup v2:  memory.max in a subtree systemd delegated to the user (see
 *                     cgroup_find.c).
 * Where the memory cgroup cannot be had, RLIMIT_DATA holds memory (rlimits/). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "linux/linux_int.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

static int write_text(const char *dir, const char *file, const char *text)
{
	char path[LINUX_CGROUP_PATH + 64];
	int fd, rc = 0;
	ssize_t len = (ssize_t)strlen(text);

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != len)
		rc = -errno;
	close(fd);
	return rc;
}

static int write_num(const char *dir, const char *file, long long v)
{
	char num[32];

	snprintf(num, sizeof(num), "%lld", v);
	return write_text(dir, file, num);
}

static bool is_cgroup2(const char *mount)
{
	struct statfs s;

	return statfs(mount, &s) == 0 && (unsigned long)s.f_type == CGROUP2_SUPER_MAGIC;
}

/* The v1 hierarchy of `controller`, at the caller's own cgroup in it. */
static int v1_base(const char *controller, char *out, size_t n)
{
	char self[4096], own[LINUX_CGROUP_PATH];
	int rc = linux_cgroup_read_self(self, sizeof(self));

	if (rc == 0)
		rc = linux_cgroup_own_path(self, controller, own, sizeof(own));
	if (rc < 0)
		snprintf(own, sizeof(own), "/");
	if ((size_t)snprintf(out, n, "/sys/fs/cgroup/%s%s", controller,
			     strcmp(own, "/") == 0 ? "" : own) >= n)
		return -ENAMETOOLONG;
	return 0;
}

/* Make base/halo-run.PID (unique per run) and write one limit into it. */
static int make_group(char *dir, size_t dirlen, const char *base, const char *file, long long value)
{
	int rc;

	if ((size_t)snprintf(dir, dirlen, "%s/halo-run.%d", base, (int)getpid()) >= dirlen)
		return -ENAMETOOLONG;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		rc = -errno;
		dir[0] = '\0';
		return rc;
	}
	rc = write_num(dir, file, value);
	if (rc < 0) {
		rmdir(dir);
		dir[0] = '\0';
	}
	return rc;
}

/* memory.max, and no swap to escape into (best effort: without swap accounting the
 * file is absent and there is nothing to escape into that the limit does not see). */
static bool set_memory_v2(const char *dir, long long bytes)
{
	if (write_num(dir, "memory.max", bytes) < 0)
		return false;
	write_text(dir, "memory.swap.max", "0");
	return true;
}

/* limits.processes is the command's: init and the broker's first thread come on top.
 * The broker starts its other threads only when calls wait (broker_pool.c); those
 * count against the same budget, so a command that has used all of it leaves the
 * broker answering with the threads it has (a thread that cannot start is not an
 * error there), and the command never gets more than limits.processes. The launch
 * settles the count before the command exists (linux_cgroup_pids_ours): no broker,
 * no slot for it; a session's spawner, one more; no namespaces, none of ours. */
#define PIDS_OURS 2

static int setup_v2(const struct rlimits_set *r, struct linux_cgroup *cg)
{
	int rc;

	/* The root cgroup is exempt from the no-internal-process rule, so a root caller
	 * can always enable the controllers there and make a leaf for the sandbox. */
	rc = write_text("/sys/fs/cgroup", "cgroup.subtree_control", "+pids +memory");
	if (rc < 0)
		return rc;
	cg->v2 = true;
	snprintf(cg->path_pids, sizeof(cg->path_pids), "/sys/fs/cgroup/halo-run.%d", (int)getpid());
	if (mkdir(cg->path_pids, 0755) < 0 && errno != EEXIST)
		return -errno;
	if (r->processes != RLIMITS_UNSET) {
		if ((rc = write_num(cg->path_pids, "pids.max", r->processes + PIDS_OURS)) < 0)
			return rc;
		cg->pids = true;
		cg->pids_budget = r->processes;
	}
	if (r->memory_bytes != RLIMITS_UNSET && set_memory_v2(cg->path_pids, r->memory_bytes)) {
		cg->memory = true;
		snprintf(cg->mem_desc, sizeof(cg->mem_desc), "memory cgroup v2 %s", cg->path_pids);
	}
	snprintf(cg->path_mem, sizeof(cg->path_mem), "%s", cg->path_pids);
	return 0;
}

static int setup_v1(const struct rlimits_set *r, struct linux_cgroup *cg)
{
	char base[LINUX_CGROUP_PATH];
	int rc;

	if (r->processes != RLIMITS_UNSET) {
		if ((rc = v1_base("pids", base, sizeof(base))) < 0 ||
		    (rc = make_group(cg->path_pids, sizeof(cg->path_pids), base, "pids.max",
				     r->processes + PIDS_OURS)) < 0)
			return rc;
		cg->pids = true;
		cg->pids_budget = r->processes;
	}
	if (r->memory_bytes != RLIMITS_UNSET && v1_base("memory", base, sizeof(base)) == 0 &&
	    make_group(cg->path_mem, sizeof(cg->path_mem), base, "memory.limit_in_bytes",
		       r->memory_bytes) == 0) {
		/* memory+swap as well, where swap is accounted (best effort). */
		write_num(cg->path_mem, "memory.memsw.limit_in_bytes", r->memory_bytes);
		cg->memory = true;
		snprintf(cg->mem_desc, sizeof(cg->mem_desc), "memory cgroup v1 %s", cg->path_mem);
	}
	return 0;
}

/* An unprivileged caller: memory only, in a delegated v2 subtree (processes are held by
 * RLIMIT_NPROC, which does apply to it). Failure is not an error: RLIMIT_DATA holds. */
static void setup_user(const struct rlimits_set *r, struct linux_cgroup *cg)
{
	static const char *const mounts[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
	char self[4096], own[LINUX_CGROUP_PATH], parent[LINUX_CGROUP_PATH];

	if (r->memory_bytes == RLIMITS_UNSET || linux_cgroup_read_self(self, sizeof(self)) < 0 ||
	    linux_cgroup_own_path(self, NULL, own, sizeof(own)) < 0)
		return;
	for (size_t i = 0; i < sizeof(mounts) / sizeof(mounts[0]); i++) {
		if (!is_cgroup2(mounts[i]) ||
		    linux_cgroup_delegated_find(mounts[i], own, getuid(), parent, sizeof(parent)) <
			0)
			continue;
		if ((size_t)snprintf(cg->path_mem, sizeof(cg->path_mem), "%s/halo-run.%d", parent,
				     (int)getpid()) >= sizeof(cg->path_mem) ||
		    mkdir(cg->path_mem, 0755) < 0) {
			cg->path_mem[0] = '\0';
			continue;
		}
		if (!set_memory_v2(cg->path_mem, r->memory_bytes)) {
			rmdir(cg->path_mem);
			cg->path_mem[0] = '\0';
			continue;
		}
		cg->v2 = cg->memory = true;
		snprintf(cg->mem_desc, sizeof(cg->mem_desc), "delegated user cgroup v2 %s",
			 cg->path_mem);
		return;
	}
}

int linux_cgroup_setup(const struct rlimits_set *r, struct linux_cgroup *cg, struct halo_err *e)
{
	int rc;

	memset(cg, 0, sizeof(*cg));
	if (r->processes == RLIMITS_UNSET && r->memory_bytes == RLIMITS_UNSET)
		return 0;
	if (geteuid() != 0) {
		setup_user(r, cg);
		return 0;
	}
	rc = is_cgroup2("/sys/fs/cgroup") ? setup_v2(r, cg) : setup_v1(r, cg);
	if (rc < 0 && r->processes != RLIMITS_UNSET && !cg->pids) {
		halo_err_set(e,
			     "limits.processes cannot be enforced for root without the pids "
			     "cgroup controller (%s); RLIMIT_NPROC does not apply to uid 0",
			     strerror(-rc));
		linux_cgroup_cleanup(cg);
		return rc;
	}
	return 0;
}

static int attach_one(const char *dir, bool v2, int pid)
{
	char num[32];

	snprintf(num, sizeof(num), "%d", pid);
	return write_text(dir, v2 ? "cgroup.procs" : "tasks", num);
}

int linux_cgroup_pids_ours(const struct linux_cgroup *cg, int ours)
{
	if (!cg->pids || ours == PIDS_OURS)
		return 0;
	return write_num(cg->path_pids, "pids.max", cg->pids_budget + ours);
}

int linux_cgroup_attach(const struct linux_cgroup *cg, int pid)
{
	int rc = 0;

	if (cg->pids && (rc = attach_one(cg->path_pids, cg->v2, pid)) < 0)
		return rc;
	if (cg->memory && !cg->v2 && (rc = attach_one(cg->path_mem, false, pid)) < 0)
		return rc;
	if (cg->memory && cg->v2 && !(cg->pids && strcmp(cg->path_mem, cg->path_pids) == 0))
		rc = attach_one(cg->path_mem, true, pid);
	return rc;
}

/* The number after "KEY " at the start of a line of dir/file; 0 when absent. */
static long long counter_of(const char *dir, const char *file, const char *key)
{
	char path[LINUX_CGROUP_PATH + 32], buf[1024];
	size_t kl = strlen(key);
	const char *at;
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	got = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (got <= 0)
		return 0;
	buf[got] = '\0';
	for (at = buf; (at = strstr(at, key)); at++)
		if ((at == buf || at[-1] == '\n') && at[kl] == ' ')
			return strtoll(at + kl + 1, NULL, 10);
	return 0;
}

/* "oom_kill N" from memory.events (v2) or memory.oom_control (v1, Linux 4.13+). */
long long linux_cgroup_oom_kills(const struct linux_cgroup *cg)
{
	if (!cg->memory)
		return 0;
	return counter_of(cg->path_mem, cg->v2 ? "memory.events" : "memory.oom_control",
			  "oom_kill");
}

/* "max N" from pids.events (v1 and v2): forks refused at pids.max. */
long long linux_cgroup_pids_max_hits(const struct linux_cgroup *cg)
{
	return cg->pids ? counter_of(cg->path_pids, "pids.events", "max") : 0;
}

/* The sandbox's processes die with its init but may take a moment to be released:
 * retry rmdir briefly, bounded. */
static void remove_dir(const char *dir)
{
	struct timespec ms = {0, 1000000};

	if (!dir[0])
		return;
	for (int i = 0; i < 200; i++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return;
		if (errno != EBUSY)
			return;
		nanosleep(&ms, NULL);
	}
}

void linux_cgroup_cleanup(struct linux_cgroup *cg)
{
	remove_dir(cg->path_pids);
	if (strcmp(cg->path_mem, cg->path_pids) != 0)
		remove_dir(cg->path_mem);
	memset(cg, 0, sizeof(*cg));
}

bool linux_cgroup_memory_probe(char *desc, size_t n)
{
	static const char *const mounts[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
	char self[4096], own[LINUX_CGROUP_PATH], dir[LINUX_CGROUP_PATH];

	if (geteuid() == 0 && is_cgroup2("/sys/fs/cgroup")) {
		bool ok = linux_cgroup_file_has("/sys/fs/cgroup", "cgroup.controllers", "memory") &&
			  access("/sys/fs/cgroup/cgroup.subtree_control", W_OK) == 0;
		snprintf(desc, n, "%s",
			 ok ? "memory cgroup v2 (root)" : "no memory controller in v2");
		return ok;
	}
	if (geteuid() == 0) {
		bool ok = v1_base("memory", dir, sizeof(dir)) == 0 && access(dir, W_OK) == 0;
		if (ok)
			snprintf(desc, n, "memory cgroup v1 under %s", dir);
		else
			snprintf(desc, n, "no writable memory cgroup v1");
		return ok;
	}
	if (linux_cgroup_read_self(self, sizeof(self)) == 0 &&
	    linux_cgroup_own_path(self, NULL, own, sizeof(own)) == 0)
		for (size_t i = 0; i < sizeof(mounts) / sizeof(mounts[0]); i++)
			if (is_cgroup2(mounts[i]) &&
			    linux_cgroup_delegated_find(mounts[i], own, getuid(), dir,
							sizeof(dir)) == 0) {
				snprintf(desc, n, "delegated user cgroup v2 under %s", dir);
				return true;
			}
	snprintf(desc, n, "no delegated cgroup v2 subtree with the memory controller");
	return false;
}
