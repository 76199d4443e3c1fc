/* The mount layout, built for real: a forked child enters new user, mount and pid
 * namespaces (mapping its own uid, as the launcher does), a grandchild becomes pid 1,
 * runs linux_mounts_setup_or_die as the sandbox's init would, then checks from the
 * inside what the command would see. Works as root and as an unprivileged user. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/linux_int.h"
#include "linux/mounts_int.h"
#include "tests/unit/unit.h"

static char root[512]; /* the test's tree, symlinks resolved */
static char ws[600];
static char cache[600], other[600], outside[600], exe[600], policy_file[600];
static struct halo_policy pol;
static struct linux_launch launch;
static struct linux_scan scan;
static const char *policy_files[1];
static char *globs[] = {".env*", "secretdir"};
static char *protected_abs[1];
static char *writable_abs[1];
static int listener = -1;
static int result_fd = -1;

/* ---- building the tree (in the host) */

static void path_of(char *out, size_t n, const char *rel)
{
	int w = snprintf(out, n, "%s/%s", root, rel);

	ck_assert(w > 0 && (size_t)w < n);
}

static void sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

static void make_tree(const char *base)
{
	char tmpl[64], real[PATH_MAX];

	snprintf(tmpl, sizeof(tmpl), "%s/halo-mounts.XXXXXX", base);
	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	ck_assert_ptr_nonnull(realpath(tmpl, real));
	ck_assert_uint_lt(strlen(real), sizeof(root));
	strcpy(root, real);
	path_of(ws, sizeof(ws), "ws");
	path_of(cache, sizeof(cache), "cache");
	path_of(other, sizeof(other), "other");
	path_of(outside, sizeof(outside), "outside/secret");
	path_of(exe, sizeof(exe), "ws/bin/halo-run");
	path_of(policy_file, sizeof(policy_file), "ws/policy.yaml");
	sh("cd '%s' && mkdir -p ws/sub/deeper ws/.git/hooks ws/lib/nested/.git/hooks ws/secretdir "
	   "ws/bin cache other outside && echo SECRET > ws/.env && echo SECRET > "
	   "ws/sub/deeper/.env.local && echo K > ws/secretdir/key && echo '[core]' > "
	   "ws/.git/config && echo '[core]' > ws/lib/nested/.git/config && echo rc > ws/.bashrc "
	   "&& echo exe > ws/bin/halo-run && echo 'sandbox: {}' > ws/policy.yaml && echo S > "
	   "outside/secret && ln -s '%s' ws/link-secret && ln -s /etc ws/etc-link && echo o > "
	   "other/file",
	   root, outside);
}

static void listen_in_workspace(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};

	ck_assert_uint_lt(strlen(ws) + 10, sizeof(a.sun_path));
	memcpy(a.sun_path, ws, strlen(ws));
	strcpy(a.sun_path + strlen(ws), "/app.sock");
	listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(bind(listener, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(listener, 4), 0);
}

static void prepare(const char *base, enum policy_mode mode)
{
	struct halo_err e = {{0}};
	int rc;

	make_tree(base);
	listen_in_workspace();
	unsetenv("SSH_AUTH_SOCK");
	unsetenv("DOCKER_HOST");
	memset(&pol, 0, sizeof(pol));
	pol.mode = mode;
	pol.guard_persistence = -1;
	pol.fail_if_unavailable = -1;
	pol.protected_globs = (struct policy_list){globs, 2, true};
	protected_abs[0] = outside;
	pol.protected_abs = (struct policy_list){protected_abs, 1, true};
	writable_abs[0] = cache;
	pol.writable_abs = (struct policy_list){writable_abs, 1, true};
	memset(&launch, 0, sizeof(launch));
	launch.policy = &pol;
	launch.workspace = ws;
	launch.pw_home = "/nonexistent-home";
	launch.self_exe = exe;
	policy_files[0] = policy_file;
	launch.policy_files = policy_files;
	launch.n_policy_files = 1;
	rc = linux_scan(&launch, &scan, &e);
	ck_assert_msg(rc == 0, "scan: %s", e.msg);
	linux_test_hooks_set(NULL);
}

