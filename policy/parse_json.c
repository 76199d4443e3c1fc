/* JSON reader: cJSON parses, then the document is copied into the generic tree the
 * model reads, so JSON and YAML policies meet the same checks. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "policy/policy_int.h"

static unsigned line_at(const char *buf, size_t off, unsigned *col)
{
	unsigned line = 1;
	size_t start = 0;

	for (size_t i = 0; i < off; i++) {
		if (buf[i] == '\n') {
			line++;
			start = i + 1;
		}
	}
	*col = (unsigned)(off - start) + 1;
	return line;
}

/* One pass before cJSON sees the text: cJSON accepts nesting up to 1000 levels
 * (recursively), and turns "\u0000" into a silent end of string, which would make
 * "evil.example\u0000.good.example" a different host than the one written. */
static int json_prescan(const char *name, const char *buf, size_t len, bool *unterminated,
			struct policy_diags *d)
{
	unsigned line = 1;
	int depth = 0;
	bool in_str = false;

	for (size_t i = 0; i < len; i++) {
		char c = buf[i];

		if (c == '\n')
			line++;
		if (in_str) {
			if (c == '"') {
				in_str = false;
			} else if (c == '\\' && i + 1 < len) {
				if (len - i >= 6 && memcmp(buf + i + 1, "u0000", 5) == 0) {
					policy_diag(d, true, name, line, NULL,
						    "a string contains \\u0000 (NUL), which is "
						    "not allowed");
					return -EINVAL;
				}
				i++;
				if (buf[i] == '\n')
					line++;
			}
			continue;
		}
		if (c == '"') {
			in_str = true;
		} else if (c == '[' || c == '{') {
			if (++depth > POLICY_MAX_DEPTH) {
				policy_diag(d, true, name, line, NULL,
					    "nesting deeper than %d levels", POLICY_MAX_DEPTH);
				return -EINVAL;
			}
		} else if (c == ']' || c == '}') {
			depth--;
		}
	}
	/* Open brackets or an open string at the end: the file was cut short. */
	*unterminated = in_str || depth > 0;
	return 0;
}

static void json_syntax_error(const char *name, const char *buf, size_t len, const char *at,
			      bool unterminated, struct policy_diags *d)
{
	size_t off = (at && at >= buf && at <= buf + len) ? (size_t)(at - buf) : len;
	char snippet[24], q[POLICY_QUOTE_MAX];
	unsigned col, line;
	size_t k = 0;

	/* cJSON reports running out of input as an error at the last byte. */
	if (unterminated && off + 1 >= len)
		off = len;
	while (off < len &&
	       (buf[off] == ' ' || buf[off] == '\t' || buf[off] == '\r' || buf[off] == '\n'))
		off++;
	line = line_at(buf, off, &col);
	if (off >= len) {
		policy_diags_add_error(d,
				       "%s:%u:%u: JSON syntax error: unexpected end of input "
				       "(truncated file?)",
				       name, line, col);
		return;
	}
	while (k + 1 < sizeof(snippet) && off + k < len && buf[off + k] != '\n') {
		snippet[k] = buf[off + k];
		k++;
	}
	snippet[k] = '\0';
	policy_diags_add_error(d, "%s:%u:%u: JSON syntax error near %s", name, line, col,
			       policy_quote(snippet, q, sizeof(q)));
}

static struct pnode *json_convert(const cJSON *j)
{
	struct pnode *n;

	if (cJSON_IsObject(j)) {
		n = pnode_new(PN_MAP, 0);
		for (const cJSON *c = j->child; n && c; c = c->next) {
			if (pnode_map_add(n, strdup(c->string ? c->string : ""), 0,
					  json_convert(c)) < 0) {
				pnode_free(n);
				return NULL;
			}
		}
		return n;
	}
	if (cJSON_IsArray(j)) {
		n = pnode_new(PN_SEQ, 0);
		for (const cJSON *c = j->child; n && c; c = c->next) {
			if (pnode_seq_add(n, json_convert(c)) < 0) {
				pnode_free(n);
				return NULL;
			}
		}
		return n;
	}
	if (cJSON_IsString(j)) {
		n = pnode_new(PN_STR, 0);
		if (n && !(n->str = strdup(j->valuestring))) {
			pnode_free(n);
			return NULL;
		}
		return n;
	}
	if (cJSON_IsNumber(j)) {
		n = pnode_new(PN_NUM, 0);
		if (n)
			n->num = j->valuedouble;
		return n;
	}
	if (cJSON_IsBool(j)) {
		n = pnode_new(PN_BOOL, 0);
		if (n)
			n->b = cJSON_IsTrue(j);
		return n;
	}
	return pnode_new(PN_NULL, 0);
}

int policy_parse_json(const char *name, const char *buf, size_t len, struct pnode **out,
		      struct policy_diags *d)
{
	const char *end = NULL;
	bool unterminated = false;
	cJSON *j;

	*out = NULL;
	if (json_prescan(name, buf, len, &unterminated, d) < 0)
		return -EINVAL;
	j = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
	if (!j) {
		json_syntax_error(name, buf, len, end, unterminated, d);
		return -EINVAL;
	}
	while (end && end < buf + len &&
	       (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n'))
		end++;
	if (end && end < buf + len) {
		unsigned col, line = line_at(buf, (size_t)(end - buf), &col);

		policy_diags_add_error(d,
				       "%s:%u:%u: JSON syntax error: data after the end of "
				       "the document",
				       name, line, col);
		cJSON_Delete(j);
		return -EINVAL;
	}
	*out = json_convert(j);
	cJSON_Delete(j);
	if (!*out) {
		policy_diag(d, true, name, 0, NULL, "out of memory");
		return -ENOMEM;
	}
	return 0;
}
