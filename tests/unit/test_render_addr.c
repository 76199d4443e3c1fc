/* Issue 29: renderings never allow what halo-run refuses. Allowed entries whose
 * address halo-run's address rule refuses (loopback, private, metadata, link-local
 * literals; names with fixed addresses such as localhost) are left out of every
 * harness's allow list, denied where the harness has a deny list, each with a warning;
 * the same entries covered by allowPrivate render as before. Also the table of
 * policy_entry_address_refused itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "render/render_int.h"
#include "tests/unit/policy_test.h"

static struct halo_policy *load(const char *yaml)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	if (policy_parse_buffer("t.yaml", yaml, strlen(yaml), 'y', &p, &d) != 0 ||
	    policy_finalize(p, &pt_ctx, &d) != 0) {
		for (size_t i = 0; i < d.n_errors; i++)
			fprintf(stderr, "  %s\n", d.errors[i]);
		ck_abort_msg("test policy does not load");
	}
	policy_diags_free(&d);
	return p;
}

static const char lit_yaml[] = "egress:\n"
			       "  allowedDomains: [localhost, 169.254.169.254, 10.1.2.3, \"::1\",\n"
			       "                   \"*.localhost\", metadata.google.internal,\n"
			       "                   169.254.1.1, 10.20.1.1, example.com]\n"
			       "  allowPrivate: [10.20.0.0/16]\n";

/* Refused: every literal and fixed name above but 10.20.1.1 (allowPrivate covers it). */
static const char *const refused[] = {
    "localhost",   "169.254.169.254",	       "10.1.2.3",    "::1",
    "*.localhost", "metadata.google.internal", "169.254.1.1",
};
static const char *const kept[] = {"10.20.1.1", "example.com"};

static bool json_list_has(const cJSON *root, const char *const *path, const char *v)
{
	const cJSON *o = root, *e;

	for (; *path && o; path++)
		o = cJSON_GetObjectItemCaseSensitive(o, *path);
	cJSON_ArrayForEach(e, o)
	{
		if (cJSON_IsString(e) && strcmp(e->valuestring, v) == 0)
			return true;
	}
	return false;
}

static bool warned(const struct render_out *out, const char *entry)
{
	char want[256];

	snprintf(want, sizeof(want), "egress.allowedDomains: %s: halo-run refuses its address",
		 entry);
	for (size_t i = 0; i < out->n_w; i++)
		if (strncmp(out->w[i].text, want, strlen(want)) == 0)
			return true;
	return false;
}

/* The allow and deny lists of each harness's rendered file, where it has them. */
static void check_file(const char *harness, const struct render_out *out, const char *entry,
		       bool allowed)
{
	const char *text = out->n_files ? out->files[0].text : "";
	cJSON *root = NULL;
	char line[300];

	if (strcmp(harness, "claude-code") == 0) {
		root = cJSON_Parse(text);
		const char *allow[] = {"sandbox", "network", "allowedDomains", NULL};
		const char *deny[] = {"sandbox", "network", "deniedDomains", NULL};
		ck_assert_msg(json_list_has(root, allow, entry) == allowed, "%s: %s", harness,
			      entry);
		ck_assert_msg(json_list_has(root, deny, entry) == !allowed, "%s: %s", harness,
			      entry);
	} else if (strcmp(harness, "copilot") == 0) {
		root = cJSON_Parse(text);
		const char *allow[] = {"sandbox", "userPolicy", "network", "allowedHosts", NULL};
		const char *deny[] = {"sandbox", "userPolicy", "network", "blockedHosts", NULL};
		ck_assert_msg(json_list_has(root, allow, entry) == allowed, "%s: %s", harness,
			      entry);
		ck_assert_msg(json_list_has(root, deny, entry) == !allowed, "%s: %s", harness,
			      entry);
	} else if (strcmp(harness, "codex") == 0) {
		for (size_t f = 0; f < out->n_files; f++) {
			snprintf(line, sizeof(line), "\n\"%s\" = \"allow\"\n", entry);
			if (strstr(out->files[f].text, "[experimental_network.domains]"))
				ck_assert_msg(!strstr(out->files[f].text, line) == !allowed,
					      "codex: %s", entry);
		}
	} else if (strcmp(harness, "opencode") == 0) {
		root = cJSON_Parse(text);
		const cJSON *perm = cJSON_GetObjectItemCaseSensitive(root, "permission");
		const cJSON *wf = cJSON_GetObjectItemCaseSensitive(perm, "webfetch");
		ck_assert_msg(!cJSON_IsString(wf) || strcmp(wf->valuestring, "allow") != 0,
			      "opencode: webfetch allows every URL");
	} else { /* gemini, cursor: no per-host rule; never named */
		for (size_t f = 0; f < out->n_files; f++) {
			snprintf(line, sizeof(line), "\"%s\"", entry);
			ck_assert_msg(!strstr(out->files[f].text, line), "%s names %s", harness,
				      entry);
		}
	}
	cJSON_Delete(root);
}

