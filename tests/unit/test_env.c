/* env/env: the allowlist, planted secrets never passing, env.pass and env.set, the
 * order of precedence (caller < pass < set < TMPDIR/HALO_SANDBOX), the PATH default,
 * SSH_AUTH_SOCK never passed, malformed entries ignored. */
#include <stdio.h>
#include <string.h>

#include "env/env.h"
#include "tests/unit/unit.h"

/* The value of `name` in env, or NULL; also counts how often it appears. */
static const char *lookup(char **env, const char *name, int *count)
{
	const char *found = NULL;
	size_t len = strlen(name);

	*count = 0;
	for (size_t i = 0; env[i]; i++)
		if (strncmp(env[i], name, len) == 0 && env[i][len] == '=') {
			if (!found)
				found = env[i] + len + 1;
			(*count)++;
		}
	return found;
}

static void expect_value(char **env, const char *name, const char *want)
{
	int n;
	const char *got = lookup(env, name, &n);

	if (!want) {
		ck_assert_msg(got == NULL, "%s should be absent, is '%s'", name, got ? got : "");
		return;
	}
	ck_assert_msg(got != NULL, "%s missing", name);
	ck_assert_str_eq(got, want);
	ck_assert_msg(n == 1, "%s appears %d times", name, n);
}

static size_t count(char **env)
{
	size_t n = 0;

	while (env[n])
		n++;
	return n;
}

static char *caller_env[] = {
    "PATH=/opt/bin:/usr/bin",
    "HOME=/home/alice",
    "USER=alice",
    "LOGNAME=alice",
    "SHELL=/bin/zsh",
    "TERM=xterm-256color",
    "COLORTERM=truecolor",
    "LANG=en_GB.UTF-8",
    "LANGUAGE=en_GB:en",
    "LC_ALL=C.UTF-8",
    "LC_TIME=de_DE.UTF-8",
    "TZ=Europe/Paris",
    "NO_COLOR=1",
    "FORCE_COLOR=3",
    "CLICOLOR=1",
    "CLICOLOR_FORCE=1",
    "COLUMNS=120",
    "LINES=40",
    "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG",
    "AWS_ACCESS_KEY_ID=AKIAEXAMPLE",
    "GITHUB_TOKEN=ghp_secret",
    "SSH_AUTH_SOCK=/tmp/ssh-XXXX/agent.1",
    "LD_PRELOAD=/tmp/evil.so",
    "LD_LIBRARY_PATH=/tmp",
    "TMPDIR=/var/tmp/outside",
    "HALO_SANDBOX=0",
    "GOPATH=/home/alice/go",
    "CARGO_HOME=/home/alice/.cargo",
    "PATHX=not-path",
    "LC=not-a-locale-category",
    "XDG_RUNTIME_DIR=/run/user/1000",
    "DISPLAY=:0",
    "noequals",
    "=empty-name",
    "HOME=/second/home/ignored",
    NULL,
};

START_TEST(allowlist_only)
{
	struct halo_err e = {{0}};
	char **env = runner_env_build(NULL, caller_env, "/tmp", &e);

	ck_assert_ptr_nonnull(env);
	expect_value(env, "PATH", "/opt/bin:/usr/bin");
	expect_value(env, "HOME", "/home/alice"); /* the first one, as getenv() */
	expect_value(env, "USER", "alice");
	expect_value(env, "LOGNAME", "alice");
	expect_value(env, "SHELL", "/bin/zsh");
	expect_value(env, "TERM", "xterm-256color");
	expect_value(env, "COLORTERM", "truecolor");
	expect_value(env, "LANG", "en_GB.UTF-8");
	expect_value(env, "LANGUAGE", "en_GB:en");
	expect_value(env, "LC_ALL", "C.UTF-8");
	expect_value(env, "LC_TIME", "de_DE.UTF-8");
	expect_value(env, "TZ", "Europe/Paris");
	expect_value(env, "NO_COLOR", "1");
	expect_value(env, "FORCE_COLOR", "3");
	expect_value(env, "CLICOLOR", "1");
	expect_value(env, "CLICOLOR_FORCE", "1");
	expect_value(env, "COLUMNS", "120");
	expect_value(env, "LINES", "40");
	expect_value(env, "TMPDIR", "/tmp");
	expect_value(env, "HALO_SANDBOX", "1");
	expect_value(env, "ZSH_COMPDUMP", "/tmp/.zcompdump");
	/* planted secrets and loader tricks */
	expect_value(env, "AWS_SECRET_ACCESS_KEY", NULL);
	expect_value(env, "AWS_ACCESS_KEY_ID", NULL);
	expect_value(env, "GITHUB_TOKEN", NULL);
	expect_value(env, "SSH_AUTH_SOCK", NULL);
	expect_value(env, "LD_PRELOAD", NULL);
	expect_value(env, "LD_LIBRARY_PATH", NULL);
	expect_value(env, "GOPATH", NULL);
	expect_value(env, "PATHX", NULL);
	expect_value(env, "LC", NULL);
	expect_value(env, "XDG_RUNTIME_DIR", NULL);
	expect_value(env, "DISPLAY", NULL);
	/* 18 allowlisted + TMPDIR + ZSH_COMPDUMP + HALO_SANDBOX, nothing else */
	ck_assert_int_eq(count(env), 21);
	for (size_t i = 0; env[i]; i++) {
		ck_assert_msg(strstr(env[i], "secret") == NULL, "leak: %s", env[i]);
		ck_assert_msg(strchr(env[i], '=') > env[i], "malformed: %s", env[i]);
	}
	runner_env_free(env);
}
END_TEST

