/* `halo-run doctor [--policy F]... [--json]`: does this machine enforce the policy?
 * For each layer, whether the machine has it (tried, not guessed), whether the policy
 * uses it and what it does not stop; where the policy comes from and whether a
 * less-privileged user could have changed it; each problem with its fix; and the
 * posture of the agent harnesses installed here. Exit 0 when everything the policy
 * asks for is enforceable, 1 otherwise. Harness posture findings are reported but do
 * not change the exit status: they are about the harness's own sandbox, not halo-run. */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trust/trust.h"
#include "trust/apparmor_int.h"
#include "trust/doctor_int.h"

void doctor_add(struct doctor *d, bool problem, const char *harness, const char *fix,
		const char *fmt, ...)
{
	struct doctor_finding *f;
	va_list ap;

	if (d->n_f == d->cap_f) {
		size_t cap = d->cap_f ? d->cap_f * 2 : 16;
		struct doctor_finding *nf = realloc(d->f, cap * sizeof(*nf));
		if (!nf) {
			d->oom = true;
			return;
		}
		d->f = nf;
		d->cap_f = cap;
	}
	f = &d->f[d->n_f];
	f->problem = problem;
	f->harness = harness;
	f->fix = strdup(fix ? fix : "");
	va_start(ap, fmt);
	if (vasprintf(&f->text, fmt, ap) < 0)
		f->text = NULL;
	va_end(ap);
	if (!f->text || !f->fix) {
		free(f->text);
		free(f->fix);
		d->oom = true;
		return;
	}
	d->n_f++;
}

static void on_posture(void *arg, const char *harness, const char *problem, const char *fix)
{
	doctor_add(arg, false, harness, fix, "%s", problem);
}

static const char *get_env(const char *name)
{
	return getenv(name);
}

static size_t count(const struct doctor *d, bool problems, bool posture)
{
	size_t n = 0;

	for (size_t i = 0; i < d->n_f; i++)
		n += d->f[i].problem == problems && (d->f[i].harness != NULL) == posture;
	return n;
}

/* ---------------------------------------------------------------- text */

/* A fix may span lines (a profile to install): the first follows "fix: ", the rest
 * are indented under it. */
static void print_fix(const char *fix, const char *indent)
{
	const char *nl = strchr(fix, '\n');

	if (!nl) {
		printf("%sfix: %s\n", indent, fix);
		return;
	}
	printf("%sfix: %.*s\n", indent, (int)(nl - fix), fix);
	for (const char *line = nl + 1; *line;) {
		nl = strchr(line, '\n');
		printf("%s     %.*s\n", indent, nl ? (int)(nl - line) : (int)strlen(line), line);
		line = nl ? nl + 1 : line + strlen(line);
	}
}

static void print_text(const struct doctor *d, const struct runner_env *re)
{
	size_t problems = count(d, true, false);

	printf("halo-run doctor (uid %u%s)\npolicy: %s", (unsigned)getuid(),
	       getuid() == 0 ? ", root" : "", d->origin);
	for (size_t i = 0; i < re->n_paths; i++)
		printf("%s%s", i ? " + " : ": ", re->paths[i]);
	if (re->managed[0])
		printf("\nmanaged: %s (the first layer: the others may only tighten it)",
		       re->managed);
	printf("\n\n%-18s %-28s %s\n", "LAYER", "THIS MACHINE", "THE POLICY");
	for (size_t i = 0; i < d->n_layers; i++)
		printf("%-18s %-28s %s\n", d->layers[i].name, d->layers[i].detail,
		       d->layers[i].use);
	for (size_t i = 0, first = 1; i < d->n_layers; i++)
		if (d->layers[i].error[0]) {
			printf("%s  %s: %s\n", first ? "\nwhat failed:\n" : "", d->layers[i].name,
			       d->layers[i].error);
			first = 0;
		}
	printf("\nwhat each layer does not stop:\n");
	for (size_t i = 0; i < d->n_layers; i++)
		printf("  %s: %s\n", d->layers[i].name, d->layers[i].gaps);
	if (count(d, true, false) + count(d, false, false))
		printf("\n");
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < d->n_f; i++) {
			const struct doctor_finding *f = &d->f[i];
			if (f->harness || f->problem != (pass == 0))
				continue;
			printf("%s: %s\n", f->problem ? "problem" : "note", f->text);
			print_fix(f->fix, "  ");
		}
	if (count(d, false, true))
		printf("\nharness posture (reported; does not change the exit status):\n");
	for (size_t i = 0; i < d->n_f; i++)
		if (d->f[i].harness)
			printf("posture:%s: %s; fix: %s\n", d->f[i].harness, d->f[i].text,
			       d->f[i].fix);
	if (problems)
		printf("\ndoctor: %zu problem%s: the policy is NOT fully enforceable on this "
		       "machine\n",
		       problems, problems == 1 ? "" : "s");
	else
		printf("\ndoctor: everything the policy asks for is enforceable on this machine\n");
}

