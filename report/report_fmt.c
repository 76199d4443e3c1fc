/* The egress report's three renderings. Every string from the audit is already in its
 * display form (printable ASCII, report.h); here markdown puts each in a code span
 * (no emphasis, links, HTML or autolinks can start inside one) with the two characters
 * that could still end the span or the cell, ` and |, escaped; text pads columns;
 * JSON lets cJSON quote. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

static const char *decision_word(const struct report_row *r)
{
	return r->denied && r->allowed ? "mixed" : r->denied ? "deny" : "allow";
}

static void host_port(const struct report_row *r, char *out, size_t n)
{
	bool v6 = strchr(r->host, ':') != NULL;

	if (r->port)
		snprintf(out, n, "%s%s%s:%u", v6 ? "[" : "", r->host, v6 ? "]" : "", r->port);
	else
		snprintf(out, n, "%s", r->host);
}

static void human_bytes(unsigned long long b, char *out, size_t n)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)b;
	size_t u = 0;

	while (v >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(out, n, "%llu B", b);
	else
		snprintf(out, n, "%.1f %s", v, unit[u]);
}

static void skipped_words(const struct report *rp, char *out, size_t n)
{
	static const char *const why[REPORT_LINE_N] = {
	    [REPORT_LINE_LONG] = "over 65536 bytes",
	    [REPORT_LINE_JSON] = "not a JSON object",
	    [REPORT_LINE_NOT_RECORD] = "not an egress record",
	};
	size_t o = 0;

	out[0] = '\0';
	for (int k = 1; k < REPORT_LINE_N && o < n; k++)
		if (rp->skipped[k])
			o += (size_t)snprintf(out + o, n - o, "%s%llu %s", o ? ", " : "",
					      rp->skipped[k], why[k]);
}

static size_t n_hosts(const struct report *rp)
{
	return rp->n_rows + (rp->has_other ? 1 : 0);
}

static const struct report_row *row_at(const struct report *rp, size_t i)
{
	return i < rp->n_rows ? &rp->rows[i] : &rp->other;
}

/* ---------------------------------------------------------------- text */

enum { C_DECISION, C_HOST, C_ALLOWED, C_DENIED, C_UP, C_DOWN, C_FIRST, C_LAST, C_RULE, C_CMD, C_N };
static const char *const text_head[C_N] = {"DECISION", "HOST:PORT", "ALLOWED", "DENIED", "UP",
					   "DOWN",     "FIRST",	    "LAST",    "RULE",	 "COMMAND"};
#define TEXT_CELL 420

static void text_cells(const struct report_row *r, char cells[C_N][TEXT_CELL])
{
	host_port(r, cells[C_HOST], TEXT_CELL);
	snprintf(cells[C_DECISION], TEXT_CELL, "%s", decision_word(r));
	snprintf(cells[C_ALLOWED], TEXT_CELL, "%llu", r->allowed);
	snprintf(cells[C_DENIED], TEXT_CELL, "%llu", r->denied);
	human_bytes(r->up, cells[C_UP], TEXT_CELL);
	human_bytes(r->down, cells[C_DOWN], TEXT_CELL);
	snprintf(cells[C_FIRST], TEXT_CELL, "%s", r->first[0] ? r->first : "-");
	snprintf(cells[C_LAST], TEXT_CELL, "%s", r->last[0] ? r->last : "-");
	snprintf(cells[C_RULE], TEXT_CELL, "%s", r->rule[0] ? r->rule : "-");
	snprintf(cells[C_CMD], TEXT_CELL, "%s", r->command[0] ? r->command : "-");
}

static bool any_command(const struct report *rp)
{
	for (size_t i = 0; i < rp->n_rows; i++)
		if (rp->rows[i].command[0])
			return true;
	return rp->other.command[0] != '\0';
}

static void text_line(FILE *out, char cells[C_N][TEXT_CELL], const int *w, const char *colour,
		      int n_cols)
{
	for (int c = 0; c < n_cols; c++) {
		bool right = c >= C_ALLOWED && c <= C_DOWN;
		bool last = c == n_cols - 1;

		if (c == C_DECISION && colour)
			fprintf(out, "%s%-*s\033[0m", colour, w[c], cells[c]);
		else if (last)
			fputs(cells[c], out);
		else
			fprintf(out, right ? "%*s" : "%-*s", w[c], cells[c]);
		fputs(last ? "\n" : "  ", out);
	}
}

