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
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hook/hook.h"
#include "runner/runner_int.h"

#define WALK_MAX_ENTRIES 200000
#define WALK_MAX_MS	 300
/* The launch's walk of a tree no launch has indexed yet: past this, the bounded walk
 * decides (a harness that times its hook out runs the tool anyway), and the hook does
 * not try again for SCAN_RETRY_S: every file tool would wait that long otherwise. A
 * launch there indexes the whole tree (it has no such bound), and later calls are
 * quick. */
#define SCAN_BUDGET_MS 2000
#define SCAN_RETRY_S   600

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
	bool any;	  /* inside what the sandbox masks: every file the search reads */
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
			    (w->any || policy_protected_glob_hit(w->p, abs))) {
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

static int walk_from(const struct halo_policy *p, const char *folder, const char *glob, bool any,
		     char *out, size_t n)
{
	struct walk w = {
	    .p = p, .glob = glob ? glob : "", .any = any, .until = now_ms() + WALK_MAX_MS};
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

#ifndef RUNNER_MACOS
/* Where the hook's launch would start (hook_cmd.c sets it around one judgment), and
 * what that launch masks, asked once (rc: 1 not yet asked, 0 known, -errno). */
static struct {
	const char *workspace, *pw_home, *env_home;
	struct linux_masked m;
	int rc;
} from = {.rc = 1};

void runner_hook_walk_launch(const char *workspace, const char *pw_home, const char *env_home)
{
	linux_masked_free(&from.m);
	from.workspace = workspace;
	from.pw_home = pw_home;
	from.env_home = env_home;
	from.rc = 1;
}

/* The note that the workspace's walk went past SCAN_BUDGET_MS, in the index's own
 * directory (the user's alone; masked in every sandbox): hook-bound-<digest of it>. */
static bool bound_note(char *out, size_t n)
{
	char dir[4096], hex[65];

	if (linux_index_place(from.env_home ? from.env_home : from.pw_home, dir, sizeof(dir)) < 0)
		return false;
	runner_sha256_hex(from.workspace, strlen(from.workspace), hex);
	return (size_t)snprintf(out, n, "%s/hook-bound-%.32s", dir, hex) < n;
}

static bool bound_recently(const char *note)
{
	struct stat st;
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return lstat(note, &st) == 0 && S_ISREG(st.st_mode) && now.tv_sec >= st.st_mtim.tv_sec &&
	       now.tv_sec - st.st_mtim.tv_sec < SCAN_RETRY_S;
}

static void note_bound(const char *note, bool bound)
{
	int fd;

	if (!bound) {
		unlink(note);
		return;
	}
	fd = open(note, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		futimens(fd, NULL);
		close(fd);
	}
}

/* What a launch from the hook's workspace masks, or NULL when that is not known (no
 * workspace, a walk that stopped short now or lately). */
static const struct linux_masked *masked_list(const struct halo_policy *p)
{
	struct halo_err e = {{0}};
	char note[4200];
	const char *knob = getenv("HALO_RUN_HOOK_SCAN_MS"); /* tests: a smaller bound */
	long ms = knob ? strtol(knob, NULL, 10) : 0;

	/* An operating system tree (/, /usr...) is no workspace a launch writes in: not
	 * walked (the judgments by name stand). */
	if (from.rc == 1 &&
	    (!from.workspace || !from.pw_home || policy_workspace_refused(from.workspace)))
		from.rc = -ENOENT;
	if (from.rc != 1)
		return from.rc == 0 ? &from.m : NULL;
	bool noted = bound_note(note, sizeof(note));
	if (noted && bound_recently(note))
		from.rc = -E2BIG;
	if (from.rc == 1) {
		struct linux_launch l = {
		    .policy = p,
		    .workspace = from.workspace,
		    .pw_home = from.pw_home,
		    .env_home = from.env_home,
		    .caller_path = getenv("PATH"),
		    .caller_xdg_config = getenv("XDG_CONFIG_HOME"),
		    .caller_xdg_data = getenv("XDG_DATA_HOME"),
		    .caller_xdg_config_dirs = getenv("XDG_CONFIG_DIRS"),
		    .caller_xdg_data_dirs = getenv("XDG_DATA_DIRS"),
		    .caller_zdotdir = runner_zdotdir(),
		    .quiet = true,
		    .scan_budget_ms = ms > 0 && ms < SCAN_BUDGET_MS ? (unsigned)ms : SCAN_BUDGET_MS,
		};
		from.rc = linux_masked_list(&l, &from.m, &e);
		if (noted && (from.rc == 0 || from.rc == -E2BIG))
			note_bound(note, from.rc == -E2BIG);
	}
	return from.rc == 0 ? &from.m : NULL;
}

static bool in_walked_tree(const struct linux_masked *m, const char *abs)
{
	for (size_t i = 0; i < m->n_roots; i++)
		if (policy_path_beneath(abs, m->roots[i]))
			return true;
	return false;
}

/* One unit of a name compared without case: an ASCII letter folded; U+017F (long s)
 * and U+212A (Kelvin sign) as s and k, as JavaScript's Unicode case folding takes them
 * (minimatch's /iu); any other non-ASCII character as one unit that matches any other
 * (the safe side). */
static int unit(const unsigned char **p)
{
	const unsigned char *c = *p;

	if (*c < 0x80) {
		*p += *c != 0;
		return tolower(*c);
	}
	if (c[0] == 0xc5 && c[1] == 0xbf) {
		*p += 2;
		return 's';
	}
	if (c[0] == 0xe2 && c[1] == 0x84 && c[2] == 0xaa) {
		*p += 3;
		return 'k';
	}
	do
		(*p)++;
	while ((**p & 0xc0) == 0x80);
	return 0x100;
}

/* abs is dir or beneath it, letter case aside: Gemini's read_many_files globs an
 * include that does not exist as written without case (CONFIG/prod.env reads
 * config/prod.env, data/über.txt reads data/Über.txt, DATA/x.txt reads data/x.txt), and a
 * name that differs only so is never the sandbox's to show. What follows dir in abs
 * (from its slash, or "" when abs is dir), or NULL. */
static const char *past_nocase(const char *abs, const char *dir)
{
	const unsigned char *a = (const unsigned char *)abs, *d = (const unsigned char *)dir;
	size_t n = strlen(dir);

	while (n > 1 && d[n - 1] == '/')
		n--;
	const unsigned char *end = d + n;
	while (d < end)
		if (!*a || unit(&a) != unit(&d))
			return NULL;
	if (n == 1) /* dir is "/": what follows starts at its slash */
		return (const char *)a - 1;
	return *a == '/' || *a == '\0' ? (const char *)a : NULL;
}

static bool beneath_nocase(const char *abs, const char *dir)
{
	return past_nocase(abs, dir) != NULL;
}

int runner_hook_masked(const struct halo_policy *p, const char *abs, char *out, size_t n)
{
	const struct linux_masked *m = masked_list(p);

	if (!m)
		return -ENOENT;
	for (size_t i = 0; i < m->n; i++)
		if (beneath_nocase(abs, m->v[i])) {
			snprintf(out, n, "%s", m->v[i]);
			return 1;
		}
	return 0;
}

/* Would the search read m (a path the sandbox masks, rest its part below the folder)
 * or a file in it? ripgrep does not enter version control directories nor follow
 * symbolic links. 1 found (into out), 0 not, -errno. */
static int reads_masked(const struct halo_policy *p, const char *rest, const char *glob,
			const char *m, char *out, size_t n)
{
	struct stat st;

	if (lstat(m, &st) < 0 || S_ISLNK(st.st_mode))
		return 0;
	for (const char *c = rest; *c == '/';) { /* each name below the folder */
		const char *end = strchr(c + 1, '/');
		char name[NAME_MAX + 1];
		size_t len = end ? (size_t)(end - c - 1) : strlen(c + 1);
		if (len > NAME_MAX)
			return 0;
		memcpy(name, c + 1, len);
		name[len] = 0;
		if ((end || S_ISDIR(st.st_mode)) && hook_search_skips_dir(name))
			return 0;
		if (!end)
			break;
		c = end;
	}
	if (S_ISDIR(st.st_mode))
		return walk_from(p, m, glob, true, out, n);
	/* A glob with non-ASCII letters may match without case beyond what hook/ folds
	 * (Gemini's read_many_files: ſecret[[:punct:]]txt reads secret.txt): taken as
	 * reading the file. */
	bool wide = false;
	for (const char *g = glob; *g && !wide; g++)
		wide = (unsigned char)*g >= 0x80;
	if (!S_ISREG(st.st_mode) || (!wide && !hook_search_reads(glob, strrchr(m, '/') + 1)))
		return 0;
	snprintf(out, n, "%s", m);
	return 1;
}

/* What the launch masks beneath folder (or folder itself in a mask) that the search
 * would read, wherever the folder is: a parent of the workspace holds its masks too,
 * and so does the folder a protected name links into. 1 found, 0 none, -errno. */
static int masked_read(const struct linux_masked *m, const struct halo_policy *p,
		       const char *folder, const char *glob, char *out, size_t n)
{
	int rc = 0;
	const char *rest;

	/* Without case, as Gemini's read_many_files globs: DATA/x.txt reads data/x.txt. */
	for (size_t i = 0; rc == 0 && i < m->n; i++)
		if (beneath_nocase(folder, m->v[i])) { /* the folder is in it */
			snprintf(out, n, "%s", m->v[i]);
			rc = 1;
		} else if ((rest = past_nocase(m->v[i], folder))) {
			rc = reads_masked(p, rest, glob, m->v[i], out, n);
		}
	return rc;
}
#endif

int runner_hook_find_protected(const struct halo_policy *p, const char *folder, const char *glob,
			       char *out, size_t n)
{
	glob = glob ? glob : "";
#ifndef RUNNER_MACOS
	/* What the launch masks, known at any size; inside the trees it walks that is all
	 * there is to know. */
	const struct linux_masked *m = masked_list(p);
	if (m) {
		int rc = masked_read(m, p, folder, glob, out, n);
		if (rc != 0 || in_walked_tree(m, folder))
			return rc;
	}
#endif
	/* Elsewhere (or that walk could not tell): a bounded walk for protected names. */
	return walk_from(p, folder, glob, false, out, n);
}
