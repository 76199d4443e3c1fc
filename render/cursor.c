/* Cursor: nothing. Its sandbox.json is per user (~/.cursor/sandbox.json) or per
 * repository (<workspace>/.cursor/sandbox.json) and its Read() deny rules live in
 * the per-user ~/.cursor/cli-config.json (https://cursor.com/docs/reference/sandbox,
 * https://cursor.com/docs/cli/reference/permissions); there is no system-wide file
 * a user cannot edit, so nothing rendered would be a managed setting. Every field
 * in force is a warning naming those files. */
#include <stdio.h>

#include "render/render_int.h"

#define WHY                                                                                        \
	"Cursor has no system-wide managed file (sandbox.json is per user or per repository, "     \
	"permissions are in the per-user ~/.cursor/cli-config.json); nothing rendered"

static int render(const struct halo_policy *p, const struct render_opts *o, struct render_out *out,
		  struct halo_err *e)
{
	(void)o;
	(void)e;
	if (p->mode == POLICY_MODE_OFF) {
		render_warn_off(p, out);
		return 0;
	}
	for (int f = 0; f < RENDER_N_FIELDS; f++)
		if (render_field_in_force(p, (enum render_field)f))
			render_warn(out, (enum render_field)f, WHY);
	return 0;
}

RENDER_EXPLAIN_NONE(explain, "not enforced by a managed file: Cursor's sandbox.json is per user")

const struct render_adapter render_cursor = {
    .name = "cursor",
    .title = "Cursor",
    .keys = NULL,
    .n_keys = 0,
    .disp =
	{
	    [0 ... RENDER_N_FIELDS - 1] = RD_WARN,
	},
    .render = render,
    .explain = explain,
    .proxy_cannot =
	"Cursor has no system-wide managed file, and its sandbox.json documents no outside "
	"proxy; nothing rendered",
};
