/* verify's table: what each row found, as text or JSON (--json), and the counts of
 * PASS, FAIL and SKIP the exit status is made from. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trust/verify_int.h"

static const char *res_name(enum vres r)
{
	return r == R_PASS ? "PASS" : r == R_FAIL ? "FAIL" : "SKIP";
}

void verify_count(const struct verify *v, size_t c[3])
{
	c[0] = c[1] = c[2] = 0;
	for (size_t i = 0; i < v->n; i++)
		c[v->rows[i].res]++;
}

void verify_print_text(const struct verify *v, const struct run *run, const char *source)
{
	size_t c[3];

	verify_count(v, c);
	printf("halo-run verify\npolicy: %s\nworkspace (temporary): %s\n", source, v->ws);
	if (v->real_ws[0])
		printf("workspace checked: %s\n", v->real_ws);
	printf("\n");
	int w = 5;

	/* As wide as the longest probe (paths can be long), within reason. */
	for (size_t i = 0; i < v->n; i++)
		if ((int)strlen(v->rows[i].probe) > w)
			w = (int)strlen(v->rows[i].probe);
	w = w > 110 ? 110 : w;
	printf("%-*s %-20s %-22s %s\n", w, "PROBE", "EXPECTED", "GOT", "RESULT");
	for (size_t i = 0; i < v->n; i++) {
		const struct vrow *r = &v->rows[i];
		printf("%-*.*s %-20s %-22s %s\n", w, w, r->probe, r->expected, r->got,
		       res_name(r->res));
	}
	if (run->n_messages) {
		printf("\nthe launch said:\n");
		for (size_t i = 0; i < run->n_messages; i++)
			printf("  %s\n", run->messages[i] ? run->messages[i] : "");
	}
	printf("\nverify: %zu passed, %zu failed, %zu skipped%s\n", c[R_PASS], c[R_FAIL], c[R_SKIP],
	       c[R_FAIL] ? ": the policy is NOT fully enforced on this machine"
			 : ": the policy is enforced on this machine");
}

void verify_print_json(const struct verify *v, const struct run *run, const char *source)
{
	cJSON *root = cJSON_CreateObject(), *rows = cJSON_CreateArray(),
	      *msgs = cJSON_CreateArray();
	size_t c[3];
	char *text;

	verify_count(v, c);
	cJSON_AddStringToObject(root, "policy", source);
	cJSON_AddStringToObject(root, "workspace", v->ws);
	if (v->real_ws[0])
		cJSON_AddStringToObject(root, "workspace_checked", v->real_ws);
	cJSON_AddNumberToObject(root, "launch_status", run->status);
	for (size_t i = 0; i < v->n; i++) {
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "probe", v->rows[i].probe);
		cJSON_AddStringToObject(r, "expected", v->rows[i].expected);
		cJSON_AddStringToObject(r, "got", v->rows[i].got);
		cJSON_AddStringToObject(r, "result", res_name(v->rows[i].res));
		cJSON_AddItemToArray(rows, r);
	}
	for (size_t i = 0; i < run->n_messages; i++)
		cJSON_AddItemToArray(msgs,
				     cJSON_CreateString(run->messages[i] ? run->messages[i] : ""));
	cJSON_AddItemToObject(root, "probes", rows);
	cJSON_AddItemToObject(root, "launch_messages", msgs);
	cJSON_AddNumberToObject(root, "passed", (double)c[R_PASS]);
	cJSON_AddNumberToObject(root, "failed", (double)c[R_FAIL]);
	cJSON_AddNumberToObject(root, "skipped", (double)c[R_SKIP]);
	text = cJSON_Print(root);
	if (text)
		printf("%s\n", text);
	free(text);
	cJSON_Delete(root);
}
