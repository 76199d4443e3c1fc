/* Host unix sockets. A pathname socket is a file system object: a read-only mount does
 * not stop connect(), and the sandbox's own network namespace does not either. Every
 * host socket the command could reach by name is masked, unless the policy names it
 * (sandbox.unixSockets). They are found three ways: the kernel's list of bound
 * sockets in the host's network namespace (/proc/net/unix, read here in the
 * supervisor, which stays in it), the well-known places of agents and container
 * engines (for a socket bound in another network namespace, such as a container's),
 * and the caller's $SSH_AUTH_SOCK and $DOCKER_HOST. Sockets beneath /tmp and /run need
 * nothing: the sandbox gets those fresh. */
#include <errno.h>
#include <time.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "linux/scan_int.h"
#include "linux/unix_line.h"

/* Where host services listen outside /run and /tmp: "~/" is each home directory. */
static const char *const host_sockets[] = {
    "~/.docker/run",	       /* Docker Desktop / rootless helpers */
    "~/.docker/desktop",       /* Docker Desktop for Linux */
    "~/.gnupg/S.*",	       /* gpg-agent, its ssh and extra sockets, dirmngr */
    "~/.1password/agent.sock", /* 1Password ssh agent */
    "~/.ssh/*.sock",	       /* ssh ControlPath and agents kept with keys */
    "~/.local/share/containers/podman/machine/*/podman.sock",
    "~/.colima/*/docker.sock",
    "~/.rd/docker.sock", /* Rancher Desktop */
    "/var/snap/lxd/common/lxd/unix.socket",
    "/var/lib/lxd/unix.socket",
    "/var/lib/incus/unix.socket",
    "/var/run/docker.sock", /* when /var/run is a real directory it is fresh; else no-op */
};

/* The pattern's part before its first wildcard, up to a '/' (the whole pattern
 * when it has none): what must exist for anything to match. */
static void literal_part(const char *pattern, char *out, size_t n)
{
	size_t k = strcspn(pattern, "*?[");

	if (pattern[k])
		while (k > 0 && pattern[k] != '/')
			k--;
	snprintf(out, n, "%.*s", (int)k, pattern);
}

/* `home` with glob(3)'s special characters escaped: a home named h[1] is that name,
 * not a pattern that only matches h1 (review 7: every known place of such a home was
 * missed). false when it does not fit. */
static bool escaped(const char *home, char *out, size_t n)
{
	size_t o = 0;

	for (const char *c = home; *c; c++) {
		if (o + 3 > n)
			return false;
		if (strchr("*?[]\\", *c))
			out[o++] = '\\';
		out[o++] = *c;
	}
	out[o] = '\0';
	return true;
}

/* home/rel (rel a pattern of host_sockets without its "~/"), or rel alone without a
 * home (an absolute pattern). */
static void add_glob_matches(struct linux_scan *s, const char *home, const char *rel)
{
	char lit[PATH_MAX], part[PATH_MAX], esc[PATH_MAX], pattern[2 * PATH_MAX + 2];
	glob_t g;

	literal_part(rel, part, sizeof(part));
	if ((home && !escaped(home, esc, sizeof(esc))) ||
	    snprintf(lit, sizeof(lit), "%s%s%s", home ? home : "", home ? "/" : "", part) >=
		(int)sizeof(lit) ||
	    snprintf(pattern, sizeof(pattern), "%s%s%s", home ? esc : "", home ? "/" : "", rel) >=
		(int)sizeof(pattern))
		return;
	/* Most places are not there: the scan's listings made so far (of a home, asked
	 * about dozens of names) say so without a question; none is made for these. */
	if (lit[0] == '/' && linux_scan_memo_known_missing(s, lit))
		return;
	if (glob(pattern, GLOB_NOSORT, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++)
		linux_scan_add_mask(s, g.gl_pathv[i]);
	globfree(&g);
}

static void add_known_places(const struct linux_launch *l, struct linux_scan *s)
{
	const char *homes[] = {l->pw_home, l->env_home};
	const char *env[] = {"SSH_AUTH_SOCK", "DOCKER_HOST"};

	for (size_t i = 0; i < sizeof(host_sockets) / sizeof(host_sockets[0]); i++) {
		const char *t = host_sockets[i];
		if (t[0] == '/') {
			add_glob_matches(s, NULL, t);
			continue;
		}
		for (size_t h = 0; h < 2; h++)
			if (homes[h] && (h == 0 || !homes[0] || strcmp(homes[0], homes[1]) != 0))
				add_glob_matches(s, homes[h], t + 2);
	}
	/* The caller's own agent and container engine, wherever they listen. */
	for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++) {
		const char *v = getenv(env[i]);
		if (v && strncmp(v, "unix://", 7) == 0)
			v += 7;
		if (v && v[0] == '/')
			linux_scan_add_mask(s, v);
	}
}

/* Every pathname socket bound in this network namespace, de-duplicated (accepted
 * connections repeat their listener's path). */
