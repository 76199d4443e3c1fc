/* File tools (Read, Write, Edit, ...) and fetch tools, judged as the sandbox would
 * judge the same name: protected paths and the credential floor are never readable
 * nor writable (allowRead carve-outs aside, for reading), nothing outside the writable
 * roots is writable, and the persistence guard's targets stay read-only. A name is
 * judged both as written and resolved through symbolic links (the resolution is the
 * caller's, through hook_ctx), whether or not the file exists yet: a new .env or
 * .git/hooks/pre-commit is refused by its name. */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hook/hook_int.h"

#define PATH_MAX_ 4096

static void start(struct hook_verdict *v)
{
	v->outcome = HOOK_ALLOW;
	v->reason[0] = 0;
}

/* `in` made absolute (cwd, ~) with . and .. removed, lexically. */
static int lexical(const struct hook_ctx *c, const char *in, char *out, size_t n)
{
	char joined[PATH_MAX_ * 2];
	size_t o = 0;

	if (!*in)
		return -EINVAL;
	if (in[0] == '~' && (in[1] == '/' || !in[1]))
		snprintf(joined, sizeof(joined), "%s/%s", c->home, in + 1);
	else if (in[0] != '/')
		snprintf(joined, sizeof(joined), "%s/%s", c->cwd, in);
	else
		snprintf(joined, sizeof(joined), "%s", in);
	for (const char *p = joined; *p;) {
		while (*p == '/')
			p++;
		size_t k = strcspn(p, "/");
		if (!k)
			break;
		if (k == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
		} else if (!(k == 1 && p[0] == '.')) {
			if (o + k + 2 > n)
				return -ENAMETOOLONG;
			out[o++] = '/';
			memcpy(out + o, p, k);
			o += k;
		}
		p += k;
	}
	if (!o)
		out[o++] = '/';
	out[o] = 0;
	return 0;
}

/* Which rule protects `abs`: the floor entry's reason, or the policy's own entry. */
static const char *protected_by(const struct hook_ctx *c, const char *abs, bool write,
				const char **entry)
{
	const struct halo_policy *p = c->policy;
	const struct policy_floor_entry *fl;
	char buf[PATH_MAX_];
	size_t nf;

	for (size_t i = 0; i < p->protected_abs.n; i++) {
		const char *e = p->protected_abs.items[i];
		if (!policy_path_within(abs, e))
			continue;
		bool carved = false;
		for (size_t k = 0; !write && k < p->allow_read_abs.n; k++)
			carved |= policy_path_within(abs, p->allow_read_abs.items[k]);
		if (carved)
			continue;
		*entry = e;
		fl = policy_floor(&nf);
		for (size_t k = 0; k < nf; k++) {
			const char *homes[] = {c->home, c->env_home};
			for (size_t h = 0; h < 2; h++)
				if (fl[k].path[0] == '~' && homes[h] &&
				    (size_t)snprintf(buf, sizeof(buf), "%s%s", homes[h],
						     fl[k].path + 1) < sizeof(buf) &&
				    strcmp(buf, e) == 0)
					return fl[k].reason;
		}
		return "sandbox.protectedPaths";
	}
	return NULL;
}

/* protectedPaths name patterns (".env*", "*.pem", "secrets/"), as the workspace scan
 * matches them: case-insensitively, a name glob against every component, a path glob
 * against every tail of the path. */
static const char *glob_hit(const struct hook_ctx *c, const char *abs, bool write)
{
	const struct halo_policy *p = c->policy;

	for (size_t k = 0; !write && k < p->allow_read_abs.n; k++)
		if (policy_path_within(abs, p->allow_read_abs.items[k]))
			return NULL;
	for (size_t i = 0; i < p->protected_globs.n; i++) {
		char g[512];
		const char *raw = p->protected_globs.items[i];
		while (!strncmp(raw, "./", 2) || !strncmp(raw, "**/", 3))
			raw += raw[0] == '.' ? 2 : 3;
		snprintf(g, sizeof(g), "%s", raw);
		for (size_t n = strlen(g); n > 0 && g[n - 1] == '/';)
			g[--n] = 0;
		if (!g[0])
			continue;
		bool path_glob = strchr(g, '/') != NULL;
		for (const char *s = abs; s && *s; s = strchr(s, '/')) {
			s++;
			char comp[PATH_MAX_];
			size_t k = strcspn(s, "/");
			snprintf(comp, sizeof(comp), "%.*s", (int)k, s);
			if (fnmatch(g, path_glob ? s : comp, FNM_CASEFOLD) == 0)
				return p->protected_globs.items[i];
		}
	}
	return NULL;
}

