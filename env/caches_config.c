/* The command's configuration directory, for the one tool whose cache no warning-free
 * variable can name: pnpm. pnpm reads its store-dir from npm_config_store_dir (npm 11
 * warns "Unknown env config" at every call), from npm's own rc files (npm warns about
 * those too) or from its own rc file, $XDG_CONFIG_HOME/pnpm/rc (pnpm 8.15, 9 and 10),
 * which no other tool reads. So the command's XDG_CONFIG_HOME is a directory on the
 * sandbox's own /run (written by its init, read-only inside, gone with the sandbox:
 * nothing a run does there outlives it) that mirrors the home's ~/.config, the
 * directory the command used before (XDG_CONFIG_HOME is stripped): one symlink per
 * entry, to the same entry, and a pnpm/rc of its own: the host's pnpm rc, sanitized as
 * ~/.npmrc is, then store-dir. This file gathers the bytes and the names; linux/
 * writes them (mounts_toolcfg.c).
 *
 * A home whose ~/.config is inside the workspace (the home as a workspace) keeps it:
 * there the real ~/.config is writable, and a tool's new configuration belongs there. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env/caches.h"

#define PNPM_RC_MAX	 (256 * 1024)
#define MIRROR_MAX_NAMES 4096

/* "a/b" into out; false when it does not fit. */
static bool join(char *out, size_t n, const char *a, const char *b)
{
	int w = snprintf(out, n, "%s/%s", a, b);

	return w > 0 && (size_t)w < n;
}

/* Is `path` (or where it leads: the directory open as fd) inside a path the policy
 * protects? */
static bool protected_at(const struct halo_policy *p, const char *path, int fd)
{
	char real[PATH_MAX];
	const char *forms[2] = {path, runner_caches_realpath_fd(fd, path, real) ? real : NULL};

	for (size_t f = 0; f < 2 && forms[f]; f++) {
		if (policy_protected_glob_hit(p, forms[f]))
			return true;
		for (size_t i = 0; i < p->protected_abs.n; i++)
			if (policy_path_within(forms[f], p->protected_abs.items[i]))
				return true;
	}
	return false;
}

/* The policy shows the host's pnpm rc at its own path as a sanitized copy (the floor)
 * or as itself (allowRead): only then may the mirror's copy carry its settings. A
 * policy that protects it (or ~/.config/pnpm) keeps it masked whole, here too. */
static bool rc_shown(const struct halo_policy *p, const char *rc)
{
	bool shown = false;

	for (size_t i = 0; i < p->allow_read_abs.n && !shown; i++)
		shown = policy_path_within(rc, p->allow_read_abs.items[i]);
	for (size_t i = 0; i < p->sanitize_abs.n && !shown; i++)
		shown = strcmp(rc, p->sanitize_abs.items[i]) == 0;
	return shown && !policy_protected_glob_hit(p, rc);
}

/* pnpm/rc's bytes beneath the host directory open as d: pnpm a directory and rc a
 * regular file, neither a symlink (one could lead into a protected path: the floor's
 * copy refuses them too), bounded. */
static char *read_rc(int d, size_t *n)
{
	int pn = -1, fd = -1;
	struct stat st;
	char *raw = NULL;
	ssize_t r = 0;

	*n = 0;
	if (d >= 0)
		pn = openat(d, "pnpm", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pn >= 0)
		fd = openat(pn, "rc", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (raw = malloc(PNPM_RC_MAX + 1)))
		while (*n <= PNPM_RC_MAX && (r = read(fd, raw + *n, PNPM_RC_MAX + 1 - *n)) > 0)
			*n += (size_t)r;
	if (raw && (r < 0 || *n > PNPM_RC_MAX))
		free(raw), raw = NULL;
	for (int *f = (int[]){pn, fd}, k = 0; k < 2; k++)
		if (f[k] >= 0)
			close(f[k]);
	return raw;
}

/* The host's pnpm rc, sanitized (secrets and lines not understood dropped), or NULL. */
static char *host_pnpm_rc(const struct halo_policy *p, const char *host_dir, int d, size_t *len)
{
	char path[PATH_MAX], *raw, *out = NULL;
	size_t n;

	*len = 0;
	if (!join(path, sizeof(path), host_dir, "pnpm/rc") || !rc_shown(p, path) ||
	    !(raw = read_rc(d, &n)))
		return NULL;
	if (policy_sanitize(POLICY_SANITIZE_NPMRC, raw, n, &out, len) < 0)
		out = NULL, *len = 0;
	free(raw);
	return out;
}

