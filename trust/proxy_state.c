/* A running `halo-run proxy` leaves a small state file (its pid, its start time as
 * /proc/PID/stat gives it, one line per listener) in $XDG_RUNTIME_DIR/halo-run, or
 * /run/halo-run for root without XDG_RUNTIME_DIR (a system service), removed at exit. `halo-run
 * doctor` lists the files whose process is alive and still the same process (pid and start time); a
 * file left by a proxy that was killed is stale and ignored. Nothing secret is in it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trust/trust.h"

static int state_dir(uid_t uid, char *out, size_t n)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (xdg && xdg[0] == '/' && uid != (uid_t)-1)
		return snprintf(out, n, "%s/halo-run", xdg) < (int)n ? 0 : -ENAMETOOLONG;
	if (uid == 0 || uid == (uid_t)-1)
		return snprintf(out, n, "/run/halo-run") < (int)n ? 0 : -ENAMETOOLONG;
	return -ENOENT;
}

/* Field 22 of /proc/PID/stat (after the parenthesised name, which may hold spaces). */
static unsigned long long start_time(pid_t pid)
{
	char p[64], buf[1024], *s;
	unsigned long long v = 0;
	FILE *f;
	size_t got;

	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(p, "re")))
		return 0;
	got = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[got] = '\0';
	s = strrchr(buf, ')');
	for (int field = 2; s && field < 22; field++)
		s = strchr(s + 1, ' ');
	if (s)
		v = strtoull(s + 1, NULL, 10);
	return v;
}

int runner_proxy_state_write(char *const *listeners, size_t n, char *path, size_t plen)
{
	char dir[4096], tmp[4200];
	FILE *f;
	int fd;

	path[0] = '\0';
	if (state_dir(getuid(), dir, sizeof(dir)) < 0)
		return -ENOENT;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(path, plen, "%s/proxy-%d.state", dir, (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		path[0] = '\0';
		return -errno;
	}
	fprintf(f, "pid %d\nstart %llu\n", (int)getpid(), start_time(getpid()));
	for (size_t i = 0; i < n; i++)
		fprintf(f, "listen %s\n", listeners[i]);
	if (fclose(f) != 0 || rename(tmp, path) < 0) {
		unlink(tmp);
		path[0] = '\0';
		return -EIO;
	}
	return 0;
}

void runner_proxy_state_remove(const char *path)
{
	if (path && path[0])
		unlink(path);
}

/* One state file: printed when its process is the one that wrote it. */
static void report_one(const char *dir, const char *name, FILE *out, int *shown)
{
	char p[4400], line[512], listen[4096] = "";
	unsigned long long start = 0;
	int pid = 0;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (!(f = fopen(p, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "pid %d", &pid) == 1 || sscanf(line, "start %llu", &start) == 1)
			continue;
		if (strncmp(line, "listen ", 7) == 0 &&
		    strlen(listen) + strlen(line) + 3 < sizeof(listen)) {
			if (listen[0])
				strcat(listen, ", ");
			strcat(listen, line + 7);
		}
	}
	fclose(f);
	if (pid <= 0 || (kill(pid, 0) < 0 && errno != EPERM) || start == 0 ||
	    start_time(pid) != start)
		return; /* stale: the proxy is gone (or its pid was reused) */
	if (!(*shown)++)
		fprintf(out, "\nstandalone proxies (halo-run proxy):\n");
	fprintf(out, "  pid %d: %s\n", pid, listen[0] ? listen : "(no listeners)");
}

void runner_proxy_state_report(FILE *out)
{
	char dirs[2][4096];
	size_t nd = 0;
	int shown = 0;

	/* The system service's (/run/halo-run), and this user's. */
	if (state_dir((uid_t)-1, dirs[nd], sizeof(dirs[0])) == 0)
		nd++;
	if (state_dir(getuid(), dirs[nd], sizeof(dirs[0])) == 0 && strcmp(dirs[nd], dirs[0]) != 0)
		nd++;
	for (size_t i = 0; i < nd; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			size_t l = strlen(de->d_name);
			if (strncmp(de->d_name, "proxy-", 6) == 0 && l > 6 &&
			    strcmp(de->d_name + l - 6, ".state") == 0)
				report_one(dirs[i], de->d_name, out, &shown);
		}
		if (d)
			closedir(d);
	}
	if (!shown)
		fprintf(out, "\nstandalone proxies (halo-run proxy): none running\n");
}
