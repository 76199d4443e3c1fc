/* proxy_harness: the proxy on its own, for shell tests with real clients before the
 * sandbox integration. Loads a policy with policy_load, listens on 127.0.0.1:P (and
 * [::1]:P when the host has IPv6 loopback) for HTTP and 127.0.0.1:Q for SOCKS5, runs
 * until SIGTERM or SIGINT. Port 0 picks a free port; the ports in use are printed on
 * stdout as "ready http=P socks=Q" once the proxy accepts.
 *
 *   proxy_harness --policy F --http-port P --socks-port Q [--audit FILE] [--poll]
 *                 [--quiet] [--idle-ms N] [--head-ms N] [--summary] [--ca-out FILE]
 * A policy with credentials or requestRules gets the run's TLS termination, its
 * variables from this environment; --ca-out writes the CA certificate (PEM) there.
 *
 * Denial lines and the summary go to stderr. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "policy/policy.h"
#include "proxy/proxy.h"

static int sigpipe_w = -1;

static void on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;
	ssize_t w = write(sigpipe_w, &c, 1);

	(void)w;
	errno = saved;
}

static void on_sigpipe_r(void *arg, int fd, unsigned events)
{
	char buf[16];

	(void)events;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	*(volatile bool *)arg = true;
}

/* Listen on ip:*port (0 = any free port; *port gets the one chosen). -1 on failure. */
static int listen_on(const char *ip, int *port)
{
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	int one = 1, fd;

	if (strchr(ip, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)*port);
		inet_pton(AF_INET6, ip, &s6->sin6_addr);
		sl = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)*port);
		inet_pton(AF_INET, ip, &s4->sin_addr);
		sl = sizeof(*s4);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, 1024) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					      : ((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

static void usage(void)
{
	fprintf(stderr, "usage: proxy_harness --policy F --http-port P --socks-port Q "
			"[--audit FILE] [--poll] [--quiet] [--idle-ms N] [--head-ms N] "
			"[--summary]\n");
	exit(2);
}

struct args {
	const char *policy, *audit, *ca_out;
	int http_port, socks_port;
	bool poll, quiet, summary;
	unsigned idle_ms, head_ms;
};

static void parse_args(int argc, char **argv, struct args *a)
{
	for (int i = 1; i < argc; i++) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(k, "--poll"))
			a->poll = true;
		else if (!strcmp(k, "--quiet"))
			a->quiet = true;
		else if (!strcmp(k, "--summary"))
			a->summary = true;
		else if (!v)
			usage();
		else if (!strcmp(k, "--policy"))
			a->policy = v, i++;
		else if (!strcmp(k, "--ca-out"))
			a->ca_out = v, i++;
		else if (!strcmp(k, "--audit"))
			a->audit = v, i++;
		else if (!strcmp(k, "--http-port"))
			a->http_port = atoi(v), i++;
		else if (!strcmp(k, "--socks-port"))
			a->socks_port = atoi(v), i++;
		else if (!strcmp(k, "--idle-ms"))
			a->idle_ms = (unsigned)atoi(v), i++;
		else if (!strcmp(k, "--head-ms"))
			a->head_ms = (unsigned)atoi(v), i++;
		else
			usage();
	}
	if (!a->policy || a->http_port < 0 || a->socks_port < 0)
		usage();
}

static struct halo_policy *load(const char *path)
{
	const struct passwd *pw = getpwuid(getuid());
	char cwd[4096];
	struct policy_ctx ctx = {
	    .pw_home = pw ? pw->pw_dir : "/",
	    .env_home = getenv("HOME"),
	    .workspace = getcwd(cwd, sizeof(cwd)),
	};
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	const char *paths[] = {path};

	if (policy_load(paths, 1, &ctx, &p, &d) != 0) {
		for (size_t i = 0; i < d.n_errors; i++)
			fprintf(stderr, "proxy_harness: %s\n", d.errors[i]);
		exit(2);
	}
	policy_diags_free(&d);
	return p;
}

