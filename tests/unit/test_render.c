/* render/: no silent drop (every field of the policy model is rendered or warned
 * about by every adapter, checked against the model itself), no bypass in any
 * rendering, every rendered key in its adapter's cited key table, and import:
 * round trips that Decide() the same hosts, and hostile inputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "render/render_int.h"
#include "tests/unit/policy_test.h"

/* A new member of struct halo_policy must be added to render/render.h's field list
 * (and so to every adapter's disposition table) before this compiles again; for a
 * derived member, update the size here after checking it needs no rendering. */
_Static_assert(sizeof(struct halo_policy) == 568 + 96,
	       "struct halo_policy changed: add the field to enum render_field (render.h), "
	       "every adapter's disp table and render_field_in_force, then update this size");
_Static_assert(RENDER_N_FIELDS == 35, "a field was added: update the full policy below");

/* Every field of the schema set. */
static const char full_yaml[] =
    "sandbox:\n"
    "  mode: workspace-write\n"
    "  writableRoots: [/opt/build-cache]\n"
    "  protectedPaths: [~/.config/acme, \".secret*\"]\n"
    "  allowRead: [~/.aws/config]\n"
    "  failIfUnavailable: true\n"
    "  guardPersistence: true\n"
    "  caches: host\n"
    "  unixSockets: [~/agent.sock]\n"
    "  macos: {allowTrustd: true}\n"
    "egress:\n"
    "  default: deny\n"
    "  allowedDomains: [ai.acme.example]\n"
    "  presets: [vcs]\n"
    "  deniedDomains: [pastebin.com]\n"
    "  allowPrivate: [10.20.0.0/16]\n"
    "  hostPorts: [4873]\n"
    "  upstreamProxy: http://proxy.acme.example:8080\n"
    "  trustedCAs: [/etc/ssl/corp-root.pem]\n"
    "  credentials: [{host: ai.acme.example, header: X-Api-Key, value: \"${ACME_KEY}\"}]\n"
    "  requestRules: [{host: ai.acme.example, methods: [POST], paths: [\"/v1/*\"]}]\n"
    "gateway: ai.acme.example\n"
    "limits: {cpuSeconds: 60, memoryMB: 4096, fileSizeMB: 1024, openFiles: 1024,\n"
    "         processes: 1024, wallSeconds: 900, sessionIdleSeconds: 1800,\n"
    "         connections: 128, wildcardNames: 100, wildcardNamesPerMinute: 30}\n"
    "env: {pass: [GOPATH], set: {CI: \"true\"}}\n"
    "permissions: {sandbox: workspace-write}\n";

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

START_TEST(every_field_has_a_disposition)
{
	for (size_t a = 0; a < render_n_adapters(); a++)
		for (int f = 0; f < RENDER_N_FIELDS; f++)
			ck_assert_msg(render_adapter_at(a)->disp[f] != RD_NONE,
				      "%s names no disposition for %s", render_adapter_at(a)->name,
				      render_field_name((enum render_field)f));
}
END_TEST

static bool field_known(const char *name)
{
	for (int f = 0; f < RENDER_N_FIELDS; f++)
		if (strcmp(render_field_name((enum render_field)f), name) == 0)
			return true;
	return false;
}

/* The model's own rendering (policy_to_json) names every schema key: each must be
 * a field render/ knows. */
START_TEST(fields_cover_the_model)
{
	struct halo_policy *p = load(full_yaml);
	char *json = policy_to_json(p);
	cJSON *root = cJSON_Parse(json), *blk, *k;
	char name[128];
	size_t seen = 0;

	ck_assert_ptr_nonnull(root);
	cJSON_ArrayForEach(blk, root)
	{
		if (strcmp(blk->string, "effective") == 0)
			continue;
		if (!cJSON_IsObject(blk)) {
			ck_assert_msg(field_known(blk->string), "%s unknown to render/",
				      blk->string);
			seen++;
			continue;
		}
		cJSON_ArrayForEach(k, blk)
		{
			cJSON *sub;
			if (cJSON_IsObject(k) && strcmp(k->string, "set") != 0) {
				/* a nested block (sandbox.macos): its keys are the fields */
				cJSON_ArrayForEach(sub, k)
				{
					snprintf(name, sizeof(name), "%s.%s.%s", blk->string,
						 k->string, sub->string);
					ck_assert_msg(field_known(name),
						      "%s is not in render/'s field table", name);
					seen++;
				}
				continue;
			}
			snprintf(name, sizeof(name), "%s.%s", blk->string, k->string);
			ck_assert_msg(field_known(name), "%s is not in render/'s field table",
				      name);
			seen++;
		}
	}
	/* 28 schema keys (permissions.sandbox is folded into sandbox.mode by to_json),
	 * plus the floor and --proxy (a render option): every other render field is a
	 * model field. */
	ck_assert_uint_eq(seen + 3, RENDER_N_FIELDS);
	cJSON_Delete(root);
	free(json);
	policy_free(p);
}
END_TEST

