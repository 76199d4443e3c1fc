/* The egress report's input side: the display form of outside strings, the parser of
 * one audit line, and the per host:port rows (see report.h for the bounds). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

/* The length of a valid UTF-8 sequence at s (at most n bytes) and its code point;
 * 0 when the bytes are not one (overlong forms and surrogates included). */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
	size_t len = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
	uint32_t c;

	if (len == 0 || s[0] >= 0xf8 || len > n)
		return 0;
	c = s[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min[len] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* Where the last units began, to cut at one of them (a unit is at most 10 bytes, so
 * eight of them always reach back past the room "..." needs). */
#define ESC_MARKS 8

size_t report_escape(const char *s, size_t len, char *out, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t marks[ESC_MARKS] = {0}, n_marks = 0, o = 0, i = 0;

	if (n == 0)
		return 0;
	while (i < len) {
		char unit[16];
		uint32_t cp = 0;
		size_t used = 1, ul;

		if (u[i] >= 0x20 && u[i] < 0x7f && u[i] != '\\') {
			unit[0] = (char)u[i];
			unit[1] = '\0';
		} else if (u[i] == '\\') {
			memcpy(unit, "\\\\", 3);
		} else if (u[i] >= 0x80 && (used = utf8_seq(u + i, len - i, &cp)) != 0) {
			snprintf(unit, sizeof(unit), cp <= 0xff ? "\\x%02x" : "\\u{%x}",
				 (unsigned)cp);
		} else {
			used = 1;
			snprintf(unit, sizeof(unit), "\\x%02x", u[i]);
		}
		ul = strlen(unit);
		if (o + ul + 1 > n) {
			/* Cut at the latest unit start that leaves room for "...": never half
			 * an escape. */
			size_t cut = 0;
			for (size_t k = 0; k < ESC_MARKS && k < n_marks; k++)
				if (marks[k] + 4 <= n && marks[k] > cut)
					cut = marks[k];
			if (o + 4 <= n)
				cut = o;
			o = 0;
			if (cut + 4 <= n) {
				memcpy(out + cut, "...", 3);
				o = cut + 3;
			}
			break;
		}
		marks[n_marks++ % ESC_MARKS] = o;
		memcpy(out + o, unit, ul);
		o += ul;
		i += used;
	}
	out[o] = '\0';
	return o;
}

static void take_str(const cJSON *obj, const char *key, char *out, size_t n)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	out[0] = '\0';
	if (cJSON_IsString(v) && v->valuestring)
		report_escape(v->valuestring, strlen(v->valuestring), out, n);
}

static unsigned long long take_count(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
		return 0;
	return v->valuedouble > 1e18 ? 1000000000000000000ULL : (unsigned long long)v->valuedouble;
}

/* The proxy's "2026-12-01T12:00:00.123Z": only digits and those separators, so that
 * the time can be compared as text and printed unquoted. */
static void take_time(const cJSON *obj, char *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "time");
	static const char shape[] = "dddd-dd-ddTdd:dd:dd";
	const char *s;
	size_t len;

	out[0] = '\0';
	if (!cJSON_IsString(v) || !(s = v->valuestring) || (len = strlen(s)) < 20 ||
	    len >= REPORT_TIME_MAX || s[len - 1] != 'Z')
		return;
	for (size_t i = 0; i < len - 1; i++) {
		char want = i < sizeof(shape) - 1 ? shape[i] : i == sizeof(shape) - 1 ? '.' : 'd';
		if (want == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != want)
			return;
	}
	memcpy(out, s, len + 1);
}

/* "command": a string, or an array of strings joined by spaces. */
static void take_command(const cJSON *obj, char *out, size_t n)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "command"), *a;
	size_t o = 0;

	out[0] = '\0';
	if (cJSON_IsString(v)) {
		take_str(obj, "command", out, n);
		return;
	}
	if (!cJSON_IsArray(v))
		return;
	cJSON_ArrayForEach(a, v)
	{
		if (!cJSON_IsString(a) || !a->valuestring || o + 2 >= n)
			continue;
		if (o)
			out[o++] = ' ';
		o += report_escape(a->valuestring, strlen(a->valuestring), out + o, n - o);
	}
}

enum report_line report_parse_line(const char *line, size_t len, struct report_rec *r)
{
	const cJSON *d, *h, *p;
	const char *end = NULL;
	cJSON *obj;

