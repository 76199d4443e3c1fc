/* --events: the runner's records (start, limit, fs_denied, exit); the proxy writes the
 * egress and decider records to the same fd. See events.h for the schema. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proxy/poller.h"
#include "events/events.h"

int runner_output_one_link(const char *opt, const char *name, const struct stat *st,
			   struct halo_err *e)
{
	if (!(S_ISREG(st->st_mode) || S_ISFIFO(st->st_mode)) || st->st_nlink <= 1)
		return 0;
	halo_err_set(e,
		     "%s %s: refused: the file has %ju hard links, and only this name can be "
		     "masked inside the sandbox (the command could write it through another)",
		     opt, name, (uintmax_t)st->st_nlink);
	return -EINVAL;
}

/* The name the descriptor's file was opened by: /proc on Linux, F_GETPATH on macOS. */
static ssize_t fd_name(int fd, char *path, size_t n)
{
#ifdef F_GETPATH
	char buf[PATH_MAX];

	if (fcntl(fd, F_GETPATH, buf) < 0 || strlen(buf) >= n)
		return -1;
	snprintf(path, n, "%s", buf);
	return (ssize_t)strlen(path);
#else
	char link[40];
	ssize_t len;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, path, n - 1);
	if (len <= 0 || (size_t)len >= n - 1)
		return -1;
	path[len] = '\0';
	return len;
#endif
}

int runner_events_fd_file(const char *spec, char *path, size_t n, struct halo_err *e)
{
	struct stat st, named;
	char *end;
	long fd;

	if (!spec || strncmp(spec, "fd:", 3) != 0)
		return 0;
	errno = 0;
	fd = strtol(spec + 3, &end, 10);
	/* A bad number is open_fd_spec's to refuse; a socket is the socket scan's; a
	 * file no name leads to any more (nlink 0) cannot be reached from inside. */
	if (!spec[3] || *end || errno || fd < 3 || fd > 1 << 20 || fstat((int)fd, &st) < 0 ||
	    !(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode)) || st.st_nlink == 0)
		return 0;
	/* A pipe(2) has no name (/proc shows "pipe:[N]"); a named FIFO has one, where the
	 * command could open it to write forged lines or read the records. */
	if (S_ISFIFO(st.st_mode) && (fd_name((int)fd, path, n) < 0 || path[0] != '/'))
		return 0;
	if (runner_output_one_link("--events", spec, &st, e) < 0)
		return -EINVAL;
	if (fd_name((int)fd, path, n) < 0 || path[0] != '/' || lstat(path, &named) != 0 ||
	    named.st_dev != st.st_dev || named.st_ino != st.st_ino) {
		halo_err_set(e,
			     "--events %s: refused: a file or FIFO whose name halo-run cannot "
			     "find, so it cannot be masked inside the sandbox (use --events FILE)",
			     spec);
		return -EINVAL;
	}
	return 1;
}

/* An output that is the same pipe, socket, terminal or file as the command's stdin,
 * stdout or stderr (--events fd:3 3>&1, --audit F with >>F) would let the command
 * write forged lines through its own stdio: refused like fd 0-2. A character device
 * that is not a terminal (/dev/null) carries nothing anyone reads. */
int runner_output_not_stdio(const char *opt, const char *name, int fd, struct halo_err *e)
{
	struct stat st, io;

	if (fstat(fd, &st) < 0 || (S_ISCHR(st.st_mode) && !isatty(fd)))
		return 0;
	for (int i = 0; i < 3; i++)
		if (fstat(i, &io) == 0 && io.st_dev == st.st_dev && io.st_ino == st.st_ino) {
			halo_err_set(
			    e,
			    "%s %s: refused: it is the same file or pipe as descriptor %d, "
			    "the command's own stdio, where it could write forged records",
			    opt, name, i);
			return -EINVAL;
		}
	return 0;
}

/* Every file halo-run writes for a run (--audit, --events FILE, --summary-md) is
 * opened here, before the launch, so that the sandbox masks it and halo-run writes
 * through this descriptor whatever becomes of the name. Appending keeps earlier runs'
 * records; O_NOFOLLOW refuses a planted link; O_NONBLOCK keeps a FIFO with no reader
 * from hanging the open, and anything but a regular file is refused: a FIFO or a
 * device would hand the output to whoever reads it, and cannot be masked as a file. */
