/* plan/: the filesystem steps in the order the launcher applies them, each with its
 * reason, built from a policy and scan findings alone (no namespace, no syscall), and
 * runner's one printer of a plan as text and as JSON. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan/plan.h"
#include "runner/runner_int.h"
#include "tests/unit/policy_test.h"
#include "tests/unit/unit.h"

#define PATHS(...)                                                                                 \
	((struct plan_paths){(char *const[]){__VA_ARGS__},                                         \
			     sizeof((char *const[]){__VA_ARGS__}) / sizeof(char *)})

static struct halo_policy *load(const char *yaml)
{
	struct halo_policy *p = NULL;
	struct policy_diags d = {0};

	ck_assert_msg(pt_load(yaml, &p, &d) == 0, "%s", pt_dump(&d));
	policy_diags_free(&d);
	return p;
}

/* Index of the first step with op and path, or -1. */
static int at(const struct halo_plan *p, enum plan_op op, const char *path)
{
	for (size_t i = 0; i < p->n_steps; i++)
		if (p->steps[i].op == op && strcmp(p->steps[i].path, path) == 0)
			return (int)i;
	return -1;
}

START_TEST(layout_order)
{
	struct halo_policy *pol =
	    load("sandbox:\n  writableRoots: [/opt/build, /opt/build/sub, /tmp/scratch]\n");
	struct halo_plan p;
	struct plan_fs_in in = {
	    .policy = pol,
	    .workspace = "/home/alice/proj",
	    .caches = PATHS("/home/alice/.cache/halo-run/caches/x"),
	    /* resolved and normalised as the scan leaves them: nested entries dropped */
	    .writable = PATHS("/home/alice/.cache/halo-run/caches/x", "/home/alice/proj",
			      "/opt/build", "/tmp/scratch"),
	};

	plan_init(&p, "linux");
	ck_assert_int_eq(plan_fs_layout(&p, &in), 0);
	ck_assert_int_eq(at(&p, PLAN_BIND_RO, "/"), 0);
	int tmp = at(&p, PLAN_TMPFS, "/tmp"), run = at(&p, PLAN_TMPFS, "/run");
	int dev = at(&p, PLAN_DEV, "/dev"), proc = at(&p, PLAN_PROC, "/proc");
	int ws = at(&p, PLAN_BIND_RW, "/home/alice/proj"), opt = at(&p, PLAN_BIND_RW, "/opt/build");
	int sub = at(&p, PLAN_BIND_RW, "/opt/build/sub"),
	    scr = at(&p, PLAN_BIND_RW, "/tmp/scratch");
	int cache = at(&p, PLAN_CACHE_BIND, "/home/alice/.cache/halo-run/caches/x");

	ck_assert(tmp > 0 && run > tmp && dev > run && proc > dev);
	/* trees elsewhere before the fresh file systems, parents first */
	ck_assert(cache > 0 && cache < ws && ws < opt && opt < sub && sub < tmp);
	/* a tree beneath /tmp comes back on top of the fresh tmpfs */
	ck_assert(scr > dev && scr < proc);
	/* the nested root is named but mounted by its parent */
	ck_assert_uint_eq(p.steps[sub].flags & PLAN_F_SHOWN, PLAN_F_SHOWN);
	ck_assert_uint_eq(p.steps[opt].flags, 0);
	ck_assert_str_eq(p.steps[ws].reason, "workspace, read-write");
	ck_assert_str_eq(p.steps[cache].reason,
			 "tool caches (sandbox.caches: isolated), read-write, not scanned");
	ck_assert_int_eq(at(&p, PLAN_BIND_RO, "/sys"), (int)p.n_steps - 1);
	for (size_t i = 0; i < p.n_steps; i++)
		ck_assert_msg(p.steps[i].reason && p.steps[i].reason[0], "step %zu has a reason",
			      i);
	plan_free(&p);
	policy_free(pol);
}
END_TEST

