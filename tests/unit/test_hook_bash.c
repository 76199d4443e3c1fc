/* halo-run hook: the corpus of Bash commands (tests/data/hook/bash_corpus.jsonl), each
 * one a whole Claude Code PreToolUse event for the Bash tool, with the verdict it must
 * get: program runners hiding a denied host, interpreters' code, aliases, toolchains
 * naming a host, and the ordinary work that must still pass. Every event goes through
 * the same reader the binary uses (hook_event_parse for Claude Code), not a shortcut.
 * The rows are written in tests/data/hook/bash_corpus.py, which makes the file. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hook/hook.h"
#include "tests/unit/policy_test.h"

#define CORPUS "tests/data/hook/bash_corpus.jsonl"

static const char policy_yaml[] = "sandbox:\n"
				  "  mode: workspace-write\n"
				  "egress:\n"
				  "  allowedDomains: [github.com, \"*.github.com\", ok.example, "
				  "registry.npmjs.org, pypi.org, files.pythonhosted.org]\n"
				  "  deniedDomains: [pastebin.com]\n";

/* The fields Claude Code writes for a Bash PreToolUse event (its hooks reference). */
static void check_shape(const cJSON *ev, size_t line)
{
	static const char *const strings[] = {"session_id",	 "transcript_path", "cwd",
					      "permission_mode", "hook_event_name", "tool_name",
					      "tool_use_id"};
	const cJSON *in = cJSON_GetObjectItemCaseSensitive(ev, "tool_input");

	for (size_t k = 0; k < sizeof(strings) / sizeof(strings[0]); k++)
		ck_assert_msg(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(ev, strings[k])),
			      "line %zu: no %s", line, strings[k]);
	ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(ev, "hook_event_name")->valuestring,
			 "PreToolUse");
	ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(ev, "tool_name")->valuestring, "Bash");
	ck_assert_msg(cJSON_IsObject(in), "line %zu: no tool_input", line);
	ck_assert_msg(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(in, "command")),
		      "line %zu: no command", line);
}

static int want_of(const char *w)
{
	if (strcmp(w, "allow") == 0)
		return HOOK_ALLOW;
	if (strcmp(w, "block") == 0)
		return HOOK_BLOCK;
	ck_assert_str_eq(w, "cannot");
	return HOOK_CANNOT;
}

START_TEST(test_bash_corpus)
{
	struct halo_policy *pol;
	struct policy_diags d = {0};
	struct hook_ctx ctx;
	size_t n = 0, by[3] = {0}, cap = 0, guards, bad = 0;
	char *line = NULL;
	ssize_t len;
	FILE *f = fopen(CORPUS, "r");

	ck_assert_msg(f, "%s: run from the source tree", CORPUS);
	ck_assert_msg(pt_load(policy_yaml, &pol, &d) == 0, "%s", pt_dump(&d));
	policy_diags_free(&d);
	ctx = (struct hook_ctx){.policy = pol, .cwd = "/home/alice/proj", .home = "/home/alice"};
	ctx.guard_names = policy_guard_names(&guards);
	ctx.n_guard_names = guards;
	while ((len = getline(&line, &cap, f)) > 0) {
		cJSON *row = cJSON_Parse(line);
		struct hook_event ev;
		struct hook_verdict v;
		char why[256] = "";

		n++;
		ck_assert_msg(row, "line %zu: not JSON", n);
		const cJSON *event = cJSON_GetObjectItemCaseSensitive(row, "event");
		const char *want = cJSON_GetStringValue(cJSON_GetObjectItem(row, "want"));
		const char *part = cJSON_GetStringValue(cJSON_GetObjectItem(row, "why"));
		ck_assert_msg(want && part && event, "line %zu: want, why, event", n);
		check_shape(event, n);
		char *json = cJSON_PrintUnformatted(event);
		ck_assert_int_eq(hook_event_parse(json, strlen(json), HOOK_HARNESS_CLAUDE_CODE, &ev,
						  why, sizeof(why)),
				 0);
		hook_event_judge(&ctx, &ev, &v);
		const char *cmd =
		    cJSON_GetObjectItem(cJSON_GetObjectItem(event, "tool_input"), "command")
			->valuestring;
		/* Every wrong row is printed, then the test fails once. */
		if ((int)v.outcome != want_of(want) || !strstr(v.reason, part)) {
			fprintf(stderr, "line %zu: %s\n  got %d (%s), want %s '%s'\n", n, cmd,
				v.outcome, v.reason, want, part);
			bad++;
		}
		ck_assert(!strchr(v.reason, '\n'));
		by[v.outcome]++;
		hook_event_free(&ev);
		free(json);
		cJSON_Delete(row);
	}
	free(line);
	fclose(f);
	policy_free(pol);
	ck_assert_msg(bad == 0, "%zu of %zu rows judged wrongly (listed above)", bad, n);
	/* A corpus, not a list: bypasses and the controls they must not catch. */
	ck_assert_uint_ge(n, 200);
	ck_assert_uint_ge(by[HOOK_ALLOW], 80);
	ck_assert_uint_ge(by[HOOK_BLOCK], 100);
	ck_assert_uint_ge(by[HOOK_CANNOT], 5);
}
END_TEST

/* Runners repeat text: an alias once per use, parallel once per argument. A command
 * that would make the judge read more than its budget cannot be judged (blocked) and
 * ends quickly, since a hook that times out lets the call through. */
START_TEST(test_reread_budget)
{
	static const char *const shapes[] = {"alias a='%s'; ", "parallel 'echo %s {}' :::"};
	struct halo_policy *pol;
	struct policy_diags d = {0};
	struct hook_verdict v;
	size_t body = 64 * 1024, uses = 300;

	ck_assert_int_eq(pt_load(policy_yaml, &pol, &d), 0);
	policy_diags_free(&d);
	struct hook_ctx ctx = {.policy = pol, .cwd = "/home/alice/proj", .home = "/home/alice"};
	for (size_t k = 0; k < 2; k++) {
		char *val = malloc(body + 1), *cmd = malloc(2 * body + uses * 4 + 64);
		memset(val, 'x', body);
		val[body] = 0;
		int n = sprintf(cmd, shapes[k], val);
		for (size_t u = 0; u < uses; u++)
			n += sprintf(cmd + n, k ? " b" : "a; ");
		hook_check_command(&ctx, cmd, (size_t)n, &v);
		ck_assert_msg(v.outcome == HOOK_CANNOT, "[%zu] got %d (%s)", k, v.outcome,
			      v.reason);
		ck_assert_ptr_nonnull(strstr(v.reason, "MiB of text"));
		/* the same with a few uses is read whole */
		n = sprintf(cmd, shapes[k], val);
		sprintf(cmd + n, k ? " b c" : "a; a");
		hook_check_command(&ctx, cmd, strlen(cmd), &v);
		ck_assert_msg(v.outcome == HOOK_ALLOW, "[%zu] got %d (%s)", k, v.outcome, v.reason);
		free(val);
		free(cmd);
	}
	policy_free(pol);
}
END_TEST

static Suite *hook_bash_suite(void)
{
	Suite *s = suite_create("hook_bash");
	TCase *tc = tcase_create("corpus");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_bash_corpus);
	tcase_add_test(tc, test_reread_budget);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(hook_bash_suite)
