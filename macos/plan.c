/* The macOS launcher's plan (what --dry-run prints), and the list of what the macOS
 * backend does not enforce. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macos/macos_int.h"

static const char *const gaps[] = {
    "not yet run on a real Mac: the profile is generated and linted on Linux and the "
    "launcher is tested there with a fake sandbox-exec (README 'macOS' has the checklist "
    "for the first run on a Mac)",
    "no seccomp: there is no system-call filter; Seatbelt's operation rules are the only "
    "kernel-side check",
    "no pid, ipc or uts isolation: the command shares the host's process table (ps lists "
    "every process), hostname and IPC namespace; signals and process info are limited to "
    "the sandbox's own processes",
    "network: the profile allows outbound connections only to the proxy's port on "
    "localhost; DNS and per-domain rules exist only in the proxy, so a tool that ignores "
    "the proxy variables is blocked, not redirected",
    "the proxy listens on the host's 127.0.0.1, where other local processes can reach it: "
    "it requires the run's secret in Proxy-Authorization, and SOCKS5 is refused",
    "sandbox-exec is deprecated by Apple (it still works; Codex, Gemini CLI and Claude Code "
    "use it); without it halo-run refuses to run",
    "no nesting: halo-run cannot run inside another Seatbelt sandbox (Codex, Claude Code), "
    "and tools that sandbox themselves (SwiftPM manifests, Bazel's darwin-sandbox, Chrome) "
    "fail inside halo-run",
    "limits are setrlimit() per process (RLIMIT_NPROC counts every process of the user); "
    "there are no cgroups, and memory is RLIMIT_DATA, which macOS enforces only for some "
    "allocations (address space is not capped: that breaks V8, the JVM and Go)",
    "the persistence guard matches names (.git/hooks, .git/config, shell rc files, editor "
    "and agent settings): a core.hooksPath outside .git is not guarded",
    "path rules cover names, not inodes: a hard link to a protected file made before the "
    "run is readable through the link",
    "a protected file's name still shows in its directory's listing (its contents and "
    "metadata are denied)",
    "the command shares the caller's terminal: TIOCSTI input injection into it is not "
    "filtered",
    "processes that leave the command's process group (setsid, setpgid) outlive the "
    "wall-clock kill and the run",
    NULL,
};

const char *const *macos_gaps(void)
{
	return gaps;
}

struct line_to {
	struct halo_plan *p;
	struct plan_text *t;
};

static void add_line(void *arg, const char *text)
{
	struct line_to *lt = arg;

	plan_add(lt->p, lt->t, "%s", text);
}

static char **example_env(const struct macos_launch *l, const char *tmpdir, struct halo_err *e)
{
	char url[128];

	if (l->unsandboxed)
		return l->build_env(l->build_env_arg, NULL, tmpdir, e);
	snprintf(url, sizeof(url), "http://%s:SECRET@127.0.0.1:%u", MACOS_PROXY_USER,
		 MACOS_EXAMPLE_PORT);
	return l->build_env(l->build_env_arg, url, tmpdir, e);
}

static void plan_env(struct halo_plan *p, char **envp)
{
	plan_env_names(p, envp);
	for (size_t i = 0; envp && envp[i]; i++)
		free(envp[i]);
	free(envp);
}

static void plan_limits(struct halo_plan *p, const struct macos_launch *l)
{
	struct line_to lt = {p, &p->limits};

	rlimits_describe(&l->limits, false, NULL, add_line, &lt);
	if (l->limits.wall_seconds > 0)
		plan_add(p, &p->limits,
			 "wall clock %lld s (the command's process group is killed; exit %d)",
			 l->limits.wall_seconds, HALO_EXIT_TIMEOUT);
	p->limit_values.cpu_seconds = l->limits.cpu_seconds;
	p->limit_values.memory_bytes = l->limits.memory_bytes;
	p->limit_values.file_size_bytes = l->limits.file_size_bytes;
	p->limit_values.open_files = l->limits.open_files;
	p->limit_values.processes = l->limits.processes;
	p->limit_values.wall_seconds = l->limits.wall_seconds;
}

static void plan_sandboxed(struct halo_plan *p, const struct macos_launch *l, const char *sbx,
			   const char *tmpdir)
{
	plan_add(p, &p->egress.notes,
		 "launch: %s -p PROFILE -D KEY=VALUE... -- halo-run %s 3 4 -- COMMAND", sbx,
		 MACOS_EXEC_CHILD_WORD);
	plan_add(p, &p->egress.notes,
		 "proxy: 127.0.0.1:<ephemeral port>, HTTP only, Basic auth with a per-run secret "
		 "(in the proxy variables' URL)");
	plan_add(p, &p->egress.notes, "TMPDIR: %s (made for the run, removed at the end)", tmpdir);
	plan_add(p, &p->egress.listeners, "http 127.0.0.1:<ephemeral port>");
	p->egress.proxy = true;
	p->egress.host_ports = &l->policy->host_ports;
	p->gaps_title = "not enforced on macOS";
	for (const char *const *g = gaps; *g; g++)
		plan_add(p, &p->gaps, "%s", *g);
	if (l->policy->host_ports.n)
		plan_add(p, &p->gaps,
			 "egress.hostPorts: the command connects to the listed host ports directly "
			 "(no network namespace), so those connections are not audited");
	plan_layer_add(p, "seatbelt", NULL, true, true, "sandbox-exec with the profile below");
}

static int plan_profile(struct halo_plan *p, const struct macos_launch *l, const char *tmpdir,
			struct halo_err *e)
{
	struct macos_profile prof;
	struct macos_ttys ttys;

	macos_caller_ttys(&ttys);
	struct macos_profile_in in = {
	    .ttys = ttys.v,
	    .n_ttys = ttys.n,
	    .policy = l->policy,
	    .workspace = l->workspace,
	    .pw_home = l->pw_home,
	    .tmpdir = tmpdir,
	    .proxy_port = MACOS_EXAMPLE_PORT,
	    .self_exe = l->self_exe,
	    .policy_files = l->policy_files,
	    .n_policy_files = l->n_policy_files,
	    .own_outputs = l->own_outputs,
	    .n_own_outputs = l->n_own_outputs,
	};
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	/* The file rules go into the plan (the dry run lists them, --json included) and
	 * the profile is rendered from them, as a launch renders it. */
	if ((rc = macos_profile_plan(&in, p, e)) < 0)
		return rc;
	p->rules = true;
	if ((rc = macos_profile_render(&in, p, &prof, e)) < 0)
		return rc;
	plan_add(p, &p->extra, "profile:");
	if ((f = open_memstream(&text, &len))) {
		macos_profile_write(
		    &prof, "example values: each run picks its own proxy port and TMPDIR", f);
		fclose(f);
	}
	for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		plan_add(p, &p->extra, "%s", line);
	}
	free(text);
	macos_profile_free(&prof);
	return plan_ok(p);
}

