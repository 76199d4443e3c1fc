/* Grep and Glob (and read_many_files' globs): a file-name glob that could reach a
 * protected name or a protected path beneath the folder searched, a folder that holds
 * a protected path ripgrep walks into (hidden names too: Claude Code runs it with
 * --hidden; only version control directories are skipped), and a content search with
 * no glob over a folder that holds a file a protected glob names, are blocked; the
 * folder itself is judged as a path (hook_check_path, files.c). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hook/hook_int.h"

#define PATH_MAX_ 4096 /* POLICY_PATH_MAX */

static void start(struct hook_verdict *v)
{
	v->outcome = HOOK_ALLOW;
	v->reason[0] = 0;
}

/* ---------------------------------------------------------------- Grep and Glob */

/* A protected glob or a protected path's names, made concrete ('*' as "" or as "x",
 * '?' and a bracket as "x"), so that a search glob can be tried against them. */
static void instantiate(const char *g, bool star_x, char *out, size_t n)
{
	size_t o = 0;

	for (const char *s = g; *s && o + 2 < n; s++) {
		if (*s == '*') {
			if (star_x)
				out[o++] = 'x';
		} else if (*s == '?') {
			out[o++] = 'x';
		} else if (*s == '[') {
			const char *e = strchr(s + 1, ']');
			out[o++] = 'x';
			s = e ? e : s;
		} else if (*s != '\\') {
			out[o++] = *s;
		}
	}
	out[o] = 0;
}

static bool may_meet_plain(const char *s, const char *pg)
{
	char a[512], b[512];

	for (int x = 0; x < 2; x++) {
		instantiate(pg, x, a, sizeof(a));
		instantiate(s, x, b, sizeof(b));
		if ((a[0] && policy_glob_fnmatch(s, a)) || (b[0] && policy_glob_fnmatch(pg, b)))
			return true;
	}
	return false;
}

/* Each alternative of g's first brace ({a,b}, as ripgrep's globs have them), the rest
 * of g around it, given to fn (with depth + 1): true when fn says so for one, or when
 * the brace is too deep, unclosed or too long to expand (the safe side). */
static bool any_alternative(const char *g, const char *open, unsigned depth,
			    bool (*fn)(const char *alt, const char *arg, unsigned depth),
			    const char *arg)
{
	const char *close = strchr(open, '}');
	char alt[1024];

	if (depth > 4 || !close)
		return true;
	for (const char *a = open + 1; a <= close;) {
		size_t k = strcspn(a, ",}");
		if ((size_t)snprintf(alt, sizeof(alt), "%.*s%.*s%s", (int)(open - g), g, (int)k, a,
				     close + 1) >= sizeof(alt) ||
		    fn(alt, arg, depth + 1))
			return true;
		a += k + 1;
	}
	return false;
}

/* Could the search glob's component `sg` and the protected name pattern `pg` name the
 * same file? Tried both ways with both instantiations, each alternative of a brace
 * on its own (any_alternative). */
static bool may_meet(const char *sg, const char *pg, unsigned depth)
{
	const char *open = strchr(sg, '{');

	if (open)
		return any_alternative(sg, open, depth, may_meet, pg);
	/* braces in the protected pattern: its alternatives, each against sg */
	return strchr(pg, '{') && depth <= 4 ? may_meet(pg, sg, depth + 1) : may_meet_plain(sg, pg);
}

/* hook_search_reads, at a brace depth. */
static bool reads_at(const char *glob, const char *name, unsigned depth)
{
	const char *open = strchr(glob, '{');

	if (!*glob || strchr(glob, '/'))
		return true;
	return open ? any_alternative(glob, open, depth, reads_at, name)
		    : policy_glob_fnmatch(glob, name);
}

bool hook_search_reads(const char *glob, const char *name)
{
	return reads_at(glob, name, 0);
}

/* The protected name a search glob could reach from `folder`: each component of the
 * glob against each protected glob and each name on the way to a protected path that
 * lies beneath the folder. */
static const char *search_hit(const struct hook_ctx *c, const char *folder, const char *glob)
{
	const struct halo_policy *p = c->policy;
	char comp[512], g[PATH_MAX_];

	for (const char *s = glob; *s; s += strspn(s, "/")) {
		size_t k = strcspn(s, "/");
		snprintf(comp, sizeof(comp), "%.*s", (int)k, s);
		s += k;
		/* A directory component of only '*'s matches every directory: what the
		 * search then reads is told by the components after it. */
		if (!comp[0] || (s[strspn(s, "/")] && !comp[strspn(comp, "*")]))
			continue;
		for (size_t i = 0; i < p->protected_globs.n; i++) {
			if (!policy_glob_normalise(p->protected_globs.items[i], g, sizeof(g)))
				continue;
			const char *last = strrchr(g, '/');
			if (may_meet(comp, last ? last + 1 : g, 0) ||
			    (last && may_meet(comp, g, 0) /* "secrets/x" as one component */))
				return p->protected_globs.items[i];
		}
		for (size_t i = 0; i < p->protected_abs.n; i++) {
			const char *e = p->protected_abs.items[i];
			if (!policy_path_beneath(e, folder) || !strcmp(e, folder))
				continue;
			for (const char *r = e + strlen(folder); *r; r += strspn(r, "/")) {
				size_t n = strcspn(r += strspn(r, "/"), "/");
				snprintf(g, sizeof(g), "%.*s", (int)n, r);
				if (n && may_meet(comp, g, 0))
					return e;
				r += n;
			}
		}
	}
	return NULL;
}

