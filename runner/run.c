/* `halo-run [OPTIONS] -- CMD`: load the policy, settle the limits and the environment,
 * hand over to the launcher, and exit with the command's status. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/linux.h"
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include "env/caches.h"
#include "env/env.h"
#include "events/events.h"
#include "runner/runner_int.h"

extern char **environ;

/* The policy's limits, tightened (never loosened) by --limit and --timeout. */
static int settle_limits(const struct runner_opts *o, const struct halo_policy *p,
			 struct rlimits_set *r)
{
	struct halo_err e = {{0}};
	struct rlimits_set policy;
	int rc;

	rlimits_from_policy(&p->limits, &policy);
	*r = policy;
	if (o->limit_spec && (rc = rlimits_parse_cli(o->limit_spec, &policy, r, &e)) < 0) {
		fprintf(stderr, rc == -EPERM ? "halo-run: %s\n" : "halo-run: --limit: %s\n", e.msg);
		return HALO_EXIT_SETUP;
	}
	if (o->timeout && rlimits_parse_timeout(o->timeout, &policy, r, &e) < 0) {
		fprintf(stderr, "halo-run: %s\n", e.msg);
		return HALO_EXIT_SETUP;
	}
	return 0;
}

/* A workspace of / or a system directory (policy's one list) would make the host
 * writable. */
static int check_workspace(const struct halo_policy *p, const char *ws)
{
	/* The operating system's own trees and anything in them, "/" and "/var" themselves:
	 * a command run from /tmp, /opt or /srv (a scratch directory, not a system one)
	 * keeps working. */
	if (p->mode != POLICY_MODE_WORKSPACE_WRITE || !policy_workspace_refused(ws))
		return 0;
	fprintf(stderr,
		"halo-run: refusing %s as a writable workspace; cd into a project directory or "
		"pass --workspace DIR\n",
		ws);
	return HALO_EXIT_SETUP;
}

/* --dry-run [--json]: the launcher's plan, printed by the one printer. */
static int dry_run(const struct runner_opts *o, runner_launch *l)
{
	struct halo_err e = {{0}};
	struct halo_plan p;
	int rc = runner_launcher.plan(l, &p, &e);
	char up[POLICY_NO_PROXY_MAX + 400];

	if (rc == 0 && l->policy->upstream_proxy && l->policy->mode != POLICY_MODE_OFF) {
		struct policy_upstream u = {0};
		const struct policy_upstream *s = runner_upstream();

		runner_upstream_describe(l->policy, s ? s : &u, up, sizeof(up));
		plan_add(&p, &p.egress.notes,
			 "allowed hosts are reached through the upstream proxy %s", up);
		if (s)
			plan_add(
			    &p, &p.egress.notes,
			    "the upstream resolves names itself: halo-run checks this machine's "
			    "answers first (private ones refused), a split DNS view may differ");
	}
	if (rc == 0 && o->json)
		rc = runner_plan_json(&p, stdout);
	else if (rc == 0)
		runner_plan_print(&p, stdout);
	plan_free(&p);
	if (rc < 0)
		runner_say("%s", e.msg[0] ? e.msg : strerror(-rc)); /* may name workspace files */
	return rc < 0 ? HALO_EXIT_SETUP : 0;
}

static int launch(const struct runner_opts *o, runner_launch *l)
{
	struct halo_err e = {{0}};
	int status = HALO_EXIT_SETUP;
	int rc;

	if (o->dry_run)
		return dry_run(o, l);
	if (o->session)
		return runner_session_run(o, l);
	rc = runner_supervise(o, l, &status, &e);
	if (rc < 0) {
		runner_say("%s", e.msg);
		return runner_start_failed_exit();
	}
	if (rc > 0 && e.msg[0])
		runner_say("%s", e.msg); /* names the broker refused come from inside */
	return status;
}

#ifndef RUNNER_MACOS
static struct runner_caches caches;
static struct runner_tool_config toolcfg;
static struct linux_tool_config linux_toolcfg;

/* pnpm's store in the isolated (or per-run) cache, through the pnpm rc of a
 * configuration directory on the sandbox's /run (env/caches_config.c): *kv is the
 * variable that names it (none when caches are not isolated). The home as the
 * workspace keeps its own ~/.config (a tool's new configuration belongs there), so
 * there pnpm gets npm_config_store_dir as before, which npm 11 warns about, rather
 * than its default store (~/.local/share/pnpm, read-only when it is on PATH). */
static char pnpm_store[sizeof(caches.root) + 16];

static int tool_config(const struct runner_env *re, const char *home, runner_launch *l,
		       struct policy_kv *kv)
{
	int rc;

