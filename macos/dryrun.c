/* --dry-run on macOS, and the list of what the macOS backend does not enforce. */
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

static const char *mode_name(enum policy_mode m)
{
	return m == POLICY_MODE_READ_ONLY ? "read-only"
	       : m == POLICY_MODE_OFF	  ? "off"
					  : "workspace-write";
}

static void put_line(void *arg, const char *text)
{
	fprintf((FILE *)arg, "  %s\n", text);
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

static void print_env(FILE *out, char **envp)
{
	fprintf(out, "environment:\n");
	for (size_t i = 0; envp && envp[i]; i++) {
		const char *eq = strchr(envp[i], '=');
		fprintf(out, "  %.*s\n", eq ? (int)(eq - envp[i]) : (int)strlen(envp[i]), envp[i]);
		free(envp[i]);
	}
	free(envp);
}

int macos_dry_run(const struct macos_launch *l, FILE *out, struct halo_err *e)
{
	struct macos_profile prof;
	char base[PATH_MAX], tmpdir[PATH_MAX + 32];
	const char *sbx = l->sandbox_exec ? l->sandbox_exec : macos_sandbox_exec_path();
	char **envp;
	int rc;

	if (l->tmp_base)
		snprintf(base, sizeof(base), "%s", l->tmp_base);
	else if ((rc = macos_tmp_base(base, sizeof(base))) < 0)
		snprintf(base, sizeof(base), "/tmp");
	snprintf(tmpdir, sizeof(tmpdir), "%s/halo-run.XXXXXX", base);
	fprintf(out, "halo-run plan (macOS launcher: Seatbelt through %s)\n", sbx);
	fprintf(out, "policy: %s\nmode: %s\nworkspace: %s\n",
		l->policy->source ? l->policy->source : "?", mode_name(l->policy->mode),
		l->workspace ? l->workspace : "?");
	fprintf(out, "command:");
	for (size_t i = 0; l->argv && l->argv[i]; i++)
		fprintf(out, " %s", l->argv[i]);
	fprintf(out, "\n");
	if (!(envp = example_env(l, l->unsandboxed ? base : tmpdir, e)))
		return -ENOMEM;
	fprintf(out, "limits:\n");
	rlimits_describe(&l->limits, false, NULL, put_line, out);
	if (l->limits.wall_seconds > 0)
		fprintf(out,
			"  wall clock %lld s (the command's process group is killed; exit %d)\n",
			l->limits.wall_seconds, HALO_EXIT_TIMEOUT);
	print_env(out, envp);
	if (l->unsandboxed) {
		fprintf(out, "sandbox.mode is off: no profile and no proxy; the command runs "
			     "unsandboxed with the limits and the clean environment only\n");
		return 0;
	}
	fprintf(out,
		"launch: %s -p PROFILE -D KEY=VALUE... -- halo-run %s 3 4 -- COMMAND\n"
		"proxy: 127.0.0.1:<ephemeral port>, HTTP only, Basic auth with a per-run "
		"secret (in the proxy variables' URL)\n"
		"TMPDIR: %s (made for the run, removed at the end)\n"
		"not enforced on macOS:\n",
		sbx, MACOS_EXEC_CHILD_WORD, tmpdir);
	for (const char *const *g = gaps; *g; g++)
		fprintf(out, "  - %s\n", *g);
	if (l->policy->host_ports.n)
		fprintf(out, "  - egress.hostPorts: the command connects to the listed host ports "
			     "directly (no network namespace), so those connections are not "
			     "audited\n");
	struct macos_profile_in in = {
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
	if ((rc = macos_profile_build(&in, &prof, e)) < 0)
		return rc;
	fprintf(out, "profile:\n");
	macos_profile_write(&prof, "example values: each run picks its own proxy port and TMPDIR",
			    out);
	macos_profile_free(&prof);
	return 0;
}
