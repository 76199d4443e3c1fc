/* The policy subcommands: check, validate, policy. None of them sends network traffic,
 * but for the name lookup of `check --resolve` (the host's resolver, as the proxy's). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "proxy/proxy.h"
#include "runner/runner_int.h"

static void print_address_class(const struct policy_host *h)
{
	int family = h->kind == POLICY_HOST_IPV4 ? AF_INET : AF_INET6;
	enum policy_addr_class c = policy_addr_classify(family, h->addr);

	printf("address class: %s%s\n", policy_addr_class_name(c),
	       c == POLICY_ADDR_PUBLIC
		   ? ""
		   : " (refused by the proxy unless egress.allowPrivate covers it)");
}

/* check --resolve: the name looked up and every answer judged as the proxy would (it
 * refuses a name when any answer is refused). True when the proxy would connect. */
static bool print_resolution(const struct halo_policy *p, const struct policy_decision *d)
{
	struct proxy_resolved r[PROXY_RESOLVE_MAX_ANSWERS];
	size_t n = 0;
	bool ok = true;
	int rc;

	if (!d->allow) {
		printf("resolve: not looked up (the proxy never resolves a denied name)\n");
		return false;
	}
	rc = proxy_resolve_check(p, d->host.text, r, PROXY_RESOLVE_MAX_ANSWERS, &n);
	if (rc < 0) {
		printf("resolve: %s %s: the proxy would answer 502\n", d->host.text,
		       rc == -ENOENT   ? "does not resolve"
		       : rc == -EAGAIN ? "could not be looked up now (temporary failure)"
				       : "could not be looked up");
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		printf("address %s: %s%s%s\n", r[i].text,
		       r[i].ok ? "ok" : "refused: ", r[i].ok ? "" : r[i].cls,
		       r[i].ok ? "" : ", not in egress.allowPrivate");
		ok &= r[i].ok;
	}
	printf("resolved: %s (%s)\n", ok ? "allow" : "deny",
	       ok ? "every address passes the address rule"
		  : "the proxy refuses a name when any of its addresses is refused");
	return ok;
}

/* egress.upstreamProxy: how the proxy would reach an allowed host, from this caller's
 * environment (`env`) and NO_PROXY. */
static void print_route(const struct halo_policy *p, const struct policy_host *h, unsigned port)
{
	struct policy_upstream u;
	char text[POLICY_NO_PROXY_MAX + 400];

	if (runner_upstream_settle(p, &u) != 0) {
		printf("route: the launch would refuse this egress.upstreamProxy (see above)\n");
		return;
	}
	runner_upstream_describe(p, &u, text, sizeof(text));
	if (u.on && policy_upstream_bypass(&u, h, port))
		printf("route: direct (the caller's NO_PROXY names it; upstream %s)\n", text);
	else
		printf("route: %s%s\n", u.on ? "through the upstream proxy " : "", text);
	memset(&u, 0, sizeof(u));
}

int runner_cmd_check(const struct runner_opts *o)
{
	struct runner_env re;
	struct policy_decision d;
	struct policy_host h;
	unsigned port = 0;
	char why[160], rule[512];
	int rc;

	if (o->n_rest != 1) {
		fprintf(stderr,
			"halo-run: check takes one TARGET (host, host:port, [v6]:port or URL)\n");
		return HALO_EXIT_SETUP;
	}
	if (o->harness && !runner_harness_known(o->harness)) {
		char names[256];
		policy_harness_names(POLICY_HARNESS_RENDER, names, sizeof(names));
		fprintf(stderr, "halo-run: --harness %s: expected all, %s\n", o->harness, names);
		return HALO_EXIT_SETUP;
	}
	if ((rc = runner_load_policy(o, false, &re)) != 0)
		return rc;
	const char *target = o->rest[0];
	if (policy_target_parse(target, &h, &port, why, sizeof(why)) < 0) {
		/* Unverifiable: denied, as the proxy would deny it, with the reason. */
		printf("deny %s\nrule: invalid host: %s\n", target, why);
		runner_env_release(&re);
		return 1;
	}
	/* The proxy's one answer for host:port (policy_decide_target): hostPorts first. */
	policy_decide_target(re.policy, h.text, strlen(h.text), port, &d);
	policy_decision_rule(&d, rule, sizeof(rule));
	if (d.rule == POLICY_RULE_HOST_PORT) {
		/* The sandbox's listener relays it, and the proxy dials the same. */
		printf("allow %s%s%s:%u\nrule: %s (relayed to the host's loopback)\n",
		       h.kind == POLICY_HOST_IPV6 ? "[" : "", h.text,
		       h.kind == POLICY_HOST_IPV6 ? "]" : "", port, rule);
		runner_env_release(&re);
		return 0;
	}
	if (d.rule == POLICY_RULE_INVALID_HOST)
		printf("deny %s\nrule: %s\n", target, rule);
	else if (port && d.host.kind == POLICY_HOST_IPV6)
		printf("%s [%s]:%u\nrule: %s\n", d.allow ? "allow" : "deny", d.host.text, port,
		       rule);
	else if (port)
		printf("%s %s:%u\nrule: %s\n", d.allow ? "allow" : "deny", d.host.text, port, rule);
	else
		printf("%s %s\nrule: %s\n", d.allow ? "allow" : "deny", d.host.text, rule);
	if (d.rule != POLICY_RULE_INVALID_HOST && d.host.kind != POLICY_HOST_NAME && !o->resolve)
		print_address_class(&d.host);
	/* What halo-run does end to end: the address rule refuses a literal, or a name
	 * whose addresses are fixed (localhost...), whatever Decide() said. */
	enum policy_addr_class cls;
	bool refused = d.rule != POLICY_RULE_INVALID_HOST &&
		       policy_entry_address_refused(re.policy, d.host.text, &cls);
	if (refused && d.host.kind == POLICY_HOST_NAME && !o->resolve)
		printf("address class: %s (a name with fixed addresses; refused by the proxy "
		       "unless egress.allowPrivate covers it)\n",
		       policy_addr_class_name(cls));
	bool allow = d.allow;
	if (d.rule != POLICY_RULE_INVALID_HOST)
		allow = runner_check_request(o, re.policy, d.host.text, target, allow);
	if (o->harness && d.rule != POLICY_RULE_INVALID_HOST)
		runner_check_harness(o, re.policy, d.host.text, port, d.allow && !refused);
	if (d.allow && re.policy->upstream_proxy && re.policy->mode != POLICY_MODE_OFF)
		print_route(re.policy, &d.host, port);
	if (o->resolve && d.rule != POLICY_RULE_INVALID_HOST)
		allow = print_resolution(re.policy, &d);
	runner_env_release(&re);
	return allow ? 0 : 1;
}

