/* Loading the policy for any subcommand: the invoking user's home from the password
 * database, the workspace, discovery when no --policy is given, every diagnostic. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opts/opts.h"

static bool file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* For validation: a writable root that is a symlink is refused (policy/). */
static bool path_is_symlink(const char *path, char *target, size_t n)
{
	struct stat st;
	ssize_t len;

	if (lstat(path, &st) < 0 || !S_ISLNK(st.st_mode))
		return false;
	len = readlink(path, target, n - 1);
	target[len < 0 ? 0 : len] = '\0';
	return true;
}

/* For validation: `path` with every link on the way followed. A missing tail (a
 * protected path not made yet, a root about to be refused as missing) is kept as
 * written after the longest prefix that exists. */
static int path_resolve(const char *path, char *out, size_t n);

void runner_policy_ctx(struct policy_ctx *ctx, const char *pw_home, const char *env_home,
		       const char *workspace)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->pw_home = pw_home;
	ctx->env_home = env_home;
	ctx->workspace = workspace;
	ctx->is_symlink = path_is_symlink;
	ctx->resolve = path_resolve;
}

static int path_resolve(const char *path, char *out, size_t n)
{
	char head[PATH_MAX], *real;
	size_t kept;
	int w;

	if (path[0] != '/' || snprintf(head, sizeof(head), "%s", path) >= (int)sizeof(head))
		return -EINVAL;
	while (!(real = realpath(head[0] ? head : "/", NULL))) {
		char *sl = strrchr(head, '/');
		if (errno != ENOENT || !sl)
			return -errno;
		*sl = '\0';
	}
	kept = strlen(head); /* path[kept] is '/' or the end */
	/* "/" + "/x" would be "//x": the root's own slash is the tail's */
	bool root = strcmp(real, "/") == 0;
	w = snprintf(out, n, "%s%s", root ? "" : real, path[kept] ? path + kept : root ? "/" : "");
	free(real);
	return w < 0 || (size_t)w >= n ? -ENAMETOOLONG : 0;
}

static int lookup_home(struct runner_env *re)
{
	if (runner_pw_home(getuid(), re->pw_home, sizeof(re->pw_home)) < 0) {
		fprintf(stderr, "halo-run: uid %u has no home directory in the password database\n",
			(unsigned)getuid());
		return HALO_EXIT_SETUP;
	}
	re->env_home = getenv("HOME");
	if (re->env_home && re->env_home[0] != '/')
		re->env_home = NULL;
	return 0;
}

static int resolve_workspace(const struct runner_opts *o, struct runner_env *re)
{
	const char *w = o->workspace ? o->workspace : ".";
	char *real = realpath(w, NULL);
	struct stat st;

	if (!real || stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "halo-run: workspace %s: %s\n", w,
			real ? "not a directory" : strerror(errno));
		free(real);
		return HALO_EXIT_SETUP;
	}
	snprintf(re->workspace, sizeof(re->workspace), "%s", real);
	free(real);
	return 0;
}

static void print_diags(const struct policy_diags *d, bool quiet)
{
	for (size_t i = 0; i < d->n_errors; i++)
		fprintf(stderr, "halo-run: error: %s\n",
			d->errors[i] ? d->errors[i] : "out of memory");
	if (d->n_errors_more)
		fprintf(stderr,
			"halo-run: error: %zu more errors not shown (the first %zu are above)\n",
			d->n_errors_more, d->n_errors);
	for (size_t i = 0; !quiet && i < d->n_warnings; i++)
		fprintf(stderr, "halo-run: warning: %s\n",
			d->warnings[i] ? d->warnings[i] : "out of memory");
}

static int discover(struct runner_env *re, struct policy_diags *d)
{
	struct policy_discover_in in = {
	    .env_halo_policy = getenv("HALO_POLICY"),
	    .home = re->pw_home,
	    .workspace = re->workspace[0] ? re->workspace : NULL,
	    .exists = file_exists,
	};

	if (policy_discover(&in, re->discovered, sizeof(re->discovered), d) < 0)
		return HALO_EXIT_SETUP;
	if (re->discovered[0])
		re->paths[re->n_paths++] = re->discovered;
	return 0;
}

/* --writable ./build is the directory the user sees: made absolute against `cwd`
 * (a policy file's relative root stays an error). Absolute and ~ forms as written. */
