/* `halo-run index [list | stop [TREE...] | clear [TREE...]]`: the workspace index and
 * its watchers (linux/index_admin.c), listed and ended by hand. A watcher also exits by
 * itself after 15 minutes idle, or within 2 s of its tree's removal (with the tree's
 * index); a cleared index is rebuilt by the next launch. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linux/linux.h"
#include "runner/runner_int.h"

static bool wanted(const struct runner_opts *o, const struct linux_index_info *in)
{
	if (o->n_rest <= 1)
		return true;
	for (int i = 1; i < o->n_rest; i++)
		if (strcmp(o->rest[i], in->root) == 0)
			return true;
	return false;
}

/* What exists and why: each tree's index, its watcher and the reason it runs (or
 * does not), and a tree that is gone (its index is of no use: `clear` removes it). */
static void print_one(const struct linux_index_info *in, size_t held)
{
	double pays = (double)in->pays_us / 1000, pays_call = (double)in->call_us / 1000;
	char shown[4 * PATH_MAX + 1];

	/* Escaped: a tree's name is anyone's (a newline or a terminal escape in it once
	 * printed a forged line and hid the real one). */
	printf("  %s  %zu directories, %zu bytes", policy_printable(in->root, shown, sizeof(shown)),
	       in->dirs, in->bytes);
	if (in->tree_gone)
		printf(", the tree is gone (`halo-run index clear` removes its index)");
	if (in->running && in->walk_us >= 0)
		printf(", watcher running (pid %d: the walk took %.1f ms, a watcher is started "
		       "at %.0f ms or more, by a session's call at %.1f)",
		       in->pid, (double)in->walk_us / 1000, pays, pays_call);
	else if (in->running)
		printf(", watcher running (pid %d)", in->pid);
	else if (in->watcher)
		printf(", watcher gone (stale socket)");
	else if (in->dirs > linux_scan_watch_cap())
		printf(", no watcher (more directories than a watcher takes, %zu: an eighth of "
		       "fs.inotify.max_user_watches, at most 131072; each launch stats them)",
		       linux_scan_watch_cap());
	else if (in->dirs + held > linux_scan_watch_cap())
		printf(", no watcher (the other watchers take %zu of the %zu directories all of "
		       "the user's watchers may watch together: an eighth of "
		       "fs.inotify.max_user_watches, at most 131072; each launch stats them)",
		       held, linux_scan_watch_cap());
	else
		printf(", no watcher (a launch starts one only where its walk takes %.0f ms or "
		       "more, a session's call at %.1f, in a tree of %d directories or more; it "
		       "ends after 15 minutes idle or once the tree is gone)",
		       pays, pays_call, (int)in->min_dir);
	printf("\n");
}

static void print_list(const char *dir, const struct linux_index_info *v, size_t n)
{
	printf("index: %s\n", dir);
	if (n == 0)
		printf("  (none)\n");
	size_t held = 0;
	for (size_t i = 0; i < n; i++)
		held += v[i].running ? v[i].dirs : 0;
	for (size_t i = 0; i < n; i++)
		print_one(&v[i], held - (v[i].running ? v[i].dirs : 0));
}

int runner_cmd_index(const struct runner_opts *o)
{
	const char *verb = o->n_rest > 0 ? o->rest[0] : "list";
	bool list = strcmp(verb, "list") == 0, clear = strcmp(verb, "clear") == 0;
	struct linux_index_info *v = NULL;
	char home[4096], dir[4200], shown[4 * PATH_MAX + 1];
	size_t n = 0, done = 0;
	int rc;

	if (!list && !clear && strcmp(verb, "stop") != 0) {
		fprintf(stderr,
			"halo-run: index: unknown '%s' (list, stop [TREE...], clear "
			"[TREE...])\n",
			verb);
		return HALO_EXIT_SETUP;
	}
	/* The home a launch would use: $HOME, else the password database's. */
	const char *env_home = getenv("HOME");
	if (env_home && env_home[0] == '/')
		snprintf(home, sizeof(home), "%s", env_home);
	else if (runner_pw_home(geteuid(), home, sizeof(home)) < 0)
		home[0] = '\0';
	if (linux_index_place(home, dir, sizeof(dir)) < 0) {
		fprintf(stderr, "halo-run: index: no home directory to keep an index in\n");
		return HALO_EXIT_SETUP;
	}
	if ((rc = linux_index_list(dir, &v, &n)) < 0) {
		fprintf(stderr, "halo-run: index: %s: %s\n", dir, strerror(-rc));
		return HALO_EXIT_SETUP;
	}
	if (list) {
		print_list(dir, v, n);
		free(v);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (!wanted(o, &v[i]) || (!clear && !v[i].watcher))
			continue;
		policy_printable(v[i].root, shown, sizeof(shown));
		if ((rc = linux_index_end(dir, &v[i], clear)) < 0)
			fprintf(stderr, "halo-run: index: %s: %s\n", shown, strerror(-rc));
		else
			printf("%s %s\n", clear ? "cleared" : "stopped the watcher of", shown);
		done += rc == 0;
	}
	if (done == 0)
		printf("nothing to %s\n", verb);
	free(v);
	return 0;
}
