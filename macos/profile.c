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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macos/profile_int.h"

void pctx_strs_add(struct pctx *c, struct strs *s, const char *v)
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

void pctx_strs_free(struct strs *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static bool within(const char *path, const char *dir)
{
	return policy_path_beneath(path, dir); /* the path facts' one meaning */
}

void pctx_spell(struct pctx *c, const char *prefix, const char *path, const char *what,
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
		pctx_strs_add(c, keys, sbpl_param(&c->b, prefix, sp[i], what));
		if (paths)
			pctx_strs_add(c, paths, sp[i]);
	}
}

void pctx_home_path(struct pctx *c, const char *rel, char *out, size_t n)
{
	int w = snprintf(out, n, "%s/%s", c->in->pw_home, rel);

	if (w < 0 || (size_t)w >= n)
		sbpl_fail(&c->b, -ENAMETOOLONG, "home directory path is too long");
}

/* How each of the plan's filesystem rules is named in the profile: its parameter
 * prefix, the words for messages, and the lists the sections below read. In the
 * plan's order (plan_fs_rules), so that parameter numbers follow the policy's. */
static const struct {
	const char *origin;
	const char *prefix, *what;
	size_t keys, paths; /* offsets of struct strs in struct pctx; paths 0: none */
} rules[] = {
    {"workspace", "WORKSPACE", "the workspace", offsetof(struct pctx, tree_keys),
     offsetof(struct pctx, trees)},
    {"sandbox.writableRoots", "WRITABLE", "writable root", offsetof(struct pctx, tree_keys),
     offsetof(struct pctx, trees)},
    {"tmpdir", "TMPDIR", "TMPDIR", offsetof(struct pctx, tree_keys), offsetof(struct pctx, trees)},
    {"sandbox.protectedPaths", "PROTECTED", "protected path", offsetof(struct pctx, prot_keys),
     offsetof(struct pctx, prot)},
    {"sandbox.allowRead", "ALLOW_READ", "allowRead carve-out", offsetof(struct pctx, allow_keys),
     0},
    {"self", "HALO_FILE", "halo-run's own binary", offsetof(struct pctx, halo_keys), 0},
    {"policy-file", "HALO_FILE", "policy file", offsetof(struct pctx, halo_keys), 0},
    {"own-output", "PROTECTED", "halo-run's own output file", offsetof(struct pctx, prot_keys),
     offsetof(struct pctx, prot)},
    {"config-dir", "HALO_DIR", "halo-run's configuration directory",
     offsetof(struct pctx, halo_dir_keys), 0},
};

#define STRS(c, off) ((struct strs *)((char *)(c) + (off)))

/* Every path the rules below name, defined up front. Host sockets are named in the
 * network section (unix_sockets). */
