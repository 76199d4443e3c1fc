/* learn/: the record, the proposal (presets, wildcards, ports, refusals, roots), the
 * YAML text with hostile names and paths (quoted, escaped, loading back as written),
 * and policy_decision_learn (only the default's denial is widened). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learn/learn.h"
#include "tests/unit/policy_test.h"
#include "tests/unit/unit.h"

static struct halo_policy *load(const char *yaml)
{
	struct policy_managed m = {"test", yaml, strlen(yaml), 'y'};
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	ck_assert_int_eq(policy_load_managed(&m, NULL, 0, &pt_ctx, &p, &d), 0);
	policy_diags_free(&d);
	return p;
}

static const char *base = "egress:\n  default: deny\n  deniedDomains: [bad.test]\n";

START_TEST(learn_widens_only_the_default)
{
	struct halo_policy *p = load(base);
	struct policy_decision d;

	ck_assert_int_eq(policy_decide_port(p, "new.test", 8, 443, &d), 0);
	ck_assert(policy_decision_learn(&d));
	ck_assert(d.allow && d.rule == POLICY_RULE_LEARNED);
	ck_assert_int_eq(policy_decide_port(p, "bad.test", 8, 443, &d), 0);
	ck_assert(!policy_decision_learn(&d));
	ck_assert(!d.allow && d.rule == POLICY_RULE_DENIED);
	ck_assert_int_eq(policy_decide_port(p, "a..b", 4, 443, &d), 0);
	ck_assert(!policy_decision_learn(&d) && !d.allow);
	policy_free(p);
}
END_TEST

static bool has(const struct learn_items *it, const char *v)
{
	for (size_t i = 0; i < it->n; i++)
		if (strcmp(it->v[i].value, v) == 0)
			return true;
	return false;
}

static int root_ok(void *ctx, const char *root, char *why, size_t n)
{
	(void)ctx;
	if (strncmp(root, "/usr", 4) == 0) {
		snprintf(why, n, "system directory");
		return -EINVAL;
	}
	return 0;
}

/* (review) Host ports validation would refuse (halo-run's own, more than hostPorts
 * takes) are refused one by one: a command asked for them, and the whole learned file
 * failed validation ("nothing was written"). */
START_TEST(propose_host_ports_bounded)
{
	struct halo_policy *p = load(base);
	struct learn_record r;
	struct learn_plan pl;
	struct learn_opts o = {false, root_ok, NULL, NULL};
	size_t said = 0;

	learn_record_init(&r);
	learn_record_host(&r, LEARN_HOST_ALLOWED, "localhost", 3128, "http", "", "", "");
	for (unsigned port = 20001; port <= 20070; port++)
		learn_record_host(&r, LEARN_HOST_PRIVATE, "localhost", port, "connect", "127.0.0.1",
				  "loopback", "");
	learn_record_host(&r, LEARN_HOST_PRIVATE, "localhost", 20070, "connect", "127.0.0.1",
			  "loopback", "");
	ck_assert_int_eq(learn_propose(p, &r, &o, &pl), 0);
	ck_assert(!has(&pl.host_ports, "3128") && has(&pl.host_ports, "20001"));
	ck_assert_uint_eq(pl.host_ports.n, POLICY_MAX_HOST_PORTS);
	for (size_t i = 0; i < pl.refused.n; i++)
		said += strstr(pl.refused.v[i].comment, "port 20070:") != NULL;
	ck_assert_uint_eq(said, 1); /* once, however often it was asked */
	ck_assert_uint_eq(pl.refused.n, 1 + 70 - POLICY_MAX_HOST_PORTS);
	learn_plan_free(&pl);
	learn_record_free(&r);
	policy_free(p);
}
END_TEST

