/* Joining a session, or starting it (session_call.c makes the call on what this
 * returns): the daemon the first call forks, the lock that makes concurrent first
 * calls start one session, and the connection a call makes first thing
 * (runner_session_early), before it loads its policy, so that the supervisor's walk
 * for protected files (sup_walk.c) runs while the call builds the rest. */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session/session_int.h"

#define START_MS 120000 /* a first launch walks the workspace */

/* The daemon keeps nothing of the caller's but what it needs: a harness waiting for
 * EOF on a pipe it gave the first call must not wait for the session's end. */
static void daemon_fds(const char *log_path, int a, int b)
{
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	int lo = a < b ? a : b, hi = a < b ? b : a;

	dup2(nul, 0);
	dup2(log >= 0 ? log : nul, 1);
	dup2(log >= 0 ? log : nul, 2);
	if (lo > 3)
		syscall(SYS_close_range, 3U, (unsigned)lo - 1, 0U);
	if (hi > lo + 1)
		syscall(SYS_close_range, (unsigned)lo + 1, (unsigned)hi - 1, 0U);
	syscall(SYS_close_range, (unsigned)hi + 1, ~0U, 0U);
}

static void __attribute__((noreturn))
daemon_main(const struct runner_opts *o, const runner_launch *l, const struct runner_session_id *id,
	    int lfd, int ready_w, const char *sock, const char *log_path)
{
	runner_launch sl = *l;
	sigset_t none;
	char *ssh_config = NULL;

	setsid(); /* no terminal: its hang-up is not the session's end */
	if (fork() != 0)
		_exit(0);
	daemon_fds(log_path, lfd, ready_w);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	sl.session = true;
	/* The sandbox's ssh route, built here: a call that joins never needs it. */
	if (sl.egress_proxy && !sl.ssh_config &&
	    linux_ssh_config_build(sl.self_exe, sl.workspace, runner_ssh_agent_opted_in(sl.policy),
				   &ssh_config, &sl.ssh_config_len) == 0)
		sl.ssh_config = ssh_config;
	_exit(runner_session_serve(o, &sl, lfd, ready_w, id, sock));
}

