/* `halo-run --session NAME -- CMD`: one call into a named session, which the first
 * call starts. What fixes the session's sandbox (the effective policy, the workspace,
 * the options that shape the launch) is compared at every call: a call that would
 * change it is refused (125), naming what differs. Each call keeps its own stdio
 * (passed to the session, which runs the command with them), its exit code, its
 * signals (forwarded: INT, TERM, HUP... reach its command only) and its wall-clock
 * limit (enforced here: the command's process group is killed, exit 124).
 *
 * The control socket lives in a directory of the user's own, mode 0700:
 * $XDG_RUNTIME_DIR/halo-run, else /tmp/halo-run-UID. Neither is in the sandbox's
 * view (its /run and /tmp are its own), and the host's sockets are masked inside. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "linux/session_proto.h"
#include "events/events.h"
#include "linux/linux.h"
#include "opts/opts.h"
#include "events/events.h"
#include "session/session_int.h"

extern char **environ;

#define SEND_MS 10000

/* A path as the identity holds it: its directory resolved (a relative name from
 * another directory, or by another way, is the file it names), its last component as
 * given (the supervisor refuses a link there). */
static void path_text(FILE *f, const char *key, const char *path)
{
	char dir[4096], real[4096];
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	int n = slash ? snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path)
		      : snprintf(dir, sizeof(dir), ".");

	if (n >= 0 && (size_t)n < sizeof(dir) && realpath(dir[0] ? dir : "/", real))
		fprintf(f, " %s=%s%s%s", key, real, strcmp(real, "/") ? "/" : "", base);
	else
		fprintf(f, " %s=%s", key, path);
}

/* The launch options that shape the sandbox, as text: a call with other ones is a
 * call into another sandbox. The wall-clock limit is the call's own. The session's
 * supervisor holds the audit, the events file and the decider for all its calls
 * (the calls share its proxy): a call names the same ones or is refused. */
static char *options_text(const struct runner_opts *o, const runner_launch *l)
{
	const struct rlimits_set *r = &l->limits;
	char *s = NULL, *t;
	size_t n = 0;
	unsigned ms = 0;
	struct halo_err e = {{0}};
	FILE *f = open_memstream(&s, &n);

	if (!f)
		return NULL;
	fprintf(f, "home=%s limits=cpu:%lld,mem:%lld,fsize:%lld,nofile:%lld,nproc:%lld",
		l->env_home ? l->env_home : l->pw_home, r->cpu_seconds, r->memory_bytes,
		r->file_size_bytes, r->open_files, r->processes);
	if (o->audit)
		path_text(f, "audit", o->audit);
	if (o->events)
		path_text(f, "events", o->events);
	if (o->decider && runner_decider_timeout(o->decider_timeout, &ms, &e) == 0) {
		char hex[65];
		/* A long command line by its digest: the whole text must fit one value. */
		runner_sha256_hex(o->decider, strlen(o->decider), hex);
		if (strlen(o->decider) <= 512)
			fprintf(f, " decider=%s", o->decider);
		else
			fprintf(f, " decider=sha256:%s", hex);
		fprintf(f, " decider-timeout=%ums", ms);
	}
	for (size_t i = 0; i < l->n_cache_binds; i++)
		fprintf(f, " cache=%s", l->cache_binds[i]);
	session_home_set_text(f, l);
	/* The session keeps its own binary read-only (where it lies in a writable tree),
	 * not the call's: a call from another halo-run is another launch (review: a copy
	 * in the workspace joined, and the session's command replaced it). */
	if (l->self_exe)
		path_text(f, "self", l->self_exe);
	/* halo-run learn: the session's proxy learns for every call, into one file */
	if (o->learn)
		path_text(f, o->wildcards ? "learn-wildcards" : "learn", o->out_dir);
	fclose(f);
	/* Never empty (the protocol refuses an empty value). */
	t = s && *s ? s : NULL;
	if (!t)
		free(s);
	return t;
}

int runner_session_identity(const char *name, const struct runner_opts *o, const runner_launch *l,
			    struct runner_session_id *id)
{
	char *json = policy_to_text(l->policy);
	long long idle = l->policy->limits.session_idle_seconds;

	memset(id, 0, sizeof(*id));
	if (!json)
		return -ENOMEM;
	snprintf(id->name, sizeof(id->name), "%s", name);
	/* A cryptographic digest: two policies that differ never compare equal. */
	runner_sha256_hex(json, strlen(json), id->policy);
	free(json);
	snprintf(id->workspace, sizeof(id->workspace), "%s", l->workspace);
	id->idle_seconds = idle > 0 ? idle : POLICY_SESSION_IDLE_DEFAULT;
	id->options = options_text(o, l);
	return id->options ? 0 : -ENOMEM;
}