START_TEST(propose_table)
{
	struct halo_policy *p = load(base);
	struct learn_record r;
	struct learn_plan pl;
	struct learn_opts o = {false, root_ok, NULL, NULL};
	char *argv[] = {"npm", "ci", NULL};

	learn_record_init(&r);
	learn_record_command(&r, argv);
	learn_record_host(&r, LEARN_HOST_ALLOWED, "github.com", 443, "connect", "", "", "");
	learn_record_host(&r, LEARN_HOST_ALLOWED, "gitlab.com", 443, "connect", "", "", "");
	learn_record_host(&r, LEARN_HOST_ALLOWED, "reg.test", 4873, "http", "", "", "");
	learn_record_host(&r, LEARN_HOST_ALLOWED, "reg.test", 4873, "http", "", "", "");
	learn_record_host(&r, LEARN_HOST_ALLOWED, "2001:db8::1", 8080, "http", "", "", "");
	learn_record_host(&r, LEARN_HOST_ALLOWED, "pypi.org", 443, "connect", "", "", "");
	learn_record_host(&r, LEARN_HOST_PRIVATE, "intra.test", 443, "connect", "10.0.0.1",
			  "private", "");
	learn_record_host(&r, LEARN_HOST_PRIVATE, "localhost", 5432, "connect", "127.0.0.1",
			  "loopback", "");
	learn_record_host(&r, LEARN_HOST_ALLOWED, "localhost", 4873, "http", "", "", "");
	learn_record_host(&r, LEARN_HOST_DENIED, "bad.test", 443, "connect", "", "",
			  "deniedDomains[0] bad.test");
	learn_record_write(&r, "/opt/cache/x/y", 30, false);
	learn_record_write(&r, "/opt/cache/x", 30, false);
	learn_record_write(&r, "/usr/lib/z", 30, false);
	learn_record_write(&r, "/home/alice/.ssh/k", 13, true);
	ck_assert_int_eq(learn_propose(p, &r, &o, &pl), 0);
	ck_assert(has(&pl.presets, "vcs"));	    /* two names of one preset */
	ck_assert(!has(&pl.domains, "github.com")); /* folded into it */
	ck_assert(has(&pl.domains, "pypi.org"));    /* one name: exact */
	ck_assert(has(&pl.domains, "reg.test:4873"));
	ck_assert(has(&pl.domains, "[2001:db8::1]:8080"));
	ck_assert(has(&pl.host_ports, "5432"));
	ck_assert(has(&pl.host_ports, "4873") && !has(&pl.domains, "localhost:4873"));
	ck_assert(!has(&pl.domains, "intra.test") && !has(&pl.domains, "bad.test"));
	ck_assert(has(&pl.roots, "/opt/cache"));
	ck_assert(!has(&pl.roots, "/opt/cache/x"));
	ck_assert(!has(&pl.roots, "/usr/lib"));
	ck_assert_uint_eq(pl.roots.n, 1);
	ck_assert_uint_ge(pl.refused.n, 4); /* private, deny, /usr, guard */
	for (size_t i = 0; i < pl.domains.n; i++)
		if (strcmp(pl.domains.v[i].value, "reg.test:4873") == 0)
			ck_assert_ptr_nonnull(strstr(pl.domains.v[i].comment, "2 connections"));
	learn_plan_free(&pl);
	o.wildcards = true;
	o.suffixes = "com\n";
	learn_record_host(&r, LEARN_HOST_ALLOWED, "a.cdn.test", 443, "connect", "", "", "");
	learn_record_host(&r, LEARN_HOST_ALLOWED, "b.cdn.test", 443, "connect", "", "", "");
	ck_assert_int_eq(learn_propose(p, &r, &o, &pl), 0);
	ck_assert(has(&pl.domains, "*.cdn.test"));
	ck_assert(!has(&pl.domains, "a.cdn.test"));
	learn_plan_free(&pl);
	learn_record_free(&r);
	policy_free(p);
}
END_TEST

/* Hostile names and paths: nothing escapes its quotes, the text loads, and what loads
 * is what was learned. */
