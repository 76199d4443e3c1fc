/* `halo-run proxy`: the egress proxy of a run (proxy/: Decide, the private-address
 * refusal, the SNI check, credentials and request rules, the upstream, the audit and
 * events) alone in the foreground, for sandboxes that are not halo-run's (a harness's
 * own, containers, CI runners). Listeners from flags or systemd; loopback or a 0600
 * unix socket unless --allow-remote with a token. SIGHUP re-reads the policy (a policy
 * that does not validate is refused, the old one stays); SIGTERM/SIGINT stop
 * accepting, drain open tunnels for --drain-timeout, then close what is left. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proxy/proxy.h"
#include "events/events.h"
#include "exit/exit.h"
#include "runner/proxy_int.h"
#include "trust/trust.h"

#define MAX_FDS RUNNER_PROXY_MAX_LISTEN
/* The first policy (the TLS termination and the upstream keep pointers into it; a
 * reload may not change what they use: runner_proxy_policy_swappable) and the one in
 * force. The proxy decides with the one in force at each step and keeps no pointer
 * into another, so the one a reload replaces is freed then: reloads are unbounded. */
#define MAX_POLICIES 2

struct lsn {
	int fd;
	bool socks, local;
	char text[160];
	char unix_path[RUNNER_UNIX_PATH_MAX]; /* ours to remove at exit */
	struct stat unix_st;
};

struct pcmd {
	struct proxy_cmd_opts op;
	struct runner_env re;
	struct halo_policy *policies[MAX_POLICIES];
	size_t n_policies;
	struct lsn l[2 * MAX_FDS];
	size_t n_l;
	char token[RUNNER_PROXY_TOKEN_MAX + 1];
	bool have_token;
	struct proxy_tls *tls;
	struct proxy_poller *pl;
	struct proxy *px;
	struct runner_decider *dc;
	struct runner_events ev;
	int audit_fd, sig_fd;
	struct stat audit_st;
	char state_path[4300];
	volatile bool stop;
	int stop_sig;
};

static int say_err(const char *what, const struct halo_err *e)
{
	fprintf(stderr, "halo-run proxy: %s%s%s\n", what ? what : "", what ? ": " : "", e->msg);
	return HALO_EXIT_SETUP;
}

/* Who may use a listener: loopback and unix sockets by default; any other address
 * needs --allow-remote and a token. */
static int admit(struct pcmd *s, const struct lsn *l)
{
	if (l->local)
		return 0;
	if (!s->op.allow_remote) {
		fprintf(stderr,
			"halo-run proxy: %s is not a loopback address: anyone who can reach it "
			"could use the proxy; pass --allow-remote with --token-file or "
			"--token-env to accept clients there\n",
			l->text);
		return HALO_EXIT_SETUP;
	}
	if (!s->have_token) {
		fprintf(stderr,
			"halo-run proxy: %s: --allow-remote needs a client token (--token-file F "
			"or --token-env VAR)\n",
			l->text);
		return HALO_EXIT_SETUP;
	}
	return 0;
}

/* systemd socket activation: the fds 3.. it passed, then the variables unset (as
 * sd_listen_fds(1) does) so that nothing started later takes them for its own. */
static int inherit(struct pcmd *s)
{
	struct halo_err e = {{0}};
	const char *names = getenv("LISTEN_FDNAMES");
	int n, rc;

	if (runner_listen_fds_parse(getenv("LISTEN_PID"), getenv("LISTEN_FDS"), getpid(), MAX_FDS,
				    &n, &e) < 0)
		return say_err("socket activation", &e);
	for (int i = 0; i < n; i++) {
		struct lsn *l = &s->l[s->n_l];
		int fd = 3 + i;

		if (runner_listen_describe(fd, l->text, sizeof(l->text), &l->local, &e) < 0)
			return say_err("socket activation", &e);
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		l->fd = fd;
		l->socks = runner_listen_fd_is_socks(names, i);
		s->n_l++;
		if ((rc = admit(s, l)) != 0)
			return rc;
	}
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return 0;
}

