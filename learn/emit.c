/* The learned policy as YAML: the input policy's fields (policy_to_json's model part,
 * which loads as a policy) in block style, with the additions at the end of their
 * lists, one comment each. Every scalar is double-quoted and escaped, so a host or a
 * path from inside the sandbox can neither end a line nor add a key; comments go
 * through policy_printable. A value that YAML cannot hold (bytes that are not UTF-8)
 * is never written: the plan lists it as refused; one past ASCII is written escaped. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "learn/learn.h"

struct out {
	char *buf;
	size_t len, cap;
	bool oom;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(o->buf ? o->buf + o->len : NULL, o->buf ? o->cap - o->len : 0, fmt,
			      ap);
		va_end(ap);
		if (n < 0) {
			o->oom = true;
			return;
		}
		if (o->buf && o->len + (size_t)n < o->cap) {
			o->len += (size_t)n;
			return;
		}
		size_t nc = (o->cap ? o->cap * 2 : 4096) + (size_t)n;
		char *g = realloc(o->buf, nc);
		if (!g) {
			o->oom = true;
			return;
		}
		o->buf = g;
		o->cap = nc;
	}
}

/* Is s well-formed UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF)? */
static bool utf8_ok(const unsigned char *s)
{
	while (*s) {
		unsigned c = *s, need = c < 0x80	 ? 0
					: (c >> 5) == 6	 ? 1
					: (c >> 4) == 14 ? 2
					: (c >> 3) == 30 ? 3
							 : 9;
		unsigned long cp = need == 0   ? c
				   : need == 1 ? c & 0x1f
				   : need == 2 ? c & 0x0f
					       : c & 7;
		if (need == 9)
			return false;
		for (unsigned i = 1; i <= need; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i] & 0x3f);
		}
		if ((need == 1 && cp < 0x80) || (need == 2 && cp < 0x800) ||
		    (need == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		s += need + 1;
	}
	return true;
}

/* One code point past ASCII (s is well-formed UTF-8: utf8_ok) as YAML's \\uXXXX or
 * \\UXXXXXXXX: a learned name is all ASCII on the page, so a right-to-left override
 * or a zero-width character cannot reorder or hide what a reviewer reads. *p is left
 * on the code point's last byte. */
static size_t code_point_escape(const unsigned char **p, char *esc, size_t n)
{
	const unsigned char *s = *p;
	unsigned need = (s[0] >> 5) == 6 ? 1 : (s[0] >> 4) == 14 ? 2 : 3;
	unsigned long cp = s[0] & (need == 1 ? 0x1f : need == 2 ? 0x0f : 0x07);

	for (unsigned i = 1; i <= need; i++)
		cp = (cp << 6) | (s[i] & 0x3f);
	*p = s + need;
	return (size_t)snprintf(esc, n, cp > 0xffff ? "\\U%08lX" : "\\u%04lX", cp);
}

bool learn_yaml_quote(const char *s, char *out, size_t n)
{
	size_t k = 0;

	if (!s || n < 3 || !utf8_ok((const unsigned char *)s))
		return false;
	out[k++] = '"';
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char esc[12];
		size_t m;
		if (*p == '"' || *p == '\\')
			m = (size_t)snprintf(esc, sizeof(esc), "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			m = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", *p);
		else if (*p >= 0x80)
			m = code_point_escape(&p, esc, sizeof(esc));
		else
			esc[0] = (char)*p, m = 1;
		if (k + m + 2 > n)
			return false;
		memcpy(out + k, esc, m);
		k += m;
	}
	out[k++] = '"';
	out[k] = '\0';
	return true;
}

const char *learn_comment_text(const char *s, char *out, size_t n)
{
	return policy_printable(s ? s : "", out, n);
}

