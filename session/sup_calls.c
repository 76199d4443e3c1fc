/* A session's calls on its control socket (session_sup.c is the daemon): each
 * connects, says hello (refused unless what fixes the sandbox is the same, and no
 * protected file appeared since), sends its command line, environment and stdio, then
 * signals and window sizes, and is told how its command ended. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session/sup_int.h"

void sup_ready_say(struct sup *s, char kind, const char *text)
{
	char line[4200];
	int n = snprintf(line, sizeof(line), "%c %s\n", kind, text);
	ssize_t w;

	if (s->ready_fd < 0)
		return;
	w = write(s->ready_fd, line, n > 0 && (size_t)n < sizeof(line) ? (size_t)n : 0);
	(void)w;
	if (kind != 'W') {
		close(s->ready_fd);
		s->ready_fd = -1;
	}
}

/* Where the proxy's lines for this call go: the call's stderr, which its command holds
 * too. A file never blocks; a terminal or a pipe gets an open of its own that does
 * not block (O_NONBLOCK on a copy of the command's descriptor would change its flags
 * too, and a blocking write waits for ever on a terminal whose output the command
 * stopped, tcflow TCOOFF: the whole supervisor with it); a socket is sent to with
 * MSG_DONTWAIT (session_sup.c). -1: none (the lines are dropped). */
