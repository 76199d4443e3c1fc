/* The launch scan's test fixture, shared by test_scan.c and test_pin.c: a temporary
 * tree (root, with ws/ the workspace and home/ the home), a policy and a launch. */
#ifndef HALO_TESTS_SCAN_FIXTURE_H
#define HALO_TESTS_SCAN_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "linux/linux_int.h"
#include "linux/scan_int.h"
#include "tests/unit/unit.h"

static char root[512]; /* the test's tree, symlinks resolved */
static char ws[600];   /* root/ws: the workspace */
static struct halo_policy pol;
static struct linux_launch launch;
static struct linux_scan scan;
static struct halo_err err;
static char *globs[] = {".env*", "./secrets/*.pem", "**/keys/"};

static void p(char *out, const char *rel)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", root, rel);

	ck_assert(n > 0 && n < PATH_MAX);
}

static void mkdirs(const char *rel)
{
	char path[PATH_MAX], *s;

	p(path, rel);
	for (s = path + strlen(root) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	mkdir(path, 0755);
}

static void file(const char *rel, const char *text)
{
	char path[PATH_MAX], dir[PATH_MAX];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", rel);
	if (strrchr(dir, '/')) {
		*strrchr(dir, '/') = '\0';
		mkdirs(dir);
	}
	p(path, rel);
	f = fopen(path, "w");
	ck_assert_msg(f != NULL, "create %s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

static void link_to(const char *target, const char *rel)
{
	char path[PATH_MAX];

	p(path, rel);
	ck_assert_int_eq(symlink(target, path), 0);
}

static void unix_socket(const char *rel)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	p(a.sun_path, rel);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	close(fd);
}

static void rm_rf(const char *path)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	ck_assert_int_eq(system(cmd), 0);
}

/* Where the tree lives. The scan's own suites want it where the sandbox sees it: a
 * link's target under /tmp or /dev/shm is out of its sight (its own are fresh), with
 * nothing to mask, so /var/tmp, whatever its file system. The index's suite
 * (SCAN_FIXTURE_INDEX defined) wants the first of these on a file system whose
 * directory ctimes the index trusts (scan_index_file.c): /var/tmp on a machine, /tmp
 * (tmpfs) in a container whose / and /var/tmp are overlayfs. None: /var/tmp, and the
 * index tests skip. */
static bool fixture_index_ok;
static const char *fixture_base(void)
{
#ifdef SCAN_FIXTURE_INDEX
	static const char *const bases[] = {"/var/tmp", "/tmp", "/dev/shm"};
#else
	static const char *const bases[] = {"/var/tmp"};
#endif
	static const unsigned long trusted[] = {0xEF53,	    /* ext2/3/4 */
						0x58465342, /* xfs */
						0x9123683E, /* btrfs */
						0x01021994, /* tmpfs */
						0xF2F52010 /* f2fs */};
	struct statfs sf;

	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++)
		for (size_t k = 0; statfs(bases[i], &sf) == 0 && access(bases[i], W_OK) == 0 &&
				   k < sizeof(trusted) / sizeof(trusted[0]);
		     k++)
			if ((unsigned long)sf.f_type == trusted[k])
				return fixture_index_ok = true, bases[i];
	fixture_index_ok = false;
	return "/var/tmp";
}

static void setup(void)
{
	char tmpl[64];

	snprintf(tmpl, sizeof(tmpl), "%s/halo-scan.XXXXXX", fixture_base());
	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	char real[PATH_MAX];

	ck_assert_ptr_nonnull(realpath(tmpl, real));
	ck_assert_uint_lt(strlen(real), sizeof(root));
	strcpy(root, real);
	p(ws, "ws");
	mkdirs("ws");
	mkdirs("home");
	/* The host's bound sockets are not the test's: an empty list unless a test
	 * writes one. */
	static char no_sockets[PATH_MAX];
	p(no_sockets, "proc-net-unix");
	FILE *pnu = fopen(no_sockets, "w");
	ck_assert_ptr_nonnull(pnu);
	fputs("Num       RefCount Protocol Flags    Type St Inode Path\n", pnu);
	fclose(pnu);
	linux_test_hooks_set(&(struct linux_test_hooks){.proc_net_unix = no_sockets});
	unsetenv("SSH_AUTH_SOCK");
	unsetenv("XDG_STATE_HOME"); /* the index goes to home/.local/state */
	linux_scan_racy_seconds = LINUX_SCAN_RACY_SECONDS;
	linux_scan_watch_enabled = false;
	linux_scan_budget_ms = LINUX_SCAN_BUDGET_MS;
	linux_scan_max_mounts =
	    LINUX_SCAN_MAX_MOUNTS; /* no watcher: every scan stats what it replays */
	unsetenv("DOCKER_HOST");
	memset(&pol, 0, sizeof(pol));
	pol.mode = POLICY_MODE_WORKSPACE_WRITE;
	pol.guard_persistence = -1;
	pol.fail_if_unavailable = -1;
	pol.protected_globs = (struct policy_list){globs, 3, true};
	memset(&launch, 0, sizeof(launch));
	launch.policy = &pol;
	launch.workspace = ws;
	static char home[PATH_MAX];
	p(home, "home");
	launch.pw_home = home;
	memset(&scan, 0, sizeof(scan));
	linux_scan_max_entries = LINUX_SCAN_MAX_ENTRIES;
	linux_scan_max_depth = LINUX_SCAN_MAX_DEPTH;
	linux_scan_workers = LINUX_SCAN_WORKERS;
}

static void teardown(void)
{
	linux_scan_free(&scan);
	rm_rf(root);
}

/* The list, relative to root, joined by spaces: one exact string to compare. */
static const char *rel_list(const struct linux_paths *l)
{
	static char buf[8192];
	size_t n = strlen(root), o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < l->n; i++) {
		const char *v = l->v[i];
		if (strncmp(v, root, n) == 0 && v[n] == '/')
			v += n + 1;
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s", i ? " " : "", v);
	}
	return buf;
}

static void run_scan_ok(void)
{
	int rc = linux_scan(&launch, &scan, &err);

	ck_assert_msg(rc == 0, "linux_scan: %d %s", rc, err.msg);
}

#endif