/* A key of the schema or an env.set name: bare when plain, else quoted. */
static void put_key(struct out *o, int indent, const char *key)
{
	char q[1024];

	if (key[0] &&
	    strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
		strlen(key))
		put(o, "%*s%s:", indent, "", key);
	else if (learn_yaml_quote(key, q, sizeof(q)))
		put(o, "%*s%s:", indent, "", q);
	else
		o->oom = true; /* cannot happen for a loaded policy: fail, never drop a key */
}

static void put_scalar(struct out *o, const cJSON *v)
{
	char *q;
	size_t n;

	if (cJSON_IsBool(v)) {
		put(o, "%s", cJSON_IsTrue(v) ? "true" : "false");
	} else if (cJSON_IsNumber(v)) {
		put(o, "%.0f", v->valuedouble);
	} else if (cJSON_IsString(v)) {
		n = strlen(v->valuestring) * 4 + 3;
		if (!(q = malloc(n)) || !learn_yaml_quote(v->valuestring, q, n))
			o->oom = true;
		else
			put(o, "%s", q);
		free(q);
	} else {
		char *j = cJSON_PrintUnformatted(v); /* JSON is YAML's flow style */
		if (!j)
			o->oom = true;
		else
			put(o, "%s", j);
		free(j);
	}
}

struct adds {
	const char *block, *key;
	const struct learn_items *items;
	bool number;
};

static void put_comment(struct out *o, const char *c)
{
	char t[1024];

	put(o, "  # %s\n", learn_comment_text(c, t, sizeof(t)));
}

static void put_adds(struct out *o, int indent, const struct adds *a)
{
	char q[4200];

	for (size_t i = 0; a->items && i < a->items->n; i++) {
		const struct learn_item *it = &a->items->v[i];
		if (a->number)
			put(o, "%*s- %s", indent, "", it->value);
		else if (learn_yaml_quote(it->value, q, sizeof(q)))
			put(o, "%*s- %s", indent, "", q);
		else
			continue; /* the plan said it cannot be written */
		put_comment(o, it->comment);
	}
}

static bool empty(const cJSON *v)
{
	return (cJSON_IsArray(v) || cJSON_IsObject(v)) && !v->child;
}

static const struct adds *adds_for(const struct adds *a, size_t n, const char *block,
				   const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(a[i].block, block) == 0 && strcmp(a[i].key, key) == 0 && a[i].items &&
		    a[i].items->n)
			return &a[i];
	return NULL;
}

/* One block (sandbox, egress, limits, env): its keys, then any list the plan adds to
 * that the block did not have. */
static void put_block(struct out *o, const cJSON *b, const struct adds *a, size_t na)
{
	const char *name = b->string;

	for (const cJSON *v = b->child; v; v = v->next) {
		const struct adds *ad = adds_for(a, na, name, v->string);
		if (empty(v) && !ad)
			continue;
		put_key(o, 2, v->string);
		if (cJSON_IsArray(v)) {
			put(o, "\n");
			for (const cJSON *e = v->child; e; e = e->next) {
				put(o, "    - ");
				put_scalar(o, e);
				put(o, "\n");
			}
			if (ad)
				put_adds(o, 4, ad);
		} else if (cJSON_IsObject(v)) {
			put(o, "\n");
			for (const cJSON *e = v->child; e; e = e->next) {
				put_key(o, 4, e->string);
				put(o, " ");
				put_scalar(o, e);
				put(o, "\n");
			}
		} else {
			put(o, " ");
			put_scalar(o, v);
			put(o, "\n");
		}
	}
	for (size_t i = 0; i < na; i++)
		if (strcmp(a[i].block, name) == 0 && a[i].items && a[i].items->n &&
		    !cJSON_GetObjectItemCaseSensitive(b, a[i].key)) {
			put_key(o, 2, a[i].key);
			put(o, "\n");
			put_adds(o, 4, &a[i]);
		}
}

