/* Host grammar: the one strict parser every host name, IP literal, check target and
 * domain-list entry goes through.  Anything two programs could read differently (octal
 * or short IPv4 forms, percent-escapes, userinfo, zone ids, trailing-dot games) is
 * refused here, so Decide() only ever compares canonical text. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "policy/host_int.h"

#define LABEL_MAX 63

int policy_host_fail(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool is_alpha(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static unsigned char lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

/* Bytes no host may carry, whatever its form. */
int policy_host_scan_bytes(const unsigned char *s, size_t len, char *why, size_t whylen)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == 0)
			return policy_host_fail(why, whylen, "NUL byte at offset %zu", i);
		if (s[i] >= 0x80)
			return policy_host_fail(
			    why, whylen,
			    "non-ASCII byte 0x%02x at offset %zu (write internationalised "
			    "names in their xn-- form)",
			    s[i], i);
		if (is_space(s[i]))
			return policy_host_fail(why, whylen,
						"whitespace (byte 0x%02x) at offset %zu", s[i], i);
		if (s[i] < 0x20 || s[i] == 0x7f)
			return policy_host_fail(why, whylen, "control byte 0x%02x at offset %zu",
						s[i], i);
	}
	return 0;
}

/* Characters that signal a URL or an escape rather than a host: refused with a reason
 * that names the trick, before any other interpretation is attempted. */
static int scan_url_chars(const char *s, size_t len, char *why, size_t whylen)
{
	bool v6ish = s[0] == '[' || memchr(s, ':', len) != NULL;

	if (memchr(s, '@', len))
		return policy_host_fail(why, whylen, "userinfo ('@') is not part of a host");
	if (memchr(s, '/', len))
		return policy_host_fail(why, whylen, "'/' found: a URL or path, not a host");
	if (memchr(s, '\\', len))
		return policy_host_fail(why, whylen, "backslash is not valid in a host");
	if (memchr(s, '%', len))
		return policy_host_fail(why, whylen,
					v6ish ? "IPv6 zone id ('%%') is not allowed"
					      : "percent-escape ('%%') is not allowed in a host");
	return 0;
}

static int set_v6(const char *lit, struct policy_host *out, char *why, size_t whylen)
{
	struct in6_addr a;

	if (inet_pton(AF_INET6, lit, &a) != 1)
		return policy_host_fail(why, whylen, "invalid IPv6 address '%s'", lit);
	out->kind = POLICY_HOST_IPV6;
	memcpy(out->addr, &a, 16);
	if (!inet_ntop(AF_INET6, &a, out->text, sizeof(out->text)))
		return policy_host_fail(why, whylen, "cannot format IPv6 address");
	return 0;
}

static int parse_bracketed(const char *s, size_t len, struct policy_host *out, char *why,
			   size_t whylen)
{
	char lit[INET6_ADDRSTRLEN];
	const char *close = memchr(s, ']', len);

	if (!close)
		return policy_host_fail(why, whylen, "unterminated '[' (no closing ']')");
	if ((size_t)(close - s) != len - 1)
		return policy_host_fail(why, whylen,
					close[1] == ':' ? "port not allowed in a host ('[v6]:port')"
							: "characters after ']'");
	if (len == 2)
		return policy_host_fail(why, whylen, "empty brackets");
	if (memchr(s + 1, '[', len - 2))
		return policy_host_fail(why, whylen, "nested '['");
	if (!memchr(s + 1, ':', len - 2))
		return policy_host_fail(why, whylen, "brackets are only for IPv6 literals");
	if (len - 2 >= sizeof(lit))
		return policy_host_fail(why, whylen, "too long for an IPv6 address");
	memcpy(lit, s + 1, len - 2);
	lit[len - 2] = 0;
	return set_v6(lit, out, why, whylen);
}

static int parse_colon(const char *s, size_t len, bool allow_bare_v6, struct policy_host *out,
		       char *why, size_t whylen)
{
	char lit[INET6_ADDRSTRLEN];
	struct in6_addr a;
	size_t colons = 0;
	bool is_v6;

	for (size_t i = 0; i < len; i++)
		colons += s[i] == ':';
	if (memchr(s, '[', len) || memchr(s, ']', len))
		return policy_host_fail(why, whylen, "misplaced '[' or ']'");
	if (colons == 1)
		return policy_host_fail(why, whylen, "port not allowed in a host ('host:port')");
	if (len >= sizeof(lit))
		return policy_host_fail(why, whylen, "':' is not valid in a host name");
	memcpy(lit, s, len);
	lit[len] = 0;
	is_v6 = inet_pton(AF_INET6, lit, &a) == 1;
	if (!is_v6)
		return policy_host_fail(why, whylen,
					allow_bare_v6 ? "invalid IPv6 address '%s'"
						      : "':' is not valid in a host name ('%s')",
					lit);
	if (!allow_bare_v6)
		return policy_host_fail(why, whylen, "an IPv6 address must be in brackets ([%s])",
					lit);
	return set_v6(lit, out, why, whylen);
}

