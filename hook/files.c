/* File tools (Read, Write, Edit, ...) and fetch tools, judged as the sandbox would
 * judge the same name: protected paths and the credential floor are never readable
 * nor writable (allowRead carve-outs aside, for reading), nothing outside the writable
 * roots is writable, and the persistence guard's targets stay read-only. A name is
 * judged both as written and resolved through symbolic links (the resolution is the
 * caller's, through hook_ctx), whether or not the file exists yet: a new .env or
 * .git/hooks/pre-commit is refused by its name. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hook/hook_int.h"

#define PATH_MAX_ 4096 /* POLICY_PATH_MAX */

static void start(struct hook_verdict *v)
{
	v->outcome = HOOK_ALLOW;
	v->reason[0] = 0;
}

static bool carved(const struct halo_policy *p, const char *abs)
{
	for (size_t k = 0; k < p->allow_read_abs.n; k++)
		if (policy_path_beneath(abs, p->allow_read_abs.items[k]))
			return true;
	return false;
}

/* Which rule protects `abs`: the floor entry's reason, or the policy's own entry. */
static const char *protected_by(const struct hook_ctx *c, const char *abs, bool write,
				const char **entry)
{
	const struct halo_policy *p = c->policy;
	const char *homes[] = {c->home, c->env_home};
	const struct policy_floor_entry *fl;

	for (size_t i = 0; i < p->protected_abs.n; i++) {
		const char *e = p->protected_abs.items[i];
		if (!policy_path_beneath(abs, e) || (!write && carved(p, abs)))
			continue;
		*entry = e;
		fl = policy_floor_entry_of(e, homes, 2);
		return fl ? fl->reason : "sandbox.protectedPaths";
	}
	/* By the name a protected symlink leads to: carve-outs by the entry's own name. */
	for (size_t i = 0; i < c->n_protected_real; i++) {
		const char *r = c->protected_real[i], *e = c->protected_of[i];
		char as[PATH_MAX_ * 2];
		if (!policy_path_beneath(abs, r))
			continue;
		snprintf(as, sizeof(as), "%s%s", e, abs + strlen(strcmp(r, "/") ? r : ""));
		if (!write && carved(p, as))
			continue;
		*entry = e;
		fl = policy_floor_entry_of(e, homes, 2);
		return fl ? fl->reason : "sandbox.protectedPaths";
	}
	return NULL;
}

/* protectedPaths name patterns (".env*", "*.pem", "secrets/"), as the workspace scan
 * matches them (policy_protected_glob_hit). */
static const char *glob_hit(const struct hook_ctx *c, const char *abs, bool write)
{
	const struct halo_policy *p = c->policy;

	for (size_t k = 0; !write && k < p->allow_read_abs.n; k++)
		if (policy_path_beneath(abs, p->allow_read_abs.items[k]))
			return NULL;
	return policy_protected_glob_hit(p, abs);
}

/* The event's cwd is the workspace unless the launcher would refuse it (/, /etc, ...:
 * policy_workspace_refused), as written, cleaned or resolved. */
static bool cwd_is_workspace(const struct hook_ctx *c)
{
	char norm[PATH_MAX_];
	const char *why;

	if (!c->cwd || policy_path_normalise(c->cwd, true, norm, sizeof(norm), &why) < 0 ||
	    policy_workspace_refused(norm))
		return false;
	return !c->cwd_real || !policy_workspace_refused(c->cwd_real);
}

static const char *writable_root(const struct hook_ctx *c, const char *abs)
{
	const struct halo_policy *p = c->policy;
	const char *root;

	if (p->mode == POLICY_MODE_READ_ONLY)
		return NULL;
	if (cwd_is_workspace(c) && policy_path_beneath(abs, c->cwd))
		return c->cwd;
	if (cwd_is_workspace(c) && c->cwd_real && policy_path_beneath(abs, c->cwd_real))
		return c->cwd_real;
	for (size_t i = 0; i < p->writable_abs.n; i++)
		if (policy_path_beneath(abs, p->writable_abs.items[i]))
			return p->writable_abs.items[i];
	if ((root = hook_own_cache(c, abs))) /* bound writable inside, wherever it lies */
		return root;
	return policy_path_scratch(abs);
}

