/* `halo-run verify [--policy F]... [--json]`: prove, on this machine, that the policy
 * is enforced. verify makes a throwaway workspace (a git repository with a hook, a
 * .bashrc, files matching the protected globs holding a planted secret), opens
 * sockets on the host's loopback and an abstract unix socket, a SysV shared memory
 * segment and a descriptor without close-on-exec, puts a secret in the environment,
 * then runs halo-run itself — the real launch, through the same policy — with a copy
 * of its own binary as the command: `halo-run __probe` tries each escape and reports.
 * verify compares every answer with what the policy expects, looks on the host for
 * what should not have arrived, cleans up, prints the table and exits 1 on any FAIL. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "env/caches.h"
#include "linux/linux.h"
#include "plan/plan.h"
#include "rlimits/rlimits.h"
#include "trust/trust.h"
#include "opts/opts.h"
#include "trust/verify_int.h"

extern char **environ;

#define RUN_SECONDS	300   /* the whole probe run, at most */
#define RUN_TIMEOUT_ARG "240" /* --timeout given to the launch when the policy has none */
#define RUNNER_NAME	"halo-verify-runner"

/* ---------------------------------------------------------------- set-up */

static void hex_random(char *out, size_t n, size_t bytes)
{
	unsigned char r[16];
	size_t k = 0;

	bytes = bytes > sizeof(r) ? sizeof(r) : bytes;
	if (getrandom(r, bytes, 0) != (ssize_t)bytes)
		for (size_t i = 0; i < bytes; i++)
			r[i] = (unsigned char)(rand() ^ (int)time(NULL) ^ (int)i);
	out[0] = '\0';
	for (size_t i = 0; i < bytes && k + 3 <= n; i++)
		k += (size_t)snprintf(out + k, n - k, "%02x", r[i]);
}

static void make_secret(struct verify *v)
{
	char hex[40];

	hex_random(hex, sizeof(hex), 12);
	snprintf(v->secret, sizeof(v->secret), "halo-verify-secret-%s", hex);
	hex_random(v->tag, sizeof(v->tag), 4);
}

/* A socket on the host's loopback (port 0: the kernel picks); -1 when the family is
 * missing (no IPv6). */