static void check_dispositions(const struct render_adapter *a, const struct halo_policy *p,
			       enum render_os os)
{
	struct render_opts o = {.os = os, .version = NULL};
	struct render_out out;
	struct halo_err e;

	ck_assert_int_eq(render_policy(a, p, &o, &out, &e), 0);
	for (int f = 0; f < RENDER_N_FIELDS; f++) {
		unsigned h = out.handled[f];
		const char *n = render_field_name((enum render_field)f);
		if (!render_field_in_force(p, (enum render_field)f))
			continue;
		ck_assert_msg(h != 0, "%s (%s): %s neither rendered nor warned", a->name,
			      render_os_name(os), n);
		if (a->disp[f] == RD_WARN)
			ck_assert_msg(h == RF_WARNED, "%s: %s declared warn-only but rendered",
				      a->name, n);
		if (a->disp[f] == RD_KEY && os != RENDER_OS_WINDOWS)
			ck_assert_msg(h & RF_RENDERED, "%s: %s declared rendered but only warned",
				      a->name, n);
	}
	for (size_t i = 0; i < out.n_w; i++)
		ck_assert_ptr_nonnull(strchr(out.w[i].text, ':'));
	render_out_free(&out);
}

START_TEST(no_silent_drop)
{
	struct halo_policy *p = load(full_yaml);

	for (size_t a = 0; a < render_n_adapters(); a++)
		for (int os = 0; os < 3; os++)
			check_dispositions(render_adapter_at(a), p, (enum render_os)os);
	policy_free(p);
}
END_TEST

static const char *const variants[] = {
    full_yaml,
    "egress: {default: allow, deniedDomains: [pastebin.com]}\n",
    "sandbox: {mode: read-only}\negress: {allowedDomains: [a.example]}\n",
    "sandbox: {mode: off}\nlimits: {cpuSeconds: 5}\n",
    "sandbox: {failIfUnavailable: false}\negress: {default: allow}\n",
    "{}\n",
};

/* Invariant 1 on the text, and every rendered key in the adapter's cited table. */
static bool key_cited(const struct render_adapter *a, const char *file, const char *path)
{
	for (size_t i = 0; i < a->n_keys; i++) {
		const char *k = a->keys[i].path;
		size_t n = strlen(k);
		if (strcmp(a->keys[i].file, file) != 0)
			continue;
		if (strcmp(k, path) == 0)
			return true;
		/* "x.*": any key directly under x */
		if (n > 2 && strcmp(k + n - 2, ".*") == 0 && strncmp(path, k, n - 1) == 0 &&
		    !strchr(path + n - 1, '.'))
			return true;
		if (n > 2 && strcmp(k + n - 2, ".*") == 0 && strncmp(path, k, n - 1) == 0)
			return true; /* map keys may hold dots (domains, paths) */
	}
	return false;
}

static void walk(const struct render_adapter *a, const char *file, const cJSON *o,
		 const char *prefix)
{
	const cJSON *k;
	char path[4400];

	cJSON_ArrayForEach(k, o)
	{
		snprintf(path, sizeof(path), "%s%s%s", prefix, prefix[0] ? "." : "", k->string);
		if (cJSON_IsObject(k) && !key_cited(a, file, path))
			walk(a, file, k, path);
		else
			ck_assert_msg(key_cited(a, file, path), "%s: %s: %s cites no source",
				      a->name, file, path);
	}
}

