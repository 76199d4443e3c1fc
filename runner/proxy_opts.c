/* `halo-run proxy`'s command line (its own flags; the policy, audit, events and
 * decider flags mean what they mean for a run). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit/exit.h"
#include "runner/proxy_int.h"

static const char usage[] =
    "usage: halo-run proxy [--listen ADDR:PORT | --listen unix:PATH]... [--socks ADDR:PORT |\n"
    "         --socks unix:PATH]... [--policy F]... [--audit F] [--events F]\n"
    "         [--decider CMD [--decider-timeout D]] [--allow-remote]\n"
    "         [--token-file F | --token-env VAR] [--ca-cert F] [--drain-timeout SECONDS]\n"
    "         [--quiet] [--verbose]\n"
    "Runs the egress proxy alone (no sandbox) until SIGTERM or SIGINT; SIGHUP re-reads\n"
    "the policy. Listeners also come from systemd (LISTEN_FDS; LISTEN_FDNAMES \"socks\"\n"
    "for SOCKS5). Loopback and unix sockets by default; another address needs\n"
    "--allow-remote and a token, which every client then presents (Proxy-Authorization\n"
    "Basic any-user:TOKEN, SOCKS5 username/password with TOKEN as password).\n";

void runner_proxy_usage(FILE *out)
{
	fputs(usage, out);
}

static int bad(const char *fmt, const char *arg)
{
	fprintf(stderr, "halo-run proxy: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n(halo-run proxy --help for the usage)\n");
	return HALO_EXIT_SETUP;
}

static int seconds(const char *s, unsigned *ms)
{
	char *end;
	unsigned long v;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > 3600)
		return -EINVAL;
	*ms = (unsigned)v * 1000;
	return 0;
}

/* One flag with its value (next argument or after '='). */
static int take(struct proxy_cmd_opts *p, const char *name, const char *v)
{
	struct runner_opts *o = &p->ro;

	if (strcmp(name, "--listen") == 0 || strcmp(name, "--socks") == 0) {
		if (p->n_listen >= RUNNER_PROXY_MAX_LISTEN)
			return bad("%s: too many listeners", name);
		p->listen[p->n_listen] = v;
		p->listen_socks[p->n_listen++] = name[2] == 's';
	} else if (strcmp(name, "--policy") == 0) {
		if (o->n_policies >= RUNNER_MAX_POLICIES)
			return bad("%s: too many policy files", name);
		o->policies[o->n_policies++] = v;
	} else if (strcmp(name, "--audit") == 0) {
		o->audit = v;
	} else if (strcmp(name, "--events") == 0) {
		o->events = v;
	} else if (strcmp(name, "--decider") == 0) {
		o->decider = v;
	} else if (strcmp(name, "--decider-timeout") == 0) {
		o->decider_timeout = v;
	} else if (strcmp(name, "--token-file") == 0) {
		p->token_file = v;
	} else if (strcmp(name, "--token-env") == 0) {
		p->token_env = v;
	} else if (strcmp(name, "--ca-cert") == 0) {
		p->ca_cert = v;
	} else if (strcmp(name, "--drain-timeout") == 0) {
		if (seconds(v, &p->drain_ms) < 0)
			return bad("--drain-timeout %s: a number of seconds, 0..3600", v);
	} else {
		return bad("unknown option %s", name);
	}
	return 0;
}

static const char *const with_value[] = {
    "--listen",		 "--socks",	 "--policy",	"--audit",   "--events",	"--decider",
    "--decider-timeout", "--token-file", "--token-env", "--ca-cert", "--drain-timeout",
};

static bool wants_value(const char *name)
{
	for (size_t i = 0; i < sizeof(with_value) / sizeof(with_value[0]); i++)
		if (strcmp(name, with_value[i]) == 0)
			return true;
	return false;
}

int runner_proxy_parse(int argc, char **argv, struct proxy_cmd_opts *p)
{
	memset(p, 0, sizeof(*p));
	p->drain_ms = 5000;
	for (int i = 0; i < argc; i++) {
		char name[64];
		const char *a = argv[i], *eq = strchr(a, '=');
		size_t nl = eq ? (size_t)(eq - a) : strlen(a);

		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			runner_proxy_usage(stdout);
			return -1;
		}
		if (strcmp(a, "--allow-remote") == 0) {
			p->allow_remote = true;
			continue;
		}
		if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
			p->ro.quiet = true;
			continue;
		}
		if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
			p->ro.verbose = true;
			continue;
		}
		if (nl >= sizeof(name) || strncmp(a, "--", 2) != 0)
			return bad("unexpected argument %s", a);
		memcpy(name, a, nl);
		name[nl] = '\0';
		if (!wants_value(name))
			return bad("unknown option %s", name);
		if (!eq && i + 1 >= argc)
			return bad("%s needs a value", name);
		if (take(p, name, eq ? eq + 1 : argv[++i]) != 0)
			return HALO_EXIT_SETUP;
	}
	if (p->token_file && p->token_env)
		return bad("%s", "--token-file and --token-env: give one");
	if (p->ro.decider_timeout && !p->ro.decider)
		return bad("%s", "--decider-timeout needs --decider");
	if (p->ro.events && p->ro.audit && strcmp(p->ro.events, p->ro.audit) == 0)
		return bad("%s", "--events and --audit name the same file");
	return 0;
}
