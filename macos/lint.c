/* A structural lint of SBPL text: the forms this generator writes, and nothing else.
 * sandbox-exec compiles profiles only on a Mac; here every profile is at least read
 * back by a parser that knows the operations, the filters and their argument shapes,
 * and that every (param "X") is defined (an undefined one fails compilation), and
 * that no allow follows a deny (the last matching filtered rule wins in Seatbelt). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macos/macos_int.h"

enum node_kind { N_LIST, N_STR, N_RAW, N_SYM, N_NUM };

struct node {
	enum node_kind kind;
	const char *s; /* into the text: symbol, number, or string body */
	size_t len;
	int line;
	struct node **kids;
	size_t n;
};

struct lint {
	const char *p;
	int line;
	const char *const *defined;
	size_t n_defined;
	char *why;
	size_t whylen;
	int err;
	bool seen_deny;
};

static void bad(struct lint *l, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void bad(struct lint *l, int line, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (l->err)
		return;
	l->err = -EINVAL;
	w = snprintf(l->why, l->whylen, "line %d: ", line);
	va_start(ap, fmt);
	if (w >= 0 && (size_t)w < l->whylen)
		vsnprintf(l->why + w, l->whylen - (size_t)w, fmt, ap);
	va_end(ap);
}

static void node_free(struct node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++)
		node_free(n->kids[i]);
	free(n->kids);
	free(n);
}

/* ---------------------------------------------------------------- reader */

static void skip_space(struct lint *l)
{
	for (;;) {
		if (*l->p == '\n') {
			l->line++;
			l->p++;
		} else if (*l->p == ' ' || *l->p == '\t' || *l->p == '\r') {
			l->p++;
		} else if (*l->p == ';') {
			while (*l->p && *l->p != '\n')
				l->p++;
		} else {
			return;
		}
	}
}

static bool sym_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c != '\0' && strchr("*-_.:+!?<>=/", c) != NULL);
}

static struct node *new_node(struct lint *l, enum node_kind k)
{
	struct node *n = calloc(1, sizeof(*n));

	if (!n && !l->err) {
		l->err = -ENOMEM;
		snprintf(l->why, l->whylen, "out of memory");
	}
	if (n) {
		n->kind = k;
		n->line = l->line;
	}
	return n;
}

/* "..." with \" and \\ escapes, or #"..." raw. No control bytes in either. */
static struct node *read_string(struct lint *l, bool raw)
{
	struct node *n = new_node(l, raw ? N_RAW : N_STR);
	const char *start = l->p;

	if (!n)
		return NULL;
	for (;;) {
		unsigned char c = (unsigned char)*l->p;
		if (c == '\0') {
			bad(l, n->line, "unterminated string");
			break;
		}
		if (c < 0x20 || c == 0x7f) {
			bad(l, l->line, "control character in a string");
			break;
		}
		if (c == '"')
			break;
		if (c == '\\' && !raw) {
			if (l->p[1] != '"' && l->p[1] != '\\') {
				bad(l, l->line, "unknown escape \\%c in a string",
				    l->p[1] ? l->p[1] : '0');
				break;
			}
			l->p++;
		}
		l->p++;
	}
	n->s = start;
	n->len = (size_t)(l->p - start);
	if (*l->p == '"')
		l->p++;
	return n;
}

static struct node *read_form(struct lint *l, int depth);

static struct node *read_list(struct lint *l, int depth)
{
	struct node *n = new_node(l, N_LIST);

	if (!n)
		return NULL;
	for (;;) {
		skip_space(l);
		if (*l->p == ')') {
			l->p++;
			return n;
		}
		if (*l->p == '\0') {
			bad(l, n->line, "unbalanced '(': no closing ')'");
			return n;
		}
		struct node *k = read_form(l, depth + 1), **kids;
		if (!k || l->err) {
			node_free(k);
			return n;
		}
		kids = realloc(n->kids, (n->n + 1) * sizeof(*kids));
		if (!kids) {
			node_free(k);
			bad(l, l->line, "out of memory");
			return n;
		}
		n->kids = kids;
		n->kids[n->n++] = k;
	}
}