/* What the daemon says until it is ready: warnings, then ready or why not. */
static int read_ready(const struct runner_opts *o, int fd, const char *name, const char *log)
{
	char buf[16384];
	size_t len = 0;
	char *line, *nl;

	for (;;) {
		struct pollfd p = {fd, POLLIN, 0};
		ssize_t n;
		if (poll(&p, 1, START_MS) <= 0)
			break;
		if ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
		for (line = buf; (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = '\0';
			if (line[0] == 'R')
				return 0;
			if (line[0] == 'E') {
				runner_say("session %s: %s", name, line + 2);
				return -1;
			}
			if (!o->quiet)
				runner_say("%s", line + 2);
		}
		len = strlen(line);
		memmove(buf, line, len + 1);
		if (len == sizeof(buf) - 1)
			break;
	}
	fprintf(stderr, "halo-run: session %s: its supervisor ended during setup (see %s)\n", name,
		log);
	return -1;
}

static int listen_on(const char *sock)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	mode_t old;
	int rc;

	if (fd < 0)
		return -errno;
	if (strlen(sock) >= sizeof(a.sun_path)) {
		close(fd);
		return -ENAMETOOLONG;
	}
	memcpy(a.sun_path, sock, strlen(sock) + 1);
	unlink(sock); /* stale: nobody answered on it under the lock */
	old = umask(077);
	rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (rc < 0 || listen(fd, 128) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

void runner_session_own_files(const struct runner_opts *o)
{
	/* The supervisor opens them again, appending (and says what is wrong with them). */
	const char *own[2] = {o->audit, o->events};
	for (int i = 0; i < 2; i++) {
		int afd =
		    own[i]
			? open(own[i],
			       O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
			       0600)
			: -1;
		if (afd >= 0)
			close(afd);
	}
}

/* The protected files now (session_scan.c), as the session's list: the first call
 * walks after its socket and the audit file exist (both are masked inside) and before
 * the supervisor's own walk: the session's list is never later than the walk its
 * sandbox is built from, so a file made in between is refused at the next call, never
 * missed. (Each call after is judged by the supervisor's walk: sup_walk.c.) */
static int protected_now(const struct runner_opts *o, const runner_launch *l,
			 struct runner_session_id *id)
{
	struct halo_err e = {{0}};
	runner_launch quiet = *l; /* its warnings are the launch's to say, once */

	quiet.warnings = NULL;
	runner_session_own_files(o);
	linux_session_protected_free(id->prot, id->n_prot);
	id->prot = NULL;
	id->n_prot = 0;
	if (linux_session_protected(&quiet, &id->prot, &id->n_prot, &e) < 0) {
		runner_say("session %s: " SESSION_WALK_FAILED_WORDS ": %s", id->name, e.msg);
		return -1;
	}
	return 0;
}

static int start(const struct runner_opts *o, const runner_launch *l, struct runner_session_id *id,
		 const char *sock, const char *log)
{
	int lfd = listen_on(sock), ready[2], rc;
	pid_t pid;

	if (lfd < 0) {
		fprintf(stderr, "halo-run: session %s: %s: %s\n", id->name, sock, strerror(-lfd));
		return -1;
	}
	if (protected_now(o, l, id) < 0) {
		close(lfd);
		unlink(sock);
		return -1;
	}
	if (pipe2(ready, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		fprintf(stderr, "halo-run: session %s: %s\n", id->name, strerror(errno));
		close(lfd);
		return -1;
	}
	if (pid == 0) {
		close(ready[0]);
		daemon_main(o, l, id, lfd, ready[1], sock, log);
	}
	close(lfd);
	close(ready[1]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	rc = read_ready(o, ready[0], id->name, log);
	close(ready[0]);
	return rc;
}

/* Still the file at that name? (An ending supervisor removes the lock file, under
 * the lock: a lock taken on the removed file locks nothing.) */
static bool lock_current(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

static int lock_open(const char *path, int how)
{
	for (int tries = 0; tries < 8; tries++) {
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0)
			return -1;
		if (flock(fd, how) == 0 && lock_current(fd, path))
			return fd;
		close(fd);
	}
	errno = EAGAIN;
	return -1;
}

/* The call's connection, made before the policy is loaded (runner_session_early):
 * the supervisor starts its walk for protected files when it accepts it, and the walk
 * runs while this call builds its identity and the command's environment. Joined
 * under the shared lock as runner_session_join would: a supervisor that is still starting
 * holds it exclusive. */
static int early_fd = -1;

void runner_session_early(const struct runner_opts *o)
{
	char dir[4200], sock[4300], lock[4300];
	struct halo_err e = {{0}};
	int lk;

	if (!o->session || o->dry_run || !session_name_ok(o->session) ||
	    runner_session_place(dir, sizeof(dir), &e) < 0 ||
	    runner_session_path(dir, o->session, "sock", sock, sizeof(sock)) < 0 ||
	    runner_session_path(dir, o->session, "lock", lock, sizeof(lock)) < 0)
		return;
	if ((lk = lock_open(lock, LOCK_SH)) < 0)
		return;
	early_fd = runner_session_connect(sock); /* -errno: none runs; the call says why */
	/* The supervisor, woken by the connect, may be queued on this CPU: without a
	 * yield it waited there until this call blocked at its hello (0.7 ms), and the
	 * walk with it, another CPU idle. It accepts (and sends the walk elsewhere) first. */
	if (early_fd >= 0)
		sched_yield();
	close(lk);
}

/* Join, or start under the lock: concurrent first calls start one session, and a
 * call never talks to a supervisor that is still starting (the socket accepts from
 * its bind on, but answers only once the sandbox is up; that may take a first walk of
 * a large workspace). Joining takes the lock shared, starting exclusive. */
int runner_session_join(const struct runner_opts *o, const runner_launch *l,
			struct runner_session_id *id, const char *dir, bool *early)
{
	char sock[4300], lock[4300], log[4300];
	int fd = -ENOENT, lk;

	if (runner_session_path(dir, id->name, "sock", sock, sizeof(sock)) < 0 ||
	    runner_session_path(dir, id->name, "lock", lock, sizeof(lock)) < 0 ||
	    runner_session_path(dir, id->name, "log", log, sizeof(log)) < 0) {
		fprintf(stderr, "halo-run: session %s: the directory's name is too long\n",
			id->name);
		return -1;
	}
	if (early_fd >= 0) { /* connected first thing (runner_session_early) */
		fd = early_fd;
		early_fd = -1;
		*early = true;
		return fd;
	}
	lk = lock_open(lock, LOCK_SH);
	/* The early connection found an impostor: said now (a poser may serve one
	 * connection and go; a second look would find the name free). */
	if (early_fd == -EPERM)
		fd = -EPERM;
	else if (lk >= 0 && (fd = runner_session_connect(sock)) >= 0) {
		close(lk);
		return fd; /* the session runs; its supervisor walks (sup_walk.c) */
	}
	early_fd = -1;
	if (fd == -EPERM) {
		fprintf(stderr,
			"halo-run: session %s: %s is served by a process that is not this user's "
			"outside every sandbox (another user namespace); refusing to hand it this "
			"call (halo-run session stop %s removes the socket)\n",
			id->name, sock, id->name);
		if (lk >= 0)
			close(lk);
		return -1;
	}
	if (lk >= 0 && fd != -ECONNREFUSED && fd != -ENOENT) {
		fprintf(stderr, "halo-run: session %s: %s: %s\n", id->name, sock, strerror(-fd));
		close(lk);
		return -1;
	}
	if (lk < 0 || flock(lk, LOCK_UN) < 0 || flock(lk, LOCK_EX) < 0 || !lock_current(lk, lock)) {
		if (lk >= 0)
			close(lk);
		/* Unlinked by an ending supervisor meanwhile: once more, on the new file. */
		if ((lk = lock_open(lock, LOCK_EX)) < 0) {
			fprintf(stderr, "halo-run: session %s: %s: %s\n", id->name, lock,
				strerror(errno));
			return -1;
		}
	}
	/* Started by another call meanwhile: joined as any. */
	if ((fd = runner_session_connect(sock)) < 0) {
		if (start(o, l, id, sock, log) < 0)
			fd = -1;
		else if ((fd = runner_session_connect(sock)) < 0)
			fprintf(stderr, "halo-run: session %s: %s\n", id->name, strerror(-fd));
	}
	close(lk);
	return fd < 0 ? -1 : fd;
}

void runner_session_early_drop(void)
{
	if (early_fd >= 0) /* refused before it was used */
		close(early_fd);
	early_fd = -1;
}
