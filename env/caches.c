/* Tool caches for the command: see caches.h for the three modes and why isolated
 * caches live where no host tool looks. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env/caches.h"

/* Each tool's own variable, so that it writes where it expects to find its cache on the
 * next run. XDG_CACHE_HOME last: the tools not listed (node-gyp, deno, pnpm's metadata,
 * ccache 4, composer...) follow it. */
const struct runner_cache_tool runner_cache_tools[] = {
    {"npm", "npm_config_cache", "npm", NULL, ".npm"},
    /* pnpm: no variable (npm_config_store_dir makes npm 11 warn at every call); its
     * store-dir is in the pnpm rc of the command's XDG_CONFIG_HOME (caches_config.c). */
    {"pnpm", NULL, "pnpm-store", NULL, ".local/share/pnpm/store"},
    {"yarn", "YARN_CACHE_FOLDER", "yarn", NULL, ".cache/yarn"},
    /* Yarn 2+: its global cache (enableGlobalCache, the default since 4) is under the
     * global folder, not YARN_CACHE_FOLDER; Yarn 1 reads it as global-folder (where
     * `yarn global add` installs). Neither warns about it. */
    {"yarn", "YARN_GLOBAL_FOLDER", "yarn-berry", NULL, ".yarn/berry"},
    {"pip", "PIP_CACHE_DIR", "pip", NULL, ".cache/pip"},
    /* pip install --user: the sandbox's own user base (the host's ~/.local stays read-only
     * and is not on the sandbox's sys.path). */
    {"pip", "PYTHONUSERBASE", "python-user", NULL, ".local"},
    {"uv", "UV_CACHE_DIR", "uv", NULL, ".cache/uv"},
    {"go", "GOCACHE", "go-build", NULL, ".cache/go-build"},
    {"go", "GOPATH", "go", NULL, "go"},
    /* Registry and git caches; the sandbox's CARGO_HOME holds no credentials.toml. */
    {"cargo", "CARGO_HOME", "cargo", NULL, ".cargo"},
    {"maven", "MAVEN_OPTS", "maven", "-Dmaven.repo.local=%s", ".m2/repository"},
    {"gradle", "GRADLE_USER_HOME", "gradle", NULL, ".gradle"},
    {"ccache", "CCACHE_DIR", "ccache", NULL, ".cache/ccache"},
    {"bun", "BUN_INSTALL_CACHE_DIR", "bun", NULL, ".bun/install/cache"},
    {"xdg", "XDG_CACHE_HOME", "xdg", NULL, ".cache"},
};
const size_t runner_n_cache_tools = sizeof(runner_cache_tools) / sizeof(runner_cache_tools[0]);

/* caches: host. Caches only: never ~/.local (keyrings), ~/.cargo itself (credentials)
 * or ~/.gradle itself (gradle.properties). */
const char *const runner_cache_host_dirs[] = {
    ".npm",
    ".cache",
    "go/pkg/mod",
    ".cargo/registry",
    ".cargo/git",
    ".m2/repository",
    ".gradle/caches",
    ".gradle/wrapper",
    ".local/share/pnpm/store",
    ".yarn/berry",
    ".ccache",
    ".bun/install/cache",
    ".nuget/packages",
    NULL,
};

/* "a/b" into out; false when it does not fit. */
static bool join(char *out, size_t n, const char *a, const char *b)
{
	int w = snprintf(out, n, "%s/%s", a, b);

	return w > 0 && (size_t)w < n;
}

bool runner_cache_tool_known(const char *tool)
{
	if (strcmp(tool, "all") == 0)
		return true;
	for (size_t i = 0; i < runner_n_cache_tools; i++)
		if (strcmp(tool, runner_cache_tools[i].tool) == 0)
			return true;
	return false;
}

int runner_cache_root(const char *home, const char *xdg_cache_home, char *out, size_t n)
{
	int w;

	if (xdg_cache_home && xdg_cache_home[0] == '/')
		w = snprintf(out, n, "%s/halo-run/caches", xdg_cache_home);
	else if (home && home[0] == '/')
		w = snprintf(out, n, "%s/.cache/halo-run/caches", strcmp(home, "/") ? home : "");
	else
		return -ENOENT;
	return w > 0 && (size_t)w < n ? 0 : -ENAMETOOLONG;
}

int runner_cache_key(const char *workspace, char *out, size_t n)
{
	const char *b = strrchr(workspace, '/');
	uint64_t h = 1469598103934665603ULL; /* FNV-1a 64 */
	size_t k = 0;
	int w;

	for (const char *s = workspace; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	b = b && b[1] ? b + 1 : "root";
	if (n < 60)
		return -ENAMETOOLONG;
	for (; b[k] && k < 40; k++)
		out[k] = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
				b[k])
			     ? b[k]
			     : '_';
	if (out[0] == '.')
		out[0] = '_'; /* never "." or "..", never hidden */
	w = snprintf(out + k, n - k, "-%016llx", (unsigned long long)h);
	return w > 0 && (size_t)w < n - k ? 0 : -ENAMETOOLONG;
}

