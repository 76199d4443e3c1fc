/* Decide(): a table of hosts against hand-built policies, asserting the verdict, the rule,
 * its index and its pattern; plus the rule text, index building and the hash table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/hashset.h"
#include "policy/policy.h"
#include "tests/unit/policy_test.h"
#include "tests/unit/unit.h"

#define ROWS(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define L10	"abcdefghij"
#define L48	L10 L10 L10 L10 "abcdefgh"
#define L63	L10 L10 L10 L10 L10 L10 "abc"
#define L64	L63 "d"
/* 253 and 254 characters, under *.acme.example */
#define ACME253 L63 "." L63 "." L63 "." L48 ".acme.example"
#define ACME254 L63 "." L63 "." L63 "." L48 "x.acme.example"

/* The policies, filled field by field (the loader is not under test here). */
enum { M, O, R, D, E, A, F, NPOL };

static char *m_denied[] = {
    "pastebin.com",    "*.evil.example",	 "blocked.acme.example",     "203.0.113.7",
    "[2001:db8::bad]", "*.tracker.acme.example", "raw.githubusercontent.com"};
static char *m_allowed[] = {"ai.acme.example",	    "*.acme.example",	 "*.deep.acme.example",
			    "198.51.100.10",	    "[2001:db8::10]",	 "pastebin.com",
			    "*.evil.example",	    "files.example.net", "*.example.net",
			    "::ffff:198.51.100.20", "localhost",	 "xn--bcher-kva.example",
			    "*.a.b.c.d.example"};
static char *m_presets[] = {"vcs", "package-registries"};
static char *o_denied[] = {"pastebin.com", "*.evil.example", "192.0.2.66"};
static char *r_allowed[] = {"*.x.example", "a.x.example", "dup.example", "dup.example",
			    "*.y.example", "*.y.example", "github.com"};
static char *r_presets[] = {"package-registries", "vcs"};
static char *d_denied[] = {"github.com", "*.githubusercontent.com"};
static char *d_presets[] = {"vcs"};
static char *f_denied[] = {"pastebin.com"};

#define LIST(a) ((struct policy_list){a, sizeof(a) / sizeof((a)[0]), true})

static struct halo_policy *pols[NPOL];

static struct halo_policy *mk(enum policy_mode mode, bool default_allow)
{
	struct halo_policy *p = calloc(1, sizeof(*p));

	ck_assert_ptr_nonnull(p);
	p->mode = mode;
	p->egress_default_allow = default_allow;
	return p;
}

static void setup(void)
{
	pols[M] = mk(POLICY_MODE_WORKSPACE_WRITE, false);
	pols[M]->denied_domains = LIST(m_denied);
	pols[M]->allowed_domains = LIST(m_allowed);
	pols[M]->presets = LIST(m_presets);
	pols[O] = mk(POLICY_MODE_READ_ONLY, true);
	pols[O]->denied_domains = LIST(o_denied);
	pols[R] = mk(POLICY_MODE_UNSET, false);
	pols[R]->allowed_domains = LIST(r_allowed);
	pols[R]->presets = LIST(r_presets);
	pols[D] = mk(POLICY_MODE_WORKSPACE_WRITE, false);
	pols[D]->denied_domains = LIST(d_denied);
	pols[D]->presets = LIST(d_presets);
	pols[E] = mk(POLICY_MODE_WORKSPACE_WRITE, false);
	pols[A] = mk(POLICY_MODE_WORKSPACE_WRITE, true);
	pols[F] = mk(POLICY_MODE_OFF, false);
	pols[F]->denied_domains = LIST(f_denied);
	for (int i = 0; i < NPOL; i++)
		ck_assert_int_eq(policy_index_build(pols[i]), 0);
}

static void teardown(void)
{
	for (int i = 0; i < NPOL; i++) {
		policy_index_free(pols[i]->index);
		free(pols[i]);
		pols[i] = NULL;
	}
}

struct row {
	int pol;
	const char *host;
	size_t len;
	bool allow;
	enum policy_rule rule;
	size_t index;
	const char *pattern;
	const char *extra; /* preset name, or a substring of why for invalid hosts */
};

#define DEN(p, h, i, pat)                                                                          \
	{                                                                                          \
		p, h, sizeof(h) - 1, false, POLICY_RULE_DENIED, i, pat, NULL                       \
	}
#define ALW(p, h, i, pat)                                                                          \
	{                                                                                          \
		p, h, sizeof(h) - 1, true, POLICY_RULE_ALLOWED, i, pat, NULL                       \
	}
#define PRE(p, h, i, n, pat)                                                                       \
	{                                                                                          \
		p, h, sizeof(h) - 1, true, POLICY_RULE_PRESET, i, pat, n                           \
	}
#define DEF(p, h, a)                                                                               \
	{                                                                                          \
		p, h, sizeof(h) - 1, a, POLICY_RULE_DEFAULT, 0, NULL, NULL                         \
	}
#define INV(p, h, why)                                                                             \
	{                                                                                          \
		p, h, sizeof(h) - 1, false, POLICY_RULE_INVALID_HOST, 0, NULL, why                 \
	}
#define OFF(p, h)                                                                                  \
	{                                                                                          \
		p, h, sizeof(h) - 1, true, POLICY_RULE_MODE_OFF, 0, NULL, NULL                     \
	}
#define VCS "vcs"
#define REG "package-registries"

