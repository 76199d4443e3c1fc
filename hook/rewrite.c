/* `halo-run hook --wrap`: a harness's shell call rewritten to run in halo-run.
 *
 * Every word of the new command line is single-quoted, the one quoting in which a
 * POSIX shell gives every byte its literal meaning: no expansion, no escape, no end
 * but the next quote. A quote inside becomes '\'' (close, an escaped quote, reopen).
 * So bash reads back exactly the words written here, whatever the agent's command
 * holds (quotes, newlines, here-documents, $'...', backslashes), except NUL, which no
 * shell argument can hold: such a command is refused, never cut short.
 *
 * The answer keeps the harness's own permission flow: it carries the new input and
 * no permissionDecision (Claude Code then asks its permission rules about the
 * rewritten call, as about any other; an "allow" would skip them). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hook/hook_int.h"

struct wbuf {
	char *p;
	size_t n, cap;
	bool oom;
};

static void put(struct wbuf *b, const char *s, size_t len)
{
	if (b->oom)
		return;
	if (b->n + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + len + 1) {
			if (cap > SIZE_MAX / 2) {
				b->oom = true;
				return;
			}
			cap *= 2;
		}
		char *np = realloc(b->p, cap);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, len);
	b->n += len;
	b->p[b->n] = 0;
}

static void put_word(struct wbuf *b, const char *s, size_t len)
{
	const char *q;

	put(b, "'", 1);
	while ((q = memchr(s, '\'', len))) {
		put(b, s, (size_t)(q - s));
		put(b, "'\\''", 4);
		len -= (size_t)(q - s) + 1;
		s = q + 1;
	}
	put(b, s, len);
	put(b, "'", 1);
}

int hook_shell_quote(const char *s, size_t len, char **out)
{
	struct wbuf b = {0};

	*out = NULL;
	if (memchr(s, 0, len))
		return -EINVAL;
	put_word(&b, s, len);
	if (b.oom) {
		free(b.p);
		return -ENOMEM;
	}
	*out = b.p;
	return 0;
}

int hook_wrap_line(const char *const *prefix, size_t n, const char *cmd, size_t len, char **out)
{
	struct wbuf b = {0};

	*out = NULL;
	if (memchr(cmd, 0, len))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		put_word(&b, prefix[i], strlen(prefix[i]));
		put(&b, " ", 1);
	}
	put_word(&b, cmd, len);
	if (b.oom) {
		free(b.p);
		return -ENOMEM;
	}
	*out = b.p;
	return 0;
}

const char *hook_event_command(const struct hook_event *ev)
{
	const cJSON *c;

	if (!ev->input || !ev->tool || strcmp(ev->tool, "Bash") != 0)
		return NULL;
	c = cJSON_GetObjectItemCaseSensitive(ev->input, "command");
	return cJSON_IsString(c) ? c->valuestring : NULL;
}

int hook_wrap_answer(const struct hook_event *ev, const char *line, char **json)
{
	cJSON *out = cJSON_CreateObject(), *hso = NULL, *in = NULL;

	*json = NULL;
	if (!out || !ev->input)
		goto fail;
	/* The whole input, every other key (timeout, description, run_in_background ...)
	 * as the model wrote it: updatedInput replaces the input, it is not merged. */
	in = cJSON_Duplicate(ev->input, true);
	if (!in || !cJSON_ReplaceItemInObjectCaseSensitive(in, "command", cJSON_CreateString(line)))
		goto fail;
	if (!(hso = cJSON_AddObjectToObject(out, "hookSpecificOutput")) ||
	    !cJSON_AddStringToObject(hso, "hookEventName", "PreToolUse"))
		goto fail;
	cJSON_AddItemToObject(hso, "updatedInput", in);
	in = NULL;
	*json = cJSON_PrintUnformatted(out);
	cJSON_Delete(out);
	return *json ? 0 : -ENOMEM;
fail:
	cJSON_Delete(in);
	cJSON_Delete(out);
	return -ENOMEM;
}
