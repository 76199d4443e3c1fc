/* `policy render --proxy PORT[,SOCKSPORT]`: the value's parser (hostile values
 * refused with the part that is wrong), Claude Code's two proxy keys, and for every
 * other harness a warning naming it and what is not possible: with --proxy, no
 * adapter on any OS leaves it unsaid; without it, every rendering is what it was. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "render/render_int.h"
#include "tests/unit/policy_test.h"
#include "tests/unit/unit.h"

static const char policy_yaml[] = "egress:\n"
				  "  allowedDomains: [github.com]\n"
				  "  deniedDomains: [pastebin.com]\n";

static struct halo_policy *load(const char *yaml)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	if (policy_parse_buffer("t.yaml", yaml, strlen(yaml), 'y', &p, &d) != 0 ||
	    policy_finalize(p, &pt_ctx, &d) != 0)
		ck_abort_msg("test policy does not load");
	policy_diags_free(&d);
	return p;
}

/* ---------------------------------------------------------------- parse */

static const struct {
	const char *in;
	unsigned http, socks;
} good[] = {
    {"3128", 3128, 0},	   {"3128,1080", 3128, 1080}, {"1", 1, 0},
    {"65535,1", 65535, 1}, {"8877", 8877, 0},
};

static const struct {
	const char *in;
	const char *why; /* in the message */
} bad[] = {
    {"0", "out of range"},
    {"65536", "out of range"},
    {"99999", "out of range"},
    {"123456", "is not a port number"},
    {"99999999999999999999", "is not a port number"},
    {"abc", "'abc' is not a port number"},
    {"3128x", "is not a port number"},
    {"+80", "is not a port number"},
    {"-1", "is not a port number"},
    {" 80", "is not a port number"},
    {"80 ", "is not a port number"},
    {"080", "is not a port number"},
    {"0x50", "is not a port number"},
    {"3128;1080", "is not a port number"},
    {"3128:1080", "is not a port number"},
    {"", "an empty port"},
    {",", "an empty port"},
    {"3128,", "an empty port"},
    {",1080", "an empty port"},
    {"3128,0", "out of range"},
    {"3128,65536", "out of range"},
    {"3128,abc", "'abc' is not a port number"},
    {"1,2,3", "at most two ports"},
    {"1,,2", "at most two ports"},
    {"3128,3128", "both 3128"},
};

START_TEST(parse_good)
{
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct halo_err e = {{0}};
		unsigned h = 7, s = 7;
		ck_assert_msg(render_proxy_parse(good[i].in, &h, &s, &e) == 0, "%s: %s", good[i].in,
			      e.msg);
		ck_assert_uint_eq(h, good[i].http);
		ck_assert_uint_eq(s, good[i].socks);
	}
}
END_TEST

START_TEST(parse_bad)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct halo_err e = {{0}};
		unsigned h = 7, s = 7;
		ck_assert_msg(render_proxy_parse(bad[i].in, &h, &s, &e) < 0, "'%s' accepted",
			      bad[i].in);
		ck_assert_msg(strstr(e.msg, bad[i].why) && strncmp(e.msg, "--proxy: ", 9) == 0,
			      "'%s': message '%s' lacks '%s'", bad[i].in, e.msg, bad[i].why);
		ck_assert_msg(h == 0 && s == 0, "'%s': ports left set on failure", bad[i].in);
	}
}
END_TEST

/* ---------------------------------------------------------------- rendering */

static void render(const char *harness, const struct halo_policy *p, enum render_os os,
		   unsigned http, unsigned socks, struct render_out *out)
{
	struct render_opts o = {.os = os, .proxy_http = http, .proxy_socks = socks};
	struct halo_err e = {{0}};

	ck_assert_msg(render_policy(render_adapter_find(harness), p, &o, out, &e) == 0, "%s: %s",
		      harness, e.msg);
}

