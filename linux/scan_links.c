/* Links inside what stays read-only or hidden (review 20). A directory of the home
 * persistence set, or a protected directory, holds its files by name, but a file in it
 * that is a symlink is read and run where it leads: ~/.local/bin/black ->
 * ../share/pipx/venvs/black/bin/black (pipx; npm's, bun's and Volta's bins alike), a
 * stow-managed ~/.config/fish/config.fish -> ~/dotfiles/fish/config.fish, or
 * ~/.ssh/id_ed25519 -> ~/dotfiles/ssh/id_ed25519. The directory's rule follows the
 * link: what it leads to is guarded (read-only, or kept from being made when missing)
 * for the home set (scan_home.c), masked for a protected directory (scan.c).
 *
 * Bounded: a home-set directory's own entries, three levels under ~/.config
 * (policy_home_links_depth), a protected directory three levels, ".git" directories
 * skipped, LINKS_EACH entries below each directory and LINKS_TOTAL a launch in all. What lies past
 * the bounds is not looked at (docs/sandbox.md). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "linux/scan_int.h"

#define LINKS_EACH  1024  /* entries below each directory looked at */
#define LINKS_TOTAL 16384 /* ... and in all, a launch */

static bool is_type(int dfd, const struct dirent *de, unsigned char want, mode_t mode)
{
	struct stat st;

	if (de->d_type != DT_UNKNOWN)
		return de->d_type == want;
	return fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       (st.st_mode & S_IFMT) == mode;
}

static void walk(struct linux_scan *s, const char *dir, int depth, int max, size_t *budget,
		 linux_scan_link_fn fn, void *arg)
{
	char path[PATH_MAX], real[PATH_MAX], tail[PATH_MAX];
	struct dirent *de;
	DIR *d;

	if (depth >= max || *budget == 0 || s->inner_links >= LINKS_TOTAL)
		return;
	/* O_NOFOLLOW: dir is a real path; a link put in its place since is not followed */
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL && *budget > 0 && s->inner_links < LINKS_TOTAL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, ".git")) /* a repository's own files: none run by name */
			continue;
		s->inner_links++;
		(*budget)--;
		if (snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "",
			     de->d_name) >= (int)sizeof(path))
			continue;
		if (is_type(dirfd(d), de, DT_LNK, S_IFLNK)) {
			tail[0] = '\0';
			int rc = linux_scan_resolve_tail(s, path, real, sizeof(real), true, tail,
							 sizeof(tail));
			fn(s, path, rc, real, tail, sizeof(tail), arg);
		} else if (is_type(dirfd(d), de, DT_DIR, S_IFDIR)) {
			walk(s, path, depth + 1, max, budget, fn, arg);
		}
	}
	closedir(d);
}

void linux_scan_inner_links(struct linux_scan *s, const char *dir, int depth, linux_scan_link_fn fn,
			    void *arg)
{
	size_t budget = LINKS_EACH; /* each its own (scan_pin.c's lesson: one large
				     * directory must not leave the next unchecked) */
	struct stat st;

	if (lstat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		walk(s, dir, 0, depth, &budget, fn, arg);
}

/* A protected path masked (how 0 or 1), or one to keep from being made. */
static void protect_one(struct linux_scan *s, const char *a)
{
	int how = linux_scan_add_mask_how(s, a);

	/* Missing, and a command could make it (scan_home.c): where a link leads
	 * or, with none on the way, in a writable tree by its name. */
	if (how == -2 || (how == -1 && linux_paths_beneath_any(a, &s->writable)))
		linux_paths_add(&s->floor_unmade, a);
}

/* A link inside a protected directory (scan_links.c): what it leads to is as secret as
 * the directory's own files (review 20: ~/.ssh/id_ed25519 -> ~/dotfiles/ssh/... was
 * readable in a dotfiles workspace). */
static void protected_link(struct linux_scan *s, const char *link, int rc, char *real, char *tail,
			   size_t tn, void *arg)
{
	(void)rc, (void)real, (void)tail, (void)tn, (void)arg;
	protect_one(s, link);
}

void linux_scan_protect(struct linux_scan *s, const char *a)
{
	char real[PATH_MAX];

	protect_one(s, a);
	if (linux_scan_realpath(s, a, real))
		linux_scan_inner_links(s, real, 3, protected_link, NULL);
}
