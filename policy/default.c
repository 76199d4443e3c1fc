/* The embedded default policy: what runs when nobody chose a policy. It lets the
 * command write its workspace only and allows no egress at all; the usual credential
 * stores are unreadable under it as under every policy (the floor, floor.c). */
#include <stddef.h>

#include "policy/policy_int.h"

const char policy_embedded_default_yaml[] =
    "# halo-run embedded default policy (used when no --policy, no $HALO_POLICY\n"
    "# and no /etc/halo or ~/.config/halo policy file is found).\n"
    "# The credential floor (~/.ssh, ~/.aws, ~/.npmrc, .env* ... see `halo-run policy`)\n"
    "# is the first layer of every policy, this one included.\n"
    "sandbox:\n"
    "  mode: workspace-write\n"
    "  failIfUnavailable: true\n"
    "  guardPersistence: true\n"
    "egress:\n"
    "  default: deny\n";

struct halo_policy *policy_embedded_default(void)
{
	struct halo_policy *p = NULL;

	if (policy_parse_buffer("embedded default", policy_embedded_default_yaml,
				sizeof(policy_embedded_default_yaml) - 1, 'y', &p, NULL) < 0)
		return NULL;
	return p;
}
