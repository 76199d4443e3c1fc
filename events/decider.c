/* --decider: the supervisor's side. The command line runs with /bin/sh -c outside the
 * sandbox (started after it, from the supervisor, with the caller's environment); its
 * stdin and stdout are pipes on the one event loop, so a question never blocks the
 * proxy. Each question has its own timer; an answer is matched by id; remember
 * "session" answers the same host:port again without asking. Any trouble means the
 * policy's default for the questions it touches (see decider.h), said once per kind on
 * stderr and as a "decider" record in --events. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "events/decider_int.h"
#include "events/events.h"
#include "opts/opts.h"
#include "proxy/proxy.h"

#define WBUF_MAX     (64 * 1024) /* questions the decider has not read yet */
#define REMEMBER_MAX 4096	 /* "remember":"session" entries kept */
#define KEY_MAX	     (POLICY_HOST_MAX + 8)

enum trouble { T_EXITED, T_GARBAGE, T_LONG, T_UNKNOWN_ID, T_TIMEOUT, T_FULL, T_N };

static const char *const trouble_text[T_N] = {
    [T_EXITED] = "exited or closed its stdout",
    [T_GARBAGE] = "sent a line that is not an answer",
    [T_LONG] = "sent a line over 4096 bytes",
    [T_UNKNOWN_ID] = "answered an id with no question waiting",
    [T_TIMEOUT] = "did not answer in time",
    [T_FULL] = "is not reading its questions",
};

struct question {
	struct runner_decider *dc;
	struct question *next;
	uint64_t id;
	proxy_verdict_fn done;
	void *arg;
	struct proxy_timer *t;
	enum proxy_verdict now; /* answered from memory or refused at once: fire with this */
	const char *why;
	char key[KEY_MAX];
};

struct memory {
	char key[KEY_MAX];
	bool allow;
};

struct runner_decider {
	struct proxy_poller *pl;
	struct proxy_decider ops;
	pid_t pid;
	int in_fd, out_fd; /* its stdin (we write), its stdout (we read) */
	bool dead;
	char rbuf[RUNNER_DECIDER_MAX_LINE + 1];
	size_t rlen;
	bool skipping; /* inside an over-long line: dropped up to its newline */
	char *wbuf;
	size_t wlen;
	struct question *qs;
	uint64_t next_id;
	unsigned timeout_ms;
	int events_fd;
	int log_fd;	     /* halo-run's lines about it: stderr, or a session's log pipe */
	const char *session; /* the questions' and records' "session" ("" outside one) */
	bool said[T_N];
	struct memory *mem;
	size_t n_mem;
};

static void say(struct runner_decider *dc, enum trouble t, const char *detail)
{
	char ts[40];
	struct timespec now;
	struct tm tm;
	cJSON *o;
	char *s;

	if (dc->said[t])
		return;
	dc->said[t] = true;
	dprintf(dc->log_fd, "halo-run: decider %s%s%s; the policy's default applies to %s\n",
		trouble_text[t], detail ? ": " : "", detail ? detail : "",
		t == T_EXITED ? "every host no rule matches from now on" : "those hosts");
	if (dc->events_fd < 3)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, 24, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + 19, sizeof(ts) - 19, ".%03ldZ", now.tv_nsec / 1000000L);
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "type", "decider");
	cJSON_AddStringToObject(o, "ts", ts);
	cJSON_AddStringToObject(o, "session", dc->session);
	cJSON_AddNumberToObject(o, "pid", (double)getpid());
	cJSON_AddStringToObject(o, "problem", trouble_text[t]);
	if (detail)
		cJSON_AddStringToObject(o, "detail", detail);
	if ((s = cJSON_PrintUnformatted(o))) {
		dprintf(dc->events_fd, "%s\n", s);
		free(s);
	}
	cJSON_Delete(o);
}

static struct question *unlink_q(struct runner_decider *dc, uint64_t id)
{
	for (struct question **pp = &dc->qs; *pp; pp = &(*pp)->next)
		if ((*pp)->id == id) {
			struct question *q = *pp;
			*pp = q->next;
			return q;
		}
	return NULL;
}

/* Unlinked before done(): the connection may close inside it and cancel others. */
static void answer(struct question *q, enum proxy_verdict v, const char *why)
{
	proxy_verdict_fn done = q->done;
	void *arg = q->arg;

	if (q->t)
		proxy_timer_cancel(q->dc->pl, q->t);
	free(q);
	done(arg, v, why);
}

