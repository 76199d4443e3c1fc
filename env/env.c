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
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env/env.h"

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

const char *const runner_env_allowlist[] = {
    "PATH",	 /* how commands are found; a missing one gets DEFAULT_PATH */
    "HOME",	 /* where tools look for their (read-only, masked) configuration */
    "USER",	 /* identity only; the same as the mapped uid */
    "LOGNAME",	 /* POSIX spelling of USER */
    "SHELL",	 /* the user's shell, for tools that spawn one */
    "TERM",	 /* terminal capabilities: without it interactive tools misdraw */
    "COLORTERM", /* truecolor support, same purpose as TERM */
    "LANG",	 /* locale: messages, encodings, sorting */
    "LANGUAGE",	 /* gettext's message-language preference list */
    /* The locale categories glibc knows, by name: "LC_*" let LC_SECRET_TOKEN through. */
    "LC_ALL",
    "LC_CTYPE",
    "LC_NUMERIC",
    "LC_TIME",
    "LC_COLLATE",
    "LC_MONETARY",
    "LC_MESSAGES",
    "LC_PAPER",
    "LC_NAME",
    "LC_ADDRESS",
    "LC_TELEPHONE",
    "LC_MEASUREMENT",
    "LC_IDENTIFICATION",
    "TZ",	      /* time zone for timestamps */
    "NO_COLOR",	      /* the user's "no colours" preference (no-color.org) */
    "FORCE_COLOR",    /* the opposite request, honoured by node, python and others */
    "CLICOLOR",	      /* BSD-style colour switch */
    "CLICOLOR_FORCE", /* its "even when not a tty" form */
    "COLUMNS",	      /* terminal width when the tty cannot be asked */
    "LINES",	      /* terminal height, same */
    /* The user's editor and pager: `git commit`, `git log`, `crontab -e` and man pages
     * call them. They name a program, which the sandbox's own rules still confine. */
    "EDITOR",
    "VISUAL",
    "PAGER",
    "LESS", /* less's default options (-R for colours, -F...) */
    /* How git runs ssh ("ssh -i KEY -o ..."): inside, ssh still reads the sandbox's
     * ssh_config (its ProxyCommand through the proxy) and the network namespace has
     * no other way out; a key it names that the sandbox cannot see is said
     * (runner/ssh_identity.c). */
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    /* CI markers: tools switch to non-interactive, reproducible behaviour on them
     * (npm ci's progress, jest's watch mode, pip's prompts). Booleans and build
     * numbers, never the providers' tokens (GITHUB_TOKEN, CI_JOB_TOKEN...). */
    "CI",		      /* the common one: "true" on every major provider */
    "CONTINUOUS_INTEGRATION", /* Travis, older tools */
    "GITHUB_ACTIONS",	      /* GitHub Actions */
    "GITLAB_CI",	      /* GitLab CI */
    "CIRCLECI",		      /* CircleCI */
    "TRAVIS",		      /* Travis CI */
    "BUILDKITE",	      /* Buildkite */
    "DRONE",		      /* Drone */
    "APPVEYOR",		      /* AppVeyor */
    "TF_BUILD",		      /* Azure Pipelines */
    "TEAMCITY_VERSION",	      /* TeamCity */
    "CODEBUILD_BUILD_ID",     /* AWS CodeBuild */
    "BITBUCKET_BUILD_NUMBER", /* Bitbucket Pipelines */
    "SEMAPHORE",	      /* Semaphore */
    NULL,
};

/* Registry settings: they say where to fetch from, which the proxy still decides.
 * A URL may carry credentials: its userinfo (https://user:token@host/), its query
 * (?token=) and the known path-token forms (Gemfury's /TOKEN/account/) are removed
 * (env_scrub.c), and GOFLAGS keeps only build-setting flags (no -toolexec), each with
 * a warning naming the variable. A value that still looks like a token after that is
 * not passed at all. A '*' inside a name stands for any registry name
 * (CARGO_REGISTRIES_<NAME>_INDEX). */