/* WHATWG URL hosts whose last label is a number (decimal or 0x-hex) are IPv4 to a
 * browser, whatever comes before: treat them the same way so nobody reads them as a name. */
static bool label_is_number(const char *l, size_t n)
{
	size_t i = 0;

	if (n >= 2 && l[0] == '0' && (l[1] == 'x' || l[1] == 'X')) {
		for (i = 2; i < n; i++)
			if (!is_hex((unsigned char)l[i]))
				return false;
		return true;
	}
	for (; i < n; i++)
		if (!is_digit((unsigned char)l[i]))
			return false;
	return n > 0;
}

static int check_v4_part(const char *p, size_t n, char *why, size_t whylen)
{
	if (n >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		return policy_host_fail(why, whylen, "non-canonical IPv4 address: hex part '%.*s'",
					(int)n, p);
	for (size_t i = 0; i < n; i++)
		if (!is_digit((unsigned char)p[i]))
			return policy_host_fail(
			    why, whylen, "name ends in a number but '%.*s' is not an IPv4 part",
			    (int)n, p);
	if (n > 1 && p[0] == '0')
		return policy_host_fail(
		    why, whylen, "non-canonical IPv4 address: leading zero in '%.*s' (octal?)",
		    (int)n, p);
	return 0;
}

/* Only a.b.c.d with four decimal parts 0-255 and no leading zeros: the one spelling
 * every resolver, libc and proxy agrees on. */
static int parse_v4(const char *s, size_t n, struct policy_host *out, char *why, size_t whylen)
{
	size_t parts = 0, start = 0;
	unsigned vals[4] = {0};
	int rc;

	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '.')
			continue;
		rc = check_v4_part(s + start, i - start, why, whylen);
		if (rc)
			return rc;
		if (parts < 4) {
			unsigned v = 0;
			for (size_t k = start; k < i && v <= 255; k++)
				v = v * 10 + (unsigned)(s[k] - '0');
			vals[parts] = v;
		}
		parts++;
		start = i + 1;
	}
	if (parts == 1)
		return policy_host_fail(why, whylen, "non-canonical IPv4 address: a single number");
	if (parts < 4)
		return policy_host_fail(
		    why, whylen, "non-canonical IPv4 address: short form with %zu parts", parts);
	if (parts > 4)
		return policy_host_fail(why, whylen, "not an IPv4 address: %zu numeric parts",
					parts);
	for (size_t i = 0; i < 4; i++) {
		if (vals[i] > 255)
			return policy_host_fail(why, whylen,
						"IPv4 part %zu out of range (over 255)", i + 1);
		out->addr[i] = (uint8_t)vals[i];
	}
	out->kind = POLICY_HOST_IPV4;
	snprintf(out->text, sizeof(out->text), "%u.%u.%u.%u", vals[0], vals[1], vals[2], vals[3]);
	return 0;
}

static int check_name_chars(const char *s, size_t len, char *why, size_t whylen)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (is_alpha(c) || is_digit(c) || c == '-' || c == '.')
			continue;
		if (c == '_')
			return policy_host_fail(
			    why, whylen, "underscore ('_') is not a valid host name character");
		if (c == '*')
			return policy_host_fail(why, whylen, "'*' is a pattern, not a host");
		if (c == '[' || c == ']')
			return policy_host_fail(why, whylen, "misplaced '[' or ']'");
		return policy_host_fail(why, whylen, "invalid character '%c' in a host name", c);
	}
	return 0;
}

static int check_labels(const char *s, size_t n, char *why, size_t whylen)
{
	size_t start = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '.')
			continue;
		if (i == start)
			return policy_host_fail(why, whylen, "empty label at offset %zu", start);
		if (i - start > LABEL_MAX)
			return policy_host_fail(why, whylen,
						"label longer than %d characters (%zu)", LABEL_MAX,
						i - start);
		if (s[start] == '-' || s[i - 1] == '-')
			return policy_host_fail(why, whylen, "label '%.*s' starts or ends with '-'",
						(int)(i - start), s + start);
		start = i + 1;
	}
	return 0;
}