static const struct row rows[] = {
    /* exact names, case and one trailing dot */
    ALW(M, "ai.acme.example", 0, "ai.acme.example"),
    ALW(M, "AI.ACME.EXAMPLE", 0, "ai.acme.example"),
    ALW(M, "ai.acme.example.", 0, "ai.acme.example"),
    ALW(M, "Ai.Acme.Example.", 0, "ai.acme.example"),
    INV(M, "ai.acme.example..", "more than one trailing dot"),
    /* wildcards at several depths, never the apex */
    ALW(M, "x.acme.example", 1, "*.acme.example"),
    ALW(M, "a.b.acme.example", 1, "*.acme.example"),
    ALW(M, "a.b.c.d.e.acme.example", 1, "*.acme.example"),
    ALW(M, "X.Y.ACME.EXAMPLE.", 1, "*.acme.example"),
    ALW(M, "x.deep.acme.example", 1, "*.acme.example"), /* also *.deep (2): lowest wins */
    ALW(M, "deep.acme.example", 1, "*.acme.example"),
    ALW(M, "sub.blocked.acme.example", 1, "*.acme.example"), /* the deny is exact only */
    ALW(M, "tracker.acme.example", 1, "*.acme.example"),     /* apex of a deny wildcard */
    ALW(M, ACME253, 1, "*.acme.example"),
    INV(M, ACME254, "name longer than 253 characters (254)"),
    DEF(M, "acme.example", false),
    DEF(M, "acme.example.", false),
    DEF(M, "ACME.example", false),
    DEF(M, "xacme.example", false),
    DEF(M, "x-acme.example", false),
    DEF(M, "acme.example.evil", false),
    DEF(M, "ai.acme.example.evil", false),
    DEF(M, "ai.acme.example.other.example", false),
    DEN(M, "ai.acme.example.evil.example", 1, "*.evil.example"),
    DEF(M, "ai-acme.example", false),
    DEF(M, "example", false),
    ALW(M, "e.a.b.c.d.example", 12, "*.a.b.c.d.example"),
    ALW(M, "z.e.a.b.c.d.example", 12, "*.a.b.c.d.example"),
    DEF(M, "a.b.c.d.example", false),
    DEF(M, "b.c.d.example", false),
    DEF(M, "e.b.c.d.example", false),
    /* deny beats allow */
    DEN(M, "blocked.acme.example", 2, "blocked.acme.example"),
    DEN(M, "BLOCKED.acme.example.", 2, "blocked.acme.example"),
    DEN(M, "t.tracker.acme.example", 5, "*.tracker.acme.example"),
    DEN(M, "a.b.tracker.acme.example", 5, "*.tracker.acme.example"),
    DEN(M, "pastebin.com", 0, "pastebin.com"), /* also allowedDomains[5] */
    DEN(M, "PASTEBIN.COM", 0, "pastebin.com"),
    DEN(M, "pastebin.com.", 0, "pastebin.com"),
    DEN(M, "PasteBin.Com.", 0, "pastebin.com"),
    DEF(M, "www.pastebin.com", false),
    DEF(M, "pastebin.com.evil", false),
    DEF(M, "pastebin.co", false),
    DEF(M, "evil.example", false), /* apex of a deny and an allow wildcard */
    DEN(M, "a.evil.example", 1, "*.evil.example"),
    DEN(M, "x.y.z.evil.example", 1, "*.evil.example"),
    DEN(M, "A.EVIL.EXAMPLE.", 1, "*.evil.example"),
    /* other exact and wildcard allows */
    ALW(M, "files.example.net", 7, "files.example.net"), /* also *.example.net (8) */
    ALW(M, "a.files.example.net", 8, "*.example.net"),
    ALW(M, "www.example.net", 8, "*.example.net"),
    DEF(M, "example.net", false),
    DEF(M, "example.network", false),
    ALW(M, "localhost", 10, "localhost"),
    ALW(M, "LOCALHOST.", 10, "localhost"),
    DEF(M, "localhost.localdomain", false),
    DEF(M, "localhostx", false),
    ALW(M, "xn--bcher-kva.example", 11, "xn--bcher-kva.example"),
    ALW(M, "XN--BCHER-KVA.example", 11, "xn--bcher-kva.example"),
    INV(M,
	"b\xc3\xbc"
	"cher.example",
	"non-ASCII byte 0xc3"),
    /* IPv4 literals: canonical spellings match, everything else is refused */
    DEN(M, "203.0.113.7", 3, "203.0.113.7"),
    DEN(M, "203.0.113.7.", 3, "203.0.113.7"),
    DEF(M, "203.0.113.8", false),
    INV(M, "203.0.113.07", "leading zero in '07'"),
    INV(M, "203.0.29447", "short form with 3 parts"),
    INV(M, "203.7405575", "short form with 2 parts"),
    INV(M, "3405803783", "a single number"),
    INV(M, "0xcb.0.0x71.7", "hex part '0xcb'"),
    INV(M, "0313.0.0161.07", "leading zero in '0313'"),
    INV(M, "0xcb007107", "hex part"),
    INV(M, "203.0.113.7.0", "not an IPv4 address: 5 numeric parts"),
    INV(M, "203.0.113.256", "out of range"),
    ALW(M, "198.51.100.10", 3, "198.51.100.10"),
    ALW(M, "198.51.100.10.", 3, "198.51.100.10"),
    INV(M, "198.51.100.010", "leading zero"),
    INV(M, "198.51.25610", "short form"),
    INV(M, "[198.51.100.10]", "brackets are only for IPv6"),
    DEF(M, "198.51.100.1", false),
    DEF(M, "127.0.0.1", false),
    INV(M, "127.1", "short form with 2 parts"),
    INV(M, "0x7f.0.0.1", "hex part '0x7f'"),
    INV(M, "2130706433", "a single number"),
    INV(M, "0177.0.0.1", "leading zero in '0177'"),
    INV(M, "example.1", "name ends in a number"),
    INV(M, "acme.example.0x1", "name ends in a number"),
    /* numeric labels before the last one are still a name */
    ALW(M, "10.acme.example", 1, "*.acme.example"),
    ALW(M, "10.0.0.1.acme.example", 1, "*.acme.example"),
    /* IPv6: bracketed or bare, any spelling of the same address */
    ALW(M, "[2001:db8::10]", 4, "[2001:db8::10]"),
    ALW(M, "2001:db8::10", 4, "[2001:db8::10]"),
    ALW(M, "[2001:DB8:0::10]", 4, "[2001:db8::10]"),
    ALW(M, "2001:0db8:0000:0000:0000:0000:0000:0010", 4, "[2001:db8::10]"),
    DEF(M, "[2001:db8::11]", false),
    DEN(M, "[2001:db8::bad]", 4, "[2001:db8::bad]"),
    DEN(M, "2001:db8::bad", 4, "[2001:db8::bad]"),
    DEN(M, "[2001:DB8::BAD]", 4, "[2001:db8::bad]"),
    DEN(M, "2001:db8:0:0:0:0:0:bad", 4, "[2001:db8::bad]"),
    INV(M, "[2001:db8::10%eth0]", "IPv6 zone id"),
    INV(M, "2001:db8::10%25eth0", "IPv6 zone id"),
    INV(M, "[2001:db8::10]:443", "port not allowed"),
    INV(M, "[2001:db8::10", "unterminated '['"),
    INV(M, "[2001:db8::10]]", "characters after ']'"),
    INV(M, "[2001:db8:::10]", "invalid IPv6 address"),
    DEF(M, "[::1]", false),
    DEF(M, "::1", false),
    /* IPv4-mapped and NAT64 spellings dial the IPv4, so they match its entry */
    ALW(M, "[::ffff:198.51.100.10]", 3, "198.51.100.10"),
    ALW(M, "::ffff:c633:640a", 3, "198.51.100.10"),
    ALW(M, "[64:ff9b::198.51.100.10]", 3, "198.51.100.10"),
    DEN(M, "[::ffff:203.0.113.7]", 3, "203.0.113.7"),
    ALW(M, "198.51.100.20", 9, "::ffff:198.51.100.20"),
    ALW(M, "[::ffff:198.51.100.20]", 9, "::ffff:198.51.100.20"),
    ALW(M, "::ffff:c633:6414", 9, "::ffff:198.51.100.20"),
    DEF(M, "[::198.51.100.10]", false), /* IPv4-compatible is not the IPv4 host */
    /* (review) ... but its deny entries hold for it: the safe side. */
    DEN(M, "[::203.0.113.7]", 3, "203.0.113.7"),
    INV(M, "[::ffff:198.51.100.010]", "invalid IPv6 address"),
    /* presets: index is the position in `presets`, pattern the entry */
    PRE(M, "github.com", 0, VCS, "github.com"),
    PRE(M, "GitHub.com.", 0, VCS, "github.com"),
    PRE(M, "api.github.com", 0, VCS, "*.github.com"),
    PRE(M, "codeload.github.com", 0, VCS, "*.github.com"),
    PRE(M, "a.b.github.com", 0, VCS, "*.github.com"),
    PRE(M, "objects.githubusercontent.com", 0, VCS, "*.githubusercontent.com"),
    PRE(M, "x.raw.githubusercontent.com", 0, VCS, "*.githubusercontent.com"),
    DEN(M, "raw.githubusercontent.com", 6, "raw.githubusercontent.com"),
    DEF(M, "githubusercontent.com", false),
    DEF(M, "github.com.attacker.example", false),
    DEF(M, "api.github.com.attacker.example", false),
    DEF(M, "xgithub.com", false),
    DEF(M, "evilgithub.com", false),
    DEF(M, "github-com.example", false),
    DEF(M, "github.co", false),
    DEF(M, "github.comm", false),
    PRE(M, "gitlab.com", 0, VCS, "gitlab.com"),
    PRE(M, "registry.gitlab.com", 0, VCS, "*.gitlab.com"),
    PRE(M, "codeberg.org", 0, VCS, "codeberg.org"),
    DEF(M, "www.codeberg.org", false),
    PRE(M, "registry.npmjs.org", 1, REG, "registry.npmjs.org"),
    DEF(M, "npmjs.org", false),
    DEF(M, "evil.registry.npmjs.org", false),
    PRE(M, "pypi.org", 1, REG, "pypi.org"),
    PRE(M, "PYPI.ORG.", 1, REG, "pypi.org"),
    PRE(M, "files.pythonhosted.org", 1, REG, "files.pythonhosted.org"),
    DEF(M, "pythonhosted.org", false),
    PRE(M, "crates.io", 1, REG, "crates.io"),
    PRE(M, "index.crates.io", 1, REG, "index.crates.io"),
    PRE(M, "proxy.golang.org", 1, REG, "proxy.golang.org"),
    DEF(M, "golang.org", false),
    DEF(M, "api.anthropic.com", false), /* model-providers is not listed */
    /* hostile spellings of allowed hosts */
    INV(M, "", "empty host"),
    INV(M, ".", "empty host ('.')"),
    INV(M, "github.com..", "more than one trailing dot"),
    INV(M, ".github.com", "empty label at offset 0"),
    INV(M, "api..github.com", "empty label at offset 4"),
    INV(M, "git hub.com", "whitespace (byte 0x20)"),
    INV(M, " github.com", "whitespace"),
    INV(M, "github.com\t", "whitespace (byte 0x09)"),
    INV(M, "github.com\r\n", "whitespace (byte 0x0d)"),
    INV(M, "github.com\0.evil.example", "NUL byte at offset 10"),
    INV(M, "\0github.com", "NUL byte at offset 0"),
    INV(M, "git\x08hub.com", "control byte 0x08"),
    INV(M, "github\x7f.com", "control byte 0x7f"),
    INV(M,
	"gith\xc3\xbc"
	"b.com",
	"non-ASCII byte 0xc3"),
    INV(M, "\xef\xbd\x87ithub.com", "non-ASCII byte 0xef"),
    INV(M,
	"github\xe3\x80\x82"
	"com",
	"non-ASCII byte 0xe3"),
    INV(M, "git%68ub.com", "percent-escape"),
    INV(M, "github.com%2eevil.example", "percent-escape"),
    INV(M, "user@github.com", "userinfo ('@')"),
    INV(M, "evil.example@github.com", "userinfo"),
    INV(M, "github.com:443", "port not allowed"),
    INV(M, "github.com/", "'/' found"),
    INV(M, "https://github.com", "'/' found"),
    INV(M, "github.com\\evil", "backslash"),
    INV(M, "api_github.com", "underscore ('_')"),
    INV(M, "*.github.com", "'*' is a pattern"),
    INV(M, "-github.com", "label '-github' starts or ends with '-'"),
    INV(M, "github-.com", "starts or ends with '-'"),
    INV(M, L64 ".github.com", "label longer than 63 characters (64)"),
    PRE(M, L63 ".github.com", 0, VCS, "*.github.com"),
    INV(M, "[github.com]", "brackets are only for IPv6"),
    INV(M, "fe80::1%eth0", "IPv6 zone id"),
    INV(M, "github.com;evil", "invalid character ';'"),

    /* default allow with a deny list */
    DEF(O, "anything.example", true),
    DEF(O, "github.com", true),
    DEN(O, "pastebin.com", 0, "pastebin.com"),
    DEN(O, "PasteBin.Com.", 0, "pastebin.com"),
    DEF(O, "www.pastebin.com", true),
    DEN(O, "x.evil.example", 1, "*.evil.example"),
    DEF(O, "evil.example", true),
    DEN(O, "192.0.2.66", 2, "192.0.2.66"),
    DEN(O, "[::ffff:192.0.2.66]", 2, "192.0.2.66"),
    DEN(O, "::ffff:c000:242", 2, "192.0.2.66"),
    DEN(O, "[64:ff9b::c000:242]", 2, "192.0.2.66"),
    DEF(O, "192.0.2.67", true),
    DEF(O, "[2001:db8::1]", true),
    DEF(O, "localhost", true),
    /* ... so every trick to dodge a deny must be refused, not defaulted */
    INV(O, "192.0.578", "short form with 3 parts"),
    INV(O, "3221226050", "a single number"),
    INV(O, "0300.0.2.66", "leading zero"),
    INV(O, "0xc0.0.2.66", "hex part"),
    INV(O, "pastebin%2ecom", "percent-escape"),
    INV(O, "pastebin.com..", "more than one trailing dot"),
    INV(O, "pastebin.com\0", "NUL byte at offset 12"),
    INV(O, "x@pastebin.com", "userinfo"),
    INV(O, "pastebin.com:443", "port not allowed"),
    INV(O, "p\xc9\x91stebin.com", "non-ASCII"),

    /* list order: lowest index wins, allowedDomains before presets */
    ALW(R, "a.x.example", 0, "*.x.example"),
    ALW(R, "b.x.example", 0, "*.x.example"),
    DEF(R, "x.example", false),
    ALW(R, "dup.example", 2, "dup.example"),
    ALW(R, "q.y.example", 4, "*.y.example"),
    ALW(R, "github.com", 6, "github.com"),
    PRE(R, "api.github.com", 1, VCS, "*.github.com"),
    PRE(R, "pypi.org", 0, REG, "pypi.org"),
    DEF(R, "gitlab.example", false),

    /* a deny rule beats a preset */
    DEN(D, "github.com", 0, "github.com"),
    PRE(D, "api.github.com", 0, VCS, "*.github.com"),
    DEN(D, "raw.githubusercontent.com", 1, "*.githubusercontent.com"),
    PRE(D, "gitlab.com", 0, VCS, "gitlab.com"),
    DEF(D, "githubusercontent.com", false),

    /* no rules at all */
    DEF(E, "github.com", false),
    DEF(E, "1.2.3.4", false),
    INV(E, "127.1", "short form"),
    DEF(A, "github.com", true),
    DEF(A, "[::1]", true),
    INV(A, "127.1", "short form"),
    INV(A, "a..b", "empty label"),

    /* sandbox mode off: nothing is enforced, so nothing is refused */
    OFF(F, "pastebin.com"),
    OFF(F, "127.1"),
    OFF(F, "anything.example"),
};

