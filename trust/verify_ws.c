/* `halo-run verify`'s check of the real workspace (--workspace DIR, else the current
 * directory): its own probes prove the layers in a throwaway workspace, but a
 * workspace leaks through what only it holds (a directory the walk cannot list, an
 * index that vouches for another view). So verify walks the real workspace afresh,
 * with no index (HALO_RUN_INDEX=0: what it finds does not depend on what a launch
 * trusts), and a second launch there, the index and its watcher used as any launch
 * uses them but nothing written and nothing started (HALO_RUN_INDEX=ro), tries from
 * inside to read every protected file found and to write every guard target found.
 * The probe runner is a copy of halo-run in a fresh directory of /var/tmp (the host
 * root, which the sandbox shows read-only; its /tmp is its own), removed afterwards. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/linux.h"
#include "plan/plan.h"
#include "rlimits/rlimits.h"
#include "trust/trust.h"
#include "opts/opts.h"
#include "trust/verify_int.h"

#define MAX_WS_ROWS	 512	      /* paths probed in the workspace */
#define MAX_WS_ARG_BYTES (512 * 1024) /* of their specs together (argv) */

static bool beneath(const char *path, const char *dir)
{
	return policy_path_beneath(path, dir); /* the path facts' one meaning */
}

/* Walked by the launch: the workspace (read-only too) or a writable root (tool
 * caches never are). */
static bool walked(const struct verify *v, const struct halo_plan *p, const char *path)
{
	if (beneath(path, v->real_ws))
		return true;
	for (size_t i = 0; i < p->n_steps; i++)
		if (p->steps[i].op == PLAN_BIND_RW && beneath(path, p->steps[i].path))
			return true;
	return false;
}

/* Shown inside by design: an allowRead carve-out or a sanitized copy at or beneath the
 * mask (its listing is not refused). */
static bool shows_something(const struct halo_plan *p, const char *mask)
{
	for (size_t i = 0; i < p->n_steps; i++)
		if ((p->steps[i].op == PLAN_CARVE || p->steps[i].op == PLAN_SANITIZE) &&
		    beneath(p->steps[i].path, mask))
			return true;
	return false;
}

/* The path relative to the workspace ("./x"), escaped by the one escaper (names come
 * from the command). */
static const char *shown(const struct verify *v, const char *path, char *out, size_t n)
{
	size_t w = strlen(v->real_ws);

	if (n > 2 && beneath(path, v->real_ws) && path[w] == '/') {
		memcpy(out, "./", 2);
		policy_printable(path + w + 1, out + 2, n - 2);
		return out;
	}
	return policy_printable(path, out, n);
}

static struct vrow *fail_row(struct verify *v, const char *expected, const char *got,
			     const char *what)
{
	struct vrow *r = verify_add(v, V_EXACT, expected, NULL, "workspace: %s", what);

	if (r) {
		snprintf(r->want, sizeof(r->want), "%s", expected);
		snprintf(r->got, sizeof(r->got), "%s", got);
	}
	return r;
}