START_TEST(read_only_workspace)
{
	struct halo_policy *pol = load("sandbox:\n  mode: read-only\n");
	struct halo_plan p;
	struct plan_fs_in in = {.policy = pol, .workspace = "/home/alice/proj"};
	int ws;

	plan_init(&p, "linux");
	ck_assert_int_eq(plan_fs_layout(&p, &in), 0);
	ws = at(&p, PLAN_BIND_RO, "/home/alice/proj");
	/* the read-only root shows it: named, no mount of its own */
	ck_assert(ws > 0);
	ck_assert_uint_eq(p.steps[ws].flags, PLAN_F_SHOWN);
	ck_assert_int_eq(at(&p, PLAN_BIND_RW, "/home/alice/proj"), -1);
	plan_free(&p);
	/* beneath /tmp the fresh tmpfs would hide it: its own read-only bind, after /dev */
	in.workspace = "/tmp/proj";
	plan_init(&p, "linux");
	ck_assert_int_eq(plan_fs_layout(&p, &in), 0);
	ws = at(&p, PLAN_BIND_RO, "/tmp/proj");
	ck_assert(ws > at(&p, PLAN_DEV, "/dev"));
	ck_assert_uint_eq(p.steps[ws].flags, 0);
	plan_free(&p);
	policy_free(pol);
}
END_TEST

START_TEST(late_steps)
{
	static char *const data[] = {"[default]\nregion = x\n"};
	static const size_t len[] = {21};
	struct halo_policy *pol = load("sandbox:\n  protectedPaths: [\".env*\"]\n");
	struct halo_plan p;
	struct plan_fs_in in = {
	    .policy = pol,
	    .workspace = "/w",
	    .masked = PATHS("/home/alice/.aws", "/w/.env"),
	    .carved = PATHS("/home/alice/.aws/config", "/w/.env"),
	    .carved_src = PATHS("/real/aws/config", "/w/.env"),
	    .sanitized = PATHS("/home/alice/.npmrc"),
	    .sanitized_data = data,
	    .sanitized_len = len,
	    .guarded = PATHS("/w/.git/hooks"),
	    .pinned = PATHS("/w/.git"),
	    .missing = PATHS("/w/.vscode"),
	    .sockets = PATHS("/run/user/1/ssh.sock"),
	    .readonly = PATHS("/w/halo-run"),
	};
	static const enum plan_op order[] = {
	    PLAN_PIN,  PLAN_GUARD, PLAN_READONLY, PLAN_CARVE, PLAN_CARVE,	 PLAN_SANITIZE,
	    PLAN_MASK, PLAN_MASK,  PLAN_SOCKET,	  PLAN_SEAL,  PLAN_REFUSE_CREATE};

	plan_init(&p, "linux");
	ck_assert_int_eq(plan_fs_late(&p, &in), 0);
	ck_assert_uint_eq(p.n_steps, sizeof(order) / sizeof(order[0]));
	for (size_t i = 0; i < p.n_steps; i++)
		ck_assert_msg(p.steps[i].op == order[i], "step %zu is %s", i,
			      plan_op_name(p.steps[i].op));
	ck_assert_str_eq(p.steps[3].src, "/real/aws/config");
	ck_assert_ptr_null(p.steps[4].src); /* the masked path itself, read-only */
	ck_assert_ptr_eq(p.steps[5].data, data[0]);
	ck_assert_uint_eq(p.steps[5].len, 21);
	plan_free(&p);
	policy_free(pol);

	/* guardPersistence: false: nothing refused */
	pol = load("sandbox:\n  guardPersistence: false\n");
	in.policy = pol;
	plan_init(&p, "linux");
	ck_assert_int_eq(plan_fs_late(&p, &in), 0);
	ck_assert_uint_eq(plan_count(&p, PLAN_REFUSE_CREATE), 0);
	plan_free(&p);
	policy_free(pol);
}
END_TEST