START_TEST(decide_table)
{
	const struct row *r = &rows[_i];
	const struct halo_policy *p = pols[r->pol];
	struct policy_decision d;
	char rule[512];

	ck_assert_int_eq(policy_decide(p, r->host, r->len, &d), 0);
	policy_decision_rule(&d, rule, sizeof(rule));
	ck_assert_msg(d.allow == r->allow && d.rule == r->rule, "row %d '%.*s': got %s (%s)", _i,
		      (int)r->len, r->host, d.allow ? "allow" : "deny", rule);
	ck_assert_msg(d.index == r->index, "row %d: index %zu, want %zu", _i, d.index, r->index);
	if (!r->pattern)
		ck_assert_ptr_null(d.pattern);
	else
		ck_assert_str_eq(d.pattern, r->pattern);
	if (r->rule == POLICY_RULE_DENIED)
		ck_assert_ptr_eq(d.pattern, p->denied_domains.items[r->index]);
	if (r->rule == POLICY_RULE_ALLOWED)
		ck_assert_ptr_eq(d.pattern, p->allowed_domains.items[r->index]);
	if (r->rule == POLICY_RULE_PRESET)
		ck_assert_str_eq(d.preset, r->extra);
	else
		ck_assert_ptr_null(d.preset);
	if (r->rule == POLICY_RULE_INVALID_HOST) {
		ck_assert_msg(strstr(d.why, r->extra), "row %d: why '%s' lacks '%s'", _i, d.why,
			      r->extra);
		ck_assert_str_eq(d.host.text, "");
	} else if (r->rule != POLICY_RULE_MODE_OFF) {
		struct policy_decision again;
		/* the canonical host decides the same way */
		ck_assert_str_eq(d.why, "");
		ck_assert_int_eq(policy_decide(p, d.host.text, strlen(d.host.text), &again), 0);
		ck_assert_int_eq(again.allow, d.allow);
		ck_assert_int_eq(again.rule, d.rule);
		ck_assert_uint_eq(again.index, d.index);
		ck_assert_ptr_eq(again.pattern, d.pattern);
	}
}
END_TEST

