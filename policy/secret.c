/* What a secret value looks like: the one table of token shapes that the command's
 * environment (env/env.c) and the sanitized settings files (sanitize.c) share.
 *
 * A value is secret-like when it holds, at a token boundary (the value's start or
 * after a character that is not a letter or a digit):
 * - a known provider prefix followed by enough token characters (the table below);
 * - a JWT: "eyJ" base64url "." base64url "." (the header and payload of any JWT are
 *   base64 of '{"', hence "eyJ");
 * - a PEM private key header;
 * - a high-entropy run: 32 or more characters of [A-Za-z0-9+=_-] holding an upper-case
 *   letter, a lower-case letter and a digit, with at least 4.3 bits of Shannon entropy
 *   per character, that changes character class (upper, lower, digit, other) at 45 or
 *   more of every 100 positions, as random text does and names made of words do not. '/', '.', ':'
 * and blanks end a run, so PATH-like values (short path components) never qualify, and neither do
 * hex digests, UUIDs and Nix store hashes (no upper case) nor English words and camelCase names
 * (below the entropy bar). The price: a base64 secret holding '/' is only caught when a piece
 * between its slashes is itself 32 characters or more. */
#include <stdbool.h>
#include <string.h>

#include "policy/policy.h"

struct token_shape {
	const char *prefix;
	size_t min_rest; /* token characters required after the prefix */
	const char *what;
};

/* Prefixes are case-sensitive, as the providers issue them. */
static const struct token_shape shapes[] = {
    {"ghp_", 20, "a GitHub token"},	   /* personal access token (classic) */
    {"gho_", 20, "a GitHub token"},	   /* OAuth */
    {"ghu_", 20, "a GitHub token"},	   /* user-to-server */
    {"ghs_", 20, "a GitHub token"},	   /* server-to-server (Actions' GITHUB_TOKEN) */
    {"ghr_", 20, "a GitHub token"},	   /* refresh */
    {"github_pat_", 20, "a GitHub token"}, /* fine-grained */
    {"glpat-", 16, "a GitLab token"},
    {"glcbt-", 16, "a GitLab token"}, /* CI job token */
    {"xoxb-", 10, "a Slack token"},
    {"xoxp-", 10, "a Slack token"},
    {"xoxa-", 10, "a Slack token"},
    {"xoxr-", 10, "a Slack token"},
    {"xoxs-", 10, "a Slack token"},
    {"xoxe-", 10, "a Slack token"},
    {"xapp-", 10, "a Slack token"},
    {"AKIA", 16, "an AWS access key id"},
    {"ASIA", 16, "an AWS access key id"},
    {"sk-", 20, "an API key (sk-)"}, /* OpenAI, Anthropic (sk-ant-) */
    {"sk_live_", 16, "a Stripe key"},
    {"rk_live_", 16, "a Stripe key"},
    {"npm_", 30, "an npm token"},
    {"pypi-", 40, "a PyPI token"},
    {"AIza", 30, "a Google API key"},
    {"hf_", 30, "a Hugging Face token"},
};

#define ENTROPY_MIN_LEN	 32
#define ENTROPY_MIN_BITS 4.3

static bool is_alnum(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool is_tok(unsigned char c)
{
	return is_alnum(c) || c == '_' || c == '-';
}

static bool is_b64(unsigned char c)
{
	return is_tok(c) || c == '+' || c == '=';
}

static size_t tok_run(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && is_tok((unsigned char)s[i]))
		i++;
	return i;
}

static bool prefix_at(const char *s, size_t n, const struct token_shape *t)
{
	size_t pl = strlen(t->prefix);

	return n >= pl && memcmp(s, t->prefix, pl) == 0 && tok_run(s + pl, n - pl) >= t->min_rest;
}

