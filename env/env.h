/* env/ — the command's environment: the caller's environment cleared to an
 * allowlist, plus env.pass and env.set, plus HALO_SANDBOX=1 and TMPDIR. */
#ifndef HALO_RUNNER_ENV_H
#define HALO_RUNNER_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"

/* Build a NULL-terminated environment from `caller` (an environ-style array).
 * `tmpdir` becomes TMPDIR. Returns a heap array of heap strings (free with
 * runner_env_free) or NULL with the reason in e. */
char **runner_env_build(const struct halo_policy *p, char *const *caller, const char *tmpdir,
			struct halo_err *e);
void runner_env_free(char **env);

/* The same, plus (when `proxy`) the variables that point common tools at the
 * sandbox's proxy: *_PROXY in both cases, NO_PROXY for loopback, npm, Yarn, cargo,
 * Node and the JVM's own settings. They override anything passed or set. */
char **runner_env_build_proxied(const struct halo_policy *p, char *const *caller,
				const char *tmpdir, bool proxy, struct halo_err *e);

/* The same proxy variables pointing at `http_url` (and ALL_PROXY at `socks_url`, or
 * at http_url when NULL): the macOS launcher's proxy, on an ephemeral port, with the
 * run's secret as the URL's password ("http://halo:SECRET@127.0.0.1:PORT"). */
char **runner_env_build_proxy_url(const struct halo_policy *p, char *const *caller,
				  const char *tmpdir, const char *http_url, const char *socks_url,
				  struct halo_err *e);

/* Everything the builder takes. In rising precedence: the allowlist and the registry
 * settings (userinfo cut, a warning each), `vars` (what halo-run sets: tool caches),
 * env.pass, env.set, the proxy variables (when `proxy`; pointing at http_url when
 * given), TMPDIR and HALO_SANDBOX=1. */
struct runner_env_in {
	const struct halo_policy *policy;
	char *const *caller;
	const char *tmpdir;
	bool proxy;
	const char *http_url, *socks_url;
	const struct policy_kv *vars;
	size_t n_vars;
	struct policy_diags *warnings; /* may be NULL */
	/* Appended to the JVM's JAVA_TOOL_OPTIONS (with the proxy): the run's trust store
	 * when some host's TLS is terminated (runner/tls_setup.c). NULL: nothing. */
	const char *java_extra;
};
char **runner_env_build_in(const struct runner_env_in *in, struct halo_err *e);

/* Cut the userinfo (everything between "://" and the last '@' of the URL's authority,
 * which ends at the first '/', '?', '#' or '\\') out of every URL in v, in place; true
 * when something was cut. */
bool runner_env_strip_userinfo(char *v);
/* True when some URL in v has an authority parsers may read differently: a port that
 * is not digits, an '@' past the authority followed by something host-like (or after
 * an authority that reads as no host), or a "://" not after a list separator. "/@scope"
 * and "feed@Local" are not. Such a value is not passed: no cut could be sure to keep
 * its host. */
bool runner_env_url_ambiguous(const char *v);
/* Cut the query and fragment of every URL in v; true when something was cut. */
bool runner_env_strip_query(char *v);
/* Cut the known path-token segments (Gemfury, Cloudsmith) of every URL in v. */
bool runner_env_strip_path_tokens(char *v);
/* Keep in v (space-separated GOFLAGS) only the allowed build-setting flags; `drop` is
 * called with a printable label ("-toolexec", or "a flag") for each flag removed.
 * Returns the number removed. */
int runner_env_filter_goflags(char *v, void (*drop)(void *arg, const char *label), void *arg);

/* The names kept from the caller's environment by default (NULL-terminated), unless
 * the value looks like a token (policy_secret_like; a warning names the variable). */
extern const char *const runner_env_allowlist[];
/* Registry settings kept with their URLs' credentials removed. */
extern const char *const runner_env_registry[];

#endif
