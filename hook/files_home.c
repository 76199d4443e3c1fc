/* The homes' persistence sets in the hook's judgment of a write (hook/files.c): as
 * the sandbox keeps them (linux/scan_home.c), by name, by where an entry, an XDG
 * directory or a PATH entry that is a link leads, the XDG directories as named and
 * as they resolve. */
#include <stdio.h>
#include <string.h>

#include "hook/hook_int.h"

#define PATH_MAX_ 4096 /* POLICY_PATH_MAX */

/* A writable root that is a home or holds it: the home's persistence set stays
 * read-only, as the sandbox keeps it (policy_home_set_hit, the one list). */
static const char *home_hit_xdg(const struct hook_ctx *c, const char *abs, const char *root,
				const char **entry, const struct policy_xdg *xdgp);

/* abs named below the k-th link's name when it lies at or below where that leads, or
 * NULL. Kept until the next call: the message names the entry by a pointer into it. */
static const char *link_named(const struct hook_ctx *c, size_t k, const char *abs)
{
	static __thread char named[PATH_MAX_ * 2 + 2];

	if (!policy_path_beneath(abs, c->home_real[k]) ||
	    snprintf(named, sizeof(named), "%s%s", c->home_of[k], abs + strlen(c->home_real[k])) >=
		(int)sizeof(named))
		return NULL;
	return named;
}

const char *hook_home_hit(const struct hook_ctx *c, const char *abs, const char *root,
			  const char **entry)
{
	const struct policy_xdg named = {c->xdg_config,	     c->xdg_data,
					 c->xdg_config_dirs, c->xdg_data_dirs,
					 c->zdotdir,	     policy_caches_host(c->policy)};
	const struct policy_xdg real = {.config =
					    c->xdg_config_real ? c->xdg_config_real : c->xdg_config,
					.data = c->xdg_data_real ? c->xdg_data_real : c->xdg_data,
					.config_dirs = c->xdg_config_dirs_real,
					.data_dirs = c->xdg_data_dirs_real,
					.zdotdir = c->zdotdir_real ? c->zdotdir_real : c->zdotdir,
					.host_caches = policy_caches_host(c->policy)};
	const bool other = c->xdg_config_real || c->xdg_data_real || c->xdg_config_dirs_real ||
			   c->xdg_data_dirs_real || c->zdotdir_real;
	const char *why;

	if (c->policy->guard_persistence == 0)
		return NULL;
	const char *homes[] = {c->home, c->env_home, c->home_resolved, c->env_home_resolved};

	if ((why = home_hit_xdg(c, abs, root, entry, &named)) ||
	    (other && (why = home_hit_xdg(c, abs, root, entry, &real))))
		return why;
	/* an XDG directory beneath no home: its entries wherever it is (named absolute) */
	if ((why = policy_home_set_hit_xdg_outside(homes, 4, &named, abs)) ||
	    (other && (why = policy_home_set_hit_xdg_outside(homes, 4, &real, abs)))) {
		*entry = abs;
		return why;
	}
	/* ... and by its name through an entry of one that is a symlink (review 16:
	 * $ZDOTDIR/.zlogin -> a workspace file was refused inside, allowed here) */
	for (size_t k = 0; k < c->n_home_real; k++) {
		const char *n = link_named(c, k, abs);
		if (n && ((why = policy_home_set_hit_xdg_outside(homes, 4, &named, n)) ||
			  (why = policy_home_set_hit_xdg_outside(homes, 4, &real, n)))) {
			*entry = c->home_of[k];
			return why;
		}
	}
	/* where a PATH entry leads into a home by a link or a ".." */
	for (size_t k = 0; k < c->n_path_real; k++)
		if (policy_path_beneath(abs, c->path_real[k])) {
			*entry = c->path_rel[k];
			return c->path_why ? c->path_why[k]
					   : "a directory on the caller's PATH leads there";
		}
	return NULL;
}

/* The homes' sets with the XDG directories as xdg gives them. */
static const char *home_hit_xdg(const struct hook_ctx *c, const char *abs, const char *root,
				const char **entry, const struct policy_xdg *xdgp)
{
	const char *homes[] = {c->home, c->env_home, c->home_resolved, c->env_home_resolved};
	const struct policy_xdg xdg = *xdgp;

	for (size_t i = 0; i < 4; i++) {
		const char *why;
		/* The root holds the home, or lies in it (writableRoots: [~/.cargo]): the
		 * sandbox keeps the set read-only wherever it lands in a writable tree
		 * (review 9: ~/.cargo/config.toml in such a root was refused inside and
		 * allowed here). */
		if ((policy_home_in_tree(homes[i], root) ||
		     (homes[i] && homes[i][0] == '/' && policy_path_beneath(root, homes[i]))) &&
		    (why = policy_home_set_hit_xdg(homes[i], c->path_env, &xdg, abs, entry)))
			return why;
		/* by its name through an entry (or an XDG directory) that is a symlink:
		 * what lies at or below where it leads, named below it */
		for (size_t k = 0; k < c->n_home_real; k++) {
			const char *named = link_named(c, k, abs);
			if (!named)
				continue;
			if ((why = policy_home_set_hit_xdg(homes[i], c->path_env, &xdg, named,
							   entry)) ||
			    (why = policy_home_set_hit_xdg(homes[i], c->path_env, &xdg,
							   c->home_of[k], entry)))
				return why;
		}
	}
	return NULL;
}