/* A code span: nothing inside is markup. A backtick would end it (shown as \x60), and
 * in a table cell a pipe would end the cell even inside the span (GFM): \| there. */
static void md_code(FILE *out, const char *s, bool in_table)
{
	if (!*s) {
		fputs("-", out);
		return;
	}
	fputc('`', out);
	for (; *s; s++)
		if (*s == '`')
			fputs("\\x60", out);
		else if (*s == '|' && in_table)
			fputs("\\|", out);
		else
			fputc(*s, out);
	fputc('`', out);
}

static void print_header(const struct report *rp, FILE *out, bool md)
{
	char skipped[256];

	fprintf(out, md ? "**%llu denied**, %llu allowed" : "%llu denied, %llu allowed", rp->denied,
		rp->allowed);
	fprintf(out, " egress connection%s to %zu host:port%s", rp->records == 1 ? "" : "s",
		n_hosts(rp), n_hosts(rp) == 1 ? "" : "s");
	if (rp->first[0])
		fprintf(out, ", %s to %s", rp->first, rp->last);
	fputs(md ? ".\n\n" : ".\n", out);
	if (rp->command[0] && md) {
		fputs("Command: ", out);
		md_code(out, rp->command, false);
		fputs("\n\n", out);
	} else if (rp->command[0]) {
		fprintf(out, "command: %s\n", rp->command);
	}
	if (rp->exit_status >= 0)
		fprintf(out, md ? "Exit status: %d%s.\n\n" : "exit status: %d%s\n", rp->exit_status,
			rp->failed_on_deny ? " (--fail-on-deny: the command exited 0)" : "");
	skipped_words(rp, skipped, sizeof(skipped));
	if (skipped[0])
		fprintf(out, md ? "Skipped lines: %s.\n\n" : "skipped lines: %s\n", skipped);
}

static int print_text(const struct report *rp, bool colour, FILE *out)
{
	static char cells[C_N][TEXT_CELL];
	int w[C_N], n_cols = any_command(rp) ? C_N : C_N - 1;

	print_header(rp, out, false);
	if (n_hosts(rp) == 0)
		return 0;
	for (int c = 0; c < C_N; c++)
		w[c] = (int)strlen(text_head[c]);
	for (size_t i = 0; i < n_hosts(rp); i++) {
		text_cells(row_at(rp, i), cells);
		for (int c = 0; c < C_N; c++) {
			int len = (int)strlen(cells[c]);
			if (len > w[c])
				w[c] =
				    len > 64 ? 64 : len; /* a very long name overflows its column */
		}
	}
	fputs("\n", out);
	for (int c = 0; c < C_N; c++)
		snprintf(cells[c], TEXT_CELL, "%s", text_head[c]);
	text_line(out, cells, w, NULL, n_cols);
	for (size_t i = 0; i < n_hosts(rp); i++) {
		const struct report_row *r = row_at(rp, i);
		text_cells(r, cells);
		text_line(out, cells, w,
			  !colour     ? NULL
			  : r->denied ? "\033[1;31m"
				      : "\033[32m",
			  n_cols);
	}
	return 0;
}

/* ---------------------------------------------------------------- markdown */