static int read_bound(struct linux_paths *out)
{
	FILE *f = fopen(linux_test_hooks()->proc_net_unix, "re");
	char *line = NULL, *buf = f ? malloc(1 << 16) : NULL;
	size_t cap = 0, lines = 0;
	int rc = 0;

	if (!f)
		return -errno;
	/* procfs gives stdio no block size: 1 KiB reads, each of which has the kernel
	 * find its place in the socket table again (a desktop's hundreds of sockets: tens
	 * of reads). One large buffer reads it in one or two. */
	if (buf)
		setvbuf(f, buf, _IOFBF, 1 << 16);
	while (getline(&line, &cap, f) > 0) {
		const char *p;
		if (lines++ == 0)
			continue; /* the header */
		if (lines > LINUX_SCAN_MAX_SOCKET_LINES) {
			rc = -E2BIG;
			break;
		}
		if ((p = linux_unix_line_path(line)) && strlen(p) < PATH_MAX)
			linux_paths_add(out, p);
	}
	free(line);
	fclose(f);
	free(buf);
	linux_paths_sort_unique(out);
	return rc;
}

/* Named as an index watcher's socket: DIR/halo-run/index/NAME.sock. */
static bool watcher_name(const char *path)
{
	static const char tail[] = "/halo-run/index/";
	const char *name = strrchr(path, '/');
	size_t n;

	if (!name || (size_t)(name - path) + 1 < sizeof(tail) - 1)
		return false;
	n = strlen(name);
	return n > 6 && strcmp(name + n - 5, ".sock") == 0 &&
	       strncmp(name + 1 - (sizeof(tail) - 1), tail, sizeof(tail) - 1) == 0;
}

/* The listener of the socket at `path` (connected through its directory's fd: the
 * path may be longer than sun_path), or 0. A listening socket accepts the connection
 * into its backlog at once; the watcher reads EOF and closes. */