struct text_row {
	int pol;
	const char *host;
	const char *text;
};

static const struct text_row text_rows[] = {
    {M, "pastebin.com", "deniedDomains[0] pastebin.com"},
    {M, "a.evil.example", "deniedDomains[1] *.evil.example"},
    {M, "x.acme.example", "allowedDomains[1] *.acme.example"},
    {M, "[2001:db8::10]", "allowedDomains[4] [2001:db8::10]"},
    {M, "api.github.com", "presets[0] vcs: *.github.com"},
    {M, "pypi.org", "presets[1] package-registries: pypi.org"},
    {M, "nothing.example", "default deny"},
    {O, "nothing.example", "default allow"},
    {M, "127.1", "invalid host: non-canonical IPv4 address: short form with 2 parts"},
    {M, "a_b.example", "invalid host: underscore ('_') is not a valid host name character"},
    {F, "127.1", "sandbox mode off"},
};

START_TEST(rule_text)
{
	const struct text_row *r = &text_rows[_i];
	struct policy_decision d;
	char buf[256];

	ck_assert_int_eq(policy_decide(pols[r->pol], r->host, strlen(r->host), &d), 0);
	policy_decision_rule(&d, buf, sizeof(buf));
	ck_assert_str_eq(buf, r->text);
	/* truncation is safe */
	policy_decision_rule(&d, buf, 8);
	ck_assert_uint_eq(strlen(buf), strlen(r->text) < 7 ? strlen(r->text) : 7);
}
END_TEST

