/* Part of policy/policy.h (include that): the agent harnesses (harness.c). */
#ifndef HALO_POLICY_HARNESS_H
#define HALO_POLICY_HARNESS_H

#include "policy/policy.h"
#include "policy/policy_hosts.h"

/* ---------------------------------------------------------------- harnesses (harness.c) */

/* The agent harnesses: names, aliases and what halo-run supports for each. The one
 * table every command that takes a harness name reads. */
enum policy_harness_id {
	POLICY_HARNESS_CLAUDE_CODE,
	POLICY_HARNESS_CODEX,
	POLICY_HARNESS_COPILOT,
	POLICY_HARNESS_GEMINI,
	POLICY_HARNESS_OPENCODE,
	POLICY_HARNESS_CURSOR,
	POLICY_HARNESS_SRT,
};
#define POLICY_HARNESS_RENDER 1u /* policy render, check --harness */
#define POLICY_HARNESS_HOOK   2u /* halo-run hook reads its pre-tool events */
#define POLICY_HARNESS_WRAP                                                                        \
	4u			      /* hook --wrap, render --hook: it takes a rewritten input    \
				       * without a decision that would widen its permissions */
#define POLICY_HARNESS_IMPORT	   8u /* policy import --from */
#define POLICY_HARNESS_MAX_ALIASES 2

struct policy_harness {
	enum policy_harness_id id;
	const char *name; /* the canonical name, "claude-code" */
	const char *aliases[POLICY_HARNESS_MAX_ALIASES];
	const char *title; /* "Claude Code" */
	unsigned supports; /* POLICY_HARNESS_* */
};

size_t policy_harness_count(void);
const struct policy_harness *policy_harness_at(size_t i); /* NULL past the end */
/* The harness called `name` (its name or an alias, exactly) when it supports every
 * POLICY_HARNESS_* bit of `need`; else NULL. */
const struct policy_harness *policy_harness_find(const char *name, unsigned need);
/* "claude-code, codex or gemini": the names of the harnesses supporting `need`, for
 * messages (truncated to n). Returns the length it wanted. */
size_t policy_harness_names(unsigned need, char *buf, size_t n);

#endif
