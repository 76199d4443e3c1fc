/* egress.credentials and egress.requestRules: the request decision as a table of
 * hostile paths and methods, the host match, the credential templates (hostile values,
 * missing variables), and validation of hostile credentials and rules. */
#include <errno.h>
#include <string.h>

#include "tests/unit/policy_test.h"

#define ROWS(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const char rules_yaml[] =
    "egress:\n"
    "  allowedDomains: [api.github.com, registry.npmjs.org, \"*.corp.example\", open.example]\n"
    "  credentials:\n"
    "    - {host: registry.npmjs.org, header: Authorization, value: \"Bearer ${NPM_TOKEN}\"}\n"
    "    - {host: \"*.corp.example\", header: X-Api-Key, value: \"k-${CORP_KEY}-$$\"}\n"
    "  requestRules:\n"
    "    - {host: api.github.com, methods: [GET, HEAD], paths: [\"/repos/acme/*\"]}\n"
    "    - {host: api.github.com, methods: [POST], paths: [\"/repos/acme/*/issues\", "
    "\"/graphql\"]}\n"
    "    - {host: \"*.corp.example\", paths: [\"/v1/*/x\"]}\n"
    "    - {host: open.example}\n";

static struct halo_policy *load_rules(void)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	ck_assert_msg(pt_load(rules_yaml, &p, &d) == 0, "%s", pt_dump(&d));
	policy_diags_free(&d);
	return p;
}

struct req_row {
	const char *host, *method, *target;
	bool applies, allow;
	const char *rule; /* a piece of it */
};