static const char *writable_root(const struct hook_ctx *c, const char *abs)
{
	const struct halo_policy *p = c->policy;

	if (p->mode == POLICY_MODE_READ_ONLY)
		return NULL;
	if (c->cwd && policy_path_within(abs, c->cwd))
		return c->cwd;
	if (c->cwd_real && policy_path_within(abs, c->cwd_real))
		return c->cwd_real;
	for (size_t i = 0; i < p->writable_abs.n; i++)
		if (policy_path_within(abs, p->writable_abs.items[i]))
			return p->writable_abs.items[i];
	if (policy_path_within(abs, "/tmp"))
		return "/tmp";
	return NULL;
}

/* git runs code later from these, in a repository, its submodules and work trees. */
static bool git_guard(const char *rel)
{
	for (const char *g = rel; (g = strcasestr(g, "/.git/")); g += 5) {
		const char *r = g + 6;
		if (!strncasecmp(r, "modules/", 8) || !strncasecmp(r, "worktrees/", 10)) {
			for (const char *q = r; (q = strchr(q, '/')); q++)
				if (!strncasecmp(q, "/hooks", 6) && (!q[6] || q[6] == '/'))
					return true;
			const char *last = strrchr(r, '/') + 1;
			if (!strcasecmp(last, "config") || !strcasecmp(last, "config.worktree") ||
			    !strcasecmp(last, "commondir"))
				return true;
			continue;
		}
		if ((!strncasecmp(r, "hooks", 5) && (!r[5] || r[5] == '/')) ||
		    !strcasecmp(r, "config") || !strcasecmp(r, "config.worktree") ||
		    !strcasecmp(r, "commondir"))
			return true;
	}
	return false;
}

static const char *guard_hit(const struct hook_ctx *c, const char *abs, const char *root)
{
	const char *rel = abs + strlen(root);
	char comp[PATH_MAX_];

	if (c->policy->guard_persistence == 0)
		return NULL;
	if (git_guard(rel))
		return ".git hooks and config";
	for (const char *s = rel; s && *s; s = strchr(s, '/')) {
		s++;
		snprintf(comp, sizeof(comp), "%.*s", (int)strcspn(s, "/"), s);
		for (size_t i = 0; i < c->n_guard_names; i++)
			if (strcasecmp(comp, c->guard_names[i]) == 0)
				return c->guard_names[i];
	}
	return NULL;
}

/* A writable root that is a home or holds it: the home's persistence set stays
 * read-only, as the sandbox keeps it (policy_home_set_hit, the one list). */
static const char *home_hit(const struct hook_ctx *c, const char *abs, const char *root,
			    const char **entry)
{
	const char *homes[] = {c->home, c->env_home};

	if (c->policy->guard_persistence == 0)
		return NULL;
	for (size_t i = 0; i < 2; i++) {
		const char *why;
		if (policy_home_in_tree(homes[i], root) &&
		    (why =
			 policy_home_set_hit_xdg(homes[i], c->path_env, c->xdg_config, abs, entry)))
			return why;
	}
	return NULL;
}

