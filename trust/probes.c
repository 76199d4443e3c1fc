/* `halo-run __probe from-verify KIND:PARAM...`: the probe runner that `halo-run verify`
 * starts inside the sandbox (its own binary, so the probes need nothing installed).
 * Each probe runs in a throwaway child, tries one thing and prints one line,
 * "INDEX RESULT": ok, errno=NAME, killed=SIGNAME, value=TEXT or setup-failed. The
 * runner judges nothing; verify, outside, compares with what the policy expects.
 *
 * Every attempt is harmless even if someone ran it with no sandbox at all: system
 * calls get invalid arguments or act on the probe's own child, files are only opened
 * for appending (nothing written) or created under names verify chose (and removes),
 * kill sends signal 0, and no file's content is ever printed. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/linux.h"
#include "netns/netns.h"
#include "plan/plan.h"
#include "rlimits/rlimits.h"
#include "trust/trust.h"
#include "opts/opts.h"

#define NOPATH	      ((uintptr_t) "/nonexistent-halo-verify")
#define EMPTY	      ((uintptr_t) "")
#define BAD_FLAGS     0x80000000UL
#define BAD_CLOCK     0x7fffffff
#define PROBE_SECONDS 15

/* Write "errno=NAME" (or "ok") into out. */
static void say_errno(char *out, size_t n, int err)
{
	const char *name = err ? strerrorname_np(err) : NULL;

	if (err == 0)
		snprintf(out, n, "ok");
	else
		snprintf(out, n, "errno=%s", name ? name : "?");
}

static void say_rc(char *out, size_t n, long rc)
{
	say_errno(out, n, rc < 0 ? errno : 0);
}

static void k_sys(const char *arg, char *out, size_t n)
{
	long rc = probe_sys_try(arg);

	if (rc == PROBE_SYS_UNKNOWN)
		snprintf(out, n, "setup-failed");
	else
		say_rc(out, n, rc);
}

/* ---------------------------------------------------------------- files */

static void k_read(const char *arg, char *out, size_t n)
{
	int fd = open(arg, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	char buf[64];

	if (fd < 0 || fstat(fd, &st) < 0) {
		say_errno(out, n, errno);
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		DIR *d = fdopendir(fd);
		struct dirent *de;
		int k = 0;
		while (d && (de = readdir(d)))
			k += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
		snprintf(out, n, "value=listed %d entries", k);
		if (d)
			closedir(d);
		return;
	}
	ssize_t r = read(fd, buf, sizeof(buf));
	if (r < 0)
		say_errno(out, n, errno);
	else
		snprintf(out, n, "value=read %zd bytes", r); /* the bytes themselves: never */
	close(fd);
}

/* Opened for appending, nothing written: the question is whether the open succeeds. */
static void k_write(const char *arg, char *out, size_t n)
{
	int fd = open(arg, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	say_rc(out, n, fd);
	if (fd >= 0)
		close(fd);
}

/* Created and left for verify to look for on the host (and remove). */
static void k_create(const char *arg, char *out, size_t n)
{
	int fd = open(arg, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);

	say_rc(out, n, fd);
	if (fd >= 0)
		close(fd);
}

static void k_env(const char *arg, char *out, size_t n)
{
	snprintf(out, n, "value=%s", getenv(arg) ? "present" : "absent");
}

/* ---------------------------------------------------------------- network */

static int connect_bounded(int fd, const struct sockaddr *sa, socklen_t len, int ms)
{
	struct pollfd p = {fd, POLLOUT, 0};
	int err = 0;
	socklen_t el = sizeof(err);

	if (connect(fd, sa, len) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return errno;
	if (poll(&p, 1, ms) <= 0)
		return ETIMEDOUT;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
		return errno;
	return err;
}

static socklen_t loopback(int family, unsigned port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return sizeof(*a);
	}
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	a6->sin6_family = AF_INET6;
	a6->sin6_port = htons((uint16_t)port);
	a6->sin6_addr = in6addr_loopback;
	return sizeof(*a6);
}

static void tcp(int family, const char *arg, char *out, size_t n)
{
	struct sockaddr_storage ss;
	socklen_t len = loopback(family, (unsigned)atoi(arg), &ss);
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		say_errno(out, n, errno);
		return;
	}
	say_errno(out, n, connect_bounded(fd, (struct sockaddr *)&ss, len, 3000));
	close(fd);
}

static void udp(int family, const char *arg, char *out, size_t n)
{
	struct sockaddr_storage ss;
	socklen_t len = loopback(family, (unsigned)atoi(arg), &ss);
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		say_errno(out, n, errno);
		return;
	}
	say_rc(out, n, sendto(fd, "halo-verify", 11, 0, (struct sockaddr *)&ss, len));
	close(fd);
}