START_TEST(decided_host)
{
	struct policy_decision d;

	ck_assert_int_eq(policy_decide(pols[M], "API.GitHub.com.", 15, &d), 0);
	ck_assert_str_eq(d.host.text, "api.github.com");
	ck_assert_int_eq(d.host.kind, POLICY_HOST_NAME);
	ck_assert_int_eq(policy_decide(pols[M], "2001:DB8::10", 12, &d), 0);
	ck_assert_str_eq(d.host.text, "2001:db8::10");
	ck_assert_int_eq(d.host.kind, POLICY_HOST_IPV6);
	/* mode off still reports a host that parses, and none that does not */
	ck_assert_int_eq(policy_decide(pols[F], "Pastebin.com", 12, &d), 0);
	ck_assert_str_eq(d.host.text, "pastebin.com");
	ck_assert_int_eq(policy_decide(pols[F], "a..b", 4, &d), 0);
	ck_assert_str_eq(d.host.text, "");
	ck_assert(d.allow);
}
END_TEST

/* --decider is asked only when no rule matched: a deny rule, an allow rule, a preset,
 * an invalid host and mode off never count as unmatched; the decider's own mark is
 * named "decider". */
START_TEST(unmatched)
{
	static const struct {
		int pol;
		const char *host;
		bool unmatched;
	} t[] = {
	    {M, "nobody.example", true},
	    {M, "pastebin.com", false},
	    {M, "ai.acme.example", false},
	    {M, "github.com", false},
	    {M, "a..b", false},
	    {M, "acme.example", true}, /* the apex of *.acme */
	    {M, "198.51.100.11", true},
	    {F, "nobody.example", false},
	    {M, "[2001:db8::bad]", false},
	};
	struct policy_decision d;
	char buf[64];

	for (int i = 0; i < ROWS(t); i++) {
		ck_assert_int_eq(policy_decide(pols[t[i].pol], t[i].host, strlen(t[i].host), &d),
				 0);
		ck_assert_msg(policy_decision_unmatched(&d) == t[i].unmatched, "row %d: %s", i,
			      t[i].host);
	}
	d.rule = POLICY_RULE_DECIDER;
	policy_decision_rule(&d, buf, sizeof(buf));
	ck_assert_str_eq(buf, "decider");
}
END_TEST

