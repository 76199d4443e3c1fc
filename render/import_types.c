/* `policy import`'s readers share these: a warning for what has no equivalent, and
 * the JSON value checks (a string, a list of strings, a bool; unknown keys named). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/import_int.h"

void imp_warn(struct imp *m, const char *field, const char *fmt, ...)
{
	char reason[768], line[1100];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "%s: %s", field, reason);
	if (rlist_push(&m->warnings, line) < 0)
		m->error = true;
}

static const char *type_name(const cJSON *v)
{
	if (!v)
		return "nothing";
	if (cJSON_IsBool(v))
		return "a boolean";
	if (cJSON_IsNumber(v))
		return "a number";
	if (cJSON_IsString(v))
		return "a string";
	if (cJSON_IsArray(v))
		return "a list";
	if (cJSON_IsObject(v))
		return "an object";
	return "null";
}

int imp_type_error(struct imp *m, const char *field, const char *want, const cJSON *got)
{
	halo_err_set(m->e, "%s: expected %s, got %s", field, want, type_name(got));
	return -EINVAL;
}

int imp_strings(struct imp *m, const cJSON *a, const char *field,
		int (*fn)(struct imp *m, const char *s, const char *field))
{
	const cJSON *it;

	if (!a)
		return 0;
	if (!cJSON_IsArray(a))
		return imp_type_error(m, field, "a list of strings", a);
	cJSON_ArrayForEach(it, a)
	{
		if (!cJSON_IsString(it))
			return imp_type_error(m, field, "a list of strings (each entry)", it);
		if (fn(m, it->valuestring, field) < 0)
			return -EINVAL;
	}
	return 0;
}

int imp_bool(struct imp *m, const cJSON *b, const char *field, bool *out)
{
	if (!cJSON_IsBool(b))
		return imp_type_error(m, field, "true or false", b);
	*out = cJSON_IsTrue(b);
	return 0;
}

int imp_string(struct imp *m, const cJSON *s, const char *field, const char **out)
{
	if (!cJSON_IsString(s))
		return imp_type_error(m, field, "a string", s);
	*out = s->valuestring;
	return 0;
}

void imp_unknown_keys(struct imp *m, const cJSON *obj, const char *prefix, const char *const *known)
{
	const cJSON *it;
	char q[POLICY_HOST_MAX];

	cJSON_ArrayForEach(it, obj)
	{
		bool k = false;
		for (size_t i = 0; known[i] && !k; i++)
			k = strcmp(known[i], it->string) == 0;
		if (k)
			continue;
		/* Keys are outside text: printable ASCII only in the message. */
		size_t n = 0;
		for (const char *c = it->string; *c && n + 5 < sizeof(q); c++)
			n += (size_t)snprintf(q + n, sizeof(q) - n,
					      isprint((unsigned char)*c) ? "%c" : "\\x%02x",
					      (unsigned char)*c);
		q[n] = 0;
		if (prefix[0])
			imp_warn(m, prefix,
				 "%s: not a sandbox setting halo-run holds; not imported", q);
		else
			imp_warn(m, q, "not a sandbox setting halo-run holds; not imported");
	}
}