/* A home's persistence set: each guarded or refused path says its entry's reason; the
 * same names elsewhere (a workspace below the home) keep the guard's. */
START_TEST(home_set_reasons)
{
	struct halo_policy *pol = load("sandbox:\n  mode: workspace-write\n");
	struct halo_plan p;
	struct plan_fs_in in = {
	    .policy = pol,
	    .workspace = "/home/alice",
	    .guarded = PATHS("/home/alice/.bashrc", "/home/alice/tools", "/home/alice/p/.bashrc"),
	    .missing = PATHS("/home/alice/.config/git", "/home/alice/.config/systemd/user"),
	    .prefixes = PATHS("/home/alice/.zcompdump", "/home/alice/.cache/p10k-dump-"),
	    .homes = {"/home/alice", NULL},
	    .caller_path = "/usr/bin:/home/alice/tools:relative:/home/alice/../etc",
	};
	int rc, tools, sub, git, sd, zc, p10k;

	plan_init(&p, "linux");
	ck_assert_int_eq(plan_fs_late(&p, &in), 0);
	rc = at(&p, PLAN_GUARD, "/home/alice/.bashrc");
	tools = at(&p, PLAN_GUARD, "/home/alice/tools");
	sub = at(&p, PLAN_GUARD, "/home/alice/p/.bashrc");
	git = at(&p, PLAN_REFUSE_CREATE, "/home/alice/.config/git");
	sd = at(&p, PLAN_REFUSE_CREATE, "/home/alice/.config/systemd/user");
	ck_assert(rc >= 0 && tools >= 0 && sub >= 0 && git >= 0 && sd >= 0);
	ck_assert_str_eq(p.steps[rc].reason,
			 PLAN_HOME_SET_REASON "bash runs it at every interactive start");
	ck_assert_str_eq(p.steps[tools].reason,
			 PLAN_HOME_SET_REASON "a directory on the caller's PATH");
	ck_assert_str_eq(p.steps[sub].reason, "persistence guard: read-only");
	ck_assert_str_eq(p.steps[git].reason, PLAN_HOME_SET_REASON
			 "git's second global config (config, attributes, hooks)");
	ck_assert_ptr_nonnull(strstr(p.steps[sd].reason, "user services"));
	/* a prefix row: its own step, with its own reason (not the exact .zcompdump's) */
	zc = at(&p, PLAN_REFUSE_PREFIX, "/home/alice/.zcompdump");
	p10k = at(&p, PLAN_REFUSE_PREFIX, "/home/alice/.cache/p10k-dump-");
	ck_assert(zc >= 0 && p10k >= 0);
	ck_assert_ptr_nonnull(strstr(p.steps[zc].reason, "oh-my-zsh"));
	ck_assert_ptr_nonnull(strstr(p.steps[p10k].reason, "powerlevel10k"));
	ck_assert_str_eq(plan_op_name(PLAN_REFUSE_PREFIX), "refuse-create-prefix");
	plan_free(&p);
	policy_free(pol);
}
END_TEST

/* The isolated cache directly in the caches directory is shown alone; a cache tree
 * elsewhere (caches: host) is not. */
