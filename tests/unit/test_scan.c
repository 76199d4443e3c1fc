/* The launch scan on temporary trees: protected globs at any depth, persistence-guard
 * targets (nested, submodule and bare repositories, hooksPath, includes), symlinks
 * never followed, the bounds, host sockets, and the 20k-file timing. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/scan_fixture.h"

START_TEST(paths_grow)
{
	struct linux_paths l = {0};
	char buf[32];

	for (int i = 0; i < 1000; i++) {
		snprintf(buf, sizeof(buf), "/p/%d", i);
		linux_paths_add(&l, buf);
	}
	ck_assert_uint_eq(l.n, 1000);
	ck_assert_str_eq(l.v[0], "/p/0");
	ck_assert_str_eq(l.v[999], "/p/999");
	linux_paths_free(&l);
	ck_assert_uint_eq(l.n, 0);
	ck_assert_ptr_null(l.v);
}
END_TEST

/* As uid 65534 (forked from root): directories the walk cannot list, one way or the
 * other, are masked whole and said once each, their names escaped. What fails is
 * printed and the child exits 1. */
static int unlistable_as_user(void)
{
	struct plan_text w = {0};
	char path[PATH_MAX], cmd[PATH_MAX + 64];
	const char *want = "ws/app ws/bad\033name ws/other ws/rw";
	bool ok = true;

	snprintf(cmd, sizeof(cmd), "chown -R 65534:65534 '%s/ws' '%s/home'", root, root);
	if (system(cmd) != 0 || chmod(root, 0755) < 0)
		return 1;
	const char *modes[][2] = {{"ws/app", "311"}, {"ws/rw", "600"}, {"ws/bad\033name", "311"}};
	for (size_t i = 0; i < 3; i++) {
		p(path, modes[i][0]);
		chmod(path, (mode_t)strtoul(modes[i][1], NULL, 8));
	}
	p(path, "ws/other"); /* root's, 0700: not ours to list */
	if (chown(path, 0, 0) < 0 || chmod(path, 0700) < 0 || setgroups(0, NULL) < 0 ||
	    setgid(65534) < 0 || setuid(65534) < 0)
		return 1;
	launch.warnings = &w;
	if (linux_scan(&launch, &scan, &err) != 0)
		return printf("linux_scan: %s\n", err.msg), 1;
	if (strcmp(rel_list(&scan.unlisted), want) != 0)
		ok = !printf("unlisted: [%s]\n", rel_list(&scan.unlisted));
	if (strcmp(rel_list(&scan.masked), "ws/app ws/bad\033name ws/ok/.env ws/other ws/rw") != 0)
		ok = !printf("masked: [%s]\n", rel_list(&scan.masked));
	if (strstr(rel_list(&scan.masked), "ws/app/.env") ||
	    strstr(rel_list(&scan.masked), "ws/rw/"))
		ok = !printf("masked beneath: [%s]\n", rel_list(&scan.masked));
	if (w.n != 4 || !strstr(w.v[1], "bad\\x1bname: the workspace scan cannot list") ||
	    strchr(w.v[1], '\033'))
		ok = !printf("warnings: %zu [%s]\n", w.n, w.n > 1 ? w.v[1] : "");
	plan_text_free(&w);
	launch.warnings = NULL;
	return ok ? 0 : 1;
}

