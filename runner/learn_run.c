/* `halo-run learn`: a run whose default-deny decisions become "allow and record"
 * (the proxy asks policy_decision_learn), and at its end the input policy plus the
 * minimal additions (learn/), validated by the loader before it is written, with a
 * diff against the input on stderr. Everything else is enforced as in a run. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "events/events.h"

#include "learn/learn.h"
#include "proxy/proxy.h"
#include "runner/runner_int.h"

struct runner_learn {
	struct learn_record rec;
	struct proxy_learner pl;
	/* --out, opened before the launch like --audit (one link, no symbolic link,
	 * masked inside): a name the command planted cannot turn the write elsewhere */
	int out_fd;
	struct stat out_st; /* what was opened: the name must still lead to it at the end */
};

static const enum learn_host_kind kinds[] = {
    [PROXY_LEARN_HOST] = LEARN_HOST_ALLOWED,
    [PROXY_LEARN_PRIVATE] = LEARN_HOST_PRIVATE,
    [PROXY_LEARN_DENIED] = LEARN_HOST_DENIED,
};

static void note(void *ctx, enum proxy_learn_kind k, const char *host, unsigned port,
		 const char *proto, const char *addr, const char *cls, const char *rule)
{
	struct runner_learn *lr = ctx;

	if ((size_t)k < sizeof(kinds) / sizeof(kinds[0]))
		learn_record_host(&lr->rec, kinds[k], host, port, proto, addr, cls, rule);
}

/* Without --out the learned policy goes to stdout, which then carries it alone: the
 * command's stdout is sent to stderr (runner_cmd_learn), or what it printed would be
 * part of the file (an "env: pass: [TOKEN]" block the diff never shows). */
static int policy_stdout = STDOUT_FILENO;

int runner_learn_new(const struct runner_opts *o, struct runner_learn **out, struct halo_err *e)
{
	struct runner_learn *lr = calloc(1, sizeof(*lr));

	*out = NULL;
	if (!lr) {
		halo_err_set(e, "learn: out of memory");
		return -ENOMEM;
	}
	learn_record_init(&lr->rec);
	lr->pl = (struct proxy_learner){note, lr};
	lr->out_fd = o->out_dir ? runner_open_output("--out", o->out_dir, 0644, &lr->out_st, e)
				: policy_stdout;
	if (lr->out_fd < 0) {
		int rc = lr->out_fd;
		free(lr);
		return rc;
	}
	/* Two learns writing one file: the last to end would replace the other's record
	 * without a word. Held until this run (or session) ends. */
	if (o->out_dir && flock(lr->out_fd, LOCK_EX | LOCK_NB) < 0) {
		halo_err_set(e, "--out %s: %s", o->out_dir,
			     errno == EWOULDBLOCK ? "another halo-run learn (or learning session) "
						    "is writing it; give each its own --out"
						  : strerror(errno));
		close(lr->out_fd);
		free(lr);
		return -EBUSY;
	}
	*out = lr;
	return 0;
}

void runner_learn_options(struct runner_learn *lr, struct proxy_options *po)
{
	if (lr)
		po->learner = &lr->pl;
}

void runner_learn_command(struct runner_learn *lr, char *const *argv)
{
	if (lr)
		learn_record_command(&lr->rec, argv);
}

void runner_learn_free(struct runner_learn *lr)
{
	if (!lr)
		return;
	learn_record_free(&lr->rec);
	if (lr->out_fd > STDERR_FILENO)
		close(lr->out_fd);
	free(lr);
}

struct root_ctx {
	const struct halo_policy *p;
	const struct policy_ctx *pc;
	const char *pw_home, *env_home, *workspace;
};

/* An entry of a home's persistence set at, above or below root. */
struct home_hit {
	const char *home, *root, *rel, *why;
};

static int holds_entry(const char *rel, const char *why, void *arg)
{
	struct home_hit *h = arg;
	char abs[4096];

	if ((size_t)snprintf(abs, sizeof(abs), "%s/%s", h->home, rel) >= sizeof(abs) ||
	    !policy_path_beneath(abs, h->root))
		return 0;
	h->rel = rel;
	h->why = why;
	return 1;
}

/* Validation accepts a root like ~/.local/bin or ~/.cargo, and a writable root there is
 * writable in a run: a program planted on the user's PATH (or a start-up file) runs
 * later outside the sandbox. A write refused there is listed, never proposed. */
