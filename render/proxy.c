/* `policy render --proxy PORT[,SOCKSPORT]`: the ports of a `halo-run proxy` that a
 * harness's own sandbox sends its commands' traffic to, and the warning for every
 * harness that cannot be told about it (never a silent drop, Invariant 2). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "render/render_int.h"

#define PROXY_FORM "PORT or PORT,SOCKSPORT"

/* One port: plain decimal digits (no sign, space or leading zero), 1-65535. */
static int one_port(const char *s, size_t n, unsigned *out, struct halo_err *e)
{
	unsigned long v = 0;

	if (n == 0) {
		halo_err_set(e, "--proxy: an empty port (expected %s)", PROXY_FORM);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || n > 5 || (i == 0 && s[i] == '0' && n > 1)) {
			halo_err_set(e, "--proxy: '%.*s' is not a port number (expected %s)",
				     (int)(n > 32 ? 32 : n), s, PROXY_FORM);
			return -EINVAL;
		}
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v == 0 || v > 65535) {
		halo_err_set(e, "--proxy: port %lu is out of range (1-65535)", v);
		return -EINVAL;
	}
	*out = (unsigned)v;
	return 0;
}

int render_proxy_parse(const char *s, unsigned *http, unsigned *socks, struct halo_err *e)
{
	const char *comma = strchr(s, ',');
	int rc;

	*http = *socks = 0;
	if (comma && strchr(comma + 1, ',')) {
		halo_err_set(e, "--proxy: at most two ports (%s), not '%.64s'", PROXY_FORM, s);
		return -EINVAL;
	}
	if ((rc = one_port(s, comma ? (size_t)(comma - s) : strlen(s), http, e)) < 0)
		return rc;
	if (comma && (rc = one_port(comma + 1, strlen(comma + 1), socks, e)) < 0) {
		*http = 0;
		return rc;
	}
	if (comma && *socks == *http) {
		halo_err_set(e,
			     "--proxy: the HTTP and SOCKS ports are both %u; halo-run proxy "
			     "serves them on two listeners (--listen and --socks)",
			     *http);
		*http = *socks = 0;
		return -EINVAL;
	}
	return 0;
}

void render_warn_proxy(const struct render_adapter *a, const struct halo_policy *p,
		       const struct render_opts *o, struct render_out *out)
{
	if (!o->proxy_http || out->handled[RF_PROXY])
		return;
	if (p->mode == POLICY_MODE_OFF)
		render_warn(out, RF_PROXY,
			    "sandbox.mode off: nothing is rendered, so %s is not pointed at "
			    "the proxy",
			    a->title);
	else
		render_warn(out, RF_PROXY, "%s",
			    a->proxy_cannot ? a->proxy_cannot : "not rendered for this harness");
}