	kv->key = NULL;
	if (caches.mode != POLICY_CACHES_ISOLATED || caches.n_vars == 0)
		return 0;
	snprintf(pnpm_store, sizeof(pnpm_store), "%s/pnpm-store",
		 caches.per_run ? RUNNER_CACHE_PER_RUN_ROOT : caches.root);
	rc = runner_caches_config(re->policy, home, re->workspace, pnpm_store, &toolcfg);
	if (rc == -EEXIST || rc == -E2BIG) /* no mirror: ~/.config as it is */
		*kv = (struct policy_kv){"npm_config_store_dir", pnpm_store};
	if (rc < 0)
		return rc == -ENOMEM ? rc : 0;
	linux_toolcfg = (struct linux_tool_config){toolcfg.rc, toolcfg.rc_len, toolcfg.mirror,
						   toolcfg.names, toolcfg.names_len};
	l->tool_config = &linux_toolcfg;
	*kv = (struct policy_kv){"XDG_CONFIG_HOME", LINUX_TOOL_CONFIG_DIR};
	return 0;
}

static void print_warnings(const struct runner_opts *o, struct policy_diags *d)
{
	for (size_t i = 0; !o->quiet && i < d->n_warnings; i++)
		fprintf(stderr, "halo-run: warning: %s\n", d->warnings[i]);
	policy_diags_free(d);
}

/* The command's two environments (with the proxy, and without for a launch that gets
 * no network namespace) and its tool caches. Per-run caches live in the sandbox's own
 * /tmp, so the environment without namespaces (the host's /tmp) does not name them. */
static int linux_environment(const struct runner_opts *o, const struct runner_env *re,
			     runner_launch *l)
{
	struct runner_env_in in = {.policy = re->policy, .caller = environ, .tmpdir = "/tmp"};
	struct policy_diags d = {0};
	struct halo_err e = {{0}};
	const char *home = re->env_home ? re->env_home : re->pw_home;
	struct policy_kv
	    vars[sizeof(caches.vars) / sizeof(caches.vars[0]) + 2 + RUNNER_TLS_ENV_MAX];
	size_t n = 0;
	struct policy_kv cfg;

	struct runner_caches_in ci = {.policy = re->policy,
				      .home = home,
				      .xdg_cache_home = getenv("XDG_CACHE_HOME"),
				      .workspace = re->workspace,
				      .dry_run = o->dry_run};

	if (runner_caches_plan(&ci, &caches) < 0) {
		fprintf(stderr, "halo-run: tool caches: out of memory\n");
		return HALO_EXIT_SETUP;
	}
	/* Where the caches are is no news on a run that went as planned (issue 25: a
	 * successful run says nothing): --verbose and --dry-run show it. */
	if (caches.note[0] && !o->quiet && (o->verbose || o->dry_run))
		fprintf(stderr, "halo-run: %s\n", caches.note);
	l->cache_binds = (const char *const *)caches.binds;
	l->n_cache_binds = caches.n_binds;
	l->cache_hide = caches.hide[0] ? caches.hide : NULL;
	if (tool_config(re, home, l, &cfg) < 0) {
		fprintf(stderr, "halo-run: tool caches: out of memory\n");
		return HALO_EXIT_SETUP;
	}
	/* The per-run caches and Node's preload (on the sealed /run) exist only inside the
	 * namespaces: the environment without them names neither. */
	if (!caches.per_run)
		for (; n < caches.n_vars; n++)
			vars[n] = caches.vars[n];
	in.vars = vars;
	in.n_vars = n;
	in.warnings = NULL;
	/* Only a launch that may run without the namespaces (sandbox.mode off, or
	 * failIfUnavailable: false) can use it. */
	bool direct = re->policy->mode == POLICY_MODE_OFF || re->policy->fail_if_unavailable == 0;
	l->envp_direct = direct ? runner_env_build_in(&in, &e) : NULL;
	for (size_t i = 0; caches.per_run && i < caches.n_vars; i++)
		vars[n++] = caches.vars[i];
	if (cfg.key) /* on the sandbox's /run, or the cache (with the per-run ones) */
		vars[n++] = cfg;
	if (l->egress_proxy)
		vars[n++] = (struct policy_kv){"NODE_OPTIONS", LINUX_NODE_OPTIONS};
	if (l->egress_proxy) /* the run's CA, on the sandbox's /run: inside only */
		n += runner_tls_env(vars + n, RUNNER_TLS_ENV_MAX);
	in.n_vars = n;
	in.proxy = l->egress_proxy;
	in.java_extra = runner_tls_java_options();
	in.warnings = &d;
	l->envp = !direct || l->envp_direct ? runner_env_build_in(&in, &e) : NULL;
	print_warnings(o, &d);
	if (!l->envp) {
		fprintf(stderr, "halo-run: environment: %s\n", e.msg);
		return HALO_EXIT_SETUP;
	}
	if (!o->quiet)
		runner_ssh_identity_note(l->envp, re->policy, re->workspace, home);
	return 0;
}
#endif

