/* Registry settings passed from the caller's environment, cleaned of what would carry
 * a credential or run code: URLs lose their userinfo, query and known path tokens;
 * GOFLAGS keeps only build-setting flags. Each function edits the value in place and
 * says what it removed, so that the caller can warn (naming the variable, never the
 * value). Losing a URL beats leaking a token: every cut errs on the long side. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "env/env.h"

static bool is_scheme_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '.' || c == '-';
}

/* The end of the URL whose authority starts at `auth`: the separator before the next
 * URL's scheme, or the end of the value. Only another "://" ends a URL: a password
 * may hold '/', '?', '#', ',', '|' or a blank. */
static char *url_end(char *auth)
{
	char *next = strstr(auth, "://");

	if (!next)
		return auth + strlen(auth);
	while (next > auth && is_scheme_char(next[-1]))
		next--;
	if (next > auth && strchr(",| \t\n", next[-1]))
		next--;
	return next;
}

static void cut(char *from, char *to)
{
	memmove(from, to, strlen(to) + 1);
}

/* Where the authority starting at `auth` ends: the first '/', '?', '#' or '\\' (which
 * the WHATWG parser reads as '/'), else the URL's end. */
static char *authority_end(char *auth, char *end)
{
	char *a = auth + strcspn(auth, "/?#\\");

	return a < end ? a : end;
}

/* Remove the userinfo of every URL in `v` ("https://u:p@h/x" becomes "https://h/x"):
 * everything between "://" and the last '@' of the authority, whatever it holds (',',
 * '|' or blanks included). An '@' past the authority ("/@scope") is a path's, and a cut
 * there would point the URL at another host; runner_env_url_ambiguous() refuses the
 * values where the two readings disagree. */
bool runner_env_strip_userinfo(char *v)
{
	bool any = false;

	for (char *p = v; (p = strstr(p, "://")) != NULL;) {
		char *auth = p + 3, *end = authority_end(auth, url_end(auth)), *at = NULL;

		for (char *q = auth; q < end; q++)
			if (*q == '@')
				at = q;
		if (at) {
			cut(auth, at + 1);
			any = true;
		}
		p = auth;
	}
	return any;
}

/* A port that is empty or digits; the host:port ends at a list separator. */
static bool port_ok(const char *hp, const char *end)
{
	const char *c, *sep = hp + strcspn(hp, ",| \t\n");

	if (sep < end)
		end = sep;
	if (hp < end && *hp == '[') {
		const char *rb = memchr(hp, ']', (size_t)(end - hp));
		if (!rb)
			return false;
		hp = rb + 1;
	}
	c = memchr(hp, ':', (size_t)(end - hp));
	if (!c)
		return true;
	for (c++; c < end; c++)
		if (*c < '0' || *c > '9')
			return false;
	return true;
}

/* An '@' past the authority, inside a segment (Azure Artifacts' "feed@Local" view,
 * "pkg@1.0"), could have been meant as the end of a userinfo holding a '/', '?' or
 * '#' when what follows it reads as a host (a '.', ':' or '[' before the next '/',
 * '?', '#' or separator), or when the authority itself does not (no '.', ':' or '[':
 * "https://tok/en@h" has the token as its "host"). */
static bool at_reads_as_userinfo(const char *hp, const char *aend, const char *after,
				 const char *uend)
{
	size_t n = strcspn(after, "/?#\\,| \t\n"), an = (size_t)(aend - hp);

	if (after + n > uend)
		n = (size_t)(uend - after);
	return memchr(after, '.', n) || memchr(after, ':', n) || memchr(after, '[', n) ||
	       !(memchr(hp, '.', an) || memchr(hp, ':', an) || memchr(hp, '[', an));
}

bool runner_env_url_ambiguous(const char *v)
{
	for (const char *p = v; (p = strstr(p, "://")) != NULL;) {
		char *auth = (char *)p + 3, *uend = url_end(auth),
		     *aend = authority_end(auth, uend);
		const char *hp = auth;

		for (const char *q = auth; q < aend; q++)
			if (*q == '@')
				hp = q + 1;
		/* Another URL glued on without a list separator: a "://" in a password. */
		if (!port_ok(hp, aend) || (*uend && !strchr(",| \t\n", *uend)))
			return true;
		for (const char *q = aend; q < uend; q++)
			if (*q == '@' && q[-1] != '/' &&
			    at_reads_as_userinfo(hp, aend, q + 1, uend))
				return true;
		p = auth;
	}
	return false;
}

