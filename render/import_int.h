/* Internal to the import half of render/: the policy being built, and the checks
 * each entry passes before it is kept. */
#ifndef HALO_RENDER_IMPORT_INT_H
#define HALO_RENDER_IMPORT_INT_H

#include "render/render_int.h"

struct imp {
	enum render_import_kind kind;
	enum policy_mode mode; /* UNSET: workspace-write */
	int fail;	       /* -1 unset */
	enum policy_egress_default dflt;
	struct rlist writable, protected, allowed, denied;
	struct rlist warnings;
	const struct render_import_world *w;
	struct halo_err *e;
	bool error;
	bool writes_allowed; /* Codex: allowed_sandbox_modes names a writing mode */
	bool deny_all;	     /* --lossy: a denied entry only "every host" covers */
	struct rlist lost, subst;
};

/* A deny entry the policy cannot hold: lost (refusing the import) unless w->lossy and
 * `tighter` names its substitute, then a substitution. */
void imp_lost(struct imp *m, const char *field, const char *entry, const char *why,
	      const char *tighter);
/* A denied host pattern `h` the grammar cannot hold (`label` names it in messages):
 * lost, or (--lossy) its enclosing wildcard denied, or every host. 0 or -ENOMEM. */
int imp_deny_lost(struct imp *m, const char *h, const char *label, const char *field,
		  const char *why);
/* The nearest tighter protected path for `path` into out ("" when none). */
void imp_path_enclosing(const char *path, char *out, size_t n);
/* Would `path` alone validate as a protected path? 1, 0 (first error in why), -ENOMEM. */
int imp_protect_ok(struct imp *m, const char *path, char *why, size_t n);
/* A Read/Edit/Write rule with a path relative to the settings file: lost, or (--lossy)
 * the same name pattern everywhere. */
int imp_protect_relative(struct imp *m, const char *rule, const char *arg, const char *field);

void imp_warn(struct imp *m, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Type errors fail the import: a restriction of the wrong type cannot be read. */
int imp_type_error(struct imp *m, const char *field, const char *want, const cJSON *got);
/* Each string of a JSON array at `field`, or -EINVAL when it is not a list of strings. */
int imp_strings(struct imp *m, const cJSON *a, const char *field,
		int (*fn)(struct imp *m, const char *s, const char *field));
int imp_bool(struct imp *m, const cJSON *b, const char *field, bool *out);
int imp_string(struct imp *m, const cJSON *s, const char *field, const char **out);

/* Entries, each checked (domains by the pattern grammar, paths by validation). */
int imp_allow(struct imp *m, const char *s, const char *field);
int imp_deny(struct imp *m, const char *s, const char *field);
/* Cursor's "*.x" includes the apex; Copilot's blockedHosts block subdomains: both
 * spelled in halo-run's meaning as "x" and "*.x". */
int imp_allow_apex(struct imp *m, const char *s, const char *field);
int imp_deny_tree(struct imp *m, const char *s, const char *field);
int imp_deny_apex(struct imp *m, const char *s, const char *field);
int imp_protect(struct imp *m, const char *s, const char *field);
int imp_writable(struct imp *m, const char *s, const char *field);
/* A Claude Code / Cursor permission rule: Read(...), Edit(...), WebFetch(domain:...). */
int imp_perm_deny(struct imp *m, const char *s, const char *field);
int imp_perm_allow(struct imp *m, const char *s, const char *field);

/* Warn for every key of obj not in known (NULL-ended), under `prefix`. */
void imp_unknown_keys(struct imp *m, const cJSON *obj, const char *prefix,
		      const char *const *known);

/* The readers, one per kind (import_kinds.c). */
int imp_claude(struct imp *m, const cJSON *root);
int imp_srt(struct imp *m, const cJSON *root);
int imp_codex(struct imp *m, const cJSON *root);
int imp_cursor(struct imp *m, const cJSON *root);
int imp_copilot(struct imp *m, const cJSON *root);

#endif