/* What the launch checks on this machine that the pure validation cannot: a writable
 * root must exist (the launch refuses a missing one rather than creating it), so that
 * any policy validate accepts launches here, and the other way round. */
static int check_on_this_machine(const char *file, const struct halo_policy *p)
{
	int bad = 0;

	for (size_t i = 0; i < p->writable_abs.n; i++) {
		struct stat st;
		const char *r = p->writable_abs.items[i];
		if (stat(r, &st) == 0)
			continue;
		fprintf(stderr,
			"halo-run: %s: sandbox.writableRoots: %s %s; create it (mkdir -p %s) "
			"or remove it from the policy\n",
			file, r, errno == ENOENT ? "does not exist" : strerror(errno), r);
		bad = 1;
	}
	return bad;
}

int runner_cmd_validate(const struct runner_opts *o)
{
	struct runner_opts one = *o;
	int bad = 0;

	if (o->n_rest < 1 || o->n_policies) {
		fprintf(stderr,
			"halo-run: validate takes policy files as operands: validate F...\n");
		return HALO_EXIT_SETUP;
	}
	/* Each file on its own, so every error of every file is reported. */
	for (int i = 0; i < o->n_rest; i++) {
		struct runner_env re;
		one.policies[0] = o->rest[i];
		one.n_policies = 1;
		if (runner_load_policy(&one, false, &re) != 0) {
			bad = 1;
			continue;
		}
		if (check_on_this_machine(o->rest[i], re.policy))
			bad = 1;
		else
			printf("%s: valid\n", o->rest[i]);
		runner_env_release(&re);
	}
	return bad;
}

/* The credential floor under every policy, one entry a line. */
static void print_floor(const struct halo_policy *p)
{
	const struct policy_floor_entry *f;
	size_t n;

	if (p->mode == POLICY_MODE_OFF) {
		printf("# credential floor: not enforced (sandbox.mode off)\n");
		return;
	}
	f = policy_floor(&n);
	printf("# credential floor (the first layer of every policy; protectedPaths add to it):\n");
	for (size_t i = 0; i < n; i++)
		printf("#   floor %-40s %-20s %s\n", f[i].path, policy_floor_kind_name(f[i].kind),
		       f[i].reason);
	for (size_t i = 0; i < p->allow_read_abs.n; i++)
		printf("# allowRead (a loosening): %s is readable\n", p->allow_read_abs.items[i]);
	for (size_t i = 0; i < p->sanitize_abs.n; i++)
		printf("# sanitized copy: %s (%s), secret entries removed\n",
		       p->sanitize_abs.items[i],
		       policy_sanitizer_name((enum policy_sanitizer)p->sanitize_kind[i]));
}

int runner_cmd_policy(const struct runner_opts *o)
{
	struct runner_env re;
	char *json;
	int rc;

	if (o->n_rest >= 1 && strcmp(o->rest[0], "render") == 0)
		return runner_cmd_policy_render(o);
	if (o->render_proxy) {
		fprintf(stderr, "halo-run: --proxy is for policy render --harness NAME\n");
		return HALO_EXIT_SETUP;
	}
	if (o->n_rest >= 1 && strcmp(o->rest[0], "import") == 0)
		return runner_cmd_policy_import(o);
	if (o->n_rest != 0) {
		fprintf(stderr, "halo-run: policy takes no operands (use --policy F, or the "
				"verbs render and import)\n");
		return HALO_EXIT_SETUP;
	}
	if ((rc = runner_load_policy(o, false, &re)) != 0)
		return rc;
	json = policy_to_json(re.policy);
	if (!json) {
		fprintf(stderr, "halo-run: out of memory\n");
		runner_env_release(&re);
		return HALO_EXIT_SETUP;
	}
	if (o->json) {
		printf("%s\n", json);
	} else {
		printf("# source: ");
		if (re.managed[0]) /* the first layer, which the others may only tighten */
			printf("managed %s%s", re.managed, re.n_paths ? ", " : "\n");
		else if (re.n_paths == 0)
			printf("embedded default\n");
		for (size_t i = 0; i < re.n_paths; i++)
			printf("%s%s", re.paths[i], i + 1 < re.n_paths ? " + " : "\n");
		print_floor(re.policy);
		printf("%s\n", json);
	}
	free(json);
	runner_env_release(&re);
	return 0;
}
