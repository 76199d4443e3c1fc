/* hook --wrap's pure half (hook/rewrite.c) and the events it reads: the rewritten line
 * word by word, a NUL refused, the answer's shape (the whole input kept, the command
 * replaced, never a permissionDecision), and SessionEnd events with their session_id. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hook/hook.h"
#include "tests/unit/unit.h"

static const struct {
	const char *cmd;
	size_t len;	  /* 0: strlen */
	const char *want; /* NULL: refused with -EINVAL */
} lines[] = {
    {"ls", 0, "'h' '-c' 'ls'"},
    {"", 0, "'h' '-c' ''"},
    {"it's", 0, "'h' '-c' 'it'\\''s'"},
    {"'", 0, "'h' '-c' ''\\'''"},
    {"a\nb", 0, "'h' '-c' 'a\nb'"},
    {"echo $'x' `id` $(id) \\ \"q\"", 0, "'h' '-c' 'echo $'\\''x'\\'' `id` $(id) \\ \"q\"'"},
    {"cat <<'EOF'\n$HOME\nEOF", 0, "'h' '-c' 'cat <<'\\''EOF'\\''\n$HOME\nEOF'"},
    {"echo a\0rm -rf ~", 15, NULL},
    {"\0", 1, NULL},
};

START_TEST(wrap_lines)
{
	const char *pre[] = {"h", "-c"};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		size_t len = lines[i].len ? lines[i].len : strlen(lines[i].cmd);
		char *out = (char *)1;
		int rc = hook_wrap_line(pre, 2, lines[i].cmd, len, &out);
		if (!lines[i].want) {
			ck_assert_int_eq(rc, -EINVAL);
			ck_assert_ptr_null(out);
			continue;
		}
		ck_assert_int_eq(rc, 0);
		ck_assert_str_eq(out, lines[i].want);
		free(out);
	}
	char *q;
	ck_assert_int_eq(hook_shell_quote("a'b", 3, &q), 0);
	ck_assert_str_eq(q, "'a'\\''b'");
	free(q);
	ck_assert_int_eq(hook_shell_quote("a\0b", 3, &q), -EINVAL);
}
END_TEST

static void parse(const char *json, struct hook_event *ev)
{
	char why[256];

	ck_assert_msg(hook_event_parse(json, strlen(json), HOOK_HARNESS_CLAUDE_CODE, ev, why,
				       sizeof(why)) == 0,
		      "%s", why);
}

START_TEST(answer_shape)
{
	struct hook_event ev;
	char *json;

	parse("{\"session_id\":\"s\",\"cwd\":\"/w\",\"hook_event_name\":\"PreToolUse\","
	      "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls\",\"timeout\":5,"
	      "\"run_in_background\":true,\"description\":\"d\"}}",
	      &ev);
	ck_assert_str_eq(hook_event_command(&ev), "ls");
	ck_assert_str_eq(ev.session_id, "s");
	ck_assert_int_eq(hook_wrap_answer(&ev, "'x' 'ls'", &json), 0);
	cJSON *a = cJSON_Parse(json);
	cJSON *h = cJSON_GetObjectItemCaseSensitive(a, "hookSpecificOutput");
	cJSON *in = cJSON_GetObjectItemCaseSensitive(h, "updatedInput");
	ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(h, "hookEventName")->valuestring,
			 "PreToolUse");
	ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(h, "permissionDecision"));
	ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(a, "decision"));
	ck_assert_int_eq(cJSON_GetArraySize(a), 1);
	ck_assert_int_eq(cJSON_GetArraySize(h), 2); /* hookEventName, updatedInput */
	ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(in, "command")->valuestring, "'x' 'ls'");
	ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(in, "timeout")->valueint, 5);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(in, "run_in_background")));
	ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(in, "description")->valuestring, "d");
	ck_assert_int_eq(cJSON_GetArraySize(in), 4);
	cJSON_Delete(a);
	free(json);
	hook_event_free(&ev);

	/* Only Bash is rewritten; a command that is not a string is not. */
	parse("{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Read\","
	      "\"tool_input\":{\"file_path\":\"/w/a\"}}",
	      &ev);
	ck_assert_ptr_null(hook_event_command(&ev));
	ck_assert(!hook_event_is_shell(&ev));
	hook_event_free(&ev);
	/* ... but it is still a shell call, which --wrap must block rather than let by. */
	parse("{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\","
	      "\"tool_input\":{\"command\":[\"ls\"]}}",
	      &ev);
	ck_assert_ptr_null(hook_event_command(&ev));
	ck_assert(hook_event_is_shell(&ev));
	hook_event_free(&ev);
	parse("{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"mcp__x__Bash\","
	      "\"tool_input\":{\"command\":\"ls\"}}",
	      &ev);
	ck_assert(!hook_event_is_shell(&ev));
	hook_event_free(&ev);
}
END_TEST

START_TEST(session_end_events)
{
	struct hook_event ev;
	char why[256];
	static const char *const bad[] = {
	    "{\"session_id\":7,\"hook_event_name\":\"SessionEnd\"}",
	    "{\"session_id\":\"\",\"hook_event_name\":\"SessionEnd\"}",
	    "{\"session_id\":\"a\",\"session_id\":\"b\",\"hook_event_name\":\"SessionEnd\"}",
	};

	parse("{\"session_id\":\"abc-1\",\"cwd\":\"/w\",\"hook_event_name\":\"SessionEnd\","
	      "\"reason\":\"exit\"}",
	      &ev);
	ck_assert(ev.session_end);
	ck_assert_str_eq(ev.session_id, "abc-1");
	ck_assert_ptr_null(ev.tool);
	ck_assert_ptr_null(hook_event_command(&ev));
	hook_event_free(&ev);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(hook_event_parse(bad[i], strlen(bad[i]), HOOK_HARNESS_CLAUDE_CODE,
						  &ev, why, sizeof(why)),
				 -EINVAL);
		hook_event_free(&ev);
	}
}
END_TEST

static Suite *hook_wrap_suite(void)
{
	Suite *s = suite_create("hook_wrap");
	TCase *tc = tcase_create("rewrite");

	tcase_add_test(tc, wrap_lines);
	tcase_add_test(tc, answer_shape);
	tcase_add_test(tc, session_end_events);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(hook_wrap_suite)
