/* halo-run's own files and places, judged as every launch keeps them: the policy files
 * it runs under (and halo-run itself) read-only wherever they lie, its state (the
 * index key in /tmp, the indexes, the session directory) out of every sandbox's sight,
 * and every other workspace's caches hidden. The harness's tools run on the host,
 * where /tmp and the home are the real ones: an agent that rewrote its policy file, the
 * index key or another workspace's cache would reach what no command inside can. The
 * facts come in through hook_ctx (runner/hook_own.c), from the launch's functions. */
#include <string.h>

#include "hook/hook_int.h"

static const char *beneath_pair(const char *abs, const char *const pair[2])
{
	for (int k = 0; k < 2; k++)
		if (pair[k] && policy_path_beneath(abs, pair[k]))
			return pair[k];
	return NULL;
}

const char *hook_own_cache(const struct hook_ctx *c, const char *abs)
{
	return beneath_pair(abs, c->cache_own);
}

bool hook_own_hit(const struct hook_ctx *c, struct hook_judge *j, const char *tool,
		  const char *path, const char *abs, bool write)
{
	const char *all;

	for (size_t i = 0; i < c->n_own_hidden; i++)
		if (policy_path_beneath(abs, c->own_hidden[i]))
			return hook_block(j, HOOK_BLOCK,
					  "%s %s: %s is halo-run's own state (%s): no sandbox "
					  "sees it, and an agent's tools may neither read nor "
					  "write it",
					  tool, path, c->own_hidden[i], c->own_hidden_why[i]);
	if ((all = beneath_pair(abs, c->cache_all)) && !hook_own_cache(c, abs))
		return hook_block(j, HOOK_BLOCK,
				  "%s %s: %s holds every workspace's tool caches, and the sandbox "
				  "hides all but this workspace's own (sandbox.caches: isolated; "
				  "caches carry code)",
				  tool, path, all);
	for (size_t i = 0; write && i < c->n_own_readonly; i++)
		if (policy_path_beneath(abs, c->own_readonly[i]))
			return hook_block(j, HOOK_BLOCK,
					  "%s %s: %s is %s, which the sandbox keeps read-only "
					  "(a command must not widen its own sandbox)",
					  tool, path, c->own_readonly[i], c->own_readonly_what[i]);
	return false;
}