static bool jwt_at(const char *s, size_t n)
{
	size_t a, b;

	if (n < 3 || memcmp(s, "eyJ", 3) != 0)
		return false;
	a = tok_run(s, n);
	if (a < 10 || a >= n || s[a] != '.')
		return false;
	b = tok_run(s + a + 1, n - a - 1);
	return b >= 8 && a + 1 + b < n && s[a + 1 + b] == '.';
}

/* log2 of x >= 1, to ~1e-6: no libm in the static-feeling binary for one function. */
static double log2_ge1(double x)
{
	double r = 0, bit = 1;

	while (x >= 2) {
		x /= 2;
		r += 1;
	}
	for (int i = 0; i < 24; i++) {
		x *= x;
		bit /= 2;
		if (x >= 2) {
			x /= 2;
			r += bit;
		}
	}
	return r;
}

/* "-----BEGIN [RSA |EC |OPENSSH |ENCRYPTED ]PRIVATE KEY": certificates pass. */
static bool pem_key_at(const char *s, size_t n)
{
	static const char begin[] = "-----BEGIN ", key[] = "PRIVATE KEY-----";
	size_t bl = sizeof(begin) - 1, kl = sizeof(key) - 1;

	if (n < bl + kl || memcmp(s, begin, bl) != 0)
		return false;
	for (size_t i = bl; i + kl <= n && i <= bl + 16; i++)
		if (memcmp(s + i, key, kl) == 0)
			return true;
	return false;
}

static int char_class(unsigned char c)
{
	return (c >= 'A' && c <= 'Z')	? 0
	       : (c >= 'a' && c <= 'z') ? 1
	       : (c >= '0' && c <= '9') ? 2
					: 3;
}

/* Random text changes character class (upper, lower, digit, other) at about 6 of 10
 * positions; names made of words ("Hellenic_Academic_and_Research_Institutions",
 * "ThisIsALongCamelCaseName2") at about 3 in 10, in their runs of lower case. */
static bool mixed(const char *s, size_t n)
{
	size_t changes = 0;

	for (size_t i = 1; i < n; i++)
		changes += char_class((unsigned char)s[i]) != char_class((unsigned char)s[i - 1]);
	return changes * 100 >= (n - 1) * 45;
}

static bool high_entropy(const char *s, size_t n)
{
	unsigned counts[256] = {0};
	bool up = false, lo = false, dig = false;
	double bits = 0;

	if (n < ENTROPY_MIN_LEN)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		counts[c]++;
		up |= c >= 'A' && c <= 'Z';
		lo |= c >= 'a' && c <= 'z';
		dig |= c >= '0' && c <= '9';
	}
	if (!(up && lo && dig) || !mixed(s, n))
		return false;
	/* H = log2(n) - (1/n) * sum(c * log2(c)) */
	for (size_t c = 0; c < 256; c++)
		if (counts[c])
			bits += (double)counts[c] * log2_ge1((double)counts[c]);
	return log2_ge1((double)n) - bits / (double)n >= ENTROPY_MIN_BITS;
}

/* The high-entropy check over the base64 runs of v ('/' ends a run). */
static bool entropy_runs(const char *v, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j < n && is_b64((unsigned char)v[j]))
			j++;
		if (j > i && high_entropy(v + i, j - i))
			return true;
		i = j > i ? j : i + 1;
	}
	return false;
}

bool policy_secret_like(const char *v, size_t n, const char **what)
{
	const char *dummy;

	if (!what)
		what = &dummy;
	for (size_t i = 0; v && i < n; i++) {
		if (i > 0 && is_alnum((unsigned char)v[i - 1]))
			continue;
		for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++)
			if (prefix_at(v + i, n - i, &shapes[k])) {
				*what = shapes[k].what;
				return true;
			}
		if (jwt_at(v + i, n - i)) {
			*what = "a JWT";
			return true;
		}
		if (pem_key_at(v + i, n - i)) {
			*what = "a PEM private key";
			return true;
		}
	}
	if (v && entropy_runs(v, n)) {
		*what = "a high-entropy string";
		return true;
	}
	return false;
}