int runner_open_output(const char *opt, const char *path, mode_t mode, struct stat *st,
		       struct halo_err *e)
{
	int fd =
	    open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, mode);

	if (fd < 0) {
		halo_err_set(e, "%s %s: %s", opt, path,
			     errno == ELOOP   ? "is a symbolic link (refused)"
			     : errno == ENXIO ? "is a FIFO or socket (refused: not a regular file)"
					      : strerror(errno));
		return -EINVAL;
	}
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		halo_err_set(
		    e, "%s %s: not a regular file (a FIFO, device or socket cannot hold it%s)", opt,
		    path, strcmp(opt, "--events") == 0 ? "; use fd:N for a pipe" : "");
		close(fd);
		return -EINVAL;
	}
	if (runner_output_one_link(opt, path, st, e) < 0 ||
	    runner_output_not_stdio(opt, path, fd, e) < 0) {
		close(fd);
		return -EINVAL;
	}
	fcntl(fd, F_SETFL, O_APPEND); /* blocking again: records are written whole */
	return fd;
}

/* halo-run wrote through its descriptor, so the file is intact whatever happened to
 * the name; but a reader after the run goes by the name. If it no longer leads to the
 * file that was opened (a parent directory renamed from inside and a forgery planted
 * at the old name, or a link to elsewhere), say so: the run fails. */
int runner_output_intact(const char *opt, const char *path, const struct stat *opened,
			 struct halo_err *e)
{
	struct stat now;

	if (lstat(path, &now) == 0 && now.st_dev == opened->st_dev && now.st_ino == opened->st_ino)
		return 0;
	halo_err_set(e,
		     "%s %s no longer names the %s halo-run wrote (moved or replaced during "
		     "the run); do not trust what is there now",
		     opt, path,
		     strcmp(opt, "--audit") == 0    ? "audit file"
		     : strcmp(opt, "--events") == 0 ? "events file"
		     : strcmp(opt, "--out") == 0    ? "learned policy"
						    : "report");
	return -ESTALE;
}

static int open_fd_spec(const char *spec, struct runner_events *ev, struct halo_err *e)
{
	const char *num = spec + 3;
	char path[PATH_MAX];
	char *end;
	long n;

	errno = 0;
	n = strtol(num, &end, 10);
	if (!*num || *end || errno || n < 0 || n > 1 << 20) {
		halo_err_set(e, "--events fd:%s: not a descriptor number", num);
		return -EINVAL;
	}
	if (n < 3) {
		halo_err_set(e,
			     "--events fd:%ld: refused: descriptors 0-2 are the command's own "
			     "stdio, where it could write forged events; use 3 or more",
			     n);
		return -EINVAL;
	}
	if (fcntl((int)n, F_GETFL) < 0 || (fcntl((int)n, F_GETFL) & O_ACCMODE) == O_RDONLY) {
		halo_err_set(e, "--events fd:%ld: not open for writing", n);
		return -EINVAL;
	}
	if (runner_output_not_stdio("--events", spec, (int)n, e) < 0)
		return -EINVAL;
	if (runner_events_fd_file(spec, path, sizeof(path), e) < 0)
		return -EINVAL;
	fcntl((int)n, F_SETFD, FD_CLOEXEC); /* never the command's */
	ev->fd = (int)n;
	ev->file = fstat(ev->fd, &ev->st) == 0 && S_ISREG(ev->st.st_mode);
	return 0;
}

/* As every output file (runner_open_output): appended, no symbolic link, a regular
 * file only, and masked inside the sandbox as one of halo-run's own outputs. */
static int open_file_spec(const char *path, struct runner_events *ev, struct halo_err *e)
{
	int fd = runner_open_output("--events", path, 0600, &ev->st, e);

	if (fd < 0)
		return fd;
	ev->fd = fd;
	ev->path = path;
	ev->file = true;
	return 0;
}

int runner_events_open(const char *spec, const char *session, struct runner_events *ev,
		       struct halo_err *e)
{
	memset(ev, 0, sizeof(*ev));
	ev->fd = -1;
	ev->session = session ? session : "";
	ev->t0_ms = proxy_now_ms();
	if (!spec)
		return 0;
	if (strncmp(spec, "fd:", 3) == 0)
		return open_fd_spec(spec, ev, e);
	return open_file_spec(spec, ev, e);
}

int runner_events_lost(const struct runner_events *ev, struct halo_err *e)
{
	if (!ev->file || !ev->lost)
		return 0;
	halo_err_set(e, "--events %s: %zu record%s could not be written; the events are incomplete",
		     ev->path ? ev->path : "(fd)", ev->lost, ev->lost == 1 ? "" : "s");
	return -EIO;
}

void runner_events_close(struct runner_events *ev)
{
	if (ev->fd >= 0 && ev->path)
		close(ev->fd);
	ev->fd = -1;
}

