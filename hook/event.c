/* The harnesses' pre-tool events, as their documentation describes them:
 *
 *   Claude Code  PreToolUse  {tool_name, tool_input, cwd, hook_event_name, ...}
 *   Codex        PreToolUse  the same shape (Bash: tool_input.command; apply_patch:
 *                            tool_input.command is the patch body)
 *   Gemini CLI   BeforeTool  {tool_name, tool_input, cwd, hook_event_name, ...}
 *
 * All three block a tool call on exit code 2 with the reason on stderr and let it run
 * on any other non-zero code, so an event the hook cannot judge is blocked too.
 *
 * The reader is strict where a lenient one would be a bypass: the input must be UTF-8
 * without NUL (a \u0000 would cut the command short here and not in the harness), and
 * the objects the hook reads must not repeat a key (JavaScript keeps the last one,
 * cJSON the first). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hook/hook_int.h"

enum tk { TK_SHELL, TK_PATCH, TK_READ, TK_WRITE, TK_FETCH, TK_FETCH_PROMPT, TK_READ_MANY };

struct tool_row {
	const char *name;
	enum tk kind;
	const char *keys[3]; /* where the command, path or URL is; the first present counts */
	bool required;
};

static const struct tool_row tools[] = {
    /* Claude Code (and Codex, which names its shell Bash in hook events) */
    {"Bash", TK_SHELL, {"command"}, true},
    /* Claude Code's second shell tool (off unless the service turns it on): its
     * command runs in bash as Bash's does, so it is judged and wrapped alike. */
    {"Monitor", TK_SHELL, {"command"}, true},
    {"Read", TK_READ, {"file_path"}, true},
    {"Write", TK_WRITE, {"file_path"}, true},
    {"Edit", TK_WRITE, {"file_path"}, true},
    {"MultiEdit", TK_WRITE, {"file_path"}, true},
    {"NotebookEdit", TK_WRITE, {"notebook_path"}, true},
    {"NotebookRead", TK_READ, {"notebook_path"}, true},
    {"Glob", TK_READ, {"path"}, false},
    {"Grep", TK_READ, {"path"}, false},
    {"LS", TK_READ, {"path"}, true},
    {"WebFetch", TK_FETCH, {"url"}, true},
    /* Codex */
    {"apply_patch", TK_PATCH, {"command", "patch", "input"}, true},
    {"shell", TK_SHELL, {"command"}, true},
    {"exec_command", TK_SHELL, {"command", "cmd"}, true},
    {"local_shell", TK_SHELL, {"command"}, true},
    /* Gemini CLI */
    {"run_shell_command", TK_SHELL, {"command"}, true},
    {"read_file", TK_READ, {"file_path", "path", "absolute_path"}, true},
    {"write_file", TK_WRITE, {"file_path", "path"}, true},
    {"replace", TK_WRITE, {"file_path", "path"}, true},
    {"read_many_files", TK_READ_MANY, {"paths", "include"}, true},
    {"list_directory", TK_READ, {"path", "dir_path"}, true},
    {"glob", TK_READ, {"path", "dir_path"}, false},
    {"search_file_content", TK_READ, {"path", "dir_path"}, false},
    {"grep_search", TK_READ, {"path", "dir_path"}, false},
    /* prompt; url in gemini-cli's direct mode (experimental.directWebFetch), which
     * fetches url alone: both judged whenever present. */
    {"web_fetch", TK_FETCH_PROMPT, {"prompt", "url"}, true},
};

/* Claude Code's rows above, as its settings' matcher: what `policy render --hook`
 * installs the hook on (test_harness.c checks each name has a row here). */
const char hook_claude_code_matcher[] =
    "Bash|Monitor|Read|Write|Edit|MultiEdit|NotebookEdit|Glob|Grep|LS|WebFetch";

int hook_harness_parse(const char *name, enum hook_harness *out)
{
	/* The names and aliases are policy/'s harness table; this maps its rows to the
	 * event shapes read here. */
	static const enum hook_harness shape[] = {
	    [POLICY_HARNESS_CLAUDE_CODE] = HOOK_HARNESS_CLAUDE_CODE,
	    [POLICY_HARNESS_CODEX] = HOOK_HARNESS_CODEX,
	    [POLICY_HARNESS_GEMINI] = HOOK_HARNESS_GEMINI,
	};
	const struct policy_harness *h = policy_harness_find(name, POLICY_HARNESS_HOOK);

	if (!h || (size_t)h->id >= sizeof(shape) / sizeof(shape[0]) ||
	    shape[h->id] == HOOK_HARNESS_ANY)
		return -EINVAL;
	*out = shape[h->id];
	return 0;
}

