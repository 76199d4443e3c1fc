/* --dry-run: the plan, so a user can read what would be enforced before running. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/launch_int.h"

static void put_line(void *arg, const char *text)
{
	fprintf((FILE *)arg, "  %s\n", text);
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

static const char *mode_name(enum policy_mode m)
{
	return m == POLICY_MODE_READ_ONLY ? "read-only"
	       : m == POLICY_MODE_OFF	  ? "off"
					  : "workspace-write";
}

static void print_paths(FILE *out, const char *title, const struct linux_paths *p)
{
	fprintf(out, "%s (%zu):\n", title, p->n);
	for (size_t i = 0; i < p->n; i++)
		fprintf(out, "  %s\n", p->v[i]);
}

static void print_mounts(FILE *out, const struct linux_launch *l, const struct linux_scan *s)
{
	fprintf(out,
		"mounts:\n"
		"  /             host root, read-only, nosuid, nodev (recursive)\n"
		"  %-13s workspace, %s\n",
		l->workspace,
		l->policy->mode == POLICY_MODE_READ_ONLY ? "read-only" : "read-write");
	for (size_t i = 0; i < l->policy->writable_abs.n; i++)
		fprintf(out, "  %-13s writable root, read-write\n",
			l->policy->writable_abs.items[i]);
	for (size_t i = 0; i < l->n_cache_binds; i++)
		fprintf(out, "  %-13s tool caches (sandbox.caches: %s), read-write, not scanned\n",
			l->cache_binds[i], policy_caches_name(l->policy->caches));
	fprintf(
	    out,
	    "  /tmp          private tmpfs (TMPDIR=/tmp)\n"
	    "  /run          empty tmpfs (host service sockets out of reach)\n"
	    "  /proc         fresh for the pid namespace; kcore, sysrq-trigger, keys... masked; "
	    "/proc/sys read-only\n"
	    "  /dev          minimal: null zero full random urandom tty, private devpts, shm\n"
	    "  /sys          read-only\n");
	print_paths(out, "masked protected paths (no read, no write, no replace)", &s->masked);
	fprintf(out, "allowRead carve-outs, read-only (a loosening) (%zu):\n", s->carved.n);
	for (size_t i = 0; i < s->carved.n; i++)
		fprintf(out, "  %s%s%s\n", s->carved.v[i],
			strcmp(s->carved.v[i], s->carved_src.v[i]) ? " <- " : "",
			strcmp(s->carved.v[i], s->carved_src.v[i]) ? s->carved_src.v[i] : "");
	print_paths(out, "sanitized copies (secret entries removed)", &s->sanitized);
	if (l->policy->guard_persistence != 0)
		print_paths(out, "persistence guard (read-only)", &s->guarded);
	else
		fprintf(out, "persistence guard: off (sandbox.guardPersistence: false)\n");
	print_paths(out, "pinned (bound onto themselves: cannot be renamed, removed or replaced)",
		    &s->pinned);
	if (l->policy->guard_persistence != 0)
		print_paths(out,
			    "missing guard targets (their creation refused by the sandbox's init)",
			    &s->missing);
	if (s->sockets_open.n)
		print_paths(out, "host unix sockets left reachable (sandbox.unixSockets)",
			    &s->sockets_open);
	fprintf(out, "workspace scan: %zu entries%s\n", s->entries_scanned,
		s->truncated ? " (TRUNCATED: the launch would be refused)" : "");
}

static void print_env(FILE *out, char **envp)
{
	fprintf(out, "environment:\n");
	for (size_t i = 0; envp && envp[i]; i++) {
		const char *eq = strchr(envp[i], '=');
		fprintf(out, "  %.*s\n", eq ? (int)(eq - envp[i]) : (int)strlen(envp[i]), envp[i]);
	}
}

/* The listeners take these ports on the sandbox's loopback before the command starts:
 * say so, a dev server told to bind one would otherwise fail without a reason. */