/* 127 labels, the most a 253-character name holds: one probe per parent suffix. */
START_TEST(deepest_name)
{
	static char *wild_a[] = {"*.a"}, *deny_deep[] = {"*.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a"};
	struct halo_policy p = {.mode = POLICY_MODE_WORKSPACE_WRITE};
	struct policy_decision d;
	char host[POLICY_HOST_MAX + 1];

	for (int i = 0; i < 126; i++)
		memcpy(host + 2 * i, "a.", 2);
	host[252] = 'a';
	host[253] = 0;
	p.allowed_domains = LIST(wild_a);
	ck_assert_int_eq(policy_index_build(&p), 0);
	ck_assert_int_eq(policy_decide(&p, host, 253, &d), 0);
	ck_assert(d.allow);
	ck_assert_int_eq(d.rule, POLICY_RULE_ALLOWED);
	p.denied_domains = LIST(deny_deep);
	ck_assert_int_eq(policy_index_build(&p), 0); /* rebuilding frees the old index */
	ck_assert_int_eq(policy_decide(&p, host, 253, &d), 0);
	ck_assert(!d.allow);
	ck_assert_int_eq(d.rule, POLICY_RULE_DENIED);
	ck_assert_int_eq(policy_decide(&p, "a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a", 33, &d), 0);
	ck_assert_int_eq(d.rule, POLICY_RULE_ALLOWED); /* the deny wildcard's apex */
	ck_assert_int_eq(policy_decide(&p, host, 254, &d), 0);
	ck_assert_int_eq(d.rule, POLICY_RULE_INVALID_HOST); /* the NUL */
	policy_index_free(p.index);
}
END_TEST

/* An entry the grammar refuses or an unknown preset leaves no index, and Decide then
 * denies everything with an error rather than run with a rule missing. */
START_TEST(build_fails_closed)
{
	static char *bad_deny[] = {"pastebin.com", "Evil.example"}, *ok[] = {"github.com"};
	static char *bad_preset[] = {"vcs", "no-such-preset"};
	struct halo_policy p = {.mode = POLICY_MODE_WORKSPACE_WRITE, .egress_default_allow = true};
	struct policy_decision d;

	p.denied_domains = LIST(bad_deny);
	ck_assert_int_eq(policy_index_build(&p), -EINVAL);
	ck_assert_ptr_null(p.index);
	ck_assert_int_eq(policy_decide(&p, "example.org", 11, &d), -EINVAL);
	ck_assert(!d.allow);
	ck_assert_int_eq(d.rule, POLICY_RULE_DEFAULT);
	ck_assert_str_eq(d.why, "policy index not built");

	p.denied_domains = (struct policy_list){0};
	p.allowed_domains = LIST(ok);
	p.presets = LIST(bad_preset);
	ck_assert_int_eq(policy_index_build(&p), -EINVAL);
	ck_assert_ptr_null(p.index);

	/* an earlier good index is dropped, not left stale */
	p.presets = (struct policy_list){0};
	ck_assert_int_eq(policy_index_build(&p), 0);
	ck_assert_ptr_nonnull(p.index);
	p.presets = LIST(bad_preset);
	ck_assert_int_eq(policy_index_build(&p), -EINVAL);
	ck_assert_ptr_null(p.index);

	/* no rules and no index: the default, nothing to miss */
	p = (struct halo_policy){.egress_default_allow = true};
	ck_assert_int_eq(policy_decide(&p, "example.org", 11, &d), 0);
	ck_assert(d.allow);
	ck_assert_int_eq(policy_decide(NULL, "example.org", 11, &d), -EINVAL);
	ck_assert(!d.allow);
	ck_assert_int_eq(policy_index_build(NULL), -EINVAL);
	policy_index_free(NULL);
}
END_TEST

/* Many generated rules: the tables grow and rehash, lookups stay exact. */
START_TEST(many_rules)
{
	enum { N = 20000 };
	struct halo_policy p = {.mode = POLICY_MODE_WORKSPACE_WRITE};
	struct policy_decision d;
	char **items = calloc(N, sizeof(*items)), host[64];

	for (int i = 0; i < N; i++)
		ck_assert_int_ge(asprintf(&items[i], i % 2 ? "*.w%d.example" : "h%d.example", i),
				 0);
	p.allowed_domains = (struct policy_list){items, N, true};
	ck_assert_int_eq(policy_index_build(&p), 0);
	for (int i = 0; i < N; i++) {
		snprintf(host, sizeof(host), i % 2 ? "x.w%d.example" : "h%d.example", i);
		ck_assert_int_eq(policy_decide(&p, host, strlen(host), &d), 0);
		ck_assert_int_eq(d.rule, POLICY_RULE_ALLOWED);
		ck_assert_uint_eq(d.index, (size_t)i);
		snprintf(host, sizeof(host), i % 2 ? "w%d.example" : "x.h%d.example", i);
		ck_assert_int_eq(policy_decide(&p, host, strlen(host), &d), 0);
		ck_assert_int_eq(d.rule, POLICY_RULE_DEFAULT);
	}
	policy_index_free(p.index);
	for (int i = 0; i < N; i++)
		free(items[i]);
	free(items);
}
END_TEST

