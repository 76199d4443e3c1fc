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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env/caches.h"

#define PNPM_RC_MAX	 (256 * 1024)
#define MIRROR_MAX_NAMES 4096

/* "a/b" into out; false when it does not fit. */
static bool join(char *out, size_t n, const char *a, const char *b)
{
	int w = snprintf(out, n, "%s/%s", a, b);

	return w > 0 && (size_t)w < n;
}

/* The host's pnpm rc, sanitized (secrets and lines not understood dropped), or NULL. */
static char *host_pnpm_rc(const char *host_dir, size_t *len)
{
	char path[PATH_MAX], *raw, *out = NULL;
	FILE *f;
	size_t n;

	*len = 0;
	if (!join(path, sizeof(path), host_dir, "pnpm/rc") || !(f = fopen(path, "re")))
		return NULL;
	raw = malloc(PNPM_RC_MAX + 1);
	n = raw ? fread(raw, 1, PNPM_RC_MAX + 1, f) : 0;
	fclose(f);
	if (raw && n <= PNPM_RC_MAX &&
	    policy_sanitize(POLICY_SANITIZE_NPMRC, raw, n, &out, len) < 0)
		out = NULL, *len = 0;
	free(raw);
	return out;
}

static int make_rc(struct runner_tool_config *c, const char *host_dir, const char *store)
{
	size_t hlen = 0;
	char *host = host_dir ? host_pnpm_rc(host_dir, &hlen) : NULL;
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

/* The names in host_dir but "pnpm", NUL-separated. A missing directory has none. */
static int list_names(struct runner_tool_config *c, const char *host_dir)
{
	DIR *d = opendir(host_dir);
	struct dirent *de;
	size_t cap = 0, count = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL && count < MIRROR_MAX_NAMES) {
		size_t l = strlen(de->d_name) + 1;
		char *p;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, "pnpm"))
			continue;
		if (c->names_len + l > cap) {
			cap = (cap + l) * 2;
			if (!(p = realloc(c->names, cap))) {
				closedir(d);
				return -ENOMEM;
			}
			c->names = p;
		}
		memcpy(c->names + c->names_len, de->d_name, l);
		c->names_len += l;
		count++;
	}
	closedir(d);
	return 0;
}

int runner_caches_config(const char *home, const char *workspace, const char *store,
			 struct runner_tool_config *c)
{
	bool has_home = home && home[0] == '/';
	int rc;

	memset(c, 0, sizeof(*c));
	if (!store)
		return -EINVAL;
	if (has_home &&
	    !join(c->mirror, sizeof(c->mirror), strcmp(home, "/") ? home : "", ".config"))
		return -ENAMETOOLONG;
	if (has_home && workspace && policy_path_within(c->mirror, workspace))
		return -EEXIST; /* the home as a workspace: its own ~/.config is writable */
	if ((rc = make_rc(c, has_home ? c->mirror : NULL, store)) < 0 ||
	    (rc = has_home ? list_names(c, c->mirror) : 0) < 0) {
		runner_tool_config_release(c);
		return rc;
	}
	return 0;
}

void runner_tool_config_release(struct runner_tool_config *c)
{
	free(c->rc);
	free(c->names);
	memset(c, 0, sizeof(*c));
}