int runner_writable_abs(const char *w, const char *cwd, char *out, size_t n)
{
	int k;

	if (w[0] == '/' || w[0] == '~' || !cwd)
		k = snprintf(out, n, "%s", w);
	else
		k = snprintf(out, n, "%s/%s", cwd,
			     w[0] == '.' && w[1] == '/' ? w + 2
			     : strcmp(w, ".") == 0	? ""
							: w);
	return k < 0 || (size_t)k >= n ? -ENAMETOOLONG : 0;
}

static void writable_abs(const struct runner_opts *o, char *buf, size_t n, const char **out)
{
	char *cwd = o->writable.n ? getcwd(NULL, 0) : NULL; /* none named: not asked */
	size_t used = 0;

	for (size_t i = 0; i < o->writable.n; i++) {
		out[i] = o->writable.v[i];
		if (runner_writable_abs(o->writable.v[i], cwd, buf + used, n - used) < 0)
			continue; /* too long: left as written, refused by validation */
		out[i] = buf + used;
		used += strlen(buf + used) + 1;
	}
	free(cwd);
}

int runner_load_policy(const struct runner_opts *o, bool need_workspace, struct runner_env *re)
{
	static char wbuf[RUNNER_MAX_ONEOFF * 512];
	const char *writable[RUNNER_MAX_ONEOFF];
	struct policy_oneoff oneoff = {o->allow.v,     o->allow.n,     writable,
				       o->writable.n,  o->env.v,       o->env.n,
				       o->host_port.v, o->host_port.n, o->mode};
	struct policy_diags d = {0};
	struct runner_managed m;
	struct policy_ctx ctx;
	int rc;

	memset(re, 0, sizeof(*re));
	if ((rc = lookup_home(re)) != 0)
		return rc;
	/* The workspace decides which discovered files may not be read (a repository
	 * must not loosen its own sandbox), so resolve it even for `check`. */
	if (need_workspace || o->workspace) {
		if ((rc = resolve_workspace(o, re)) != 0)
			return rc;
	} else {
		char *cwd = getcwd(NULL, 0);
		if (cwd)
			snprintf(re->workspace, sizeof(re->workspace), "%s", cwd);
		free(cwd);
	}
	for (size_t i = 0; i < o->n_policies; i++)
		re->paths[re->n_paths++] = o->policies[i];
	if (o->n_policies == 0 && discover(re, &d) != 0) {
		print_diags(&d, o->quiet);
		policy_diags_free(&d);
		return HALO_EXIT_SETUP;
	}
	if ((rc = runner_managed_read(&m)) != 0) {
		policy_diags_free(&d);
		return rc;
	}
	snprintf(re->managed, sizeof(re->managed), "%s", m.path);
	runner_policy_ctx(&ctx, re->pw_home, re->env_home, re->workspace[0] ? re->workspace : NULL);
	writable_abs(o, wbuf, sizeof(wbuf), writable);
	rc = policy_load_with(m.path[0] ? &(struct policy_managed){m.path, m.buf, m.len, 0} : NULL,
			      re->paths, re->n_paths, &ctx, &oneoff, &re->policy, &d);
	runner_managed_release(&m);
	print_diags(&d, o->quiet);
	policy_diags_free(&d);
	if (rc < 0) {
		fprintf(stderr, "halo-run: the policy is invalid; nothing was run\n");
		return HALO_EXIT_SETUP;
	}
	/* --env NAME passes the caller's value: one that is not set passes nothing, which
	 * the loosening's line alone would not say. */
	for (size_t i = 0; !o->quiet && i < o->env.n; i++)
		if (!strchr(o->env.v[i], '=') && !getenv(o->env.v[i]))
			fprintf(stderr,
				"halo-run: warning: --env %.200s: not set in this environment; "
				"nothing is passed\n",
				o->env.v[i]);
	return 0;
}

size_t runner_policy_layers(const struct runner_env *re, const char **out)
{
	size_t n = 0;

	if (re->managed[0])
		out[n++] = re->managed;
	for (size_t i = 0; i < re->n_paths; i++)
		out[n++] = re->paths[i];
	return n;
}

void runner_env_release(struct runner_env *re)
{
	policy_free(re->policy);
	re->policy = NULL;
}
