/* The command's environment. The caller's environment is untrusted as a whole (it
 * holds tokens, agent sockets, LD_PRELOAD...), so it is cleared to a short allowlist of
 * names that describe the user and the terminal, never credentials. Then, in rising
 * precedence: env.pass (names the policy lets through), env.set (values the policy
 * fixes), and last TMPDIR and HALO_SANDBOX=1, which always win.
 *
 * SSH_AUTH_SOCK is never in the result, whatever the policy says: the agent socket is
 * masked inside the sandbox, and the variable would only point the command at the
 * host's agent should a mask ever be missing. Refusing it in env.pass at validation
 * time is the policy module's job; here it is simply dropped. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/env.h"

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

const char *const runner_env_allowlist[] = {
    "PATH",	      /* how commands are found; a missing one gets DEFAULT_PATH */
    "HOME",	      /* where tools look for their (read-only, masked) configuration */
    "USER",	      /* identity only; the same as the mapped uid */
    "LOGNAME",	      /* POSIX spelling of USER */
    "SHELL",	      /* the user's shell, for tools that spawn one */
    "TERM",	      /* terminal capabilities: without it interactive tools misdraw */
    "COLORTERM",      /* truecolor support, same purpose as TERM */
    "LANG",	      /* locale: messages, encodings, sorting */
    "LANGUAGE",	      /* gettext's message-language preference list */
    "LC_*",	      /* the individual locale categories */
    "TZ",	      /* time zone for timestamps */
    "NO_COLOR",	      /* the user's "no colours" preference (no-color.org) */
    "FORCE_COLOR",    /* the opposite request, honoured by node, python and others */
    "CLICOLOR",	      /* BSD-style colour switch */
    "CLICOLOR_FORCE", /* its "even when not a tty" form */
    "COLUMNS",	      /* terminal width when the tty cannot be asked */
    "LINES",	      /* terminal height, same */
    NULL,
};

/* Never passed, whatever the source: see the top comment. */
static const char *const never_passed[] = {"SSH_AUTH_SOCK", NULL};

struct env_buf {
	char **v;
	size_t n, cap;
};

static bool name_in(const char *const *list, const char *name, size_t len)
{
	for (size_t i = 0; list[i]; i++) {
		size_t l = strlen(list[i]);
		if (l > 0 && list[i][l - 1] == '*') {
			if (len >= l - 1 && memcmp(list[i], name, l - 1) == 0)
				return true;
		} else if (l == len && memcmp(list[i], name, len) == 0) {
			return true;
		}
	}
	return false;
}

/* Length of the name of "NAME=value", or 0 when the entry has no '=' or an empty
 * name: such entries are not variables anyone can look up, so they are ignored. */
static size_t entry_name_len(const char *entry)
{
	const char *eq = strchr(entry, '=');

	return eq ? (size_t)(eq - entry) : 0;
}

/* The first entry of `caller` named `name`: the one getenv() would return. */
static const char *caller_lookup(char *const *caller, const char *name, size_t len)
{
	for (size_t i = 0; caller && caller[i]; i++)
		if (entry_name_len(caller[i]) == len && memcmp(caller[i], name, len) == 0)
			return caller[i];
	return NULL;
}

static char **slot_of(struct env_buf *b, const char *name, size_t len)
{
	for (size_t i = 0; i < b->n; i++)
		if (entry_name_len(b->v[i]) == len && memcmp(b->v[i], name, len) == 0)
			return &b->v[i];
	return NULL;
}

/* Set name=value (value may be NULL when `name` is a whole "NAME=value" entry),
 * replacing an earlier entry of the same name in place. */
static int buf_put(struct env_buf *b, const char *name, size_t len, const char *value)
{
	char *s, **slot;

	if (len == 0 || memchr(name, '=', len) || name_in(never_passed, name, len))
		return 0;
	if (value) {
		size_t vl = strlen(value);
		s = malloc(len + vl + 2);
		if (!s)
			return -ENOMEM;
		memcpy(s, name, len);
		s[len] = '=';
		memcpy(s + len + 1, value, vl + 1);
	} else {
		s = strdup(name);
		if (!s)
			return -ENOMEM;
	}
	slot = slot_of(b, name, len);
	if (slot) {
		free(*slot);
		*slot = s;
		return 0;
	}
	if (b->n + 2 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 32;
		char **v = realloc(b->v, cap * sizeof(*v));
		if (!v) {
			free(s);
			return -ENOMEM;
		}
		b->v = v;
		b->cap = cap;
	}
	b->v[b->n++] = s;
	b->v[b->n] = NULL;
	return 0;
}

