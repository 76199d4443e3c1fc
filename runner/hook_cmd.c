/* `halo-run hook`: one harness event on stdin, judged by the policy; exit 0 to allow,
 * 2 to block with one line on stderr. An event or a policy that cannot be judged
 * blocks too (exit 2): the harnesses run the tool on any other non-zero status, so a
 * hook that failed any other way would fail open. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hook/hook.h"
#include "runner/runner_int.h"
/* The persistence guard's names. Their one home is moving to policy/; until then the
 * macOS profile's copy (built on every platform) is the list both launchers use. */

#define HOOK_EXIT_ALLOW 0
#define HOOK_EXIT_BLOCK 2

static int blocked(const char *what, const char *reason)
{
	fprintf(stderr, "halo-run: blocked%s: %s\n", what, reason);
	return HOOK_EXIT_BLOCK;
}

/* Does the name exist (itself, not what a symlink leads to)? */
static bool exists(const char *abs)
{
	struct stat st;

	return lstat(abs, &st) == 0;
}

/* A small file as git reads it (a config, a .git file, commondir). */
static int read_file(const char *abs, char *buf, size_t n)
{
	int fd = open(abs, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	size_t got = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	return (int)got;
}

/* A name as the kernel walks it: a symlink's target, or whether it exists. */
static int link_of(void *ctx, const char *abs, char *buf, size_t n)
{
	struct stat st;
	ssize_t k;

	(void)ctx;
	if (lstat(abs, &st) < 0)
		return -errno;
	if (!S_ISLNK(st.st_mode))
		return 0;
	if ((k = readlink(abs, buf, n)) < 0)
		return -errno;
	if ((size_t)k >= n)
		return -ENAMETOOLONG;
	buf[k] = 0;
	return 1;
}

/* The sandbox's view of a name: the kernel's walk (".." after a symlink, a dangling
 * last link followed to the file a write would create), missing names as written;
 * then the existing part's names as the file system spells them (realpath: where
 * names fold, ~/.SSH and ~/.ssh are one directory, NFD and NFC one name). */
static int resolve(const char *abs, char *out, size_t n)
{
	char walked[PATH_MAX], probe[PATH_MAX], *real = NULL;
	size_t cut;
	int rc = policy_path_resolve(abs, link_of, NULL, walked, sizeof(walked));

	if (rc < 0)
		return rc;
	memcpy(probe, walked, strlen(walked) + 1);
	for (cut = strlen(probe); cut > 0 && !(real = realpath(probe, NULL));) {
		cut = (size_t)(strrchr(probe, '/') - probe);
		probe[cut > 0 ? cut : 1] = '\0';
		if (cut == 0)
			real = realpath("/", NULL);
	}
	if (!real)
		return snprintf(out, n, "%s", walked) < (int)n ? 0 : -ENAMETOOLONG;
	int w = snprintf(out, n, "%s%s",
			 strcmp(real, "/") ? real
			 : walked[cut]	   ? ""
					   : "/",
			 walked + cut);
	free(real);
	return w < 0 || (size_t)w >= n ? -ENAMETOOLONG : 0;
}

/* The protected paths that resolve elsewhere (a symlink on the way), once per event. */
static int resolve_protected(const struct halo_policy *p, struct hook_ctx *c)
{
	char **real = calloc(p->protected_abs.n + 1, sizeof(*real));
	const char **of = calloc(p->protected_abs.n + 1, sizeof(*of));
	char buf[PATH_MAX];
	size_t n = 0;

	if (!real || !of) {
		free(real);
		free(of);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->protected_abs.n; i++) {
		const char *e = p->protected_abs.items[i];
		if (resolve(e, buf, sizeof(buf)) < 0 || strcmp(buf, e) == 0)
			continue;
		if (!(real[n] = strdup(buf)))
			break;
		of[n++] = e;
	}
	c->protected_real = (const char *const *)real;
	c->protected_of = of;
	c->n_protected_real = n;
	return 0;
}

struct home_links {
	const char *home;
	char **real, **of;
	size_t n, cap;
	int err;
};

static int home_link(const char *rel, const char *why, void *arg)
{
	struct home_links *h = arg;
	char abs[PATH_MAX], buf[PATH_MAX];

	(void)why;
	if ((size_t)snprintf(abs, sizeof(abs), "%s/%s", h->home, rel) >= sizeof(abs) ||
	    !exists(abs) || resolve(abs, buf, sizeof(buf)) < 0 || strcmp(abs, buf) == 0)
		return 0;
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 16;
		char **r = realloc(h->real, cap * sizeof(*r)), **o;
		if (r)
			h->real = r;
		if (!r || !(o = realloc(h->of, cap * sizeof(*o))))
			return h->err = -ENOMEM;
		h->of = o;
		h->cap = cap;
	}
	if (!(h->real[h->n] = strdup(buf)) || !(h->of[h->n] = strdup(abs))) {
		free(h->real[h->n]);
		return h->err = -ENOMEM;
	}
	h->n++;
	return 0;
}