static int why_(char *why, size_t n, const char *fmt, const char *arg)
{
	snprintf(why, n, fmt, arg);
	return -EINVAL;
}

/* The whole input as UTF-8 (no overlong forms, no surrogates, no NUL); *bad is where it
 * stops being that. */
static bool utf8_ok(const char *s, size_t n, size_t *bad)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		unsigned c = u[i], need, cp, min;
		if (c == 0)
			break;
		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0)
			need = 1, min = 0x80, cp = c & 0x1f;
		else if ((c & 0xf0) == 0xe0)
			need = 2, min = 0x800, cp = c & 0x0f;
		else if ((c & 0xf8) == 0xf0)
			need = 3, min = 0x10000, cp = c & 0x07;
		else
			break;
		if (i + need >= n)
			break;
		size_t k = 1;
		for (; k <= need && (u[i + k] & 0xc0) == 0x80; k++)
			cp = cp << 6 | (u[i + k] & 0x3f);
		if (k <= need || cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			break;
		i += need + 1;
	}
	*bad = i;
	return i == n;
}

static bool dup_keys(const cJSON *o, const char **dup)
{
	for (const cJSON *a = o ? o->child : NULL; a; a = a->next)
		for (const cJSON *b = a->next; b; b = b->next)
			if (a->string && b->string && strcmp(a->string, b->string) == 0) {
				*dup = a->string;
				return true;
			}
	return false;
}

static const struct tool_row *find_tool(const char *name)
{
	for (size_t k = 0; k < sizeof(tools) / sizeof(tools[0]); k++)
		if (strcmp(tools[k].name, name) == 0)
			return &tools[k];
	return NULL;
}

static int check_event_name(const cJSON *root, enum hook_harness h, char *why, size_t n)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "hook_event_name");
	const char *want = h == HOOK_HARNESS_GEMINI ? "BeforeTool" : "PreToolUse";

	if (!e)
		return 0;
	if (!cJSON_IsString(e))
		return why_(why, n, "hook_event_name is %s, not a string", "of another type");
	if (strcmp(e->valuestring, want) == 0 ||
	    (h == HOOK_HARNESS_ANY && strcmp(e->valuestring, "BeforeTool") == 0))
		return 0;
	return why_(why, n,
		    "the event is %.80s: install `halo-run hook` on the pre-tool event "
		    "(PreToolUse; Gemini CLI: BeforeTool), where a block stops the tool",
		    e->valuestring);
}

int hook_event_parse(const char *json, size_t len, enum hook_harness h, struct hook_event *ev,
		     char *why, size_t n)
{
	const char *dup, *end = NULL;
	size_t bad;
	cJSON *root;

	memset(ev, 0, sizeof(*ev));
	if (len == 0)
		return why_(why, n, "%s", "no event on standard input");
	if (len > HOOK_MAX_EVENT)
		return why_(why, n, "the event is larger than %s", "32 MiB");
	if (!utf8_ok(json, len, &bad)) {
		snprintf(why, n, "the event is not valid UTF-8 (byte %zu)", bad);
		return -EINVAL;
	}
	for (size_t i = 0; i + 5 < len; i++) {
		if (json[i] != '\\')
			continue;
		if (json[i + 1] == 'u' && !strncmp(json + i + 2, "0000", 4))
			return why_(why, n, "%s", "the event holds a NUL character (\\u0000)");
		i++; /* an escaped character, perhaps a backslash */
	}
	root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
	if (!root)
		return why_(why, n, "%s", "the event is not valid JSON (or nested too deeply)");
	ev->root = root;
	while (end && end < json + len && strchr(" \t\r\n", *end))
		end++;
	if (end != json + len)
		return why_(why, n, "%s", "the event has text after its JSON object");
	if (!cJSON_IsObject(root))
		return why_(why, n, "%s", "the event is not a JSON object");
	if (dup_keys(root, &dup))
		return why_(why, n, "the event repeats the key \"%.60s\"", dup);
	const cJSON *sid = cJSON_GetObjectItemCaseSensitive(root, "session_id");
	const cJSON *en = cJSON_GetObjectItemCaseSensitive(root, "hook_event_name");
	if (sid && (!cJSON_IsString(sid) || !sid->valuestring[0]))
		return why_(why, n, "%s", "session_id is not a non-empty string");
	ev->session_id = sid ? sid->valuestring : NULL;
	if (cJSON_IsString(en) && strcmp(en->valuestring, "SessionEnd") == 0) {
		ev->session_end = true; /* Claude Code's and Gemini CLI's name */
		return 0;
	}
	const cJSON *tn = cJSON_GetObjectItemCaseSensitive(root, "tool_name");
	const cJSON *ti = cJSON_GetObjectItemCaseSensitive(root, "tool_input");
	const cJSON *cwd = cJSON_GetObjectItemCaseSensitive(root, "cwd");
	if (!cJSON_IsString(tn))
		return why_(why, n, "%s", "tool_name is missing or not a string");
	if (check_event_name(root, h, why, n) < 0)
		return -EINVAL;
	if (cwd && (!cJSON_IsString(cwd) || cwd->valuestring[0] != '/'))
		return why_(why, n, "%s", "cwd is not an absolute path");
	ev->tool = tn->valuestring;
	ev->cwd = cwd ? cwd->valuestring : NULL;
	ev->row = find_tool(ev->tool);
	if (!ev->row)
		return 0; /* a tool the hook does not judge (an MCP tool, TodoWrite ...) */
	if (!cJSON_IsObject(ti))
		return why_(why, n, "tool_input of %.60s is missing or not an object", ev->tool);
	if (dup_keys(ti, &dup))
		return why_(why, n, "tool_input repeats the key \"%.60s\"", dup);
	ev->input = ti;
	return 0;
}