int runner_session_place(char *out, size_t n, struct halo_err *e)
{
	uid_t me = geteuid();
	struct stat st;

	if (runner_session_place_name(out, n) < 0) {
		halo_err_set(e, "the session directory's name is too long");
		return -ENAMETOOLONG;
	}
	/* Looked at first: it exists at every launch but the first. */
	bool there = lstat(out, &st) == 0;
	if (!there) {
		if (mkdir(out, 0700) < 0 && errno != EEXIST) {
			halo_err_set(e, "%s: %s", out, strerror(errno));
			return -errno;
		}
		there = lstat(out, &st) == 0;
	}
	/* Ours alone: a directory someone else made (or can write) could hand a call a
	 * socket of theirs. */
	if (!there || !S_ISDIR(st.st_mode) || st.st_uid != me || (st.st_mode & 077)) {
		halo_err_set(e,
			     "%s is not a private directory of this user (mode 0700, owned by "
			     "uid %u); refusing to keep session sockets there",
			     out, (unsigned)me);
		return -EPERM;
	}
	return 0;
}

const char *runner_session_dir_made(char *out, size_t n)
{
	struct halo_err e = {{0}};

	return runner_session_place(out, n, &e) == 0 ? out : NULL;
}

int runner_session_path(const char *dir, const char *name, const char *ext, char *out, size_t n)
{
	int w = snprintf(out, n, "%s/%s.%s", dir, name, ext);

	return w > 0 && (size_t)w < n ? 0 : -ENAMETOOLONG;
}

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5 */
#endif

/* This process's user namespace, looked up once: a supervisor checks every call that
 * connects, and a process changes its namespace only by unshare or setns, which
 * halo-run does in children of its own (keyed by pid: a fork looks again). */
static int own_userns(struct stat *a)
{
	static struct stat own;
	static pid_t own_pid;
	pid_t me = getpid();

	if (own_pid != me) {
		if (stat("/proc/self/ns/user", &own) < 0)
			return -1;
		own_pid = me;
	}
	*a = own;
	return 0;
}

static int same_userns(pid_t pid)
{
	char p[64];
	struct stat a, b;

	snprintf(p, sizeof(p), "/proc/%d/ns/user", (int)pid);
	if (own_userns(&a) < 0 || stat(p, &b) < 0)
		return -EPERM;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino ? 0 : -EPERM;
}

int runner_session_peer_ok(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr), plen = sizeof(int);
	int pidfd = -1, rc;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || cr.uid != geteuid() ||
	    cr.pid <= 0)
		return -EPERM;
	/* A pidfd (where the kernel has one) proves afterwards that the pid still named
	 * the peer when its namespace was read, not a process that took its number. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &plen) < 0) {
		if (errno != ENOPROTOOPT && errno != EINVAL)
			return -EPERM; /* the peer is gone */
		pidfd = -1;
	}
	rc = same_userns(cr.pid);
	if (rc == 0 && pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0)
		rc = -EPERM;
	if (pidfd >= 0)
		close(pidfd);
	return rc;
}

/* 0 and the fd, or -errno: -ECONNREFUSED / -ENOENT when nobody serves it, -EPERM when
 * who serves it is not this user outside every sandbox (runner_session_peer_ok). */
int runner_session_connect(const char *sock_path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(sock_path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	strcpy(a.sun_path, sock_path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int err = errno;
		close(fd);
		return -err;
	}
	if (runner_session_peer_ok(fd) < 0) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* One frame from fd within ms (blocking use: the call and the admin commands). */
int runner_session_recv(struct session_conn *c, struct session_msg *m, int ms)
{
	char why[128];
	uint64_t end = proxy_now_ms() + (uint64_t)ms;
	int rc;

	for (;;) {
		if ((rc = session_conn_next(c, m, why, sizeof(why))) != 0)
			return rc;
		struct pollfd p = {c->fd, POLLIN, 0};
		uint64_t now = proxy_now_ms();
		if (now >= end)
			return -ETIMEDOUT;
		if (poll(&p, 1, (int)(end - now)) < 0 && errno != EINTR)
			return -errno;
		if ((rc = session_conn_read(c)) < 0)
			return rc;
	}
}

int runner_session_send(int fd, struct session_buf *b, const int *fds, size_t n)
{
	int rc = session_buf_end(b);

	if (rc == 0)
		rc = session_send(fd, b, fds, n, SEND_MS);
	session_buf_free(b);
	return rc;
}