START_TEST(no_bypass_and_keys_cited)
{
	for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
		struct halo_policy *p = load(variants[v]);
		for (size_t i = 0; i < render_n_adapters(); i++) {
			const struct render_adapter *a = render_adapter_at(i);
			for (int os = 0; os < 3; os++) {
				struct render_opts o = {.os = (enum render_os)os, .version = NULL};
				struct render_out out;
				struct halo_err e;
				ck_assert_int_eq(render_policy(a, p, &o, &out, &e), 0);
				for (size_t f = 0; f < out.n_files; f++) {
					const char *t = out.files[f].text;
					cJSON *root = NULL;
					ck_assert_ptr_null(render_find_bypass(t));
					ck_assert_ptr_null(strstr(t, "danger-full-access"));
					ck_assert_ptr_null(strstr(t, "dangerouslyDisableSandbox"));
					ck_assert_ptr_null(strstr(t, "insecure_none"));
					if (strstr(out.files[f].name, ".toml"))
						ck_assert_int_eq(
						    render_toml_parse(t, strlen(t), &root, &e), 0);
					else
						root = cJSON_Parse(t);
					ck_assert_msg(root != NULL, "%s: %s does not parse",
						      a->name, out.files[f].name);
					walk(a, out.files[f].name, root, "");
					cJSON_Delete(root);
				}
				render_out_free(&out);
			}
		}
		policy_free(p);
	}
	ck_assert_ptr_nonnull(render_find_bypass("x = \"danger-full-access\""));
	ck_assert_ptr_nonnull(render_find_bypass("{\"type\": \"insecure_none\"}"));
	ck_assert_ptr_nonnull(render_find_bypass("{\"allowUnsandboxedCommands\":\ttrue}"));
	ck_assert_ptr_nonnull(render_find_bypass("{\"allowUnsandboxedCommands\" : true}"));
	ck_assert_ptr_null(render_find_bypass("{\"allowUnsandboxedCommands\":\tfalse}"));
	ck_assert_ptr_null(render_find_bypass("[\"~/danger-full-access.d\"]"));
}
END_TEST

START_TEST(copilot_pins)
{
	struct halo_policy *p = load(full_yaml);
	const struct render_adapter *a = render_adapter_find("copilot");
	struct render_opts old = {.os = RENDER_OS_LINUX, .version = "1.0.92"},
			   ok = {.os = RENDER_OS_LINUX, .version = "1.0.93"};
	struct render_opts bad = {.os = RENDER_OS_LINUX, .version = "latest"};
	struct render_out out;
	struct halo_err e;

	ck_assert_int_lt(render_policy(a, p, &old, &out, &e), 0);
	ck_assert_ptr_nonnull(strstr(e.msg, "1.0.93"));
	render_out_free(&out);
	ck_assert_int_lt(render_policy(a, p, &bad, &out, &e), 0);
	render_out_free(&out);
	ck_assert_int_eq(render_policy(a, p, &ok, &out, &e), 0);
	for (size_t i = 0; i < out.n_w; i++)
		ck_assert_ptr_null(strstr(out.w[i].text, "locked out"));
	render_out_free(&out);
	policy_free(p);
}
END_TEST

/* ---------------------------------------------------------------- import */

static const struct render_import_world world = {&pt_ctx, NULL, false};

static struct halo_policy *import_text(const char *text, enum render_import_kind k,
				       enum render_import_kind *got)
{
	struct render_import r;
	struct halo_err e = {{0}};
	struct halo_policy *p;

	ck_assert_msg(render_import(text, strlen(text), k, &world, &r, &e) == 0, "import: %s",
		      e.msg);
	if (got)
		*got = r.kind;
	p = load(r.yaml);
	render_import_free(&r);
	return p;
}

static const char *const hosts[] = {
    "ai.acme.example", "github.com",	 "api.github.com",   "gist.github.com",
    "pastebin.com",    "example.org",	 "acme.example",     "raw.githubusercontent.com",
    "gitlab.com",      "x.pastebin.com", "evil.example.com", "codeberg.org",
};

static void same_decisions(const struct halo_policy *a, const struct halo_policy *b)
{
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		struct policy_decision da, db;
		policy_decide(a, hosts[i], strlen(hosts[i]), &da);
		policy_decide(b, hosts[i], strlen(hosts[i]), &db);
		ck_assert_msg(da.allow == db.allow, "%s: %s before, %s after the round trip",
			      hosts[i], da.allow ? "allow" : "deny", db.allow ? "allow" : "deny");
	}
}