struct probe {
	const struct hook_ctx *c;
	const char *dir;
};

static bool probe_holds(void *arg, const char *name)
{
	const struct probe *pr = arg;
	char p[PATH_MAX_];

	if ((size_t)snprintf(p, sizeof(p), "%s/%s", strcmp(pr->dir, "/") ? pr->dir : "", name) >=
	    sizeof(p))
		return true; /* cannot tell: the guarded side */
	return pr->c->exists(p);
}

/* Would making `rel`'s first name in `dir` complete a git directory that already
 * holds hooks or a config (the broker refuses that name: its hooks were never checked)?
 * HEAD written last, or refs after a hook: the hook sees one write at a time. */
static bool completes_gitdir(const struct hook_ctx *c, const char *dir, const char *rel)
{
	static const char *const held_code[] = {"hooks", "config", "config.worktree"};
	struct probe pr = {c, dir};
	char name[64];
	size_t k = strcspn(rel, "/");
	unsigned flag, held;

	if (k >= sizeof(name))
		return false;
	snprintf(name, sizeof(name), "%.*s", (int)k, rel);
	if (!(flag = policy_git_entry(name)) || probe_holds(&pr, name))
		return false;
	held = policy_git_entries_held(probe_holds, &pr);
	if (policy_git_entries_make_gitdir(held) || !policy_git_entries_make_gitdir(held | flag))
		return false;
	for (size_t i = 0; i < sizeof(held_code) / sizeof(held_code[0]); i++)
		if (probe_holds(&pr, held_code[i]))
			return true;
	return false;
}

/* git runs code later from a git directory's hooks and config: one named .git, or one
 * told by what it holds (a bare repository, a linked work tree's or a submodule's git
 * directory wherever a gitdir: file puts it), and a .git itself (a gitdir: file says
 * where the hooks come from). policy/gitdir.c is the one rule. */
static bool git_guard(const struct hook_ctx *c, const char *abs)
{
	const char *last = strrchr(abs, '/') + 1;
	char dir[PATH_MAX_];

	if (policy_git_guard_in_dotgit(abs) || policy_git_dot_name(last, strlen(last)))
		return true;
	if (!c->exists)
		return false;
	/* Every ancestor, nearest first: a directory holding HEAD and commondir, or
	 * objects and refs, whose guarded names `abs` is at or beneath; or one this name
	 * would make such a directory while it holds hooks or a config. */
	snprintf(dir, sizeof(dir), "%s", abs);
	for (char *sl; (sl = strrchr(dir, '/'));) {
		const char *rel = abs + (sl - dir) + 1;
		sl == dir ? (void)(sl[1] = '\0') : (void)(*sl = '\0');
		if (policy_git_guard_rel(rel) &&
		    policy_gitdir_holds(probe_holds, &(struct probe){c, dir}))
			return true;
		if (completes_gitdir(c, dir, rel))
			return true;
		if (sl == dir)
			break;
	}
	return false;
}

/* A guard name that is a symlink in a directory on the way from the writable root to
 * `abs`, leading to `abs` or above it (.vscode -> vsc: vsc/tasks.json is what VS Code
 * reads). The scan keeps such a target read-only; the hook, seeing one name at a time,
 * looks in the directories the name passes through. */
