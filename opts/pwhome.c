/* The invoking user's home directory, from the password database. getpwuid() asks nscd,
 * parses nsswitch.conf and loads the NSS machinery: about 0.1 ms, a noticeable part
 * of a launch. When nsswitch.conf consults "files" first for passwd (plainly: no
 * action attached to it) and /etc/passwd has the uid, glibc's answer is that line, so
 * it is read directly. Anything unusual (another source first, compat '+'/'-' lines,
 * a malformed field, the uid absent) takes the full getpwuid() path: that answer
 * decides where ~/.ssh and the other protected paths are, so it must not differ. */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "opts/opts.h"

#define TEXT_MAX (64 * 1024) /* larger files go through getpwuid(); below malloc's mmap size */

static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

bool runner_passwd_files_first(const char *nsswitch)
{
	const char *services = NULL;

	for (const char *line = nsswitch; line && *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *s = skip_blanks(line);

		if (strncasecmp(s, "passwd", 6) != 0)
			continue;
		s = skip_blanks(s + 6);
		if (*s != ':')
			continue;
		if (services)
			return false; /* said twice: which one glibc keeps is not ours to guess */
		services = skip_blanks(s + 1);
	}
	/* No passwd line: glibc's built-in default, not guessed here either. */
	if (!services || strcspn(services, " \t\n#") != 5 || strncmp(services, "files", 5) != 0)
		return false;
	/* "files [SUCCESS=continue] ..." could let a later source answer. */
	return *skip_blanks(services + 5) != '[';
}

/* Field i (0-based) of a passwd line: start and length. */
static bool field(const char *line, size_t len, int i, const char **f, size_t *flen)
{
	const char *end = line + len;
	const char *p = line;

	for (int k = 0; k < i; k++) {
		p = memchr(p, ':', (size_t)(end - p));
		if (!p)
			return false;
		p++;
	}
	*f = p;
	*flen = (size_t)((const char *)(memchr(p, ':', (size_t)(end - p)) ?: end) - p);
	return true;
}

static bool parse_uid(const char *f, size_t n, uid_t *uid)
{
	unsigned long long v = 0;

	if (n == 0 || n > 10)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (f[i] < '0' || f[i] > '9')
			return false;
		v = v * 10 + (unsigned)(f[i] - '0');
	}
	if (v > 0xffffffffULL)
		return false;
	*uid = (uid_t)v;
	return true;
}

int runner_passwd_home_in(const char *passwd, uid_t uid, char *out, size_t n)
{
	for (const char *line = passwd; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *f, *dir;
		size_t flen, dlen;
		uid_t u;
		const char *s = skip_blanks(line);

		if (*s == '+' || *s == '-')
			return -EINVAL; /* NIS compat entries: leave them to glibc */
		if (*s != '#' && (size_t)(s - line) < len) {
			if (!field(line, len, 2, &f, &flen) || !parse_uid(f, flen, &u))
				return -EINVAL;
			if (u == uid) {
				if (!field(line, len, 5, &dir, &dlen) ||
				    !field(line, len, 6, &f, &flen) || dlen == 0 || dir[0] != '/' ||
				    dlen >= n)
					return -EINVAL;
				memcpy(out, dir, dlen);
				out[dlen] = '\0';
				return 0;
			}
		}
		line += len + (nl != NULL);
	}
	return -ENOENT;
}

static char *read_text(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf = NULL;
	size_t len = 0;
	ssize_t r;

	if (fd < 0)
		return NULL;
	buf = malloc(TEXT_MAX + 1);
	while (buf && len < TEXT_MAX && (r = read(fd, buf + len, TEXT_MAX - len)) > 0)
		len += (size_t)r;
	/* A file that fills the buffer may go on: not ours to judge. */
	if (buf && (len == TEXT_MAX || memchr(buf, '\0', len))) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[len] = '\0';
	close(fd);
	return buf;
}

int runner_pw_home(uid_t uid, char *out, size_t n)
{
	char *conf = read_text("/etc/nsswitch.conf");
	char *pw = conf && runner_passwd_files_first(conf) ? read_text("/etc/passwd") : NULL;
	int rc = pw ? runner_passwd_home_in(pw, uid, out, n) : -ENOENT;
	struct passwd *ent;

	free(conf);
	free(pw);
	if (rc == 0)
		return 0;
	ent = getpwuid(uid);
	if (!ent || !ent->pw_dir || ent->pw_dir[0] != '/' || strlen(ent->pw_dir) >= n)
		return -ENOENT;
	memcpy(out, ent->pw_dir, strlen(ent->pw_dir) + 1);
	return 0;
}