static struct node *read_form(struct lint *l, int depth)
{
	struct node *n;

	if (depth > 32) {
		bad(l, l->line, "forms nested too deeply");
		return NULL;
	}
	skip_space(l);
	if (*l->p == '(') {
		l->p++;
		return read_list(l, depth);
	}
	if (*l->p == ')') {
		bad(l, l->line, "unbalanced ')'");
		return NULL;
	}
	if (*l->p == '"') {
		l->p++;
		return read_string(l, false);
	}
	if (l->p[0] == '#' && l->p[1] == '"') {
		l->p += 2;
		return read_string(l, true);
	}
	if (!sym_char(*l->p)) {
		bad(l, l->line, "unexpected character '%c'", *l->p);
		return NULL;
	}
	n = new_node(l, N_SYM);
	if (!n)
		return NULL;
	n->s = l->p;
	while (sym_char(*l->p))
		l->p++;
	n->len = (size_t)(l->p - n->s);
	if (strspn(n->s, "0123456789") == n->len)
		n->kind = N_NUM;
	return n;
}

/* ---------------------------------------------------------------- checks */

static bool is(const struct node *n, const char *sym)
{
	return n && n->kind == N_SYM && n->len == strlen(sym) && memcmp(n->s, sym, n->len) == 0;
}

static bool in_table(const struct node *n, const char *const *t)
{
	for (; *t; t++)
		if (is(n, *t))
			return true;
	return false;
}

static const char *const operations[] = {
    "process-fork",
    "process-exec",
    "process-exec*",
    "signal",
    "process-info*",
    "sysctl-read",
    "sysctl-write",
    "ipc-posix-sem",
    "ipc-posix-shm",
    "ipc-posix-shm-read*",
    "ipc-posix-shm-read-data",
    "ipc-posix-shm-write-data",
    "iokit-open",
    "user-preference-read",
    "mach-lookup",
    "pseudo-tty",
    "file-read*",
    "file-read-data",
    "file-read-metadata",
    "file-write*",
    "file-write-data",
    "file-write-unlink",
    "file-write-create",
    "file-ioctl",
    "network-outbound",
    "network-inbound",
    "network-bind",
    "system-socket",
    "appleevent-send",
    "lsopen",
    NULL,
};

enum shape {
	S_PATH,
	S_REGEX,
	S_STRING,
	S_ALL,
	S_NOT,
	S_TARGET,
	S_REMOTE,
	S_VNODE,
	S_DOMAIN,
	S_PROTOCOL
};

static const struct {
	const char *name;
	enum shape shape;
} filters[] = {
    {"literal", S_PATH},	  {"subpath", S_PATH},
    {"path-literal", S_PATH},	  {"regex", S_REGEX},
    {"global-name", S_STRING},	  {"global-name-prefix", S_STRING},
    {"sysctl-name", S_STRING},	  {"sysctl-name-prefix", S_STRING},
    {"extension", S_STRING},	  {"iokit-registry-entry-class", S_STRING},
    {"ipc-posix-name", S_STRING}, {"ipc-posix-name-prefix", S_STRING},
    {"require-all", S_ALL},	  {"require-any", S_ALL},
    {"require-not", S_NOT},	  {"target", S_TARGET},
    {"remote", S_REMOTE},	  {"vnode-type", S_VNODE},
    {"socket-domain", S_DOMAIN},  {"socket-protocol", S_PROTOCOL},
};

static const char *const targets[] = {"same-sandbox", "self", "children", NULL};
static const char *const vnode_types[] = {
    "REGULAR-FILE", "DIRECTORY", "SYMLINK", "CHARACTER-DEVICE",
    "BLOCK-DEVICE", "FIFO",	 "SOCKET",  NULL};
static const char *const domains[] = {"AF_SYSTEM", "AF_UNIX", "AF_INET", "AF_INET6", NULL};

