/* The macOS half of `halo-run -- CMD` (also the portable build's): the launcher needs
 * halo-run's own path (sandbox-exec runs it as the trampoline) and a way to build the
 * command's environment once the proxy's port and secret exist. */
#include <stdio.h>
#include <string.h>

#include "env/caches.h"
#include "env/env.h"
#include "runner/runner_int.h"

#ifdef RUNNER_MACOS
extern char **environ;

/* Tool caches on macOS are per-run, in the run's own TMPDIR (made 0700 and removed at
 * the end): the profile allows writes there, and no host tool reads it. Kept caches,
 * as on Linux, need a writable path in the profile: not yet. */
/* What the builder needs from the run: the policy, and whether to keep quiet. */
static struct env_arg {
	const struct halo_policy *policy;
	bool quiet;
} env_arg;

static char **build_env(void *arg, const char *proxy_url, const char *tmpdir, struct halo_err *e)
{
	const struct env_arg *a = arg;
	const struct halo_policy *p = a->policy;
	struct policy_diags d = {0};
	struct runner_caches c;
	char root[1024];
	char **env;
	/* One HTTP listener: ALL_PROXY points at it too (SOCKS5 cannot carry the secret). */
	struct runner_env_in in = {.policy = p,
				   .caller = environ,
				   .tmpdir = tmpdir,
				   .proxy = proxy_url != NULL,
				   .http_url = proxy_url,
				   .warnings = &d};

	memset(&c, 0, sizeof(c));
	if (p && p->mode != POLICY_MODE_OFF &&
	    (p->caches == POLICY_CACHES_UNSET || p->caches == POLICY_CACHES_ISOLATED) && tmpdir &&
	    snprintf(root, sizeof(root), "%s/halo-cache", tmpdir) < (int)sizeof(root) &&
	    runner_caches_vars(&c, root) == 0) {
		/* pnpm's store: Linux names it in a pnpm rc on the sandbox's /run, which
		 * macOS has not; here the variable npm 11 warns about is still the way. */
		if (asprintf(&c.vars[c.n_vars].value, "%s/pnpm-store", root) >= 0)
			c.vars[c.n_vars++].key = "npm_config_store_dir";
		in.vars = c.vars;
		in.n_vars = c.n_vars;
	}
	env = runner_env_build_in(&in, e);
	runner_caches_release(&c);
	/* What the environment left out or cut (a token-shaped value, a URL's userinfo),
	 * named as on Linux. */
	for (size_t i = 0; !a->quiet && i < d.n_warnings; i++)
		fprintf(stderr, "halo-run: warning: %s\n", d.warnings[i]);
	policy_diags_free(&d);
	return env;
}

int runner_macos_launch_fill(runner_launch *l, char *self, size_t self_len)
{
	if (macos_self_exe(self, self_len) < 0)
		self[0] = '\0'; /* the launcher refuses to start without it */
	l->self_exe = self;
	l->build_env = build_env;
	env_arg = (struct env_arg){l->policy, l->quiet};
	l->build_env_arg = &env_arg;
	return 0;
}
#endif