START_TEST(emit_hostile)
{
	struct halo_policy *p = load(base), *back = NULL;
	struct learn_record r;
	struct learn_plan pl = {0};
	struct learn_opts o = {false, root_ok, NULL, NULL};
	struct policy_diags d = {0};
	char *argv[] = {"sh", "-c", "echo \"x\"\n# evil: 1\r\x1b[2J'", NULL}, *text = NULL;
	size_t len = 0;

	learn_record_init(&r);
	learn_record_command(&r, argv);
	learn_record_host(&r, LEARN_HOST_ALLOWED, "ok.test", 443, "connect", "", "", "");
	learn_record_write(&r, "/opt/we\"ird\\ - evil: # x/f", 30, false);
	learn_record_write(&r, "/opt/bad\xff/f", 30, false);
	ck_assert_int_eq(learn_propose(p, &r, &o, &pl), 0);
	ck_assert_int_eq(learn_emit(p, &r, &pl, &text, &len), 0);
	ck_assert_ptr_null(strstr(text, "\n# evil"));
	ck_assert_ptr_null(strstr(text, "\n- evil"));
	ck_assert_ptr_null(strchr(text, '\x1b'));
	ck_assert_ptr_null(strchr(text, '\r'));
	if (learn_validate(text, len, &pt_ctx, &d) != 0)
		fprintf(stderr, "%s\n%s\n", text, d.n_errors ? d.errors[0] : "?");
	ck_assert_uint_eq(d.n_errors, 0);
	struct policy_managed m = {"t", text, len, 'y'};
	ck_assert_int_eq(policy_load_managed(&m, NULL, 0, &pt_ctx, &back, &d), 0);
	ck_assert(pt_list_has(&back->writable_roots, "/opt/we\"ird\\ - evil: # x"));
	ck_assert(pt_list_has(&back->allowed_domains, "ok.test"));
	ck_assert(pt_list_has(&back->denied_domains, "bad.test"));
	ck_assert_uint_eq(back->writable_roots.n, 1); /* not UTF-8: refused, not written */
	policy_free(back);
	policy_diags_free(&d);
	free(text);
	learn_plan_free(&pl);
	learn_record_free(&r);
	policy_free(p);
}
END_TEST

/* --wildcards never folds IP literals: "*.2.3.4" from 1.2.3.4 and 5.2.3.4 is not a
 * host pattern, and one entry validation refuses would lose the whole output. */
START_TEST(wildcards_skip_ip_literals)
{
	struct halo_policy *p = load(base);
	struct learn_record r;
	struct learn_plan pl = {0};
	struct learn_opts o = {true, root_ok, NULL, "com\n"};
	struct policy_diags d = {0};
	char *text = NULL;
	size_t len = 0;

	learn_record_init(&r);
	learn_record_host(&r, LEARN_HOST_ALLOWED, "1.2.3.4", 443, "connect", "", "", "");
	learn_record_host(&r, LEARN_HOST_ALLOWED, "5.2.3.4", 443, "connect", "", "", "");
	learn_record_host(&r, LEARN_HOST_ALLOWED, "9.2.3.4", 8080, "connect", "", "", "");
	ck_assert_int_eq(learn_propose(p, &r, &o, &pl), 0);
	for (size_t i = 0; i < pl.domains.n; i++)
		ck_assert_msg(pl.domains.v[i].value[0] != '*', "wildcard %s",
			      pl.domains.v[i].value);
	ck_assert(has(&pl.domains, "1.2.3.4") && has(&pl.domains, "5.2.3.4"));
	ck_assert(has(&pl.domains, "9.2.3.4:8080"));
	ck_assert_int_eq(learn_emit(p, &r, &pl, &text, &len), 0);
	ck_assert_int_eq(learn_validate(text, len, &pt_ctx, &d), 0);
	policy_diags_free(&d);
	free(text);
	learn_plan_free(&pl);
	learn_record_free(&r);
	policy_free(p);
}
END_TEST