static void put_body(struct out *o, const struct halo_policy *p, const struct learn_plan *pl)
{
	const struct adds a[] = {
	    {"sandbox", "writableRoots", pl ? &pl->roots : NULL, false},
	    {"egress", "allowedDomains", pl ? &pl->domains : NULL, false},
	    {"egress", "presets", pl ? &pl->presets : NULL, false},
	    {"egress", "hostPorts", pl ? &pl->host_ports : NULL, true},
	    {"env", "pass", pl ? &pl->env_pass : NULL, false},
	};
	char *json = policy_to_json(p);
	cJSON *root = json ? cJSON_Parse(json) : NULL;

	free(json);
	if (!root) {
		o->oom = true;
		return;
	}
	for (const cJSON *b = root->child; b; b = b->next) {
		if (strcmp(b->string, "effective") == 0)
			continue; /* derived, not a policy field */
		if (cJSON_IsObject(b)) {
			size_t at = o->len, body;
			put(o, "%s:\n", b->string);
			body = o->len;
			put_block(o, b, a, sizeof(a) / sizeof(a[0]));
			if (!o->oom && o->len == body) /* nothing in it: "limits:" alone is null */
				o->buf[o->len = at] = '\0';
		} else if (!empty(b)) {
			put_key(o, 0, b->string);
			put(o, " ");
			put_scalar(o, b);
			put(o, "\n");
		}
	}
	cJSON_Delete(root);
}

static void put_list(struct out *o, const char *title, const struct learn_items *it)
{
	if (!it->n)
		return;
	put(o, "# %s\n", title);
	for (size_t i = 0; i < it->n; i++) {
		char t[1200];
		put(o, "#   - %s\n", learn_comment_text(it->v[i].comment, t, sizeof(t)));
	}
}

static void put_header(struct out *o, const struct learn_record *r, const struct learn_plan *pl)
{
	char t[1200];

	put(o, "# Learned by `halo-run learn`: the input policy plus what the command used\n"
	       "# that no rule named. A run only shows what it did: paths not taken, hosts\n"
	       "# not reached and failures that stopped the command early are not here.\n"
	       "# Review every addition before committing it.\n");
	put(o, "# command%s:\n", r->n_commands == 1 ? "" : "s");
	for (size_t i = 0; i < r->n_commands; i++)
		put(o, "#   %s\n", learn_comment_text(r->commands[i], t, sizeof(t)));
	if (r->dropped_commands)
		put(o, "#   ... and %llu more calls\n", r->dropped_commands);
	put_list(o, "refused, and not proposed (learning never widens these):", &pl->refused);
	put_list(o, "not seen by this run:", &pl->notes);
	if (r->dropped_hosts || r->dropped_writes)
		put(o, "# the record was full: %llu connections and %llu writes not recorded\n",
		    r->dropped_hosts, r->dropped_writes);
}

static int finish(struct out *o, char **out, size_t *len)
{
	if (o->oom) {
		free(o->buf);
		return -ENOMEM;
	}
	*out = o->buf;
	*len = o->len;
	return 0;
}

int learn_emit(const struct halo_policy *p, const struct learn_record *r,
	       const struct learn_plan *pl, char **out, size_t *len)
{
	struct out o = {0};

	put(&o, "%s", "");
	put_header(&o, r, pl);
	put_body(&o, p, pl);
	return finish(&o, out, len);
}

int learn_emit_base(const struct halo_policy *p, char **out, size_t *len)
{
	struct out o = {0};

	put(&o, "%s", "");
	put_body(&o, p, NULL);
	return finish(&o, out, len);
}

int learn_validate(const char *yaml, size_t len, const struct policy_ctx *ctx,
		   struct policy_diags *d)
{
	struct policy_managed m = {"learned policy", yaml, len, 'y'};
	struct halo_policy *p = NULL;
	int rc = policy_load_managed(&m, NULL, 0, ctx, &p, d);

	policy_free(p);
	return rc < 0 ? rc : d->n_errors ? -EINVAL : 0;
}
