/* The Linux launcher's plan: what this machine and this launch will enforce, as the
 * pure plan/ module holds it. The probes (user namespaces, Landlock's ABI, a memory
 * cgroup) and the scan run here; plan/ turns their findings into ordered steps. The
 * same step builder serves the sandbox's init (mounts.c executes its steps) and
 * --dry-run (runner prints them), so the two cannot disagree. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/launch_int.h"

#define P(list) ((struct plan_paths){(list).v, (list).n})

void linux_scan_findings(const struct linux_launch *l, const struct linux_scan *s,
			 struct plan_fs_in *in)
{
	*in = (struct plan_fs_in){
	    .policy = l->policy,
	    .workspace = l->workspace,
	    .caches = {(char *const *)l->cache_binds, l->n_cache_binds},
	    .cache_hide = l->cache_hide,
	    .writable = P(s->writable),
	    .masked = P(s->masked),
	    .carved = P(s->carved),
	    .carved_src = P(s->carved_src),
	    .sanitized = P(s->sanitized),
	    .guarded = P(s->guarded),
	    .readonly = P(s->readonly_extra),
	    .pinned = P(s->pinned),
	    .missing = P(s->missing),
	    .prefixes = P(s->home_prefix),
	    .sockets = P(s->sockets_open),
	    .unlisted = P(s->unlisted),
	    .own = P(s->own),
	    .sanitized_data = s->sanitized_data,
	    .sanitized_len = s->sanitized_len,
	    .own_names = l->egress_proxy,
	    .homes = {l->pw_home, l->env_home},
	    .caller_path = l->caller_path,
	    .caller_xdg_config = l->caller_xdg_config,
	    .caller_xdg_data = l->caller_xdg_data,
	    .caller_xdg_config_dirs = l->caller_xdg_config_dirs,
	    .caller_xdg_data_dirs = l->caller_xdg_data_dirs,
	    .caller_zdotdir = l->caller_zdotdir,
	    .ssh_config = l->ssh_config,
	    .ssh_config_len = l->ssh_config_len,
	};
}

/* Can this user create the namespaces? Try it in a throwaway child. */
int linux_userns_probe(void)
{
	pid_t pid = fork();
	int ws;

	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET) == 0 ? 0 : errno);
	if (waitpid(pid, &ws, 0) < 0)
		return -errno;
	return WIFEXITED(ws) && WEXITSTATUS(ws) == 0 ? 0 : -(WIFEXITED(ws) ? WEXITSTATUS(ws) : EIO);
}

struct line_to {
	struct halo_plan *p;
	struct plan_text *t;
};

static void add_line(void *arg, const char *text)
{
	struct line_to *lt = arg;

	plan_add(lt->p, lt->t, "%s", text);
}

static void plan_limits(struct halo_plan *p, const struct linux_launch *l)
{
	char mem_desc[LINUX_CGROUP_PATH + 64];
	bool mem_cgroup = l->limits.memory_bytes != RLIMITS_UNSET &&
			  linux_cgroup_memory_probe(mem_desc, sizeof(mem_desc));
	struct line_to lt = {p, &p->limits};

	rlimits_describe(&l->limits, geteuid() == 0 && l->limits.processes != RLIMITS_UNSET,
			 mem_cgroup ? mem_desc : NULL, add_line, &lt);
	linux_plan_limit_values(p, &l->limits);
	p->limit_values.memory_cgroup = mem_cgroup;
	if (l->session) /* the cgroups are the sandbox's, and the sandbox is the session's */
		plan_add(p, &p->limits,
			 "session: ends after %lld s without a call running "
			 "(limits.sessionIdleSeconds); memory and processes are held for the "
			 "whole session, the other caps and the wall clock per call",
			 l->policy->limits.session_idle_seconds > 0
			     ? l->policy->limits.session_idle_seconds
			     : POLICY_SESSION_IDLE_DEFAULT);
}

void linux_plan_limit_values(struct halo_plan *p, const struct rlimits_set *r)
{
	p->limit_values.cpu_seconds = r->cpu_seconds;
	p->limit_values.memory_bytes = r->memory_bytes;
	p->limit_values.file_size_bytes = r->file_size_bytes;
	p->limit_values.open_files = r->open_files;
	p->limit_values.processes = r->processes;
	p->limit_values.wall_seconds = r->wall_seconds;
}

static void plan_env(struct halo_plan *p, char **envp)
{
	plan_env_names(p, envp);
}

