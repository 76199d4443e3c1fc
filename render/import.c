/* `policy import`: a harness's sandbox settings into a halo-run policy (YAML) that
 * Decide()s the same hosts and protects the same paths. Every entry is checked by
 * policy/ itself before it is kept, so the result passes validation; what has no
 * equivalent is a warning, never dropped silently. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/import_int.h"

static const char *const kind_names[] = {
    [RI_GUESS] = "guess", [RI_CLAUDE_CODE] = "claude-code", [RI_SRT] = "srt",
    [RI_CODEX] = "codex", [RI_CURSOR] = "cursor",	    [RI_COPILOT] = "copilot",
};

/* By a name or alias of policy/'s harness table that supports POLICY_HARNESS_IMPORT. */
int render_import_kind_parse(const char *s, enum render_import_kind *k)
{
	const struct policy_harness *h = policy_harness_find(s, POLICY_HARNESS_IMPORT);

	for (size_t i = 1; h && i < RN(kind_names); i++)
		if (strcmp(h->name, kind_names[i]) == 0) {
			*k = (enum render_import_kind)i;
			return 0;
		}
	return -EINVAL;
}

const char *render_import_kind_name(enum render_import_kind k)
{
	return (size_t)k < RN(kind_names) ? kind_names[k] : "?";
}

/* ---------------------------------------------------------------- YAML out */

static void yaml_str(struct rbuf *b, const char *s)
{
	rbuf_printf(b, "\"");
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			rbuf_printf(b, "\\%c", *c);
		else if (*c < 0x20 || *c == 0x7f)
			rbuf_printf(b, "\\x%02x", *c);
		else
			rbuf_printf(b, "%c", *c);
	}
	rbuf_printf(b, "\"");
}

static void yaml_list(struct rbuf *b, const char *key, const struct rlist *l)
{
	if (!l->n)
		return;
	rbuf_printf(b, "  %s:\n", key);
	for (size_t i = 0; i < l->n; i++) {
		rbuf_printf(b, "    - ");
		yaml_str(b, l->v[i]);
		rbuf_printf(b, "\n");
	}
}

static char *yaml_of(const struct imp *m, bool header)
{
	struct rbuf b = {0};
	enum policy_mode mode = m->mode ? m->mode : POLICY_MODE_WORKSPACE_WRITE;

	if (header)
		rbuf_printf(&b, "# imported from %s settings by halo-run policy import\n",
			    render_import_kind_name(m->kind));
	rbuf_printf(&b, "sandbox:\n  mode: %s\n",
		    mode == POLICY_MODE_READ_ONLY ? "read-only" : "workspace-write");
	if (m->fail >= 0)
		rbuf_printf(&b, "  failIfUnavailable: %s\n", m->fail ? "true" : "false");
	yaml_list(&b, "writableRoots",
		  mode == POLICY_MODE_READ_ONLY ? &(struct rlist){0} : &m->writable);
	yaml_list(&b, "protectedPaths", &m->protected);
	rbuf_printf(&b, "egress:\n  default: %s\n",
		    m->dflt == POLICY_EGRESS_ALLOW && !m->allowed.n && !m->deny_all ? "allow"
										    : "deny");
	if (!m->deny_all) /* --lossy: a denied entry only "every host" covers */
		yaml_list(&b, "allowedDomains", &m->allowed);
	yaml_list(&b, "deniedDomains", &m->denied);
	if (b.oom) {
		rbuf_free(&b);
		return NULL;
	}
	return b.s;
}

/* Does this policy text validate in the import's world? The first error in why. */
static bool validates(const struct imp *m, const char *yaml, char *why, size_t n)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	bool ok = policy_parse_buffer("import", yaml, strlen(yaml), 'y', &p, &d) == 0 &&
		  policy_finalize(p, m->w->ctx, &d) == 0;

	snprintf(why, n, "%s", d.n_errors && d.errors[0] ? d.errors[0] : "invalid");
	policy_free(p);
	policy_diags_free(&d);
	return ok;
}

/* ---------------------------------------------------------------- entries */