static int home_set_check(const struct root_ctx *c, const char *root, char *why, size_t n)
{
	const struct policy_xdg xdg = {getenv("XDG_CONFIG_HOME"), getenv("XDG_DATA_HOME"),
				       getenv("XDG_CONFIG_DIRS"), getenv("XDG_DATA_DIRS"),
				       runner_zdotdir(),	  false};
	const char *homes[] = {c->pw_home, c->env_home};

	for (size_t i = 0; i < sizeof(homes) / sizeof(homes[0]); i++) {
		struct home_hit h = {homes[i], root, NULL, NULL};
		if (!homes[i] || homes[i][0] != '/')
			continue;
		h.why = policy_home_set_hit_xdg(homes[i], getenv("PATH"), &xdg, root, &h.rel);
		if (!h.why)
			policy_home_set_each_xdg(homes[i], getenv("PATH"), &xdg, holds_entry, &h);
		if (h.why) {
			snprintf(why, n, "it is or holds ~/%s in the home persistence set (%s)",
				 h.rel ? h.rel : "?", h.why);
			return -EINVAL;
		}
	}
	return 0;
}

/* A root is proposable when it is clear of the home persistence set and the input
 * policy with it added validates: the same rules as any writableRoots entry (system
 * directories, the home, the floor...). */
static int root_check(void *arg, const char *root, char *why, size_t n)
{
	struct root_ctx *c = arg;
	struct learn_items one = {&(struct learn_item){(char *)root, (char *)"candidate"}, 1};
	struct learn_plan pl = {.roots = one};
	struct learn_record none;
	struct policy_diags d = {0};
	char *text = NULL;
	size_t len = 0;
	int rc;

	if ((rc = home_set_check(c, root, why, n)) < 0)
		return rc;
	/* A write refused next to the workspace (../x) would make the workspace's parent
	 * writable, every sibling project with it: a widening to choose by hand. */
	if (c->workspace && c->workspace[0] == '/' && policy_path_beneath(c->workspace, root)) {
		snprintf(why, n,
			 "it is or holds the workspace %s (every sibling would be "
			 "writable); add a narrower directory by hand if the command needs one",
			 c->workspace);
		return -EINVAL;
	}
	learn_record_init(&none);
	rc = learn_emit(c->p, &none, &pl, &text, &len);
	if (rc == 0 && (rc = learn_validate(text, len, c->pc, &d)) < 0)
		snprintf(why, n, "%s", d.n_errors ? d.errors[0] : "invalid");
	policy_diags_free(&d);
	free(text);
	return rc;
}

static void notes_add(struct learn_plan *pl, const struct learn_record *r)
{
	static const char *const fixed[] = {
	    "connections made straight to the sandbox's own loopback (127.0.0.1:PORT without "
	    "the proxy) are not seen: a host loopback service is proposed (egress.hostPorts) "
	    "only when a client asked the proxy for it",
	    "writes by calls the broker does not perform (unlink, rmdir, rename's source, "
	    "truncate, chmod, utimes, a descriptor opened before) are not seen",
	    "env.pass: which variable a tool missed cannot be told from a run; none is proposed",
	};
	struct learn_item *g;
	size_t k = sizeof(fixed) / sizeof(fixed[0]) + 2;

	g = realloc(pl->notes.v, (pl->notes.n + k) * sizeof(*g));
	if (!g)
		return;
	pl->notes.v = g;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		g[pl->notes.n++] = (struct learn_item){strdup(""), strdup(fixed[i])};
	if (!r->writes_observed)
		g[pl->notes.n++] = (struct learn_item){
		    strdup(""), strdup("no write was observed: the broker did not run (a session's "
				       "calls, sandbox.guardPersistence false, read-only mode, or "
				       "macOS), so no writable root is proposed")};
	if (r->writes_cut)
		g[pl->notes.n++] = (struct learn_item){
		    strdup(""), strdup("more refused writes than the sandbox keeps (48): the rest "
				       "are not listed")};
}

/* The Public Suffix List (Debian's publicsuffix) for --wildcards, or NULL (then no
 * "*.x" is proposed, and the output says why). Bounded: the list is ~250 KB. */
#define LEARN_PSL     "/usr/share/publicsuffix/public_suffix_list.dat"
#define LEARN_PSL_MAX (4 << 20)

static char *suffix_list(bool wanted)
{
	int fd = wanted ? open(LEARN_PSL, O_RDONLY | O_CLOEXEC) : -1;
	char *buf = fd >= 0 ? malloc(LEARN_PSL_MAX + 1) : NULL;
	size_t k = 0;
	ssize_t n = 0;

	while (buf && k < LEARN_PSL_MAX && (n = read(fd, buf + k, LEARN_PSL_MAX - k)) > 0)
		k += (size_t)n;
	if (fd >= 0)
		close(fd);
	if (!buf || n < 0 || k == 0 || k == LEARN_PSL_MAX) {
		free(buf);
		return NULL;
	}
	buf[k] = '\0';
	return buf;
}

