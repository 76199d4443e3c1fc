/* The managed layer (policy/managed.c): first, and only tightened. Each row is a
 * managed file, one or two caller's files on top, and either success or the error
 * that names the caller's file, the field and the managed file. */
#include <errno.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

#include "policy/policy_int.h"
#include "tests/unit/policy_test.h"

#define M "/etc/halo/managed.yaml"

struct managed_row {
	const char *managed;
	const char *files[2];
	const char *error; /* NULL: loads */
};

static const struct managed_row rows[] = {
    /* An allowlist the managed file sets: only narrowed. */
    {"egress: {default: deny, allowedDomains: [a.example, c.example]}\n",
     {"egress: {allowedDomains: [a.example, b.example]}\n"},
     "loosens egress.allowedDomains (adds 'b.example'), which the managed policy " M " sets"},
    {"egress: {default: deny, allowedDomains: [a.example, c.example]}\n",
     {"egress: {allowedDomains: [a.example]}\n"},
     NULL},
    {"egress: {default: deny}\n",
     {"egress: {allowedDomains: [b.example]}\n"},
     "loosens egress.allowedDomains (adds 'b.example')"},
    {"egress: {default: deny, allowedDomains: [a.example]}\n",
     {"egress: {presets: [vcs]}\n"},
     "loosens egress.presets (adds 'vcs')"},
    {"egress: {default: deny, allowedDomains: [a.example]}\n",
     {"egress: {default: allow, allowedDomains: []}\n"},
     "loosens egress.default (deny → allow)"},
    {"egress: {deniedDomains: [x.example]}\n",
     {"egress: {allowedDomains: [b.example]}\n"},
     NULL}, /* no default in the managed file: an allowlist only narrows "allow" */
    {"egress: {deniedDomains: [x.example]}\n", {"egress: {default: allow}\n"}, NULL},
    /* Limits: judged against the managed value, not the previous file. */
    {"limits: {cpuSeconds: 60}\n",
     {"limits: {cpuSeconds: 30}\n", "limits: {cpuSeconds: 50}\n"},
     NULL},
    {"limits: {cpuSeconds: 60}\n",
     {"limits: {cpuSeconds: 30}\n", "limits: {cpuSeconds: 90}\n"},
     "loosens limits.cpuSeconds (60 → 90)"},
    {"limits: {cpuSeconds: 60}\n", {"limits: {memoryMB: 99999}\n"}, NULL},
    /* The sandbox block. */
    {"sandbox: {mode: read-only}\n",
     {"sandbox: {mode: workspace-write}\n"},
     "loosens sandbox.mode (read-only → workspace-write)"},
    {"egress: {deniedDomains: [x.example]}\n",
     {"sandbox: {mode: off}\n"},
     "loosens sandbox.mode (workspace-write → off)"},
    {"sandbox: {writableRoots: [/opt/cache]}\n",
     {"sandbox: {writableRoots: [/opt/cache, /srv/x]}\n"},
     "loosens sandbox.writableRoots (adds '/srv/x')"},
    {"sandbox: {writableRoots: [/opt/cache]}\n", {"sandbox: {writableRoots: []}\n"}, NULL},
    {"sandbox: {failIfUnavailable: true}\n",
     {"sandbox: {failIfUnavailable: false}\n"},
     "loosens sandbox.failIfUnavailable (true → false)"},
    {"sandbox: {guardPersistence: true}\n",
     {"sandbox: {guardPersistence: false}\n"},
     "loosens sandbox.guardPersistence"},
    {"sandbox: {caches: isolated}\n", {"sandbox: {caches: host}\n"}, "loosens sandbox.caches"},
    {"sandbox: {protectedPaths: [~/.aws]}\n",
     {"sandbox: {allowRead: [~/.aws/config]}\n"},
     "loosens sandbox.allowRead (adds '~/.aws/config')"},
    {"sandbox: {protectedPaths: [~/.aws]}\n", {"sandbox: {protectedPaths: [~/.kube]}\n"}, NULL},
    {"sandbox: {unixSockets: []}\n",
     {"sandbox: {unixSockets: [/run/x.sock]}\n"},
     "loosens sandbox.unixSockets"},
    /* Egress details. */
    {"egress: {allowPrivate: []}\n",
     {"egress: {allowPrivate: [10.0.0.0/8]}\n"},
     "loosens egress.allowPrivate (adds '10.0.0.0/8')"},
    {"egress: {hostPorts: [4873]}\n",
     {"egress: {hostPorts: [4873, 22]}\n"},
     "loosens egress.hostPorts (adds 22)"},
    {"egress: {hostPorts: [4873]}\n", {"egress: {hostPorts: []}\n"}, NULL},
    {"egress: {upstreamProxy: 'http://proxy.corp.example:8080'}\n",
     {"egress: {upstreamProxy: env}\n"},
     "loosens egress.upstreamProxy (http://proxy.corp.example:8080 → env)"},
    {"egress: {upstreamProxy: 'http://proxy.corp.example:8080'}\n",
     {"egress: {upstreamProxy: 'http://proxy.corp.example:8080'}\n"},
     NULL},
    {"env: {pass: [GOPATH]}\n",
     {"env: {pass: [GOPATH, AWS_SECRET_ACCESS_KEY]}\n"},
     "loosens env.pass (adds 'AWS_SECRET_ACCESS_KEY')"},
    /* Ways around the managed egress rules, though the file does not name them: a
     * host service relayed inside (a local proxy, an ssh -D), a host socket (docker's
     * runs anything with any network), a private range for an allowed name. */
    {"egress: {default: deny, allowedDomains: [a.example]}\n",
     {"egress: {hostPorts: [8118]}\n"},
     "loosens egress.hostPorts (adds 8118), which the managed policy " M " sets"},
    {"egress: {allowedDomains: [a.example]}\n",
     {"sandbox: {unixSockets: [/var/run/docker.sock]}\n"},
     "loosens sandbox.unixSockets (adds '/var/run/docker.sock')"},
    {"egress: {default: deny}\n",
     {"egress: {allowPrivate: [10.0.0.0/8]}\n"},
     "loosens egress.allowPrivate (adds '10.0.0.0/8')"},
    {"egress: {deniedDomains: [x.example]}\n", {"egress: {hostPorts: [8118]}\n"}, NULL},
    {"limits: {cpuSeconds: 60}\n", {"sandbox: {unixSockets: [/run/x.sock]}\n"}, NULL},
    /* Deny lists and protected paths union: nothing a later file writes drops one. */
    {"egress: {deniedDomains: [x.example]}\n", {"egress: {deniedDomains: []}\n"}, NULL},
};

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(managed_table)
{
	const struct managed_row *r = &rows[_i];
	struct policy_managed m = {M, r->managed, strlen(r->managed), 'y'};
	char dir[] = "/tmp/halo-managed.XXXXXX", paths[2][64];
	const char *pv[2];
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	size_t n = 0;
	int rc;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (; n < 2 && r->files[n]; n++) {
		snprintf(paths[n], sizeof(paths[n]), "%s/user%zu.yaml", dir, n);
		write_file(paths[n], r->files[n]);
		pv[n] = paths[n];
	}
	rc = policy_load_managed(&m, pv, n, &pt_ctx, &p, &d);
	if (r->error) {
		ck_assert_msg(rc == -EINVAL && !p, "row %d loaded:%s", _i, pt_dump(&d));
		ck_assert_msg(pt_err(&d, r->error), "row %d: want [%s]:%s", _i, r->error,
			      pt_dump(&d));
		/* The error names the caller's file(s). */
		ck_assert_msg(pt_err(&d, paths[0]), "row %d:%s", _i, pt_dump(&d));
	} else {
		ck_assert_msg(rc == 0 && p, "row %d:%s", _i, pt_dump(&d));
		ck_assert_msg(strncmp(p->source, "managed " M, strlen("managed " M)) == 0, "%s",
			      p->source);
	}
	policy_free(p);
	policy_diags_free(&d);
	for (size_t i = 0; i < n; i++)
		unlink(paths[i]);
	rmdir(dir);
}
END_TEST