	memset(r, 0, sizeof(*r));
	if (len > REPORT_LINE_MAX)
		return REPORT_LINE_LONG;
	if (memchr(line, '\0', len))
		return REPORT_LINE_JSON; /* cJSON would read a raw NUL as the end */
	obj = cJSON_ParseWithLengthOpts(line, len, &end, false);
	/* One object per line, nothing after it but blanks. */
	while (obj && end < line + len && (*end == ' ' || *end == '\t'))
		end++;
	if (!obj || !cJSON_IsObject(obj) || end != line + len) {
		cJSON_Delete(obj);
		return REPORT_LINE_JSON;
	}
	d = cJSON_GetObjectItemCaseSensitive(obj, "decision");
	h = cJSON_GetObjectItemCaseSensitive(obj, "host");
	if (!cJSON_IsString(h) || !cJSON_IsString(d) ||
	    (strcmp(d->valuestring, "allow") != 0 && strcmp(d->valuestring, "deny") != 0)) {
		cJSON_Delete(obj);
		return REPORT_LINE_NOT_RECORD;
	}
	r->allow = strcmp(d->valuestring, "allow") == 0;
	take_str(obj, "host", r->host, sizeof(r->host));
	take_str(obj, "proto", r->proto, sizeof(r->proto));
	take_str(obj, "rule", r->rule, sizeof(r->rule));
	take_time(obj, r->time);
	take_command(obj, r->command, sizeof(r->command));
	p = cJSON_GetObjectItemCaseSensitive(obj, "port");
	if (cJSON_IsNumber(p) && p->valuedouble >= 0 && p->valuedouble <= 65535 &&
	    p->valuedouble == (double)(int)p->valuedouble)
		r->port = (unsigned)p->valuedouble;
	r->error = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(obj, "error"));
	r->up = take_count(obj, "bytes_up");
	r->down = take_count(obj, "bytes_down");
	r->count = take_count(obj, "count"); /* proxy/refusal.c: N refusals, one record */
	cJSON_Delete(obj);
	return REPORT_LINE_OK;
}

void report_init(struct report *rp)
{
	memset(rp, 0, sizeof(*rp));
	rp->exit_status = -1;
	snprintf(rp->other.host, sizeof(rp->other.host), "(other hosts)");
}

void report_free(struct report *rp)
{
	free(rp->rows);
	free(rp->slots);
	rp->rows = NULL;
	rp->slots = NULL;
	rp->n_rows = rp->cap_rows = rp->n_slots = 0;
}

static uint64_t key_hash(const char *host, unsigned port)
{
	uint64_t h = 1469598103934665603ULL ^ port;

	for (; *host; host++)
		h = (h ^ (unsigned char)*host) * 1099511628211ULL;
	return h;
}

static void reindex(struct report *rp)
{
	memset(rp->slots, 0, rp->n_slots * sizeof(rp->slots[0]));
	for (size_t i = 0; i < rp->n_rows; i++) {
		size_t k = key_hash(rp->rows[i].host, rp->rows[i].port) & (rp->n_slots - 1);
		while (rp->slots[k])
			k = (k + 1) & (rp->n_slots - 1);
		rp->slots[k] = i + 1;
	}
}

/* Slots stay at most half full. */
static int grow(struct report *rp)
{
	size_t ns = rp->n_slots ? rp->n_slots * 2 : 256;
	size_t *slots = calloc(ns, sizeof(*slots));
	struct report_row *rows;

	if (!slots)
		return -ENOMEM;
	rows = realloc(rp->rows, (ns / 2) * sizeof(*rows));
	if (!rows) {
		free(slots);
		return -ENOMEM;
	}
	free(rp->slots);
	rp->slots = slots;
	rp->n_slots = ns;
	rp->rows = rows;
	rp->cap_rows = ns / 2;
	reindex(rp);
	return 0;
}

/* The row of host:port: found, added (under the cap), or the shared overflow row. */
static struct report_row *row_of(struct report *rp, const struct report_rec *r)
{
	struct report_row *row;
	size_t k;