static void teardown(void)
{
	if (listener >= 0)
		close(listener);
	listener = -1;
	linux_scan_free(&scan);
	if (root[0])
		sh("rm -rf '%s'", root);
	root[0] = '\0';
}

static void setup_var_tmp(void)
{
	prepare("/var/tmp", POLICY_MODE_WORKSPACE_WRITE);
}

static void setup_tmp(void)
{
	prepare("/tmp", POLICY_MODE_WORKSPACE_WRITE);
}

static void setup_read_only(void)
{
	prepare("/var/tmp", POLICY_MODE_READ_ONLY);
}

/* ---- running the layout in new namespaces */

struct outcome {
	int status;		 /* the sandbox's exit code (125: setup failed) */
	bool reported;		 /* a struct linux_report arrived */
	struct linux_report rep; /* what linux_die said */
	char fail[1024];	 /* the first failed inside check */
};

static void write_map(const char *file, unsigned id)
{
	char line[64];
	int fd = open(file, O_WRONLY | O_CLOEXEC);

	snprintf(line, sizeof(line), "%u %u 1\n", id, id);
	if (fd < 0 || write(fd, line, strlen(line)) < 0)
		_exit(91);
	close(fd);
}

static void run_sandboxed(void (*body)(void), struct outcome *o)
{
	int rep[2], res[2], st;
	uid_t uid = getuid();
	gid_t gid = getgid();
	pid_t pid;

	memset(o, 0, sizeof(*o));
	ck_assert_int_eq(pipe2(rep, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(res, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd, ws_status;
		close(rep[0]);
		close(res[0]);
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) < 0)
			_exit(90);
		fd = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "deny", 4) != 4)
			_exit(91);
		close(fd);
		write_map("/proc/self/uid_map", uid);
		write_map("/proc/self/gid_map", gid);
		pid_t init = fork();
		if (init == 0) {
			result_fd = res[1];
			linux_mounts_setup_or_die(&launch, &scan, rep[1]);
			body();
			_exit(0);
		}
		if (init < 0 || waitpid(init, &ws_status, 0) < 0)
			_exit(92);
		_exit(WIFEXITED(ws_status) ? WEXITSTATUS(ws_status) : 100 + WTERMSIG(ws_status));
	}
	close(rep[1]);
	close(res[1]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	o->status = WIFEXITED(st) ? WEXITSTATUS(st) : 200;
	o->reported = read(rep[0], &o->rep, sizeof(o->rep)) == (ssize_t)sizeof(o->rep);
	ssize_t n = read(res[0], o->fail, sizeof(o->fail) - 1);
	o->fail[n > 0 ? n : 0] = '\0';
	close(rep[0]);
	close(res[0]);
}

static void expect_success(void (*body)(void))
{
	struct outcome o;

	run_sandboxed(body, &o);
	ck_assert_msg(!o.reported, "setup failed: %s: %s: %s", o.rep.step, o.rep.msg,
		      strerror(o.rep.err));
	ck_assert_msg(o.status == 0, "status %d: %s", o.status, o.fail);
}

/* ---- checks from the inside (pid 1 of the sandbox) */

#define IN(cond, what)                                                                             \
	do {                                                                                       \
		errno = 0;                                                                         \
		if (!(cond)) {                                                                     \
			dprintf(result_fd, "line %d: %s (errno: %s)", __LINE__, what,              \
				strerror(errno));                                                  \
			_exit(1);                                                                  \
		}                                                                                  \
	} while (0)