static int print_markdown(const struct report *rp, FILE *out)
{
	char hp[REPORT_STR_MAX + 16], up[32], down[32];
	size_t n = n_hosts(rp);
	bool cmd = any_command(rp);

	fputs("### halo-run egress report\n\n", out);
	print_header(rp, out, true);
	if (n == 0)
		return 0;
	fprintf(out,
		"| decision | host:port | allowed | denied | up | down | first | last | rule |%s\n"
		"|---|---|--:|--:|--:|--:|---|---|---|%s\n",
		cmd ? " command |" : "", cmd ? "---|" : "");
	for (size_t i = 0; i < n && i < REPORT_MD_ROWS; i++) {
		const struct report_row *r = row_at(rp, i);

		host_port(r, hp, sizeof(hp));
		human_bytes(r->up, up, sizeof(up));
		human_bytes(r->down, down, sizeof(down));
		fprintf(out, r->denied ? "| **%s** | " : "| %s | ", decision_word(r));
		md_code(out, hp, true);
		fprintf(out, " | %llu | %llu | %s | %s | %s | %s | ", r->allowed, r->denied, up,
			down, r->first[0] ? r->first : "-", r->last[0] ? r->last : "-");
		md_code(out, r->rule, true);
		if (cmd) {
			fputs(" | ", out);
			md_code(out, r->command, true);
		}
		fputs(" |\n", out);
	}
	if (n > REPORT_MD_ROWS)
		fprintf(out,
			"\n%zu more host:port rows (allowed ones last) are in the audit file.\n",
			n - REPORT_MD_ROWS);
	return 0;
}

/* ---------------------------------------------------------------- json */

static cJSON *row_json(const struct report_row *r)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "host", r->host);
	cJSON_AddNumberToObject(o, "port", r->port);
	cJSON_AddStringToObject(o, "decision", decision_word(r));
	cJSON_AddNumberToObject(o, "allowed", (double)r->allowed);
	cJSON_AddNumberToObject(o, "denied", (double)r->denied);
	cJSON_AddNumberToObject(o, "errors", (double)r->errors);
	cJSON_AddNumberToObject(o, "bytes_up", (double)r->up);
	cJSON_AddNumberToObject(o, "bytes_down", (double)r->down);
	if (r->first[0]) {
		cJSON_AddStringToObject(o, "first", r->first);
		cJSON_AddStringToObject(o, "last", r->last);
	}
	cJSON_AddStringToObject(o, "rule", r->rule);
	if (r->command[0])
		cJSON_AddStringToObject(o, "command", r->command);
	return o;
}

static int print_json(const struct report *rp, FILE *out)
{
	cJSON *root = cJSON_CreateObject(), *hosts, *sk;
	char *text;

	if (!root)
		return -ENOMEM;
	cJSON_AddNumberToObject(root, "records", (double)rp->records);
	cJSON_AddNumberToObject(root, "allowed", (double)rp->allowed);
	cJSON_AddNumberToObject(root, "denied", (double)rp->denied);
	if (rp->first[0]) {
		cJSON_AddStringToObject(root, "first", rp->first);
		cJSON_AddStringToObject(root, "last", rp->last);
	}
	if (rp->command[0])
		cJSON_AddStringToObject(root, "command", rp->command);
	if (rp->exit_status >= 0) {
		cJSON_AddNumberToObject(root, "exit_status", rp->exit_status);
		cJSON_AddBoolToObject(root, "failed_on_deny", rp->failed_on_deny);
	}
	sk = cJSON_AddObjectToObject(root, "skipped_lines");
	cJSON_AddNumberToObject(sk, "overlong", (double)rp->skipped[REPORT_LINE_LONG]);
	cJSON_AddNumberToObject(sk, "not_json", (double)rp->skipped[REPORT_LINE_JSON]);
	cJSON_AddNumberToObject(sk, "not_a_record", (double)rp->skipped[REPORT_LINE_NOT_RECORD]);
	hosts = cJSON_AddArrayToObject(root, "hosts");
	for (size_t i = 0; hosts && i < n_hosts(rp); i++)
		cJSON_AddItemToArray(hosts, row_json(row_at(rp, i)));
	text = cJSON_Print(root);
	cJSON_Delete(root);
	if (!text)
		return -ENOMEM;
	fprintf(out, "%s\n", text);
	free(text);
	return 0;
}

int report_print(const struct report *rp, enum report_format f, bool colour, FILE *out)
{
	int rc = f == REPORT_JSON	? print_json(rp, out)
		 : f == REPORT_MARKDOWN ? print_markdown(rp, out)
					: print_text(rp, colour, out);

	if (rc == 0 && (fflush(out) != 0 || ferror(out)))
		rc = -EIO;
	return rc;
}
