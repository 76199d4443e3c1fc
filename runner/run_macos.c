/* The macOS half of `halo-run -- CMD` (also the portable build's): the launcher needs
 * halo-run's own path (sandbox-exec runs it as the trampoline) and a way to build the
 * command's environment once the proxy's port and secret exist. */
#include <stdio.h>
#include <string.h>

#include "runner/env.h"
#include "runner/runner_int.h"

#ifdef RUNNER_MACOS
extern char **environ;

static char **build_env(void *arg, const char *proxy_url, const char *tmpdir, struct halo_err *e)
{
	const struct halo_policy *p = arg;

	if (!proxy_url)
		return runner_env_build(p, environ, tmpdir, e);
	/* One HTTP listener: ALL_PROXY points at it too (SOCKS5 cannot carry the secret). */
	return runner_env_build_proxy_url(p, environ, tmpdir, proxy_url, NULL, e);
}

int runner_macos_launch_fill(runner_launch *l, char *self, size_t self_len)
{
	if (macos_self_exe(self, self_len) < 0)
		self[0] = '\0'; /* the launcher refuses to start without it */
	l->self_exe = self;
	l->build_env = build_env;
	l->build_env_arg = (void *)l->policy;
	return 0;
}
#endif