/* errno of an operation, 0 when it worked. */
static int open_err(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* A create that must fail; should it succeed on a broken layout, undo it at once
 * (these probes point at the host's /etc). */
static int create_err(const char *path)
{
	int e = open_err(path, O_WRONLY | O_CREAT | O_EXCL);

	if (e == 0)
		unlink(path);
	return e;
}

static int call_err(int rc)
{
	return rc < 0 ? errno : 0;
}

static void drop_caps(void)
{
	cap_t none = cap_init();

	IN(none && cap_set_proc(none) == 0, "drop capabilities");
	cap_free(none);
}

static bool dir_is_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;

	if (!d)
		return false;
	while ((de = readdir(d)) != NULL)
		n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	closedir(d);
	return n == 0;
}

/* /run holds nothing of the host's: only halo-run's own Node preload (linux.h). */
static bool run_is_halos_only(void)
{
	DIR *d = opendir("/run");
	struct dirent *de;
	int foreign = 0;

	if (!d)
		return false;
	while ((de = readdir(d)) != NULL)
		foreign += strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
			   strcmp(de->d_name, "halo");
	closedir(d);
	return foreign == 0 && access(LINUX_NODE_PRELOAD_PATH, R_OK) == 0;
}

static unsigned long mnt_flags(const char *path)
{
	struct statvfs sv;

	return statvfs(path, &sv) == 0 ? sv.f_flag : ~0UL;
}

static void check_layout(void)
{
	char cwd[PATH_MAX], buf[64], p[PATH_MAX];
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd;

	drop_caps(); /* as the launcher does before the command runs */
	IN(getpid() == 1, "pid 1 of the new pid namespace");
	IN(getcwd(cwd, sizeof(cwd)) && strcmp(cwd, ws) == 0, "starts in the workspace");
	/* the host root: readable, read-only, nosuid, nodev */
	IN(open_err("/etc/passwd", O_RDONLY) == 0, "host files readable");
	IN(create_err("/etc/halo-test-file") == EROFS, "host root read-only");
	IN((mnt_flags("/") & (ST_RDONLY | ST_NOSUID | ST_NODEV)) ==
	       (ST_RDONLY | ST_NOSUID | ST_NODEV),
	   "root ro,nosuid,nodev");
	IN(open_err(other, O_RDONLY | O_DIRECTORY) == 0, "outside the workspace readable");
	snprintf(p, sizeof(p), "%s/new", other);
	IN(open_err(p, O_WRONLY | O_CREAT) == EROFS, "outside the workspace read-only");
	/* the workspace and the writable root */
	IN(open_err("made-inside", O_WRONLY | O_CREAT) == 0, "workspace writable");
	IN((mnt_flags(".") & (ST_RDONLY | ST_NOSUID | ST_NODEV)) == (ST_NOSUID | ST_NODEV),
	   "workspace rw,nosuid,nodev");
	snprintf(p, sizeof(p), "%s/made-inside", cache);
	IN(open_err(p, O_WRONLY | O_CREAT) == 0, "writable root writable");
	IN(open_err("etc-link/hostname", O_RDONLY) == 0, "symlink to /etc readable");
	IN(create_err("etc-link/halo-x") == EROFS, "symlink to /etc read-only");
	/* protected paths: no read, no write, no replace */
	IN(open_err(".env", O_RDONLY) == EACCES, ".env unreadable");
	IN(open_err("sub/deeper/.env.local", O_RDONLY) == EACCES, "nested .env.local unreadable");
	int w = open_err(".env", O_WRONLY | O_TRUNC);
	IN(w == EROFS || w == EACCES, ".env not writable");
	IN(call_err(rename(".env", "env-moved")) == EBUSY, ".env cannot be renamed");
	IN(call_err(unlink(".env")) == EBUSY, ".env cannot be removed");
	IN(call_err(chmod(".env", 0644)) == EROFS, ".env cannot be chmod'ed");
	IN(open_err("secretdir", O_RDONLY | O_DIRECTORY) == EACCES, "masked dir unlistable");
	IN(open_err("secretdir/key", O_RDONLY) == EACCES, "masked dir content unreachable");
	IN(call_err(rmdir("secretdir")) == EBUSY, "masked dir cannot be removed");
	IN(open_err("link-secret", O_RDONLY) == EACCES, "protected file unreadable via symlink");
	IN(open_err(outside, O_RDONLY) == EACCES, "protected file unreadable directly");
	/* persistence guard */
	IN(open_err(".git/config", O_WRONLY | O_APPEND) == EROFS, ".git/config read-only");
	IN(open_err(".git/hooks/pre-commit", O_WRONLY | O_CREAT) == EROFS, "hooks read-only");
	IN(call_err(rename(".git/hooks", ".git/hooks2")) == EBUSY, "hooks cannot be replaced");
	IN(open_err(".git/index.lock", O_WRONLY | O_CREAT) == 0, "the rest of .git writable");
	IN(open_err("lib/nested/.git/hooks/post-checkout", O_WRONLY | O_CREAT) == EROFS,
	   "nested repository's hooks read-only");
	IN(open_err(".bashrc", O_WRONLY | O_APPEND) == EROFS, ".bashrc read-only");
	IN(open_err(exe, O_WRONLY) == EROFS, "halo-run binary read-only");
	IN(open_err(policy_file, O_WRONLY) == EROFS, "policy file read-only");
	/* a host service's socket in the workspace */
	strcpy(a.sun_path, "app.sock"); /* relative: we are in the workspace */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* Masked by a regular file on a read-only mount: EROFS (a socket would accept). */
	IN(connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 &&
	       (errno == EROFS || errno == ECONNREFUSED),
	   "host socket in the workspace unreachable");
	close(fd);
	/* scratch space */
	IN(open_err("/tmp/scratch", O_WRONLY | O_CREAT) == 0, "/tmp writable");
	IN(open_err("/tmp/scratch", O_RDONLY) == 0 && unlink("/tmp/scratch") == 0, "/tmp usable");
	IN(run_is_halos_only(), "/run empty but for halo-run's Node preload");
	IN(open_err("/run/x", O_WRONLY | O_CREAT) == EROFS, "/run read-only");
	/* /proc and /sys */
	IN(open_err("/proc/self/status", O_RDONLY) == 0, "/proc mounted");
	IN(open_err("/proc/1/status", O_RDONLY) == 0, "our pid namespace's /proc");
	/* uid 0 (a root caller) meets the read-only mount; others meet permissions first */
	w = open_err("/proc/sys/kernel/hostname", O_WRONLY);
	IN(w == EROFS || (getuid() != 0 && w == EACCES), "/proc/sys not writable");
	IN(mnt_flags("/proc/sys") & ST_RDONLY, "/proc/sys read-only");
	IN(open_err("/proc/sysrq-trigger", O_WRONLY) != 0, "sysrq-trigger not writable");
	fd = open("/proc/keys", O_RDONLY | O_CLOEXEC);
	IN(fd < 0 || read(fd, buf, sizeof(buf)) == 0, "/proc/keys masked");
	if (fd >= 0)
		close(fd);
	fd = open("/proc/timer_list", O_RDONLY | O_CLOEXEC); /* each mask, as listed */
	IN(fd < 0 || read(fd, buf, sizeof(buf)) == 0, "/proc/timer_list masked");
	if (fd >= 0)
		close(fd);
	IN(access("/proc/irq", F_OK) != 0 || (mnt_flags("/proc/irq") & ST_RDONLY),
	   "/proc/irq read-only");
	IN(mnt_flags("/sys") & ST_RDONLY, "/sys read-only");
	IN(access("/proc/bus", F_OK) != 0 || (mnt_flags("/proc/bus") & ST_RDONLY),
	   "/proc/bus read-only");
	IN(access("/sys/firmware", F_OK) != 0 || dir_is_empty("/sys/firmware") ||
	       open_err("/sys/firmware", O_RDONLY | O_DIRECTORY) == EACCES,
	   "/sys/firmware hidden");
	/* /dev */
	IN(open_err("/dev/null", O_WRONLY) == 0, "/dev/null writable");
	IN(open_err("/dev/urandom", O_RDONLY) == 0, "/dev/urandom readable");
	IN(open_err("/dev/vda", O_RDONLY) == ENOENT && open_err("/dev/mem", O_RDONLY) == ENOENT,
	   "no disks, no memory");
	IN(open_err("/dev/new-node", O_WRONLY | O_CREAT) == EROFS, "/dev read-only");
	IN(open_err("/dev/shm/seg", O_RDWR | O_CREAT) == 0, "/dev/shm writable");
	fd = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	IN(fd >= 0, "a private pty");
	close(fd);
}

static void check_tmp_holds_only_the_workspace(void)
{
	char first[PATH_MAX];
	DIR *d;
	struct dirent *de;
	int n = 0;

	drop_caps();
	IN(open_err("made-inside", O_WRONLY | O_CREAT) == 0, "workspace writable");
	IN((mnt_flags(".") & (ST_RDONLY | ST_NOSUID | ST_NODEV)) == (ST_NOSUID | ST_NODEV),
	   "workspace rw,nosuid,nodev");
	IN(open_err(".env", O_RDONLY) == EACCES, ".env unreadable");
	IN(open_err(".git/config", O_WRONLY | O_APPEND) == EROFS, ".git/config read-only");
	IN(open_err(other, O_RDONLY | O_DIRECTORY) == ENOENT, "the host's /tmp is not visible");
	/* ws is /tmp/halo-mounts.X/ws: /tmp holds that path and what we made. */
	snprintf(first, sizeof(first), "%s", root + strlen("/tmp/"));
	IN((d = opendir("/tmp")) != NULL, "list /tmp");
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			IN(++n == 1 && strcmp(de->d_name, first) == 0,
			   "only the workspace's parents");
	closedir(d);
}

static void check_read_only_workspace(void)
{
	drop_caps();
	IN(open_err("made-inside", O_WRONLY | O_CREAT) == EROFS, "workspace read-only");
	IN(open_err(".env", O_RDONLY) == EACCES, ".env still masked");
	IN(open_err("sub/deeper", O_RDONLY | O_DIRECTORY) == 0, "workspace readable");
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/made-inside", cache);
	IN(open_err(p, O_WRONLY | O_CREAT) == 0, "writable root still writable");
}

static void check_root_workspace(void)
{
	char cwd[PATH_MAX];

	drop_caps();
	IN(getcwd(cwd, sizeof(cwd)) && strcmp(cwd, "/") == 0, "starts in /");
	IN(run_is_halos_only(), "/run still empty but for halo-run's Node preload");
	IN(dir_is_empty("/tmp"), "/tmp still private");
	IN(open_err("/dev/vda", O_RDONLY) == ENOENT, "/dev still minimal");
	IN(open_err(".env", O_RDONLY) != 0 && open_err(ws, O_RDONLY | O_DIRECTORY) == 0,
	   "the rest as before");
	IN(create_err("/etc/halo-test-file") == EROFS, "read-only");
}

static void check_landlock_on_top(void)
{
	int abi = linux_landlock_abi();

	linux_landlock_apply_or_die(&scan, true, NULL, result_fd);
	drop_caps();
	IN(open_err("made-inside", O_WRONLY | O_CREAT) == 0, "workspace writable");
	IN(open_err("/tmp/x", O_WRONLY | O_CREAT) == 0, "/tmp writable");
	IN(open_err("/dev/shm/x", O_WRONLY | O_CREAT) == 0, "/dev/shm writable");
	IN(open_err("/dev/null", O_WRONLY) == 0, "/dev/null writable");
	int fd = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	IN(fd >= 0, "ptys usable");
	close(fd);
	/* /proc is a rw mount: only Landlock refuses writing there. */
	IN(open_err("/proc/self/comm", O_WRONLY) == (abi > 0 ? EACCES : 0),
	   "Landlock refuses writes outside the writable trees");
}

/* ---- tests */

START_TEST(layout_from_inside)
{
	expect_success(check_layout);
}
END_TEST

START_TEST(layout_with_remount_fallback)
{
	linux_test_hooks_set(&(struct linux_test_hooks){.force_remount = true});
	expect_success(check_layout);
}
END_TEST

START_TEST(workspace_under_tmp)
{
	expect_success(check_tmp_holds_only_the_workspace);
}
END_TEST

START_TEST(read_only_mode)
{
	expect_success(check_read_only_workspace);
}
END_TEST

START_TEST(landlock_on_top)
{
	expect_success(check_landlock_on_top);
}
END_TEST

/* A read-only workspace of / holds /tmp, /run and /dev: it must not cover them. */
START_TEST(read_only_root_workspace)
{
	launch.workspace = "/";
	expect_success(check_root_workspace);
}
END_TEST

static void nothing(void)
{
}

/* A symlink that appears after the scan, in a path we are about to mount on: the
 * launch stops (it does not mount through the link). */
START_TEST(symlink_swapped_in_fails_closed)
{
	char p[PATH_MAX];
	struct outcome o;

	snprintf(p, sizeof(p), "%s/swap", ws);
	ck_assert_int_eq(symlink("/etc", p), 0);
	snprintf(p, sizeof(p), "%s/swap/passwd", ws);
	linux_paths_add(&scan.masked, p);
	run_sandboxed(nothing, &o);
	ck_assert_int_eq(o.status, LINUX_SETUP_FAILED);
	ck_assert(o.reported);
	ck_assert_str_eq(o.rep.step, "mount layout");
	ck_assert_int_eq(o.rep.err, ELOOP);
	ck_assert_msg(strstr(o.rep.msg, "symlink is in the way") && strstr(o.rep.msg, p), "%s",
		      o.rep.msg);
}
END_TEST

START_TEST(vanished_target_in_workspace_fails_closed)
{
	char p[PATH_MAX];
	struct outcome o;

	snprintf(p, sizeof(p), "%s/gone", ws);
	linux_paths_add(&scan.guarded, p);
	run_sandboxed(nothing, &o);
	ck_assert_int_eq(o.status, LINUX_SETUP_FAILED);
	ck_assert(o.reported);
	ck_assert_int_eq(o.rep.err, ENOENT);
	ck_assert_msg(strstr(o.rep.msg, p), "%s", o.rep.msg);
}
END_TEST

/* Mounting by name is for a fixed table of root's and init's directories: any other
 * path (a plan path, the user's) is refused before anything is mounted, and so is a
 * seal by name. */
static void die_by_path(const char *path, bool seal, struct linux_report *rep)
{
	int p[2], st;
	pid_t pid;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(p[0]);
		/* Should the table ever let it through: a mount in a namespace of its own
		 * (its mounts slaves, none reaching the host), never on the host's /tmp. */
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			_exit(90);
		if (seal)
			mnt_seal_path_or_die(p[1], path, MS_NOSUID, "test");
		else
			mnt_fresh_path_or_die(p[1], "tmpfs", NULL, MS_NOSUID, path, "test");
		_exit(0);
	}
	close(p[1]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == LINUX_SETUP_FAILED, "status %d", st);
	ck_assert_int_eq(read(p[0], rep, sizeof(*rep)), (ssize_t)sizeof(*rep));
	close(p[0]);
}