static pid_t listener_of(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct timeval tv = {0, 200 * 1000};
	const char *name = strrchr(path, '/');
	char dir[PATH_MAX];
	struct ucred cr = {0};
	socklen_t cl = sizeof(cr);
	int dfd, fd;
	pid_t pid = 0;

	if (snprintf(dir, sizeof(dir), "%.*s", (int)(name - path), path) >= (int)sizeof(dir) ||
	    (dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return 0;
	if (snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d%s", dfd, name) <
		(int)sizeof(a.sun_path) &&
	    (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		int rc = connect(fd, (struct sockaddr *)&a, sizeof(a));
		/* A watcher binds its name before it listens (scan_watch.c: /proc/net/unix
		 * lists a socket by the name it was bound to): one that is starting refuses
		 * for that moment, and was taken for another program's socket (masked alone,
		 * its place's index files left in sight; seen once under a loaded CI). A few
		 * more tries, 2 ms apart, on a refusal alone. */
		for (int k = 0; rc < 0 && errno == ECONNREFUSED && k < 3; k++) {
			nanosleep(&(struct timespec){0, 2 * 1000 * 1000}, NULL);
			rc = connect(fd, (struct sockaddr *)&a, sizeof(a));
		}
		if (rc == 0 && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) == 0 &&
		    cr.uid == geteuid())
			pid = cr.pid;
		close(fd);
	}
	close(dfd);
	return pid;
}

/* The listener runs halo-run: this binary, or another build or version of it (a
 * package upgrade leaves the old watchers running, their binary "(deleted)"). */
bool linux_scan_own_socket(const char *path)
{
	struct stat self, peer;
	char exe[64], target[PATH_MAX];
	const char *base;
	ssize_t n;
	pid_t pid;

	if (!watcher_name(path) || (pid = listener_of(path)) <= 0)
		return false;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if (stat("/proc/self/exe", &self) == 0 && stat(exe, &peer) == 0 &&
	    self.st_dev == peer.st_dev && self.st_ino == peer.st_ino)
		return true;
	if ((n = readlink(exe, target, sizeof(target) - 1)) <= 0)
		return false;
	target[n] = 0;
	base = strrchr(target, '/');
	return base && (!strcmp(base, "/halo-run") || !strcmp(base, "/halo-run (deleted)"));
}

/* Can the command reach `path` by name at all? Inside, its only identity is the
 * caller's uid and gid, and no capability applies to files whose owner is not mapped:
 * a socket behind a directory that uid cannot search (another user's 0700 directory,
 * whoever runs halo-run, root included) is out of reach already, and its mask could
 * not even be laid (the launch would fail on someone else's socket). */
static bool in_groups(gid_t g)
{
	gid_t v[256];
	int n = getgroups(256, v);

	if (g == getegid() || n < 0)
		return true; /* cannot tell: as if a member (the mask is laid) */
	for (int i = 0; i < n; i++)
		if (v[i] == g)
			return true;
	return false;
}

static bool searchable_by_caller(const char *path)
{
	char dir[PATH_MAX];
	uid_t uid = geteuid();
	char *sl;

	snprintf(dir, sizeof(dir), "%s", path);
	while ((sl = strrchr(dir, '/')) && sl != dir) {
		struct stat st;
		mode_t need;

		*sl = '\0';
		if (stat(dir, &st) < 0)
			return true; /* cannot tell: mask it */
		need = st.st_uid == uid ? S_IXUSR : in_groups(st.st_gid) ? S_IXGRP : S_IXOTH;
		if (!(st.st_mode & need))
			return false;
	}
	return true;
}

/* The index watchers' sockets in this user's own index places are not asked who
 * listens, one connect each (a host with dozens of watchers paid for each at every
 * launch): the place that holds any is masked whole, once. */
static bool in_own_index(const char *p, char places[][PATH_MAX], size_t n, bool *hit)
{
	for (size_t i = 0; i < n; i++)
		if (linux_path_beneath(p, places[i]) && strcmp(p, places[i]) != 0) {
			hit[i] = true;
			return true;
		}
	return false;
}

static void mask_own_index(struct linux_scan *s, char places[][PATH_MAX], size_t n, const bool *hit)
{
	for (size_t i = 0; i < n; i++)
		if (hit[i] && !linux_paths_beneath_any(places[i], &s->own))
			linux_scan_add_own_mask(s, places[i]);
}

/* A watcher of another index place (another XDG_STATE_HOME of this user's): its
 * directory is masked whole, as this launch's own places are. Watchers come and go
 * there (each ends when idle or its tree goes): a mask on each socket went with it,
 * and a session, finding one of its mounts gone, ended; and the place's index files
 * (other trees' names) are no more the command's to read than the sockets. */
static void mask_other_index(struct linux_scan *s, const char *sock)
{
	char dir[PATH_MAX];
	const char *sl = strrchr(sock, '/');

	if (!sl || (size_t)(sl - sock) >= sizeof(dir))
		return;
	snprintf(dir, sizeof(dir), "%.*s", (int)(sl - sock), sock);
	/* The directory as the kernel named the socket, with no link on the way (review
	 * 8: a command in a tree holding that place could make .../halo-run/index a link
	 * to a directory of its choosing, with the socket hard-linked there, and have it
	 * masked whole at every launch): else the socket alone, as before. */
	if (!linux_scan_no_links(dir) || !linux_scan_add_own_mask(s, dir))
		linux_scan_add_own_mask(s, sock);
}

/* A socket out of sight inside (beneath a fresh /tmp or /run and no bound tree, or
 * behind a directory the caller's uid cannot search) needs no mask; anything else
 * that is still a socket gets one. */
static void mask_bound(const struct linux_launch *l, struct linux_scan *s,
		       const struct linux_paths *bound)
{
	char places[LINUX_INDEX_PLACES][PATH_MAX];
	bool hit[LINUX_INDEX_PLACES] = {false};
	size_t taken = 0, n_places = linux_scan_index_places(l, places);

	for (size_t i = 0; i < bound->n; i++) {
		const char *p = bound->v[i];
		struct stat st;

		if (watcher_name(p) && in_own_index(p, places, n_places, hit))
			continue;
		if (watcher_name(p) && linux_paths_beneath_any(p, &s->own))
			continue; /* another place, masked whole already (below) */
		if (taken > LINUX_SCAN_MAX_SOCKETS) /* past the bound: own index places alone */
			continue;
		if (linux_path_in_fresh_dir(p) && !linux_path_beneath(p, l->workspace) &&
		    !linux_paths_beneath_any(p, &s->writable))
			continue;
		if (lstat(p, &st) < 0 || !S_ISSOCK(st.st_mode) || !searchable_by_caller(p))
			continue;
		if (++taken > LINUX_SCAN_MAX_SOCKETS) {
			s->sockets_truncated = true;
			continue;
		}
		if (!watcher_name(p) || !linux_scan_own_socket(p))
			linux_scan_add_mask(s, p);
		else
			mask_other_index(s, p);
	}
	mask_own_index(s, places, n_places, hit);
}

/* sandbox.unixSockets: each that is a socket now stays reachable. */
static void add_named(const struct halo_policy *p, struct linux_scan *s)
{
	char real[PATH_MAX];
	struct stat st;

	for (size_t i = 0; i < p->unix_sockets_abs.n; i++)
		if (linux_scan_resolve(s, p->unix_sockets_abs.items[i], real, sizeof(real),
				       false) == 0 &&
		    stat(real, &st) == 0 && S_ISSOCK(st.st_mode))
			linux_paths_add(&s->sockets_open, real);
	linux_paths_sort_unique(&s->sockets_open);
	while (s->sockets_open.n > LINUX_MAX_OPEN_SOCKETS) /* policy/ allows fewer */
		free(s->sockets_open.v[--s->sockets_open.n]);
}

void linux_scan_host_sockets(const struct linux_launch *l, struct linux_scan *s)
{
	struct linux_paths bound = {0};

	add_named(l->policy, s);
	add_known_places(l, s);
	/* Without /proc (a rare chroot) the known places are all that is masked;
	 * Landlock ABI 9, where the kernel has it, still refuses the rest. */
	if (read_bound(&bound) == -E2BIG)
		s->sockets_truncated = true;
	mask_bound(l, s, &bound);
	linux_paths_free(&bound);
}