static const struct req_row req_rows[] = {
    {"api.github.com", "GET", "/repos/acme/x", true, true, "requestRules[0]"},
    {"api.github.com", "HEAD", "/repos/acme/x/y/z?q=1", true, true, "requestRules[0]"},
    {"api.github.com", "GET", "/repos/acme/", true, true, "requestRules[0]"},
    {"api.github.com", "GET", "/repos/acme", true, false, "no rule allows GET /repos/acme"},
    {"api.github.com", "GET", "/repos/acmex/y", true, false, "no rule allows"},
    {"api.github.com", "get", "/repos/acme/x", true, false, "no rule allows get"},
    {"api.github.com", "POST", "/repos/acme/x", true, false, "no rule allows POST"},
    {"api.github.com", "POST", "/repos/acme/x/issues", true, true, "requestRules[1]"},
    {"api.github.com", "POST", "/graphql", true, true, "requestRules[1]"},
    {"api.github.com", "POST", "/graphql/", true, false, "no rule allows"},
    {"api.github.com", "DELETE", "/repos/acme/x", true, false, "no rule allows DELETE"},
    {"api.github.com", "GET", "/gists", true, false, "no rule allows GET /gists"},
    /* the query and fragment are not part of the path */
    {"api.github.com", "GET", "/gists?/repos/acme/x", true, false, "no rule allows"},
    {"api.github.com", "GET", "/gists#/repos/acme/x", true, false, "no rule allows"},
    /* paths every origin would read another way */
    {"api.github.com", "GET", "/repos/acme/../other", true, false, "'..' segment"},
    {"api.github.com", "GET", "/repos/acme/x/..", true, false, "'..' segment"},
    {"api.github.com", "GET", "/repos/acme/./x", true, false, "'..' segment"},
    {"api.github.com", "GET", "/repos/acme/..;/other", true, false, "'..' segment"},
    {"api.github.com", "GET", "/repos/acme/.;/x", true, false, "'..' segment"},
    {"api.github.com", "GET", "/repos/acme/%2e%2e/other", true, false, "encoded"},
    {"api.github.com", "GET", "/repos/acme/%2E%2E/other", true, false, "encoded"},
    {"api.github.com", "GET", "/repos/acme/.%2e/other", true, false, "encoded"},
    {"api.github.com", "GET", "/repos/acme%2f..%2fother", true, false, "encoded"},
    {"api.github.com", "GET", "/repos/acme/x%5c..%5cy", true, false, "encoded"},
    {"api.github.com", "GET", "/repos/acme/x%00", true, false, "encoded"},
    {"api.github.com", "GET", "/repos/acme/x%zz", true, false, "invalid percent-escape"},
    {"api.github.com", "GET", "/repos/acme/x%4", true, false, "invalid percent-escape"},
    {"api.github.com", "GET", "/repos/acme/x%", true, false, "invalid percent-escape"},
    {"api.github.com", "GET", "/repos/acme/a\\..\\b", true, false, "backslash"},
    {"api.github.com", "GET", "/repos/acme/a b", true, false, "space"},
    {"api.github.com", "GET", "/repos/acme/\x7f", true, false, "control"},
    {"api.github.com", "GET", "/repos/acme/caf\xc3\xa9", true, false, "non-ASCII"},
    {"api.github.com", "GET", "http://api.github.com/repos/acme/x", true, false, "origin-form"},
    {"api.github.com", "OPTIONS", "*", true, false, "origin-form"},
    {"api.github.com", "GET", "", true, false, "origin-form"},
    /* decoded once, the path may hold no ';' and no second layer of escapes */
    {"api.github.com", "GET", "/repos/acme/%252e%252e/other", true, false, "double-encoded"},
    {"api.github.com", "GET", "/repos/acme/%252E%252E/other", true, false, "double-encoded"},
    {"api.github.com", "GET", "/repos/acme/x%252f..%252fy", true, false, "double-encoded"},
    {"api.github.com", "GET", "/repos/acme/x%255c..%255cy", true, false, "double-encoded"},
    {"api.github.com", "GET", "/repos/acme/x%253b/y", true, false, "double-encoded"},
    {"api.github.com", "GET", "/repos/acme/x%25%32%65%25%32%65", true, false, "double-encoded"},
    {"api.github.com", "GET", "/repos/acme/%25252e%25252e/x", true, false, "double-encoded"},
    {"api.github.com", "GET", "/repos/acme/x%2500", true, false, "double-encoded"},
    {"api.github.com", "GET", "/repos/acme/x%3b/y", true, false, "';' parameter"},
    {"api.github.com", "GET", "/repos/acme/x%3B/y", true, false, "';' parameter"},
    {"api.github.com", "GET", "/repos/acme/x;/y", true, false, "';' parameter"},
    {"api.github.com", "GET", "/repos/acme;x=1/y", true, false, "';' parameter"},
    {"api.github.com", "GET", "/repos/acme/x;jsessionid=1", true, false, "';' parameter"},
    {"open.example", "GET", "/a/..%3b/b", true, false, "';' parameter"},
    {"open.example", "GET", "/a/%2e.;/b", true, false, "encoded"},
    /* escapes of non-ASCII bytes: overlong UTF-8 and fullwidth '.' '/' (review 21), and
     * every other one, in either layer */
    {"api.github.com", "GET", "/repos/acme/%c0%ae%c0%ae/other", true, false, "non-ASCII byte"},
    {"api.github.com", "GET", "/repos/acme/..%c0%afother", true, false, "non-ASCII byte"},
    {"api.github.com", "GET", "/repos/acme/%C0%AE%C0%AE/other", true, false, "non-ASCII byte"},
    {"api.github.com", "GET", "/repos/acme/%e0%80%ae%e0%80%ae/x", true, false, "non-ASCII byte"},
    {"api.github.com", "GET", "/repos/acme/%ef%bc%8e%ef%bc%8e/x", true, false, "non-ASCII byte"},
    {"api.github.com", "GET", "/repos/acme/..%ef%bc%8fother", true, false, "non-ASCII byte"},
    {"api.github.com", "GET", "/repos/acme/x%ef%bc%bcy", true, false, "non-ASCII byte"},
    {"api.github.com", "GET", "/repos/acme/caf%c3%a9", true, false, "(%80-%FF)"},
    {"api.github.com", "GET", "/repos/acme/x%80", true, false, "non-ASCII byte"},
    {"api.github.com", "GET", "/repos/acme/x%ff", true, false, "non-ASCII byte"},
    {"api.github.com", "GET", "/repos/acme/x%7F", true, false, "encoded"},
    {"api.github.com", "GET", "/repos/acme/%25c0%25ae%25c0%25ae/x", true, false, "double-encoded"},
    {"api.github.com", "GET", "/repos/acme/x%25ef%25bc%258f", true, false, "double-encoded"},
    {"api.github.com", "GET", "/repos/acme/x?q=%c3%a9", true, true, "requestRules[0]"},
    /* dots and encoded spaces: ".." to servers that trim them (review 23) */
    {"api.github.com", "GET", "/repos/acme/..%20/admin", true, false, "dots and encoded spaces"},
    {"api.github.com", "GET", "/repos/acme/.%20/x", true, false, "dots and encoded spaces"},
    {"api.github.com", "GET", "/repos/acme/x/..%20%20/y", true, false, "dots and encoded spaces"},
    {"api.github.com", "GET", "/repos/acme/x/..%2520/y", true, false, "double-encoded"},
    {"api.github.com", "GET", "/repos/acme/my%20doc", true, true, "requestRules[0]"},
    {"api.github.com", "GET", "/repos/acme/a.%20b", true, true, "requestRules[0]"},
    /* ...but a '%' that decodes to nothing special, and ';' in the query, are fine */
    {"api.github.com", "GET", "/repos/acme/100%25", true, true, "requestRules[0]"},
    {"api.github.com", "GET", "/repos/acme/100%25off", true, true, "requestRules[0]"},
    {"api.github.com", "GET", "/repos/acme/x%2541", true, true, "requestRules[0]"},
    {"api.github.com", "GET", "/repos/acme/x?a=1;b=2", true, true, "requestRules[0]"},
    /* TRACE and TRACK to a host with a credential, rules or not, in any case */
    {"registry.npmjs.org", "TRACE", "/", true, false, "TRACE is refused"},
    {"registry.npmjs.org", "TRACK", "/x", true, false, "TRACK is refused"},
    {"registry.npmjs.org", "trace", "/", true, false, "echo the credential"},
    {"a.corp.example", "TRACE", "/v1/q/x", true, false, "egress.credentials for a.corp.example"},
    {"registry.npmjs.org", "GET", "/", false, true, "no requestRules"},
    {"open.example", "TRACE", "/anything", true, true, "requestRules[3]"}, /* no credential */
    /* percent-escapes of ordinary bytes stay as they are (and match literally) */
    {"api.github.com", "GET", "/repos/acme/a%20b", true, true, "requestRules[0]"},
    {"api.github.com", "GET", "/repos/%61cme/x", true, false, "no rule allows"},
    /* wildcards: subdomains only; '*' inside a path spans segments */
    {"a.corp.example", "PUT", "/v1/q/x", true, true, "requestRules[2]"},
    {"a.b.corp.example", "GET", "/v1/q/r/s/x", true, true, "requestRules[2]"},
    {"a.corp.example", "GET", "/v1/q/y", true, false, "no rule allows"},
    {"corp.example", "GET", "/v1/q/x", false, true, "no requestRules"},
    {"xcorp.example", "GET", "/v1/q/x", false, true, "no requestRules"},
    /* a rule with neither methods nor paths allows every request to its host */
    {"open.example", "BREW", "/anything/../at/all", true, false, "'..' segment"},
    {"open.example", "BREW", "/anything", true, true, "requestRules[3] open.example"},
    /* a host without rules is not judged here */
    {"registry.npmjs.org", "PUT", "/x/../y", false, true, "no requestRules"},
    {"api.github.com.", "GET", "/gists", false, true, "no requestRules"}, /* not canonical */
};