	if (rp->n_slots) {
		for (k = key_hash(r->host, r->port) & (rp->n_slots - 1); rp->slots[k];
		     k = (k + 1) & (rp->n_slots - 1)) {
			row = &rp->rows[rp->slots[k] - 1];
			if (row->port == r->port && strcmp(row->host, r->host) == 0)
				return row;
		}
	}
	if (rp->n_rows >= REPORT_ROWS_MAX || (rp->n_rows + 1 > rp->cap_rows && grow(rp) < 0)) {
		rp->has_other = true;
		return &rp->other;
	}
	k = key_hash(r->host, r->port) & (rp->n_slots - 1);
	while (rp->slots[k])
		k = (k + 1) & (rp->n_slots - 1);
	row = &rp->rows[rp->n_rows];
	memset(row, 0, sizeof(*row));
	memcpy(row->host, r->host, sizeof(row->host));
	row->port = r->port;
	rp->slots[k] = ++rp->n_rows;
	return row;
}

static unsigned long long sat_add(unsigned long long a, unsigned long long b)
{
	return a + b < a ? ~0ULL : a + b;
}

static void span(char *first, char *last, const char *t)
{
	if (!t[0])
		return;
	if (!first[0] || strcmp(t, first) < 0)
		memcpy(first, t, REPORT_TIME_MAX);
	if (!last[0] || strcmp(t, last) > 0)
		memcpy(last, t, REPORT_TIME_MAX);
}

int report_add(struct report *rp, const struct report_rec *r)
{
	struct report_row *row = row_of(rp, r);
	unsigned long long n = r->count ? r->count : 1;

	rp->records++;
	if (r->allow) {
		rp->allowed = sat_add(rp->allowed, n);
		row->allowed = sat_add(row->allowed, n);
	} else {
		rp->denied = sat_add(rp->denied, n);
		row->denied = sat_add(row->denied, n);
	}
	row->errors += r->error;
	row->up = sat_add(row->up, r->up);
	row->down = sat_add(row->down, r->down);
	span(row->first, row->last, r->time);
	span(rp->first, rp->last, r->time);
	/* The deciding rule shown is a denial's once there is one: that is the row's news. */
	if (row != &rp->other && (!r->allow || row->denied == 0))
		memcpy(row->rule, r->rule, sizeof(row->rule));
	if (r->command[0])
		memcpy(row->command, r->command, sizeof(row->command));
	return row == &rp->other && rp->n_rows < REPORT_ROWS_MAX ? -ENOMEM : 0;
}

static void count_line(struct report *rp, const char *buf, size_t len, bool long_line)
{
	struct report_rec r;
	enum report_line k;

	if (len && buf[len - 1] == '\r')
		len--;
	if (len == 0 && !long_line)
		return; /* blank lines are not records, nor worth a mention */
	rp->lines++;
	k = long_line ? REPORT_LINE_LONG : report_parse_line(buf, len, &r);
	if (k == REPORT_LINE_OK)
		report_add(rp, &r);
	else
		rp->skipped[k]++;
}

int report_read(struct report *rp, FILE *in)
{
	char *buf = malloc(REPORT_LINE_MAX + 1);
	size_t len = 0;
	bool long_line = false;
	int c;

	if (!buf)
		return -ENOMEM;
	while ((c = getc_unlocked(in)) != EOF) {
		if (c != '\n') {
			if (len < REPORT_LINE_MAX)
				buf[len++] = (char)c;
			else
				long_line = true;
			continue;
		}
		count_line(rp, buf, len, long_line);
		len = 0;
		long_line = false;
	}
	if (len || long_line)
		count_line(rp, buf, len, long_line);
	free(buf);
	return ferror(in) ? -EIO : 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;
	int c;

	if ((x->denied > 0) != (y->denied > 0))
		return x->denied > 0 ? -1 : 1;
	if (x->denied != y->denied)
		return x->denied > y->denied ? -1 : 1;
	if ((c = strcmp(x->host, y->host)) != 0)
		return c;
	return x->port < y->port ? -1 : x->port > y->port;
}

void report_sort(struct report *rp)
{
	if (rp->n_rows)
		qsort(rp->rows, rp->n_rows, sizeof(rp->rows[0]), row_cmp);
	if (rp->n_slots)
		reindex(rp); /* records may still be added */
}

int report_format_parse(const char *s, enum report_format *f)
{
	static const struct {
		const char *name;
		enum report_format f;
	} names[] = {{"text", REPORT_TEXT},
		     {"markdown", REPORT_MARKDOWN},
		     {"md", REPORT_MARKDOWN},
		     {"json", REPORT_JSON}};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i].name) == 0) {
			*f = names[i].f;
			return 0;
		}
	return -EINVAL;
}