static int oom(struct imp *m)
{
	halo_err_set(m->e, "out of memory");
	return -ENOMEM;
}

static int domain(struct imp *m, const char *raw, const char *field, struct rlist *to)
{
	char h[POLICY_HOST_MAX + 16], why[160];
	size_t n = strlen(raw);
	bool deny = to == &m->denied;

	if (n == 0) {
		imp_warn(m, field, "an empty entry; left out (it names no host)");
		return 0;
	}
	if (n >= sizeof(h) - 1) {
		if (deny)
			return imp_deny_lost(m, "*", "(an over-long entry)", field, "over-long");
		imp_warn(m, field, "an over-long entry; left out");
		return 0;
	}
	for (size_t i = 0; i <= n; i++)
		h[i] = (char)tolower((unsigned char)raw[i]);
	if (n > 1 && h[n - 1] == '.')
		h[n - 1] = 0;
	if (strcmp(h, "*") == 0) {
		if (deny)
			return imp_deny_lost(m, h, h, field,
					     "\"*\" (every host) is not a domain entry");
		imp_warn(m, field, "\"*\" (every host) is not a domain entry; left out");
		return 0;
	}
	if (policy_pattern_check(h, why, sizeof(why)) < 0) {
		if (deny)
			return imp_deny_lost(m, h, h, field, why);
		imp_warn(m, field, "an entry halo-run cannot hold (%s); left out", why);
		return 0;
	}
	/* No harness names ports: its matcher may take "host:443" for the host alone, so
	 * a denied one is denied on every port (tighter), never on that port only. */
	size_t hl;
	unsigned port = 0;
	if (deny && policy_pattern_split(h, &hl, &port, why, sizeof(why)) == 0 && port) {
		h[hl] = 0;
		imp_warn(m, field, "%s: denied on every port (tighter; the harness names no ports)",
			 h);
	}
	return rlist_push(to, h) < 0 ? oom(m) : 0;
}

int imp_allow(struct imp *m, const char *s, const char *field)
{
	return domain(m, s, field, &m->allowed);
}

int imp_deny(struct imp *m, const char *s, const char *field)
{
	return domain(m, s, field, &m->denied);
}

static int both(struct imp *m, const char *s, const char *field, struct rlist *to)
{
	char x[POLICY_HOST_MAX + 16];
	const char *apex = strncmp(s, "*.", 2) == 0 ? s + 2 : s;

	snprintf(x, sizeof(x), "*.%s", apex);
	if (domain(m, apex, field, to) < 0 || domain(m, x, field, to) < 0)
		return -ENOMEM;
	return 0;
}

int imp_allow_apex(struct imp *m, const char *s, const char *field)
{
	return strncmp(s, "*.", 2) == 0 ? both(m, s, field, &m->allowed) : imp_allow(m, s, field);
}

int imp_deny_tree(struct imp *m, const char *s, const char *field)
{
	return both(m, s, field, &m->denied);
}

int imp_deny_apex(struct imp *m, const char *s, const char *field)
{
	return strncmp(s, "*.", 2) == 0 ? both(m, s, field, &m->denied) : imp_deny(m, s, field);
}

/* A directory followed by the any-depth or one-level glob -> the directory; the
 * any-depth glob followed by a name -> the name pattern. */
static void path_form(const char *s, char *out, size_t n)
{
	size_t len;

	if (strncmp(s, "**/", 3) == 0 && !strchr(s + 3, '/'))
		s += 3;
	else if (strncmp(s, "/**/", 4) == 0 && !strchr(s + 4, '/'))
		s += 4; /* Codex's any-depth glob for a name */
	snprintf(out, n, "%s", s);
	len = strlen(out);
	if (len > 3 && strcmp(out + len - 3, "/**") == 0)
		out[len - 3] = 0;
	else if (len > 2 && strcmp(out + len - 2, "/*") == 0)
		out[len - 2] = 0;
	len = strlen(out);
	while (len > 1 && out[len - 1] == '/')
		out[--len] = 0;
}

static bool in_floor(const char *path)
{
	size_t n;
	const struct policy_floor_entry *f = policy_floor(&n);

	for (size_t i = 0; i < n; i++)
		if (strcmp(f[i].path, path) == 0)
			return true;
	return false;
}