/* sandbox.unixSockets opens a host service to the command: said at every launch,
 * --quiet or not, with what such a socket means. */
static void warn_unix_sockets(const struct halo_policy *p)
{
	for (size_t i = 0; i < p->unix_sockets_abs.n; i++) {
		const char *s = p->unix_sockets_abs.items[i];
		struct stat st;

		if (stat(s, &st) == 0 && S_ISSOCK(st.st_mode))
			fprintf(stderr,
				"halo-run: warning: sandbox.unixSockets: %s is reachable from "
				"inside: whatever listens there acts for the command (an ssh "
				"agent signs with your keys, a Docker engine is root on the "
				"host)\n",
				s);
		else
			fprintf(stderr,
				"halo-run: warning: sandbox.unixSockets: %s is not a socket now; "
				"nothing is opened there\n",
				s);
	}
}

/* --die-with-parent, as bubblewrap's: the supervisor gets SIGKILL when its parent dies
 * (the sandbox's init already dies with the supervisor, and with init every process
 * of the sandbox). The parent may have died before the prctl: then getppid() is no
 * longer the parent halo-run recorded before main, or, when it died even before that,
 * halo-run was adopted into a session or process group that is not its reaper's
 * (runner/lineage.c); either way nothing is launched. The signal is
 * tied to the parent *thread* that forked halo-run (prctl(2)): a harness that spawns
 * from a thread that later exits ends the run then. */
static int die_with_parent(const struct runner_opts *o)
{
	if (!o->die_with_parent)
		return 0;
#ifdef __linux__
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) {
		fprintf(stderr, "halo-run: --die-with-parent: %s\n", strerror(errno));
		return HALO_EXIT_SETUP;
	}
	if (getppid() != runner_parent_at_start()) {
		fprintf(stderr, "halo-run: --die-with-parent: the parent already exited\n");
		return HALO_EXIT_SETUP;
	}
	if (runner_adopted_at_start()) {
		fprintf(stderr,
			"halo-run: --die-with-parent: the parent already exited before halo-run "
			"started (adopted by pid %d: its session or process group is neither its "
			"own nor its parent's); nothing is run\n",
			(int)getppid());
		return HALO_EXIT_SETUP;
	}
	return 0;
#else
	fprintf(stderr, "halo-run: --die-with-parent is not supported on this system\n");
	return HALO_EXIT_SETUP;
#endif
}

/* Options of this change that are refused before anything starts. */
static int check_agent_options(const struct runner_opts *o)
{
	struct halo_err e = {{0}};
	unsigned ms;

	if (o->decider_timeout && !o->decider)
		return fprintf(stderr, "halo-run: --decider-timeout needs --decider\n"),
		       HALO_EXIT_SETUP;
	if (runner_decider_timeout(o->decider_timeout, &ms, &e) < 0)
		return fprintf(stderr, "halo-run: %s\n", e.msg), HALO_EXIT_SETUP;
	if (o->events && o->audit && strcmp(o->events, o->audit) == 0)
		return fprintf(stderr, "halo-run: --events and --audit name the same file\n"),
		       HALO_EXIT_SETUP;
	return die_with_parent(o);
}
#ifndef RUNNER_MACOS
/* The caller's ssh-agent socket, when sandbox.unixSockets lists it: the sandbox's
 * ssh_config names it (SSH_AUTH_SOCK itself is never passed, env/env.c). */
const char *runner_ssh_agent_opted_in(const struct halo_policy *p)
{
	const char *agent = getenv("SSH_AUTH_SOCK");

	for (size_t i = 0; agent && i < p->unix_sockets_abs.n; i++)
		if (strcmp(p->unix_sockets_abs.items[i], agent) == 0)
			return agent;
	return NULL;
}
#endif

