/* The egress report: the audit line parser on hostile lines, the display form, the
 * bounds (line length, rows), the order (denials first), and the three renderings,
 * which must hold no control byte, no non-ASCII byte and no markup from the audit. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/report_check.h"
#include "tests/unit/unit.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

struct lcase {
	const char *name;
	const char *line;
	size_t len; /* 0: strlen(line) */
	enum report_line want;
	const char *host; /* display form, when OK */
	bool allow;
	unsigned port;
	const char *rule;
	const char *time;
};

#define LIT(s) s, sizeof(s) - 1
#define REC(h) "{\"host\":" h ",\"decision\":\"deny\",\"port\":443}"

static const struct lcase lines[] = {
    {"plain allow",
     "{\"time\":\"2026-12-01T12:00:00.123Z\",\"proto\":\"connect\",\"host\":\"a.example\","
     "\"port\":443,\"decision\":\"allow\",\"rule\":\"allowedDomains[0] a.example\","
     "\"bytes_up\":10,\"bytes_down\":20}",
     0, REPORT_LINE_OK, "a.example", true, 443, "allowedDomains[0] a.example",
     "2026-12-01T12:00:00.123Z"},
    {"escape sequence in host", REC("\"\\u001b[2J\\u001b]0;pwned\\u0007x\""), 0, REPORT_LINE_OK,
     "\\x1b[2J\\x1b]0;pwned\\x07x", false, 443},
    {"newline and CR in host", REC("\"a\\nhalo-run: egress allowed\\r\""), 0, REPORT_LINE_OK,
     "a\\x0ahalo-run: egress allowed\\x0d", false, 443},
    {"proxy's byte escapes", REC("\"\\u00ff\\u0080\\u007f\""), 0, REPORT_LINE_OK, "\\xff\\x80\\x7f",
     false, 443},
    {"raw invalid UTF-8", REC("\"\xff\xfe\xc3\x28\xe2\x82\""), 0, REPORT_LINE_OK,
     "\\xff\\xfe\\xc3(\\xe2\\x82", false, 443},
    {"overlong UTF-8 slash", REC("\"\xc0\xaf\""), 0, REPORT_LINE_OK, "\\xc0\\xaf", false, 443},
    {"UTF-16 surrogate bytes", REC("\"\xed\xa0\x80\""), 0, REPORT_LINE_OK, "\\xed\\xa0\\x80", false,
     443},
    {"bidi override", REC("\"\\u202egnp.exe\""), 0, REPORT_LINE_OK, "\\u{202e}gnp.exe", false, 443},
    {"C1 CSI", REC("\"\\u009b31m\""), 0, REPORT_LINE_OK, "\\x9b31m", false, 443},
    {"backslash is doubled", REC("\"a\\\\x41\""), 0, REPORT_LINE_OK, "a\\\\x41", false, 443},
    {"markdown kept as text", REC("\"|`*_[x](javascript:a)<img src=x>&amp;\""), 0, REPORT_LINE_OK,
     "|`*_[x](javascript:a)<img src=x>&amp;", false, 443},
    {"NUL escape truncates", REC("\"ok\\u0000hidden\""), 0, REPORT_LINE_OK, "ok", false, 443},
    {"raw NUL byte", LIT("{\"host\":\"a\0b\",\"decision\":\"deny\"}"), REPORT_LINE_JSON},
    {"time with an escape is dropped",
     "{\"host\":\"t\",\"decision\":\"allow\",\"time\":\"2026-12-01T12:00:00\\u001b.1Z\"}", 0,
     REPORT_LINE_OK, "t", true, 0, "", ""},
    {"time of another shape dropped",
     "{\"host\":\"t\",\"decision\":\"allow\",\"time\":\"yesterday at noon, really\"}", 0,
     REPORT_LINE_OK, "t", true, 0, "", ""},
    {"port out of range", "{\"host\":\"p\",\"decision\":\"deny\",\"port\":70000}", 0,
     REPORT_LINE_OK, "p", false, 0},
    {"port negative", "{\"host\":\"p\",\"decision\":\"deny\",\"port\":-1}", 0, REPORT_LINE_OK, "p",
     false, 0},
    {"port fractional", "{\"host\":\"p\",\"decision\":\"deny\",\"port\":80.5}", 0, REPORT_LINE_OK,
     "p", false, 0},
    {"port as a string", "{\"host\":\"p\",\"decision\":\"deny\",\"port\":\"80\"}", 0,
     REPORT_LINE_OK, "p", false, 0},
    {"huge byte counts", "{\"host\":\"b\",\"decision\":\"allow\",\"bytes_up\":1e300}", 0,
     REPORT_LINE_OK, "b", true},
    {"decision other", "{\"host\":\"x\",\"decision\":\"maybe\"}", 0, REPORT_LINE_NOT_RECORD},
    {"decision not a string", "{\"host\":\"x\",\"decision\":true}", 0, REPORT_LINE_NOT_RECORD},
    {"host not a string", "{\"host\":[\"x\"],\"decision\":\"deny\"}", 0, REPORT_LINE_NOT_RECORD},
    {"no host", "{\"decision\":\"deny\"}", 0, REPORT_LINE_NOT_RECORD},
    {"array", "[1,2,3]", 0, REPORT_LINE_JSON},
    {"string", "\"host\"", 0, REPORT_LINE_JSON},
    {"truncated", "{\"host\":\"x\",\"decision\":\"de", 0, REPORT_LINE_JSON},
    {"trailing garbage", "{\"host\":\"x\",\"decision\":\"deny\"} {", 0, REPORT_LINE_JSON},
    {"trailing blanks", "{\"host\":\"x\",\"decision\":\"deny\"} \t ", 0, REPORT_LINE_OK, "x"},
    {"two records on a line", REC("\"x\"") REC("\"y\""), 0, REPORT_LINE_JSON},
    {"not JSON", "GET / HTTP/1.1", 0, REPORT_LINE_JSON},
    {"empty", "", 0, REPORT_LINE_JSON},
    {"duplicate keys: the first", "{\"host\":\"first\",\"host\":\"second\",\"decision\":\"deny\"}",
     0, REPORT_LINE_OK, "first"},
    {"deep nesting",
     "{\"host\":\"n\",\"decision\":\"deny\",\"x\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]"
     "]]]]]]]]]]]]]]]]]]}",
     0, REPORT_LINE_OK, "n"},
    {"command array", "{\"host\":\"c\",\"decision\":\"allow\",\"command\":[\"npm\",\"\\u001b\",1]}",
     0, REPORT_LINE_OK, "c", true},
};

