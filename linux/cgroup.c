/* Whole-sandbox limits through cgroups. RLIMIT_NPROC is never enforced for host uid 0
 * and RLIMIT_AS is per process, so when halo-run may create a cgroup (root, cgroup v2
 * or v1 pids/memory controllers) the sandbox as a whole is capped there too. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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
	char path[320];
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

static bool is_cgroup2(void)
{
	struct statfs s;

	return statfs("/sys/fs/cgroup", &s) == 0 && (unsigned long)s.f_type == CGROUP2_SUPER_MAGIC;
}

/* Make dir (unique per run) and write one limit into it. */
static int make_group(char *dir, size_t dirlen, const char *base, const char *file, long long value)
{
	char num[32];
	int rc;

	snprintf(dir, dirlen, "%s/halo-run.%d", base, (int)getpid());
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(num, sizeof(num), "%lld", value);
	rc = write_text(dir, file, num);
	if (rc < 0)
		rmdir(dir);
	return rc;
}

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
		char num[32];
		snprintf(num, sizeof(num), "%lld", r->processes + 1); /* + init */
		if ((rc = write_text(cg->path_pids, "pids.max", num)) < 0)
			return rc;
		cg->pids = true;
	}
	if (r->memory_bytes != RLIMITS_UNSET) {
		char num[32];
		snprintf(num, sizeof(num), "%lld", r->memory_bytes);
		if (write_text(cg->path_pids, "memory.max", num) == 0)
			cg->memory = true;
	}
	snprintf(cg->path_mem, sizeof(cg->path_mem), "%s", cg->path_pids);
	return 0;
}

static int setup_v1(const struct rlimits_set *r, struct linux_cgroup *cg)
{
	int rc;

	if (r->processes != RLIMITS_UNSET) {
		rc = make_group(cg->path_pids, sizeof(cg->path_pids), "/sys/fs/cgroup/pids",
				"pids.max", r->processes + 1);
		if (rc < 0)
			return rc;
		cg->pids = true;
	}
	if (r->memory_bytes != RLIMITS_UNSET &&
	    make_group(cg->path_mem, sizeof(cg->path_mem), "/sys/fs/cgroup/memory",
		       "memory.limit_in_bytes", r->memory_bytes) == 0)
		cg->memory = true;
	return 0;
}

int linux_cgroup_setup(const struct rlimits_set *r, struct linux_cgroup *cg, struct halo_err *e)
{
	int rc;

	memset(cg, 0, sizeof(*cg));
	if (r->processes == RLIMITS_UNSET && r->memory_bytes == RLIMITS_UNSET)
		return 0;
	/* An unprivileged caller has RLIMIT_NPROC and RLIMIT_AS, which hold for it. */
	if (geteuid() != 0)
		return 0;
	rc = is_cgroup2() ? setup_v2(r, cg) : setup_v1(r, cg);
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

int linux_cgroup_attach(const struct linux_cgroup *cg, int pid)
{
	int rc = 0;

	if (cg->pids && (rc = attach_one(cg->path_pids, cg->v2, pid)) < 0)
		return rc;
	if (cg->memory && !cg->v2 && (rc = attach_one(cg->path_mem, false, pid)) < 0)
		return rc;
	if (cg->memory && cg->v2 && !cg->pids)
		rc = attach_one(cg->path_mem, true, pid);
	return rc;
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