static void k_tcp4(const char *a, char *o, size_t n)
{
	tcp(AF_INET, a, o, n);
}
static void k_tcp6(const char *a, char *o, size_t n)
{
	tcp(AF_INET6, a, o, n);
}
static void k_udp4(const char *a, char *o, size_t n)
{
	udp(AF_INET, a, o, n);
}
static void k_udp6(const char *a, char *o, size_t n)
{
	udp(AF_INET6, a, o, n);
}

static void k_unix(const char *arg, char *out, size_t n)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	size_t len = strlen(arg);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || len + 1 > sizeof(a.sun_path)) {
		say_errno(out, n, fd < 0 ? errno : ENAMETOOLONG);
		return;
	}
	memcpy(a.sun_path + 1, arg, len); /* abstract: a leading NUL */
	say_rc(out, n,
	       connect(fd, (struct sockaddr *)&a, (socklen_t)(sizeof(sa_family_t) + 1 + len)));
	close(fd);
}

static bool same_netns(const char *ino)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) == 0 &&
	       (unsigned long long)st.st_ino == strtoull(ino, NULL, 10);
}

static void k_netns(const char *arg, char *out, size_t n)
{
	snprintf(out, n, "value=%s", same_netns(arg) ? "the host's" : "its own");
}

/* CONNECT through the sandbox's own proxy; the status code is the answer. In the
 * host's network namespace there is no proxy of ours on that port: nothing is sent. */
static void k_proxy(const char *arg, char *out, size_t n)
{
	const char *target = strchr(arg, ':');
	struct sockaddr_storage ss;
	struct timeval tv = {10, 0};
	char req[600], resp[256];
	size_t got = 0;
	int fd, code;

	if (!target) {
		snprintf(out, n, "setup-failed");
		return;
	}
	if (same_netns(arg)) {
		snprintf(out, n, "value=no proxy (host netns)");
		return;
	}
	target++;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (fd < 0 ||
	    connect(fd, (struct sockaddr *)&ss, loopback(AF_INET, NETNS_HTTP_PORT, &ss)) < 0) {
		say_errno(out, n, errno);
		if (fd >= 0)
			close(fd);
		return;
	}
	snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target);
	if (write(fd, req, strlen(req)) < 0) {
		say_errno(out, n, errno);
		close(fd);
		return;
	}
	while (got < sizeof(resp) - 1) {
		ssize_t r = read(fd, resp + got, sizeof(resp) - 1 - got);
		if (r <= 0)
			break;
		got += (size_t)r;
		if (memchr(resp, '\n', got))
			break;
	}
	resp[got] = '\0';
	close(fd);
	if (sscanf(resp, "HTTP/1.%*d %d", &code) == 1)
		snprintf(out, n, "value=%d", code);
	else
		snprintf(out, n, "value=no answer");
}