static size_t proxy_warnings(const struct render_out *out, const char *needle)
{
	size_t n = 0;

	for (size_t i = 0; i < out->n_w; i++)
		if (out->w[i].field == RF_PROXY) {
			ck_assert_msg(strncmp(out->w[i].text, "--proxy: ", 9) == 0, "%s",
				      out->w[i].text);
			n += !needle || strstr(out->w[i].text, needle);
		}
	return n;
}

static cJSON *network(const struct render_out *out)
{
	cJSON *root = cJSON_Parse(out->files[0].text);

	ck_assert_ptr_nonnull(root);
	return root;
}

static double port_of(cJSON *root, const char *key)
{
	cJSON *n = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "sandbox"),
					     "network"),
	    key);

	return cJSON_IsNumber(n) ? n->valuedouble : -1;
}

static bool key_listed(const struct render_adapter *a, const char *path)
{
	for (size_t i = 0; i < a->n_keys; i++)
		if (strcmp(a->keys[i].path, path) == 0)
			return true;
	return false;
}

START_TEST(claude_code_both_ports)
{
	struct halo_policy *p = load(policy_yaml);
	struct render_out out;

	for (int os = 0; os < 3; os++) {
		render("claude-code", p, (enum render_os)os, 3128, 1080, &out);
		cJSON *root = network(&out);
		ck_assert(port_of(root, "httpProxyPort") == 3128);
		ck_assert(port_of(root, "socksProxyPort") == 1080);
		ck_assert(out.handled[RF_PROXY] & RF_RENDERED);
		ck_assert_uint_eq(proxy_warnings(&out, "--listen 127.0.0.1:3128 --socks "
						       "127.0.0.1:1080"),
				  1);
		ck_assert_uint_eq(proxy_warnings(&out, "no SOCKS port"), 0);
		ck_assert_ptr_null(render_find_bypass(out.files[0].text));
		/* the lists stay: Claude Code's own WebFetch rules and a client that
		 * ignores the ports are still held by them */
		ck_assert_ptr_nonnull(strstr(out.files[0].text, "\"allowManagedDomainsOnly\""));
		ck_assert_ptr_nonnull(strstr(out.files[0].text, "WebFetch(domain:pastebin.com)"));
		cJSON_Delete(root);
		render_out_free(&out);
	}
	ck_assert(key_listed(render_adapter_find("claude-code"), "sandbox.network.httpProxyPort"));
	ck_assert(key_listed(render_adapter_find("claude-code"), "sandbox.network.socksProxyPort"));
	policy_free(p);
}
END_TEST

START_TEST(claude_code_http_only)
{
	struct halo_policy *p = load(policy_yaml);
	struct render_out out;

	render("claude-code", p, RENDER_OS_LINUX, 8080, 0, &out);
	cJSON *root = network(&out);
	ck_assert(port_of(root, "httpProxyPort") == 8080);
	ck_assert(port_of(root, "socksProxyPort") == -1);
	ck_assert_uint_eq(proxy_warnings(&out, "no SOCKS port"), 1);
	ck_assert_uint_eq(proxy_warnings(&out, "--listen 127.0.0.1:8080`"), 1);
	cJSON_Delete(root);
	render_out_free(&out);
	policy_free(p);
}
END_TEST

/* Never a silent drop: with --proxy, every adapter on every OS and for every policy
 * shape either renders it (only Claude Code) or warns, as its disposition says. */
static const char *const shapes[] = {
    policy_yaml,
    "egress: {default: allow}\n",
    "sandbox: {mode: read-only}\negress: {allowedDomains: [a.example]}\n",
    "sandbox: {mode: off}\n",
    "{}\n",
};

