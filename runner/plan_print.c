/* --dry-run: the one printer of a plan, whichever launcher made it, as text for a
 * person or (--json) as JSON for a harness that wants to read what will be enforced. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/runner_int.h"

/* The path lists of the walk's findings, in the order they are printed. */
static const struct group {
	enum plan_op op;
	const char *title;
	enum { ALWAYS, IF_GUARD, IF_ANY } when;
} groups[] = {
    {PLAN_MASK, "masked protected paths (no read, no write, no replace)", ALWAYS},
    {PLAN_CARVE, "allowRead carve-outs, read-only (a loosening)", ALWAYS},
    {PLAN_SANITIZE, "sanitized copies (secret entries removed)", ALWAYS},
    {PLAN_SSH_CONFIG, "ssh client configuration (ProxyCommand through halo-run's proxy)", IF_ANY},
    {PLAN_GUARD, "persistence guard (read-only)", IF_GUARD},
    {PLAN_PIN, "pinned (bound onto themselves: cannot be renamed, removed or replaced)", ALWAYS},
    {PLAN_REFUSE_CREATE, "missing guard targets (their creation refused by the sandbox's init)",
     IF_GUARD},
    {PLAN_REFUSE_PREFIX,
     "names kept by their start (each that exists guarded above; making one refused by the "
     "sandbox's init)",
     IF_ANY},
    {PLAN_SOCKET, "host unix sockets left reachable (sandbox.unixSockets)", IF_ANY},
    {PLAN_READONLY, "halo-run's own files (read-only)", IF_ANY},
};

/* Steps of `op` that are (own) or are not (!own) halo-run's own state. */
static size_t count_own(const struct halo_plan *p, enum plan_op op, bool own)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_steps; i++)
		n += p->steps[i].op == op && !(p->steps[i].flags & PLAN_F_OWN) == !own;
	return n;
}

/* The user's paths only: halo-run's own state (its index and session sockets and
 * directories) is enforced the same but said in one line, never listed. */
static void print_group(const struct halo_plan *p, const struct group *g, FILE *out)
{
	size_t n = count_own(p, g->op, false), own = count_own(p, g->op, true);

	if ((g->when == IF_GUARD && !p->guard) || (g->when == IF_ANY && !n)) {
		if (g->op == PLAN_GUARD)
			fprintf(out, "persistence guard: off (sandbox.guardPersistence: false)\n");
		return;
	}
	fprintf(out, "%s (%zu):\n", g->title, n);
	if (own)
		fprintf(out, "  (and %zu of halo-run's own: its index and session state)\n", own);
	for (size_t i = 0; i < p->n_steps; i++) {
		const struct plan_step *s = &p->steps[i];
		bool home = s->reason && strncmp(s->reason, PLAN_HOME_SET_REASON,
						 strlen(PLAN_HOME_SET_REASON)) == 0;
		if (s->op == g->op && !(s->flags & PLAN_F_OWN))
			fprintf(
			    out, "  %s%s%s%s%s%s%s%s\n", s->path,
			    g->op == PLAN_REFUSE_PREFIX ? "*" : "", s->src ? " <- " : "",
			    s->src ? s->src : "", home ? " (home set: " : "",
			    home ? s->reason + strlen(PLAN_HOME_SET_REASON) : "", home ? ")" : "",
			    s->flags & PLAN_F_UNLISTED ? "  (cannot be listed: masked whole)" : "");
	}
}

/* A launcher without mounts (macOS): its path rules, as its profile renders them. */
static void print_rules(const struct halo_plan *p, FILE *out)
{
	if (p->n_steps)
		fprintf(out, "file rules:\n");
	for (size_t i = 0; i < p->n_steps; i++)
		fprintf(out, "  %-13s %s%s\n", p->steps[i].path, p->steps[i].reason,
			p->steps[i].flags & PLAN_F_PATTERN ? " (a name pattern)" : "");
}

static void print_fs(const struct halo_plan *p, FILE *out)
{
	bool head = false;

	if (p->rules) {
		print_rules(p, out);
		return;
	}
	for (size_t i = 0; i < p->n_steps; i++) {
		const struct plan_step *s = &p->steps[i];
		if (!plan_op_is_layout(s->op))
			continue;
		if (!head)
			fprintf(out, "mounts:\n");
		head = true;
		fprintf(out, "  %-13s %s\n", s->path, s->reason);
	}
	if (!p->scanned)
		return;
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		print_group(p, &groups[i], out);
	fprintf(out, "workspace scan: %zu entries%s\n", p->entries_scanned,
		p->scan_truncated
		    ? " (NOT COMPLETE: refused under failIfUnavailable: true, stated otherwise)"
		    : "");
}

static void print_text(const char *title, const struct plan_text *t, const char *indent, FILE *out)
{
	if (title)
		fprintf(out, "%s:\n", title);
	for (size_t i = 0; i < t->n; i++)
		fprintf(out, "%s%s\n", indent, t->v[i]);
}

static void print_layers(const struct halo_plan *p, FILE *out)
{
	for (size_t i = 0; i < p->n_layers; i++) {
		const struct plan_layer *y = &p->layers[i];
		if (!y->label) /* said within another layer's line */
			continue;
		if (y->summary)
			fprintf(out, "%s: %s\n", y->label, y->summary);
		else
			fprintf(out, "%s:\n", y->label);
		print_text(NULL, &y->details, "  ", out);
	}
}

void runner_plan_print(const struct halo_plan *p, FILE *out)
{
	fprintf(out, "%s\npolicy: %s\nmode: %s\nworkspace: %s\ncommand:", p->title,
		p->policy_source, p->mode, p->workspace ? p->workspace : "?");
	for (size_t i = 0; p->argv && p->argv[i]; i++)
		fprintf(out, " %s", p->argv[i]);
	fprintf(out, "\n");
	if (p->namespaces)
		fprintf(out, "namespaces: %s\n", p->namespaces);
	print_fs(p, out);
	print_text("limits", &p->limits, "  ", out);
	print_text("environment", &p->env, "  ", out);
	print_text(NULL, &p->egress.notes, "", out);
	print_layers(p, out);
	if (p->gaps.n)
		print_text(p->gaps_title ? p->gaps_title : "not enforced", &p->gaps, "  ", out);
	print_text(NULL, &p->extra, "", out);
}
