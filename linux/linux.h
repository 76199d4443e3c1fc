/* linux/ — the Linux launcher: user, mount, pid, net, ipc and uts namespaces, the
 * mount layout and protected-path masking, the persistence guard, Landlock,
 * capabilities, seccomp, and the supervision of the sandbox's init. */
#ifndef HALO_LINUX_H
#define HALO_LINUX_H

#include <stdbool.h>
#include <stdio.h>

#include "policy/policy.h"
#include "rlimits/rlimits.h"

struct linux_launch {
	const struct halo_policy *policy;
	const char *workspace; /* absolute, symlinks resolved */
	const char *pw_home;
	const char *env_home; /* may equal pw_home or be NULL */
	const char *self_exe; /* absolute path of the running binary (made read-only) */
	const char *const *policy_files; /* made read-only inside */
	size_t n_policy_files;
	char *const *argv;
	char **envp; /* built by runner/env */
	struct rlimits_set limits;
	bool quiet;
	bool unsandboxed; /* sandbox.mode: off — limits, environment, supervision only */
};

/* Run argv in the sandbox and wait. *status is the exit code halo-run should return
 * (command status, 128+N, 124 on timeout, 126/127 when exec failed). Returns 0 when
 * the command ran, 1 when it ended in a way halo-run must explain (timeout, exec
 * failure: the message is in e), -errno with e set when the sandbox could not be
 * built (the caller exits 125). */
int linux_run(const struct linux_launch *l, int *status, struct halo_err *e);

/* Print the plan: namespaces, mounts, masked paths, limits, environment, seccomp
 * summary, Landlock ABI, what is not enforced. Returns 0 or -errno. */
int linux_dry_run(const struct linux_launch *l, FILE *out, struct halo_err *e);

#endif
