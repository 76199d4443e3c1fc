/* Reporting: the JSON Lines audit record of every decision, and the one-line denial
 * and error notices (once per host per run). Host names reach here as the client sent them when
 * Decide could not parse them (a SOCKS5 domain may hold any byte but NUL), so every
 * string is escaped for JSON, and the human line keeps printable ASCII only: nothing a
 * sandboxed program sends can move the terminal's cursor or forge a log line. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proxy/proxy_int.h"

struct line {
	char *p;
	size_t cap, len;
};

static void put(struct line *l, const char *s, size_t n)
{
	if (l->len + n >= l->cap)
		n = l->len + 1 < l->cap ? l->cap - l->len - 1 : 0;
	memcpy(l->p + l->len, s, n);
	l->len += n;
	l->p[l->len] = '\0';
}

static void putf(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void putf(struct line *l, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(l, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Bytes outside printable ASCII become \u00XX: the record stays valid JSON (and
 * valid UTF-8) whatever the client sent. */
static void put_json_str(struct line *l, const char *s)
{
	put(l, "\"", 1);
	for (const unsigned char *u = (const unsigned char *)s; *u; u++) {
		char esc[8];

		if (*u == '"' || *u == '\\') {
			esc[0] = '\\';
			esc[1] = (char)*u;
			put(l, esc, 2);
		} else if (*u < 0x20 || *u >= 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", *u);
			put(l, esc, 6);
		} else {
			put(l, (const char *)u, 1);
		}
	}
	put(l, "\"", 1);
}

