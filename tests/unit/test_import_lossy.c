/* Issue 22: `policy import` is never looser than its source. Differential: for a
 * corpus of source files of every kind import reads (claude-code, srt, codex, cursor,
 * copilot; hostile ones included) and a corpus of hosts and paths, whatever the
 * source denies, the imported policy (with --lossy) denies too: Decide() for hosts,
 * protected-path matching (the floor and protectedPaths, as the hook's file check
 * reads them) for paths. The source's own deny semantics are written out per file
 * (its patterns, its vendor's wildcard meaning, whether unlisted hosts are refused):
 * that is the oracle. Without --lossy, a file needing any substitution is refused,
 * each entry named. */
#include <fnmatch.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/render.h"
#include "tests/unit/policy_test.h"

#define HOME "/home/alice"
#define WS   "/home/alice/proj" /* where a relative path in a settings file points */

enum vendor_star {
	V_GLOB, /* '*' matches any run of characters, dots included (fnmatch) */
	V_APEX, /* also "*.x" matches x (Cursor) */
	V_TREE, /* also every subdomain of a listed host (Copilot blockedHosts) */
};

struct source {
	const char *name;
	enum render_import_kind kind;
	const char *text;
	enum vendor_star star;
	const char *const *deny_hosts; /* as written */
	const char *const *allow_hosts;
	bool unlisted_denied;
	const char *const *deny_paths; /* ~/, //abs (Claude rules), /abs, or relative to WS */
	bool strict_ok;		       /* imports without --lossy (nothing to substitute) */
};

#define L(...) ((const char *const[]){__VA_ARGS__, NULL})

