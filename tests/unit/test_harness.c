/* The one harness table (policy/harness.c), read by every command that takes a harness
 * name: one row per (name, command) with the canonical harness it must give, or NULL
 * for a refusal, run through each command's own parser (hook, hook --wrap, render,
 * check --harness, import --from). Then the table against the render adapters and the
 * import kinds both ways, and the message lists. */
#include <stdio.h>
#include <string.h>

#include "hook/hook.h"
#include "render/render.h"
#include "runner/runner_int.h"
#include "tests/unit/unit.h"

enum verb { V_HOOK, V_WRAP, V_RENDER, V_CHECK, V_IMPORT };

static const char *const verb_names[] = {"hook", "hook --wrap", "policy render", "check",
					 "policy import --from"};

/* The canonical name `name` is taken as by `verb`, or NULL when refused. */
static const char *through(enum verb v, const char *name)
{
	static const char *const hook_names[] = {
	    [HOOK_HARNESS_CLAUDE_CODE] = "claude-code",
	    [HOOK_HARNESS_CODEX] = "codex",
	    [HOOK_HARNESS_GEMINI] = "gemini",
	};
	enum hook_harness h;
	enum render_import_kind k;
	const struct render_adapter *a;
	const struct policy_harness *p;

	switch (v) {
	case V_HOOK:
		return hook_harness_parse(name, &h) == 0 ? hook_names[h] : NULL;
	case V_WRAP:
		p = policy_harness_find(name, POLICY_HARNESS_WRAP);
		return p && hook_harness_parse(name, &h) == 0 ? p->name : NULL;
	case V_RENDER:
		return (a = render_adapter_find(name)) ? a->name : NULL;
	case V_CHECK:
		return runner_harness_known(name) && (a = render_adapter_find(name)) ? a->name
										     : NULL;
	case V_IMPORT:
		return render_import_kind_parse(name, &k) == 0 ? render_import_kind_name(k) : NULL;
	}
	return NULL;
}

static const struct {
	const char *name;
	enum verb v;
	const char *want; /* NULL: refused */
} rows[] = {
    /* The alias of issue 30: accepted by hook, refused by render before. */
    {"claude", V_HOOK, "claude-code"},
    {"claude", V_RENDER, "claude-code"},
    {"claude", V_CHECK, "claude-code"},
    {"claude", V_IMPORT, "claude-code"},
    {"claude", V_WRAP, "claude-code"},
    {"claude-code", V_HOOK, "claude-code"},
    {"claude-code", V_RENDER, "claude-code"},
    {"claude-code", V_IMPORT, "claude-code"},
    {"claude-code", V_WRAP, "claude-code"},
    {"gemini-cli", V_HOOK, "gemini"},
    {"gemini-cli", V_RENDER, "gemini"},
    {"gemini-cli", V_CHECK, "gemini"},
    {"gemini", V_IMPORT, NULL}, /* no import of Gemini's settings */
    {"gemini", V_WRAP, NULL},	/* BeforeTool's tool_input: see the README */
    {"codex", V_HOOK, "codex"},
    {"codex", V_RENDER, "codex"},
    {"codex", V_IMPORT, "codex"},
    {"codex", V_WRAP, NULL}, /* updatedInput only with permissionDecision "allow" */
    {"copilot", V_RENDER, "copilot"},
    {"copilot", V_IMPORT, "copilot"},
    {"copilot", V_HOOK, NULL},
    {"cursor-agent", V_RENDER, "cursor"},
    {"cursor-agent", V_IMPORT, "cursor"},
    {"cursor", V_HOOK, NULL},
    {"opencode", V_RENDER, "opencode"},
    {"opencode", V_IMPORT, NULL},
    {"srt", V_IMPORT, "srt"},
    {"sandbox-runtime", V_IMPORT, "srt"},
    {"srt", V_RENDER, NULL},
    {"srt", V_HOOK, NULL},
    /* Exact names only: no case folding, prefixes, padding or the "all" of check. */
    {"Claude", V_HOOK, NULL},
    {"CLAUDE-CODE", V_RENDER, NULL},
    {"claude-", V_RENDER, NULL},
    {"claude-code ", V_IMPORT, NULL},
    {"", V_HOOK, NULL},
    {"all", V_RENDER, NULL},
    {"all", V_IMPORT, NULL},
    {"guess", V_IMPORT, NULL},
    {"vim", V_CHECK, NULL},
};

START_TEST(names_through_every_command)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *got = through(rows[i].v, rows[i].name);
		ck_assert_msg(rows[i].want ? got && strcmp(got, rows[i].want) == 0 : got == NULL,
			      "%s '%s': want %s, got %s", verb_names[rows[i].v], rows[i].name,
			      rows[i].want ? rows[i].want : "refused", got ? got : "refused");
	}
}
END_TEST