/* Would `path` alone validate as a protected path? The first error in why. */
int imp_protect_ok(struct imp *m, const char *path, char *why, size_t n)
{
	struct imp one = {.kind = m->kind, .fail = -1, .w = m->w};
	char *y;
	int ok;

	if (rlist_push(&one.protected, path) < 0 || !(y = yaml_of(&one, false))) {
		rlist_free(&one.protected);
		return -ENOMEM;
	}
	ok = validates(m, y, why, n);
	free(y);
	rlist_free(&one.protected);
	return ok ? 1 : 0;
}

int imp_protect(struct imp *m, const char *s, const char *field)
{
	char path[4200], why[600], sub[4200];
	int ok;

	path_form(s, path, sizeof(path));
	/* The credential floor is under every policy already. */
	if (!path[0] || rlist_has(&m->protected, path) || in_floor(path))
		return 0;
	if ((ok = imp_protect_ok(m, path, why, sizeof(why))) < 0)
		return oom(m);
	if (ok)
		return rlist_push(&m->protected, path) < 0 ? oom(m) : 0;
	/* A denied path the policy cannot hold: refused, or its enclosing form. */
	imp_path_enclosing(path, sub, sizeof(sub));
	if (sub[0] && strcmp(sub, path) != 0 && (ok = imp_protect_ok(m, sub, why + 300, 300)) < 0)
		return oom(m);
	if (!sub[0] || strcmp(sub, path) == 0 || !ok) {
		imp_lost(m, field, s, why, NULL);
		return 0;
	}
	imp_lost(m, field, s, why, sub);
	if (m->w->lossy && !rlist_has(&m->protected, sub) && rlist_push(&m->protected, sub) < 0)
		return oom(m);
	return 0;
}

int imp_writable(struct imp *m, const char *s, const char *field)
{
	char path[4200], abs[4200], why[600], *y;
	struct imp one = {.kind = m->kind, .fail = -1, .w = m->w};

	path_form(s, path, sizeof(path));
	if (strcmp(path, ".") == 0 || strcmp(path, "./") == 0)
		return 0; /* the workspace: writable in halo-run already */
	if (rlist_has(&m->writable, path))
		return 0;
	if (strncmp(path, "~/", 2) == 0)
		snprintf(abs, sizeof(abs), "%s%s", m->w->ctx->pw_home, path + 1);
	else
		snprintf(abs, sizeof(abs), "%s", path);
	if (rlist_push(&one.writable, path) < 0) {
		rlist_free(&one.writable);
		return oom(m);
	}
	for (size_t i = 0; i < m->protected.n; i++)
		if (rlist_push(&one.protected, m->protected.v[i]) < 0)
			m->error = true;
	y = m->error ? NULL : yaml_of(&one, false);
	if (!y)
		m->error = true;
	else if (!validates(m, y, why, sizeof(why)))
		imp_warn(m, field, "a writable root halo-run refuses (%s); left out", why);
	else if (m->w->exists && !m->w->exists(abs))
		imp_warn(m, field,
			 "%s does not exist on this machine; left out (create it and "
			 "add it to sandbox.writableRoots)",
			 path);
	else if (rlist_push(&m->writable, path) < 0)
		m->error = true;
	free(y);
	rlist_free(&one.writable);
	rlist_free(&one.protected);
	return m->error ? oom(m) : 0;
}

/* "Tool(arg)" -> tool and arg; false when the rule has another shape. */
static bool rule_split(const char *s, char *tool, size_t tn, const char **arg, size_t *alen)
{
	const char *open = strchr(s, '(');
	size_t len = strlen(s);

	if (!open || len < 3 || s[len - 1] != ')' || (size_t)(open - s) >= tn)
		return false;
	snprintf(tool, tn, "%.*s", (int)(open - s), s);
	*arg = open + 1;
	*alen = (size_t)(s + len - 1 - *arg);
	return true;
}

