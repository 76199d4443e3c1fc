/* Validation of sandbox.writableRoots and sandbox.protectedPaths, and the derived
 * absolute forms the launchers use.
 *
 * Every comparison is case-insensitive (macOS file systems usually are, and a
 * false refusal is cheap where a missed overlap is not) and is made for every home
 * form: ~/ expands against the password database's home and, when $HOME differs,
 * against $HOME as well. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy/policy_int.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Directories that hold home directories, and homes at fixed places. */
static const char *const home_parents[] = {"/home", "/Users", "/var/home"};
static const char *const fixed_homes[] = {"/root", "/var/root"};

struct protected_form {
	const char *abs;			/* points into p->protected_abs */
	size_t index;				/* into p->protected_paths (floor: NULL) */
	const struct policy_floor_entry *floor; /* or the credential floor's entry */
};

struct pctx {
	struct halo_policy *p;
	const struct policy_vctx *v;
	struct protected_form *forms;
	size_t n_forms;
};

static void perr(const struct policy_vctx *v, const char *list, size_t i, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void perr(const struct policy_vctx *v, const char *list, size_t i, const char *fmt, ...)
{
	char field[64], msg[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(field, sizeof(field), "sandbox.%s[%zu]", list, i);
	policy_diag(v->d, true, v->src, 0, field, "%s", msg);
}

static bool same_path(const char *a, const char *b)
{
	return strcasecmp(a, b) == 0;
}

static bool is_home_of(const char *a, const char *parent)
{
	size_t pl = strlen(parent);

	return strncasecmp(a, parent, pl) == 0 && a[pl] == '/' && a[pl + 1] &&
	       !strchr(a + pl + 1, '/');
}

/* Why the absolute path `a` cannot be writable as far as homes and system
 * directories go, or NULL. */
static const char *system_reason(const char *a, const struct policy_vctx *v, char *buf, size_t n)
{
	if (strcmp(a, "/") == 0)
		return "is the root directory";
	/* Equality first, so /var reads as a system directory, not a home parent. */
	if (policy_is_system_dir(a))
		return "is a system directory";
	for (size_t i = 0; i < v->n_homes; i++) {
		if (same_path(a, v->homes[i]))
			return "is a home directory; make a directory inside it writable instead";
		if (policy_path_within(v->homes[i], a)) {
			snprintf(buf, n, "contains the home directory %s", v->homes[i]);
			return buf;
		}
	}
	/* halo-run's own policy directory (policy_discover): what the command wrote there
	 * would be the next launch's policy. */
	for (size_t i = 0; i < v->n_homes; i++) {
		char cfg[POLICY_PATH_MAX];
		if (snprintf(cfg, sizeof(cfg), "%s/.config/halo", v->homes[i]) < (int)sizeof(cfg) &&
		    (policy_path_within(cfg, a) || policy_path_within(a, cfg))) {
			snprintf(buf, n,
				 "%s halo-run's policy directory %s (the next launch would read a "
				 "policy the command wrote)",
				 policy_path_within(a, cfg) ? "is inside" : "contains", cfg);
			return buf;
		}
	}
	for (size_t i = 0; i < N(home_parents); i++) {
		if (policy_path_within(home_parents[i], a))
			return "contains home directories";
		if (is_home_of(a, home_parents[i]))
			return "is a home directory";
	}
	for (size_t i = 0; i < N(fixed_homes); i++)
		if (same_path(a, fixed_homes[i]))
			return "is a home directory";
	for (int pass = 0; pass < 2; pass++) {
		size_t nt;
		const char *const *t = pass ? policy_system_dirs(&nt) : policy_system_trees(&nt);

		for (size_t i = 0; i < nt; i++) {
			if (policy_path_within(t[i], a)) {
				snprintf(buf, n, "contains the system directory %s", t[i]);
				return buf;
			}
			if (!pass && policy_path_within(a, t[i])) {
				snprintf(buf, n, "is inside the system directory %s", t[i]);
				return buf;
			}
		}
	}
	return NULL;
}

static const char *overlap_reason(const char *a, const struct pctx *c, char *buf, size_t n)
{
	char q[POLICY_QUOTE_MAX];

	for (size_t k = 0; k < c->n_forms; k++) {
		const struct protected_form *f = &c->forms[k];
		const char *raw = f->floor ? f->floor->path : c->p->protected_paths.items[f->index];

		/* A floor entry inside a writable root is masked there like a .env file in
		 * the workspace: build caches such as ~/.gradle or ~/.cargo stay writable. */
		if (f->floor) {
			if (!policy_path_within(a, f->abs))
				continue;
			snprintf(buf, n, "is inside the credential floor's %s (%s)",
				 policy_quote(raw, q, sizeof(q)), f->floor->reason);
			return buf;
		}
		if (policy_path_within(a, f->abs)) {
			snprintf(buf, n, "is inside protected path sandbox.protectedPaths[%zu] %s",
				 f->index, policy_quote(raw, q, sizeof(q)));
			return buf;
		}
		if (policy_path_within(f->abs, a)) {
			snprintf(buf, n, "contains protected path sandbox.protectedPaths[%zu] %s",
				 f->index, policy_quote(raw, q, sizeof(q)));
			return buf;
		}
	}
	return NULL;
}

/* A writable root is bound as the directory it names, never through a link: a link
 * would make its target writable (the parent of the workspace, a system tree), and
 * the rules above only ever saw the link's name. */
static const char *symlink_reason(const char *abs, const struct policy_vctx *v, char *buf, size_t n)
{
	char target[POLICY_PATH_MAX], q[POLICY_QUOTE_MAX];

	if (!v->ctx->is_symlink || !v->ctx->is_symlink(abs, target, sizeof(target)))
		return NULL;
	snprintf(buf, n,
		 "is a symlink (to %s); writable roots are never followed through a link: "
		 "name the directory itself",
		 policy_quote(target, q, sizeof(q)));
	return buf;
}

/* Where `abs` leads, every link on the way followed (the launcher binds that
 * directory), judged by the same rules against the homes and protected paths
 * resolved the same way: a linked parent (/tmp/link/.config, link -> ~) passed every
 * rule under its own name. NULL when it leads nowhere else or is allowed there. */
static const char *resolved_reason(const char *abs, const struct pctx *c, char *buf, size_t n)
{
	const struct policy_vctx *v = c->v;
	struct policy_vctx rv = *v;
	struct pctx rc = *c;
	char real[POLICY_PATH_MAX], homes[2][POLICY_PATH_MAX], why_buf[POLICY_PATH_MAX + 200];
	char(*forms)[POLICY_PATH_MAX] = NULL;
	const char *why;

	if (!v->ctx->resolve || v->ctx->resolve(abs, real, sizeof(real)) < 0 ||
	    strcmp(real, abs) == 0)
		return NULL;
	for (size_t h = 0; h < v->n_homes && h < 2; h++)
		if (v->ctx->resolve(v->homes[h], homes[h], sizeof(homes[h])) == 0)
			rv.homes[h] = homes[h];
	why = system_reason(real, v, why_buf, sizeof(why_buf));
	if (!why)
		why = system_reason(real, &rv, why_buf, sizeof(why_buf));
	if (!why)
		why = overlap_reason(real, c, why_buf, sizeof(why_buf));
	if (!why && c->n_forms && (forms = calloc(c->n_forms, sizeof(*forms))) &&
	    (rc.forms = calloc(c->n_forms, sizeof(*rc.forms)))) {
		for (size_t k = 0; k < c->n_forms; k++) {
			rc.forms[k] = c->forms[k];
			if (v->ctx->resolve(c->forms[k].abs, forms[k], sizeof(forms[k])) == 0)
				rc.forms[k].abs = forms[k];
		}
		why = overlap_reason(real, &rc, why_buf, sizeof(why_buf));
		free(rc.forms);
	} else if (!why && c->n_forms) {
		why = "cannot be compared with the protected paths (out of memory)";
	}
	if (why)
		snprintf(buf, n, "resolves to %s, which %s", real, why);
	free(forms);
	return why ? buf : NULL;
}

/* sandbox.unixSockets: exact places (absolute or ~/), each a host socket the command
 * may connect to. */
static void check_unix_socket(struct pctx *c, size_t i)
{
	const struct policy_vctx *v = c->v;
	const char *raw = c->p->unix_sockets.items[i], *why = NULL;
	char q[POLICY_QUOTE_MAX], abs[POLICY_PATH_MAX];

	policy_quote(raw, q, sizeof(q));
	if (!*raw) {
		perr(v, "unixSockets", i, "is empty");
		return;
	}
	if (raw[0] != '/' && raw[0] != '~') {
		perr(v, "unixSockets", i, "%s: must be an absolute or ~/ path to a socket", q);
		return;
	}
	if (policy_has_glob(raw)) {
		perr(v, "unixSockets", i, "%s: globs are not allowed; name each socket", q);
		return;
	}
	for (size_t h = 0; h < v->n_homes; h++) {
		if (policy_path_expand(raw, v->homes[h], abs, sizeof(abs), &why) < 0) {
			perr(v, "unixSockets", i, "%s %s", q, why);
			return;
		}
		if (strcmp(abs, "/") == 0) {
			perr(v, "unixSockets", i, "%s is not a socket", q);
			return;
		}
		if (!policy_list_contains(&c->p->unix_sockets_abs, abs) &&
		    policy_list_push(&c->p->unix_sockets_abs, abs) < 0) {
			perr(v, "unixSockets", i, "out of memory");
			return;
		}
		if (raw[0] != '~')
			break;
	}
}

static void check_writable(struct pctx *c, size_t i)
{
	const struct policy_vctx *v = c->v;
	const char *raw = c->p->writable_roots.items[i], *why = NULL;
	char q[POLICY_QUOTE_MAX], abs[POLICY_PATH_MAX], buf[POLICY_PATH_MAX + 200];

	policy_quote(raw, q, sizeof(q));
	if (!*raw) {
		perr(v, "writableRoots", i, "is empty");
		return;
	}
	if (policy_has_glob(raw)) {
		perr(v, "writableRoots", i, "%s: globs are not allowed in writable roots", q);
		return;
	}
	for (size_t h = 0; h < v->n_homes; h++) {
		if (policy_path_expand(raw, v->homes[h], abs, sizeof(abs), &why) < 0) {
			perr(v, "writableRoots", i, "%s %s", q, why);
			return;
		}
		why = system_reason(abs, v, buf, sizeof(buf));
		if (!why)
			why = overlap_reason(abs, c, buf, sizeof(buf));
		if (!why)
			why = symlink_reason(abs, v, buf, sizeof(buf));
		if (!why)
			why = resolved_reason(abs, c, buf, sizeof(buf));
		if (why) {
			if (strcmp(abs, raw) != 0)
				perr(v, "writableRoots", i, "%s (%s) %s", q, abs, why);
			else
				perr(v, "writableRoots", i, "%s %s", q, why);
			return;
		}
		if (h == 0 && policy_list_push(&c->p->writable_abs, abs) < 0)
			perr(v, "writableRoots", i, "out of memory");
	}
}

static bool has_dotdot(const char *s)
{
	for (const char *p = s; (p = strstr(p, "..")); p += 2)
		if ((p == s || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
			return true;
	return false;
}

/* The credential floor, after the policy's own entries (so messages name those
 * first): never an error of the policy's, but the workspace must not lie inside it. */
static void add_floor(struct pctx *c)
{
	const struct policy_vctx *v = c->v;
	const struct policy_floor_entry *fl;
	char abs[POLICY_PATH_MAX], q[POLICY_QUOTE_MAX];
	const char *why;
	size_t n;

	if (c->p->mode == POLICY_MODE_OFF)
		return; /* nothing is enforced, the floor included */
	fl = policy_floor(&n);
	for (size_t i = 0; i < n; i++) {
		const struct policy_floor_entry *f = &fl[i];

		if (f->path[0] != '~') {
			if (!policy_list_contains(&c->p->protected_globs, f->path) &&
			    policy_list_push(&c->p->protected_globs, f->path) < 0)
				policy_diag(v->d, true, v->src, 0, NULL, "out of memory");
			continue;
		}
		for (size_t h = 0; h < v->n_homes; h++) {
			if (policy_path_expand(f->path, v->homes[h], abs, sizeof(abs), &why) < 0)
				continue;
			if (v->ctx->workspace && policy_path_within(v->ctx->workspace, abs)) {
				policy_diag(v->d, true, v->src, 0, NULL,
					    "the workspace %s is inside the credential floor's %s "
					    "(%s), which is never readable",
					    v->ctx->workspace, policy_quote(f->path, q, sizeof(q)),
					    f->reason);
				return;
			}
			if (policy_list_contains(&c->p->protected_abs, abs))
				continue;
			if (policy_list_push(&c->p->protected_abs, abs) < 0) {
				policy_diag(v->d, true, v->src, 0, NULL, "out of memory");
				return;
			}
			c->forms[c->n_forms++] = (struct protected_form){
			    c->p->protected_abs.items[c->p->protected_abs.n - 1], 0, f};
		}
	}
}

/* Relative entries are name patterns matched anywhere (".env*", "*.pem",
 * "secrets/"); absolute and ~/ entries are exact places. */
static void check_protected(struct pctx *c, size_t i)
{
	const struct policy_vctx *v = c->v;
	const char *raw = c->p->protected_paths.items[i], *why = NULL;
	char q[POLICY_QUOTE_MAX], abs[POLICY_PATH_MAX];

	policy_quote(raw, q, sizeof(q));
	if (!*raw) {
		perr(v, "protectedPaths", i, "is empty");
		return;
	}
	if (raw[0] != '/' && raw[0] != '~') {
		if (has_dotdot(raw) || strncmp(raw, "./", 2) == 0 || strcmp(raw, ".") == 0)
			perr(v, "protectedPaths", i,
			     "%s: a relative entry is a name pattern (like .env* or secrets/); "
			     "'.' and '..' have no meaning in it",
			     q);
		else if (policy_list_push(&c->p->protected_globs, raw) < 0)
			perr(v, "protectedPaths", i, "out of memory");
		return;
	}
	if (policy_has_glob(raw)) {
		perr(v, "protectedPaths", i,
		     "%s: globs are only supported in relative name patterns such as .env*; "
		     "protect the directory instead",
		     q);
		return;
	}
	for (size_t h = 0; h < v->n_homes; h++) {
		if (policy_path_expand(raw, v->homes[h], abs, sizeof(abs), &why) < 0) {
			perr(v, "protectedPaths", i, "%s %s", q, why);
			return;
		}
		if (strcmp(abs, "/") == 0) {
			perr(v, "protectedPaths", i, "%s would hide the whole file system", q);
			return;
		}
		if (v->ctx->workspace && policy_path_within(v->ctx->workspace, abs)) {
			perr(v, "protectedPaths", i, "%s contains the workspace %s", q,
			     v->ctx->workspace);
			return;
		}
		if (policy_list_contains(&c->p->protected_abs, abs))
			continue;
		if (policy_list_push(&c->p->protected_abs, abs) < 0) {
			perr(v, "protectedPaths", i, "out of memory");
			return;
		}
		c->forms[c->n_forms++] = (struct protected_form){
		    c->p->protected_abs.items[c->p->protected_abs.n - 1], i, NULL};
		if (raw[0] != '~')
			break; /* an absolute entry has one form */
	}
}

void policy_validate_paths(struct halo_policy *p, const struct policy_vctx *v)
{
	struct pctx c = {.p = p, .v = v};
	bool too_many = false;
	size_t n_floor;

	if (p->protected_paths.n > POLICY_MAX_PROTECTED) {
		policy_diag(v->d, true, v->src, 0, "sandbox.protectedPaths",
			    "too many entries (%zu; at most %d)", p->protected_paths.n,
			    POLICY_MAX_PROTECTED);
		too_many = true;
	}
	if (p->writable_roots.n > POLICY_MAX_WRITABLE_ROOTS) {
		policy_diag(v->d, true, v->src, 0, "sandbox.writableRoots",
			    "too many entries (%zu; at most %d)", p->writable_roots.n,
			    POLICY_MAX_WRITABLE_ROOTS);
		too_many = true;
	}
	if (p->unix_sockets.n > POLICY_MAX_UNIX_SOCKETS) {
		policy_diag(v->d, true, v->src, 0, "sandbox.unixSockets",
			    "too many entries (%zu; at most %d)", p->unix_sockets.n,
			    POLICY_MAX_UNIX_SOCKETS);
		too_many = true;
	}
	if (p->mode == POLICY_MODE_READ_ONLY && p->writable_roots.n > 0)
		policy_diag(v->d, true, v->src, 0, "sandbox.writableRoots",
			    "not allowed with sandbox.mode read-only");
	if (too_many)
		return;
	/* One absolute form per entry and home at most. */
	policy_floor(&n_floor);
	c.forms = calloc((p->protected_paths.n + n_floor) * v->n_homes + 1, sizeof(*c.forms));
	if (!c.forms) {
		policy_diag(v->d, true, v->src, 0, NULL, "out of memory");
		return;
	}
	for (size_t i = 0; i < p->protected_paths.n; i++)
		check_protected(&c, i);
	add_floor(&c);
	for (size_t i = 0; i < p->writable_roots.n; i++)
		check_writable(&c, i);
	for (size_t i = 0; i < p->unix_sockets.n; i++)
		check_unix_socket(&c, i);
	free(c.forms);
	policy_validate_allow_read(p, v);
}
