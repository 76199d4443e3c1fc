/* Landlock: a second layer, independent of the mount layout, that allows writes only
 * where the layout does (the writable trees, /tmp, /dev/shm, the harmless devices and
 * the sandbox's terminals). Should a mount be missed or a future change leave one
 * writable, the kernel still refuses the write. Reads and execution are not handled:
 * secrets are kept out by masking, and reading the ro host root is the point.
 * On ABI >= 6 the domain is also scoped: no connecting to abstract unix sockets and
 * no signals to processes outside the sandbox. On ABI >= 9 pathname unix sockets are
 * handled too: the command connects only to sockets made inside the sandbox and to
 * those sandbox.unixSockets names, whatever the masks missed (a socket bound after
 * the launch scan, or in another network namespace).
 *
 * Debian 12's <linux/landlock.h> stops at ABI 3: later constants are defined here,
 * and the ruleset attribute is our own struct (the kernel accepts a larger struct
 * whose unknown fields are zero). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/linux_int.h"
#include "netns/netns.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule	    445
#define SYS_landlock_restrict_self  446
#endif
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#define HALO_LANDLOCK_ACCESS_FS_RESOLVE_UNIX	 (1ULL << 16) /* ABI 9 */
#define HALO_LANDLOCK_ACCESS_NET_CONNECT_TCP	 (1ULL << 1)  /* ABI 4 */
#define HALO_LANDLOCK_RULE_NET_PORT		 2
#define HALO_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define HALO_LANDLOCK_SCOPE_SIGNAL		 (1ULL << 1)

#define STEP "landlock"

struct ll_net_port {
	uint64_t allowed_access;
	uint64_t port;
};

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;	     /* ABI 6 */
};

struct ll_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

/* Every right that changes the file system, with the ABI that introduced it. */
static const struct {
	uint64_t right;
	int abi;
} write_rights[] = {
    {LANDLOCK_ACCESS_FS_WRITE_FILE, 1},	 {LANDLOCK_ACCESS_FS_REMOVE_DIR, 1},
    {LANDLOCK_ACCESS_FS_REMOVE_FILE, 1}, {LANDLOCK_ACCESS_FS_MAKE_CHAR, 1},
    {LANDLOCK_ACCESS_FS_MAKE_DIR, 1},	 {LANDLOCK_ACCESS_FS_MAKE_REG, 1},
    {LANDLOCK_ACCESS_FS_MAKE_SOCK, 1},	 {LANDLOCK_ACCESS_FS_MAKE_FIFO, 1},
    {LANDLOCK_ACCESS_FS_MAKE_BLOCK, 1},	 {LANDLOCK_ACCESS_FS_MAKE_SYM, 1},
    {LANDLOCK_ACCESS_FS_REFER, 2},	 {LANDLOCK_ACCESS_FS_TRUNCATE, 3},
    {LANDLOCK_ACCESS_FS_IOCTL_DEV, 5},
};

/* The rights that make sense on a file (rather than a directory). */
#define FILE_RIGHTS                                                                                \
	(LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

/* Scratch space that is the sandbox's own (fresh tmpfs): every write right. */
/* (policy_scratch_dirs: the one list, which the hook's file tools also take.) */
/* Devices and terminals: written to, never created in. */
static const char *const write_only_paths[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/tty",
					       "/dev/pts"};

/* What the ruleset restricts. net_tcp (ABI >= 4): TCP connect is handled and only
 * connect_ports are allowed. */
struct ll_plan {
	int abi;
	uint64_t fs;	  /* write rights handled (granted on the writable trees) */
	uint64_t fs_unix; /* RESOLVE_UNIX when handled: granted on named sockets only */
	uint64_t scoped;
	bool net_tcp; /* TCP connect handled: only connect_ports allowed */
	uint16_t connect_ports[NETNS_MAX_HOST_PORTS];
	size_t n_connect_ports;
};

int linux_landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return abi < 0 ? 0 : (int)abi;
}