START_TEST(cache_alone)
{
	struct halo_policy *pol = load("sandbox:\n  mode: workspace-write\n");
	struct halo_plan p;
	struct plan_fs_in in = {
	    .policy = pol,
	    .workspace = "/home/alice/proj",
	    .caches = PATHS("/home/alice/.cache/halo-run/caches/x", "/home/alice/.npm"),
	    .writable = PATHS("/home/alice/.cache/halo-run/caches/x", "/home/alice/.npm",
			      "/home/alice/proj"),
	    .cache_hide = "/home/alice/.cache/halo-run/caches",
	};
	int c, npm;

	plan_init(&p, "linux");
	ck_assert_int_eq(plan_fs_layout(&p, &in), 0);
	c = at(&p, PLAN_CACHE_BIND, "/home/alice/.cache/halo-run/caches/x");
	npm = at(&p, PLAN_CACHE_BIND, "/home/alice/.npm");
	ck_assert(c > 0 && npm > 0);
	ck_assert_uint_eq(p.steps[c].flags & PLAN_F_ALONE, PLAN_F_ALONE);
	ck_assert_uint_eq(p.steps[npm].flags & PLAN_F_ALONE, 0);
	ck_assert_ptr_nonnull(strstr(p.steps[c].reason, "other workspaces' caches hidden"));
	plan_free(&p);
	/* the home as the workspace: the cache lies in it (not a tree of its own), and is
	 * still mounted, alone */
	in.workspace = "/home/alice";
	in.writable = PATHS("/home/alice");
	plan_init(&p, "linux");
	ck_assert_int_eq(plan_fs_layout(&p, &in), 0);
	c = at(&p, PLAN_CACHE_BIND, "/home/alice/.cache/halo-run/caches/x");
	npm = at(&p, PLAN_CACHE_BIND, "/home/alice/.npm");
	ck_assert_uint_eq(p.steps[c].flags, PLAN_F_ALONE);
	ck_assert(c > at(&p, PLAN_BIND_RW, "/home/alice"));
	ck_assert_uint_eq(p.steps[npm].flags, PLAN_F_SHOWN);
	plan_free(&p);
	/* a caches directory that is a prefix of the name only: not alone */
	in.cache_hide = "/home/alice/.cache/halo-run/cach";
	plan_init(&p, "linux");
	ck_assert_int_eq(plan_fs_layout(&p, &in), 0);
	c = at(&p, PLAN_CACHE_BIND, "/home/alice/.cache/halo-run/caches/x");
	ck_assert_uint_eq(p.steps[c].flags & PLAN_F_ALONE, 0);
	plan_free(&p);
	policy_free(pol);
}
END_TEST

/* runner/home_note.c: the home as the workspace is said in one line (--verbose); a launch that
 * takes more than a second (a large home's first scan) says what it is doing, a quick
 * one does not. stderr is read back from a file. */
static char *stderr_of(void (*fn)(void *), void *arg)
{
	char path[] = "/tmp/halo-test-note.XXXXXX", *buf = calloc(1, 8192);
	int fd = mkstemp(path), saved = dup(2);

	ck_assert(fd >= 0 && saved >= 0 && buf);
	fflush(stderr);
	dup2(fd, 2);
	fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	ck_assert(pread(fd, buf, 8191, 0) >= 0);
	close(fd);
	unlink(path);
	return buf;
}

static void note(void *re)
{
	struct runner_opts o = {0};
	runner_home_note(&o, re);
}

static void note_verbose(void *re)
{
	struct runner_opts o = {.verbose = true};
	runner_home_note(&o, re);
}

static void slow_launch(void *ms)
{
	runner_home_scan_begin();
	usleep((useconds_t)(*(int *)ms) * 1000);
	runner_home_scan_end();
}

START_TEST(home_note)
{
	struct halo_policy *pol = load("sandbox:\n  mode: workspace-write\n");
	struct runner_env re = {.policy = pol};
	char dir[] = "/tmp/halo-test-home.XXXXXX", *err;
	int quick = 10, slow = 1300;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(re.pw_home, sizeof(re.pw_home), "%s", dir);
	snprintf(re.workspace, sizeof(re.workspace), "%s", dir);
	/* Said with --verbose only: the guard is the default, nothing was loosened. */
	err = stderr_of(note, &re);
	ck_assert_str_eq(err, "");
	free(err);
	err = stderr_of(note_verbose, &re);
	ck_assert_msg(strstr(err, "is your home (or holds it): writable, except what runs"), "%s",
		      err);
	ck_assert_msg(strchr(err, '\n') == err + strlen(err) - 1, "one line: %s", err);
	free(err);
	err = stderr_of(slow_launch, &quick);
	ck_assert_str_eq(err, "");
	free(err);
	err = stderr_of(slow_launch, &slow);
	ck_assert_msg(strstr(err, "scanning ") && strstr(err, "later launches reuse its index"),
		      "%s", err);
	free(err);
	/* a workspace below the home: nothing said */
	snprintf(re.workspace, sizeof(re.workspace), "%s/proj", dir);
	err = stderr_of(note_verbose, &re);
	ck_assert_str_eq(err, "");
	free(err);
	rmdir(dir);
	policy_free(pol);
}
END_TEST