static bool protects(const struct halo_policy *p, const char *abs)
{
	for (size_t i = 0; i < p->protected_abs.n; i++)
		if (policy_path_within(abs, p->protected_abs.items[i]))
			return true;
	return false;
}

/* Render the full policy for `harness`, import the first file back (kind guessed):
 * the same kind, the same decisions, and protected what `check` lists (each NULL-ended). */
static void round_trip(const char *harness, enum render_import_kind want, const char *const *abs,
		       const char *const *globs)
{
	struct halo_policy *p = load(full_yaml), *q;
	struct render_opts o = {.os = RENDER_OS_LINUX, .version = NULL};
	struct render_out out;
	struct halo_err e;
	enum render_import_kind got;

	ck_assert_int_eq(render_policy(render_adapter_find(harness), p, &o, &out, &e), 0);
	q = import_text(out.files[0].text, RI_GUESS, &got);
	ck_assert_int_eq(got, want);
	same_decisions(p, q);
	for (; *abs; abs++)
		ck_assert_msg(protects(q, *abs), "%s: %s not protected", harness, *abs);
	for (; *globs; globs++)
		ck_assert_msg(pt_list_has(&q->protected_globs, *globs), "%s: no %s", harness,
			      *globs);
	render_out_free(&out);
	policy_free(q);
	policy_free(p);
}

START_TEST(round_trip_claude_code)
{
	static const char *const abs[] = {"/home/alice/.config/acme/key",
					  "/home/alice/.ssh/id_ed25519", NULL};
	static const char *const globs[] = {".secret*", NULL};

	round_trip("claude-code", RI_CLAUDE_CODE, abs, globs);
}
END_TEST

START_TEST(round_trip_codex)
{
	static const char *const abs[] = {"/home/alice/.config/acme/key", NULL};
	static const char *const globs[] = {NULL};

	round_trip("codex", RI_CODEX, abs, globs);
}
END_TEST

static const char srt_json[] =
    "{\"network\": {\"allowedDomains\": [\"ai.acme.example\", \"github.com\", \"*.github.com\","
    " \"*.githubusercontent.com\", \"gitlab.com\", \"*.gitlab.com\", \"bitbucket.org\","
    " \"*.bitbucket.org\", \"codeberg.org\"],"
    " \"deniedDomains\": [\"pastebin.com\"], \"allowLocalBinding\": true},"
    " \"filesystem\": {\"denyRead\": [\"~/.config/acme\"], \"allowWrite\": [\".\"],"
    " \"denyWrite\": [\"~/.config/acme\"]}}";

START_TEST(round_trip_srt)
{
	struct halo_policy *p = load(full_yaml), *q;
	enum render_import_kind got;

	q = import_text(srt_json, RI_GUESS, &got);
	ck_assert_int_eq(got, RI_SRT);
	same_decisions(p, q);
	ck_assert(protects(q, "/home/alice/.config/acme"));
	policy_free(q);
	policy_free(p);
}
END_TEST

START_TEST(import_vendor_wildcards)
{
	enum render_import_kind got;
	struct halo_policy *q =
	    import_text("{\"type\": \"workspace_readwrite\", \"networkPolicy\": {\"default\": "
			"\"deny\", \"allow\": [\"*.acme.example\"]}}",
			RI_GUESS, &got);
	struct policy_decision d;

	ck_assert_int_eq(got, RI_CURSOR);
	policy_decide(q, "acme.example", 12, &d); /* Cursor's "*.x" includes the apex */
	ck_assert(d.allow);
	policy_free(q);
	q = import_text("{\"sandbox\": {\"enabled\": true, \"userPolicy\": {\"network\": "
			"{\"blockedHosts\": [\"pastebin.com\"]}}}}",
			RI_GUESS, &got);
	ck_assert_int_eq(got, RI_COPILOT);
	policy_decide(q, "x.pastebin.com", 14, &d); /* blockedHosts block subdomains */
	ck_assert(!d.allow);
	policy_free(q);
}
END_TEST