static void on_timer(void *arg)
{
	struct question *q = arg;
	struct runner_decider *dc = q->dc;
	bool waited = q->now == PROXY_VERDICT_DEFAULT && !q->why;

	q->t = NULL;
	unlink_q(dc, q->id);
	if (waited) {
		char hp[KEY_MAX], *hash;

		snprintf(hp, sizeof(hp), "%s", q->key);
		if ((hash = strrchr(hp, '#')))
			*hash = ':';
		say(dc, T_TIMEOUT, hp);
	}
	answer(q, q->now, waited ? "decider timed out" : q->why);
}

static void remember(struct runner_decider *dc, const char *key, bool allow)
{
	if (dc->n_mem == REMEMBER_MAX)
		return;
	if (!dc->mem && !(dc->mem = calloc(REMEMBER_MAX, sizeof(*dc->mem))))
		return;
	snprintf(dc->mem[dc->n_mem].key, KEY_MAX, "%s", key);
	dc->mem[dc->n_mem++].allow = allow;
}

static const struct memory *recall(const struct runner_decider *dc, const char *key)
{
	for (size_t i = 0; i < dc->n_mem; i++)
		if (strcmp(dc->mem[i].key, key) == 0)
			return &dc->mem[i];
	return NULL;
}

static void give_up(struct runner_decider *dc)
{
	struct question *q;

	if (dc->dead)
		return;
	dc->dead = true;
	say(dc, T_EXITED, NULL);
	if (dc->out_fd >= 0) {
		proxy_poller_del(dc->pl, dc->out_fd);
		close(dc->out_fd);
		dc->out_fd = -1;
	}
	if (dc->in_fd >= 0) {
		proxy_poller_del(dc->pl, dc->in_fd);
		close(dc->in_fd);
		dc->in_fd = -1;
	}
	while ((q = dc->qs)) {
		dc->qs = q->next;
		answer(q, PROXY_VERDICT_DEFAULT, "decider exited");
	}
}

static void one_line(struct runner_decider *dc, const char *line, size_t len)
{
	struct runner_decider_answer a;
	struct question *q;
	char why[96];

	if (len == 0)
		return;
	if (runner_decider_parse_answer(line, len, &a, why, sizeof(why)) != 0) {
		say(dc, T_GARBAGE, why);
		return;
	}
	if (!(q = unlink_q(dc, a.id))) {
		say(dc, T_UNKNOWN_ID, NULL);
		return;
	}
	if (a.remember_session)
		remember(dc, q->key, a.allow);
	answer(q, a.allow ? PROXY_VERDICT_ALLOW : PROXY_VERDICT_DENY, NULL);
}

/* Complete lines out of rbuf; an over-long one is dropped to its newline. */
static void take_lines(struct runner_decider *dc)
{
	size_t start = 0;

	for (size_t i = 0; i < dc->rlen; i++) {
		if (dc->rbuf[i] != '\n')
			continue;
		if (!dc->skipping)
			one_line(dc, dc->rbuf + start, i - start);
		dc->skipping = false;
		start = i + 1;
	}
	memmove(dc->rbuf, dc->rbuf + start, dc->rlen - start);
	dc->rlen -= start;
	if (dc->rlen == RUNNER_DECIDER_MAX_LINE) {
		say(dc, T_LONG, NULL);
		dc->skipping = true;
		dc->rlen = 0;
	}
}

static void on_readable(void *arg, int fd, unsigned events)
{
	struct runner_decider *dc = arg;
	ssize_t n;

	(void)events;
	n = read(fd, dc->rbuf + dc->rlen, RUNNER_DECIDER_MAX_LINE - dc->rlen);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		give_up(dc);
		return;
	}
	dc->rlen += (size_t)n;
	take_lines(dc);
}

static void flush(struct runner_decider *dc)
{
	while (dc->wlen) {
		ssize_t w = write(dc->in_fd, dc->wbuf, dc->wlen);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			break;
		if (w <= 0) {
			give_up(dc);
			return;
		}
		memmove(dc->wbuf, dc->wbuf + w, dc->wlen - (size_t)w);
		dc->wlen -= (size_t)w;
	}
	proxy_poller_mod(dc->pl, dc->in_fd, dc->wlen ? PROXY_EV_OUT : 0);
}

