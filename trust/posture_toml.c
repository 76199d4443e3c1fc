/* doctor's reading of Codex's config.toml: where sandbox_mode is "danger-full-access",
 * at the top level or in a [profiles.NAME] table, however the key is spelled (table
 * headers, dotted keys, quoted keys, inline tables, escapes). The reading is render/'s
 * strict TOML reader (render_toml_scan), the one `policy import` uses: it walks the
 * whole document, because a value can only be skipped safely once it is understood,
 * and whatever it does not understand is an error naming the line: a file that cannot
 * be read completely is a file whose setting cannot be vouched for. No message quotes
 * the file. */
#include <stdio.h>
#include <string.h>

#include "render/render.h"
#include "trust/trust.h"

struct scan {
	posture_toml_hit_fn hit;
	void *arg;
};

static void on_kv(void *arg, const char *const *path, size_t n, unsigned line, const char *str)
{
	struct scan *s = arg;
	bool top = n == 1 && strcmp(path[0], "sandbox_mode") == 0;
	bool profile =
	    n == 3 && strcmp(path[0], "profiles") == 0 && strcmp(path[2], "sandbox_mode") == 0;

	if ((top || profile) && str && strcmp(str, "danger-full-access") == 0)
		s->hit(s->arg, line, profile);
}

int posture_codex_scan(const char *buf, size_t len, posture_toml_hit_fn hit, void *arg, char *why,
		       size_t whylen)
{
	struct scan s = {hit, arg};
	struct halo_err e;
	int rc;

	e.msg[0] = '\0';
	rc = render_toml_scan(buf, len, on_kv, &s, &e);
	if (rc < 0)
		snprintf(why, whylen, "%s", e.msg);
	return rc;
}