/* The homes' persistence-set entries that are symlinks, resolved once per event. */
static int resolve_home_links(struct hook_ctx *c)
{
	struct home_links h = {0};
	const char *homes[] = {c->home, c->env_home};

	for (size_t i = 0; i < 2 && !h.err; i++)
		if (homes[i] && homes[i][0] == '/' &&
		    (i == 0 || !c->home || strcmp(homes[0], homes[1])))
			h.home = homes[i], policy_home_set_each_xdg(homes[i], c->path_env,
								    c->xdg_config, home_link, &h);
	c->home_real = (const char *const *)h.real;
	c->home_of = (const char *const *)h.of;
	c->n_home_real = h.n;
	return h.err;
}

static void free_protected(struct hook_ctx *c)
{
	for (size_t i = 0; i < c->n_home_real; i++) {
		free((char *)c->home_real[i]);
		free((char *)c->home_of[i]);
	}
	free((void *)c->home_real);
	free((void *)c->home_of);
	for (size_t i = 0; i < c->n_protected_real; i++)
		free((char *)c->protected_real[i]);
	free((void *)c->protected_real);
	free((void *)c->protected_of);
}

static char *read_stdin(size_t *len, char *why, size_t whylen)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap + 1);

	while (buf) {
		if (n == cap) {
			if (cap > HOOK_MAX_EVENT) {
				snprintf(why, whylen, "the event is larger than 32 MiB");
				free(buf);
				return NULL;
			}
			char *nb = realloc(buf, cap * 2 + 1);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(STDIN_FILENO, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(why, whylen, "reading standard input: %s", strerror(errno));
			free(buf);
			return NULL;
		}
		if (r == 0) {
			buf[n] = 0;
			*len = n;
			return buf;
		}
		n += (size_t)r;
	}
	free(buf);
	snprintf(why, whylen, "out of memory");
	return NULL;
}

static int judge(const struct runner_opts *o, const struct hook_event *ev)
{
	struct runner_opts lo = *o;
	struct runner_env re;
	struct hook_verdict v;
	struct stat st;
	char *cwd_real = NULL;
	size_t ng;

	lo.quiet = true; /* warnings on every tool call would drown the one line */
	if (ev->cwd && stat(ev->cwd, &st) == 0 && S_ISDIR(st.st_mode))
		lo.workspace = ev->cwd;
	if (runner_load_policy(&lo, false, &re) != 0)
		return blocked("", "cannot judge: the policy is invalid (above); fix it or "
				   "`halo-run validate` it");
	struct hook_ctx c = {
	    .policy = re.policy,
	    .cwd = ev->cwd ? ev->cwd : re.workspace,
	    .home = re.pw_home,
	    .env_home = re.env_home,
	    .path_env = getenv("PATH"),
	    .xdg_config = getenv("XDG_CONFIG_HOME"),
	    .resolve = resolve,
	    .exists = exists,
	    .read_file = read_file,
	};
	c.guard_names = policy_guard_names(&ng);
	c.n_guard_names = ng;
	if (resolve_protected(re.policy, &c) < 0 || resolve_home_links(&c) < 0) {
		free_protected(&c);
		runner_env_release(&re);
		return blocked(" (cannot judge)", "out of memory");
	}
	if (c.cwd && (cwd_real = realpath(c.cwd, NULL)))
		c.cwd_real = cwd_real;
	hook_event_judge(&c, ev, &v);
	free_protected(&c);
	free(cwd_real);
	runner_env_release(&re);
	if (v.outcome == HOOK_ALLOW)
		return HOOK_EXIT_ALLOW;
	return blocked(v.outcome == HOOK_CANNOT ? " (cannot judge)" : "", v.reason);
}

int runner_cmd_hook(const struct runner_opts *o)
{
	enum hook_harness h = HOOK_HARNESS_ANY;
	struct hook_event ev;
	char why[256];
	size_t len = 0;
	char *in;
	int rc;

	if (o->harness && hook_harness_parse(o->harness, &h) < 0)
		return blocked(" (cannot judge)", "--harness takes claude-code, codex or gemini");
	if (o->n_rest)
		return blocked(" (cannot judge)",
			       "hook takes no operands: the event comes on standard input");
	if (!(in = read_stdin(&len, why, sizeof(why))))
		return blocked(" (cannot judge)", why);
	if (hook_event_parse(in, len, h, &ev, why, sizeof(why)) < 0) {
		hook_event_free(&ev);
		free(in);
		return blocked(" (cannot judge)", why);
	}
	rc = judge(o, &ev);
	hook_event_free(&ev);
	free(in);
	return rc;
}
