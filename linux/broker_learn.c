/* halo-run learn's view of refused writes: the broker performs every call that
 * creates a name or opens a file for writing (broker_int.h), so it sees the kernel's
 * answer (EROFS from a read-only mount, EACCES from Landlock or a mask) and the
 * guard's refusals, with the directory already opened. The distinct paths are kept
 * (bounded) and sent to the supervisor after the command's status. Writes by calls
 * the broker does not trap (unlink, rmdir, truncate, chmod, utimes, a write through
 * a descriptor opened before) are not seen: the output's header says so. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "linux/broker_emul_int.h"

static bool refusal(long rc)
{
	return rc == -EROFS || rc == -EACCES || rc == -EPERM;
}

/* The path of the name r made: its directory as the kernel names it, and the name. */
static int path_of(const struct broker_req *r, char *out, size_t n)
{
	char fdp[64], dir[BROKER_LEARN_PATH];
	ssize_t k;

	if (r->nn.pfd < 0 || !r->nn.last[0])
		return -ENOENT;
	snprintf(fdp, sizeof(fdp), "/proc/self/fd/%d", r->nn.pfd);
	k = readlink(fdp, dir, sizeof(dir) - 1);
	if (k <= 0 || dir[0] != '/')
		return -ENOENT;
	dir[k] = '\0';
	if ((size_t)snprintf(out, n, "%s%s%s", dir, k == 1 ? "" : "/", r->nn.last) >= n)
		return -ENAMETOOLONG;
	return 0;
}

void broker_learn_note(struct linux_broker *b, const struct broker_req *r, long rc, bool admitted)
{
	struct broker_notes *nt = b->notes;
	char path[BROKER_LEARN_PATH];
	bool seen = false;

	if (!b->learn || !nt || !refusal(rc))
		return;
	if (path_of(r, path, sizeof(path)) < 0) {
		nt->learn_cut = true; /* refused, but not nameable within the bound */
		return;
	}
	while (atomic_flag_test_and_set_explicit(&nt->learn_lock, memory_order_acquire))
		;
	for (size_t i = 0; i < nt->n_learned && !seen; i++)
		seen = strcmp(nt->learned[i].path, path) == 0;
	if (!seen && nt->n_learned == BROKER_LEARN_MAX)
		nt->learn_cut = true;
	else if (!seen) {
		struct broker_learned *l = &nt->learned[nt->n_learned++];
		l->err = (int)-rc;
		l->guard = !admitted;
		memcpy(l->path, path, sizeof(path));
	}
	atomic_flag_clear_explicit(&nt->learn_lock, memory_order_release);
}

/* Non-blocking: init must never wait on a pipe nobody reads before it exits. */
void broker_learn_send(const struct linux_broker *b, int fd)
{
	const struct broker_notes *nt = b->notes;
	char rec[BROKER_LEARN_PATH + 32];
	int fl;

	if (!b->learn || !nt)
		return;
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	if (write(fd, "B", 2) != 2) /* the broker ran: writes were observed */
		return;
	for (size_t i = 0; i < nt->n_learned; i++) {
		const struct broker_learned *l = &nt->learned[i];
		int n =
		    snprintf(rec, sizeof(rec), "%c %d %s", l->guard ? 'G' : 'W', l->err, l->path);
		if (write(fd, rec, (size_t)n + 1) != n + 1)
			return;
	}
	if (nt->learn_cut && write(fd, "T", 2) != 2)
		return;
}