static void check_param(struct lint *l, const struct node *n)
{
	if (n->n != 2 || n->kids[1]->kind != N_STR) {
		bad(l, n->line, "(param ...) takes one string");
		return;
	}
	for (size_t i = 0; i < l->n_defined; i++)
		if (strlen(l->defined[i]) == n->kids[1]->len &&
		    memcmp(l->defined[i], n->kids[1]->s, n->kids[1]->len) == 0)
			return;
	bad(l, n->line, "parameter \"%.*s\" is used but not defined with -D", (int)n->kids[1]->len,
	    n->kids[1]->s);
}

static bool one_arg(struct lint *l, const struct node *f, const char *name)
{
	if (f->n == 2)
		return true;
	bad(l, f->line, "(%s ...) takes exactly one argument", name);
	return false;
}

/* localhost:PORT with PORT 1..65535: never "*" and never another host. */
static void check_remote_ip(struct lint *l, const struct node *s)
{
	unsigned long port = 0;
	size_t k = strlen("localhost:");

	if (s->kind == N_STR && s->len > k && s->len <= k + 5 &&
	    memcmp(s->s, "localhost:", k) == 0) {
		size_t i;
		for (i = k; i < s->len && s->s[i] >= '0' && s->s[i] <= '9'; i++)
			port = port * 10 + (unsigned long)(s->s[i] - '0');
		if (i == s->len && port >= 1 && port <= 65535)
			return;
	}
	bad(l, s->line, "(remote ip ...) must be \"localhost:PORT\" with one port");
}

static void check_filter(struct lint *l, const struct node *f);

static void check_shape(struct lint *l, const struct node *f, const char *name, enum shape sh)
{
	const struct node *a = f->n > 1 ? f->kids[1] : NULL;

	switch (sh) {
	case S_PATH:
		if (!one_arg(l, f, name))
			return;
		if (a->kind == N_LIST && a->n > 0 && is(a->kids[0], "param"))
			check_param(l, a);
		else if (a->kind != N_STR)
			bad(l, f->line, "(%s ...) takes a string or (param \"KEY\")", name);
		else if (a->len == 0 || a->s[0] != '/')
			bad(l, f->line, "(%s ...) takes an absolute path", name);
		return;
	case S_REGEX:
		if (one_arg(l, f, name) && a->kind != N_STR && a->kind != N_RAW)
			bad(l, f->line, "(regex ...) takes a string");
		return;
	case S_STRING:
		if (one_arg(l, f, name) && a->kind != N_STR)
			bad(l, f->line, "(%s ...) takes a string", name);
		return;
	case S_ALL:
		if (f->n < 2)
			bad(l, f->line, "(%s ...) needs at least one filter", name);
		for (size_t i = 1; i < f->n; i++)
			check_filter(l, f->kids[i]);
		return;
	case S_NOT:
		if (one_arg(l, f, name))
			check_filter(l, a);
		return;
	case S_TARGET:
		if (one_arg(l, f, name) && !in_table(a, targets))
			bad(l, f->line, "unknown (target ...)");
		return;
	case S_VNODE:
		if (one_arg(l, f, name) && !in_table(a, vnode_types))
			bad(l, f->line, "unknown (vnode-type ...)");
		return;
	case S_DOMAIN:
		if (one_arg(l, f, name) && !in_table(a, domains))
			bad(l, f->line, "unknown (socket-domain ...)");
		return;
	case S_PROTOCOL:
		if (one_arg(l, f, name) && a->kind != N_NUM)
			bad(l, f->line, "(socket-protocol ...) takes a number");
		return;
	case S_REMOTE:
		if (f->n == 3 && is(a, "ip"))
			check_remote_ip(l, f->kids[2]);
		else if (f->n == 3 && is(a, "unix-socket") && f->kids[2]->kind == N_LIST &&
			 f->kids[2]->n > 0 &&
			 (is(f->kids[2]->kids[0], "path-literal") ||
			  is(f->kids[2]->kids[0], "subpath") || is(f->kids[2]->kids[0], "literal")))
			check_filter(l, f->kids[2]);
		else
			bad(l, f->line,
			    "(remote ...) takes ip \"localhost:PORT\" or unix-socket "
			    "with a path filter");
		return;
	}
}