static char *pass_names[] = {"GOPATH", "CARGO_HOME", "SSH_AUTH_SOCK", "NOT_IN_CALLER", "TERM"};
static struct policy_kv set_kv[] = {
    {"CI", "true"},
    {"GOPATH", "/override/go"},	     /* set beats pass */
    {"TERM", "dumb"},		     /* set beats the allowlist */
    {"TMPDIR", "/policy/tmp"},	     /* TMPDIR always wins */
    {"HALO_SANDBOX", "no"},	     /* so does HALO_SANDBOX */
    {"SSH_AUTH_SOCK", "/run/agent"}, /* never passed, from any source */
    {"EMPTY", ""},
};

static void policy_with(struct halo_policy *p, bool with_pass, bool with_set)
{
	memset(p, 0, sizeof(*p));
	if (with_pass) {
		p->env_pass.items = pass_names;
		p->env_pass.n = sizeof(pass_names) / sizeof(pass_names[0]);
		p->env_pass.set = true;
	}
	if (with_set) {
		p->env_set = set_kv;
		p->n_env_set = sizeof(set_kv) / sizeof(set_kv[0]);
		p->env_set_set = true;
	}
}

START_TEST(pass_names_only_what_is_named)
{
	struct halo_policy p;
	struct halo_err e = {{0}};
	char **env;

	policy_with(&p, true, false);
	env = runner_env_build(&p, caller_env, "/tmp", &e);
	ck_assert_ptr_nonnull(env);
	expect_value(env, "GOPATH", "/home/alice/go");
	expect_value(env, "CARGO_HOME", "/home/alice/.cargo");
	expect_value(env, "SSH_AUTH_SOCK", NULL);
	expect_value(env, "NOT_IN_CALLER", NULL);
	expect_value(env, "TERM", "xterm-256color");
	expect_value(env, "GITHUB_TOKEN", NULL);
	expect_value(env, "AWS_SECRET_ACCESS_KEY", NULL);
	expect_value(env, "LD_PRELOAD", NULL);
	ck_assert_int_eq(count(env), 23);
	runner_env_free(env);
}
END_TEST

START_TEST(precedence)
{
	struct halo_policy p;
	struct halo_err e = {{0}};
	char **env;

	policy_with(&p, true, true);
	env = runner_env_build(&p, caller_env, "/tmp/sbx", &e);
	ck_assert_ptr_nonnull(env);
	expect_value(env, "CI", "true");
	expect_value(env, "GOPATH", "/override/go");
	expect_value(env, "CARGO_HOME", "/home/alice/.cargo");
	expect_value(env, "TERM", "dumb");
	expect_value(env, "TMPDIR", "/tmp/sbx");
	expect_value(env, "HALO_SANDBOX", "1");
	expect_value(env, "SSH_AUTH_SOCK", NULL);
	expect_value(env, "EMPTY", "");
	/* HALO_SANDBOX, ZSH_COMPDUMP (in the sandbox's TMPDIR) and TMPDIR come last */
	ck_assert_str_eq(env[count(env) - 1], "HALO_SANDBOX=1");
	ck_assert_str_eq(env[count(env) - 2], "ZSH_COMPDUMP=/tmp/sbx/.zcompdump");
	ck_assert_str_eq(env[count(env) - 3], "TMPDIR=/tmp/sbx");
	runner_env_free(env);
}
END_TEST

START_TEST(path_default)
{
	static char *no_path[] = {"HOME=/h", "GITHUB_TOKEN=x", NULL};
	static char *empty_path[] = {"PATH=", NULL};
	static struct policy_kv set_path[] = {{"PATH", "/policy/bin"}};
	struct halo_policy p;
	struct halo_err e = {{0}};
	char **env;

	env = runner_env_build(NULL, no_path, "/tmp", &e);
	ck_assert_ptr_nonnull(env);
	expect_value(env, "PATH", "/usr/local/bin:/usr/bin:/bin");
	expect_value(env, "HOME", "/h");
	expect_value(env, "GITHUB_TOKEN", NULL);
	ck_assert_int_eq(count(env), 5);
	runner_env_free(env);

	env = runner_env_build(NULL, empty_path, "/tmp", &e);
	expect_value(env, "PATH", "/usr/local/bin:/usr/bin:/bin");
	runner_env_free(env);

	/* a PATH from env.set is kept; no TMPDIR when none is given */
	memset(&p, 0, sizeof(p));
	p.env_set = set_path;
	p.n_env_set = 1;
	env = runner_env_build(&p, no_path, NULL, &e);
	expect_value(env, "PATH", "/policy/bin");
	expect_value(env, "TMPDIR", NULL);
	expect_value(env, "ZSH_COMPDUMP", NULL); /* (where TMPDIR is) */
	expect_value(env, "HALO_SANDBOX", "1");
	runner_env_free(env);
}
END_TEST