static int perm(struct imp *m, const char *s, const char *field, bool deny)
{
	char tool[32], arg[4200];
	const char *a;
	size_t n;

	if (!rule_split(s, tool, sizeof(tool), &a, &n) || n >= sizeof(arg)) {
		/* A bare tool name denies the tool everything. */
		if (deny && strcmp(s, "WebFetch") == 0)
			return imp_deny_lost(m, "*", s, field,
					     "WebFetch with no domain denies every host");
		if (deny && (!strcmp(s, "Read") || !strcmp(s, "Edit") || !strcmp(s, "Write"))) {
			imp_lost(m, field, s, "denies every path; a policy cannot protect /", NULL);
			return 0;
		}
		imp_warn(m, field, "a rule halo-run has no equivalent for; not imported");
		return 0;
	}
	snprintf(arg, sizeof(arg), "%.*s", (int)n, a);
	if (strcmp(tool, "WebFetch") == 0 && strncmp(arg, "domain:", 7) == 0)
		return deny ? imp_deny(m, arg + 7, field) : imp_allow(m, arg + 7, field);
	if (deny && strcmp(tool, "WebFetch") == 0) /* a URL pattern: its host */
		return imp_deny_lost(m, arg, arg, field,
				     "WebFetch rules other than domain: name URLs");
	if (strcmp(tool, "Domain") == 0) /* Copilot's permission rules */
		return deny ? imp_deny(m, arg, field) : imp_allow(m, arg, field);
	if (deny && (strcmp(tool, "Read") == 0 || strcmp(tool, "Edit") == 0 ||
		     strcmp(tool, "Write") == 0)) {
		/* "//abs" is absolute in Claude Code's rules; "/x" is relative to the
		 * settings file, which a policy cannot name. */
		if (strncmp(arg, "//", 2) == 0)
			return imp_protect(m, arg + 1, field);
		if (arg[0] == '~' || strncmp(arg, "**/", 3) == 0)
			return imp_protect(m, arg, field);
		return imp_protect_relative(m, s, arg, field);
	}
	imp_warn(m, field, "%s rules have no equivalent in a halo-run policy; not imported", tool);
	return 0;
}

int imp_perm_deny(struct imp *m, const char *s, const char *field)
{
	return perm(m, s, field, true);
}

int imp_perm_allow(struct imp *m, const char *s, const char *field)
{
	return perm(m, s, field, false);
}

/* ---------------------------------------------------------------- the import */

static enum render_import_kind guess(const cJSON *root)
{
	const cJSON *sb = cJSON_GetObjectItemCaseSensitive(root, "sandbox");

	if (cJSON_GetObjectItemCaseSensitive(root, "networkPolicy") ||
	    cJSON_GetObjectItemCaseSensitive(root, "additionalReadwritePaths") ||
	    cJSON_IsString(cJSON_GetObjectItemCaseSensitive(root, "type")))
		return RI_CURSOR;
	if (cJSON_GetObjectItemCaseSensitive(sb, "userPolicy") ||
	    cJSON_GetObjectItemCaseSensitive(sb, "allowBypass"))
		return RI_COPILOT;
	if (sb || cJSON_GetObjectItemCaseSensitive(root, "permissions"))
		return RI_CLAUDE_CODE;
	if (cJSON_GetObjectItemCaseSensitive(root, "network") ||
	    cJSON_GetObjectItemCaseSensitive(root, "filesystem"))
		return RI_SRT;
	return RI_GUESS;
}

static int parse(const char *buf, size_t len, enum render_import_kind *kind, cJSON **root,
		 struct halo_err *e)
{
	const char *end = NULL;