/* Alone, the managed file is the policy (with the floor); the result of layering is
 * the ordinary one: unions kept, tightenings applied. */
START_TEST(managed_alone_and_merged)
{
	static const char text[] = "egress: {default: deny, allowedDomains: [a.example, "
				   "b.example], deniedDomains: [x.example]}\n"
				   "limits: {cpuSeconds: 60}\n";
	struct policy_managed m = {M, text, strlen(text), 'y'};
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	char path[] = "/tmp/halo-managed-user.XXXXXX";
	int fd = mkstemp(path);
	const char *pv[] = {path};

	ck_assert_int_eq(policy_load_managed(&m, NULL, 0, &pt_ctx, &p, &d), 0);
	ck_assert_str_eq(p->source, "managed " M);
	ck_assert(pt_list_has(&p->denied_domains, "x.example"));
	policy_free(p);
	ck_assert_int_ge(fd, 0);
	close(fd);
	write_file(path, "egress: {allowedDomains: [a.example], deniedDomains: [y.example]}\n"
			 "limits: {cpuSeconds: 10}\n");
	ck_assert_msg(policy_load_managed(&m, pv, 1, &pt_ctx, &p, &d) == 0, "%s", pt_dump(&d));
	ck_assert_uint_eq(p->allowed_domains.n, 1);
	ck_assert(pt_list_has(&p->denied_domains, "x.example"));
	ck_assert(pt_list_has(&p->denied_domains, "y.example"));
	ck_assert_int_eq(p->limits.cpu_seconds, 10);
	ck_assert_uint_eq(d.n_errors, 0);
	policy_free(p);
	policy_diags_free(&d);
	/* A managed file that does not parse is an error of its own, naming it. */
	struct policy_managed bad = {M, "egress: {defualt: deny}\n", 23, 'y'};
	ck_assert_int_eq(policy_load_managed(&bad, pv, 1, &pt_ctx, &p, &d), -EINVAL);
	ck_assert_msg(pt_err(&d, M), "%s", pt_dump(&d));
	policy_diags_free(&d);
	unlink(path);
}
END_TEST

