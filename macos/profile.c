/* The Seatbelt profile, in the recipe's order: (version 1) (deny default), then
 *   1. processes, sysctl, IPC, mach services, terminals
 *   2. reads (broad)
 *   3. writes: workspace, writable roots, this run's TMPDIR — with the protected and
 *      guarded paths carved out inside the allow itself (require-not), so that even an
 *      ordering mistake cannot reopen them
 *   4. network: outbound to localhost:<proxy port> only
 *   5. always denied: container runtimes, session services, persistence targets
 *   6. protected paths, last: no read, no write, no unlink; their ancestors inside
 *      writable trees cannot be renamed away.
 * Seatbelt applies the last matching rule among filtered ones, so every deny comes
 * after every allow; macos_sbpl_lint checks that. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macos/macos_int.h"

struct strs {
	char **v;
	size_t n;
};

struct pctx {
	const struct macos_profile_in *in;
	struct sbpl b;
	struct strs trees;     /* writable trees, every spelling */
	struct strs tree_keys; /* their parameters, same order */
	struct strs prot;      /* protected absolute paths, every spelling */
	struct strs prot_keys;
	struct strs ancestors;	   /* of protected paths, inside writable trees */
	struct strs regexes;	   /* glob sources: the protected name patterns */
	struct strs allow_keys;	   /* sandbox.allowRead carve-outs, every spelling */
	struct strs halo_keys;	   /* halo-run's own files: literal */
	struct strs halo_dir_keys; /* halo-run's config directories: subpath */
	struct strs socket_keys;   /* sandbox.unixSockets */
};

/* git runs code later through hooks and config, in any repository, its submodules'
 * git dirs and its linked work trees' dirs. Lower case: folded when emitted. */
static const char *const guard_git_regexes[] = {
    "/\\.git/((modules|worktrees)/.+/)?hooks(/.*)?$",
    "/\\.git/((modules|worktrees)/.+/)?config(\\.worktree)?$",
    /* A commondir file moves config and hooks to the directory it names. */
    "/\\.git/((modules|worktrees)/.+/)?commondir$",
};

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

static void strs_add(struct pctx *c, struct strs *s, const char *v)
{
	char **nv;

	if (!v || c->b.err)
		return;
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], v) == 0)
			return;
	nv = realloc(s->v, (s->n + 1) * sizeof(*nv));
	if (!nv || !(nv[s->n] = strdup(v))) {
		if (nv)
			s->v = nv;
		sbpl_fail(&c->b, -ENOMEM, "out of memory");
		return;
	}
	s->v = nv;
	s->n++;
}