START_TEST(request_table)
{
	const struct req_row *r = &req_rows[_i];
	struct halo_policy *p = load_rules();
	struct policy_request_decision d;

	ck_assert_int_eq(policy_decide_request(p, r->host, r->method, r->target, &d), 0);
	ck_assert_msg(d.applies == r->applies && d.allow == r->allow && strstr(d.rule, r->rule),
		      "%s %s %s: applies %d allow %d rule '%s'", r->host, r->method, r->target,
		      d.applies, d.allow, d.rule);
	policy_free(p);
}
END_TEST

START_TEST(long_and_starry_paths)
{
	struct halo_policy *p = load_rules();
	struct policy_request_decision d;
	static char path[20000];

	/* A long path of near-misses: the glob is linear, and the rule text stays bounded. */
	path[0] = '/';
	for (size_t i = 1; i < sizeof(path) - 1; i++)
		path[i] = i % 2 ? 'v' : '1';
	path[sizeof(path) - 1] = '\0';
	ck_assert_int_eq(policy_decide_request(p, "a.corp.example", "GET", path, &d), 0);
	ck_assert(!d.allow);
	ck_assert_uint_lt(strlen(d.rule), sizeof(d.rule));
	ck_assert_int_eq(policy_decide_request(NULL, "h", "GET", "/", &d), -EINVAL);
	ck_assert_int_eq(policy_decide_request(p, "h", NULL, "/", &d), -EINVAL);
	policy_free(p);
}
END_TEST

