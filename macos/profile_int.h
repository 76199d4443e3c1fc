/* Internal to the profile generator: profile.c (collection, basics, writes, network,
 * protected paths) and profile_deny.c (the always-denied section: container
 * runtimes, session services, persistence targets). */
#ifndef HALO_MACOS_PROFILE_INT_H
#define HALO_MACOS_PROFILE_INT_H

#include "macos/macos_int.h"

struct strs {
	char **v;
	size_t n;
};

struct pctx {
	const struct macos_profile_in *in;
	const struct halo_plan *plan; /* the filesystem rules, in parameter order */
	struct sbpl b;
	struct strs trees;     /* writable trees, every spelling */
	struct strs tree_keys; /* their parameters, same order */
	struct strs prot;      /* protected absolute paths, every spelling */
	struct strs prot_keys;
	struct strs ancestors;	   /* of protected paths, inside writable trees */
	struct strs regexes;	   /* glob sources: the protected name patterns */
	struct strs allow_keys;	   /* sandbox.allowRead carve-outs, every spelling */
	struct strs halo_keys;	   /* halo-run's own files: literal */
	struct strs halo_dir_keys; /* halo-run's config directories: subpath */
	struct strs socket_keys;   /* sandbox.unixSockets */
	struct strs tty_keys;	   /* the caller's own terminals */
};

void pctx_strs_add(struct pctx *c, struct strs *s, const char *v);
void pctx_strs_free(struct strs *s);
/* Define a parameter for every spelling of `path`; keys (and spellings) appended. */
void pctx_spell(struct pctx *c, const char *prefix, const char *path, const char *what,
		struct strs *keys, struct strs *paths);
/* pw_home/rel into out, or the builder fails. */
void pctx_home_path(struct pctx *c, const char *rel, char *out, size_t n);

/* Persistence targets matched as path components, and git's hooks and config. */
/* The i-th git guard regex (policy_git_guards), lower case: 0, or -ENOENT past the
 * last. */
int macos_guard_git_regex(size_t i, char *out, size_t n);

/* profile_deny.c: section 5. */
void profile_runtimes(struct pctx *c);
void profile_denied_services(struct pctx *c);
void profile_other_ttys(struct pctx *c);
void profile_persistence(struct pctx *c, bool guard);

#endif
