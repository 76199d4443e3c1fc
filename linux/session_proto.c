/* The session's control protocol: frames, one table of keys, the parser and the
 * builder. See session_proto.h for the format and why every peer is hostile. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/session_proto.h"
#include "exit/exit.h"

#define V(x)	    (1u << (x))
#define STR_MAX	    4096 /* a single value: a path, a message */
#define ID_MAX	    (1LL << 62)
#define PID_MAX_LIM (1LL << 22) /* the kernel's pid_max ceiling */

static const char *const verbs[SESSION_N_VERBS] = {
    [SESSION_HELLO] = "hello", [SESSION_OK] = "ok",	    [SESSION_REFUSED] = "refused",
    [SESSION_RUN] = "run",     [SESSION_SIGNAL] = "signal", [SESSION_KILL] = "kill",
    [SESSION_EXIT] = "exit",   [SESSION_FAILED] = "failed", [SESSION_STOP] = "stop",
    [SESSION_INFO] = "info",
};

enum vtype { T_VERSION, T_NAME, T_HEX, T_STR, T_TEXT, T_ABS, T_ARG, T_ENV, T_INT, T_SIG, T_KIND };

struct key_row {
	const char *name;
	enum vtype type;
	long long min, max; /* T_INT */
	unsigned verbs;	    /* where it may appear */
	unsigned required;  /* where it must */
	size_t off;	    /* of the const char * or long long in session_msg */
};

#define M(f) offsetof(struct session_msg, f)
#define RUNISH                                                                                     \
	(V(SESSION_RUN) | V(SESSION_SIGNAL) | V(SESSION_KILL) | V(SESSION_EXIT) | V(SESSION_FAILED))
/* clang-format off */
static const struct key_row keys[SESSION_N_KEYS] = {
    [SESSION_K_V] = {"v", T_VERSION, 0, 0, V(SESSION_HELLO), V(SESSION_HELLO), M(version)},
    [SESSION_K_NAME] = {"name", T_NAME, 0, 0, V(SESSION_HELLO), V(SESSION_HELLO), M(name)},
    [SESSION_K_POLICY] = {"policy", T_HEX, 0, 0, V(SESSION_HELLO), V(SESSION_HELLO), M(policy)},
    [SESSION_K_OPTIONS] = {"options", T_TEXT, 0, 0, V(SESSION_HELLO), V(SESSION_HELLO), M(options)},
    [SESSION_K_WORKSPACE] = {"workspace", T_ABS, 0, 0, V(SESSION_HELLO) | V(SESSION_INFO),
			     V(SESSION_HELLO), M(workspace)},
    [SESSION_K_ARG] = {"arg", T_ARG, 0, 0, V(SESSION_RUN), V(SESSION_RUN), 0},
    [SESSION_K_ENV] = {"env", T_ENV, 0, 0, V(SESSION_RUN), 0, 0},
    [SESSION_K_ID] = {"id", T_INT, 1, ID_MAX, RUNISH, 0, M(id)},
    [SESSION_K_SIG] = {"sig", T_SIG, 0, 0, V(SESSION_SIGNAL), V(SESSION_SIGNAL), M(sig)},
    [SESSION_K_STATUS] = {"status", T_INT, 0, 0xffff, V(SESSION_EXIT), V(SESSION_EXIT), M(status)},
    [SESSION_K_KIND] = {"kind", T_KIND, 0, 0, V(SESSION_FAILED), V(SESSION_FAILED), 0},
    [SESSION_K_ERR] = {"err", T_INT, 0, 4095, V(SESSION_FAILED), 0, M(err)},
    [SESSION_K_MSG] = {"msg", T_STR, 0, 0, V(SESSION_FAILED), 0, M(msg)},
    [SESSION_K_WHY] = {"why", T_TEXT, 0, 0, V(SESSION_REFUSED), V(SESSION_REFUSED), M(why)},
    [SESSION_K_CALLS] = {"calls", T_INT, 0, 1LL << 31, V(SESSION_INFO), 0, M(calls)},
    [SESSION_K_IDLE] = {"idle", T_INT, 0, ID_MAX, V(SESSION_INFO), 0, M(idle)},
    [SESSION_K_PID] = {"pid", T_INT, 1, PID_MAX_LIM, V(SESSION_INFO), 0, M(pid)},
    [SESSION_K_WALL] = {"wall", T_INT, 0, 1LL << 40, V(SESSION_RUN), 0, M(wall)},
};
/* clang-format on */