START_TEST(terminated_and_credentials)
{
	struct halo_policy *p = load_rules();
	size_t i = 99;

	ck_assert(policy_tls_wanted(p));
	ck_assert(policy_tls_terminated(p, "api.github.com"));
	ck_assert(policy_tls_terminated(p, "registry.npmjs.org"));
	ck_assert(policy_tls_terminated(p, "x.corp.example"));
	ck_assert(!policy_tls_terminated(p, "corp.example"));
	ck_assert(!policy_tls_terminated(p, "github.com"));
	ck_assert(!policy_tls_terminated(p, "evil-registry.npmjs.org"));
	ck_assert_ptr_nonnull(policy_credential_for(p, "registry.npmjs.org", &i));
	ck_assert_uint_eq(i, 0);
	ck_assert_ptr_nonnull(policy_credential_for(p, "a.b.corp.example", &i));
	ck_assert_uint_eq(i, 1);
	ck_assert_ptr_null(policy_credential_for(p, "corp.example", NULL));
	ck_assert_ptr_null(policy_credential_for(p, "registry.npmjs.org.evil.example", NULL));
	ck_assert_ptr_null(policy_credential_for(p, "api.github.com", NULL));
	ck_assert(!policy_host_match("*.x.example", "x.example"));
	ck_assert(!policy_host_match("*.x.example", "ax.example"));
	ck_assert(policy_host_match("*.x.example", "a.x.example"));
	ck_assert(!policy_host_match(NULL, "a"));
	policy_free(p);
}
END_TEST

/* ------------------------------------------------------------ templates */

static const char *lookup(void *arg, const char *name)
{
	(void)arg;
	if (strcmp(name, "TOK") == 0)
		return "s3cret";
	if (strcmp(name, "EMPTY") == 0)
		return "";
	if (strcmp(name, "CRLF") == 0)
		return "a\r\nX-Injected: 1";
	if (strcmp(name, "LF") == 0)
		return "a\nb";
	if (strcmp(name, "NUL_LIKE") == 0)
		return "a\x01";
	return NULL;
}

struct tmpl_row {
	const char *tmpl;
	int rc;
	const char *out_or_why;
};

static const struct tmpl_row tmpl_rows[] = {
    {"Bearer ${TOK}", 0, "Bearer s3cret"},
    {"${TOK}${TOK}", 0, "s3crets3cret"},
    {"cost $$5 ${TOK}", 0, "cost $5 s3cret"},
    {"plain", 0, "plain"},
    {"\t${TOK}", 0, "\ts3cret"},
    {"Bearer ${MISSING}", -ENOENT, "MISSING is not set"},
    {"${TOK} ${ALSO_MISSING}", -ENOENT, "ALSO_MISSING is not set"},
    {"${CRLF}", -EINVAL, "control byte"},
    {"${LF}", -EINVAL, "control byte"},
    {"${NUL_LIKE}", -EINVAL, "control byte"},
    {"${EMPTY}", -EINVAL, "empty"},
    {"", -EINVAL, "empty"},
    {"$TOK", -EINVAL, "not followed by ${NAME}"},
    {"${TOK", -EINVAL, "not followed by ${NAME}"},
    {"${}", -EINVAL, "not followed by ${NAME}"},
    {"${1TOK}", -EINVAL, "not followed by ${NAME}"},
    {"${TO-K}", -EINVAL, "not followed by ${NAME}"},
    {"${ TOK}", -EINVAL, "not followed by ${NAME}"},
    {"a$", -EINVAL, "not followed by ${NAME}"},
    {"x\ry", -EINVAL, "control byte"},
};

START_TEST(template_table)
{
	const struct tmpl_row *r = &tmpl_rows[_i];
	char out[64] = "", why[200] = "";
	int rc =
	    policy_credential_expand(r->tmpl, lookup, NULL, out, sizeof(out), why, sizeof(why));

	ck_assert_msg(rc == r->rc, "%s: rc %d want %d (%s)", r->tmpl, rc, r->rc, why);
	if (rc == 0)
		ck_assert_str_eq(out, r->out_or_why);
	else
		ck_assert_msg(strstr(why, r->out_or_why), "%s: why '%s'", r->tmpl, why);
	if (rc == -EINVAL && strstr(why, "control"))
		ck_assert_msg(!strstr(out, "s3cret") && !strstr(out, "Injected"), "%s: not wiped",
			      r->tmpl);
}
END_TEST