START_TEST(paths)
{
	static const struct {
		const char *path, *dir;
		bool beneath;
	} t[] = {
	    {"/tmp", "/tmp", true},   {"/tmp/x", "/tmp", true},	    {"/tmpx", "/tmp", false},
	    {"/tm", "/tmp", false},   {"/anything", "/", true},	    {"/a/b", "/a/b/c", false},
	    {"/a/b/c", "/a/b", true}, {"/var/run/x", "/var", true}, {"", "/tmp", false},
	};
	static const struct {
		const char *path;
		bool fresh;
	} f[] = {{"/tmp", true},     {"/tmp/a", true},	 {"/run/user/1", true},
		 {"/var/run", true}, {"/dev/shm", true}, {"/devices", false},
		 {"/var", false},    {"/home/a", false}, {"/var/tmp", false},
		 {"/", false}};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_msg(plan_path_beneath(t[i].path, t[i].dir) == t[i].beneath,
			      "row %zu: %s in %s", i, t[i].path, t[i].dir);
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		ck_assert_msg(plan_path_in_fresh(f[i].path) == f[i].fresh, "fresh row %zu: %s", i,
			      f[i].path);
	for (int op = 0; op < PLAN_N_OPS; op++)
		ck_assert_str_ne(plan_op_name((enum plan_op)op), "?");
	ck_assert_str_eq(plan_op_name(PLAN_N_OPS), "?");
}
END_TEST

/* A small whole plan, as a launcher would make it. */
static void sample(struct halo_plan *p, struct halo_policy *pol, struct plan_fs_in *in)
{
	static char *const argv[] = {"make", "test", NULL};
	struct plan_layer *y;

	plan_init(p, "linux");
	plan_set(&p->title, "halo-run plan");
	p->policy_source = "t.yaml";
	p->mode = policy_mode_name(pol->mode);
	p->workspace = in->workspace;
	p->argv = argv;
	p->guard = true;
	p->scanned = true;
	p->entries_scanned = 12;
	plan_fs_layout(p, in);
	plan_fs_late(p, in);
	plan_add(p, &p->limits, "cpu 60 s");
	p->limit_values.cpu_seconds = 60;
	plan_add(p, &p->env, "PATH");
	plan_add(p, &p->egress.listeners, "http 127.0.0.1:3128");
	p->egress.proxy = true;
	p->egress.host_ports = &pol->host_ports;
	y = plan_layer_add(p, "seccomp", "seccomp deny list", true, true, NULL);
	plan_add(p, &y->details, "clone3: ENOSYS");
	plan_layer_add(p, "no_new_privs", NULL, true, true, "set before exec");
	plan_add(p, &p->gaps, "a \"quoted\" gap\twith a tab");
	plan_add(p, &p->warnings, "WARNING: a warning");
	ck_assert_int_eq(plan_ok(p), 0);
}

/* Issue 24: halo-run's own state (an index directory, a watcher's socket, the pins of
 * the "halo-run" directories holding them) is enforced but counted, not listed; the
 * user's ~/.local and ~/.cache pins stay listed. */
