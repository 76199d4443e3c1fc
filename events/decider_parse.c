/* The decider's answers: outside input, read strictly (see decider.h). cJSON parses
 * the JSON; everything it accepts beyond the protocol is refused here. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "events/decider_int.h"

static int bad(char *why, size_t n, const char *msg)
{
	snprintf(why, n, "%s", msg);
	return -EINVAL;
}

/* A key given twice is refused: two readers of the same line must not disagree. */
static bool duplicate_keys(const cJSON *o)
{
	for (const cJSON *a = o->child; a; a = a->next)
		for (const cJSON *b = a->next; b; b = b->next)
			if (a->string && b->string && strcmp(a->string, b->string) == 0)
				return true;
	return false;
}

/* An escaped NUL (\u0000) in a string: cJSON's C string ends there and another
 * reader's does not, so "allow\u0000deny" would be an allow here only. Backslashes
 * occur only inside strings in valid JSON; each escape is skipped whole, so "\\u0000"
 * (a backslash, then text) is not one. */
static bool escaped_nul(const char *s, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++) {
		if (s[i] != '\\')
			continue;
		if (s[i + 1] == 'u' && n - i >= 6 && memcmp(s + i + 2, "0000", 4) == 0)
			return true;
		i++;
	}
	return false;
}

static int read_id(const cJSON *v, uint64_t *id, char *why, size_t n)
{
	double d;

	if (!cJSON_IsNumber(v))
		return bad(why, n, "\"id\" is missing or not a number");
	d = v->valuedouble;
	if (!(d >= 1) || d >= (double)RUNNER_DECIDER_MAX_ID || floor(d) != d)
		return bad(why, n, "\"id\" is not an integer from 1 to 2^53-1");
	*id = (uint64_t)d;
	return 0;
}

static int read_words(const cJSON *o, struct runner_decider_answer *a, char *why, size_t n)
{
	const cJSON *dec = cJSON_GetObjectItemCaseSensitive(o, "decision");
	const cJSON *rem = cJSON_GetObjectItemCaseSensitive(o, "remember");

	if (!cJSON_IsString(dec))
		return bad(why, n, "\"decision\" is missing or not a string");
	if (strcmp(dec->valuestring, "allow") == 0)
		a->allow = true;
	else if (strcmp(dec->valuestring, "deny") == 0)
		a->allow = false;
	else
		return bad(why, n, "\"decision\" is neither \"allow\" nor \"deny\"");
	if (!rem)
		return 0;
	if (!cJSON_IsString(rem))
		return bad(why, n, "\"remember\" is not a string");
	if (strcmp(rem->valuestring, "session") == 0)
		a->remember_session = true;
	else if (strcmp(rem->valuestring, "once") != 0)
		return bad(why, n, "\"remember\" is neither \"once\" nor \"session\"");
	return 0;
}

int runner_decider_parse_answer(const char *line, size_t len, struct runner_decider_answer *a,
				char *why, size_t whylen)
{
	const char *end = NULL;
	cJSON *o;
	int rc;

	memset(a, 0, sizeof(*a));
	if (len > RUNNER_DECIDER_MAX_LINE)
		return bad(why, whylen, "line too long");
	if (memchr(line, '\0', len))
		return bad(why, whylen, "NUL byte in the line");
	if (escaped_nul(line, len))
		return bad(why, whylen, "an escaped NUL (\\u0000) in a string");
	o = cJSON_ParseWithLengthOpts(line, len, &end, false);
	if (!o)
		return bad(why, whylen, "not JSON");
	while (end && end < line + len && (*end == ' ' || *end == '\t' || *end == '\r'))
		end++;
	if (!end || end != line + len)
		rc = bad(why, whylen, "bytes after the JSON object");
	else if (!cJSON_IsObject(o))
		rc = bad(why, whylen, "not a JSON object");
	else if (duplicate_keys(o))
		rc = bad(why, whylen, "a key given twice");
	else if ((rc = read_id(cJSON_GetObjectItemCaseSensitive(o, "id"), &a->id, why, whylen)) ==
		 0)
		rc = read_words(o, a, why, whylen);
	cJSON_Delete(o);
	if (rc)
		memset(a, 0, sizeof(*a));
	return rc;
}