START_TEST(every_harness_leaves_refused_out)
{
	struct halo_policy *p = load(lit_yaml);
	const struct render_adapter *a = render_adapter_at((size_t)_i);

	for (int os = RENDER_OS_LINUX; os <= RENDER_OS_WINDOWS; os++) {
		struct render_opts o = {.os = (enum render_os)os, .version = NULL};
		struct render_out out;
		struct halo_err e = {{0}};
		char mech[512];
		bool lists = strcmp(a->name, "gemini") != 0 && strcmp(a->name, "cursor") != 0;

		ck_assert_msg(render_policy(a, p, &o, &out, &e) == 0, "%s: %s", a->name, e.msg);
		ck_assert_uint_ge(out.n_files, strcmp(a->name, "cursor") != 0);
		for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
			check_file(a->name, &out, refused[i], false);
			if (lists)
				ck_assert_msg(warned(&out, refused[i]), "%s: no warning for %s",
					      a->name, refused[i]);
		}
		for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
			check_file(a->name, &out, kept[i], true);
			ck_assert_msg(!warned(&out, kept[i]), "%s warned for %s", a->name, kept[i]);
		}
		/* check --harness: the rendering refuses each (where it decides hosts) */
		for (size_t i = 0; lists && i < sizeof(refused) / sizeof(refused[0]); i++) {
			const char *h =
			    strcmp(refused[i], "*.localhost") == 0 ? "a.localhost" : refused[i];
			ck_assert_msg(!a->explain(p, &o, h, 0, mech, sizeof(mech)),
				      "%s allows %s: %s", a->name, h, mech);
		}
		render_out_free(&out);
	}
	policy_free(p);
}
END_TEST

/* Review of issue 29: an allowed wildcard that covers a name with fixed addresses
 * (*.google.internal covers metadata.google.internal) keeps its meaning for other
 * names, but that name is denied where the harness has a deny list, with a warning:
 * halo-run refuses it (metadata address), so no harness may allow it. */
static const char wild_yaml[] = "egress:\n"
				"  allowedDomains: [\"*.google.internal\", \"*.ec2.internal\",\n"
				"                   \"*.goog\", \"*.localdomain\", example.com]\n";
static const char *const wild_fixed[] = {"metadata.google.internal", "instance-data.ec2.internal",
					 "metadata.goog", "localhost.localdomain"};

START_TEST(wildcard_over_fixed_name_denied)
{
	struct halo_policy *p = load(wild_yaml);
	const struct render_adapter *a = render_adapter_at((size_t)_i);
	struct render_opts o = {.os = RENDER_OS_LINUX, .version = NULL};
	struct render_out out;
	struct halo_err e = {{0}};
	char mech[512];
	bool lists = strcmp(a->name, "gemini") != 0 && strcmp(a->name, "cursor") != 0 &&
		     strcmp(a->name, "opencode") != 0;

	ck_assert_msg(render_policy(a, p, &o, &out, &e) == 0, "%s: %s", a->name, e.msg);
	for (size_t i = 0; lists && i < sizeof(wild_fixed) / sizeof(wild_fixed[0]); i++) {
		ck_assert_msg(!a->explain(p, &o, wild_fixed[i], 0, mech, sizeof(mech)),
			      "%s allows %s: %s", a->name, wild_fixed[i], mech);
		ck_assert_msg(warned(&out, wild_fixed[i]), "%s: no warning for %s", a->name,
			      wild_fixed[i]);
		if (strcmp(a->name, "claude-code") == 0 || strcmp(a->name, "copilot") == 0)
			check_file(a->name, &out, wild_fixed[i], false);
	}
	/* the wildcard still allows the other names under it */
	if (lists)
		ck_assert_msg(a->explain(p, &o, "build.google.internal", 0, mech, sizeof(mech)),
			      "%s: %s", a->name, mech);
	render_out_free(&out);
	policy_free(p);
}
END_TEST