/* Every name and alias of the table means the same harness in every command that
 * supports it, and is refused by the others. */
START_TEST(every_alias_everywhere)
{
	static const unsigned bit[] = {POLICY_HARNESS_HOOK, POLICY_HARNESS_WRAP,
				       POLICY_HARNESS_RENDER, POLICY_HARNESS_RENDER,
				       POLICY_HARNESS_IMPORT};

	for (size_t i = 0; i < policy_harness_count(); i++) {
		const struct policy_harness *h = policy_harness_at(i);
		const char *names[1 + POLICY_HARNESS_MAX_ALIASES] = {h->name, h->aliases[0],
								     h->aliases[1]};
		for (size_t n = 0; n < 1 + POLICY_HARNESS_MAX_ALIASES && names[n]; n++)
			for (enum verb v = V_HOOK; v <= V_IMPORT; v++) {
				const char *got = through(v, names[n]);
				if (h->supports & bit[v])
					ck_assert_msg(got && strcmp(got, h->name) == 0,
						      "%s '%s' gives %s", verb_names[v], names[n],
						      got ? got : "a refusal");
				else
					ck_assert_msg(!got, "%s '%s' should be refused",
						      verb_names[v], names[n]);
			}
	}
	ck_assert_ptr_null(policy_harness_at(policy_harness_count()));
}
END_TEST

/* The adapters and the import kinds are exactly the table's rows for them. */
START_TEST(table_matches_adapters_and_kinds)
{
	size_t render = 0, import = 0;

	for (size_t i = 0; i < policy_harness_count(); i++) {
		render += !!(policy_harness_at(i)->supports & POLICY_HARNESS_RENDER);
		import += !!(policy_harness_at(i)->supports & POLICY_HARNESS_IMPORT);
	}
	ck_assert_uint_eq(render, render_n_adapters());
	for (size_t i = 0; i < render_n_adapters(); i++)
		ck_assert_ptr_nonnull(
		    policy_harness_find(render_adapter_at(i)->name, POLICY_HARNESS_RENDER));
	ck_assert_uint_eq(import, RI_COPILOT); /* the kinds after RI_GUESS */
	for (enum render_import_kind k = RI_CLAUDE_CODE; k <= RI_COPILOT; k++)
		ck_assert_ptr_nonnull(
		    policy_harness_find(render_import_kind_name(k), POLICY_HARNESS_IMPORT));
}
END_TEST

START_TEST(message_lists)
{
	char buf[200], tiny[8];

	policy_harness_names(POLICY_HARNESS_HOOK, buf, sizeof(buf));
	ck_assert_str_eq(buf, "claude-code, codex or gemini");
	policy_harness_names(POLICY_HARNESS_WRAP, buf, sizeof(buf));
	ck_assert_str_eq(buf, "claude-code");
	policy_harness_names(POLICY_HARNESS_RENDER, buf, sizeof(buf));
	ck_assert_str_eq(buf, "claude-code, codex, copilot, gemini, opencode or cursor");
	policy_harness_names(POLICY_HARNESS_IMPORT, buf, sizeof(buf));
	ck_assert_str_eq(buf, "claude-code, codex, copilot, cursor or srt");
	/* Truncated, never overrun; the length it wanted comes back. */
	ck_assert_uint_eq(policy_harness_names(POLICY_HARNESS_HOOK, tiny, sizeof(tiny)),
			  strlen("claude-code, codex or gemini"));
	ck_assert_str_eq(tiny, "claude-");
}
END_TEST

/* Every tool of the matcher `render --hook` installs is one the hook judges. */
START_TEST(claude_matcher_names_judged_tools)
{
	char names[256], *save = NULL;

	snprintf(names, sizeof(names), "%s", hook_claude_code_matcher);
	for (char *t = strtok_r(names, "|", &save); t; t = strtok_r(NULL, "|", &save)) {
		char json[256], why[256];
		struct hook_event ev;
		int n = snprintf(json, sizeof(json),
				 "{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"%s\","
				 "\"tool_input\":{}}",
				 t);
		ck_assert_int_eq(hook_event_parse(json, (size_t)n, HOOK_HARNESS_CLAUDE_CODE, &ev,
						  why, sizeof(why)),
				 0);
		ck_assert_msg(ev.row != NULL, "%s: not a tool the hook judges", t);
		hook_event_free(&ev);
	}
}
END_TEST

static Suite *harness_suite(void)
{
	Suite *s = suite_create("harness");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, names_through_every_command);
	tcase_add_test(tc, every_alias_everywhere);
	tcase_add_test(tc, table_matches_adapters_and_kinds);
	tcase_add_test(tc, message_lists);
	tcase_add_test(tc, claude_matcher_names_judged_tools);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(harness_suite)
