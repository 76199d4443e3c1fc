/* Internal to `halo-run proxy` (proxy_cmd.c, proxy_opts.c, proxy_reload.c). */
#ifndef HALO_RUNNER_PROXY_INT_H
#define HALO_RUNNER_PROXY_INT_H

#include "runner/proxy_cmd.h"
#include "runner/runner_int.h"

struct proxy_cmd_opts {
	struct runner_opts ro; /* policies, audit, events, decider, quiet, verbose */
	const char *listen[RUNNER_PROXY_MAX_LISTEN];
	bool listen_socks[RUNNER_PROXY_MAX_LISTEN];
	size_t n_listen;
	const char *token_file, *token_env, *ca_cert;
	bool allow_remote;
	unsigned drain_ms;
};

/* 0, -1 after --help (exit 0), or HALO_EXIT_SETUP after saying what is wrong. */
int runner_proxy_parse(int argc, char **argv, struct proxy_cmd_opts *p);
void runner_proxy_usage(FILE *out);

/* proxy_reload.c: can this policy be served by `halo-run proxy`? 0, or -EINVAL with e
 * naming the key (egress.hostPorts). Says once on stderr what does not apply. */
int runner_proxy_policy_fits(const struct halo_policy *p, bool say, struct halo_err *e);
/* Can `next` replace `cur` on a running proxy? What is fixed at start (the TLS set-up:
 * credentials, trustedCAs, the CA; egress.upstreamProxy) must be the same. */
int runner_proxy_policy_swappable(const struct halo_policy *cur, const struct halo_policy *next,
				  bool have_tls, struct halo_err *e);

#endif