static void print_host_ports(FILE *out, const struct linux_launch *l, int userns)
{
	const struct policy_ports *hp = &l->policy->host_ports;

	if (!hp->n || !l->egress_proxy)
		return;
	fprintf(out, "host ports (egress.hostPorts):");
	for (size_t i = 0; i < hp->n; i++)
		fprintf(out, "%s %u", i ? "," : "", (unsigned)hp->items[i]);
	if (userns != 0) {
		fprintf(out, "\n  no network namespace: the command reaches the host's loopback "
			     "directly\n");
		return;
	}
	fprintf(out, "\n  inside: localhost, 127.0.0.1 and [::1] on each port, relayed by "
		     "halo-run to the host's 127.0.0.1:PORT, else [::1]:PORT; each connection "
		     "audited\n"
		     "  these ports are taken inside the sandbox: a command that binds one gets "
		     "EADDRINUSE\n");
}

int linux_dry_run(const struct linux_launch *l, FILE *out, struct halo_err *e)
{
	struct linux_scan s = {0};
	int userns = linux_userns_probe();
	int abi = linux_landlock_abi();
	int rc = linux_scan(l, &s, e);
	char mem_desc[LINUX_CGROUP_PATH + 64];
	bool mem_cgroup = l->limits.memory_bytes != RLIMITS_UNSET &&
			  linux_cgroup_memory_probe(mem_desc, sizeof(mem_desc));

	if (rc < 0)
		return rc;
	fprintf(out, "halo-run plan\npolicy: %s\nmode: %s\nworkspace: %s\ncommand:",
		l->policy->source ? l->policy->source : "?", mode_name(l->policy->mode),
		l->workspace);
	for (size_t i = 0; l->argv[i]; i++)
		fprintf(out, " %s", l->argv[i]);
	fprintf(out,
		"\nnamespaces: user (uid %u, gid %u mapped to themselves), mount, pid, net "
		"(loopback only), ipc, uts: %s\n",
		(unsigned)getuid(), (unsigned)getgid(),
		userns == 0 ? "available" : strerror(-userns));
	print_mounts(out, l, &s);
	fprintf(out, "limits:\n");
	rlimits_describe(&l->limits, geteuid() == 0 && l->limits.processes != RLIMITS_UNSET,
			 mem_cgroup ? mem_desc : NULL, put_line, out);
	print_env(out, l->envp);
	print_host_ports(out, l, userns);
	fprintf(out, "capabilities: all dropped (effective, permitted, inheritable, ambient, "
		     "bounding); no_new_privs\n");
	fprintf(out, "landlock: %s\n",
		abi > 0 ? "writes limited to the writable trees" : "unavailable");
	if (abi > 0)
		fprintf(
		    out, "  ABI %d%s%s%s\n", abi,
		    abi >= 4 && userns != 0 ? ", every TCP connect refused (no network namespace)"
					    : "",
		    abi >= 4 && userns != 0 && l->policy->host_ports.n ? " but to the host ports"
								       : "",
		    abi >= 6 ? ", abstract unix sockets and signals scoped" : "");
	if (abi > 0)
		fprintf(out, "  pathname unix sockets: %s\n",
			abi >= 9 ? "only the sandbox's own and sandbox.unixSockets (ABI 9)"
				 : "not handled below ABI 9: host sockets are masked by name");
	fprintf(out, "seccomp deny list:\n");
	linux_seccomp_describe(put_line, out);
	fprintf(out, "not enforced:\n"
		     "  files created after launch that match a protected glob are not masked\n"
		     "  a hard link to a protected file inside a writable tree is not masked\n"
		     "  host unix sockets bound after the launch, or in another network "
		     "namespace away from the known places, are not masked (below ABI 9)\n"
		     "  guard names missing below the top of a writable tree (sub/.vscode) may "
		     "be created; a repository the command creates is its own, hooks and config "
		     "included (halo-run names it at the end)\n"
		     "  egress: only through halo-run's proxy (HTTP 127.0.0.1:3128, SOCKS5 "
		     "127.0.0.1:1080); tools that ignore the proxy variables find no route;\n"
		     "  the sandbox's loopback (any port, TCP and UDP) is the command's own\n");
	if (userns != 0)
		fprintf(out, "  %s\n",
			l->policy->fail_if_unavailable == 0
			    ? "namespaces, mount layout and masks (user namespaces "
			      "unavailable; failIfUnavailable: false)"
			    : "NOTHING: the launch would be refused (user namespaces "
			      "unavailable)");
	if (abi == 0)
		fprintf(out, "  landlock (kernel without Landlock)\n");
	linux_scan_free(&s);
	return 0;
}