const char *const runner_env_registry[] = {
    "GOPROXY",			   /* Go module proxy list (URLs, "direct", "off") */
    "GOFLAGS",			   /* -mod=, -modcacherw... */
    "GONOSUMDB",		   /* module patterns not checked against the sum database */
    "GONOPROXY",		   /* module patterns fetched directly */
    "GOPRIVATE",		   /* both of the above */
    "GOSUMDB",			   /* the checksum database, or off */
    "GOTOOLCHAIN",		   /* "local": no toolchain download */
    "npm_config_registry",	   /* npm, pnpm: the default registry */
    "NPM_CONFIG_REGISTRY",	   /* npm reads its variables case-insensitively */
    "YARN_NPM_REGISTRY_SERVER",	   /* Yarn 2+ */
    "YARN_REGISTRY",		   /* Yarn 1 */
    "PIP_INDEX_URL",		   /* pip */
    "PIP_EXTRA_INDEX_URL",	   /* pip, space-separated URLs */
    "PIP_TRUSTED_HOST",		   /* pip: hosts served over plain http */
    "UV_INDEX_URL",		   /* uv */
    "UV_EXTRA_INDEX_URL",	   /* uv */
    "UV_DEFAULT_INDEX",		   /* uv */
    "UV_INDEX",			   /* uv: named indexes */
    "CARGO_REGISTRIES_*_INDEX",	   /* cargo: an alternative registry's index URL */
    "CARGO_REGISTRIES_*_PROTOCOL", /* sparse or git */
    "CARGO_REGISTRY_DEFAULT",	   /* cargo's default registry name */
    NULL,
};

/* Never passed, whatever the source: see the top comment. */
static const char *const never_passed[] = {"SSH_AUTH_SOCK", POLICY_UPSTREAM_AUTH_ENV, NULL};

struct env_buf {
	char **v;
	size_t n, cap;
};

/* Does `name` (len bytes) match `pat`, where one '*' stands for one or more bytes? */
static bool name_match(const char *pat, const char *name, size_t len)
{
	const char *star = strchr(pat, '*');
	size_t pre, suf;

	if (!star)
		return strlen(pat) == len && memcmp(pat, name, len) == 0;
	pre = (size_t)(star - pat);
	suf = strlen(star + 1);
	return len > pre + suf && memcmp(pat, name, pre) == 0 &&
	       memcmp(star + 1, name + len - suf, suf) == 0;
}

