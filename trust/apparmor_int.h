/* doctor: AppArmor's user-namespace restriction and halo-run's own profile
 * (doctor_apparmor.c). */
#ifndef HALO_RUNNER_DOCTOR_APPARMOR_H
#define HALO_RUNNER_DOCTOR_APPARMOR_H

#include <stddef.h>

struct doctor;

/* The files read; tests point them at fixtures. */
struct doctor_apparmor_paths {
	const char *restrict_sysctl; /* kernel.apparmor_restrict_unprivileged_userns */
	const char *profiles;	     /* the loaded profiles, "name (mode)" a line */
	const char *current;	     /* this process's confinement */
	const char *current_old;     /* the same, kernels before 5.1's attr/apparmor/ */
	const char *profile_file;    /* the package's profile */
};

enum doctor_apparmor_state {
	DOCTOR_AA_NOT_RESTRICTED, /* no restriction (or no AppArmor): nothing to say */
	DOCTOR_AA_APPLIES,	  /* restricted, and this process runs under the profile */
	DOCTOR_AA_ELSEWHERE,	  /* loaded, but attached to another path than this binary */
	DOCTOR_AA_NOT_LOADED,
	DOCTOR_AA_UNKNOWN, /* the profiles list cannot be read (not root) */
};

/* What applies here, in words (text) with the exact command (fix). */
enum doctor_apparmor_state doctor_apparmor_assess(const struct doctor_apparmor_paths *p,
						  const char *exe, char *text, size_t text_n,
						  char *fix, size_t fix_n);

/* Add the note to doctor's findings (nothing when not restricted). */
void doctor_apparmor(struct doctor *d);

#endif