int macos_plan(const struct macos_launch *l, struct halo_plan *p, struct halo_err *e)
{
	char base[PATH_MAX], tmpdir[PATH_MAX + 32];
	const char *sbx = l->sandbox_exec ? l->sandbox_exec : macos_sandbox_exec_path();
	char **envp;

	plan_init(p, "macos");
	if (l->tmp_base)
		snprintf(base, sizeof(base), "%s", l->tmp_base);
	else if (macos_tmp_base(base, sizeof(base)) < 0)
		snprintf(base, sizeof(base), "/tmp");
	snprintf(tmpdir, sizeof(tmpdir), "%s/halo-run.XXXXXX", base);
	plan_set(&p->title, "halo-run plan (macOS launcher: Seatbelt through %s)", sbx);
	p->policy_source = l->policy->source ? l->policy->source : "?";
	p->mode = policy_mode_name(l->policy->mode);
	p->workspace = l->workspace;
	p->argv = l->argv;
	p->sandboxed = !l->unsandboxed;
	if (!(envp = example_env(l, l->unsandboxed ? base : tmpdir, e)))
		return -ENOMEM;
	plan_limits(p, l);
	plan_env(p, envp);
	if (l->unsandboxed) {
		plan_add(p, &p->egress.notes,
			 "sandbox.mode is off: no profile and no proxy; the command runs "
			 "unsandboxed with the limits and the clean environment only");
		return plan_ok(p);
	}
	plan_sandboxed(p, l, sbx, tmpdir);
	return plan_profile(p, l, tmpdir, e);
}
