/* libFuzzer target for requests inside a terminated tunnel: the origin-form parser,
 * the head the origin gets, and the request decision on its path. Invariants: an
 * accepted head names the tunnel's host, is re-accepted at head_len and waits for more
 * one byte earlier; the origin's head has only CRLF line ends, starts with the method
 * and the path, holds exactly one credential field (ours, last) and no hop-by-hop
 * field but our Connection: close after a body, and Transfer-Encoding only as
 * "chunked"; no Host field ending in a dot is accepted; the request decision always
 * answers, with a bounded rule, and an allowed path holds no escape of a byte >= 0x80. */
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "policy/policy.h"
#include "proxy/proxy_parse.h"
#include "tests/fuzz/fuzz_check.h"

static struct proxy_http_req req, again;
static char out[PROXY_HTTP_MAX_HEAD + 4096];
static struct halo_policy *pol;

static const char yaml[] = "egress:\n  allowedDomains: [api.example]\n"
			   "  requestRules: [{host: api.example, methods: [GET, POST], paths: "
			   "[\"/repos/acme/*\", \"/a/*/b\"]}]\n";

static void load_policy(void)
{
	struct policy_ctx ctx = {"/home/f", "/home/f", "/home/f/ws", NULL, NULL};
	struct policy_diags d = {0};

	if (pol)
		return;
	CHECK(policy_parse_buffer("f.yaml", yaml, strlen(yaml), 'y', &pol, &d) == 0);
	CHECK(policy_finalize(pol, &ctx, &d) == 0);
	policy_diags_free(&d);
}

static void check_head(const char *buf)
{
	int n =
	    proxy_http_origin_head(buf, &req, "Authorization", "Bearer T0KEN", out, sizeof(out));
	const char *cred, *line;

	if (n < 0)
		return; /* -ENOSPC: refused with 431 */
	CHECK((size_t)n == strlen(out));
	for (int i = 0; i < n; i++) {
		if (out[i] == '\r')
			CHECK(i + 1 < n && out[i + 1] == '\n');
		if (out[i] == '\n')
			CHECK(i > 0 && out[i - 1] == '\r');
	}
	CHECK(strncmp(out, req.method, strlen(req.method)) == 0);
	CHECK(strncmp(out + strlen(req.method) + 1, req.path, strlen(req.path)) == 0);
	cred = strcasestr(out, "\r\nAuthorization:");
	CHECK(cred && strcmp(cred, "\r\nAuthorization: Bearer T0KEN\r\n\r\n") == 0);
	/* one Accept-Encoding, ours: a credential's host answers in identity */
	line = strcasestr(out, "\r\naccept-encoding:");
	CHECK(line && strncmp(line, "\r\nAccept-Encoding: identity\r\n", 29) == 0);
	CHECK(!strcasestr(line + 2, "\r\naccept-encoding:"));
	for (line = strstr(out, "\r\n"); line && line[2]; line = strstr(line + 2, "\r\n")) {
		static const char *const hop[] = {
		    "connection:", "keep-alive:",	   "upgrade:",	       "te:",
		    "trailer:",	   "proxy-authorization:", "proxy-connection:"};
		bool body = req.chunked || req.content_length;

		/* the one Connection field is ours, for a request with a body (its last) */
		if (body && strncmp(line + 2, "Connection: close\r\n", 19) == 0)
			continue;
		for (size_t k = 0; k < sizeof(hop) / sizeof(hop[0]); k++)
			CHECK(strncasecmp(line + 2, hop[k], strlen(hop[k])) != 0);
		/* the coding as the proxy read it */
		if (strncasecmp(line + 2, "transfer-encoding:", 18) == 0)
			CHECK(req.chunked &&
			      strncmp(line + 2, "Transfer-Encoding: chunked\r\n", 28) == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct policy_request_decision d;

	load_policy();
	enum proxy_http_result r = proxy_http_parse_origin(buf, size, "api.example", 443, &req);

	if (r == PROXY_HTTP_ERROR)
		CHECK(req.status >= 400 && req.status < 600 && req.why[0]);
	if (r != PROXY_HTTP_OK)
		return 0;
	CHECK(req.kind == PROXY_HTTP_ORIGIN && strcmp(req.host, "api.example") == 0);
	CHECK(req.head_len <= size && req.path[0] == '/');
	for (size_t i = 0; i < req.n_fields; i++) /* no Host ending in a dot reaches the origin */
		if (req.fields[i].name_len == 4 &&
		    strncasecmp(req.fields[i].name, "host", 4) == 0) {
			const char *v = req.fields[i].value;
			size_t n = req.fields[i].value_len, e = n;

			while (e > 0 && v[e - 1] >= '0' && v[e - 1] <= '9')
				e--;
			if (e > 0 && e < n && v[e - 1] == ':')
				e--; /* before the port */
			CHECK(e == 0 || v[e - 1] != '.');
		}
	CHECK(proxy_http_parse_origin(buf, req.head_len - 1, "api.example", 443, &again) ==
	      PROXY_HTTP_NEED_MORE);
	check_head(buf);
	CHECK(policy_decide_request(pol, "api.example", req.method, req.path, &d) == 0);
	CHECK(d.applies && strnlen(d.rule, sizeof(d.rule)) < sizeof(d.rule));
	if (d.allow) { /* the path part, before any query */
		req.path[strcspn(req.path, "?")] = '\0';
		CHECK(!strstr(req.path, "/../") && !strcasestr(req.path, "%2e"));
		CHECK(!strchr(req.path, ';') && !strcasestr(req.path, "%3b") &&
		      !strcasestr(req.path, "%252e") && !strcasestr(req.path, "%252f"));
		for (const char *e = strchr(req.path, '%'); e; e = strchr(e + 1, '%'))
			CHECK(!strchr("89abcdefABCDEF", e[1]) || !e[1]); /* no escape >= %80 */
	}
	if (proxy_http_body_refused(&req))
		CHECK(req.chunked || req.content_length > 0);
	if (proxy_http_upgrade_refused(&req)) {
		bool named = false;

		for (size_t i = 0; i < req.n_fields; i++)
			named |= req.fields[i].name_len == 7 &&
				 strncasecmp(req.fields[i].name, "upgrade", 7) == 0;
		CHECK(named);
	}
	return 0;
}