/* Through the descriptor opened at launch: emptied first (it is opened to append). */
static int write_out(int fd, bool file, const char *text, size_t len)
{
	size_t k = 0;

	if (file && ftruncate(fd, 0) < 0)
		return -errno;
	while (k < len) {
		ssize_t w = write(fd, text + k, len - k);
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		k += (size_t)w;
	}
	return file && fsync(fd) < 0 ? -errno : 0;
}

int runner_learn_finish(struct runner_learn *lr, const struct runner_opts *o,
			const runner_launch *l)
{
	struct policy_ctx pc;
	struct root_ctx rc_ctx = {l->policy, &pc, l->pw_home, l->env_home, l->workspace};
	char *suffixes = suffix_list(o->wildcards);
	struct learn_opts lo = {o->wildcards, root_check, &rc_ctx, suffixes};
	struct learn_plan pl;
	struct policy_diags d = {0};
	struct halo_err e = {{0}};
	char *text = NULL, *base = NULL, *diff = NULL;
	size_t len = 0, blen = 0;
	int rc;

	if (!lr)
		return 0;
	if (l->facts)
		learn_record_writes_parse(&lr->rec, l->facts->learn_notes,
					  l->facts->learn_notes_len);
	runner_policy_ctx(&pc, l->pw_home, l->env_home, l->workspace);
	rc = learn_propose(l->policy, &lr->rec, &lo, &pl);
	free(suffixes);
	if (rc < 0) {
		runner_say("learn: %s", strerror(-rc));
		return rc;
	}
	notes_add(&pl, &lr->rec);
	rc = learn_emit(l->policy, &lr->rec, &pl, &text, &len);
	if (rc == 0 && (rc = learn_validate(text, len, &pc, &d)) < 0) {
		runner_say("learn: the learned policy does not validate; nothing was written:");
		for (size_t i = 0; i < d.n_errors; i++)
			runner_say("  %s", d.errors[i]);
	} else if (rc == 0 && learn_emit_base(l->policy, &base, &blen) == 0 &&
		   (diff = learn_diff(base, text))) {
		fprintf(stderr, "halo-run: learn: the changes to the input policy%s\n%s",
			diff[0] ? ":" : ": none", diff);
	}
	if (rc == 0 && (rc = write_out(lr->out_fd, o->out_dir != NULL, text, len)) < 0)
		runner_say("learn: --out %s: %s", o->out_dir, strerror(-rc));
	else if (rc == 0 && o->out_dir &&
		 (rc = runner_output_intact("--out", o->out_dir, &lr->out_st, &e)) < 0)
		runner_say("learn: %s", e.msg); /* the name was moved or replaced meanwhile */
	else if (rc == 0 && o->out_dir)
		runner_say("learn: the learned policy is in %s", o->out_dir);
	policy_diags_free(&d);
	learn_plan_free(&pl);
	free(text);
	free(base);
	free(diff);
	return rc;
}

int runner_cmd_learn(const struct runner_opts *o)
{
	if (o->n_rest == 0) {
		fprintf(stderr, "halo-run: learn: no command given (halo-run learn [--policy F]... "
				"[--out FILE] [--session NAME] [--wildcards] -- CMD)\n");
		return HALO_EXIT_SETUP;
	}
	if (o->dry_run) {
		fprintf(stderr, "halo-run: learn: --dry-run runs nothing, so learns nothing\n");
		return HALO_EXIT_SETUP;
	}
	if (o->session && !o->out_dir) {
		fprintf(stderr, "halo-run: learn --session needs --out FILE: the session's "
				"supervisor writes it when the session stops\n");
		return HALO_EXIT_SETUP;
	}
	const char *others[] = {o->audit, o->events, o->summary_md};
	for (size_t i = 0; o->out_dir && i < sizeof(others) / sizeof(others[0]); i++)
		if (others[i] && strcmp(others[i], o->out_dir) == 0) {
			fprintf(stderr, "halo-run: learn: --out names the same file as another "
					"output (--audit, --events or --summary-md)\n");
			return HALO_EXIT_SETUP;
		}
	if (!o->out_dir) {
		fflush(stdout);
		policy_stdout = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		if (policy_stdout < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
			fprintf(stderr, "halo-run: learn: stdout: %s (give --out FILE)\n",
				strerror(errno));
			return HALO_EXIT_SETUP;
		}
	}
	/* Absolute: a session's supervisor writes it, and compares it at every call. */
	struct runner_opts c = *o;
	char abs[4096], cwd[4096];
	if (o->out_dir && runner_writable_abs(o->out_dir, getcwd(cwd, sizeof(cwd)) ? cwd : "/", abs,
					      sizeof(abs)) == 0)
		c.out_dir = abs;
	return runner_cmd_run(&c);
}
