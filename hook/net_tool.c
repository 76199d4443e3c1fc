/* Toolchains whose operands name a host: go get/install/run (a module path starts
 * with its host), docker/podman pull/push/run/create/login (an image reference starts
 * with its registry), gh (github.com, or --hostname, or HOST/OWNER/REPO). Each host
 * goes through Decide() like a URL would; operands without a host (go build ./...,
 * docker run alpine) pass, and the sandbox decides where the tool then connects. */
#include <stdlib.h>
#include <string.h>

#include "hook/net_int.h"

static bool in(const char *const *l, const char *s, size_t n)
{
	for (; *l; l++)
		if (strlen(*l) == n && !strncmp(*l, s, n))
			return true;
	return false;
}

/* ---------------------------------------------------------------- go */

static const char *const go_vals[] = {
    "-C",	 "-o",	       "-modfile",  "-tags",   "-ldflags", "-gcflags",
    "-asmflags", "-p",	       "-mod",	    "-pkgdir", "-overlay", "-exec",
    "-toolexec", "-run",       "-bench",    "-count",  "-timeout", "-coverprofile",
    "-cpu",	 "-covermode", "-coverpkg", "-json",   "-reuse",   NULL};

/* A module path: its first element, when it has a dot, is the host (golang.org/x/...). */
static void go_module(struct hook_judge *j, const char *what, const struct hook_word *w)
{
	const char *t = w->text;
	size_t first = strcspn(t, "/@"), n = strlen(t);

	if (strstr(t, "://")) {
		hook_target_word(j, what, w);
		return;
	}
	if (t[0] == '.' || t[0] == '/' || !memchr(t, '.', first))
		return; /* ./..., fmt, std */
	if (!t[first] && n > 3 && !strcmp(t + n - 3, ".go"))
		return; /* go run main.go */
	hook_target(j, what, w, 0, first);
}

static void check_go(struct hook_judge *j, const struct hook_word *argv, size_t argc)
{
	size_t i = 1;

	if (i < argc && !strcmp(argv[i].text, "mod"))
		i++;
	if (i >= argc || !(in((const char *const[]){"get", "install", "run", "download", NULL},
			      argv[i].text, strlen(argv[i].text)) &&
			   (strcmp(argv[i].text, "download") || i == 2)))
		return;
	bool run = !strcmp(argv[i].text, "run");
	for (i++; i < argc && !hook_decided(j); i++) {
		const char *a = argv[i].text;
		if (a[0] == '-') {
			i += !strchr(a, '=') &&
			     in(go_vals, a[1] == '-' ? a + 1 : a, strlen(a[1] == '-' ? a + 1 : a));
			continue;
		}
		go_module(j, "go", &argv[i]);
		if (run)
			break; /* go run PKG ARGS: the rest are the program's */
	}
}

/* ---------------------------------------------------------------- docker, podman */

static const char *const docker_vals[] = {"-a",
					  "--attach",
					  "-c",
					  "--cpu-shares",
					  "-e",
					  "--env",
					  "--env-file",
					  "-h",
					  "--hostname",
					  "-l",
					  "--label",
					  "--label-file",
					  "-m",
					  "--memory",
					  "-p",
					  "--publish",
					  "-u",
					  "--user",
					  "-v",
					  "--volume",
					  "-w",
					  "--workdir",
					  "--name",
					  "--network",
					  "--net",
					  "--entrypoint",
					  "--mount",
					  "--platform",
					  "--add-host",
					  "--cpus",
					  "--restart",
					  "--pull",
					  "--gpus",
					  "--device",
					  "--cap-add",
					  "--cap-drop",
					  "--security-opt",
					  "--log-driver",
					  "--log-opt",
					  "--dns",
					  "--dns-search",
					  "--dns-option",
					  "--ulimit",
					  "--shm-size",
					  "--tmpfs",
					  "--link",
					  "--ip",
					  "--ip6",
					  "--expose",
					  "--health-cmd",
					  "--pid",
					  "--ipc",
					  "--uts",
					  "--userns",
					  "--volumes-from",
					  "--stop-signal",
					  "--stop-timeout",
					  "--runtime",
					  "--cidfile",
					  "--cgroupns",
					  "--cgroup-parent",
					  "--cpuset-cpus",
					  "--group-add",
					  "--sysctl",
					  "--annotation",
					  "--memory-swap",
					  "-f",
					  "--file",
					  "-t",
					  "--tag",
					  "--build-arg",
					  "--target",
					  "--username",
					  "--password",
					  "--config",
					  "--context",
					  "-H",
					  "--host",
					  "--log-level",
					  "--format",
					  "--filter",
					  NULL};

/* An image reference: REGISTRY/NAME when the first element has a dot or a port or is
 * localhost; otherwise Docker Hub, which is not named. */
