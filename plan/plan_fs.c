/* The filesystem steps: the mount layout of DESIGN.md worked out once from the policy
 * and the scan's findings, in the order linux/ applies it, each with its reason.
 * Which trees go before the fresh file systems and which after, which tree lands on
 * which, and what a read-only workspace needs are decided here, not in the launcher. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

/* Beneath, and the directories the sandbox gets fresh: the path facts (policy/). */
bool plan_path_beneath(const char *path, const char *dir)
{
	return policy_path_beneath(path, dir);
}

bool plan_path_in_fresh(const char *path)
{
	return policy_path_in_fresh(path);
}

static bool listed(const struct plan_paths *l, const char *path)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], path) == 0)
			return true;
	return false;
}

/* Is `path` equal to or beneath `dir`? */
static bool beneath(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == 0 || !strcmp(dir, "/"));
}

/* A mask of halo-run's own state, or a pin of a directory holding it that is
 * halo-run's too (a "halo-run" directory or beneath one: its index place, its caches
 * directory), never the user's ~/.local or ~/.cache. */
static bool own_step(const struct plan_fs_in *in, enum plan_op op, const char *path)
{
	const char *h = strstr(path, "/halo-run");

	for (size_t i = 0; op == PLAN_MASK && i < in->own.n; i++)
		if (beneath(path, in->own.v[i]))
			return true;
	while (h && h[9] != '/' && h[9] != 0)
		h = strstr(h + 1, "/halo-run");
	if (op != PLAN_PIN || !h)
		return false;
	for (size_t i = 0; i < in->own.n; i++)
		if (beneath(in->own.v[i], path))
			return true;
	return in->cache_hide && beneath(in->cache_hide, path);
}

struct tree {
	const char *path;
	enum plan_op op;
	unsigned flags;
	const char *reason;
	const char *origin;
};

static int path_key(unsigned char ch)
{
	return ch == '\0' ? 0 : ch == '/' ? 1 : ch + 1;
}

/* '/' sorts lowest: a tree comes right before what is nested in it, so each later
 * bind lands on top of its parent. The same path twice (a read-only workspace also
 * listed as a writable root): read-only last, so it wins. */
static int tree_cmp(const void *a, const void *b)
{
	const struct tree *x = a, *y = b;
	size_t i = 0;

	while (x->path[i] && x->path[i] == y->path[i])
		i++;
	if (x->path[i] != y->path[i])
		return path_key((unsigned char)x->path[i]) - path_key((unsigned char)y->path[i]);
	return (int)(y->op != PLAN_BIND_RO) - (int)(x->op != PLAN_BIND_RO);
}

static const char *cache_reason(struct halo_plan *p, const struct halo_policy *pol)
{
	return plan_str(p, "tool caches (sandbox.caches: %s), read-write, not scanned",
			policy_caches_name(pol->caches));
}

/* Is the cache tree w directly in the directory of every workspace's caches? */
static bool cache_alone(const struct plan_fs_in *in, const char *w)
{
	const char *sl = strrchr(w, '/');
	size_t n = in->cache_hide ? strlen(in->cache_hide) : 0;

	return n > 1 && sl && (size_t)(sl - w) == n && strncmp(w, in->cache_hide, n) == 0 &&
	       sl[1] != '\0';
}

/* Every tree: the resolved writable ones (each its own mount), and those the policy
 * or the command line names that a parent already shows (listed, not mounted). */