static void check_filter(struct lint *l, const struct node *f)
{
	if (l->err)
		return;
	if (f->kind != N_LIST || f->n == 0 || f->kids[0]->kind != N_SYM) {
		bad(l, f->line, "a filter must be a form such as (subpath ...)");
		return;
	}
	for (size_t i = 0; i < sizeof(filters) / sizeof(filters[0]); i++)
		if (is(f->kids[0], filters[i].name)) {
			check_shape(l, f, filters[i].name, filters[i].shape);
			return;
		}
	bad(l, f->line, "unknown filter (%.*s ...)", (int)f->kids[0]->len, f->kids[0]->s);
}

static void check_with(struct lint *l, const struct node *w)
{
	if (w->n == 3 && is(w->kids[1], "message") && w->kids[2]->kind == N_STR)
		return;
	if (w->n == 2 && (is(w->kids[1], "report") || is(w->kids[1], "no-log")))
		return;
	bad(l, w->line, "unknown (with ...) modifier");
}

/* (allow|deny OPERATION... FILTER-OR-MODIFIER...) */
static void check_rule(struct lint *l, const struct node *r, bool allow)
{
	size_t i = 1;

	if (r->n < 2) {
		bad(l, r->line, "a rule needs an operation");
		return;
	}
	if (is(r->kids[1], "default")) {
		if (allow)
			bad(l, r->line, "(allow default) opens everything: never used");
		else if (r->n > 3 ||
			 (r->n == 3 && (r->kids[2]->kind != N_LIST || r->kids[2]->n == 0 ||
					!is(r->kids[2]->kids[0], "with"))))
			bad(l, r->line, "(deny default) takes no filter");
		else if (r->n == 3)
			check_with(l, r->kids[2]);
		return;
	}
	if (allow && l->seen_deny)
		bad(l, r->line, "an allow after a deny: denies must come last");
	if (!allow)
		l->seen_deny = true;
	for (; i < r->n && r->kids[i]->kind == N_SYM; i++)
		if (!in_table(r->kids[i], operations))
			bad(l, r->kids[i]->line, "unknown operation %.*s", (int)r->kids[i]->len,
			    r->kids[i]->s);
	if (i == 1)
		bad(l, r->line, "a rule needs an operation");
	for (; i < r->n && !l->err; i++) {
		const struct node *f = r->kids[i];
		if (f->kind == N_LIST && f->n > 0 && is(f->kids[0], "with"))
			check_with(l, f);
		else
			check_filter(l, f);
	}
}

static void check_top(struct lint *l, const struct node *f, size_t index)
{
	if (f->kind != N_LIST || f->n == 0) {
		bad(l, f->line, "a top-level item must be a form");
		return;
	}
	if (index == 0) {
		if (!is(f->kids[0], "version") || f->n != 2 || f->kids[1]->kind != N_NUM ||
		    f->kids[1]->len != 1 || f->kids[1]->s[0] != '1')
			bad(l, f->line, "the profile must start with (version 1)");
		return;
	}
	if (is(f->kids[0], "allow"))
		check_rule(l, f, true);
	else if (is(f->kids[0], "deny"))
		check_rule(l, f, false);
	else if (f->kids[0]->kind == N_SYM)
		bad(l, f->line, "unknown top-level form (%.*s ...)", (int)f->kids[0]->len,
		    f->kids[0]->s);
	else
		bad(l, f->line, "unknown top-level form");
}

int macos_sbpl_lint(const char *text, const char *const *defined, size_t n_defined, char *why,
		    size_t whylen)
{
	struct lint l = {.p = text,
			 .line = 1,
			 .defined = defined,
			 .n_defined = n_defined,
			 .why = why,
			 .whylen = whylen};
	size_t index = 0;

	if (whylen)
		why[0] = '\0';
	for (;;) {
		skip_space(&l);
		if (!*l.p)
			break;
		struct node *f = read_form(&l, 0);
		if (f && !l.err)
			check_top(&l, f, index++);
		node_free(f);
		if (l.err)
			return l.err;
	}
	if (index == 0) {
		bad(&l, l.line, "empty profile");
		return l.err;
	}
	return 0;
}