static int open_flags(struct pcmd *s)
{
	struct halo_err e = {{0}};
	int rc;

	for (size_t i = 0; i < s->op.n_listen; i++) {
		struct runner_listen_addr a;
		struct lsn *l = &s->l[s->n_l];
		const char *opt = s->op.listen_socks[i] ? "--socks" : "--listen";

		if (runner_listen_parse(s->op.listen[i], &a, &e) < 0) {
			fprintf(stderr, "halo-run proxy: %s %s\n", opt, e.msg);
			return HALO_EXIT_SETUP;
		}
		l->local = a.is_unix || a.loopback;
		l->socks = s->op.listen_socks[i];
		runner_listen_text(&a, l->text, sizeof(l->text));
		if ((rc = admit(s, l)) != 0)
			return rc;
		if ((l->fd = runner_listen_open(&a, &e)) < 0)
			return say_err(opt, &e);
		s->n_l++;
		if (a.is_unix) {
			snprintf(l->unix_path, sizeof(l->unix_path), "%s", a.path);
			if (lstat(a.path, &l->unix_st) < 0)
				memset(&l->unix_st, 0, sizeof(l->unix_st));
		} else {
			bool local;
			runner_listen_describe(l->fd, l->text, sizeof(l->text), &local, &e);
		}
	}
	return 0;
}

static const char *caller_env(void *arg, const char *name)
{
	(void)arg;
	return getenv(name);
}

/* Hosts with credentials or request rules have their TLS terminated with a CA made
 * now; clients trust it through --ca-cert's file. */
static int setup_tls(struct pcmd *s)
{
	struct halo_err e = {{0}};
	char *pem = NULL;
	size_t len = 0;
	int fd, rc;

	if (!policy_tls_wanted(s->policies[0]))
		return 0;
	if (proxy_tls_new(s->policies[0], caller_env, NULL, &s->tls, &e) < 0)
		return say_err("TLS termination", &e);
	if (!s->op.ca_cert) {
		if (!s->op.ro.quiet)
			fprintf(stderr, "halo-run proxy: note: hosts with credentials or request "
					"rules get certificates from a CA made now; write it with "
					"--ca-cert F for clients to trust\n");
		return 0;
	}
	if (proxy_tls_ca_pem(s->tls, &pem, &len, &e) < 0)
		return say_err("--ca-cert", &e);
	fd = open(s->op.ca_cert, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	rc = fd >= 0 && write(fd, pem, len) == (ssize_t)len ? 0 : -1;
	if (fd >= 0)
		close(fd);
	free(pem);
	if (rc < 0) {
		fprintf(stderr, "halo-run proxy: --ca-cert %s: %s\n", s->op.ca_cert,
			strerror(errno));
		return HALO_EXIT_SETUP;
	}
	return 0;
}

static void reload(struct pcmd *s)
{
	struct runner_env re;
	struct halo_err e = {{0}};
	const struct halo_policy *cur = s->policies[s->n_policies - 1];

	fprintf(stderr, "halo-run proxy: SIGHUP: re-reading the policy\n");
	if (runner_load_policy(&s->op.ro, false, &re) != 0) {
		halo_err_set(&e, "the policy files do not validate (said above)");
	} else if (runner_proxy_policy_fits(re.policy, false, &e) < 0 ||
		   runner_proxy_policy_swappable(cur, re.policy, s->tls != NULL, &e) < 0) {
		runner_env_release(&re);
	} else {
		proxy_set_policy(s->px, re.policy);
		if (s->n_policies == MAX_POLICIES) /* no longer in force, nor referenced */
			policy_free(s->policies[--s->n_policies]);
		s->policies[s->n_policies++] = re.policy;
		runner_events_reload(&s->ev, re.policy, NULL);
		fprintf(stderr, "halo-run proxy: SIGHUP: the new policy is in force for new "
				"connections (open tunnels keep their decision)\n");
		return;
	}
	runner_events_reload(&s->ev, NULL, e.msg);
	fprintf(stderr, "halo-run proxy: SIGHUP: refused: %s; the previous policy stays in force\n",
		e.msg);
}

static void on_signal(void *arg, int fd, unsigned events)
{
	struct pcmd *s = arg;
	struct signalfd_siginfo si;

	(void)events;
	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			reload(s);
		} else {
			s->stop = true;
			s->stop_sig = (int)si.ssi_signo;
		}
	}
}