/* ZSH_COMPDUMP: the sandbox's own, unless the policy names one (review 27) */
START_TEST(zsh_compdump_policy_wins)
{
	static char *none[] = {NULL};
	static struct policy_kv set_dump[] = {{"ZSH_COMPDUMP", "/w/.zcompdump-mine"}};
	struct halo_policy p;
	struct halo_err e = {{0}};
	char **env;

	memset(&p, 0, sizeof(p));
	p.env_set = set_dump;
	p.n_env_set = 1;
	env = runner_env_build(&p, none, "/tmp", &e);
	ck_assert_ptr_nonnull(env);
	expect_value(env, "ZSH_COMPDUMP", "/w/.zcompdump-mine");
	runner_env_free(env);
}
END_TEST

START_TEST(empty_and_null_caller)
{
	static char *none[] = {NULL};
	struct halo_err e = {{0}};
	char **env = runner_env_build(NULL, none, "/tmp", &e);

	ck_assert_ptr_nonnull(env);
	ck_assert_int_eq(count(env), 4);
	ck_assert_str_eq(env[0], "PATH=/usr/local/bin:/usr/bin:/bin");
	ck_assert_str_eq(env[1], "TMPDIR=/tmp");
	ck_assert_str_eq(env[2], "ZSH_COMPDUMP=/tmp/.zcompdump");
	ck_assert_str_eq(env[3], "HALO_SANDBOX=1");
	runner_env_free(env);
	env = runner_env_build(NULL, NULL, "/tmp", &e);
	ck_assert_ptr_nonnull(env);
	ck_assert_int_eq(count(env), 4);
	runner_env_free(env);
	runner_env_free(NULL);
}
END_TEST

START_TEST(allowlist_contents)
{
	size_t n = 0;
	bool has_lc = false;

	for (; runner_env_allowlist[n]; n++) {
		ck_assert_str_ne(runner_env_allowlist[n], "SSH_AUTH_SOCK");
		ck_assert_msg(strncmp(runner_env_allowlist[n], "LD_", 3) != 0, "loader variable");
		ck_assert_msg(!strchr(runner_env_allowlist[n], '*'), "a pattern: %s",
			      runner_env_allowlist[n]);
		if (strcmp(runner_env_allowlist[n], "LC_IDENTIFICATION") == 0)
			has_lc = true;
	}
	ck_assert(has_lc);
	ck_assert_int_eq(n, 49);
	for (size_t i = 0; runner_env_registry[i]; i++)
		ck_assert_msg(!strstr(runner_env_registry[i], "TOKEN") &&
				  !strstr(runner_env_registry[i], "AUTH"),
			      "%s", runner_env_registry[i]);
}
END_TEST

/* CI markers pass; the providers' tokens never do. */
START_TEST(ci_markers_not_tokens)
{
	char *caller[] = {"CI=true",
			  "GITHUB_ACTIONS=true",
			  "GITLAB_CI=true",
			  "TF_BUILD=True",
			  "GITHUB_TOKEN=ghs_secret",
			  "CI_JOB_TOKEN=glcbt-secret",
			  "ACTIONS_RUNTIME_TOKEN=secret",
			  "CI_REGISTRY_PASSWORD=secret",
			  "CIRCLE_TOKEN=secret",
			  "CIX=nope",
			  NULL};
	struct halo_err e = {{0}};
	char **env = runner_env_build(NULL, caller, "/tmp", &e);

	ck_assert_ptr_nonnull(env);
	expect_value(env, "CI", "true");
	expect_value(env, "GITHUB_ACTIONS", "true");
	expect_value(env, "GITLAB_CI", "true");
	expect_value(env, "TF_BUILD", "True");
	for (size_t i = 0; env[i]; i++)
		ck_assert_msg(!strstr(env[i], "secret") && strncmp(env[i], "CIX", 3) != 0, "%s",
			      env[i]);
	runner_env_free(env);
}
END_TEST