static int err_writer(int fd)
{
	char self[64];
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -1;
	if (S_ISREG(st.st_mode) || S_ISSOCK(st.st_mode))
		return fcntl(fd, F_DUPFD_CLOEXEC, 3);
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	return open(self, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
}

void sup_client_drop(struct sup *s, struct client *c)
{
	if (c->io.fd >= 0 && !c->waiting)
		proxy_poller_del(s->pl, c->io.fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	c->err_fd = -1;
	free(c->refuse);
	c->refuse = NULL;
	if (c->state == C_RUNNING && !c->gone) {
		/* Its command dies with the call (a kill, a crash, a closed terminal). */
		struct session_buf b = {0};
		session_buf_begin(&b, SESSION_KILL);
		session_buf_put_int(&b, SESSION_K_ID, c->id);
		if (session_buf_end(&b) == 0)
			session_send(s->chan.fd, &b, NULL, 0, SEND_MS);
		session_buf_free(&b);
		c->gone = c->left = true;
		close(c->io.fd);
		c->io.fd = -1;
		return; /* kept until the spawner reports the end */
	}
	session_conn_release(&c->io);
	for (size_t i = 0; i < s->n; i++)
		if (s->c[i] == c) {
			s->c[i] = s->c[--s->n];
			break;
		}
	free(c);
}

int sup_reply(struct client *c, struct session_buf *b)
{
	int rc = session_buf_end(b);

	if (rc == 0)
		rc = session_send(c->io.fd, b, NULL, 0, SEND_MS);
	session_buf_free(b);
	return rc;
}

bool sup_held(const struct runner_session_id *id, const char *entry)
{
	size_t lo = 0, hi = id->n_prot;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(id->prot[mid], entry);
		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* The path of a protected entry ("DEV:ID:PATH", prot_ok's form). */
static const char *prot_path(const char *entry)
{
	return strchr(strchr(entry, ':') + 1, ':') + 1;
}

#define SUP_STR_(x) #x
#define SUP_STR(x)  SUP_STR_(x)

static int by_path(const void *a, const void *b)
{
	return strcmp(prot_path(*(char *const *)a), prot_path(*(char *const *)b));
}

/* A file the session held at its start (masked, sanitized or read-only; no socket)
 * whose path the walk no longer finds: removed or moved away on the host, its mount
 * went with it and the name is the session's commands' to make again (review: after
 * `rm ~/.bashrc` or `mv ~/.ssh ~/.ssh.old` on the host, the next call wrote
 * ~/.bashrc and ~/.ssh/config). How many, the first in *first. */
static size_t gone(const struct sup *s, char *const *prot, size_t n_prot, const char **first)
{
	char **paths = n_prot ? malloc(n_prot * sizeof(*paths)) : NULL;
	size_t count = 0;

	if (n_prot && !paths)
		return 0; /* out of memory: the entries still present were checked */
	if (n_prot) {
		memcpy(paths, prot, n_prot * sizeof(*paths));
		qsort(paths, n_prot, sizeof(*paths), by_path);
	}
	for (size_t i = 0; i < s->id->n_prot; i++) {
		const char *e = s->id->prot[i];
		if (e[0] == '-' || strstr(e, LINUX_SESSION_SOCKET ":/") ||
		    strstr(e, LINUX_SESSION_PLACE ":/") || /* gone: nothing of it to read */
		    (n_prot && bsearch(&e, paths, n_prot, sizeof(*paths), by_path)))
			continue;
		count++;
		*first = *first ? *first : e;
	}
	free(paths);
	return count;
}

/* A protected file the session's mounts do not hold (new, or replaced: another
 * inode): the refusal names it and how many there are. One that is there and is no
 * socket ends the session too: the mask a replaced file had is gone (the kernel drops
 * a mount whose file is unlinked) and a new one never had one, so a process an
 * earlier call left running reads it now (a dev server reloading .env after an
 * editor's save); the refusal alone left that open until the idle end. A socket only
 * refuses (a dead one a session's server left is the usual one; remove it and the
 * calls go on). */
static void protected_changes(struct sup *s, char *const *prot, size_t n_prot, char *why, size_t n)
{
	struct sock_check k = {{NULL, 0}, false};
	const char *first = NULL;
	size_t count = 0, fresh = 0;
	bool ends = false, all_guarded = true;
	struct stat st;

	for (size_t i = 0; i < n_prot; i++)
		fresh += !sup_held(s->id, prot[i]) && !sup_sock_known(s, prot[i]);
	if (fresh > SUP_MAX_OWN_SOCKETS)
		k.read = true; /* too many to look at: each refused, no table read */
	else if (fresh)	       /* a host's socket: masked in the session now, as at a launch */
		sup_host_sockets_mask(s, &k, prot, n_prot);
	for (size_t i = 0; i < n_prot; i++)
		if (!sup_held(s->id, prot[i]) && !sup_sock_own(s, &k, prot[i])) {
			count++;
			first = first ? first : prot[i];
			all_guarded &= strstr(prot[i], LINUX_SESSION_GUARDED ":/") != NULL;
			if (lstat(prot_path(prot[i]), &st) == 0 && !S_ISSOCK(st.st_mode))
				ends = true;
		}
	netns_unix_files_free(&k.bound);
	const char *lost = NULL, *first_entry = first;
	size_t n_gone = gone(s, prot, n_prot, &lost);
	if (!count && n_gone) {
		snprintf(why, n,
			 "%zu protected file%s %s removed or moved away on the host since the "
			 "session started (first: %.2000s): the session's mask or read-only mount "
			 "went with %s, and its commands could make %s again, " SESSION_ENDS_WORDS
			 ": start it again",
			 n_gone, n_gone == 1 ? "" : "s", n_gone == 1 ? "was" : "were",
			 prot_path(lost), n_gone == 1 ? "it" : "them", n_gone == 1 ? "it" : "them");
		s->why_end = s->why_end ? s->why_end : "a protected file was removed";
		s->stop = true;
		return;
	}
	ends |= n_gone > 0;
	if (!count)
		return;
	first = prot_path(first);
	bool sock = lstat(first, &st) == 0 && S_ISSOCK(st.st_mode);
	bool dir = !sock && lstat(first, &st) == 0 && S_ISDIR(st.st_mode);
	bool place = first_entry && strstr(first_entry, LINUX_SESSION_PLACE ":/");
	/* A guarded file (read-only inside: ~/.bashrc where the home is writable) that
	 * the host replaced: the session's read-only mount went with the old one. */
	snprintf(why, n,
		 "%zu protected file%s appeared or %s replaced since the session started "
		 "(first: %.2000s%s); a fresh launch %s, this session's mounts do not%s%s",
		 count, count == 1 ? "" : "s", count == 1 ? "was" : "were", first,
		 sock && fresh > SUP_MAX_OWN_SOCKETS
		     ? ", a unix socket: more new ones than the session keeps track of "
		       "its own commands' (" SUP_STR(SUP_MAX_OWN_SOCKETS) "); stop the session"
		 : sock	 ? ", a unix socket not bound inside this session: a host service's, or "
			   "left by a command that ended (remove it then)"
		 : place ? ", another halo-run index place (made in a tree the commands write: "
			   "what goes into it is not looked at, so a fresh launch masks it "
			   "whole)"
		 : dir	 ? ", a directory: a protected one, or one the walk cannot list (no read "
			   "or search permission), which a fresh launch masks whole"
			 : "",
		 all_guarded ? (count == 1 ? "makes it read-only" : "makes them read-only")
			     : (count == 1 ? "masks it" : "masks them"),
		 ends ? ", " SESSION_ENDS_WORDS : "",
		 !ends	       ? ""
		 : all_guarded ? " (what its commands left running could write it): start it again"
			       : " (what its commands left running could read it): start it again");
	if (ends) {
		s->why_end = s->why_end ? s->why_end : "a protected file appeared or was replaced";
		s->stop = true;
	}
}

/* The session's mounts as they were when it was ready, all still there at their
 * paths (linux/session_mounts.c): a mask or read-only mount gone, or moved with its
 * directory, is a layer the session lost while the files kept their identities. */
static void mounts_changed(struct sup *s, const struct sup_walked *r, char *why, size_t n)
{
	size_t lost = 0;
	const char *first;

	if (!s->n_mounts)
		return;
	if (r->mounts_rc < 0) {
		snprintf(why, n, "the session's mounts cannot be read: %s",
			 strerror(-r->mounts_rc));
		return;
	}
	first = linux_session_mount_lost(s->l, s->mounts, s->n_mounts, r->mounts, r->n_mounts,
					 s->id->prot, s->id->n_prot, &lost);
	if (!first)
		return;
	snprintf(why, n,
		 "%zu of the session's mounts %s gone or moved (first: %.2000s): the host "
		 "removed, replaced or moved what %s covered (a directory renamed and made "
		 "again, a file unlinked and linked back), so a mask or read-only guard a "
		 "fresh launch has is missing here, " SESSION_ENDS_WORDS ": start it again",
		 lost, lost == 1 ? "is" : "are", first, lost == 1 ? "it" : "they");
	s->why_end = s->why_end ? s->why_end : "a mount of the session was lost";
	s->stop = true;
}

/* The walk a hello waits for, done: why it is refused (why[0] stays 0 when not);
 * -EAGAIN while the walk runs. */
static int walked(struct sup *s, struct client *c, char *why, size_t n)
{
	struct sup_walked r;
	char err[1024];
	int rc = sup_walk_result(s, c->need, &r, err, sizeof(err));

	if (rc == -EAGAIN)
		return rc;
	if (rc < 0) {
		snprintf(why, n, SESSION_WALK_FAILED_WORDS ": %s", err);
		return 0;
	}
	protected_changes(s, r.prot, r.n_prot, why, n);
	if (!why[0])
		mounts_changed(s, &r, why, n);
	sup_walk_release(s);
	return 0;
}

/* The walk's judgment with the identity's refusal the hello already had (a call with
 * another policy is still a look at what the session holds: the policy file saved
 * with other content lost its read-only mount, and a refusal that left the session
 * running left the file its commands' to write: review). */
static int judged(struct sup *s, struct client *c, char *why, size_t n)
{
	char walk[4200];

	walk[0] = '\0';
	if (walked(s, c, walk, sizeof(walk)) == -EAGAIN)
		return -EAGAIN;
	snprintf(why, n, "%.2000s%s%.2000s", c->refuse ? c->refuse : "",
		 c->refuse && walk[0] ? "; and " : "", walk);
	free(c->refuse);
	c->refuse = NULL;
	return 0;
}

static int answer(struct client *c, const char *why)
{
	struct session_buf b = {0};

	session_buf_begin(&b, why[0] ? SESSION_REFUSED : SESSION_OK);
	if (why[0])
		session_buf_put(&b, SESSION_K_WHY, why);
	c->state = why[0] ? C_NEW : C_JOINED;
	return sup_reply(c, &b) < 0 || why[0] ? -EPERM : 0;
}

/* Hello: the same sandbox, and no protected file it does not hold (by a walk that
 * started after the call connected: sup_walk.c), or a refusal that names what
 * differs. 1 when the walk is not done yet: the call waits, its descriptor out of the
 * loop (what it sent after the hello stays unread) until sup_walk_done. */
static int hello(struct sup *s, struct client *c, const struct session_msg *m)
{
	char why[4200];

	why[0] = '\0';
	if (strcmp(m->name, s->id->name) != 0)
		snprintf(why, sizeof(why), "this is session %s, not %s", s->id->name, m->name);
	else if (strcmp(m->workspace, s->id->workspace) != 0)
		snprintf(why, sizeof(why),
			 "workspace differs: the session's is %.2000s, this call's %.2000s",
			 s->id->workspace, m->workspace);
	else if (strcmp(m->policy, s->id->policy) != 0)
		snprintf(
		    why, sizeof(why),
		    "effective policy differs (digest %s at the session's start, %s now: other "
		    "policy files, the files changed, or other one-off flags: --allow, "
		    "--writable, --env, --host-port, --mode are fixed at the session's start "
		    "too)",
		    s->id->policy, m->policy);
	else if (strcmp(m->options, s->id->options) != 0)
		snprintf(why, sizeof(why),
			 "launch options differ: the session's are %.2000s; this call's %.2000s",
			 s->id->options, m->options);
	if (why[0] && !(c->refuse = strdup(why)))
		return answer(c, why); /* out of memory: refused without the walk */
	if (judged(s, c, why, sizeof(why)) == -EAGAIN) {
		if (proxy_poller_del(s->pl, c->io.fd) < 0)
			return -EIO;
		c->waiting = true;
		return 1;
	}
	return answer(c, why);
}

static int info(struct sup *s, struct client *c)
{
	struct session_buf b = {0};

	session_buf_begin(&b, SESSION_INFO);
	session_buf_put(&b, SESSION_K_WORKSPACE, s->id->workspace);
	session_buf_put_int(&b, SESSION_K_CALLS, (long long)s->running);
	session_buf_put_int(&b, SESSION_K_IDLE,
			    s->running ? 0 : (long long)((proxy_now_ms() - s->last_ms) / 1000));
	session_buf_put_int(&b, SESSION_K_PID, (long long)getpid());
	sup_reply(c, &b);
	return -ECONNRESET; /* answered: done */
}

/* Run: a new call id, the command line and the three descriptors to the spawner. */
static int run(struct sup *s, struct client *c, const struct session_msg *m)
{
	struct session_buf b = {0};
	int fds[SESSION_MAX_FDS];
	size_t nf = session_conn_take_fds(&c->io, fds);
	int rc = -EPROTO;

	if (nf == SESSION_MAX_FDS) {
		c->id = ++s->next_id;
		session_buf_begin(&b, SESSION_RUN);
		session_buf_put_int(&b, SESSION_K_ID, c->id);
		for (size_t i = 0; i < m->n_arg; i++)
			session_buf_put(&b, SESSION_K_ARG, m->arg[i]);
		for (size_t i = 0; i < m->n_env; i++)
			session_buf_put(&b, SESSION_K_ENV, m->env[i]);
		rc = session_buf_end(&b);
		if (rc == 0)
			rc = session_send(s->chan.fd, &b, fds, nf, SEND_MS);
		session_buf_free(&b);
	}
	if (rc == 0) {
		c->state = C_RUNNING;
		c->err_fd = err_writer(fds[2]);
		s->running++;
		c->ev = (struct runner_session_call){c->id, proxy_now_ms(), m->wall, false};
		runner_session_ev_start(&s->ev, s->l, &c->ev, m->arg);
		runner_learn_command(s->lr, m->arg);
	}
	for (size_t i = 0; i < nf; i++)
		close(fds[i]);
	return rc;
}

/* Signal or kill, for this call's command only. */
static int forward(struct sup *s, struct client *c, const struct session_msg *m)
{
	struct session_buf b = {0};
	int rc;

	/* A call kills its command only at its wall-clock limit (session_call.c). */
	c->ev.timed_out |= m->verb == SESSION_KILL;
	session_buf_begin(&b, m->verb);
	session_buf_put_int(&b, SESSION_K_ID, c->id);
	if (m->verb == SESSION_SIGNAL)
		session_buf_put_int(&b, SESSION_K_SIG, m->sig);
	rc = session_buf_end(&b);
	if (rc == 0)
		rc = session_send(s->chan.fd, &b, NULL, 0, SEND_MS);
	session_buf_free(&b);
	return rc;
}

static int client_msg(struct sup *s, struct client *c, const struct session_msg *m)
{
	if (c->state == C_NEW && m->verb == SESSION_HELLO && !c->waiting)
		return hello(s, c, m);
	if (c->state == C_NEW && m->verb == SESSION_INFO)
		return info(s, c);
	if (c->state == C_NEW && m->verb == SESSION_STOP) {
		struct session_buf b = {0};
		session_buf_begin(&b, SESSION_OK);
		sup_reply(c, &b);
		s->why_end = "stopped";
		s->stop = true; /* its socket closes when the session is gone */
		return 0;
	}
	if (c->state == C_JOINED && m->verb == SESSION_RUN)
		return run(s, c, m);
	if (c->state == C_RUNNING && (m->verb == SESSION_SIGNAL || m->verb == SESSION_KILL))
		return forward(s, c, m);
	return -EPROTO;
}

/* The frames a call sent that are whole, in order; a hello that waits for the walk
 * stops them there (the rest is read once it is answered). */
static void pump(struct sup *s, struct client *c, int rc)
{
	struct session_msg m;
	char why[128];

	while (rc >= 0 && !c->waiting &&
	       (rc = session_conn_next(&c->io, &m, why, sizeof(why))) > 0) {
		rc = client_msg(s, c, &m);
		session_msg_free(&m);
	}
	if (rc < 0)
		sup_client_drop(s, c);
}

static void on_client(void *arg, int fd, unsigned events)
{
	struct client *c = arg;

	(void)fd;
	(void)events;
	pump(c->s, c, session_conn_read(&c->io));
}

void sup_walk_done(void *arg, int fd, unsigned events)
{
	struct sup *s = arg;

	(void)fd;
	(void)events;
	sup_walk_drain(s);
	/* Backwards: a call dropped here takes the last one's place, already seen. */
	for (size_t i = s->n; i-- > 0;) {
		struct client *c = s->c[i];
		char why[4200];

		if (!c->waiting)
			continue;
		why[0] = '\0';
		if (judged(s, c, why, sizeof(why)) == -EAGAIN)
			continue;
		c->waiting = false;
		if (answer(c, why) < 0 ||
		    proxy_poller_add(s->pl, c->io.fd, PROXY_EV_IN, on_client, c) < 0) {
			sup_client_drop(s, c);
			continue;
		}
		pump(s, c, 0); /* the run it sent along */
	}
}

static pid_t peer_pid(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 ? cr.pid : -1;
}

/* Same user, outside every sandbox, only (runner_session_peer_ok); everyone else is
 * closed on before a byte is read. */
void sup_on_accept(void *arg, int fd, unsigned events)
{
	struct sup *s = arg;
	struct client *c;
	int cfd;

	(void)events;
	while ((cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		if (!s->walk || runner_session_peer_ok(cfd) < 0 || s->n == s->cap ||
		    !(c = calloc(1, sizeof(*c)))) {
			close(cfd);
			continue;
		}
		session_conn_init(&c->io, cfd);
		c->s = s;
		c->err_fd = -1;
		s->c[s->n++] = c;
		if (proxy_poller_add(s->pl, cfd, PROXY_EV_IN, on_client, c) < 0)
			sup_client_drop(s, c);
		else { /* a call: the walk its hello is judged by starts now */
			c->need = sup_walk_ask(s, peer_pid(cfd));
			c->accept_ms = proxy_now_ms();
		}
	}
}

struct client *sup_client_by_id(struct sup *s, long long id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->c[i]->state == C_RUNNING && s->c[i]->id == id)
			return s->c[i];
	return NULL;
}

/* From the spawner (inside the sandbox: checked like any peer): ready, and how
 * each call ended, passed on to its caller. */
