/* A session's identity, its home persistence set part (session.c's identity holds
 * it): the set this call's PATH, XDG directories and $ZDOTDIR make, as a fresh launch
 * would guard it (linux/scan_home.c), by name and by where names lead. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "linux/linux.h"
#include "opts/opts.h"
#include "session/session_int.h"

struct home_rels {
	char **v;
	size_t n;
	bool oom;		/* or a name too long to judge: the digest is then "unknown" */
	char pre[PATH_MAX + 8]; /* the home an entry is relative to, and its tag */
};

static int add_entry(struct home_rels *h, const char *rel, const char *pre)
{
	char **g = realloc(h->v, (h->n + 1) * sizeof(char *));

	if (!g || asprintf(&g[h->n], "%s%s", pre, rel) < 0) {
		if (g)
			h->v = g;
		h->oom = true;
		return -ENOMEM;
	}
	h->v = g;
	h->n++;
	return 0;
}

/* Each entry with its home (review 11: the passwd home's cfgx/git and $HOME's digested
 * alike, and a call with XDG_CONFIG_HOME under the other joined a session that guarded
 * the first). */
static int home_entry(const char *rel, const char *why, void *arg)
{
	struct home_rels *h = arg;

	(void)why;
	return add_entry(h, rel, h->pre);
}

/* an XDG directory's entry beneath no home: absolute, never equal to a home's */
static int outside_entry(const char *rel, const char *why, void *arg)
{
	(void)why;
	return add_entry(arg, rel, "/");
}

static int rel_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A prefix row, by its text (constant: what it matches is found at each launch, and a
 * name that appears later is a guarded file the session does not hold: refused). */
static int prefix_entry(const char *dir, const char *prefix, const char *why, void *arg)
{
	struct home_rels *h = arg;
	char rel[PATH_MAX + NAME_MAX + 4];

	(void)why;
	snprintf(rel, sizeof(rel), "%s%s%s*", dir, dir[0] ? "/" : "", prefix);
	return add_entry(h, rel, h->pre);
}

/* one entry of h->pre's home set; a policy walk's error (a name past PATH_MAX) too */
static void home_walk(struct home_rels *h, const char *tag, const char *home, const char *path,
		      const struct policy_xdg *xdg)
{
	snprintf(h->pre, sizeof(h->pre), "%s%s/", tag, home);
	if (policy_home_set_each_xdg(home, path, xdg, home_entry, h) < 0 ||
	    policy_home_prefix_each_xdg(home, xdg, prefix_entry, h) < 0)
		h->oom = true;
}

static int cut_entry(const char *cut, void *arg)
{
	return add_entry(arg, cut, "C:");
}

/* lstat and readlink once a name for one digest (entries share their ways). */
#define MEMO_SLOTS 1024
struct link_memo {
	struct linux_lstat_memo *lm; /* the kernel's answers (NULL: lstat each name) */
	struct {
		char *path, *target;
		int rc;
	} e[MEMO_SLOTS];
};

static int memo_find(struct link_memo *m, const char *abs, size_t len, size_t *slot)
{
	uint32_t hash = 2166136261u;

	for (size_t j = 0; j < len; j++)
		hash = (hash ^ (unsigned char)abs[j]) * 16777619u;
	for (size_t k = 0; k < MEMO_SLOTS; k++) {
		size_t i = (hash + k) % MEMO_SLOTS;
		*slot = i;
		if (!m->e[i].path)
			return 0; /* free: not known */
		if (strlen(m->e[i].path) == len && strncmp(m->e[i].path, abs, len) == 0)
			return 1;
	}
	*slot = MEMO_SLOTS;
	return 0;
}

static int memo_link(void *ctx, const char *abs, char *buf, size_t n)
{
	struct link_memo *m = ctx;
	const char *sl = strrchr(abs, '/');
	size_t i;

	/* beneath a name known missing: missing too, without asking */
	if (sl && sl > abs && memo_find(m, abs, (size_t)(sl - abs), &i) &&
	    (m->e[i].rc == -ENOENT || m->e[i].rc == -ENOTDIR))
		return m->e[i].rc;
	if (!memo_find(m, abs, strlen(abs), &i)) {
		int rc = m->lm ? linux_lstat_memo_link(m->lm, abs, buf, n)
			       : runner_hook_link_of(NULL, abs, buf, n);
		if (i == MEMO_SLOTS)
			return rc; /* full: asked anew each time */
		if (!(m->e[i].path = strdup(abs)) || (rc == 1 && !(m->e[i].target = strdup(buf)))) {
			free(m->e[i].path);
			m->e[i].path = NULL;
			return rc;
		}
		m->e[i].rc = rc;
		return rc;
	}
	if (m->e[i].rc == 1 && snprintf(buf, n, "%s", m->e[i].target) >= (int)n)
		return -ENAMETOOLONG;
	return m->e[i].rc;
}

