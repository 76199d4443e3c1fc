/* Internal to `halo-run doctor`: doctor.c collects and prints, doctor_layers.c asks the
 * kernel what it offers (by trying, in throwaway children), doctor_source.c asks who
 * could have changed the policy in effect. */
#ifndef HALO_RUNNER_DOCTOR_INT_H
#define HALO_RUNNER_DOCTOR_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"
#include "opts/opts.h"
#include "linux/linux.h"
#include "plan/plan.h"
#include "rlimits/rlimits.h"
#include "trust/trust.h"

#define DOCTOR_MAX_LAYERS 16

struct doctor_layer {
	const char *key;  /* JSON name: "user-namespace" */
	const char *name; /* "user namespace" */
	bool available;
	char detail[64];  /* what the machine said: "available", "unavailable (EPERM)" */
	char error[192];  /* when unavailable: the attempt and its error, in words */
	bool used;	  /* does this policy rely on it? */
	char use[96];	  /* in words: "used", "not used (sandbox.mode: off)" */
	const char *gaps; /* what it does not stop, even when available */
};

struct doctor_finding {
	bool problem;	     /* a problem makes doctor exit 1; a note does not */
	const char *harness; /* posture findings: the harness; else NULL */
	char *text;
	char *fix; /* may hold several lines (a profile to install) */
};

struct doctor {
	const struct halo_policy *p;
	/* What a launch of the policy would apply here (runner_plan_of, no scan): which
	 * layers are used and required, which limits are asked. */
	struct halo_plan plan;
	struct doctor_layer layers[DOCTOR_MAX_LAYERS];
	size_t n_layers;
	struct doctor_finding *f;
	size_t n_f, cap_f;
	char origin[160]; /* where the policy in effect comes from, in words */
	bool oom;
};

/* Record a finding (problem or note; harness NULL except for posture). */
void doctor_add(struct doctor *d, bool problem, const char *harness, const char *fix,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Try every layer on this machine and record what the policy uses and what fails. */
void doctor_layers(struct doctor *d);

/* Where the policy comes from and whether a less-privileged user could have changed
 * it (the files, their directories, HALO_POLICY, halo-run's own binary). */
void doctor_source(struct doctor *d, const struct runner_opts *o, const struct runner_env *re);

#endif