static const int forwarded[] = {HALO_FORWARDED_SIGNALS};

const char *session_verb_name(enum session_verb v)
{
	return (unsigned)v < SESSION_N_VERBS ? verbs[v] : "?";
}

bool session_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > SESSION_NAME_MAX || name[0] == '.' || name[0] == '-')
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
	       n;
}

int session_frame_len(const unsigned char *buf, size_t n, size_t *frame_len)
{
	uint32_t len;

	if (n < 4)
		return 0;
	len = (uint32_t)buf[0] | (uint32_t)buf[1] << 8 | (uint32_t)buf[2] << 16 |
	      (uint32_t)buf[3] << 24;
	if (len == 0 || len > SESSION_FRAME_MAX)
		return -EMSGSIZE;
	if (n - 4 < len)
		return 0;
	*frame_len = (size_t)len + 4;
	return 1;
}

/* Plain decimal: no sign, no leading zero, no spaces. */
static bool parse_int(const char *s, long long min, long long max, long long *out)
{
	long long v = 0;
	size_t n = strlen(s);

	if (n == 0 || n > 19 || (s[0] == '0' && n > 1) || strspn(s, "0123456789") != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (v > (max - (s[i] - '0')) / 10)
			return false;
		v = v * 10 + (s[i] - '0');
	}
	if (v < min)
		return false;
	*out = v;
	return true;
}

static bool env_ok(const char *s)
{
	const char *eq = strchr(s, '=');

	return eq && eq != s;
}

static bool hex_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 16 && n <= 64 && strspn(s, "0123456789abcdef") == n;
}

/* One value against its row; lists are counted here and filled in a second pass. */
static bool value_ok(const struct key_row *r, const char *v, struct session_msg *m)
{
	size_t n = strlen(v);
	long long x;

	switch (r->type) {
	case T_VERSION:
		return strcmp(v, SESSION_PROTO_VERSION) == 0;
	case T_NAME:
		return session_name_ok(v);
	case T_HEX:
		return hex_ok(v);
	case T_STR:
		return n <= STR_MAX;
	case T_TEXT:
		return n > 0 && n <= STR_MAX;
	case T_ABS:
		return n > 0 && n <= STR_MAX && v[0] == '/';
	case T_ARG:
		return ++m->n_arg <= SESSION_LIST_MAX;
	case T_ENV:
		return env_ok(v) && ++m->n_env <= SESSION_LIST_MAX;
	case T_INT:
		return parse_int(v, r->min, r->max, (long long *)((char *)m + r->off));
	case T_SIG:
		if (!parse_int(v, 1, 64, &x))
			return false;
		for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
			if (forwarded[i] == x)
				return (m->sig = x), true;
		return false;
	case T_KIND:
		if (strcmp(v, "exec") == 0 || strcmp(v, "setup") == 0)
			return (m->kind = v[0] == 'e' ? SESSION_FAIL_EXEC : SESSION_FAIL_SETUP),
			       true;
		return false;
	}
	return false;
}

static int fail(struct session_msg *m, char *why, size_t n, int err, const char *fmt,
		const char *arg)
{
	session_msg_free(m);
	memset(m, 0, sizeof(*m));
	snprintf(why, n, fmt, arg ? arg : "");
	return err;
}

static int find_key(const char *k)
{
	for (int i = 0; i < SESSION_N_KEYS; i++)
		if (strcmp(keys[i].name, k) == 0)
			return i;
	return -1;
}

/* The lists, in order, pointing into the payload. */
static int fill_lists(const char *p, const char *end, struct session_msg *m)
{
	size_t a = 0, e = 0;

	m->arg = calloc(m->n_arg + 1, sizeof(char *));
	m->env = calloc(m->n_env + 1, sizeof(char *));
	if (!m->arg || !m->env)
		return -ENOMEM;
	p += strlen(p) + 1; /* the verb */
	while (p < end) {
		const char *k = p, *v = p + strlen(p) + 1;
		if (strcmp(k, "arg") == 0)
			m->arg[a++] = (char *)v;
		else if (strcmp(k, "env") == 0)
			m->env[e++] = (char *)v;
		p = v + strlen(v) + 1;
	}
	return 0;
}