/* The proxy records a learned name at its decision, then its refusal when every
 * address was private: such a name is listed as refused and not proposed (the header
 * says "not proposed"; an entry that never connected is no use to the command). */
START_TEST(private_only_name_not_proposed)
{
	struct halo_policy *p = load(base);
	struct learn_record r;
	struct learn_plan pl = {0};
	struct learn_opts o = {false, root_ok, NULL, NULL};

	learn_record_init(&r);
	learn_record_host(&r, LEARN_HOST_ALLOWED, "intra.test", 8080, "http", "", "", "");
	learn_record_host(&r, LEARN_HOST_PRIVATE, "intra.test", 8080, "http", "10.0.0.5", "private",
			  "");
	learn_record_host(&r, LEARN_HOST_ALLOWED, "intra.test", 443, "connect", "", "", "");
	learn_record_host(&r, LEARN_HOST_PRIVATE, "intra.test", 443, "connect", "10.0.0.5",
			  "private", "");
	/* one of two connections passed the address check (the answer changed): kept */
	learn_record_host(&r, LEARN_HOST_ALLOWED, "mixed.test", 8443, "connect", "", "", "");
	learn_record_host(&r, LEARN_HOST_ALLOWED, "mixed.test", 8443, "connect", "", "", "");
	learn_record_host(&r, LEARN_HOST_PRIVATE, "mixed.test", 8443, "connect", "10.0.0.6",
			  "private", "");
	ck_assert_int_eq(learn_propose(p, &r, &o, &pl), 0);
	ck_assert(!has(&pl.domains, "intra.test") && !has(&pl.domains, "intra.test:8080"));
	ck_assert(has(&pl.domains, "mixed.test:8443"));
	ck_assert_uint_ge(pl.refused.n, 2);
	learn_plan_free(&pl);
	learn_record_free(&r);
	policy_free(p);
}
END_TEST

/* A name past ASCII is written as escapes: a right-to-left override (U+202E) or a
 * zero-width space in a learned path would otherwise reorder or hide what a reviewer
 * reads in the file and the diff. The text loads back as the same bytes. */
START_TEST(quote_escapes_non_ascii)
{
	struct halo_policy *p = load(base), *back = NULL;
	struct learn_record r;
	struct learn_plan pl = {0};
	struct learn_opts o = {false, root_ok, NULL, NULL};
	struct policy_diags d = {0};
	const char *dir = "/opt/c\xe2\x80\xae"
			  "exe.\xe2\x80\x8b\xf0\x9f\x98\x80\xc3\xa9";
	char q[128], *text = NULL, *json = NULL;
	size_t len = 0;

	ck_assert(learn_yaml_quote(dir, q, sizeof(q)));
	ck_assert_str_eq(q, "\"/opt/c\\u202Eexe.\\u200B\\U0001F600\\u00E9\"");
	learn_record_init(&r);
	learn_record_write(&r,
			   "/opt/c\xe2\x80\xae"
			   "exe.\xe2\x80\x8b\xf0\x9f\x98\x80\xc3\xa9/f",
			   30, false);
	ck_assert_int_eq(learn_propose(p, &r, &o, &pl), 0);
	ck_assert(has(&pl.roots, dir));
	ck_assert_int_eq(learn_emit(p, &r, &pl, &text, &len), 0);
	for (size_t i = 0; i < len; i++)
		ck_assert_msg((unsigned char)text[i] < 0x80, "raw byte 0x%02x at %zu",
			      (unsigned char)text[i], i);
	struct policy_managed m = {"learned", text, len, 'y'};
	ck_assert_int_eq(policy_load_managed(&m, NULL, 0, &pt_ctx, &back, &d), 0);
	ck_assert_ptr_nonnull(json = policy_to_json(back));
	ck_assert_ptr_nonnull(strstr(json, "\xe2\x80\xae"
					   "exe.\xe2\x80\x8b\xf0\x9f\x98\x80\xc3\xa9"));
	free(json);
	policy_diags_free(&d);
	policy_free(back);
	free(text);
	learn_plan_free(&pl);
	learn_record_free(&r);
	policy_free(p);
}
END_TEST