/* Issue 24: one-off flags add to the files' lists (a loosening, said), are validated
 * like them, and are refused outright under a managed policy (fail closed). */
START_TEST(oneoff_flags)
{
	static const char text[] = "egress: {default: deny, allowedDomains: [a.example]}\n";
	const char *allow[] = {"b.example", "a.example"}, *env[] = {"FOO", "BAR=1"},
		   *ports[] = {"4873"}, *bad_ports[] = {"65536"}, *wr[] = {"/home/alice/w"};
	struct policy_oneoff o = {allow, 2, wr, 1, env, 2, ports, 1, NULL};
	struct policy_managed m = {M, text, strlen(text), 'y'};
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	char path[] = "/tmp/halo-oneoff.XXXXXX";
	int fd = mkstemp(path);
	const char *pv[] = {path};

	ck_assert_int_ge(fd, 0);
	close(fd);
	write_file(path, "egress: {default: deny, allowedDomains: [a.example]}\n");
	ck_assert_msg(policy_load_with(NULL, pv, 1, &pt_ctx, &o, &p, &d) == 0, "%s", pt_dump(&d));
	ck_assert_uint_eq(p->allowed_domains.n, 2);
	ck_assert(pt_list_has(&p->allowed_domains, "b.example"));
	ck_assert(pt_list_has(&p->writable_roots, "/home/alice/w"));
	ck_assert(pt_list_has(&p->env_pass, "FOO"));
	ck_assert_uint_eq(p->n_env_set, 1);
	ck_assert_uint_eq(p->host_ports.n, 1);
	ck_assert_ptr_nonnull(strstr(p->source, "command line (--allow b.example"));
	ck_assert_msg(pt_warn(&d, "command line: loosens egress.allowedDomains (adds 'b.example')"),
		      "%s", pt_dump(&d));
	ck_assert_msg(!pt_warn(&d, "adds 'a.example'"), "%s", pt_dump(&d));
	policy_free(p);
	policy_diags_free(&d);
	o.host_ports = bad_ports;
	ck_assert_int_eq(policy_load_with(NULL, pv, 1, &pt_ctx, &o, &p, &d), -EINVAL);
	ck_assert_ptr_null(p);
	ck_assert(pt_err(&d, "--host-port '65536'"));
	policy_diags_free(&d);
	o.host_ports = ports;
	ck_assert_int_eq(policy_load_with(&m, pv, 1, &pt_ctx, &o, &p, &d), -EINVAL);
	ck_assert_ptr_null(p);
	ck_assert(pt_err(&d, "refused under the managed policy"));
	policy_diags_free(&d);
	unlink(path);
}
END_TEST

