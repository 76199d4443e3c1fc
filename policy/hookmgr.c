/* Hook managers: a hook git runs may be a manager's shim that runs what files in the
 * work tree say (pre-commit's .pre-commit-config.yaml, lefthook's lefthook.yml and
 * .lefthook/, overcommit's .overcommit.yml and .git-hooks/), and husky's hooksPath
 * `.husky/_` runs the scripts in `.husky/`. Those files run code on the host at the
 * next commit as surely as .git/hooks does, so where such a shim is installed they are
 * guarded like the hooks themselves: by the launch scan (linux/scan_git.c) and by the
 * hook's file tools (hook/files_git.c), from this one table. Pure. */
#include <string.h>

#include "policy/policy_int.h"

static const char *const precommit_files[] = {".pre-commit-config.yaml", NULL};
/* lefthook 2.x reads a main config and a local one (merged over it), each by any of
 * these names and formats (checked with lefthook 2.2.2), and runs scripts from its two
 * source dirs. */
#define LEFTHOOK_NAMES(base) base ".yml", base ".yaml", base ".json", base ".jsonc", base ".toml"
static const char *const lefthook_files[] = {LEFTHOOK_NAMES("lefthook"),
					     LEFTHOOK_NAMES(".lefthook"),
					     LEFTHOOK_NAMES(".config/lefthook"),
					     LEFTHOOK_NAMES("lefthook-local"),
					     LEFTHOOK_NAMES(".lefthook-local"),
					     LEFTHOOK_NAMES(".config/lefthook-local"),
					     ".lefthook",
					     ".lefthook-local",
					     NULL};
static const char *const overcommit_files[] = {".overcommit.yml", ".git-hooks", NULL};

/* The marker is a string every shim of that manager holds. */
static const struct policy_hook_manager managers[] = {
    {"pre-commit", "pre-commit.com", precommit_files},
    {"pre-commit", "hook-impl", precommit_files},
    {"lefthook", "lefthook", lefthook_files},
    {"overcommit", "overcommit", overcommit_files},
};

/* git's hooks (githooks(5)) that a manager installs a shim as. */
static const char *const hook_names[] = {"applypatch-msg",
					 "pre-applypatch",
					 "post-applypatch",
					 "pre-commit",
					 "pre-merge-commit",
					 "prepare-commit-msg",
					 "commit-msg",
					 "post-commit",
					 "pre-rebase",
					 "post-checkout",
					 "post-merge",
					 "pre-push",
					 "pre-auto-gc",
					 "post-rewrite",
					 "sendemail-validate",
					 "push-to-checkout",
					 "reference-transaction",
					 "post-index-change",
					 NULL};

const char *const *policy_git_hook_names(void)
{
	return hook_names;
}

const struct policy_hook_manager *policy_hook_manager_of(const char *text, size_t len)
{
	for (size_t m = 0; m < sizeof(managers) / sizeof(managers[0]); m++)
		if (memmem(text, len, managers[m].marker, strlen(managers[m].marker)))
			return &managers[m];
	return NULL;
}

size_t policy_hook_manager_config(const char *text, size_t len, char *out, size_t n)
{
	static const char key[] = "--config=";
	const char *p = memmem(text, len, key, sizeof(key) - 1);
	size_t k;

	if (!p || n == 0)
		return 0;
	p += sizeof(key) - 1;
	k = 0;
	while (p + k < text + len && !strchr(" \t\r\n\"')`;$|&", p[k]) && p[k])
		k++;
	/* Absolute or climbing too: pre-commit reads it wherever it is, and a writable
	 * tree may hold it (the caller resolves it against the work tree). */
	if (k == 0 || k >= n)
		return 0;
	memcpy(out, p, k);
	out[k] = '\0';
	return k;
}

bool policy_hook_manager_file(const char *rel)
{
	for (size_t m = 0; m < sizeof(managers) / sizeof(managers[0]); m++)
		for (const char *const *f = managers[m].files; *f; f++) {
			size_t k = strlen(*f);
			if (policy_name_eqn(rel, *f, k) && (rel[k] == '\0' || rel[k] == '/'))
				return true;
		}
	return false;
}

bool policy_hooks_dir_sources_parent(const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return n >= 2 && dir[n - 1] == '_' && dir[n - 2] == '/';
}