START_TEST(unlistable_masked_whole)
{
	pid_t pid;
	int st;

	if (geteuid() != 0)
		return; /* (t_index.sh covers the user's own launches) */
	file("ws/app/.env", "A=1");
	file("ws/rw/deep/.env", "B=1");
	file("ws/bad\033name/.env", "C=1");
	file("ws/other/.env", "D=1");
	file("ws/ok/.env", "E=1");
	fflush(NULL);
	if ((pid = fork()) == 0) {
		int rc = unlistable_as_user();
		fflush(NULL);
		_exit(rc);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the walk as uid 65534 (see above)");
	/* As root every directory lists: the files themselves are masked, nothing said. */
	run_scan_ok();
	ck_assert_str_eq(rel_list(&scan.unlisted), "");
	ck_assert(strstr(rel_list(&scan.masked), "ws/app/.env ws/bad\033name/.env ws/ok/.env "
						 "ws/other/.env ws/rw/deep/.env"));
}
END_TEST

/* A directory removed while the walk lists it (a dead directory lists as ENOENT) held
 * nothing and can hold nothing: neither masked nor said, the scan a success (a mask on
 * a name that is gone fails the launch: t_index's churn once met exactly that). */
static char dead_dir[PATH_MAX];

static void remove_dead_dir(const char *path)
{
	if (strcmp(path, dead_dir) == 0)
		ck_assert_int_eq(rmdir(dead_dir), 0);
}

START_TEST(removed_while_listed_is_gone)
{
	file("ws/app/.env", "A=1");
	mkdirs("ws/gone");
	p(dead_dir, "ws/gone");
	linux_test_hooks_set(&(struct linux_test_hooks){.walk_before_list = remove_dead_dir});
	run_scan_ok();
	linux_test_hooks_set(NULL);
	ck_assert_int_eq(access(dead_dir, F_OK), -1);
	ck_assert_str_eq(rel_list(&scan.unlisted), "");
	ck_assert(strstr(rel_list(&scan.masked), "ws/app/.env"));
	ck_assert(!strstr(rel_list(&scan.masked), "ws/gone"));
}
END_TEST

/* A terminating signal held blocked (as the supervisor holds it for its loop) ends the
 * walk at the next check: the scan fails (-EINTR, the signal named), nothing of it is
 * kept, and linux_scan_interrupted_by says which signal, for the launch's exit code. */
static int signal_at;

static void signal_midway(const char *path)
{
	(void)path;
	if (--signal_at == 0)
		kill(getpid(), SIGTERM); /* process-directed, as a terminal's */
}

START_TEST(held_signal_ends_the_walk)
{
	sigset_t term, old;
	struct halo_err e = {{0}};
	char d[64];
	int sig = 0;

	/* Enough directories that every worker passes its next check after the signal. */
	for (int i = 0; i < 2000; i++) {
		snprintf(d, sizeof(d), "ws/d%04d", i);
		mkdirs(d);
	}
	file("ws/d1999/.env", "A=1");
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &term, &old), 0);
	signal_at = 3;
	linux_test_hooks_set(&(struct linux_test_hooks){.walk_before_list = signal_midway});
	int rc = linux_scan(&launch, &scan, &e);
	linux_test_hooks_set(NULL);
	ck_assert_int_eq(sigwait(&term, &sig), 0); /* taken back, then the mask as it was */
	ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
	ck_assert_int_eq(sig, SIGTERM);
	ck_assert_int_eq(rc, -EINTR);
	ck_assert_int_eq(linux_scan_interrupted_by(), SIGTERM);
	ck_assert_msg(strstr(e.msg, "interrupted by SIGTERM during the workspace scan"), "%s",
		      e.msg);
	/* A walk with nothing pending is not interrupted. */
	run_scan_ok();
	ck_assert(strstr(rel_list(&scan.masked), "ws/d1999/.env"));
	/* One set to be ignored (a script's background job, nohup) stops nothing, though
	 * it is queued while blocked; found by the check after the walk too (this walk is
	 * too small for the per-directory one). */
	struct sigaction ign = {.sa_handler = SIG_IGN}, was;
	ck_assert_int_eq(sigaction(SIGTERM, &ign, &was), 0);
	ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &term, &old), 0);
	kill(getpid(), SIGTERM);
	linux_scan_free(&scan);
	run_scan_ok();
	ck_assert_int_eq(sigtimedwait(&term, NULL, &(struct timespec){0, 0}),
			 SIGTERM); /* drained */
	ck_assert_int_eq(sigaction(SIGTERM, &was, NULL), 0);
	ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
	/* A late one, not ignored, in a walk too small for the per-directory check (two
	 * directories left): the check after the walk ends it. */
	for (int i = 0; i < 1999; i++) {
		char full[PATH_MAX];
		snprintf(d, sizeof(d), "ws/d%04d", i);
		p(full, d);
		ck_assert_int_eq(rmdir(full), 0);
	}
	ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &term, &old), 0);
	kill(getpid(), SIGTERM);
	memset(&e, 0, sizeof(e));
	linux_scan_free(&scan);
	rc = linux_scan(&launch, &scan, &e);
	ck_assert_int_eq(sigwait(&term, &sig), 0);
	ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
	ck_assert_int_eq(rc, -EINTR);
}
END_TEST