START_TEST(template_bounds_and_vars)
{
	char out[8], why[100], name[16];
	size_t pos = 0;

	ck_assert_int_eq(policy_credential_expand("${TOK}${TOK}", lookup, NULL, out, sizeof(out),
						  why, sizeof(why)),
			 -ENOSPC);
	ck_assert(policy_credential_next_var("a ${A} $$ ${B_2} ${bad", &pos, name, sizeof(name)));
	ck_assert_str_eq(name, "A");
	ck_assert(policy_credential_next_var("a ${A} $$ ${B_2} ${bad", &pos, name, sizeof(name)));
	ck_assert_str_eq(name, "B_2");
	ck_assert(!policy_credential_next_var("a ${A} $$ ${B_2} ${bad", &pos, name, sizeof(name)));
}
END_TEST

/* ------------------------------------------------------------ validation */

struct val_row {
	const char *egress; /* the egress block's lines after allowedDomains */
	const char *want;   /* a piece of an error, or NULL: loads (then warn, if set) */
	const char *warn;
};

#define ALLOW "egress:\n  allowedDomains: [api.github.com, reg.example, 10.0.0.1]\n"
static const struct val_row val_rows[] = {
    {"  credentials: [{host: reg.example, header: Authorization, value: \"Bearer ${T}\"}]\n", NULL,
     "egress.allowedDomains[2] 10.0.0.1 is an IP literal"},
    {"  credentials: [{host: other.example, header: A, value: \"${T}\"}]\n",
     "is not allowed by egress", NULL},
    {"  credentials: [{host: \"*.reg.example\", header: A, value: \"${T}\"}]\n",
     "is not allowed by egress", NULL},
    {"  credentials: [{host: 10.0.0.1, header: A, value: \"${T}\"}]\n", "not an IP address", NULL},
    {"  credentials: [{host: \"reg.example:443\", header: A, value: \"${T}\"}]\n", "without a port",
     NULL},
    {"  credentials: [{host: Reg.Example, header: A, value: \"${T}\"}]\n", "upper case", NULL},
    {"  credentials: [{host: \"https://reg.example\", header: A, value: \"${T}\"}]\n", "URL", NULL},
    {"  credentials: [{host: \"*\", header: A, value: \"${T}\"}]\n", "bare '*'", NULL},
    {"  credentials: [{host: reg.example, header: \"Auth orization\", value: \"${T}\"}]\n",
     "not a header field name", NULL},
    {"  credentials: [{host: reg.example, header: \"X:Y\", value: \"${T}\"}]\n",
     "not a header field name", NULL},
    {"  credentials: [{host: reg.example, header: \"\", value: \"${T}\"}]\n", "1 to 64", NULL},
    {"  credentials: [{host: reg.example, header: X-HTTP-Method-Override, value: \"${T}\"}]\n",
     "makes some origins run another method or path", NULL},
    {"  credentials: [{host: reg.example, header: x_original_url, value: \"${T}\"}]\n",
     "makes some origins run another method or path", NULL},
    {"  credentials: [{host: reg.example, header: Host, value: \"${T}\"}]\n", "the proxy owns",
     NULL},
    {"  credentials: [{host: reg.example, header: content-length, value: \"${T}\"}]\n",
     "the proxy owns", NULL},
    {"  credentials: [{host: reg.example, header: Transfer-Encoding, value: \"${T}\"}]\n",
     "the proxy owns", NULL},
    {"  credentials: [{host: reg.example, header: Connection, value: \"${T}\"}]\n",
     "the proxy owns", NULL},
    {"  credentials: [{host: reg.example, header: A, value: \"a\\r\\nX-Evil: 1\"}]\n",
     "control byte", NULL},
    {"  credentials: [{host: reg.example, header: A, value: \"a\\nb\"}]\n", "control byte", NULL},
    {"  credentials: [{host: reg.example, header: A, value: \"$T\"}]\n", "not followed by", NULL},
    {"  credentials: [{host: reg.example, header: A, value: \"\"}]\n", "empty", NULL},
    {"  credentials: [{host: reg.example, header: A, value: literal-secret}]\n", NULL,
     "a literal value"},
    {"  credentials: [{host: reg.example, header: A}]\n", "'value' is required", NULL},
    {"  credentials: [{host: reg.example, header: A, value: \"${T}\", extra: 1}]\n",
     "unknown key 'extra'", NULL},
    {"  credentials: [{host: reg.example, header: A, value: 5}]\n", "expected a string", NULL},
    {"  credentials: [{host: reg.example, header: A, value: yes}]\n", "expected a string", NULL},
    {"  credentials: {host: reg.example}\n", "expected a list", NULL},
    {"  credentials: [reg.example]\n", "expected a mapping", NULL},
    {"  credentials:\n    - {host: reg.example, header: A, value: \"${T}\"}\n"
     "    - {host: reg.example, header: B, value: \"${U}\"}\n",
     "has a credential already", NULL},
    {"  requestRules: [{host: api.github.com, methods: [get]}]\n", "upper case letters", NULL},
    {"  requestRules: [{host: api.github.com, methods: [\"G ET\"]}]\n", "upper case letters", NULL},
    {"  requestRules: [{host: api.github.com, methods: []}]\n", "would allow no request", NULL},
    {"  requestRules: [{host: api.github.com, paths: []}]\n", "would allow no request", NULL},
    {"  requestRules: [{host: api.github.com, paths: [repos]}]\n", "starting with '/'", NULL},
    {"  requestRules: [{host: api.github.com, paths: [\"/a b\"]}]\n", "starting with '/'", NULL},
    {"  requestRules: [{host: api.github.com, paths: [\"/a?b\"]}]\n", "starting with '/'", NULL},
    {"  requestRules: [{host: api.github.com, paths: [\"/a\\\\b\"]}]\n", "starting with '/'", NULL},
    {"  requestRules: [{methods: [GET]}]\n", "'host' is required", NULL},
    {"  requestRules: [{host: api.github.com, method: [GET]}]\n", "unknown key 'method'", NULL},
    {"  requestRules: [{host: denied.example}]\n", "is not allowed by egress", NULL},
    {"  requestRules: [{host: api.github.com, methods: GET}]\n", "expected a list", NULL},
    {"  trustedCAs: [relative.pem]\n", "an absolute file path", NULL},
    {"  trustedCAs: [\"/etc/ssl/*.pem\"]\n", "an absolute file path", NULL},
    {"  trustedCAs: [/etc/ssl/corp.pem]\n", NULL, "only used for hosts"},
};

