/* `halo-run session [list | stop NAME...]`: the sessions of this user, live or stale
 * (a socket nobody answers on: its supervisor died without removing it), and their
 * end on demand. A stopped session's processes are all killed; stop returns once the
 * supervisor has closed its side, that is once the sandbox is gone. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session/session_int.h"

#define ADMIN_MS 10000

int runner_session_place_name(char *out, size_t n)
{
	const char *x = getenv("XDG_RUNTIME_DIR");
	uid_t me = geteuid();
	struct stat st;
	int w;

	if (x && x[0] == '/' && stat(x, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == me)
		w = snprintf(out, n, "%s/halo-run", x);
	else
		w = snprintf(out, n, "/tmp/halo-run-%u", (unsigned)me);
	return w <= 0 || (size_t)w >= n ? -ENAMETOOLONG : 0;
}

/* Ask a live session a question (info or stop); 0 with *m, or -errno. */
static int ask(int fd, enum session_verb v, struct session_conn *c, struct session_msg *m)
{
	struct session_buf b = {0};
	int rc;

	session_conn_init(c, fd);
	session_buf_begin(&b, v);
	if ((rc = runner_session_send(fd, &b, NULL, 0)) == 0)
		rc = runner_session_recv(c, m, ADMIN_MS);
	return rc < 0 ? rc : 0;
}

static void list_one(const char *dir, const char *name)
{
	char sock[4300];
	struct session_conn c;
	struct session_msg m;
	int fd;

	if (runner_session_path(dir, name, "sock", sock, sizeof(sock)) < 0)
		return;
	if ((fd = runner_session_connect(sock)) < 0) {
		printf("  %s  stale socket (its supervisor is gone; stop removes it)\n", name);
		return;
	}
	if (ask(fd, SESSION_INFO, &c, &m) == 0 && m.verb == SESSION_INFO) {
		printf("  %s  running, supervisor pid %lld, %lld call%s running, idle %lld s, "
		       "workspace %s\n",
		       name, m.pid, m.calls, m.calls == 1 ? "" : "s", m.idle,
		       m.workspace ? m.workspace : "?");
		session_msg_free(&m);
	} else
		printf("  %s  not answering\n", name);
	session_conn_release(&c);
}

static int list(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	printf("sessions: %s\n", dir);
	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char name[SESSION_NAME_MAX + 1];

		if (len <= 5 || len - 5 > SESSION_NAME_MAX || strcmp(de->d_name + len - 5, ".sock"))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(len - 5), de->d_name);
		if (!session_name_ok(name))
			continue;
		list_one(dir, name);
		n++;
	}
	if (d)
		closedir(d);
	if (n == 0)
		printf("  (none)\n");
	return 0;
}

static int stop(const char *dir, const char *name, bool quiet)
{
	char sock[4300];
	struct session_conn c;
	struct session_msg m;
	int fd, rc;

	if (!session_name_ok(name) ||
	    runner_session_path(dir, name, "sock", sock, sizeof(sock)) < 0) {
		fprintf(stderr, "halo-run: session: '%s' is not a session name\n", name);
		return HALO_EXIT_SETUP;
	}
	if ((fd = runner_session_connect(sock)) < 0) {
		if (unlink(sock) == 0) {
			char other[4300];
			int lfd;
			if (runner_session_path(dir, name, "log", other, sizeof(other)) == 0)
				unlink(other);
			if (runner_session_path(dir, name, "lock", other, sizeof(other)) == 0 &&
			    (lfd = open(other, O_RDWR | O_CLOEXEC | O_NOFOLLOW)) >= 0) {
				if (flock(lfd, LOCK_EX | LOCK_NB) == 0) /* nobody starting it */
					unlink(other);
				close(lfd);
			}
			if (!quiet)
				printf("removed the stale socket of %s\n", name);
			return 0;
		}
		if (quiet)
			return 0;
		fprintf(stderr, "halo-run: session: no session %s\n", name);
		return 1;
	}
	rc = ask(fd, SESSION_STOP, &c, &m);
	if (rc == 0) {
		session_msg_free(&m);
		/* The supervisor closes us last, once the sandbox is gone. */
		rc = runner_session_recv(&c, &m, ADMIN_MS);
		if (rc > 0)
			session_msg_free(&m);
		rc = rc == -EPIPE ? 0 : rc;
	}
	session_conn_release(&c);
	if (rc < 0) {
		fprintf(stderr, "halo-run: session: stop %s: %s\n", name, strerror(-rc));
		return 1;
	}
	if (!quiet)
		printf("stopped %s\n", name);
	return 0;
}

int runner_session_stop_quiet(const char *name)
{
	struct halo_err e = {{0}};
	char dir[4200];

	if (runner_session_place(dir, sizeof(dir), &e) < 0) {
		runner_say("session: %s", e.msg);
		return 1;
	}
	return stop(dir, name, true);
}

int runner_cmd_session(const struct runner_opts *o)
{
	const char *verb = o->n_rest > 0 ? o->rest[0] : "list";
	struct halo_err e = {{0}};
	char dir[4200];
	int rc = 0;

	if (strcmp(verb, "list") != 0 && (strcmp(verb, "stop") != 0 || o->n_rest < 2)) {
		fprintf(stderr, "halo-run: session: unknown '%s' (list, stop NAME...)\n", verb);
		return HALO_EXIT_SETUP;
	}
	if (runner_session_place(dir, sizeof(dir), &e) < 0) {
		runner_say("session: %s", e.msg);
		return HALO_EXIT_SETUP;
	}
	if (strcmp(verb, "list") == 0)
		return list(dir);
	for (int i = 1; i < o->n_rest; i++) {
		int r = stop(dir, o->rest[i], false);
		rc = rc ? rc : r;
	}
	return rc;
}