START_TEST(globs_at_any_depth)
{
	file("ws/.env", "A=1");
	file("ws/a/b/.env.local", "B=1");
	file("ws/a/.ENV", "C=1"); /* case-insensitive */
	file("ws/a/env", "no");	  /* not a match */
	file("ws/secrets/k.pem", "k");
	file("ws/x/secrets/k.pem", "k"); /* a path glob matches at any depth */
	file("ws/secrets/k.txt", "no");
	file("ws/.envdir/.env", "inner"); /* covered by its matched directory */
	file("ws/deep/keys/id", "k");	  /* "**\/keys/" → a directory named keys */
	run_scan_ok();
	ck_assert_str_eq(rel_list(&scan.masked),
			 "ws/.env ws/.envdir ws/a/.ENV ws/a/b/.env.local "
			 "ws/deep/keys ws/secrets/k.pem ws/x/secrets/k.pem");
	ck_assert_str_eq(rel_list(&scan.writable), "ws");
	ck_assert(!scan.truncated);
	/* ws/.env ws/a ws/a/b ws/a/b/.env.local ws/a/.ENV ws/a/env ws/secrets (+2) ws/x
	 * ws/x/secrets ws/x/secrets/k.pem ws/.envdir ws/deep ws/deep/keys */
	ck_assert_uint_eq(scan.entries_scanned, 15);
}
END_TEST

START_TEST(guard_finds_repositories)
{
	file("ws/.git/config", "[core]\n\thooksPath = .husky\n[include]\n\tpath = ../extra.cfg\n");
	mkdirs("ws/.git/hooks");
	mkdirs("ws/.husky");
	file("ws/extra.cfg", "[user]\n\tname = x\n");
	file("ws/lib/nested/.git/config", "[core]\n");
	mkdirs("ws/lib/nested/.git/hooks");
	/* A submodule: its git directory under the parent's .git/modules. */
	file("ws/.git/modules/sm/HEAD", "ref: refs/heads/main\n");
	file("ws/.git/modules/sm/config", "[core]\n\tworktree = ../../../sm\n");
	mkdirs("ws/.git/modules/sm/hooks");
	file("ws/sm/.git", "gitdir: ../.git/modules/sm\n");
	/* A bare repository. */
	file("ws/bare.git/HEAD", "ref: refs/heads/main\n");
	file("ws/bare.git/config", "[core]\n\tbare = true\n");
	mkdirs("ws/bare.git/objects");
	mkdirs("ws/bare.git/refs");
	mkdirs("ws/bare.git/hooks");
	file("ws/.bashrc", "");
	file("ws/.mcp.json", "{}");
	mkdirs("ws/p/.vscode");
	file("ws/p/.vscode/tasks.json", "{}");
	file("ws/p/.zshenv", "");
	run_scan_ok();
	ck_assert_str_eq(rel_list(&scan.guarded),
			 "ws/.bashrc ws/.git/config ws/.git/hooks ws/.git/modules/sm/config "
			 "ws/.git/modules/sm/hooks ws/.husky ws/.mcp.json ws/bare.git/config "
			 "ws/bare.git/hooks ws/extra.cfg ws/lib/nested/.git/config "
			 "ws/lib/nested/.git/hooks ws/p/.vscode ws/p/.zshenv ws/sm/.git");
	ck_assert_str_eq(rel_list(&scan.masked), "");
}
END_TEST

START_TEST(guard_off_and_read_only)
{
	file("ws/.bashrc", "");
	mkdirs("ws/.git/hooks");
	file("ws/.env", "");
	pol.guard_persistence = 0;
	run_scan_ok();
	ck_assert_str_eq(rel_list(&scan.guarded), "");
	ck_assert_str_eq(rel_list(&scan.masked), "ws/.env");
	linux_scan_free(&scan);

	/* read-only: nothing to guard in the workspace, globs still masked. */
	pol.guard_persistence = 1;
	pol.mode = POLICY_MODE_READ_ONLY;
	run_scan_ok();
	ck_assert_str_eq(rel_list(&scan.guarded), "");
	ck_assert_str_eq(rel_list(&scan.writable), "");
	ck_assert_str_eq(rel_list(&scan.masked), "ws/.env");
}
END_TEST

START_TEST(symlinks_never_followed)
{
	char target[PATH_MAX];

	file("outside/.env", "not in the workspace");
	file("outside/secret", "S");
	file("ws/dotfiles/bashrc", "");
	p(target, "outside");
	link_to(target, "ws/lnk"); /* a directory outside: not walked */
	link_to("/etc", "ws/etc"); /* nor /etc */
	p(target, "outside/secret");
	link_to(target, "ws/.env.prod");	  /* a protected name: its target is masked */
	link_to("dotfiles/bashrc", "ws/.bashrc"); /* a guarded name: its target guarded */
	link_to("/nonexistent", "ws/.env.dangling");
	run_scan_ok();
	ck_assert_str_eq(rel_list(&scan.masked), "outside/secret");
	ck_assert_str_eq(rel_list(&scan.guarded), "ws/dotfiles/bashrc");
	/* lnk etc .env.prod .bashrc .env.dangling dotfiles dotfiles/bashrc */
	ck_assert_uint_eq(scan.entries_scanned, 7);
}
END_TEST

