/* --dry-run --json: the plan as one JSON object, for harnesses. Keys:
 *   platform, policy, mode, workspace, command[], namespaces{available, required,
 *   summary}, steps[{op, path, reason, src?, origin?, pattern?, shown?}], scan{entries, truncated},
 *   layers[{name, required, available, summary, details[]}], limits{cpuSeconds...,
 *   lines[]}, environment[], egress{proxy, listeners[],
 *   environment[], hostPorts[], notes[]},
 *   gaps[], warnings[], rendering[] (the platform's own: the macOS profile). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "runner/runner_int.h"

static cJSON *strings(const struct plan_text *t)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < t->n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(t->v[i]));
	return a;
}

static void add_str(cJSON *o, const char *k, const char *v)
{
	cJSON_AddItemToObject(o, k, v ? cJSON_CreateString(v) : cJSON_CreateNull());
}

static cJSON *steps(const struct halo_plan *p)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < p->n_steps; i++) {
		const struct plan_step *s = &p->steps[i];
		cJSON *o = cJSON_CreateObject();
		add_str(o, "op", plan_op_name(s->op));
		add_str(o, "path", s->path);
		add_str(o, "reason", s->reason);
		if (s->src)
			add_str(o, "src", s->src);
		if (s->origin)
			add_str(o, "origin", s->origin);
		if (s->flags & PLAN_F_PATTERN)
			cJSON_AddBoolToObject(o, "pattern", 1);
		if (s->flags & PLAN_F_SHOWN)
			cJSON_AddBoolToObject(o, "shown", 1); /* no mount of its own */
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *layers(const struct halo_plan *p)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < p->n_layers; i++) {
		const struct plan_layer *y = &p->layers[i];
		cJSON *o = cJSON_CreateObject();
		add_str(o, "name", y->name);
		cJSON_AddBoolToObject(o, "required", y->required);
		cJSON_AddBoolToObject(o, "available", y->available);
		add_str(o, "summary", y->summary);
		cJSON_AddItemToObject(o, "details", strings(&y->details));
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static void add_limit(cJSON *o, const char *k, long long v)
{
	cJSON_AddItemToObject(o, k, v > 0 ? cJSON_CreateNumber((double)v) : cJSON_CreateNull());
}

static cJSON *limits(const struct halo_plan *p)
{
	cJSON *o = cJSON_CreateObject();

	add_limit(o, "cpuSeconds", p->limit_values.cpu_seconds);
	add_limit(o, "memoryBytes", p->limit_values.memory_bytes);
	add_limit(o, "fileSizeBytes", p->limit_values.file_size_bytes);
	add_limit(o, "openFiles", p->limit_values.open_files);
	add_limit(o, "processes", p->limit_values.processes);
	add_limit(o, "wallSeconds", p->limit_values.wall_seconds);
	cJSON_AddItemToObject(o, "lines", strings(&p->limits));
	return o;
}

static cJSON *egress(const struct halo_plan *p)
{
	cJSON *o = cJSON_CreateObject(), *ports = cJSON_CreateArray();

	cJSON_AddBoolToObject(o, "proxy", p->egress.proxy);
	cJSON_AddItemToObject(o, "listeners", strings(&p->egress.listeners));
	cJSON_AddItemToObject(o, "environment", strings(&p->egress.env));
	for (size_t i = 0; p->egress.host_ports && i < p->egress.host_ports->n; i++)
		cJSON_AddItemToArray(ports, cJSON_CreateNumber(p->egress.host_ports->items[i]));
	cJSON_AddItemToObject(o, "hostPorts", ports);
	cJSON_AddItemToObject(o, "notes", strings(&p->egress.notes));
	return o;
}

static cJSON *head(const struct halo_plan *p)
{
	cJSON *o = cJSON_CreateObject(), *cmd = cJSON_CreateArray(), *ns;

	add_str(o, "platform", p->platform);
	add_str(o, "policy", p->policy_source);
	add_str(o, "mode", p->mode);
	add_str(o, "workspace", p->workspace);
	for (size_t i = 0; p->argv && p->argv[i]; i++)
		cJSON_AddItemToArray(cmd, cJSON_CreateString(p->argv[i]));
	cJSON_AddItemToObject(o, "command", cmd);
	if (p->namespaces) {
		ns = cJSON_AddObjectToObject(o, "namespaces");
		cJSON_AddBoolToObject(ns, "available", p->namespaces_available);
		cJSON_AddBoolToObject(ns, "required", p->namespaces_required);
		add_str(ns, "summary", p->namespaces);
	}
	return o;
}

int runner_plan_json(const struct halo_plan *p, FILE *out)
{
	cJSON *o = head(p), *scan;
	char *text;

	cJSON_AddItemToObject(o, "steps", steps(p));
	if (p->scanned) {
		scan = cJSON_AddObjectToObject(o, "scan");
		cJSON_AddNumberToObject(scan, "entries", (double)p->entries_scanned);
		cJSON_AddBoolToObject(scan, "truncated", p->scan_truncated);
	}
	cJSON_AddItemToObject(o, "layers", layers(p));
	cJSON_AddItemToObject(o, "limits", limits(p));
	cJSON_AddItemToObject(o, "environment", strings(&p->env));
	cJSON_AddItemToObject(o, "egress", egress(p));
	cJSON_AddItemToObject(o, "gaps", strings(&p->gaps));
	cJSON_AddItemToObject(o, "warnings", strings(&p->warnings));
	cJSON_AddItemToObject(o, "rendering", strings(&p->extra));
	text = cJSON_Print(o);
	cJSON_Delete(o);
	if (!text)
		return -ENOMEM;
	fprintf(out, "%s\n", text);
	free(text);
	return 0;
}
