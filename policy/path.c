/* Lexical path handling for validation: no syscalls, so symbolic links are not
 * followed here (the launchers resolve paths before they mount anything). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "policy/policy_int.h"

bool policy_has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

int policy_path_normalise(const char *in, bool resolve_dotdot, char *out, size_t n,
			  const char **why)
{
	size_t o = 0;
	const char *p = in;

	if (in[0] != '/') {
		*why = "is not an absolute path";
		return -EINVAL;
	}
	if (n < 2) {
		*why = "is too long";
		return -ENAMETOOLONG;
	}
	while (*p) {
		const char *e;
		size_t k;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = p + strcspn(p, "/");
		k = (size_t)(e - p);
		if (k == 1 && p[0] == '.') {
			p = e;
			continue;
		}
		if (k == 2 && p[0] == '.' && p[1] == '.') {
			if (!resolve_dotdot) {
				*why = "has a '..' component";
				return -EINVAL;
			}
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
			p = e;
			continue;
		}
		if (o + 1 + k + 1 > n) {
			*why = "is too long";
			return -ENAMETOOLONG;
		}
		out[o++] = '/';
		memcpy(out + o, p, k);
		o += k;
		p = e;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return 0;
}

int policy_path_expand(const char *raw, const char *home, char *out, size_t n, const char **why)
{
	char joined[POLICY_PATH_MAX + 2];

	if (raw[0] == '/')
		return policy_path_normalise(raw, false, out, n, why);
	if (raw[0] != '~') {
		*why = "must be an absolute path or start with ~/";
		return -EINVAL;
	}
	if (raw[1] != '\0' && raw[1] != '/') {
		*why = "uses ~user, which is not supported (write ~/ or an absolute path)";
		return -EINVAL;
	}
	if (!home || home[0] != '/') {
		*why = "starts with ~ but no home directory is known";
		return -EINVAL;
	}
	if ((size_t)snprintf(joined, sizeof(joined), "%s/%s", home, raw + 1) >= sizeof(joined)) {
		*why = "is too long";
		return -ENAMETOOLONG;
	}
	return policy_path_normalise(joined, false, out, n, why);
}

bool policy_path_within(const char *path, const char *dir)
{
	size_t dl = strlen(dir);

	if (dl == 1 && dir[0] == '/')
		return path[0] == '/';
	if (strncasecmp(path, dir, dl) != 0)
		return false;
	return path[dl] == '\0' || path[dl] == '/';
}