/* Called once every byte is known to be a letter, digit, '-' or '.'. */
static int parse_name(const char *s, size_t len, struct policy_host *out, char *why, size_t whylen)
{
	size_t n = len, last;
	int rc;

	if (s[n - 1] == '.') {
		n--;
		if (n == 0)
			return policy_host_fail(why, whylen, "empty host ('.')");
		if (s[n - 1] == '.')
			return policy_host_fail(why, whylen, "more than one trailing dot");
	}
	if (n > POLICY_HOST_MAX)
		return policy_host_fail(why, whylen, "name longer than %d characters (%zu)",
					POLICY_HOST_MAX, n);
	rc = check_labels(s, n, why, whylen);
	if (rc)
		return rc;
	for (last = n; last > 0 && s[last - 1] != '.'; last--)
		;
	if (label_is_number(s + last, n - last))
		return parse_v4(s, n, out, why, whylen);
	out->kind = POLICY_HOST_NAME;
	for (size_t i = 0; i < n; i++)
		out->text[i] = (char)lower((unsigned char)s[i]);
	out->text[n] = 0;
	return 0;
}

/* Letters, digits, '-' and '.': a host made only of these skips the hostile-byte scans. */
static const bool name_byte[256] = {
    ['a' ... 'z'] = true, ['A' ... 'Z'] = true, ['0' ... '9'] = true, ['-'] = true, ['.'] = true,
};

/* The common case in one pass: a well-formed name, lower-cased straight into out.
 * Returns false for anything else (errors, IPv4, IPv6), which the full parser then
 * handles, so every refusal keeps its one precise message. */
static bool fast_name(const unsigned char *u, size_t len, struct policy_host *out)
{
	size_t n = len, start = 0;
	bool digits = true;

	if (n > 0 && u[n - 1] == '.')
		n--;
	if (n == 0 || n > POLICY_HOST_MAX)
		return false;
	for (size_t i = 0; i <= n; i++) {
		unsigned char c = i < n ? u[i] : '.';
		if (c == '.') {
			if (i == start || i - start > LABEL_MAX || u[start] == '-' ||
			    u[i - 1] == '-')
				return false;
			if (i < n) {
				out->text[i] = '.';
				start = i + 1;
				digits = true;
			}
			continue;
		}
		if (!name_byte[c])
			return false;
		digits = digits && is_digit(c);
		out->text[i] = (char)lower(c);
	}
	/* a numeric (or 0x) last label makes it an IPv4 literal: the full parser decides */
	if (digits || (n - start >= 2 && u[start] == '0' && (u[start + 1] | 0x20) == 'x'))
		return false;
	out->text[n] = 0;
	out->kind = POLICY_HOST_NAME;
	return true;
}

/* Everything else: refuse with the most telling reason first (bytes no host carries, then
 * URL tricks), and only then try the bracketed and bare IPv6 forms. */
static int parse_other(const char *in, size_t len, bool allow_bare_v6, struct policy_host *out,
		       char *why, size_t whylen)
{
	int rc = policy_host_scan_bytes((const unsigned char *)in, len, why, whylen);

	if (!rc)
		rc = scan_url_chars(in, len, why, whylen);
	if (rc)
		return rc;
	if (in[0] == '[')
		return parse_bracketed(in, len, out, why, whylen);
	if (memchr(in, ':', len))
		return parse_colon(in, len, allow_bare_v6, out, why, whylen);
	rc = check_name_chars(in, len, why, whylen);
	return rc ? rc : parse_name(in, len, out, why, whylen);
}

int policy_host_parse(const char *in, size_t len, bool allow_bare_v6, struct policy_host *out,
		      char *why, size_t whylen)
{
	const unsigned char *u = (const unsigned char *)in;
	size_t i = 0;
	int rc;

	/* Decide() runs this on every connection: clear only what a result leaves unset. */
	out->kind = POLICY_HOST_NAME;
	out->text[0] = 0;
	memset(out->addr, 0, sizeof(out->addr));
	if (!in || len == 0)
		return policy_host_fail(why, whylen, "empty host");
	if (fast_name(u, len, out))
		return 0;
	while (i < len && name_byte[u[i]])
		i++;
	if (i == len)
		rc = parse_name(in, len, out, why, whylen);
	else
		rc = parse_other(in, len, allow_bare_v6, out, why, whylen);
	if (rc)
		memset(out, 0, sizeof(*out));
	return rc;
}

/* ---------------------------------------------------------------- targets */

int policy_host_parse_port(const char *p, size_t n, unsigned *port, char *why, size_t whylen)
{
	unsigned v = 0;

	if (n == 0)
		return policy_host_fail(why, whylen, "empty port");
	for (size_t i = 0; i < n; i++)
		if (!is_digit((unsigned char)p[i]))
			return policy_host_fail(why, whylen, "port '%.*s' is not a decimal number",
						(int)n, p);
	if (n > 1 && p[0] == '0')
		return policy_host_fail(why, whylen, "port '%.*s' has a leading zero", (int)n, p);
	if (n > 5)
		return policy_host_fail(why, whylen, "port '%.*s' out of range (1-65535)", (int)n,
					p);
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (unsigned)(p[i] - '0');
	if (v == 0 || v > 65535)
		return policy_host_fail(why, whylen, "port %u out of range (1-65535)", v);
	*port = v;
	return 0;
}