/* Is a name on abs's way (absolute, clean: a home and a set entry) a symlink? Asked of
 * the memo one prefix at a time, up to the first missing one. */
static bool link_on_way(struct link_memo *m, const char *abs)
{
	char p[PATH_MAX], buf[PATH_MAX];

	if (snprintf(p, sizeof(p), "%s", abs) >= (int)sizeof(p))
		return true;
	for (char *sl = strchr(p + 1, '/');; sl = strchr(sl + 1, '/')) {
		if (sl)
			*sl = '\0';
		int rc = memo_link(m, p, buf, sizeof(buf));
		if (rc == 1 || (rc < 0 && rc != -ENOENT && rc != -ENOTDIR))
			return true; /* a link, or cannot tell: the full walk says */
		if (rc < 0 || !sl)
			return false;
		*sl = '/';
	}
}

struct lead_walk {
	struct home_rels *h;
	struct link_memo *m;
	const char *home;
};

/* An entry of the set where it leads, when a link or a ".." sends it elsewhere than its
 * name (review 12: ~/.config retargeted on the host after the session's start). */
static int lead_entry(const char *rel, const char *why, void *arg)
{
	struct lead_walk *w = arg;
	char abs[PATH_MAX], to[PATH_MAX];
	int rc;

	(void)why;
	if (snprintf(abs, sizeof(abs), "%s/%s", w->home, rel) >= (int)sizeof(abs))
		return add_entry(w->h, abs, "E:long:");
	if (!link_on_way(w->m, abs))
		return 0; /* (most: it leads where it is named) */
	rc = policy_path_leads(abs, memo_link, w->m, to, sizeof(to), NULL);
	if (rc < 0)
		return add_entry(w->h, abs, "E:");
	return strcmp(to, abs) != 0 ? add_entry(w->h, to, "L:") : 0;
}

/* The passwd home and $HOME are one (the usual case): the second's walks would add the
 * first's entries again, which the digest takes once (session_home_set_text), so it is walked
 * once (as linux/scan_home.c does). */
static int same_homes(const char *const homes[2])
{
	return homes[0] && homes[1] && strcmp(homes[0], homes[1]) == 0;
}

/* What a fresh launch adds by where names lead (linux/scan_home.c): the set again for
 * the homes as they resolve, the XDG directories and each entry of the XDG lists
 * where they lead (with a missing name a ".." follows, kept from being made), each
 * entry of the set a link sends elsewhere, and each PATH entry that leads into a
 * resolved home (review 10: a call with ~/x/../tools/bin on its PATH joined a session
 * started without it, and wrote ~/tools/bin/ls that a fresh launch keeps read-only).
 * A name that cannot be told (a loop, past PATH_MAX) is an entry of its own. */