START_TEST(test_lines)
{
	const struct lcase *c = &lines[_i];
	size_t len = c->len ? c->len : strlen(c->line);
	struct report_rec r;
	enum report_line got = report_parse_line(c->line, len, &r);

	ck_assert_msg(got == c->want, "%s: got %d, want %d", c->name, got, c->want);
	if (got != REPORT_LINE_OK)
		return;
	ck_assert_msg(strcmp(r.host, c->host) == 0, "%s: host '%s'", c->name, r.host);
	ck_assert_msg(report_check_bytes(r.host, strlen(r.host)) == NULL, "%s", c->name);
	ck_assert_msg(report_check_bytes(r.command, strlen(r.command)) == NULL, "%s", c->name);
	ck_assert_msg(r.port == c->port, "%s: port %u", c->name, r.port);
	ck_assert_msg(r.allow == c->allow, "%s: allow", c->name);
	if (c->rule)
		ck_assert_str_eq(r.rule, c->rule);
	if (c->time)
		ck_assert_str_eq(r.time, c->time);
}
END_TEST

/* Every hostile line in one audit: the report counts and renders them safely. */
START_TEST(test_render_hostile)
{
	struct report rp;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		fwrite(lines[i].line, 1, lines[i].len ? lines[i].len : strlen(lines[i].line), f);
		fputc('\n', f);
	}
	fclose(f);
	f = fmemopen(buf, len, "r");
	report_init(&rp);
	snprintf(rp.command, sizeof(rp.command), "sh -c 'a | `b` <c>'");
	rp.exit_status = 0;
	ck_assert_int_eq(report_read(&rp, f), 0);
	fclose(f);
	report_sort(&rp);
	ck_assert_uint_gt(rp.denied, 5);
	ck_assert_uint_gt(rp.skipped[REPORT_LINE_JSON], 3);
	ck_assert_uint_eq(rp.skipped[REPORT_LINE_NOT_RECORD], 4);
	const char *why = report_check_all(&rp);
	ck_assert_msg(why == NULL, "%s", why);
	report_free(&rp);
	free(buf);
}
END_TEST

