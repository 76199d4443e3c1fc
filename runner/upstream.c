/* egress.upstreamProxy at launch: the caller's proxy variables read once (for `env`)
 * and the credentials from $HALO_UPSTREAM_PROXY_AUTH or the caller's URL. The
 * variables never enter the sandbox: runner/env.c rewrites every proxy variable to
 * halo-run's own proxy and never passes HALO_UPSTREAM_PROXY_AUTH. */
#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>

#include "runner/runner_int.h"

static struct policy_upstream settled;

/* The upstream as a target: a tunnel to it is a proxy that reaches every host the
 * company's proxy does, none of them decided here (and its NO_PROXY often names its
 * own domain, so halo-run would dial it directly). Allowed, the launch is refused. */
static int upstream_allowed(const struct halo_policy *p, const struct policy_upstream *u)
{
	struct policy_decision d;
	char rule[192];
	int fam = u->host.kind == POLICY_HOST_IPV4 ? AF_INET : AF_INET6;

	/* egress.hostPorts forwards the host's loopback port inside: the same way through. */
	for (size_t i = 0; u->host.kind != POLICY_HOST_NAME && i < p->host_ports.n; i++)
		if (p->host_ports.items[i] == u->port &&
		    policy_addr_classify(fam, u->host.addr) == POLICY_ADDR_LOOPBACK) {
			fprintf(
			    stderr,
			    "halo-run: egress.hostPorts[%zu] %u is egress.upstreamProxy's port on "
			    "the host's loopback: through it the command would reach every host "
			    "the upstream serves, unchecked; leave it out of hostPorts\n",
			    i, u->port);
			return -EPERM;
		}

	if (policy_decide_port(p, u->host.text, strlen(u->host.text), u->port, &d) != 0 || !d.allow)
		return 0;
	/* An address the proxy refuses anyway (a cntlm on the host's loopback, a private
	 * address allowPrivate does not cover) is no way through. A name is judged
	 * without resolving it: refused. */
	if (u->host.kind != POLICY_HOST_NAME && !policy_addr_permitted(p, fam, u->host.addr, NULL))
		return 0;
	policy_decision_rule(&d, rule, sizeof(rule));
	fprintf(stderr,
		"halo-run: egress.upstreamProxy %s%s%s:%u is itself allowed (%s): through a "
		"tunnel to it the command would reach every host it serves, unchecked; deny it "
		"in deniedDomains or narrow the rule\n",
		u->host.kind == POLICY_HOST_IPV6 ? "[" : "", u->host.text,
		u->host.kind == POLICY_HOST_IPV6 ? "]" : "", u->port, rule);
	return -EPERM;
}

int runner_upstream_settle(const struct halo_policy *p, struct policy_upstream *out)
{
	struct policy_upstream_env env = {
	    .https_proxy = getenv("https_proxy"),
	    .HTTPS_PROXY = getenv("HTTPS_PROXY"),
	    .http_proxy = getenv("http_proxy"),
	    .HTTP_PROXY = getenv("HTTP_PROXY"),
	    .no_proxy = getenv("no_proxy"),
	    .NO_PROXY = getenv("NO_PROXY"),
	    .auth = getenv(POLICY_UPSTREAM_AUTH_ENV),
	};
	char why[400];

	if (policy_upstream_resolve(p, &env, out, why, sizeof(why)) < 0) {
		fprintf(stderr, "halo-run: %s\n", why);
		return HALO_EXIT_SETUP;
	}
	if (out->on && upstream_allowed(p, out) < 0)
		return HALO_EXIT_SETUP;
	settled = *out;
	return 0;
}

const struct policy_upstream *runner_upstream(void)
{
	return settled.on ? &settled : NULL;
}

void runner_upstream_describe(const struct halo_policy *p, const struct policy_upstream *u,
			      char *buf, size_t n)
{
	bool v6 = u->host.kind == POLICY_HOST_IPV6;

	if (!p->upstream_proxy || p->mode == POLICY_MODE_OFF) {
		snprintf(buf, n, "direct (no egress.upstreamProxy)");
		return;
	}
	if (!u->on) {
		snprintf(buf, n,
			 "direct (egress.upstreamProxy: env, and the caller sets no "
			 "https_proxy, HTTPS_PROXY, http_proxy or HTTP_PROXY)");
		return;
	}
	snprintf(buf, n, "http://%s%s%s:%u (from %s; credentials: %s%s%s)", v6 ? "[" : "",
		 u->host.text, v6 ? "]" : "", u->port, u->from,
		 u->auth_from ? u->auth_from : "none", u->no_proxy[0] ? "; NO_PROXY: " : "",
		 u->no_proxy);
}
