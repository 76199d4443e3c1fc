/* Path spellings for the profile. Seatbelt matches the resolved path, so a rule
 * naming /tmp/x silently never matches /private/tmp/x: every path is resolved
 * (realpath of the longest existing prefix, the rest appended) and /tmp, /var and
 * /etc are mapped to /private/... even where they do not exist (the tests on Linux).
 * The spelling as given is emitted too when it differs, as Codex and srt do. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macos/macos_int.h"

static int copy(char *out, size_t n, const char *a, const char *b)
{
	int w = snprintf(out, n, "%s%s", a, b);

	return w < 0 || (size_t)w >= n ? -ENAMETOOLONG : 0;
}

int macos_path_resolve(const char *in, char *out, size_t n)
{
	char prefix[PATH_MAX];
	size_t len = strlen(in);

	if (len >= sizeof(prefix))
		return -ENAMETOOLONG;
	memcpy(prefix, in, len + 1);
	for (;;) {
		char *real = realpath(prefix[0] ? prefix : "/", NULL);
		if (real) {
			/* "/" + "/rest" must not double the slash. */
			const char *rest = in + len;
			int rc =
			    copy(out, n, strcmp(real, "/") == 0 && *rest == '/' ? "" : real, rest);
			free(real);
			return rc;
		}
		/* Only a missing component is worth cutting; anything else (EACCES, a
		 * loop) leaves the path as given. */
		if (errno != ENOENT && errno != ENOTDIR)
			break;
		char *slash = strrchr(prefix, '/');
		if (!slash || slash == prefix)
			break;
		*slash = '\0';
		len = (size_t)(slash - prefix);
	}
	return copy(out, n, in, "");
}

int macos_path_private(const char *in, char *out, size_t n)
{
	static const char *const roots[] = {"/tmp", "/var", "/etc"};

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		size_t k = strlen(roots[i]);
		if (strncmp(in, roots[i], k) == 0 && (in[k] == '\0' || in[k] == '/'))
			return copy(out, n, "/private", in);
	}
	return copy(out, n, in, "");
}

int macos_spellings(int (*resolve)(const char *, char *, size_t), const char *path,
		    char out[2][PATH_MAX])
{
	char resolved[PATH_MAX];
	int rc = (resolve ? resolve : macos_path_resolve)(path, resolved, sizeof(resolved));

	if (rc == 0)
		rc = macos_path_private(resolved, out[0], PATH_MAX);
	if (rc == 0)
		rc = copy(out[1], PATH_MAX, path, "");
	if (rc < 0)
		return rc;
	return strcmp(out[0], out[1]) == 0 ? 1 : 2;
}