/* host, host:port, [v6], [v6]:port; and, outside URLs, a bare IPv6 literal with no
 * port: "::1:80" is an address, not ::1 port 80, so a port always needs brackets. */
static int parse_hostport(const char *s, size_t len, bool in_url, struct policy_host *host,
			  unsigned *port, char *why, size_t whylen)
{
	const char *colon;
	size_t hlen = len;
	int rc;

	if (len == 0)
		return policy_host_fail(why, whylen, "empty host");
	if (s[0] == '[') {
		const char *close = memchr(s, ']', len);
		if (close && (size_t)(close - s) + 1 < len) {
			if (close[1] != ':')
				return policy_host_fail(why, whylen, "characters after ']'");
			hlen = (size_t)(close - s) + 1;
			rc = policy_host_parse_port(close + 2, len - hlen - 1, port, why, whylen);
			if (rc)
				return rc;
		}
		return policy_host_parse(s, hlen, false, host, why, whylen);
	}
	colon = memchr(s, ':', len);
	if (colon && memchr(colon + 1, ':', len - (size_t)(colon - s) - 1)) {
		if (in_url)
			return policy_host_fail(why, whylen,
						"an IPv6 address in a URL must be in brackets");
		char inner[128];
		rc = policy_host_parse(s, len, true, host, inner, sizeof(inner));
		if (rc && strncmp(inner, "invalid IPv6", 12) == 0)
			return policy_host_fail(
			    why, whylen,
			    "neither host:port nor an IPv6 address (an IPv6 address with "
			    "a port is written [v6]:port)");
		if (rc)
			return policy_host_fail(why, whylen, "%s", inner);
		return 0;
	}
	if (colon) {
		hlen = (size_t)(colon - s);
		rc = policy_host_parse_port(colon + 1, len - hlen - 1, port, why, whylen);
		if (rc)
			return rc;
		if (hlen == 0)
			return policy_host_fail(why, whylen, "empty host before ':'");
	}
	return policy_host_parse(s, hlen, false, host, why, whylen);
}

static int check_scheme(const char *s, size_t n, char *why, size_t whylen)
{
	if (n == 0 || !is_alpha((unsigned char)s[0]))
		return policy_host_fail(why, whylen, "invalid URL scheme '%.*s'", (int)n, s);
	for (size_t i = 1; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!is_alpha(c) && !is_digit(c) && c != '+' && c != '-' && c != '.')
			return policy_host_fail(why, whylen, "invalid URL scheme '%.*s'", (int)n,
						s);
	}
	return 0;
}

static int parse_url(const char *t, const char *sep, struct policy_host *host, unsigned *port,
		     char *why, size_t whylen)
{
	const char *auth = sep + 3, *end, *start;
	size_t alen;
	int rc = check_scheme(t, (size_t)(sep - t), why, whylen);

	if (rc)
		return rc;
	alen = strcspn(auth, "/?#");
	end = auth + alen;
	if (memchr(auth, '\\', alen))
		return policy_host_fail(why, whylen, "backslash in a URL authority");
	/* Userinfo ends at the LAST '@': everything before it is credentials, which is
	 * how curl and browsers pick the host out of https://a.com@b.com/. */
	for (start = end; start > auth && start[-1] != '@'; start--)
		;
	if (start == end)
		return policy_host_fail(why, whylen, "URL without a host");
	return parse_hostport(start, (size_t)(end - start), true, host, port, why, whylen);
}

int policy_target_parse(const char *target, struct policy_host *host, unsigned *port, char *why,
			size_t whylen)
{
	const unsigned char *u = (const unsigned char *)target;
	const char *sep;
	size_t len;

	memset(host, 0, sizeof(*host));
	*port = 0;
	if (!target || !*target)
		return policy_host_fail(why, whylen, "empty target");
	len = strlen(target);
	for (size_t i = 0; i < len; i++) {
		if (is_space(u[i]))
			return policy_host_fail(why, whylen, "whitespace (byte 0x%02x) in target",
						u[i]);
		if (u[i] < 0x20 || u[i] == 0x7f)
			return policy_host_fail(why, whylen, "control byte 0x%02x in target", u[i]);
	}
	sep = strstr(target, "://");
	if (sep)
		return parse_url(target, sep, host, port, why, whylen);
	if (strchr(target, '/'))
		return policy_host_fail(why, whylen,
					"'/' without a scheme: give a host or a full URL");
	return parse_hostport(target, len, false, host, port, why, whylen);
}
