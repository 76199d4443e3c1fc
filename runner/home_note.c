/* The one line said (with --verbose or --dry-run; a warning whenever the guard is off)
 * when the workspace (or a writable root) is the home or holds it: the home is the
 * command's to change, but its persistence set (policy/homeset.c) stays read-only and
 * cannot be created; --dry-run lists each entry with its reason. */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runner/runner_int.h"

/* The home's first scan (no index yet) walks every file of it: said after a second. */
static struct {
	char msg[PATH_MAX + 300];
	pthread_t t;
	pthread_mutex_t m;
	pthread_cond_t c;
	bool running, done;
} slow = {.m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER};

/* The writable tree (resolved) that is `home` or holds it, or NULL. */
static const char *tree_holding(const struct halo_policy *p, const char *ws, const char *home,
				char *buf, size_t n)
{
	char real[PATH_MAX];

	if (!home || home[0] != '/' || !realpath(home, real) || strlen(real) >= n)
		return NULL;
	if (p->mode == POLICY_MODE_WORKSPACE_WRITE && policy_home_in_tree(real, ws))
		return ws;
	for (size_t i = 0; i < p->writable_abs.n; i++) {
		char w[PATH_MAX];
		if (realpath(p->writable_abs.items[i], w) && policy_home_in_tree(real, w)) {
			snprintf(buf, n, "%s", p->writable_abs.items[i]);
			return buf;
		}
	}
	return NULL;
}

void runner_home_note(const struct runner_opts *o, const struct runner_env *re)
{
	const char *homes[] = {re->pw_home, re->env_home};
	char buf[PATH_MAX];

	if (re->policy->mode == POLICY_MODE_OFF)
		return;
	for (size_t i = 0; i < 2; i++) {
		const char *tree;

		if (i == 1 && homes[1] && homes[0] && strcmp(homes[1], homes[0]) == 0)
			continue; /* the same home: resolved and said once */
		tree = tree_holding(re->policy, re->workspace, homes[i], buf, sizeof(buf));
		if (!tree)
			continue;
		if (re->policy->guard_persistence == 0)
			fprintf(
			    stderr,
			    "halo-run: warning: %s is your home (or holds it) and "
			    "sandbox.guardPersistence is false: the whole home is writable, "
			    "shell start-up files, git's config and PATH directories included\n",
			    tree);
		if (re->policy->guard_persistence != 0 && !o->quiet)
			snprintf(
			    slow.msg, sizeof(slow.msg),
			    "halo-run: scanning %s for protected files and persistence targets "
			    "(a large home takes a while the first time; later launches reuse "
			    "its index)\n",
			    tree);
		/* The guard is the default, nothing loosened: said with --verbose and
		 * --dry-run only (a successful run says nothing). */
		if (re->policy->guard_persistence != 0 && !o->quiet && (o->verbose || o->dry_run))
			fprintf(
			    stderr,
			    "halo-run: %s is your home (or holds it): writable, except what runs "
			    "code later, which stays read-only and cannot be created: shell "
			    "start-up and logout files, git's global config (~/.gitconfig, "
			    "~/.config/git), PATH directories under the home, user services and "
			    "autostart, editor start-up files, tool configs that name programs, "
			    "agent and IDE directories (--dry-run lists them)\n",
			    tree);
		/* a guard that falls short: said as any degraded layer is (review 17) */
		if (re->policy->guard_persistence != 0 && runner_zdotdir_unknown())
			fprintf(stderr,
				"halo-run: warning: ZDOTDIR is set in a way halo-run cannot follow "
				"(in the environment, relative or with a ':', or in "
				"/etc/zsh/zshenv or .zshenv): zsh's start-up files where it points "
				"are not kept read-only in %s; set it to an absolute directory in "
				"the environment, or name them in sandbox.protectedPaths\n",
				tree);
		return;
	}
}

static void *slow_wait(void *arg)
{
	struct timespec until;
	int rc = 0;

	(void)arg;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 1;
	pthread_mutex_lock(&slow.m);
	while (!slow.done && rc == 0)
		rc = pthread_cond_timedwait(&slow.c, &slow.m, &until);
	if (!slow.done)
		fputs(slow.msg, stderr);
	pthread_mutex_unlock(&slow.m);
	return NULL;
}

void runner_home_scan_begin(void)
{
	if (!slow.msg[0] || slow.running)
		return;
	sigset_t all, old;

	slow.done = false;
	/* Signals stay the launch's: a thread that left them open would take a Ctrl-C
	 * during the walk and die of it, halo-run and all (nothing cleaned up, nothing
	 * said), before the launch blocks them for its loop and for the walk's own stop. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	slow.running = pthread_create(&slow.t, NULL, slow_wait, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void runner_home_scan_end(void)
{
	if (!slow.running)
		return;
	pthread_mutex_lock(&slow.m);
	slow.done = true;
	pthread_cond_signal(&slow.c);
	pthread_mutex_unlock(&slow.m);
	pthread_join(slow.t, NULL);
	slow.running = false;
}
