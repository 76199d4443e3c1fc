/* The agent harnesses halo-run speaks to: one row each, with the names it answers to
 * and what halo-run can do for it. Every place that takes a harness name (hook, hook
 * --wrap, policy render and --hook, check --harness, policy import --from, the usage
 * text and every "expected ..." message) reads this table, so an alias accepted in one
 * place is accepted in all that support the harness, and a message lists exactly the
 * names that would have worked. */
#include <stdio.h>
#include <string.h>

#include "policy/policy.h"

static const struct policy_harness harnesses[] = {
    {POLICY_HARNESS_CLAUDE_CODE,
     "claude-code",
     {"claude"},
     "Claude Code",
     POLICY_HARNESS_RENDER | POLICY_HARNESS_HOOK | POLICY_HARNESS_WRAP | POLICY_HARNESS_IMPORT},
    {POLICY_HARNESS_CODEX,
     "codex",
     {NULL},
     "Codex",
     POLICY_HARNESS_RENDER | POLICY_HARNESS_HOOK | POLICY_HARNESS_IMPORT},
    {POLICY_HARNESS_COPILOT,
     "copilot",
     {NULL},
     "Copilot CLI",
     POLICY_HARNESS_RENDER | POLICY_HARNESS_IMPORT},
    {POLICY_HARNESS_GEMINI,
     "gemini",
     {"gemini-cli"},
     "Gemini CLI",
     POLICY_HARNESS_RENDER | POLICY_HARNESS_HOOK},
    {POLICY_HARNESS_OPENCODE, "opencode", {NULL}, "OpenCode", POLICY_HARNESS_RENDER},
    {POLICY_HARNESS_CURSOR,
     "cursor",
     {"cursor-agent"},
     "Cursor",
     POLICY_HARNESS_RENDER | POLICY_HARNESS_IMPORT},
    /* Not a harness but the settings of Anthropic's sandbox-runtime, which import reads. */
    {POLICY_HARNESS_SRT,
     "srt",
     {"sandbox-runtime"},
     "sandbox-runtime (srt)",
     POLICY_HARNESS_IMPORT},
};

#define N_HARNESSES (sizeof(harnesses) / sizeof(harnesses[0]))

size_t policy_harness_count(void)
{
	return N_HARNESSES;
}

const struct policy_harness *policy_harness_at(size_t i)
{
	return i < N_HARNESSES ? &harnesses[i] : NULL;
}

const struct policy_harness *policy_harness_find(const char *name, unsigned need)
{
	for (size_t i = 0; name && i < N_HARNESSES; i++) {
		const struct policy_harness *h = &harnesses[i];
		bool hit = strcmp(name, h->name) == 0;
		for (size_t k = 0; !hit && k < POLICY_HARNESS_MAX_ALIASES && h->aliases[k]; k++)
			hit = strcmp(name, h->aliases[k]) == 0;
		if (hit)
			return (h->supports & need) == need ? h : NULL;
	}
	return NULL;
}

size_t policy_harness_names(unsigned need, char *buf, size_t n)
{
	size_t count = 0, total = 0, at = 0;

	for (size_t i = 0; i < N_HARNESSES; i++)
		total += (harnesses[i].supports & need) == need;
	if (n)
		buf[0] = 0;
	for (size_t i = 0; i < N_HARNESSES; i++) {
		if ((harnesses[i].supports & need) != need)
			continue;
		count++;
		const char *sep = count == 1 ? "" : count == total ? " or " : ", ";
		int w = snprintf(at < n ? buf + at : NULL, at < n ? n - at : 0, "%s%s", sep,
				 harnesses[i].name);
		if (w > 0)
			at += (size_t)w;
	}
	return at;
}