/* ---------------------------------------------------------------- JSON */

static cJSON *findings_json(const struct doctor *d, bool problems, bool posture)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; i < d->n_f; i++) {
		const struct doctor_finding *f = &d->f[i];
		cJSON *o;
		if (f->problem != problems || (f->harness != NULL) != posture)
			continue;
		o = cJSON_CreateObject();
		if (posture)
			cJSON_AddStringToObject(o, "harness", f->harness);
		cJSON_AddStringToObject(o,
					posture	   ? "problem"
					: problems ? "problem"
						   : "note",
					f->text);
		cJSON_AddStringToObject(o, "fix", f->fix);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static void print_json(const struct doctor *d, const struct runner_env *re)
{
	cJSON *root = cJSON_CreateObject(), *pol = cJSON_CreateObject(),
	      *files = cJSON_CreateArray();
	cJSON *layers = cJSON_CreateArray();
	char *text;

	cJSON_AddNumberToObject(root, "uid", (double)getuid());
	cJSON_AddStringToObject(pol, "origin", d->origin);
	for (size_t i = 0; i < re->n_paths; i++)
		cJSON_AddItemToArray(files, cJSON_CreateString(re->paths[i]));
	cJSON_AddItemToObject(pol, "files", files);
	if (re->managed[0])
		cJSON_AddStringToObject(pol, "managed", re->managed);
	cJSON_AddItemToObject(root, "policy", pol);
	for (size_t i = 0; i < d->n_layers; i++) {
		const struct doctor_layer *l = &d->layers[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "layer", l->key);
		cJSON_AddBoolToObject(o, "available", l->available);
		cJSON_AddStringToObject(o, "machine", l->detail);
		if (l->error[0])
			cJSON_AddStringToObject(o, "error", l->error);
		cJSON_AddBoolToObject(o, "used", l->used);
		cJSON_AddStringToObject(o, "policy", l->use);
		cJSON_AddStringToObject(o, "does_not_stop", l->gaps);
		cJSON_AddItemToArray(layers, o);
	}
	cJSON_AddItemToObject(root, "layers", layers);
	cJSON_AddItemToObject(root, "problems", findings_json(d, true, false));
	cJSON_AddItemToObject(root, "notes", findings_json(d, false, false));
	cJSON_AddItemToObject(root, "posture", findings_json(d, false, true));
	cJSON_AddBoolToObject(root, "enforceable", count(d, true, false) == 0);
	text = cJSON_Print(root);
	if (text)
		printf("%s\n", text);
	free(text);
	cJSON_Delete(root);
}

/* ---------------------------------------------------------------- the command */

int runner_cmd_doctor(const struct runner_opts *o)
{
	struct runner_env re;
	struct doctor d;
	struct halo_err e = {{0}};
	const char *home = getenv("HOME");
	char *cwd;
	int rc;

	if (o->n_rest != 0) {
		fprintf(stderr, "halo-run: doctor takes no operands (use --policy F)\n");
		return HALO_EXIT_SETUP;
	}
	if ((rc = runner_load_policy(o, false, &re)) != 0)
		return rc;
	memset(&d, 0, sizeof(d));
	d.p = re.policy;
	fflush(NULL); /* the probes fork */
	if (runner_plan_of(re.policy, re.workspace, re.pw_home, false, &d.plan, &e) < 0)
		d.oom = true;
	doctor_layers(&d);
	doctor_apparmor(&d);
	doctor_source(&d, o, &re);
	cwd = getcwd(NULL, 0);
	posture_check(home && home[0] == '/' ? home : re.pw_home, cwd, get_env, on_posture, &d);
	free(cwd);
	if (d.oom) {
		fprintf(stderr, "halo-run: doctor: out of memory\n");
		rc = HALO_EXIT_SETUP;
	} else {
		if (o->json)
			print_json(&d, &re);
		else
			print_text(&d, &re);
		if (!o->json) /* `halo-run proxy`s running now (their state files) */
			runner_proxy_state_report(stdout);
		rc = count(&d, true, false) ? 1 : 0;
	}
	for (size_t i = 0; i < d.n_f; i++) {
		free(d.f[i].text);
		free(d.f[i].fix);
	}
	free(d.f);
	plan_free(&d.plan);
	runner_env_release(&re);
	return rc;
}
