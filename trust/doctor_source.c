/* Where the policy in effect comes from, and whether someone with less privilege than
 * its author could have changed it: a machine policy in /etc that the invoking user (or
 * anyone but root) can write, a policy file in a directory others can write (it can be
 * replaced), HALO_POLICY in the environment (whoever sets the environment chooses the
 * policy), and halo-run's own binary, which carries the embedded default. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trust/doctor_int.h"

static const char *const machine_files[] = {"/etc/halo/policy.yaml", "/etc/halo/policy.json"};

static bool is_machine(const char *path)
{
	return strncmp(path, "/etc/", 5) == 0;
}

static bool unmapped_seen;

/* In a user namespace other than the initial one, a file whose owner has no mapping
 * shows as the overflow uid (65534): its real owner is outside and cannot be judged
 * from here. */
static bool unmapped(uid_t uid)
{
	static int nested = -1;
	char map[128] = "";
	long overflow;
	FILE *f;

	if (nested < 0) {
		f = fopen("/proc/self/uid_map", "re");
		nested = f && fgets(map, sizeof(map), f) &&
			 !(strtoul(map, NULL, 10) == 0 && strstr(map, "4294967295"));
		if (f)
			fclose(f);
	}
	f = fopen("/proc/sys/kernel/overflowuid", "re");
	overflow = f && fgets(map, sizeof(map), f) ? strtol(map, NULL, 10) : 65534;
	if (f)
		fclose(f);
	return nested && (long)uid == overflow;
}

static bool other_owner(uid_t uid)
{
	if (uid != 0 && uid != getuid() && unmapped(uid)) {
		unmapped_seen = true;
		return false;
	}
	return uid != 0 && uid != getuid();
}

/* Every directory from path's parent up to "/": writable by group or others without
 * the sticky bit, or owned by another user, means the file can be replaced. */
static void check_dirs(struct doctor *d, const char *path, const char *label)
{
	char dir[4096];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", path);
	for (char *slash = strrchr(dir, '/'); slash; slash = strrchr(dir, '/')) {
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (stat(dir, &st) == 0) {
			if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
				doctor_add(d, true, NULL, "chmod go-w on that directory",
					   "%s %s is in %s, which group or others can write (mode "
					   "%04o): the file can be replaced",
					   label, path, dir, (unsigned)(st.st_mode & 07777));
			else if (other_owner(st.st_uid))
				doctor_add(
				    d, true, NULL,
				    "keep policy files in directories owned by root (or by "
				    "you, for your own policy)",
				    "%s %s is in %s, owned by uid %u: that user can replace the "
				    "file",
				    label, path, dir, (unsigned)st.st_uid);
			else if (is_machine(path) && getuid() != 0 && st.st_uid == getuid())
				doctor_add(d, true, NULL, "chown root on that directory",
					   "%s %s is in %s, which you own: you can replace the "
					   "machine's policy",
					   label, path, dir);
		}
		if (strcmp(dir, "/") == 0)
			break;
	}
}

static void check_file(struct doctor *d, const char *path, const char *label)
{
	struct stat st, lst;

	if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
		char *real = realpath(path, NULL);
		doctor_add(d, false, NULL, "none needed if the link and its target are both safe",
			   "%s %s is a symbolic link to %s (both checked)", label, path,
			   real ? real : "(unresolvable)");
		if (other_owner(lst.st_uid))
			doctor_add(d, true, NULL, "replace the link by a root-owned file",
				   "%s %s is a link owned by uid %u", label, path,
				   (unsigned)lst.st_uid);
		if (real)
			check_file(d, real, label);
		free(real);
		check_dirs(d, path, label);
		return;
	}
	if (stat(path, &st) < 0)
		return; /* loading it already failed loudly */
	if (is_machine(path) && st.st_uid != 0)
		doctor_add(d, true, NULL, "as root: chown root:root on it, chmod 644",
			   "the machine policy %s is owned by uid %u, not root", path,
			   (unsigned)st.st_uid);
	else if (other_owner(st.st_uid))
		doctor_add(d, true, NULL, "use a policy file owned by root or by you",
			   "%s %s is owned by uid %u, who can change it", label, path,
			   (unsigned)st.st_uid);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		doctor_add(d, true, NULL, "chmod go-w on it",
			   "%s %s is writable by group or others (mode %04o)", label, path,
			   (unsigned)(st.st_mode & 07777));
	else if (is_machine(path) && getuid() != 0 && access(path, W_OK) == 0)
		doctor_add(d, true, NULL, "as root: chown root:root on it, chmod 644",
			   "the machine policy %s is writable by you (uid %u): you can loosen it",
			   path, (unsigned)getuid());
	check_dirs(d, path, label);
}

static const char *existing_machine_file(void)
{
	for (size_t i = 0; i < sizeof(machine_files) / sizeof(machine_files[0]); i++)
		if (access(machine_files[i], F_OK) == 0)
			return machine_files[i];
	return NULL;
}

static void check_binary(struct doctor *d)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct stat st;

	if (n <= 0 || stat(exe, &(st)) < 0)
		return;
	exe[n] = '\0';
	if (other_owner(st.st_uid) || (st.st_mode & (S_IWGRP | S_IWOTH)))
		doctor_add(
		    d, true, NULL, "install it as root, mode 0755 (make install)",
		    "halo-run itself (%s) can be changed by another user (owner uid %u, mode "
		    "%04o): it holds the launcher and the embedded default policy",
		    exe, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	check_dirs(d, exe, "halo-run's binary");
}

void doctor_source(struct doctor *d, const struct runner_opts *o, const struct runner_env *re)
{
	const char *env = getenv("HALO_POLICY");
	const char *machine = existing_machine_file();

	if (o->n_policies)
		snprintf(d->origin, sizeof(d->origin), "--policy on the command line");
	else if (!re->discovered[0])
		snprintf(d->origin, sizeof(d->origin),
			 "the embedded default (no policy file found)");
	else if (env && *env)
		snprintf(d->origin, sizeof(d->origin), "$HALO_POLICY");
	else if (is_machine(re->discovered))
		snprintf(d->origin, sizeof(d->origin), "the machine policy (/etc/halo)");
	else
		snprintf(d->origin, sizeof(d->origin), "your own policy (~/.config/halo)");
	if (re->managed[0])
		check_file(d, re->managed, "the managed policy");
	for (size_t i = 0; i < re->n_paths; i++)
		check_file(d, re->paths[i],
			   is_machine(re->paths[i]) ? "the machine policy" : "policy file");
	if (env && *env && !o->n_policies) {
		if (machine && strcmp(env, machine) != 0)
			doctor_add(d, true, NULL,
				   "unset HALO_POLICY (or point it at the machine policy)",
				   "HALO_POLICY is set in the environment and replaces the machine "
				   "policy %s",
				   machine);
		else
			doctor_add(d, false, NULL,
				   "unset it unless the environment comes from someone you trust",
				   "HALO_POLICY is set in the environment: whoever sets this "
				   "process's environment chooses the policy");
	}
	if (o->n_policies && machine)
		doctor_add(d, false, NULL, "leave out --policy to use the machine policy",
			   "the machine policy %s is not in effect: --policy files replace it",
			   machine);
	check_binary(d);
	if (unmapped_seen)
		doctor_add(d, false, NULL, "run doctor outside the user namespace to judge them",
			   "some of these files are owned by a user with no mapping in this user "
			   "namespace: who owns them could not be checked");
}