/* Registry settings pass, their URLs' credentials cut out, a warning naming each. */
START_TEST(registry_settings_without_credentials)
{
	char *caller[] = {"GOPROXY=https://u:p@proxy.corp.example/go,direct",
			  "GOFLAGS=-mod=mod",
			  "GONOSUMDB=corp.example/*",
			  "npm_config_registry=http://localhost:4873/",
			  "PIP_INDEX_URL=https://user:tok@pypi.corp.example/simple/",
			  "PIP_EXTRA_INDEX_URL=https://a@x.example/s https://b:c@y.example/s",
			  "CARGO_REGISTRIES_CORP_INDEX=sparse+https://t@crates.corp.example/",
			  "CARGO_REGISTRIES_CORP_TOKEN=secret",
			  "CARGO_REGISTRIES__INDEX=empty-name",
			  "NPM_TOKEN=secret",
			  "UV_INDEX_URL=https://pypi.example/simple/",
			  NULL};
	struct halo_err e = {{0}};
	struct policy_diags d = {0};
	struct runner_env_in in = {.caller = caller, .tmpdir = "/tmp", .warnings = &d};
	char **env = runner_env_build_in(&in, &e);

	ck_assert_ptr_nonnull(env);
	expect_value(env, "GOPROXY", "https://proxy.corp.example/go,direct");
	expect_value(env, "GOFLAGS", "-mod=mod");
	expect_value(env, "GONOSUMDB", "corp.example/*");
	expect_value(env, "npm_config_registry", "http://localhost:4873/");
	expect_value(env, "PIP_INDEX_URL", "https://pypi.corp.example/simple/");
	expect_value(env, "PIP_EXTRA_INDEX_URL", "https://x.example/s https://y.example/s");
	expect_value(env, "CARGO_REGISTRIES_CORP_INDEX", "sparse+https://crates.corp.example/");
	expect_value(env, "CARGO_REGISTRIES_CORP_TOKEN", NULL);
	expect_value(env, "CARGO_REGISTRIES__INDEX", NULL);
	expect_value(env, "NPM_TOKEN", NULL);
	expect_value(env, "UV_INDEX_URL", "https://pypi.example/simple/");
	ck_assert_uint_eq(d.n_warnings, 4);
	ck_assert(strstr(d.warnings[0], "GOPROXY") != NULL);
	for (size_t i = 0; i < d.n_warnings; i++)
		ck_assert(strstr(d.warnings[i], "tok") == NULL);
	policy_diags_free(&d);
	runner_env_free(env);
}
END_TEST

START_TEST(strip_userinfo_table)
{
	static const struct {
		const char *in, *out;
	} t[] = {
	    {"", ""},
	    {"direct", "direct"},
	    {"https://h/", "https://h/"},
	    {"https://u@h", "https://h"},
	    {"https://u:p@h:8080/x?y#z", "https://h:8080/x?y#z"},
	    {"https://u:p@ss@h/", "https://h/"},
	    /* only an '@' inside the authority ends a userinfo: a cut never moves a URL
	     * to another host (an '@' elsewhere makes the value ambiguous, dropped) */
	    {"https://h/simple/@scope", "https://h/simple/@scope"},
	    {"https://u:p@h/simple/@scope/x", "https://h/simple/@scope/x"},
	    {"sparse+https://a@c,git+https://d@e", "sparse+https://c,git+https://e"},
	    {"https://u:pa ss|x@h/", "https://h/"},
	    {"https://u:pa,ss@h:8080/x", "https://h:8080/x"},
	    {"https://u%40corp:p@h/", "https://h/"},
	    {"https://u:p@[::1]:8080/", "https://[::1]:8080/"},
	    {"a://x@h,b://y@i|c://z@j", "a://h,b://i|c://j"},
	    {"https://@h", "https://h"},
	    {"://@", "://"},
	    {"https://u:p@", "https://"},
	    {"https://u:p@h https://v@i\thttps://w@j", "https://h https://i\thttps://j"},
	};
	char buf[128];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", t[i].in);
		ck_assert_int_eq(runner_env_strip_userinfo(buf), strcmp(t[i].in, t[i].out) != 0);
		ck_assert_msg(strcmp(buf, t[i].out) == 0, "%s -> %s, want %s", t[i].in, buf,
			      t[i].out);
	}
}
END_TEST

/* A URL whose authority cannot be told apart from its path or query (an '@' past the
 * authority, not opening a path segment; a port that is not digits) is not passed:
 * parsers disagree on its host, and any cut could point it at another one. */