int runner_cmd_run(const struct runner_opts *o)
{
	struct runner_env re;
	runner_launch l;
	/* 66 KB (learn's notes): zero pages of its own, not a memset on the stack. One run a
	 * process. */
	static struct halo_run_facts facts;
	/* halo-run's own output files: --audit, --summary-md, --events, learn --out */
	const char *own_outputs[4];
	struct plan_text warnings = {0};
	char self[4096], events_file[4096];
	struct halo_err e = {{0}};
	ssize_t n;
	int rc;

#ifndef RUNNER_MACOS
	/* A session's call connects first: its supervisor walks meanwhile. */
	runner_session_early(o);
#endif
	if ((rc = runner_load_policy(o, true, &re)) != 0)
		return rc;
	memset(&l, 0, sizeof(l));
	if ((rc = runner_ci_check(o)) != 0 || (rc = check_agent_options(o)) != 0 ||
	    (rc = settle_limits(o, re.policy, &l.limits)) != 0 ||
	    (rc = check_workspace(re.policy, re.workspace)) != 0)
		goto out;
	warn_unix_sockets(re.policy);
#ifndef RUNNER_MACOS
	/* The home set is the Linux launcher's (scan_home.c). Not at a session's calls:
	 * their output is the command's alone. */
	if (!o->session)
		runner_home_note(o, &re);
#endif
	{
		struct policy_upstream up;
		if ((rc = runner_upstream_settle(re.policy, &up)) != 0)
			goto out;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = 0;
	l.policy = re.policy;
	l.workspace = re.workspace;
	l.pw_home = re.pw_home;
	l.env_home = re.env_home;
#ifndef RUNNER_MACOS
	l.caller_path = getenv("PATH");
	l.caller_xdg_config = getenv("XDG_CONFIG_HOME");
	l.caller_xdg_data = getenv("XDG_DATA_HOME");
	l.caller_xdg_config_dirs = getenv("XDG_CONFIG_DIRS");
	l.caller_xdg_data_dirs = getenv("XDG_DATA_DIRS");
	l.caller_zdotdir = runner_zdotdir();
#endif
	l.self_exe = self;
	/* The layers in order, the managed file first (the events' start record). */
	const char *layers[RUNNER_MAX_POLICIES + 1];
	l.policy_files = layers;
	l.n_policy_files = runner_policy_layers(&re, layers);
	l.own_outputs = own_outputs;
	l.n_own_outputs = 0;
	if (o->audit) /* opened (created) by runner_supervise before the launch */
		own_outputs[l.n_own_outputs++] = o->audit;
	if (o->summary_md) /* the same */
		own_outputs[l.n_own_outputs++] = o->summary_md;
	if (o->learn && o->out_dir) /* learn --out: the same (runner_learn_new) */
		own_outputs[l.n_own_outputs++] = o->out_dir;
	if (o->events && strncmp(o->events, "fd:", 3) != 0) /* also opened by runner_supervise */
		own_outputs[l.n_own_outputs++] = o->events;
	else if ((rc = runner_events_fd_file(o->events, events_file, sizeof(events_file), &e)) <
		 0) {
		fprintf(stderr, "halo-run: %s\n", e.msg);
		rc = HALO_EXIT_SETUP;
		goto out;
	} else if (rc > 0) /* fd:N on a regular file: its name is masked as FILE's */
		own_outputs[l.n_own_outputs++] = events_file;
	l.facts = &facts;
	l.argv = o->rest;
	l.quiet = o->quiet;
	l.warnings = &warnings;
	l.unsandboxed = re.policy->mode == POLICY_MODE_OFF;
#ifndef RUNNER_MACOS
	l.learn = o->learn;
#endif
#ifdef RUNNER_MACOS
	/* The environment is built by the launcher once the proxy's port and secret are
	 * known (runner/run_macos.c supplies the builder). */
	rc = runner_macos_launch_fill(&l, self, sizeof(self));
	if (rc == 0)
		rc = runner_tls_prepare(o, re.policy, &l);
	if (rc == 0)
		rc = launch(o, &l);
	runner_tls_release();
	goto out;
#else
	l.egress_proxy = !l.unsandboxed;
	char *ssh_config = NULL; /* the sandbox's ssh route (linux/ssh_config.c) */
	/* Not for a session's call: it joins a sandbox that has one, or starts the session,
	 * which builds it then (session_call.c). */
	if (l.egress_proxy && (!o->session || o->dry_run) &&
	    linux_ssh_config_build(self, l.workspace, runner_ssh_agent_opted_in(re.policy),
				   &ssh_config, &l.ssh_config_len) == 0)
		l.ssh_config = ssh_config;
	l.session = o->session != NULL; /* --dry-run says what a session changes */
	char session_dir[4200];
	if (!o->dry_run)
		l.session_dir = runner_session_dir_made(session_dir, sizeof(session_dir));
	rc = runner_tls_prepare(o, re.policy, &l);
	if (rc == 0)
		rc = linux_environment(o, &re, &l);
	if (rc == 0)
		rc = launch(o, &l);
	runner_tls_release();
	free(ssh_config);
	runner_env_free(l.envp);
	runner_env_free(l.envp_direct);
	runner_caches_release(&caches);
#endif
out:
	plan_text_free(&warnings);
	runner_env_release(&re);
	return rc;
}