/* Codex may give the command as argv: quote it back into one shell line. */
static char *argv_to_line(const cJSON *arr)
{
	size_t len = 1;
	const cJSON *e;

	cJSON_ArrayForEach(e, arr)
	{
		if (!cJSON_IsString(e))
			return NULL;
		len += strlen(e->valuestring) * 4 + 3;
	}
	char *out = malloc(len), *o = out;
	if (!out)
		return NULL;
	cJSON_ArrayForEach(e, arr)
	{
		*o++ = '\'';
		for (const char *s = e->valuestring; *s; s++)
			if (*s == '\'')
				memcpy(o, "'\\''", 4), o += 4;
			else
				*o++ = *s;
		*o++ = '\'';
		*o++ = ' ';
	}
	*o = 0;
	return out;
}

/* Gemini's read_many_files takes paths and globs alike: each as a path, and one with
 * glob characters as a search's file-name glob from the cwd too. */
static void read_many_one(const struct hook_ctx *c, const char *tool, const char *p,
			  struct hook_verdict *v)
{
	hook_check_path(c, tool, p, false, v);
	if (v->outcome == HOOK_ALLOW && strpbrk(p, "*?[{"))
		hook_check_search(c, tool, NULL, p, v);
}

static void judge_field(const struct hook_ctx *c, const struct hook_event *ev,
			const struct tool_row *r, const cJSON *f, struct hook_verdict *v)
{
	char *line;

	switch (r->kind) {
	case TK_SHELL:
		if (cJSON_IsArray(f) && (line = argv_to_line(f))) {
			hook_check_command(c, line, strlen(line), v);
			if (strstr(line, "apply_patch") || strstr(line, "applypatch")) {
				const cJSON *e;
				cJSON_ArrayForEach(e, f)
				    hook_check_shell_patch(c, ev->tool, e->valuestring, v);
			}
			free(line);
		} else if (cJSON_IsString(f)) {
			hook_check_command(c, f->valuestring, strlen(f->valuestring), v);
			if (strstr(f->valuestring, "apply_patch") ||
			    strstr(f->valuestring, "applypatch"))
				hook_check_shell_patch(c, ev->tool, f->valuestring, v);
		} else {
			v->outcome = HOOK_CANNOT;
			snprintf(v->reason, sizeof(v->reason), "%s: the command is not a string",
				 ev->tool);
		}
		return;
	case TK_PATCH:
		hook_check_patch(c, ev->tool, f->valuestring, v);
		return;
	case TK_READ:
	case TK_WRITE:
		hook_check_path(c, ev->tool, f->valuestring, r->kind == TK_WRITE, v);
		return;
	case TK_FETCH:
		hook_check_url(c, ev->tool, f->valuestring, v);
		return;
	case TK_FETCH_PROMPT:
		if (f == cJSON_GetObjectItemCaseSensitive(ev->input, "url"))
			hook_check_gemini_url(c, ev->tool, f->valuestring, v);
		else
			hook_check_prompt_urls(c, ev->tool, f->valuestring, v);
		return;
	case TK_READ_MANY: {
		const cJSON *e;
		if (cJSON_GetArraySize(f) > HOOK_MAX_NAMES) {
			v->outcome = HOOK_CANNOT;
			snprintf(v->reason, sizeof(v->reason), "%s: more than %u paths (split it)",
				 ev->tool, HOOK_MAX_NAMES);
			return;
		}
		cJSON_ArrayForEach(e, f)
		{
			if (!cJSON_IsString(e)) {
				v->outcome = HOOK_CANNOT;
				snprintf(v->reason, sizeof(v->reason), "%s: a path is not a string",
					 ev->tool);
				return;
			}
			read_many_one(c, ev->tool, e->valuestring, v);
			if (v->outcome != HOOK_ALLOW)
				return;
		}
		return;
	}
	}
}