START_TEST(url_ambiguous_table)
{
	static const struct {
		const char *in;
		bool ambiguous;
	} t[] = {
	    {"", false},
	    {"direct", false},
	    {"https://h/", false},
	    {"https://u:p@h:8080/x?y#z", false},
	    {"https://u:p@ss@h/", false},
	    {"https://h/simple/@scope", false},
	    {"https://h/@a/@b", false},
	    {"https://proxy.example:8080,direct", false},
	    {"https://a.example:443|https://b.example,off", false},
	    {"https://[::1]:8080/x", false},
	    {"https://[fe80::1%25eth0]/", false},
	    {"https://h:/", false},
	    {"sparse+https://h/index/", false},
	    {"https://h/a@b", true}, /* "h" reads as no host: the token may be the "host" */
	    {"https://pkgs.dev.azure.com/o/_packaging/feed@Local/npm/registry/", false},
	    {"https://u:p@pkgs.dev.azure.com/o/_packaging/f@Release/pypi/simple/", false},
	    {"https://r.example/pkg@1.0/x", true},
	    {"https://r.example/a@b.example/", true},
	    {"https://r.example/a@b:8080/", true},
	    {"https://r.example/a@[::1]/", true},
	    {"https://localhost:4873/a@b/", false},
	    {"https://u:pa/ss@h/", true},
	    {"https://tok/en+x@h/s,https://i/", true},
	    {"https://ok.example/,https://a/b@c", true},
	    {"https://h?q=a@b", true},
	    {"https://u:pa?ss@h/", true},
	    {"https://u:pa#ss@h/", true},
	    {"https://h\\@evil.example/", true},
	    {"https://u:p@h\\x@y/", true},
	    {"https://user:secret/", true},
	    {"https://h:80x/", true},
	    /* a "://" inside a password: the next URL is glued on, not listed */
	    {"https://u:a://b@h/", true},
	    {"https://h/x://y", true},
	    {"https://a.example/ https://b.example/", false},
	    {"sparse+https://a/,git+https://b/|https://c/", false},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_msg(runner_env_url_ambiguous(t[i].in) == t[i].ambiguous, "%s: want %d",
			      t[i].in, t[i].ambiguous);
}
END_TEST

/* Issue 33 review: a registry URL with '@' in its path keeps its host (it used to
 * become https://scope); an ambiguous one is not passed, with a warning. */
START_TEST(registry_url_keeps_its_host)
{
	char *caller[] = {"npm_config_registry=https://npm.corp.example/simple/@scope",
			  "PIP_INDEX_URL=https://u:p@pypi.corp.example/@team/simple/",
			  "YARN_REGISTRY=https://npm.corp.example/a@evil.example/",
			  "UV_INDEX_URL=https://user:pa/ss@pypi.corp.example/simple/", NULL};
	struct halo_err e = {{0}};
	struct policy_diags d = {0};
	struct runner_env_in in = {.caller = caller, .tmpdir = "/tmp", .warnings = &d};
	char **env = runner_env_build_in(&in, &e);
	bool yarn = false, uv = false;

	ck_assert_ptr_nonnull(env);
	expect_value(env, "npm_config_registry", "https://npm.corp.example/simple/@scope");
	expect_value(env, "PIP_INDEX_URL", "https://pypi.corp.example/@team/simple/");
	expect_value(env, "YARN_REGISTRY", NULL);
	expect_value(env, "UV_INDEX_URL", NULL);
	for (size_t i = 0; i < d.n_warnings; i++) {
		ck_assert_msg(!strstr(d.warnings[i], "pa/ss") && !strstr(d.warnings[i], "evil"),
			      "%s", d.warnings[i]);
		yarn |= strstr(d.warnings[i], "YARN_REGISTRY: not passed") != NULL;
		uv |= strstr(d.warnings[i], "UV_INDEX_URL: not passed") != NULL;
	}
	ck_assert(yarn && uv);
	policy_diags_free(&d);
	runner_env_free(env);
}
END_TEST

/* Review of issue 33: a token percent-encoded in a URL (the server decodes it) is
 * still a token; ordinary escapes (%7E, %40 in a path) pass. */
START_TEST(percent_encoded_token_refused)
{
	char *caller[] = {"UV_INDEX_URL=https://r.example/ghp%5Fabcdefghijklmnopqrstuvwxyz0123/s/",
			  "PIP_INDEX_URL=https://r.example/%67hp_abcdefghijklmnopqrstuvwxyz0123/",
			  "UV_DEFAULT_INDEX=https://r.example/%7Ealice/simple/%40scope/",
			  "npm_config_registry=https://r.example/%zz/%4", NULL};
	struct halo_err e = {{0}};
	struct policy_diags d = {0};
	struct runner_env_in in = {.caller = caller, .tmpdir = "/tmp", .warnings = &d};
	char **env = runner_env_build_in(&in, &e);

	ck_assert_ptr_nonnull(env);
	expect_value(env, "UV_INDEX_URL", NULL);
	expect_value(env, "PIP_INDEX_URL", NULL);
	expect_value(env, "UV_DEFAULT_INDEX", "https://r.example/%7Ealice/simple/%40scope/");
	expect_value(env, "npm_config_registry", "https://r.example/%zz/%4");
	policy_diags_free(&d);
	runner_env_free(env);
}
END_TEST

/* Review of issue 33: the path-token hosts are recognised however the host is spelt
 * (a trailing dot, upper case, percent-escapes that WHATWG parsers decode). */
START_TEST(path_token_host_spellings)
{
	static const struct {
		const char *in, *out;
	} t[] = {
	    {"https://pypi.fury.io./T0K/acme/", "https://pypi.fury.io./acme/"},
	    {"https://PYPI.FURY.IO/T0K/acme/", "https://PYPI.FURY.IO/acme/"},
	    {"https://npm.fury%2Eio/T0K/acme/", "https://npm.fury%2Eio/acme/"},
	    {"https://npm.fury%2eio:443/T0K/acme/", "https://npm.fury%2eio:443/acme/"},
	    {"https://dl.cloudsmith.io./T0K/o/r/", "https://dl.cloudsmith.io./o/r/"},
	    {"https://dl.cloudsmith.io./public/o/r/", "https://dl.cloudsmith.io./public/o/r/"},
	    {"https://fury.io.example/T0K/acme/", "https://fury.io.example/T0K/acme/"},
	};
	char buf[128];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", t[i].in);
		runner_env_strip_path_tokens(buf);
		ck_assert_msg(strcmp(buf, t[i].out) == 0, "%s -> %s, want %s", t[i].in, buf,
			      t[i].out);
	}
}
END_TEST