START_TEST(by_path_only_fixed_directories)
{
	const char *refused[] = {ws, "/newroot/tmp/x", "/newroot", "/tmp/", "/names/../tmp", ""};
	struct linux_report rep;

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		for (int seal = 0; seal < 2; seal++) {
			die_by_path(refused[i], seal, &rep);
			ck_assert_int_eq(rep.err, EPERM);
			ck_assert_msg(strstr(rep.msg, "not a fixed directory"), "%s: %s",
				      refused[i], rep.msg);
		}
}
END_TEST

static Suite *mounts_suite(void)
{
	Suite *s = suite_create("mounts");
	TCase *a = tcase_create("var-tmp");
	TCase *b = tcase_create("tmp");
	TCase *c = tcase_create("read-only");

	tcase_add_checked_fixture(a, setup_var_tmp, teardown);
	tcase_add_test(a, layout_from_inside);
	tcase_add_test(a, layout_with_remount_fallback);
	tcase_add_test(a, landlock_on_top);
	tcase_add_test(a, symlink_swapped_in_fails_closed);
	tcase_add_test(a, vanished_target_in_workspace_fails_closed);
	tcase_add_test(a, by_path_only_fixed_directories);
	tcase_add_checked_fixture(b, setup_tmp, teardown);
	tcase_add_test(b, workspace_under_tmp);
	tcase_add_checked_fixture(c, setup_read_only, teardown);
	tcase_add_test(c, read_only_mode);
	tcase_add_test(c, read_only_root_workspace);
	suite_add_tcase(s, a);
	suite_add_tcase(s, b);
	suite_add_tcase(s, c);
	return s;
}

UNIT_MAIN(mounts_suite)