static void on_writable(void *arg, int fd, unsigned events)
{
	struct runner_decider *dc = arg;

	(void)fd;
	if (events & PROXY_EV_ERR) {
		give_up(dc);
		return;
	}
	flush(dc);
}

static int queue_question(struct runner_decider *dc, const struct question *q, const char *host,
			  unsigned port, const char *protocol)
{
	cJSON *o = cJSON_CreateObject();
	char *s;
	size_t n;

	cJSON_AddNumberToObject(o, "id", (double)q->id);
	cJSON_AddStringToObject(o, "host", host);
	cJSON_AddNumberToObject(o, "port", port);
	cJSON_AddStringToObject(o, "protocol", protocol);
	cJSON_AddStringToObject(o, "session", dc->session);
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!s)
		return -ENOMEM;
	n = strlen(s);
	if (dc->wlen + n + 1 > WBUF_MAX) {
		free(s);
		return -ENOBUFS;
	}
	memcpy(dc->wbuf + dc->wlen, s, n);
	dc->wbuf[dc->wlen + n] = '\n';
	dc->wlen += n + 1;
	free(s);
	flush(dc);
	return 0;
}

/* Every question is answered from the loop, never inside ask(): from memory or a
 * refusal through a zero-delay timer, else by the decider or its timer. */
static int ask(void *ctx, const char *host, unsigned port, const char *protocol,
	       proxy_verdict_fn done, void *arg, uint64_t *ticket)
{
	struct runner_decider *dc = ctx;
	struct question *q = calloc(1, sizeof(*q));
	const struct memory *m;
	uint64_t ms = dc->timeout_ms;
	int rc = 0;

	if (!q)
		return -ENOMEM;
	q->dc = dc;
	q->id = ++dc->next_id;
	q->done = done;
	q->arg = arg;
	snprintf(q->key, sizeof(q->key), "%s#%u", host, port);
	if ((m = recall(dc, q->key))) {
		q->now = m->allow ? PROXY_VERDICT_ALLOW : PROXY_VERDICT_DENY;
		ms = 0;
	} else if (dc->dead || dc->next_id >= RUNNER_DECIDER_MAX_ID) {
		q->why = "decider not running";
		ms = 0;
	} else if ((rc = queue_question(dc, q, host, port, protocol)) == -ENOBUFS) {
		say(dc, T_FULL, NULL);
		q->why = "decider not reading";
		ms = 0;
	}
	if (dc->dead && !q->why && !q->now)
		q->why = "decider exited"; /* queue_question's write found it gone */
	if (dc->dead && q->why)
		ms = 0;
	if ((rc && rc != -ENOBUFS) || !(q->t = proxy_timer_add(dc->pl, ms, on_timer, q))) {
		free(q);
		return -ENOMEM;
	}
	q->next = dc->qs;
	dc->qs = q;
	*ticket = q->id;
	return 0;
}

static void cancel(void *ctx, uint64_t ticket)
{
	struct runner_decider *dc = ctx;
	struct question *q = unlink_q(dc, ticket);

	if (!q)
		return;
	if (q->t)
		proxy_timer_cancel(dc->pl, q->t);
	free(q);
}

/* pipe(2) then FD_CLOEXEC: macOS has no pipe2. Only the supervisor's thread forks
 * here, so nothing can leak the fds in between. */
static int cloexec_pipe(int p[2])
{
	if (pipe(p) < 0)
		return -errno;
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	fcntl(p[1], F_SETFD, FD_CLOEXEC);
	return 0;
}

