/* Invariants of a rendered egress report, shared by test_report.c and fuzz_report.c:
 * whatever the audit held, the output is printable ASCII (plus newline and tab), so no
 * terminal escape and no invalid UTF-8 can reach a terminal or a job summary; every
 * markdown table row has exactly the table's cells (no | from the audit survives
 * unescaped) and every cell's code spans are closed; the JSON is one valid document. */
#ifndef HALO_TESTS_REPORT_CHECK_H
#define HALO_TESTS_REPORT_CHECK_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

#define REPORT_MD_CELLS 10 /* and the command column when a record names one */

/* NULL when out is fine, else what is wrong. */
static inline const char *report_check_bytes(const char *out, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)out[i];
		if (c == '\n' || c == '\t')
			continue;
		if (c < 0x20 || c >= 0x7f)
			return "a control or non-ASCII byte in the output";
	}
	return NULL;
}

/* One markdown line: outside code spans no < (only a span may hold one: the report's
 * own words have none); in a table row the unescaped pipes, never inside a span. */
static inline const char *report_check_md_line(const char *line, size_t len, size_t *cells)
{
	size_t pipes = 0, ticks = 0;
	bool row = len && line[0] == '|';

	for (size_t i = 0; i < len; i++) {
		if (line[i] == '\\' && i + 1 < len) {
			i++;
			continue;
		}
		if (line[i] == '`')
			ticks++;
		if (line[i] == '<' && ticks % 2 == 0)
			return "a < outside a code span";
		if (line[i] == '|' && row) {
			if (ticks % 2)
				return "a cell ends inside a code span";
			pipes++;
		}
	}
	if (ticks % 2)
		return "a code span left open";
	if (row && *cells == 0)
		*cells = pipes; /* the header row */
	if (!row)
		return NULL;
	return pipes == *cells && (pipes == REPORT_MD_CELLS || pipes == REPORT_MD_CELLS + 1)
		   ? NULL
		   : "a table row with the wrong number of cells";
}

static inline const char *report_check_md(const char *out, size_t len)
{
	const char *p = out, *end = out + len;
	size_t cells = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *why = report_check_md_line(p, n, &cells);

		if (why)
			return why;
		p += n + 1;
	}
	return NULL;
}

static inline const char *report_check_json(const char *out, size_t len)
{
	cJSON *j = cJSON_ParseWithLength(out, len);
	bool ok = j && cJSON_IsObject(j) && cJSON_IsArray(cJSON_GetObjectItem(j, "hosts"));

	cJSON_Delete(j);
	return ok ? NULL : "the JSON report does not parse";
}

/* Render rp in every format and check each; NULL or the first problem. */
static inline const char *report_check_all(const struct report *rp)
{
	static const enum report_format fs[] = {REPORT_TEXT, REPORT_MARKDOWN, REPORT_JSON};
	const char *why = NULL;

	for (size_t i = 0; !why && i < sizeof(fs) / sizeof(fs[0]); i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		if (!f)
			return "open_memstream";
		if (report_print(rp, fs[i], false, f) < 0)
			why = "report_print failed";
		fclose(f);
		if (!why)
			why = report_check_bytes(buf, len);
		if (!why && fs[i] == REPORT_MARKDOWN)
			why = report_check_md(buf, len);
		if (!why && fs[i] == REPORT_JSON)
			why = report_check_json(buf, len);
		free(buf);
	}
	return why;
}

#endif