/* The fields that would make an origin run another method or path than the one a
 * request rule checked: any case, '_' as '-'; near names are not them. */
START_TEST(override_fields)
{
	static const char *const yes[] = {"X-HTTP-Method-Override", "x-http-method",
					  "X-Method-Override",	    "X-Original-URL",
					  "x-rewrite-url",	    "X_HTTP_METHOD_OVERRIDE"};
	static const char *const no[] = {
	    "X-HTTP-Method-Overrid", "X-HTTP-Method-Override2", "Method", "X-Original", "",
	    "Authorization"};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		ck_assert_msg(policy_request_override_field(yes[i], strlen(yes[i])), "%s", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ck_assert_msg(!policy_request_override_field(no[i], strlen(no[i])), "%s", no[i]);
	/* The length bounds the name: a prefix of a longer buffer is judged alone. */
	ck_assert(policy_request_override_field("X-HTTP-Method: GET", 13));
	ck_assert(!policy_request_override_field("X-HTTP-Method-Override", 8));
}
END_TEST

START_TEST(validation_table)
{
	const struct val_row *r = &val_rows[_i];
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	char text[2048];
	int rc;

	snprintf(text, sizeof(text), "%s%s", ALLOW, r->egress);
	rc = pt_load(text, &p, &d);
	if (r->want)
		ck_assert_msg(rc != 0 && pt_err(&d, r->want), "%s: want '%s':%s", r->egress,
			      r->want, pt_dump(&d));
	else
		ck_assert_msg(rc == 0, "%s:%s", r->egress, pt_dump(&d));
	if (r->warn)
		ck_assert_msg(pt_warn(&d, r->warn), "%s: want warning '%s':%s", r->egress, r->warn,
			      pt_dump(&d));
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(env_pass_of_a_credential_refused)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	ck_assert(pt_load(ALLOW
			  "  credentials: [{host: reg.example, header: A, value: \"${TOK}\"}]\n"
			  "env: {pass: [TOK]}\n",
			  &p, &d) != 0);
	ck_assert_msg(pt_err(&d, "${TOK} is also in env.pass"), "%s", pt_dump(&d));
	policy_diags_free(&d);
	policy_free(p);
}
END_TEST

START_TEST(default_allow_warns_reachable_otherwise)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	ck_assert_int_eq(
	    pt_load("egress:\n  default: allow\n"
		    "  credentials: [{host: reg.example, header: A, value: \"${TOK}\"}]\n",
		    &p, &d),
	    0);
	ck_assert_msg(pt_warn(&d, "reachable by plain tunnel under an IP literal"), "%s",
		      pt_dump(&d));
	policy_diags_free(&d);
	policy_free(p);
}
END_TEST

