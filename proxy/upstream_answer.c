/* The upstream proxy's side of the CONNECT (egress.upstreamProxy): the request we
 * send and the judgment of the answer head it sends back, which is outside input
 * (a hostile or broken upstream). Pure, apart from the rest of upstream.c, so that the
 * unit tests and the fuzzer (fuzz_upstream_answer) run these very functions. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "proxy/proxy_int.h"

int upstream_request(const char *host, bool v6, unsigned port, const char *auth_line, char *out,
		     size_t cap)
{
	const char *lb = v6 ? "[" : "", *rb = v6 ? "]" : "";
	int n = snprintf(out, cap, "CONNECT %s%s%s:%u HTTP/1.1\r\nHost: %s%s%s:%u\r\n%s\r\n", lb,
			 host, rb, port, lb, host, rb, port, auth_line);

	return n < 0 || (size_t)n >= cap ? -ENOSPC : n;
}

int upstream_judge(const char *head, size_t len, const char *up_text, size_t *head_len, char *why,
		   size_t whylen)
{
	struct resp_head h;
	enum resp_result r = resp_parse(head, len, &h);
	char reason[64] = "";

	if (r == RESP_NEED_MORE)
		return -EAGAIN;
	if (r == RESP_BAD) {
		snprintf(why, whylen, "upstream proxy %s: malformed answer to CONNECT", up_text);
		return -EPROTO;
	}
	*head_len = h.head_len;
	if (h.status >= 200 && h.status <= 299)
		return 0;
	/* The reason phrase ("HTTP/1.1 407 " is 13 bytes), printable only, and only the
	 * status line's: a line without one must not show the next field ("407\r\nX: v"). */
	for (size_t i = 13, o = 0; h.head_len > 13 && head[12] == ' ' && i < h.head_len &&
				   head[i] != '\r' && head[i] != '\n' && o < sizeof(reason) - 1;
	     i++) {
		reason[o++] = head[i] >= 0x20 && head[i] < 0x7f ? head[i] : '?';
		reason[o] = '\0';
	}
	snprintf(why, whylen, "upstream proxy %s answered %d%s%s%s", up_text, h.status,
		 reason[0] ? " (" : "", reason, reason[0] ? ")" : "");
	return -EPROTO;
}