START_TEST(every_harness_says_it)
{
	for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
		struct halo_policy *p = load(shapes[k]);
		for (size_t i = 0; i < render_n_adapters(); i++) {
			const struct render_adapter *a = render_adapter_at(i);
			for (int os = 0; os < 3; os++) {
				struct render_out out;
				render(a->name, p, (enum render_os)os, 3128, 1080, &out);
				ck_assert_msg(out.handled[RF_PROXY] != 0, "%s: --proxy unsaid",
					      a->name);
				ck_assert_msg(proxy_warnings(&out, NULL) > 0,
					      "%s: --proxy without a warning", a->name);
				if (a->disp[RF_PROXY] == RD_WARN || p->mode == POLICY_MODE_OFF)
					ck_assert_msg(out.handled[RF_PROXY] == RF_WARNED,
						      "%s: --proxy rendered", a->name);
				for (size_t f = 0; f < out.n_files; f++)
					ck_assert_ptr_null(render_find_bypass(out.files[f].text));
				if (p->mode == POLICY_MODE_OFF)
					ck_assert_uint_eq(proxy_warnings(&out, "sandbox.mode off"),
							  1);
				render_out_free(&out);
			}
		}
		policy_free(p);
	}
}
END_TEST

/* Without --proxy nothing changes: no RF_PROXY and no proxy key anywhere. */
START_TEST(absent_means_unchanged)
{
	for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
		struct halo_policy *p = load(shapes[k]);
		for (size_t i = 0; i < render_n_adapters(); i++) {
			const struct render_adapter *a = render_adapter_at(i);
			struct render_out out;
			render(a->name, p, RENDER_OS_LINUX, 0, 0, &out);
			ck_assert_uint_eq(out.handled[RF_PROXY], 0);
			for (size_t f = 0; f < out.n_files; f++)
				ck_assert_ptr_null(strstr(out.files[f].text, "ProxyPort"));
			render_out_free(&out);
		}
		policy_free(p);
	}
}
END_TEST

START_TEST(gemini_fixed_port)
{
	struct halo_policy *p = load(policy_yaml);
	struct render_out out;

	render("gemini", p, RENDER_OS_MACOS, 8877, 0, &out);
	ck_assert_uint_eq(proxy_warnings(&out, "GEMINI_SANDBOX_PROXY_COMMAND"), 1);
	ck_assert_uint_eq(proxy_warnings(&out, "cannot be used"), 0);
	ck_assert_ptr_null(strstr(out.files[0].text, "8877"));
	render_out_free(&out);
	render("gemini", p, RENDER_OS_MACOS, 3128, 1080, &out);
	ck_assert_uint_eq(proxy_warnings(&out, "port 3128 cannot be used"), 1);
	ck_assert_uint_eq(proxy_warnings(&out, "SOCKS port 1080"), 1);
	render_out_free(&out);
	policy_free(p);
}
END_TEST

START_TEST(others_name_themselves)
{
	static const char *const who[][2] = {
	    {"codex", "Codex"},
	    {"copilot", "Copilot CLI"},
	    {"opencode", "OpenCode"},
	    {"cursor", "Cursor"},
	};
	struct halo_policy *p = load(policy_yaml);

	for (size_t i = 0; i < sizeof(who) / sizeof(who[0]); i++) {
		struct render_out out;
		render(who[i][0], p, RENDER_OS_LINUX, 3128, 0, &out);
		ck_assert_msg(proxy_warnings(&out, who[i][1]) == 1, "%s", who[i][0]);
		ck_assert_uint_eq(proxy_warnings(&out, "nothing rendered"), 1);
		render_out_free(&out);
	}
	policy_free(p);
}
END_TEST

static Suite *render_proxy_suite(void)
{
	Suite *s = suite_create("render_proxy");
	TCase *t = tcase_create("core");

	tcase_add_test(t, parse_good);
	tcase_add_test(t, parse_bad);
	tcase_add_test(t, claude_code_both_ports);
	tcase_add_test(t, claude_code_http_only);
	tcase_add_test(t, every_harness_says_it);
	tcase_add_test(t, absent_means_unchanged);
	tcase_add_test(t, gemini_fixed_port);
	tcase_add_test(t, others_name_themselves);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(render_proxy_suite)
