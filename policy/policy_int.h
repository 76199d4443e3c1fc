/* Internal to policy/: the generic document tree both parsers produce, and the
 * helpers the loading, validation and layering files share. Not for other modules. */
#ifndef HALO_POLICY_INT_H
#define HALO_POLICY_INT_H

#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "policy/policy.h"

/* Sane bounds: the launchers create one mount or rule per path, so thousands of
 * paths are a mistake (or an attack on the launch time), never a real policy. */
#define POLICY_MAX_WRITABLE_ROOTS 256
#define POLICY_MAX_PROTECTED	  1024
#define POLICY_MAX_UNIX_SOCKETS	  64
#define POLICY_MAX_ENV		  1024
#define POLICY_MAX_CIDRS	  1024
#define POLICY_PATH_MAX		  4096
#define POLICY_QUOTE_MAX	  200 /* buffer size for policy_quote() */

static inline void policy_freep(void *p)
{
	free(*(void **)p);
}

static inline void policy_closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

#define _policy_free_  __attribute__((cleanup(policy_freep)))
#define _policy_close_ __attribute__((cleanup(policy_closep)))

/* ------------------------------------------------------------ generic tree */

/* One tree for JSON and YAML, so both formats go through the same model code and
 * the same policy gives the same struct halo_policy whatever its spelling. */
enum pnode_kind {
	PN_NULL,
	PN_BOOL,
	PN_NUM,
	PN_STR,
	PN_SEQ,
	PN_MAP,
};

/* Flags on YAML plain scalars that other YAML readers (1.1) would not read as a
 * string: the model refuses them where the meaning would differ. */
#define PN_YAML11_BOOL 1u /* yes, no, on, off, y, n in any case */
#define PN_NUMBERISH   2u /* 0755, 0x1f, 1_000, .inf, 1:20 ... */

struct pnode {
	enum pnode_kind kind;
	unsigned line; /* 1-based; 0 when the parser does not know (JSON) */
	unsigned flags;
	bool b;
	double num;
	char *str;	      /* PN_STR */
	size_t n, cap;	      /* PN_SEQ, PN_MAP */
	struct pnode **items; /* values */
	char **keys;	      /* PN_MAP keys */
	unsigned *key_lines;  /* PN_MAP key lines */
};

struct pnode *pnode_new(enum pnode_kind kind, unsigned line);
/* Append a child; takes ownership of key and val even when it fails (-ENOMEM). */
int pnode_seq_add(struct pnode *seq, struct pnode *val);
int pnode_map_add(struct pnode *map, char *key, unsigned key_line, struct pnode *val);
void pnode_free(struct pnode *n);
const char *pnode_kind_name(const struct pnode *n); /* "a string", "a number", ... */
/* Report every duplicate mapping key in the tree; returns how many. */
size_t pnode_check_dup_keys(const char *name, const struct pnode *root, struct policy_diags *d);

/* Parsers: 0 with the tree in *out, or -EINVAL with reasons (naming the file). */
int policy_parse_json(const char *name, const char *buf, size_t len, struct pnode **out,
		      struct policy_diags *d);
int policy_parse_yaml(const char *name, const char *buf, size_t len, struct pnode **out,
		      struct policy_diags *d);

/* Turn a tree into a raw (unvalidated) layer: types, known keys, enum values. */
int policy_model_from_tree(const char *name, const struct pnode *root, struct halo_policy **out,
			   struct policy_diags *d);

/* ------------------------------------------------------------ messages */