/* Search tools: where the file-name glob is (Claude Code's Glob `pattern` and Grep
 * `glob`, Gemini CLI's glob `pattern` and search `include`), judged with the folder. */
static const struct {
	const char *tool, *glob_key;
} searches[] = {
    {"Glob", "pattern"},	{"Grep", "glob"},
    {"glob", "pattern"},	{"search_file_content", "include"},
    {"grep_search", "include"},
};

static void judge_search(const struct hook_ctx *c, const struct hook_event *ev,
			 struct hook_verdict *v)
{
	for (size_t k = 0; k < sizeof(searches) / sizeof(searches[0]); k++) {
		if (strcmp(ev->tool, searches[k].tool) != 0)
			continue;
		const cJSON *g = cJSON_GetObjectItemCaseSensitive(ev->input, searches[k].glob_key);
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(ev->input, "path");
		if (!f || cJSON_IsNull(f))
			f = cJSON_GetObjectItemCaseSensitive(ev->input, "dir_path");
		if (g && !cJSON_IsNull(g) && !cJSON_IsString(g)) {
			v->outcome = HOOK_CANNOT;
			snprintf(v->reason, sizeof(v->reason),
				 "%s: tool_input.%s has the wrong type", ev->tool,
				 searches[k].glob_key);
			return;
		}
		/* Grep's ripgrep file type (`type`: rust, yaml) is not a glob the hook can read:
		 * ripgrep's own list decides (yaml reads .env.yml), so a search by type alone is
		 * judged as one with no glob (any protected file beneath blocks it). */
		const char *glob = cJSON_IsString(g) ? g->valuestring : NULL;
		hook_check_search(c, ev->tool, cJSON_IsString(f) ? f->valuestring : NULL, glob, v);
		return;
	}
}

void hook_event_judge(const struct hook_ctx *c, const struct hook_event *ev, struct hook_verdict *v)
{
	const struct tool_row *r = ev->row;
	bool any = false;

	v->outcome = HOOK_ALLOW;
	v->reason[0] = 0;
	if (!r)
		return;
	for (size_t k = 0; k < 3 && r->keys[k] && v->outcome == HOOK_ALLOW; k++) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(ev->input, r->keys[k]);
		if (!f || cJSON_IsNull(f))
			continue;
		any = true;
		bool ok = r->kind == TK_READ_MANY ? cJSON_IsArray(f) || cJSON_IsString(f)
			  : r->kind == TK_SHELL	  ? cJSON_IsString(f) || cJSON_IsArray(f)
						  : cJSON_IsString(f);
		if (!ok) {
			v->outcome = HOOK_CANNOT;
			snprintf(v->reason, sizeof(v->reason),
				 "%s: tool_input.%s has the wrong type", ev->tool, r->keys[k]);
			return;
		}
		if (r->kind == TK_READ_MANY && cJSON_IsString(f))
			read_many_one(c, ev->tool, f->valuestring, v);
		else
			judge_field(c, ev, r, f, v);
	}
	if (!any && r->required) {
		v->outcome = HOOK_CANNOT;
		snprintf(v->reason, sizeof(v->reason), "%s: tool_input.%s is missing", ev->tool,
			 r->keys[0]);
	}
	if (v->outcome == HOOK_ALLOW)
		judge_search(c, ev, v);
}

bool hook_event_is_shell(const struct hook_event *ev)
{
	const struct tool_row *r = ev->row;

	return r && r->kind == TK_SHELL;
}

void hook_event_free(struct hook_event *ev)
{
	cJSON_Delete(ev->root);
	memset(ev, 0, sizeof(*ev));
}
