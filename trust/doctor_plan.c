/* The plan doctor and verify check against: the one a plain launch of this policy
 * would get on this machine (linux/plan.c), so that what they call "used" or
 * "expected" is what the launcher would do, not worked out again from the policy. */
#include <stdlib.h>
#include <string.h>

#include "opts/opts.h"
#include "linux/linux.h"
#include "plan/plan.h"
#include "rlimits/rlimits.h"
#include "trust/trust.h"

int runner_plan_of(const struct halo_policy *p, const char *workspace, const char *pw_home,
		   bool with_fs, struct halo_plan *out, struct halo_err *e)
{
	static char *const argv[] = {"true", NULL};
	struct linux_launch l;

	memset(&l, 0, sizeof(l));
	l.policy = p;
	l.workspace = workspace;
	l.pw_home = pw_home;
	l.caller_path = getenv("PATH");
	l.caller_xdg_config = getenv("XDG_CONFIG_HOME");
	l.caller_xdg_data = getenv("XDG_DATA_HOME");
	l.caller_xdg_config_dirs = getenv("XDG_CONFIG_DIRS");
	l.caller_xdg_data_dirs = getenv("XDG_DATA_DIRS");
	l.caller_zdotdir = runner_zdotdir();
	l.argv = argv;
	l.unsandboxed = p->mode == POLICY_MODE_OFF;
	l.egress_proxy = !l.unsandboxed;
	rlimits_init(&l.limits);
	rlimits_from_policy(&p->limits, &l.limits);
	return with_fs ? linux_plan(&l, out, e) : linux_plan_layers(&l, out, e);
}
