/* Sanitized copies of settings files that mix settings and secrets, shown inside the
 * sandbox instead of the real file so that registry and mirror settings still reach
 * the tools. The input is the user's file (outside input): everything that is, or
 * might be, a secret goes, and so does every line this code does not understand.
 * Comments go too: a commented-out token is still a token.
 *
 * npmrc (npm's ini dialect): kept are `key = value` lines whose key is a plain
 * setting name (registry, @scope:registry, strict-ssl, cafile, proxy...), and section
 * headers. Dropped: keys scoped to a registry (`//host/path/:anything`, any key
 * starting with `/`: that is where
 * npm keeps _authToken, _auth, _password, username, email, certfile, keyfile), keys
 * whose name contains auth, token, pass, secret, user, email, cert, key, otp or cred
 * (any case), keys with characters outside [A-Za-z0-9@:/._-[]], lines without '=',
 * values holding a URL with userinfo (https://user:pw@host/), and values that look
 * like a token (policy_secret_like: the table the environment uses too). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy/policy_int.h"

static const char npmrc_header[] =
    "; halo-run: a sanitized copy; every entry that is or may hold a secret was removed\n";

static const char *const npmrc_secret_words[] = {
    "auth", "token", "pass", "secret", "user", "email", "cert", "key", "otp", "cred",
};

struct out {
	char *buf;
	size_t len, cap;
	bool oom;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->oom)
		return;
	if (o->len + n + 1 > o->cap) {
		size_t cap = (o->len + n + 1) * 2;
		char *g = realloc(o->buf, cap);

		if (!g) {
			o->oom = true;
			return;
		}
		o->buf = g;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static void trim(const char **s, size_t *n)
{
	while (*n && is_space(**s)) {
		(*s)++;
		(*n)--;
	}
	while (*n && is_space((*s)[*n - 1]))
		(*n)--;
}

static bool has_word(const char *s, size_t n, const char *w)
{
	size_t wl = strlen(w);

	for (size_t i = 0; i + wl <= n; i++)
		if (strncasecmp(s + i, w, wl) == 0)
			return true;
	return false;
}

static bool key_chars_ok(const char *k, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)k[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("@:/._-[]", c)))
			return false;
	}
	return n > 0;
}

/* A URL with userinfo anywhere in the value: scheme "://" then '@' before the
 * authority ends. */
static bool value_has_userinfo(const char *v, size_t n)
{
	for (size_t i = 0; i + 3 <= n; i++) {
		if (memcmp(v + i, "://", 3) != 0)
			continue;
		for (size_t k = i + 3; k < n && !strchr("/?# \t\"'", v[k]); k++)
			if (v[k] == '@')
				return true;
	}
	return false;
}

static bool npmrc_key_ok(const char *k, size_t n)
{
	const char *name = k;
	size_t nl = n;

	if (!key_chars_ok(k, n) || k[0] == '/')
		return false;
	/* Brackets only as the array suffix "key[]". */
	for (size_t i = 0; i < n; i++)
		if ((k[i] == '[' || k[i] == ']') &&
		    !(n >= 3 && i >= n - 2 && k[n - 2] == '[' && k[n - 1] == ']'))
			return false;
	/* "@scope:registry": the setting is what follows the last ':'. */
	for (size_t i = 0; i < n; i++)
		if (k[i] == ':') {
			name = k + i + 1;
			nl = n - i - 1;
		}
	for (size_t i = 0; i < sizeof(npmrc_secret_words) / sizeof(npmrc_secret_words[0]); i++)
		if (has_word(k, n, npmrc_secret_words[i]))
			return false;
	return nl > 0 && name[0] != '/';
}

/* A section header of plain characters: kept, so what follows keeps its meaning. */
static int npmrc_section(const char *s, size_t n)
{
	if (n < 3 || s[0] != '[' || s[n - 1] != ']')
		return 0;
	return key_chars_ok(s + 1, n - 2) ? 1 : -1;
}

static void npmrc_line(struct out *o, const char *s, size_t n, bool *stop)
{
	const char *eq, *k, *v;
	size_t kn, vn;
	int sec;

	trim(&s, &n);
	if (n == 0 || s[0] == ';' || s[0] == '#')
		return;
	sec = npmrc_section(s, n);
	if (sec < 0) {
		*stop = true; /* what follows belongs to a section we cannot name */
		return;
	}
	if (sec > 0) {
		put(o, s, n);
		put(o, "\n", 1);
		return;
	}
	eq = memchr(s, '=', n);
	if (!eq)
		return;
	k = s;
	kn = (size_t)(eq - s);
	v = eq + 1;
	vn = n - kn - 1;
	trim(&k, &kn);
	trim(&v, &vn);
	/* npm's ini reader cuts a value at an unquoted ';' or '#' (an inline comment,
	 * which may hold an old token): a value holding either is dropped whole. */
	if (!npmrc_key_ok(k, kn) || value_has_userinfo(v, vn) || memchr(v, ';', vn) ||
	    memchr(v, '#', vn) || policy_secret_like(v, vn, NULL))
		return;
	put(o, k, kn);
	put(o, "=", 1);
	put(o, v, vn);
	put(o, "\n", 1);
}

static size_t strcspn_n(const char *s, size_t len)
{
	size_t n = 0;

	while (n < len && s[n] != '\n' && s[n] != '\r')
		n++;
	return n;
}

static int sanitize_npmrc(const char *in, size_t len, struct out *o)
{
	bool stop = false;

	put(o, npmrc_header, sizeof(npmrc_header) - 1);
	for (size_t i = 0; i < len && !stop;) {
		/* Lines end at CR or LF, as npm's ini reader splits them ([\r\n]+): a CR-only
		 * file must not pass as one line. */
		size_t n = strcspn_n(in + i, len - i);

		npmrc_line(o, in + i, n, &stop);
		i += n + 1;
	}
	return 0;
}

int policy_sanitize(enum policy_sanitizer kind, const char *in, size_t len, char **out,
		    size_t *outlen)
{
	struct out o = {0};
	int rc;

	*out = NULL;
	*outlen = 0;
	if (len > POLICY_SANITIZE_MAX || (len && !in) || (len && memchr(in, '\0', len)))
		return -EINVAL;
	switch (kind) {
	case POLICY_SANITIZE_NPMRC:
		rc = sanitize_npmrc(in ? in : "", len, &o);
		break;
	default:
		return -EINVAL;
	}
	if (rc == 0 && o.oom)
		rc = -ENOMEM;
	if (rc < 0) {
		free(o.buf);
		return rc;
	}
	*out = o.buf;
	*outlen = o.len;
	return 0;
}