int runner_cache_dir(const char *home, const char *xdg_cache_home, const char *workspace, char *out,
		     size_t n)
{
	char key[64];
	size_t l;
	int rc = runner_cache_root(home, xdg_cache_home, out, n);

	if (rc < 0)
		return rc;
	if (!workspace)
		return -EINVAL;
	if ((rc = runner_cache_key(workspace, key, sizeof(key))) < 0)
		return rc;
	l = strlen(out);
	return join(out + l, n - l, "", key) ? 0 : -ENAMETOOLONG;
}

int runner_caches_vars(struct runner_caches *c, const char *root)
{
	if (!root)
		root = RUNNER_CACHE_PER_RUN_ROOT;
	for (size_t i = 0; i < runner_n_cache_tools; i++) {
		const struct runner_cache_tool *t = &runner_cache_tools[i];
		char path[PATH_MAX], *v = NULL;

		if (!t->var)
			continue;
		if (!join(path, sizeof(path), root, t->sub))
			return -ENAMETOOLONG;
		if ((t->fmt ? asprintf(&v, t->fmt, path) : asprintf(&v, "%s", path)) < 0)
			return -ENOMEM;
		c->vars[c->n_vars].key = (char *)t->var;
		c->vars[c->n_vars++].value = v;
	}
	return 0;
}

/* This process's uid, asked once: the launch checks several directories against it. */
static uid_t own_uid(void)
{
	static uid_t uid = (uid_t)-1;

	if (uid == (uid_t)-1)
		uid = getuid();
	return uid;
}

bool runner_caches_realpath_fd(int fd, const char *path, char *real)
{
	char self[64];
	ssize_t n;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	n = readlink(self, real, PATH_MAX - 1);
	if (n > 0 && real[0] == '/') {
		real[n] = '\0';
		if (!strstr(real, " (deleted)"))
			return true;
	}
	return realpath(path, real) != NULL;
}

/* Create `name` beneath dirfd unless it exists; open it without following a link.
 * Opened first: it exists at every launch but the first. */
static int open_own_dir(int dirfd, const char *name)
{
	const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	struct stat st;
	int fd = openat(dirfd, name, flags);

	if (fd < 0 && errno == ENOENT) {
		if (mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST)
			return -errno;
		fd = openat(dirfd, name, flags);
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_uid != own_uid() || (st.st_mode & 0022)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* mkdir -p of the cache root. The part above halo-run/ is the user's own (~/.cache may
 * well be a symlink); halo-run/caches itself must be ours, private, and no link. On
 * success *rootfd is the root, open (the caller closes it). */
static int make_root(const char *root, const char *key, char *real, int *rootfd, char *why,
		     size_t whylen)
{
	char base[PATH_MAX];
	size_t len = strlen(root), tail = strlen("/halo-run/caches/") + strlen(key);
	int fd, sub, rc;

	if (len <= tail || len - tail >= sizeof(base))
		return -ENAMETOOLONG;
	memcpy(base, root, len - tail);
	base[len - tail] = '\0';
	/* The base (~/.cache): create it if the home exists, as any XDG tool would. */
	fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		if (mkdir(base, 0700) < 0 && errno != EEXIST) {
			rc = -errno;
			snprintf(why, whylen, "cannot create %.300s: %s", base, strerror(-rc));
			return rc;
		}
		fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd < 0) {
		rc = -errno;
		snprintf(why, whylen, "%.300s: %s", base, strerror(-rc));
		return rc;
	}
	sub = open_own_dir(fd, "halo-run");
	close(fd);
	for (int i = 0; i < 2 && sub >= 0; i++) {
		fd = open_own_dir(sub, i == 0 ? "caches" : key);
		close(sub);
		sub = fd;
	}
	if (sub < 0) {
		snprintf(why, whylen, "%.300s: %s", root,
			 sub == -EPERM ? "not a private directory of this user" : strerror(-sub));
		return sub;
	}
	rc = faccessat(sub, ".", W_OK, AT_EACCESS) < 0 ? -errno : 0;
	if (rc == 0 && !runner_caches_realpath_fd(sub, root, real))
		rc = -errno;
	if (rc < 0) {
		close(sub);
		snprintf(why, whylen, "%.300s: %s", root, strerror(-rc));
		return rc;
	}
	*rootfd = sub;
	return 0;
}

/* A cache root over or under a protected path would be a way to write into it: the
 * overlap rule validation applies to writable roots. */
static const char *under_protected(const struct halo_policy *p, const char *root)
{
	for (size_t i = 0; i < p->protected_abs.n; i++) {
		const char *pp = p->protected_abs.items[i];
		if (policy_path_within(root, pp) || policy_path_within(pp, root))
			return pp;
	}
	return NULL;
}

/* The sandbox's CARGO_HOME is its own, so the user's ~/.cargo/config.toml (registries,
 * mirrors, net settings) would be lost outside the home: link it in, read-only inside
 * like the rest of the home. credentials.toml is never linked. The caches directory is
 * written by sandboxed commands, so everything below the root is reached by descriptor
 * without following links: a `cargo` symlink planted there cannot make this create a
 * file anywhere else on the host. */