/* The version control directories ripgrep skips as Claude Code runs it (--hidden, and
 * these excluded): nothing else on the way is skipped, hidden names included. */
static bool vcs_name(const char *s, size_t n)
{
	static const char *const vcs[] = {".git", ".svn", ".hg", ".bzr", ".jj", ".sl"};

	for (size_t i = 0; i < sizeof(vcs) / sizeof(vcs[0]); i++)
		if (strlen(vcs[i]) == n && strncmp(s, vcs[i], n) == 0)
			return true;
	return false;
}

bool hook_search_skips_dir(const char *name)
{
	return vcs_name(name, strlen(name));
}

/* A protected path beneath the search folder that ripgrep walks into: no version
 * control directory on the way (Claude Code's Grep runs ripgrep with --hidden: a
 * search over a home reads ~/.ssh and ~/.aws). */
static bool walked_to(const struct hook_ctx *c, const char *e, const char *folder)
{
	const char *r;

	if (!policy_path_beneath(e, folder) || !strcmp(e, folder) ||
	    (c->exists && !c->exists(e))) /* ~/Library/Keychains on Linux */
		return false;
	for (r = e + strlen(folder); *r == '/';) {
		size_t n = strcspn(++r, "/");
		if (vcs_name(r, n))
			break;
		r += n;
	}
	return !*r;
}

static const char *walked_into(const struct hook_ctx *c, const char *folder)
{
	const struct halo_policy *p = c->policy;

	for (size_t i = 0; i < p->protected_abs.n; i++)
		if (walked_to(c, p->protected_abs.items[i], folder))
			return p->protected_abs.items[i];
	for (size_t i = 0; i < c->n_protected_real; i++) /* a protected symlink's target */
		if (walked_to(c, c->protected_real[i], folder))
			return c->protected_of[i];
	/* halo-run's own state no sandbox sees (the index key in /tmp/halo-run-UID: a
	 * search over /tmp read it) */
	for (size_t i = 0; i < c->n_own_hidden; i++)
		if (walked_to(c, c->own_hidden[i], folder))
			return c->own_hidden[i];
	return NULL;
}

/* One piece of the glob (or none: the folder alone) judged with the folder; true when
 * it blocked. */