static const char *env_lookup(void *arg, const char *name)
{
	(void)arg;
	return getenv(name);
}

static int start_tls(struct proxy_options *o, const char *ca_out)
{
	struct halo_err e = {{0}};
	char *pem = NULL;
	size_t n = 0;
	FILE *f;

	if (proxy_tls_new(o->policy, env_lookup, NULL, &o->tls, &e) != 0 ||
	    proxy_tls_ca_pem(o->tls, &pem, &n, &e) != 0) {
		fprintf(stderr, "proxy_harness: %s\n", e.msg);
		return 1;
	}
	if (ca_out && (!(f = fopen(ca_out, "w")) || fwrite(pem, 1, n, f) != n || fclose(f))) {
		fprintf(stderr, "proxy_harness: %s: cannot write\n", ca_out);
		return 1;
	}
	free(pem);
	return 0;
}

int main(int argc, char **argv)
{
	struct args a = {0};
	struct proxy_options o = {0};
	struct proxy_poller *pl = NULL;
	struct proxy *px = NULL;
	struct halo_err e = {{0}};
	struct halo_policy *p;
	volatile bool stop = false;
	int sp[2], http_port, fd, rc;

	parse_args(argc, argv, &a);
	p = load(a.policy);
	o.policy = p;
	o.log_fd = 2;
	o.quiet = a.quiet;
	o.idle_timeout_ms = a.idle_ms;
	o.head_timeout_ms = a.head_ms;
	o.audit_fd = a.audit ? open(a.audit, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) : -1;
	if (a.audit && o.audit_fd < 0) {
		fprintf(stderr, "proxy_harness: %s: %s\n", a.audit, strerror(errno));
		return 2;
	}
	http_port = a.http_port;
	fd = listen_on("127.0.0.1", &http_port);
	if (fd >= 0) {
		o.listeners[o.n_listeners++] =
		    (struct proxy_listener){.fd = fd, .kind = PROXY_LISTEN_HTTP};
		fd = listen_on("127.0.0.1", &a.socks_port);
	}
	if (fd < 0) {
		fprintf(stderr, "proxy_harness: cannot listen: %s\n", strerror(errno));
		return 2;
	}
	o.listeners[o.n_listeners++] =
	    (struct proxy_listener){.fd = fd, .kind = PROXY_LISTEN_SOCKS5};
	fd = listen_on("::1", &http_port); /* optional: no IPv6 loopback is fine */
	if (fd >= 0)
		o.listeners[o.n_listeners++] =
		    (struct proxy_listener){.fd = fd, .kind = PROXY_LISTEN_HTTP};

	/* As the supervisor runs it (runner/loop.c): SIGPIPE ignored before the proxy. */
	signal(SIGPIPE, SIG_IGN);
	o.sigpipe_ignored = true;
	if (policy_tls_wanted(p) && start_tls(&o, a.ca_out) != 0)
		return 1;
	rc = proxy_poller_new(a.poll ? PROXY_POLLER_POLL : proxy_poller_default_backend(), &pl);
	if (rc == 0)
		rc = proxy_create(pl, &o, &px, &e);
	if (rc != 0 || pipe(sp) != 0) {
		fprintf(stderr, "proxy_harness: %s\n", e.msg[0] ? e.msg : strerror(-rc));
		return 1;
	}
	fcntl(sp[0], F_SETFL, O_NONBLOCK);
	fcntl(sp[1], F_SETFL, O_NONBLOCK);
	sigpipe_w = sp[1];
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	proxy_poller_add(pl, sp[0], PROXY_EV_IN, on_sigpipe_r, (void *)&stop);
	printf("ready http=%d socks=%d\n", http_port, a.socks_port);
	fflush(stdout);
	rc = proxy_poller_run(pl, &stop);
	if (a.summary)
		proxy_summary(px, stderr);
	proxy_poller_del(pl, sp[0]);
	proxy_destroy(px);
	proxy_poller_free(pl);
	proxy_tls_free(o.tls);
	policy_free(p);
	return rc == 0 ? 0 : 1;
}