START_TEST(entry_bound_truncates)
{
	char name[64];

	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "ws/f%02d", i);
		file(name, "");
	}
	linux_scan_max_entries = 20;
	run_scan_ok();
	ck_assert(!scan.truncated);
	ck_assert_uint_eq(scan.entries_scanned, 20);
	linux_scan_free(&scan);
	file("ws/one-more", "");
	run_scan_ok();
	ck_assert(scan.truncated);
	ck_assert_uint_eq(scan.entries_scanned, 20);
}
END_TEST

START_TEST(depth_bound_truncates)
{
	char rel[PATH_MAX] = "ws";

	for (int i = 0; i < 10; i++)
		strcat(rel, "/d");
	mkdirs(rel);
	linux_scan_max_depth = 10;
	run_scan_ok();
	ck_assert(!scan.truncated);
	linux_scan_free(&scan);
	strcat(rel, "/d");
	mkdirs(rel);
	run_scan_ok();
	ck_assert(scan.truncated);
	/* The statement names what was not covered and why. */
	ck_assert_ptr_nonnull(scan.uncovered);
	ck_assert_ptr_nonnull(strstr(scan.uncovered, "ws/d/d/d/d/d/d/d/d/d/d/d (it lies deeper"));
}
END_TEST

START_TEST(protected_abs_and_sockets)
{
	char a[PATH_MAX], b[PATH_MAX], c[PATH_MAX], sock[PATH_MAX];
	char *abs[3];

	file("real-ssh/id", "K");
	p(a, "real-ssh");
	link_to(a, "home/.ssh"); /* ~/.ssh is a symlink: mask where it points */
	p(a, "home/.ssh");
	p(b, "home/.aws"); /* does not exist: nothing to mask */
	file("data/token", "T");
	p(c, "data/token");
	abs[0] = a;
	abs[1] = b;
	abs[2] = c;
	pol.protected_abs = (struct policy_list){abs, 3, true};
	mkdirs("home/.gnupg");
	unix_socket("home/.gnupg/S.gpg-agent");
	unix_socket("ws/app.sock"); /* a host service listening inside the workspace */
	unix_socket("agent.sock");
	p(sock, "agent.sock");
	setenv("SSH_AUTH_SOCK", sock, 1);
	run_scan_ok();
	ck_assert_str_eq(rel_list(&scan.masked),
			 "agent.sock data/token home/.gnupg/S.gpg-agent real-ssh ws/app.sock");
}
END_TEST

START_TEST(writable_roots)
{
	char r1[PATH_MAX], r2[PATH_MAX], r3[PATH_MAX];
	char *roots[2] = {r1, r2};

	mkdirs("cache");
	file("cache/.env", "");
	mkdirs("cache/repo/.git/hooks");
	mkdirs("ws/build"); /* nested in the workspace: already covered */
	p(r1, "cache");
	p(r2, "ws/build");
	pol.writable_abs = (struct policy_list){roots, 2, true};
	run_scan_ok();
	ck_assert_str_eq(rel_list(&scan.writable), "cache ws");
	ck_assert_str_eq(rel_list(&scan.masked), "cache/.env");
	ck_assert_str_eq(rel_list(&scan.guarded), "cache/repo/.git/hooks");
	linux_scan_free(&scan);

	p(r3, "missing");
	roots[0] = r3;
	ck_assert_int_eq(linux_scan(&launch, &scan, &err), -ENOENT);
	ck_assert_msg(strstr(err.msg, "does not exist") && strstr(err.msg, r3), "%s", err.msg);

	/* A root that is a symlink is refused, naming the link and its target. */
	link_to("/etc", "etc-link");
	p(r3, "etc-link");
	ck_assert_int_eq(linux_scan(&launch, &scan, &err), -ELOOP);
	ck_assert_msg(strstr(err.msg, "is a symlink (to /etc)") && strstr(err.msg, r3), "%s",
		      err.msg);
	mkdirs("real-cache");
	link_to("real-cache", "cache-link");
	p(r3, "cache-link");
	ck_assert_int_eq(linux_scan(&launch, &scan, &err), -ELOOP);
	/* Through a linked parent: the tree it leads to, checked as such. */
	p(r3, "etc-link/ssl");
	ck_assert_int_eq(linux_scan(&launch, &scan, &err), -EPERM);
	ck_assert_msg(strstr(err.msg, "resolves to /etc/ssl"), "%s", err.msg);
}
END_TEST

