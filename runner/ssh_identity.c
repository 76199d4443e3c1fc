/* GIT_SSH_COMMAND and GIT_SSH pass into the sandbox (env/env.c), and ssh still goes
 * through the sandbox's ssh_config and the proxy. An identity file they name that the
 * sandbox cannot see would fail inside with a bare "no such identity": one line, before
 * the launch, says why and what to do. Not seeing it: beneath /tmp or /run (the
 * sandbox's own, fresh) outside every writable tree, or a protected path (the
 * credential floor masks ~/.ssh) not carved out by sandbox.allowRead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "runner/runner_int.h"

static bool within_any(const char *path, const struct policy_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (policy_path_within(path, l->items[i]))
			return true;
	return false;
}

static void judge(const char *file, const struct halo_policy *p, const char *workspace,
		  const char *home, const char *var)
{
	char path[4096];
	struct stat st;

	if (file[0] == '~' && file[1] == '/' && home)
		snprintf(path, sizeof(path), "%s/%s", home, file + 2);
	else if (file[0] == '/')
		snprintf(path, sizeof(path), "%s", file);
	else
		return; /* relative: the workspace's, seen inside */
	if (stat(path, &st) != 0 || policy_path_within(path, workspace) ||
	    within_any(path, &p->writable_abs))
		return;
	if (policy_path_within(path, "/tmp") || policy_path_within(path, "/run"))
		runner_say("%s names the identity file %s, which the sandbox cannot see: its "
			   "/tmp and /run are its own (put the key in the workspace, or in "
			   "ssh-agent with its socket in sandbox.unixSockets)",
			   var, path);
	else if (within_any(path, &p->protected_abs) && !within_any(path, &p->allow_read_abs))
		runner_say("%s names the identity file %s, a protected path masked inside "
			   "the sandbox (ssh-agent with its socket in sandbox.unixSockets keeps "
			   "the key out of the command's reach; sandbox.allowRead exposes it)",
			   var, path);
}

void runner_ssh_identity_note(char *const *envp, const struct halo_policy *p, const char *workspace,
			      const char *home)
{
	static const char name[] = "GIT_SSH_COMMAND=";

	for (size_t i = 0; envp && envp[i]; i++) {
		char *copy, *save = NULL, *tok;
		bool next_is_key = false;
		if (strncmp(envp[i], name, sizeof(name) - 1) != 0)
			continue;
		if (!(copy = strdup(envp[i] + sizeof(name) - 1)))
			return;
		for (char *c = copy; *c; c++) /* quotes as blanks: words stay words */
			if (*c == '\'' || *c == '"')
				*c = ' ';
		for (tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
			if (next_is_key)
				judge(tok, p, workspace, home, "GIT_SSH_COMMAND");
			next_is_key = strcmp(tok, "-i") == 0;
			if (strncmp(tok, "-i", 2) == 0 && tok[2])
				judge(tok + 2, p, workspace, home, "GIT_SSH_COMMAND");
			else if (strncasecmp(tok, "IdentityFile=", 13) == 0)
				judge(tok + 13, p, workspace, home, "GIT_SSH_COMMAND");
		}
		free(copy);
	}
}