/* --wildcards never proposes "*.x" over a public suffix (co.uk, github.io,
 * s3.amazonaws.com: anyone can register a name below it), and proposes none without
 * a list to tell. */
static const char psl[] = "// comment\ncom\nuk\nco.uk\n*.ck\n!www.ck\ncn\n公司.cn\n"
			  "// ===BEGIN PRIVATE DOMAINS===\ngithub.io\r\ns3.amazonaws.com\n";

START_TEST(wildcards_public_suffix)
{
	struct halo_policy *p = load(base);
	struct learn_record r;
	struct learn_plan pl = {0};
	struct learn_opts o = {true, root_ok, NULL, psl};
	static const char *const names[] = {
	    "a.co.uk",		 "b.co.uk",	     "a.github.io",	"b.github.io",
	    "x.acme.ck",	 "y.acme.ck",	     "a.cdn.test",	"b.cdn.test",
	    "sts.amazonaws.com", "s3.amazonaws.com", "a.xn--55qx5d.cn", "b.xn--55qx5d.cn"};

	ck_assert(learn_public_suffix(psl, "co.uk") && learn_public_suffix(psl, "CO.UK"));
	ck_assert(learn_public_suffix(psl, "github.io") && learn_public_suffix(psl, "acme.ck"));
	ck_assert(!learn_public_suffix(psl, "www.ck") && !learn_public_suffix(psl, "acme.co.uk"));
	ck_assert(!learn_public_suffix(psl, "cdn.test") && !learn_public_suffix(psl, "o.uk"));
	ck_assert(!learn_public_suffix(psl, "") && !learn_public_suffix("", "co.uk"));
	learn_record_init(&r);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		learn_record_host(&r, LEARN_HOST_ALLOWED, names[i], 443, "connect", "", "", "");
	ck_assert_int_eq(learn_propose(p, &r, &o, &pl), 0);
	ck_assert(!has(&pl.domains, "*.co.uk") && has(&pl.domains, "a.co.uk"));
	ck_assert(!has(&pl.domains, "*.github.io") && has(&pl.domains, "b.github.io"));
	ck_assert(!has(&pl.domains, "*.acme.ck") && has(&pl.domains, "x.acme.ck"));
	ck_assert(has(&pl.domains, "*.cdn.test") && !has(&pl.domains, "a.cdn.test"));
	/* (review) A suffix below the parent (s3.amazonaws.com: anyone's bucket), and an
	 * internationalised parent the list names in Unicode (公司.cn = xn--55qx5d.cn). */
	ck_assert(learn_suffix_within(psl, "amazonaws.com") &&
		  !learn_suffix_within(psl, "cdn.test"));
	ck_assert(learn_suffix_within(psl, "co.uk") && !learn_suffix_within(psl, "acme.co.uk"));
	ck_assert(!has(&pl.domains, "*.amazonaws.com") && has(&pl.domains, "s3.amazonaws.com"));
	ck_assert(!has(&pl.domains, "*.xn--55qx5d.cn") && has(&pl.domains, "a.xn--55qx5d.cn"));
	ck_assert_uint_ge(pl.refused.n, 5); /* each said */
	learn_plan_free(&pl);
	o.suffixes = NULL; /* no list: no wildcard at all, said */
	ck_assert_int_eq(learn_propose(p, &r, &o, &pl), 0);
	ck_assert(!has(&pl.domains, "*.cdn.test") && has(&pl.domains, "a.cdn.test"));
	ck_assert_uint_ge(pl.refused.n, 1);
	learn_plan_free(&pl);
	learn_record_free(&r);
	policy_free(p);
}
END_TEST

