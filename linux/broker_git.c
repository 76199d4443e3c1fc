/* The creation broker's rules for git directories, whoever made them and whenever: a
 * repository the command creates during the run (`git init sub`, a clone, a
 * `gitdir:` file pointing anywhere) is allowed, but its hooks and the keys of its
 * config that run programs stay out of the command's reach, because the host's next
 * `git` there would run them.
 *
 * A directory is a git directory when it holds HEAD and commondir or objects and refs
 * (git's is_git_directory(); names are enough here), or is named .git. In one:
 *   - hooks/ can only be made empty (mkdir); in it only *.sample names can be made
 *     or opened for writing (git init's templates; git runs none of them);
 *   - config and config.worktree can only be replaced by rename (git's lockfile
 *     protocol: config.lock → config): init reads the new file, checks every key
 *     (gitconf.c), and renames ITS OWN copy into place, so no descriptor the command
 *     still holds reaches the installed file; opening them for writing is refused.
 * A directory BECOMING one (the name that completes HEAD+commondir or objects+refs is
 * made in it) is checked first: no hook but samples in hooks/, a config that passes,
 * which is then replaced by init's copy for the same reason. Refusals are EACCES,
 * counted and the first one named in the run's summary. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/broker_int.h"

#define CONFIG_MAX  (1024 * 1024) /* a config larger than this is refused */
#define HOOKS_MAX   4096	  /* entries read in a hooks/ being checked */
#define SAMPLE	    ".sample"
#define SAMPLE_LEN  (sizeof(SAMPLE) - 1)
#define RULE_HOOKS  "hooks"
#define RULE_CONFIG "config"
#define RULE_CONFWT "config.worktree"
#define STR_(x)	    #x
#define STR(x)	    STR_(x)

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}
#define AUTO_FD __attribute__((cleanup(close_fd))) int