/* Drop `name` wherever it is, so that a later buf_put() appends it at the end. */
static void buf_remove(struct env_buf *b, const char *name, size_t len)
{
	char **slot = slot_of(b, name, len);

	if (!slot)
		return;
	free(*slot);
	memmove(slot, slot + 1, (size_t)(b->v + b->n - slot) * sizeof(*slot));
	b->n--;
}

static int add_allowlisted(struct env_buf *b, char *const *caller)
{
	for (size_t i = 0; caller && caller[i]; i++) {
		size_t len = entry_name_len(caller[i]);
		/* The first occurrence wins, as with getenv(). */
		if (len == 0 || !name_in(runner_env_allowlist, caller[i], len) ||
		    slot_of(b, caller[i], len))
			continue;
		if (buf_put(b, caller[i], len, NULL) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int add_passed(struct env_buf *b, const struct halo_policy *p, char *const *caller)
{
	for (size_t i = 0; i < p->env_pass.n; i++) {
		const char *name = p->env_pass.items[i];
		const char *entry = name ? caller_lookup(caller, name, strlen(name)) : NULL;

		if (entry && buf_put(b, entry, strlen(name), NULL) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int add_set(struct env_buf *b, const struct halo_policy *p)
{
	for (size_t i = 0; i < p->n_env_set; i++) {
		const struct policy_kv *kv = &p->env_set[i];

		if (kv->key && kv->value && buf_put(b, kv->key, strlen(kv->key), kv->value) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int add_fixed(struct env_buf *b, const char *tmpdir)
{
	char **path = slot_of(b, "PATH", 4);

	/* An empty PATH would make execvp() search the current directory, i.e. the
	 * workspace: treat it as missing. */
	if ((!path || (*path)[5] == '\0') && buf_put(b, "PATH", 4, DEFAULT_PATH) < 0)
		return -ENOMEM;
	/* Last, so that whoever reads the list sees them win. */
	if (tmpdir) {
		buf_remove(b, "TMPDIR", 6);
		if (buf_put(b, "TMPDIR", 6, tmpdir) < 0)
			return -ENOMEM;
	}
	buf_remove(b, "HALO_SANDBOX", 12);
	return buf_put(b, "HALO_SANDBOX", 12, "1");
}

#define PROXY_HTTP  "http://127.0.0.1:3128"
#define PROXY_SOCKS "socks5h://127.0.0.1:1080"
#define NO_PROXY    "localhost,127.0.0.1,::1"

/* The sandbox's only way out is halo-run's proxy on its own loopback. Each variable
 * is there for the tools that read it; a tool that ignores all of them finds no
 * route and fails closed. */
static const struct {
	const char *name;
	const char *value;
} proxy_vars[] = {
    {"HTTP_PROXY", PROXY_HTTP},	 /* Go, pip/requests (curl reads only http_proxy) */
    {"HTTPS_PROXY", PROXY_HTTP}, /* curl, git (libcurl), Go, pip/requests, cargo */
    {"http_proxy", PROXY_HTTP},	 /* curl and wget read only the lower-case http_proxy */
    {"https_proxy", PROXY_HTTP}, /* wget, git, python urllib */
    {"ALL_PROXY", PROXY_SOCKS},	 /* curl's fallback; SOCKS5 with remote resolution */
    {"all_proxy", PROXY_SOCKS},
    {"NO_PROXY", NO_PROXY}, /* in-sandbox services stay direct */
    {"no_proxy", NO_PROXY},
    {"npm_config_proxy", PROXY_HTTP}, /* npm reads its config from npm_config_* */
    {"npm_config_https_proxy", PROXY_HTTP},
    {"YARN_HTTP_PROXY", PROXY_HTTP}, /* Yarn 2+ ignores the standard variables */
    {"YARN_HTTPS_PROXY", PROXY_HTTP},
    {"CARGO_HTTP_PROXY", PROXY_HTTP}, /* cargo's own setting (it also reads https_proxy) */
    {"NODE_USE_ENV_PROXY", "1"},      /* Node >= 24 (and 22.21): fetch/http honour *_PROXY */
    /* The JVM ignores *_PROXY; JAVA_TOOL_OPTIONS is read by every JVM at start. */
    {"JAVA_TOOL_OPTIONS", "-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=3128 "
			  "-Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=3128 "
			  "-Dhttp.nonProxyHosts=localhost|127.0.0.1"},
};

static int add_proxy(struct env_buf *b)
{
	for (size_t i = 0; i < sizeof(proxy_vars) / sizeof(proxy_vars[0]); i++) {
		size_t len = strlen(proxy_vars[i].name);
		buf_remove(b, proxy_vars[i].name, len);
		if (buf_put(b, proxy_vars[i].name, len, proxy_vars[i].value) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The JVM's settings for the proxy of `url` (scheme://[user:secret@]host:port): host
 * and port only, as the JVM takes no credentials from properties (it then gets 407,
 * which fails closed). False when the URL has no host:port. */
static bool java_options(const char *url, char *out, size_t n)
{
	const char *h = strstr(url, "://"), *at, *colon;

	if (!h)
		return false;
	h += 3;
	at = strrchr(h, '@');
	if (at)
		h = at + 1;
	colon = strrchr(h, ':');
	if (!colon || colon == h || !colon[1] || strchr(colon, '/'))
		return false;
	int w = snprintf(out, n,
			 "-Dhttp.proxyHost=%.*s -Dhttp.proxyPort=%s -Dhttps.proxyHost=%.*s "
			 "-Dhttps.proxyPort=%s -Dhttp.nonProxyHosts=localhost|127.0.0.1",
			 (int)(colon - h), h, colon + 1, (int)(colon - h), h, colon + 1);
	return w > 0 && (size_t)w < n;
}

/* The same variables pointing at another proxy: the macOS launcher's, on an
 * ephemeral port with the run's secret in the URL. */
static int add_proxy_url(struct env_buf *b, const char *http, const char *socks)
{
	char java[512];

	for (size_t i = 0; i < sizeof(proxy_vars) / sizeof(proxy_vars[0]); i++) {
		const char *name = proxy_vars[i].name, *v = proxy_vars[i].value;
		size_t len = strlen(name);
		if (strcmp(v, PROXY_HTTP) == 0)
			v = http;
		else if (strcmp(v, PROXY_SOCKS) == 0)
			v = socks ? socks : http;
		else if (strcmp(name, "JAVA_TOOL_OPTIONS") == 0)
			v = java_options(http, java, sizeof(java)) ? java : NULL;
		buf_remove(b, name, len);
		if (v && buf_put(b, name, len, v) < 0)
			return -ENOMEM;
	}
	return 0;
}

char **runner_env_build(const struct halo_policy *p, char *const *caller, const char *tmpdir,
			struct halo_err *e)
{
	return runner_env_build_proxied(p, caller, tmpdir, false, e);
}

static char **build_env(const struct halo_policy *p, char *const *caller, const char *tmpdir,
			bool proxy, const char *http_url, const char *socks_url, struct halo_err *e)
{
	struct env_buf b = {0};
	int rc = add_allowlisted(&b, caller);

	if (rc == 0 && p)
		rc = add_passed(&b, p, caller);
	if (rc == 0 && p)
		rc = add_set(&b, p);
	if (rc == 0 && proxy)
		rc = http_url ? add_proxy_url(&b, http_url, socks_url) : add_proxy(&b);
	if (rc == 0)
		rc = add_fixed(&b, tmpdir);
	if (rc < 0) {
		runner_env_free(b.v);
		halo_err_set(e, "building the command's environment: %s", strerror(-rc));
		return NULL;
	}
	return b.v;
}

char **runner_env_build_proxied(const struct halo_policy *p, char *const *caller,
				const char *tmpdir, bool proxy, struct halo_err *e)
{
	return build_env(p, caller, tmpdir, proxy, NULL, NULL, e);
}

char **runner_env_build_proxy_url(const struct halo_policy *p, char *const *caller,
				  const char *tmpdir, const char *http_url, const char *socks_url,
				  struct halo_err *e)
{
	if (!http_url) {
		halo_err_set(e, "building the command's environment: no proxy URL");
		return NULL;
	}
	return build_env(p, caller, tmpdir, true, http_url, socks_url, e);
}

void runner_env_free(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}