/* A write the kernel refused (a read-only mount, not the gate) in a guard target or a
 * git directory: the guard keeps those read-only whatever the roots, so proposing
 * one would only mislead. Listed as refused, never proposed. */
START_TEST(roots_never_guard_targets)
{
	struct halo_policy *p = load(base);
	struct learn_record r;
	struct learn_plan pl = {0};
	struct learn_opts o = {false, root_ok, NULL, NULL};

	learn_record_init(&r);
	learn_record_write(&r, "/ws/.vscode/tasks.json", 30, false);
	learn_record_write(&r, "/ws/.idea/workspace.xml", 30, false);
	learn_record_write(&r, "/ws/sub/.git/hooks/post-checkout", 30, false);
	learn_record_write(&r, "/opt/cache/x", 30, false);
	ck_assert_int_eq(learn_propose(p, &r, &o, &pl), 0);
	ck_assert_uint_eq(pl.roots.n, 1);
	ck_assert(has(&pl.roots, "/opt/cache"));
	ck_assert_uint_ge(pl.refused.n, 3);
	learn_plan_free(&pl);
	learn_record_free(&r);
	policy_free(p);
}
END_TEST

START_TEST(quote_and_parse)
{
	char q[32];
	struct learn_record r;
	static const char notes[] = "B\0W 30 /opt/a\0G 13 /x/.git/hooks/h\0W 0 /bad\0W 30 rel\0"
				    "X 1 /y\0T\0W 30 /cut";

	ck_assert(learn_yaml_quote("a\"b\\c\n", q, sizeof(q)));
	ck_assert_str_eq(q, "\"a\\\"b\\\\c\\x0a\"");
	ck_assert(!learn_yaml_quote("\xc0\xaf", q, sizeof(q)));	    /* overlong */
	ck_assert(!learn_yaml_quote("\xed\xa0\x80", q, sizeof(q))); /* surrogate */
	ck_assert(learn_yaml_quote("\xc3\xa9", q, sizeof(q)));
	ck_assert(!learn_yaml_quote("0123456789012345678901234567890", q, sizeof(q)));
	learn_record_init(&r);
	ck_assert_uint_eq(learn_record_writes_parse(&r, notes, sizeof(notes) - 1), 2);
	ck_assert(r.writes_observed && r.writes_cut);
	ck_assert(r.writes[1].guard && !r.writes[0].guard);
	learn_record_free(&r);
}
END_TEST

START_TEST(diff_lines)
{
	char *d = learn_diff("a:\n  b: 1\n", "# head\na:\n  b: 1\n  c: 2  # why\n");

	ck_assert_str_eq(d, "+   c: 2\n");
	free(d);
	/* "  # " inside a quoted value is the value's, not the start of a comment: the
	 * diff shows the whole value (a reviewer of the diff sees what the file holds) */
	d = learn_diff("a:\n", "a:\n  - \"/opt/x  # \\\"y\"  # why\n  - \"/opt/z\\\\\"  # w\n");
	ck_assert_str_eq(d, "+   - \"/opt/x  # \\\"y\"\n+   - \"/opt/z\\\\\"\n");
	free(d);
}
END_TEST

static Suite *learn_suite(void)
{
	Suite *s = suite_create("learn");
	TCase *tc = tcase_create("learn");

	tcase_add_test(tc, learn_widens_only_the_default);
	tcase_add_test(tc, propose_table);
	tcase_add_test(tc, propose_host_ports_bounded);
	tcase_add_test(tc, emit_hostile);
	tcase_add_test(tc, wildcards_skip_ip_literals);
	tcase_add_test(tc, private_only_name_not_proposed);
	tcase_add_test(tc, quote_escapes_non_ascii);
	tcase_add_test(tc, wildcards_public_suffix);
	tcase_add_test(tc, roots_never_guard_targets);
	tcase_add_test(tc, quote_and_parse);
	tcase_add_test(tc, diff_lines);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(learn_suite)