/* Issue 33: LC_* only for the locale categories glibc knows. */
START_TEST(lc_categories_by_name)
{
	char *caller[] = {"LC_ALL=C.UTF-8",
			  "LC_IDENTIFICATION=de_DE.UTF-8",
			  "LC_MEASUREMENT=metric_x",
			  "LC_SECRET_TOKEN=s3cr3t",
			  "LC_GH_TOKEN=s3cr3t",
			  "LC_=x",
			  "LC_all=x",
			  NULL};
	struct halo_err e = {{0}};
	char **env = runner_env_build(NULL, caller, "/tmp", &e);

	ck_assert_ptr_nonnull(env);
	expect_value(env, "LC_ALL", "C.UTF-8");
	expect_value(env, "LC_IDENTIFICATION", "de_DE.UTF-8");
	expect_value(env, "LC_MEASUREMENT", "metric_x");
	expect_value(env, "LC_SECRET_TOKEN", NULL);
	expect_value(env, "LC_GH_TOKEN", NULL);
	expect_value(env, "LC_", NULL);
	expect_value(env, "LC_all", NULL);
	runner_env_free(env);
}
END_TEST

#define GHP "ghp_abcdefghijklmnopqrstuvwxyzABCDEF0123"
#define JWT "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl"
#define B64 "Xq7pL2mZ9vB4nR8sT1wY6kD3hF5jG0cAeUoIiQ"

/* Default-passed names holding a token stay out, with a warning naming the variable
 * and never the value; ordinary values pass; env.pass and env.set still pass one. */
START_TEST(token_values_refused)
{
	char *caller[] = {"CI=" GHP,
			  "TERM=" JWT,
			  "TZ=x" B64,
			  "LANG=AKIAABCDEFGHIJKLMNOP",
			  "COLUMNS=" GHP,
			  "COLUMNS=80", /* a later duplicate must not replace the refused one */
			  "LC_TIME=xoxb-1234567890-abcdefghij",
			  "PATH=/nix/store/0c0qsyb3m9v0l4xdn8b6bwq1gm9h5jn2-coreutils-9.5/bin:"
			  "/home/alice/.local/share/JetBrains/Toolbox2024/scripts:/usr/bin",
			  "HOME=/Users/Alice.Smith-Longname/Projects/ExampleCompany2024",
			  "SHELL=/opt/homebrew/Cellar/bash/5.2.26/bin/bash",
			  "USER=0123456789abcdef0123456789abcdef01234567",
			  "LOGNAME=a1b2c3d4-e5f6-7890-abcd-ef1234567890",
			  "COLORTERM=truecolor",
			  "GITHUB_ACTIONS=true",
			  "BUILDKITE=ThisIsALongCamelCaseIdentifierName2",
			  "MY_PASSED=" GHP,
			  NULL};
	char *pass[] = {"MY_PASSED"};
	struct policy_kv set[] = {{"T_SET", GHP}};
	struct halo_policy p;
	struct halo_err e = {{0}};
	struct policy_diags d = {0};

	memset(&p, 0, sizeof(p));
	p.env_pass = (struct policy_list){pass, 1, true};
	p.env_set = set;
	p.n_env_set = 1;
	struct runner_env_in in = {
	    .policy = &p, .caller = caller, .tmpdir = "/tmp", .warnings = &d};
	char **env = runner_env_build_in(&in, &e);

	ck_assert_ptr_nonnull(env);
	for (const char *const *n =
		 (const char *const[]){"CI", "TERM", "TZ", "LANG", "COLUMNS", "LC_TIME", NULL};
	     *n; n++)
		expect_value(env, *n, NULL);
	expect_value(env, "PATH", caller[7] + 5);
	expect_value(env, "HOME", caller[8] + 5);
	expect_value(env, "SHELL", caller[9] + 6);
	expect_value(env, "USER", caller[10] + 5);
	expect_value(env, "LOGNAME", caller[11] + 8);
	expect_value(env, "COLORTERM", "truecolor");
	expect_value(env, "BUILDKITE", "ThisIsALongCamelCaseIdentifierName2");
	expect_value(env, "MY_PASSED", GHP);
	expect_value(env, "T_SET", GHP);
	ck_assert_uint_eq(d.n_warnings, 6);
	ck_assert(strstr(d.warnings[0], "CI: not passed: its value looks like a GitHub token"));
	ck_assert(strstr(d.warnings[1], "TERM: not passed: its value looks like a JWT"));
	for (size_t i = 0; i < d.n_warnings; i++)
		ck_assert_msg(!strstr(d.warnings[i], "ghp_") && !strstr(d.warnings[i], "eyJ") &&
				  !strstr(d.warnings[i], "Xq7p") && !strstr(d.warnings[i], "AKIA"),
			      "%s", d.warnings[i]);
	policy_diags_free(&d);
	runner_env_free(env);
}
END_TEST