static int make_rc(const struct halo_policy *p, struct runner_tool_config *c, const char *host_dir,
		   int d, const char *store)
{
	size_t hlen = 0;
	char *host = host_dir && d >= 0 ? host_pnpm_rc(p, host_dir, d, &hlen) : NULL;
	int w = asprintf(
	    &c->rc, "%.*s%s# halo-run: pnpm's store in the sandbox's tool cache\nstore-dir=%s\n",
	    (int)hlen, host ? host : "", hlen && host[hlen - 1] != '\n' ? "\n" : "", store);

	free(host);
	if (w < 0) {
		c->rc = NULL;
		return -ENOMEM;
	}
	c->rc_len = (size_t)w;
	return 0;
}

/* One name into the list: 0, or -E2BIG past MIRROR_MAX_NAMES (a partial mirror would
 * hide the rest), -ENOMEM. */
static int add_name(struct runner_tool_config *c, const char *name, size_t *cap, size_t *count)
{
	size_t l = strlen(name) + 1;
	char *p;

	if (!strcmp(name, ".") || !strcmp(name, "..") || !strcmp(name, "pnpm"))
		return 0;
	if (*count == MIRROR_MAX_NAMES)
		return -E2BIG;
	if (c->names_len + l > *cap) {
		*cap = (*cap + l) * 2;
		if (!(p = realloc(c->names, *cap)))
			return -ENOMEM;
		c->names = p;
	}
	memcpy(c->names + c->names_len, name, l);
	c->names_len += l;
	(*count)++;
	return 0;
}

/* The names in the host directory open as fd (closed here) but "pnpm", NUL-separated.
 * More than MIRROR_MAX_NAMES: -E2BIG (no mirror: the command reads ~/.config itself). */
static int list_names(struct runner_tool_config *c, int fd)
{
	size_t cap = 0, count = 0;
	int rc = 0;
#if defined(__linux__) && !defined(HALO_PORTABLE)
	/* getdents64 on the descriptor itself: fdopendir would add three calls. */
	_Alignas(8) char buf[8192];
	ssize_t n;

	while (rc == 0 && (n = getdents64(fd, buf, sizeof(buf))) > 0)
		for (ssize_t off = 0; rc == 0 && off < n;) {
			const struct dirent64 *de = (const struct dirent64 *)(buf + off);

			rc = add_name(c, de->d_name, &cap, &count);
			off += de->d_reclen;
		}
	close(fd);
#else
	DIR *d = fdopendir(fd);
	struct dirent *de;

	if (!d) {
		close(fd);
		return 0;
	}
	while (rc == 0 && (de = readdir(d)) != NULL)
		rc = add_name(c, de->d_name, &cap, &count);
	closedir(d);
#endif
	return rc;
}

int runner_caches_config(const struct halo_policy *p, const char *home, const char *workspace,
			 const char *store, struct runner_tool_config *c)
{
	bool has_home = home && home[0] == '/';
	int rc, d;

	memset(c, 0, sizeof(*c));
	if (!store)
		return -EINVAL;
	if (has_home &&
	    !join(c->mirror, sizeof(c->mirror), strcmp(home, "/") ? home : "", ".config"))
		return -ENAMETOOLONG;
	if (has_home && workspace && policy_path_within(c->mirror, workspace))
		return -EEXIST; /* the home as a workspace: its own ~/.config is writable */
	/* ~/.config opened once, for the rc, the protection check and the names. A missing
	 * directory has no rc and no names. */
	d = has_home ? open(c->mirror, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	/* A protected ~/.config is not listed: its names are not the command's to read. */
	if ((rc = make_rc(p, c, has_home ? c->mirror : NULL, d, store)) == 0 && d >= 0 &&
	    !protected_at(p, c->mirror, d)) {
		rc = list_names(c, d); /* takes d */
		d = -1;
	}
	if (d >= 0)
		close(d);
	if (rc < 0)
		runner_tool_config_release(c);
	return rc;
}

void runner_tool_config_release(struct runner_tool_config *c)
{
	free(c->rc);
	free(c->names);
	memset(c, 0, sizeof(*c));
}