/* --mode MODE: sets sandbox.mode over every file, as a file layer would; a tightening
 * is silent, a loosening said, a name that is not a mode refused naming the flag;
 * under a managed policy refused like every one-off (fail closed: a policy file says
 * it, and is checked). */
START_TEST(oneoff_mode)
{
	static const char text[] = "egress: {default: deny, allowedDomains: [a.example]}\n";
	struct policy_oneoff o = {.mode = "read-only"};
	struct policy_managed m = {M, text, strlen(text), 'y'};
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	char path[] = "/tmp/halo-oneoff-mode.XXXXXX";
	int fd = mkstemp(path);
	const char *pv[] = {path};

	ck_assert_int_ge(fd, 0);
	close(fd);
	write_file(path, "egress: {default: deny}\n");
	ck_assert_msg(policy_load_with(NULL, pv, 1, &pt_ctx, &o, &p, &d) == 0, "%s", pt_dump(&d));
	ck_assert_int_eq(p->mode, POLICY_MODE_READ_ONLY);
	ck_assert_ptr_nonnull(strstr(p->source, "command line (--mode read-only)"));
	ck_assert_msg(!pt_warn(&d, "loosens"), "%s", pt_dump(&d));
	policy_free(p);
	policy_diags_free(&d);
	/* Over a read-only file: the loosening said, and made. */
	write_file(path, "sandbox: {mode: read-only}\negress: {default: deny}\n");
	o.mode = "workspace-write";
	ck_assert_msg(policy_load_with(NULL, pv, 1, &pt_ctx, &o, &p, &d) == 0, "%s", pt_dump(&d));
	ck_assert_int_eq(p->mode, POLICY_MODE_WORKSPACE_WRITE);
	ck_assert_msg(
	    pt_warn(&d, "command line: loosens sandbox.mode (read-only → workspace-write)"), "%s",
	    pt_dump(&d));
	policy_free(p);
	policy_diags_free(&d);
	/* Not a mode, or empty: refused, nothing loaded. */
	o.mode = "readonly";
	ck_assert_int_eq(policy_load_with(NULL, pv, 1, &pt_ctx, &o, &p, &d), -EINVAL);
	ck_assert_ptr_null(p);
	ck_assert_msg(pt_err(&d, "--mode 'readonly': one of read-only, workspace-write, off"), "%s",
		      pt_dump(&d));
	policy_diags_free(&d);
	o.mode = "";
	ck_assert_int_eq(policy_load_with(NULL, pv, 1, &pt_ctx, &o, &p, &d), -EINVAL);
	ck_assert_msg(pt_err(&d, "--mode: needs a value"), "%s", pt_dump(&d));
	policy_diags_free(&d);
	/* Under a managed policy: refused, as every one-off is. */
	o.mode = "read-only";
	ck_assert_int_eq(policy_load_with(&m, NULL, 0, &pt_ctx, &o, &p, &d), -EINVAL);
	ck_assert_ptr_null(p);
	ck_assert_msg(pt_err(&d, "--host-port and --mode are refused under the managed policy"),
		      "%s", pt_dump(&d));
	policy_diags_free(&d);
	unlink(path);
}
END_TEST