static cJSON *record(const struct runner_events *ev, const char *type)
{
	struct timespec ts;
	struct tm tm;
	char t[64], ms[24];
	cJSON *o = cJSON_CreateObject();

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ms, sizeof(ms), ".%03ldZ", ts.tv_nsec / 1000000L);
	strcat(t, ms);
	cJSON_AddStringToObject(o, "type", type);
	cJSON_AddStringToObject(o, "ts", t);
	cJSON_AddStringToObject(o, "session", ev->session);
	cJSON_AddNumberToObject(o, "pid", (double)getpid());
	if (ev->call > 0)
		cJSON_AddNumberToObject(o, "call", (double)ev->call);
	return o;
}

/* One line, written whole (the file is O_APPEND; a pipe gets it in one write when
 * under PIPE_BUF, which every record but a long start is). */
static void emit(struct runner_events *ev, cJSON *o)
{
	char *s = cJSON_PrintUnformatted(o);
	size_t n, off = 0;
	/* The start record is written before the supervisor ignores SIGPIPE (it must not
	 * before the launch: the command would inherit SIG_IGN); a pipe whose reader is
	 * gone must give EPIPE here, not kill halo-run without a word. */
	struct sigaction ign = {.sa_handler = SIG_IGN}, old;

	cJSON_Delete(o);
	if (!s)
		return;
	n = strlen(s);
	s[n] = '\n'; /* over the NUL: the length is known */
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old);
	while (off < n + 1) {
		ssize_t w = write(ev->fd, s + off, n + 1 - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			ev->lost++; /* a pipe's reader gone: the run goes on; a file's: it fails */
			break;
		}
		off += (size_t)w;
	}
	sigaction(SIGPIPE, &old, NULL);
	free(s);
}

/* "policy_digest": the digest of what `halo-run policy --json` prints, newline
 * included, so that `halo-run policy --policy F --json | sha256sum` gives the same hex. */
static void add_policy_digest(cJSON *o, const struct halo_policy *p)
{
	char *pj = policy_to_json(p), *line, hex[65], digest[72];

	line = pj ? malloc(strlen(pj) + 2) : NULL;
	if (line)
		sprintf(line, "%s\n", pj);
	runner_sha256_hex(line ? line : "", line ? strlen(line) : 0, hex);
	free(line);
	free(pj);
	snprintf(digest, sizeof(digest), "sha256:%s", hex);
	cJSON_AddStringToObject(o, "policy_digest", digest);
}

void runner_events_start(struct runner_events *ev, const struct halo_policy *p,
			 const char *const *layers, size_t n_layers, const char *workspace,
			 char *const *argv)
{
	cJSON *o, *a;

	if (ev->fd < 0)
		return;
	o = record(ev, "start");
	add_policy_digest(o, p);
	a = cJSON_AddArrayToObject(o, "layers");
	cJSON_AddItemToArray(a, cJSON_CreateString("builtin:floor"));
	if (n_layers == 0)
		cJSON_AddItemToArray(a, cJSON_CreateString("builtin:default"));
	for (size_t i = 0; i < n_layers; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(layers[i]));
	cJSON_AddStringToObject(o, "workspace", workspace ? workspace : "");
	a = cJSON_AddArrayToObject(o, "command");
	for (size_t i = 0; argv && argv[i]; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(argv[i]));
	emit(ev, o);
}

/* `halo-run proxy`'s SIGHUP: {"type":"reload","ok":true,"policy_digest":...} or
 * {"type":"reload","ok":false,"error":WHY} (the old policy stays in force). */
void runner_events_reload(struct runner_events *ev, const struct halo_policy *p, const char *error)
{
	cJSON *o;

	if (ev->fd < 0)
		return;
	o = record(ev, "reload");
	cJSON_AddBoolToObject(o, "ok", p != NULL);
	if (p) {
		add_policy_digest(o, p);
	} else {
		cJSON_AddStringToObject(o, "error", error ? error : "");
	}
	emit(ev, o);
}

static void limit_record(struct runner_events *ev, const char *which, long long value,
			 const char *key, long long count, const char *how)
{
	cJSON *o = record(ev, "limit");

	const char *pkey = runner_limit_key(which, NULL);

	cJSON_AddStringToObject(o, "limit", which);
	if (pkey)
		cJSON_AddStringToObject(o, "policy_key", pkey);
	cJSON_AddNumberToObject(o, "value", (double)value);
	if (key)
		cJSON_AddNumberToObject(o, key, (double)count);
	cJSON_AddStringToObject(o, "evidence", how);
	emit(ev, o);
}

