/* A content search's bounded walk, for `halo-run hook` (hook.h, find_protected): what
 * ripgrep as Claude Code runs it reads (hidden names too; version control directories
 * and symbolic links not), until a file a protected glob matches that the search reads:
 * every file with no file-name glob; with one, a file it names by its name wherever it
 * is (.env.local by *.local), or one inside a directory a protected glob names,
 * whatever its own name (.envs/.production/.django by .django). At most
 * WALK_MAX_ENTRIES entries and WALK_MAX_MS: past either, -E2BIG (the search is
 * blocked: fail closed).
 *
 * What ripgrep would leave out by .gitignore, .ignore and .rgignore files is walked all
 * the same: their rules (nested files, negations, a glob that overrides them, where a
 * repository starts) are ripgrep's to apply, and a walk that skipped what ripgrep reads
 * would let a search through (a review found eight such layouts). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "hook/hook.h"
#include "runner/runner_int.h"

#define WALK_MAX_ENTRIES 200000
#define WALK_MAX_MS	 300

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static unsigned char type_of(const struct dirent *de, const char *abs)
{
	struct stat st;

	if (de->d_type != DT_UNKNOWN)
		return de->d_type;
	if (lstat(abs, &st) < 0)
		return DT_UNKNOWN;
	return S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
}

struct walk {
	const struct halo_policy *p;
	const char *glob; /* the search's file-name glob, "" for none */
	char **stack;
	size_t depth, cap, seen;
	long long until;
};

static int push(struct walk *w, const char *abs)
{
	if (w->depth == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		char **g = realloc(w->stack, cap * sizeof(*g));
		if (!g)
			return -ENOMEM;
		w->stack = g;
		w->cap = cap;
	}
	if (!(w->stack[w->depth] = strdup(abs)))
		return -ENOMEM;
	w->depth++;
	return 0;
}

/* One directory: 1 a protected name found (into out), 0 go on, -errno. */
static int one_dir(struct walk *w, const char *dir, char *out, size_t n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int rc = 0;

	while (d && rc == 0 && (de = readdir(d))) {
		char abs[PATH_MAX];
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (++w->seen > WALK_MAX_ENTRIES || ((w->seen & 1023) == 0 && now_ms() > w->until))
			rc = -E2BIG;
		else if ((size_t)snprintf(abs, sizeof(abs), "%s/%s", strcmp(dir, "/") ? dir : "",
					  de->d_name) < sizeof(abs)) {
			unsigned char t = type_of(de, abs);
			bool dir_here = t == DT_DIR;
			/* abs holds every directory on the way: a file inside .envs/ is
			 * protected by that, whatever its own name. */
			if (t != DT_LNK && !dir_here && hook_search_reads(w->glob, de->d_name) &&
			    policy_protected_glob_hit(w->p, abs)) {
				snprintf(out, n, "%s", abs);
				rc = 1;
			} else if (dir_here && !hook_search_skips_dir(de->d_name)) {
				rc = push(w, abs);
			}
		}
	}
	if (d)
		closedir(d);
	return rc;
}

int runner_hook_find_protected(const struct halo_policy *p, const char *folder, const char *glob,
			       char *out, size_t n)
{
	struct walk w = {.p = p, .glob = glob ? glob : "", .until = now_ms() + WALK_MAX_MS};
	int rc;

	rc = push(&w, folder);
	while (rc == 0 && w.depth) {
		char *dir = w.stack[--w.depth];
		rc = one_dir(&w, dir, out, n);
		free(dir);
	}
	while (w.depth)
		free(w.stack[--w.depth]);
	free(w.stack);
	return rc;
}