static const char *linked_guard(const struct hook_ctx *c, const char *abs, const char *root)
{
	char dir[PATH_MAX_], p[PATH_MAX_ * 2], t[PATH_MAX_];
	size_t at = strlen(root);

	if (!c->exists || !c->resolve)
		return NULL;
	for (const char *s = abs + at; s && *s; s = strchr(s + 1, '/')) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(s - abs), abs);
		for (size_t i = 0; i < c->n_guard_names; i++) {
			snprintf(p, sizeof(p), "%s/%s", dir, c->guard_names[i]);
			if (!c->exists(p) || c->resolve(p, t, sizeof(t)) < 0 || !strcmp(t, p))
				continue;
			if (policy_path_beneath(abs, t))
				return c->guard_names[i];
		}
	}
	return NULL;
}

static const char *guard_hit(const struct hook_ctx *c, const char *abs, const char *root)
{
	const char *rel = abs + strlen(root), *why;
	char comp[PATH_MAX_];

	if (c->policy->guard_persistence == 0)
		return NULL;
	if (git_guard(c, abs))
		return "git hooks and config";
	if ((why = hook_git_config_hit(c, abs)) || (why = linked_guard(c, abs, root)))
		return why;
	for (const char *s = rel; s && *s; s = strchr(s, '/')) {
		s++;
		snprintf(comp, sizeof(comp), "%.*s", (int)strcspn(s, "/"), s);
		for (size_t i = 0; i < c->n_guard_names; i++)
			if (policy_name_eq(comp, c->guard_names[i]))
				return c->guard_names[i];
	}
	return NULL;
}