static const struct source corpus[] = {
    {"claude-code", RI_CLAUDE_CODE,
     "{\"sandbox\": {\"enabled\": true, \"filesystem\": {\"denyRead\": "
     "[\"~/secrets/**/*.pem\", \"./local/x.key\"], \"denyWrite\": [\"/opt/data\"]},"
     " \"network\": {\"allowedDomains\": [\"ok.example\", \"*.github.com\"], \"deniedDomains\": "
     "[\"*.*.evil.com\", \"foo*.bad.com\", \"https://x.example/p\", \"evil.com:0\", "
     "\"gist.github.com\"], \"allowManagedDomainsOnly\": true}},"
     " \"permissions\": {\"deny\": [\"Read(./rel/secret.txt)\", \"Edit(~/private/**)\", "
     "\"WebFetch(domain:pastebin.com)\", \"Read(//srv/keys/**)\"]}}",
     V_GLOB,
     L("*.*.evil.com", "foo*.bad.com", "https://x.example/p", "evil.com:0", "gist.github.com",
       "pastebin.com"),
     L("ok.example", "*.github.com"), true,
     L("~/secrets/**/*.pem", "./local/x.key", "/opt/data", "./rel/secret.txt", "~/private/**",
       "//srv/keys/**"),
     false},
    {"claude-code, every host denied by WebFetch", RI_CLAUDE_CODE,
     "{\"sandbox\": {\"enabled\": true, \"network\": {\"allowedDomains\": [\"ok.example\"]}},"
     " \"permissions\": {\"deny\": [\"WebFetch\"]}}",
     V_GLOB, L("*"), L("ok.example"), true, L(NULL), false},
    {"claude-code, plain", RI_CLAUDE_CODE,
     "{\"sandbox\": {\"enabled\": true, \"filesystem\": {\"denyRead\": [\"~/.kube\", "
     "\"/srv/keys\"]}, \"network\": {\"allowedDomains\": [\"ok.example\"], "
     "\"deniedDomains\": [\"*.evil.com\"], \"allowManagedDomainsOnly\": true}}}",
     V_GLOB, L("*.evil.com"), L("ok.example"), true, L("~/.kube", "/srv/keys"), true},
    {"srt", RI_SRT,
     "{\"network\": {\"allowedDomains\": [\"github.com\", \"*.github.com\"], "
     "\"deniedDomains\": [\"gist.github.com\", \"*.*.evil.com\", \"*evil.com\"]}, "
     "\"filesystem\": {\"denyRead\": [\"~/secrets/**/*.pem\", \"/opt/data\"], "
     "\"denyWrite\": [\"/srv/keys/**/*.key\"]}}",
     V_GLOB, L("gist.github.com", "*.*.evil.com", "*evil.com"), L("github.com", "*.github.com"),
     true, L("~/secrets/**/*.pem", "/opt/data", "/srv/keys/**/*.key"), false},
    {"codex", RI_CODEX,
     "[experimental_network]\nenabled = true\nmanaged_allowed_domains_only = true\n\n"
     "[experimental_network.domains]\n\"ok.example\" = \"allow\"\n\"*.*.bad.com\" = \"deny\"\n"
     "\"https://x.example/\" = \"deny\"\n\"evil.com\" = \"deny\"\n\n"
     "[permissions.filesystem]\ndeny_read = [\"~/secrets/**/*.pem\", \"/**/id_rsa\"]\n",
     V_GLOB, L("*.*.bad.com", "https://x.example/", "evil.com"), L("ok.example"), true,
     L("~/secrets/**/*.pem", "/**/id_rsa"), false},
    {"cursor", RI_CURSOR,
     "{\"type\": \"workspace_readwrite\", \"networkPolicy\": {\"default\": \"deny\", "
     "\"allow\": [\"*.ok.example\"], \"deny\": [\"*.evil.com\", \"foo*.bad.com\"]}, "
     "\"permissions\": {\"deny\": [\"Read(~/secrets/**/*.pem)\", \"Read(./rel/secret.txt)\"]}}",
     V_APEX, L("*.evil.com", "foo*.bad.com"), L("*.ok.example"), true,
     L("~/secrets/**/*.pem", "./rel/secret.txt"), false},
    {"cursor, deny every host", RI_CURSOR,
     "{\"networkPolicy\": {\"default\": \"allow\", \"deny\": [\"*\"]}}", V_APEX, L("*"), L(NULL),
     false, L(NULL), false},
    {"copilot", RI_COPILOT,
     "{\"sandbox\": {\"enabled\": true, \"allowBypass\": false, \"userPolicy\": {\"filesystem\": "
     "{\"deniedPaths\": [\"/opt/data/**\", \"~/secrets/*/x.pem\"]}, \"network\": "
     "{\"allowedHosts\": [\"github.com\"], \"blockedHosts\": [\"evil.com\", \"*.*.bad.com\", "
     "\"EVIL.org.\"]}}}}",
     V_TREE, L("evil.com", "*.*.bad.com", "evil.org"), L("github.com"), true,
     L("/opt/data/**", "~/secrets/*/x.pem"), false},
    /* review: a deny entry with a port (no harness names ports; the vendor may match
     * the host alone) is denied on every port; outbound otherwise open */
    {"copilot, blocked host with a port", RI_COPILOT,
     "{\"sandbox\": {\"enabled\": true, \"allowBypass\": false, \"userPolicy\": {\"network\": "
     "{\"blockedHosts\": [\"x.com:443\", \"pastebin.com:80\"]}}}}",
     V_TREE, L("x.com:443", "pastebin.com:80"), L(NULL), false, L(NULL), true},
    {"codex, denied host with a port", RI_CODEX,
     "[sandbox_workspace_write]\nnetwork_access = true\n\n[experimental_network]\n"
     "enabled = true\n\n[experimental_network.domains]\n\"evil.com:443\" = \"deny\"\n",
     V_GLOB, L("evil.com:443"), L(NULL), false, L(NULL), true},
    {"hostile claude-code", RI_CLAUDE_CODE,
     "{\"sandbox\": {\"enabled\": true, \"filesystem\": {\"denyRead\": [\"~/x/{a,b}/**\", "
     "\"/tmp/a[b/**\", \"~/sec rets/**/k\"]}, \"network\": {\"allowedDomains\": "
     "[\"ok.example\"], \"deniedDomains\": [\"ev\\u0001il.com\", \"\\u00e9vil.com\", "
     "\"[::1]:0\", \"*.\", \"..\", \"*.*\", \"a b.com\", \"evil.com/../y\", "
     "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     ".com\"], \"allowManagedDomainsOnly\": true}}}",
     V_GLOB, L("*.*", "evil.com/../y"), L("ok.example"), true,
     L("~/x/{a,b}/**", "/tmp/a[b/**", "~/sec rets/**/k"), false},
};