static int spawn(struct runner_decider *dc, const char *command, struct halo_err *e)
{
	int in[2], out[2], rc;
	sigset_t all, old;

	if ((rc = cloexec_pipe(in)) < 0)
		return halo_err_set(e, "--decider: pipe: %s", strerror(-rc)), rc;
	if ((rc = cloexec_pipe(out)) < 0) {
		close(in[0]);
		close(in[1]);
		return halo_err_set(e, "--decider: pipe: %s", strerror(-rc)), rc;
	}
	/* The supervisor blocks the signals it forwards (signalfd): the child sets its
	 * own mask; none of them may reach it in between. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	dc->pid = runner_decider_fork(command, in[0], out[1]);
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(in[0]);
	close(out[1]);
	if (dc->pid < 0) {
		rc = (int)dc->pid;
		dc->pid = 0;
		close(in[1]);
		close(out[0]);
		return halo_err_set(e, "--decider: fork: %s", strerror(-rc)), rc;
	}
	dc->in_fd = in[1];
	dc->out_fd = out[0];
	fcntl(dc->in_fd, F_SETFL, O_NONBLOCK);
	fcntl(dc->out_fd, F_SETFL, O_NONBLOCK);
	return 0;
}

int runner_decider_timeout(const char *spec, unsigned *ms, struct halo_err *e)
{
	struct rlimits_set policy, r;

	*ms = 5000;
	if (!spec)
		return 0;
	rlimits_init(&policy);
	r = policy;
	if (rlimits_parse_timeout(spec, &policy, &r, e) < 0 || r.wall_seconds <= 0 ||
	    r.wall_seconds > 3600) {
		if (!e->msg[0] || r.wall_seconds > 3600)
			halo_err_set(e, "--decider-timeout %s: a duration from 1s to 1h", spec);
		return -EINVAL;
	}
	*ms = (unsigned)r.wall_seconds * 1000;
	return 0;
}

int runner_decider_start(const struct runner_opts *o, struct proxy_poller *pl, int events_fd,
			 const char *session, struct runner_decider **out, struct halo_err *e)
{
	struct runner_decider *dc = calloc(1, sizeof(*dc));
	int rc;

	*out = NULL;
	if (!dc || !(dc->wbuf = malloc(WBUF_MAX))) {
		free(dc);
		halo_err_set(e, "--decider: out of memory");
		return -ENOMEM;
	}
	dc->pl = pl;
	dc->in_fd = dc->out_fd = -1;
	dc->events_fd = events_fd;
	dc->log_fd = STDERR_FILENO;
	dc->session = session ? session : "";
	if ((rc = runner_decider_timeout(o->decider_timeout, &dc->timeout_ms, e)) < 0) {
		free(dc->wbuf);
		free(dc);
		return rc;
	}
	dc->ops = (struct proxy_decider){.ask = ask, .cancel = cancel, .ctx = dc};
	if ((rc = spawn(dc, o->decider, e)) < 0 ||
	    (rc = proxy_poller_add(pl, dc->out_fd, PROXY_EV_IN, on_readable, dc)) < 0 ||
	    (rc = proxy_poller_add(pl, dc->in_fd, 0, on_writable, dc)) < 0) {
		if (!e->msg[0])
			halo_err_set(e, "--decider: %s", strerror(-rc));
		runner_decider_stop(dc);
		return rc;
	}
	*out = dc;
	return 0;
}

void runner_decider_log_to(struct runner_decider *dc, int fd)
{
	dc->log_fd = fd;
}

void runner_decider_options(struct runner_decider *dc, struct proxy_options *po)
{
	po->decider = &dc->ops;
}

/* Its stdin closed tells it to end; a decider that does not within 200 ms is killed,
 * and so is everything it started, whatever it did to leave (decider_keeper.c):
 * nothing the decider started outlives the run or the session. Questions still
 * waiting are dropped without an answer: their connections are gone (the proxy is
 * destroyed first). */
void runner_decider_stop(struct runner_decider *dc)
{
	struct question *q;

	if (!dc)
		return;
	/* A decider that exited before the end, its EOF not yet read off the loop (the
	 * command ended first): said as the loop would have said it. */
	if (!dc->dead && dc->pid > 0 && runner_decider_eof(dc->out_fd))
		say(dc, T_EXITED, NULL);
	while ((q = dc->qs)) {
		dc->qs = q->next;
		if (q->t)
			proxy_timer_cancel(dc->pl, q->t);
		free(q);
	}
	if (dc->in_fd >= 0) {
		proxy_poller_del(dc->pl, dc->in_fd);
		close(dc->in_fd);
	}
	if (dc->out_fd >= 0)
		proxy_poller_del(dc->pl, dc->out_fd);
	runner_decider_end(dc->pid, dc->dead ? -1 : dc->out_fd, 200);
	dc->pid = 0;
	if (dc->out_fd >= 0)
		close(dc->out_fd);
	free(dc->wbuf);
	free(dc->mem);
	free(dc);
}
