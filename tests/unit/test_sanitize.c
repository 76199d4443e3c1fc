/* The sanitized copy of ~/.npmrc: settings kept, every secret and everything not
 * understood dropped; hostile inputs. */
#include <errno.h>

#include "tests/unit/unit.h"
#include "policy/policy.h"

struct scase {
	const char *name;
	const char *in;	  /* NULL: a long line of a secret */
	const char *keep; /* lines that must be in the output, '|' separated */
	const char *gone; /* substrings that must not be, '|' separated */
	int rc;
	size_t len; /* 0: strlen(in) */
};

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static const struct scase cases[] = {
    {"registry and token",
     "registry=https://npm.acme.example/\n//npm.acme.example/:_authToken=npm_SECRET\n",
     "registry=https://npm.acme.example/", "npm_SECRET|_authToken"},
    {"scoped registry kept", "@acme:registry=https://npm.acme.example/acme/\n",
     "@acme:registry=https://npm.acme.example/acme/"},
    {"every auth key",
     "_auth=QUJD\n_authToken=T1\n_password=P1\nusername=U1\nemail=E1@x\ncertfile=/c\n"
     "keyfile=/k\ncert=C1\nkey=K1\notp=123456\n//r/:always-auth=true\nalways-auth=true\n"
     "strict-ssl=false\n",
     "strict-ssl=false", "QUJD|T1|P1|U1|E1|/c|/k|C1|K1|123456|always-auth"},
    {"case folded keys", "_AuthToken=T2\nUSERNAME=U2\nPassWord=P2\n", NULL, "T2|U2|P2"},
    {"userinfo in any url",
     "proxy=http://user:pw@proxy.example:8080\nhttps-proxy=http://a@b/\n"
     "registry=https://${NPM_TOKEN}@r.example/\nnoproxy=localhost\n",
     "noproxy=localhost", "pw@|a@b|NPM_TOKEN"},
    {"at sign outside authority kept", "registry=https://r.example/@scope/x\n",
     "registry=https://r.example/@scope/x"},
    {"comments dropped", "; _authToken=C1\n# //h/:_password=C2\nregistry=r\n", "registry=r",
     "C1|C2"},
    {"spaces and CRLF", "  registry = \"https://r.example/\" \r\nfetch-retries=3\r\n",
     "registry=\"https://r.example/\"|fetch-retries=3", "\r"},
    {"no equals, empty key", "noequals\n=\n==\n = v\n", NULL, "noequals|= v"},
    {"quoted and odd keys", "\"_authToken\"=Q1\n'x'=Q2\nk$y=Q3\nre gistry=Q4\n", NULL,
     "Q1|Q2|Q3|Q4"},
    {"env expansion kept", "cache=${HOME}/.npm\n", "cache=${HOME}/.npm"},
    {"array key", "ca[]=-----BEGIN\n", "ca[]=-----BEGIN"},
    {"section kept", "[acme]\nregistry=r\n", "[acme]|registry=r"},
    {"odd section stops", "registry=a\n[b@d sec]\nregistry=b\n", "registry=a", "registry=b"},
    {"bracket key", "[bregistry=B1\nre[g]istry=B2\nlist[]=ok\n", "list[]=ok", "B1|B2"},
    {"key with scope and secret", "@acme:_authToken=S1\n", NULL, "S1"},
    {"slash key", "/abs:x=S2\n", NULL, "S2"},
    {"empty file", "", NULL},
    {"only blank lines", "\n\n\r\n   \n", NULL},
    {"no final newline", "registry=r", "registry=r"},
    {"CR-only line ends", "registry=https://r/\r//r/:_authToken=CR1\rstrict-ssl=true\r",
     "registry=https://r/|strict-ssl=true", "CR1"},
    {"inline comment with a token", "registry=https://r/ ; old _authToken=IC1\n", NULL, "IC1"},
    {"inline hash comment", "registry=https://r/ # _password=IC2\nfetch-retries=2\n",
     "fetch-retries=2", "IC2"},
    {"token-shaped values (policy_secret_like)",
     "fetch-retries=ghp_abcdefghijklmnopqrstuvwxyz0123\n"
     "cache=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig\n"
     "prefix=Xq7pL2mZ9vB4nR8sT1wY6kD3hF5jG0cAeUoIi\n"
     "cafile=/etc/ssl/Corp/certs/ca-bundle.pem\n"
     "ca[]=-----BEGIN RSA PRIVATE KEY-----\n",
     "cafile=/etc/ssl/Corp/certs/ca-bundle.pem", "ghp_|eyJ|Xq7pL|PRIVATE"},
    {"long line", NULL},
    {"nul byte", "registry=r\0_authToken=x\n", NULL, NULL, -EINVAL, 25},
};

static bool has_line(const char *out, const char *line, size_t n)
{
	for (const char *p = out; (p = strstr(p, "\n")); p++)
		if (strncmp(p + 1, line, n) == 0 && p[1 + n] == '\n')
			return true;
	return false;
}

