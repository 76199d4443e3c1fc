/* What the scan pins (bound onto themselves inside: git directories, the ancestors of
 * guards and masks, the symlinks on the way to them), the guard chains it refuses
 * (dangling links and loops the command could complete, a missing core.hooksPath),
 * the missing guard targets init refuses to create, and the host unix sockets found
 * through /proc/net/unix. */
#include "linux/unix_line.h"
#include "tests/unit/scan_fixture.h"

static bool has(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
	return false;
}

START_TEST(git_dirs_and_ancestors_pinned)
{
	file("ws/.git/config", "[core]\n");
	mkdirs("ws/.git/hooks");
	file("ws/a/b/.env", "S=1");
	mkdirs("ws/p/.vscode");
	file("ws/lib/nested/.git/config", "[core]\n");
	mkdirs("ws/lib/nested/.git/hooks");
	file("ws/src/main.c", "");
	run_scan_ok();
	/* Not the workspace itself (a mount already), nor what no rule is about. */
	ck_assert_str_eq(rel_list(&scan.pinned),
			 "ws/.git ws/a ws/a/b ws/lib ws/lib/nested ws/lib/nested/.git ws/p");
}
END_TEST

START_TEST(links_pinned_with_their_targets)
{
	file("ws/dotfiles/bashrc", "");
	link_to("dotfiles/bashrc", "ws/.bashrc");
	file("outside/secret", "S");
	link_to("../outside/secret", "ws/.env.prod");
	run_scan_ok();
	ck_assert_str_eq(rel_list(&scan.guarded), "ws/dotfiles/bashrc");
	ck_assert_str_eq(rel_list(&scan.masked), "outside/secret");
	/* The links themselves cannot be removed or replaced; the guarded target's
	 * directory cannot be renamed away. */
	ck_assert_str_eq(rel_list(&scan.pinned), "ws/.bashrc ws/.env.prod ws/dotfiles");
}
END_TEST

START_TEST(protected_path_through_a_link)
{
	char a[PATH_MAX];
	char *abs[1] = {a};

	file("ws/real-keys/id", "K");
	link_to("real-keys", "ws/keys-link");
	p(a, "ws/keys-link/id");
	pol.protected_abs = (struct policy_list){abs, 1, true};
	run_scan_ok();
	ck_assert_str_eq(rel_list(&scan.masked), "ws/real-keys/id");
	ck_assert(has(rel_list(&scan.pinned), "ws/keys-link"));
	ck_assert(has(rel_list(&scan.pinned), "ws/real-keys"));
}
END_TEST

START_TEST(dangling_guard_link_refused)
{
	char gone_link[PATH_MAX];

	link_to("build/rg", "ws/.ripgreprc"); /* could be created inside: refused */
	ck_assert_int_eq(linux_scan(&launch, &scan, &err), -EPERM);
	ck_assert_msg(strstr(err.msg, "/ws/.ripgreprc leads to ") &&
			  strstr(err.msg, "/ws/build, which does not exist"),
		      "%s", err.msg);
	linux_scan_free(&scan);
	p(gone_link, "ws/.ripgreprc");
	unlink(gone_link);
	/* Leading where nothing can be created: the link is pinned as it is. */
	link_to("/nonexistent/rg", "ws/.ripgreprc");
	run_scan_ok();
	ck_assert_str_eq(rel_list(&scan.pinned), "ws/.ripgreprc");
	linux_scan_free(&scan);
	p(gone_link, "ws/.ripgreprc");
	unlink(gone_link);
	/* A loop inside the workspace: its links could be replaced. */
	link_to(".bashrc2", "ws/.bashrc");
	link_to(".bashrc", "ws/.bashrc2");
	ck_assert_int_eq(linux_scan(&launch, &scan, &err), -ELOOP);
	ck_assert_msg(strstr(err.msg, "is a symlink loop"), "%s", err.msg);
}
END_TEST

START_TEST(missing_hooks_path_refused)
{
	file("ws/.git/config", "[core]\n\thooksPath = .githooks\n");
	ck_assert_int_eq(linux_scan(&launch, &scan, &err), -EPERM);
	ck_assert_msg(strstr(err.msg, "/ws/.githooks, which does not exist"), "%s", err.msg);
	linux_scan_free(&scan);
	mkdirs("ws/.githooks");
	run_scan_ok();
	ck_assert(has(rel_list(&scan.guarded), "ws/.githooks"));
}
END_TEST