static size_t collect_trees(struct halo_plan *p, const struct plan_fs_in *in, struct tree *t)
{
	const struct halo_policy *pol = in->policy;
	bool ro = pol->mode == POLICY_MODE_READ_ONLY;
	size_t n = 0;

	for (size_t i = 0; i < in->writable.n; i++) {
		const char *w = in->writable.v[i];
		if (strcmp(w, in->workspace) == 0)
			t[n++] =
			    (struct tree){w, PLAN_BIND_RW, 0, "workspace, read-write", "workspace"};
		else if (listed(&in->caches, w) && cache_alone(in, w))
			t[n++] = (struct tree){w, PLAN_CACHE_BIND, PLAN_F_ALONE,
					       plan_str(p, "%s; other workspaces' caches hidden",
							cache_reason(p, pol)),
					       "sandbox.caches"};
		else if (listed(&in->caches, w))
			t[n++] = (struct tree){w, PLAN_CACHE_BIND, 0, cache_reason(p, pol),
					       "sandbox.caches"};
		else
			t[n++] = (struct tree){w, PLAN_BIND_RW, 0, "writable root, read-write",
					       "sandbox.writableRoots"};
	}
	/* Read-only, the workspace needs a mount only where the root does not show it. */
	if (ro)
		t[n++] = (struct tree){in->workspace, PLAN_BIND_RO,
				       plan_path_in_fresh(in->workspace) ? 0 : PLAN_F_SHOWN,
				       "workspace, read-only", "workspace"};
	else if (!listed(&in->writable, in->workspace))
		t[n++] = (struct tree){in->workspace, PLAN_BIND_RW, PLAN_F_SHOWN,
				       "workspace, read-write", "workspace"};
	for (size_t i = 0; i < pol->writable_abs.n; i++)
		if (!listed(&in->writable, pol->writable_abs.items[i]))
			t[n++] =
			    (struct tree){pol->writable_abs.items[i], PLAN_BIND_RW, PLAN_F_SHOWN,
					  "writable root, read-write", "sandbox.writableRoots"};
	/* A cache inside a writable tree (the home as the workspace) is shown by it; the
	 * isolated one still gets its own mount, to stand alone among the others. */
	for (size_t i = 0; i < in->caches.n; i++)
		if (!listed(&in->writable, in->caches.v[i]) && cache_alone(in, in->caches.v[i]))
			t[n++] = (struct tree){in->caches.v[i], PLAN_CACHE_BIND, PLAN_F_ALONE,
					       plan_str(p, "%s; other workspaces' caches hidden",
							cache_reason(p, pol)),
					       "sandbox.caches"};
		else if (!listed(&in->writable, in->caches.v[i]))
			t[n++] = (struct tree){in->caches.v[i], PLAN_CACHE_BIND, PLAN_F_SHOWN,
					       cache_reason(p, pol), "sandbox.caches"};
	return n;
}

static void add_trees(struct halo_plan *p, const struct tree *t, size_t n, bool in_fresh)
{
	for (size_t i = 0; i < n; i++)
		if (plan_path_in_fresh(t[i].path) == in_fresh) {
			struct plan_step *s =
			    plan_step_add(p, t[i].op, t[i].flags, t[i].path, NULL, t[i].reason);
			if (s)
				s->origin = t[i].origin;
		}
}

/* Inside, name resolution is halo-run's, whatever the host's files say: localhost and
 * the sandbox's own host name from the files, everything else from the DNS stub
 * (netns/, proxy/conn_dns.c) at PLAN_DNS_STUB, which answers only names the policy
 * could allow. Account databases are the files alone: no NSS module of the host's
 * (sss, systemd, mdns, ldap) is asked anything from inside. */
static const struct {
	const char *path, *reason, *data;
} names[] = {
    {"/etc/hosts", "halo-run's own: localhost and the sandbox's name",
     "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback halo\n127.0.1.1\thalo\n"},
    {"/etc/resolv.conf", "halo-run's own: the in-sandbox DNS stub " PLAN_DNS_STUB,
     "# halo-run: names are answered by its DNS stub, by policy\nnameserver " PLAN_DNS_STUB
     "\noptions timeout:2 attempts:2\n"},
    {"/etc/nsswitch.conf", "halo-run's own: hosts: files dns",
     "passwd: files\ngroup: files\nshadow: files\ngshadow: files\nhosts: files dns\n"
     "networks: files\nprotocols: files\nservices: files\nethers: files\nrpc: files\n"
     "netgroup: files\n"},
};

static void add_names(struct halo_plan *p)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct plan_step *s =
		    plan_step_add(p, PLAN_NAMES, 0, names[i].path, NULL, names[i].reason);
		if (s) {
			s->origin = "egress";
			s->data = names[i].data;
			s->len = strlen(names[i].data);
		}
	}
}