/* Remove the query and fragment of every URL ("?token=...", "?auth=..."): registries
 * are addressed by path; a query is where tokens ride. The cut stops at a list
 * separator (',', '|', a blank), so that the rest of a GOPROXY list survives; what a
 * query held past one is left to the token check of the whole value. */
bool runner_env_strip_query(char *v)
{
	bool any = false;

	for (char *p = v; (p = strstr(p, "://")) != NULL;) {
		char *auth = p + 3, *end, *q;

		/* Every query of the URL: one past a separator ("?a=1,b?token=") too. */
		while ((q = auth + strcspn(auth, "?#")) < (end = url_end(auth))) {
			char *stop = q + strcspn(q, ",| \t\n");
			cut(q, stop < end ? stop : end);
			any = true;
		}
		p = auth;
	}
	return any;
}

/* Hosts that take the account's token as the first path segment. */
static const struct {
	const char *host;	 /* exact, or ".suffix" */
	const char *const *keep; /* first segments that are not tokens */
} path_token_hosts[] = {
    /* Gemfury: https://pypi.fury.io/TOKEN/ACCOUNT/ (npm., gem., go-proxy., push....) */
    {".fury.io", (const char *const[]){NULL}},
    /* Cloudsmith: https://dl.cloudsmith.io/TOKEN/OWNER/REPO/ (or public/, basic/) */
    {"dl.cloudsmith.io", (const char *const[]){"public", "basic", NULL}},
};

static bool host_is(const char *h, size_t hl, const char *pat)
{
	size_t pl = strlen(pat);

	if (pat[0] == '.')
		return hl > pl && strncasecmp(h + hl - pl, pat, pl) == 0;
	return hl == pl && strncasecmp(h, pat, pl) == 0;
}