START_TEST(test_escape_truncates_whole)
{
	char in[1000], out[REPORT_STR_MAX];
	size_t n;

	memset(in, 0x01, sizeof(in));
	n = report_escape(in, sizeof(in), out, sizeof(out));
	ck_assert_uint_lt(n, sizeof(out));
	ck_assert_uint_eq(strlen(out), n);
	ck_assert_str_eq(out + n - 3, "...");
	ck_assert_uint_eq((n - 3) % 4, 0); /* only whole "\x01" units before it */
	ck_assert_uint_eq(report_escape("abc", 3, out, 4), 3);
	ck_assert_str_eq(out, "abc");
	ck_assert_uint_eq(report_escape("abcd", 4, out, 4), 3);
	ck_assert_str_eq(out, "...");
	ck_assert_uint_eq(report_escape("ab", 2, out, 2), 0); /* no room to say it was cut */
	ck_assert_str_eq(out, "");
}
END_TEST

static FILE *text_file(char **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	return open_memstream(buf, len);
}

/* A line over the bound is skipped whole; the next line still counts. */
START_TEST(test_long_line)
{
	struct report rp;
	size_t len;
	char *buf;
	FILE *f = text_file(&buf, &len);

	fputs("{\"host\":\"", f);
	for (int i = 0; i < REPORT_LINE_MAX + 10; i++)
		fputc('a', f);
	fputs("\",\"decision\":\"deny\"}\n{\"host\":\"next\",\"decision\":\"deny\"}", f);
	fclose(f);
	f = fmemopen(buf, len, "r");
	report_init(&rp);
	ck_assert_int_eq(report_read(&rp, f), 0);
	fclose(f);
	ck_assert_uint_eq(rp.skipped[REPORT_LINE_LONG], 1);
	ck_assert_uint_eq(rp.records, 1);
	ck_assert_str_eq(rp.rows[0].host, "next");
	report_free(&rp);
	free(buf);
}
END_TEST

/* Past REPORT_ROWS_MAX distinct hosts the rest share one row; nothing is lost. */
/* A summarised refusal record stands for "count" refusals (proxy/refusal.c): the
 * report counts each, as the audit says; a record without one is one. */
START_TEST(test_refusal_count)
{
	static const char flood[] =
	    "{\"proto\":\"http\",\"host\":\"\",\"port\":0,\"decision\":\"deny\","
	    "\"rule\":\"limits.connections (5 open)\",\"error\":\"too many open connections, "
	    "retry later\",\"code\":\"503\",\"count\":41}";
	static const char one[] = "{\"host\":\"a.example\",\"port\":443,\"decision\":\"allow\"}";
	static const char bad[] = "{\"host\":\"\",\"decision\":\"deny\",\"count\":-3}";
	struct report rp;
	struct report_rec r;

	report_init(&rp);
	ck_assert_int_eq(report_parse_line(flood, strlen(flood), &r), REPORT_LINE_OK);
	report_add(&rp, &r);
	ck_assert_int_eq(report_parse_line(one, strlen(one), &r), REPORT_LINE_OK);
	report_add(&rp, &r);
	ck_assert_int_eq(report_parse_line(bad, strlen(bad), &r), REPORT_LINE_OK);
	report_add(&rp, &r);
	ck_assert_uint_eq(rp.denied, 42);
	ck_assert_uint_eq(rp.allowed, 1);
	report_free(&rp);
}
END_TEST

