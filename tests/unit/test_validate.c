/* Validation: one failing case per rule with its exact message, and an accepted
 * neighbour for each; then the derived fields policy_finalize() fills. */
#include <errno.h>

#include "tests/unit/policy_test.h"

/* Table rows leave the trailing fields (warning, ctx) out when unused. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

struct vcase {
	const char *rule;
	const char *yaml;
	const char *error;   /* substring of an error; NULL: must be accepted */
	const char *warning; /* substring of a warning, or NULL */
	int ctx;	     /* 0: $HOME == pw home; 1: $HOME elsewhere */
};

#define WR(x)  "sandbox:\n  writableRoots: [" x "]\n"
#define PR(x)  "sandbox:\n  protectedPaths: [" x "]\n"
#define AD(x)  "egress:\n  allowedDomains: [" x "]\n"
#define ENV(x) "env:\n  " x "\n"
#define HP(x)  "egress:\n  hostPorts: [" x "]\n"
#define US(x)  "sandbox:\n  unixSockets: [" x "]\n"

static const struct vcase cases[] = {
    /* writableRoots: the root */
    {"root", WR("/"), "t.yaml: sandbox.writableRoots[0]: '/' is the root directory"},
    {"root neighbour", WR("/opt/cache"), NULL},
    {"root spelled //", WR("//./"), "'//./' (/) is the root directory"},
    /* ~ and home directories */
    {"tilde", WR("\"~\""), "sandbox.writableRoots[0]: '~' (/home/alice) is a home directory"},
    {"tilde slash", WR("~/"), "'~/' (/home/alice) is a home directory"},
    {"tilde neighbour", WR("~/cache"), NULL},
    {"pw home", WR("/home/alice"), "'/home/alice' is a home directory"},
    {"pw home other case", WR("/HOME/Alice/"), "is a home directory"},
    {"other home", WR("/home/bob"), "'/home/bob' is a home directory"},
    {"root home", WR("/root"), "'/root' is a home directory"},
    {"macos home", WR("/Users/bob"), "'/Users/bob' is a home directory"},
    {"home parent", WR("/home"), "'/home' contains the home directory /home/alice"},
    {"home parent macos", WR("/Users"), "'/Users' contains home directories"},
    {"env home", WR("/work/envhome"), "'/work/envhome' is a home directory", NULL, 1},
    {"env home parent", WR("/work"), "'/work' contains the home directory /work/envhome", NULL, 1},
    {"home neighbour", WR("/home/bob/cache"), NULL},
    /* halo-run's own policy directory (discovery reads it) */
    {"config over halo's", WR("~/.config"),
     "contains halo-run's policy directory /home/alice/.config/halo"},
    {"halo's config", WR("~/.config/halo"), "halo-run's policy directory"},
    {"inside halo's config", WR("~/.config/halo/x"), "is inside halo-run's policy directory"},
    {"env home config", WR("/work/envhome/.config"), "halo-run's policy directory", NULL, 1},
    {"config neighbour", WR("~/.config/nvim"), NULL},
    {"env home neighbour", WR("/work/envhome/cache"), NULL, NULL, 1},
    /* globs */
    {"glob star", WR("/opt/*"), "'/opt/*': globs are not allowed in writable roots"},
    {"glob question", WR("/opt/cache?"), "globs are not allowed"},
    {"glob bracket", WR("\"/opt/[ab]\""), "globs are not allowed"},
    {"glob neighbour", WR("/opt/cache-1"), NULL},
    /* system directories and their ancestors */
    {"system usr", WR("/usr"), "'/usr' is a system directory"},
    {"system var", WR("/var"), "'/var' is a system directory"},
    {"system opt", WR("/opt"), "'/opt' is a system directory"},
    {"system tmp", WR("/tmp"), "'/tmp' is a system directory"},
    {"system macos", WR("/Applications"), "is a system directory"},
    {"system case", WR("/ETC"), "'/ETC' is a system directory"},
    {"system ancestor", WR("/nix"), "'/nix' contains the system directory /nix/store"},
    {"system neighbour", WR("/var/tmp/ci-cache"), NULL},
    {"system neighbour opt", WR("/opt/build-cache"), NULL},
    /* anything under /etc /usr /bin /sbin /System ... */
    {"under etc", WR("/etc/halo"), "'/etc/halo' is inside the system directory /etc"},
    {"under usr", WR("/usr/local/cache"), "is inside the system directory /usr"},
    {"under bin", WR("/bin/x"), "is inside the system directory /bin"},
    {"under sbin", WR("/sbin/x"), "is inside the system directory /sbin"},
    {"under System", WR("/System/Volumes/Data"), "is inside the system directory /System"},
    {"under proc", WR("/proc/self"), "is inside the system directory /proc"},
    {"under var lib", WR("/var/lib/docker"), "is inside the system directory /var/lib"},
    {"under run", WR("/run/user/1000"), "is inside the system directory /run"},
    {"under etc via dots", WR("/opt/./../etc"), "has a '..' component"},
    {"under neighbour", WR("/usrlocal/cache"), NULL},
    /* relative roots and .. */
    {"relative", WR("build"), "'build' must be an absolute path or start with ~/"},
    {"relative dot", WR("./build"), "must be an absolute path or start with ~/"},
    {"dotdot", WR("/opt/cache/../../etc"), "'/opt/cache/../../etc' has a '..' component"},
    {"tilde user", WR("~bob/cache"), "uses ~user, which is not supported"},
    {"empty", WR("\"\""), "sandbox.writableRoots[0]: is empty"},
    {"relative neighbour", WR("~/build"), NULL},
    {"dotdot neighbour", WR("/opt/cache/..x"), NULL},
    /* a root over or under a protected path */
    {"under protected", "sandbox:\n  protectedPaths: [~/.ssh]\n  writableRoots: [~/.ssh/keys]\n",
     "sandbox.writableRoots[0]: '~/.ssh/keys' (/home/alice/.ssh/keys) is inside protected "
     "path sandbox.protectedPaths[0] '~/.ssh'"},
    {"over protected",
     "sandbox:\n  protectedPaths: [/opt/cache/secret]\n  writableRoots: [/opt/cache]\n",
     "'/opt/cache' contains protected path sandbox.protectedPaths[0] '/opt/cache/secret'"},
    {"protected equal", "sandbox:\n  protectedPaths: [/opt/keys]\n  writableRoots: [/opt/keys/]\n",
     "is inside protected path sandbox.protectedPaths[0]"},
    {"protected case",
     "sandbox:\n  protectedPaths: [~/.ssh]\n  writableRoots: [/home/alice/.SSH/x]\n",
     "'/home/alice/.SSH/x' is inside protected path sandbox.protectedPaths[0] '~/.ssh'"},
    {"protected absolute vs tilde",
     "sandbox:\n  protectedPaths: [/home/alice/.aws]\n  writableRoots: [~/.aws/cli]\n",
     "'~/.aws/cli' (/home/alice/.aws/cli) is inside protected path "
     "sandbox.protectedPaths[0] '/home/alice/.aws'"},
    {"protected env home form",
     "sandbox:\n  protectedPaths: [~/.ssh]\n  writableRoots: [/work/envhome/.ssh/x]\n",
     "'/work/envhome/.ssh/x' is inside protected path sandbox.protectedPaths[0] '~/.ssh'", NULL, 1},
    {"protected env home form of root",
     "sandbox:\n  protectedPaths: [/work/envhome/.kubex]\n  writableRoots: [~/.kubex]\n",
     "'~/.kubex' (/work/envhome/.kubex) is inside protected path", NULL, 1},
    {"protected glob no conflict",
     "sandbox:\n  protectedPaths: [\".env*\", \"*.pem\"]\n  writableRoots: [/opt/cache]\n", NULL},
    {"protected boundary",
     "sandbox:\n  protectedPaths: [~/.ssh]\n  writableRoots: [~/.sshx, ~/.ss]\n", NULL},
    /* read-only */
    {"read-only roots", "sandbox:\n  mode: read-only\n  writableRoots: [/opt/cache]\n",
     "t.yaml: sandbox.writableRoots: not allowed with sandbox.mode read-only"},
    {"read-only neighbour", "sandbox:\n  mode: read-only\n  writableRoots: []\n", NULL},
    {"read-only legacy", "permissions: {sandbox: read-only}\nsandbox: {writableRoots: [/opt/c]}\n",
     "not allowed with sandbox.mode read-only"},
    /* mode off */
    {"off allowed", "sandbox: {mode: off}\negress: {allowedDomains: [a.com]}\n",
     "t.yaml: egress.allowedDomains: not allowed with sandbox.mode off (nothing would enforce "
     "it)"},
    {"off default", "sandbox: {mode: off}\negress: {default: deny}\n",
     "egress.default: not allowed with sandbox.mode off"},
    {"off presets", "sandbox: {mode: off}\negress: {presets: [vcs]}\n",
     "egress.presets: not allowed with sandbox.mode off"},
    {"off denied", "sandbox: {mode: off}\negress: {deniedDomains: [a.com]}\n",
     "egress.deniedDomains: not allowed with sandbox.mode off"},
    {"off private", "sandbox: {mode: off}\negress: {allowPrivate: [10.0.0.0/8]}\n",
     "egress.allowPrivate: not allowed with sandbox.mode off"},
    {"off writable", "sandbox: {mode: off, writableRoots: [/opt/x]}\n",
     "sandbox.writableRoots: not allowed with sandbox.mode off"},
    {"off protected", "sandbox: {mode: off, protectedPaths: [~/.ssh]}\n",
     "sandbox.protectedPaths: not allowed with sandbox.mode off"},
    {"off caches", "sandbox: {mode: off, caches: host}\n",
     "sandbox.caches: not allowed with sandbox.mode off"},
    {"off neighbour", "sandbox: {mode: off}\nlimits: {cpuSeconds: 5}\negress: {}\n", NULL},
    {"caches with read-only", "sandbox: {mode: read-only, caches: off}\n", NULL},
    /* domain lists */
    {"bare star", AD("\"*\""), "t.yaml: egress.allowedDomains[0]: '*': a bare '*'"},
    {"url", AD("\"https://a.example/\""), "egress.allowedDomains[0]: 'https://a.example/': a URL"},
    {"port", AD("a.example, \"b.example:443\""), NULL},
    {"zero port", AD("a.example, \"b.example:0\""),
     "egress.allowedDomains[1]: 'b.example:0': port 0 out of range"},
    {"bad port", AD("\"b.example:ssh\""),
     "egress.allowedDomains[0]: 'b.example:ssh': port 'ssh' is not a decimal number"},
    {"upper case", AD("A.example"), "'A.example': upper case"},
    {"denied bare star", "egress: {deniedDomains: [\"*\"]}\n",
     "egress.deniedDomains[0]: '*': a bare '*'"},
    {"denied url", "egress: {deniedDomains: [\"http://x.example\"]}\n",
     "egress.deniedDomains[0]: 'http://x.example': a URL"},
    {"middle star", AD("\"a.*.example\""), "egress.allowedDomains[0]: 'a.*.example':"},
    {"domains neighbour", AD("a.example, \"*.b.example\", 192.0.2.1"), NULL},
    /* presets */
    {"unknown preset", "egress: {presets: [vcs, vsc]}\n",
     "t.yaml: egress.presets[1]: unknown preset 'vsc' (known: vcs, package-registries, "
     "model-providers)"},
    {"preset neighbour", "egress: {presets: [vcs, package-registries, model-providers]}\n", NULL},
    /* default allow together with an allowlist */
    {"allow with allowlist", "egress: {default: allow, allowedDomains: [a.example]}\n",
     "t.yaml: egress.default: 'allow' together with an allowlist"},
    {"allow with presets", "egress: {default: allow, presets: [vcs]}\n",
     "egress.default: 'allow' together with an allowlist"},
    {"allow neighbour", "egress: {default: allow, deniedDomains: [pastebin.com]}\n", NULL},
    /* the gateway */
    {"gateway denied by default", "egress: {allowedDomains: [a.example]}\ngateway: gw.example\n",
     "t.yaml: gateway: 'gw.example' would be denied by this policy (default deny); add it to "
     "egress.allowedDomains"},
    {"gateway nothing allowed", "gateway: gw.example\n",
     "gateway: 'gw.example' would be denied by this policy (default deny)"},
    {"gateway in denied", "egress: {deniedDomains: [\"*.example\"]}\ngateway: gw.example\n",
     "gateway: 'gw.example' would be denied by this policy (deniedDomains[0] *.example); "
     "remove it from egress.deniedDomains"},
    {"gateway denied over allowed",
     "egress: {allowedDomains: [gw.example], deniedDomains: [gw.example]}\ngateway: gw.example\n",
     "gateway: 'gw.example' would be denied by this policy (deniedDomains[0] gw.example)",
     "egress.allowedDomains[0]: 'gw.example' is also in egress.deniedDomains, and deny wins"},
    {"gateway wildcard", "egress: {allowedDomains: [\"*.example\"]}\ngateway: \"*.example\"\n",
     "gateway: '*.example': must be one host, not a wildcard"},
    {"gateway upper", "egress: {allowedDomains: [gw.example]}\ngateway: GW.example\n",
     "gateway: 'GW.example': upper case"},
    {"gateway url", "gateway: \"https://gw.example\"\n", "gateway: 'https://gw.example': a URL"},
    {"gateway empty", "gateway: \"\"\n", "t.yaml: gateway: is empty"},
    {"gateway allowed", "egress: {allowedDomains: [gw.example]}\ngateway: gw.example\n", NULL},
    {"gateway by wildcard",
     "egress: {allowedDomains: [\"*.corp.example\"]}\ngateway: "
     "llm.corp.example\n",
     NULL},
    {"gateway by preset", "egress: {presets: [model-providers]}\ngateway: api.anthropic.com\n",
     NULL},
    {"gateway denylist policy", "egress: {deniedDomains: [pastebin.com]}\ngateway: gw.example\n",
     NULL},
    {"gateway mode off", "sandbox: {mode: off}\ngateway: gw.example\n", NULL},
    /* permissions.sandbox and sandbox.mode */
    {"legacy disagrees", "sandbox: {mode: off}\npermissions: {sandbox: read-only}\n",
     "t.yaml:2: permissions.sandbox: 'read-only' disagrees with sandbox.mode 'off'"},
    {"legacy agrees", "sandbox: {mode: read-only}\npermissions: {sandbox: read-only}\n", NULL},
    /* environment */
    {"env pass name", ENV("pass: [GOPATH, 1BAD]"),
     "t.yaml: env.pass[1]: '1BAD' is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)"},
    {"env set name", ENV("set: {A-B: x}"), "env.set.A-B: 'A-B' is not a valid variable name"},
    {"env set empty name", ENV("set: {\"\": x}"), "'' is not a valid variable name"},
    {"env set halo", ENV("set: {HALO_SANDBOX: \"0\"}"),
     "env.set.HALO_SANDBOX: 'HALO_SANDBOX' is reserved: HALO_* names belong to halo-run"},
    {"env set ld preload", ENV("set: {LD_PRELOAD: /tmp/x.so}"),
     "env.set.LD_PRELOAD: 'LD_PRELOAD' is reserved: dynamic-loader variables"},
    {"env set ld path", ENV("set: {LD_LIBRARY_PATH: /tmp}"), "'LD_LIBRARY_PATH' is reserved"},
    {"env set dyld", ENV("set: {DYLD_INSERT_LIBRARIES: /tmp/x}"), "is reserved: dynamic-loader"},
    {"env set proxy", ENV("set: {HTTPS_PROXY: \"http://evil:8080\"}"),
     "'HTTPS_PROXY' is reserved: the proxy variables are set by halo-run"},
    {"env set proxy lower", ENV("set: {no_proxy: \"*\"}"), "'no_proxy' is reserved"},
    {"env set tmpdir", ENV("set: {TMPDIR: /tmp}"), "'TMPDIR' is reserved: halo-run sets TMPDIR"},
    {"env pass ld", ENV("pass: [LD_PRELOAD]"), "env.pass[0]: 'LD_PRELOAD' is reserved"},
    {"env pass proxy", ENV("pass: [http_proxy]"), "env.pass[0]: 'http_proxy' is reserved"},
    {"env neighbour", ENV("pass: [GOPATH, _X1]\n  set: {CI: \"true\", LDFLAGS: -O2, HALOX: y2}"),
     NULL},
    /* allowPrivate */
    {"cidr bad prefix", "egress: {allowPrivate: [10.0.0.0/33]}\n",
     "t.yaml: egress.allowPrivate[0]: '10.0.0.0/33':"},
    {"cidr not cidr", "egress: {allowPrivate: [intranet.example]}\n",
     "egress.allowPrivate[0]: 'intranet.example':"},
    {"cidr neighbour", "egress: {allowPrivate: [10.0.0.0/8, \"fd12:3456::/32\", 192.168.1.5/32]}\n",
     NULL},
    {"cidr metadata", "egress: {allowPrivate: [169.254.0.0/16]}\n", NULL,
     "egress.allowPrivate[0]: covers a cloud metadata address"},
    /* hostPorts: types and ranges are refused at parse time (test_load.c); these are
     * the rules over the whole list */
    {"hostports neighbour", HP("4873, 5432, 1, 65535"), NULL},
    {"hostports empty", HP(""), NULL},
    {"hostports http proxy", HP("4873, 3128"),
     "t.yaml: egress.hostPorts[1]: 3128 is halo-run's own HTTP proxy port inside the sandbox"},
    {"hostports socks proxy", HP("1080"),
     "egress.hostPorts[0]: 1080 is halo-run's own SOCKS5 proxy port inside the sandbox"},
    {"hostports duplicate", HP("4873, 5432, 4873"),
     "t.yaml: egress.hostPorts[2]: 4873 is listed twice (also egress.hostPorts[0])"},
    {"hostports mode off", "sandbox: {mode: off}\negress: {hostPorts: [4873]}\n",
     "t.yaml: egress.hostPorts: not allowed with sandbox.mode off"},
    {"hostports mode off empty", "sandbox: {mode: off}\negress: {hostPorts: []}\n", NULL},
    /* no Decide() rule is needed beside the ports, whatever the default */
    {"hostports with deny", "egress: {default: deny, hostPorts: [4873]}\n", NULL},
    /* protectedPaths */
    {"protected tilde user", PR("~bob/.ssh"), "sandbox.protectedPaths[0]: '~bob/.ssh' uses ~user"},
    {"protected root", PR("/"), "sandbox.protectedPaths[0]: '/' would hide the whole file system"},
    {"protected abs glob", PR("\"~/.ssh/id_*\""),
     "'~/.ssh/id_*': globs are only supported in relative name patterns"},
    {"protected dotdot", PR("../secrets"), "'../secrets': a relative entry is a name pattern"},
    {"protected dot slash", PR("./secrets"), "a relative entry is a name pattern"},
    {"protected abs dotdot", PR("/srv/../etc/shadow"), "has a '..' component"},
    {"protected workspace", PR("~/proj"),
     "sandbox.protectedPaths[0]: '~/proj' contains the workspace /home/alice/proj"},
    {"protected empty", PR("\"\""), "sandbox.protectedPaths[0]: is empty"},
    {"protected neighbour", PR("~/.ssh, /srv/secrets, \".env*\", secrets/, \"*.key\""), NULL},
    /* duplicates are warnings */
    {"dup allowed", AD("a.example, b.example, a.example"), NULL,
     "t.yaml: egress.allowedDomains[2]: duplicate of egress.allowedDomains[0] 'a.example'"},
    {"dup protected", PR("~/.ssh, ~/.ssh"), NULL,
     "sandbox.protectedPaths[1]: duplicate of sandbox.protectedPaths[0] '~/.ssh'"},
    {"dup env pass", ENV("pass: [A, A]"), NULL, "env.pass[1]: duplicate of env.pass[0] 'A'"},
    {"dup presets", "egress: {presets: [vcs, vcs]}\n", NULL, "egress.presets[1]: duplicate"},
    /* sandbox.unixSockets: exact absolute or ~/ places */
    {"socket home", US("~/.ssh/agent.sock"), NULL},
    {"socket abs", US("/var/run/docker.sock, /run/user/1000/podman/podman.sock"), NULL},
    {"socket relative", US("agent.sock"),
     "t.yaml: sandbox.unixSockets[0]: 'agent.sock': must be an absolute or ~/ path to a "
     "socket"},
    {"socket empty", US("\"\""), "sandbox.unixSockets[0]: is empty"},
    {"socket glob", US("\"/run/*.sock\""), "'/run/*.sock': globs are not allowed"},
    {"socket dotdot", US("/run/../etc/x.sock"), "has a '..' component"},
    {"socket other user", US("~bob/agent.sock"), "uses ~user"},
    {"socket root", US("/"), "sandbox.unixSockets[0]: '/' is not a socket"},
    {"socket not a list", "sandbox:\n  unixSockets: /run/a.sock\n", "unixSockets"},
    {"socket mode off", "sandbox:\n  mode: off\n  unixSockets: [/run/a.sock]\n",
     "sandbox.unixSockets: not allowed with sandbox.mode off"},
    {"socket newline", US("\"/run/a\\nb.sock\""), "contains a control character"},
};

