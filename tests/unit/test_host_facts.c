/* Issue 30, item 2: one "*.x" rule and one loopback-name rule. A table of (entry,
 * host) pairs through policy_host_match and every reader of a host entry (Decide()'s
 * index, request rules, credentials, the renderings' matcher in halo-run's meaning and
 * in the vendors' wider ones), which must agree; a table of names through
 * policy_loopback_name, the hostPorts lookup of `check` and the hook's own-loopback
 * rule, which must agree too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hook/hook.h"
#include "render/render_int.h"
#include "tests/unit/policy_test.h"

#define ROWS(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const char *const entries[] = {
    "example.com", "*.example.com", "*.b.example.com", "a.example.com", "*.co", "*.xn--p1ai",
};

/* The rule itself, as DESIGN.md states it: an entry matches its own host; "*.x" the
 * names strictly below x, never x, never a name that merely ends in x's text. */
static const struct {
	const char *entry, *host;
	bool match;
} rule_rows[] = {
    {"example.com", "example.com", true},
    {"example.com", "a.example.com", false},
    {"example.com", "example.co", false},
    {"*.example.com", "example.com", false},
    {"*.example.com", "a.example.com", true},
    {"*.example.com", "a.b.example.com", true},
    {"*.example.com", "aexample.com", false},
    {"*.example.com", "example.com.evil.test", false},
    {"*.example.com", ".example.com", false},
    {"*.example.com", "com", false},
    {"*.b.example.com", "b.example.com", false},
    {"*.b.example.com", "x.b.example.com", true},
    {"*.b.example.com", "x.cb.example.com", false},
    {"*.co", "co", false},
    {"*.co", "a.co", true},
    {"*.co", "a.com", false},
    {NULL, "a.co", false},
    {"*.co", NULL, false},
};

START_TEST(rule_table)
{
	ck_assert_msg(policy_host_match(rule_rows[_i].entry, rule_rows[_i].host) ==
			  rule_rows[_i].match,
		      "%s ~ %s", rule_rows[_i].entry ? rule_rows[_i].entry : "(null)",
		      rule_rows[_i].host ? rule_rows[_i].host : "(null)");
}
END_TEST

static const char *const hosts[] = {
    "example.com",
    "a.example.com",
    "b.example.com",
    "x.b.example.com",
    "a.b.example.com",
    "aexample.com",
    "example.co",
    "co",
    "a.co",
    "example.com.evil.test",
    "xn--p1ai",
    "a.xn--p1ai",
    "a.a.example.com",
    "203.0.113.7",
    "2001:db8::1",
};

static struct halo_policy *load(const char *yaml)
{
	struct halo_policy *p = NULL;
	struct policy_diags d = {0};

	ck_assert_msg(pt_load(yaml, &p, &d) == 0, "%s\n%s", yaml, pt_dump(&d));
	policy_diags_free(&d);
	return p;
}

/* One entry as an allowed domain, a request rule and a credential's host: Decide(),
 * the TLS-level lookups and the renderings' matcher all answer as the rule does. */
START_TEST(readers_agree)
{
	const char *e = entries[_i], *apex = policy_pattern_wild(e);
	char yaml[512];
	struct halo_policy *p;

	setenv("HALO_TEST_FACTS_TOKEN", "t0ken", 1);
	snprintf(
	    yaml, sizeof(yaml),
	    "egress:\n"
	    "  allowedDomains: [\"%s\"]\n"
	    "  requestRules:\n"
	    "    - {host: \"%s\", methods: [GET], paths: [\"/*\"]}\n"
	    "  credentials:\n"
	    "    - {host: \"%s\", header: Authorization, value: \"${HALO_TEST_FACTS_TOKEN}\"}\n",
	    e, e, e);
	p = load(yaml);
	for (int h = 0; h < ROWS(hosts); h++) {
		const char *host = hosts[h];
		bool want = policy_host_match(e, host);
		struct policy_decision d;
		bool sub = policy_name_under(host, strlen(host), e, strlen(e));

		ck_assert_int_eq(policy_decide(p, host, strlen(host), &d), 0);
		ck_assert_msg(d.allow == want, "Decide %s ~ %s: %d", e, host, d.allow);
		ck_assert_msg(policy_tls_terminated(p, host) == want, "requestRules %s ~ %s", e,
			      host);
		ck_assert_msg((policy_credential_for(p, host, NULL) != NULL) == want,
			      "credentials %s ~ %s", e, host);
		ck_assert_msg(render_host_match(e, host, RM_HALO) == want, "render %s ~ %s", e,
			      host);
		/* The vendors' wider readings add to the rule, never take from it. */
		ck_assert(render_host_match(e, host, RM_STAR_APEX) ==
			  (want || (apex && strcmp(host, apex) == 0)));
		ck_assert(render_host_match(e, host, RM_SUBTREE) == (want || (!apex && sub)));
	}
	policy_free(p);
}
END_TEST