/* Another way to the same servers: a wildcard over the host's siblings (unless that
 * wildcard is terminated itself), an IP literal, a preset's wildcard. */
START_TEST(other_ways_warned)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	ck_assert_int_eq(
	    pt_load("egress:\n  allowedDomains: [\"*.acme.example\", \"*.gh.example\"]\n"
		    "  presets: [vcs]\n"
		    "  requestRules: [{host: api.acme.example}, {host: \"*.gh.example\"},\n"
		    "                 {host: api.github.com}]\n",
		    &p, &d),
	    0);
	ck_assert_msg(pt_warn(&d, "api.acme.example is also reachable another way: "
				  "egress.allowedDomains[0] *.acme.example is a wildcard"),
		      "%s", pt_dump(&d));
	ck_assert_msg(!pt_warn(&d, "allowedDomains[1] *.gh.example"), "%s", pt_dump(&d));
	ck_assert_msg(pt_warn(&d, "api.github.com is also reachable another way: preset vcs"), "%s",
		      pt_dump(&d));
	policy_diags_free(&d);
	policy_free(p);
}
END_TEST

START_TEST(mode_off_refuses_them)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	ck_assert(pt_load("sandbox: {mode: off}\negress:\n"
			  "  requestRules: [{host: api.github.com}]\n",
			  &p, &d) != 0);
	ck_assert_msg(pt_err(&d, "egress.requestRules: not allowed with sandbox.mode off"), "%s",
		      pt_dump(&d));
	policy_diags_free(&d);
	policy_free(p);
}
END_TEST

/* A later layer replacing the request rules is a loosening; the rules survive layering. */
START_TEST(layering)
{
	struct policy_diags d = {0};
	struct halo_policy *base = NULL, *up = NULL;
	struct policy_request_decision rd;
	static const char upper[] = "egress:\n  requestRules: [{host: api.github.com}]\n";

	ck_assert_int_eq(
	    policy_parse_buffer("a.yaml", rules_yaml, strlen(rules_yaml), 'y', &base, &d), 0);
	ck_assert_int_eq(policy_parse_buffer("b.yaml", upper, strlen(upper), 'y', &up, &d), 0);
	ck_assert_int_eq(policy_layer(base, up, "b.yaml", &d), 0);
	ck_assert_msg(pt_warn(&d, "loosens egress.requestRules"), "%s", pt_dump(&d));
	ck_assert_int_eq(policy_finalize(base, &pt_ctx, &d), 0);
	policy_decide_request(base, "api.github.com", "DELETE", "/anything", &rd);
	ck_assert(rd.applies && rd.allow);
	ck_assert_uint_eq(base->n_creds, 2); /* not replaced: the upper layer has none */
	policy_free(base);
	policy_free(up);
	policy_diags_free(&d);
}
END_TEST

static Suite *request_suite(void)
{
	Suite *s = suite_create("request");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, request_table, 0, ROWS(req_rows));
	tcase_add_test(tc, long_and_starry_paths);
	tcase_add_test(tc, terminated_and_credentials);
	tcase_add_loop_test(tc, template_table, 0, ROWS(tmpl_rows));
	tcase_add_test(tc, template_bounds_and_vars);
	tcase_add_loop_test(tc, validation_table, 0, ROWS(val_rows));
	tcase_add_test(tc, override_fields);
	tcase_add_test(tc, env_pass_of_a_credential_refused);
	tcase_add_test(tc, default_allow_warns_reachable_otherwise);
	tcase_add_test(tc, mode_off_refuses_them);
	tcase_add_test(tc, other_ways_warned);
	tcase_add_test(tc, layering);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(request_suite)