/* Hosts whose TLS the proxy terminates (egress.credentials, egress.requestRules). */
static void plan_tls(struct halo_plan *p, const struct halo_policy *pol)
{
	for (size_t i = 0; i < pol->n_creds; i++)
		plan_add(p, &p->egress.notes,
			 "tls: %s terminated; the proxy sets %s on every request (the value, from "
			 "the caller's environment, never enters the sandbox)",
			 pol->creds[i].host, pol->creds[i].header);
	for (size_t i = 0; i < pol->n_req_rules; i++)
		plan_add(p, &p->egress.notes,
			 "tls: %s terminated; every request must match egress.requestRules "
			 "(else 403)",
			 pol->req_rules[i].host);
	if (policy_tls_wanted(pol))
		plan_add(p, &p->egress.notes,
			 "  a per-run CA (its key only in the supervisor), trusted inside through "
			 "%s and the tools' variables; HTTP/1.1 only (ALPN); origins verified "
			 "against the system roots and egress.trustedCAs",
			 LINUX_CA_BUNDLE_PATH);
}

/* The listeners take these ports on the sandbox's loopback before the command starts:
 * say so, a dev server told to bind one would otherwise fail without a reason. */
static void plan_egress(struct halo_plan *p, const struct linux_launch *l, int userns)
{
	const struct policy_ports *hp = &l->policy->host_ports;
	char ports[64 * 8] = "";
	size_t o = 0;

	p->egress.proxy = l->egress_proxy && userns == 0;
	p->egress.host_ports = hp;
	if (l->egress_proxy) {
		plan_add(p, &p->egress.listeners, "http 127.0.0.1:%d", NETNS_HTTP_PORT);
		plan_add(p, &p->egress.listeners, "http [::1]:%d", NETNS_HTTP_PORT);
		plan_add(p, &p->egress.listeners, "socks5 127.0.0.1:%d", NETNS_SOCKS_PORT);
		plan_add(p, &p->egress.listeners, "dns %s:53 (udp, tcp)", NETNS_DNS_ADDR);
		plan_add(p, &p->egress.listeners, "captured 127.0.0.1:%d", NETNS_CAPTURE_PORT);
		plan_add(p, &p->egress.notes,
			 "names: the DNS stub %s answers a name the policy could allow with an "
			 "address in 198.18.0.0/15, anything else NXDOMAIN/REFUSED (never "
			 "forwarded); AAAA answers are empty",
			 NETNS_DNS_ADDR);
		plan_add(p, &p->egress.notes,
			 "capture: TCP to 198.18.0.0/15 on any port is redirected (nf_tables) to "
			 "halo-run and decided by name; not captured: UDP other than DNS, IP "
			 "literals, IPv6");
		plan_tls(p, l->policy);
	}
	if (!hp->n || !l->egress_proxy)
		return;
	for (size_t i = 0; i < hp->n && o < sizeof(ports); i++)
		o += (size_t)snprintf(ports + o, sizeof(ports) - o, "%s %u", i ? "," : "",
				      (unsigned)hp->items[i]);
	plan_add(p, &p->egress.notes, "host ports (egress.hostPorts):%s", ports);
	if (userns != 0) {
		plan_add(p, &p->egress.notes,
			 "  no network namespace: the command reaches the "
			 "host's loopback directly");
		return;
	}
	plan_add(p, &p->egress.notes,
		 "  inside: localhost, 127.0.0.1 and [::1] on each port, relayed by halo-run to "
		 "the host's 127.0.0.1:PORT, else [::1]:PORT; each connection audited");
	plan_add(p, &p->egress.notes,
		 "  these ports are taken inside the sandbox: a command "
		 "that binds one gets EADDRINUSE");
}

static void plan_layers(struct halo_plan *p, const struct linux_launch *l, int userns, int abi)
{
	bool req = l->policy->fail_if_unavailable != 0 && !l->unsandboxed;
	struct plan_layer *y;

	plan_layer_add(p, "capabilities", "capabilities", !l->unsandboxed, true,
		       "all dropped (effective, permitted, inheritable, ambient, bounding); "
		       "no_new_privs");
	plan_layer_add(p, "no_new_privs", NULL, !l->unsandboxed, true, "set before exec");
	y = plan_layer_add(p, "landlock", "landlock", false, abi > 0,
			   abi > 0 ? "writes limited to the writable trees" : "unavailable");
	if (y) /* a second layer on writes: used where the kernel has it */
		y->used = abi > 0 && !l->unsandboxed;
	if (y && abi > 0) {
		plan_add(
		    p, &y->details, "ABI %d%s%s%s", abi,
		    abi >= 4 && userns != 0 ? ", every TCP connect refused (no network namespace)"
					    : "",
		    abi >= 4 && userns != 0 && l->policy->host_ports.n ? " but to the host ports"
								       : "",
		    abi >= 6 ? ", abstract unix sockets and signals scoped" : "");
		plan_add(p, &y->details, "pathname unix sockets: %s",
			 abi >= 9 ? "only the sandbox's own and sandbox.unixSockets (ABI 9)"
				  : "not handled below ABI 9: host sockets are masked by name");
	}
	y = plan_layer_add(p, "seccomp", "seccomp deny list", !l->unsandboxed, true, NULL);
	if (y) {
		struct line_to lt = {p, &y->details};
		linux_seccomp_describe(add_line, &lt);
	}
	if (l->policy->guard_persistence != 0 && !l->unsandboxed &&
	    l->policy->mode != POLICY_MODE_READ_ONLY) {
		y = plan_layer_add(p, "broker", "creation broker", req, true,
				   "init performs the command's creations and opens for writing");
		if (y) {
			plan_add(p, &y->details, "missing guard targets cannot be created");
			plan_add(
			    p, &y->details,
			    "in every git directory, made before or during the run: hooks/ only "
			    "*.sample, config only by rename with keys that run no program");
		}
	}
	p->namespaces_required = req;
}