static void collect(struct pctx *c)
{
	for (size_t i = 0; i < c->plan->n_steps; i++) {
		const struct plan_step *st = &c->plan->steps[i];
		if (st->flags & PLAN_F_PATTERN) {
			pctx_strs_add(c, &c->regexes, st->path);
			continue;
		}
		for (size_t r = 0; st->origin && r < sizeof(rules) / sizeof(rules[0]); r++)
			if (strcmp(st->origin, rules[r].origin) == 0) {
				pctx_spell(c, rules[r].prefix, st->path, rules[r].what,
					   STRS(c, rules[r].keys),
					   rules[r].paths ? STRS(c, rules[r].paths) : NULL);
				break;
			}
	}
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
				pctx_strs_add(
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
    "  (global-name \"com.apple.bsd.dirhelper\"))",
    /* Terminals the command opens itself (script, tmux, expect) carry the pty
     * extension; the caller's own terminal is named literally (own_ttys); every other
     * /dev/ttys* is denied in section 5. */
    "(allow pseudo-tty)",
    "(allow file-read* file-write* file-ioctl (literal \"/dev/ptmx\") (literal \"/dev/tty\"))",
    "(allow file-read* file-write* file-ioctl",
    "  (require-all (regex #\"^/dev/ttys[0-9]+$\") (extension \"com.apple.sandbox.pty\")))",
    NULL,
};

static const char *const reads[] = {
    "",
    ";; 2. reads: everywhere; the protected paths and other terminals are denied at the end",
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

/* The caller's own terminal(s), resolved at launch: read, write and ioctl, by literal
 * path. Never a pattern over /dev/ttys*: with the broad read rule that would let the
 * command read keystrokes from, and type into, the user's other terminals. */
static void own_ttys(struct pctx *c)
{
	for (size_t i = 0; i < c->in->n_ttys; i++)
		pctx_spell(c, "TTY", c->in->ttys[i], "the caller's terminal", &c->tty_keys, NULL);
	if (!c->tty_keys.n)
		return;
	sbpl_add(&c->b, "(allow file-read* file-write-data file-ioctl\n  (require-all "
			"(vnode-type CHARACTER-DEVICE)\n    (require-any");
	for (size_t i = 0; i < c->tty_keys.n; i++) {
		sbpl_add(&c->b, "\n      ");
		sbpl_param_filter(&c->b, "literal", c->tty_keys.v[i]);
	}
	sbpl_add(&c->b, ")))\n");
}

/* ---------------------------------------------------------------- 3. writes */

static void carve_outs(struct pctx *c, bool guard)
{
	struct sbpl *b = &c->b;
	size_t n_guard;
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
	char re[160];
	for (size_t i = 0; guard && macos_guard_git_regex(i, re, sizeof(re)) == 0; i++) {
		sbpl_add(b, "\n    (require-not ");
		sbpl_regex(b, macos_regex_fold, re, "guard regex");
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
	if (plan_count(c->plan, PLAN_SOCKET) == 0)
		return;
	for (size_t i = 0; i < c->plan->n_steps; i++)
		if (c->plan->steps[i].op == PLAN_SOCKET)
			pctx_spell(c, "UNIX_SOCKET", c->plan->steps[i].path, "unix socket",
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
	/* No AF_SYSTEM sockets: kernel control sockets list the host's connections, and
	 * the network here is never open (the proxy decides every host). No trustd or
	 * ocspd unless the policy opts in: they fetch certificate URLs past the proxy. */
	sbpl_addf(b,
		  "\n;; 4. network: only halo-run's proxy on this host's loopback; it decides "
		  "every host\n"
		  "(allow network-outbound (remote ip \"localhost:%u\"))\n"
		  "(allow mach-lookup\n"
		  "  (global-name \"com.apple.SystemConfiguration.configd\")\n"
		  "  (global-name \"com.apple.SystemConfiguration.DNSConfiguration\"))\n",
		  port);
	if (c->in->policy->macos_allow_trustd == 1)
		sbpl_add(b, ";; sandbox.macos.allowTrustd: certificate evaluation by trustd and "
			    "ocspd, which fetch\n;; the URLs a certificate names from outside the "
			    "sandbox, past the proxy (an egress path)\n"
			    "(allow mach-lookup\n"
			    "  (global-name \"com.apple.trustd.agent\")\n"
			    "  (global-name \"com.apple.trustd\")\n"
			    "  (global-name \"com.apple.ocspd\"))\n");
	host_ports(c);
	unix_sockets(c);
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
	struct strs *all[] = {&c->trees,      &c->tree_keys,   &c->prot,      &c->prot_keys,
			      &c->ancestors,  &c->regexes,     &c->halo_keys, &c->halo_dir_keys,
			      &c->allow_keys, &c->socket_keys, &c->tty_keys};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		pctx_strs_free(all[i]);
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
	own_ttys(c);
	lines(&c->b, reads);
	writes(c, guard);
	network(c);
	sbpl_add(&c->b, "\n;; 5. always denied: container runtimes, session services, "
			"persistence targets\n");
	profile_runtimes(c);
	profile_denied_services(c);
	profile_other_ttys(c);
	profile_persistence(c, guard);
	protected_paths(c);
}

/* A relative --policy (or --audit) names a file in the cwd: resolved, kept by the
 * plan. */
static const char *absolute(struct halo_plan *p, const char *f)
{
	char abs[PATH_MAX];

	return f[0] != '/' && realpath(f, abs) ? plan_str(p, "%s", abs) : f;
}

int macos_profile_plan(const struct macos_profile_in *in, struct halo_plan *p, struct halo_err *e)
{
	size_t n = in->n_policy_files + in->n_own_outputs + 1;
	const char **files = calloc(n, sizeof(*files));
	char dir[PATH_MAX];
	int w = snprintf(dir, sizeof(dir), "%s/.config/halo", in->pw_home ? in->pw_home : "");
	int rc;

	if (!files) {
		halo_err_set(e, "profile: out of memory");
		return -ENOMEM;
	}
	if (w < 0 || (size_t)w >= sizeof(dir)) {
		free(files);
		halo_err_set(e, "profile: home directory path is too long");
		return -ENAMETOOLONG;
	}
	for (size_t i = 0; i < in->n_policy_files; i++)
		files[i] = absolute(p, in->policy_files[i]);
	for (size_t i = 0; i < in->n_own_outputs; i++)
		files[in->n_policy_files + i] = absolute(p, in->own_outputs[i]);
	struct plan_rules_in r = {
	    .policy = in->policy,
	    .workspace = in->workspace,
	    .tmpdir = in->tmpdir,
	    .self_exe = in->self_exe,
	    .policy_files = files,
	    .n_policy_files = in->n_policy_files,
	    .own_outputs = files + in->n_policy_files,
	    .n_own_outputs = in->n_own_outputs,
	    .config_dir = plan_str(p, "%s", dir),
	};
	rc = plan_fs_rules(p, &r);
	free(files);
	if (rc < 0)
		halo_err_set(e, "profile: out of memory");
	return rc;
}

int macos_profile_render(const struct macos_profile_in *in, const struct halo_plan *plan,
			 struct macos_profile *out, struct halo_err *e)
{
	struct pctx c = {.in = in, .plan = plan};
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

int macos_profile_build(const struct macos_profile_in *in, struct macos_profile *out,
			struct halo_err *e)
{
	struct halo_plan plan;
	int rc;

	memset(out, 0, sizeof(*out));
	plan_init(&plan, "macos");
	rc = in->policy ? macos_profile_plan(in, &plan, e) : 0;
	if (rc == 0)
		rc = macos_profile_render(in, &plan, out, e);
	plan_free(&plan);
	return rc;
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
