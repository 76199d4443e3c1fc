/* The profile's section 5, always denied whatever the policy: container runtimes
 * (their sockets are a root shell on the host), session services, and the
 * persistence targets (halo-run's own files; with the guard, shell start-up files,
 * editor and agent settings, git hooks and config, LaunchAgents). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "macos/profile_int.h"

/* git runs code later through hooks and config, in any repository, its submodules'
 * git dirs and its linked work trees' dirs: one regex per name of policy_git_guards
 * (the one list; hooks with its subtree). Folded when emitted. A git directory told
 * only by what it holds (a bare repository) has no name a static profile can match:
 * a gap of the SBPL rendering, said in the README. */
int macos_guard_git_regex(size_t i, char *out, size_t n)
{
	size_t ng;
	const struct policy_git_guard *g = policy_git_guards(&ng);
	char name[64];
	size_t o = 0;

	if (i >= ng)
		return -ENOENT;
	for (const char *s = g[i].name; *s && o + 3 < sizeof(name); s++) {
		if (*s == '.')
			name[o++] = '\\';
		name[o++] = *s;
	}
	name[o] = '\0';
	if ((size_t)snprintf(out, n, "/\\.git/((modules|worktrees)/.+/)?%s%s", name,
			     g[i].subtree ? "(/.*)?$" : "$") >= n)
		return -ENAMETOOLONG;
	return 0;
}

/* Container runtimes: their sockets are a root shell on the host (or in its VM). */
static const char *const runtime_literals[] = {
    "/var/run/docker.sock",
    "/private/var/run/docker.sock",
    "/var/run/docker.sock.raw",
    "/private/var/run/docker.sock.raw",
};
static const char *const runtime_subpaths[] = {
    "/var/run/docker",	       "/private/var/run/docker", "/var/run/podman",
    "/private/var/run/podman", "/Users/Shared/.docker",
};
static const char *const runtime_home[] = {
    ".docker/run", ".docker/desktop",
    ".colima",	   ".orbstack/run",
    ".rd",	   ".local/share/containers/podman",
    ".podman",	   "Library/Containers/com.docker.docker",
};

/* ---------------------------------------------------------------- 5. always denied */

static const char *const denied_services[] = {
    "(deny mach-lookup (with message \"" MACOS_DENY_MESSAGE "\")",
    "  (global-name-prefix \"com.docker.\")",
    "  (global-name-prefix \"dev.kdrag0n.OrbStack\")",
    "  (global-name \"com.apple.coreservices.appleevents\")",
    "  (global-name \"com.apple.coreservices.launchservicesd\")",
    "  (global-name-prefix \"com.apple.pasteboard.\")",
    "  (global-name-prefix \"com.apple.windowserver\")",
    "  (global-name \"com.apple.tccd\")",
    "  (global-name \"com.apple.tccd.system\")",
    "  (global-name-prefix \"com.apple.xpc.launchd.\")",
    "  (global-name \"com.apple.SecurityServer\")",
    "  (global-name \"com.apple.securityd.xpc\"))",
    "(deny ipc-posix-shm (with message \"" MACOS_DENY_MESSAGE "\") (ipc-posix-name-prefix "
    "\"docker\"))",
    "(deny appleevent-send lsopen (with message \"" MACOS_DENY_MESSAGE "\"))",
    NULL,
};