static void image_ref(struct hook_judge *j, const char *what, const struct hook_word *w)
{
	const char *t = w->text;
	size_t first = strcspn(t, "/");

	if (!t[first])
		return;
	if (memchr(t, '.', first) || memchr(t, ':', first) ||
	    (first == 9 && !strncmp(t, "localhost", 9)))
		hook_target(j, what, w, 0, first);
}

/* Flags where docker's takes no value: -t is --tty for run but --tag for build. */
static bool docker_val(const char *sub, const char *a)
{
	size_t n = strcspn(a, "=");

	if (a[n] == '=')
		return false;
	if ((!strcmp(a, "-t") || !strcmp(a, "-i")) &&
	    (!strcmp(sub, "run") || !strcmp(sub, "create") || !strcmp(sub, "exec")))
		return false;
	return in(docker_vals, a, n);
}

static void check_docker(struct hook_judge *j, const struct hook_script *s,
			 const struct hook_cmd *cmd, const char *prog, const struct hook_word *argv,
			 size_t argc)
{
	const char *sub = NULL;
	size_t i = 1;

	for (; i < argc && !hook_decided(j); i++) { /* global options, then the subcommand */
		const char *a = argv[i].text;
		if (a[0] != '-') {
			sub = a;
			if ((!strcmp(a, "image") || !strcmp(a, "container")) && i + 1 < argc)
				sub = argv[++i].text;
			break;
		}
		size_t n = strcspn(a, "=");
		if ((n == 2 && !strncmp(a, "-H", 2)) || (n == 6 && !strncmp(a, "--host", 6))) {
			if (a[n] == '=')
				hook_url_at(j, prog, &argv[i], n + 1);
			else if (i + 1 < argc)
				hook_url_at(j, prog, &argv[++i], 0);
			continue;
		}
		i += docker_val("", a);
	}
	if (!sub || hook_decided(j))
		return;
	bool exec = !strcmp(sub, "exec");
	bool run = !strcmp(sub, "run") || !strcmp(sub, "create") || exec;
	bool image = (run && !exec) || !strcmp(sub, "pull") || !strcmp(sub, "push");
	for (i++; i < argc && !hook_decided(j); i++) {
		const char *a = argv[i].text;
		if (a[0] == '-' && a[1]) {
			i += docker_val(sub, a);
			continue;
		}
		if (image)
			image_ref(j, prog, &argv[i]);
		else if (!strcmp(sub, "login"))
			hook_url_at(j, prog, &argv[i], 0);
		else if (strstr(a, "://"))
			hook_target_word(j, prog, &argv[i]); /* docker build URL */
		if (run) {
			/* docker run IMAGE CMD, docker exec CONTAINER CMD: the daemon's
			 * container does not go through the sandbox's proxy, so its
			 * command is judged like ours */
			j->depth++;
			hook_judge_argv(j, s, cmd, argv + i + 1, argc - i - 1, false);
			j->depth--;
			return;
		}
		if (image || !strcmp(sub, "login"))
			return;
	}
}

/* ---------------------------------------------------------------- gh */

static void check_gh(struct hook_judge *j, const struct hook_word *argv, size_t argc)
{
	bool named = false;

	for (size_t i = 1; i < argc && !hook_decided(j); i++) {
		const char *a = argv[i].text;
		size_t n = strcspn(a, "=");
		if (n == 10 && !strncmp(a, "--hostname", 10)) {
			named = true;
			if (a[n] == '=')
				hook_url_at(j, "gh --hostname", &argv[i], n + 1);
			else if (i + 1 < argc)
				hook_url_at(j, "gh --hostname", &argv[++i], 0);
		} else if (strstr(a, "://")) {
			named = true;
			hook_target_word(j, "gh", &argv[i]);
		} else if (a[0] != '-' && hook_word_literal(&argv[i])) {
			/* HOST/OWNER/REPO: three elements, the first with a dot */
			const char *s1 = strchr(a, '/'), *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
			if (s2 && !strchr(s2 + 1, '/') && memchr(a, '.', (size_t)(s1 - a)) &&
			    a[0] != '.') {
				named = true;
				hook_target(j, "gh", &argv[i], 0, (size_t)(s1 - a));
			}
		}
	}
	if (!named)
		hook_target_text(j, "gh", "github.com");
}

bool hook_tool_check(struct hook_judge *j, const struct hook_script *s, const struct hook_cmd *cmd,
		     const char *base, const struct hook_word *argv, size_t argc)
{
	if (!strcmp(base, "go")) {
		check_go(j, argv, argc);
		return false; /* and the package row: -x, GOPROXY, URLs */
	}
	if (!strcmp(base, "docker") || !strcmp(base, "podman") || !strcmp(base, "nerdctl")) {
		check_docker(j, s, cmd, base, argv, argc);
		return true;
	}
	if (!strcmp(base, "gh")) {
		check_gh(j, argv, argc);
		return true;
	}
	return false;
}
