/* doctor: where AppArmor restricts unprivileged user namespaces
 * (kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu 23.10+ and its CI images),
 * is halo-run's own profile loaded, does it apply to this binary, and the exact command
 * that fixes it. The package ships the profile as /etc/apparmor.d/halo-run (it grants
 * `userns` to /usr/bin/halo-run only, like Ubuntu's bwrap profile) and loads it in its
 * postinst; nothing else on the machine is loosened. A note, never a problem: when the
 * restriction does stop halo-run, the user-namespace layer already fails as one. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trust/apparmor_int.h"
#include "trust/doctor_int.h"

#define AA_PROFILE_NAME "halo-run"

static const struct doctor_apparmor_paths system_paths = {
    .restrict_sysctl = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    .profiles = "/sys/kernel/security/apparmor/profiles",
    .current = "/proc/self/attr/apparmor/current",
    .current_old = "/proc/self/attr/current",
    .profile_file = "/etc/apparmor.d/halo-run",
};

/* The first len-1 bytes of path; -errno when it cannot be read. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, got = 0;

	buf[0] = '\0';
	if (fd < 0)
		return -errno;
	while ((size_t)got + 1 < len && (n = read(fd, buf + got, len - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return got;
}

/* Does the profiles list ("name (mode)\n" per line) hold halo-run? */
static int profile_listed(const char *path)
{
	FILE *f = fopen(path, "re");
	char line[512];
	int found = 0;

	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f))
		found = strncmp(line, AA_PROFILE_NAME " (", strlen(AA_PROFILE_NAME) + 2) == 0;
	fclose(f);
	return found;
}

/* This process's confinement: "halo-run (unconfined)" when the profile applies. */
static bool confined_by_profile(const struct doctor_apparmor_paths *p)
{
	char cur[256];

	if (read_small(p->current, cur, sizeof(cur)) <= 0 &&
	    read_small(p->current_old, cur, sizeof(cur)) <= 0)
		return false;
	return strncmp(cur, AA_PROFILE_NAME " (", strlen(AA_PROFILE_NAME) + 2) == 0;
}

enum doctor_apparmor_state doctor_apparmor_assess(const struct doctor_apparmor_paths *p,
						  const char *exe, char *text, size_t text_n,
						  char *fix, size_t fix_n)
{
	char buf[32];
	int listed;

	text[0] = fix[0] = '\0';
	if (read_small(p->restrict_sysctl, buf, sizeof(buf)) <= 0 || strtol(buf, NULL, 10) != 1)
		return DOCTOR_AA_NOT_RESTRICTED;
	if (confined_by_profile(p)) {
		snprintf(text, text_n,
			 "AppArmor restricts unprivileged user namespaces "
			 "(kernel.apparmor_restrict_unprivileged_userns=1); halo-run runs under "
			 "its profile '" AA_PROFILE_NAME "', which grants them");
		snprintf(fix, fix_n, "nothing to do");
		return DOCTOR_AA_APPLIES;
	}
	listed = profile_listed(p->profiles);
	if (listed > 0) {
		snprintf(text, text_n,
			 "AppArmor restricts unprivileged user namespaces; the '" AA_PROFILE_NAME
			 "' profile is loaded but does not apply to %s (it attaches to "
			 "/usr/bin/halo-run)",
			 exe);
		snprintf(fix, fix_n,
			 "run /usr/bin/halo-run, or give this binary a profile of its own, as "
			 "root:\n"
			 "printf 'abi <abi/4.0>,\\ninclude <tunables/global>\\nprofile "
			 "halo-run-local %s flags=(unconfined) {\\n  userns,\\n}\\n' > "
			 "/etc/apparmor.d/halo-run-local && apparmor_parser -r "
			 "/etc/apparmor.d/halo-run-local",
			 exe);
		return DOCTOR_AA_ELSEWHERE;
	}
	if (listed == 0)
		snprintf(text, text_n,
			 "AppArmor restricts unprivileged user namespaces; the '" AA_PROFILE_NAME
			 "' profile is not loaded");
	else
		snprintf(text, text_n,
			 "AppArmor restricts unprivileged user namespaces; whether the "
			 "'" AA_PROFILE_NAME "' profile is loaded cannot be told (%s: %s)",
			 p->profiles, strerror(-listed));
	if (access(p->profile_file, R_OK) == 0)
		snprintf(fix, fix_n, "as root: apparmor_parser -r %s", p->profile_file);
	else
		snprintf(fix, fix_n,
			 "install the package (apt-get install ./halo-run_*.deb installs and loads "
			 "%s), or as root write the profile shown with the user-namespace problem "
			 "to %s and run: apparmor_parser -r %s",
			 p->profile_file, p->profile_file, p->profile_file);
	return listed == 0 ? DOCTOR_AA_NOT_LOADED : DOCTOR_AA_UNKNOWN;
}

void doctor_apparmor(struct doctor *d)
{
	char exe[4096], text[4096 + 256], fix[2 * 4096 + 512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = '\0';
	if (doctor_apparmor_assess(&system_paths, exe, text, sizeof(text), fix, sizeof(fix)) !=
	    DOCTOR_AA_NOT_RESTRICTED)
		doctor_add(d, false, NULL, fix, "%s", text);
}
