/* Command line: subcommands and options, as tables. */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/auxv.h>
#endif
#include <unistd.h>

#include "macos/macos.h"
#include "runner/proxy_cmd.h"
#include "runner/runner_int.h"

#ifndef HALO_VERSION
#define HALO_VERSION "0.1.0"
#endif

void runner_usage(FILE *out)
{
	char render[200], import[200], hook[200], wrap[200];

	/* Every harness name from its one table (policy/harness.c). */
	policy_harness_names(POLICY_HARNESS_RENDER, render, sizeof(render));
	policy_harness_names(POLICY_HARNESS_IMPORT, import, sizeof(import));
	policy_harness_names(POLICY_HARNESS_HOOK, hook, sizeof(hook));
	policy_harness_names(POLICY_HARNESS_WRAP, wrap, sizeof(wrap));
	/* The exit codes from their one home, exit/exit.h. */
	fprintf(
	    out,
	    "usage: halo-run [OPTIONS] [--] CMD [ARGS...]    run CMD in the sandbox\n"
	    "       halo-run check [--policy F]... [--resolve] [--harness NAME|all] TARGET\n"
	    "                                                 decide a host, host:port or URL\n"
	    "       halo-run validate F...                    check policy files\n"
	    "       halo-run policy [--policy F]... [--json]  print the effective policy\n"
	    "       halo-run policy render --harness NAME [--os linux|macos|windows]\n"
	    "                [--policy F]... [--out DIR] [--version V] [--hook]\n"
	    "                [--proxy PORT[,SOCKSPORT]]       the harness's managed settings;\n"
	    "                                                 --proxy: its sandbox's proxy ports\n"
	    "       halo-run policy import FILE [--from KIND] [--lossy]   KIND: %s\n"
	    "                                                 a harness's settings as a policy\n"
	    "       halo-run doctor [--policy F]... [--json]  what this machine enforces, and "
	    "fixes\n"
	    "       halo-run verify [--policy F]... [--workspace DIR] [--json]\n"
	    "                                                 try escapes from inside the sandbox, "
	    "and read\n"
	    "                                                 the workspace's protected files from "
	    "inside\n"
	    "       halo-run cache [list | path | clear [TOOL...]]  the sandbox's own tool caches\n"
	    "       halo-run hook [--policy F]... [--harness H] [--wrap]  judge one agent tool "
	    "event (stdin);\n"
	    "                                                exit 0 allow, 2 block; --wrap: "
	    "answer a shell\n"
	    "                                                call with it run in a session\n"
	    "       halo-sh [-c CMD [ARG0 ARGS...]]           /bin/sh in the sandbox (a link)\n"
	    "       halo-bash [-c CMD [ARG0 ARGS...]]         /bin/bash in the sandbox (a link)\n"
	    "       halo-run connect HOST PORT                inside the sandbox: a tunnel on "
	    "stdio\n"
	    "                                                 (ssh's ProxyCommand)\n"
	    "       halo-run profile --os macos [--policy F]... print the macOS Seatbelt profile\n"
	    "       halo-run [OPTIONS] --session NAME -- CMD  run CMD in the named session\n"
	    "                                                 (started by its first call)\n"
	    "       halo-run session [list | stop NAME...]    the sessions of this user\n"
	    "       halo-run index [list | stop [TREE...] | clear [TREE...]]\n"
	    "                                                 the workspace index and its "
	    "watchers\n"
	    "       halo-run learn [--policy F]... [--out FILE] [--session NAME] [--wildcards] -- "
	    "CMD\n"
	    "                                                 run CMD allowing and recording what "
	    "the\n"
	    "                                                 default denies; print the policy it "
	    "needs\n"
	    "       halo-run report FILE.jsonl [--format text|markdown|json] [--fail-on-deny]\n"
	    "                                                 the audit, per host\n"
	    "       halo-run proxy [--listen ADDR:PORT|unix:PATH]... [--socks ADDR:PORT]...\n"
	    "                [--policy F]... [--audit F] [--events F] [--decider CMD]\n"
	    "                [--allow-remote --token-file F|--token-env VAR]\n"
	    "                                                 the egress proxy alone, no sandbox\n"
	    "                                                 (halo-run proxy --help)\n"
	    "\n"
	    "options:\n"
	    "  --policy F        policy file (JSON or YAML); repeat to layer\n"
	    "  --workspace DIR   the writable workspace (default: the current directory)\n"
	    "  --allow HOST[:PORT]  --writable DIR  --env NAME[=VALUE]  --host-port PORT\n"
	    "                    one-off additions over every policy file (each repeatable,\n"
	    "                    validated like a file, each loosening said on stderr)\n"
	    "  --mode MODE       sandbox.mode over every policy file: read-only,\n"
	    "                    workspace-write or off (a loosening is said on stderr)\n"
	    "  --limit K=V,...   cpu=DUR mem=SIZE fsize=SIZE nofile=N nproc=N wall=DUR; may only\n"
	    "                    tighten the policy's limits (%d when a value loosens one)\n"
	    "  --timeout D       wall-clock limit (90, 1m, 1h30m); exit %d when it is hit\n"
	    "  --dry-run         print the sandbox plan and exit\n"
	    "  --audit FILE      append one JSON line per egress decision to FILE\n"
	    "  --summary-md F    append this run's egress report (markdown) to F at exit;\n"
	    "                    needs --audit\n"
	    "  --fail-on-deny    exit %d when the command exited 0 but egress was denied\n"
	    "  --events FILE     JSON Lines of this run's events (start, egress, limit, fs,\n"
	    "                    exit) appended to FILE, or fd:N for an open descriptor\n"
	    "  --decider CMD     ask CMD (run with /bin/sh -c, outside the sandbox) about\n"
	    "                    hosts no rule matches: JSON lines on its stdin and stdout\n"
	    "  --decider-timeout D  how long a question waits (default 5s), then the default\n"
	    "  --die-with-parent the sandbox is killed when halo-run's parent dies\n"
	    "  --session NAME    run in the named session: one sandbox (/tmp, loopback,\n"
	    "                    background processes) kept across calls; the first call\n"
	    "                    starts it, idle for limits.sessionIdleSeconds ends it\n"
	    "  --quiet           no warnings and no egress-denied lines on stderr\n"
	    "  --verbose         the caches' place and the home note at the start, an egress\n"
	    "                    summary table at exit (a run that went as planned is silent)\n"
	    "  --json            JSON output (policy, doctor, verify, --dry-run)\n"
	    "  --harness NAME    %s\n"
	    "                    (hook: %s; hook --wrap and render --hook: %s)\n"
	    "  -X, --method M    check URL: judge the request METHOD URL by egress.requestRules\n"
	    "  --resolve         check: look the name up and judge its addresses as the proxy\n"
	    "  -h, --help        this help;  --version  the version\n"
	    "\n"
	    "exit: the command's status, 128+N if it died of signal N; %d timeout,\n"
	    "%d policy/usage/sandbox error, %d not executable, %d not found;\n"
	    "%d with --fail-on-deny.\n",
	    import, HALO_EXIT_SETUP, HALO_EXIT_TIMEOUT, HALO_EXIT_DENIED, render, hook, wrap,
	    HALO_EXIT_TIMEOUT, HALO_EXIT_SETUP, HALO_EXIT_NOEXEC, HALO_EXIT_NOTFOUND,
	    HALO_EXIT_DENIED);
}