void profile_runtimes(struct pctx *c)
{
	struct sbpl *b = &c->b;
	struct strs keys = {0};
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(runtime_home) / sizeof(runtime_home[0]); i++) {
		pctx_home_path(c, runtime_home[i], path, sizeof(path));
		pctx_spell(c, "RUNTIME", path, "container runtime path", &keys, NULL);
	}
	sbpl_add(b, "(deny file-read* file-write* (with message \"" MACOS_DENY_MESSAGE "\")");
	for (size_t i = 0; i < sizeof(runtime_literals) / sizeof(runtime_literals[0]); i++)
		sbpl_addf(b, "\n  (literal \"%s\")", runtime_literals[i]);
	for (size_t i = 0; i < sizeof(runtime_subpaths) / sizeof(runtime_subpaths[0]); i++)
		sbpl_addf(b, "\n  (subpath \"%s\")", runtime_subpaths[i]);
	for (size_t i = 0; i < keys.n; i++) {
		sbpl_add(b, "\n  ");
		sbpl_param_filter(b, "subpath", keys.v[i]);
	}
	/* connect() to a unix socket is a network operation: file rules do not stop it.
	 * A socket the policy names is carved out. */
	sbpl_add(b, ")\n(deny network-outbound (with message \"" MACOS_DENY_MESSAGE "\")");
	if (c->socket_keys.n) {
		sbpl_add(b, "\n (require-all");
		for (size_t i = 0; i < c->socket_keys.n; i++) {
			sbpl_add(b, "\n  (require-not (remote unix-socket ");
			sbpl_param_filter(b, "path-literal", c->socket_keys.v[i]);
			sbpl_add(b, "))");
		}
		sbpl_add(b, "\n  (require-any");
	}
	for (size_t i = 0; i < sizeof(runtime_literals) / sizeof(runtime_literals[0]); i++)
		sbpl_addf(b, "\n  (remote unix-socket (path-literal \"%s\"))", runtime_literals[i]);
	for (size_t i = 0; i < sizeof(runtime_subpaths) / sizeof(runtime_subpaths[0]); i++)
		sbpl_addf(b, "\n  (remote unix-socket (subpath \"%s\"))", runtime_subpaths[i]);
	for (size_t i = 0; i < keys.n; i++) {
		sbpl_add(b, "\n  (remote unix-socket ");
		sbpl_param_filter(b, "subpath", keys.v[i]);
		sbpl_add(b, ")");
	}
	sbpl_add(b, c->socket_keys.n ? ")))\n" : ")\n");
	pctx_strs_free(&keys);
}

void profile_persistence(struct pctx *c, bool guard)
{
	struct sbpl *b = &c->b;
	struct strs keys = {0};
	char path[PATH_MAX];

	/* halo-run's own binary, policy and configuration: always, guard or not. */
	sbpl_add(b, "(deny file-write* (with message \"" MACOS_DENY_MESSAGE "\")");
	for (size_t i = 0; i < c->halo_keys.n; i++) {
		sbpl_add(b, "\n  ");
		sbpl_param_filter(b, "literal", c->halo_keys.v[i]);
	}
	for (size_t i = 0; i < c->halo_dir_keys.n; i++) {
		sbpl_add(b, "\n  ");
		sbpl_param_filter(b, "subpath", c->halo_dir_keys.v[i]);
	}
	sbpl_add(b, "\n  (subpath \"/etc/halo\")\n  (subpath \"/private/etc/halo\"))\n");
	if (!guard) {
		sbpl_add(b, ";; persistence guard: off (sandbox.guardPersistence: false)\n");
		return;
	}
	pctx_home_path(c, "Library/LaunchAgents", path, sizeof(path));
	pctx_spell(c, "GUARD", path, "LaunchAgents", &keys, NULL);
	sbpl_add(b, "(deny file-write* (with message \"" MACOS_DENY_MESSAGE "\")");
	size_t n_guard; /* persistence targets: policy's guard names, as path components */
	const char *const *guard_names = policy_guard_names(&n_guard);
	for (size_t i = 0; i < n_guard; i++) {
		sbpl_add(b, "\n  ");
		sbpl_regex(b, macos_glob_regex, guard_names[i], "guard name");
	}
	char re[160];
	for (size_t i = 0; macos_guard_git_regex(i, re, sizeof(re)) == 0; i++) {
		sbpl_add(b, "\n  ");
		sbpl_regex(b, macos_regex_fold, re, "guard regex");
	}
	for (size_t i = 0; i < keys.n; i++) {
		sbpl_add(b, "\n  ");
		sbpl_param_filter(b, "subpath", keys.v[i]);
	}
	sbpl_add(b, ")\n");
	pctx_strs_free(&keys);
}

/* Every terminal but the caller's own (c->tty_keys) and those the command opened
 * itself (the pty extension): the broad read rule would otherwise reach them. */
void profile_other_ttys(struct pctx *c)
{
	struct sbpl *b = &c->b;

	sbpl_add(b, "(deny file-read* file-write* file-ioctl (with message \"" MACOS_DENY_MESSAGE
		    "\")\n  (require-all (regex #\"^/dev/ttys[0-9]+$\")\n    (require-not "
		    "(extension \"com.apple.sandbox.pty\"))");
	for (size_t i = 0; i < c->tty_keys.n; i++) {
		sbpl_add(b, "\n    (require-not ");
		sbpl_param_filter(b, "literal", c->tty_keys.v[i]);
		sbpl_add(b, ")");
	}
	sbpl_add(b, "))\n");
}

void profile_denied_services(struct pctx *c)
{
	for (const char *const *l = denied_services; *l; l++) {
		sbpl_add(&c->b, *l);
		sbpl_add(&c->b, "\n");
	}
}