static const char *const hosts[] = {
    "evil.com",	      "a.evil.com",
    "a.b.evil.com",   "xevil.com",
    "evil.org",	      "a.evil.org",
    "bad.com",	      "foo1.bad.com",
    "a.b.bad.com",    "x.example",
    "a.x.example",    "ok.example",
    "a.ok.example",   "github.com",
    "api.github.com", "gist.github.com",
    "pastebin.com",   "a.pastebin.com",
    "random.org",     "example.com",
    "x.com",	      "com",
    "127.0.0.1",      "evil.com.attacker.net",
};

static const char *const paths[] = {
    HOME "/secrets/a/x.pem",
    HOME "/secrets/x.pem",
    HOME "/secrets/a/b/c.pem",
    HOME "/secrets/a/x.txt",
    HOME "/secrets",
    WS "/local/x.key",
    WS "/rel/secret.txt",
    HOME "/private/notes.md",
    "/opt/data/db.sqlite",
    "/opt/data",
    "/srv/keys/a/b.key",
    "/srv/keys/x",
    HOME "/.ssh/id_rsa",
    WS "/deploy/id_rsa",
    HOME "/.kube/config",
    HOME "/x/a/y",
    "/tmp/a[b/c",
    HOME "/sec rets/q/k",
    WS "/src/main.c",
    "/etc/hostname",
    HOME "/notes.txt",
};

/* ------------------------------------------------------------------ the oracle */

static bool source_host_match(const char *pat, const char *host, enum vendor_star v)
{
	char p[400], buf[420];
	size_t n;

	snprintf(p, sizeof(p), "%s", pat);
	for (char *c = p; *c; c++)
		*c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
	n = strlen(p);
	if (n > 1 && p[n - 1] == '.')
		p[n - 1] = 0;
	if (strstr(p, "://")) { /* a URL: its host */
		char *a = strstr(p, "://") + 3;
		a[strcspn(a, "/?#")] = 0;
		memmove(p, a, strlen(a) + 1);
	}
	if (strrchr(p, ':') && !strchr(p, ']'))
		*strrchr(p, ':') = 0;
	if (strcmp(p, "*") == 0 || fnmatch(p, host, 0) == 0)
		return true;
	if (v == V_APEX && strncmp(p, "*.", 2) == 0 && strcmp(p + 2, host) == 0)
		return true;
	snprintf(buf, sizeof(buf), "*.%s", p);
	return v == V_TREE && fnmatch(buf, host, 0) == 0;
}

static bool source_denies_host(const struct source *s, const char *host)
{
	bool allowed = false;

	for (const char *const *d = s->deny_hosts; *d; d++)
		if (source_host_match(*d, host, s->star))
			return true;
	for (const char *const *a = s->allow_hosts; *a; a++)
		allowed |= source_host_match(*a, host, s->star);
	return s->unlisted_denied && !allowed;
}

/* A source path glob as a POSIX ERE: ** any depth, * and ? within a component; the
 * path and everything beneath it. */
static bool source_path_match(const char *pat, const char *path)
{
	char abs[600], re[2000];
	size_t k = 0;
	regex_t r;
	bool hit;

	if (!strncmp(pat, "~/", 2))
		snprintf(abs, sizeof(abs), HOME "%s", pat + 1);
	else if (!strncmp(pat, "//", 2))
		snprintf(abs, sizeof(abs), "%s", pat + 1);
	else if (pat[0] == '/')
		snprintf(abs, sizeof(abs), "%s", pat);
	else
		snprintf(abs, sizeof(abs), WS "/%s", !strncmp(pat, "./", 2) ? pat + 2 : pat);
	k += (size_t)snprintf(re + k, sizeof(re) - k, "^");
	for (const char *c = abs; *c && k + 16 < sizeof(re); c++) {
		if (!strncmp(c, "**/", 3)) {
			k += (size_t)snprintf(re + k, sizeof(re) - k, "(.*/)?");
			c += 2;
		} else if (!strncmp(c, "**", 2)) {
			k += (size_t)snprintf(re + k, sizeof(re) - k, ".*");
			c++;
		} else if (*c == '*') {
			k += (size_t)snprintf(re + k, sizeof(re) - k, "[^/]*");
		} else if (*c == '?') {
			k += (size_t)snprintf(re + k, sizeof(re) - k, "[^/]");
		} else if (strchr(".^$+(){}|[]\\", *c)) {
			k += (size_t)snprintf(re + k, sizeof(re) - k, "\\%c", *c);
		} else {
			re[k++] = *c;
		}
	}
	snprintf(re + k, sizeof(re) - k, "(/.*)?$");
	ck_assert_msg(regcomp(&r, re, REG_EXTENDED | REG_NOSUB) == 0, "oracle regex %s", re);
	hit = regexec(&r, path, 0, NULL, 0) == 0;
	regfree(&r);
	return hit;
}

