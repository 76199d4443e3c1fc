/* The scan's bounds (scan.c calls these after the walk): a walk that stopped short of
 * the workspace, and more masks than the kernel's mount table takes. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "linux/scan_int.h"

/* A walk that did not cover everything: refused unless the policy accepts it, and
 * then stated. */
int linux_scan_judge_truncated(const struct linux_launch *l, const struct linux_scan *s,
			       struct halo_err *e)
{
	/* 4 bytes shown per byte at most; the statement is a path and a reason. */
	char shown[4 * (PATH_MAX + 128) + 1];
	const char *what =
	    s->uncovered ? policy_printable(s->uncovered, shown, sizeof(shown)) : NULL;

	if (!s->truncated)
		return 0;
	if (l->policy->fail_if_unavailable != 0) {
		if (s->uncovered)
			halo_err_set(e,
				     "the workspace scan cannot cover %s, so protected files there "
				     "could not be masked; move or rename it, or set "
				     "sandbox.failIfUnavailable: false to launch without it",
				     what);
		else
			halo_err_set(e,
				     "the workspace scan stopped at %zu entries before covering "
				     "every protected path",
				     s->entries_scanned);
		return -E2BIG;
	}
	/* Said by the runner, like every launch warning (nothing below runner/ prints). */
	if (l->warnings && s->uncovered)
		plan_text_add(l->warnings,
			      "WARNING: the workspace scan did not cover %s, nor what it would "
			      "have walked after it (%zu entries covered): protected files there "
			      "are NOT masked (failIfUnavailable: false)",
			      what, s->entries_scanned);
	else if (l->warnings)
		plan_text_add(l->warnings,
			      "WARNING: the workspace scan stopped after %zu entries: protected "
			      "files beyond them are NOT masked (failIfUnavailable: false)",
			      s->entries_scanned);
	return 0;
}

/* Masks, guards and pins are one mount each in the sandbox, whose mount table the
 * kernel bounds (fs.mount-max, 100000 by default): past LINUX_SCAN_MAX_MOUNTS the
 * layout cannot be built, whatever the policy accepts. The message names the
 * directory holding most masks: naming it in protectedPaths masks it with one. */
int linux_scan_check_mounts(const struct linux_scan *s, struct halo_err *e)
{
	size_t n = s->masked.n + s->guarded.n + s->pinned.n, best = 0, run = 0;
	const char *at = NULL;
	char shown[4 * PATH_MAX + 1];

	if (n <= linux_scan_max_mounts)
		return 0;
	for (size_t i = 0; i < s->masked.n; i++) {
		const char *a = s->masked.v[i], *sa = strrchr(a, '/');
		const char *b = i ? s->masked.v[i - 1] : NULL, *sb = b ? strrchr(b, '/') : NULL;
		run = b && sa - a == sb - b && strncmp(a, b, (size_t)(sa - a)) == 0 ? run + 1 : 1;
		if (run > best) {
			best = run;
			at = a;
		}
	}
	halo_err_set(e,
		     "the sandbox would need %zu mounts for masks, guards and pins (at most "
		     "%zu): %zu protected files in the directory of %s alone; name such a "
		     "directory in sandbox.protectedPaths to mask it whole",
		     n, linux_scan_max_mounts, best,
		     at ? policy_printable(at, shown, sizeof(shown)) : "?");
	return -E2BIG;
}
