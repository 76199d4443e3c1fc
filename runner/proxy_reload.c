/* What `halo-run proxy` accepts of a policy, at start and at SIGHUP. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runner/proxy_int.h"

int runner_proxy_policy_fits(const struct halo_policy *p, bool say, struct halo_err *e)
{
	/* hostPorts forwards a sandbox's loopback ports to the host's: there is no
	 * sandbox here, and serving the host's loopback to whoever reaches the proxy
	 * would open it to them. Refused rather than silently dropped. */
	if (p->host_ports.n)
		return halo_err_set(e, "egress.hostPorts is not applicable to `halo-run proxy` (it "
				       "forwards a sandbox's loopback ports; there is no sandbox "
				       "here): remove it from the policy given to the proxy"),
		       -EINVAL;
	if (say && (p->writable_roots.n || p->protected_paths.n || p->allow_read.n ||
		    p->unix_sockets.n || p->mode == POLICY_MODE_OFF))
		fprintf(stderr, "halo-run proxy: note: the policy's sandbox settings do not apply "
				"here (no sandbox); its egress rules do\n");
	return 0;
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool same_list(const struct policy_list *a, const struct policy_list *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (!same_str(a->items[i], b->items[i]))
			return false;
	return true;
}

static bool same_creds(const struct halo_policy *a, const struct halo_policy *b)
{
	if (a->n_creds != b->n_creds)
		return false;
	for (size_t i = 0; i < a->n_creds; i++)
		if (!same_str(a->creds[i].host, b->creds[i].host) ||
		    !same_str(a->creds[i].header, b->creds[i].header) ||
		    !same_str(a->creds[i].value, b->creds[i].value))
			return false;
	return true;
}

int runner_proxy_policy_swappable(const struct halo_policy *cur, const struct halo_policy *next,
				  bool have_tls, struct halo_err *e)
{
	const char *what = NULL;

	if (!same_creds(cur, next))
		what = "egress.credentials";
	else if (!same_list(&cur->trusted_cas, &next->trusted_cas))
		what = "egress.trustedCAs";
	else if (!same_str(cur->upstream_proxy, next->upstream_proxy))
		what = "egress.upstreamProxy";
	else if (!have_tls && policy_tls_wanted(next))
		what = "egress.requestRules (TLS termination needs the CA made at start)";
	if (!what)
		return 0;
	halo_err_set(e, "%s changed; it is set up once at start: restart the proxy to apply it",
		     what);
	return -EINVAL;
}