/* "name:line: field: message" (line omitted when 0, field when NULL or ""). */
void policy_diag(struct policy_diags *d, bool error, const char *name, unsigned line,
		 const char *field, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Quote outside text for a message: 'text', control and non-ASCII bytes escaped as
 * \xNN so a policy file cannot drive the terminal, long text cut with "...". */
const char *policy_quote(const char *s, char *buf, size_t n);

/* parent + "." + key (made printable) when idx < 0, else parent + "[idx]". */
void policy_field_join(char *out, size_t n, const char *parent, const char *key, long idx);

/* Levenshtein distance, case-insensitive, capped (for "did you mean"). */
size_t policy_edit_distance(const char *a, const char *b);

/* ------------------------------------------------------------ the model */

struct halo_policy *policy_new(void); /* every field unset */
int policy_list_push(struct policy_list *l, const char *s);
int policy_list_copy(struct policy_list *dst, const struct policy_list *src);
void policy_list_free(struct policy_list *l);
bool policy_list_contains(const struct policy_list *l, const char *s);
int policy_ports_push(struct policy_ports *l, uint16_t port);
int policy_ports_copy(struct policy_ports *dst, const struct policy_ports *src);
void policy_ports_free(struct policy_ports *l);
void policy_env_set_free(struct halo_policy *p);
void policy_derived_free(struct halo_policy *p); /* what policy_finalize() fills */

int policy_mode_parse(const char *s, enum policy_mode *m);

/* The egress default as Decide will apply it, before or after finalize. With
 * ignore_mode the answer disregards sandbox.mode off (for loosening reports). */
bool policy_effective_default_allow(const struct halo_policy *p, bool ignore_mode);

struct policy_limit_field {
	const char *key; /* schema spelling, e.g. "memoryMB" */
	size_t offset;	 /* into struct policy_limits */
	long long max;
};
extern const struct policy_limit_field policy_limit_fields[];
extern const size_t policy_n_limit_fields;

static inline long long *policy_limit_ptr(struct policy_limits *l,
					  const struct policy_limit_field *f)
{
	return (long long *)((char *)l + f->offset);
}

/* 0, or -EINVAL with why: a limit must be a positive integer up to f->max. */
int policy_limit_check(const struct policy_limit_field *f, double v, char *why, size_t n);

/* ------------------------------------------------------------ paths */

bool policy_has_glob(const char *s);
/* policy_path_normalise: policy.h (path facts). */

/* "~" / "~/x" against home, or an absolute path; then normalised (".." refused). */
int policy_path_expand(const char *raw, const char *home, char *out, size_t n, const char **why);

/* Validation pieces (validate.c, validate_paths.c), called by policy_finalize. */
struct policy_vctx {
	const struct policy_ctx *ctx;
	const char *src;      /* message prefix: the policy's source */
	const char *homes[2]; /* pw home, and $HOME when it differs (else NULL) */
	size_t n_homes;
	struct policy_diags *d;
};
/* A validation error or warning for field (validate.c), formatted. */
void policy_verr(const struct policy_vctx *v, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void policy_vwarn(const struct policy_vctx *v, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void policy_validate_paths(struct halo_policy *p, const struct policy_vctx *v);
/* sandbox.allowRead (validate_allow.c): after the protected paths are derived. */
void policy_validate_allow_read(struct halo_policy *p, const struct policy_vctx *v);
void policy_validate_egress(struct halo_policy *p, const struct policy_vctx *v, bool *domains_ok);
void policy_validate_misc(struct halo_policy *p, const struct policy_vctx *v);
void policy_warn_duplicates(const struct halo_policy *p, const struct policy_vctx *v);
/* egress.credentials, requestRules, trustedCAs (validate_tls.c): after the index. */
void policy_validate_tls(struct halo_policy *p, const struct policy_vctx *v);

/* egress.credentials and egress.requestRules from the tree (model_tls.c); returns
 * the number of errors reported. */
size_t policy_model_credentials(const char *name, struct policy_diags *d, struct halo_policy *p,
				const struct pnode *n, const char *path);
size_t policy_model_request_rules(const char *name, struct policy_diags *d, struct halo_policy *p,
				  const struct pnode *n, const char *path);
void policy_creds_free(struct halo_policy *p);
void policy_req_rules_free(struct halo_policy *p);
int policy_creds_copy(struct halo_policy *dst, const struct halo_policy *src);
int policy_req_rules_copy(struct halo_policy *dst, const struct halo_policy *src);

/* managed.c / layer.c: does the managed layer `m` (as written) set `field` (the
 * name layer.c reports a loosening under)? Unknown fields count as set. */
bool policy_managed_sets(const struct halo_policy *m, const char *field);
/* policy_layer, where each loosening of a field `managed` sets is an error (and
 * -EPERM) and the others are not said. */
int policy_layer_managed(struct halo_policy *base, const struct halo_policy *upper,
			 const char *upper_name, const struct halo_policy *managed,
			 const char *managed_name, struct policy_diags *d);

/* load.c: policy_load with one-off flags (NULL: none) layered last. */
int policy_load_oneoff(const char *const *paths, size_t n, const struct policy_ctx *ctx,
		       const struct policy_oneoff *oneoff, struct halo_policy **out,
		       struct policy_diags *d);
/* oneoff.c: anything to layer? The layer itself over `base` (before finalize). */
bool policy_oneoff_any(const struct policy_oneoff *o);
int policy_layer_oneoff(struct halo_policy *base, const struct policy_oneoff *o,
			struct policy_diags *d);

/* policy_parse_file, but a file whose fields have errors still yields what was read
 * (*out set, the bad fields unset) while failing: the loaders layer and validate it
 * for its diagnostics, so that one run reports every error (load.c). */
int policy_parse_file_partial(const char *path, struct halo_policy **out, struct policy_diags *d);

#endif
