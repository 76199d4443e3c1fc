/* The caller's $ZDOTDIR as zsh will have it (review 16): the environment's, then what
 * the system's zshenv and then $ZDOTDIR/.zshenv (the home's when unset) assign, read
 * as policy_zshenv_zdotdir reads them. Many set it in ~/.zshenv rather than in the
 * environment a harness starts halo-run with; zsh then reads its other start-up files
 * there, which the home persistence set must hold. Computed once a process. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opts/opts.h"
#include "policy/policy.h"

#define ZSHENV_MAX (256 * 1024) /* a start-up file past this is read this far */

/* What file `path` assigns to ZDOTDIR, into z (kept when it assigns nothing, or what
 * cannot be told: a command substitution, another variable). */
static void assigned(const char *path, char *z, size_t n)
{
	static char text[ZSHENV_MAX];
	struct policy_zshenv_env env = {getenv("HOME"), getenv("XDG_CONFIG_HOME")};
	char out[4096];
	struct stat st;
	ssize_t got, len = 0;
	/* followed where it links, as zsh does (dotfile managers link it); never a FIFO */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		while (len < ZSHENV_MAX &&
		       (got = read(fd, text + len, (size_t)(ZSHENV_MAX - len))) > 0)
			len += got;
	close(fd);
	if (policy_zshenv_zdotdir(text, (size_t)len, &env, out, sizeof(out)) == 1 &&
	    strlen(out) < n)
		strcpy(z, out);
}

const char *runner_zdotdir(void)
{
	static char z[4096];
	static bool done;
	const char *e = getenv("ZDOTDIR"), *home = getenv("HOME");
	char path[4200];

	if (done)
		return z[0] ? z : NULL;
	done = true;
	if (e && strlen(e) < sizeof(z))
		strcpy(z, e);
	assigned("/etc/zsh/zshenv", z, sizeof(z)); /* Debian's; /etc/zshenv elsewhere */
	assigned("/etc/zshenv", z, sizeof(z));
	const char *dir = z[0] ? z : home;
	if (dir && dir[0] == '/' &&
	    snprintf(path, sizeof(path), "%s/.zshenv", dir) < (int)sizeof(path))
		assigned(path, z, sizeof(z));
	return z[0] ? z : NULL;
}