START_TEST(rule_table)
{
	const struct vcase *c = &cases[_i];
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	int rc = pt_load_ctx(c->yaml, 'y', c->ctx ? &pt_ctx2 : &pt_ctx, &p, &d);

	if (c->error) {
		ck_assert_msg(rc == -EINVAL, "[%s] accepted:\n%s%s", c->rule, c->yaml, pt_dump(&d));
		ck_assert_msg(pt_err(&d, c->error), "[%s] want '%s' in:%s", c->rule, c->error,
			      pt_dump(&d));
	} else {
		ck_assert_msg(rc == 0, "[%s] refused:\n%s%s", c->rule, c->yaml, pt_dump(&d));
	}
	if (c->warning)
		ck_assert_msg(pt_warn(&d, c->warning), "[%s] want warning '%s' in:%s", c->rule,
			      c->warning, pt_dump(&d));
	else if (!c->error)
		ck_assert_msg(d.n_warnings == 0, "[%s] unexpected warnings:%s", c->rule,
			      pt_dump(&d));
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(every_error_collected)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	const char *yaml = "sandbox:\n  writableRoots: [/, /etc/x, rel]\n"
			   "egress:\n  allowedDomains: [\"*\"]\n  presets: [nope]\n"
			   "env:\n  set: {LD_PRELOAD: x}\n";

	ck_assert_int_eq(pt_load(yaml, &p, &d), -EINVAL);
	ck_assert_msg(d.n_errors == 6, "%s", pt_dump(&d));
	/* Derived data is not left half-built on failure. */
	ck_assert_uint_eq(p->writable_abs.n, 0);
	ck_assert_ptr_null(p->index);
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

struct dcase {
	const char *yaml;
	bool allow;
};

static const struct dcase defaults[] = {
    {"egress: {allowedDomains: [a.example]}\n", false},
    {"egress: {presets: [vcs]}\n", false},
    {"egress: {presets: [vcs], deniedDomains: [x.example]}\n", false},
    {"egress: {deniedDomains: [x.example]}\n", true},
    {"egress: {}\n", false},
    {"sandbox: {mode: read-only}\n", false},
    {"egress: {default: allow}\n", true},
    {"egress: {default: deny, deniedDomains: [x.example]}\n", false},
    {"egress: {allowedDomains: []}\n", false},
    {"sandbox: {mode: off}\n", true},
};

START_TEST(effective_default)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	ck_assert_msg(pt_load(defaults[_i].yaml, &p, &d) == 0, "%s", pt_dump(&d));
	ck_assert_msg(p->egress_default_allow == defaults[_i].allow, "%s", defaults[_i].yaml);
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(defaults_resolved)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	ck_assert_int_eq(pt_load("limits: {cpuSeconds: 1}\n", &p, &d), 0);
	ck_assert_int_eq(p->mode, POLICY_MODE_WORKSPACE_WRITE);
	ck_assert_int_eq(p->fail_if_unavailable, 1);
	ck_assert_int_eq(p->guard_persistence, 1);
	ck_assert_int_eq(p->limits.memory_mb, POLICY_LIMIT_UNSET);
	policy_free(p);
	ck_assert_int_eq(
	    pt_load("sandbox: {failIfUnavailable: false, guardPersistence: false}\n", &p, &d), 0);
	ck_assert_int_eq(p->fail_if_unavailable, 0);
	ck_assert_int_eq(p->guard_persistence, 0);
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(paths_normalised)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	ck_assert_int_eq(pt_load_ctx("sandbox:\n  writableRoots: [\"~//cache/./x/\", //opt//c/]\n"
				     "  protectedPaths: [~/.ssh, /srv//keys/, \".env*\", ~/.ssh]\n",
				     'y', &pt_ctx2, &p, &d),
			 0);
	ck_assert_uint_eq(p->writable_abs.n, 2);
	ck_assert_str_eq(p->writable_abs.items[0], "/home/alice/cache/x");
	ck_assert_str_eq(p->writable_abs.items[1], "/opt/c");
	ck_assert_uint_gt(p->protected_abs.n, 3); /* and the floor's after them */
	ck_assert_str_eq(p->protected_abs.items[0], "/home/alice/.ssh");
	ck_assert_str_eq(p->protected_abs.items[1], "/work/envhome/.ssh");
	ck_assert_str_eq(p->protected_abs.items[2], "/srv/keys");
	ck_assert_uint_eq(p->protected_globs.n, 1);
	ck_assert_str_eq(p->protected_globs.items[0], ".env*");
	ck_assert(pt_warn(&d, "sandbox.protectedPaths[3]: duplicate of sandbox.protectedPaths[0]"));
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(too_many_roots)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	char *yaml = malloc(300 * 32 + 64);
	size_t o = (size_t)sprintf(yaml, "sandbox:\n  writableRoots:\n");

	for (int i = 0; i < 257; i++)
		o += (size_t)sprintf(yaml + o, "    - /opt/c%d\n", i);
	ck_assert_int_eq(pt_load(yaml, &p, &d), -EINVAL);
	ck_assert_msg(pt_err(&d, "sandbox.writableRoots: too many entries (257; at most 256)"),
		      "%s", pt_dump(&d));
	policy_free(p);
	policy_diags_free(&d);
	free(yaml);
}
END_TEST