/* Inside the sandbox's network namespace, loopback reaches nothing but the sandbox
 * itself, the proxy and the egress.hostPorts listeners: the namespace is the boundary,
 * and the command's own test servers, dev servers and databases must work on any port,
 * so TCP is not handled. Without a network namespace (the degraded launch) there is no
 * proxy and the host's network is right there: every TCP connect is refused, loopback
 * included, but for the listed host ports (on every address: Landlock rules name ports,
 * not addresses). */
static void plan_for_abi(struct ll_plan *p, int abi, bool in_netns,
			 const struct policy_ports *host_ports)
{
	*p = (struct ll_plan){.abi = abi};
	p->net_tcp = abi >= 4 && !in_netns;
	for (size_t i = 0;
	     p->net_tcp && host_ports && i < host_ports->n && i < NETNS_MAX_HOST_PORTS; i++)
		p->connect_ports[p->n_connect_ports++] = host_ports->items[i];
	for (size_t i = 0; i < sizeof(write_rights) / sizeof(write_rights[0]); i++)
		if (abi >= write_rights[i].abi)
			p->fs |= write_rights[i].right;
	if (abi >= 6)
		p->scoped = HALO_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | HALO_LANDLOCK_SCOPE_SIGNAL;
	if (abi >= 9)
		p->fs_unix = HALO_LANDLOCK_ACCESS_FS_RESOLVE_UNIX;
}

static int add_fd_rule(int ruleset, int fd, uint64_t rights)
{
	struct ll_path_beneath pb = {.allowed_access = rights, .parent_fd = fd};

	return syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0
		   ? -errno
		   : 0;
}

/* The rules' descriptors, closed together once the rules are in (linux_fds_close: a
 * few calls for all, where a close each was a third of this step's calls). */
struct ll_fds {
	int v[64];
	size_t n;
};

static void keep_fd(struct ll_fds *k, int fd)
{
	if (k && k->n < sizeof(k->v) / sizeof(k->v[0]))
		k->v[k->n++] = fd;
	else
		close(fd);
}

/* Allow `rights` beneath path (only the file rights when it is not a directory). The
 * kernel refuses directory rights on anything else (EINVAL): asked with them first and
 * again without, the common case (a directory, or file rights only) takes no stat. The
 * descriptor goes to k (NULL: closed now). */
static int add_path_rule(int ruleset, const char *path, uint64_t rights, struct ll_fds *k)
{
	int fd = open(path, O_PATH | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -errno;
	rc = add_fd_rule(ruleset, fd, rights);
	if (rc == -EINVAL && (rights & ~FILE_RIGHTS) != 0) {
		struct stat st;
		if (fstat(fd, &st) < 0)
			rc = -errno;
		else if (!S_ISDIR(st.st_mode))
			rc = add_fd_rule(ruleset, fd, rights & FILE_RIGHTS);
	}
	keep_fd(k, fd);
	return rc;
}

/* The standard streams stay writable when reopened by name (/dev/stdout, 2>&1 through
 * /proc/self/fd): when they are a file or a terminal, allow writing that very inode.
 * Pipes and sockets are not checked by Landlock and need no rule. */
static void add_stdio_rules(int ruleset, uint64_t fs)
{
	for (int fd = 0; fd <= 2; fd++) {
		struct stat st;
		if (fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)))
			(void)add_fd_rule(ruleset, fd, fs & FILE_RIGHTS);
	}
}

static void add_net_rules_or_die(int rfd, int ruleset, const struct ll_plan *p)
{
	for (size_t i = 0; i < p->n_connect_ports; i++) {
		struct ll_net_port np = {HALO_LANDLOCK_ACCESS_NET_CONNECT_TCP, p->connect_ports[i]};
		if (syscall(SYS_landlock_add_rule, ruleset, HALO_LANDLOCK_RULE_NET_PORT, &np, 0) <
		    0)
			linux_die(rfd, STEP, errno, "allow TCP connect to port %u",
				  (unsigned)p->connect_ports[i]);
	}
}

