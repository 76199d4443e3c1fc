/* libFuzzer target for the egress report's audit reader (report/report.c): whatever
 * the audit file holds, reading never fails but on I/O, and every rendering keeps the
 * invariants of tests/unit/report_check.h (printable ASCII only, markdown cells intact,
 * code spans closed, one valid JSON document). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "report/report.h"
#include "tests/unit/report_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report rp;
	struct report_rec r;
	const char *why;
	FILE *f;

	/* The line parser alone, on the whole input as one line. */
	if (report_parse_line((const char *)data, size, &r) == REPORT_LINE_OK &&
	    (report_check_bytes(r.host, strlen(r.host)) ||
	     report_check_bytes(r.rule, strlen(r.rule)) ||
	     report_check_bytes(r.command, strlen(r.command)))) {
		fprintf(stderr, "a record field is not in display form\n");
		abort();
	}
	if (size == 0 || !(f = fmemopen((void *)data, size, "r")))
		return 0;
	report_init(&rp);
	if (report_read(&rp, f) != 0)
		abort();
	fclose(f);
	report_sort(&rp);
	if ((why = report_check_all(&rp)) != NULL) {
		fprintf(stderr, "invariant failed: %s\n", why);
		abort();
	}
	report_free(&rp);
	return 0;
}
