/* Was halo-run adopted before it could look at its parent? (--die-with-parent's race.)
 * The kernel keeps no record of a process's first parent, so a parent that died before
 * halo-run's first instruction is told from what a fork leaves behind: a child keeps its
 * parent's session and process group until something changes them, and a reaper (pid 1,
 * a subreaper) that adopts an orphan shares neither as a rule. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runner/runner_int.h"

bool runner_lineage_adopted(const struct runner_lineage *l)
{
	if (l->parent <= 0) /* halo-run is the namespace's init: no parent to lose */
		return false;
	/* A session neither its own (setsid) nor its parent's. */
	if (l->sid >= 0 && l->parent_sid >= 0 && l->sid != l->self && l->parent_sid != l->sid)
		return true;
	/* A process group neither its own nor its parent's, unless a job-control shell put
	 * it there (a pipeline's group is led by its first command, whose parent is the
	 * shell): such a shell leads the session of a controlling terminal, or, without one
	 * (set -m in a script), is the parent of the group's leader when that is alive. */
	return l->pgid >= 0 && l->parent_pgid >= 0 && l->pgid != l->self &&
	       l->parent_pgid != l->pgid && !l->tty_job && l->leader_parent != l->parent;
}

/* From /proc/PID/stat, after the parenthesised name: the parent (4th field) and the
 * controlling terminal (7th); pid 0 is this process. Returns 0 or -1. */
static int read_stat(pid_t pid, pid_t *ppid, int *tty)
{
	char path[64], buf[512];
	FILE *f;
	size_t n;
	char *p;
	int pp;

	if (pid == 0)
		snprintf(path, sizeof(path), "/proc/self/stat");
	else
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (!(p = strrchr(buf, ')')) || sscanf(p + 1, " %*c %d %*d %*d %d", &pp, tty) != 2)
		return -1;
	*ppid = pp;
	return 0;
}

void runner_lineage_read(struct runner_lineage *l)
{
	l->self = getpid();
	l->parent = getppid();
	l->sid = getsid(0);
	l->parent_sid = l->parent > 0 ? getsid(l->parent) : -1;
	l->pgid = getpgrp();
	l->parent_pgid = l->parent > 0 ? getpgid(l->parent) : -1;
	l->tty_job = false;
	l->leader_parent = -1;
	if (l->parent <= 0 || l->pgid == l->self || l->parent_pgid == l->pgid)
		return; /* the group rule cannot fire: spare the reads */
	pid_t ignored;
	int tty = 0;

	l->tty_job = l->parent_sid == l->parent && read_stat(0, &ignored, &tty) == 0 && tty != 0;
	if (read_stat(l->pgid, &l->leader_parent, &tty) < 0)
		l->leader_parent = -1;
}
