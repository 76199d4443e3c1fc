/* `halo-run verify`'s probes of the home persistence set (policy/homeset.c): a second
 * launch whose workspace is a temporary home (HOME points there too), as `cd ~ &&
 * halo-run -- ...` would make it. The home itself is writable (a control), what runs
 * code later is not: an existing start-up file, a PATH directory that exists, and
 * entries that do not exist yet, each created under its own name and looked for on the
 * host. Also the temporary trees verify makes and removes (its workspace, this home). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trust/verify_int.h"

/* The temporary workspace, in $TMPDIR or /tmp. 0 or -1 (said on stderr). */
int verify_make_workspace(struct verify *v)
{
	const char *t = getenv("TMPDIR");
	struct stat st;

	if (!t || t[0] != '/' || stat(t, &st) < 0 || !S_ISDIR(st.st_mode))
		t = "/tmp";
	snprintf(v->ws, sizeof(v->ws), "%s/halo-verify.XXXXXX", t);
	if (!mkdtemp(v->ws)) {
		fprintf(stderr, "halo-run: verify: cannot create a workspace in %s: %s\n", t,
			strerror(errno));
		v->ws[0] = '\0';
		return -1;
	}
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 ? 0 : 0;
}

void verify_remove_tree(const char *ws)
{
	/* FTW_PHYS: never follow a link out; FTW_MOUNT: never cross into a mount. */
	if (ws[0])
		nftw(ws, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

static const struct {
	const char *kind; /* write: append to what exists; create: make it */
	const char *rel;
	const char *what;
} home_rows[] = {
    {"write", ".bashrc", "home set: append to ~/.bashrc"},
    {"create", ".bash_aliases", "home set: create ~/.bash_aliases"},
    {"create", ".profile", "home set: create ~/.profile"},
    {"create", ".gitconfig", "home set: create ~/.gitconfig"},
    {"create", ".config/git", "home set: create ~/.config/git"},
    {"create", ".local/bin/halo-verify-tool", "home set: a program in ~/.local/bin"},
    {"create", ".cargo/config.toml", "home set: create ~/.cargo/config.toml"},
    {"create", ".config/autostart", "home set: create ~/.config/autostart"},
    {"create", ".zcompdump-halo-verify-5.9",
     "home set: create ~/.zcompdump-HOST-VERSION (by its start)"},
};

static int make_home(struct verify *v)
{
	const char *t = getenv("TMPDIR");
	static const char *const dirs[] = {".config", ".local", ".local/bin", ".cargo"};
	struct stat st;
	char p[4300];
	int fd;

	if (!t || t[0] != '/' || stat(t, &st) < 0 || !S_ISDIR(st.st_mode))
		t = "/tmp";
	snprintf(v->home_ws, sizeof(v->home_ws), "%s/halo-verify-home.XXXXXX", t);
	if (!mkdtemp(v->home_ws)) {
		v->home_ws[0] = '\0';
		return -errno;
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", v->home_ws, dirs[i]);
		if (mkdir(p, 0700) < 0)
			return -errno;
	}
	snprintf(p, sizeof(p), "%s/.bashrc", v->home_ws);
	if ((fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
		return -errno;
	return close(fd);
}

static struct vrow *home_row(struct verify *v, enum vcheck check, const char *expected,
			     const char *kind, const char *path, const char *what)
{
	struct vrow *r = verify_add_spec(v, check, expected, what, "%s:%s", kind, path);

	if (!r)
		return NULL;
	r->home = true;
	if (strcmp(kind, "create") == 0 && !(r->host_path = strdup(path)))
		return NULL;
	return r;
}

int verify_plan_home(struct verify *v)
{
	char path[4400];
	int rc;

	if (!v->plan.guard || v->p->mode != POLICY_MODE_WORKSPACE_WRITE) {
		return verify_add(v, V_SKIP, "refused", NULL,
				  "home set: ~/.bashrc, ~/.config/git... (%s)",
				  v->plan.guard ? "sandbox.mode is not workspace-write"
						: "guardPersistence: false")
			   ? 0
			   : -ENOMEM;
	}
	if ((rc = make_home(v)) < 0) {
		errno = -rc;
		return rc;
	}
	snprintf(path, sizeof(path), "%s/halo-verify.%d.%s", v->home_ws, (int)v->self, v->tag);
	if (!home_row(v, V_ON_HOST, "created", "create", path,
		      "home as the workspace: create a file there (control)"))
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(home_rows) / sizeof(home_rows[0]); i++) {
		bool create = strcmp(home_rows[i].kind, "create") == 0;
		snprintf(path, sizeof(path), "%s/%s", v->home_ws, home_rows[i].rel);
		if (!home_row(v, create ? V_NOT_ON_HOST : V_REFUSED, "refused", home_rows[i].kind,
			      path, home_rows[i].what))
			return -ENOMEM;
	}
	return 0;
}