/* ------------------------------------------------------------------ the import */

/* Protected, as the hook's file check (hook/files.c) and the workspace scan read the
 * policy: an absolute entry covers its subtree; a name pattern matches any component
 * (and so everything beneath it), a path pattern any tail of the path. */
static bool imported_protects(const struct halo_policy *p, const char *abs)
{
	for (size_t i = 0; i < p->protected_abs.n; i++)
		if (policy_path_within(abs, p->protected_abs.items[i]))
			return true;
	for (size_t i = 0; i < p->protected_globs.n; i++) {
		char g[512];
		const char *raw = p->protected_globs.items[i];

		while (!strncmp(raw, "./", 2) || !strncmp(raw, "**/", 3))
			raw += raw[0] == '.' ? 2 : 3;
		snprintf(g, sizeof(g), "%s", raw);
		for (size_t n = strlen(g); n > 0 && g[n - 1] == '/';)
			g[--n] = 0;
		bool path_glob = strchr(g, '/') != NULL;
		for (const char *s = abs; g[0] && s && *s; s = strchr(s, '/')) {
			char comp[600], tail[600];
			s++;
			snprintf(comp, sizeof(comp), "%.*s", (int)strcspn(s, "/"), s);
			snprintf(tail, sizeof(tail), "%s", s);
			/* a path pattern matches a tail, or a leading part of one (beneath) */
			if (fnmatch(g, path_glob ? tail : comp, FNM_CASEFOLD) == 0)
				return true;
			for (char *q = tail; path_glob && (q = strchr(q + 1, '/'));) {
				*q = 0;
				if (fnmatch(g, tail, FNM_CASEFOLD) == 0)
					return true;
				*q = '/';
			}
		}
	}
	return false;
}

static const struct policy_ctx ctx = {HOME, HOME, WS, NULL, NULL};

START_TEST(never_looser_than_the_source)
{
	const struct source *s = &corpus[_i];
	struct render_import_world lossy = {&ctx, NULL, true}, strict = {&ctx, NULL, false};
	struct render_import r;
	struct halo_err e = {{0}};
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	int rc = render_import(s->text, strlen(s->text), s->kind, &lossy, &r, &e);

	ck_assert_msg(rc == 0, "[%s] --lossy refused: %s (%zu lost: %s)", s->name, e.msg, r.n_lost,
		      r.n_lost ? r.lost[0] : "");
	ck_assert_msg(policy_parse_buffer("import", r.yaml, strlen(r.yaml), 'y', &p, &d) == 0 &&
			  policy_finalize(p, &ctx, &d) == 0,
		      "[%s] the import does not validate:\n%s", s->name, r.yaml);
	ck_assert_msg((r.n_subst == 0) == s->strict_ok, "[%s] %zu substitutions", s->name,
		      r.n_subst);
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		struct policy_decision dec;
		if (!source_denies_host(s, hosts[i]))
			continue;
		policy_decide(p, hosts[i], strlen(hosts[i]), &dec);
		ck_assert_msg(!dec.allow, "[%s] the source denies %s, the import allows it:\n%s",
			      s->name, hosts[i], r.yaml);
	}
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		bool denied = false;
		for (const char *const *dp = s->deny_paths; *dp && !denied; dp++)
			denied = source_path_match(*dp, paths[i]);
		ck_assert_msg(!denied || imported_protects(p, paths[i]),
			      "[%s] the source denies %s, the import does not protect it:\n%s",
			      s->name, paths[i], r.yaml);
	}
	policy_free(p);
	policy_diags_free(&d);
	render_import_free(&r);

	/* Without --lossy: refused whenever a substitution was needed, each entry named. */
	memset(&e, 0, sizeof(e));
	rc = render_import(s->text, strlen(s->text), s->kind, &strict, &r, &e);
	if (s->strict_ok) {
		ck_assert_msg(rc == 0 && r.n_lost == 0, "[%s] strict: %s", s->name, e.msg);
	} else {
		ck_assert_msg(rc < 0 && r.n_lost > 0 && r.yaml == NULL, "[%s] strict accepted",
			      s->name);
		ck_assert_msg(strstr(e.msg, "--lossy"), "[%s] %s", s->name, e.msg);
	}
	render_import_free(&r);
}
END_TEST