enum opt_kind { OPT_FLAG, OPT_VALUE };

struct opt_row {
	const char *name;
	enum opt_kind kind;
	size_t off; /* offsetof the bool or const char* in runner_opts */
};

#define FLAG(n, f)                                                                                 \
	{                                                                                          \
		n, OPT_FLAG, offsetof(struct runner_opts, f)                                       \
	}
#define VALUE(n, f)                                                                                \
	{                                                                                          \
		n, OPT_VALUE, offsetof(struct runner_opts, f)                                      \
	}

/* clang-format off */
static const struct opt_row opt_table[] = {
    VALUE("--workspace", workspace), VALUE("--limit", limit_spec), VALUE("--timeout", timeout),
    VALUE("--mode", mode),
    VALUE("--audit", audit),	     FLAG("--dry-run", dry_run),   FLAG("--quiet", quiet),
    FLAG("--verbose", verbose),	     FLAG("--json", json),	   VALUE("--os", os),
    FLAG("--resolve", resolve),	     VALUE("--harness", harness),  VALUE("--out", out_dir),
    VALUE("--version", pin),	     VALUE("--from", from),	   FLAG("--lossy", lossy),
    VALUE("--format", format),	     VALUE("--summary-md", summary_md),
    FLAG("--fail-on-deny", fail_on_deny),
    VALUE("--events", events),		     VALUE("--decider", decider),
    VALUE("--decider-timeout", decider_timeout), FLAG("--die-with-parent", die_with_parent),
    VALUE("--session", session),	     FLAG("--wrap", wrap),	   FLAG("--hook", render_hook),
    VALUE("--method", method),	     VALUE("-X", method),	   FLAG("--wildcards", wildcards),
    VALUE("--proxy", render_proxy),
};
/* clang-format on */

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "halo-run: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'halo-run --help'.\n");
	return HALO_EXIT_SETUP;
}