int plan_fs_layout(struct halo_plan *p, const struct plan_fs_in *in)
{
	size_t max = in->writable.n + in->policy->writable_abs.n + in->caches.n + 1;
	struct tree *t = calloc(max, sizeof(*t));
	size_t n;

	if (!t)
		return -ENOMEM;
	n = collect_trees(p, in, t);
	qsort(t, n, sizeof(*t), tree_cmp);
	plan_step_add(p, PLAN_BIND_RO, 0, "/", NULL,
		      "host root, read-only, nosuid, nodev (recursive)");
	/* Trees elsewhere go before the fresh /tmp, /run and /dev, so that a tree holding
	 * one of those (a read-only workspace of /) cannot cover it again; trees beneath
	 * them go after, reappearing on the fresh tmpfs. */
	add_trees(p, t, n, false);
	plan_step_add(p, PLAN_TMPFS, 0, "/tmp", NULL, "private tmpfs (TMPDIR=/tmp)");
	plan_step_add(p, PLAN_TMPFS, 0, "/run", NULL,
		      "empty tmpfs (host service sockets out of reach)");
	plan_step_add(p, PLAN_DEV, 0, "/dev", NULL,
		      "minimal: null zero full random urandom tty, private devpts, shm");
	add_trees(p, t, n, true);
	if (in->own_names)
		add_names(p);
	plan_step_add(p, PLAN_PROC, 0, "/proc", NULL,
		      "fresh for the pid namespace; kcore, sysrq-trigger, keys... masked; "
		      "/proc/sys read-only");
	plan_step_add(p, PLAN_BIND_RO, PLAN_F_SHOWN, "/sys", NULL, "read-only");
	free(t);
	return plan_ok(p);
}

static void add_list(struct halo_plan *p, enum plan_op op, const struct plan_paths *l,
		     const char *reason, const char *origin)
{
	for (size_t i = 0; i < l->n; i++) {
		struct plan_step *s = plan_step_add(p, op, 0, l->v[i], NULL, reason);
		if (s)
			s->origin = origin;
	}
}

/* A path of a home's persistence set: its entry's reason instead of the list's. */
static const char *home_reason(struct halo_plan *p, const struct plan_fs_in *in, const char *path,
			       const char *fallback)
{
	for (size_t i = 0; i < 2; i++) {
		const struct policy_xdg xdg = {
		    in->caller_xdg_config,    in->caller_xdg_data, in->caller_xdg_config_dirs,
		    in->caller_xdg_data_dirs, in->caller_zdotdir,  policy_caches_host(in->policy)};
		const char *why =
		    policy_home_set_hit_xdg(in->homes[i], in->caller_path, &xdg, path, NULL);
		const char *r = why ? plan_str(p, PLAN_HOME_SET_REASON "%s", why) : NULL;
		if (r)
			return r;
	}
	const struct policy_xdg xdg = {in->caller_xdg_config,	   in->caller_xdg_data,
				       in->caller_xdg_config_dirs, in->caller_xdg_data_dirs,
				       in->caller_zdotdir,	   policy_caches_host(in->policy)};
	const char *why = policy_home_set_hit_xdg_outside(in->homes, 2, &xdg, path);
	const char *r = why ? plan_str(p, PLAN_HOME_SET_REASON "%s", why) : NULL;
	return r ? r : fallback;
}

/* The guard's lists, each path with its reason. */
static void add_guard_list(struct halo_plan *p, const struct plan_fs_in *in, enum plan_op op,
			   const struct plan_paths *l, const char *reason)
{
	for (size_t i = 0; i < l->n; i++) {
		/* (a prefix row by a name it starts: its own reason, not an exact entry's) */
		const char *named = op == PLAN_REFUSE_PREFIX ? plan_str(p, "%s*", l->v[i]) : NULL;
		struct plan_step *s = plan_step_add(
		    p, op, 0, l->v[i], NULL, home_reason(p, in, named ? named : l->v[i], reason));
		if (s)
			s->origin = "sandbox.guardPersistence";
	}
}

/* caches: host: a host cache beneath a guarded directory (pnpm's store in its home,
 * ~/.local/share/pnpm, with the home as the workspace) is the cache's, as the set says
 * (policy_home_set_hit_xdg): bound read-write again from the host's copy, on top of
 * the guard. */
