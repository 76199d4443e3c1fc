/* The embedded default policy: what runs when nobody chose a policy. It keeps the
 * usual credential stores unreadable, lets the command write its workspace only,
 * and allows no egress at all. */
#include <stddef.h>

#include "policy/policy_int.h"

const char policy_embedded_default_yaml[] =
    "# halo-run embedded default policy (used when no --policy, no $HALO_POLICY\n"
    "# and no /etc/halo or ~/.config/halo policy file is found).\n"
    "sandbox:\n"
    "  mode: workspace-write\n"
    "  protectedPaths:\n"
    "    - ~/.ssh             # SSH keys\n"
    "    - ~/.aws             # AWS credentials\n"
    "    - ~/.gnupg           # GPG keys\n"
    "    - ~/.config/gcloud   # Google Cloud credentials\n"
    "    - ~/.azure           # Azure credentials\n"
    "    - ~/.kube            # Kubernetes contexts and tokens\n"
    "    - ~/.docker          # registry credentials\n"
    "    - ~/.netrc           # HTTP/FTP passwords\n"
    "    - ~/.git-credentials # git HTTPS passwords\n"
    "    - \".env*\"            # dotenv files anywhere\n"
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
