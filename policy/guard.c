/* The persistence guard's names: files and directories that run code later when a
 * shell, git, an editor or an agent starts in the tree. Their contents stay read-only
 * and they cannot be moved, removed or replaced (.git is handled apart: hooks and
 * config). The one list: linux/ (the launch scan) and macos/ (the profile) both take
 * it from here; the README's guard table says why each is here. */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "policy/policy_int.h"

static const char *const guard_names[] = {
    ".bashrc",	 ".bash_profile", ".bash_login", ".bash_logout", ".profile",   ".zshrc",
    ".zprofile", ".zshenv",	  ".zlogin",	 ".zlogout",	 ".gitconfig", ".gitmodules",
    ".envrc",	 ".ripgreprc",	  ".vscode",	 ".idea",	 ".mcp.json",  ".claude",
    ".codex",	 ".gemini",	  ".cursor",
};

const char *const *policy_guard_names(size_t *n)
{
	*n = sizeof(guard_names) / sizeof(guard_names[0]);
	return guard_names;
}

bool policy_guard_name(const char *name)
{
	if (name[0] != '.') /* every guard name is a dot file: most names stop here */
		return false;
	for (size_t i = 0; i < sizeof(guard_names) / sizeof(guard_names[0]); i++)
		if (policy_name_eq(name, guard_names[i]))
			return true;
	return false;
}