/* Accept "--opt VALUE" and "--opt=VALUE". Returns the number of argv words used. */
static int take_value(int argc, char **argv, int i, const char *name, const char **out)
{
	size_t n = strlen(name);

	if (argv[i][n] == '=') {
		*out = argv[i] + n + 1;
		return 1;
	}
	if (i + 1 >= argc)
		return -1;
	*out = argv[i + 1];
	return 2;
}

/* Repeatable flags: each use adds one value (the one-off policy layer). */
static const struct {
	const char *name;
	size_t off;
} multi_table[] = {
    {"--allow", offsetof(struct runner_opts, allow)},
    {"--writable", offsetof(struct runner_opts, writable)},
    {"--env", offsetof(struct runner_opts, env)},
    {"--host-port", offsetof(struct runner_opts, host_port)},
};

/* 0 when argv[i] is not one of them, else -(words used) or a usage error (> 0). */
static int parse_multi(int argc, char **argv, int i, struct runner_opts *o)
{
	for (size_t k = 0; k < sizeof(multi_table) / sizeof(multi_table[0]); k++) {
		const char *name = multi_table[k].name, *v = NULL;
		struct runner_multi *m = (struct runner_multi *)((char *)o + multi_table[k].off);
		size_t n = strlen(name);
		int used;
		if (strncmp(argv[i], name, n) != 0 || (argv[i][n] && argv[i][n] != '='))
			continue;
		if ((used = take_value(argc, argv, i, name, &v)) < 0 || !*v)
			return usage_error("%s needs a value", name);
		if (m->n == RUNNER_MAX_ONEOFF)
			return usage_error("%s given too many times (at most 64)", name);
		m->v[m->n++] = v;
		return -used;
	}
	return 0;
}

static int parse_one(int argc, char **argv, int i, struct runner_opts *o)
{
	const char *v = NULL;
	int used;

	if ((used = parse_multi(argc, argv, i, o)) != 0)
		return used;
	if (strncmp(argv[i], "--policy", 8) == 0 && (argv[i][8] == 0 || argv[i][8] == '=')) {
		if ((used = take_value(argc, argv, i, "--policy", &v)) < 0)
			return usage_error("%s needs a file", argv[i]);
		if (o->n_policies == RUNNER_MAX_POLICIES)
			return usage_error("too many --policy files (at most %s)", "16");
		o->policies[o->n_policies++] = v;
		return -used;
	}
	for (size_t k = 0; k < sizeof(opt_table) / sizeof(opt_table[0]); k++) {
		const struct opt_row *r = &opt_table[k];
		size_t n = strlen(r->name);
		if (strncmp(argv[i], r->name, n) != 0 || (argv[i][n] && argv[i][n] != '='))
			continue;
		if (r->kind == OPT_FLAG) {
			if (argv[i][n] == '=')
				return usage_error("%s takes no value", r->name);
			*(bool *)((char *)o + r->off) = true;
			return -1;
		}
		if ((used = take_value(argc, argv, i, r->name, &v)) < 0)
			return usage_error("%s needs a value", r->name);
		if (!*v)
			return usage_error("%s needs a non-empty value", r->name);
		*(const char **)((char *)o + r->off) = v;
		return -used;
	}
	return usage_error("unknown option '%s'", argv[i]);
}

int runner_parse(int argc, char **argv, bool stop_at_command, struct runner_opts *o)
{
	int i = 0;

	while (i < argc) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (argv[i][0] != '-' || argv[i][1] == 0) {
			if (stop_at_command)
				break;
			/* Operands and options may mix for the subcommands. */
			argv[o->n_rest++] = argv[i++];
			continue;
		}
		int r = parse_one(argc, argv, i, o);
		if (r > 0)
			return r;
		i += -r;
	}
	if (stop_at_command) {
		o->rest = argv + i;
		o->n_rest = argc - i;
	} else {
		while (i < argc)
			argv[o->n_rest++] = argv[i++];
		o->rest = argv;
	}
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(const struct runner_opts *o);
} commands[] = {
    {"check", runner_cmd_check},
    {"validate", runner_cmd_validate},
    {"policy", runner_cmd_policy},
    {"doctor", runner_cmd_doctor},
    {"verify", runner_cmd_verify},
    {"__probe", runner_cmd_probe}, /* internal: verify's probe runner */
    {"profile", runner_cmd_profile},
    {"cache", runner_cmd_cache},
    {"index", runner_cmd_index},
    {"session", runner_cmd_session},
    {"report", runner_cmd_report},
    {"hook", runner_cmd_hook},
    {"connect", runner_cmd_connect},		    /* inside the sandbox: ssh's ProxyCommand */
    {MACOS_EXEC_CHILD_WORD, runner_cmd_exec_child}, /* internal: the macOS trampoline */
};

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} own_line[] = {
    {"proxy", runner_cmd_proxy}, /* runner/proxy_cmd.c: the proxy alone, no sandbox */
};
#ifdef RUNNER_MACOS
/* Linux only for now (signalfd, the state file): said, not a usage error. */
int runner_cmd_proxy(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "halo-run proxy: not available on this system yet\n");
	return HALO_EXIT_SETUP;
}
#endif