static bool exists_at(int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

struct probe {
	int dfd;
	const char *plus;
};

/* Does dfd hold `name`, or is `name` the one being made (plus)? */
static bool has(void *arg, const char *name)
{
	const struct probe *p = arg;

	return (p->plus && policy_name_eq(p->plus, name)) || exists_at(p->dfd, name);
}

/* Is the directory a git directory (with `plus` made in it, when not NULL)? The one
 * rule: policy_gitdir_holds. */
static bool gitdir_like(int dfd, const char *plus)
{
	return policy_gitdir_holds(has, &(struct probe){dfd, plus});
}

/* Is the directory at dfd named .git (its parent's ".git" is this very directory)? Told
 * by inode, as in_git_hooks does. */
static bool named_dotgit(int dfd)
{
	struct stat self, named;

	AUTO_FD up = openat(dfd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (up < 0 || fstat(dfd, &self) < 0)
		return true; /* cannot tell: guarded */
	return fstatat(up, ".git", &named, AT_SYMLINK_NOFOLLOW) == 0 &&
	       named.st_dev == self.st_dev && named.st_ino == self.st_ino;
}

/* A git directory, or one named .git before it is one: a later `git init` (on the
 * host too) keeps the hooks/ and config it holds, and the host's git runs them. */
static bool git_like(int dfd)
{
	return gitdir_like(dfd, NULL) || named_dotgit(dfd);
}

static bool is_trigger(const char *name)
{
	return policy_git_entry(name) != 0;
}

static bool is_hooks(const char *name)
{
	const struct policy_git_guard *g = policy_git_guard_of(name);

	return g && g->subtree;
}

/* config and config.worktree: written only by rename. commondir is a trigger (it
 * makes a git directory with HEAD) and checked as one. */
static bool is_config(const char *name)
{
	const struct policy_git_guard *g = policy_git_guard_of(name);

	return g && !g->subtree && !is_trigger(name);
}

static bool is_sample(const char *name)
{
	size_t n = strlen(name);

	return n > SAMPLE_LEN && policy_name_eq(name + n - SAMPLE_LEN, SAMPLE);
}

/* The path of an open directory, for messages ("?" when it cannot be told). */
static void dir_path(int dfd, char *out, size_t n)
{
	char self[64];
	ssize_t k;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", dfd);
	k = readlink(self, out, n - 1);
	if (k < 0)
		k = snprintf(out, n, "?");
	out[k] = '\0';
}

static int refuse(struct linux_broker *b, int dfd, const char *name, const char *why)
{
	char dir[PATH_MAX];

	if (atomic_fetch_add(&b->notes->git_refused, 1) == 0) {
		dir_path(dfd, dir, sizeof(dir));
		snprintf(b->notes->git_why, sizeof(b->notes->git_why), "%s/%s: %s",
			 strcmp(dir, "/") ? dir : "", name, why);
		atomic_store(&b->notes->why_ready, true);
	}
	return -EACCES;
}

/* Is the directory open at dfd the hooks/ of a git directory? Told by inode (its
 * parent's "hooks" is this very directory), not by the path read back, which may not
 * fit in PATH_MAX. */
static bool in_git_hooks(int dfd)
{
	struct stat self, named;

	AUTO_FD up = openat(dfd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (up < 0 || fstat(dfd, &self) < 0)
		return true; /* cannot tell: guarded */
	if (fstatat(up, RULE_HOOKS, &named, AT_SYMLINK_NOFOLLOW) < 0 ||
	    named.st_dev != self.st_dev || named.st_ino != self.st_ino)
		return false;
	return git_like(up);
}

/* Read a whole regular file (at most CONFIG_MAX bytes) into a new buffer. */
static int slurp(int fd, char **out, size_t *len, mode_t *mode)
{
	struct stat st;
	char *buf;
	size_t got = 0;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size > CONFIG_MAX)
		return -EINVAL;
	if (!(buf = malloc((size_t)st.st_size + 1)))
		return -ENOMEM;
	while (got <= (size_t)st.st_size) {
		ssize_t k = pread(fd, buf + got, (size_t)st.st_size + 1 - got, (off_t)got);
		if (k < 0) {
			free(buf);
			return -errno;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	if (got > (size_t)st.st_size) { /* grew while read: someone writes it */
		free(buf);
		return -EINVAL;
	}
	*out = buf;
	*len = got;
	*mode = st.st_mode & 07777;
	return 0;
}

/* Install `buf` as dfd/name through a new file of init's own (write, then rename). */
static int install_copy(int dfd, const char *name, const char *buf, size_t len, mode_t mode)
{
	char tmp[NAME_MAX + 1];
	int fd = -1, rc = 0;

	for (unsigned i = 0; fd < 0 && i < 16; i++) {
		snprintf(tmp, sizeof(tmp), ".%.32s.halo-%d-%u", name, (int)getpid(), i);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;
	for (size_t o = 0; o < len && rc == 0;) {
		ssize_t k = write(fd, buf + o, len - o);
		if (k < 0)
			rc = -errno;
		else
			o += (size_t)k;
	}
	if (rc == 0 && fchmod(fd, mode & 0666) < 0)
		rc = -errno;
	close(fd);
	if (rc == 0 && renameat(dfd, tmp, dfd, name) < 0)
		rc = -errno;
	if (rc < 0)
		(void)unlinkat(dfd, tmp, 0);
	return rc;
}

/* core.worktree, which git submodule sets in each submodule's git directory
 * (SUPER/.git/modules/NAME, worktree ../../../NAME): allowed when it leads, symlinks
 * resolved as the host's git would, to a directory strictly inside the superproject's
 * work tree, through no .git and no persistence-guard name. Anywhere else it would let
 * the host's next checkout write files where the command could not. */
static bool worktree_ok(void *ctx, const char *section, const char *key, const char *value)
{
	char gitdir[PATH_MAX], want[2 * PATH_MAX + 2], real[PATH_MAX], sreal[PATH_MAX];
	size_t ng, sl;
	const char *const *guard = policy_guard_names(&ng);
	char *m, *c;

	if (strcmp(section, "core") || strcmp(key, "worktree") || !value[0] || value[0] == '/')
		return false;
	dir_path(*(const int *)ctx, gitdir, sizeof(gitdir));
	if (gitdir[0] != '/' || !(m = strstr(gitdir, "/.git/modules/")))
		return false;
	snprintf(want, sizeof(want), "%s/%s", gitdir, value);
	*m = '\0'; /* gitdir is now the superproject's work tree */
	if (!realpath(want, real) || !realpath(gitdir, sreal))
		return false;
	sl = strlen(sreal);
	if (strncmp(real, sreal, sl) != 0 || real[sl] != '/')
		return false;
	for (c = real + sl + 1; *c;) {
		size_t n = strcspn(c, "/");
		if (policy_git_dot_name(c, n))
			return false;
		for (size_t i = 0; i < ng; i++)
			if (strlen(guard[i]) == n && policy_name_eqn(c, guard[i], n))
				return false;
		c += n + (c[n] == '/');
	}
	return true;
}

/* Check the config at fd (opened by the caller) and, when it passes, install init's
 * copy of it as dfd/name. 0, -EACCES (refused, noted) or -errno. */
static int config_take(struct linux_broker *b, int fd, int dfd, const char *name)
{
	char *buf = NULL, why[160];
	size_t len = 0;
	mode_t mode = 0644;
	int rc = slurp(fd, &buf, &len, &mode);

	if (rc == -EINVAL)
		return refuse(b, dfd, name, "not a regular file of at most 1 MiB");
	if (rc < 0)
		return rc;
	rc = linux_gitconf_check_values(buf, len, why, sizeof(why), worktree_ok, &dfd);
	if (rc == 0)
		rc = install_copy(dfd, name, buf, len, mode);
	else
		rc = refuse(b, dfd, name, why);
	free(buf);
	return rc;
}

/* hooks/ of a directory becoming a git directory: absent, or samples only. */
static int hooks_comply(struct linux_broker *b, int dfd)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	unsigned n = 0;
	int fd, rc = 0;

	if (fstatat(dfd, RULE_HOOKS, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return refuse(b, dfd, RULE_HOOKS, "not a directory in a git directory");
	fd = openat(dfd, RULE_HOOKS, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while (rc == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (++n > HOOKS_MAX || !is_sample(de->d_name))
			rc = refuse(b, dfd, RULE_HOOKS,
				    "a hook in a directory that is becoming a git directory");
	}
	closedir(d);
	return rc;
}

/* The directory at dfd is becoming a git directory: its hooks and configs pass, and
 * the configs are replaced by init's copies. */
static int becoming_gitdir(struct linux_broker *b, int dfd)
{
	static const char *const configs[] = {RULE_CONFIG, RULE_CONFWT};
	int rc = hooks_comply(b, dfd);

	for (size_t i = 0; rc == 0 && i < 2; i++) {
		AUTO_FD fd =
		    openat(dfd, configs[i], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT)
			continue;
		if (fd < 0)
			return errno == ELOOP ? refuse(b, dfd, configs[i], "a symlink") : -errno;
		rc = config_take(b, fd, dfd, configs[i]);
	}
	return rc;
}

/* ------------------------------------------------------------------ held configs */

/* One writer at a time on the held configs (the pool's threads answer in parallel). */
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;

/* A read-write handle on dir/name beneath the mount that pins it: a non-recursive
 * clone of the directory's mount holds no mount at name. The file must be the one the
 * sandbox shows there (st). -errno when it cannot be had (a read-only tree: EROFS). */
static int open_beneath(const char *dir, const char *name, const struct stat *st)
{
	struct stat fs;
	int tree = open_tree(AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC), fd;

	if (tree < 0)
		return -errno;
	fd = openat(tree, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(tree);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &fs) < 0 || !S_ISREG(fs.st_mode) || fs.st_dev != st->st_dev ||
	    fs.st_ino != st->st_ino) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

void linux_broker_git_hold(struct linux_broker *b, const struct linux_scan *s)
{
	char dir[PATH_MAX];
	struct stat st;

	for (size_t i = 0; i < s->guarded.n && b->n_held < BROKER_HELD_MAX; i++) {
		const char *p = s->guarded.v[i], *sl = strrchr(p, '/');
		int fd;

		if (!sl || !is_config(sl + 1) || (size_t)(sl - p) >= sizeof(dir) ||
		    stat(p, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		snprintf(dir, sizeof(dir), "%.*s", (int)(sl - p), p);
		AUTO_FD dfd = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0 || !gitdir_like(dfd, NULL))
			continue;
		if (!b->held && !(b->held = calloc(BROKER_HELD_MAX, sizeof(*b->held))))
			return;
		if ((fd = open_beneath(dir[0] ? dir : "/", sl + 1, &st)) < 0)
			continue;
		b->held[b->n_held++] = (struct broker_held_config){st.st_dev, st.st_ino, fd};
	}
}

/* The held config that is pfd/name, or NULL. */
static const struct broker_held_config *held_of(const struct linux_broker *b, int pfd,
						const char *name)
{
	struct stat st;

	if (!b->n_held || fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return NULL;
	for (size_t i = 0; i < b->n_held; i++)
		if (b->held[i].dev == st.st_dev && b->held[i].ino == st.st_ino)
			return &b->held[i];
	return NULL;
}

/* Write buf over the held file (olen bytes long), whole. A shorter one is first
 * written padded with newlines to the old length, in the same write: between that
 * write and the truncation a reader sees the new keys and blank lines, never the new
 * keys followed by the old file's tail read in the new file's last section. */
static int write_in_place(int fd, const char *buf, size_t len, size_t olen)
{
	size_t n = len < olen ? olen : len;
	char *pad = len < olen ? malloc(n) : NULL;
	const char *out = buf;
	int rc = 0;

	if (len < olen) {
		if (!pad)
			return -ENOMEM;
		memcpy(pad, buf, len);
		memset(pad + len, '\n', n - len);
		out = pad;
	}
	for (size_t o = 0; o < n && rc == 0;) {
		ssize_t k = pwrite(fd, out + o, n - o, (off_t)o);
		if (k < 0)
			rc = -errno;
		else
			o += (size_t)k;
	}
	free(pad);
	if (rc == 0 && ftruncate(fd, (off_t)len) < 0)
		rc = -errno;
	return rc;
}

/* A config that existed at launch, replaced by the content of fd: the change keeps
 * every key that runs a program as it was (linux_gitconf_check_change); written in
 * place, under init's lock, since the pinned name cannot be renamed onto. */
static int held_take(struct linux_broker *b, const struct broker_held_config *h, int fd, int dfd,
		     const char *name)
{
	char *buf = NULL, *old = NULL,
	     why[160] = "the config as it is: not a regular file of at most 1 MiB";
	size_t len = 0, olen = 0;
	mode_t mode;
	int rc = slurp(fd, &buf, &len, &mode);

	if (rc == -EINVAL)
		return refuse(b, dfd, name, "not a regular file of at most 1 MiB");
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&held_lock);
	rc = slurp(h->fd, &old, &olen, &mode);
	if (rc == 0)
		rc = linux_gitconf_check_change(old, olen, buf, len, why, sizeof(why), worktree_ok,
						&dfd);
	if (rc == 0)
		rc = write_in_place(h->fd, buf, len, olen);
	pthread_mutex_unlock(&held_lock);
	if (rc == -EACCES || rc == -EINVAL)
		rc = refuse(b, dfd, name, why);
	free(buf);
	free(old);
	return rc;
}

int linux_broker_git_check(struct linux_broker *b, int pfd, const char *name, enum broker_op op)
{
	if (!b->guard_git)
		return BROKER_GIT_OK;
	/* A commondir in a directory named .git makes git take another directory's hooks
	 * and config for this repository's (git init keeps it); git makes none there. */
	if (policy_git_entry(name) == POLICY_GIT_COMMONDIR && named_dotgit(pfd))
		return refuse(b, pfd, name,
			      "a commondir in a .git directory (git would run what the directory "
			      "it names holds)");
	if (is_trigger(name)) {
		if (gitdir_like(pfd, NULL) || !gitdir_like(pfd, name))
			return BROKER_GIT_OK; /* already one (its content is held), or not becoming
						 one */
		return becoming_gitdir(b, pfd);
	}
	if (policy_git_dot_name(name, strlen(name)) &&
	    (op == BROKER_OP_SYMLINK || op == BROKER_OP_LINK))
		return refuse(b, pfd, name,
			      "a .git symlink or hard link (git takes where a link leads for the "
			      "repository, hooks and all)");
	if (is_hooks(name) || is_config(name)) {
		if (!git_like(pfd))
			return BROKER_GIT_OK;
		if (is_hooks(name))
			return op == BROKER_OP_MKDIR
				   ? BROKER_GIT_OK
				   : refuse(b, pfd, name,
					    "a git directory's hooks/ can only be made empty");
		if (op == BROKER_OP_RENAME)
			return BROKER_GIT_CONFIG;
		/* libgit2 (cargo...) makes an empty config before writing it through its
		 * lock file: the empty file is made, what is written to it goes nowhere. */
		if (op == BROKER_OP_OPEN_CREATE && !exists_at(pfd, name))
			return BROKER_GIT_EMPTY;
		return refuse(
		    b, pfd, name,
		    "a git directory's config is only written by rename (git's lock file)");
	}
	if (!is_sample(name) && in_git_hooks(pfd)) {
		/* A directory that cannot even be searched (a masked one: ~/.ssh in a home
		 * that is the workspace) refuses the name by itself, as the kernel would:
		 * no word about git for it. */
		if (faccessat(pfd, ".", X_OK, AT_EACCESS) < 0 && errno == EACCES)
			return -EACCES;
		return refuse(b, pfd, name, "a hook in a git directory (only *.sample names)");
	}
	return BROKER_GIT_OK;
}

long linux_broker_git_config_rename(struct linux_broker *b, int obase, const char *old, int pfd,
				    const char *name, unsigned flags)
{
	int rc;

	if (flags & RENAME_EXCHANGE)
		return refuse(b, pfd, name, "exchanged with another file");
	if ((flags & RENAME_NOREPLACE) && exists_at(pfd, name))
		return -EEXIST;
	AUTO_FD fd = openat(obase, old, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? refuse(b, pfd, name, "a symlink") : -errno;
	const struct broker_held_config *h = held_of(b, pfd, name);
	rc = h ? held_take(b, h, fd, pfd, name) : config_take(b, fd, pfd, name);
	if (rc == -EBUSY) /* a config pinned at launch that init holds no handle on */
		rc = refuse(b, pfd, name,
			    "pinned at launch and not held (more than " STR(
				BROKER_HELD_MAX) " repositories, or a read-only tree)");
	if (rc < 0)
		return rc;
	/* The lock file is gone, as after the rename git asked for. */
	(void)unlinkat(obase, old, 0);
	return 0;
}

int linux_broker_git_empty(struct linux_broker *b, int pfd, const char *name, mode_t mode)
{
	int fd = openat(pfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);

	(void)b;
	if (fd < 0)
		return -errno;
	close(fd);
	fd = memfd_create("halo-run: a git config written in place goes nowhere", MFD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int linux_broker_git_check_opened(struct linux_broker *b, int fd)
{
	char self[64], path[PATH_MAX];
	ssize_t k;
	char *sl;

	if (!b->guard_git)
		return 0;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	if ((k = readlink(self, path, sizeof(path) - 1)) <= 0)
		return -EACCES; /* cannot tell where it lies (a path past PATH_MAX): guarded */
	path[k] = '\0';
	if (path[0] != '/')
		return 0; /* a pipe, a socket, an anonymous file: no name to guard */
	sl = strrchr(path, '/');
	*sl = '\0';
	AUTO_FD dfd = open(sl == path ? "/" : path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 0; /* deleted, or renamed since: not in place */
	int rc = linux_broker_git_check(b, dfd, sl + 1, BROKER_OP_OPEN_WRITE);
	return rc < 0 ? rc : 0;
}

int linux_broker_git_dotgit_rename(struct linux_broker *b, int obase, const char *old, int pfd,
				   const char *name)
{
	size_t n = strlen(name);

	while (n > 1 && name[n - 1] == '/')
		n--; /* ".git/": the name is .git */
	if (!b->guard_git || !policy_git_dot_name(name, n))
		return 0;
	struct stat st;
	AUTO_FD src = openat(obase, old, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int err = src < 0 ? errno : 0;
	if (err == ELOOP || (fstatat(obase, old, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			     S_ISLNK(st.st_mode))) /* git takes where it leads */
		return refuse(b, pfd, name, "a symlink renamed to .git");
	if (src < 0)
		return err == ENOTDIR ? 0 : -err; /* a file: a gitdir: one */
	/* Named .git from now on: a commondir is refused (made in one, it is too), and what
	 * it holds passes as a directory becoming a git directory (configs replaced). */
	if (exists_at(src, "commondir") || becoming_gitdir(b, src) < 0)
		return refuse(b, pfd, name,
			      "a directory renamed to .git holding a hook or commondir");
	return 0;
}