static int start_signals(struct pcmd *s)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 ||
	    (s->sig_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
		return -errno;
	return proxy_poller_add(s->pl, s->sig_fd, PROXY_EV_IN, on_signal, s);
}

static int start_proxy(struct pcmd *s)
{
	struct proxy_options po;
	struct halo_err e = {{0}};
	int rc;

	memset(&po, 0, sizeof(po));
	for (size_t i = 0; i < s->n_l; i++) {
		po.listeners[i].fd = s->l[i].fd;
		po.listeners[i].kind = s->l[i].socks ? PROXY_LISTEN_SOCKS5 : PROXY_LISTEN_HTTP;
		po.listeners[i].secret = s->have_token ? s->token : NULL;
	}
	po.n_listeners = s->n_l;
	po.policy = s->policies[0];
	po.audit_fd = s->audit_fd;
	po.events_fd = s->ev.fd;
	po.events_lost = &s->ev.lost;
	po.session = "";
	po.log_fd = STDERR_FILENO;
	po.quiet = s->op.ro.quiet;
	po.audit_peers = true;
	po.head_from_accept = true; /* a silent client holds no slot for good */
	po.upstream = runner_upstream();
	po.upstream_addrs = runner_upstream_addrs(&po.n_upstream_addrs);
	po.sigpipe_ignored = true; /* runner_supervisor_settings() */
	po.tls = s->tls;
	if (s->op.ro.decider &&
	    (rc = runner_decider_start(&s->op.ro, s->pl, s->ev.fd, "", &s->dc, &e)) < 0)
		return say_err("--decider", &e);
	if (s->dc)
		runner_decider_options(s->dc, &po);
	if ((rc = proxy_create(s->pl, &po, &s->px, &e)) < 0)
		return say_err(NULL, &e);
	for (size_t i = 0; i < s->n_l; i++)
		s->l[i].fd = -1; /* the proxy's now */
	return 0;
}

static void announce(struct pcmd *s)
{
	char *lines[2 * MAX_FDS];
	char buf[2 * MAX_FDS][180];

	for (size_t i = 0; i < s->n_l; i++) {
		snprintf(buf[i], sizeof(buf[i]), "%s %s", s->l[i].socks ? "socks5" : "http",
			 s->l[i].text);
		lines[i] = buf[i];
		fprintf(stderr, "halo-run proxy: listening on %s%s\n", buf[i],
			s->have_token ? " (token required)" : "");
	}
	fflush(stderr);
	runner_proxy_state_write(lines, s->n_l, s->state_path, sizeof(s->state_path));
}

/* Stop accepting, remove our socket files and state, drain, close the rest. */
static int shut_down(struct pcmd *s)
{
	struct proxy_stats st = {0};
	struct halo_err e = {{0}};
	int rc = 0;

	proxy_close_listeners(s->px);
	for (size_t i = 0; i < s->n_l; i++) {
		struct stat now;
		if (s->l[i].unix_path[0] && lstat(s->l[i].unix_path, &now) == 0 &&
		    now.st_ino == s->l[i].unix_st.st_ino && now.st_dev == s->l[i].unix_st.st_dev)
			unlink(s->l[i].unix_path);
	}
	runner_proxy_state_remove(s->state_path);
	proxy_drain(s->px, s->op.drain_ms);
	if (s->op.ro.verbose)
		proxy_summary(s->px, stderr);
	proxy_get_stats(s->px, &st);
	if (!s->op.ro.quiet)
		fprintf(stderr,
			"halo-run proxy: stopped (signal %d): %zu connections, %zu allowed, %zu "
			"denied\n",
			s->stop_sig, st.conns_total, st.allowed, st.denied);
	if (st.audit_lost) {
		fprintf(stderr, "halo-run proxy: --audit %s: %zu records could not be written\n",
			s->op.ro.audit, st.audit_lost);
		rc = HALO_EXIT_SETUP;
	}
	proxy_destroy(s->px);
	s->px = NULL;
	runner_decider_stop(s->dc);
	s->dc = NULL;
	if (s->ev.fd >= 0 && runner_events_lost(&s->ev, &e) < 0) {
		fprintf(stderr, "halo-run proxy: %s\n", e.msg);
		rc = HALO_EXIT_SETUP;
	}
	return rc;
}