START_TEST(hashset_direct)
{
	struct policy_hset h = {0};
	char key[64];

	ck_assert_ptr_null(policy_hset_find(&h, policy_hset_hash("a", 1), "a", 1));
	for (unsigned i = 0; i < 5000; i++) {
		struct policy_hset_slot *s;
		/* every tenth key is too long to sit inline in its slot */
		snprintf(key, sizeof(key), i % 10 ? "k%u" : "a-key-longer-than-the-slot-%u", i);
		s = policy_hset_upsert(&h, policy_hset_hash(key, strlen(key)), key, strlen(key));
		ck_assert_ptr_nonnull(s);
		ck_assert_uint_eq(s->deny.id, POLICY_HSET_NONE);
		ck_assert_uint_eq(s->allow.id, POLICY_HSET_NONE);
		s->allow.id = i;
	}
	ck_assert_uint_eq(h.n, 5000);
	ck_assert_uint_le(h.n * 2, h.mask + 1);
	for (unsigned i = 0; i < 5000; i++) {
		const struct policy_hset_slot *s;
		snprintf(key, sizeof(key), i % 10 ? "k%u" : "a-key-longer-than-the-slot-%u", i);
		s = policy_hset_find(&h, policy_hset_hash(key, strlen(key)), key, strlen(key));
		ck_assert_ptr_nonnull(s);
		ck_assert_uint_eq(s->allow.id, i);
		/* a prefix of a key is a different key */
		ck_assert_ptr_null(policy_hset_find(&h, policy_hset_hash(key, 1), key, 1));
		/* nor is a longer string that starts with it */
		strcat(key, "x");
		ck_assert_ptr_null(
		    policy_hset_find(&h, policy_hset_hash(key, strlen(key)), key, strlen(key)));
	}
	ck_assert_uint_eq(policy_hset_upsert(&h, policy_hset_hash("k7", 2), "k7", 2)->allow.id, 7);
	ck_assert_uint_eq(h.n, 5000);
	/* the filter never hides a key, and a later insert drops it rather than go stale */
	ck_assert_int_eq(policy_hset_seal(&h), 0);
	ck_assert_ptr_nonnull(h.filter);
	for (unsigned i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), i % 10 ? "k%u" : "a-key-longer-than-the-slot-%u", i);
		ck_assert_ptr_nonnull(
		    policy_hset_find(&h, policy_hset_hash(key, strlen(key)), key, strlen(key)));
	}
	{
		/* ... and turns most absent keys away without a slot access (~12% pass) */
		unsigned pass = 0;
		for (unsigned i = 0; i < 5000; i++) {
			snprintf(key, sizeof(key), "absent-%u", i);
			pass += policy_hset_maybe(
			    &h, policy_hset_mix(policy_hset_hash(key, strlen(key))));
		}
		ck_assert_uint_lt(pass, 1000);
	}
	ck_assert_ptr_nonnull(policy_hset_upsert(&h, policy_hset_hash("new", 3), "new", 3));
	ck_assert_ptr_null(h.filter);
	ck_assert_ptr_nonnull(policy_hset_find(&h, policy_hset_hash("new", 3), "new", 3));
	ck_assert_ptr_null(policy_hset_upsert(&h, policy_hset_hash("", 0), "", 0));
	ck_assert_ptr_null(policy_hset_find(&h, policy_hset_hash("", 0), "", 0));
	/* the reverse hash of a suffix is the running hash of a backward pass */
	{
		const char *t = "a.b.example";
		uint64_t run = POLICY_HSET_FNV_BASIS;
		for (size_t i = strlen(t); i-- > 2;)
			run = policy_hset_step(run, (unsigned char)t[i]);
		ck_assert_uint_eq(run, policy_hset_hash("b.example", 9));
	}
	policy_hset_free(&h);
	ck_assert_ptr_null(h.slots);
}
END_TEST

/* `check` on a listed host port: the loopback names with that port, nothing else. */
START_TEST(host_port_index)
{
	static const struct {
		const char *target;
		int want;
	} t[] = {
	    {"localhost:4873", 0},	 {"127.0.0.1:5432", 1},
	    {"[::1]:4873", 0},		 {"LOCALHOST.:5432", 1},
	    {"localhost", -1},		 {"localhost:4874", -1},
	    {"127.0.0.2:4873", -1},	 {"[::ffff:127.0.0.1]:4873", -1},
	    {"localhost.test:4873", -1}, {"example.com:4873", -1},
	};
	struct halo_policy *p = NULL;
	struct policy_diags d = {0};

	ck_assert_int_eq(pt_load("egress: {hostPorts: [4873, 5432]}\n", &p, &d), 0);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct policy_host h;
		unsigned port;
		char why[128];
		ck_assert_int_eq(policy_target_parse(t[i].target, &h, &port, why, sizeof(why)), 0);
		ck_assert_msg(policy_host_port_index(p, &h, port) == t[i].want, "%s", t[i].target);
	}
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

/* One answer for check and the proxy (review 21): policy_decide_target gives a listed
 * loopback port its hostPorts rule, whatever the lists say, and every other target
 * policy_decide_port's answer. */
