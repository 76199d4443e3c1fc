/* Domain-list entries: "host", "*.suffix", with an optional ":PORT" ("[v6]:PORT"),
 * checked by the host grammar (host.c) so that Decide() only ever stores canonical
 * text. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "policy/host_int.h"

/* ---------------------------------------------------------------- patterns */

int policy_pattern_split(const char *p, size_t *host_len, unsigned *port, char *why, size_t whylen)
{
	size_t len = strlen(p), colons = 0;
	const char *colon;

	*host_len = len;
	*port = 0;
	if (p[0] == '[' || (p[0] == '*' && p[1] == '.' && p[2] == '[')) {
		const char *close = strchr(p, ']');
		if (!close || close[1] == '\0')
			return 0; /* the host grammar says what is wrong, if anything */
		if (close[1] != ':')
			return policy_host_fail(why, whylen,
						"text after ']': only ':PORT' may follow [v6]");
		*host_len = (size_t)(close + 1 - p);
		return policy_host_parse_port(close + 2, len - *host_len - 1, port, why, whylen);
	}
	for (size_t i = 0; i < len; i++)
		colons += p[i] == ':';
	if (colons != 1)
		return 0; /* none, or a bare IPv6 literal (a port needs brackets) */
	colon = strchr(p, ':');
	*host_len = (size_t)(colon - p);
	if (*host_len == 0)
		return policy_host_fail(why, whylen, "a port with no host before it");
	return policy_host_parse_port(colon + 1, len - *host_len - 1, port, why, whylen);
}

static int check_wildcard(const char *p, size_t len, char *why, size_t whylen)
{
	struct policy_host h;
	int rc;

	if (strchr(p + 2, '*'))
		return policy_host_fail(
		    why, whylen, "'*' is only allowed as the whole first label ('*.example.com')");
	if (len == 2)
		return policy_host_fail(why, whylen, "nothing after '*.'");
	rc = policy_host_parse(p + 2, len - 2, false, &h, why, whylen);
	if (rc)
		return rc;
	if (h.kind != POLICY_HOST_NAME)
		return policy_host_fail(
		    why, whylen, "a wildcard suffix must be a domain name, not an IP address");
	return 0;
}

int policy_pattern_check(const char *pattern, char *why, size_t whylen)
{
	struct policy_host h;
	size_t len;
	unsigned port;
	int rc;

	if (!pattern || !*pattern)
		return policy_host_fail(why, whylen, "empty entry");
	len = strlen(pattern);
	if (strcmp(pattern, "*") == 0)
		return policy_host_fail(why, whylen,
					"a bare '*' would match every host; list the domains");
	if (strstr(pattern, "://"))
		return policy_host_fail(why, whylen,
					"a URL, not a domain: write only the host name");
	if (strchr(pattern, '/'))
		return policy_host_fail(why, whylen, "'/' found: a URL or path, not a domain");
	for (size_t i = 0; i < len; i++)
		if (pattern[i] >= 'A' && pattern[i] <= 'Z')
			return policy_host_fail(why, whylen,
						"upper case: write domain entries in lower case");
	rc = policy_host_scan_bytes((const unsigned char *)pattern, len, why, whylen);
	if (!rc)
		rc = policy_pattern_split(pattern, &len, &port, why, whylen);
	if (rc)
		return rc;
	if (pattern[len - 1] == '.')
		return policy_host_fail(why, whylen, "trailing dot: write the name without it");
	if (strncmp(pattern, "*.", 2) == 0)
		return check_wildcard(pattern, len, why, whylen);
	if (strchr(pattern, '*'))
		return policy_host_fail(
		    why, whylen, "'*' is only allowed as the whole first label ('*.example.com')");
	return policy_host_parse(pattern, len, true, &h, why, whylen);
}

/* ------------------------------------------------------------ the "*.x" rule */

const char *policy_pattern_wild(const char *pattern)
{
	return pattern && strncmp(pattern, "*.", 2) == 0 ? pattern + 2 : NULL;
}

bool policy_name_under(const char *host, size_t hl, const char *name, size_t nl)
{
	return hl > nl + 1 && host[hl - nl - 1] == '.' && memcmp(host + hl - nl, name, nl) == 0;
}

bool policy_host_match(const char *pattern, const char *host)
{
	const char *wild = policy_pattern_wild(pattern);

	if (!pattern || !host)
		return false;
	if (!wild)
		return strcmp(pattern, host) == 0;
	return policy_name_under(host, strlen(host), wild, strlen(wild));
}