START_TEST(test_row_cap)
{
	struct report rp;
	struct report_rec r = {0};

	report_init(&rp);
	for (int i = 0; i < REPORT_ROWS_MAX + 500; i++) {
		snprintf(r.host, sizeof(r.host), "h%d.example", i);
		r.allow = i % 2;
		report_add(&rp, &r);
	}
	ck_assert_uint_eq(rp.n_rows, REPORT_ROWS_MAX);
	ck_assert(rp.has_other);
	ck_assert_uint_eq(rp.other.allowed + rp.other.denied, 500);
	ck_assert_uint_eq(rp.records, REPORT_ROWS_MAX + 500);
	report_sort(&rp);
	const char *why = report_check_all(&rp);
	ck_assert_msg(why == NULL, "%s", why);
	report_free(&rp);
}
END_TEST

/* Denials first, most denied first; the rule shown is a denial's. */
START_TEST(test_order_and_rule)
{
	static const char *const audit[] = {
	    "{\"host\":\"b.example\",\"port\":443,\"decision\":\"allow\",\"rule\":\"allow-b\"}",
	    "{\"host\":\"z.example\",\"port\":443,\"decision\":\"deny\",\"rule\":\"deny-z\"}",
	    "{\"host\":\"m.example\",\"port\":443,\"decision\":\"deny\",\"rule\":\"deny-m\"}",
	    "{\"host\":\"m.example\",\"port\":443,\"decision\":\"allow\",\"rule\":\"allow-m\"}",
	    "{\"host\":\"m.example\",\"port\":443,\"decision\":\"deny\",\"rule\":\"deny-m2\"}",
	    "{\"host\":\"a.example\",\"port\":443,\"decision\":\"allow\",\"rule\":\"allow-a\"}",
	    "{\"host\":\"a.example\",\"port\":22,\"decision\":\"allow\",\"rule\":\"allow-a22\"}",
	};
	struct report rp;
	struct report_rec r;

	report_init(&rp);
	for (size_t i = 0; i < sizeof(audit) / sizeof(audit[0]); i++) {
		ck_assert_int_eq(report_parse_line(audit[i], strlen(audit[i]), &r), REPORT_LINE_OK);
		report_add(&rp, &r);
	}
	report_sort(&rp);
	ck_assert_uint_eq(rp.n_rows, 5);
	ck_assert_str_eq(rp.rows[0].host, "m.example");
	ck_assert_str_eq(rp.rows[0].rule, "deny-m2");
	ck_assert_uint_eq(rp.rows[0].allowed, 1);
	ck_assert_str_eq(rp.rows[1].host, "z.example");
	ck_assert_str_eq(rp.rows[2].host, "a.example");
	ck_assert_uint_eq(rp.rows[2].port, 22);
	ck_assert_str_eq(rp.rows[4].host, "b.example");
	/* Still usable after sorting. */
	report_add(&rp, &r);
	ck_assert_uint_eq(rp.n_rows, 5);
	report_free(&rp);
}
END_TEST

START_TEST(test_formats)
{
	enum report_format f;

	ck_assert_int_eq(report_format_parse("text", &f), 0);
	ck_assert_int_eq(f, REPORT_TEXT);
	ck_assert_int_eq(report_format_parse("md", &f), 0);
	ck_assert_int_eq(f, REPORT_MARKDOWN);
	ck_assert_int_eq(report_format_parse("json", &f), 0);
	ck_assert_int_eq(f, REPORT_JSON);
	ck_assert_int_eq(report_format_parse("JSON", &f), -EINVAL);
	ck_assert_int_eq(report_format_parse("", &f), -EINVAL);
}
END_TEST

static Suite *report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *t = tcase_create("report");

	tcase_set_timeout(t, 30);
	tcase_add_loop_test(t, test_lines, 0, sizeof(lines) / sizeof(lines[0]));
	tcase_add_test(t, test_render_hostile);
	tcase_add_test(t, test_refusal_count);
	tcase_add_test(t, test_escape_truncates_whole);
	tcase_add_test(t, test_long_line);
	tcase_add_test(t, test_row_cap);
	tcase_add_test(t, test_order_and_rule);
	tcase_add_test(t, test_formats);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(report_suite)