START_TEST(missing_targets_listed)
{
	char missing[8192];

	file("ws/.git/config", "[core]\n");
	mkdirs("ws/.git/hooks");
	file("ws/.mcp.json", "{}");
	run_scan_ok();
	snprintf(missing, sizeof(missing), "%s", rel_list(&scan.missing));
	for (const char *n = "ws/.codex ws/.claude ws/.vscode ws/.gitmodules ws/.envrc "
			     "ws/.ripgreprc ws/.cursor ws/.gemini ws/.git/commondir "
			     "ws/.git/config.worktree";
	     *n;) {
		char w[64];
		size_t k = strcspn(n, " ");
		snprintf(w, sizeof(w), "%.*s", (int)k, n);
		ck_assert_msg(has(missing, w), "%s not in %s", w, missing);
		n += k + (n[k] == ' ');
	}
	/* What exists is bound instead. */
	ck_assert(!has(missing, "ws/.mcp.json"));
	ck_assert(!has(missing, "ws/.git/hooks"));
	ck_assert(!has(missing, "ws/.git/config"));
	linux_scan_free(&scan);
	pol.guard_persistence = 0;
	run_scan_ok();
	ck_assert_str_eq(rel_list(&scan.missing), "");
}
END_TEST

static void proc_net_unix(const char *const *lines, size_t n)
{
	FILE *f = fopen(linux_test_hooks()->proc_net_unix, "w");

	ck_assert_ptr_nonnull(f);
	fputs("Num       RefCount Protocol Flags    Type St Inode Path\n", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "0000000000000000: 00000002 00000000 00010000 0001 01 %zu%s%s\n",
			1000 + i, lines[i][0] ? " " : "", lines[i]);
	fclose(f);
}

START_TEST(host_sockets_from_proc_net_unix)
{
	char a[PATH_MAX], named[PATH_MAX], plain[PATH_MAX], spaced[PATH_MAX], gone[PATH_MAX];
	char *open_list[1] = {named};

	mkdirs("svc");
	unix_socket("svc/a.sock");
	unix_socket("svc/named.sock");
	unix_socket("svc/with space.sock");
	file("svc/not-a-socket", "");
	p(a, "svc/a.sock");
	p(named, "svc/named.sock");
	p(plain, "svc/not-a-socket");
	p(spaced, "svc/with space.sock");
	p(gone, "svc/gone.sock");
	const char *lines[] = {a,    a,		  named, plain,	     spaced,
			       gone, "@abstract", "",	 "rel.sock", "/tmp/some.sock"};
	proc_net_unix(lines, sizeof(lines) / sizeof(lines[0]));
	pol.unix_sockets_abs = (struct policy_list){open_list, 1, true};
	run_scan_ok();
	/* Each bound socket once; the named one left reachable; not what is not a
	 * socket now, nor abstract, relative or fresh-/tmp names. */
	ck_assert_str_eq(rel_list(&scan.masked), "svc/a.sock svc/with space.sock");
	ck_assert_str_eq(rel_list(&scan.sockets_open), "svc/named.sock");
}
END_TEST

/* Hostile /proc/net/unix lines: whatever a local process binds. */
static const struct {
	const char *line;
	const char *path; /* NULL: none */
} unix_lines[] = {
    {"0000000000000000: 00000002 00000000 00010000 0001 01 12345 /run/x.sock\n", "/run/x.sock"},
    {"0000000000000000: 00000002 00000000 00010000 0001 01 12345 /a b  c\n", "/a b  c"},
    {"0000000000000000: 00000003 00000000 00000000 0001 03   241\n", NULL},
    {"0000000000000000: 00000003 00000000 00000000 0001 03   241", NULL},
    {"0000000000000000: 00000002 00000000 00010000 0001 01 1 @abstract\n", NULL},
    {"0000000000000000: 00000002 00000000 00010000 0001 01 1 @/tmp/.X11-unix/X0\n", NULL},
    {"0000000000000000: 00000002 00000000 00010000 0001 01 1 rel.sock\n", NULL},
    {"0000000000000000: 00000002 00000000 00010000 0001 01 1  /two-spaces\n", NULL},
    {"Num       RefCount Protocol Flags    Type St Inode Path\n", NULL},
    {"", NULL},
    {"\n", NULL},
    {"a b c d e f\n", NULL},
    {"a b c d e f g /x", "/x"},
    {"     a   b c d e f g /x\n", "/x"},
    {"a b c d e f g\n/x\n", NULL},
    {"a b c d e f g /", "/"},
};