/* Every field layer.c reports a loosening under is known to the managed table
 * (an unknown one would count as managed: closed, but a silent surprise). */
START_TEST(managed_fields_known)
{
	struct policy_diags d = {0};
	struct halo_policy *empty = NULL;

	ck_assert_int_eq(policy_parse_buffer("e", "{}", 2, 'j', &empty, &d), 0);
	ck_assert(policy_managed_sets(empty, "sandbox.mode"));
	ck_assert(!policy_managed_sets(empty, "egress.allowedDomains"));
	ck_assert(!policy_managed_sets(empty, "limits.cpuSeconds"));
	ck_assert(!policy_managed_sets(empty, "sandbox.allowRead"));
	ck_assert(policy_managed_sets(empty, "no.such.field"));
	policy_free(empty);
	policy_diags_free(&d);
}
END_TEST

/* Each caller's file is read once: what is checked against the managed file is what
 * runs. A file rewritten after its first read (a watcher on its close, while a large
 * second file parses) must not have its tight second version checked while its
 * loose first version is the policy. */
START_TEST(managed_file_read_once)
{
	static const char text[] = "egress: {default: deny, allowedDomains: [a.example]}\n";
	struct policy_managed m = {M, text, strlen(text), 'y'};
	char dir[] = "/tmp/halo-managed-once.XXXXXX", a[80], a2[80], b[80];
	const char *pv[] = {a, b};
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	int ready[2], wfd, status = 0;
	FILE *f;
	pid_t pid;
	char c;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a.yaml", dir);
	snprintf(a2, sizeof(a2), "%s/a2.yaml", dir);
	snprintf(b, sizeof(b), "%s/b.yaml", dir);
	write_file(a, "egress: {allowedDomains: [a.example, evil.example]}\n");
	write_file(a2, "egress: {allowedDomains: [a.example]}\n");
	f = fopen(b, "w");
	ck_assert_ptr_nonnull(f);
	fputs("egress:\n  deniedDomains:\n", f);
	for (int i = 0; i < 20000; i++)
		fprintf(f, "    - d%d.example\n", i);
	fclose(f);
	ck_assert_int_eq(pipe(ready), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) { /* on the first close of a.yaml, put the tight version there */
		char ev[sizeof(struct inotify_event) + 256];

		alarm(20);
		wfd = inotify_init1(IN_CLOEXEC);
		if (wfd < 0 || inotify_add_watch(wfd, a, IN_CLOSE_NOWRITE) < 0)
			_exit(2);
		if (write(ready[1], "r", 1) != 1)
			_exit(2);
		if (read(wfd, ev, sizeof(ev)) <= 0)
			_exit(2);
		_exit(rename(a2, a) == 0 ? 0 : 2);
	}
	close(ready[1]);
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	close(ready[0]);
	ck_assert_int_eq(policy_load_managed(&m, pv, 2, &pt_ctx, &p, &d), -EINVAL);
	ck_assert_ptr_null(p);
	ck_assert_msg(pt_err(&d, "loosens egress.allowedDomains (adds 'evil.example')"), "%s",
		      pt_dump(&d));
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "watcher: %d", status);
	policy_diags_free(&d);
	unlink(a);
	unlink(a2);
	unlink(b);
	rmdir(dir);
}
END_TEST

static Suite *managed_suite(void)
{
	Suite *s = suite_create("managed");
	TCase *t = tcase_create("core");

	tcase_add_loop_test(t, managed_table, 0, sizeof(rows) / sizeof(rows[0]));
	tcase_add_test(t, managed_alone_and_merged);
	tcase_add_test(t, managed_fields_known);
	tcase_add_test(t, managed_file_read_once);
	tcase_add_test(t, oneoff_flags);
	tcase_add_test(t, oneoff_mode);
	tcase_set_timeout(t, 60); /* the 20k-entry file parses slowly under ASan */
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(managed_suite)
