/* `halo-run check https://host/path [-X METHOD]`: after the host's decision, what the
 * proxy does with requests to it — terminated TLS, the credential header it sets
 * (never its value), and the request decision of egress.requestRules, from the same
 * policy_decide_request() the proxy calls. */
#include <stdio.h>
#include <string.h>

#include "runner/runner_int.h"

/* The request-target of a URL: what follows the authority ("/" when nothing does). */
static const char *url_path(const char *target)
{
	const char *s = strstr(target, "://"), *p;

	if (!s)
		return NULL;
	p = s + 3 + strcspn(s + 3, "/?#");
	return *p == '/' ? p : *p ? NULL : "/";
}

bool runner_check_request(const struct runner_opts *o, const struct halo_policy *p,
			  const char *host, const char *target, bool allow)
{
	const char *path = url_path(target), *method = o->method ? o->method : "GET";
	const struct policy_credential *cred;
	struct policy_request_decision rd;
	size_t ci = 0;

	if (!allow)
		return false;
	if (!policy_tls_terminated(p, host)) {
		if (o->method)
			printf("request: %s %s: no requestRules for %s (any request)\n", method,
			       path ? path : "/", host);
		return true;
	}
	cred = policy_credential_for(p, host, &ci);
	printf("tls: terminated by the proxy (HTTP/1.1)\n");
	if (cred)
		printf("credential: egress.credentials[%zu] sets %s (value never shown)\n", ci,
		       cred->header);
	if (!path) {
		if (o->method)
			printf("request: give a URL (https://%s/PATH) to judge a request\n", host);
		return true;
	}
	policy_decide_request(p, host, method, path, &rd);
	if (!rd.applies)
		return true;
	printf("request: %s %s %s\nrule: %s\n", rd.allow ? "allow" : "deny", method, path, rd.rule);
	return rd.allow;
}