START_TEST(unix_line_table)
{
	char buf[256];
	const char *got;

	snprintf(buf, sizeof(buf), "%s", unix_lines[_i].line);
	got = linux_unix_line_path(buf);
	if (!unix_lines[_i].path)
		ck_assert_msg(got == NULL, "'%s' gave '%s'", unix_lines[_i].line, got);
	else
		ck_assert_msg(got && strcmp(got, unix_lines[_i].path) == 0, "'%s' gave '%s'",
			      unix_lines[_i].line, got ? got : "(null)");
}
END_TEST

START_TEST(too_many_host_sockets_refused)
{
	const char **lines = calloc(LINUX_SCAN_MAX_SOCKETS + 1, sizeof(char *));
	char(*paths)[PATH_MAX] = calloc(LINUX_SCAN_MAX_SOCKETS + 1, PATH_MAX);
	char rel[64];

	ck_assert(lines && paths);
	mkdirs("many");
	for (int i = 0; i <= LINUX_SCAN_MAX_SOCKETS; i++) {
		snprintf(rel, sizeof(rel), "many/%d", i);
		unix_socket(rel);
		p(paths[i], rel);
		lines[i] = paths[i];
	}
	proc_net_unix(lines, LINUX_SCAN_MAX_SOCKETS + 1);
	ck_assert_int_eq(linux_scan(&launch, &scan, &err), -E2BIG);
	ck_assert_msg(strstr(err.msg, "unix sockets to mask"), "%s", err.msg);
	free(lines);
	free(paths);
}
END_TEST

/* failIfUnavailable: false accepts more host sockets than masks (said as a gap); the
 * index place of this user's own watchers, whose sockets are not probed nor counted,
 * is masked whole all the same. */
START_TEST(too_many_host_sockets_accepted_own_index_masked)
{
	const char **lines = calloc(LINUX_SCAN_MAX_SOCKETS + 2, sizeof(char *));
	char(*paths)[PATH_MAX] = calloc(LINUX_SCAN_MAX_SOCKETS + 2, PATH_MAX);
	char rel[64];

	ck_assert(lines && paths);
	mkdirs("many");
	/* A home whose index place sorts after the sockets past the bound. */
	static char zhome[PATH_MAX];
	p(zhome, "zz-home");
	launch.env_home = zhome;
	mkdirs("zz-home/.local/state/halo-run/index");
	p(paths[0], "zz-home/.local/state/halo-run/index/w.sock");
	lines[0] = paths[0];
	for (int i = 1; i <= LINUX_SCAN_MAX_SOCKETS + 1; i++) {
		snprintf(rel, sizeof(rel), "many/%d", i);
		unix_socket(rel);
		p(paths[i], rel);
		lines[i] = paths[i];
	}
	proc_net_unix(lines, LINUX_SCAN_MAX_SOCKETS + 2);
	pol.fail_if_unavailable = 0;
	run_scan_ok();
	ck_assert(scan.sockets_truncated);
	ck_assert_str_eq(rel_list(&scan.own), "zz-home/.local/state/halo-run/index");
	free(lines);
	free(paths);
}
END_TEST

static Suite *pin_suite(void)
{
	Suite *s = suite_create("pin");
	TCase *tc = tcase_create("pin");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, git_dirs_and_ancestors_pinned);
	tcase_add_test(tc, links_pinned_with_their_targets);
	tcase_add_test(tc, protected_path_through_a_link);
	tcase_add_test(tc, dangling_guard_link_refused);
	tcase_add_test(tc, missing_hooks_path_refused);
	tcase_add_test(tc, missing_targets_listed);
	tcase_add_test(tc, host_sockets_from_proc_net_unix);
	tcase_add_test(tc, too_many_host_sockets_refused);
	tcase_add_test(tc, too_many_host_sockets_accepted_own_index_masked);
	tcase_add_loop_test(tc, unix_line_table, 0,
			    (int)(sizeof(unix_lines) / sizeof(unix_lines[0])));
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(pin_suite)