static bool name_in(const char *const *list, const char *name, size_t len)
{
	for (size_t i = 0; list[i]; i++)
		if (name_match(list[i], name, len))
			return true;
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

static int hex_val(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/* Does v, its percent-escapes decoded, look like a token? A URL's reader decodes
 * them ("ghp%5F..." reaches the server as "ghp_..."). False when v has no escape or
 * the copy cannot be made (v itself was checked already). */
static bool secret_decoded(const char *v, const char **what)
{
	size_t n = strlen(v), w = 0;
	char *d;
	bool any = false, r;

	if (!strchr(v, '%') || !(d = malloc(n + 1)))
		return false;
	for (size_t i = 0; i < n; i++) {
		int hi = v[i] == '%' ? hex_val(v[i + 1]) : -1; /* NUL ends it */
		int lo = hi >= 0 ? hex_val(v[i + 2]) : -1;

		if (lo >= 0) {
			d[w++] = (char)(hi * 16 + lo);
			i += 2;
			any = true;
		} else {
			d[w++] = v[i];
		}
	}
	r = any && policy_secret_like(d, w, what);
	free(d);
	return r;
}

/* A value the default lists would pass that looks like a token (policy_secret_like),
 * as written or percent-decoded, stays out, with a warning naming the variable and
 * the shape, never the value. */
static bool refuse_secret(const char *name, size_t len, const char *v, struct policy_diags *warn)
{
	const char *what;

	if (!policy_secret_like(v, strlen(v), &what) && !secret_decoded(v, &what))
		return false;
	if (warn)
		policy_diags_add_warning(warn,
					 "%.*s: not passed: its value looks like %s (name it in "
					 "env.pass or env.set to pass it on purpose)",
					 (int)len, name, what);
	return true;
}

struct goflag_warn {
	struct policy_diags *warn;
	const char *name;
	size_t len;
};

static void goflag_dropped(void *arg, const char *label)
{
	struct goflag_warn *g = arg;

	if (g->warn)
		policy_diags_add_warning(g->warn,
					 "%.*s: %s dropped (only build-setting flags pass: -mod, "
					 "-trimpath, -tags, -buildvcs, -p, -race, -v...)",
					 (int)g->len, g->name, label);
}

/* Cut credentials out of one registry value, a warning for each kind of cut. False
 * when nothing is left to pass. */
static bool scrub_registry(const char *name, size_t len, char *v, struct policy_diags *warn)
{
	static const struct {
		bool (*strip)(char *);
		const char *what;
	} cuts[] = {
	    {runner_env_strip_userinfo, "credentials removed from its URL"},
	    {runner_env_strip_query, "its URL's query removed (tokens ride there)"},
	    {runner_env_strip_path_tokens, "a token removed from its URL's path"},
	};
	struct goflag_warn g = {warn, name, len};

	if (runner_env_url_ambiguous(v)) {
		if (warn)
			policy_diags_add_warning(
			    warn,
			    "%.*s: not passed: a URL in it has an ambiguous host "
			    "(an '@' past its host, or a port that is not digits)",
			    (int)len, name);
		return false;
	}
	for (size_t k = 0; k < sizeof(cuts) / sizeof(cuts[0]); k++)
		if (cuts[k].strip(v) && warn)
			policy_diags_add_warning(warn, "%.*s: %s (they never enter the sandbox)",
						 (int)len, name, cuts[k].what);
	if (len == 7 && memcmp(name, "GOFLAGS", 7) == 0 &&
	    runner_env_filter_goflags(v, goflag_dropped, &g) > 0 && !v[0])
		return false;
	return !refuse_secret(name, len, v, warn);
}

/* Registry settings from the caller, credentials cut out of their URLs. */
static int add_registry(struct env_buf *b, char *const *caller, struct policy_diags *warn)
{
	for (size_t i = 0; caller && caller[i]; i++) {
		size_t len = entry_name_len(caller[i]);
		char *copy;
		int rc = 0;

		if (len == 0 || !name_in(runner_env_registry, caller[i], len) ||
		    slot_of(b, caller[i], len) ||
		    caller_lookup(caller, caller[i], len) != caller[i])
			continue;
		if (!(copy = strdup(caller[i] + len + 1)))
			return -ENOMEM;
		if (scrub_registry(caller[i], len, copy, warn))
			rc = buf_put(b, caller[i], len, copy);
		free(copy);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Variables halo-run sets for the command (tool caches): below env.pass and env.set,
 * so that a policy that names one keeps the caller's or its own value. */
static int add_vars(struct env_buf *b, const struct policy_kv *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (buf_put(b, v[i].key, strlen(v[i].key), v[i].value) < 0)
			return -ENOMEM;
	return 0;
}

static int add_allowlisted(struct env_buf *b, char *const *caller, struct policy_diags *warn)
{
	for (size_t i = 0; caller && caller[i]; i++) {
		size_t len = entry_name_len(caller[i]);
		/* The first occurrence wins, as with getenv(): a refused one is not replaced
		 * by a later duplicate either. */
		if (len == 0 || !name_in(runner_env_allowlist, caller[i], len) ||
		    slot_of(b, caller[i], len) ||
		    caller_lookup(caller, caller[i], len) != caller[i])
			continue;
		if (refuse_secret(caller[i], len, caller[i] + len + 1, warn))
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
	/* oh-my-zsh names zsh's completion dump after the host (.zcompdump-HOST-VERSION),
	 * which is "halo" inside: a dump never found in the home, which could not be written
	 * there either (read-only; in a home workspace a home-set name): every interactive
	 * zsh printed compinit's errors (review 27). It goes to the sandbox's own temporary
	 * directory (oh-my-zsh takes ZSH_COMPDUMP as it finds it), unless a policy sets it. */
	if (tmpdir && !slot_of(b, "ZSH_COMPDUMP", 12)) {
		char dump[PATH_MAX];
		if (snprintf(dump, sizeof(dump), "%s/.zcompdump", tmpdir) < (int)sizeof(dump) &&
		    buf_put(b, "ZSH_COMPDUMP", 12, dump) < 0)
			return -ENOMEM;
	}
	buf_remove(b, "HALO_SANDBOX", 12);
	return buf_put(b, "HALO_SANDBOX", 12, "1");
}

#define STR_(x)	    #x
#define STR(x)	    STR_(x)
#define PROXY_HTTP  "http://127.0.0.1:" STR(POLICY_PROXY_HTTP_PORT)
#define PROXY_SOCKS "socks5h://127.0.0.1:" STR(POLICY_PROXY_SOCKS_PORT)
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
    /* The JVM ignores *_PROXY; JAVA_TOOL_OPTIONS is read by every JVM at start. Its
     * value is made from the HTTP proxy's host and port (java_options). */
    {"JAVA_TOOL_OPTIONS", ""},
};

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

/* The proxy variables, pointing at `http` (and ALL_PROXY at `socks`, else at http):
 * the sandbox's own proxy on Linux (PROXY_HTTP, PROXY_SOCKS), the macOS launcher's on
 * an ephemeral port with the run's secret in the URL. One table, one way. */
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

/* JAVA_TOOL_OPTIONS += " extra" (the proxy's settings are already there). */
static int add_java_extra(struct env_buf *b, const char *extra)
{
	char **slot = slot_of(b, "JAVA_TOOL_OPTIONS", 17), *v;
	int rc;

	if (!extra || !slot)
		return 0;
	if (asprintf(&v, "%s %s", *slot + 18, extra) < 0)
		return -ENOMEM;
	rc = buf_put(b, "JAVA_TOOL_OPTIONS", 17, v);
	free(v);
	return rc;
}

char **runner_env_build(const struct halo_policy *p, char *const *caller, const char *tmpdir,
			struct halo_err *e)
{
	return runner_env_build_proxied(p, caller, tmpdir, false, e);
}

char **runner_env_build_in(const struct runner_env_in *in, struct halo_err *e)
{
	const struct halo_policy *p = in->policy;
	struct env_buf b = {0};
	int rc = add_allowlisted(&b, in->caller, in->warnings);

	if (rc == 0)
		rc = add_registry(&b, in->caller, in->warnings);
	if (rc == 0)
		rc = add_vars(&b, in->vars, in->n_vars);
	if (rc == 0 && p)
		rc = add_passed(&b, p, in->caller);
	if (rc == 0 && p)
		rc = add_set(&b, p);
	if (rc == 0 && in->proxy)
		rc = in->http_url ? add_proxy_url(&b, in->http_url, in->socks_url)
				  : add_proxy_url(&b, PROXY_HTTP, PROXY_SOCKS);
	if (rc == 0 && in->proxy)
		rc = add_java_extra(&b, in->java_extra);
	if (rc == 0)
		rc = add_fixed(&b, in->tmpdir);
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
	struct runner_env_in in = {.policy = p, .caller = caller, .tmpdir = tmpdir, .proxy = proxy};

	return runner_env_build_in(&in, e);
}

char **runner_env_build_proxy_url(const struct halo_policy *p, char *const *caller,
				  const char *tmpdir, const char *http_url, const char *socks_url,
				  struct halo_err *e)
{
	if (!http_url) {
		halo_err_set(e, "building the command's environment: no proxy URL");
		return NULL;
	}
	struct runner_env_in in = {.policy = p,
				   .caller = caller,
				   .tmpdir = tmpdir,
				   .proxy = true,
				   .http_url = http_url,
				   .socks_url = socks_url};

	return runner_env_build_in(&in, e);
}

void runner_env_free(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}