static void k_ifaces(const char *arg, char *out, size_t n)
{
	struct if_nameindex *ifs = if_nameindex();
	size_t used = 0;

	(void)arg;
	used = (size_t)snprintf(out, n, "value=");
	for (struct if_nameindex *i = ifs; i && i->if_index && used < n; i++)
		used +=
		    (size_t)snprintf(out + used, n - used, "%s%s", i == ifs ? "" : ",", i->if_name);
	if (ifs)
		if_freenameindex(ifs);
}

/* ---------------------------------------------------------------- processes, ids */

/* "PID:PIDNS": a host process by its host pid. In a pid namespace of our own the same
 * number may belong to one of the sandbox's processes: then the answer proves nothing
 * either way, and says so. */
static bool pid_is_ours(const char *arg)
{
	const char *ino = strchr(arg, ':');
	struct stat self, other;
	char path[64];

	if (!ino || stat("/proc/self/ns/pid", &self) < 0 ||
	    (unsigned long long)self.st_ino == strtoull(ino + 1, NULL, 10))
		return false; /* the host's pid namespace: the number is the host's process */
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", atoi(arg));
	return stat(path, &other) == 0 && other.st_ino == self.st_ino;
}

static void k_kill(const char *arg, char *out, size_t n)
{
	int rc = kill((pid_t)atoi(arg), 0);

	if (rc == 0 && pid_is_ours(arg))
		snprintf(out, n, "value=inconclusive (the pid is also the sandbox's)");
	else
		say_rc(out, n, rc);
}

static void k_procmem(const char *arg, char *out, size_t n)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", atoi(arg));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && strchr(arg, ':') && pid_is_ours(arg))
		snprintf(out, n, "value=inconclusive (the pid is also the sandbox's)");
	else
		say_rc(out, n, fd);
	if (fd >= 0)
		close(fd);
}

static void k_fd(const char *arg, char *out, size_t n)
{
	say_rc(out, n, fcntl(atoi(arg), F_GETFD));
}

static void k_fds(const char *arg, char *out, size_t n)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	size_t used;
	int k = 0;

	(void)arg;
	if (!d) {
		say_errno(out, n, errno);
		return;
	}
	used = (size_t)snprintf(out, n, "value=");
	while ((de = readdir(d)) && used < n)
		if (de->d_name[0] != '.' && atoi(de->d_name) != dirfd(d))
			used += (size_t)snprintf(out + used, n - used, "%s%s", k++ ? "," : "",
						 de->d_name);
	closedir(d);
}

static void k_rlimit(const char *arg, char *out, size_t n)
{
	static const struct {
		const char *name;
		int res;
	} names[] = {{"core", RLIMIT_CORE},   {"cpu", RLIMIT_CPU},	 {"data", RLIMIT_DATA},
		     {"fsize", RLIMIT_FSIZE}, {"nofile", RLIMIT_NOFILE}, {"nproc", RLIMIT_NPROC}};
	struct rlimit r;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(arg, names[i].name) != 0)
			continue;
		if (getrlimit(names[i].res, &r) < 0) {
			say_errno(out, n, errno);
		} else if (r.rlim_cur == RLIM_INFINITY) {
			snprintf(out, n, "value=unlimited");
		} else {
			snprintf(out, n, "value=%llu", (unsigned long long)r.rlim_cur);
		}
		return;
	}
	snprintf(out, n, "setup-failed");
}

/* The memory limit of the probe's own memory cgroup: v1 memory.limit_in_bytes, else
 * v2 memory.max (in /sys/fs/cgroup or the hybrid layout's unified mount). */