static const struct {
	const char *text;
	enum render_import_kind kind;
	const char *want; /* in the error */
} hostile[] = {
    {"{\"sandbox\": ", RI_GUESS, "not valid JSON"},
    {"{\"sandbox\": {\"network\": {\"allowedDomains\": \"a.com\"}}}", RI_CLAUDE_CODE,
     "allowedDomains: expected a list"},
    {"{\"sandbox\": {\"network\": {\"allowedDomains\": [1]}}}", RI_CLAUDE_CODE, "each entry"},
    {"{\"sandbox\": {\"enabled\": \"yes\"}}", RI_CLAUDE_CODE, "sandbox.enabled: expected true"},
    {"{\"sandbox\": []}", RI_CLAUDE_CODE, "sandbox: expected an object"},
    {"[1, 2]", RI_GUESS, "top level"},
    {"{\"model\": \"x\"}", RI_GUESS, "--from"},
    {"x = \"\"\"multi\nline\"\"\"\n", RI_CODEX, "multi-line"},
    {"sandbox_mode = \n", RI_CODEX, "line 1"},
    {"a = 1\na = 2\n", RI_CODEX, "duplicate key"},
    {"[t]\n[t]\n", RI_CODEX, "defined twice"},
    {"sandbox_mode = 5\n", RI_CODEX, "sandbox_mode: expected a string"},
    {"[experimental_network]\nenabled = true\ndomains = {\"a.com\" = \"maybe\"}\n", RI_CODEX,
     "allow\" or \"deny"},
    {"x = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n", RI_CODEX,
     "too deeply"},
    {"d = 1979-05-27\n", RI_CODEX, "dates"},
    {"s = \"\\q\"\n", RI_CODEX, "bad escape"},
};

START_TEST(import_hostile)
{
	struct render_import r;
	struct halo_err e;

	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		memset(&e, 0, sizeof(e));
		ck_assert_msg(render_import(hostile[i].text, strlen(hostile[i].text),
					    hostile[i].kind, &world, &r, &e) < 0,
			      "case %zu accepted", i);
		ck_assert_msg(strstr(e.msg, hostile[i].want), "case %zu: '%s' lacks '%s'", i, e.msg,
			      hostile[i].want);
		render_import_free(&r);
	}
	/* Huge, and a NUL byte. */
	size_t n = RENDER_IMPORT_MAX + 10;
	char *big = malloc(n);
	ck_assert_ptr_nonnull(big);
	memset(big, ' ', n);
	big[0] = '{';
	ck_assert_int_lt(render_import(big, n, RI_GUESS, &world, &r, &e), 0);
	ck_assert_ptr_nonnull(strstr(e.msg, "larger"));
	free(big);
	ck_assert_int_lt(render_import("{}\0{}", 5, RI_CLAUDE_CODE, &world, &r, &e), 0);
	ck_assert_ptr_nonnull(strstr(e.msg, "NUL"));
}
END_TEST

/* Entries validation refuses are left out with a warning, so the result validates. */
START_TEST(import_drops_what_validation_refuses)
{
	const char *t = "{\"sandbox\": {\"enabled\": true, \"filesystem\": {\"allowWrite\": "
			"[\"/\", \"/etc\", \"~/.ssh/x\"]}, \"network\": {\"allowedDomains\": "
			"[\"*\", \"https://a.com/\", \"OK.Example\"], \"allowManagedDomainsOnly\": "
			"true}}, \"model\": \"opus\"}";
	struct render_import r;
	struct halo_err e;
	struct halo_policy *p;

	ck_assert_int_eq(render_import(t, strlen(t), RI_GUESS, &world, &r, &e), 0);
	ck_assert_ptr_nonnull(strstr(r.yaml, "\"ok.example\""));
	ck_assert_ptr_null(strstr(r.yaml, "writableRoots"));
	ck_assert_uint_ge(r.n_warnings, 6);
	p = load(r.yaml);
	policy_free(p);
	render_import_free(&r);
}
END_TEST

static Suite *render_suite(void)
{
	Suite *s = suite_create("render");
	TCase *t = tcase_create("render");

	tcase_set_timeout(t, 60);
	tcase_add_test(t, every_field_has_a_disposition);
	tcase_add_test(t, fields_cover_the_model);
	tcase_add_test(t, no_silent_drop);
	tcase_add_test(t, no_bypass_and_keys_cited);
	tcase_add_test(t, copilot_pins);
	tcase_add_test(t, round_trip_claude_code);
	tcase_add_test(t, round_trip_codex);
	tcase_add_test(t, round_trip_srt);
	tcase_add_test(t, import_vendor_wildcards);
	tcase_add_test(t, import_hostile);
	tcase_add_test(t, import_drops_what_validation_refuses);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(render_suite)
