/* The launch scan's part for sandbox.allowRead and the floor's sanitized copies, run
 * in the supervisor after the clone, while init builds its namespaces (scan_late.c
 * sends what it found). A carve-out shows where its name is (its parent
 * resolved, so it lands beneath the resolved mask) and binds what the name resolves
 * to; one that leads into another protected path, or holds one, stops the launch.
 * A sanitized copy is read here, by the supervisor, from the host file itself: a
 * regular file of at most POLICY_SANITIZE_MAX bytes, opened without following a
 * symlink at its name; anything else leaves the file masked whole. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/scan_int.h"

/* Where `path` shows: its parent resolved, its own name kept. */
static bool shown_at(struct linux_scan *s, const char *path, char *out, size_t n)
{
	char parent[PATH_MAX], base[PATH_MAX], real[PATH_MAX];

	if (snprintf(parent, sizeof(parent), "%s", path) >= (int)sizeof(parent))
		return false;
	snprintf(base, sizeof(base), "%s", basename(parent));
	snprintf(parent, sizeof(parent), "%s", path);
	if (!linux_scan_realpath(s, dirname(parent), real))
		return false;
	return snprintf(out, n, "%s/%s", strcmp(real, "/") ? real : "", base) < (int)n;
}

static void add_carve_outs(const struct halo_policy *p, struct linux_scan *s)
{
	char name[PATH_MAX], src[PATH_MAX];

	for (size_t i = 0; i < p->allow_read_abs.n; i++) {
		const char *a = p->allow_read_abs.items[i];

		/* Missing: nothing to show (a later creation stays masked). */
		if (!shown_at(s, a, name, sizeof(name)) || !linux_scan_realpath(s, a, src))
			continue;
		linux_paths_add(&s->carved, name);
		linux_paths_add(&s->carved_src, src);
	}
}

/* The host file's bytes, or -errno: regular, not a symlink, bounded. */
static int read_host_file(const char *path, char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	size_t n = 0;
	char *b;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > POLICY_SANITIZE_MAX ||
	    !(b = malloc(POLICY_SANITIZE_MAX + 1))) {
		close(fd);
		return -EINVAL;
	}
	for (;;) { /* it may grow while read: the cap holds on what is read */
		ssize_t r = read(fd, b + n, POLICY_SANITIZE_MAX + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || (n += (size_t)r) > POLICY_SANITIZE_MAX)
			break;
	}
	close(fd);
	if (n > POLICY_SANITIZE_MAX) {
		free(b);
		return -EFBIG;
	}
	*buf = b;
	*len = n;
	return 0;
}

static void add_sanitized(const struct halo_policy *p, struct linux_scan *s)
{
	char real[PATH_MAX];

	for (size_t i = 0; i < p->sanitize_abs.n; i++) {
		char *raw = NULL, *out = NULL;
		size_t len = 0, out_len = 0;

		if (!linux_scan_realpath(s, p->sanitize_abs.items[i], real) ||
		    read_host_file(p->sanitize_abs.items[i], &raw, &len) < 0)
			continue;
		if (policy_sanitize((enum policy_sanitizer)p->sanitize_kind[i], raw, len, &out,
				    &out_len) == 0) {
			s->sanitized_data =
			    realloc(s->sanitized_data, (s->sanitized.n + 1) * sizeof(char *));
			s->sanitized_len =
			    realloc(s->sanitized_len, (s->sanitized.n + 1) * sizeof(size_t));
			if (!s->sanitized_data || !s->sanitized_len)
				abort(); /* as linux_paths_add: no partial lists */
			s->sanitized_data[s->sanitized.n] = out;
			s->sanitized_len[s->sanitized.n] = out_len;
			linux_paths_add(&s->sanitized, real);
		}
		free(raw);
	}
}

void linux_scan_carve(const struct linux_launch *l, struct linux_scan *s)
{
	add_carve_outs(l->policy, s);
	add_sanitized(l->policy, s);
}

/* Before the masks are normalised (a mask beneath another is still listed): a
 * carve-out may not hold a masked path, and one that is a symlink may not lead into
 * or over one. */
int linux_scan_check_carves(const struct linux_scan *s, struct halo_err *e)
{
	for (size_t i = 0; i < s->carved.n; i++) {
		const char *name = s->carved.v[i], *src = s->carved_src.v[i];
		bool link = strcmp(name, src) != 0;

		for (size_t k = 0; k < s->masked.n; k++) {
			const char *m = s->masked.v[k];

			if ((strcmp(m, name) != 0 && linux_path_beneath(m, name)) ||
			    (link && (linux_path_beneath(src, m) || linux_path_beneath(m, src)))) {
				if (link)
					halo_err_set(
					    e,
					    "allowRead %s is a symlink to %s, which would "
					    "expose the protected path %s; refusing to launch",
					    name, src, m);
				else
					halo_err_set(e,
						     "allowRead %s holds the protected path %s, "
						     "which would be exposed; refusing to launch",
						     name, m);
				return -EPERM;
			}
		}
	}
	return 0;
}

void linux_scan_carve_free(struct linux_scan *s)
{
	linux_paths_free(&s->carved);
	linux_paths_free(&s->carved_src);
	for (size_t i = 0; i < s->sanitized.n; i++)
		free(s->sanitized_data[i]);
	free(s->sanitized_data);
	free(s->sanitized_len);
	s->sanitized_data = NULL;
	s->sanitized_len = NULL;
	linux_paths_free(&s->sanitized);
}
