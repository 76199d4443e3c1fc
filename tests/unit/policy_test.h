/* Helpers shared by the policy loading tests: load a policy from text, look for a
 * message among the diagnostics, and print them all when an assertion fails. */
#ifndef HALO_TESTS_POLICY_TEST_H
#define HALO_TESTS_POLICY_TEST_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "tests/unit/unit.h"

/* The standard world: $HOME equals the password database's home. */
static const struct policy_ctx pt_ctx = {"/home/alice", "/home/alice", "/home/alice/proj", NULL,
					 NULL};
/* $HOME elsewhere: rules must hold for both homes. */
static const struct policy_ctx pt_ctx2 = {"/home/alice", "/work/envhome", "/home/alice/proj", NULL,
					  NULL};

static inline bool pt_has(char *const *v, size_t n, const char *needle)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] && strstr(v[i], needle))
			return true;
	return false;
}

static inline bool pt_err(const struct policy_diags *d, const char *needle)
{
	return pt_has(d->errors, d->n_errors, needle);
}

static inline bool pt_warn(const struct policy_diags *d, const char *needle)
{
	return pt_has(d->warnings, d->n_warnings, needle);
}

static inline bool pt_list_has(const struct policy_list *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->items[i], s) == 0)
			return true;
	return false;
}

/* Every message, for failure output (static buffer: tests run one at a time). */
static inline const char *pt_dump(const struct policy_diags *d)
{
	static char buf[8192];
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < d->n_errors && o < sizeof(buf); i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "\n  E: %s", d->errors[i]);
	for (size_t i = 0; i < d->n_warnings && o < sizeof(buf); i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "\n  W: %s", d->warnings[i]);
	return buf;
}

/* Parse `text` (format 'y' or 'j') as "t.yaml"/"t.json" and, when it parses,
 * finalize it against ctx. Returns the first failing step's code. */
static inline int pt_load_ctx(const char *text, char format, const struct policy_ctx *ctx,
			      struct halo_policy **p, struct policy_diags *d)
{
	int rc = policy_parse_buffer(format == 'j' ? "t.json" : "t.yaml", text, strlen(text),
				     format, p, d);

	if (rc < 0)
		return rc;
	return policy_finalize(*p, ctx, d);
}

static inline int pt_load(const char *text, struct halo_policy **p, struct policy_diags *d)
{
	return pt_load_ctx(text, 'y', &pt_ctx, p, d);
}

#define PT_DATA "tests/data/policies/"

#endif