/* What the kernel told: the cgroup counters, the wall clock, and the signal the
 * command died of. A limit the command survived (a refused fork it handled, EFBIG
 * with SIGXFSZ ignored, a failed malloc under RLIMIT_DATA) leaves no trace here. */
static void limits_hit(struct runner_events *ev, const struct rlimits_set *r,
		       struct halo_outcome out, const struct halo_run_facts *f)
{
	bool sig = out.kind == HALO_OUTCOME_SIGNALED;

	if (f->timed_out)
		limit_record(ev, "wall", r->wall_seconds, NULL, 0, "wall clock");
	if (f->oom_kills > 0)
		limit_record(ev, "memory", r->memory_bytes, "processes_killed", f->oom_kills,
			     "memory cgroup oom_kill");
	if (f->pids_max_hits > 0)
		limit_record(ev, "processes", r->processes, "forks_refused", f->pids_max_hits,
			     "pids cgroup max");
	if (sig && out.value == SIGXCPU)
		limit_record(ev, "cpu", r->cpu_seconds, NULL, 0, "SIGXCPU");
	else if (sig && out.value == SIGKILL && r->cpu_seconds != RLIMITS_UNSET && !f->timed_out &&
		 f->oom_kills <= 0)
		limit_record(ev, "cpu", r->cpu_seconds, NULL, 0,
			     "SIGKILL with a CPU limit set (inferred: the hard limit)");
	if (sig && out.value == SIGXFSZ)
		limit_record(ev, "fsize", r->file_size_bytes, NULL, 0, "SIGXFSZ");
}

static const char *const outcome_names[] = {
    [HALO_OUTCOME_EXITED] = "exited",	[HALO_OUTCOME_SIGNALED] = "signaled",
    [HALO_OUTCOME_TIMEOUT] = "timeout", [HALO_OUTCOME_SETUP] = "setup",
    [HALO_OUTCOME_NOEXEC] = "noexec",	[HALO_OUTCOME_NOTFOUND] = "notfound",
    [HALO_OUTCOME_DENIED] = "denied",
};

void runner_events_finish(struct runner_events *ev, const struct rlimits_set *limits,
			  struct halo_outcome out, const struct halo_run_facts *f, int status,
			  const char *error)
{
	cJSON *o;

	if (ev->fd < 0)
		return;
	limits_hit(ev, limits, out, f);
	if (f->fs_refusals > 0) {
		o = record(ev, "fs_denied");
		cJSON_AddStringToObject(o, "source", "broker");
		cJSON_AddStringToObject(o, "what", "git hooks or config");
		cJSON_AddNumberToObject(o, "count", (double)f->fs_refusals);
		cJSON_AddStringToObject(o, "first", f->fs_first);
		emit(ev, o);
	}
	o = record(ev, "exit");
	cJSON_AddStringToObject(o, "outcome", outcome_names[out.kind]);
	cJSON_AddNumberToObject(o, "status", status);
	if (out.kind == HALO_OUTCOME_SIGNALED)
		cJSON_AddNumberToObject(o, "signal", out.value);
	if (out.kind == HALO_OUTCOME_EXITED)
		cJSON_AddNumberToObject(o, "code", out.value);
	cJSON_AddNumberToObject(o, "duration_ms", (double)(proxy_now_ms() - ev->t0_ms));
	if (error && *error)
		cJSON_AddStringToObject(o, "error", error);
	emit(ev, o);
}

void runner_events_session_end(struct runner_events *ev, const char *reason, long long calls)
{
	cJSON *o;

	if (ev->fd < 0)
		return;
	ev->call = 0;
	o = record(ev, "session_end");
	cJSON_AddStringToObject(o, "reason", reason);
	cJSON_AddNumberToObject(o, "calls", (double)calls);
	cJSON_AddNumberToObject(o, "duration_ms", (double)(proxy_now_ms() - ev->t0_ms));
	emit(ev, o);
}

void runner_events_refusal(struct runner_events *ev, const char *what, const char *addr,
			   unsigned port, const char *key, const char *message)
{
	cJSON *o;

	if (!ev || ev->fd < 0)
		return;
	o = record(ev, "refusal");
	cJSON_AddStringToObject(o, "what", what);
	cJSON_AddStringToObject(o, "address", addr);
	cJSON_AddNumberToObject(o, "port", port);
	cJSON_AddStringToObject(o, "policy_key", key);
	cJSON_AddStringToObject(o, "message", message);
	emit(ev, o);
}
