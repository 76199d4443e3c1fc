/* sandbox.allowRead: explicit carve-outs from the protected paths, and the floor
 * files shown as sanitized copies.
 *
 * A carve-out must lie inside a protected path (of the floor or of the policy): it
 * loosens exactly that, and is reported. It is refused inside a secret store of the
 * floor (outside the settings names the floor allows), and when it would contain
 * another protected path: a carve-out is a leaf, so the launchers never have to mask
 * again beneath what they just opened. Lexical, like the rest of validation; the
 * launchers resolve symbolic links and refuse a carve-out that leads elsewhere. */
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy_int.h"

#define MAX_ALLOW_READ 256

struct actx {
	struct halo_policy *p;
	const struct policy_vctx *v;
	size_t i; /* the allowRead entry */
	char q[POLICY_QUOTE_MAX];
	const char *covered_by; /* the protected entry it is inside, as written */
	bool bad;
};

static void aerr(struct actx *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void aerr(struct actx *a, const char *fmt, ...)
{
	char field[64], msg[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(field, sizeof(field), "sandbox.allowRead[%zu]", a->i);
	policy_diag(a->v->d, true, a->v->src, 0, field, "%s", msg);
	a->bad = true;
}

/* Does any component of abs match the name pattern (no '/' in it)? */
static bool component_matches(const char *pattern, const char *abs)
{
	char name[POLICY_PATH_MAX];

	if (strchr(pattern, '/'))
		return false;
	for (const char *s = abs; *s;) {
		size_t k;

		while (*s == '/')
			s++;
		k = strcspn(s, "/");
		if (k && k < sizeof(name)) {
			memcpy(name, s, k);
			name[k] = '\0';
			if (fnmatch(pattern, name, FNM_PERIOD | FNM_CASEFOLD) == 0)
				return true;
		}
		s += k;
	}
	return false;
}

/* One protected entry (as written) against the carve-out's absolute form. */
static void against(struct actx *a, const char *raw, const struct policy_floor_entry *f,
		    const char *abs)
{
	const struct policy_vctx *v = a->v;
	char e[POLICY_PATH_MAX], q[POLICY_QUOTE_MAX];
	const char *why;

	if (raw[0] != '/' && raw[0] != '~') {
		if (component_matches(raw, abs) && !a->covered_by)
			a->covered_by = raw;
		return;
	}
	for (size_t h = 0; h < v->n_homes && !a->bad; h++) {
		if (policy_path_expand(raw, v->homes[h], e, sizeof(e), &why) < 0)
			return; /* reported for the protected path itself */
		if (policy_path_within(abs, e)) {
			if (f && f->kind == POLICY_FLOOR_SECRET &&
			    !policy_floor_carve_ok(f, e, abs))
				aerr(a,
				     "%s is inside %s, a secret store of the credential floor "
				     "(%s): it can never be made readable",
				     a->q, policy_quote(raw, q, sizeof(q)), f->reason);
			else if (!a->covered_by)
				a->covered_by = raw;
		} else if (policy_path_within(e, abs)) {
			aerr(a,
			     "%s contains the protected path %s, which would stay hidden; carve "
			     "out the files you need inside it instead",
			     a->q, policy_quote(raw, q, sizeof(q)));
		}
		if (raw[0] == '/')
			break;
	}
}

static void check_form(struct actx *a, const char *abs)
{
	const struct halo_policy *p = a->p;
	const struct policy_floor_entry *fl;
	size_t n;

	if (strcmp(abs, "/") == 0) {
		aerr(a, "%s is the whole file system", a->q);
		return;
	}
	for (size_t k = 0; k < p->protected_paths.n && !a->bad; k++)
		against(a, p->protected_paths.items[k], NULL, abs);
	fl = policy_floor(&n);
	for (size_t k = 0; k < n && !a->bad; k++)
		against(a, fl[k].path, &fl[k], abs);
	if (a->bad)
		return;
	if (!a->covered_by) {
		aerr(a,
		     "%s is not inside any protected path (of the credential floor or "
		     "sandbox.protectedPaths): there is nothing to carve out",
		     a->q);
		return;
	}
	if (!policy_list_contains(&a->p->allow_read_abs, abs) &&
	    policy_list_push(&a->p->allow_read_abs, abs) < 0)
		aerr(a, "out of memory");
}

static void check_entry(struct actx *a)
{
	const struct policy_vctx *v = a->v;
	const char *raw = a->p->allow_read.items[a->i], *why;
	char abs[POLICY_PATH_MAX], q[POLICY_QUOTE_MAX];

	policy_quote(raw, a->q, sizeof(a->q));
	if (!*raw) {
		aerr(a, "is empty");
		return;
	}
	if (policy_has_glob(raw)) {
		aerr(a, "%s: globs are not allowed; name the file or folder", a->q);
		return;
	}
	if (raw[0] != '/' && raw[0] != '~') {
		aerr(a, "%s must be an absolute path or start with ~/", a->q);
		return;
	}
	for (size_t h = 0; h < v->n_homes && !a->bad; h++) {
		if (policy_path_expand(raw, v->homes[h], abs, sizeof(abs), &why) < 0) {
			aerr(a, "%s %s", a->q, why);
			return;
		}
		check_form(a, abs);
		if (raw[0] == '/')
			break;
	}
	if (!a->bad)
		policy_diag(v->d, false, v->src, 0, NULL,
			    "sandbox.allowRead[%zu]: %s loosens the protected path %s: it is "
			    "readable inside the sandbox",
			    a->i, a->q, policy_quote(a->covered_by, q, sizeof(q)));
}

/* Sanitized copies: floor files with a sanitizer, unless the policy protects them
 * itself (then they stay masked whole) or carves them out (then they are real). */
static void derive_sanitize(struct halo_policy *p, const struct policy_vctx *v)
{
	size_t n;
	const struct policy_floor_entry *fl = policy_floor(&n);
	char abs[POLICY_PATH_MAX], e[POLICY_PATH_MAX];
	const char *why;

	for (size_t i = 0; i < n; i++) {
		for (size_t h = 0; fl[i].sanitizer && h < v->n_homes; h++) {
			bool skip = false;
			unsigned char *grown;

			if (policy_path_expand(fl[i].path, v->homes[h], abs, sizeof(abs), &why) < 0)
				continue;
			for (size_t k = 0; k < p->protected_paths.n && !skip; k++)
				for (size_t hh = 0; hh < v->n_homes && !skip; hh++)
					skip = policy_path_expand(p->protected_paths.items[k],
								  v->homes[hh], e, sizeof(e),
								  &why) == 0 &&
					       policy_path_within(abs, e);
			for (size_t k = 0; k < p->allow_read_abs.n && !skip; k++)
				skip = policy_path_within(abs, p->allow_read_abs.items[k]);
			if (skip || policy_list_contains(&p->sanitize_abs, abs))
				continue;
			grown = realloc(p->sanitize_kind, p->sanitize_abs.n + 1);
			if (!grown || policy_list_push(&p->sanitize_abs, abs) < 0) {
				if (grown)
					p->sanitize_kind = grown;
				policy_diag(v->d, true, v->src, 0, NULL, "out of memory");
				return;
			}
			p->sanitize_kind = grown;
			p->sanitize_kind[p->sanitize_abs.n - 1] = (unsigned char)fl[i].sanitizer;
		}
	}
}

void policy_validate_allow_read(struct halo_policy *p, const struct policy_vctx *v)
{
	if (p->allow_read.n > MAX_ALLOW_READ) {
		policy_diag(v->d, true, v->src, 0, "sandbox.allowRead",
			    "too many entries (%zu; at most %d)", p->allow_read.n, MAX_ALLOW_READ);
		return;
	}
	for (size_t i = 0; i < p->allow_read.n; i++) {
		struct actx a = {.p = p, .v = v, .i = i};

		check_entry(&a);
	}
	if (p->mode != POLICY_MODE_OFF)
		derive_sanitize(p, v);
}