static void resolved_entries(const runner_launch *l, struct home_rels *h)
{
	const char *homes[2] = {l->pw_home, l->env_home}, *hres[2] = {NULL, NULL};
	const char *xv[2] = {l->caller_xdg_config, l->caller_xdg_data};
	/* (the places $ZDOTDIR may be are a list too) */
	const char *xl[3] = {l->caller_xdg_config_dirs, l->caller_xdg_data_dirs, l->caller_zdotdir};
	char hr[2][PATH_MAX], xr[2][PATH_MAX], cut[PATH_MAX], to[PATH_MAX], e[PATH_MAX];
	char *lists[3] = {NULL, NULL, NULL};
	struct link_memo *m = calloc(1, sizeof(*m));

	if (!m) {
		h->oom = true;
		return;
	}
	m->lm = linux_lstat_memo_new();
	for (int i = 0; i < 2; i++)
		if (i == 1 && same_homes(homes))
			hres[1] = hres[0];
		else if (homes[i] && homes[i][0] == '/' && realpath(homes[i], hr[i]))
			hres[i] = hr[i];
	for (int k = 0; k < 3 && !h->oom; k++) {
		int rc = 0;
		if (k < 2) {
			rc = policy_xdg_leads(xv[k], memo_link, m, xr[k], PATH_MAX, cut,
					      sizeof(cut));
			if (rc < 0)
				xr[k][0] = '\0';
			if (rc < 0 && rc != -EINVAL)
				add_entry(h, xv[k], "E:");
			else if (rc == 0 && cut[0])
				add_entry(h, cut, "C:");
		}
		rc = policy_xdg_list_leads(xl[k], memo_link, m, &lists[k], cut_entry, h);
		if (rc == -ENOMEM)
			h->oom = true;
		else if (rc < 0)
			add_entry(h, xl[k], "E:list:");
	}
	const struct policy_xdg xdg = {xr[0][0] ? xr[0] : xv[0],    xr[1][0] ? xr[1] : xv[1],
				       lists[0] ? lists[0] : xl[0], lists[1] ? lists[1] : xl[1],
				       lists[2] ? lists[2] : xl[2], policy_caches_host(l->policy)};
	/* (a home that is where it leads, the usual one, adds nothing the named pass lacks
	 * unless an XDG directory or list leads elsewhere) */
	bool xdg_other = (xr[0][0] && strcmp(xr[0], xv[0])) || (xr[1][0] && strcmp(xr[1], xv[1])) ||
			 lists[0] || lists[1] || lists[2];
	for (int i = 0; i < 2 - same_homes(homes) && !h->oom; i++)
		if (hres[i] && (xdg_other || strcmp(hres[i], homes[i]) != 0))
			home_walk(h, "R:", hres[i], l->caller_path, &xdg);
	for (int i = 0; i < 2 - same_homes(homes) && !h->oom; i++) {
		struct lead_walk w = {h, m, homes[i]};
		if (homes[i] && homes[i][0] == '/' &&
		    policy_home_set_each_xdg(homes[i], l->caller_path, &xdg, lead_entry, &w) ==
			-ENAMETOOLONG)
			add_entry(h, homes[i], "E:long:");
	}
	const char *all[4] = {homes[0], homes[1], hres[0], hres[1]};
	snprintf(h->pre, sizeof(h->pre), "/");
	if (!h->oom && (policy_home_set_each_xdg_outside(all, 4, &xdg, outside_entry, h) < 0 ||
			policy_home_prefix_each_xdg_outside(all, 4, &xdg, prefix_entry, h) < 0))
		add_entry(h, "", "E:long-outside");
	for (const char *p = l->caller_path; p && *p && !h->oom;) {
		size_t len = strcspn(p, ":");
		if (p[0] == '/' && len < sizeof(e)) {
			memcpy(e, p, len);
			e[len] = '\0';
			int rc = policy_path_leads(e, memo_link, m, to, sizeof(to), NULL);
			if (rc < 0)
				add_entry(h, e, "E:");
			for (int i = 0; i < 2 && rc == 0; i++)
				if (hres[i] && policy_path_beneath(to, hres[i]) &&
				    strcmp(to, hres[i]) != 0) {
					add_entry(h, to, "P:");
					break;
				}
		}
		p += len;
		p += *p == ':';
	}
	for (size_t i = 0; i < MEMO_SLOTS; i++) {
		free(m->e[i].path);
		free(m->e[i].target);
	}
	linux_lstat_memo_free(m->lm);
	free(m);
	free(lists[0]);
	free(lists[1]);
	free(lists[2]);
}

/* The home persistence set this call's PATH and XDG directories make (a fresh launch
 * from this call makes it read-only; the session guards the one its start made), by
 * its digest over the entries sorted, each once (the order and repeats of PATH change
 * nothing guarded): a call whose set differs is a call into another sandbox (review:
 * a call with ~/tools/bin first in its PATH joined and wrote ~/tools/bin/ls). */
void session_home_set_text(FILE *f, const runner_launch *l)
{
	const struct policy_xdg xdg = {l->caller_xdg_config,	  l->caller_xdg_data,
				       l->caller_xdg_config_dirs, l->caller_xdg_data_dirs,
				       l->caller_zdotdir,	  policy_caches_host(l->policy)};
	const char *homes[2] = {l->pw_home, l->env_home};
	struct home_rels h = {NULL, 0, false, ""};
	char *t = NULL, hex[65];
	size_t n = 0;
	FILE *m;

	for (int i = 0; i < 2 - same_homes(homes) && !h.oom; i++)
		if (homes[i] && homes[i][0] == '/')
			home_walk(&h, "", homes[i], l->caller_path, &xdg);
	snprintf(h.pre, sizeof(h.pre), "/");
	if (!h.oom && (policy_home_set_each_xdg_outside(homes, 2, &xdg, outside_entry, &h) < 0 ||
		       policy_home_prefix_each_xdg_outside(homes, 2, &xdg, prefix_entry, &h) < 0))
		h.oom = true;
	if (!h.oom)
		resolved_entries(l, &h);
	if (h.n)
		qsort(h.v, h.n, sizeof(char *), rel_cmp);
	if (!h.oom && (m = open_memstream(&t, &n))) {
		for (size_t i = 0; i < h.n; i++)
			if (i == 0 || strcmp(h.v[i], h.v[i - 1]) != 0)
				fprintf(m, "%s\n", h.v[i]);
		if (fclose(m) == 0) {
			runner_sha256_hex(t ? t : "", t ? n : 0, hex);
			fprintf(f, " home-set-from-PATH-and-XDG=%.16s", hex);
		}
		free(t);
	} else { /* never equal to a session's, nor to another call's: refused rather than
		  * unchecked (review 12: two "unknown" were equal) */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		fprintf(f, " home-set-from-PATH-and-XDG=unknown-%ld-%lld-%ld", (long)getpid(),
			(long long)ts.tv_sec, ts.tv_nsec);
	}
	for (size_t i = 0; i < h.n; i++)
		free(h.v[i]);
	free(h.v);
}
