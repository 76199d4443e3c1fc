/* The system directories: the one list that policy validation (writableRoots), the
 * runner's workspace check and the Linux launch scan (a writable root that resolves
 * into one) all refuse. Compared case-insensitively, as every path rule of validation
 * is (a case-insensitive volume has one file there). */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "policy/policy_int.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Never writable, nor anything inside them, nor any directory containing them. The
 * first N_OS_TREES are the operating system itself (policy_os_tree_of). */
#define N_OS_TREES 12
static const char *const system_trees[] = {
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/boot",
    "/dev",
    "/proc",
    "/sys",
    "/run",
    "/var/run",
    "/var/lib",
    "/var/spool",
    "/var/log",
    "/var/db",
    "/System",
    "/Library",
    "/private/etc",
    "/private/var/db",
    "/private/var/run",
    "/nix/store",
};

/* Never writable as a whole, nor any directory containing them; a subdirectory
 * of their own (a build cache in /opt/cache or /var/tmp/ci) is fine. */
static const char *const system_dirs[] = {
    "/var",   "/var/tmp", "/var/cache",	  "/opt",	  "/srv",	   "/tmp",     "/mnt",
    "/media", "/private", "/private/var", "/private/tmp", "/Applications", "/Volumes",
};

const char *const *policy_system_trees(size_t *n)
{
	*n = N(system_trees);
	return system_trees;
}

const char *const *policy_system_dirs(size_t *n)
{
	*n = N(system_dirs);
	return system_dirs;
}

bool policy_is_system_dir(const char *path)
{
	if (strcmp(path, "/") == 0)
		return true;
	for (size_t i = 0; i < N(system_trees); i++)
		if (strcasecmp(path, system_trees[i]) == 0)
			return true;
	for (size_t i = 0; i < N(system_dirs); i++)
		if (strcasecmp(path, system_dirs[i]) == 0)
			return true;
	return false;
}

const char *policy_os_tree_of(const char *path)
{
	for (size_t i = 0; i < N_OS_TREES; i++)
		if (policy_path_within(path, system_trees[i]))
			return system_trees[i];
	return NULL;
}

/* "/", "/var" and the operating system's trees and anything inside them (as
 * validation refuses a writable root there: `cd /usr/share && halo-run` made
 * /usr/share writable to a root caller). /tmp, /opt, /srv and /var's scratch places
 * stay usable. */
bool policy_workspace_refused(const char *ws)
{
	return strcmp(ws, "/") == 0 || strcmp(ws, "/var") == 0 || policy_os_tree_of(ws) != NULL;
}

const char *policy_system_tree_of(const char *path)
{
	for (size_t i = 0; i < N(system_trees); i++)
		if (policy_path_within(path, system_trees[i]))
			return system_trees[i];
	return NULL;
}