static void add_host_caches_in_guards(struct halo_plan *p, const struct plan_fs_in *in)
{
	for (size_t i = 0; policy_caches_host(in->policy) && i < in->caches.n; i++)
		for (size_t j = 0; j < in->guarded.n; j++) {
			if (strcmp(in->caches.v[i], in->guarded.v[j]) == 0 ||
			    !beneath(in->caches.v[i], in->guarded.v[j]))
				continue;
			struct plan_step *s = plan_step_add(
			    p, PLAN_CACHE_BIND, 0, in->caches.v[i], NULL,
			    plan_str(p, "%s; again, on top of the persistence guard of %s",
				     cache_reason(p, in->policy), in->guarded.v[j]));
			if (s)
				s->origin = "sandbox.caches";
			break;
		}
}

int plan_fs_late(struct halo_plan *p, const struct plan_fs_in *in)
{
	bool guard = in->policy->guard_persistence != 0;

	for (size_t i = 0; i < in->pinned.n; i++) {
		bool own = own_step(in, PLAN_PIN, in->pinned.v[i]);
		struct plan_step *s =
		    plan_step_add(p, PLAN_PIN, own ? PLAN_F_OWN : 0, in->pinned.v[i], NULL,
				  "pinned: cannot be renamed, removed or replaced");
		if (s && own)
			s->origin = "halo-run";
	}
	add_guard_list(p, in, PLAN_GUARD, &in->guarded, "persistence guard: read-only");
	add_host_caches_in_guards(p, in);
	add_list(p, PLAN_READONLY, &in->readonly, "halo-run's own file: read-only", NULL);
	for (size_t i = 0; i < in->carved.n; i++) {
		const char *src =
		    strcmp(in->carved.v[i], in->carved_src.v[i]) ? in->carved_src.v[i] : NULL;
		struct plan_step *s =
		    plan_step_add(p, PLAN_CARVE, 0, in->carved.v[i], src,
				  "sandbox.allowRead carve-out, read-only (a loosening)");
		if (s)
			s->origin = "sandbox.allowRead";
	}
	for (size_t i = 0; i < in->sanitized.n; i++) {
		struct plan_step *s = plan_step_add(p, PLAN_SANITIZE, 0, in->sanitized.v[i], NULL,
						    "sanitized copy (secret entries removed)");
		if (s && in->sanitized_data) {
			s->data = in->sanitized_data[i];
			s->len = in->sanitized_len[i];
		}
	}
	if (in->ssh_config) {
		struct plan_step *s = plan_step_add(
		    p, PLAN_SSH_CONFIG, 0, PLAN_SSH_CONFIG_PATH, NULL,
		    "halo-run's copy: ssh reaches hosts through the proxy (ProxyCommand halo-run "
		    "connect), then the host's settings");
		if (s) {
			s->origin = "egress";
			s->data = in->ssh_config;
			s->len = in->ssh_config_len;
		}
	}
	for (size_t i = 0; i < in->masked.n; i++) {
		bool unl = in->unlisted.n && listed(&in->unlisted, in->masked.v[i]);
		bool own = own_step(in, PLAN_MASK, in->masked.v[i]);
		struct plan_step *s = plan_step_add(
		    p, PLAN_MASK, (unl ? PLAN_F_UNLISTED : 0) | (own ? PLAN_F_OWN : 0),
		    in->masked.v[i], NULL,
		    own	  ? "halo-run's own state (index, sessions): out of the command's reach"
		    : unl ? "the workspace scan cannot list it (no read or search permission): "
			    "masked whole"
			  : "protected path: no read, no write, no replace");
		if (s && (unl || own))
			s->origin = own ? "halo-run" : "workspace-scan";
	}
	add_list(p, PLAN_SOCKET, &in->sockets, "sandbox.unixSockets: host socket reachable",
		 "sandbox.unixSockets");
	plan_step_add(p, PLAN_SEAL, 0, "/run", NULL, "read-only once populated");
	if (guard)
		add_guard_list(p, in, PLAN_REFUSE_CREATE, &in->missing,
			       "missing guard target: its creation refused by the sandbox's init");
	if (guard)
		add_guard_list(
		    p, in, PLAN_REFUSE_PREFIX, &in->prefixes,
		    "every name that starts so: its creation refused by the sandbox's init");
	return plan_ok(p);
}