static void k_memcg(const char *arg, char *out, size_t n)
{
	static const struct {
		const char *controller, *mount, *file;
	} where[] = {
	    {"memory", "/sys/fs/cgroup/memory", "memory.limit_in_bytes"},
	    {NULL, "/sys/fs/cgroup", "memory.max"},
	    {NULL, "/sys/fs/cgroup/unified", "memory.max"},
	};
	char self[4096], own[LINUX_CGROUP_PATH], path[LINUX_CGROUP_PATH + 64], buf[64];

	(void)arg;
	snprintf(out, n, "value=unlimited");
	if (linux_cgroup_read_self(self, sizeof(self)) < 0)
		return;
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		int fd;
		ssize_t got;

		if (linux_cgroup_own_path(self, where[i].controller, own, sizeof(own)) < 0)
			continue;
		snprintf(path, sizeof(path), "%s%s/%s", where[i].mount, own, where[i].file);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		got = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		if (got <= 0)
			continue;
		buf[got] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(out, n, "value=%s", strcmp(buf, "max") == 0 ? "unlimited" : buf);
		return;
	}
}

static void k_status(const char *arg, char *out, size_t n)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	size_t len = strlen(arg);

	snprintf(out, n, "value=(none)");
	if (!f) {
		say_errno(out, n, errno);
		return;
	}
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, arg, len) == 0 && line[len] == ':') {
			char *v = line + len + 1 + strspn(line + len + 1, " \t");
			v[strcspn(v, "\n")] = '\0';
			snprintf(out, n, "value=%s", v);
			break;
		}
	fclose(f);
}

static void k_hostname(const char *arg, char *out, size_t n)
{
	char name[256] = "";

	(void)arg;
	gethostname(name, sizeof(name) - 1);
	snprintf(out, n, "value=%s", name);
}

static void k_shm(const char *arg, char *out, size_t n)
{
	struct shmid_ds ds;

	say_rc(out, n, shmctl(atoi(arg), IPC_STAT, &ds));
}

/* ---------------------------------------------------------------- the runner */

static const struct {
	const char *kind;
	void (*fn)(const char *arg, char *out, size_t n);
} kinds[] = {
    {"read", k_read},	    {"write", k_write}, {"create", k_create}, {"env", k_env},
    {"tcp4", k_tcp4},	    {"tcp6", k_tcp6},	{"udp4", k_udp4},     {"udp6", k_udp6},
    {"unix", k_unix},	    {"proxy", k_proxy}, {"sys", k_sys},	      {"kill", k_kill},
    {"procmem", k_procmem}, {"fd", k_fd},	{"fds", k_fds},	      {"rlimit", k_rlimit},
    {"status", k_status},   {"netns", k_netns}, {"ifaces", k_ifaces}, {"hostname", k_hostname},
    {"shm", k_shm},	    {"memcg", k_memcg},
};

/* One probe in a throwaway child; the line it printed, or how it died. */
static void run_one(int index, const char *spec)
{
	const char *colon = strchr(spec, ':');
	size_t klen = colon ? (size_t)(colon - spec) : strlen(spec);
	int ws = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("%d setup-failed\n", index);
		return;
	}
	if (pid == 0) {
		char out[512] = "setup-failed";
		alarm(PROBE_SECONDS);
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			if (strlen(kinds[k].kind) == klen &&
			    strncmp(spec, kinds[k].kind, klen) == 0)
				kinds[k].fn(colon ? colon + 1 : "", out, sizeof(out));
		printf("%d %s\n", index, out);
		fflush(stdout);
		_exit(0);
	}
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(ws)) {
		const char *sig = sigabbrev_np(WTERMSIG(ws));
		printf("%d killed=SIG%s\n", index, sig ? sig : "?");
	}
}

int runner_probe_main(int n, char **args)
{
	const char *sandboxed = getenv("HALO_SANDBOX");

	if (n < 1 || strcmp(args[0], PROBE_TOKEN) != 0 || !sandboxed ||
	    strcmp(sandboxed, "1") != 0) {
		fprintf(stderr, "halo-run: __probe is internal to 'halo-run verify'; run that "
				"instead\n");
		return HALO_EXIT_SETUP;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < n; i++)
		run_one(i - 1, args[i]);
	return 0;
}

int runner_cmd_probe(const struct runner_opts *o)
{
	return runner_probe_main(o->n_rest, o->rest);
}