/* allowPrivate covering the addresses: rendered as before, no warning. */
START_TEST(allow_private_keeps_them)
{
	struct halo_policy *p =
	    load("egress:\n"
		 "  allowedDomains: [localhost, 169.254.169.254, \"::1\"]\n"
		 "  allowPrivate: [127.0.0.0/8, 169.254.169.254/32, \"::1/128\"]\n");
	const struct render_adapter *a = render_adapter_find("claude-code");
	struct render_opts o = {.os = RENDER_OS_LINUX, .version = NULL};
	struct render_out out;
	struct halo_err e = {{0}};

	ck_assert_int_eq(render_policy(a, p, &o, &out, &e), 0);
	check_file("claude-code", &out, "localhost", true);
	check_file("claude-code", &out, "169.254.169.254", true);
	check_file("claude-code", &out, "::1", true);
	ck_assert(!warned(&out, "localhost"));
	render_out_free(&out);
	policy_free(p);
}
END_TEST

static const struct {
	const char *entry;
	bool refused;
	enum policy_addr_class cls;
} rows[] = {
    {"localhost", true, POLICY_ADDR_LOOPBACK},
    {"localhost:8080", true, POLICY_ADDR_LOOPBACK},
    {"a.b.localhost", true, POLICY_ADDR_LOOPBACK},
    {"*.localhost", true, POLICY_ADDR_LOOPBACK},
    {"localhost.localdomain", true, POLICY_ADDR_LOOPBACK},
    {"ip6-localhost", true, POLICY_ADDR_LOOPBACK},
    {"metadata.google.internal", true, POLICY_ADDR_METADATA},
    {"127.0.0.1", true, POLICY_ADDR_LOOPBACK},
    {"127.9.9.9:22", true, POLICY_ADDR_LOOPBACK},
    {"10.1.2.3", true, POLICY_ADDR_PRIVATE},
    {"10.20.1.1", false, POLICY_ADDR_PRIVATE}, /* allowPrivate 10.20.0.0/16 */
    {"169.254.169.254", true, POLICY_ADDR_METADATA},
    {"169.254.1.1", true, POLICY_ADDR_LINK_LOCAL},
    {"100.64.0.1", true, POLICY_ADDR_CGNAT},
    {"::1", true, POLICY_ADDR_LOOPBACK},
    {"[::1]:443", true, POLICY_ADDR_LOOPBACK},
    {"::ffff:10.1.2.3", true, POLICY_ADDR_PRIVATE},
    {"fe80::1", true, POLICY_ADDR_LINK_LOCAL},
    {"8.8.8.8", false, POLICY_ADDR_PUBLIC},
    {"example.com", false, POLICY_ADDR_PUBLIC},
    {"*.example.com", false, POLICY_ADDR_PUBLIC},
    {"notlocalhost", false, POLICY_ADDR_PUBLIC},
    {"localhost.example.com", false, POLICY_ADDR_PUBLIC},
    {"*.metadata.google.internal", false, POLICY_ADDR_PUBLIC},
    {"", false, POLICY_ADDR_PUBLIC},
    {"a b", false, POLICY_ADDR_PUBLIC},
};

START_TEST(entry_address_refused_table)
{
	static struct halo_policy *p;
	enum policy_addr_class c = POLICY_ADDR_PUBLIC;

	p = load("egress: {allowPrivate: [10.20.0.0/16]}\n");
	bool r = policy_entry_address_refused(p, rows[_i].entry, &c);
	ck_assert_msg(r == rows[_i].refused, "%s: %d", rows[_i].entry, r);
	if (r)
		ck_assert_msg(c == rows[_i].cls, "%s: class %s", rows[_i].entry,
			      policy_addr_class_name(c));
	ck_assert(!policy_entry_address_refused(p, NULL, NULL));
	policy_free(p);
}
END_TEST

static Suite *render_addr_suite(void)
{
	Suite *s = suite_create("render_addr");
	TCase *tc = tcase_create("addr");

	tcase_add_loop_test(tc, every_harness_leaves_refused_out, 0, (int)render_n_adapters());
	tcase_add_test(tc, allow_private_keeps_them);
	tcase_add_loop_test(tc, wildcard_over_fixed_name_denied, 0, (int)render_n_adapters());
	tcase_add_loop_test(tc, entry_address_refused_table, 0,
			    (int)(sizeof(rows) / sizeof(rows[0])));
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(render_addr_suite)