static const char *const linux_gaps[] = {
    "files created after launch that match a protected glob are not masked",
    "a hard link to a protected file inside a writable tree is not masked",
    "host unix sockets bound after the launch, or in another network namespace away from "
    "the known places, are not masked (below ABI 9)",
    "guard names missing below the top of a writable tree (sub/.vscode) may be created; a "
    "repository the command creates keeps its hooks and command-running config held, but "
    "its other files (.gitattributes, info/) are the command's",
    "egress: only through halo-run's proxy (HTTP 127.0.0.1:3128, SOCKS5 127.0.0.1:1080); "
    "tools that ignore the proxy variables find no route;",
    "the sandbox's loopback (any port, TCP and UDP) is the command's own",
};

static void plan_gaps(struct halo_plan *p, const struct linux_launch *l, int userns, int abi)
{
	for (size_t i = 0; i < sizeof(linux_gaps) / sizeof(linux_gaps[0]); i++)
		plan_add(p, &p->gaps, "%s", linux_gaps[i]);
	if (userns != 0)
		plan_add(p, &p->gaps, "%s",
			 l->policy->fail_if_unavailable == 0
			     ? "namespaces, mount layout and masks (user namespaces unavailable; "
			       "failIfUnavailable: false)"
			     : "NOTHING: the launch would be refused (user namespaces "
			       "unavailable)");
	if (abi == 0)
		plan_add(p, &p->gaps, "landlock (kernel without Landlock)");
}

static void release_scan(void *arg)
{
	linux_scan_free(arg);
	free(arg);
}

static void plan_head(struct halo_plan *p, const struct linux_launch *l, int userns)
{
	plan_set(&p->title, "halo-run plan");
	p->policy_source = l->policy->source ? l->policy->source : "?";
	p->mode = policy_mode_name(l->policy->mode);
	p->workspace = l->workspace;
	p->argv = l->argv;
	p->guard = l->policy->guard_persistence != 0;
	p->sandboxed = !l->unsandboxed;
	p->namespaces_available = userns == 0;
	plan_set(&p->namespaces,
		 "user (uid %u, gid %u mapped to themselves), mount, pid, net (loopback only), "
		 "ipc, uts: %s",
		 (unsigned)getuid(), (unsigned)getgid(),
		 userns == 0 ? "available" : strerror(-userns));
}

/* Everything but the filesystem: what doctor checks the machine against. */
static int plan_machine(const struct linux_launch *l, struct halo_plan *p, struct halo_err *e)
{
	int userns = linux_userns_probe();
	int abi = linux_landlock_abi();
	int rc;

	plan_head(p, l, userns);
	plan_limits(p, l);
	plan_env(p, l->envp);
	plan_egress(p, l, userns);
	plan_layers(p, l, userns, abi);
	plan_gaps(p, l, userns, abi);
	if ((rc = plan_ok(p)) < 0)
		halo_err_set(e, "the plan: out of memory");
	return rc;
}

int linux_plan_layers(const struct linux_launch *l, struct halo_plan *p, struct halo_err *e)
{
	plan_init(p, "linux");
	return plan_machine(l, p, e);
}

int linux_plan(const struct linux_launch *l, struct halo_plan *p, struct halo_err *e)
{
	struct linux_scan *s = calloc(1, sizeof(*s));
	struct plan_fs_in in;
	int rc;

	plan_init(p, "linux");
	if (!s) {
		halo_err_set(e, "out of memory");
		return -ENOMEM;
	}
	if ((rc = linux_scan(l, s, e)) < 0) {
		release_scan(s);
		return rc;
	}
	p->release = release_scan;
	p->release_arg = s;
	linux_scan_findings(l, s, &in);
	/* The order of the text: the head, then the filesystem, then the rest. */
	if ((rc = plan_machine(l, p, e)) < 0)
		return rc;
	plan_fs_layout(p, &in);
	plan_fs_late(p, &in);
	p->scanned = true;
	p->entries_scanned = s->entries_scanned;
	p->scan_truncated = s->truncated;
	if ((rc = plan_ok(p)) < 0)
		halo_err_set(e, "the plan: out of memory");
	return rc;
}