START_TEST(npmrc_table)
{
	const struct scase *c = &cases[_i];
	char *out = NULL, big[8192];
	const char *in = c->in;
	size_t n = 0, len = c->len ? c->len : in ? strlen(in) : 0;
	int rc;

	if (!in) { /* a long line of a secret key */
		memset(big, 'a', sizeof(big) - 1);
		memcpy(big, "_authToken=", 11);
		big[sizeof(big) - 1] = '\0';
		in = big;
		len = sizeof(big) - 1;
	}
	rc = policy_sanitize(POLICY_SANITIZE_NPMRC, in, len, &out, &n);
	ck_assert_msg(rc == c->rc, "[%s] rc %d", c->name, rc);
	if (rc < 0) {
		ck_assert_ptr_null(out);
		return;
	}
	ck_assert_msg(out[0] == ';', "[%s] no header: %s", c->name, out);
	for (const char *k = c->keep; k && *k;) {
		size_t kl = strcspn(k, "|");
		ck_assert_msg(has_line(out, k, kl), "[%s] lost '%.*s' in:\n%s", c->name, (int)kl, k,
			      out);
		k += kl + (k[kl] == '|');
	}
	for (const char *g = c->gone; g && *g;) {
		size_t gl = strcspn(g, "|");
		ck_assert_msg(!memmem(out + 1, n - 1, g, gl), "[%s] kept '%.*s' in:\n%s", c->name,
			      (int)gl, g, out);
		g += gl + (g[gl] == '|');
	}
	if (!c->in)
		ck_assert(!strstr(out, "aaaa"));
	free(out);
}
END_TEST

START_TEST(limits)
{
	char *out = (char *)1;
	size_t n = 1;
	char *big = calloc(1, POLICY_SANITIZE_MAX + 2);

	ck_assert_ptr_nonnull(big);
	memset(big, '\n', POLICY_SANITIZE_MAX + 1);
	ck_assert_int_eq(
	    policy_sanitize(POLICY_SANITIZE_NPMRC, big, POLICY_SANITIZE_MAX + 1, &out, &n),
	    -EINVAL);
	ck_assert_ptr_null(out);
	ck_assert_int_eq(policy_sanitize(POLICY_SANITIZE_NONE, "a=b\n", 4, &out, &n), -EINVAL);
	ck_assert_int_eq(policy_sanitize(POLICY_SANITIZE_NPMRC, NULL, 3, &out, &n), -EINVAL);
	ck_assert_int_eq(policy_sanitize(POLICY_SANITIZE_NPMRC, big, POLICY_SANITIZE_MAX, &out, &n),
			 0);
	free(out);
	free(big);
}
END_TEST

/* The one table of token shapes: what it catches, and ordinary values it must not. */
START_TEST(secret_like_table)
{
	static const char *const yes[] = {
	    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
	    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
	    "x=gho_abcdefghijklmnopqrstuvwx",
	    "glpat-abcdefghij0123456789",
	    "xoxb-1234567890-abcdefghij",
	    "AKIAIOSFODNN7EXAMPLE",
	    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
	    "npm_abcdefghijklmnopqrstuvwxyz0123456789",
	    "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
	    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl",
	    "-----BEGIN OPENSSH PRIVATE KEY-----",
	    "Xq7pL2mZ9vB4nR8sT1wY6kD3hF5jG0cAeUoIiQ",
	    "/home/u/Xq7pL2mZ9vB4nR8sT1wY6kD3hF5jG0cAeUoIiQ/x",
	};
	static const char *const no[] = {
	    "",
	    "true",
	    "/usr/local/bin:/usr/bin:/bin:/home/alice/.cargo/bin:/home/alice/go/bin",
	    "/nix/store/0c0qsyb3m9v0l4xdn8b6bwq1gm9h5jn2-coreutils-9.5/bin",
	    "/Users/Alice.Smith-Longname/Projects/ExampleCompany2024/node_modules/.bin",
	    "/Library/Frameworks/Python.framework/Versions/3.12/bin",
	    "xterm-256color",
	    "en_US.UTF-8",
	    "sk_SK.UTF-8",
	    "America/Argentina/ComodRivadavia",
	    "0123456789abcdef0123456789abcdef01234567",				/* sha1 */
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", /* sha256 */
	    "a1b2c3d4-e5f6-7890-abcd-ef1234567890",
	    "ThisIsALongCamelCaseIdentifierName2",
	    "/etc/ssl/certs/Hellenic_Academic_and_Research_Institutions_ECC_RootCA_2015.pem",
	    "/etc/ssl/certs/Autoridad_de_Certificacion_Firmaprofesional_CIF_A62634068.pem",
	    "rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:do=01;35:bd=40;33;01:cd=40;33;01:"
	    "or=40;31;01:mi=00:su=37;41:sg=30;43:ca=00:tw=30;42:ow=34;42:st=37;44:ex=01;32",
	    "https://proxy.golang.org,direct",
	    "-----BEGIN CERTIFICATE-----",
	    "ghp_short",
	    "AKIAlower",
	};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		const char *what = NULL;
		ck_assert_msg(policy_secret_like(yes[i], strlen(yes[i]), &what), "missed %s",
			      yes[i]);
		ck_assert_ptr_nonnull(what);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ck_assert_msg(!policy_secret_like(no[i], strlen(no[i]), NULL), "false positive %s",
			      no[i]);
	ck_assert(!policy_secret_like(NULL, 0, NULL));
}
END_TEST

static Suite *sanitize_suite(void)
{
	Suite *s = suite_create("sanitize");
	TCase *t = tcase_create("npmrc");

	tcase_add_loop_test(t, npmrc_table, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(t, limits);
	tcase_add_test(t, secret_like_table);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(sanitize_suite)