/* The oracle itself, so that a blind oracle cannot make the test pass. */
START_TEST(oracle_sees_denials)
{
	ck_assert(source_host_match("*.*.evil.com", "a.b.evil.com", V_GLOB));
	ck_assert(!source_host_match("*.*.evil.com", "evil.com", V_GLOB));
	ck_assert(source_host_match("*.ok.example", "ok.example", V_APEX));
	ck_assert(source_host_match("evil.com", "a.evil.com", V_TREE));
	ck_assert(source_host_match("https://x.example/p", "x.example", V_GLOB));
	ck_assert(source_path_match("~/secrets/**/*.pem", HOME "/secrets/a/x.pem"));
	ck_assert(source_path_match("~/secrets/**/*.pem", HOME "/secrets/x.pem"));
	ck_assert(!source_path_match("~/secrets/**/*.pem", HOME "/secrets/a/x.txt"));
	ck_assert(source_path_match("./rel/secret.txt", WS "/rel/secret.txt"));
	ck_assert(source_path_match("/opt/data", "/opt/data/db.sqlite"));
	size_t n = 0;
	for (size_t i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++)
		for (size_t h = 0; h < sizeof(hosts) / sizeof(hosts[0]); h++)
			n += source_denies_host(&corpus[i], hosts[h]);
	ck_assert_uint_gt(n, 50);
}
END_TEST

/* The issue's case end to end in the library: refused without --lossy, naming the
 * entry; with it, ~/secrets protected and the substitution reported. */
START_TEST(secrets_pem_case)
{
	const char *t = "{\"sandbox\": {\"enabled\": true, \"filesystem\": "
			"{\"denyRead\": [\"~/secrets/**/*.pem\"]}}}";
	struct render_import_world strict = {&ctx, NULL, false}, lossy = {&ctx, NULL, true};
	struct render_import r;
	struct halo_err e = {{0}};

	ck_assert_int_lt(render_import(t, strlen(t), RI_CLAUDE_CODE, &strict, &r, &e), 0);
	ck_assert_uint_eq(r.n_lost, 1);
	ck_assert_ptr_nonnull(strstr(r.lost[0], "sandbox.filesystem.denyRead: ~/secrets/**/*.pem"));
	render_import_free(&r);
	ck_assert_int_eq(render_import(t, strlen(t), RI_CLAUDE_CODE, &lossy, &r, &e), 0);
	ck_assert_ptr_nonnull(strstr(r.yaml, "\"~/secrets\""));
	ck_assert_uint_eq(r.n_subst, 1);
	ck_assert_ptr_nonnull(strstr(r.subst[0], "~/secrets/**/*.pem -> ~/secrets"));
	render_import_free(&r);
}
END_TEST

static Suite *import_lossy_suite(void)
{
	Suite *s = suite_create("import_lossy");
	TCase *tc = tcase_create("differential");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, never_looser_than_the_source, 0,
			    (int)(sizeof(corpus) / sizeof(corpus[0])));
	tcase_add_test(tc, oracle_sees_denials);
	tcase_add_test(tc, secrets_pem_case);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(import_lossy_suite)