/* Registry URLs lose tokens in the query and the known path forms; a value still
 * holding a token is not passed; GOFLAGS keeps only build-setting flags. */
START_TEST(registry_tokens_and_goflags)
{
	char *caller[] = {
	    "PIP_INDEX_URL=https://pypi.corp.example/simple/?token=T0PSECRET&x=1",
	    "GOPROXY=https://goproxy.corp.example/?auth=T1PSECRET#frag,direct?t=T6PSECRET",
	    "PIP_EXTRA_INDEX_URL=https://pypi.fury.io/T2PSECRET/acme/ https://pypi.fury.io/acme/",
	    "npm_config_registry=https://npm-proxy.fury.io:443/T3PSECRET/acme/",
	    "UV_INDEX_URL=https://dl.cloudsmith.io/T4PSECRET/acme/repo/python/simple/",
	    "UV_DEFAULT_INDEX=https://dl.cloudsmith.io/public/acme/repo/python/simple/",
	    "YARN_REGISTRY=https://u:p/T5PSECRET@r.example/",
	    "UV_EXTRA_INDEX_URL=https://r.example/" GHP "/simple/",
	    "GOFLAGS=-mod=mod -toolexec=/tmp/evil -trimpath --tags=netgo,osusergo -exec=/x "
	    "-overlay=/o.json -ldflags=-extld=/x -buildvcs=false -p=4 -race -mod=evil -v=true",
	    "GONOSUMDB=corp.example/*",
	    NULL};
	struct halo_err e = {{0}};
	struct policy_diags d = {0};
	struct runner_env_in in = {.caller = caller, .tmpdir = "/tmp", .warnings = &d};
	char **env = runner_env_build_in(&in, &e);

	ck_assert_ptr_nonnull(env);
	expect_value(env, "PIP_INDEX_URL", "https://pypi.corp.example/simple/");
	expect_value(env, "GOPROXY", "https://goproxy.corp.example/,direct");
	expect_value(env, "PIP_EXTRA_INDEX_URL",
		     "https://pypi.fury.io/acme/ https://pypi.fury.io/acme/");
	expect_value(env, "npm_config_registry", "https://npm-proxy.fury.io:443/acme/");
	expect_value(env, "UV_INDEX_URL", "https://dl.cloudsmith.io/acme/repo/python/simple/");
	expect_value(env, "UV_DEFAULT_INDEX",
		     "https://dl.cloudsmith.io/public/acme/repo/python/simple/");
	expect_value(env, "YARN_REGISTRY", NULL); /* ambiguous: not passed */
	expect_value(env, "UV_EXTRA_INDEX_URL", NULL);
	expect_value(env, "GOFLAGS",
		     "-mod=mod -trimpath --tags=netgo,osusergo -buildvcs=false "
		     "-p=4 -race -v=true");
	expect_value(env, "GONOSUMDB", "corp.example/*");
	for (size_t i = 0; env[i]; i++)
		ck_assert_msg(!strstr(env[i], "PSECRET") && !strstr(env[i], "ghp_"), "%s", env[i]);
	for (size_t i = 0; i < d.n_warnings; i++)
		ck_assert_msg(!strstr(d.warnings[i], "PSECRET") && !strstr(d.warnings[i], "ghp_") &&
				  !strstr(d.warnings[i], "/tmp/evil"),
			      "%s", d.warnings[i]);
	bool toolexec = false, exec = false, mod = false, uv = false;
	for (size_t i = 0; i < d.n_warnings; i++) {
		toolexec |= strstr(d.warnings[i], "GOFLAGS: -toolexec dropped") != NULL;
		exec |= strstr(d.warnings[i], "GOFLAGS: -exec dropped") != NULL;
		mod |= strstr(d.warnings[i], "GOFLAGS: -mod dropped") != NULL;
		uv |= strstr(d.warnings[i], "UV_EXTRA_INDEX_URL: not passed") != NULL;
	}
	ck_assert(toolexec && exec && mod && uv);
	policy_diags_free(&d);
	runner_env_free(env);
}
END_TEST