static int host_socket(int family, int type, unsigned *port)
{
	struct sockaddr_storage ss = {0};
	socklen_t len;
	int fd = socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -1;
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		len = sizeof(*a);
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 16) < 0) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					: ((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

static int abstract_socket(struct verify *v)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	size_t len;
	int fd;

	snprintf(v->unix_name, sizeof(v->unix_name), "halo-verify-%d-%s", (int)v->self, v->tag);
	len = strlen(v->unix_name);
	memcpy(a.sun_path + 1, v->unix_name, len);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 ||
	    bind(fd, (struct sockaddr *)&a, (socklen_t)(sizeof(sa_family_t) + 1 + len)) < 0 ||
	    listen(fd, 16) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int host_resources(struct verify *v)
{
	struct stat st;
	int fd;

	v->tcp4 = host_socket(AF_INET, SOCK_STREAM, &v->port_tcp4);
	v->target4 = host_socket(AF_INET, SOCK_STREAM, &v->port_target4);
	v->udp4 = host_socket(AF_INET, SOCK_DGRAM, &v->port_udp4);
	v->tcp6 = host_socket(AF_INET6, SOCK_STREAM, &v->port_tcp6);
	v->udp6 = host_socket(AF_INET6, SOCK_DGRAM, &v->port_udp6);
	v->unix_fd = abstract_socket(v);
	v->shm_id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | IPC_EXCL | 0600);
	v->netns_ino = stat("/proc/self/ns/net", &st) == 0 ? (unsigned long long)st.st_ino : 0;
	v->pidns_ino = stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long long)st.st_ino : 0;
	/* Without close-on-exec, on purpose: halo-run must close it for the command. */
	fd = open(v->ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	v->leak_fd = fd < 0 ? -1 : fcntl(fd, F_DUPFD, 20);
	if (fd >= 0)
		close(fd);
	if (v->tcp4 < 0 || v->target4 < 0 || v->udp4 < 0 || v->unix_fd < 0 || v->shm_id < 0 ||
	    v->leak_fd < 0) {
		fprintf(stderr,
			"halo-run: verify: cannot open the host-side sockets, shared "
			"memory or descriptor it needs: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

static void release_resources(struct verify *v)
{
	int *fds[] = {&v->tcp4, &v->target4, &v->udp4,	 &v->tcp6,
		      &v->udp6, &v->unix_fd, &v->leak_fd};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
	if (v->shm_id >= 0)
		shmctl(v->shm_id, IPC_RMID, NULL);
	v->shm_id = -1;
}

/* halo-run's own binary, copied into the workspace: wherever it is installed (a
 * directory the sandbox replaces, such as /tmp, included), the copy is reachable. */
static int copy_self(const char *dir, char *dst, size_t n)
{
	int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), out;
	struct stat st;
	off_t off = 0;

	snprintf(dst, n, "%s/" RUNNER_NAME, dir);
	if (in < 0 || fstat(in, &st) < 0) {
		if (in >= 0)
			close(in);
		return -1;
	}
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	while (out >= 0 && off < st.st_size)
		if (sendfile(out, in, &off, (size_t)(st.st_size - off)) <= 0)
			break;
	close(in);
	if (out < 0 || off != st.st_size) {
		if (out >= 0)
			close(out);
		fprintf(stderr, "halo-run: verify: cannot copy halo-run into the workspace: %s\n",
			strerror(errno));
		return -1;
	}
	return close(out);
}

/* ---------------------------------------------------------------- the run */

/* The caller's environment, the planted secret (last: ours to free) and
 * HALO_RUN_INDEX=ro: the launches use an index as any launch does, but leave none
 * behind and start no watcher. */
static char **build_env(const struct verify *v, bool home)
{
	size_t n = 0, k = 0;
	char **env, *entry, *h = NULL;

	while (environ[n])
		n++;
	env = calloc(n + 4, sizeof(char *));
	if (!env || asprintf(&entry, "HALO_VERIFY_SECRET=%s", v->secret) < 0 ||
	    (home && asprintf(&h, "HOME=%s", v->home_ws) < 0)) {
		free(env);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "HALO_VERIFY_SECRET=", 19) != 0 &&
		    strncmp(environ[i], "HALO_RUN_INDEX=", 15) != 0 &&
		    !(home && strncmp(environ[i], "HOME=", 5) == 0))
			env[k++] = environ[i];
	env[k++] = "HALO_RUN_INDEX=ro";
	if (h)
		env[k++] = h; /* freed with the secret: both ours, both last */
	env[k++] = entry;
	return env;
}

static char **build_argv(const struct runner_opts *o, const struct verify *v,
			 const struct launch_of *at, const char *self, const char *runner)
{
	char **argv = calloc(2 * o->n_policies + v->n + 16, sizeof(char *));
	size_t k = 0;

	if (!argv)
		return NULL;
	argv[k++] = (char *)self;
	argv[k++] = "--workspace";
	argv[k++] = (char *)at->ws;
	for (size_t i = 0; i < o->n_policies; i++) {
		argv[k++] = "--policy";
		argv[k++] = (char *)o->policies[i];
	}
	if (v->p->limits.wall_seconds == POLICY_LIMIT_UNSET) {
		argv[k++] = "--timeout";
		argv[k++] = RUN_TIMEOUT_ARG;
	}
	argv[k++] = "--";
	argv[k++] = (char *)runner;
	argv[k++] = "__probe";
	argv[k++] = PROBE_TOKEN;
	for (size_t i = at->from; i < at->to; i++)
		if (v->rows[i].spec && v->rows[i].home == at->home)
			argv[k++] = v->rows[i].spec;
	return argv;
}

/* "INDEX RESULT" lines into the rows that have a spec, in order. */
static void take_results(struct verify *v, const struct launch_of *at, char *out)
{
	size_t *of = calloc(v->n + 1, sizeof(size_t)), n_specs = 0;

	if (!of)
		return;
	for (size_t i = at->from; i < at->to; i++)
		if (v->rows[i].spec && v->rows[i].home == at->home)
			of[n_specs++] = i;
	for (char *save = NULL, *line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');
		size_t k = strtoul(line, NULL, 10);
		if (!sp || k >= n_specs)
			continue;
		snprintf(v->rows[of[k]].got, sizeof(v->rows[0].got), "%s", sp + 1);
	}
	free(of);
}

/* What the probes cause on purpose, and so never a message for the user: the proxy's
 * per-request denials (they ask for denied hosts), the supervisor's note on refused
 * git hook and config changes (they try to plant hooks) and its explanations of
 * refused connections (they knock on the host's loopback ports, runner/explain.c). */
static const char *const probes_cause[] = {
    "egress denied",
    " to git hooks or config (first: ",
    " has no listener in the sandbox; the host has one",
    " refused: egress is decided by host name",
};

static bool caused_by_probes(const char *line)
{
	for (size_t i = 0; i < sizeof(probes_cause) / sizeof(probes_cause[0]); i++)
		if (strstr(line, probes_cause[i]))
			return true;
	return false;
}

/* The launcher's stderr, minus what the probes caused on purpose. */
static void take_messages(struct run *run, int fd)
{
	char buf[8192];
	ssize_t len = pread(fd, buf, sizeof(buf) - 1, 0);

	if (len <= 0)
		return;
	buf[len] = '\0';
	for (char *save = NULL, *line = strtok_r(buf, "\n", &save);
	     line && run->n_messages < VERIFY_MAX_MESSAGES; line = strtok_r(NULL, "\n", &save))
		if (!caused_by_probes(line))
			run->messages[run->n_messages++] = strdup(line);
}

static size_t read_all(int fd, pid_t pid, char **out)
{
	size_t len = 0, cap = 16384;
	char *buf = malloc(cap);
	time_t until = time(NULL) + RUN_SECONDS;

	while (buf) {
		struct pollfd p = {fd, POLLIN, 0};
		ssize_t r;
		if (poll(&p, 1, 1000) == 0) {
			if (time(NULL) < until)
				continue;
			kill(pid, SIGKILL); /* bounded: a hung run must not hang CI */
			break;
		}
		if (len + 4096 > cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	if (buf)
		buf[len] = '\0';
	*out = buf;
	return len;
}

static void spawn_child(char **argv, char **envp, int out_w, int err_fd)
{
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (null < 0 || dup2(null, 0) < 0 || dup2(out_w, 1) < 0 || dup2(err_fd, 2) < 0)
		_exit(HALO_EXIT_SETUP);
	execve(argv[0], argv, envp);
	_exit(HALO_EXIT_NOEXEC);
}

int verify_run_probes(const struct runner_opts *o, struct verify *v, const struct launch_of *at,
		      struct run *run)
{
	char self[4096], runner[4200], *out = NULL, **argv, **envp;
	ssize_t sn = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int pipefd[2], err_fd, ws = 0;
	pid_t pid;

	run->status = -1;
	if (sn <= 0 || copy_self(at->runner_dir, runner, sizeof(runner)) < 0)
		return -1;
	self[sn] = '\0';
	argv = build_argv(o, v, at, self, runner);
	envp = build_env(v, at->home);
	err_fd = memfd_create("halo-verify-stderr", MFD_CLOEXEC);
	if (!argv || !envp || err_fd < 0 || pipe2(pipefd, O_CLOEXEC) < 0) {
		fprintf(stderr, "halo-run: verify: cannot start the probe run: %s\n",
			strerror(errno));
		free(argv);
		free(envp);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		spawn_child(argv, envp, pipefd[1], err_fd);
	close(pipefd[1]);
	if (pid > 0) {
		read_all(pipefd[0], pid, &out);
		while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
			;
		run->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	}
	close(pipefd[0]);
	if (out)
		take_results(v, at, out);
	take_messages(run, err_fd);
	close(err_fd);
	free(out);
	for (size_t k = 0; envp[k]; k++)
		if (!envp[k + 1] || (at->home && !envp[k + 2]))
			free(envp[k]); /* ours: the planted secret last, the home's HOME before */
	free(envp);
	free(argv);
	return pid > 0 ? 0 : -1;
}

/* ---------------------------------------------------------------- the command */

/* A launch is the first row of its probes: they mean nothing if it did not run. */
int verify_launch_row(struct verify *v, const struct run *run, size_t at, const char *what)
{
	struct vrow *r = verify_add(v, V_SKIP, "exit 0", NULL, "%s", what);

	if (!r)
		return -ENOMEM;
	if (run->status == 0) {
		snprintf(r->got, sizeof(r->got), "exit 0");
		r->res = R_PASS;
	} else {
		snprintf(r->got, sizeof(r->got), "exit %d", run->status);
		r->res = R_FAIL;
	}
	r->check = V_EXACT;
	struct vrow launch = *r;
	memmove(v->rows + at + 1, v->rows + at, (v->n - 1 - at) * sizeof(*r));
	v->rows[at] = launch;
	return 0;
}

/* The home set's launch: its status is a row of its own (its messages are the
 * home's one line, said at every such launch). */
static int home_run(const struct runner_opts *o, struct verify *v)
{
	struct run hr = {0};
	struct vrow *r;
	int rc = verify_run_probes(o, v, &(struct launch_of){v->home_ws, v->home_ws, 0, v->n, true},
				   &hr);

	for (size_t i = 0; i < hr.n_messages; i++)
		free(hr.messages[i]);
	if (rc < 0)
		return rc;
	if (!(r = verify_add(v, V_SKIP, "exit 0", NULL, "launch in a temporary home (home set)")))
		return -ENOMEM;
	snprintf(r->got, sizeof(r->got), "exit %d", hr.status);
	snprintf(r->want, sizeof(r->want), "exit 0");
	r->check = V_EXACT;
	return 0;
}

static void verify_free(struct verify *v, struct run *run)
{
	for (size_t i = 0; i < v->n; i++) {
		free(v->rows[i].spec);
		free(v->rows[i].host_path);
	}
	free(v->rows);
	plan_free(&v->plan);
	for (size_t i = 0; i < run->n_messages; i++)
		free(run->messages[i]);
}

static int verify_run(const struct runner_opts *o, struct verify *v, struct run *run,
		      struct runner_env *re)
{
	struct runner_opts lo = *o;
	struct halo_err e = {{0}};

	lo.workspace = v->ws;
	if (runner_load_policy(&lo, true, re) != 0)
		return HALO_EXIT_SETUP;
	v->p = re->policy;
	v->home = re->env_home ? re->env_home : re->pw_home;
	if (v->p->mode == POLICY_MODE_OFF) {
		/* Nothing to prove, and the probes would write to the host for real. */
		struct vrow *r = verify_add(v, V_EXACT, "sandboxed", NULL,
					    "sandbox.mode is off: commands run unsandboxed");
		if (!r)
			return HALO_EXIT_SETUP;
		snprintf(r->got, sizeof(r->got), "off");
		r->res = R_FAIL;
		return 0;
	}
	if (host_resources(v) < 0)
		return HALO_EXIT_SETUP;
	if (runner_plan_of(v->p, re->workspace, re->pw_home, true, &v->plan, &e) < 0) {
		fprintf(stderr, "halo-run: verify: the plan of the launch: %s\n", e.msg);
		return HALO_EXIT_SETUP;
	}
	if (verify_plan(v) < 0) {
		fprintf(stderr, "halo-run: verify: cannot prepare the probes: %s\n",
			strerror(errno));
		return HALO_EXIT_SETUP;
	}
	if (verify_run_probes(o, v, &(struct launch_of){v->ws, v->ws, 0, v->n, false}, run) < 0)
		return HALO_EXIT_SETUP;
	if (v->home_ws[0] && home_run(o, v) < 0)
		return HALO_EXIT_SETUP;
	size_t n_own = v->n; /* the home launch's own row included */
	verify_judge_rows(v, 0, n_own);
	if (verify_launch_row(v, run, 0,
			      "launch halo-run with the probe "
			      "runner as the command") < 0 ||
	    verify_check_workspace(o, v, run) < 0)
		return HALO_EXIT_SETUP;
	return 0;
}

/* The tool caches a launch in ws made under the caller's home (caches.c), or "". */
static void cache_dir_of(const char *ws, char *out, size_t n)
{
	char home[4096];
	const char *h = getenv("HOME");

	if (!h || h[0] != '/') {
		h = runner_pw_home(geteuid(), home, sizeof(home)) == 0 ? home : NULL;
	}
	if (!ws[0] || !h || runner_cache_dir(h, getenv("XDG_CACHE_HOME"), ws, out, n) < 0)
		out[0] = '\0';
}

/* Nothing left behind: the caches of verify's own workspace, and of the caller's when
 * there were none before verify made them (kept: the caller's, when it was there). */
static void remove_caches(const struct verify *v, const char *kept)
{
	char dir[4096];

	cache_dir_of(v->ws, dir, sizeof(dir));
	verify_remove_tree(dir);
	cache_dir_of(v->real_ws, dir, sizeof(dir));
	if (dir[0] && strcmp(dir, kept) != 0)
		verify_remove_tree(dir);
}

int runner_cmd_verify(const struct runner_opts *o)
{
	char kept[4096] = "";
	struct verify v;
	struct run run = {0};
	struct runner_env re = {0};
	size_t c[3];
	int rc;

	if (o->n_rest != 0) {
		fprintf(stderr, "halo-run: verify takes no operands (use --policy F)\n");
		return HALO_EXIT_SETUP;
	}
	memset(&v, 0, sizeof(v));
	/* verify's own walks (the plans) use no index: what they find does not depend on
	 * what a launch trusts, and nothing is left behind (its launches: build_env). */
	setenv("HALO_RUN_INDEX", "0", 1);
	v.self = getpid();
	v.tcp4 = v.tcp6 = v.udp4 = v.udp6 = v.unix_fd = v.target4 = v.leak_fd = v.shm_id = -1;
	make_secret(&v);
	if (verify_make_workspace(&v) < 0)
		return HALO_EXIT_SETUP;
	/* The workspace checked, as verify_plan_workspace will resolve it. */
	char real[4096];
	if (realpath(o->workspace ? o->workspace : ".", real))
		cache_dir_of(real, kept, sizeof(kept));
	if (!kept[0] || access(kept, F_OK) < 0)
		kept[0] = '\0';
	rc = verify_run(o, &v, &run, &re);
	if (rc == 0) {
		const char *source = v.p->source ? v.p->source : "embedded default";
		if (o->json)
			verify_print_json(&v, &run, source);
		else
			verify_print_text(&v, &run, source);
		verify_count(&v, c);
		rc = c[R_FAIL] ? 1 : 0;
	}
	release_resources(&v);
	remove_caches(&v, kept);
	verify_remove_tree(v.ws);
	verify_remove_tree(v.home_ws);
	verify_free(&v, &run);
	runner_env_release(&re);
	return rc;
}