static void put_time(struct line *l, const struct timespec *ts)
{
	struct tm tm;
	char buf[40];

	gmtime_r(&ts->tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	putf(l, "\"%s.%03ldZ\"", buf, ts->tv_nsec / 1000000L);
}

/* false when the line was not written whole (the caller counts the loss) */
static bool write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false; /* the sink is gone: never stall the proxy for it */
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* clang-format off */
static const char *const proto_names[] = {
    [PROTO_CONNECT] = "connect",
    [PROTO_HTTP] = "http",
    [PROTO_SOCKS5] = "socks5",
    [PROTO_HOSTPORT] = "hostport",
    [PROTO_CAPTURED] = "captured",
    [PROTO_DNS] = "dns",
    [PROTO_HTTPS] = "https",
};
/* clang-format on */

const char *audit_proto_name(enum conn_proto p)
{
	return proto_names[p];
}

/* The fields after the time, one builder for both sinks: the audit's record
 * {"time":T,FIELDS} and the --events record {"type":"egress","ts":T,"session":S,...}
 * carry the same decision in the same words. */
static void put_fields(const struct proxy *px, struct line *l, const struct exchange *ex)
{
	putf(l, ",\"proto\":\"%s\",\"host\":", proto_names[ex->proto]);
	put_json_str(l, ex->host);
	putf(l, ",\"port\":%u,\"decision\":\"%s\",\"rule\":", ex->port,
	     ex->allow ? "allow" : "deny");
	put_json_str(l, ex->rule);
	if (ex->addr[0]) {
		put(l, ",\"address\":", 11);
		put_json_str(l, ex->addr);
	}
	if (ex->via_upstream) {
		put(l, ",\"upstream\":", 12);
		put_json_str(l, px->up_text);
	}
	if (ex->cls) {
		put(l, ",\"class\":", 9);
		put_json_str(l, ex->cls);
	}
	if (ex->terminated)
		put(l, ",\"tls\":\"terminated\"", 19);
	if (ex->method) {
		put(l, ",\"method\":", 10);
		put_json_str(l, ex->method);
		put(l, ",\"path\":", 8);
		put_json_str(l, ex->path ? ex->path : "");
	}
	if (ex->error) {
		put(l, ",\"error\":", 9);
		put_json_str(l, ex->error);
	}
	if (ex->code) {
		put(l, ",\"code\":", 8);
		put_json_str(l, ex->code);
		putf(l, ",\"count\":%llu", ex->count);
	}
	if (ex->peer) {
		put(l, ",\"peer\":", 8);
		put_json_str(l, ex->peer);
	}
	putf(l, ",\"bytes_up\":%llu,\"bytes_down\":%llu,\"duration_ms\":%llu}\n", ex->up, ex->down,
	     (unsigned long long)(proxy_now_ms() - ex->t0_ms));
}

/* ,"session":S,"pid":N — what every --events record carries after its time. */
static void put_common(const struct proxy *px, struct line *l)
{
	put(l, ",\"session\":", 11);
	put_json_str(l, px->o.session ? px->o.session : "");
	putf(l, ",\"pid\":%d", (int)getpid());
}

bool audit_events_on(const struct proxy *px)
{
	return px->o.events_fd > 2;
}

void audit_write(struct proxy *px, const struct exchange *ex)
{
	char buf[4096], fields[3800];
	struct line l = {buf, sizeof(buf), 0}, f = {fields, sizeof(fields), 0};

	if (px->o.audit_fd < 0 && !audit_events_on(px))
		return;
	fields[0] = '\0';
	put_fields(px, &f, ex);
	if (px->o.audit_fd >= 0) {
		put(&l, "{\"time\":", 8);
		put_time(&l, &ex->t0_wall);
		put(&l, fields, f.len);
		if (!write_all(px->o.audit_fd, buf, l.len))
			px->st.audit_lost++; /* the run fails at exit (runner/loop.c) */
	}
	if (!audit_events_on(px))
		return;
	l.len = 0;
	put(&l, "{\"type\":\"egress\",\"ts\":", 22);
	put_time(&l, &ex->t0_wall);
	put_common(px, &l);
	put(&l, fields, f.len);
	if (!write_all(px->o.events_fd, buf, l.len) && px->o.events_lost)
		(*px->o.events_lost)++; /* the run fails at exit (runner/loop.c) */
}

/* Outside text in a log line: escaped by the one escaper (policy_printable). */
void audit_limit_event(struct proxy *px, const char *key, long long value, const char *evidence)
{
	char buf[1024];
	struct line l = {buf, sizeof(buf), 0};
	struct timespec now;

	if (!audit_events_on(px))
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	put(&l, "{\"type\":\"limit\",\"ts\":", 21);
	put_time(&l, &now);
	put_common(px, &l);
	put(&l, ",\"limit\":", 9);
	put_json_str(&l, key);
	putf(&l, ",\"value\":%lld,\"evidence\":", value);
	put_json_str(&l, evidence);
	put(&l, "}\n", 2);
	write_all(px->o.events_fd, buf, l.len);
}

static void put_printable(struct line *l, const char *s)
{
	char esc[4 * 300 + 8];

	policy_printable(s, esc, sizeof(esc));
	put(l, esc, strlen(esc));
}

void audit_printable(const char *in, char *out, size_t n)
{
	policy_printable(in, out, n);
}

static void hostport(const char *host, unsigned port, char *out, size_t n)
{
	struct line l = {out, n, 0};
	struct in6_addr a6;
	/* Brackets only around a real IPv6 literal: a refused name that merely contains
	 * a colon must not read like one. */
	bool v6 = inet_pton(AF_INET6, host, &a6) == 1;

	out[0] = '\0';
	put(&l, "[", v6 ? 1 : 0);
	put_printable(&l, host);
	put(&l, "]", v6 ? 1 : 0);
	putf(&l, ":%u", port);
}

void audit_hostport(const struct exchange *ex, char *out, size_t n)
{
	hostport(ex->host, ex->port, out, n);
}

void audit_deny_line(struct proxy *px, const struct exchange *ex)
{
	char buf[768], hp[300];
	struct line l = {buf, sizeof(buf), 0};

	if (px->o.log_fd < 0 || px->o.quiet || !hosts_first_denial(px, ex->host))
		return;
	audit_hostport(ex, hp, sizeof(hp));
	put(&l, "halo-run: egress denied: ", 25);
	put(&l, hp, strlen(hp));
	put(&l, " (", 2);
	put_printable(&l, ex->rule);
	put(&l, ")\n", 2);
	write_all(px->o.log_fd, buf, l.len);
}

void audit_error_line(struct proxy *px, const char *host, unsigned port, const char *why,
		      const char *code)
{
	char buf[768], hp[300];
	struct line l = {buf, sizeof(buf), 0};

	if (px->o.log_fd < 0 || px->o.quiet || !hosts_first_error(px, host[0] ? host : why))
		return;
	put(&l, "halo-run: egress error: ", 24);
	if (host[0]) {
		hostport(host, port, hp, sizeof(hp));
		put(&l, hp, strlen(hp));
		put(&l, ": ", 2);
	}
	put_printable(&l, why);
	putf(&l, " (%s)\n", code);
	write_all(px->o.log_fd, buf, l.len);
}