START_TEST(too_many_host_ports)
{
	char yaml[1024] = "egress:\n  hostPorts: [";
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	for (int i = 0; i <= POLICY_MAX_HOST_PORTS; i++)
		snprintf(yaml + strlen(yaml), sizeof(yaml) - strlen(yaml), "%s%d", i ? ", " : "",
			 10000 + i);
	strcat(yaml, "]\n");
	ck_assert_int_eq(pt_load(yaml, &p, &d), -EINVAL);
	ck_assert_msg(pt_err(&d, "egress.hostPorts: too many entries (65; at most 64)"), "%s",
		      pt_dump(&d));
	policy_free(p);
	policy_diags_free(&d);
	/* exactly the bound is fine */
	strcpy(yaml, "egress:\n  hostPorts: [");
	for (int i = 0; i < POLICY_MAX_HOST_PORTS; i++)
		snprintf(yaml + strlen(yaml), sizeof(yaml) - strlen(yaml), "%s%d", i ? ", " : "",
			 10000 + i);
	strcat(yaml, "]\n");
	p = NULL;
	ck_assert_msg(pt_load(yaml, &p, &d) == 0, "%s", pt_dump(&d));
	ck_assert_uint_eq(p->host_ports.n, POLICY_MAX_HOST_PORTS);
	ck_assert_uint_eq(p->host_ports.items[63], 10063);
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(too_many_sockets)
{
	char yaml[4096] = "sandbox:\n  unixSockets: [";
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	for (int i = 0; i <= 64; i++)
		snprintf(yaml + strlen(yaml), sizeof(yaml) - strlen(yaml), "%s/run/s%d",
			 i ? ", " : "", i);
	strcat(yaml, "]\n");
	ck_assert_int_eq(pt_load(yaml, &p, &d), -EINVAL);
	ck_assert_msg(pt_err(&d, "sandbox.unixSockets: too many entries (65; at most 64)"), "%s",
		      pt_dump(&d));
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

/* Both home forms are what the launcher must leave reachable. */
START_TEST(sockets_in_every_home_form)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	ck_assert_int_eq(pt_load_ctx(US("~/.ssh/agent.sock, /run/x.sock"), 'y', &pt_ctx2, &p, &d),
			 0);
	ck_assert_uint_eq(p->unix_sockets_abs.n, 3);
	ck_assert_str_eq(p->unix_sockets_abs.items[0], "/home/alice/.ssh/agent.sock");
	ck_assert_str_eq(p->unix_sockets_abs.items[1], "/work/envhome/.ssh/agent.sock");
	ck_assert_str_eq(p->unix_sockets_abs.items[2], "/run/x.sock");
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

static bool fake_symlink(const char *path, char *target, size_t n)
{
	if (strcmp(path, "/opt/link") != 0 && strcmp(path, "/home/alice/cache") != 0)
		return false;
	snprintf(target, n, "%s", strcmp(path, "/opt/link") == 0 ? "/" : "/home/alice");
	return true;
}

/* A writable root that is a symlink is refused at validation, naming its target. */
START_TEST(symlinked_writable_root)
{
	struct policy_ctx ctx = pt_ctx;
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	ctx.is_symlink = fake_symlink;
	ck_assert_int_eq(pt_load_ctx(WR("/opt/link, ~/cache, /opt/real"), 'y', &ctx, &p, &d),
			 -EINVAL);
	ck_assert_msg(pt_err(&d, "sandbox.writableRoots[0]: '/opt/link' is a symlink (to '/'); "
				 "writable roots are never followed through a link: name the "
				 "directory itself"),
		      "%s", pt_dump(&d));
	ck_assert_msg(pt_err(&d, "sandbox.writableRoots[1]: '~/cache' (/home/alice/cache) is a "
				 "symlink (to '/home/alice')"),
		      "%s", pt_dump(&d));
	ck_assert_msg(d.n_errors == 2, "%s", pt_dump(&d));
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

/* A fake file system for the resolved check: /opt/ln -> /home/alice and /opt/sshln ->
 * /home/alice/.ssh; everything else resolves to itself. */
static int fake_resolve(const char *path, char *out, size_t n)
{
	static const struct {
		const char *from, *to;
	} links[] = {{"/opt/ln", "/home/alice"}, {"/opt/sshln", "/home/alice/.ssh"}};

	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		size_t k = strlen(links[i].from);
		if (strncmp(path, links[i].from, k) == 0 && (path[k] == '/' || !path[k])) {
			snprintf(out, n, "%s%s", links[i].to, path + k);
			return 0;
		}
	}
	snprintf(out, n, "%s", path);
	return 0;
}

/* A root through a linked parent directory is judged by where it leads: the link's own
 * name passed every rule, the launcher binds the directory it resolves to. */
START_TEST(writable_root_through_linked_parent)
{
	struct policy_ctx ctx = pt_ctx;
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	ctx.resolve = fake_resolve;
	ck_assert_int_eq(pt_load_ctx(WR("/opt/ln/.config, /opt/ln/.ssh/x, /opt/sshln/y, "
					"/opt/ln, /opt/ln/build"),
				     'y', &ctx, &p, &d),
			 -EINVAL);
	ck_assert_msg(pt_err(&d, "sandbox.writableRoots[0]: '/opt/ln/.config' resolves to "
				 "/home/alice/.config, which contains halo-run's policy directory"),
		      "%s", pt_dump(&d));
	ck_assert_msg(pt_err(&d,
			     "sandbox.writableRoots[1]: '/opt/ln/.ssh/x' resolves to "
			     "/home/alice/.ssh/x, which is inside the credential floor's '~/.ssh'"),
		      "%s", pt_dump(&d));
	ck_assert_msg(pt_err(&d,
			     "sandbox.writableRoots[2]: '/opt/sshln/y' resolves to "
			     "/home/alice/.ssh/y, which is inside the credential floor's '~/.ssh'"),
		      "%s", pt_dump(&d));
	ck_assert_msg(pt_err(&d, "sandbox.writableRoots[3]: '/opt/ln' resolves to /home/alice, "
				 "which is a home directory"),
		      "%s", pt_dump(&d));
	ck_assert_msg(d.n_errors == 4, "%s", pt_dump(&d)); /* /opt/ln/build is fine */
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(context_required)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	const struct policy_ctx relative = {"home/alice", NULL, NULL, NULL, NULL};

	ck_assert_int_eq(policy_parse_buffer("t.yaml", "egress: {}", 10, 'y', &p, &d), 0);
	ck_assert_int_eq(policy_finalize(p, NULL, &d), -EINVAL);
	ck_assert(pt_err(&d, "t.yaml: no usable home directory from the password database"));
	ck_assert_int_eq(policy_finalize(p, &relative, &d), -EINVAL);
	/* An unusable $HOME is ignored rather than trusted. */
	const struct policy_ctx weird = {"/home/alice", "relative/home", NULL, NULL, NULL};
	policy_diags_free(&d);
	ck_assert_int_eq(policy_finalize(p, &weird, &d), 0);
	/* Finalizing twice is harmless. */
	ck_assert_int_eq(policy_finalize(p, &pt_ctx, &d), 0);
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(hand_built_policy)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	/* Rules also hold for a struct not made by the parser. */
	ck_assert_int_eq(policy_parse_buffer("hand", "egress: {}", 10, 'y', &p, &d), 0);
	p->limits.open_files = 0;
	p->legacy_permissions_sandbox = strdup("sideways");
	ck_assert_int_eq(policy_finalize(p, &pt_ctx, &d), -EINVAL);
	ck_assert(pt_err(&d, "hand: limits.openFiles: must be a positive integer up to 1048576, "
			     "got 0"));
	ck_assert(pt_err(&d, "hand: permissions.sandbox: unknown mode 'sideways'"));
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

static Suite *validate_suite(void)
{
	Suite *s = suite_create("policy_validate");
	TCase *t = tcase_create("rules");

	tcase_add_loop_test(t, rule_table, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(t, every_error_collected);
	tcase_add_loop_test(t, effective_default, 0, (int)(sizeof(defaults) / sizeof(defaults[0])));
	tcase_add_test(t, defaults_resolved);
	tcase_add_test(t, paths_normalised);
	tcase_add_test(t, writable_root_through_linked_parent);
	tcase_add_test(t, too_many_roots);
	tcase_add_test(t, too_many_host_ports);
	tcase_add_test(t, too_many_sockets);
	tcase_add_test(t, sockets_in_every_home_form);
	tcase_add_test(t, symlinked_writable_root);
	tcase_add_test(t, context_required);
	tcase_add_test(t, hand_built_policy);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(validate_suite)