static void judge_form(const struct hook_ctx *c, struct hook_judge *j, const char *tool,
		       const char *path, const char *abs, bool write)
{
	const char *entry = NULL, *why = protected_by(c, abs, write, &entry), *root;

	if (why) {
		hook_block(j, HOOK_BLOCK, "%s %s: %s is a protected path (%s)", tool, path, entry,
			   why);
		return;
	}
	if ((why = glob_hit(c, abs, write))) {
		hook_block(j, HOOK_BLOCK, "%s %s: it matches the protected pattern %s", tool, path,
			   why);
		return;
	}
	if (!write)
		return;
	if (!(root = writable_root(c, abs))) {
		hook_block(j, HOOK_BLOCK,
			   "%s %s: %s is outside the sandbox's writable roots (the workspace, "
			   "sandbox.writableRoots, /tmp)%s",
			   tool, path, abs,
			   c->policy->mode == POLICY_MODE_READ_ONLY ? "; sandbox.mode is read-only"
								    : "");
		return;
	}
	if ((why = guard_hit(c, abs, root)))
		hook_block(j, HOOK_BLOCK,
			   "%s %s: the persistence guard keeps %s read-only (it runs code later; "
			   "sandbox.guardPersistence)",
			   tool, path, why);
	else if ((why = home_hit(c, abs, root, &entry)))
		hook_block(j, HOOK_BLOCK,
			   "%s %s: the home is the workspace, and its persistence set keeps ~/%s "
			   "read-only (%s; sandbox.guardPersistence)",
			   tool, path, entry, why);
}

void hook_check_path(const struct hook_ctx *c, const char *tool, const char *path, bool write,
		     struct hook_verdict *v)
{
	struct hook_judge j = {c, v, 0};
	char abs[PATH_MAX_], real[PATH_MAX_];

	start(v);
	if (c->policy->mode == POLICY_MODE_OFF)
		return;
	if (lexical(c, path, abs, sizeof(abs)) < 0) {
		hook_block(&j, HOOK_CANNOT, "%s: the path '%.200s' is empty or too long", tool,
			   path);
		return;
	}
	judge_form(c, &j, tool, path, abs, write);
	if (!hook_decided(&j) && c->resolve) {
		if (c->resolve(abs, real, sizeof(real)) < 0)
			hook_block(&j, HOOK_CANNOT, "%s %s: cannot resolve the path", tool, path);
		else if (strcmp(real, abs) != 0)
			judge_form(c, &j, tool, path, real, write);
	}
}

void hook_check_patch(const struct hook_ctx *c, const char *tool, const char *patch,
		      struct hook_verdict *v)
{
	static const char *const heads[] = {
	    "*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "};
	char path[PATH_MAX_];

	start(v);
	for (const char *l = patch; l && *l && v->outcome == HOOK_ALLOW;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		for (size_t k = 0; k < 4; k++) {
			size_t h = strlen(heads[k]);
			if (len <= h || strncmp(l, heads[k], h) != 0)
				continue;
			size_t pl = len - h;
			while (pl && (l[h + pl - 1] == '\r' || l[h + pl - 1] == ' '))
				pl--;
			if (pl >= sizeof(path))
				pl = sizeof(path) - 1;
			memcpy(path, l + h, pl);
			path[pl] = 0;
			hook_check_path(c, tool, path, true, v);
		}
		l = nl ? nl + 1 : NULL;
	}
}

void hook_check_url(const struct hook_ctx *c, const char *tool, const char *url,
		    struct hook_verdict *v)
{
	struct hook_judge j = {c, v, 0};

	start(v);
	hook_target_text(&j, tool, url);
}

void hook_check_prompt_urls(const struct hook_ctx *c, const char *tool, const char *text,
			    struct hook_verdict *v)
{
	struct hook_judge j = {c, v, 0};

	start(v);
	for (const char *p = text; *p && !hook_decided(&j); p++) {
		if (strncasecmp(p, "http://", 7) && strncasecmp(p, "https://", 8))
			continue;
		size_t n = strcspn(p, " \t\r\n\"'<>`");
		while (n && strchr(".,;:!?)", p[n - 1]))
			n--;
		char *u = strndup(p, n);
		if (!u) {
			hook_block(&j, HOOK_CANNOT, "out of memory");
			return;
		}
		hook_target_text(&j, tool, u);
		free(u);
		p += n ? n - 1 : 0;
	}
}
