/* YAML reader: libyaml events folded into the generic tree, with line numbers.
 *
 * Policies are data, not programs, so the YAML features that make a document mean
 * something other than what it shows are refused: anchors and aliases (and with
 * them alias bombs), tags other than !!str, more than one document, nesting deeper
 * than POLICY_MAX_DEPTH, non-string keys. Plain scalars are read as YAML 1.2 core
 * schema, and the ones a YAML 1.1 reader would take differently (yes/no/on/off,
 * 0755, 0x1f, 1_000, 1:20) are flagged so the model can refuse them where it
 * matters. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "policy/policy_int.h"

#define DIGITS "0123456789"
#define N(a)   (sizeof(a) / sizeof((a)[0]))

struct ybuild {
	const char *name;
	struct policy_diags *d;
	struct pnode *stack[POLICY_MAX_DEPTH];
	char *key[POLICY_MAX_DEPTH]; /* in a mapping: the key waiting for its value */
	unsigned key_line[POLICY_MAX_DEPTH];
	int depth;
	struct pnode *root;
	int docs;
};

static bool in_set(const char *s, const char *const *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, set[i]) == 0)
			return true;
	return false;
}

/* An optional exponent, then the end of the text. */
static bool exp_tail(const char *p, bool sign_required)
{
	if (*p == 'e' || *p == 'E') {
		size_t k;

		p++;
		if (*p == '+' || *p == '-')
			p++;
		else if (sign_required)
			return false;
		k = strspn(p, DIGITS);
		if (!k)
			return false;
		p += k;
	}
	return *p == '\0';
}

static bool json_number(const char *p)
{
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		p += strspn(p, DIGITS);
	else
		return false;
	if (*p == '.') {
		size_t k = strspn(++p, DIGITS);

		if (!k)
			return false;
		p += k;
	}
	return exp_tail(p, false);
}

/* Numbers in any YAML 1.1 / 1.2 spelling that JSON would not write. */
static bool numberish(const char *s)
{
	static const char *const special[] = {".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN"};
	const char *p = s + (*s == '+' || *s == '-');
	size_t k;
	const char *q;

	if (in_set(p, special, N(special)))
		return true;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'o' || p[1] == 'b'))
		return p[2] && strspn(p + 2, DIGITS "abcdefABCDEF_") == strlen(p + 2);
	k = strspn(p, DIGITS "_");
	q = p + k;
	if (k && *q == '\0')
		return true;
	while (k && *q == ':') { /* sexagesimal, 1:20 = 80 in YAML 1.1 */
		size_t m = strspn(q + 1, DIGITS);

		if (m < 1 || m > 2)
			break;
		q += 1 + m;
		if (*q == '\0')
			return true;
	}
	if (*q == '.') {
		if (!k && !(q[1] >= '0' && q[1] <= '9'))
			return false;
		q++;
		q += strspn(q, DIGITS "_");
		return exp_tail(q, false);
	}
	return k && exp_tail(q, false);
}

static struct pnode *scalar_node(const yaml_event_t *ev, bool force_str)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
	static const char *const trues[] = {"true", "True", "TRUE"};
	static const char *const falses[] = {"false", "False", "FALSE"};
	static const char *const yaml11[] = {"y",  "Y",	 "yes", "Yes", "YES", "n",   "N",   "no",
					     "No", "NO", "on",	"On",  "ON",  "off", "Off", "OFF"};
	const char *v = (const char *)ev->data.scalar.value;
	unsigned line = (unsigned)ev->start_mark.line + 1;
	bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !force_str;
	struct pnode *n;

	if (plain && in_set(v, nulls, N(nulls)))
		return pnode_new(PN_NULL, line);
	if (plain && (in_set(v, trues, N(trues)) || in_set(v, falses, N(falses)))) {
		n = pnode_new(PN_BOOL, line);
		if (n)
			n->b = in_set(v, trues, N(trues));
		return n;
	}
	if (plain && json_number(v)) {
		n = pnode_new(PN_NUM, line);
		if (n)
			n->num = strtod(v, NULL);
		return n;
	}
	n = pnode_new(PN_STR, line);
	if (!n)
		return NULL;
	if (plain && in_set(v, yaml11, N(yaml11)))
		n->flags |= PN_YAML11_BOOL;
	if (plain && numberish(v))
		n->flags |= PN_NUMBERISH;
	n->str = strdup(v);
	if (!n->str) {
		pnode_free(n);
		return NULL;
	}
	return n;
}

static int yerr(struct ybuild *b, const yaml_event_t *ev, const char *fmt, const char *arg)
{
	char msg[256], q[POLICY_QUOTE_MAX];

	snprintf(msg, sizeof(msg), fmt, arg ? policy_quote(arg, q, sizeof(q)) : "");
	policy_diag(b->d, true, b->name, (unsigned)ev->start_mark.line + 1, NULL, "%s", msg);
	return -EINVAL;
}

/* Anchors, aliases and tags make a node mean something the reader cannot see at
 * that place; only the explicit string tag is harmless. */
static int check_props(struct ybuild *b, const yaml_event_t *ev, const yaml_char_t *anchor,
		       const yaml_char_t *tag, bool *force_str)
{
	*force_str = false;
	if (anchor)
		return yerr(b, ev, "YAML anchors are not allowed in a policy (anchor %s)",
			    (const char *)anchor);
	if (!tag)
		return 0;
	if (ev->type == YAML_SCALAR_EVENT && strcmp((const char *)tag, YAML_STR_TAG) == 0) {
		*force_str = true;
		return 0;
	}
	return yerr(b, ev, "YAML tags are not allowed in a policy (tag %s)", (const char *)tag);
}