/* 0, 1 and 2 are always taken, by /dev/null where the caller closed them: otherwise
 * the first descriptors halo-run opens would get those numbers, and with them what is
 * meant for the command's stdio, or the sandbox's init would take its own for stdio
 * (its creation broker's listener, gone with init's stdio: every guarded creation
 * failed with ENOSYS). One poll asks for all three. */
static void stdio_taken(void)
{
	struct pollfd p[3] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}};

	if (poll(p, 3, 0) <= 0)
		return;
	for (int i = 0; i < 3; i++)
		if (p[i].revents & POLLNVAL)
			(void)open("/dev/null", i == 0 ? O_RDONLY : O_WRONLY); /* the lowest: i */
}

/* A setuid or file-capability halo-run would hand its privilege to whoever runs it. */
static int refuse_privileged_binary(void)
{
#ifdef __linux__
	bool secure = getauxval(AT_SECURE) != 0; /* setuid, setgid or file capabilities */
#else
	bool secure = issetugid() != 0;
#endif
#ifdef __linux__
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	if (!secure && getresuid(&ru, &eu, &su) == 0 && getresgid(&rg, &eg, &sg) == 0 && ru == eu &&
	    rg == eg)
		return 0;
#else
	if (!secure && getuid() == geteuid() && getgid() == getegid())
		return 0;
#endif
	fprintf(stderr, "halo-run: refusing to run setuid, setgid or with file capabilities; "
			"install it as a plain 0755 binary\n");
	return HALO_EXIT_SETUP;
}

static pid_t parent_at_start;

/* Recorded before anything else runs (a constructor: before main, before the dynamic
 * work of option parsing), so that the window in which a parent can die unseen is the
 * exec itself. Only the parent's pid: every launch pays for this. */
__attribute__((constructor)) static void record_parent(void)
{
	parent_at_start = getppid();
}

pid_t runner_parent_at_start(void)
{
	return parent_at_start;
}

/* Asked by --die-with-parent only, after it has checked that getppid() is still the
 * parent recorded above: the lineage a fork left (runner/lineage.c) is then what it
 * was at the start, so a parent that died even before the constructor (halo-run
 * adopted by a reaper) is told the same way. */
bool runner_adopted_at_start(void)
{
	struct runner_lineage l;

	runner_lineage_read(&l);
	return runner_lineage_adopted(&l);
}

int runner_main(int argc, char **argv)
{
	struct runner_opts o = {0};
	int rc;

	stdio_taken();
	if ((rc = refuse_privileged_binary()) != 0)
		return rc;
	if (runner_is_shell(argv[0]))
		return runner_shell_main(argc, argv);
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		runner_usage(stdout);
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
		printf("halo-run %s\n", HALO_VERSION);
		return 0;
	}
	/* Subcommands with a command line of their own. */
	for (size_t k = 0; argc >= 2 && k < sizeof(own_line) / sizeof(own_line[0]); k++)
		if (strcmp(argv[1], own_line[k].name) == 0)
			return own_line[k].fn(argc - 2, argv + 2);
	for (size_t k = 0; argc >= 2 && k < sizeof(commands) / sizeof(commands[0]); k++)
		if (strcmp(argv[1], commands[k].name) == 0) {
			if ((rc = runner_parse(argc - 2, argv + 2, false, &o)) != 0)
				return rc;
			return commands[k].fn(&o);
		}
	/* learn takes a command like a run: options stop at the command's first word */
	if (argc >= 2 && strcmp(argv[1], "learn") == 0) {
		if ((rc = runner_parse(argc - 2, argv + 2, true, &o)) != 0)
			return rc;
		o.learn = true;
		return runner_cmd_learn(&o);
	}
	if ((rc = runner_parse(argc - 1, argv + 1, true, &o)) != 0)
		return rc;
	if (o.n_rest == 0)
		return usage_error("%s", "no command given (halo-run [OPTIONS] -- CMD [ARGS...])");
	/* A run always has its own proxy; taking the word for "use that proxy" would run
	 * the command otherwise than its caller meant. */
	if (o.render_proxy)
		return usage_error("%s", "--proxy is for policy render (a harness's proxy ports); "
					 "a run uses its own proxy");
	return runner_cmd_run(&o);
}