static int parse_pairs(const char *p, const char *end, struct session_msg *m, char *why,
		       size_t why_n)
{
	while (p < end) {
		const char *k = p, *v;
		int ki;

		p += strlen(p) + 1;
		if (p >= end)
			return fail(m, why, why_n, -EINVAL, "key '%.64s' has no value", k);
		v = p;
		p += strlen(p) + 1;
		if ((ki = find_key(k)) < 0)
			return fail(m, why, why_n, -EINVAL, "unknown key '%.64s'", k);
		if (!(keys[ki].verbs & V(m->verb)))
			return fail(m, why, why_n, -EINVAL, "key '%s' does not belong here",
				    keys[ki].name);
		if ((m->have & (1u << ki)) && keys[ki].type != T_ARG && keys[ki].type != T_ENV)
			return fail(m, why, why_n, -EINVAL, "key '%s' given twice", keys[ki].name);
		if (!value_ok(&keys[ki], v, m))
			return fail(m, why, why_n, -EINVAL, "bad value for '%s'", keys[ki].name);
		m->have |= 1u << ki;
		if (keys[ki].type <= T_ABS)
			*(const char **)((char *)m + keys[ki].off) = v;
	}
	return 0;
}

int session_msg_parse(const char *payload, size_t len, struct session_msg *m, char *why,
		      size_t why_n)
{
	const char *end = payload + len;
	int rc;

	memset(m, 0, sizeof(*m));
	if (len == 0 || payload[len - 1] != '\0')
		return fail(m, why, why_n, -EINVAL, "frame does not end with a NUL%s", NULL);
	m->verb = SESSION_N_VERBS;
	for (int v = 0; v < SESSION_N_VERBS; v++)
		if (strcmp(payload, verbs[v]) == 0)
			m->verb = (enum session_verb)v;
	if (m->verb == SESSION_N_VERBS)
		return fail(m, why, why_n, -EINVAL, "unknown verb '%.32s'", payload);
	rc = parse_pairs(payload + strlen(payload) + 1, end, m, why, why_n);
	if (rc < 0)
		return rc;
	for (int k = 0; k < SESSION_N_KEYS; k++)
		if ((keys[k].required & V(m->verb)) && !(m->have & (1u << k)))
			return fail(m, why, why_n, -EINVAL, "missing key '%s'", keys[k].name);
	if ((rc = fill_lists(payload, end, m)) < 0)
		return fail(m, why, why_n, rc, "out of memory%s", NULL);
	return 0;
}

void session_msg_free(struct session_msg *m)
{
	free(m->arg);
	free(m->env);
	free(m->owned);
	m->arg = m->env = NULL;
	m->owned = NULL;
}

static void put_raw(struct session_buf *b, const char *s)
{
	size_t n = strlen(s) + 1;

	if (b->err)
		return;
	if (b->len + n - 4 > SESSION_FRAME_MAX) {
		b->err = -E2BIG;
		return;
	}
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n)
			cap *= 2;
		char *g = realloc(b->p, cap);
		if (!g) {
			b->err = -ENOMEM;
			return;
		}
		b->p = g;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

void session_buf_begin(struct session_buf *b, enum session_verb v)
{
	b->len = 4; /* the header, written by end */
	b->err = 0;
	if (!b->p && !(b->p = malloc(b->cap = 256)))
		b->err = -ENOMEM;
	put_raw(b, session_verb_name(v));
}

void session_buf_put(struct session_buf *b, enum session_key k, const char *value)
{
	put_raw(b, keys[k].name);
	put_raw(b, value);
}

void session_buf_put_int(struct session_buf *b, enum session_key k, long long v)
{
	char num[24];

	snprintf(num, sizeof(num), "%lld", v);
	session_buf_put(b, k, num);
}

int session_buf_end(struct session_buf *b)
{
	uint32_t n = (uint32_t)(b->len - 4);

	if (b->err)
		return b->err;
	b->p[0] = (char)(n & 0xff);
	b->p[1] = (char)(n >> 8 & 0xff);
	b->p[2] = (char)(n >> 16 & 0xff);
	b->p[3] = (char)(n >> 24 & 0xff);
	return 0;
}

void session_buf_free(struct session_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}
