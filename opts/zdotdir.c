/* Where the caller's $ZDOTDIR may be once zsh has read its zshenv files (review 16):
 * the environment's, and every directory the system's zshenv, then .zshenv in each
 * place so far (the home's when none) assign, as policy_zshenv_zdotdirs reads them.
 * Many set it in ~/.zshenv rather than in the environment a harness starts halo-run
 * with; zsh then reads its other start-up files there, which the home persistence set
 * must hold. A colon list; computed once a process. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opts/opts.h"
#include "policy/policy.h"

#define ZSHENV_MAX (256 * 1024) /* a start-up file past this is read this far */
#define LIST_MAX   8192

static struct {
	char list[LIST_MAX];
	bool done, unknown;
} z;

/* What file `path` assigns to ZDOTDIR, added to the list (the value before it: the
 * list's first, the environment's). */
static void assigned(const char *path)
{
	static char text[ZSHENV_MAX];
	char first[4096] = "", out[LIST_MAX];
	struct stat st;
	ssize_t got, len = 0;
	bool unknown = false;
	/* followed where it links, as zsh does (dotfile managers link it); never a FIFO */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		while (len < ZSHENV_MAX &&
		       (got = read(fd, text + len, (size_t)(ZSHENV_MAX - len))) > 0)
			len += got;
	close(fd);
	size_t fl = strcspn(z.list, ":");
	if (fl < sizeof(first))
		memcpy(first, z.list, fl), first[fl] = '\0';
	struct policy_zshenv_env env = {getenv("HOME"), getenv("XDG_CONFIG_HOME"),
					first[0] ? first : NULL};
	int n = policy_zshenv_zdotdirs(text, (size_t)len, &env, out, sizeof(out), &unknown);
	z.unknown |= unknown || n < 0;
	for (const char *p = out; n > 0 && *p;) {
		size_t l = strcspn(p, ":"), have = strlen(z.list);
		char one[4096];
		if (l < sizeof(one)) {
			memcpy(one, p, l);
			one[l] = '\0';
			char *at = strstr(z.list, one);
			bool dup = at && (at == z.list || at[-1] == ':') &&
				   (at[l] == '\0' || at[l] == ':');
			if (!dup && have + 1 + l < sizeof(z.list))
				snprintf(z.list + have, sizeof(z.list) - have, "%s%s",
					 have ? ":" : "", one);
			else if (!dup)
				z.unknown = true; /* (more than the list holds) */
		}
		p += l;
		p += *p == ':';
	}
}

static void compute(void)
{
	const char *e = getenv("ZDOTDIR"), *home = getenv("HOME");
	char path[4200], dirs[LIST_MAX];

	z.done = true;
	/* (relative, or with a ':' the list cannot hold: said, review 18) */
	if (e && e[0] && (e[0] != '/' || strchr(e, ':') || strlen(e) >= sizeof(z.list)))
		z.unknown = true;
	else if (e && e[0])
		strcpy(z.list, e);
	assigned("/etc/zsh/zshenv"); /* Debian's; /etc/zshenv elsewhere */
	assigned("/etc/zshenv");
	/* .zshenv where each place so far puts it, and the home's (zsh reads the home's
	 * when $ZDOTDIR is unset, which an if may leave it) */
	int w = snprintf(dirs, sizeof(dirs), "%s%s%s", home && home[0] == '/' ? home : "",
			 z.list[0] ? ":" : "", z.list);
	if (w < 0 || (size_t)w >= sizeof(dirs)) /* (a home past PATH_MAX: its places alone) */
		snprintf(dirs, sizeof(dirs), "%s", z.list);
	for (const char *p = dirs; *p;) {
		size_t l = strcspn(p, ":");
		if (p[0] == '/' &&
		    snprintf(path, sizeof(path), "%.*s/.zshenv", (int)l, p) < (int)sizeof(path))
			assigned(path);
		p += l;
		p += *p == ':';
	}
}

const char *runner_zdotdir(void)
{
	if (!z.done)
		compute();
	return z.list[0] ? z.list : NULL;
}

bool runner_zdotdir_unknown(void)
{
	if (!z.done)
		compute();
	return z.unknown;
}
