/* The check of a git config written inside the sandbox (gitconf.c). Pure. */
#ifndef HALO_LINUX_GITCONF_H
#define HALO_LINUX_GITCONF_H

#include <stdbool.h>
#include <stddef.h>

/* Is every key of this git config one that names no program and includes no file?
 * 0; -EACCES (a key refused) or -EINVAL (not readable as git reads it), the reason in
 * why. */
int linux_gitconf_check(const char *buf, size_t n, char *why, size_t whylen);

/* The same, with keys that are allowed for some values only (core.worktree) judged by
 * value_ok (the value decoded as git reads it); without one they are refused. */
typedef bool (*linux_gitconf_value_fn)(void *ctx, const char *section, const char *key,
				       const char *value);
int linux_gitconf_check_values(const char *buf, size_t n, char *why, size_t whylen,
			       linux_gitconf_value_fn value_ok, void *ctx);

/* A change to a config that existed before the launch (a repository the command did
 * not make): every key may be kept as it was, and only allowed keys (or valued ones
 * value_ok accepts) may be added, changed or removed. The refused keys of both, in
 * order, with their subsections and values, must be the same. 0, -EACCES (why names
 * the first difference), -EINVAL (buf not readable as git reads it), -ENOMEM. */
int linux_gitconf_check_change(const char *old, size_t on, const char *buf, size_t n, char *why,
			       size_t whylen, linux_gitconf_value_fn value_ok, void *ctx);

/* Held mode's record (gitconf.c): the refused keys of one config, in order. */
struct gitconf_held {
	char *buf;
	size_t len, cap;
};

/* One key: section and key lower case; has_sub: it has a subsection. Allowed whatever
 * its value; or (valued) allowed for the values the caller accepts. */
bool linux_gitconf_key_allowed(const char *section, bool has_sub, const char *key);
bool linux_gitconf_key_valued(const char *section, bool has_sub, const char *key);

#endif