START_TEST(own_state_counted_not_listed)
{
	struct halo_policy *pol = load("sandbox: {mode: workspace-write}\n");
	struct plan_fs_in in = {
	    .policy = pol,
	    .workspace = "/w",
	    .writable = PATHS("/w"),
	    .masked = PATHS("/w/.env", "/w/.local/state/halo-run/index",
			    "/h2/.local/state/halo-run/index/k.sock"),
	    .own =
		PATHS("/w/.local/state/halo-run/index", "/h2/.local/state/halo-run/index/k.sock"),
	    .pinned = PATHS("/w/.local", "/w/.local/state", "/w/.local/state/halo-run",
			    "/h2/.local/state/halo-run/index")};
	struct halo_plan p;
	char *text = NULL;
	size_t len = 0, own = 0;
	FILE *f = open_memstream(&text, &len);

	sample(&p, pol, &in);
	for (size_t i = 0; i < p.n_steps; i++)
		own += (p.steps[i].flags & PLAN_F_OWN) != 0;
	ck_assert_uint_eq(own, 4);
	runner_plan_print(&p, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text,
				     "masked protected paths (no read, no write, no replace) "
				     "(1):\n  (and 2 of halo-run's own: its index and session "
				     "state)\n  /w/.env\n"));
	ck_assert_ptr_null(strstr(text, "halo-run/index"));
	ck_assert_ptr_nonnull(strstr(text, "  /w/.local\n  /w/.local/state\n"));
	ck_assert_ptr_null(strstr(text, "/w/.local/state/halo-run\n"));
	free(text);
	plan_free(&p);
	policy_free(pol);
}
END_TEST

START_TEST(text_printer)
{
	struct halo_policy *pol = load("egress:\n  hostPorts: [4873]\n");
	struct plan_fs_in in = {.policy = pol,
				.workspace = "/w",
				.masked = PATHS("/w/.env"),
				.writable = PATHS("/w"),
				.carved = PATHS("/x/y"),
				.carved_src = PATHS("/real/y")};
	struct halo_plan p;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	sample(&p, pol, &in);
	runner_plan_print(&p, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "halo-run plan\npolicy: t.yaml\nmode: workspace-write\n"
					   "workspace: /w\ncommand: make test\n"));
	ck_assert_ptr_nonnull(strstr(text, "mounts:\n  /             host root, read-only"));
	ck_assert_ptr_nonnull(strstr(text, "  /w            workspace, read-write\n"));
	ck_assert_ptr_nonnull(strstr(
	    text, "masked protected paths (no read, no write, no replace) (1):\n  /w/.env\n"));
	ck_assert_ptr_nonnull(strstr(text, "  /x/y <- /real/y\n"));
	ck_assert_ptr_nonnull(strstr(text, "workspace scan: 12 entries\n"));
	ck_assert_ptr_nonnull(strstr(text, "seccomp deny list:\n  clone3: ENOSYS\n"));
	ck_assert_ptr_null(strstr(text, "no_new_privs:")); /* no label: not a line of its own */
	ck_assert_ptr_nonnull(strstr(text, "not enforced:\n  a \"quoted\" gap"));
	free(text);
	plan_free(&p);
	policy_free(pol);
}
END_TEST