START_TEST(decide_target)
{
	static const struct {
		const char *host;
		unsigned port;
		bool allow;
		const char *rule;
	} t[] = {
	    {"localhost", 4873, true, "egress.hostPorts[0] 4873"},
	    {"LOCALHOST.", 5432, true, "egress.hostPorts[1] 5432"},
	    {"127.0.0.1", 5432, true, "egress.hostPorts[1] 5432"},
	    {"::1", 4873, true, "egress.hostPorts[0] 4873"},
	    {"[::1]", 4873, true, "egress.hostPorts[0] 4873"},
	    {"a.localhost", 4873, true, "egress.hostPorts[0] 4873"},
	    {"localhost.localdomain", 4873, true, "egress.hostPorts[0] 4873"},
	    {"localhost", 4874, false, "deniedDomains[1] localhost"},
	    {"localhost", 0, false, "deniedDomains[1] localhost"},
	    {"ip6-localhost", 80, false, "default deny"},
	    {"127.0.0.2", 4873, false, "default deny"},
	    {"[::ffff:127.0.0.1]", 4873, false, "default deny"},
	    {"0.0.0.0", 4873, false, "default deny"},
	    {"localhost.test", 4873, false, "default deny"},
	    {"good.test", 4873, true, "allowedDomains[0] good.test"},
	    {"evil.test", 4873, false, "deniedDomains[0] evil.test"},
	    {"a..b", 4873, false, "invalid host"},
	};
	struct halo_policy *p = NULL;
	struct policy_diags d = {0};
	char rule[256];

	ck_assert_int_eq(pt_load("egress: {default: deny, hostPorts: [4873, 5432], allowedDomains: "
				 "[good.test], deniedDomains: [evil.test, localhost]}\n",
				 &p, &d),
			 0);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct policy_decision dd;

		ck_assert_int_eq(
		    policy_decide_target(p, t[i].host, strlen(t[i].host), t[i].port, &dd), 0);
		policy_decision_rule(&dd, rule, sizeof(rule));
		ck_assert_msg(dd.allow == t[i].allow && strstr(rule, t[i].rule) == rule,
			      "%s:%u: allow %d rule '%s'", t[i].host, t[i].port, dd.allow, rule);
	}
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

/* host:port entries: a portless entry matches every port, one with a port only that
 * port; deny still wins; the first rule in list order is the one reported. */
static char *p_denied[] = {"git.acme.example:25", "*.evil.example:443", "[2001:db8::1]:80"};
static char *p_allowed[] = {"git.acme.example:22",   "*.acme.example:443", "registry.example",
			    "registry.example:8443", "1.2.3.4:8080",	   "[2001:db8::1]",
			    "evil.example:443",	     "x.evil.example"};

START_TEST(ports_table)
{
	static const struct {
		const char *host;
		unsigned port;
		bool allow;
		const char *pattern; /* NULL: the default */
	} t[] = {
	    {"git.acme.example", 22, true, "git.acme.example:22"},
	    {"git.acme.example", 443, true, "*.acme.example:443"},
	    {"git.acme.example", 80, false, NULL},
	    {"git.acme.example", 0, false, NULL}, /* no port known: only portless entries */
	    {"git.acme.example", 25, false, "git.acme.example:25"},
	    {"a.b.acme.example", 443, true, "*.acme.example:443"},
	    {"acme.example", 443, false, NULL},			  /* *.x never matches the apex */
	    {"registry.example", 8443, true, "registry.example"}, /* first in list order */
	    {"registry.example", 1, true, "registry.example"},
	    {"registry.example", 0, true, "registry.example"},
	    {"1.2.3.4", 8080, true, "1.2.3.4:8080"},
	    {"1.2.3.4", 80, false, NULL},
	    {"[::ffff:1.2.3.4]", 8080, true, "1.2.3.4:8080"},
	    {"[2001:db8::1]", 80, false, "[2001:db8::1]:80"}, /* deny wins */
	    {"[2001:db8::1]", 81, true, "[2001:db8::1]"},
	    {"x.evil.example", 443, false, "*.evil.example:443"},
	    {"x.evil.example", 80, true, "x.evil.example"},
	    {"evil.example", 443, true, "evil.example:443"},
	    {"git.acme.example.", 22, true, "git.acme.example:22"},
	    {"GIT.acme.example", 22, true, "git.acme.example:22"},
	};
	struct halo_policy *p = mk(POLICY_MODE_WORKSPACE_WRITE, false);

	p->denied_domains = LIST(p_denied);
	p->allowed_domains = LIST(p_allowed);
	ck_assert_int_eq(policy_index_build(p), 0);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct policy_decision d;
		ck_assert_int_eq(policy_decide_port(p, t[i].host, strlen(t[i].host), t[i].port, &d),
				 0);
		ck_assert_msg(d.allow == t[i].allow, "%s:%u: allow %d", t[i].host, t[i].port,
			      d.allow);
		if (t[i].pattern)
			ck_assert_msg(d.pattern && strcmp(d.pattern, t[i].pattern) == 0,
				      "%s:%u: pattern %s, want %s", t[i].host, t[i].port,
				      d.pattern ? d.pattern : "(none)", t[i].pattern);
		else
			ck_assert_msg(d.rule == POLICY_RULE_DEFAULT, "%s:%u: rule %d, want default",
				      t[i].host, t[i].port, (int)d.rule);
	}
	policy_index_free(p->index);
	free(p);
}
END_TEST

static Suite *decide_suite(void)
{
	Suite *s = suite_create("decide");
	TCase *tc = tcase_create("decide");

	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, decide_table, 0, ROWS(rows));
	tcase_add_loop_test(tc, rule_text, 0, ROWS(text_rows));
	tcase_add_test(tc, decided_host);
	tcase_add_test(tc, host_port_index);
	tcase_add_test(tc, decide_target);
	tcase_add_test(tc, deepest_name);
	tcase_add_test(tc, build_fails_closed);
	tcase_add_test(tc, many_rules);
	tcase_add_test(tc, hashset_direct);
	tcase_add_test(tc, ports_table);
	tcase_add_test(tc, unmatched);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(decide_suite)