static void judge_form(const struct hook_ctx *c, struct hook_judge *j, const char *tool,
		       const char *path, const char *abs, bool write)
{
	const char *entry = NULL, *why = protected_by(c, abs, write, &entry), *root;

	if (hook_own_hit(c, j, tool, path, abs, write))
		return;
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
	if (!write && (why = policy_path_host_only(abs))) {
		hook_block(j, HOOK_BLOCK,
			   "%s %s: %s is out of the sandbox's sight (it has its own %s: a host "
			   "process's environment, a secret under /run or a disk is not for it)",
			   tool, path, abs, why);
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
	else if ((why = hook_home_hit(c, abs, root, &entry)))
		hook_block(j, HOOK_BLOCK,
			   "%s %s: %s%s is in the home's persistence set, read-only wherever it "
			   "lands in a writable tree (%s; sandbox.guardPersistence)",
			   tool, path, entry[0] == '/' ? "" : "~/", entry, why);
}

/* Is abs one of the links the sandbox pins: by its name, or by its directory where
 * that leads and its last name (review 14: alias/PL, x/cfg with x a link, deleted a
 * pinned link the name alone missed). */
static bool pinned_link(const struct hook_ctx *c, const char *abs)
{
	char parent[PATH_MAX_], real[PATH_MAX_], joined[PATH_MAX_ * 2 + 2];
	const char *sl = strrchr(abs, '/');

	for (size_t k = 0; k < c->n_pinned_links; k++)
		if (policy_name_eq(abs, c->pinned_links[k]))
			return true;
	if (!c->n_pinned_links || !sl || sl == abs || !c->resolve)
		return false;
	snprintf(parent, sizeof(parent), "%.*s", (int)(sl - abs), abs);
	if (c->resolve(parent, real, sizeof(real)) != 0)
		return true; /* cannot tell: the safe side */
	snprintf(joined, sizeof(joined), "%s%s", strcmp(real, "/") ? real : "", sl);
	for (size_t k = 0; k < c->n_pinned_links; k++)
		if (policy_name_eq(joined, c->pinned_links[k]))
			return true;
	return false;
}

void hook_check_path(const struct hook_ctx *c, const char *tool, const char *path, bool write,
		     struct hook_verdict *v)
{
	struct hook_judge j = {c, v, 0, false};
	char abs[PATH_MAX_], real[PATH_MAX_], raw[PATH_MAX_ * 2 + 2];

	start(v);
	if (c->policy->mode == POLICY_MODE_OFF)
		return;
	if (policy_path_join(path, c->cwd, c->home, raw, sizeof(raw)) < 0 ||
	    policy_path_absolute(path, c->cwd, c->home, abs, sizeof(abs)) < 0) {
		hook_block(&j, HOOK_CANNOT, "%s: the path '%.200s' is empty or too long", tool,
			   path);
		return;
	}
	if (POLICY_PATH_FOLD && policy_name_folds_to_ascii(path)) {
		hook_block(&j, HOOK_CANNOT,
			   "%s %s: a character in it folds to ASCII where names fold (U+017F, "
			   "U+212A): which file it names is the file system's to say",
			   tool, path);
		return;
	}
	/* Judged as written, cleaned ("a/../b" is b to a harness that cleans a name
	 * first), and as the kernel walks it as written (to one that does not, "link/.."
	 * is the link target's parent). */
	judge_form(c, &j, tool, path, abs, write);
	if (write && !hook_decided(&j) && pinned_link(c, abs))
		hook_block(&j, HOOK_BLOCK,
			   "%s %s: %s is a link on the way to the home persistence set (an "
			   "XDG directory, PATH or a set entry leads through it): the sandbox "
			   "keeps it in place (sandbox.guardPersistence)",
			   tool, path, abs);
	bool resolved = false;
	if (!hook_decided(&j) && c->resolve) {
		resolved = c->resolve(raw, real, sizeof(real)) == 0;
		if (!resolved)
			hook_block(&j, HOOK_CANNOT, "%s %s: cannot resolve the path", tool, path);
		else if (strcmp(real, abs) != 0)
			judge_form(c, &j, tool, path, real, write);
	}
	/* What no name tells: the sandbox masks where a protected name's symlink leads
	 * (an allowRead carve-out in a mask shows read-only). */
	const char *target = resolved ? real : abs;
	char mask[PATH_MAX_];
	if (!hook_decided(&j) && c->masked && (write || !carved(c->policy, target)) &&
	    c->masked(c->policy, target, mask, sizeof(mask)) == 1)
		hook_block(&j, HOOK_BLOCK,
			   "%s %s: the sandbox masks %s (a protected path, or what a protected "
			   "name links to)",
			   tool, path, mask);
}

/* The length of the white space (Rust's char::is_whitespace, what str::trim drops) at
 * the start of s[0..n), or with `back`, at its end. */
static size_t white(const char *s, size_t n, bool back)
{
	static const unsigned cps[] = {0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000};
	size_t k = 0;

	while (k < n) {
		const unsigned char *u = (const unsigned char *)s;
		size_t at = back ? n - k - 1 : k, len = 1;
		unsigned cp = u[at];
		if (back)
			while (at > 0 && (u[at] & 0xc0) == 0x80 && len < 4)
				at--, len++;
		if (u[at] >= 0xc0) {
			size_t need = u[at] >= 0xf0 ? 4 : u[at] >= 0xe0 ? 3 : 2;
			if ((back && need != len) || at + need > n)
				return k;
			len = need;
			cp = u[at] & (0x3f >> (need - 1));
			for (size_t i = 1; i < need; i++)
				cp = cp << 6 | (u[at + i] & 0x3f);
		} else if (back && len != 1) {
			return k;
		}
		bool w = (cp >= 0x09 && cp <= 0x0d) || cp == ' ' || (cp >= 0x2000 && cp <= 0x200a);
		for (size_t i = 0; !w && i < sizeof(cps) / sizeof(cps[0]); i++)
			w = cp == cps[i];
		if (!w)
			return k;
		k += len;
	}
	return k;
}

/* One header's name, as Codex takes it (the trimmed line's rest) and, for a Move to
 * that Codex reads untrimmed, as it stands: a name as long as no path can be is
 * refused, never cut to one that passes. */
static void patch_name(const struct hook_ctx *c, const char *tool, const char *base, const char *p,
		       size_t n, struct hook_verdict *v)
{
	char path[PATH_MAX_];
	size_t b = base && p[0] != '/' && p[0] != '~' ? strlen(base) + 1 : 0;

	if (n == 0)
		return; /* Codex refuses an empty name */
	if (b + n >= sizeof(path)) {
		v->outcome = HOOK_CANNOT;
		snprintf(v->reason, sizeof(v->reason), "%s: a file name in the patch is too long",
			 tool);
		return;
	}
	if (b)
		snprintf(path, sizeof(path), "%s/", base);
	memcpy(path + b, p, n);
	path[b + n] = 0;
	hook_check_path(c, tool, path, true, v);
}

/* Every header of a patch, relative names against `base` (NULL: the cwd). */
static void check_patch_in(const struct hook_ctx *c, const char *tool, const char *patch,
			   const char *base, struct hook_verdict *v)
{
	static const char *const heads[] = {
	    "*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "};

	start(v);
	size_t names = 0;

	for (const char *l = patch; l && *l && v->outcome == HOOK_ALLOW;) {
		const char *s = l, *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		l = nl ? nl + 1 : NULL;
		if (len && s[len - 1] == '\r')
			len--; /* str::lines */
		size_t lead = white(s, len, false);
		size_t trail = white(s + lead, len - lead, true);
		for (size_t k = 0; k < 4 && v->outcome == HOOK_ALLOW; k++) {
			size_t h = strlen(heads[k]);
			if (len - lead - trail < h || strncmp(s + lead, heads[k], h) != 0)
				continue;
			if (++names > HOOK_MAX_NAMES) {
				v->outcome = HOOK_CANNOT;
				snprintf(v->reason, sizeof(v->reason),
					 "%s: the patch names more than %u files (split it)", tool,
					 HOOK_MAX_NAMES);
				return;
			}
			patch_name(c, tool, base, s + lead + h, len - lead - trail - h, v);
			if (v->outcome == HOOK_ALLOW && trail)
				patch_name(c, tool, base, s + lead + h, len - lead - h, v);
		}
	}
}

void hook_check_patch(const struct hook_ctx *c, const char *tool, const char *patch,
		      struct hook_verdict *v)
{
	start(v);
	check_patch_in(c, tool, patch, NULL, v);
}

/* Codex takes a shell call for apply_patch and applies it itself, outside the shell
 * (codex-rs/apply-patch, invocation.rs): argv `apply_patch BODY`, or a script
 * `[cd DIR &&] apply_patch <<'EOF' ... EOF` (also `applypatch`). Any text naming
 * either has its headers judged (more than Codex matches: the safe side), relative to
 * DIR when the script starts with cd. */
void hook_check_shell_patch(const struct hook_ctx *c, const char *tool, const char *text,
			    struct hook_verdict *v)
{
	char dir[PATH_MAX_];
	const char *s = text + strspn(text, " \t\n"), *base = NULL;

	if (v->outcome != HOOK_ALLOW || !strstr(text, "*** "))
		return;
	if (strncmp(s, "cd", 2) == 0 && (s[2] == ' ' || s[2] == '\t')) {
		s += 2 + strspn(s + 2, " \t");
		char q = *s == '\'' || *s == '"' ? *s++ : 0;
		size_t k = q ? strcspn(s, (char[]){q, 0}) : strcspn(s, " \t\n;&|");
		if (k >= sizeof(dir)) {
			v->outcome = HOOK_CANNOT;
			snprintf(v->reason, sizeof(v->reason),
				 "%s: the cd before apply_patch is too long", tool);
			return;
		}
		snprintf(dir, sizeof(dir), "%.*s", (int)k, s);
		base = dir;
	}
	check_patch_in(c, tool, text, base, v);
}

void hook_check_url(const struct hook_ctx *c, const char *tool, const char *url,
		    struct hook_verdict *v)
{
	struct hook_judge j = {c, v, 0, true};

	start(v);
	hook_target_text(&j, tool, url);
}

/* gemini-cli fetches a GitHub file page from raw.githubusercontent.com: it takes the
 * URL's href (host lower-cased, a backslash a slash), and where that holds "github.com"
 * and "/blob/" replaces the first of each (convertGithubUrlToRaw: notgithub.com/x/blob/y
 * goes to notraw.githubusercontent.com; newer versions test the host itself and fetch
 * raw.githubusercontent.com). Both forms are judged too. */
static void gemini_rewrite(struct hook_judge *j, const char *tool, const char *url)
{
	static const char gh[] = "github.com", raw[] = "raw.githubusercontent.com";
	size_t n = strlen(url);
	char *low = malloc(n + sizeof(raw) + 1), *out = malloc(n + sizeof(raw) + 1);

	for (size_t i = 0; low && i <= n; i++)
		low[i] = url[i] == '\\' ? '/' : (char)tolower((unsigned char)url[i]);
	const char *g = low ? strstr(low, gh) : NULL;
	if (g && out && strstr(low, "/blob/")) {
		snprintf(out, n + sizeof(raw) + 1, "%.*s%s%s", (int)(g - low), low, raw,
			 g + sizeof(gh) - 1);
		char *bb = strstr(out, "/blob/");
		if (bb)
			memmove(bb + 1, bb + 6, strlen(bb + 6) + 1);
		hook_target_text(j, tool, out);
		hook_target_text(j, tool, "https://raw.githubusercontent.com/");
	}
	free(low);
	free(out);
}

void hook_check_gemini_url(const struct hook_ctx *c, const char *tool, const char *url,
			   struct hook_verdict *v)
{
	struct hook_judge j = {c, v, 0, true};

	start(v);
	hook_target_text(&j, tool, url);
	gemini_rewrite(&j, tool, url);
}

/* The length of the white space JavaScript's \\s matches at p (gemini-cli splits a
 * prompt with it), 0 for none: ASCII's, U+00A0, U+1680, U+2000-U+200A, U+2028,
 * U+2029, U+202F, U+205F, U+3000 and U+FEFF, in UTF-8. */
static size_t js_space(const unsigned char *p)
{
	if (*p && strchr(" \t\r\n\f\v", *p))
		return 1;
	if (p[0] == 0xc2 && p[1] == 0xa0)
		return 2;
	if ((p[0] == 0xe1 && p[1] == 0x9a && p[2] == 0x80) ||
	    (p[0] == 0xe2 && p[1] == 0x80 &&
	     (p[2] <= 0x8a ? p[2] >= 0x80 : p[2] == 0xa8 || p[2] == 0xa9 || p[2] == 0xaf)) ||
	    (p[0] == 0xe2 && p[1] == 0x81 && p[2] == 0x9f) ||
	    (p[0] == 0xe3 && p[1] == 0x80 && p[2] == 0x80) ||
	    (p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf))
		return 3;
	return 0;
}

/* Gemini's web_fetch takes the URLs of its prompt as gemini-cli does: the prompt split
 * at white space (JavaScript's, Unicode's included), every piece that holds "://"
 * parsed whole (WHATWG: the host of "http://example.com\"@evil.test/" is evil.test)
 * and fetched. So each such piece is judged whole; one the target parser cannot read
 * is refused (gemini-cli refuses a malformed one too). */
void hook_check_prompt_urls(const struct hook_ctx *c, const char *tool, const char *text,
			    struct hook_verdict *v)
{
	struct hook_judge j = {c, v, 0, true};
	const unsigned char *p = (const unsigned char *)text;

	start(v);
	while (*p && !hook_decided(&j)) {
		size_t w = js_space(p), n = 0;
		if (w) {
			p += w;
			continue;
		}
		while (p[n] && !js_space(p + n))
			n++;
		char *u = strndup((const char *)p, n);
		if (!u) {
			hook_block(&j, HOOK_CANNOT, "out of memory");
			return;
		}
		if (strstr(u, "://")) {
			hook_target_text(&j, tool, u);
			gemini_rewrite(&j, tool, u);
		}
		free(u);
		p += n;
	}
}
