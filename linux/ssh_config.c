/* git over SSH (issue 13): the sandbox has no route out but halo-run's proxy, and
 * OpenSSH speaks no proxy protocol by itself. So the sandbox's /etc/ssh/ssh_config is
 * halo-run's: a ProxyCommand that runs `halo-run connect %h %p` (runner/connect.c,
 * a CONNECT to the sandbox's own proxy, where Decide() judges host:port like any
 * other client's), then the host's own file unchanged. ssh keeps the first value it
 * reads for each option, so the route wins and every other system setting stays; the
 * user's options and a GIT_SSH_COMMAND without a ProxyCommand keep working. The
 * user's ~/.ssh is masked by the credential floor (keys come from ssh-agent through
 * sandbox.unixSockets, or a key file the user names; SSH_AUTH_SOCK itself is never
 * passed, so when the caller's agent socket is one of sandbox.unixSockets the file
 * names it as IdentityAgent): a ProxyCommand or ProxyJump
 * there would not be read anyway; one given with -o on the command line wins, and
 * finds no route. The sandbox's own loopback stays direct. */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/mounts_int.h"

#define RO_ATTRS       (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
#define SSH_CONFIG_MAX (256 * 1024)

static const char head_fmt[] =
    "# halo-run: this sandbox reaches other hosts only through halo-run's proxy, which\n"
    "# decides every host:port by policy. The host's own ssh_config follows.\n"
    "Host localhost 127.0.0.1 ::1\n"
    "\tProxyCommand none\n"
    "Host *\n"
    "\tProxyCommand \"%s\" connect %%h %%p\n"
    "%s%s%s"
    "\n";

/* The sandbox's own fresh trees: a binary there is not the one inside. */
static const char *const fresh[] = {"/tmp/", "/run/", "/dev/", "/proc/"};

int linux_ssh_config_build(const char *self_exe, const char *workspace, const char *agent,
			   char **out, size_t *len)
{
	struct stat st;
	size_t head, cap;
	char *buf;
	int fd;

	*out = NULL;
	*len = 0;
	if (!self_exe || !*self_exe || strpbrk(self_exe, "\"%\n\r"))
		return -EINVAL; /* a path ssh_config cannot quote */
	for (size_t i = 0; i < sizeof(fresh) / sizeof(fresh[0]); i++)
		if (strncmp(self_exe, fresh[i], strlen(fresh[i])) == 0 &&
		    !(workspace && policy_path_within(self_exe, workspace)))
			return -ENOENT; /* not there inside: no route to offer */
	fd = open(PLAN_SSH_CONFIG_PATH, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > SSH_CONFIG_MAX) {
		close(fd);
		return -ENOENT;
	}
	if (agent && (!*agent || strpbrk(agent, "\"%$~\n\r") || agent[0] != '/'))
		agent = NULL; /* not a path IdentityAgent takes literally */
	cap = sizeof(head_fmt) + strlen(self_exe) + (agent ? strlen(agent) + 32 : 0) +
	      (size_t)st.st_size + 1;
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	head = (size_t)snprintf(buf, cap, head_fmt, self_exe, agent ? "\tIdentityAgent \"" : "",
				agent ? agent : "", agent ? "\"\n" : "");
	*len = head;
	for (;;) {
		ssize_t r = read(fd, buf + *len, cap - 1 - *len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		*len += (size_t)r;
	}
	close(fd);
	buf[*len] = '\0';
	*out = buf;
	return 0;
}

void linux_mounts_ssh_config_or_die(int rfd, struct mnt_own_files *own, const struct plan_step *st)
{
	int dst = mnt_open(MNT_NEWROOT, st->path, MNT_NO_CREATE), src;
	char what[PATH_MAX + 32];
	struct stat sb;

	/* Replaced since the plan was made (a package upgrade): leave it as it is. */
	if (dst < 0)
		return;
	if (fstat(dst, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(dst);
		return;
	}
	/* On the tmpfs of halo-run's own files (mounts_names.c), bound read-only over the
	 * host's, from the descriptor it was written through. */
	snprintf(what, sizeof(what), "%s: halo-run's copy", st->path);
	src = mnt_write_new_keep_or_die(rfd, linux_mounts_own_files_or_die(rfd, own), "ssh_config",
					0444, st->data, st->len, what);
	close(mnt_bind_typed_or_die(rfd, src, 0, dst, 0, RO_ATTRS, st->path));
	close(src);
	close(dst);
}
