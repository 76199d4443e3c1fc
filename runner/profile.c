/* `halo-run profile --os macos [--policy F]...`: the Seatbelt profile the macOS
 * launcher would apply, with its parameters, on any OS — so a user can read exactly
 * what will be enforced. And the hidden __exec subcommand: the macOS launcher's
 * trampoline, which sandbox-exec runs (macos/exec_child.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macos/macos.h"
#include "runner/runner_int.h"

static int lint(const struct macos_profile *p)
{
	const char **keys = calloc(p->n_params + 1, sizeof(*keys));
	char why[512];
	int rc;

	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_params; i++)
		keys[i] = p->params[i].key;
	rc = macos_sbpl_lint(p->text, keys, p->n_params, why, sizeof(why));
	free(keys);
	if (rc < 0)
		fprintf(stderr, "halo-run: the generated profile failed its own check: %s\n", why);
	return rc;
}

static int print_macos(const struct runner_env *re)
{
	char base[4096], tmpdir[4200], self[4096], note[12800];
	struct halo_err e = {{0}};
	struct macos_profile prof;
	const char *layers[RUNNER_MAX_POLICIES + 1];
	int rc;

	if (re->policy->mode == POLICY_MODE_OFF) {
		printf(";; sandbox.mode is off: no profile; the command would run unsandboxed "
		       "(limits and a clean environment only)\n");
		return 0;
	}
	if (macos_tmp_base(base, sizeof(base)) < 0)
		snprintf(base, sizeof(base), "/tmp");
	snprintf(tmpdir, sizeof(tmpdir), "%s/halo-run.XXXXXX", base);
	if (macos_self_exe(self, sizeof(self)) < 0)
		self[0] = '\0';
	struct macos_ttys ttys;
	macos_caller_ttys(&ttys); /* as a launch from here would name them */
	struct macos_profile_in in = {
	    .ttys = ttys.v,
	    .n_ttys = ttys.n,
	    .policy = re->policy,
	    .workspace = re->workspace,
	    .pw_home = re->pw_home,
	    .tmpdir = tmpdir,
	    .proxy_port = MACOS_EXAMPLE_PORT,
	    .self_exe = self[0] ? self : NULL,
	    .policy_files = layers,
	    .n_policy_files = runner_policy_layers(re, layers),
	};
	rc = macos_profile_build(&in, &prof, &e);
	if (rc < 0) {
		fprintf(stderr, "halo-run: %s\n", e.msg);
		return HALO_EXIT_SETUP;
	}
	if (lint(&prof) < 0) {
		macos_profile_free(&prof);
		return HALO_EXIT_SETUP;
	}
	snprintf(note, sizeof(note),
		 "policy: %s; workspace: %s; per run: the proxy port (here %u), TMPDIR (here "
		 "%s) and the caller's terminal (TTY_n) are chosen at launch",
		 re->policy->source ? re->policy->source : "?", re->workspace, MACOS_EXAMPLE_PORT,
		 tmpdir);
	macos_profile_write(&prof, note, stdout);
	macos_profile_free(&prof);
	return 0;
}

int runner_cmd_profile(const struct runner_opts *o)
{
	const char *os = o->os ? o->os : "macos";
	struct runner_env re;
	int rc;

	if (o->n_rest != 0) {
		fprintf(stderr, "halo-run: profile takes no operands: profile --os macos "
				"[--policy F]...\n");
		return HALO_EXIT_SETUP;
	}
	if (strcmp(os, "linux") == 0) {
		fprintf(stderr,
			"halo-run: profile --os linux: not applicable; the Linux sandbox "
			"is namespaces, mounts, Landlock and seccomp rather than a profile. "
			"Use halo-run --dry-run -- CMD to see its plan.\n");
		return HALO_EXIT_SETUP;
	}
	if (strcmp(os, "macos") != 0) {
		fprintf(stderr, "halo-run: profile --os %s: unknown OS (macos or linux)\n", os);
		return HALO_EXIT_SETUP;
	}
	if ((rc = runner_load_policy(o, true, &re)) != 0)
		return rc;
	rc = print_macos(&re);
	runner_env_release(&re);
	return rc;
}

int runner_cmd_exec_child(const struct runner_opts *o)
{
	macos_exec_child(o->n_rest, o->rest);
	fprintf(stderr, "halo-run: %s is internal to the macOS launcher\n", MACOS_EXEC_CHILD_WORD);
	return HALO_EXIT_SETUP;
}