START_TEST(readonly_extra_only_in_writable_trees)
{
	char exe[PATH_MAX], pf[PATH_MAX], pf2[PATH_MAX];
	const char *files[2] = {pf, pf2};

	file("ws/tools/halo-run", "");
	file("ws/policy.yaml", "");
	file("etc-halo/policy.yaml", "");
	p(exe, "ws/tools/halo-run");
	p(pf, "ws/policy.yaml");
	p(pf2, "etc-halo/policy.yaml");
	launch.self_exe = exe;
	launch.policy_files = files;
	launch.n_policy_files = 2;
	run_scan_ok();
	ck_assert_str_eq(rel_list(&scan.readonly_extra), "ws/policy.yaml ws/tools/halo-run");
}
END_TEST

START_TEST(mask_over_workspace_refused)
{
	char target[PATH_MAX], link[PATH_MAX], *abs[1] = {target};

	/* A matched symlink pointing at the workspace: refused, the link named ... */
	p(target, "ws");
	p(link, "ws/.env-up");
	link_to(target, "ws/.env-up");
	ck_assert_int_eq(linux_scan(&launch, &scan, &err), -EPERM);
	ck_assert_msg(strstr(err.msg, link) && strstr(err.msg, "remove or rename the link"), "%s",
		      err.msg);
	ck_assert_int_eq(unlink(link), 0);
	/* ... and a protected path the policy names that holds it, refused too. */
	pol.protected_abs = (struct policy_list){abs, 1, false};
	ck_assert_int_eq(linux_scan(&launch, &scan, &err), -EPERM);
	ck_assert_msg(strstr(err.msg, "contains") && strstr(err.msg, ws), "%s", err.msg);
}
END_TEST

/* Two workers find exactly what one does: a tree big enough for the second worker to
 * start, with matches, sockets, repositories and guard targets spread through it. */
START_TEST(parallel_matches_sequential)
{
	char name[PATH_MAX], masked[8192], guarded[8192];
	size_t entries;

	for (int d = 0; d < 40; d++) {
		for (int f = 0; f < 60; f++) {
			snprintf(name, sizeof(name), "ws/p%02d/d%d/f%02d", d % 8, d, f);
			file(name, "");
		}
		snprintf(name, sizeof(name), "ws/p%02d/d%d/.env.%d", d % 8, d, d);
		if (d % 3 == 0)
			file(name, "S=1");
		snprintf(name, sizeof(name), "ws/p%02d/d%d/.git/config", d % 8, d);
		if (d % 5 == 0)
			file(name, "[core]\n");
		snprintf(name, sizeof(name), "ws/p%02d/d%d/sub/keys/id", d % 8, d);
		if (d % 7 == 0)
			file(name, "k");
		snprintf(name, sizeof(name), "ws/p%02d/d%d/.vscode/settings.json", d % 8, d);
		if (d % 4 == 1)
			file(name, "{}");
	}
	unix_socket("ws/p03/agent.sock");
	linux_scan_workers = 1;
	run_scan_ok();
	ck_assert(!scan.truncated);
	snprintf(masked, sizeof(masked), "%s", rel_list(&scan.masked));
	snprintf(guarded, sizeof(guarded), "%s", rel_list(&scan.guarded));
	entries = scan.entries_scanned;
	ck_assert_uint_gt(entries, 2 * LINUX_SCAN_PARALLEL_AFTER);
	ck_assert_uint_eq(scan.masked.n, 14 + 6 + 1); /* .env.*, keys, the socket */
	ck_assert_uint_eq(scan.guarded.n, 8 + 10);    /* each .git/config (no hooks); .vscode */
	for (int run = 0; run < 20; run++) {
		linux_scan_free(&scan);
		linux_scan_workers = 2;
		run_scan_ok();
		ck_assert(!scan.truncated);
		ck_assert_uint_eq(scan.entries_scanned, entries);
		ck_assert_str_eq(rel_list(&scan.masked), masked);
		ck_assert_str_eq(rel_list(&scan.guarded), guarded);
	}
	/* The entry bound holds across workers: exact count, truncated. */
	linux_scan_free(&scan);
	linux_scan_max_entries = entries - 1;
	run_scan_ok();
	ck_assert(scan.truncated);
	ck_assert_uint_eq(scan.entries_scanned, entries - 1);
	linux_scan_workers = LINUX_SCAN_WORKERS;
}
END_TEST