/* ------------------------------------------------------------ loopback names */

static const struct {
	const char *target; /* for policy_target_parse: canonicalises case and the dot */
	bool loopback;
} lo_rows[] = {
    {"localhost", true},       {"LOCALHOST.", true},
    {"localhost.", true},      {"a.localhost", true},
    {"a.b.localhost", true},   {"localhost.localdomain", true},
    {"ip6-localhost", true},   {"ip6-loopback", true},
    {"localhost.test", false}, {"localhost.evil.test", false},
    {"alocalhost", false},     {"notlocalhost", false},
    {"localhost-a", false},    {"metadata.google.internal", false}, /* fixed, but not loopback */
    {"example.com", false},
};

START_TEST(loopback_rule)
{
	struct policy_host h;
	unsigned port;
	char why[128];

	ck_assert_int_eq(policy_target_parse(lo_rows[_i].target, &h, &port, why, sizeof(why)), 0);
	ck_assert_msg(policy_loopback_name(h.text) == lo_rows[_i].loopback, "%s",
		      lo_rows[_i].target);
	ck_assert(!policy_loopback_name(NULL));
}
END_TEST

/* `check NAME:4873` under hostPorts, and the hook's judgment of a command reaching
 * NAME: a loopback name is the sandbox's own loopback for both (relayed to the host,
 * or the command's own server), any other goes through Decide() (default deny). */
START_TEST(loopback_readers_agree)
{
	struct halo_policy *p = load("egress: {allowedDomains: [ok.example], hostPorts: [4873]}\n");
	struct hook_ctx c = {.policy = p, .cwd = "/home/alice/proj", .home = "/home/alice"};
	char target[128], cmd[160];
	struct policy_host h;
	unsigned port;
	char why[128];
	struct hook_verdict v;
	size_t n;

	c.guard_names = policy_guard_names(&n);
	c.n_guard_names = n;
	for (int i = 0; i < ROWS(lo_rows); i++) {
		bool lo = lo_rows[i].loopback;

		snprintf(target, sizeof(target), "%s:4873", lo_rows[i].target);
		ck_assert_int_eq(policy_target_parse(target, &h, &port, why, sizeof(why)), 0);
		ck_assert_msg((policy_host_port_index(p, &h, port) == 0) == lo, "check %s", target);
		snprintf(cmd, sizeof(cmd), "curl http://%s/health", target);
		hook_check_command(&c, cmd, strlen(cmd), &v);
		ck_assert_msg((v.outcome == HOOK_ALLOW) == lo, "hook %s: %d (%s)", cmd, v.outcome,
			      v.reason);
	}
	policy_free(p);
}
END_TEST

static Suite *facts_suite(void)
{
	Suite *s = suite_create("host-facts");
	TCase *tc = tcase_create("facts");

	tcase_add_loop_test(tc, rule_table, 0, ROWS(rule_rows));
	tcase_add_loop_test(tc, readers_agree, 0, ROWS(entries));
	tcase_add_loop_test(tc, loopback_rule, 0, ROWS(lo_rows));
	tcase_add_test(tc, loopback_readers_agree);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(facts_suite)
