/* Where the caller's $ZDOTDIR may be once zsh has started (review 16): the
 * environment's, and every directory the system's zshenv, then .zshenv, .zprofile,
 * .zshrc and .zlogin in each place so far (the home's too) assign, as
 * policy_zshenv_zdotdirs reads them.
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

/* .zshenv, .zprofile, .zshrc and .zlogin in dir (zsh honours a new ZDOTDIR at each
 * start-up stage: one set in .zprofile decides where .zshrc comes from, review 19),
 * each file once. */
static void read_dir(const char *dir, size_t len, char done[][4200], size_t *n_done)
{
	static const char *const files[] = {".zshenv", ".zprofile", ".zshrc", ".zlogin"};
	char path[4200];

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		if (snprintf(path, sizeof(path), "%.*s/%s", (int)len, dir, files[f]) >=
		    (int)sizeof(path))
			continue;
		bool seen = false;
		for (size_t k = 0; k < *n_done && !seen; k++)
			seen = strcmp(done[k], path) == 0;
		if (seen || *n_done >= 32)
			continue;
		strcpy(done[(*n_done)++], path);
		assigned(path);
	}
}

static void compute(void)
{
	static char done[32][4200];
	const char *e = getenv("ZDOTDIR"), *home = getenv("HOME");
	char dirs[LIST_MAX + 4200];
	size_t n_done = 0;

	z.done = true;
	/* (relative, or with a ':' the list cannot hold: said, review 18) */
	if (e && e[0] && (e[0] != '/' || strchr(e, ':') || strlen(e) >= sizeof(z.list)))
		z.unknown = true;
	else if (e && e[0])
		strcpy(z.list, e);
	assigned("/etc/zsh/zshenv"); /* Debian's; /etc/zshenv elsewhere */
	assigned("/etc/zshenv");
	/* the start-up files where each place so far puts them, and the home's (zsh reads
	 * the home's when $ZDOTDIR is unset, which an if may leave it); again while a
	 * round finds new places, three rounds at most */
	for (int round = 0; round < 3; round++) {
		size_t before = strlen(z.list);
		int w = snprintf(dirs, sizeof(dirs), "%s%s%s", home && home[0] == '/' ? home : "",
				 z.list[0] ? ":" : "", z.list);
		if (w < 0 || (size_t)w >= sizeof(dirs)) /* (a home past PATH_MAX: the list) */
			snprintf(dirs, sizeof(dirs), "%s", z.list);
		for (const char *p = dirs; *p;) {
			size_t l = strcspn(p, ":");
			if (p[0] == '/')
				read_dir(p, l, done, &n_done);
			p += l;
			p += *p == ':';
		}
		if (strlen(z.list) == before)
			break;
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