static void strs_free(struct strs *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static bool within(const char *path, const char *dir)
{
	size_t k = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return true;
	return strncmp(path, dir, k) == 0 && (path[k] == '\0' || path[k] == '/');
}

/* Define a parameter for every spelling of `path`; keys (and spellings) appended. */
static void spell(struct pctx *c, const char *prefix, const char *path, const char *what,
		  struct strs *keys, struct strs *paths)
{
	char sp[2][PATH_MAX], why[160];
	int n;

	if (c->b.err)
		return;
	if (macos_path_check(path, why, sizeof(why)) < 0) {
		sbpl_fail(&c->b, -EINVAL, "%s '%s' %s", what, path, why);
		return;
	}
	n = macos_spellings(c->in->resolve, path, sp);
	if (n < 0) {
		sbpl_fail(&c->b, n, "%s '%s' is too long", what, path);
		return;
	}
	for (int i = 0; i < n; i++) {
		strs_add(c, keys, sbpl_param(&c->b, prefix, sp[i], what));
		if (paths)
			strs_add(c, paths, sp[i]);
	}
}

static void home_path(struct pctx *c, const char *rel, char *out, size_t n)
{
	int w = snprintf(out, n, "%s/%s", c->in->pw_home, rel);

	if (w < 0 || (size_t)w >= n)
		sbpl_fail(&c->b, -ENAMETOOLONG, "home directory path is too long");
}

/* Every path the rules below name, defined up front so that parameter numbers follow
 * the policy's order. */
static void collect(struct pctx *c)
{
	const struct macos_profile_in *in = c->in;
	const struct halo_policy *p = in->policy;
	char path[PATH_MAX];

	if (p->mode == POLICY_MODE_WORKSPACE_WRITE && in->workspace)
		spell(c, "WORKSPACE", in->workspace, "the workspace", &c->tree_keys, &c->trees);
	for (size_t i = 0; i < p->writable_abs.n; i++)
		spell(c, "WRITABLE", p->writable_abs.items[i], "writable root", &c->tree_keys,
		      &c->trees);
	if (in->tmpdir)
		spell(c, "TMPDIR", in->tmpdir, "TMPDIR", &c->tree_keys, &c->trees);
	for (size_t i = 0; i < p->protected_abs.n; i++)
		spell(c, "PROTECTED", p->protected_abs.items[i], "protected path", &c->prot_keys,
		      &c->prot);
	for (size_t i = 0; i < p->protected_globs.n; i++)
		strs_add(c, &c->regexes, p->protected_globs.items[i]);
	for (size_t i = 0; i < p->allow_read_abs.n; i++)
		spell(c, "ALLOW_READ", p->allow_read_abs.items[i], "allowRead carve-out",
		      &c->allow_keys, NULL);
	if (in->self_exe && in->self_exe[0])
		spell(c, "HALO_FILE", in->self_exe, "halo-run's own binary", &c->halo_keys, NULL);
	for (size_t i = 0; i < in->n_policy_files; i++) {
		const char *f = in->policy_files[i];
		char abs[PATH_MAX];
		/* A relative --policy names a file in the cwd. */
		if (f[0] != '/' && realpath(f, abs))
			f = abs;
		spell(c, "HALO_FILE", f, "policy file", &c->halo_keys, NULL);
	}
	/* halo-run's own output files (--audit): never read, written, unlinked or renamed,
	 * wherever they lie, as a protected path is; their ancestors inside writable trees
	 * cannot be renamed either (collect_ancestors). */
	for (size_t i = 0; i < in->n_own_outputs; i++) {
		const char *f = in->own_outputs[i];
		char abs[PATH_MAX];
		if (f[0] != '/' && realpath(f, abs))
			f = abs;
		spell(c, "PROTECTED", f, "halo-run's own output file", &c->prot_keys, &c->prot);
	}
	home_path(c, ".config/halo", path, sizeof(path));
	spell(c, "HALO_DIR", path, "halo-run's configuration directory", &c->halo_dir_keys, NULL);
}

/* Ancestors of each protected path that lie inside a writable tree (the tree itself
 * included): renaming one would carry the protected path out from under its rule. */
static void collect_ancestors(struct pctx *c)
{
	for (size_t i = 0; i < c->prot.n; i++)
		for (size_t t = 0; t < c->trees.n; t++) {
			char a[PATH_MAX];
			if (!within(c->prot.v[i], c->trees.v[t]) ||
			    strcmp(c->prot.v[i], c->trees.v[t]) == 0)
				continue;
			snprintf(a, sizeof(a), "%s", c->prot.v[i]);
			for (char *s = strrchr(a, '/'); s && s > a; s = strrchr(a, '/')) {
				*s = '\0';
				if (!within(a, c->trees.v[t]))
					break;
				strs_add(
				    c, &c->ancestors,
				    sbpl_param(&c->b, "ANCESTOR", a, "protected path's parent"));
			}
		}
}

/* ---------------------------------------------------------------- 1. basics */

static const char *const basics[] = {
    ";; 1. processes, sysctl, IPC, mach services, terminals",
    "(allow process-fork)",
    "(allow process-exec)",
    "(allow signal (target same-sandbox))",
    "(allow process-info* (target same-sandbox))",
    "(allow sysctl-read",
    "  (sysctl-name-prefix \"hw.\")",
    "  (sysctl-name-prefix \"kern.os\")",
    "  (sysctl-name-prefix \"kern.proc.pid.\")",
    "  (sysctl-name-prefix \"kern.proc.pgrp.\")",
    "  (sysctl-name \"kern.argmax\")",
    "  (sysctl-name \"kern.hostname\")",
    "  (sysctl-name \"kern.maxfilesperproc\")",
    "  (sysctl-name \"kern.maxproc\")",
    "  (sysctl-name \"kern.usrstack64\")",
    "  (sysctl-name \"kern.version\")",
    "  (sysctl-name \"machdep.cpu.brand_string\")",
    "  (sysctl-name \"sysctl.proc_cputype\")",
    "  (sysctl-name \"vm.loadavg\"))",
    "(allow sysctl-write (sysctl-name \"kern.grade_cputype\"))",
    "(allow ipc-posix-sem)",
    "(allow ipc-posix-shm-read* (ipc-posix-name-prefix \"apple.cfprefs.\"))",
    "(allow ipc-posix-shm (ipc-posix-name-prefix \"__KMP_REGISTERED_LIB_\"))",
    "(allow iokit-open (iokit-registry-entry-class \"RootDomainUserClient\"))",
    "(allow user-preference-read)",
    "(allow mach-lookup",
    "  (global-name \"com.apple.system.opendirectoryd.libinfo\")",
    "  (global-name \"com.apple.system.opendirectoryd.membership\")",
    "  (global-name \"com.apple.cfprefsd.daemon\")",
    "  (global-name \"com.apple.cfprefsd.agent\")",
    "  (global-name \"com.apple.bsd.dirhelper\")",
    "  (global-name \"com.apple.sysmond\"))",
    "(allow pseudo-tty)",
    "(allow file-read* file-write* file-ioctl (literal \"/dev/ptmx\") (literal \"/dev/tty\"))",
    "(allow file-read* file-write*",
    "  (require-all (regex #\"^/dev/ttys[0-9]+$\") (extension \"com.apple.sandbox.pty\")))",
    "(allow file-write-data file-ioctl",
    "  (require-all (regex #\"^/dev/ttys[0-9]+$\") (vnode-type CHARACTER-DEVICE)))",
    "",
    ";; 2. reads: everywhere; the protected paths are denied at the end",
    "(allow file-read*)",
    NULL,
};

static void lines(struct sbpl *b, const char *const *l)
{
	for (; *l; l++) {
		sbpl_add(b, *l);
		sbpl_add(b, "\n");
	}
}

/* ---------------------------------------------------------------- 3. writes */

static void carve_outs(struct pctx *c, bool guard)
{
	struct sbpl *b = &c->b;
	size_t n_guard; /* persistence targets: policy's guard names, as path components */
	const char *const *guard_names = policy_guard_names(&n_guard);

	for (size_t i = 0; i < c->prot_keys.n; i++) {
		sbpl_add(b, "\n    (require-not ");
		sbpl_param_filter(b, "literal", c->prot_keys.v[i]);
		sbpl_add(b, ")\n    (require-not ");
		sbpl_param_filter(b, "subpath", c->prot_keys.v[i]);
		sbpl_add(b, ")");
	}
	for (size_t i = 0; i < c->regexes.n; i++) {
		sbpl_add(b, "\n    (require-not ");
		sbpl_regex(b, macos_glob_regex, c->regexes.v[i], "protected pattern");
		sbpl_add(b, ")");
	}
	for (size_t i = 0; i < c->halo_keys.n; i++) {
		sbpl_add(b, "\n    (require-not ");
		sbpl_param_filter(b, "literal", c->halo_keys.v[i]);
		sbpl_add(b, ")");
	}
	for (size_t i = 0; guard && i < n_guard; i++) {
		sbpl_add(b, "\n    (require-not ");
		sbpl_regex(b, macos_glob_regex, guard_names[i], "guard name");
		sbpl_add(b, ")");
	}
	for (size_t i = 0; guard && i < sizeof(guard_git_regexes) / sizeof(guard_git_regexes[0]);
	     i++) {
		sbpl_add(b, "\n    (require-not ");
		sbpl_regex(b, macos_regex_fold, guard_git_regexes[i], "guard regex");
		sbpl_add(b, ")");
	}
}

static void writes(struct pctx *c, bool guard)
{
	struct sbpl *b = &c->b;

	sbpl_add(b,
		 "\n;; 3. writes: the workspace, writable roots and this run's TMPDIR, minus the "
		 "protected\n;;    and guarded paths (carved out here too, so no rule order can "
		 "reopen them)\n");
	if (c->tree_keys.n) {
		sbpl_add(b, "(allow file-write*\n  (require-all\n    (require-any");
		for (size_t i = 0; i < c->tree_keys.n; i++) {
			sbpl_add(b, "\n      ");
			sbpl_param_filter(b, "subpath", c->tree_keys.v[i]);
		}
		sbpl_add(b, ")");
		carve_outs(c, guard);
		sbpl_add(b, "))\n");
	}
	sbpl_add(b, "(allow file-write-data (require-all (literal \"/dev/null\") (vnode-type "
		    "CHARACTER-DEVICE)))\n"
		    "(allow file-write-data (subpath \"/dev/fd\"))\n");
}

/* ---------------------------------------------------------------- 4. network */

/* egress.hostPorts: without a network namespace the command's loopback is the
 * host's, so a listed port is simply reachable (directly: not through the proxy,
 * hence not audited; the dry-run says so). */
static void host_ports(struct pctx *c)
{
	const struct policy_ports *hp = &c->in->policy->host_ports;

	if (hp->n)
		sbpl_add(&c->b, ";; egress.hostPorts: host loopback services, reached directly\n");
	for (size_t i = 0; i < hp->n; i++)
		sbpl_addf(&c->b, "(allow network-outbound (remote ip \"localhost:%u\"))\n",
			  (unsigned)hp->items[i]);
}

/* sandbox.unixSockets: the host sockets the policy opens (outbound network is
 * otherwise only the proxy's port: no other unix socket is reachable). The runtime
 * denies below carve them out (c->socket_keys). */
static void unix_sockets(struct pctx *c)
{
	const struct halo_policy *p = c->in->policy;

	if (p->unix_sockets_abs.n == 0)
		return;
	for (size_t i = 0; i < p->unix_sockets_abs.n; i++)
		spell(c, "UNIX_SOCKET", p->unix_sockets_abs.items[i], "unix socket",
		      &c->socket_keys, NULL);
	sbpl_add(&c->b, ";; sandbox.unixSockets: host sockets the policy opens\n"
			"(allow network-outbound");
	for (size_t i = 0; i < c->socket_keys.n; i++) {
		sbpl_add(&c->b, "\n  (remote unix-socket ");
		sbpl_param_filter(&c->b, "path-literal", c->socket_keys.v[i]);
		sbpl_add(&c->b, ")");
	}
	sbpl_add(&c->b, ")\n");
}

static void network(struct pctx *c)
{
	struct sbpl *b = &c->b;
	unsigned port = c->in->proxy_port;

	if (port == 0 || port > 65535) {
		sbpl_add(b, "\n;; 4. network: none (no proxy for this run)\n");
		return;
	}
	sbpl_addf(
	    b,
	    "\n;; 4. network: only halo-run's proxy on this host's loopback; it decides "
	    "every host\n"
	    "(allow network-outbound (remote ip \"localhost:%u\"))\n"
	    "(allow system-socket (require-all (socket-domain AF_SYSTEM) (socket-protocol 2)))\n"
	    "(allow mach-lookup\n"
	    "  (global-name \"com.apple.trustd.agent\")\n"
	    "  (global-name \"com.apple.trustd\")\n"
	    "  (global-name \"com.apple.ocspd\")\n"
	    "  (global-name \"com.apple.SystemConfiguration.configd\")\n"
	    "  (global-name \"com.apple.SystemConfiguration.DNSConfiguration\"))\n",
	    port);
	host_ports(c);
	unix_sockets(c);
}

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

static void runtimes(struct pctx *c)
{
	struct sbpl *b = &c->b;
	struct strs keys = {0};
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(runtime_home) / sizeof(runtime_home[0]); i++) {
		home_path(c, runtime_home[i], path, sizeof(path));
		spell(c, "RUNTIME", path, "container runtime path", &keys, NULL);
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
	strs_free(&keys);
}

static void persistence(struct pctx *c, bool guard)
{
	struct sbpl *b = &c->b;
	struct strs keys = {0};
	char path[PATH_MAX];
	size_t n_guard;
	const char *const *guard_names = policy_guard_names(&n_guard);

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
	home_path(c, "Library/LaunchAgents", path, sizeof(path));
	spell(c, "GUARD", path, "LaunchAgents", &keys, NULL);
	sbpl_add(b, "(deny file-write* (with message \"" MACOS_DENY_MESSAGE "\")");
	for (size_t i = 0; i < n_guard; i++) {
		sbpl_add(b, "\n  ");
		sbpl_regex(b, macos_glob_regex, guard_names[i], "guard name");
	}
	for (size_t i = 0; i < sizeof(guard_git_regexes) / sizeof(guard_git_regexes[0]); i++) {
		sbpl_add(b, "\n  ");
		sbpl_regex(b, macos_regex_fold, guard_git_regexes[i], "guard regex");
	}
	for (size_t i = 0; i < keys.n; i++) {
		sbpl_add(b, "\n  ");
		sbpl_param_filter(b, "subpath", keys.v[i]);
	}
	sbpl_add(b, ")\n");
	strs_free(&keys);
}

/* ---------------------------------------------------------------- 6. protected */

/* Every protected path's filters, each after `sep`. */
static void protected_filters(struct pctx *c, const char *sep)
{
	struct sbpl *b = &c->b;

	for (size_t i = 0; i < c->prot_keys.n; i++) {
		/* literal too: subpath alone leaves the creation of P itself open. */
		sbpl_add(b, sep);
		sbpl_param_filter(b, "literal", c->prot_keys.v[i]);
		sbpl_add(b, sep);
		sbpl_param_filter(b, "subpath", c->prot_keys.v[i]);
	}
	/* Case variants (.SSH on a case-insensitive volume) as regexes. */
	for (size_t i = 0; i < c->prot.n; i++) {
		sbpl_add(b, sep);
		sbpl_regex(b, macos_path_regex, c->prot.v[i], "protected path");
	}
	for (size_t i = 0; i < c->regexes.n; i++) {
		sbpl_add(b, sep);
		sbpl_regex(b, macos_glob_regex, c->regexes.v[i], "protected pattern");
	}
}

static void protected_paths(struct pctx *c)
{
	struct sbpl *b = &c->b;

	sbpl_add(b, "\n;; 6. protected paths, last: never read, written, created, removed or "
		    "renamed\n");
	if (!c->prot_keys.n && !c->regexes.n) {
		sbpl_add(b, ";; none\n");
		return;
	}
	if (!c->allow_keys.n) {
		sbpl_add(b,
			 "(deny file-read* file-write* (with message \"" MACOS_DENY_MESSAGE "\")");
		protected_filters(c, "\n  ");
		sbpl_add(b, ")\n");
	} else {
		/* allowRead: the carve-outs are left out of the deny itself (the require-not
		 * pattern: no allow has to follow a deny), then denied writing on their own. */
		sbpl_add(b, "(deny file-read* file-write* (with message \"" MACOS_DENY_MESSAGE
			    "\")\n  (require-all\n    (require-any");
		protected_filters(c, "\n      ");
		sbpl_add(b, ")");
		for (size_t i = 0; i < c->allow_keys.n; i++) {
			sbpl_add(b, "\n    (require-not ");
			sbpl_param_filter(b, "literal", c->allow_keys.v[i]);
			sbpl_add(b, ")\n    (require-not ");
			sbpl_param_filter(b, "subpath", c->allow_keys.v[i]);
			sbpl_add(b, ")");
		}
		sbpl_add(b, "))\n(deny file-write* (with message \"" MACOS_DENY_MESSAGE "\")");
		for (size_t i = 0; i < c->allow_keys.n; i++) {
			sbpl_add(b, "\n  ");
			sbpl_param_filter(b, "literal", c->allow_keys.v[i]);
			sbpl_add(b, "\n  ");
			sbpl_param_filter(b, "subpath", c->allow_keys.v[i]);
		}
		sbpl_add(b, ")\n");
	}
	if (!c->ancestors.n)
		return;
	sbpl_add(b, "(deny file-write-unlink (with message \"" MACOS_DENY_MESSAGE "\")");
	for (size_t i = 0; i < c->ancestors.n; i++) {
		sbpl_add(b, "\n  ");
		sbpl_param_filter(b, "literal", c->ancestors.v[i]);
	}
	sbpl_add(b, ")\n");
}

/* ---------------------------------------------------------------- build */

static void pctx_free(struct pctx *c)
{
	struct strs *all[] = {&c->trees,      &c->tree_keys,  &c->prot,	     &c->prot_keys,
			      &c->ancestors,  &c->regexes,    &c->halo_keys, &c->halo_dir_keys,
			      &c->allow_keys, &c->socket_keys};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		strs_free(all[i]);
}

static void build(struct pctx *c)
{
	const struct halo_policy *p = c->in->policy;
	bool guard = p->guard_persistence != 0;

	sbpl_add(&c->b,
		 "(version 1)\n(deny default (with message \"" MACOS_DENY_MESSAGE "\"))\n\n");
	collect(c);
	collect_ancestors(c);
	lines(&c->b, basics);
	writes(c, guard);
	network(c);
	sbpl_add(&c->b, "\n;; 5. always denied: container runtimes, session services, "
			"persistence targets\n");
	runtimes(c);
	lines(&c->b, denied_services);
	persistence(c, guard);
	protected_paths(c);
}

int macos_profile_build(const struct macos_profile_in *in, struct macos_profile *out,
			struct halo_err *e)
{
	struct pctx c = {.in = in};
	char why[256];

	memset(out, 0, sizeof(*out));
	if (!in->policy || !in->pw_home || macos_path_check(in->pw_home, why, sizeof(why)) < 0) {
		halo_err_set(e, "profile: the home directory from the password database is "
				"missing or unusable");
		return -EINVAL;
	}
	if (in->policy->mode == POLICY_MODE_OFF) {
		halo_err_set(e, "sandbox.mode is off: there is no profile to apply");
		return -EINVAL;
	}
	build(&c);
	pctx_free(&c);
	if (c.b.err) {
		halo_err_set(e, "profile: %s", c.b.why);
		out->params = c.b.params;
		out->n_params = c.b.n_params;
		free(c.b.s);
		macos_profile_free(out);
		return c.b.err;
	}
	out->text = c.b.s;
	out->params = c.b.params;
	out->n_params = c.b.n_params;
	return 0;
}

void macos_profile_free(struct macos_profile *p)
{
	for (size_t i = 0; p && i < p->n_params; i++) {
		free(p->params[i].key);
		free(p->params[i].value);
	}
	if (p) {
		free(p->params);
		free(p->text);
		memset(p, 0, sizeof(*p));
	}
}

void macos_profile_write(const struct macos_profile *p, const char *note, FILE *out)
{
	fprintf(out,
		";; halo-run Seatbelt profile (SBPL), for sandbox-exec -p PROFILE -D KEY=VALUE... "
		"-- CMD\n");
	if (note)
		fprintf(out, ";; %s\n", note);
	fprintf(out, ";; parameters:\n");
	for (size_t i = 0; i < p->n_params; i++)
		fprintf(out, ";;   -D %s=%s\n", p->params[i].key, p->params[i].value);
	fputs(p->text, out);
}
