/* /etc/halo/managed.{yaml,json}: the administrator's layer (policy/managed.c), read
 * here with the checks that make it the administrator's. Whoever can change the file,
 * or replace it through a directory above it, could loosen every caller's sandbox, so
 * a file that fails a check stops every launch (125) rather than be ignored: ignoring
 * it would run with less than the machine's owner asked for.
 *
 * The file must be a regular file (not a link), owned by root, not writable by group
 * or others, nor by the caller (an ACL); /etc/halo, /etc and / owned by root and not
 * writable by group or others. In a user namespace where root has no mapping, root's
 * files show as the overflow uid: accepted as root's unless the caller is that uid.
 * The path is fixed: tests bind-mount a file over it in a private mount namespace. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opts/opts.h"

static const char *const managed_files[] = {RUNNER_MANAGED_DIR "/managed.yaml",
					    RUNNER_MANAGED_DIR "/managed.json"};
static const char *const managed_dirs[] = {RUNNER_MANAGED_DIR, "/etc", "/"};

/* Root, or root seen from a user namespace that does not map it (the overflow uid). */
static bool root_owned(uid_t uid)
{
	char line[128] = "";
	bool nested;
	long overflow = 65534;
	FILE *f;

	if (uid == 0)
		return true;
	f = fopen("/proc/self/uid_map", "re");
	nested = f && fgets(line, sizeof(line), f) &&
		 !(strtoul(line, NULL, 10) == 0 && strstr(line, "4294967295"));
	if (f)
		fclose(f);
	f = fopen("/proc/sys/kernel/overflowuid", "re");
	if (f && fgets(line, sizeof(line), f))
		overflow = strtol(line, NULL, 10);
	if (f)
		fclose(f);
	return nested && (long)uid == overflow && uid != getuid();
}

static int refuse(const char *path, const char *why)
{
	fprintf(stderr,
		"halo-run: the managed policy %s %s: refused, nothing was run (as root: chown "
		"root:root and chmod 644 on it, chmod go-w on its directories)\n",
		path, why);
	return HALO_EXIT_SETUP;
}

static int check_dirs(const char *path)
{
	char why[300];
	struct stat st;

	for (size_t i = 0; i < sizeof(managed_dirs) / sizeof(managed_dirs[0]); i++) {
		const char *dir = managed_dirs[i];

		if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
			snprintf(why, sizeof(why), "is in %s, which cannot be checked", dir);
		else if (!root_owned(st.st_uid))
			snprintf(why, sizeof(why),
				 "is in %s, owned by uid %u: that user can replace it", dir,
				 (unsigned)st.st_uid);
		else if (st.st_mode & (S_IWGRP | S_IWOTH))
			snprintf(why, sizeof(why),
				 "is in %s, which group or others can write (mode %04o): it can "
				 "be replaced",
				 dir, (unsigned)(st.st_mode & 07777));
		else
			continue;
		return refuse(path, why);
	}
	return 0;
}

static int check_file(const char *path, const struct stat *st)
{
	char why[200];

	if (!S_ISREG(st->st_mode))
		snprintf(why, sizeof(why), "is not a regular file");
	else if (!root_owned(st->st_uid))
		snprintf(why, sizeof(why), "is owned by uid %u, not root", (unsigned)st->st_uid);
	else if (st->st_mode & (S_IWGRP | S_IWOTH))
		snprintf(why, sizeof(why), "is writable by group or others (mode %04o)",
			 (unsigned)(st->st_mode & 07777));
	else if (getuid() != 0 && access(path, W_OK) == 0)
		snprintf(why, sizeof(why), "is writable by you (uid %u)", (unsigned)getuid());
	else if (st->st_size > POLICY_MAX_FILE_BYTES)
		snprintf(why, sizeof(why), "is larger than %d bytes", POLICY_MAX_FILE_BYTES);
	else
		return check_dirs(path);
	return refuse(path, why);
}

/* The whole file, at most POLICY_MAX_FILE_BYTES (it may have grown since fstat). */
static int read_fd(const char *path, int fd, struct runner_managed *m)
{
	char *buf = malloc(POLICY_MAX_FILE_BYTES + 1);
	size_t len = 0;
	ssize_t r = 1;

	while (buf && r != 0 && len <= POLICY_MAX_FILE_BYTES) {
		r = read(fd, buf + len, POLICY_MAX_FILE_BYTES + 1 - len);
		if (r < 0 && errno != EINTR)
			break;
		if (r > 0)
			len += (size_t)r;
	}
	if (buf && r == 0 && len <= POLICY_MAX_FILE_BYTES) {
		m->buf = buf;
		m->len = len;
		return 0;
	}
	free(buf);
	return refuse(path, "cannot be read whole");
}

/* The one file, opened without following a link, checked on the descriptor read. */
static int open_one(const char *path, int *fd)
{
	*fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (*fd >= 0 || errno == ENOENT || errno == ENOTDIR)
		return 0;
	if (errno == ELOOP)
		return refuse(path, "is a symbolic link");
	fprintf(stderr, "halo-run: the managed policy %s: %s; nothing was run\n", path,
		strerror(errno));
	return HALO_EXIT_SETUP;
}

int runner_managed_read(struct runner_managed *m)
{
	int fds[2] = {-1, -1}, rc = 0;
	size_t k = 0;
	struct stat st;

	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < 2 && rc == 0; i++)
		rc = open_one(managed_files[i], &fds[i]);
	if (rc == 0 && fds[0] >= 0 && fds[1] >= 0) {
		fprintf(stderr,
			"halo-run: both %s and %s exist: the managed policy must be one file; "
			"nothing was run\n",
			managed_files[0], managed_files[1]);
		rc = HALO_EXIT_SETUP;
	}
	k = fds[0] >= 0 ? 0 : 1;
	if (rc == 0 && fds[k] >= 0) {
		if (fstat(fds[k], &st) < 0)
			rc = refuse(managed_files[k], "cannot be checked");
		else
			rc = check_file(managed_files[k], &st);
		if (rc == 0 && (rc = read_fd(managed_files[k], fds[k], m)) == 0)
			snprintf(m->path, sizeof(m->path), "%s", managed_files[k]);
	}
	for (size_t i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return rc;
}

void runner_managed_release(struct runner_managed *m)
{
	free(m->buf);
	m->buf = NULL;
	m->len = 0;
}
