/* Path facts: the one home of what every consumer (the plan, the Linux scan, the
 * creation broker, `halo-run hook`'s file tools, the SBPL rendering, verify) needs to
 * know about a concrete path, so that the hook can never allow what the sandbox
 * refuses. Pure: what needs the file system (does a directory hold HEAD?) comes in
 * through the caller's callback.
 *
 * The case rule. A concrete path is compared byte for byte where names are
 * case-sensitive (Linux, always: /var/tmp/ARWS is another directory than
 * /var/tmp/arws), and ASCII-folded where the file system folds (macOS builds, and the
 * SBPL rendering, which folds in its regexes whatever builds it). Two deliberate
 * exceptions, both matching MORE: validation compares writable roots with protected
 * paths case-insensitively (policy_path_within: a root must not be one spelling away
 * from a secret), and protected globs match names case-insensitively (a secret called
 * .ENV is still a secret). */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy/policy_int.h"

bool policy_name_eq(const char *a, const char *b)
{
	return POLICY_PATH_FOLD ? strcasecmp(a, b) == 0 : strcmp(a, b) == 0;
}

bool policy_name_eqn(const char *a, const char *b, size_t n)
{
	return POLICY_PATH_FOLD ? strncasecmp(a, b, n) == 0 : strncmp(a, b, n) == 0;
}

bool policy_name_folds_to_ascii(const char *s)
{
	return strstr(s, "\xc5\xbf") || strstr(s, "\xe2\x84\xaa");
}

