/* The learn record: what a run used and what it was refused, counted. Bounded (the
 * limits in learn.h): a command that opens a million names fills it, and the rest is
 * counted as dropped, never grown without end. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learn/learn.h"

void learn_record_init(struct learn_record *r)
{
	memset(r, 0, sizeof(*r));
}

void learn_record_free(struct learn_record *r)
{
	free(r->hosts);
	free(r->writes);
	for (size_t i = 0; i < r->n_commands; i++)
		free(r->commands[i]);
	learn_record_init(r);
}

static void copy(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src ? src : "");
}

static struct learn_host *host_find(struct learn_record *r, enum learn_host_kind k,
				    const char *host, unsigned port, const char *proto)
{
	for (size_t i = 0; i < r->n_hosts; i++) {
		struct learn_host *h = &r->hosts[i];
		if (h->kind == k && h->port == port && strcmp(h->host, host) == 0 &&
		    strcmp(h->proto, proto) == 0)
			return h;
	}
	return NULL;
}

int learn_record_host(struct learn_record *r, enum learn_host_kind k, const char *host,
		      unsigned port, const char *proto, const char *addr, const char *cls,
		      const char *rule)
{
	struct learn_host *h;

	if (!host || !*host)
		return -EINVAL;
	proto = proto ? proto : "?";
	if ((h = host_find(r, k, host, port, proto))) {
		h->conns++;
		return 0;
	}
	if (r->n_hosts == LEARN_MAX_HOSTS) {
		r->dropped_hosts++;
		return -E2BIG;
	}
	if (r->n_hosts == r->cap_hosts) {
		size_t nc = r->cap_hosts ? r->cap_hosts * 2 : 16;
		struct learn_host *g = realloc(r->hosts, nc * sizeof(*g));
		if (!g) {
			r->dropped_hosts++;
			return -ENOMEM;
		}
		r->hosts = g;
		r->cap_hosts = nc;
	}
	h = &r->hosts[r->n_hosts++];
	memset(h, 0, sizeof(*h));
	h->kind = k;
	copy(h->host, sizeof(h->host), host);
	h->port = port;
	copy(h->proto, sizeof(h->proto), proto);
	copy(h->addr, sizeof(h->addr), addr);
	copy(h->cls, sizeof(h->cls), cls);
	copy(h->rule, sizeof(h->rule), rule);
	h->conns = 1;
	return 0;
}

int learn_record_write(struct learn_record *r, const char *path, int err, bool guard)
{
	struct learn_write *w;

	if (!path || path[0] != '/')
		return -EINVAL;
	for (size_t i = 0; i < r->n_writes; i++)
		if (strcmp(r->writes[i].path, path) == 0) {
			r->writes[i].count++;
			return 0;
		}
	if (r->n_writes == LEARN_MAX_WRITES) {
		r->dropped_writes++;
		return -E2BIG;
	}
	if (r->n_writes == r->cap_writes) {
		size_t nc = r->cap_writes ? r->cap_writes * 2 : 8;
		struct learn_write *g = realloc(r->writes, nc * sizeof(*g));
		if (!g) {
			r->dropped_writes++;
			return -ENOMEM;
		}
		r->writes = g;
		r->cap_writes = nc;
	}
	w = &r->writes[r->n_writes++];
	memset(w, 0, sizeof(*w));
	copy(w->path, sizeof(w->path), path);
	w->err = err;
	w->guard = guard;
	w->count = 1;
	return 0;
}

/* A word as a shell would need it to be read back: bare when it is made of safe
 * characters only, else in single quotes. */
static size_t word(char *out, size_t cap, const char *w)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789-_./=:,+@%";
	size_t k = 0;
	bool bare = *w && strspn(w, safe) == strlen(w);

	if (bare)
		return (size_t)snprintf(out, cap, "%s", w);
	if (k < cap)
		out[k] = '\'';
	k++;
	for (; *w; w++) {
		const char *piece = *w == '\'' ? "'\\''" : NULL;
		if (piece) {
			for (; *piece; piece++, k++)
				if (k < cap)
					out[k] = *piece;
			continue;
		}
		if (k < cap)
			out[k] = *w;
		k++;
	}
	if (k < cap)
		out[k] = '\'';
	k++;
	if (cap)
		out[k < cap ? k : cap - 1] = '\0';
	return k;
}

int learn_record_command(struct learn_record *r, char *const *argv)
{
	char buf[1024];
	size_t k = 0;

	if (r->n_commands == LEARN_MAX_COMMANDS) {
		r->dropped_commands++;
		return -E2BIG;
	}
	buf[0] = '\0';
	for (size_t i = 0; argv && argv[i] && k < sizeof(buf) - 1; i++) {
		if (i)
			buf[k++] = ' ';
		k += word(buf + k, sizeof(buf) - k, argv[i]);
	}
	if (k >= sizeof(buf) - 1)
		snprintf(buf + sizeof(buf) - 5, 5, "...");
	if (!(r->commands[r->n_commands] = strdup(buf)))
		return -ENOMEM;
	r->n_commands++;
	return 0;
}

size_t learn_record_writes_parse(struct learn_record *r, const char *buf, size_t len)
{
	size_t taken = 0, i = 0;

	while (i < len) {
		const char *rec = buf + i, *end = memchr(rec, '\0', len - i);
		char *num_end;
		long err;

		if (!end)
			break; /* a record cut short: not trusted */
		i = (size_t)(end - buf) + 1;
		if (rec[0] == 'T' && rec[1] == '\0') {
			r->writes_cut = true;
			continue;
		}
		if (rec[0] == 'B' && rec[1] == '\0') {
			r->writes_observed = true;
			continue;
		}
		if ((rec[0] != 'W' && rec[0] != 'G') || rec[1] != ' ')
			continue;
		err = strtol(rec + 2, &num_end, 10);
		if (num_end == rec + 2 || *num_end != ' ' || err <= 0 || err > 4095)
			continue;
		if (learn_record_write(r, num_end + 1, (int)err, rec[0] == 'G') == 0)
			taken++;
	}
	return taken;
}