	if (len > RENDER_IMPORT_MAX) {
		halo_err_set(e, "larger than %d bytes; refused", RENDER_IMPORT_MAX);
		return -EINVAL;
	}
	if (*kind == RI_CODEX)
		return render_toml_parse(buf, len, root, e);
	if (memchr(buf, 0, len)) {
		halo_err_set(e, "a NUL byte: not a settings file");
		return -EINVAL;
	}
	*root = cJSON_ParseWithLengthOpts(buf, len, &end, false);
	if (!*root && *kind == RI_GUESS && render_toml_parse(buf, len, root, e) == 0) {
		*kind = RI_CODEX;
		return 0;
	}
	if (!*root) {
		unsigned line = 1;
		for (const char *c = buf; end && c < end && c < buf + len; c++)
			line += *c == '\n';
		halo_err_set(e, "not valid JSON%s (near line %u)",
			     *kind == RI_GUESS ? " nor TOML" : "", line);
		return -EINVAL;
	}
	if (!cJSON_IsObject(*root)) {
		cJSON_Delete(*root);
		halo_err_set(e, "the top level must be an object");
		return -EINVAL;
	}
	return 0;
}

static int (*const readers[])(struct imp *m, const cJSON *root) = {
    [RI_CLAUDE_CODE] = imp_claude, [RI_SRT] = imp_srt,	       [RI_CODEX] = imp_codex,
    [RI_CURSOR] = imp_cursor,	   [RI_COPILOT] = imp_copilot,
};

static void imp_free(struct imp *m)
{
	rlist_free(&m->writable);
	rlist_free(&m->protected);
	rlist_free(&m->allowed);
	rlist_free(&m->denied);
	rlist_free(&m->warnings);
	rlist_free(&m->lost);
	rlist_free(&m->subst);
}

int render_import(const char *buf, size_t len, enum render_import_kind kind,
		  const struct render_import_world *w, struct render_import *out,
		  struct halo_err *e)
{
	struct imp m = {.fail = -1, .w = w, .e = e};
	cJSON *root = NULL;
	char why[600];
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = parse(buf, len, &kind, &root, e)) < 0)
		return rc;
	if (kind == RI_GUESS)
		kind = guess(root);
	if (kind == RI_GUESS) {
		cJSON_Delete(root);
		halo_err_set(e, "cannot tell which harness wrote this; name it with --from");
		return -EINVAL;
	}
	m.kind = kind;
	rc = readers[kind](&m, root);
	cJSON_Delete(root);
	if (rc == 0 && m.error)
		rc = oom(&m);
	if (rc == 0 && m.dflt == POLICY_EGRESS_ALLOW && m.allowed.n && !m.deny_all)
		imp_warn(&m, "egress.default",
			 "allow with an allowlist: halo-run refuses the pair; "
			 "the allowlist wins and other hosts are denied");
	if (rc == 0 && m.lost.n) {
		halo_err_set(e,
			     "%zu deny entr%s the policy cannot hold%s; refused: the policy would "
			     "be looser than its source",
			     m.lost.n, m.lost.n == 1 ? "y" : "ies",
			     w->lossy ? " and no tighter form covers"
				      : " (--lossy imports the nearest tighter form of each)");
		rc = -EINVAL;
	}
	if (rc == 0 && !(out->yaml = yaml_of(&m, true)))
		rc = oom(&m);
	/* The whole policy once more, as `validate` will read it: fail closed. */
	if (rc == 0 && !validates(&m, out->yaml, why, sizeof(why))) {
		halo_err_set(e, "the imported policy does not validate: %s", why);
		rc = -EINVAL;
	}
	out->lost = m.lost.v;
	out->n_lost = m.lost.n;
	memset(&m.lost, 0, sizeof(m.lost));
	if (rc == 0) {
		out->kind = kind;
		out->warnings = m.warnings.v;
		out->n_warnings = m.warnings.n;
		memset(&m.warnings, 0, sizeof(m.warnings));
		out->subst = m.subst.v;
		out->n_subst = m.subst.n;
		memset(&m.subst, 0, sizeof(m.subst));
	} else {
		free(out->yaml);
		out->yaml = NULL;
	}
	imp_free(&m);
	return rc;
}

void render_import_free(struct render_import *r)
{
	for (size_t i = 0; i < r->n_warnings; i++)
		free(r->warnings[i]);
	free(r->warnings);
	for (size_t i = 0; i < r->n_lost; i++)
		free(r->lost[i]);
	free(r->lost);
	for (size_t i = 0; i < r->n_subst; i++)
		free(r->subst[i]);
	free(r->subst);
	free(r->yaml);
	memset(r, 0, sizeof(*r));
}