/* One probe row for `path`; false when the bounds are reached. */
static int add_probe(struct verify *v, const struct plan_step *s, size_t *bytes, size_t *left)
{
	char name[600], what[700];
	struct stat st;
	struct vrow *r;
	bool mask = s->op == PLAN_MASK;

	if (lstat(s->path, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
		return 0;
	if (v->n - v->ws_from >= MAX_WS_ROWS || *bytes + strlen(s->path) + 16 > MAX_WS_ARG_BYTES) {
		(*left)++;
		return 0;
	}
	*bytes += strlen(s->path) + 16;
	shown(v, s->path, name, sizeof(name));
	if (mask) {
		snprintf(what, sizeof(what), "workspace: read protected %s", name);
		r = verify_add_spec(v, V_REFUSED, "refused", what, "read:%s", s->path);
	} else if (S_ISREG(st.st_mode)) {
		snprintf(what, sizeof(what), "workspace: append to guarded %s", name);
		r = verify_add_spec(v, V_REFUSED, "refused", what, "write:%s", s->path);
	} else {
		char path[4200];
		/* pid and random: never the name of something already there; the judge
		 * removes it from the host if it was made. */
		snprintf(path, sizeof(path), "%s/halo-verify.%d.%s", s->path, (int)v->self, v->tag);
		snprintf(what, sizeof(what), "workspace: new file in guarded %s", name);
		r = verify_add_spec(v, V_NOT_ON_HOST, "refused", what, "create:%s", path);
		if (r && !(r->host_path = strdup(path)))
			return -ENOMEM;
	}
	return r ? 0 : -ENOMEM;
}

static int add_rows(struct verify *v, const struct halo_plan *p)
{
	size_t bytes = 0, left = 0, before = v->n;
	int rc = 0;

	for (size_t i = 0; i < p->n_steps && rc == 0; i++) {
		const struct plan_step *s = &p->steps[i];
		if ((s->op == PLAN_MASK && walked(v, p, s->path) && !shows_something(p, s->path)) ||
		    (s->op == PLAN_GUARD && walked(v, p, s->path)))
			rc = add_probe(v, s, &bytes, &left);
	}
	if (rc == 0 && left &&
	    !verify_add(v, V_SKIP, "refused", NULL,
			"workspace: %zu more protected files and guard targets, not probed", left))
		rc = -ENOMEM;
	if (rc == 0 && v->n == before &&
	    !verify_add(v, V_SKIP, "refused", NULL,
			"workspace: no protected file nor guard target found in it"))
		rc = -ENOMEM;
	return rc;
}

/* A launch would refuse the workspace (runner/run.c check_workspace): nothing to
 * check there. */
static bool refused_workspace(const struct halo_policy *p, const char *ws)
{
	return p->mode == POLICY_MODE_WORKSPACE_WRITE && policy_workspace_refused(ws);
}

int verify_plan_workspace(const struct runner_opts *o, struct verify *v)
{
	struct runner_env re = {0};
	struct halo_plan p;
	struct halo_err e = {{0}};
	int rc = 1;

	v->ws_from = v->n;
	if (runner_load_policy(o, true, &re) != 0)
		return fail_row(v, "loaded", "invalid", "the policy a launch there would load")
			   ? 1
			   : -ENOMEM;
	snprintf(v->real_ws, sizeof(v->real_ws), "%s", re.workspace);
	if (re.policy->mode == POLICY_MODE_OFF) {
		if (!fail_row(v, "sandboxed", "off", "sandbox.mode is off there"))
			rc = -ENOMEM;
	} else if (refused_workspace(re.policy, re.workspace)) {
		if (!verify_add(v, V_SKIP, "refused", NULL,
				"workspace: %.60s is refused as a workspace by a launch",
				re.workspace))
			rc = -ENOMEM;
	} else if (runner_plan_of(re.policy, re.workspace, re.pw_home, true, &p, &e) < 0) {
		if (!fail_row(v, "walked", "failed", e.msg))
			rc = -ENOMEM;
	} else {
		rc = add_rows(v, &p) < 0 ? -ENOMEM : 0;
		plan_free(&p);
	}
	runner_env_release(&re);
	return rc;
}

/* A fresh directory for the probe runner, outside /tmp (the sandbox's own there). */
static int runner_dir(struct verify *v)
{
	snprintf(v->runner_dir, sizeof(v->runner_dir), "/var/tmp/halo-verify-runner.XXXXXX");
	if (!mkdtemp(v->runner_dir)) {
		v->runner_dir[0] = '\0';
		return -errno;
	}
	chmod(v->runner_dir, 0755);
	return 0;
}

static void runner_dir_remove(struct verify *v)
{
	char path[4200];

	if (!v->runner_dir[0])
		return;
	snprintf(path, sizeof(path), "%s/halo-verify-runner", v->runner_dir);
	unlink(path);
	rmdir(v->runner_dir);
	v->runner_dir[0] = '\0';
}

/* The real workspace's rows and their launch (verify_ws.c); its messages join the
 * first launch's. */
int verify_check_workspace(const struct runner_opts *o, struct verify *v, struct run *run)
{
	struct run ws_run = {0};
	int rc = verify_plan_workspace(o, v);

	if (rc != 0) {
		verify_judge_rows(v, v->ws_from, v->n);
		return rc < 0 ? -1 : 0;
	}
	if (runner_dir(v) < 0) {
		fprintf(stderr, "halo-run: verify: cannot make a directory in /var/tmp: %s\n",
			strerror(errno));
		return -1;
	}
	rc = verify_run_probes(
	    o, v, &(struct launch_of){v->real_ws, v->runner_dir, v->ws_from, v->n, false}, &ws_run);
	runner_dir_remove(v);
	for (size_t i = 0; i < ws_run.n_messages; i++)
		if (run->n_messages < VERIFY_MAX_MESSAGES)
			run->messages[run->n_messages++] = ws_run.messages[i];
		else
			free(ws_run.messages[i]);
	if (rc < 0)
		return -1;
	verify_judge_rows(v, v->ws_from, v->n);
	return verify_launch_row(v, &ws_run, v->ws_from, "launch halo-run in the workspace") < 0
		   ? -1
		   : 0;
}
