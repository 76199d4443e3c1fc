/* Where the policy comes from when no --policy is given. A file inside the
 * workspace is never read implicitly: the repository being worked on must not be
 * able to choose, or loosen, its own sandbox. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy_int.h"

/* Lexically normalised, ".." resolved, so "/elsewhere/../ws/p.yaml" is seen as
 * being inside /ws. Symbolic links are the caller's business (it passes a real
 * path for the workspace). */
static bool inside_workspace(const char *path, const char *workspace)
{
	char a[POLICY_PATH_MAX], w[POLICY_PATH_MAX];
	const char *why;

	if (!workspace || !*workspace)
		return false;
	if (policy_path_normalise(workspace, true, w, sizeof(w), &why) < 0)
		return true; /* unknown workspace: trust nothing */
	if (policy_path_normalise(path, true, a, sizeof(a), &why) < 0)
		return true;
	return policy_path_within(a, w);
}

static int choose(const char *path, char *out, size_t outlen, struct policy_diags *d)
{
	if (strlen(path) >= outlen) {
		policy_diags_add_error(d, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	memcpy(out, path, strlen(path) + 1);
	return 0;
}

static int from_env(const struct policy_discover_in *in, char *out, size_t outlen,
		    struct policy_diags *d)
{
	const char *path = in->env_halo_policy;

	/* Asked for by name, so every problem is an error: falling back to another
	 * policy would run under rules nobody chose. */
	if (path[0] != '/') {
		policy_diags_add_error(d, "$HALO_POLICY=%s: must be an absolute path", path);
		return -EINVAL;
	}
	if (inside_workspace(path, in->workspace)) {
		policy_diags_add_error(d,
				       "$HALO_POLICY=%s: is inside the workspace %s; a repository "
				       "must not choose its own policy",
				       path, in->workspace);
		return -EPERM;
	}
	if (!in->exists(path)) {
		policy_diags_add_error(d, "$HALO_POLICY=%s: no such file", path);
		return -ENOENT;
	}
	return choose(path, out, outlen, d);
}

int policy_discover(const struct policy_discover_in *in, char *out, size_t outlen,
		    struct policy_diags *d)
{
	char cand[4][POLICY_PATH_MAX];
	size_t n = 0;

	if (outlen == 0)
		return -EINVAL;
	out[0] = '\0';
	if (in->env_halo_policy && *in->env_halo_policy)
		return from_env(in, out, outlen, d);
	snprintf(cand[n++], sizeof(cand[0]), "/etc/halo/policy.yaml");
	snprintf(cand[n++], sizeof(cand[0]), "/etc/halo/policy.json");
	if (in->home && in->home[0] == '/') {
		snprintf(cand[n++], sizeof(cand[0]), "%s/.config/halo/policy.yaml", in->home);
		snprintf(cand[n++], sizeof(cand[0]), "%s/.config/halo/policy.json", in->home);
	}
	for (size_t i = 0; i < n; i++) {
		if (inside_workspace(cand[i], in->workspace)) {
			if (in->exists(cand[i]))
				policy_diags_add_warning(
				    d,
				    "%s: skipped, it is inside the workspace %s (a "
				    "repository must not loosen its own sandbox)",
				    cand[i], in->workspace);
			continue;
		}
		if (!in->exists(cand[i]))
			continue;
		/* Both spellings in one place: say which one wins. */
		if (i % 2 == 0 && in->exists(cand[i + 1]))
			policy_diags_add_warning(d, "%s: ignored, %s is used", cand[i + 1],
						 cand[i]);
		return choose(cand[i], out, outlen, d);
	}
	return 0; /* empty: the embedded default */
}