START_TEST(json_printer)
{
	struct halo_policy *pol = load("egress:\n  hostPorts: [4873]\n");
	struct plan_fs_in in = {.policy = pol,
				.workspace = "/w",
				.writable = PATHS("/w"),
				.masked = PATHS("/w/.env\"\n")};
	struct halo_plan p;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	cJSON *j, *steps, *s;

	sample(&p, pol, &in);
	ck_assert_int_eq(runner_plan_json(&p, f), 0);
	fclose(f);
	j = cJSON_Parse(text);
	ck_assert_ptr_nonnull(j);
	steps = cJSON_GetObjectItem(j, "steps");
	ck_assert(cJSON_IsArray(steps));
	ck_assert_int_eq(cJSON_GetArraySize(steps), (int)p.n_steps);
	cJSON_ArrayForEach(s, steps)
	{
		ck_assert(cJSON_IsString(cJSON_GetObjectItem(s, "op")));
		ck_assert(cJSON_IsString(cJSON_GetObjectItem(s, "reason")));
	}
	/* a hostile path survives the round trip */
	s = cJSON_GetArrayItem(steps, at(&p, PLAN_MASK, "/w/.env\"\n"));
	ck_assert_str_eq(cJSON_GetObjectItem(s, "path")->valuestring, "/w/.env\"\n");
	ck_assert(cJSON_IsArray(cJSON_GetObjectItem(j, "layers")));
	ck_assert_int_eq(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(j, "limits"), "cpuSeconds")->valueint, 60);
	ck_assert(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "limits"), "processes")));
	ck_assert_int_eq(cJSON_GetArrayItem(
			     cJSON_GetObjectItem(cJSON_GetObjectItem(j, "egress"), "hostPorts"), 0)
			     ->valueint,
			 4873);
	ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "gaps"), 0)->valuestring,
			 "a \"quoted\" gap\twith a tab");
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "warnings")), 1);
	cJSON_Delete(j);
	free(text);
	plan_free(&p);
	policy_free(pol);
}
END_TEST

static int released;
static void on_release(void *arg)
{
	released += arg == &released;
}

START_TEST(storage)
{
	struct halo_plan p;

	plan_init(&p, "linux");
	for (int i = 0; i < 1000; i++)
		ck_assert_ptr_nonnull(plan_step_add(&p, PLAN_MASK, 0, "/x", NULL, "r"));
	ck_assert_uint_eq(plan_count(&p, PLAN_MASK), 1000);
	for (int i = 0; i < PLAN_MAX_LAYERS; i++)
		ck_assert_ptr_nonnull(plan_layer_add(&p, "l", "l", false, true, "s"));
	ck_assert_int_eq(plan_ok(&p), 0);
	/* one layer too many: refused, and the plan says it is not whole */
	ck_assert_ptr_null(plan_layer_add(&p, "l", "l", false, true, NULL));
	ck_assert_int_eq(plan_ok(&p), -ENOMEM);
	ck_assert_ptr_nonnull(plan_layer_find(&p, "l"));
	ck_assert_ptr_null(plan_layer_find(&p, "nope"));
	ck_assert_str_eq(plan_str(&p, "%d-%s", 7, "x"), "7-x");
	/* environment: names only; the proxy's among them, never a value (the secret) */
	char *const env[] = {"PATH=/bin",    "HTTPS_PROXY=http://halo:SECRET@127.0.0.1:1",
			     "no_proxy=x",   "BARE",
			     "PROXY_FREE=1", NULL};
	plan_env_names(&p, env);
	ck_assert_uint_eq(p.env.n, 5);
	ck_assert_str_eq(p.env.v[1], "HTTPS_PROXY");
	ck_assert_str_eq(p.env.v[3], "BARE");
	ck_assert_uint_eq(p.egress.env.n, 2);
	ck_assert_str_eq(p.egress.env.v[1], "no_proxy");
	for (size_t i = 0; i < p.env.n; i++)
		ck_assert_ptr_null(strstr(p.env.v[i], "SECRET"));
	p.release = on_release;
	p.release_arg = &released;
	plan_free(&p);
	ck_assert_int_eq(released, 1);
	ck_assert_uint_eq(p.n_steps, 0);
}
END_TEST

static Suite *plan_suite(void)
{
	Suite *s = suite_create("plan");
	TCase *tc = tcase_create("plan");

	tcase_add_test(tc, layout_order);
	tcase_add_test(tc, read_only_workspace);
	tcase_add_test(tc, late_steps);
	tcase_add_test(tc, home_set_reasons);
	tcase_add_test(tc, cache_alone);
	tcase_add_test(tc, home_note);
	tcase_add_test(tc, paths);
	tcase_add_test(tc, text_printer);
	tcase_add_test(tc, json_printer);
	tcase_add_test(tc, own_state_counted_not_listed);
	tcase_add_test(tc, storage);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(plan_suite)