START_TEST(goflags_only_bad)
{
	char *caller[] = {"GOFLAGS=-toolexec=/x", NULL};
	struct halo_err e = {{0}};
	char **env = runner_env_build(NULL, caller, "/tmp", &e);

	ck_assert_ptr_nonnull(env);
	expect_value(env, "GOFLAGS", NULL);
	runner_env_free(env);
}
END_TEST

/* halo-run's own variables (tool caches) yield to env.pass and env.set. */
START_TEST(vars_below_pass_and_set)
{
	char *caller[] = {"GOPATH=/home/alice/go", "PATH=/bin", NULL};
	char *pass[] = {"GOPATH"};
	struct policy_kv set[] = {{"CARGO_HOME", "/opt/cargo"}};
	struct policy_kv vars[] = {
	    {"GOPATH", "/c/go"}, {"CARGO_HOME", "/c/cargo"}, {"GOCACHE", "/c/go-build"}};
	struct halo_policy p;
	struct halo_err e = {{0}};

	memset(&p, 0, sizeof(p));
	p.env_pass = (struct policy_list){pass, 1, true};
	p.env_set = set;
	p.n_env_set = 1;
	struct runner_env_in in = {
	    .policy = &p, .caller = caller, .tmpdir = "/tmp", .vars = vars, .n_vars = 3};
	char **env = runner_env_build_in(&in, &e);

	ck_assert_ptr_nonnull(env);
	expect_value(env, "GOPATH", "/home/alice/go");
	expect_value(env, "CARGO_HOME", "/opt/cargo");
	expect_value(env, "GOCACHE", "/c/go-build");
	runner_env_free(env);
}
END_TEST

/* The sandbox's own proxy (Linux) and a URL's (macOS) take the same path: the JVM's
 * options are made from the HTTP proxy's host and port either way. */
START_TEST(proxy_variables_one_way)
{
	char *caller[] = {"PATH=/bin", "HTTPS_PROXY=http://corp:8080", NULL};
	struct halo_err e = {{0}};
	struct runner_env_in in = {.caller = caller, .tmpdir = "/tmp", .proxy = true};
	char **env = runner_env_build_in(&in, &e);

	ck_assert_ptr_nonnull(env);
	expect_value(env, "HTTPS_PROXY", "http://127.0.0.1:3128");
	expect_value(env, "http_proxy", "http://127.0.0.1:3128");
	expect_value(env, "ALL_PROXY", "socks5h://127.0.0.1:1080");
	expect_value(env, "NO_PROXY", "localhost,127.0.0.1,::1");
	expect_value(env, "JAVA_TOOL_OPTIONS",
		     "-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=3128 -Dhttps.proxyHost=127.0.0.1 "
		     "-Dhttps.proxyPort=3128 -Dhttp.nonProxyHosts=localhost|127.0.0.1");
	runner_env_free(env);
	in.http_url = "http://halo:s3cret@127.0.0.1:49152";
	env = runner_env_build_in(&in, &e);
	ck_assert_ptr_nonnull(env);
	expect_value(env, "HTTPS_PROXY", "http://halo:s3cret@127.0.0.1:49152");
	expect_value(env, "ALL_PROXY", "http://halo:s3cret@127.0.0.1:49152");
	expect_value(
	    env, "JAVA_TOOL_OPTIONS",
	    "-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=49152 -Dhttps.proxyHost=127.0.0.1 "
	    "-Dhttps.proxyPort=49152 -Dhttp.nonProxyHosts=localhost|127.0.0.1");
	runner_env_free(env);
}
END_TEST

static Suite *env_suite(void)
{
	Suite *s = suite_create("env");
	TCase *tc = tcase_create("build");

	tcase_add_test(tc, allowlist_only);
	tcase_add_test(tc, pass_names_only_what_is_named);
	tcase_add_test(tc, precedence);
	tcase_add_test(tc, path_default);
	tcase_add_test(tc, empty_and_null_caller);
	tcase_add_test(tc, zsh_compdump_policy_wins);
	tcase_add_test(tc, allowlist_contents);
	tcase_add_test(tc, ci_markers_not_tokens);
	tcase_add_test(tc, registry_settings_without_credentials);
	tcase_add_test(tc, strip_userinfo_table);
	tcase_add_test(tc, url_ambiguous_table);
	tcase_add_test(tc, registry_url_keeps_its_host);
	tcase_add_test(tc, percent_encoded_token_refused);
	tcase_add_test(tc, path_token_host_spellings);
	tcase_add_test(tc, vars_below_pass_and_set);
	tcase_add_test(tc, proxy_variables_one_way);
	tcase_add_test(tc, lc_categories_by_name);
	tcase_add_test(tc, token_values_refused);
	tcase_add_test(tc, registry_tokens_and_goflags);
	tcase_add_test(tc, goflags_only_bad);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(env_suite)
