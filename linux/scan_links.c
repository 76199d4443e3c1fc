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
 * (policy_home_links_depth), a protected directory two, ".git" directories
 * skipped, LINKS_EACH entries below each directory and LINKS_TOTAL a launch in all.
 * What lies past the bounds is not looked at (docs/sandbox.md). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "linux/scan_int.h"

#define LINKS_EACH  POLICY_LINKS_EACH  /* entries below each directory looked at */
#define LINKS_TOTAL POLICY_LINKS_TOTAL /* ... and in all, a launch */

static bool is_type(int dfd, const struct dirent *de, unsigned char want, mode_t mode)
{
	struct stat st;

	if (de->d_type != DT_UNKNOWN)
		return de->d_type == want;
	return fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       (st.st_mode & S_IFMT) == mode;
}

static bool is_dir(const char *p)
{
	struct stat st;

	return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
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
	while ((de = readdir(d)) != NULL) {
		if (*budget == 0 || s->inner_links >= LINKS_TOTAL) {
			*budget = 0; /* stopped here: said (linux_scan_inner_links) */
			break;
		}
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
			/* a link to a directory: the links in it too (review 22: ~/.ssh/keys ->
			 * ~/dotfiles/keys, whose files link on into ~/dotfiles/vault) */
			if (rc == 0 && depth + 1 < max && is_dir(real))
				walk(s, real, depth + 1, max, budget, fn, arg);
		} else if (is_type(dirfd(d), de, DT_DIR, S_IFDIR)) {
			walk(s, path, depth + 1, max, budget, fn, arg);
		} else if (s->links_files && is_type(dirfd(d), de, DT_REG, S_IFREG)) {
			struct stat st; /* a file with another name: fn(..., 1, path, ...) */
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISREG(st.st_mode) && st.st_nlink > 1) {
				tail[0] = '\0';
				fn(s, path, 1, path, tail, sizeof(tail), arg);
			}
		}
	}
	closedir(d);
}

/* Seen already this scan (the home set is walked once per spelling of each home: its
 * named and resolved forms, and with the XDG directories resolved): true, else noted. */
static bool seen_before(struct linux_paths *seen, const char *p)
{
	for (size_t i = 0; i < seen->n; i++)
		if (strcmp(seen->v[i], p) == 0)
			return true;
	linux_paths_add(seen, p);
	return false;
}

bool linux_scan_links_seen(struct linux_scan *s, const char *path)
{
	return seen_before(&s->links_seen, path);
}

void linux_scan_inner_links(struct linux_scan *s, const char *dir, int depth, linux_scan_link_fn fn,
			    void *arg)
{
	size_t budget = LINKS_EACH; /* each its own (scan_pin.c's lesson: one large
				     * directory must not leave the next unchecked) */
	struct stat st;

	if (seen_before(&s->links_seen, dir))
		return;
	if (lstat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		walk(s, dir, 0, depth, &budget, fn, arg);
	if (budget == 0 || s->inner_links >= LINKS_TOTAL) /* (a bound met: said) */
		linux_paths_add(&s->links_unchecked, dir);
}

/* A protected path masked (how 0 at a, 1 where a link on the way leads), or one to
 * keep from being made: how. */
static int protect_one(struct linux_scan *s, const char *a)
{
	int how = linux_scan_add_mask_how(s, a);

	/* Missing, and a command could make it (scan_home.c): where a link leads
	 * or, with none on the way, in a writable tree by its name. */
	if (how == -2 || (how == -1 && linux_paths_beneath_any(a, &s->writable)))
		linux_paths_add(&s->floor_unmade, a);
	return how;
}

/* A link inside a protected directory (scan_links.c): what it leads to is as secret as
 * the directory's own files (review 20: ~/.ssh/id_ed25519 -> ~/dotfiles/ssh/... was
 * readable in a dotfiles workspace). */
static void protected_link(struct linux_scan *s, const char *link, int rc, char *real, char *tail,
			   size_t tn, void *arg)
{
	(void)real, (void)tail, (void)tn, (void)arg;
	if (rc != 1) /* (a file with other names: the documented limit of protected files) */
		protect_one(s, link);
}

void linux_scan_protect(struct linux_scan *s, const char *a)
{
	char real[PATH_MAX];
	int how = protect_one(s, a);

	/* (most floor entries are missing: nothing more to ask of them) */
	if (how == 0)
		linux_scan_inner_links(s, a, 2, protected_link, NULL);
	else if (how == 1 && linux_scan_realpath(s, a, real))
		linux_scan_inner_links(s, real, 2, protected_link, NULL);
}

void linux_scan_say_links(const struct linux_launch *l, struct linux_scan *s)
{
	char shown[4 * PATH_MAX + 1];

	linux_paths_sort_unique(&s->home_hardlinks);
	for (size_t i = 0; l->warnings && i < s->home_hardlinks.n; i++)
		plan_text_add(l->warnings,
			      "WARNING: %s runs code later (the home persistence set) and has "
			      "another name (a hard link) on the file system of a tree this "
			      "command writes: through that name the command can change it; "
			      "find it with `find / -xdev -samefile` and replace one with a copy",
			      policy_printable(s->home_hardlinks.v[i], shown, sizeof(shown)));

	linux_paths_sort_unique(&s->links_unchecked);
	for (size_t i = 0; l->warnings && i < s->links_unchecked.n; i++)
		plan_text_add(l->warnings,
			      "WARNING: %s: more entries than halo-run looks through for symlinks "
			      "(%d below a protected or home-set directory, %d a launch): a link "
			      "further in is not followed, and what it leads to keeps the rule of "
			      "where it is; name that in sandbox.protectedPaths",
			      policy_printable(s->links_unchecked.v[i], shown, sizeof(shown)),
			      LINKS_EACH, LINKS_TOTAL);
}