static bool check_piece(const struct hook_ctx *c, const char *tool, const char *folder,
			const char *glob, bool contents, struct hook_verdict *v)
{
	struct hook_judge j = {c, v, 0, false};
	char abs[PATH_MAX_], sub[PATH_MAX_ * 2], real[PATH_MAX_], abs_raw[PATH_MAX_ * 2];
	const char *rest = glob, *why;

	if (policy_path_absolute(folder, c->cwd, c->home, abs, sizeof(abs)) < 0) {
		hook_block(&j, HOOK_CANNOT, "%s: the path '%.200s' is empty or too long", tool,
			   folder);
		return true;
	}
	/* The glob's literal leading directories (an absolute glob, "..", "~/") are the
	 * folder searched: judged as a path, like the folder itself. */
	size_t lit = 0;
	for (size_t k = 0; glob[k]; k++) {
		if (strchr("*?[{\\", glob[k]))
			break;
		if (glob[k] == '/')
			lit = k + 1;
	}
	if (lit) {
		snprintf(sub, sizeof(sub), "%.*s", (int)lit, glob);
		if (glob[0] != '/' && glob[0] != '~')
			snprintf(sub, sizeof(sub), "%s/%.*s", abs, (int)lit, glob);
		hook_check_path(c, tool, sub, false, v);
		if (v->outcome != HOOK_ALLOW ||
		    policy_path_absolute(sub, c->cwd, c->home, abs, sizeof(abs)) < 0)
			return v->outcome != HOOK_ALLOW;
		rest = glob + lit;
	}
	/* The folder as the kernel walks it as written (a ".." after a symlink too). */
	if (policy_path_join(lit ? sub : folder, c->cwd, c->home, abs_raw, sizeof(abs_raw)) < 0)
		snprintf(abs_raw, sizeof(abs_raw), "%s", abs);
	/* Where the folder leads, as the kernel walks it as written: the walk below goes
	 * there (ws/data -> elsewhere; ws/link/.. is the link target's parent). */
	bool resolved = c->resolve && c->resolve(abs_raw, real, sizeof(real)) == 0;
	why = walked_into(c, abs);
	why = why ? why : search_hit(c, abs, rest);
	if (!why && resolved && strcmp(real, abs) && !(why = walked_into(c, real)))
		why = search_hit(c, real, rest);
	if (why) {
		hook_block(&j, HOOK_BLOCK,
			   "%s %s%sin %s: the pattern could reach %s, which is protected (search "
			   "it by a narrower pattern)",
			   tool, glob, *glob ? " " : "", abs, why);
		return true;
	}
	/* A content search reads files beneath, hidden ones too: with no file-name pattern
	 * every one, with one those it names wherever they are, inside a directory a
	 * protected pattern names too (.envs/.production/.django by .django). A bounded
	 * walk looks for such a file that exists (runner/hook_walk.c): a pattern that
	 * meets a protected one only in the middle (*.local and .env*: .env.local) is
	 * blocked where such a file is there. */
	if (contents) {
		char hit[PATH_MAX_];
		int rc = c->find_protected ? c->find_protected(c->policy, resolved ? real : abs,
							       rest, hit, sizeof(hit))
					   : -ENOSYS;
		if (rc == 1)
			hook_block(&j, HOOK_BLOCK,
				   "%s %s%sin %s would read %s, which is protected (%s)", tool,
				   glob, *glob ? " " : "", abs, hit,
				   *rest ? "search a narrower path or by another pattern"
					 : "give a glob that leaves it out, for example *.ts, "
					   "or a narrower path");
		else if (rc == -E2BIG)
			hook_block(
			    &j, HOOK_BLOCK,
			    "%s %s%sin %s: the folder is too large to check for protected "
			    "files (.env...) the search would read; search a narrower path%s",
			    tool, glob, *glob ? " " : "", abs,
			    *rest ? "" : " or give a glob, for example *.ts");
		else if (rc < 0)
			hook_block(&j, HOOK_CANNOT,
				   "%s %s%sin %s: cannot check the folder for protected files the "
				   "search would read (%s)",
				   tool, glob, *glob ? " " : "", abs, strerror(-rc));
		return rc != 0;
	}
	return false;
}

/* White space around a path or a glob piece, as the harness trims it before the tool
 * runs (Claude Code's Grep and Glob pass their path to the hook as written). */
static void trimmed(const char *s, size_t n, char *out, size_t cap)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), s);
}

/* The glob as one pattern and as the pieces Claude Code's Grep gives ripgrep (split
 * at white space, then a piece without braces at commas: each its own --glob), each
 * judged; a negated piece ("!x") only leaves files out. A folder or glob with "~"
 * under both homes (the harness expands $HOME; the password database's is the
 * sandbox's). */
static void judge_all(const struct hook_ctx *c, const char *tool, const char *folder,
		      const char *glob, bool contents, struct hook_verdict *v)
{
	char piece[PATH_MAX_];
	bool positive = false;

	trimmed(glob, strlen(glob), piece, sizeof(piece));
	if (piece[0] && check_piece(c, tool, folder, piece, false, v))
		return;
	for (const char *s = glob; *s;) {
		size_t n;
		s += strspn(s, " \t\r\n\v\f");
		n = strcspn(s, " \t\r\n\v\f");
		const char *end = s + n;
		bool braces = memchr(s, '{', n) != NULL;
		while (s < end) {
			size_t k = braces ? (size_t)(end - s) : strcspn(s, ",");
			k = k < (size_t)(end - s) ? k : (size_t)(end - s);
			trimmed(s, k, piece, sizeof(piece));
			if (piece[0] && piece[0] != '!') {
				positive = true;
				if (check_piece(c, tool, folder, piece, contents, v))
					return;
			}
			s += k + (s + k < end);
		}
	}
	if (!positive) /* no pattern that adds a file: the folder alone */
		check_piece(c, tool, folder, "", contents, v);
}

void hook_check_search(const struct hook_ctx *c, const char *tool, const char *folder,
		       const char *glob, struct hook_verdict *v)
{
	char dir[PATH_MAX_];
	/* Grep and Gemini's searches read what they find; Glob lists names. */
	bool contents = strcmp(tool, "Glob") != 0 && strcmp(tool, "glob") != 0;

	start(v);
	if (c->policy->mode == POLICY_MODE_OFF)
		return;
	trimmed(folder ? folder : "", folder ? strlen(folder) : 0, dir, sizeof(dir));
	if (!dir[0])
		snprintf(dir, sizeof(dir), ".");
	glob = glob ? glob : "";
	judge_all(c, tool, dir, glob, contents, v);
	if (v->outcome == HOOK_ALLOW && c->env_home && c->home && strcmp(c->env_home, c->home) &&
	    (dir[0] == '~' || strchr(glob, '~'))) {
		struct hook_ctx h = *c;
		h.home = c->env_home;
		judge_all(&h, tool, dir, glob, contents, v);
	}
}
