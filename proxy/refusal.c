/* Refusals that no decision record covers (issue 31): a client turned away before it
 * named a host or before Decide() was asked — the connection cap (503), the process
 * out of file descriptors, a request head that timed out (408) or was malformed.
 * Each is an audit record (and a --events "egress" record) of its own:
 *   {"proto":"http","host":"","port":0,"decision":"deny","rule":"limits.connections
 *    (256 open)","error":"too many open connections, retry later","code":"503",
 *    "count":1,...}
 *
 * Floods: the first refusal of a kind is written at once; identical ones (same
 * protocol, host, port, rule and code) that follow within the next second are
 * counted, and written as one record whose "count" says how many, once a second for
 * as long as they keep coming. The sum of the counts is every refusal: the record
 * never says less than happened, and a flood of 8,000 refused connections costs a
 * few lines a second, not 8,000 writes on the proxy's loop. A refusal that finds no
 * free slot (more than REFUSAL_SLOTS kinds in one second) is written on its own. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "proxy/proxy_int.h"

#define REFUSAL_WINDOW_MS 1000

static void fill(struct exchange *ex, const struct refusal_slot *s, unsigned long long count)
{
	memset(ex, 0, sizeof(*ex));
	ex->proto = s->proto;
	snprintf(ex->host, sizeof(ex->host), "%s", s->host);
	ex->port = s->port;
	snprintf(ex->rule, sizeof(ex->rule), "%s", s->rule);
	ex->error = s->why;
	ex->code = s->code;
	ex->count = count;
	ex->peer = s->peer[0] ? s->peer : NULL;
	ex->t0_ms = proxy_now_ms();
	ex->t0_wall = s->wall;
}

static void emit(struct proxy *px, const struct refusal_slot *s, unsigned long long count)
{
	struct exchange ex;

	fill(&ex, s, count);
	audit_write(px, &ex);
}

static void window_end(void *arg)
{
	struct refusal_slot *s = arg;
	struct proxy *px = s->px;

	s->t = NULL;
	if (s->count == 0) { /* the flood is over: the slot is free again */
		s->used = false;
		return;
	}
	emit(px, s, s->count);
	s->count = 0;
	clock_gettime(CLOCK_REALTIME, &s->wall);
	s->t = proxy_timer_add(px->pl, REFUSAL_WINDOW_MS, window_end, s);
	if (!s->t)
		s->used = false;
}

static bool same(const struct refusal_slot *s, enum conn_proto proto, const char *host,
		 unsigned port, const char *rule, const char *code, const char *peer)
{
	return s->used && s->proto == proto && s->port == port && strcmp(s->host, host) == 0 &&
	       strcmp(s->rule, rule) == 0 && strcmp(s->code, code) == 0 &&
	       strcmp(s->peer, peer) == 0;
}

void refusal_record(struct proxy *px, enum conn_proto proto, const char *host, unsigned port,
		    const char *rule, const char *why, const char *code, const char *peer)
{
	struct refusal_slot one, *free_slot = NULL;

	if (!peer)
		peer = "";
	for (size_t i = 0; i < REFUSAL_SLOTS; i++) {
		struct refusal_slot *s = &px->refusals[i];

		if (same(s, proto, host, port, rule, code, peer)) {
			s->count++;
			return;
		}
		if (!s->used && !free_slot)
			free_slot = s;
	}
	struct refusal_slot *s = free_slot ? free_slot : &one;

	memset(s, 0, sizeof(*s));
	s->px = px;
	s->proto = proto;
	snprintf(s->host, sizeof(s->host), "%s", host);
	s->port = port;
	snprintf(s->rule, sizeof(s->rule), "%s", rule);
	snprintf(s->why, sizeof(s->why), "%s", why);
	snprintf(s->code, sizeof(s->code), "%s", code);
	snprintf(s->peer, sizeof(s->peer), "%s", peer);
	clock_gettime(CLOCK_REALTIME, &s->wall);
	emit(px, s, 1);
	if (!free_slot)
		return;
	s->t = proxy_timer_add(px->pl, REFUSAL_WINDOW_MS, window_end, s);
	s->used = s->t != NULL;
}

void refusal_flush(struct proxy *px)
{
	for (size_t i = 0; i < REFUSAL_SLOTS; i++) {
		struct refusal_slot *s = &px->refusals[i];

		if (!s->used)
			continue;
		proxy_timer_cancel(px->pl, s->t);
		s->t = NULL;
		if (s->count)
			emit(px, s, s->count);
		s->used = false;
	}
}