static void link_cargo_config(const char *home, int rfd)
{
	static const char *const names[] = {"config.toml", "config"};
	char from[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	int cfd;

	if (!join(dir, sizeof(dir), home, ".cargo"))
		return;
	cfd = -1;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!join(from, sizeof(from), dir, names[i]) || stat(from, &st) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (cfd < 0 && (mkdirat(rfd, "cargo", 0700) < 0 && errno != EEXIST))
			break;
		if (cfd < 0 && (cfd = openat(rfd, "cargo",
					     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			break;
		if (fstatat(cfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
			continue;
		(void)symlinkat(from, cfd, names[i]);
	}
	if (cfd >= 0)
		close(cfd);
}

static int per_run(struct runner_caches *c, const char *why, const char *home)
{
	c->per_run = true;
	c->root[0] = '\0';
	snprintf(c->note, sizeof(c->note),
		 "tool caches are per-run, in the sandbox's /tmp (%.300s; HOME=%.100s)", why,
		 home ? home : "unset");
	return runner_caches_vars(c, NULL);
}

/* *rootfd: the root made, still open (the caller closes it). */
static int plan_isolated_at(const struct runner_caches_in *in, struct runner_caches *c, int *rootfd)
{
	char root[PATH_MAX], key[64], why[400] = "";
	const char *prot;
	int rc;

	if (in->policy->mode == POLICY_MODE_READ_ONLY)
		return per_run(c, "sandbox.mode read-only: nothing outlives the run", in->home);
	rc = runner_cache_dir(in->home, in->xdg_cache_home, in->workspace, root, sizeof(root));
	if (rc < 0)
		return per_run(c, rc == -ENOENT ? "no home directory" : "no cache directory",
			       in->home);
	if (in->dry_run) { /* nothing is created: show where it would be */
		snprintf(c->root, sizeof(c->root), "%s", root);
	} else if ((rc = runner_cache_key(in->workspace, key, sizeof(key))) < 0 ||
		   (rc = make_root(root, key, c->root, rootfd, why, sizeof(why))) < 0) {
		return per_run(c, why[0] ? why : strerror(-rc), in->home);
	}
	if ((prot = under_protected(in->policy, c->root)) != NULL) {
		snprintf(why, sizeof(why), "%.180s overlaps the protected path %.180s", c->root,
			 prot);
		return per_run(c, why, in->home);
	}
	if (in->dry_run && access(c->root, F_OK) < 0) {
		/* Nothing to bind yet, and a dry run creates nothing: say where it will be. */
		snprintf(c->note, sizeof(c->note),
			 "tool caches: %.500s (created at the first launch)", c->root);
		return runner_caches_vars(c, c->root);
	}
	if (!(c->binds[c->n_binds] = strdup(c->root)))
		return -ENOMEM;
	c->n_binds++;
	snprintf(c->hide, sizeof(c->hide), "%s", c->root);
	if (strrchr(c->hide, '/') && strrchr(c->hide, '/') != c->hide)
		*strrchr(c->hide, '/') = '\0';
	else
		c->hide[0] = '\0';
	if (in->home && *rootfd >= 0)
		link_cargo_config(in->home, *rootfd);
	return runner_caches_vars(c, c->root);
}

static int plan_isolated(const struct runner_caches_in *in, struct runner_caches *c)
{
	int rootfd = -1, rc = plan_isolated_at(in, c, &rootfd);

	if (rootfd >= 0)
		close(rootfd);
	return rc;
}

static int plan_host(const char *home, struct runner_caches *c)
{
	for (size_t i = 0; home && runner_cache_host_dirs[i] && c->n_binds < RUNNER_CACHE_MAX_BINDS;
	     i++) {
		char path[PATH_MAX];
		struct stat st;

		if (!join(path, sizeof(path), home, runner_cache_host_dirs[i]))
			continue;
		/* Only real directories of this user: a link could name any tree. */
		if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != own_uid())
			continue;
		if (!(c->binds[c->n_binds] = strdup(path)))
			return -ENOMEM;
		c->n_binds++;
	}
	return 0;
}

int runner_caches_plan(const struct runner_caches_in *in, struct runner_caches *c)
{
	const struct halo_policy *p = in->policy;

	memset(c, 0, sizeof(*c));
	c->mode = p->caches == POLICY_CACHES_UNSET ? POLICY_CACHES_ISOLATED : p->caches;
	if (p->mode == POLICY_MODE_OFF || c->mode == POLICY_CACHES_OFF)
		return 0;
	if (c->mode == POLICY_CACHES_HOST)
		return plan_host(in->home, c);
	return plan_isolated(in, c);
}

void runner_caches_release(struct runner_caches *c)
{
	for (size_t i = 0; i < c->n_vars; i++)
		free(c->vars[i].value);
	for (size_t i = 0; i < c->n_binds; i++)
		free(c->binds[i]);
	c->n_vars = c->n_binds = 0;
}