static int prepare(struct pcmd *s, char **argv)
{
	struct halo_err e = {{0}};
	struct policy_upstream up;
	unsigned ms;
	int rc;

	if (runner_decider_timeout(s->op.ro.decider_timeout, &ms, &e) < 0)
		return say_err(NULL, &e);
	if ((rc = runner_load_policy(&s->op.ro, false, &s->re)) != 0)
		return rc;
	s->policies[s->n_policies++] = s->re.policy;
	s->re.policy = NULL; /* ours to free, with the reloads' */
	if (runner_proxy_policy_fits(s->policies[0], !s->op.ro.quiet, &e) < 0)
		return say_err(NULL, &e);
	if ((s->op.token_file || s->op.token_env) &&
	    runner_token_read(s->op.token_file, s->op.token_env, s->token, sizeof(s->token), &e) <
		0)
		return say_err(NULL, &e);
	s->have_token = s->op.token_file || s->op.token_env;
	if ((rc = inherit(s)) != 0 || (rc = open_flags(s)) != 0)
		return rc;
	if (s->n_l == 0) {
		fprintf(stderr,
			"halo-run proxy: no listener: give --listen ADDR:PORT, --listen "
			"unix:PATH or --socks ADDR:PORT (or start it from a systemd socket)\n");
		return HALO_EXIT_SETUP;
	}
	if ((rc = runner_upstream_settle(s->policies[0], &up)) != 0 || (rc = setup_tls(s)) != 0)
		return rc;
	if (s->op.ro.audit &&
	    (s->audit_fd = runner_open_audit(s->op.ro.audit, &s->audit_st, &e)) < 0)
		return say_err(NULL, &e);
	if (runner_events_open(s->op.ro.events, "", &s->ev, &e) < 0)
		return say_err(NULL, &e);
	runner_events_start(&s->ev, s->policies[0], (const char *const *)s->re.paths, s->re.n_paths,
			    "", argv);
	runner_supervisor_settings();
	if ((rc = proxy_poller_new(proxy_poller_default_backend(), &s->pl)) < 0 ||
	    (rc = start_signals(s)) < 0) {
		fprintf(stderr, "halo-run proxy: event loop: %s\n", strerror(-rc));
		return HALO_EXIT_SETUP;
	}
	return start_proxy(s);
}

static void release(struct pcmd *s)
{
	proxy_destroy(s->px);
	runner_decider_stop(s->dc);
	for (size_t i = 0; i < s->n_l; i++)
		if (s->l[i].fd >= 0)
			close(s->l[i].fd);
	if (s->sig_fd >= 0)
		close(s->sig_fd);
	proxy_poller_free(s->pl);
	runner_events_close(&s->ev);
	if (s->audit_fd >= 0)
		close(s->audit_fd);
	proxy_tls_free(s->tls);
	for (size_t i = 0; i < s->n_policies; i++)
		policy_free(s->policies[i]);
	explicit_bzero(s->token, sizeof(s->token));
}

int runner_cmd_proxy(int argc, char **argv)
{
	static struct pcmd s; /* large; one per process */
	int rc;

	memset(&s, 0, sizeof(s));
	s.audit_fd = s.sig_fd = -1;
	s.ev.fd = -1;
	rc = runner_proxy_parse(argc, argv, &s.op);
	if (rc != 0)
		return rc < 0 ? 0 : rc;
	rc = prepare(&s, argv);
	if (rc == 0) {
		announce(&s);
		rc = proxy_poller_run(s.pl, &s.stop);
		if (rc < 0)
			fprintf(stderr, "halo-run proxy: event loop: %s\n", strerror(-rc));
		rc = shut_down(&s) ? HALO_EXIT_SETUP : rc < 0 ? HALO_EXIT_SETUP : 0;
	}
	release(&s);
	return rc;
}
