/* `halo-run hook`'s facts of halo-run's own files and places (hook.h: own_*, cache_*),
 * taken from the functions a launch from the same workspace uses, so that the hook and
 * the sandbox keep one list: the policy files the launch runs under
 * (runner_policy_layers: linux/scan.c keeps them read-only) and halo-run itself; the
 * index key's directory and the index places (linux_own_places: masked or out of every
 * sandbox's sight); the session directory (hidden by every launch); and the tool
 * caches (runner_caches_plan, a dry run: nothing is made). Each as named (made
 * absolute, cleaned) and where it leads. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "env/caches.h"
#include "hook/hook.h"
#include "runner/runner_int.h"

/* name, and where it leads when that differs, onto v (cap entries). -ENOMEM or 0. */
static int add(char **v, const char **what, size_t *n, size_t cap, const char *name,
	       const char *why)
{
	char abs[PATH_MAX], real[PATH_MAX];
	char *cwd = name[0] == '/' ? NULL : getcwd(NULL, 0);
	const char *how;
	int rc = 0;

	if (name[0] != '/' && !cwd)
		return 0;
	char joined[PATH_MAX];
	int bad = policy_path_absolute(name, cwd, NULL, joined, sizeof(joined)) < 0 ||
		  policy_path_normalise(joined, true, abs, sizeof(abs), &how) < 0;
	free(cwd);
	if (bad)
		return 0;
	const char *forms[] = {abs, runner_hook_resolve(abs, real, sizeof(real)) == 0 &&
					    strcmp(real, abs) != 0
					? real
					: NULL};
	for (int k = 0; k < 2 && rc == 0 && *n < cap; k++) {
		if (!forms[k])
			continue;
		if (!(v[*n] = strdup(forms[k])))
			rc = -ENOMEM;
		else
			what[(*n)++] = why;
	}
	return rc;
}

#ifndef RUNNER_MACOS
/* The caches: where a launch from the workspace keeps this workspace's (bound
 * writable) and the directory holding every workspace's (hidden but for that one). */
static int caches(struct hook_ctx *c, struct runner_hook_own *own, const struct runner_env *re)
{
	struct runner_caches_in in = {.policy = re->policy,
				      .home = re->env_home ? re->env_home : re->pw_home,
				      .xdg_cache_home = getenv("XDG_CACHE_HOME"),
				      .workspace = re->workspace,
				      .dry_run = true};
	struct runner_caches plan;
	char real[PATH_MAX];
	int rc = 0;

	if (!re->workspace[0])
		return 0;
	if (runner_caches_plan(&in, &plan) < 0) {
		runner_caches_release(&plan);
		return -ENOMEM;
	}
	const char *forms[] = {
	    plan.root, runner_hook_resolve(plan.root, real, sizeof(real)) == 0 ? real : NULL};
	for (int k = 0; plan.root[0] && !plan.per_run && k < 2 && rc == 0; k++) {
		char *sl = forms[k] ? strrchr(forms[k], '/') : NULL;
		if (!sl || sl == forms[k])
			continue;
		if (!(own->cache[k] = strdup(forms[k])) ||
		    !(own->cache[2 + k] = strndup(forms[k], (size_t)(sl - forms[k]))))
			rc = -ENOMEM;
		c->cache_all[k] = own->cache[2 + k];
		/* A workspace the launcher refuses (/, /etc...) gets no caches of its own. */
		if (!policy_workspace_refused(re->workspace))
			c->cache_own[k] = own->cache[k];
	}
	runner_caches_release(&plan);
	return rc;
}
#endif

int runner_hook_own_ctx(struct hook_ctx *c, struct runner_hook_own *own,
			const struct runner_env *re)
{
	static const char policy_file[] = "a policy file halo-run runs under";
	const char *layers[RUNNER_MAX_POLICIES + 1];
	size_t n = runner_policy_layers(re, layers);
	char self[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int rc = 0;

	memset(own, 0, sizeof(*own));
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = add(own->ro, own->ro_what, &own->n_ro, RUNNER_HOOK_OWN_RO, layers[i],
			 policy_file);
	if (rc == 0 && k > 0 && (self[k] = '\0', true))
		rc = add(own->ro, own->ro_what, &own->n_ro, RUNNER_HOOK_OWN_RO, self,
			 "halo-run itself");
#ifndef RUNNER_MACOS
	char places[LINUX_OWN_PLACES][PATH_MAX], sess[PATH_MAX];
	const char *why[LINUX_OWN_PLACES];
	size_t np = linux_own_places(re->pw_home, re->env_home, places, why);
	for (size_t i = 0; i < np && rc == 0; i++)
		rc = add(own->hidden, own->hidden_why, &own->n_hidden, RUNNER_HOOK_OWN_HIDDEN,
			 places[i], why[i]);
	if (rc == 0 && runner_session_place_name(sess, sizeof(sess)) == 0)
		rc = add(own->hidden, own->hidden_why, &own->n_hidden, RUNNER_HOOK_OWN_HIDDEN, sess,
			 "the session directory");
	if (rc == 0)
		rc = caches(c, own, re);
#endif
	c->own_readonly = (const char *const *)own->ro;
	c->own_readonly_what = own->ro_what;
	c->n_own_readonly = own->n_ro;
	c->own_hidden = (const char *const *)own->hidden;
	c->own_hidden_why = own->hidden_why;
	c->n_own_hidden = own->n_hidden;
	return rc;
}

void runner_hook_own_free(struct runner_hook_own *own)
{
	for (size_t i = 0; i < own->n_ro; i++)
		free(own->ro[i]);
	for (size_t i = 0; i < own->n_hidden; i++)
		free(own->hidden[i]);
	for (size_t i = 0; i < 4; i++)
		free(own->cache[i]);
	memset(own, 0, sizeof(*own));
}