/* Give a finished node to its parent (or make it the document). */
static int attach(struct ybuild *b, struct pnode *n)
{
	struct pnode *parent;
	int top = b->depth - 1;

	if (!n)
		return -ENOMEM;
	if (b->depth == 0) {
		pnode_free(b->root);
		b->root = n;
		return 0;
	}
	parent = b->stack[top];
	if (parent->kind == PN_SEQ)
		return pnode_seq_add(parent, n);
	{
		char *key = b->key[top];

		b->key[top] = NULL;
		return pnode_map_add(parent, key, b->key_line[top], n);
	}
}

static bool expecting_key(const struct ybuild *b)
{
	return b->depth > 0 && b->stack[b->depth - 1]->kind == PN_MAP && !b->key[b->depth - 1];
}

static int on_scalar(struct ybuild *b, const yaml_event_t *ev)
{
	const char *v = (const char *)ev->data.scalar.value;
	bool force_str;

	if (check_props(b, ev, ev->data.scalar.anchor, ev->data.scalar.tag, &force_str) < 0)
		return -EINVAL;
	if (memchr(v, '\0', ev->data.scalar.length))
		return yerr(b, ev, "a value contains a NUL character%s", NULL);
	if (expecting_key(b)) {
		int top = b->depth - 1;

		b->key[top] = strdup(v);
		b->key_line[top] = (unsigned)ev->start_mark.line + 1;
		return b->key[top] ? 0 : -ENOMEM;
	}
	return attach(b, scalar_node(ev, force_str));
}

static int on_collection(struct ybuild *b, const yaml_event_t *ev, enum pnode_kind kind)
{
	const yaml_char_t *anchor, *tag;
	struct pnode *n;
	bool force_str;

	if (kind == PN_MAP) {
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
	} else {
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
	}
	if (check_props(b, ev, anchor, tag, &force_str) < 0)
		return -EINVAL;
	if (expecting_key(b))
		return yerr(b, ev, "mapping keys must be strings, not lists or mappings%s", NULL);
	if (b->depth >= POLICY_MAX_DEPTH) {
		policy_diag(b->d, true, b->name, (unsigned)ev->start_mark.line + 1, NULL,
			    "nesting deeper than %d levels", POLICY_MAX_DEPTH);
		return -EINVAL;
	}
	n = pnode_new(kind, (unsigned)ev->start_mark.line + 1);
	if (attach(b, n) < 0)
		return -ENOMEM;
	b->stack[b->depth] = n;
	b->key[b->depth] = NULL;
	b->depth++;
	return 0;
}

static int on_event(struct ybuild *b, const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (++b->docs > 1)
			return yerr(b, ev, "more than one YAML document in a policy file%s", NULL);
		return 0;
	case YAML_ALIAS_EVENT:
		return yerr(b, ev, "YAML aliases are not allowed in a policy (alias %s)",
			    (const char *)ev->data.alias.anchor);
	case YAML_SCALAR_EVENT:
		return on_scalar(b, ev);
	case YAML_SEQUENCE_START_EVENT:
		return on_collection(b, ev, PN_SEQ);
	case YAML_MAPPING_START_EVENT:
		return on_collection(b, ev, PN_MAP);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (b->depth > 0) {
			b->depth--;
			free(b->key[b->depth]);
			b->key[b->depth] = NULL;
		}
		return 0;
	default:
		return 0;
	}
}

static void syntax_error(struct ybuild *b, const yaml_parser_t *p, size_t len)
{
	const char *problem = p->problem ? p->problem : "malformed YAML";
	bool at_end = p->problem_mark.index >= len;

	if (p->error == YAML_MEMORY_ERROR) {
		policy_diag(b->d, true, b->name, 0, NULL, "out of memory while reading YAML");
		return;
	}
	policy_diags_add_error(b->d, "%s:%zu:%zu: YAML syntax error: %s%s%s%s", b->name,
			       p->problem_mark.line + 1, p->problem_mark.column + 1, problem,
			       p->context ? " " : "", p->context ? p->context : "",
			       at_end ? " (truncated file?)" : "");
}

int policy_parse_yaml(const char *name, const char *buf, size_t len, struct pnode **out,
		      struct policy_diags *d)
{
	struct ybuild b = {.name = name, .d = d};
	yaml_parser_t parser;
	int rc = 0;
	bool done = false;

	*out = NULL;
	if (!yaml_parser_initialize(&parser)) {
		policy_diag(d, true, name, 0, NULL, "out of memory");
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	while (!done && rc == 0) {
		yaml_event_t ev;

		if (!yaml_parser_parse(&parser, &ev)) {
			syntax_error(&b, &parser, len);
			rc = -EINVAL;
			break;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		rc = on_event(&b, &ev);
		if (rc == -ENOMEM)
			policy_diag(d, true, name, 0, NULL, "out of memory");
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	for (int i = 0; i < b.depth; i++)
		free(b.key[i]);
	if (rc == 0 && !b.root) {
		policy_diag(d, true, name, 0, NULL, "the file holds no YAML document (empty?)");
		rc = -EINVAL;
	}
	if (rc < 0) {
		pnode_free(b.root);
		return rc;
	}
	*out = b.root;
	return 0;
}