/* The split scan (walk after the clone, findings sent to init) ends with the lists
 * linux_scan makes, and refuses a truncated walk unless failIfUnavailable is false. */
static void split_scan(struct linux_scan *got, int *rc)
{
	struct linux_scan sent, late;
	const struct linux_scan *r;
	int child_end;

	ck_assert_int_eq(linux_scan_begin(&launch, &sent, &err), 0);
	ck_assert(sent.late);
	ck_assert_uint_eq(sent.entries_scanned, 0);
	child_end = dup(sent.late_fd[0]); /* what the clone would have inherited */
	*rc = linux_scan_hand_over(&launch, &sent, NULL, NULL, &err);
	ck_assert_int_eq(sent.late_fd[0], -1);
	ck_assert_int_eq(sent.late_fd[1], -1);
	memset(got, 0, sizeof(*got));
	if (*rc == 0) {
		struct linux_scan in_child = sent;
		in_child.late_fd[0] = child_end;
		in_child.late_fd[1] = -1;
		r = linux_scan_receive_or_die(&in_child, &late, -1);
		ck_assert_ptr_eq(r, &late);
		got->masked = late.masked;
		got->guarded = late.guarded;
		got->pinned = late.pinned;
		got->missing = late.missing;
		/* The rest is late's own but writable, which is sent's. */
		memset(&late.masked, 0, sizeof(late.masked));
		memset(&late.guarded, 0, sizeof(late.guarded));
		memset(&late.pinned, 0, sizeof(late.pinned));
		memset(&late.missing, 0, sizeof(late.missing));
		memset(&late.writable, 0, sizeof(late.writable));
		linux_scan_free(&late);
	} else {
		close(child_end);
	}
	got->truncated = sent.truncated;
	got->entries_scanned = sent.entries_scanned;
	linux_scan_free(&sent);
}

/* The supervisor's word that init will run a broker travels with the lists. */
static int expect_broker(void *arg, struct linux_scan *s, struct halo_err *e)
{
	int *called = arg;

	(void)e;
	(*called)++;
	s->broker = true;
	return 0;
}

/* Everything the late mount steps use travels to init after the clone (it is no
 * longer known to the child by the fork): read-only extras, carve-outs with their
 * sources, sanitized copies with their bytes, open sockets. */
START_TEST(split_scan_sends_every_list)
{
	int called = 0;
	static char npmrc[PATH_MAX], aws[PATH_MAX], awscfg[PATH_MAX], self[PATH_MAX];
	static const char *san[1], *prot[1], *allow[1];
	static unsigned char kind[1] = {POLICY_SANITIZE_NPMRC};
	struct linux_scan sent, late;
	const struct linux_scan *r;
	int child_end;

	file("home/.npmrc", "registry=https://r.example/\n//r.example/:_authToken=SECRET\n");
	file("home/.aws/config", "[default]\n");
	file("home/.aws/credentials", "k");
	file("ws/bin", "");
	p(npmrc, "home/.npmrc");
	p(aws, "home/.aws");
	p(awscfg, "home/.aws/config");
	p(self, "ws/bin");
	san[0] = npmrc;
	prot[0] = aws;
	allow[0] = awscfg;
	pol.sanitize_abs = (struct policy_list){(char **)san, 1, false};
	pol.sanitize_kind = kind;
	pol.protected_abs = (struct policy_list){(char **)prot, 1, false};
	pol.allow_read_abs = (struct policy_list){(char **)allow, 1, false};
	launch.self_exe = self;
	ck_assert_int_eq(linux_scan_begin(&launch, &sent, &err), 0);
	ck_assert_uint_eq(sent.masked.n + sent.sanitized.n + sent.carved.n, 0); /* after */
	struct linux_scan in_child = sent; /* what the clone sees: nothing but writable */
	child_end = dup(sent.late_fd[0]);
	ck_assert_int_eq(linux_scan_hand_over(&launch, &sent, expect_broker, &called, &err), 0);
	ck_assert_int_eq(called, 1);
	in_child.late_fd[0] = child_end;
	in_child.late_fd[1] = -1;
	r = linux_scan_receive_or_die(&in_child, &late, -1);
	ck_assert_ptr_eq(r, &late);
	ck_assert_uint_eq(late.sanitized.n, 1);
	ck_assert_str_eq(late.sanitized.v[0], npmrc);
	ck_assert_uint_eq(late.sanitized_len[0], sent.sanitized_len[0]);
	ck_assert(memcmp(late.sanitized_data[0], sent.sanitized_data[0], sent.sanitized_len[0]) ==
		  0);
	ck_assert_ptr_null(memmem(late.sanitized_data[0], late.sanitized_len[0], "SECRET", 6));
	ck_assert_str_eq(rel_list(&late.carved), "home/.aws/config");
	ck_assert_str_eq(rel_list(&late.carved_src), rel_list(&sent.carved_src));
	ck_assert_str_eq(rel_list(&late.readonly_extra), "ws/bin");
	ck_assert_str_eq(rel_list(&late.masked), rel_list(&sent.masked));
	ck_assert_ptr_nonnull(strstr(rel_list(&late.masked), "home/.aws"));
	ck_assert_uint_eq(late.sockets_open.n, sent.sockets_open.n);
	ck_assert(late.broker);
	memset(&late.writable, 0, sizeof(late.writable)); /* sent's */
	linux_scan_free(&late);
	linux_scan_free(&sent);
}
END_TEST