bool policy_path_beneath(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return path[0] == '/';
	return policy_name_eqn(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

int policy_path_join(const char *in, const char *cwd, const char *home, char *out, size_t n)
{
	int w;

	if (!*in)
		return -EINVAL;
	if (in[0] == '~' && (in[1] == '/' || !in[1]))
		w = home && home[0] == '/' ? snprintf(out, n, "%s/%s", home, in + 1) : -1;
	else if (in[0] != '/')
		w = cwd && cwd[0] == '/' ? snprintf(out, n, "%s/%s", cwd, in) : -1;
	else
		w = snprintf(out, n, "%s", in);
	if (w < 0)
		return -EINVAL;
	return (size_t)w >= n ? -ENAMETOOLONG : 0;
}

int policy_path_absolute(const char *in, const char *cwd, const char *home, char *out, size_t n)
{
	char joined[POLICY_PATH_MAX * 2 + 2];
	const char *why;
	int rc = policy_path_join(in, cwd, home, joined, sizeof(joined));

	return rc < 0 ? rc : policy_path_normalise(joined, true, out, n, &why);
}

#define POLICY_MAX_LINKS 40 /* the kernel's MAXSYMLINKS */

/* rest := target + "/" + tail (tail may lie inside rest). */
static int splice(char *rest, size_t cap, const char *target, const char *tail)
{
	size_t t = strlen(target), k = strlen(tail);

	if (t + 1 + k + 1 > cap)
		return -ENAMETOOLONG;
	memmove(rest + t + 1, tail, k + 1);
	memcpy(rest, target, t);
	rest[t] = '/';
	return 0;
}

int policy_path_resolve(const char *in, policy_link_fn link, void *ctx, char *out, size_t n)
{
	char rest[POLICY_PATH_MAX * 2 + 2], target[POLICY_PATH_MAX];
	size_t o = 0;
	int links = 0, rc;

	if (in[0] != '/' || n < 2)
		return -EINVAL;
	if (snprintf(rest, sizeof(rest), "%s", in) >= (int)sizeof(rest))
		return -ENAMETOOLONG;
	out[0] = '\0';
	for (char *p = rest; *p;) {
		size_t k = strcspn(p += strspn(p, "/"), "/"), at = o;
		if (k == 0 || (k == 1 && p[0] == '.')) {
			p += k;
			continue;
		}
		if (k == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 0 && out[--o] != '/')
				;
			out[o] = '\0';
			p += k;
			continue;
		}
		if (o + 1 + k + 1 > n)
			return -ENAMETOOLONG;
		out[o++] = '/';
		memcpy(out + o, p, k);
		out[o += k] = '\0';
		p += k;
		rc = link(ctx, out, target, sizeof(target));
		if (rc == -ENOENT || rc == -ENOTDIR || rc == 0)
			continue;
		if (rc < 0)
			return rc;
		if (++links > POLICY_MAX_LINKS)
			return -ELOOP;
		o = target[0] == '/' ? 0 : at; /* absolute: from /; relative: the link's dir */
		out[o] = '\0';
		if ((rc = splice(rest, sizeof(rest), target, p)) < 0)
			return rc;
		p = rest;
	}
	if (o == 0)
		out[o++] = '/', out[o] = '\0';
	return 0;
}

/* The walk's first name that does not exist, kept as it is met. */
struct first_missing {
	policy_link_fn link;
	void *ctx;
	char at[POLICY_PATH_MAX];
	char last[POLICY_PATH_MAX]; /* the name asked last, once one was missing */
	bool dotdot;		    /* a ".." was walked after the missing name */
};

/* b is a's child: a, a slash, one name. */
static bool child_of(const char *b, const char *a)
{
	size_t n = strlen(a);

	return strncmp(b, a, n) == 0 && b[n] == '/' && b[n + 1] && !strchr(b + n + 1, '/');
}

static int link_noting_missing(void *ctx, const char *abs, char *buf, size_t n)
{
	struct first_missing *m = ctx;
	int rc = m->link(m->ctx, abs, buf, n);

	/* Past a missing name nothing is a link, so each name asked is the last one's
	 * child unless a ".." came between (review 13: ~/m/x/../bin stays beneath ~/m,
	 * yet once ~/m exists a link made at ~/m/x sends it anywhere). */
	if (m->at[0] && !child_of(abs, m->last))
		m->dotdot = true;
	if ((rc == -ENOENT || rc == -ENOTDIR) && !m->at[0])
		snprintf(m->at, sizeof(m->at), "%s", abs);
	if (m->at[0])
		snprintf(m->last, sizeof(m->last), "%s", abs);
	return rc;
}

int policy_path_leads(const char *in, policy_link_fn link, void *ctx, char *out, size_t n,
		      bool *stopped)
{
	struct first_missing m = {link, ctx, "", "", false};
	char walked[POLICY_PATH_MAX];
	size_t ml;
	int rc = policy_path_resolve(in, link_noting_missing, &m, walked, sizeof(walked));

	if (stopped)
		*stopped = false;
	if (rc < 0)
		return rc;
	ml = strlen(m.at);
	/* a ".." after the missing name: between two names asked, or after the last */
	if (ml && (m.dotdot || strcmp(walked, m.last) != 0)) {
		if (stopped)
			*stopped = true;
		return snprintf(out, n, "%s", m.at) < (int)n ? 0 : -ENAMETOOLONG;
	}
	return snprintf(out, n, "%s", walked) < (int)n ? 0 : -ENAMETOOLONG;
}

int policy_xdg_leads(const char *named, policy_link_fn link, void *ctx, char *out, size_t n,
		     char *cut, size_t cn)
{
	bool stopped;
	const char *why;
	int rc;

	out[0] = '\0';
	if (cut && cn)
		cut[0] = '\0';
	if (!named || named[0] != '/')
		return -EINVAL;
	if ((rc = policy_path_leads(named, link, ctx, out, n, &stopped)) < 0)
		return rc;
	if (!stopped)
		return 0;
	if (cut && snprintf(cut, cn, "%s", out) >= (int)cn)
		return -ENAMETOOLONG;
	return policy_path_normalise(named, true, out, n, &why);
}

int policy_xdg_list_leads(const char *list, policy_link_fn link, void *ctx, char **out,
			  int (*cut_fn)(const char *cut, void *arg), void *arg)
{
	char e[POLICY_PATH_MAX], to[POLICY_PATH_MAX], cut[POLICY_PATH_MAX];
	size_t n = 0, cap = 0;
	char *r = NULL;
	int err = 0;

	*out = NULL;
	for (const char *p = list; p && *p;) {
		size_t len = strcspn(p, ":"), tl;
		int rc = -EINVAL;
		if (p[0] == '/' && len < sizeof(e)) {
			memcpy(e, p, len);
			e[len] = '\0';
			rc = policy_xdg_leads(e, link, ctx, to, sizeof(to), cut, sizeof(cut));
		} else if (p[0] == '/')
			rc = -ENAMETOOLONG;
		p += len;
		p += *p == ':';
		if (rc < 0) {
			err = err ? err : (rc == -EINVAL ? 0 : rc);
			continue;
		}
		if (cut[0] && cut_fn && (rc = cut_fn(cut, arg)) != 0) {
			free(r);
			return rc;
		}
		tl = strlen(to);
		if (n + tl + 2 > cap) {
			char *g = realloc(r, cap = (n + tl + 2) * 2);
			if (!g) {
				free(r);
				return -ENOMEM;
			}
			r = g;
		}
		memcpy(r + n, to, tl);
		n += tl;
		r[n++] = ':';
		r[n] = '\0';
	}
	if (n)
		r[n - 1] = '\0';
	*out = r;
	return err;
}

/* ---------------------------------------------------------------- the sandbox's own */

/* The sandbox gets these fresh: a host path beneath them is out of sight unless a tree
 * is bound back in. /var/run goes with /run (usually a symlink to it). */
static const char *const fresh_dirs[] = {"/tmp", "/run", "/var/run", "/dev"};

bool policy_path_in_fresh(const char *path)
{
	for (size_t i = 0; i < sizeof(fresh_dirs) / sizeof(fresh_dirs[0]); i++)
		if (policy_path_beneath(path, fresh_dirs[i]))
			return true;
	return false;
}

/* The devices the sandbox's minimal /dev holds, readable in and out of it. */
static const char *const sandbox_devices[] = {"/dev/null",   "/dev/zero",    "/dev/full",
					      "/dev/random", "/dev/urandom", "/dev/tty"};

/* /proc/self, /proc/thread-self, /proc/<pid>: another pid namespace's in the sandbox. */
static bool proc_process(const char *path)
{
	const char *r = path + 5;
	size_t k = strcspn(r + 1, "/");

	if (strncmp(path, "/proc/", 6) != 0)
		return false;
	r++;
	return (k == 4 && !strncmp(r, "self", 4)) || (k == 11 && !strncmp(r, "thread-self", 11)) ||
	       (k > 0 && strspn(r, "0123456789") == k);
}

const char *policy_path_host_only(const char *path)
{
	if (proc_process(path))
		return "/proc";
	if (policy_path_scratch(path))
		return NULL;
	for (size_t i = 0; i < sizeof(sandbox_devices) / sizeof(sandbox_devices[0]); i++)
		if (strcmp(path, sandbox_devices[i]) == 0)
			return NULL;
	for (size_t i = 0; i < sizeof(fresh_dirs) / sizeof(fresh_dirs[0]); i++)
		if (strcmp(fresh_dirs[i], "/tmp") != 0 && policy_path_beneath(path, fresh_dirs[i]))
			return fresh_dirs[i];
	return NULL;
}

/* Scratch space every mode may write: the sandbox's own tmpfs at these paths (the
 * host's are scratch too, which is why the hook lets a file tool write there). */
static const char *const scratch_dirs[] = {"/tmp", "/dev/shm"};

const char *const *policy_scratch_dirs(size_t *n)
{
	*n = sizeof(scratch_dirs) / sizeof(scratch_dirs[0]);
	return scratch_dirs;
}

const char *policy_path_scratch(const char *path)
{
	for (size_t i = 0; i < sizeof(scratch_dirs) / sizeof(scratch_dirs[0]); i++)
		if (policy_path_beneath(path, scratch_dirs[i]))
			return scratch_dirs[i];
	return NULL;
}

/* ---------------------------------------------------------------- protected globs */

size_t policy_glob_normalise(const char *g, char *out, size_t n)
{
	size_t k;

	for (;;) {
		if (strncmp(g, "./", 2) == 0)
			g += 2;
		else if (strncmp(g, "**/", 3) == 0)
			g += 3;
		else
			break;
	}
	k = strlen(g);
	while (k > 0 && g[k - 1] == '/')
		k--;
	if (k == 0 || k >= n)
		return 0;
	memcpy(out, g, k);
	out[k] = '\0';
	return k;
}

bool policy_glob_is_path(const char *g)
{
	return strchr(g, '/') != NULL;
}

bool policy_glob_fnmatch(const char *g, const char *text)
{
	return fnmatch(g, text, FNM_CASEFOLD) == 0;
}

bool policy_glob_match_path(const char *g, const char *path)
{
	bool path_glob = policy_glob_is_path(g);
	char comp[POLICY_PATH_MAX];

	for (const char *s = path; s && *s; s = strchr(s, '/')) {
		if (*s == '/')
			s++;
		size_t k = strcspn(s, "/");
		if (path_glob) {
			if (policy_glob_fnmatch(g, s))
				return true;
			continue;
		}
		if (k >= sizeof(comp))
			continue;
		memcpy(comp, s, k);
		comp[k] = '\0';
		if (k && policy_glob_fnmatch(g, comp))
			return true;
	}
	return false;
}

const char *policy_protected_glob_hit(const struct halo_policy *p, const char *abs)
{
	char g[POLICY_PATH_MAX];

	for (size_t i = 0; i < p->protected_globs.n; i++)
		if (policy_glob_normalise(p->protected_globs.items[i], g, sizeof(g)) &&
		    policy_glob_match_path(g, abs))
			return p->protected_globs.items[i];
	return NULL;
}

/* ---------------------------------------------------------------- the floor */

const struct policy_floor_entry *policy_floor_entry_of(const char *entry_abs,
						       const char *const *homes, size_t n_homes)
{
	const struct policy_floor_entry *fl;
	char buf[POLICY_PATH_MAX];
	size_t nf;

	fl = policy_floor(&nf);
	for (size_t k = 0; k < nf; k++)
		for (size_t h = 0; h < n_homes; h++)
			if (fl[k].path[0] == '~' && homes[h] &&
			    (size_t)snprintf(buf, sizeof(buf), "%s%s", homes[h], fl[k].path + 1) <
				sizeof(buf) &&
			    strcmp(buf, entry_abs) == 0)
				return &fl[k];
	return NULL;
}