/* A named socket: the right on the socket itself, or, should the kernel take the
 * right only on directories, on the one holding it. */
static void add_socket_rules_or_die(int rfd, int ruleset, const struct linux_scan *s,
				    const struct ll_plan *p)
{
	char dir[PATH_MAX];
	int rc;

	for (size_t i = 0; p->fs_unix && i < s->sockets_open.n; i++) {
		const char *path = s->sockets_open.v[i];
		int fd = open(path, O_PATH | O_CLOEXEC);

		if (fd < 0)
			continue; /* gone since the scan: nothing to reach */
		rc = add_fd_rule(ruleset, fd, p->fs_unix);
		close(fd);
		if (rc == -EINVAL) {
			snprintf(dir, sizeof(dir), "%s", path);
			*strrchr(dir, '/') = '\0';
			rc = add_path_rule(ruleset, dir[0] ? dir : "/", p->fs_unix, NULL);
		}
		if (rc < 0)
			linux_die(rfd, STEP, -rc, "allow connecting to %s", path);
	}
}

static void add_fs_rules_or_die(int rfd, int ruleset, const struct linux_scan *s,
				const struct ll_plan *p)
{
	struct ll_fds k = {.n = 0};
	int rc;

	for (size_t i = 0; i < s->writable.n; i++)
		if ((rc = add_path_rule(ruleset, s->writable.v[i], p->fs, &k)) < 0)
			linux_die(rfd, STEP, -rc, "allow writes beneath %s", s->writable.v[i]);
	size_t n_scratch;
	const char *const *scratch_dirs = policy_scratch_dirs(&n_scratch);
	for (size_t i = 0; i < n_scratch; i++)
		if ((rc = add_path_rule(ruleset, scratch_dirs[i], p->fs, &k)) < 0 && rc != -ENOENT)
			linux_die(rfd, STEP, -rc, "allow writes beneath %s", scratch_dirs[i]);
	for (size_t i = 0; i < sizeof(write_only_paths) / sizeof(write_only_paths[0]); i++)
		if ((rc = add_path_rule(ruleset, write_only_paths[i], p->fs & FILE_RIGHTS, &k)) <
			0 &&
		    rc != -ENOENT)
			linux_die(rfd, STEP, -rc, "allow writing %s", write_only_paths[i]);
	add_stdio_rules(ruleset, p->fs);
	linux_fds_close(k.v, k.n);
}

static void restrict_self_or_die(int rfd, int ruleset)
{
	if (syscall(SYS_landlock_restrict_self, ruleset, 0) == 0)
		return;
	/* Without CAP_SYS_ADMIN in our namespace (the degraded path), Landlock needs
	 * no_new_privs first; the launcher sets it anyway before exec. */
	if (errno != EPERM || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_landlock_restrict_self, ruleset, 0) < 0)
		linux_die(rfd, STEP, errno, "restrict the sandbox");
}

void linux_landlock_apply_or_die(const struct linux_scan *s, bool in_netns,
				 const struct policy_ports *host_ports, int report_fd)
{
	struct ll_plan p;
	struct ll_ruleset_attr attr;
	int ruleset;

	plan_for_abi(&p, linux_landlock_abi(), in_netns, host_ports);
	if (p.abi == 0)
		return; /* no Landlock: the launcher says so in --dry-run and doctor */
	attr = (struct ll_ruleset_attr){
	    .handled_access_fs = p.fs | p.fs_unix,
	    .handled_access_net = p.net_tcp ? HALO_LANDLOCK_ACCESS_NET_CONNECT_TCP : 0,
	    .scoped = p.scoped,
	};
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ruleset < 0)
		linux_die(report_fd, STEP, errno, "create the ruleset (ABI %d)", p.abi);
	add_fs_rules_or_die(report_fd, ruleset, s, &p);
	add_socket_rules_or_die(report_fd, ruleset, s, &p);
	add_net_rules_or_die(report_fd, ruleset, &p);
	restrict_self_or_die(report_fd, ruleset);
	close(ruleset);
}