START_TEST(split_scan_matches)
{
	char masked[8192], guarded[8192], pinned[8192], missing[8192];
	struct linux_scan got;
	int rc;

	file("ws/a/.env", "S=1");
	file("ws/b/c/.env.local", "S=1");
	file("ws/.git/config", "[core]\n");
	mkdirs("ws/.git/hooks");
	file("ws/.bashrc", "");
	run_scan_ok();
	snprintf(masked, sizeof(masked), "%s", rel_list(&scan.masked));
	snprintf(guarded, sizeof(guarded), "%s", rel_list(&scan.guarded));
	snprintf(pinned, sizeof(pinned), "%s", rel_list(&scan.pinned));
	snprintf(missing, sizeof(missing), "%s", rel_list(&scan.missing));
	ck_assert_str_eq(pinned, "ws/.git ws/a ws/b ws/b/c");
	ck_assert_ptr_nonnull(strstr(missing, "ws/.git/commondir"));
	ck_assert_str_eq(masked, "ws/a/.env ws/b/c/.env.local");
	ck_assert_str_eq(guarded, "ws/.bashrc ws/.git/config ws/.git/hooks");
	split_scan(&got, &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(rel_list(&got.masked), masked);
	ck_assert_str_eq(rel_list(&got.guarded), guarded);
	ck_assert_str_eq(rel_list(&got.pinned), pinned);
	ck_assert_str_eq(rel_list(&got.missing), missing);
	linux_paths_free(&got.masked);
	linux_paths_free(&got.guarded);
	linux_paths_free(&got.pinned);
	linux_paths_free(&got.missing);
	/* Truncated: refused with the count, unless failIfUnavailable is false. */
	linux_scan_max_entries = 3;
	split_scan(&got, &rc);
	ck_assert_int_eq(rc, -E2BIG);
	ck_assert(got.truncated);
	ck_assert_str_eq(err.msg, "the workspace scan stopped at 3 entries before covering "
				  "every protected path");
	pol.fail_if_unavailable = 0;
	split_scan(&got, &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert(got.truncated);
	linux_paths_free(&got.masked);
	linux_paths_free(&got.guarded);
	linux_paths_free(&got.pinned);
	linux_paths_free(&got.missing);
}
END_TEST

/* The refusal and the warning of a walk that did not cover a tree name a directory the
 * command may have made: its control bytes never reach the caller's terminal. */
START_TEST(uncovered_named_printably)
{
	char rel[PATH_MAX] = "ws";
	struct plan_text w = {0};
	struct linux_scan got;
	int rc;

	for (int i = 0; i < 3; i++)
		strcat(rel, "/x\nhalo-run: all clear\033[2J");
	mkdirs(rel);
	linux_scan_max_depth = 2;
	split_scan(&got, &rc);
	ck_assert_int_eq(rc, -E2BIG);
	ck_assert_msg(!strpbrk(err.msg, "\n\033"), "raw control bytes: [%s]", err.msg);
	ck_assert_ptr_nonnull(strstr(err.msg, "x\\x0ahalo-run: all clear\\x1b[2J"));
	pol.fail_if_unavailable = 0;
	launch.warnings = &w;
	split_scan(&got, &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_ge(w.n, 1);
	for (size_t i = 0; i < w.n; i++)
		ck_assert_msg(!strpbrk(w.v[i], "\n\033"), "raw control bytes: [%s]", w.v[i]);
	launch.warnings = NULL;
	plan_text_free(&w);
	linux_paths_free(&got.masked);
	linux_paths_free(&got.guarded);
	linux_paths_free(&got.pinned);
	linux_paths_free(&got.missing);
}
END_TEST

START_TEST(twenty_thousand_files_fast)
{
	char name[PATH_MAX];
	struct timespec t0, t1;
	double ms;

	for (int d = 0; d < 200; d++)
		for (int f = 0; f < 100; f++) {
			int fd;
			snprintf(name, sizeof(name), "%s/d%03d", ws, d);
			if (f == 0)
				mkdir(name, 0755);
			if (f == 7 && d % 50 == 0)
				snprintf(name, sizeof(name), "%s/d%03d/.env", ws, d);
			else
				snprintf(name, sizeof(name), "%s/d%03d/f%03d", ws, d, f);
			fd = open(name, O_CREAT | O_WRONLY, 0644);
			ck_assert_int_ge(fd, 0);
			close(fd);
		}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	run_scan_ok();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	printf("scan: 20200 entries in %.1f ms\n", ms);
	ck_assert_uint_eq(scan.entries_scanned, 20200);
	ck_assert_uint_eq(scan.masked.n, 4);
	ck_assert_msg(ms < 1000.0, "scan took %.1f ms", ms);
}
END_TEST

/* A mask is where the component walk (linux_scan_resolve) says, whichever way the name
 * is written, and the links on the way are recorded for pinning: the one-call path for
 * names that meet no symlink must agree with the walk on every kind of name. */
START_TEST(mask_agrees_with_the_walk)
{
	static const char *const rel[] = {
	    "d/plain",
	    "d/missing",
	    "d/missing/deeper",
	    "d/plain/below-a-file",
	    "d/../d/plain",
	    "d/./plain",
	    "d//plain",
	    "d/plain/",
	    "ln-d/plain",
	    "d/ln-file",
	    "d/ln-nowhere",
	    "ln-d/missing",
	    "d/sub/ln-up/plain",
	    "d/sub/..",
	    "d/..",
	    "d/dir",
	};
	char a[PATH_MAX], real[PATH_MAX], tgt[PATH_MAX];

	file("d/plain", "x");
	mkdirs("d/dir");
	mkdirs("d/sub");
	p(tgt, "d");
	link_to(tgt, "ln-d");
	p(tgt, "d/plain");
	link_to(tgt, "d/ln-file");
	p(tgt, "nowhere/x");
	link_to(tgt, "d/ln-nowhere");
	link_to("..", "d/sub/ln-up");
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		struct linux_scan walk = {0}, s = {0};
		const struct linux_paths *w;
		int rc;

		snprintf(a, sizeof(a), "%s/%s", root, rel[i]);
		rc = linux_scan_resolve(&walk, a, real, sizeof(real), true);
		w = &walk.links;
		ck_assert_msg(linux_scan_add_mask(&s, a) == (rc == 0), "%s: %d", rel[i], rc);
		ck_assert_uint_eq(s.masked.n, rc == 0 ? 1 : 0);
		if (rc == 0)
			ck_assert_str_eq(s.masked.v[0], real);
		ck_assert_msg(s.links.n == w->n, "%s: %zu links, the walk %zu", rel[i], s.links.n,
			      w->n);
		for (size_t k = 0; k < w->n; k++)
			ck_assert_str_eq(s.links.v[k], w->v[k]);
		linux_scan_free(&walk);
		linux_scan_free(&s);
	}
}
END_TEST

static Suite *scan_suite(void)
{
	Suite *s = suite_create("scan");
	TCase *tc = tcase_create("scan");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, paths_grow);
	tcase_add_test(tc, globs_at_any_depth);
	tcase_add_test(tc, unlistable_masked_whole);
	tcase_add_test(tc, removed_while_listed_is_gone);
	tcase_add_test(tc, held_signal_ends_the_walk);
	tcase_add_test(tc, guard_finds_repositories);
	tcase_add_test(tc, guard_off_and_read_only);
	tcase_add_test(tc, symlinks_never_followed);
	tcase_add_test(tc, entry_bound_truncates);
	tcase_add_test(tc, depth_bound_truncates);
	tcase_add_test(tc, protected_abs_and_sockets);
	tcase_add_test(tc, mask_agrees_with_the_walk);
	tcase_add_test(tc, writable_roots);
	tcase_add_test(tc, readonly_extra_only_in_writable_trees);
	tcase_add_test(tc, mask_over_workspace_refused);
	tcase_add_test(tc, parallel_matches_sequential);
	tcase_add_test(tc, split_scan_matches);
	tcase_add_test(tc, split_scan_sends_every_list);
	tcase_add_test(tc, uncovered_named_printably);
	tcase_add_test(tc, twenty_thousand_files_fast);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(scan_suite)
