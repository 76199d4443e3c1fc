/* Per-host bookkeeping: the --verbose summary table and the "once per host" memory of
 * the denial and error lines (an error without a host is keyed by its why; such rows
 * count nothing and never show in the table). A chained hash table keyed by the host text, capped
 * so that a program inventing host names cannot grow it without bound: past the cap, hosts are
 * counted in one "(other hosts)" row and every denial and error is reported (better noisy than
 * silent). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy_int.h"

#define HOSTS_MAX 4096

struct host_entry {
	struct host_entry *next;
	unsigned long allowed, denied;
	unsigned long long up, down;
	bool deny_reported;
	bool error_reported;
	char rule[192]; /* the latest rule */
	char host[];
};

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

static int grow(struct host_table *t)
{
	size_t n = t->n_buckets ? t->n_buckets * 2 : 64;
	struct host_entry **b = calloc(n, sizeof(*b));

	if (!b)
		return -1;
	for (size_t i = 0; i < t->n_buckets; i++) {
		struct host_entry *e = t->buckets[i];
		while (e) {
			struct host_entry *next = e->next;
			size_t k = fnv(e->host) & (n - 1);
			e->next = b[k];
			b[k] = e;
			e = next;
		}
	}
	free(t->buckets);
	t->buckets = b;
	t->n_buckets = n;
	return 0;
}

/* Find, or add when create and under the cap; NULL otherwise. */
static struct host_entry *lookup(struct host_table *t, const char *host, bool create)
{
	struct host_entry *e;
	size_t k, len;

	if (t->n_buckets) {
		for (e = t->buckets[fnv(host) & (t->n_buckets - 1)]; e; e = e->next)
			if (strcmp(e->host, host) == 0)
				return e;
	}
	if (!create || t->n >= HOSTS_MAX)
		return NULL;
	if ((t->n + 1) * 2 > t->n_buckets && grow(t) != 0)
		return NULL;
	len = strlen(host);
	e = calloc(1, sizeof(*e) + len + 1);
	if (!e)
		return NULL;
	memcpy(e->host, host, len + 1);
	k = fnv(host) & (t->n_buckets - 1);
	e->next = t->buckets[k];
	t->buckets[k] = e;
	t->n++;
	return e;
}

static bool first_report(struct proxy *px, const char *host, bool error)
{
	struct host_entry *e = lookup(&px->hosts, host, true);
	bool *seen;

	if (!e)
		return true;
	seen = error ? &e->error_reported : &e->deny_reported;
	if (*seen)
		return false;
	*seen = true;
	return true;
}

/* The row an exchange counts in: its host, or "localhost:PORT" for a host port (each
 * port is its own service, with its own rule). */
static const char *host_key(const struct exchange *ex, char *buf, size_t n)
{
	if (ex->proto != PROTO_HOSTPORT)
		return ex->host;
	snprintf(buf, n, "%s:%u", ex->host, ex->port);
	return buf;
}

bool hosts_first_denial(struct proxy *px, const char *host)
{
	return first_report(px, host, false);
}

bool hosts_first_error(struct proxy *px, const char *key)
{
	return first_report(px, key, true);
}

bool hosts_first_exchange_error(struct proxy *px, const struct exchange *ex)
{
	char key[300];

	return first_report(px, host_key(ex, key, sizeof(key)), true);
}

void hosts_record(struct proxy *px, const struct exchange *ex)
{
	char key[300];
	struct host_entry *e = lookup(&px->hosts, host_key(ex, key, sizeof(key)), true);

	if (!e) {
		px->hosts.overflow_conns++;
		return;
	}
	if (ex->allow)
		e->allowed++;
	else
		e->denied++;
	e->up += ex->up;
	e->down += ex->down;
	snprintf(e->rule, sizeof(e->rule), "%s", ex->rule);
}

void hosts_free(struct host_table *t)
{
	for (size_t i = 0; i < t->n_buckets; i++) {
		struct host_entry *e = t->buckets[i];
		while (e) {
			struct host_entry *next = e->next;
			free(e);
			e = next;
		}
	}
	free(t->buckets);
	memset(t, 0, sizeof(*t));
}

static int by_host(const void *a, const void *b)
{
	const struct host_entry *x = *(const struct host_entry *const *)a;
	const struct host_entry *y = *(const struct host_entry *const *)b;

	return strcmp(x->host, y->host);
}

void proxy_summary(const struct proxy *px, FILE *out)
{
	const struct host_table *t = &px->hosts;
	struct host_entry **rows;
	size_t n = 0;

	fprintf(out, "halo-run: egress summary: %zu connection%s, %zu allowed, %zu denied\n",
		px->st.conns_total, px->st.conns_total == 1 ? "" : "s", px->st.allowed,
		px->st.denied);
	if (t->n == 0)
		return;
	rows = calloc(t->n, sizeof(*rows));
	if (!rows)
		return;
	for (size_t i = 0; i < t->n_buckets; i++)
		for (struct host_entry *e = t->buckets[i]; e; e = e->next)
			if (e->allowed || e->denied)
				rows[n++] = e;
	qsort(rows, n, sizeof(*rows), by_host);
	if (n)
		fprintf(out, "  %-40s %-8s %7s %7s %12s %12s  %s\n", "HOST", "DECISION", "ALLOWED",
			"DENIED", "BYTES_UP", "BYTES_DOWN", "RULE");
	for (size_t i = 0; i < n; i++) {
		const struct host_entry *e = rows[i];
		char host[260], rule[200];
		const char *dec = e->denied ? (e->allowed ? "mixed" : "deny") : "allow";

		audit_printable(e->host, host, sizeof(host));
		audit_printable(e->rule, rule, sizeof(rule));
		fprintf(out, "  %-40s %-8s %7lu %7lu %12llu %12llu  %s\n", host, dec, e->allowed,
			e->denied, e->up, e->down, rule);
	}
	if (t->overflow_conns)
		fprintf(out, "  %-40s %-8s %7zu\n", "(other hosts)", "", t->overflow_conns);
	free(rows);
}
