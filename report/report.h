/* The egress report: `halo-run report FILE.jsonl` and `--summary-md FILE` read the
 * --audit JSON Lines and print, per host and port, what was allowed and denied.
 *
 * The audit is outside input (any file can be named, and the host names in it are what
 * the sandboxed command sent), so: lines are bounded (longer ones are skipped and
 * counted), rows are capped (the rest fold into one "(other hosts)" row), and every
 * string is turned into a display form of printable ASCII before it is stored —
 * control bytes, bytes of invalid UTF-8 and U+0080..U+00FF as \xNN (the proxy writes
 * byte NN as \u00NN), other code points as \u{XXXX}, a backslash as \\. Each format
 * then adds its own quoting (markdown code spans, JSON strings). Nothing here prints
 * except report_print, which writes to the FILE it is given. */
#ifndef HALO_RUNNER_REPORT_H
#define HALO_RUNNER_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define REPORT_LINE_MAX 65536 /* bytes of one audit line; longer lines are skipped */
#define REPORT_ROWS_MAX 4096  /* distinct host:port rows; the rest share one row */
#define REPORT_STR_MAX	384   /* a display string, truncated with "..." */
#define REPORT_TIME_MAX 32
#define REPORT_MD_ROWS	300 /* markdown rows (a GitHub job summary holds 1 MiB) */

enum report_format { REPORT_TEXT, REPORT_MARKDOWN, REPORT_JSON };

/* Why a line did not count. */
enum report_line {
	REPORT_LINE_OK,
	REPORT_LINE_LONG,	/* over REPORT_LINE_MAX */
	REPORT_LINE_JSON,	/* not JSON, or not one object */
	REPORT_LINE_NOT_RECORD, /* no host, or a decision other than allow/deny */
	REPORT_LINE_N
};

struct report_rec {
	char time[REPORT_TIME_MAX]; /* "" when absent or not an audit timestamp */
	char proto[16];
	char host[REPORT_STR_MAX];
	unsigned port; /* 0 when absent or out of range */
	bool allow;
	char rule[REPORT_STR_MAX];
	bool error;		      /* the record carries an error */
	char command[REPORT_STR_MAX]; /* "" unless the record names one */
	unsigned long long up, down;
	unsigned long long count; /* the decisions it stands for: a refusal summary's "count" */
};

struct report_row {
	char host[REPORT_STR_MAX];
	unsigned port;
	unsigned long long allowed, denied, errors, up, down;
	char first[REPORT_TIME_MAX], last[REPORT_TIME_MAX];
	char rule[REPORT_STR_MAX]; /* the last denial's rule, else the last rule */
	char command[REPORT_STR_MAX];
};

struct report {
	struct report_row *rows;
	size_t n_rows, cap_rows;
	size_t *slots; /* open addressing: row index + 1, 0 = empty */
	size_t n_slots;
	struct report_row other; /* past REPORT_ROWS_MAX */
	bool has_other;
	unsigned long long lines, records, allowed, denied;
	unsigned long long skipped[REPORT_LINE_N];
	char first[REPORT_TIME_MAX], last[REPORT_TIME_MAX];
	/* Set by the caller when known (--summary-md): the run's command line in display
	 * form, its exit status, and what --fail-on-deny made of it. */
	char command[REPORT_STR_MAX];
	int exit_status; /* -1 = not known */
	bool failed_on_deny;
};

/* The display form of s[0..len) into out (always terminated, truncated whole escapes
 * at a time with "..."). Returns the length written. */
size_t report_escape(const char *s, size_t len, char *out, size_t n);

/* Parse one audit line (without its newline). REPORT_LINE_OK fills r. */
enum report_line report_parse_line(const char *line, size_t len, struct report_rec *r);

void report_init(struct report *rp);
void report_free(struct report *rp);
/* Count one record. Returns 0 or -ENOMEM (the record then counts in "(other hosts)"). */
int report_add(struct report *rp, const struct report_rec *r);
/* Read and count every line of in. Returns 0 or -errno (a read error). */
int report_read(struct report *rp, FILE *in);
/* Denials first (most denied first), then by host and port. */
void report_sort(struct report *rp);
/* Print in the format; colour (text only) when asked. Returns 0 or -errno. */
int report_print(const struct report *rp, enum report_format f, bool colour, FILE *out);
/* "text", "markdown" (or "md"), "json". Returns 0 or -EINVAL. */
int report_format_parse(const char *s, enum report_format *f);

/* The subcommand and the CI hooks of a run (report_cmd.c). */
struct runner_opts;
int runner_cmd_report(const struct runner_opts *o); /* report_cmd.c: the audit, read */

/* report_cmd.c, for CI: refuse --summary-md without --audit (before the launch), and
 * at exit apply --fail-on-deny to *status and write --summary-md from the records the
 * run appended to the audit (from audit_start on), through summary_fd (opened before
 * the launch). -EIO when the report could not be written (said; *status 125). */
struct proxy;
int runner_ci_check(const struct runner_opts *o);
int runner_ci_finish(const struct runner_opts *o, const struct proxy *px, int audit_fd,
		     off_t audit_start, int summary_fd, int *status);

#endif
