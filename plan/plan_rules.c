/* The filesystem as rules rather than mounts: what a launcher without a scan (macOS,
 * whose Seatbelt profile matches paths and patterns itself) enforces, in the order
 * its renderer names the paths. */
#include "plan/plan.h"

static void step(struct halo_plan *p, enum plan_op op, unsigned flags, const char *path,
		 const char *reason, const char *origin)
{
	struct plan_step *s = plan_step_add(p, op, flags, path, NULL, reason);

	if (s)
		s->origin = origin;
}

static void list(struct halo_plan *p, enum plan_op op, unsigned flags, const struct policy_list *l,
		 const char *reason, const char *origin)
{
	for (size_t i = 0; i < l->n; i++)
		step(p, op, flags, l->items[i], reason, origin);
}

int plan_fs_rules(struct halo_plan *p, const struct plan_rules_in *in)
{
	const struct halo_policy *pol = in->policy;

	if (pol->mode == POLICY_MODE_WORKSPACE_WRITE && in->workspace)
		step(p, PLAN_BIND_RW, PLAN_F_TREE, in->workspace, "workspace, writable",
		     "workspace");
	list(p, PLAN_BIND_RW, PLAN_F_TREE, &pol->writable_abs, "writable root, writable",
	     "sandbox.writableRoots");
	if (in->tmpdir)
		step(p, PLAN_BIND_RW, PLAN_F_TREE, in->tmpdir,
		     "this run's TMPDIR, writable, removed at the end", "tmpdir");
	list(p, PLAN_MASK, PLAN_F_TREE, &pol->protected_abs,
	     "protected path: no read, no write, no unlink", "sandbox.protectedPaths");
	list(p, PLAN_MASK, PLAN_F_PATTERN, &pol->protected_globs,
	     "protected pattern: no read, no write, no unlink", "sandbox.protectedPaths");
	list(p, PLAN_CARVE, PLAN_F_TREE, &pol->allow_read_abs,
	     "sandbox.allowRead carve-out, read-only (a loosening)", "sandbox.allowRead");
	if (in->self_exe && in->self_exe[0])
		step(p, PLAN_READONLY, 0, in->self_exe, "halo-run's own binary: never writable",
		     "self");
	for (size_t i = 0; i < in->n_policy_files; i++)
		step(p, PLAN_READONLY, 0, in->policy_files[i], "policy file: never writable",
		     "policy-file");
	for (size_t i = 0; i < in->n_own_outputs; i++)
		step(p, PLAN_MASK, PLAN_F_TREE, in->own_outputs[i],
		     "halo-run's own output file: protected", "own-output");
	if (in->config_dir)
		step(p, PLAN_READONLY, PLAN_F_TREE, in->config_dir,
		     "halo-run's configuration directory: never writable", "config-dir");
	list(p, PLAN_SOCKET, 0, &pol->unix_sockets_abs,
	     "sandbox.unixSockets: host socket reachable", "sandbox.unixSockets");
	return plan_ok(p);
}
