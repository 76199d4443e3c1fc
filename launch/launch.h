/* Which launcher this build drives: linux/ on Linux; macos/ on macOS and in the
 * portable build (make PLATFORM=portable, HALO_PORTABLE), which runs the macOS code
 * path on Linux with nothing Linux-only linked in. Both launchers have the same
 * steps (plan; start → exit fd, signal fd → finish), so runner/loop.c and
 * runner/run.c drive either through one small ops table, runner_launcher
 * (launcher.c). */
#ifndef HALO_RUNNER_LAUNCHER_H
#define HALO_RUNNER_LAUNCHER_H

#include <stdio.h>
#include <unistd.h>

#include "plan/plan.h"
#include "proxy/proxy.h"

#if defined(__APPLE__) || defined(HALO_PORTABLE)
#define RUNNER_MACOS 1
#include "macos/macos.h"

typedef struct macos_launch runner_launch;
typedef struct macos_sandbox runner_sandbox;
#else
#include "linux/linux.h"

typedef struct linux_launch runner_launch;
typedef struct linux_sandbox runner_sandbox;
#endif

struct runner_launcher {
	/* The plan of this launch on this machine (probes and scan included): what
	 * --dry-run prints. Returns 0 or -errno with e set; plan_free it either way. */
	int (*plan)(const runner_launch *l, struct halo_plan *p, struct halo_err *e);
	/* Build the sandbox and start the command (see linux_start, macos_start); what
	 * it could not enforce is appended to l->warnings for the runner to say. */
	int (*start)(const runner_launch *l, runner_sandbox **out, struct halo_err *e);
	int (*exit_fd)(const runner_sandbox *sb);   /* readable: it ended */
	int (*signal_fd)(const runner_sandbox *sb); /* readable: forward */
	void (*forward_signals)(runner_sandbox *sb);
	void (*kill)(runner_sandbox *sb); /* the wall-clock limit */
	/* The proxy's listeners into po (the caller takes them); how many. The
	 * refusals' log (netns/explain.c) into *explain_fd, -1 when there is none. */
	size_t (*listeners)(runner_sandbox *sb, struct proxy_options *po, int *explain_fd);
	/* Reap and compute halo-run's exit code; frees sb. */
	int (*finish)(runner_sandbox *sb, struct halo_outcome *out, struct halo_err *e);
	/* Readable when the command's status is in before the sandbox is gone (NULL or
	 * -1: exit_fd alone); then finish may leave the last reap to reap(), which the
	 * caller calls last (NULL: nothing to do). */
	int (*done_fd)(const runner_sandbox *sb);
	void (*reap)(void);
	/* A session's channel to its spawner (session/session_sup.c); NULL where the
	 * launcher has no sessions (macOS). */
	int (*session_fd)(const runner_sandbox *sb);
	/* The terminating signal that stopped a failed start before the command ran (a
	 * Ctrl-C during the workspace walk), 0 otherwise; NULL: none can (macOS). The run
	 * then ends as that signal says (128 + it), in its exit and its events. */
	int (*interrupted_by)(void);
};

extern const struct runner_launcher runner_launcher;

#endif