static bool listed(const char *const *l, const char *s, size_t n)
{
	for (; *l; l++)
		if (strlen(*l) == n && memcmp(*l, s, n) == 0)
			return true;
	return false;
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/* The host as its reader sees it: percent-escapes decoded (WHATWG parsers decode a
 * host's), one trailing dot dropped. Into out (n bytes); its length. */
static size_t host_seen(const char *h, size_t hl, char *out, size_t n)
{
	size_t w = 0;

	for (size_t i = 0; i < hl && w + 1 < n; i++) {
		int hi = h[i] == '%' && i + 2 < hl ? hex_digit(h[i + 1]) : -1;
		int lo = hi >= 0 ? hex_digit(h[i + 2]) : -1;

		out[w++] = lo >= 0 ? (char)(hi * 16 + lo) : h[i];
		i += lo >= 0 ? 2 : 0;
	}
	if (w && out[w - 1] == '.')
		w--;
	out[w] = '\0';
	return w;
}

/* The token segment of one URL (authority at `auth`), removed; true if cut. */
static bool strip_one_path_token(char *auth, char *end)
{
	size_t hl = strcspn(auth, ":/");
	char *seg, *seg_end;

	if (auth + hl >= end || auth[hl] == ':')
		hl = strcspn(auth, "/"); /* a port: the host is before it */
	if (auth + hl >= end)
		return false;
	seg = auth + hl + 1;
	seg_end = seg + strcspn(seg, "/");
	if (seg_end >= end || seg_end == seg || seg_end + 1 >= end)
		return false; /* one segment only: the account, not a token */
	char host[256];
	size_t h = host_seen(auth, strcspn(auth, ":/"), host, sizeof(host));

	for (size_t i = 0; i < sizeof(path_token_hosts) / sizeof(path_token_hosts[0]); i++) {
		if (!host_is(host, h, path_token_hosts[i].host) ||
		    listed(path_token_hosts[i].keep, seg, (size_t)(seg_end - seg)))
			continue;
		cut(seg, seg_end + 1);
		return true;
	}
	return false;
}

bool runner_env_strip_path_tokens(char *v)
{
	bool any = false;

	for (char *p = v; (p = strstr(p, "://")) != NULL;) {
		char *auth = p + 3;

		any |= strip_one_path_token(auth, url_end(auth));
		p = auth;
	}
	return any;
}

/* GOFLAGS: only flags that select how packages are built. Dropped: -toolexec and -exec
 * (run a program), -overlay, -modfile, -pkgdir (read build inputs from elsewhere),
 * -ldflags, -gcflags, -asmflags (-extld and friends run programs), and anything else. */
enum flag_val { FV_BOOL, FV_DIGITS, FV_ENUM, FV_TAGS };
static const struct {
	const char *name;
	enum flag_val val;
	const char *const *choices; /* FV_ENUM */
} goflags_allowed[] = {
    {"mod", FV_ENUM, (const char *const[]){"mod", "vendor", "readonly", NULL}},
    {"modcacherw", FV_BOOL, NULL},
    {"trimpath", FV_BOOL, NULL},
    {"buildvcs", FV_ENUM, (const char *const[]){"true", "false", "auto", NULL}},
    {"tags", FV_TAGS, NULL},
    {"p", FV_DIGITS, NULL},
    {"race", FV_BOOL, NULL},
    {"msan", FV_BOOL, NULL},
    {"asan", FV_BOOL, NULL},
    {"cover", FV_BOOL, NULL},
    {"covermode", FV_ENUM, (const char *const[]){"set", "count", "atomic", NULL}},
    {"count", FV_DIGITS, NULL},
    {"short", FV_BOOL, NULL},
    {"failfast", FV_BOOL, NULL},
    {"a", FV_BOOL, NULL},
    {"v", FV_BOOL, NULL},
    {"x", FV_BOOL, NULL},
    {"work", FV_BOOL, NULL},
};

static bool value_ok(enum flag_val k, const char *const *choices, const char *v, size_t n)
{
	if (k == FV_BOOL)
		return !v || (n == 4 && !memcmp(v, "true", 4)) ||
		       (n == 5 && !memcmp(v, "false", 5));
	if (!v || n == 0)
		return false;
	if (k == FV_ENUM)
		return listed(choices, v, n);
	for (size_t i = 0; i < n; i++) {
		char c = v[i];
		bool digit = c >= '0' && c <= '9';
		bool tag =
		    digit || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || strchr("_.,", c);
		if (k == FV_DIGITS ? !digit : !tag)
			return false;
	}
	return true;
}

static bool goflag_ok(const char *f, size_t n)
{
	const char *name = f, *eq;
	size_t nl;

	if (n < 2 || f[0] != '-')
		return false;
	name += (f[1] == '-') ? 2 : 1;
	eq = memchr(name, '=', n - (size_t)(name - f));
	nl = eq ? (size_t)(eq - name) : n - (size_t)(name - f);
	for (size_t i = 0; i < sizeof(goflags_allowed) / sizeof(goflags_allowed[0]); i++)
		if (strlen(goflags_allowed[i].name) == nl &&
		    memcmp(goflags_allowed[i].name, name, nl) == 0)
			return value_ok(goflags_allowed[i].val, goflags_allowed[i].choices,
					eq ? eq + 1 : NULL, eq ? n - (size_t)(eq + 1 - f) : 0);
	return false;
}

/* A flag's name fit to print: "-name" of at most 24 lower-case letters, else "a flag". */
static void flag_label(const char *f, size_t n, char *out, size_t outn)
{
	size_t i = 1 + (n > 1 && f[1] == '-'), l = 0;

	while (i + l < n && f[i + l] >= 'a' && f[i + l] <= 'z')
		l++;
	if (l == 0 || l > 24 || (i + l < n && f[i + l] != '='))
		snprintf(out, outn, "a flag");
	else
		snprintf(out, outn, "-%.*s", (int)l, f + i);
}

int runner_env_filter_goflags(char *v, void (*drop)(void *arg, const char *label), void *arg)
{
	size_t w = 0, dropped = 0;
	char label[32];

	for (size_t i = 0; v[i];) {
		size_t s = i + strspn(v + i, " \t\n"), n = strcspn(v + s, " \t\n");

		if (n == 0)
			break;
		if (goflag_ok(v + s, n)) {
			if (w)
				v[w++] = ' ';
			memmove(v + w, v + s, n);
			w += n;
		} else {
			dropped++;
			flag_label(v + s, n, label, sizeof(label));
			if (drop)
				drop(arg, label);
		}
		i = s + n;
	}
	v[w] = '\0';
	return (int)dropped;
}
